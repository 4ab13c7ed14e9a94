"""Sweep throughput: points per second for 1, 2 and N workers (scaling efficiency).

Runs the packaged PREMA-style experiment (``npusched/data/experiments/prema_rates.toml``: three
temporal policies on the PREMA NPU under Poisson arrivals of PREMA's DNN mix) with enough seeds
for ``--points`` points, each time into a fresh directory, on:

* ``inprocess`` (the reference: one worker, no inter-process traffic);
* ``process`` with 1, 2 and N (``os.cpu_count()``, or ``--max-workers``) worker processes;
* optionally (``--dask``) a local Dask cluster with the same worker counts.

Reported per run: wall seconds (including worker start-up and writing every point file and the
consolidated table), points/s, the speed-up ``rate(n) / rate(1 worker)`` and the scaling
efficiency ``rate(n) / (n * rate(1 worker))`` of the same backend, the efficiency against the
in-process reference ``rate(n) / (n * rate(inprocess))`` (which also charges the pool's
overhead), the CPU seconds the run used (this process and the pool's workers) and the cores it
had on average (``cpu_s / wall_s``: 2.0 for two busy workers that never wait for a core),
points per CPU second and its ratio to the in-process loop's (the pool's own cost per point:
start-up, pickling, the driver; unlike the wall-clock figures it does not depend on how many
cores other work leaves the workers), and the 1-minute load average before and after the run (other work on the machine
takes cores from the workers: read the efficiency with it). ``--repeat R`` runs the whole series
R times and ends with the range (min-max) of each figure per backend and worker count.
Run ``python benchmarks/bench_sweep.py [--points 200] [--repeat 3] [--dask] [--json]``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any


def bench_sweep(
    points: int = 200,
    n_requests: int = 30,
    max_workers: int | None = None,
    dask: bool = False,
) -> list[dict[str, Any]]:
    """Time the sweep on each backend and worker count (see the module docstring)."""
    from importlib.resources import files

    from npusched.experiments.store import run_sweep
    from npusched.experiments.sweep import load_experiment

    text = (files("npusched") / "data" / "experiments" / "prema_rates.toml").read_text()
    combos = 12  # 4 rates x 3 policies
    seeds = -(-points // combos)
    text = text.replace("count = 5", f"count = {seeds}").replace(
        "n_requests = 100", f"n_requests = {n_requests}"
    )
    n_max = max_workers or os.cpu_count() or 1
    counts = sorted({1, 2, n_max})
    runs: list[tuple[str, int]] = [("inprocess", 1)]
    runs += [("process", n) for n in counts]
    if dask:
        runs += [("dask", n) for n in counts]
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as tmp:
        exp_path = Path(tmp) / "bench.toml"
        exp_path.write_text(text)
        exp = load_experiment(exp_path)
        base: dict[str, float] = {}
        base_cpu: dict[str, float] = {}
        for backend, n in runs:
            load_before = os.getloadavg()[0]
            cpu0 = _cpu_s()
            t0 = time.perf_counter()
            res = run_sweep(
                exp,
                Path(tmp) / f"{backend}-{n}",
                backend=backend,
                workers=n,
                max_points=points,
                progress=False,
            )
            wall = time.perf_counter() - t0
            cpu = _cpu_s() - cpu0
            load_after = os.getloadavg()[0]
            rate = res.ran / wall
            base.setdefault(backend, rate)
            rows.append(
                {
                    "backend": backend,
                    "workers": n,
                    "points": res.ran,
                    "wall_s": round(wall, 2),
                    "points_per_s": round(rate, 2),
                    "speedup": round(rate / base[backend], 2),
                    "efficiency": round(rate / (n * base[backend]), 2),
                    "efficiency_vs_inprocess": round(rate / (n * base["inprocess"]), 2),
                    "cpu_s": round(cpu, 2),
                    "cores_used": round(cpu / wall, 2),
                    "points_per_cpu_s": round(res.ran / cpu, 2),
                    "cpu_efficiency_vs_inprocess": round(
                        (res.ran / cpu) / base_cpu.setdefault("inprocess", res.ran / cpu), 2
                    ),
                    "load_before": round(load_before, 2),
                    "load_after": round(load_after, 2),
                }
            )
    return rows


def _cpu_s() -> float:
    """CPU seconds of this process and its finished, waited-for children (the pool's workers
    once it has shut down; a Dask cluster's processes are not counted)."""
    import resource

    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def ranges(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per (backend, workers): ``"min-max"`` of points/s, speed-up, efficiencies and load."""
    keys = (
        "points_per_s",
        "speedup",
        "efficiency",
        "efficiency_vs_inprocess",
        "cores_used",
        "points_per_cpu_s",
        "cpu_efficiency_vs_inprocess",
        "load_before",
    )
    groups: dict[tuple[str, int], list[dict[str, Any]]] = {}
    for r in rows:
        groups.setdefault((r["backend"], r["workers"]), []).append(r)
    out = []
    for (backend, n), rs in groups.items():
        row: dict[str, Any] = {"backend": backend, "workers": n, "runs": len(rs)}
        for k in keys:
            lo, hi = min(r[k] for r in rs), max(r[k] for r in rs)
            row[k] = f"{lo:g}" if lo == hi else f"{lo:g}-{hi:g}"
        out.append(row)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--points", type=int, default=200, help="points per run")
    ap.add_argument("--requests", type=int, default=30, help="requests per point")
    ap.add_argument("--max-workers", type=int, default=None, help="N (default: all cores)")
    ap.add_argument("--dask", action="store_true", help="also time a local Dask cluster")
    ap.add_argument("--repeat", type=int, default=1, help="run the series this many times")
    ap.add_argument("--json", action="store_true", help="print JSON")
    args = ap.parse_args(argv)
    header = {
        "cpu_count": os.cpu_count(),
        "load_average_1_5_15m": [round(x, 2) for x in os.getloadavg()],
    }
    rows: list[dict[str, Any]] = []
    for i in range(max(1, args.repeat)):
        for r in bench_sweep(args.points, args.requests, args.max_workers, args.dask):
            rows.append({"repeat": i, **r})
            if not args.json:
                if len(rows) == 1:
                    print(f"# {header}")
                    print(" | ".join(rows[0]))
                print(" | ".join(str(v) for v in rows[-1].values()), flush=True)
    summary = ranges(rows)
    if args.json:
        print(json.dumps({**header, "runs": rows, "ranges": summary}, indent=2))
    else:
        print(f"# ranges over {max(1, args.repeat)} series; load average now "
              f"{[round(x, 2) for x in os.getloadavg()]}")
        print(" | ".join(summary[0]))
        for r in summary:
            print(" | ".join(str(v) for v in r.values()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
