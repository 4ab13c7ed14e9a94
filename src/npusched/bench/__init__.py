"""``npusched bench``: the engine's speed, measured against the best simple implementations of
the same system, in the same run, with the same finish times.

Scenarios
---------
Each scenario is a function registered in :data:`SCENARIOS` that builds its workload, times the
engine (and its references) and returns one entry of the ``scenarios`` list (a dict, see
:func:`run_bench`). :func:`run_bench` runs each in a fresh Python process by default, so one
scenario's peak resident set does not carry over to the next.

``temporal``
    P-HPF with **layer-boundary** preemption and free checkpoints
    (``preemption_point="layer"``, ``checkpoint_cost=False``) on 100,000 requests over eight
    CNNs on ``prema-npu`` (PREMA Table I), batch sizes 1/4/16 and priorities 1/3/9 uniform,
    Poisson arrivals at 90% of the array's capacity (so queues stay bounded). Recurrent networks
    are left out on purpose: unrolled they only add steps per request, which flatters event
    skipping without exercising anything new. Three references simulate the same system and
    must give the same finish times:

    * ``simpy`` (:func:`simpy_reference`): one SimPy process per request that holds a
      ``PriorityResource`` across its layers (one ``timeout`` per layer) and, at a layer
      boundary, yields the resource only when a request of strictly higher priority waits.
    * ``simpy_skip`` (:func:`simpy_skip_reference`): SimPy with the engine's event skipping: one
      ``timeout`` to the job's completion, an ``Interrupt`` when a better request arrives, and
      a bisection of the plan's prefix sums to find the layer boundary where it stops.
    * ``bare_loop`` (:func:`bare_loop_reference`): a minimal event-skipping loop, arrivals from
      a sorted list and the ready queue a ``heapq``, no policy interface: the practical limit
      for a Python event loop.

``prema``
    P-PREMA with ``mechanism="dynamic"`` (Algorithm 3) on PREMA's 8-DNN mix with RNNs, set up as
    ``npusched reproduce prema`` sets it up (:class:`~npusched.experiments.reproduce.prema.
    PremaSetup` defaults: ``prema-npu``, batch sizes 1/4/16, tile preemption, modelled
    checkpoint cost, PREMA's predictor as the estimator; workloads from
    :func:`~npusched.workloads.prema_workload`). Choice: ``reproduce prema`` dispatches 8-task
    bursts at load 1.5; a stream of many requests at a load above 1 would grow the ready queue
    without bound, so the bench dispatches its requests uniformly over a window that offers
    load 0.9 (as ``temporal``). No reference: it measures requests/s, events/s and peak RSS.

``spatial``
    Planaria's Algorithm 1 on Workload-C (no reference).

``concurrent``
    Two jobs share ``planaria``'s 16-subarray array (:func:`pair_split_policy`: alone a job
    holds 16 units, with a second admitted each holds 8, re-split at every arrival and
    completion; a running job's change of share is a re-allocation at its next layer end, free
    checkpoints), five CNNs at batch 1, Poisson arrivals offering load 0.9 of the array alone.
    Reference: ``simpy`` (:func:`concurrent_simpy_reference`), a ``Container`` of units and
    one process per request with one ``timeout`` per layer that re-takes its share at a layer
    end when it changed; the same finish times (5.8e-13 s at 20,000 requests).

``families``
    Each policy family's representative config through ``run_config`` (the path of
    ``npusched run``, ``sweep`` and ``compare``, power recorded): per family ``us_per_event``,
    ``events_per_request`` and ``ratio_to_bare_loop`` (:mod:`npusched.bench.families`).

``sweep``
    A sweep of small points through the process pool at 1 and 2 workers: points per second
    (:mod:`npusched.bench.sweep`).

``solver``, ``haxconn``
    HaX-CoNN's solvers and its engine policy (:mod:`npusched.bench.haxconn`).

A new scenario is a function registered with :func:`scenario` that returns its entry.

Modules
-------
``core`` (targets, registry, timing, running, presentation), ``workload`` (the workloads and
the references' shared inputs), one module per reference simulator (``simpy_layer``,
``simpy_skip``, ``bare_loop``, ``simpy_concurrent``) and one per scenario (``temporal``,
``prema``, ``spatial``, ``concurrent``, ``families``, ``haxconn``, ``sweep``).

Timing
------
Speeds divide by process CPU seconds (``time.process_time``), not wall time, so other processes
sharing the machine skew them less; every run is timed once, references in the same process
right after the engine on the same requests. Every run is timed end to end from the same
requests and profiles: the engine's time includes its set-up (plans per request shape, dispatch
order) and its result columns, and each reference's includes building its inputs
(:class:`_Shapes`: dispatch order, per-layer latencies and prefix sums), reported apart as
``reference_setup_s``. ``peak_rss_mib`` is the process's peak resident
set (``ru_maxrss``) read right after the engine run, before any reference runs.
"""

