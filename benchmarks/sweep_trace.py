"""Stamps for :mod:`sweep_timeline`, installed in the pool's fork server (a preload module).

Imported in the fork server, it wraps what every forked worker runs with stamps that go to
``$NPUSCHED_SWEEP_TRACE/<pid>.txt``, one line per stamp: the event, ``time.perf_counter()``
(``CLOCK_MONOTONIC``, comparable between processes), this process's CPU seconds, its minor
page faults, and the seconds its thread waited on a run queue (ready to run while another
process ran; ``/proc/thread-self/schedstat``). The events: the child's start in the server
(``fork``), the pool's worker loop (``worker``), each chunk's start and end (``chunk+``,
``chunk-``) and each point's (``point+``, ``point-``). The package is not changed: the
wrapped names are looked up by the worker when it unpickles its target and its tasks.

``SWEEP_TRACE_EXPERIMENT=freeze`` also freezes the server's objects for the collector
(``gc.freeze()`` after a collection) before its first fork, to see whether that saves a
forked worker page faults (nineteenth round: it does not).
"""

from __future__ import annotations

import os
import resource
import time
from typing import Any

_DIR = os.environ.get("NPUSCHED_SWEEP_TRACE", "")


def stamp(event: str, extra: str = "") -> None:
    """Append one stamp of this process to its trace file."""
    if not _DIR:
        return
    ru = resource.getrusage(resource.RUSAGE_SELF)
    try:  # the main thread's seconds waiting on a run queue (ready, not running: other load)
        with open("/proc/thread-self/schedstat") as f:
            wait = int(f.read().split()[1]) * 1e-9
    except OSError:
        wait = 0.0
    line = (
        f"{event} {time.perf_counter():.6f} {time.process_time():.6f} {ru.ru_minflt} "
        f"{extra or '-'} {wait:.6f}\n"
    )
    with open(os.path.join(_DIR, f"{os.getpid()}.txt"), "a") as f:
        f.write(line)


def _install() -> None:
    import concurrent.futures.process as cfp
    import multiprocessing.forkserver as fs

    from npusched.experiments import backends

    serve_one = fs._serve_one

    def _serve_one(*args: Any) -> Any:
        stamp("fork")
        return serve_one(*args)

    fs._serve_one = _serve_one  # type: ignore[attr-defined]

    worker = cfp._process_worker

    def _process_worker(*args: Any) -> Any:
        stamp("worker")
        return worker(*args)

    cfp._process_worker = _process_worker  # type: ignore[attr-defined]
    pool_worker = getattr(backends, "pool_worker", None)  # the pool's own loop (twentieth round)
    if pool_worker is not None:

        def _pool_worker(*args: Any) -> Any:
            stamp("worker")
            return pool_worker(*args)

        backends.pool_worker = _pool_worker

    run_points = backends.run_points
    run_point = backends.run_point

    def traced_point(task: Any) -> Any:
        stamp("point+", task.point_id)
        try:
            return run_point(task)
        finally:
            stamp("point-", task.point_id)

    def traced_points(tasks: Any) -> Any:
        stamp("chunk+", str(len(tasks)))
        try:
            return run_points(tasks)
        finally:
            stamp("chunk-", str(len(tasks)))

    backends.run_point = traced_point  # run_points looks it up as a global
    backends.run_points = traced_points  # type: ignore[assignment]


if _DIR:
    _install()

if os.environ.get("SWEEP_TRACE_EXPERIMENT") == "freeze":
    import gc

    gc.collect()
    gc.freeze()
