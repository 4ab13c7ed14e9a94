"""The engine's token rule with the policy's token table against the scan over job views
(issue 25 item 1, ninth round; until the twenty-eighth round with ``fast_path=False``, forcing
the general loop): P-PREMA and P-TOKEN at loads 0.9 and 1.5 on the bench workload (``engine_ab.py``'s engine case), process CPU, best of ``REPEAT``.

    PYTHONPATH=src python benchmarks/token_table_general.py [REQUESTS] [REPEAT]

Prints microseconds per event for ``level_table = True`` (the default) and ``False`` (the scan,
O(queue) per tick); both give the same result to the bit (``tests/test_token_fast_path.py``).
"""

from __future__ import annotations

import gc
import sys
import time

from engine_ab import KW  # the same engine case (the script beside this one)

from npusched.bench import bench_workload, synthetic_profiles
from npusched.policies.base import POLICIES
from npusched.policies.temporal.predictor import make_estimator
from npusched.sim.engine import Simulator


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 4000
    repeat = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    profiles = synthetic_profiles(random_state=3)
    for load in (0.9, 1.5):
        reqs = bench_workload(n, profiles, random_state=5, load=load)
        for name in ("P-PREMA", "P-TOKEN"):
            for table in (True, False):
                best = float("inf")
                events = 0
                for _ in range(repeat):
                    pol = POLICIES.create(name, **KW.get(name, {"mechanism": "checkpoint"}))
                    pol.level_table = table  # type: ignore[attr-defined]
                    sim = Simulator(
                        profiles,
                        pol,
                        preemption_point="tile",
                        checkpoint_cost=True,
                        estimator=make_estimator("prema"),
                        record_power=True,
                    )
                    gc.collect()
                    t = time.process_time()
                    events = sim.run(reqs).events
                    best = min(best, time.process_time() - t)
                print(
                    f"load {load} {name} {'table' if table else 'scan '}: "
                    f"{best / events * 1e6:.2f} us/event ({events} events)"
                )


if __name__ == "__main__":
    main()
