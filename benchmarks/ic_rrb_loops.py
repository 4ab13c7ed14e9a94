"""Instruction counts of round-robin (engine only), for an A/B of two checkouts that wall clock
on the shared machine cannot resolve:

    for r in 1 3; do PYTHONHASHSEED=0 PYTHONPATH=A/src valgrind --tool=cachegrind \\
        --cache-sim=no --cachegrind-out-file=/dev/null \\
        python benchmarks/ic_rrb_loops.py P-RRB general $r 2000; done

``POLICY LOOP RUNS [REQUESTS]``: ``ic_engine_orders.py``'s engine case (the bench workload,
tile preemption, checkpoint cost, PREMA's predictor, power recorded). ``LOOP``: ``general``,
the one loop (until the twenty-eighth round ``columns`` chose the column loop, ``general``
forced the general loop; the column loop is deleted) or ``hooks``: the policy's hooks and
``select`` decide (a subclass that redefines ``select``: no declared order, so the engine keeps
no rotation of its own). ``(I(3) - I(1)) / 2`` is a steady-state run. Prints the policy, the
loop and the run's events.
"""

from __future__ import annotations

import sys
from typing import Any

from engine_ab import simulator  # the same engine case (the script beside this one)

from npusched.bench import bench_workload, synthetic_profiles

name, loop = sys.argv[1], sys.argv[2]
if loop not in ("general", "hooks"):
    raise SystemExit(
        f"ic_rrb_loops.py: error: LOOP {loop!r}; allowed: general, hooks (the column loop was "
        "deleted in the twenty-eighth round)"
    )
runs = int(sys.argv[3])
n = int(sys.argv[4]) if len(sys.argv) > 4 else 2000
profiles = synthetic_profiles(random_state=3)
reqs = bench_workload(n, profiles, random_state=5)
events = 0
for _ in range(runs):
    sim = simulator(profiles, name)
    if loop == "hooks":
        base: Any = type(sim.policy)

        class Hooked(base):  # type: ignore[misc,valid-type]
            def select(self, view: Any) -> Any:
                return super().select(view)

        sim.policy.__class__ = Hooked
    events = sim.run(reqs).events
print(name, loop, events)
