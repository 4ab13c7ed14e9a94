"""What a sweep worker needs before its first point, done once in the pool's fork server.

The ``process`` backend forks its workers from a ``forkserver`` that imports this module
(:data:`npusched.experiments.backends.WORKER_PRELOAD`), so every worker starts as a copy of a
process that has already:

* imported everything a point runs through: the config schema and the runner (pandas, NumPy,
  pydantic), every built-in policy (the catalog), the engine and its loops, the metrics,
  pyarrow (the records' string columns and the point files);
* read the installed entry points (policy and zoo plug-ins), which scans every distribution's
  metadata;
* imported the pool's own worker side: the start method's process module and
  :mod:`npusched.experiments.backends` (the worker's loop and the task function,
  ``pool_worker`` and ``run_points``). Without them every worker imported these before its
  first point (eighteenth round: what a forked worker had in ``sys.modules`` that the server
  had not; ``concurrent.futures.process`` and the shared queues and locks it read its tasks
  through were three more until the pool became the backend's own, twentieth round).

Without it each worker paid these on its first point: about 0.5 s of CPU on the 2-core
development machine (0.3 s imports, 0.2 s entry points), which is serial work per worker and
capped what a second worker gains on sweeps of short points. A name that a later version
drops is skipped (the fork server ignores an ``ImportError`` of a preload module, and so does
this module).

Where the sweep is known when the server starts (``npusched sweep`` names its experiment file,
the ``sweep`` bench scenario its first point:
:func:`npusched.experiments.backends.start_pool_server`), the server also runs one of the
sweep's points before its first fork (:func:`warm_up`): what a
fresh worker's first point built once per process (the zoo networks of the workload, their
profiles on the device, the plans' tables; about 12 ms of CPU for the ``sweep`` scenario's
point of 8 ms, nineteenth round) is then in every worker's copy of the server, as it is in a
worker after its first point. Every worker paid it at the same time, so it was serial work:
about 8% of a two-worker sweep of 32 such points.
"""

from __future__ import annotations

import importlib
import json
import os
import tempfile
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from npusched.experiments.backends import PointTask

#: Largest point (in requests its workload states) the server runs to warm up: the server
#: forks no worker before the point is done, and beyond this a point's own length (0.1 s and
#: more compiled) dwarfs the first point's cold caches, so the warm-up would only hold the
#: first worker back.
WARM_MAX_REQUESTS = 10_000

#: Modules a point imports (beyond ``npusched.experiments.config`` and ``.runner``).
MODULES = (
    "npusched.experiments.config",
    "npusched.experiments.runner",
    "npusched.policies.machine",
    "npusched.policies.catalog",
    "npusched.policies.temporal.predictor",
    "npusched.sim.engine",
    "npusched.metrics",
    "npusched.metrics.power",
    "npusched.models.exits",
    "npusched.workloads",
    "pyarrow",
    "pyarrow.parquet",
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


def warm_task(spec: dict[str, Any]) -> PointTask | None:
    """The point :func:`warm_up` runs for ``spec``, or ``None``: with ``"config"`` (a run
    config's JSON form) and ``"base_dir"`` that config; with ``"experiment"`` (an experiment
    file) the first point that ``"filters"`` (``AXIS=VALUE`` texts) select, as the sweep's
    driver selects it; a point whose workload does not state its size (a trace) or states more
    than :data:`WARM_MAX_REQUESTS` requests is not run (``None``)."""
    from npusched.experiments.backends import PointTask, task_requests

    if "experiment" in spec:
        from npusched.experiments.sweep import load_experiment, parse_filters, select_points

        exp = load_experiment(spec["experiment"])
        points = select_points(exp, parse_filters(list(spec.get("filters") or ()), exp), 1)
        if not points:
            return None
        config, base_dir = points[0].config, str(exp.base_dir)
    else:
        config, base_dir = spec["config"], str(spec.get("base_dir", "."))
    task = PointTask("warm-up", 0, 0, 0, {}, config, base_dir, "pool server warm-up")
    n = task_requests(task)
    return task if n is not None and n <= WARM_MAX_REQUESTS else None


def warm_up() -> None:
    """Run the point that :data:`~npusched.experiments.backends.WARM_ENV` names
    (:func:`warm_task`) once in this process and drop its row: the caches it fills (networks,
    profiles, plans) are what a worker's first point builds, and every worker forked after
    this starts with them. With ``"write": true`` the row is written too, in a directory
    removed afterwards (a sweep's workers write each point's file; the first write builds
    pyarrow's writer state). Quiet and harmless: a point that fails (an experiment the driver
    will reject, a policy a ``--plugin`` registers) is skipped, warnings are dropped, and no
    result depends on it (a worker's caches hold what the same calls return)."""
    from npusched.experiments.backends import WARM_ENV

    spec = os.environ.pop(WARM_ENV, None)
    if not spec:
        return
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            data = json.loads(spec)
            task = warm_task(data)
            if task is None:
                return
            from npusched.experiments.backends import POINTS_DIR, run_point, write_point

            row = run_point(task)
            if data.get("write"):
                with tempfile.TemporaryDirectory(prefix="npusched-warm-") as d:
                    (Path(d) / POINTS_DIR).mkdir()
                    write_point(Path(d), row)
    except Exception:  # the warm-up is an optimisation; the driver reports every error
        return


preload()
warm_up()
