"""Instruction counts of one ``families`` config through ``run_config`` (power recorded), for
an A/B of two checkouts that wall clock on the shared machine cannot resolve:

    for r in 1 3; do OPENBLAS_NUM_THREADS=1 PYTHONHASHSEED=0 PYTHONPATH=A/src valgrind --tool=cachegrind \\
        --cache-sim=no --cachegrind-out-file=/dev/null \\
        python benchmarks/ic_families.py FluidB $r; done

``OPENBLAS_NUM_THREADS=1``: idle BLAS threads spin under valgrind and moved one tree's count
by up to 10% between runs (twenty-first round).

``FAMILY RUNS [REQUESTS] [general]``: builds the family's config of ``npusched bench --scenario
families`` (``family_configs``, 5,000 requests by default: the machine families run their
share of it) and runs it ``RUNS`` times through ``run_config``. ``(I(3) - I(1)) / 2`` is one
warm run. Prints the family and the run's events.

``general`` (``IC_GENERAL=1 benchmarks/ic_fam.sh``) is accepted and changes nothing: until the
twenty-eighth round it forced every run onto the general loop, to measure what the general
loop cost on the families the column loop ran (docs/engine.md, "What one loop would cost today
(twenty-fourth round)"); the column loop is deleted, every run takes the one loop.
"""

from __future__ import annotations

import sys

from npusched.bench.families import family_configs
from npusched.experiments.config import parse_config
from npusched.experiments.runner import run_config

fam = sys.argv[1]
runs = int(sys.argv[2])
n = int(sys.argv[3]) if len(sys.argv) > 3 else 5000
if len(sys.argv) > 4 and sys.argv[4] != "general":
    raise SystemExit(f"ic_families.py: error: {sys.argv[4]!r}; allowed: general (no effect)")

cfg = parse_config(dict(family_configs(n)[fam], seed=0), source=f"families:{fam}")
events = 0
for _ in range(runs):
    events = run_config(cfg).result.events
print(fam, events)
