"""Instruction counts of ``peak_piece_power_w`` on one ``families`` run's power columns (what
the summary's ``peak_power_w`` costs), for an A/B of two checkouts:

    for r in 1 3; do PYTHONHASHSEED=0 PYTHONPATH=A/src valgrind --tool=cachegrind \\
        --cache-sim=no --cachegrind-out-file=/dev/null python benchmarks/ic_peak.py HPF $r; done

``FAMILY RUNS``: runs the family's config (5,000 requests) once through ``run_config``, then
the peak ``RUNS`` times. ``(I(3) - I(1)) / 2`` is one peak. Prints the family, the run's
events, its pieces and the peak (hex, to compare the bits).
"""

from __future__ import annotations

import sys

import npusched.experiments.runner as runner
from npusched.bench.families import family_configs
from npusched.experiments.config import parse_config
from npusched.metrics.power import peak_piece_power_w

fam = sys.argv[1]
reps = int(sys.argv[2])
cfg = parse_config(dict(family_configs(5000)[fam], seed=0), source=fam)
out = runner.run_config(cfg)
pc = out.result.power_columns
assert pc is not None
peak = 0.0
for _ in range(reps):
    peak = peak_piece_power_w(pc)
print(fam, out.result.events, len(pc), peak.hex())
