"""Instruction counts of one family's ``families`` config through ``run_config`` (everything
``npusched run`` does, power recorded), for an A/B of two checkouts:

    for r in 1 3; do PYTHONHASHSEED=0 PYTHONPATH=A/src valgrind --tool=cachegrind \\
        --cache-sim=no --cachegrind-out-file=/dev/null \\
        python benchmarks/ic_families.py Planaria $r; done

``FAMILY RUNS [REQUESTS]`` (``--requests`` of the bench, 5,000 by default: Planaria runs a fifth
of them). ``(I(3) - I(1)) / 2`` is a steady-state ``run_config``. Prints the family and the
run's events.
"""

from __future__ import annotations

import sys

from npusched.bench.families import family_configs
from npusched.experiments.config import parse_config
from npusched.experiments.runner import run_config

fam = sys.argv[1]
runs = int(sys.argv[2])
n = int(sys.argv[3]) if len(sys.argv) > 3 else 5000
cfg = parse_config(family_configs(n)[fam], source=fam)
ev = 0
for _ in range(runs):
    ev = run_config(cfg).result.events
print(fam, ev)