# isort: skip_file
# The scenario modules register their scenarios when imported, in this order (the order
# ``npusched bench`` runs and lists them): keep it.
from __future__ import annotations

from npusched.bench.core import (  # noqa: F401
    _SHOWN,
    _SIMPY_HINT,
    SCENARIOS,
    TARGETS,
    Reporter,
    Scenario,
    Target,
    _check_int,
    _cpu_seconds,
    _engine_entry,
    _engine_only,
    _no_report,
    _peak_rss_mib,
    _ratio,
    _time_engine,
    _with_targets,
    _worker,
    bench_rows,
    engine_setup,
    require_simpy,
    rich_reporter,
    run_bench,
    run_scenario,
    scenario,
)
from npusched.bench.workload import (  # noqa: F401
    BENCH_BATCHES,
    BENCH_LOAD,
    BENCH_NETWORKS,
    BOUNDARY_TOL_S,
    CONCURRENT_JOBS,
    CONCURRENT_NETWORKS,
    _Shapes,
    _stop_point,
    bench_profiles,
    bench_table,
    bench_workload,
    synthetic_profiles,
)
from npusched.bench.simpy_layer import (
    simpy_reference,
)
from npusched.bench.simpy_skip import (
    simpy_skip_reference,
)
from npusched.bench.bare_loop import (
    bare_loop_reference,
)
from npusched.bench.simpy_concurrent import (
    concurrent_simpy_reference,
)
from npusched.bench.temporal import (
    temporal_scenario,
    temporal_setup,
)
from npusched.bench.prema import (
    prema_scenario,
    prema_setup,
)
from npusched.bench.spatial import (
    SPATIAL_RATE_PER_S,
    spatial_scenario,
    spatial_setup,
)
from npusched.bench.concurrent import (
    concurrent_scenario,
    concurrent_setup,
    pair_split_policy,
)
from npusched.bench.families import (  # noqa: F401
    FAMILY_RATIO_TARGET,
    FAMILY_SHARE,
    FAMILY_TEMPORAL,
    _bare_us_per_event,
    _mean_isolated_s,
    families_scenario,
    family_configs,
)
from npusched.bench.haxconn import (
    FRAME_PERIOD_S,
    HAXCONN_NETWORKS,
    SOLVER_LIMIT_S,
    artifact_reference_z3,
    haxconn_scenario,
    haxconn_setup,
    solver_scenario,
)
from npusched.bench import sweep as _sweep  # noqa: F401  (registers ``sweep``)

__all__ = [
    "BENCH_BATCHES",
    "BENCH_LOAD",
    "BENCH_NETWORKS",
    "BOUNDARY_TOL_S",
    "CONCURRENT_JOBS",
    "CONCURRENT_NETWORKS",
    "FAMILY_RATIO_TARGET",
    "FAMILY_SHARE",
    "FAMILY_TEMPORAL",
    "FRAME_PERIOD_S",
    "HAXCONN_NETWORKS",
    "SCENARIOS",
    "SOLVER_LIMIT_S",
    "SPATIAL_RATE_PER_S",
    "TARGETS",
    "Reporter",
    "Scenario",
    "Target",
    "artifact_reference_z3",
    "bare_loop_reference",
    "bench_profiles",
    "bench_rows",
    "bench_table",
    "bench_workload",
    "concurrent_scenario",
    "concurrent_setup",
    "concurrent_simpy_reference",
    "engine_setup",
    "families_scenario",
    "family_configs",
    "haxconn_scenario",
    "haxconn_setup",
    "pair_split_policy",
    "prema_scenario",
    "prema_setup",
    "require_simpy",
    "rich_reporter",
    "run_bench",
    "run_scenario",
    "scenario",
    "simpy_reference",
    "simpy_skip_reference",
    "solver_scenario",
    "spatial_scenario",
    "spatial_setup",
    "synthetic_profiles",
    "temporal_scenario",
    "temporal_setup",
]
