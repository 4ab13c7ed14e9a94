"""Where ``run_config``'s time goes outside the loop (issue 25 item 2): each family's
representative config (``npusched.bench.family_configs``) run through ``run_config`` with the
parts it calls wrapped and timed (process CPU milliseconds, the fastest of 3 warm runs):
``build_requests``, ``with_exits``, ``compile_profiles``, ``Simulator.run`` (the engine),
``SimResult.to_frame``, ``summarize`` and ``power_summary`` (the power timeline's peak); ``rest``
is what none of them covers.

Usage: ``PYTHONPATH=src python benchmarks/outside_loop_parts.py [FAMILIES] [REQUESTS]``
(FAMILIES comma-separated, default all; REQUESTS default 5,000).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import Any

import npusched.experiments.runner as runner
import npusched.metrics as metrics
from npusched.bench.families import family_configs
from npusched.experiments.config import parse_config
from npusched.sim.engine import SimResult, Simulator

_spent: dict[str, float] = {}


def _wrap(owner: Any, name: str, label: str | None = None) -> None:
    """Replace ``owner.name`` by a wrapper adding its CPU seconds to ``_spent[label]``."""
    f: Callable[..., Any] = getattr(owner, name)
    key = label or name

    def timed(*a: Any, **k: Any) -> Any:
        c = time.process_time()
        try:
            return f(*a, **k)
        finally:
            _spent[key] = _spent.get(key, 0.0) + time.process_time() - c

    setattr(owner, name, timed)


def main(argv: list[str]) -> None:
    for name in ("build_requests", "compile_profiles", "power_summary", "with_exits"):
        _wrap(runner, name)
    _wrap(metrics, "summarize")
    _wrap(Simulator, "run", "sim.run")
    _wrap(SimResult, "to_frame")
    n = int(argv[2]) if len(argv) > 2 else 5_000
    cfgs = family_configs(n)
    fams = argv[1].split(",") if len(argv) > 1 else list(cfgs)
    for fam in fams:
        cfg = parse_config(dict(cfgs[fam], seed=0), source=fam)
        runner.run_config(cfg)  # cold: profiles compiled, plans built
        best: tuple[float, dict[str, float]] | None = None
        for _ in range(3):
            _spent.clear()
            c = time.process_time()
            out = runner.run_config(cfg)
            total = time.process_time() - c
            if best is None or total < best[0]:
                best = (total, dict(_spent))
        assert best is not None
        total, parts = best
        events = out.result.events
        rest = total - sum(parts.values())
        cells = " ".join(f"{k}={v * 1e3:.1f}" for k, v in parts.items())
        print(
            f"{fam:9s} total {total * 1e3:6.1f} ms ({total / events * 1e6:5.1f} us/event) "
            f"{cells} rest={rest * 1e3:.1f}"
        )


if __name__ == "__main__":
    main(sys.argv)
