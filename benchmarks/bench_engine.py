"""Engine speed against a per-layer SimPy model of the same system (PREMA-style workload).

Run ``python benchmarks/bench_engine.py`` (100,000 requests with the SimPy reference, about a
minute), ``--requests 1000000 --no-reference`` for the memory check, ``--json`` for
machine-readable output. Same as ``npusched bench``; see :mod:`npusched.bench` for the
workload and the reference model.
"""

from __future__ import annotations

import argparse
import json
import sys

from npusched.bench import run_bench


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--requests", type=int, default=100_000, help="requests in the workload")
    ap.add_argument("--seed", type=int, default=0, help="workload seed")
    ap.add_argument("--json", action="store_true", help="print JSON")
    ap.add_argument("--no-reference", action="store_true", help="skip the SimPy reference")
    args = ap.parse_args(argv)
    res = run_bench(
        n_requests=args.requests,
        seed=args.seed,
        reference=not args.no_reference,
        progress=not args.json,
    )
    if args.json:
        print(json.dumps(res, indent=2, sort_keys=True))
    else:
        width = max(map(len, res))
        for k, v in res.items():
            shown = f"{v:,.6g}" if isinstance(v, float) else str(v)
            print(f"{k:<{width}}  {shown}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
