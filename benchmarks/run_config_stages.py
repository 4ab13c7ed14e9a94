"""Where ``run_config``'s time goes, per family: the engine (``Simulator.run``) and each part
around it (the requests, the power peak, the summary, the records frame, the rest), fastest of
``REPS`` warm runs, process CPU milliseconds; and the page faults of one run (issue 25, seventh
round). Run it against two trees to compare:

    PYTHONPATH=A/src python benchmarks/run_config_stages.py FCFS,HPF,PREMA 5000 7
    PYTHONPATH=B/src python benchmarks/run_config_stages.py FCFS,HPF,PREMA 5000 7

Prints one JSON object per family.
"""

from __future__ import annotations

import json
import resource
import sys
import time
from collections.abc import Callable
from typing import Any

import npusched.experiments.runner as runner
from npusched.bench.families import family_configs
from npusched.experiments.config import parse_config
from npusched.sim.engine import SimResult, Simulator

_SPENT: dict[str, float] = {}


def _timed(name: str, f: Callable[..., Any]) -> Callable[..., Any]:
    def g(*a: Any, **k: Any) -> Any:
        c = time.process_time()
        try:
            return f(*a, **k)
        finally:
            _SPENT[name] = _SPENT.get(name, 0.0) + time.process_time() - c

    return g


def main(fams: list[str], n: int, reps: int) -> None:
    runner.build_requests = _timed("requests", runner.build_requests)  # type: ignore[assignment]
    runner.power_summary = _timed("power", runner.power_summary)  # type: ignore[assignment]
    Simulator.run = _timed("engine", Simulator.run)  # type: ignore[method-assign]
    SimResult.to_frame = _timed("records", SimResult.to_frame)  # type: ignore[method-assign]
    cfgs = family_configs(n)
    for fam in fams:
        cfg = parse_config(dict(cfgs[fam], seed=0), source=fam)
        runner.run_config(cfg)
        best: dict[str, float] = {}
        for _ in range(reps):
            _SPENT.clear()
            c = time.process_time()
            out = runner.run_config(cfg)
            row = dict(_SPENT, total=time.process_time() - c)
            row["rest"] = row["total"] - sum(_SPENT.values())
            best = row if not best or row["total"] < best["total"] else best
        f0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        runner.run_config(cfg)
        faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt - f0
        ev = out.result.events
        print(
            json.dumps(
                {
                    "family": fam,
                    "events": ev,
                    "ms": {k: round(v * 1e3, 2) for k, v in best.items()},
                    "outside_us_per_event": round((best["total"] - best["engine"]) / ev * 1e6, 2),
                    "page_faults": faults,
                }
            )
        )


if __name__ == "__main__":
    main(sys.argv[1].split(","), int(sys.argv[2]), int(sys.argv[3]))
