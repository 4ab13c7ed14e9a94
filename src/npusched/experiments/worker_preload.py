"""What a sweep worker needs before its first point, done once in the pool's fork server.

The ``process`` backend forks its workers from a ``forkserver`` that imports this module
(:data:`npusched.experiments.backends.WORKER_PRELOAD`), so every worker starts as a copy of a
process that has already:

* imported everything a point runs through: the config schema and the runner (pandas, NumPy,
  pydantic), every built-in policy (the catalog), the engine and its loops, the metrics,
  pyarrow (the records' string columns and the point files);
* read the installed entry points (policy and zoo plug-ins), which scans every distribution's
  metadata;
* imported the pool's own worker side: ``concurrent.futures.process`` (the worker's loop, which
  a worker unpickles from its start-up data), the queues and locks it reads its tasks through,
  and :mod:`npusched.experiments.backends` (the task function, ``run_points``). Without them
  every worker imported these five modules before its first point (about 2 ms of CPU a worker,
  eighteenth round: what a forked worker had in ``sys.modules`` that the server had not).

Without it each worker paid these on its first point: about 0.5 s of CPU on the 2-core
development machine (0.3 s imports, 0.2 s entry points), which is serial work per worker and
capped what a second worker gains on sweeps of short points. A name that a later version
drops is skipped (the fork server ignores an ``ImportError`` of a preload module, and so does
this module).
"""

from __future__ import annotations

import importlib

#: Modules a point imports (beyond ``npusched.experiments.config`` and ``.runner``).
MODULES = (
    "npusched.experiments.config",
    "npusched.experiments.runner",
    "npusched.policies.machine",
    "npusched.policies.catalog",
    "npusched.policies.temporal.predictor",
    "npusched.sim.engine",
    "npusched.sim.columns",
    "npusched.metrics",
    "npusched.metrics.power",
    "npusched.models.exits",
    "npusched.workloads",
    "pyarrow",
    "pyarrow.parquet",
    "concurrent.futures.process",
    "multiprocessing.queues",
    "multiprocessing.synchronize",
    "multiprocessing.popen_forkserver",
    "npusched.experiments.backends",
)


def preload() -> None:
    """Import :data:`MODULES` (skipping any that is missing) and read the entry points."""
    for name in MODULES:
        try:
            importlib.import_module(name)
        except ImportError:  # pragma: no cover - a module a later version removed
            continue
    from npusched.experiments.config import import_builtin_policies
    from npusched.policies.registry import REGISTRY
    from npusched.registry import group_entry_points

    group_entry_points("npusched.devices")  # the one scan of every distribution's metadata
    import_builtin_policies()
    REGISTRY.names()  # the policy entry points of every kind


preload()
