"""Where sweep points run: in process, in a local process pool, or on a Dask cluster.

Every backend calls the same function, :func:`run_point`, on a :class:`PointTask` and hands
each finished row to the caller's ``on_done`` callback *in the driver process* as soon as the
point finishes. A worker on the driver's machine writes the point's file itself before it
returns (so the driver does not serialise every write); for a remote Dask cluster the driver
writes it (see :mod:`npusched.experiments.store`). A
point's row depends only on its run config (seeded randomness only), so every backend gives the
same rows for the same points; only ``wall_s`` (the point's run time) differs.

* ``inprocess``: a loop in the calling process (debugging, profiling, tiny sweeps).
* ``process`` (default): :class:`concurrent.futures.ProcessPoolExecutor` with ``workers``
  processes (default: all cores, ``os.cpu_count()``), forked from a ``forkserver`` that has
  imported the engine once (``spawn`` where there is no fork server), so a worker starts in
  milliseconds and the driver's threads (the progress bar) are never forked. Points travel in chunks
  (:func:`chunks`: largest workload first, each chunk a quarter of a worker's share of the
  points left, at most 16, down to one point at the end); a chunk's rows reach ``on_done``
  when the chunk finishes. As with any spawn-based pool, the
  calling script's main module must be importable and guarded by
  ``if __name__ == "__main__":`` (the ``npusched`` command is).
* ``dask``: Dask distributed. With ``address`` (``tcp://host:8786``) it connects to a running
  scheduler; without, it starts a :class:`distributed.LocalCluster` of ``workers`` processes
  (one thread each) for the sweep and closes it afterwards. Needs the ``[dist]`` extra.
"""

from __future__ import annotations

import logging
import os
import re
import threading
import time
from array import array
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from npusched.errors import ConfigError, NpuschedError, SimulationError

__all__ = [
    "BACKENDS",
    "POINTS_DIR",
    "PointTask",
    "check_backend_options",
    "run_point",
    "run_tasks",
    "write_point",
]

#: Sub-directory of a sweep directory holding one Parquet file per finished point.
POINTS_DIR = "points"

#: Backend names accepted by ``--backend``.
BACKENDS = ("inprocess", "process", "dask")


@dataclass(frozen=True)
class PointTask:
    """What a worker needs to run one point (picklable, JSON-compatible config). With
    ``out_dir`` (a sweep directory on a file system the worker shares) the worker writes the
    point's file itself (:func:`write_point`)."""

    point_id: str
    index: int
    combo: int
    seed: int
    params: dict[str, Any]
    config: dict[str, Any]
    base_dir: str
    label: str
    out_dir: str | None = None
    #: ``--plugin`` files the worker loads before it runs the point (a spawned worker starts
    #: without the driver's registrations)
    plugins: tuple[str, ...] = ()


def run_point(task: PointTask) -> dict[str, Any]:
    """Simulate one point and return its row: identification (``point_id``, ``index``,
    ``combo``, ``seed``), the grid parameters (one column per axis), every summary metric,
    ``latencies_s`` (the finished requests' latencies, seconds, in request-id order), ``wall_s``
    (seconds this point took) and ``config_json`` (the complete run config)."""
    import json

    import numpy as np

    from npusched.experiments.config import RunConfig
    from npusched.experiments.runner import run_config

    t0 = time.perf_counter()
    if task.plugins:
        from npusched.plugins import load_plugin

        for plugin in task.plugins:
            load_plugin(plugin)
    cfg = RunConfig.model_validate(task.config)
    try:
        out = run_config(cfg, base_dir=task.base_dir, progress=False, source=task.label)
    except NpuschedError as e:
        raise SimulationError(f"{task.label}: {e}") from None
    # the result's column, not ``out.records``: a point never needs the frame
    lat = np.asarray(out.result.columns["latency_s"], dtype=np.float64)
    row: dict[str, Any] = {
        "point_id": task.point_id,
        "index": task.index,
        "combo": task.combo,
        "seed": task.seed,
        **task.params,
        **{k: float(v) for k, v in sorted(out.summary.items())},
        "latencies_s": lat[np.isfinite(lat)].tolist(),
        "config_json": json.dumps(task.config, sort_keys=True),
        "wall_s": time.perf_counter() - t0,
    }
    if task.out_dir is not None:
        write_point(Path(task.out_dir), row)
    return row


