"""Instruction counts of ``Simulator.run`` alone on a ``families`` config, the engine part of
``benchmarks/ic_run_config.py`` (issue 25, tenth round): ``run_config`` runs once (the
workload, profiles and simulator as it builds them), then ``Simulator.run`` on the same
workload ``RUNS - 1`` more times. Under cachegrind, ``(I(3) - I(1)) / 2`` is one warm engine
run (set-up and result included, as the ``families`` bench's ``engine_us_per_event``); one
warm ``run_config`` (``ic_run_config.py``) less it is what ``run_config`` does around it:

    for r in 1 3; do OPENBLAS_NUM_THREADS=1 PYTHONHASHSEED=0 PYTHONPATH=src valgrind --tool=cachegrind \\
        --cache-sim=no --cachegrind-out-file=/dev/null \\
        python benchmarks/ic_engine_only.py FCFS $r 5000; done
"""

from __future__ import annotations

import sys
from typing import Any

from npusched.bench.families import family_configs
from npusched.experiments.config import parse_config
from npusched.experiments.runner import run_config
from npusched.sim.common import collector_paused
from npusched.sim.engine import Simulator

fam = sys.argv[1]
runs = int(sys.argv[2])
n = int(sys.argv[3]) if len(sys.argv) > 3 else 5000
cfg = parse_config(dict(family_configs(n)[fam], seed=0), source=fam)
got: dict[str, Any] = {}
plain = Simulator.run


def spy(self: Simulator, requests: Any, **k: Any) -> Any:
    got.update(sim=self, requests=requests, k=k)
    return plain(self, requests, **k)


Simulator.run = spy  # type: ignore[method-assign]
events = run_config(cfg).result.events
Simulator.run = plain  # type: ignore[method-assign]
with collector_paused():  # as run_config holds it
    for _ in range(runs - 1):
        events = got["sim"].run(got["requests"], **got["k"]).events
print(fam, events)
