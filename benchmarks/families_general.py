"""The bench's ``families`` scenario with every run on the general loop: what one loop would
cost today, in the bench's own terms (issue 25's "one loop"):

    PYTHONPATH=SRC python benchmarks/families_general.py [general|column] [REQUESTS] [REPEAT]

``general`` (default) runs each family's representative config through ``run_config`` (power
recorded) with ``Simulator(fast_path=False)``, which ``run_config`` never asks for, so the
general loop runs the families the column loop runs on the user's path (the machine families
run the general loop either way). ``column``: the scenario as ``npusched bench --scenario
families`` runs it, for the same sitting. Prints, per family, the ratio to the bare loop (the
target's measure), the engine's part of it, µs per event and the load ratio (1.5 over 0.9,
temporal families). Wall clock: alternate the two modes in one sitting to compare them.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import npusched.sim.engine as engine
from npusched.bench.families import FAMILY_RATIO_TARGET, families_scenario


def force_general_loop() -> None:
    """Every ``Simulator.run`` in this process takes the general loop (``fast_path=False``,
    which no user path asks for); ``general_scenario.py`` uses it too."""
    plain_run = engine.Simulator.run

    def run(self: Any, *a: Any, **k: Any) -> Any:
        self.fast_path = False
        return plain_run(self, *a, **k)

    engine.Simulator.run = run  # type: ignore[method-assign]


def main() -> None:
    mode = sys.argv[1] if len(sys.argv) > 1 else "general"
    requests = int(sys.argv[2]) if len(sys.argv) > 2 else 5_000
    repeat = int(sys.argv[3]) if len(sys.argv) > 3 else 2
    if mode not in ("general", "column"):
        raise SystemExit(f"families_general.py: error: mode {mode!r}; allowed: general, column")
    if mode == "general":
        force_general_loop()
    out = families_scenario(requests=requests, seed=0, repeat=repeat)
    rows = {}
    for fam, e in out["families"].items():
        rows[fam] = {
            "ratio_to_bare_loop": round(e["ratio_to_bare_loop"], 2),
            "engine_ratio_to_bare_loop": round(e["engine_ratio_to_bare_loop"], 2),
            "us_per_event": round(e["us_per_event"], 3),
            "load_ratio": round(e["load_ratio"], 2) if "load_ratio" in e else None,
            "target_ratio": FAMILY_RATIO_TARGET[fam],
            "met": e["ratio_to_bare_loop"] <= FAMILY_RATIO_TARGET[fam],
        }
    print(json.dumps({"mode": mode, "requests": requests, "families": rows}, indent=1))


if __name__ == "__main__":
    main()
