"""The bench's ``families`` scenario, printed per family in the terms of issue 25's "one loop"
(the twenty-fourth to twenty-seventh rounds ran it with every run forced onto the general loop,
against the column loop; since the twenty-eighth round there is one loop):

    PYTHONPATH=SRC python benchmarks/families_general.py [general] [REQUESTS] [REPEAT]

Runs each family's representative config through ``run_config`` (power recorded), as
``npusched bench --scenario families`` does. Prints, per family, the ratio to the bare loop (the
target's measure), the engine's part of it, µs per event and the load ratio (1.5 over 0.9,
temporal families). A leading ``general`` (the old mode) is accepted and changes nothing;
``column`` is refused: the column loop (``sim/columns.py``) is deleted.
"""

from __future__ import annotations

import json
import sys

from npusched.bench.families import FAMILY_RATIO_TARGET, families_scenario


def loop_argument(args: list[str], script: str) -> list[str]:
    """``args`` without a leading loop mode: ``general`` (the one loop) is dropped, ``column``
    refused (the column loop was deleted in the twenty-eighth round); other scripts beside this
    one use it too."""
    if args and args[0] == "general":
        return args[1:]
    if args and args[0] in ("column", "columns"):
        raise SystemExit(
            f"{script}: error: mode {args[0]!r}: the column loop was deleted (twenty-eighth "
            "round); every run takes the one loop"
        )
    return args


def main() -> None:
    args = loop_argument(sys.argv[1:], "families_general.py")
    requests = int(args[0]) if args else 5_000
    repeat = int(args[1]) if len(args) > 1 else 2
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
    print(json.dumps({"requests": requests, "families": rows}, indent=1))


if __name__ == "__main__":
    main()
