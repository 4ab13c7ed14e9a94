"""One ``npusched bench`` scenario with every engine run on the general loop: what deleting
the column loop would cost the bench's other figures (issue 25's "one loop"):

    PYTHONPATH=SRC python benchmarks/general_scenario.py SCENARIO [REQUESTS] [general|column]

``general`` (default) runs the scenario in this process with ``Simulator.run`` taking the
general loop (``fast_path=False``, which no user path asks for), as
``benchmarks/families_general.py`` does for ``families``; ``column``: the scenario as
``npusched bench --scenario SCENARIO`` runs it, in this process too (the same peak-memory
conditions for both). Prints the scenario's entry as JSON (its ``targets`` included). For
the temporal scenario the references run as usual; its speed-ups are the general loop's.
"""

from __future__ import annotations

import json
import sys

from families_general import force_general_loop

from npusched.bench.core import run_scenario


def main() -> None:
    if len(sys.argv) < 2:
        raise SystemExit("general_scenario.py: error: SCENARIO is required")
    name = sys.argv[1]
    requests = int(sys.argv[2]) if len(sys.argv) > 2 else None
    mode = sys.argv[3] if len(sys.argv) > 3 else "general"
    if mode not in ("general", "column"):
        raise SystemExit(f"general_scenario.py: error: mode {mode!r}; allowed: general, column")
    if mode == "general":
        force_general_loop()
    out = run_scenario(name, requests=requests, isolate=False, repeat=2)
    out["mode"] = mode
    print(json.dumps(out, indent=1, default=str))


if __name__ == "__main__":
    main()
