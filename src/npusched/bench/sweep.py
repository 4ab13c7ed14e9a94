"""Scenario ``sweep``: points through the sweep's process pool at 1 and 2 workers.

Each point is the ``HPF`` family's config of :func:`~npusched.bench.families.family_configs`
(P-HPF on ``prema-npu``, ``requests`` requests, power recorded) with its own seed, run by
:func:`~npusched.experiments.backends.run_tasks` on the ``process`` backend (workers forked
from a preloaded server, points in chunks) exactly as ``npusched sweep`` runs them, rows
handed to the driver, no files written. Timed in wall seconds (the pool's processes run beside
the driver), from the pool's start to its last row, so worker start-up counts (the workers'
exit does not: a sweep returns at its last row and its workers exit beside the caller's next
step; the scenario waits for them between runs); the pool's fork server is started before
either sweep, and its one-off start is reported apart. The server runs the sweep's first point
once before its first fork (as ``npusched sweep``'s server runs its experiment's first point:
:func:`~npusched.experiments.backends.start_pool_server`), so a fresh worker starts with the
caches a first point builds.

``worker_start_s``: wall seconds from a new one-worker pool to its first result, the fork
server already up (workers are forked from a server that imported the engine once);
``pool_first_start_s``: the same for the process's first pool, which waits for the server's
imports and its warm-up point; ``worker_start_cpu_s``: the CPU seconds a fresh worker spent
before its first task.

Honest by construction: both worker counts run the same points, each run from a new pool of
fresh workers (the server warm for both), the counts take turns over ``--repeat``, and every
run's rows must equal the first run's (``wall_s`` apart) or the scenario fails. What the ratio
misses of 2 is reported as Amdahl's serial fraction, beside the load-independent parts of it:
the driver's CPU per point and a worker's start-up CPU.
"""

from __future__ import annotations

import json
import os
import time
from typing import Any

from npusched.bench.core import TARGETS, Reporter, Target, _no_report, scenario

__all__ = ["SWEEP_POINTS", "sweep_tasks", "worker_start_s"]

#: Points of the ``sweep`` scenario (each of ``--requests`` requests). A fair case for the
#: 2-worker target: every worker pays its start (a fork of the pool's server, page faults) and
#: its first point's page faults at the same time as the other, which a one-worker sweep pays
#: once, and the last chunk may leave one worker idle, so the points must outweigh both (the
#: first point's cold caches are built once in the server: :func:`sweep_scenario`).
SWEEP_POINTS = 32

TARGETS["sweep"] = (
    Target("speedup_2_workers", ">=", 1.7, min_requests=2_000),
    Target("worker_start_s", "<=", 0.3),
)


def sweep_tasks(requests: int, points: int = SWEEP_POINTS, seed: int = 0) -> list[Any]:
    """``points`` point tasks of ``requests`` requests each (the ``HPF`` family's config,
    seeds ``seed .. seed + points - 1``)."""
    from npusched.bench.families import family_configs
    from npusched.experiments.backends import PointTask
    from npusched.experiments.config import parse_config

    base = family_configs(requests)["HPF"]
    tasks = []
    for i in range(points):
        cfg = parse_config(dict(base, seed=seed + i), source=f"bench sweep point {i}")
        tasks.append(
            PointTask(
                point_id=f"p{i:04d}",
                index=i,
                combo=0,
                seed=seed + i,
                params={},
                config=cfg.model_dump(mode="json"),
                base_dir=".",
                label=f"bench sweep point {i}",
            )
        )
    return tasks


def worker_start_s(repeat: int = 3) -> tuple[float, float, float]:
    """``(worker_start_s, pool_first_start_s, worker_start_cpu_s)``: wall seconds from starting
    a sweep's pool worker (:class:`~npusched.experiments.backends._Workers`, the sweep's start
    method) to its first task's result, fastest
    of ``repeat`` pools once the pool's server has started; the same for the first pool of
    this process (which starts the server and pays its imports once); and the fewest CPU
    seconds one of the ``repeat`` workers spent from its fork to its first task
    (:func:`~npusched.experiments.backends.worker_cpu_s`:
    what every worker of a sweep pays before its first point, measured in CPU, not wall,
    seconds so that the machine's other load does not count)."""
    import multiprocessing

    from npusched.experiments.backends import _pool_context, _Workers, worker_cpu_s

    times = []
    cpus = []
    for _ in range(max(repeat, 1) + 1):
        t = time.perf_counter()
        pool = _Workers(_pool_context(multiprocessing))
        try:
            # a task the server preloaded (a function of this module would make the worker
            # import the bench package first, which a sweep's worker never does)
            cpus.append(pool.call(pool.start(), worker_cpu_s))
        finally:
            pool.close()
        times.append(time.perf_counter() - t)
        pool.join()
    return min(times[1:]), times[0], min(cpus[1:])


def _same_rows(a: list[dict[str, Any]], b: list[dict[str, Any]]) -> bool:
    """Whether two sweeps' rows are equal, ``wall_s`` apart, whatever order they finished in
    (JSON text compares floats to the last bit and NaN equal to NaN)."""

    def text(rows: list[dict[str, Any]]) -> list[str]:
        out = [
            json.dumps({k: v for k, v in r.items() if k != "wall_s"}, sort_keys=True) for r in rows
        ]
        return sorted(out)

    return text(a) == text(b)


