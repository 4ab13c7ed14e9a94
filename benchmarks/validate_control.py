"""Control experiment for ``npusched validate``: the same LoadGen traffic, registry policies and
real executor, with every group's compute replaced by a sleep of its calibrated seconds.

A sleeping group needs no CPU, so other processes on the machine cannot stretch it; what is left
between measurement and prediction is the scheduling model itself (queueing, preemption points,
checkpoint copies) and the executor's dispatch (Python, thread wake-ups). Run:

    python benchmarks/validate_control.py examples/validate_cpu.toml --quick
"""

from __future__ import annotations

import argparse
import json
import time
from typing import Any

import numpy as np

from npusched.realexec.validate import build, load_config, run_point


class SleepSession:
    """Returns one real run's outputs of a group after sleeping its calibrated seconds."""

    def __init__(self, sess: Any, group: Any, seconds: float, feed: dict[str, Any]) -> None:
        self.outputs = dict(zip(group.outputs, sess.run(list(group.outputs), feed), strict=True))
        self.seconds = seconds

    def run(self, outputs: list[str], feed: dict[str, Any]) -> list[Any]:
        end = time.perf_counter() + self.seconds
        time.sleep(max(self.seconds - 0.0005, 0.0))
        while time.perf_counter() < end:  # the last half millisecond spins (sleep overshoots)
            pass
        return [self.outputs[t] for t in outputs]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("config")
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    cfg = load_config(args.config, quick=args.quick)
    setup = build(cfg)
    for name, model in setup.models.items():
        live: dict[str, Any] = {"input": model.sample_input()}
        fakes = []
        for sess, g, sec in zip(
            setup.sessions[name], model.groups, setup.calibration.latency_s[name][1], strict=True
        ):
            feed = {t: live[t] for t in g.inputs}
            fake = SleepSession(sess, g, sec, feed)
            live.update(fake.outputs)
            fakes.append(fake)
        setup.sessions[name] = fakes
    rows = []
    for load in cfg.loads:
        for pol in cfg.policies:
            p = run_point(setup, cfg, pol, load, out=None)
            rows.append(
                {
                    "policy": pol,
                    "load": load,
                    "antt_err_pct": round(p["metric_error_pct"]["antt"], 1),
                    "p99_err_pct": round(p["metric_error_pct"]["p99_s"], 1),
                    "req_err_median_pct": round(p["request_error"]["median_abs_pct"], 1),
                    "req_err_p90_pct": round(p["request_error"]["p90_abs_pct"], 1),
                    "antt_measured": round(p["measured"]["antt"], 3),
                    "antt_predicted": round(p["predicted"]["antt"], 3),
                    "dispatch_overhead_ms": round(p["terms"]["dispatch_overhead_s_mean"] * 1e3, 3),
                }
            )
            print(json.dumps(rows[-1]), flush=True)
    for load in cfg.loads:
        pts = [r for r in rows if r["load"] == load]
        order_m = np.argsort([r["antt_measured"] for r in pts]).tolist()
        order_p = np.argsort([r["antt_predicted"] for r in pts]).tolist()
        print(f"load {load}: ANTT order measured {order_m}, predicted {order_p}")


if __name__ == "__main__":
    main()