def write_point(out_dir: Path, row: dict[str, Any]) -> Path:
    """Write one finished point's row atomically to ``points/<point_id>.parquet`` (pyarrow,
    uncompressed and without column statistics: a one-row file is written and read fastest
    that way; the consolidated table is compressed)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from npusched._io import atomic_path

    path = out_dir / POINTS_DIR / f"{row['point_id']}.parquet"
    with atomic_path(path) as tmp:
        pq.write_table(pa.Table.from_pylist([row]), tmp, compression="none", write_statistics=False)
    return path


OnDone = Callable[[dict[str, Any]], None]


def run_tasks(
    tasks: Sequence[PointTask],
    on_done: OnDone,
    *,
    backend: str = "process",
    workers: int | None = None,
    address: str | None = None,
    local_processes: bool = True,
) -> None:
    """Run ``tasks`` on ``backend`` and call ``on_done(row)`` in this process for each one as it
    finishes (in completion order). The first failing point raises after the points already
    finished have been handed over.

    ``local_processes=False`` makes the ``dask`` backend's local cluster (no ``address``) run its
    workers as threads of this process (``LocalCluster(processes=False)``): no start-up cost,
    for debugging and tests; the points still go through Dask's scheduler."""
    check_backend_options(backend, workers, address)
    if not tasks:
        return
    if backend == "inprocess":
        for t in tasks:
            on_done(run_point(t))
    elif backend == "process":
        _run_pool(tasks, on_done, workers)
    else:
        _run_dask(tasks, on_done, workers, address, local_processes)


_ADDRESS = re.compile(
    r"^(?:(?:tcp|tls|ucx|inproc)://)?[A-Za-z0-9_.\-\[\]:]*[A-Za-z0-9_.\-\]]:\d{1,5}$"
)


def check_backend_options(backend: str, workers: int | None, address: str | None) -> None:
    """Check ``--backend``, ``--workers`` and ``--address`` (before a sweep creates anything).

    Raises:
        ConfigError: an unknown backend, ``workers < 1``, an address without the dask backend,
            or an address that is not ``[tcp://]host:port``.
    """
    if backend not in BACKENDS:
        raise ConfigError(f"--backend: unknown backend {backend!r}; allowed: {', '.join(BACKENDS)}")
    if workers is not None and workers < 1:
        raise ConfigError(f"--workers must be >= 1, got {workers}")
    if address is not None and backend != "dask":
        raise ConfigError(
            f"--address: only the dask backend takes an address (got --backend {backend})"
        )
    if address is not None:
        port = address.rpartition(":")[2]
        if not _ADDRESS.match(address) or not 0 < int(port or 0) < 65536:
            raise ConfigError(
                f"--address: {address!r} is not a scheduler address; allowed: "
                "[tcp://]HOST:PORT, e.g. tcp://127.0.0.1:8786"
            )


#: How many times a sweep replaces a process pool whose worker died before it gives up.
POOL_RESTARTS = 3


#: Most points one pool task carries (:func:`chunk_sizes`).
MAX_CHUNK = 16

#: A pool task carries at most 1 / (this x workers) of the points not yet handed out
#: (:func:`chunk_sizes`).
CHUNK_DIVISOR = 4


