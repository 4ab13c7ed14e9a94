"""How steady is one core's inference speed? (issue 26: the machine term of `validate`)

    PYTHONPATH=src python benchmarks/validate_cpu_speed.py [--seconds 8] [--json]

The tenants of ``examples/validate_cpu.toml`` (grouped as ``validate`` cuts them, one intra-op
thread) are timed three ways:

1. **per CPU**: the calling thread pinned to each allowed CPU in turn, ``runs`` round-robin
   inferences; the median seconds of each network on each CPU (are the vCPUs equally fast?);
2. **pinned, over time**: pinned to the CPU ``validate`` gives its worker, continuous round-robin
   inference for ``--seconds``; the median of each network per half-second window, divided by
   the whole run's median (the drift of one core);
3. **unpinned, over time**: the same with the thread free to migrate.

Prints (or with ``--json`` writes) the windows' ratios and their min / max. Units: seconds,
ratios.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import time
from typing import Any

import numpy as np

from npusched.models.zoo import get_network
from npusched.realexec.affinity import pinned, plan_cpus
from npusched.realexec.groups import build_grouped, run_groups

TENANTS = (("squeezenet-1.1", 128), ("mobilenet-v2", 128), ("resnet-18", 96))


def _series(models: dict[str, Any], sessions: dict[str, Any], seconds: float) -> dict[str, Any]:
    xs = {n: m.sample_input() for n, m in models.items()}
    rows: list[tuple[float, str, float]] = []
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        for n, m in models.items():
            s = time.perf_counter()
            run_groups(sessions[n], m, xs[n])
            rows.append((s - t0, n, time.perf_counter() - s))
    out: dict[str, Any] = {}
    for n in models:
        t = np.array([r[0] for r in rows if r[1] == n])
        d = np.array([r[2] for r in rows if r[1] == n])
        med = float(np.median(d))
        win = [
            float(np.median(d[(t >= a) & (t < a + 0.5)]) / med)
            for a in np.arange(0.0, seconds, 0.5)
            if ((t >= a) & (t < a + 0.5)).any()
        ]
        out[n] = {"median_s": med, "window_ratio": win, "min": min(win), "max": max(win)}
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=8.0)
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--json", default="")
    a = ap.parse_args()
    models = {n: build_grouped(n, get_network(n), n_groups=4, input_size=s) for n, s in TENANTS}
    sessions = {n: m.sessions(threads=1) for n, m in models.items()}
    xs = {n: m.sample_input() for n, m in models.items()}
    for n, m in models.items():
        for _ in range(3):
            run_groups(sessions[n], m, xs[n])
    gc.disable()
    res: dict[str, Any] = {"cpus": {}}
    for cpu in sorted(os.sched_getaffinity(0)):
        with pinned({cpu}):
            ts: dict[str, list[float]] = {n: [] for n in models}
            for _ in range(a.runs):
                for n, m in models.items():
                    s = time.perf_counter()
                    run_groups(sessions[n], m, xs[n])
                    ts[n].append(time.perf_counter() - s)
        res["cpus"][cpu] = {n: float(np.median(v)) for n, v in ts.items()}
    plan = plan_cpus(1)
    with pinned(None if plan is None else plan.worker):
        res["pinned"] = _series(models, sessions, a.seconds)
    res["unpinned"] = _series(models, sessions, a.seconds)
    for n in models:
        per = np.array([v[n] for v in res["cpus"].values()])
        print(
            f"{n}: per-CPU median {per.min() * 1e3:.2f}-{per.max() * 1e3:.2f} ms; "
            f"pinned windows {res['pinned'][n]['min']:.3f}-{res['pinned'][n]['max']:.3f}; "
            f"unpinned windows {res['unpinned'][n]['min']:.3f}-{res['unpinned'][n]['max']:.3f}"
        )
    if a.json:
        with open(a.json, "w", encoding="utf-8") as f:
            json.dump(res, f, indent=1)


if __name__ == "__main__":
    main()
