"""Where the engine's time goes: cProfile of one bench scenario's engine run, per event.

Run ``python benchmarks/profile_engine.py`` (``temporal``, 100,000 requests) or
``--scenario prema --requests 5000``; ``--top N`` rows, ``--sort tottime|cumtime``. Prints the engine's events and CPU time without and with the profiler, then the top
functions with calls per event and microseconds per event (profiled time, scaled to the
unprofiled run so the column adds up to the real per-event cost). The workload is built outside the profile.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import sys
import time


def main(argv: list[str] | None = None) -> int:
    from npusched.bench import SCENARIOS, engine_setup

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scenario", default="temporal", help=", ".join(SCENARIOS.names()))
    ap.add_argument("--requests", type=int, default=None, help="default: the scenario's")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--top", type=int, default=25)
    ap.add_argument("--sort", default="tottime", choices=("tottime", "cumtime"))
    args = ap.parse_args(argv)
    n = args.requests or SCENARIOS.get(args.scenario)().default_requests

    sim, reqs = engine_setup(args.scenario, requests=n, seed=args.seed)
    c = time.process_time()
    res = sim.run(reqs)
    plain_s = time.process_time() - c
    events = res.events
    prof = cProfile.Profile()
    c = time.process_time()
    prof.enable()
    sim.run(reqs)
    prof.disable()
    prof_s = time.process_time() - c
    print(
        f"{args.scenario}: {n:,} requests, {events:,} events; engine {plain_s:.3f} s CPU "
        f"({1e6 * plain_s / events:.2f} us/event, {events / plain_s:,.0f} events/s); "
        f"profiled {prof_s:.3f} s"
    )
    st = pstats.Stats(prof)
    rows = []
    total_tt = 0.0
    for (file, line, func), (_cc, nc, tt, ct, _callers) in st.stats.items():  # type: ignore[attr-defined]
        total_tt += tt
        rows.append((tt, ct, nc, f"{file.rsplit('/', 1)[-1]}:{line}({func})"))
    key = 0 if args.sort == "tottime" else 1
    rows.sort(key=lambda r: r[key], reverse=True)
    scale = plain_s / total_tt if total_tt > 0 else 0.0
    print(f"{'us/event':>9} {'cum us/ev':>9} {'calls/ev':>8} {'share':>6}  function")
    for tt, ct, nc, name in rows[: args.top]:
        print(
            f"{1e6 * tt * scale / events:9.3f} {1e6 * ct * scale / events:9.3f} "
            f"{nc / events:8.2f} {tt / total_tt:6.1%}  {name}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
