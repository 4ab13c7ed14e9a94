"""Instruction counts of the declared orders (engine only), for an A/B of two
checkouts that wall clock on the shared machine cannot resolve:

    for r in 0 1 3; do PYTHONHASHSEED=0 PYTHONPATH=A/src valgrind --tool=cachegrind \\
        --cache-sim=no --cachegrind-out-file=/dev/null \\
        python benchmarks/ic_engine_orders.py P-TOKEN $r 2000; done

``POLICY RUNS [REQUESTS]``: builds the bench workload (``engine_ab.py``'s: 2,000 requests by
default, tile preemption, checkpoint cost, PREMA's predictor, power recorded) and runs the
policy ``RUNS`` times. ``(I(1) - I(0))`` is one cold run (with its first-call costs);
``(I(3) - I(1)) / 2`` a steady-state run (each also frees the previous run's state). Prints the
policy and the run's events.
"""

from __future__ import annotations

import sys

from engine_ab import simulator  # the same engine case (the script beside this one)

from npusched.bench import bench_workload, synthetic_profiles

name = sys.argv[1]
runs = int(sys.argv[2])
n = int(sys.argv[3]) if len(sys.argv) > 3 else 2000
profiles = synthetic_profiles(random_state=3)
reqs = bench_workload(n, profiles, random_state=5)
events = 0
for _ in range(runs):
    sim = simulator(profiles, name)
    events = sim.run(reqs).events
print(name, events)
