"""Bytecodes per event of one ``families`` config through ``run_config`` (power recorded), per
function: a deterministic cost measure that needs no valgrind and does not move with the
machine's load (``sys.settrace`` with opcode events; about 30x slower than the run itself).

    PYTHONPATH=src python benchmarks/opcount_families.py FluidB [--requests 5000] [--top 25]

Builds the family's config of ``npusched bench --scenario families`` (``family_configs``; the
machine families run their share of ``--requests``), runs it once untraced (warm-up: plans,
tables and imports), then once traced. Prints the run's events, the bytecodes per event in
all, and the top functions by bytecodes executed in their own frames (``self``), per event.
Compare two checkouts by running it with each one's ``src`` on ``PYTHONPATH``. A bytecode is
not a fixed cost (a call into C, a NumPy operation or a dict build counts as one), so read it
beside the instruction counts (``benchmarks/ic_families.py``).
"""

from __future__ import annotations

import argparse
import collections
import sys
from types import FrameType
from typing import Any


def main(argv: list[str] | None = None) -> int:
    from npusched.bench.families import family_configs
    from npusched.experiments.config import parse_config
    from npusched.experiments.runner import run_config

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("family")
    ap.add_argument("--requests", type=int, default=5000)
    ap.add_argument("--top", type=int, default=25)
    args = ap.parse_args(argv)
    cfg = parse_config(
        dict(family_configs(args.requests)[args.family], seed=0), source=f"families:{args.family}"
    )
    run_config(cfg)
    counts: collections.Counter[tuple[str, int, str]] = collections.Counter()

    def trace(frame: FrameType, event: str, arg: Any) -> Any:
        frame.f_trace_opcodes = True
        co = frame.f_code
        key = (co.co_filename.rsplit("/", 1)[-1], co.co_firstlineno, co.co_name)

        def local(frame: FrameType, event: str, arg: Any) -> Any:
            if event == "opcode":
                counts[key] += 1
            return local

        return local

    sys.settrace(trace)
    try:
        out = run_config(cfg)
    finally:
        sys.settrace(None)
    events = out.result.events
    total = sum(counts.values())
    print(f"{args.family}: {events} events, {total} bytecodes, {total / events:.0f} per event")
    for (fname, line, name), v in counts.most_common(args.top):
        print(f"{v / events:8.1f}  {fname}:{line}({name})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
