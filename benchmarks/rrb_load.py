"""P-RRB's cost per request and per event at load 0.9 and 1.5 (issue 25 item 3): the engine
alone, the bench workload, tile preemption, checkpoint cost, PREMA's predictor, power recorded;
fastest of 3, process CPU time.

Usage: ``PYTHONPATH=src python benchmarks/rrb_load.py [REQUESTS] [SKIP_PERIODS 0|1]``
(default 1,500 and 1).
"""

from __future__ import annotations

import sys
import time

from npusched.bench import bench_workload, synthetic_profiles
from npusched.policies.base import POLICIES
from npusched.policies.temporal.predictor import make_estimator
from npusched.sim.engine import Simulator


def main(n: int, skip: bool) -> None:
    profiles = synthetic_profiles(random_state=3)
    for load in (0.9, 1.5):
        reqs = bench_workload(n, profiles, load=load, random_state=5)
        best = float("inf")
        events = 0
        for _ in range(3):
            sim = Simulator(
                profiles,
                POLICIES.create("P-RRB", mechanism="checkpoint"),
                preemption_point="tile",
                checkpoint_cost=True,
                estimator=make_estimator("prema"),
                record_power=True,
                skip_periods=skip,
            )
            t = time.process_time()
            res = sim.run(reqs)
            best = min(best, time.process_time() - t)
            events = res.events
        print(
            f"load {load}: {best / n * 1e3:.3f} ms/request, {events / n:.1f} events/request, "
            f"{best / events * 1e6:.2f} us/event"
        )


if __name__ == "__main__":
    main(
        int(sys.argv[1]) if len(sys.argv) > 1 else 1500,
        (sys.argv[2] != "0") if len(sys.argv) > 2 else True,
    )