def chunk_sizes(n_tasks: int, workers: int) -> list[int]:
    """Points per pool task, in dispatch order: each carries ``1 / (4 x workers)`` of the points
    not yet handed out (:data:`CHUNK_DIVISOR`), at least 1 and at most :data:`MAX_CHUNK`
    ("guided" chunks). Small points share a task's round trip (pickling, a future, a wake of
    the driver) while the sweep's last tasks hold one point each, so the worker that finishes
    first waits at most about one point for the other (fixed chunks of ``k`` points leave it
    idle for up to ``k``)."""
    per = CHUNK_DIVISOR * max(workers, 1)
    sizes: list[int] = []
    left = n_tasks
    while left > 0:
        k = max(1, min(MAX_CHUNK, -(-left // per)))
        sizes.append(k)
        left -= k
    return sizes


def task_requests(task: PointTask) -> float | None:
    """How many requests ``task``'s workload draws, where its config states it (``n_tasks``
    of a ``prema`` workload, ``n_requests`` or ``duration_s x rate_per_s`` of a ``poisson``
    one), else ``None`` (a trace): the size :func:`dispatch_order` sorts by."""
    w = task.config.get("workload")
    if not isinstance(w, dict):
        return None
    n = w.get("n_tasks") if w.get("kind") == "prema" else w.get("n_requests")
    if n is None and w.get("duration_s") is not None and w.get("rate_per_s") is not None:
        n = float(w["duration_s"]) * float(w["rate_per_s"])
    return None if n is None else float(n)


def dispatch_order(tasks: Sequence[PointTask]) -> list[PointTask]:
    """``tasks`` in the order a pool hands them out: largest workload first (requests,
    :func:`task_requests`; ties and sweeps whose sizes are not all known keep their order), so
    the longest points do not start last and leave one worker running alone at the end. The
    rows do not depend on it (a row is its point's; the store sorts by point index)."""
    sizes = [task_requests(t) for t in tasks]
    if any(s is None for s in sizes):
        return list(tasks)
    order = sorted(range(len(tasks)), key=lambda i: -(sizes[i] or 0.0))
    return [tasks[i] for i in order]


def chunks(tasks: Sequence[PointTask], workers: int) -> list[Sequence[PointTask]]:
    """``tasks`` in :func:`dispatch_order`, cut into pool tasks of :func:`chunk_sizes`."""
    order = dispatch_order(tasks)
    out: list[Sequence[PointTask]] = []
    i = 0
    for k in chunk_sizes(len(order), workers):
        out.append(order[i : i + k])
        i += k
    return out


def run_points(tasks: Sequence[PointTask]) -> tuple[list[dict[str, Any]], BaseException | None]:
    """:func:`run_point` over a chunk of points, in order (one pool task): the rows of the
    points that finished and the error of the first that failed (``None`` if none did; the
    points after it are not run). The rows travel packed (:func:`pack_row`)."""
    rows: list[dict[str, Any]] = []
    with _CHUNK:  # a worker whose driver died exits between chunks, never inside one
        for t in tasks:
            try:
                rows.append(pack_row(run_point(t)))
            except Exception as e:  # handed to the driver after the finished rows
                return rows, e
    return rows, None


#: held by a pool worker while it runs a chunk (:func:`run_points`); :func:`_watch_driver`
#: takes it before the worker exits, so a chunk under way finishes and writes its points
_CHUNK = threading.Lock()


def exit_with_driver(driver_pid: int) -> None:
    """A pool worker's initializer: watch the driver (``driver_pid``) from a daemon thread and
    exit once it is gone and the chunk under way is done. A driver killed with SIGKILL closes
    nothing in order: its workers, children of the pool's fork server and not of the driver,
    hold both ends of their task queue, so they would wait on it for ever (and the fork server
    with them, which lives while a worker holds its pipe)."""
    threading.Thread(
        target=_watch_driver, args=(driver_pid,), name="npusched-driver-watch", daemon=True
    ).start()


def _watch_driver(driver_pid: int, poll_s: float = 1.0) -> None:
    """Block until process ``driver_pid`` has exited (a pidfd where the system has them, else
    a check every ``poll_s`` seconds), then take :data:`_CHUNK` and end the process."""
    import select

    try:
        fd = os.pidfd_open(driver_pid)
    except (AttributeError, OSError):
        fd = -1
    if fd >= 0:
        select.select([fd], [], [])
    else:
        while True:
            try:
                os.kill(driver_pid, 0)
            except ProcessLookupError:
                break
            except PermissionError:  # another user's process took the number: ours is gone
                break
            time.sleep(poll_s)
    _CHUNK.acquire()
    os._exit(0)


def pack_row(row: dict[str, Any]) -> dict[str, Any]:
    """``row`` with its ``latencies_s`` as an ``array("d")`` for the trip to the driver.

    The driver unpickles every row on the pool's result thread, beside the workers on a
    machine with as many cores as workers: a list of 2,000 floats unpickles one float at a
    time (about 0.1 ms), an array of doubles as one block of bytes (its ``tolist`` in
    :func:`unpack_row` about a third of that), so the driver takes less of the workers'
    cores per point. The values are the same doubles, bit for bit."""
    lat = row.get("latencies_s")
    if type(lat) is list:
        row = dict(row)
        row["latencies_s"] = array("d", lat)
    return row


def unpack_row(row: dict[str, Any]) -> dict[str, Any]:
    """:func:`pack_row` undone (in the driver): ``latencies_s`` a list of floats again."""
    lat = row.get("latencies_s")
    if type(lat) is array:
        row["latencies_s"] = lat.tolist()
    return row


def _run_pool(tasks: Sequence[PointTask], on_done: OnDone, workers: int | None) -> None:
    """Run ``tasks`` on a process pool (:func:`_pool_context`). A worker that dies (killed, out of memory)
    breaks the whole pool: its unfinished points are resubmitted to a fresh pool, up to
    :data:`POOL_RESTARTS` times; then the sweep stops with an error (exit status 1)."""
    from concurrent.futures.process import BrokenProcessPool

    todo = list(tasks)
    for attempt in range(POOL_RESTARTS + 1):
        finished: set[str] = set()

        def done(row: dict[str, Any], finished: set[str] = finished) -> None:
            finished.add(row["point_id"])
            on_done(row)

        try:
            _pool_pass(todo, done, workers)
            return
        except BrokenProcessPool:
            todo = [t for t in todo if t.point_id not in finished]
            if attempt == POOL_RESTARTS:
                raise RuntimeError(
                    f"a sweep worker process died {POOL_RESTARTS + 1} times (killed or out of "
                    f"memory); {len(todo)} points not run; rerun to resume"
                ) from None
            import sys

            print(
                f"npusched: warning: a sweep worker process died; resubmitting {len(todo)} "
                "unfinished points to a new pool",
                file=sys.stderr,
            )


#: Threads waiting for the workers of pools whose rows are all in (:func:`_pool_pass` does
#: not wait for them); :func:`join_finished_pools` waits for these threads.
_FINISHED_POOLS: list[threading.Thread] = []


def join_finished_pools() -> None:
    """Wait until the workers of every finished pool have exited (a sweep returns as soon as
    its last row is in and lets its workers exit beside what the caller does next, e.g.
    consolidating the results; a benchmark calls this between two timed sweeps)."""
    while _FINISHED_POOLS:
        _FINISHED_POOLS.pop().join()


def _pool_pass(tasks: Sequence[PointTask], on_done: OnDone, workers: int | None) -> None:
    import multiprocessing
    from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait

    join_finished_pools()  # never more than one pool's workers alive
    n = min(workers or os.cpu_count() or 1, len(tasks))
    ctx = _pool_context(multiprocessing)
    pool = ProcessPoolExecutor(
        max_workers=n, mp_context=ctx, initializer=exit_with_driver, initargs=(os.getpid(),)
    )
    # keep a bounded window of submitted chunks (a million-point sweep never holds a million
    # futures), refilled as chunks finish
    todo = iter(chunks(tasks, n))
    pending: set[Future[tuple[list[dict[str, Any]], BaseException | None]]] = set()
    window = 4 * n
    try:
        for c in itertools_islice(todo, window):
            pending.add(pool.submit(run_points, c))
        while pending:
            done, pending = wait(pending, return_when=FIRST_COMPLETED)
            error: BaseException | None = None
            # finished chunks first: a dead worker's chunk raises BrokenProcessPool here,
            # after the rows of the others are recorded
            for f in sorted(done, key=lambda f: f.exception() is not None):
                rows, err = f.result()
                for row in rows:
                    on_done(unpack_row(row))
                error = error or err
            if error is not None:
                raise error
            for c in itertools_islice(todo, len(done)):
                pending.add(pool.submit(run_points, c))
    except BaseException:
        for f in pending:
            f.cancel()
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    # every row is in: the workers exit while the caller goes on (a thread waits for them),
    # so the caller's next step overlaps their exit instead of waiting 10-40 ms for it
    closing = threading.Thread(target=pool.shutdown, name="npusched-pool-exit")
    closing.start()
    _FINISHED_POOLS.append(closing)


#: what a pool worker needs to run a point, imported once in the fork server (where there is
#: one) instead of once per worker: pandas, the config schema and the engine cost about 2 s of
#: CPU to import, which a spawned worker paid before its first point; the policies, the engine,
#: the metrics, pyarrow and the entry points another 0.5 s on a worker's first point
#: (:mod:`npusched.experiments.worker_preload`)
WORKER_PRELOAD = (
    "npusched.experiments.config",
    "npusched.experiments.runner",
    "npusched.experiments.worker_preload",
)


def worker_cpu_s() -> float:
    """This process's CPU seconds so far (user + system, :func:`time.process_time`). As a pool
    task it measures a worker's start-up: a forked process's CPU clock starts at zero, and this
    module is in the server's preload, so the task itself imports nothing (the bench's
    ``worker_start_cpu_s``)."""
    return time.process_time()


def start_pool_server(backend: str = "process", warm: dict[str, Any] | None = None) -> None:
    """Start the ``process`` backend's fork server now, without waiting for it: its imports
    (:data:`WORKER_PRELOAD`, about 1 s of CPU) then run on another core while the caller
    imports and loads the experiment, instead of after it, when the first pool is created
    (``npusched sweep`` calls this first). Does nothing for another backend or where there is
    no fork server; a server already running is kept (and ``warm`` ignored).

    ``warm`` names a point of the sweep for the server to run once after its imports, before
    its first fork (:func:`npusched.experiments.worker_preload.warm_up`): ``{"experiment":
    PATH, "filters": [AXIS=VALUE, ...], "write": True}`` (``npusched sweep``: the server reads
    the file itself, beside the driver) or ``{"config": RUN_CONFIG_JSON, "base_dir": DIR}``.
    Every worker then starts with the caches a first point builds (networks, profiles, plans)
    instead of building them itself, all workers at once, on their first point."""
    if backend != "process":
        return
    import multiprocessing

    if _pool_context(multiprocessing).get_start_method() != "forkserver":
        return
    import json
    from multiprocessing import forkserver

    text = json.dumps(warm) if warm is not None else ""
    # the server inherits this process's environment when it starts; the variable is this
    # start's only (a server started later, by a pool, warms nothing)
    if text and len(text) < _WARM_MAX_CHARS:
        os.environ[WARM_ENV] = text
    try:
        forkserver.ensure_running()
    finally:
        os.environ.pop(WARM_ENV, None)


#: The environment variable through which :func:`start_pool_server` hands the fork server the
#: point to warm up with (JSON, :func:`npusched.experiments.worker_preload.warm_up`); the server
#: removes it from its environment, so no worker sees it.
WARM_ENV = "NPUSCHED_POOL_WARM"

#: Longest warm-up spec handed to the fork server (an environment variable: one string may
#: not exceed 128 KiB on Linux); a longer one (a config holding a large table) warms nothing.
_WARM_MAX_CHARS = 100_000


def _pool_context(multiprocessing: Any) -> Any:
    """The pool's start method: ``forkserver`` where the platform has it, with
    :data:`WORKER_PRELOAD` imported once in the server so that each worker is a fork of an
    already-imported process (it starts in milliseconds); else ``spawn``. Neither forks the
    driver itself, so its threads (the progress bar) are never copied into a worker."""
    if "forkserver" in multiprocessing.get_all_start_methods():
        import sys

        ctx = multiprocessing.get_context("forkserver")
        # a worker re-runs the driver's main script before its first task (the start
        # method's rule), and the ``npusched`` command's script imports the CLI (typer,
        # rich: about 0.06 s of CPU per worker); imported once in the server instead (the
        # start method's own ``"__main__"`` preload never runs on Python 3.11: it looks the
        # script's path up under a key the preparation data does not have)
        cli = ("npusched.cli",) if "npusched.cli" in sys.modules else ()
        ctx.set_forkserver_preload([*WORKER_PRELOAD, *cli])
        return ctx
    return multiprocessing.get_context("spawn")


def itertools_islice(it: Any, n: int) -> list[Any]:
    """The next ``n`` items of iterator ``it`` (fewer at its end)."""
    import itertools

    return list(itertools.islice(it, n))


def _run_dask(
    tasks: Sequence[PointTask],
    on_done: OnDone,
    workers: int | None,
    address: str | None,
    processes: bool = True,
) -> None:
    try:
        from distributed import Client, LocalCluster, as_completed
    except ImportError:  # pragma: no cover - the [dist] extra is not installed
        raise ConfigError(
            "--backend dask: dask.distributed is not installed; pip install 'npusched[dist]'"
        ) from None
    cluster = None
    if address is None:
        n = min(workers or os.cpu_count() or 1, len(tasks))
        # silence_logs: the cluster's own shutdown chatter (workers heartbeating a scheduler
        # that is closing) is not the user's business; a failing point raises through its future
        cluster = LocalCluster(
            n_workers=n,
            threads_per_worker=1,
            processes=processes,
            dashboard_address=None,
            silence_logs=logging.CRITICAL,
        )
        client = Client(cluster)
    else:
        try:
            client = Client(address, timeout="10s")
        except (OSError, TimeoutError, ValueError) as e:
            raise ConfigError(f"--address {address}: cannot reach a Dask scheduler: {e}") from None
    try:
        futures = client.map(run_point, list(tasks), pure=False)
        try:
            for f in as_completed(futures):
                on_done(f.result())
        except BaseException:
            client.cancel(futures)
            raise
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