@scenario(
    "sweep",
    default_requests=2_000,
    description="32 points of --requests requests through the sweep's process pool, 1 and 2 workers",
)
def sweep_scenario(
    *,
    requests: int,
    seed: int,
    reference: bool = True,
    report: Reporter = _no_report,
    repeat: int = 1,
) -> dict[str, Any]:
    """The ``sweep`` entry: ``points_per_s_1`` and ``points_per_s_2`` (points per wall second
    with 1 and 2 pool workers, the fastest of ``repeat`` runs each), ``speedup_2_workers``
    (their ratio), ``point_wall_s_median`` (a point's wall seconds in the one-worker sweep, the
    first apart), ``first_point_wall_s`` (the one-worker sweep's first point: a fresh worker),
    ``worker_start_s`` and ``pool_first_start_s`` (:func:`worker_start_s`) and ``cpu_count``."""
    from npusched.experiments.backends import (
        dispatch_order,
        join_finished_pools,
        run_tasks,
        start_pool_server,
    )

    tasks = sweep_tasks(requests, SWEEP_POINTS, seed)
    # the pool's server first: both timed sweeps then find it up, so neither pays its one
    # start (imports) and the ratio compares workers, not who ran first; it runs the first
    # point a pool hands out once, as ``npusched sweep``'s server runs its experiment's
    report("worker start", 0, 0)
    start_pool_server("process", warm={"config": dispatch_order(tasks)[0].config})
    start, first, start_cpu = worker_start_s()
    secs: dict[int, float] = {}
    driver_cpu: dict[int, float] = {}  # per worker count: the best run's driver CPU seconds
    point_s: list[float] = []
    first_s: list[float] = []
    busy: dict[int, float] = {}  # per worker count: the best run's point seconds over its wall
    first_rows: list[dict[str, Any]] | None = None
    for rnd in range(max(repeat, 1)):
        # both counts in each round, in turns (1 then 2, then 2 then 1), each from a new pool
        # of fresh workers: a drift in the machine's other load favours neither
        for workers in (1, 2) if rnd % 2 == 0 else (2, 1):
            report(f"{workers} worker(s)", rnd, repeat)
            rows: list[dict[str, Any]] = []
            c = time.process_time()
            t = time.perf_counter()
            run_tasks(tasks, rows.append, backend="process", workers=workers)
            wall = time.perf_counter() - t
            cpu = time.process_time() - c
            # the sweep returned at its last row; its workers exit before the next run starts
            join_finished_pools()
            assert len(rows) == len(tasks)
            # the same points: every run's rows equal the first's, wall_s apart
            if first_rows is None:
                first_rows = rows
            elif not _same_rows(first_rows, rows):
                raise AssertionError(
                    f"sweep: {workers} worker(s) gave other rows than the first run"
                )
            if wall <= secs.get(workers, wall):
                busy[workers] = sum(float(r["wall_s"]) for r in rows) / wall
                driver_cpu[workers] = cpu
            secs[workers] = min(secs.get(workers, wall), wall)
            if workers == 1:  # one worker runs the points in order: its first row is its first
                point_s += [float(r["wall_s"]) for r in rows[1:]]
                first_s.append(float(rows[0]["wall_s"]))
    point_s.sort()
    speedup = secs[1] / secs[2]
    return {
        "name": "sweep",
        "requests": requests,
        "points": len(tasks),
        "seed": seed,
        "repeat": repeat,
        "cpu_count": os.cpu_count(),
        "sweep_1_worker_s": secs[1],
        "sweep_2_workers_s": secs[2],
        "points_per_s_1": len(tasks) / secs[1],
        "points_per_s_2": len(tasks) / secs[2],
        "speedup_2_workers": speedup,
        # Amdahl's serial fraction f that this ratio implies: 1 / (f + (1 - f) / 2) = speedup
        "serial_fraction_2_workers": 2 / speedup - 1,
        # how long a point is (one worker: nothing beside it), to judge the case's fairness
        "point_wall_s_median": point_s[len(point_s) // 2] if point_s else None,
        # a fresh worker's first point (cold caches: what every worker pays once)
        "first_point_wall_s": min(first_s),
        # points in flight on average (the points' wall seconds summed over the sweep's wall):
        # at most the worker count; what is missing is the pool's serial part (start, hand-
        # over, an idle worker at the end), whatever else the machine runs (a loaded machine
        # slows the points, not their overlap)
        "points_in_flight_1": busy[1],
        "points_in_flight_2": busy[2],
        # the driver's CPU seconds per point (all its threads: hand-out, results, rows), the
        # 2-worker sweep's: on a 2-core machine the driver shares the workers' cores
        "driver_cpu_ms_per_point_1": driver_cpu[1] / len(tasks) * 1e3,
        "driver_cpu_ms_per_point_2": driver_cpu[2] / len(tasks) * 1e3,
        "worker_start_s": start,
        "worker_start_cpu_s": start_cpu,
        "pool_first_start_s": first,
        "rows_equal_1_2_workers": True,
        "load_average_1min": os.getloadavg()[0],
    }
