"""Engine-only per-event cost of the declared-order policies, for an A/B of two checkouts
alternated: ``PYTHONPATH=A/src python benchmarks/engine_ab.py 4000``, then B.

4,000 requests (argument 1) of the bench workload at load 0.9 (or argument 2), tile preemption,
checkpoint cost, PREMA's predictor, power recorded; fastest of 3, process CPU time; prints
microseconds per event per policy.
"""

from __future__ import annotations

import sys
import time

from npusched.bench import bench_workload, synthetic_profiles
from npusched.policies.base import POLICIES
from npusched.policies.temporal.predictor import make_estimator
from npusched.sim.engine import Simulator

KW = {"NP-FCFS": {}, "P-PREMA": {"mechanism": "dynamic"}}


def simulator(profiles: object, name: str) -> Simulator:
    """The engine case both A/B scripts run: ``name`` with tile preemption, checkpoint cost,
    PREMA's predictor and power recorded (PREMA preempts by Algorithm 3, the others by
    CHECKPOINT)."""
    return Simulator(
        profiles,  # type: ignore[arg-type]
        POLICIES.create(name, **KW.get(name, {"mechanism": "checkpoint"})),
        preemption_point="tile",
        checkpoint_cost=True,
        estimator=make_estimator("prema"),
        record_power=True,
    )


def main() -> None:
    n = int(sys.argv[1])
    load = float(sys.argv[2]) if len(sys.argv) > 2 else None
    profiles = synthetic_profiles(random_state=3)
    reqs = (
        bench_workload(n, profiles, random_state=5)
        if load is None
        else bench_workload(n, profiles, random_state=5, load=load)
    )
    out = []
    for name in ["NP-FCFS", "P-HPF", "P-SJF", "P-TOKEN", "P-PREMA"]:
        best = 1e9
        for _ in range(3):
            sim = simulator(profiles, name)
            t = time.process_time()
            res = sim.run(reqs)
            best = min(best, time.process_time() - t)
        out.append(f"{name}={best / res.events * 1e6:.2f}")
    print(" ".join(out))


if __name__ == "__main__":
    main()
