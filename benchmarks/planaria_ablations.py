"""The measurements behind ``docs/papers/planaria.md``: one factor at a time, and quick vs full.

    python benchmarks/planaria_ablations.py ablations    # fairness / energy / SLA per factor
    python benchmarks/planaria_ablations.py full-check   # full setup on C/S and A/S

Each prints one JSON line per point (Planaria over PREMA; quick setup for the ablations: 100
requests x 4 instances, Workload-A and -C at QoS-S, the suite's seeds).
"""

from __future__ import annotations

import dataclasses
import json
import sys
from collections.abc import Callable
from typing import Any

import numpy as np

from npusched.experiments.reproduce import planaria as P
from npusched.hardware.energy import EnergyModel
from npusched.hardware.profile import compile_profile
from npusched.hardware.systolic import SystolicArray
from npusched.workloads.planaria import scenario_networks

QUICK = P.MultiTenantSetup(n_requests=100, instances=4)


def point(
    st: P.MultiTenantSetup,
    w: str,
    q: str,
    *,
    load: float | None = None,
    energy: EnergyModel | None = None,
    mono_iso: bool = False,
) -> dict[str, Any]:
    """Fig. 13-15 at the fixed rate for both systems, as ratios."""
    nets = scenario_networks("C", st.benchmarks)
    pl = P.planaria_simulate(nets, depthwise=st.depthwise, energy=energy)
    pr = P.prema_simulate(nets, depthwise=st.depthwise, energy=energy)
    if mono_iso:  # Planaria's fairness against the monolithic isolated time
        sa = SystolicArray()
        iso = {
            n: compile_profile(P.paper_network(n, st.depthwise), sa).isolated_latency(1)
            for n in nets
        }
        inner = pl

        def pl(reqs: Any) -> Any:
            df = inner(reqs)
            return df.assign(isolated_s=df["network"].map(iso).to_numpy(float))

    rate = P.reference_rate(
        w, st.load if load is None else load, benchmarks=st.benchmarks, depthwise=st.depthwise
    )
    a = P.fixed_rate_point(pl, st, w, q, rate)
    b = P.fixed_rate_point(pr, st, w, q, rate)
    return {
        "rate": round(rate, 2),
        "fairness_x": round(a["fairness"] / b["fairness"], 3),
        "energy_reduction_x": round(b["energy_j"] / a["energy_j"], 3),
        "sla": [a["sla_rate"], b["sla_rate"]],
    }


def ablations() -> None:
    base = dataclasses.replace(QUICK, load=0.25)  # the old default; each row changes one factor
    variants: dict[str, Callable[[str, str], dict[str, Any]]] = {
        "load 0.25": lambda w, q: point(base, w, q),
        "load 0.1": lambda w, q: point(base, w, q, load=0.1),
        "load 1.0": lambda w, q: point(base, w, q, load=1.0),
        "load 2.0": lambda w, q: point(base, w, q, load=2.0),
        "full-size": lambda w, q: point(dataclasses.replace(base, benchmarks="full-size"), w, q),
        "per-channel": lambda w, q: point(dataclasses.replace(base, depthwise="per-channel"), w, q),
        "mono-isolated": lambda w, q: point(base, w, q, mono_iso=True),
        "dram 12.5 pJ/bit": lambda w, q: point(
            base, w, q, energy=EnergyModel(dram_pj_per_bit=12.5)
        ),
    }
    for name, fn in variants.items():
        for w, q in (("A", "S"), ("C", "S")):
            print(json.dumps({"variant": name, "point": f"{w}/{q}", **fn(w, q)}), flush=True)


def full_check() -> None:
    st = P.MultiTenantSetup()
    nets = scenario_networks("C", st.benchmarks)
    systems = {"planaria": P.planaria_simulate(nets), "prema": P.prema_simulate(nets)}
    for w, q in (("C", "S"), ("A", "S")):
        rate = P.reference_rate(w, st.load)
        fx = {n: P.fixed_rate_point(s, st, w, q, rate) for n, s in systems.items()}
        a, b = fx["planaria"], fx["prema"]
        f = [x / y for x, y in zip(a["fairness_all"], b["fairness_all"], strict=True)]
        e = [y / x for x, y in zip(a["energy_all"], b["energy_all"], strict=True)]
        tq = {
            n: [P.throughput_qps(s, st, w, q, instance=i) for i in range(st.throughput_instances)]
            for n, s in systems.items()
        }
        r = [x / y if y else float("inf") for x, y in zip(tq["planaria"], tq["prema"], strict=True)]
        out = {
            "point": f"{w}/{q}",
            "fairness_x": a["fairness"] / b["fairness"],
            "fairness_spread": [min(f), max(f)],
            "energy_reduction_x": b["energy_j"] / a["energy_j"],
            "energy_spread": [min(e), max(e)],
            "sla": [a["sla_rate"], b["sla_rate"]],
            "throughput_x": float(np.median(tq["planaria"]) / np.median(tq["prema"])),
            "throughput_spread": [min(r), max(r)],
        }
        print(json.dumps(out), flush=True)


if __name__ == "__main__":
    {"ablations": ablations, "full-check": full_check}[sys.argv[1]]()
