"""Sweep throughput: points per second for 1, 2 and N workers (scaling efficiency).

Runs the packaged PREMA-style experiment (``npusched/data/experiments/prema_rates.toml``: three
temporal policies on the PREMA NPU under Poisson arrivals of PREMA's DNN mix) with enough seeds
for ``--points`` points, each time into a fresh directory, on:

* ``inprocess`` (the reference: one worker, no inter-process traffic);
* ``process`` with 1, 2 and N (``os.cpu_count()``, or ``--max-workers``) worker processes;
* optionally (``--dask``) a local Dask cluster with the same worker counts.

Reported per run: wall seconds (including worker start-up and writing every point file and the
consolidated table), points/s, and the scaling efficiency ``rate(n) / (n * rate(1 worker))`` of
the same backend. Run ``python benchmarks/bench_sweep.py [--points 200] [--dask] [--json]``.
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
        for backend, n in runs:
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
            rate = res.ran / wall
            base.setdefault(backend, rate)
            rows.append(
                {
                    "backend": backend,
                    "workers": n,
                    "points": res.ran,
                    "wall_s": round(wall, 2),
                    "points_per_s": round(rate, 2),
                    "efficiency": round(rate / (n * base[backend]), 2),
                }
            )
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--points", type=int, default=200, help="points per run")
    ap.add_argument("--requests", type=int, default=30, help="requests per point")
    ap.add_argument("--max-workers", type=int, default=None, help="N (default: all cores)")
    ap.add_argument("--dask", action="store_true", help="also time a local Dask cluster")
    ap.add_argument("--json", action="store_true", help="print JSON")
    args = ap.parse_args(argv)
    rows = bench_sweep(args.points, args.requests, args.max_workers, args.dask)
    if args.json:
        print(json.dumps(rows, indent=2))
    else:
        cols = list(rows[0])
        print(" | ".join(cols))
        for r in rows:
            print(" | ".join(str(r[c]) for c in cols))
    return 0


if __name__ == "__main__":
    sys.exit(main())
