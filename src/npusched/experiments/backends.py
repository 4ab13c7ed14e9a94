"""Where sweep points run: in process, in a local process pool, or on a Dask cluster.

Every backend calls the same function, :func:`run_point`, on a :class:`PointTask` and hands
each finished row to the caller's ``on_done`` callback *in the driver process* as soon as the
point finishes. A worker on the driver's machine writes the point's file itself before it
returns (so the driver does not serialise every write); for a remote Dask cluster the driver
writes it (see :mod:`npusched.experiments.store`). A
point's row depends only on its run config (seeded randomness only), so every backend gives the
same rows for the same points; only ``wall_s`` (the point's run time) differs.

* ``inprocess``: a loop in the calling process (debugging, profiling, tiny sweeps).
* ``process`` (default): ``workers`` processes (default: all cores, ``os.cpu_count()``), each
  reading its chunks from a pipe of its own (:class:`_Workers`), forked from a ``forkserver`` that has
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
    ("guided" chunks). Small points share a task's round trip (pickling, a wake of the
    driver) while the sweep's last tasks hold one point each, so the worker that finishes
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
    for t in tasks:
        try:
            rows.append(pack_row(run_point(t)))
        except Exception as e:  # handed to the driver after the finished rows
            return rows, e
    return rows, None


def pool_worker(conn: Any) -> None:
    """A pool worker's loop (the process's target): read a call from the driver's pipe
    (``conn``, :func:`_call_bytes`), run it, send back ``(True, result)`` or ``(False,
    error)``, until the driver closes its end.

    The pipe is the worker's own (one per worker, :class:`_Workers`) and only the driver holds
    its other end, so a driver that is gone, killed with SIGKILL or not, ends every worker by
    itself: a worker waiting for a call reads the end of the pipe and returns; one running a
    chunk finishes it (its points' files written) and returns when it cannot send the rows.
    Nothing else runs in the worker (no thread, no watch on the driver)."""
    import pickle

    while True:
        try:
            data = conn.recv_bytes()
        except (EOFError, OSError):  # the driver closed its end (done, failed or killed)
            return
        fn, args = pickle.loads(data)
        try:
            reply = (True, fn(*args))
        except Exception as e:
            reply = (False, e)
        try:
            out = pickle.dumps(reply, pickle.HIGHEST_PROTOCOL)
        except Exception as e:  # a result or an error that does not pickle
            out = pickle.dumps((False, SimulationError(f"{type(e).__name__}: {e}")))
        try:
            conn.send_bytes(out)
        except OSError:  # the driver is gone: the chunk is done, its files written
            return


def _call_bytes(fn: Callable[..., Any], *args: Any) -> bytes:
    """A call for :func:`pool_worker`, pickled (the function by name)."""
    import pickle

    return pickle.dumps((fn, args), pickle.HIGHEST_PROTOCOL)


def _reply(data: bytes) -> Any:
    """A :func:`pool_worker` reply's result, or its error raised."""
    import pickle

    ok, value = pickle.loads(data)
    if not ok:
        raise value
    return value


class _Workers:
    """The process backend's workers: processes of the sweep's start method
    (:func:`_pool_context`, forked from the fork server), each running :func:`pool_worker` on
    a pipe of its own that only this process holds the other end of.

    What :class:`concurrent.futures.ProcessPoolExecutor` adds around the same processes costs a
    sweep of short points on as many cores as workers: the driver ran three threads (its main
    thread, the executor's result thread, the call queue's feeder) that handed each chunk and
    each row over between them, and a worker unpickled two shared queues and their locks
    before its first task. Here the driver's main thread alone writes a chunk to a worker's
    pipe and reads its rows back (:func:`_pool_pass`), and a worker unpickles one pipe."""

    def __init__(self, ctx: Any) -> None:
        self.ctx = ctx
        self.procs: list[Any] = []
        self.conns: list[Any] = []

    def start(self) -> Any:
        """Start one worker; its pipe's driver end."""
        here, there = self.ctx.Pipe()
        proc = self.ctx.Process(target=pool_worker, args=(there,), name="npusched-worker")
        try:
            proc.start()
        finally:
            there.close()
        self.procs.append(proc)
        self.conns.append(here)
        return here

    def call(self, conn: Any, fn: Callable[..., Any], *args: Any) -> Any:
        """``fn(*args)`` run by the worker at ``conn`` (one round trip; its error raised)."""
        conn.send_bytes(_call_bytes(fn, *args))
        return _reply(conn.recv_bytes())

    def close(self) -> None:
        """Close every pipe: each worker exits once its call under way is done."""
        for c in self.conns:
            c.close()

    def join(self) -> None:
        """Wait until every worker has exited."""
        for p in self.procs:
            p.join()

    def terminate(self) -> None:
        """End every worker now (SIGTERM): a pool with a dead worker is given up whole, its
        other workers' chunks handed to the next pool."""
        for p in self.procs:
            if p.is_alive():
                p.terminate()

    def is_alive(self) -> bool:
        """Whether a worker still runs."""
        return any(p.is_alive() for p in self.procs)


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


#: The workers of pools whose rows are all in, their pipes closed (:func:`_pool_pass` does
#: not wait for them to exit); :func:`join_finished_pools` waits for them.
_FINISHED_POOLS: list[_Workers] = []


def join_finished_pools() -> None:
    """Wait until the workers of every finished pool have exited (a sweep returns as soon as
    its last row is in and lets its workers exit beside what the caller does next, e.g.
    consolidating the results; a benchmark calls this between two timed sweeps)."""
    while _FINISHED_POOLS:
        _FINISHED_POOLS.pop().join()


#: Largest pickled chunk that a pool hands a worker ahead, while the worker still runs its
#: previous one (:func:`_pool_pass`): one such chunk waits in the worker's pipe at a time, so
#: the driver's write never blocks (a socket pair's buffer holds far more), and neither side
#: can wait on the other for ever; a larger chunk is handed out only once the worker is idle.
AHEAD_MAX_BYTES = 32 * 1024


def _pool_pass(tasks: Sequence[PointTask], on_done: OnDone, workers: int | None) -> None:
    """One pool's pass over ``tasks``: ``min(workers, chunks)`` workers (:class:`_Workers`),
    each handed a chunk (:func:`chunks`) and one more ahead, which waits in its pipe, so that
    a worker goes on to its next chunk without waiting for the driver (whose wake-up needs a
    core that the workers hold). Of two workers or more, the last ``workers`` chunks are handed
    out only to a worker that has none left (whichever is idle first takes the next), and a
    chunk's rows are read after the worker's next chunk is sent. A worker that dies (its pipe
    ends) raises ``BrokenProcessPool``."""
    import multiprocessing
    from concurrent.futures.process import BrokenProcessPool
    from multiprocessing.connection import wait

    join_finished_pools()  # never more than one pool's workers alive
    n = min(workers or os.cpu_count() or 1, len(tasks))
    plan = chunks(tasks, n)
    pool = _Workers(_pool_context(multiprocessing))
    held: dict[Any, int] = {}  # each worker's pipe: the chunks it holds (running, ahead)
    sent = 0  # chunks handed out
    call = _call_bytes(run_points, list(plan[0]))  # the next chunk, pickled

    def hand(conn: Any) -> None:
        """Top the worker at ``conn`` up: a chunk if it holds none, one ahead if it holds one,
        the chunk is small and it is not one of the last ``n`` (``n`` > 1)."""
        nonlocal sent, call
        while sent < len(plan):
            k = held.get(conn, 0)
            tail = n > 1 and len(plan) - sent <= n  # one worker has no other to balance
            if k and (k > 1 or tail or len(call) > AHEAD_MAX_BYTES):
                return
            conn.send_bytes(call)
            held[conn] = k + 1
            sent += 1
            if sent < len(plan):
                call = _call_bytes(run_points, list(plan[sent]))

    try:
        while sent < len(plan) and len(held) < n:
            hand(pool.start())
        while held:
            error: BaseException | None = None
            ready: list[Any] = wait(list(held))
            for conn in ready:
                try:
                    data = conn.recv_bytes()
                except (EOFError, OSError):
                    pool.terminate()
                    raise BrokenProcessPool(
                        "a sweep worker process ended while it ran a chunk"
                    ) from None
                held[conn] -= 1
                if error is None:
                    hand(conn)  # the next chunk first: the rows can wait
                if not held[conn]:
                    del held[conn]
                rows, err = _reply(data)
                for row in rows:
                    on_done(unpack_row(row))
                error = error or err
            if error is not None:
                raise error
    finally:
        # every row is in (or the pass failed): the workers exit once their pipes close (the
        # chunks they hold done first) while the caller goes on, so the caller's next step
        # overlaps their exit instead of waiting 10-40 ms for it (:func:`join_finished_pools`)
        pool.close()
        _FINISHED_POOLS.append(pool)


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
