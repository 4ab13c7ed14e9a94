"""Per-event cost of the machine families past saturation (issue 25's "no superlinear cost in
the queue length"): each family's ``families`` config through ``run_config`` (power
recorded) at 1, 2 and 4 times its rate:

    PYTHONPATH=SRC python benchmarks/machine_load.py [REQUESTS]

``REQUESTS`` (4,000 by default) as ``family_configs`` shares them. Prints per family and rate
the µs per event (fastest of three process-CPU runs, everything ``run_config`` does), the
events and the mean wait before the first start (seconds), which shows how long the queue
grew.
"""

from __future__ import annotations

import copy
import sys
import time

import numpy as np

from npusched.bench.families import family_configs
from npusched.experiments.config import parse_config
from npusched.experiments.runner import run_config


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 4_000
    base = family_configs(n)
    for fam in ("Planaria", "FluidB", "HaX-CoNN"):
        out = []
        for mult in (1.0, 2.0, 4.0):
            d = copy.deepcopy(base[fam])
            d["workload"]["rate_per_s"] *= mult
            cfg = parse_config(d, source=f"machine_load:{fam}")
            best = float("inf")
            res = None
            for _ in range(3):
                t = time.process_time()
                res = run_config(cfg).result
                best = min(best, (time.process_time() - t) / res.events)
            assert res is not None
            c = res.columns
            wait = float(np.nanmean(c["first_start_s"] - c["arrival_s"]))
            out.append(f"x{mult:g}: {best * 1e6:.2f} us/ev, {res.events} ev, wait {wait:.3g} s")
        print(fam, " | ".join(out))


if __name__ == "__main__":
    main()
