"""Per-event cost of the engine's loop at load 0.9 and 1.5 (issue 25's "no superlinear cost in
the queue length"):

    PYTHONPATH=SRC python benchmarks/general_load_ratio.py [hooked|general|all] [REQUESTS]

``hooked`` (default): P-HPF, P-SJF and NP-FCFS subclasses that add an ``on_complete`` hook
(until the twenty-eighth round the column loop did not take a policy with a hook of its own).
``general``: P-PREMA, P-TOKEN, P-RRB and P-HPF as registered (until the twenty-eighth round
with ``fast_path=False``, forcing the general loop; there is one loop now). ``all``: every
registered temporal policy. The bench's synthetic profiles and
workload (``REQUESTS``, 20,000 by default), PREMA's predictor, power recorded; the fastest of
three process-CPU runs, µs per event, and the ratio of load 1.5's to load 0.9's.
"""

from __future__ import annotations

import sys
import time
from typing import Any

from npusched.bench import bench_workload, synthetic_profiles
from npusched.policies.base import POLICIES
from npusched.policies.temporal.predictor import make_estimator
from npusched.sim.engine import Simulator


def _hooked(name: str) -> Any:
    base = type(POLICIES.create(name))

    class Hooked(base):  # type: ignore[misc,valid-type]
        def on_complete(self, job: Any, now: float) -> None:
            pass

    pol = POLICIES.create(name)
    pol.__class__ = Hooked
    return pol


def main() -> None:
    mode = sys.argv[1] if len(sys.argv) > 1 else "hooked"
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 20_000
    profiles = synthetic_profiles(random_state=3)
    if mode == "hooked":
        cases = [(name, True) for name in ("P-HPF", "P-SJF", "NP-FCFS")]
    elif mode == "all":
        cases = [(name, False) for name in POLICIES.names()]
    else:
        cases = [(name, False) for name in ("P-PREMA", "P-TOKEN", "P-RRB", "P-HPF")]
    for name, hooked in cases:
        out = []
        for load in (0.9, 1.5):
            reqs = bench_workload(n, profiles, load=load, random_state=5)
            best = float("inf")
            for _ in range(3):
                pol = _hooked(name) if hooked else POLICIES.create(name)
                sim = Simulator(profiles, pol, record_power=True, estimator=make_estimator("prema"))
                t = time.process_time()
                res = sim.run(reqs)
                best = min(best, (time.process_time() - t) / res.events)
            out.append(best * 1e6)
        label = f"{name} with a hook" if hooked else name
        print(f"{label}: us/event load 0.9 {out[0]:.2f}, 1.5 {out[1]:.2f}, ratio {out[1] / out[0]:.2f}")


if __name__ == "__main__":
    main()
