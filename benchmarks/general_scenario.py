"""One ``npusched bench`` scenario run in this process, printed as JSON (its ``targets``
included); the twenty-fourth to twenty-seventh rounds used it to run a scenario with every
engine run forced onto the general loop, against the column loop (deleted in the twenty-eighth
round: there is one loop):

    PYTHONPATH=SRC python benchmarks/general_scenario.py SCENARIO [REQUESTS] [general]

The trailing ``general`` (the old mode) is accepted and changes nothing; ``column`` is refused.
"""

from __future__ import annotations

import json
import sys

from families_general import loop_argument

from npusched.bench.core import run_scenario


def main() -> None:
    if len(sys.argv) < 2:
        raise SystemExit("general_scenario.py: error: SCENARIO is required")
    name = sys.argv[1]
    requests = int(sys.argv[2]) if len(sys.argv) > 2 else None
    loop_argument(sys.argv[3:], "general_scenario.py")
    out = run_scenario(name, requests=requests, isolate=False, repeat=2)
    print(json.dumps(out, indent=1, default=str))


if __name__ == "__main__":
    main()
