"""A timeline of the ``sweep`` bench scenario's pools (issue 25): where each process is busy.

    PYTHONPATH=SRC python benchmarks/sweep_timeline.py [REPEAT] [REQUESTS] [OUT.json] [--cold]

Runs the scenario's 32 points (:func:`npusched.bench.sweep.sweep_tasks`) through
:func:`~npusched.experiments.backends.run_tasks` on the ``process`` backend at 1 and 2
workers, in turns, ``REPEAT`` times each (as the scenario does: the fork server started
first and warmed with the first point unless ``--cold`` or the tree predates the warm-up,
each run from a new pool, the workers joined between runs). The fork server preloads
:mod:`sweep_trace`, which stamps each worker's fork, its worker loop, its chunks and points
(wall and CPU seconds, page faults, run-queue waits); the driver stamps the run's start, each
worker's spawn (the fork server's round trip), each row's arrival and the run's end, with
its own and its threads' CPU seconds. Prints, per run, each worker's wall in its phases
(start, hand-overs between chunks, points) split into CPU, run-queue wait and blocked (the
rest: waiting on the pool), its end idle, first-point and median point CPU and page faults,
and a text Gantt chart; then the medians per worker count and the ratio their CPU seconds
imply on an idle machine (:func:`_summary`); with ``OUT.json`` the raw stamps and figures.

``SWEEP_TRACE_EXPERIMENT=pipe`` sets the pools' result pipe to 1 MiB (``F_SETPIPE_SZ``), so
that a chunk's rows never wait for the driver to read them; ``=freeze`` see
:mod:`sweep_trace` (nineteenth round: neither changed what a worker waits or pays).
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any


def main() -> None:
    args = [a for a in sys.argv[1:] if a != "--cold"]
    repeat = int(args[0]) if args else 3
    requests = int(args[1]) if len(args) > 1 else 2_000
    out = args[2] if len(args) > 2 else None
    trace_dir = tempfile.mkdtemp(prefix="sweep_trace_")
    os.environ["NPUSCHED_SWEEP_TRACE"] = trace_dir
    here = str(Path(__file__).resolve().parent)
    sys.path.insert(0, here)
    # the fork server does not take the driver's sys.path (Python 3.11): the environment's
    os.environ["PYTHONPATH"] = os.pathsep.join(
        [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p] + [here]
    )

    import concurrent.futures.process as cfp

    from npusched.bench.sweep import sweep_tasks, worker_start_s
    from npusched.experiments import backends

    backends.WORKER_PRELOAD = (*backends.WORKER_PRELOAD, "sweep_trace")
    tasks = sweep_tasks(requests)
    # the fork server up, as the scenario starts it (warmed with the first point where this
    # version of the package does that)
    if "warm" in backends.start_pool_server.__code__.co_varnames and "--cold" not in sys.argv:
        backends.start_pool_server(
            "process", warm={"config": backends.dispatch_order(tasks)[0].config}
        )
    worker_start_s()

    drv: list[tuple[str, float, float, float, str]] = []

    def stamp(ev: str, extra: str = "") -> None:
        drv.append((ev, time.perf_counter(), time.process_time(), time.thread_time(), extra))

    # a worker's spawn: the pool's own workers (twentieth round on) or the executor's
    workers_cls = getattr(backends, "_Workers", None)
    if workers_cls is not None:
        start = workers_cls.start

        def _start(self: Any) -> Any:
            stamp("spawn+")
            conn = start(self)
            stamp("spawn-")
            return conn

        workers_cls.start = _start
    else:
        spawn = cfp.ProcessPoolExecutor._spawn_process

        def _spawn(self: Any) -> None:
            stamp("spawn+")
            spawn(self)
            stamp("spawn-")

        cfp.ProcessPoolExecutor._spawn_process = _spawn  # type: ignore[method-assign]

    if os.environ.get("SWEEP_TRACE_EXPERIMENT") == "pipe":
        import fcntl

        init = cfp.ProcessPoolExecutor.__init__

        def _init(self: Any, *a: Any, **k: Any) -> None:
            init(self, *a, **k)
            fcntl.fcntl(self._result_queue._reader.fileno(), fcntl.F_SETPIPE_SZ, 1 << 20)

        cfp.ProcessPoolExecutor.__init__ = _init  # type: ignore[method-assign]

    runs: list[dict[str, Any]] = []
    for rnd in range(repeat):
        for workers in (1, 2) if rnd % 2 == 0 else (2, 1):
            for f in os.listdir(trace_dir):
                os.unlink(os.path.join(trace_dir, f))
            drv.clear()

            def on_done(row: dict[str, Any]) -> None:
                stamp("row", row["point_id"])

            before = _thread_cpu()
            stamp("run+")
            backends.run_tasks(tasks, on_done, backend="process", workers=workers)
            stamp("run-")
            after = _thread_cpu()
            threads = {
                name: (after[name] - before.get(name, 0.0)) * 1e3
                for name in after
                if after[name] - before.get(name, 0.0) > 0
            }
            print("  driver threads' CPU ms:", {k: round(v, 1) for k, v in threads.items()})
            backends.join_finished_pools()
            procs: dict[int, list[tuple[str, float, float, int, str, float]]] = {}
            for f in os.listdir(trace_dir):
                lines = Path(trace_dir, f).read_text().splitlines()
                procs[int(f.split(".")[0])] = [
                    (p[0], float(p[1]), float(p[2]), int(p[3]), p[4], float(p[5]))
                    for p in (ln.split(" ") for ln in lines)
                ]
            figs = _report(workers, list(drv), procs)
            runs.append({**figs, "driver": list(drv), "workers_stamps": procs})
    _summary(runs)
    if out:
        Path(out).write_text(json.dumps(runs))


def _summary(runs: list[dict[str, Any]]) -> None:
    """Medians over the runs of each worker count, and the ratio their CPU seconds imply.

    The replay: a sweep's wall on an idle machine is taken as the latest worker's end, each
    worker starting ``w x s`` after the run's start (``s`` the fastest first spawn round trip
    seen, the fork server forking the workers one after the other) and then busy for its CPU
    seconds (start, chunks' hand-over, points), plus, with two workers, half the driver's CPU
    seconds (the driver shares the workers' two cores; with one worker it has a core of its
    own). It assumes a point takes as long beside another as alone."""
    import statistics

    spawn = min(
        next(
            b[1] - a[1]
            for a, b in zip(r["driver"], r["driver"][1:], strict=False)
            if a[0] == "spawn+"
        )
        for r in runs
    )
    est: dict[int, list[float]] = {}
    for n in sorted({r["workers"] for r in runs}):
        mine = [r for r in runs if r["workers"] == n]
        ws = [w for r in mine for w in r["workers_figs"]]

        def med(key: str, k: int | None = None, ws: list[dict[str, Any]] = ws) -> float:
            return statistics.median(w[key] if k is None else w[key][k] for w in ws)

        for r in mine:
            ends = [
                (i + 1) * spawn * 1e3 + w["start"][1] + w["between_chunks"][1] + w["points"][1]
                for i, w in enumerate(r["workers_figs"])
            ]
            est.setdefault(n, []).append(max(ends) + (r["driver_cpu_ms"] / 2 if n > 1 else 0.0))
        print(
            f"=== {n} worker(s), medians of {len(mine)} runs (ms): wall "
            f"{statistics.median(r['wall_ms'] for r in mine):.1f}, driver CPU "
            f"{statistics.median(r['driver_cpu_ms'] for r in mine):.1f}; per worker: start CPU "
            f"{med('start', 1):.1f} (faults {med('faults_start'):.0f}), first point CPU "
            f"{med('first_point_cpu'):.1f} (faults {med('faults_first_point'):.0f}), point CPU "
            f"{med('point_cpu_median'):.2f}, between chunks CPU {med('between_chunks', 1):.1f} "
            f"blocked {med('between_chunks', 3):.1f}, end idle {med('end_idle'):.1f}; replayed "
            f"wall {statistics.median(est[n]):.1f}"
        )
    if 1 in est and 2 in est:
        print(
            f"=== replayed ratio (fastest spawn {spawn * 1e3:.1f} ms): "
            f"{statistics.median(est[1]) / statistics.median(est[2]):.3f}"
        )


def _thread_cpu() -> dict[str, float]:
    """Seconds on a CPU so far of each of this process's threads (by name; Linux
    ``/proc/self/task/TID/schedstat``)."""
    import threading

    out: dict[str, float] = {}
    for t in threading.enumerate():
        try:
            with open(f"/proc/self/task/{t.native_id}/schedstat") as f:
                out[t.name] = out.get(t.name, 0.0) + int(f.read().split()[0]) * 1e-9
        except OSError:
            continue
    return out


def _report(
    workers: int,
    drv: list[tuple[str, float, float, float, str]],
    procs: dict[int, list[tuple[str, float, float, int, str, float]]],
) -> dict[str, Any]:
    """Print one run's timeline (milliseconds from the run's start) and return its figures."""
    ms = 1e3
    t0, t1 = drv[0][1], drv[-1][1]
    wall = t1 - t0
    drv_cpu = drv[-1][2] - drv[0][2]
    print(
        f"--- {workers} worker(s): wall {wall * ms:.1f} ms; driver CPU {drv_cpu * ms:.1f} ms "
        f"(main thread {(drv[-1][3] - drv[0][3]) * ms:.1f})"
    )
    spawns = [s for s in drv if s[0].startswith("spawn")]
    trips = [(a[1] - t0, b[1] - t0) for a, b in zip(spawns[::2], spawns[1::2], strict=True)]
    print("  spawn round trips: " + ", ".join(f"{a * ms:.1f}..{b * ms:.1f}" for a, b in trips))
    rows = [s[1] - t0 for s in drv if s[0] == "row"]
    print(f"  rows in: first {rows[0] * ms:.1f}, last {rows[-1] * ms:.1f}")
    print(
        "  per worker, ms: wall / CPU / run-queue wait / blocked (wall - CPU - wait) in its phases:"
        " start (fork to first point), between chunks, in points; then its end idle and faults"
    )
    width = 96
    figs: dict[str, Any] = {"workers": workers, "wall_ms": wall * ms, "driver_cpu_ms": drv_cpu * ms}
    per: list[dict[str, Any]] = []

    def span(a: tuple[Any, ...], b: tuple[Any, ...]) -> list[float]:
        w, c, q = b[1] - a[1], b[2] - a[2], b[5] - a[5]
        return [w * ms, c * ms, q * ms, (w - c - q) * ms]

    def total(spans: list[list[float]]) -> list[float]:
        return [sum(x[k] for x in spans) for k in range(4)]

    def fmt(v: list[float]) -> str:
        return "/".join(f"{x:.1f}" for x in v)

    for pid, st in sorted(procs.items(), key=lambda kv: kv[1][0][1]):
        fork = next((x for x in st if x[0] == "fork"), st[0])
        begins = [x for x in st if x[0] == "point+"]
        ends = [x for x in st if x[0] == "point-"]
        pts = list(zip(begins, ends, strict=True))
        cbeg = [x for x in st if x[0] == "chunk+"]
        cend = [x for x in st if x[0] == "chunk-"]
        start = span(fork, begins[0])
        between = total([span(a, b) for a, b in zip(cend[:-1], cbeg[1:], strict=True)])
        inside = total([span(a, b) for a, b in pts])
        cpu_pts = [e[2] - b[2] for b, e in pts]
        rest = sorted(cpu_pts[1:]) or cpu_pts
        rec = {
            "fork_at": (fork[1] - t0) * ms,
            "start": start,
            "between_chunks": between,
            "points": inside,
            "end_idle": (t1 - cend[-1][1]) * ms,
            "first_point_cpu": cpu_pts[0] * ms,
            "point_cpu_median": rest[len(rest) // 2] * ms,
            "cpu": st[-1][2] * ms,
            "faults_start": begins[0][3],
            "faults_first_point": ends[0][3] - begins[0][3],
        }
        per.append(rec)
        print(
            f"  pid {pid}: forked at {rec['fork_at']:.1f}; start {fmt(start)}; between "
            f"{len(cend) - 1} chunks {fmt(between)}; {len(pts)} points {fmt(inside)}; end idle "
            f"{rec['end_idle']:.1f}; first point CPU {rec['first_point_cpu']:.1f} (median "
            f"{rec['point_cpu_median']:.1f}); faults {rec['faults_start']} + "
            f"{rec['faults_first_point']}"
        )
        line = [" "] * width
        for b, e in pts:
            a = int((b[1] - t0) / wall * width)
            z = max(a + 1, int((e[1] - t0) / wall * width))
            for k in range(max(a, 0), min(z, width)):
                line[k] = "#"
        print("   |" + "".join(line) + "|")
    figs["workers_figs"] = per
    return figs


if __name__ == "__main__":
    main()
