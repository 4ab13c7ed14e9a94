"""What recording power costs per event (issue 25 item 2): each temporal family's engine run with
``record_power`` off and on, and the ``power_timeline`` that ``run_config`` builds from the pieces
for the summary's peak power. Fastest of 3, process CPU time.

Usage: ``PYTHONPATH=src python benchmarks/recording_cost.py [REQUESTS]`` (default 5,000).
"""

from __future__ import annotations

import sys
import time
from typing import Any

from npusched.bench import bench_workload, synthetic_profiles
from npusched.policies.base import POLICIES
from npusched.policies.temporal.predictor import make_estimator
from npusched.sim.engine import Simulator

CASES: list[tuple[str, dict[str, Any]]] = [
    ("NP-FCFS", {}),
    ("P-HPF", {"mechanism": "checkpoint"}),
    ("P-SJF", {"mechanism": "checkpoint"}),
    ("P-RRB", {"mechanism": "checkpoint"}),
    ("P-TOKEN", {"mechanism": "checkpoint"}),
    ("P-PREMA", {"mechanism": "dynamic"}),
]


def main(n: int) -> None:
    profiles = synthetic_profiles(random_state=3)
    reqs = bench_workload(n, profiles, random_state=5)
    print("policy    events  loop us/event off  on  (+)  power_timeline us/event")
    for name, kw in CASES:
        best: dict[bool, float] = {}
        res: Any = None
        for rec in (False, True):
            best[rec] = float("inf")
            for _ in range(3):
                sim = Simulator(
                    profiles,
                    POLICIES.create(name, **kw),
                    preemption_point="tile",
                    checkpoint_cost=True,
                    estimator=make_estimator("prema"),
                    record_power=rec,
                )
                t = time.process_time()
                res = sim.run(reqs)
                best[rec] = min(best[rec], time.process_time() - t)
        tl = float("inf")
        for _ in range(3):
            t = time.process_time()
            res.power_timeline()
            tl = min(tl, time.process_time() - t)
        ev = res.events
        off, on = best[False] / ev * 1e6, best[True] / ev * 1e6
        print(f"{name:8s} {ev:7d}  {off:6.2f} {on:6.2f} ({on - off:+5.2f})  {tl / ev * 1e6:6.2f}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 5000)
