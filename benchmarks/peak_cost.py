"""``peak_piece_power_w``'s cost per event on each family's ``run_config`` run (what the
summary's ``peak_power_w`` costs), best of 9 process-CPU runs, µs per event:

    PYTHONPATH=A/src python benchmarks/peak_cost.py FCFS,HPF,SJF
"""

from __future__ import annotations

import json
import sys
import time

import npusched.experiments.runner as runner
from npusched.bench.families import family_configs
from npusched.experiments.config import parse_config
from npusched.metrics.power import peak_piece_power_w

res: dict[str, float] = {}
for fam in sys.argv[1].split(","):
    cfg = parse_config(dict(family_configs(5000)[fam], seed=0), source=fam)
    out = runner.run_config(cfg)
    pc = out.result.power_columns
    assert pc is not None
    best = 9.0
    for _ in range(9):
        c = time.process_time()
        peak_piece_power_w(pc)
        best = min(best, time.process_time() - c)
    res[fam] = round(best / out.result.events * 1e6, 3)
print(json.dumps(res))
