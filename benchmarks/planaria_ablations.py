"""The measurements behind ``docs/papers/planaria.md``: one factor at a time, and quick vs full.

    python benchmarks/planaria_ablations.py ablations    # Fig. 13-15 ratios per factor
    python benchmarks/planaria_ablations.py fig13 [0.5,1.0]  # Fig. 13 per request, per load
    python benchmarks/planaria_ablations.py throughput [A/M,C/S] [default,no GNMT]  # Fig. 12
    python benchmarks/planaria_ablations.py isolated     # Fig. 17 energy per energy term
    python benchmarks/planaria_ablations.py terms [planaria/resnet-50,planaria/mobilenet-v1]
        # each energy term alone, per network, both systems (mJ), and the artifact's accounting
    python benchmarks/planaria_ablations.py nodes [0.5,1.0,2.0]  # Fig. 16 node counts per rate
    python benchmarks/planaria_ablations.py nodes 2,3,4 [full]  # ... and the fit's residual
    python benchmarks/planaria_ablations.py clock [700,1000]  # Fig. 12 B, C with both arrays at MHz
    python benchmarks/planaria_ablations.py compare QUICK_DIR FULL_DIR  # quick inside full?

Each prints one JSON line per point (Planaria over PREMA; the quick setup: 200 requests x 4
instances, 3 throughput instances, the suite's seeds; each variant changes one factor).
"""

from __future__ import annotations

import dataclasses
import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from npusched.experiments.reproduce import planaria as P
from npusched.experiments.studies.planaria import points as _points
from npusched.experiments.studies.planaria.points import _has_depthwise, stable_qps
from npusched.hardware.energy import ARTIFACT_SRAM_LEAK_W, EnergyModel
from npusched.hardware.profile import compile_profile
from npusched.workloads.planaria import scenario_networks
from npusched.workloads.request import Request

QUICK = P.MultiTenantSetup.of(quick=True)
Wrap = Callable[[P.Simulate], P.Simulate]


def _fill_drain(fn: Callable[[], Any]) -> Any:
    """``fn()`` with Algorithm 1's per-tile fill and drain on both arrays (PREMA's model, the
    suite's before it took the authors' compute model; ``points.FILL_DRAIN``)."""
    from npusched.hardware.profile import clear_profile_cache

    _points.FILL_DRAIN = True
    clear_profile_cache()
    try:
        return fn()
    finally:
        _points.FILL_DRAIN = False
        clear_profile_cache()


def _clock(hz: float, fn: Callable[[], Any]) -> Any:
    """``fn()`` with both arrays clocked at ``hz`` (the paper runs both at PREMA's 700 MHz and
    says its design "can meet 1GHz"); every other parameter as in the suite."""
    from npusched.hardware.fission import FissionArray
    from npusched.hardware.systolic import SystolicArray

    mono, fis = _points.monolithic_array, _points.fission_device

    def m() -> SystolicArray:
        return SystolicArray(fill_drain=_points.FILL_DRAIN, frequency_hz=hz)

    def f(energy: EnergyModel | None = None) -> FissionArray:
        return FissionArray(energy=energy, fill_drain=_points.FILL_DRAIN, frequency_hz=hz)

    _points.monolithic_array, _points.fission_device = m, f  # type: ignore[assignment]
    try:
        return fn()
    finally:
        _points.monolithic_array, _points.fission_device = mono, fis  # type: ignore[assignment]


def clock() -> None:
    """Fig. 12 at Workload-B/C QoS-M/H (PREMA's zeros at 700 MHz) with both arrays at each
    clock of ``argv[2]`` (MHz, default 700,1000): the median throughput ratio over the quick
    run's 3 instances and the networks whose isolated latency on the monolithic array exceeds
    their bound."""
    clocks = [float(x) for x in sys.argv[2].split(",")] if len(sys.argv) > 2 else [700, 1000]
    pts = [("B", "S"), ("B", "M"), ("B", "H"), ("C", "S"), ("C", "M"), ("C", "H")]
    for mhz in clocks:
        for w, q in pts:

            def one() -> dict[str, Any]:
                over = P.isolated_over_qos(QUICK, w, q, "prema")  # noqa: B023
                return {**_throughput(QUICK, w, q), "prema_over_qos": over}  # noqa: B023

            out = _clock(mhz * 1e6, one)
            print(json.dumps({"clock_mhz": mhz, "point": f"{w}/{q}", **out}), flush=True)


def _ungated_sram(sim: P.Simulate) -> P.Simulate:
    """The chip's SRAM leaks over the whole instance (first arrival to last finish), as the
    artifact's bank count has it; the model passed has no static term."""

    def f(reqs: Sequence[Request]) -> pd.DataFrame:
        df = sim(reqs)
        span = float(df["finish_s"].max() - df["arrival_s"].min())
        return df.assign(energy_j=df["energy_j"] + ARTIFACT_SRAM_LEAK_W * span / len(df))

    return f


def _requests(mode: str) -> Wrap:
    """A wrapper that edits each instance's requests (GNMT one step, or no GNMT)."""

    def wrap(sim: P.Simulate) -> P.Simulate:
        def f(reqs: Sequence[Request]) -> pd.DataFrame:
            if mode == "gnmt-1step":
                reqs = [
                    dataclasses.replace(r, seq_in=1, seq_out=1) if "gnmt" in r.network else r
                    for r in reqs
                ]
            elif mode == "no-gnmt":
                reqs = [r for r in reqs if "gnmt" not in r.network]
            elif mode == "no-depthwise":
                reqs = [r for r in reqs if not _has_depthwise(r.network)]
            df = sim(reqs)
            if mode == "pooled-sla":  # the SLA over all vision / all GNMT requests
                gnmt = df["network"].str.contains("gnmt")
                df = df.assign(network=np.where(gnmt, "planaria/gnmt", "vision"))
            return df

        return f

    return wrap


def systems(
    st: P.MultiTenantSetup,
    *,
    energy: EnergyModel | None = None,
    mono_iso: bool = False,
    prema_policy: str = "P-PREMA",
    prema_mechanism: str = "dynamic",
    wrap: Wrap | None = None,
) -> dict[str, P.Simulate]:
    nets = scenario_networks("C", st.benchmarks)
    pl = P.planaria_simulate(nets, depthwise=st.depthwise, energy=energy)
    pr = P.prema_simulate(
        nets, depthwise=st.depthwise, energy=energy, policy=prema_policy, mechanism=prema_mechanism
    )
    if mono_iso:  # Planaria's fairness against the monolithic isolated time
        sa = _points.monolithic_array()
        iso = {
            n: compile_profile(P.paper_network(n, st.depthwise), sa).isolated_latency(1)
            for n in nets
        }
        inner = pl

        def pl(reqs: Sequence[Request]) -> pd.DataFrame:
            df = inner(reqs)
            return df.assign(isolated_s=df["network"].map(iso).to_numpy(float))

    out = {"planaria": pl, "prema": pr}
    return {k: wrap(v) for k, v in out.items()} if wrap else out


def point(
    st: P.MultiTenantSetup,
    w: str,
    q: str,
    *,
    load: float | None = None,
    rate: float | None = None,
    **kw: Any,
) -> dict[str, Any]:
    """Fig. 13-15 at the fixed rate (or ``rate``) for both systems, as ratios."""
    sy = systems(st, **kw)
    if rate is None:
        rate = P.reference_rate(
            w,
            st.load if load is None else load,
            _points.monolithic_array(),
            benchmarks=st.benchmarks,
            depthwise=st.depthwise,
        )
    a = P.fixed_rate_point(sy["planaria"], st, w, q, rate)
    b = P.fixed_rate_point(sy["prema"], st, w, q, rate)
    return {
        "rate": round(rate, 2),
        "fairness_x": round(a["fairness"] / b["fairness"], 3),
        "energy_reduction_x": round(b["energy_j"] / a["energy_j"], 3),
        "sla": [a["sla_rate"], b["sla_rate"]],
        "sla_gain": round(a["sla_rate"] - b["sla_rate"], 3),
        "qos": [round(a["qos_rate"], 4), round(b["qos_rate"], 4)],
        "qos_gain": round(a["qos_rate"] - b["qos_rate"], 4),
    }


def fig13() -> None:
    """Fig. 13 as compared (the gain in requests within QoS) at every point, per load."""
    loads = [float(x) for x in sys.argv[2].split(",")] if len(sys.argv) > 2 else [0.5, 1.0]
    for load in loads:
        for w in "ABC":
            for q in "SMH":
                r = point(QUICK, w, q, load=load)
                print(json.dumps({"load": load, "point": f"{w}/{q}", "qos": r["qos"],
                                  "qos_gain": r["qos_gain"], "sla_gain": r["sla_gain"]}),
                      flush=True)  # fmt: skip


POINTS = (("A", "S"), ("A", "M"), ("A", "H"), ("B", "M"), ("C", "S"), ("C", "H"))


def ablations() -> None:
    base = QUICK
    dyn = EnergyModel.planaria(static_w_per_subarray=0.0)
    variants: dict[str, Callable[[str, str], dict[str, Any]]] = {
        "default (load 1.0, 200 requests)": lambda w, q: point(base, w, q),
        "Algorithm 1's fill and drain": lambda w, q: _fill_drain(lambda: point(base, w, q)),
        "exponential arrivals (ours before)": lambda w, q: point(
            base.replace(arrivals="exponential"), w, q
        ),
        "load 0.5": lambda w, q: point(base, w, q, load=0.5),
        "load 0.25": lambda w, q: point(base, w, q, load=0.25),
        "load 2.0": lambda w, q: point(base, w, q, load=2.0),
        "50 requests (the artifact's)": lambda w, q: point(
            base.replace(n_requests=50), w, q
        ),
        "100 requests": lambda w, q: point(base.replace(n_requests=100), w, q),
        "500 requests": lambda w, q: point(base.replace(n_requests=500), w, q),
        "full-size networks": lambda w, q: point(
            base.replace(benchmarks="full-size"), w, q
        ),
        "per-channel depthwise": lambda w, q: point(
            base.replace(depthwise="per-channel"), w, q
        ),
        "monolithic isolated time": lambda w, q: point(base, w, q, mono_iso=True),
        "PREMA runs P-SJF": lambda w, q: point(base, w, q, prema_policy="P-SJF"),
        "energy: no static": lambda w, q: point(base, w, q, energy=dyn),
        "energy: SRAM never gated": lambda w, q: point(base, w, q, energy=dyn, wrap=_ungated_sram),
        "energy: no fission overhead": lambda w, q: point(
            base, w, q, energy=EnergyModel.planaria(fission_logic_overhead=0.0)
        ),
        "energy: previous model (ours, dynamic)": lambda w, q: point(
            base, w, q, energy=EnergyModel()
        ),
    }
    only = set(sys.argv[2].split(",")) if len(sys.argv) > 2 else None
    for name, fn in variants.items():
        if only and not any(name.startswith(o) for o in only):
            continue
        for w, q in POINTS:
            print(json.dumps({"variant": name, "point": f"{w}/{q}", **fn(w, q)}), flush=True)


def _throughput(
    st: P.MultiTenantSetup, w: str, q: str, *, capped: bool = True, **kw: Any
) -> dict[str, Any]:
    sy = systems(st, **kw)
    cap = stable_qps(st, w)
    tq = {
        n: [
            P.throughput_qps(s, st, w, q, instance=i, cap=cap[n] if capped else None)
            for i in range(st.throughput_instances)
        ]
        for n, s in sy.items()
    }
    a, b = float(np.median(tq["planaria"])), float(np.median(tq["prema"]))
    return {
        "throughput_x": round(a / b, 3) if b else None,
        "qps": {n: [round(x, 1) for x in v] for n, v in tq.items()},
    }


def throughput() -> None:
    variants: dict[str, dict[str, Any]] = {
        "default": {},
        "exponential arrivals (ours before)": {"st": QUICK.replace(arrivals="exponential")},
        "no cap at the sustainable rate": {"capped": False},
        "GNMT one step (not 32 + 32)": {"wrap": _requests("gnmt-1step")},
        "no GNMT": {"wrap": _requests("no-gnmt")},
        "PREMA runs P-SJF": {"prema_policy": "P-SJF"},
        "no depthwise networks": {"wrap": _requests("no-depthwise")},
        "SLA pooled over vision / GNMT requests": {"wrap": _requests("pooled-sla")},
        "PREMA with CHECKPOINT only (not Algorithm 3)": {"prema_mechanism": "checkpoint"},
        "100 requests": {"st": QUICK.replace(n_requests=100)},
        "500 requests": {"st": QUICK.replace(n_requests=500)},
        "Algorithm 1's fill and drain": {"fill": True},
    }
    pts = (
        [tuple(p.split("/")) for p in sys.argv[2].split(",")]
        if len(sys.argv) > 2
        else [
            ("A", "S"),
            ("A", "M"),
            ("B", "S"),
            ("C", "S"),
        ]
    )
    only = sys.argv[3].split(",") if len(sys.argv) > 3 else None
    for name, kw in variants.items():
        if only and not any(name.startswith(o) for o in only):
            continue
        st = kw.pop("st", QUICK)
        fill = kw.pop("fill", False)
        for w, q in pts:
            out = (
                _fill_drain(lambda: _throughput(st, w, q, **kw))  # noqa: B023
                if fill
                else _throughput(st, w, q, **kw)
            )
            print(json.dumps({"variant": name, "point": f"{w}/{q}", **out}), flush=True)


def isolated() -> None:
    base = EnergyModel.planaria()
    variants = {
        "default (EnergyModel.planaria())": base,
        "no static": EnergyModel.planaria(static_w_per_subarray=0.0),
        "no fission overhead": EnergyModel.planaria(fission_logic_overhead=0.0),
        "PE 1.0 pJ (ours)": EnergyModel.planaria(pe_cycle_pj=1.0),
        "DRAM 4 pJ/bit (ours)": EnergyModel.planaria(dram_pj_per_bit=4.0),
        "no SRAM term": EnergyModel.planaria(sram_pj_per_byte=0.0),
        "no DRAM term": EnergyModel.planaria(dram_pj_per_bit=0.0),
        "PE and static only": EnergyModel.planaria(
            sram_pj_per_byte=0.0, dram_pj_per_bit=0.0, vector_op_pj=0.0, ring_pj_per_bit_hop=0.0
        ),
        "previous model (ours, dynamic)": EnergyModel(),
    }
    for name, m in variants.items():
        d = P.isolated_comparison(energy=m)
        if name.startswith("default"):
            f = _fill_drain(lambda: P.isolated_comparison(energy=m))  # noqa: B023
            g = float(np.exp(np.log(f["isolated_energy_ratio"]).mean()))
            s = float(np.exp(np.log(f["isolated_speedup"]).mean()))
            print(
                json.dumps(
                    {
                        "variant": "Algorithm 1's fill and drain",
                        "energy_gmean_x": round(g, 3),
                        "speedup_gmean_x": round(s, 3),
                    }
                )
            )
        tiny = d[d["network"].str.contains("tiny")]["isolated_energy_ratio"].iloc[0]
        gm = float(np.exp(np.log(d["isolated_energy_ratio"]).mean()))
        print(
            json.dumps({"variant": name, "energy_gmean_x": round(gm, 3), "tiny_x": round(tiny, 3)})
        )


def terms() -> None:
    """Each term of ``EnergyModel.planaria()`` alone (the others 0), per network and system,
    in mJ; then the energy ratio under the authors' artifact's core accounting, which charges
    one 32x32 subarray's dynamic energy per cycle of a thread (``stats.get_energy``:
    ``core_compute_cycles * core_dyn_energy``, not times the threads or the composed size)."""
    nets = (
        sys.argv[2].split(",")
        if len(sys.argv) > 2
        else ["planaria/resnet-50", "planaria/mobilenet-v1"]
    )
    base = EnergyModel.planaria()
    names = [
        "pe_cycle_pj",
        "vector_op_pj",
        "sram_pj_per_byte",
        "dram_pj_per_bit",
        "ring_pj_per_bit_hop",
        "static_w_per_subarray",
    ]
    zero = {n: 1e-9 for n in names}  # not 0: a network without a term (GNMT: no ring hops)
    parts: dict[str, pd.DataFrame] = {}
    for n in names:
        m = EnergyModel.planaria(**{**zero, n: getattr(base, n)})
        parts[n] = P.isolated_comparison(nets, energy=m).set_index("network")
    for net in nets:
        row = {
            t: [
                round(float(parts[t].loc[net, "monolithic_mj"]), 4),
                round(float(parts[t].loc[net, "planaria_mj"]), 4),
            ]
            for t in names
        }
        mono = sum(v[0] for v in row.values())
        pl = sum(v[1] for v in row.values())
        # artifact accounting: the PE term of one subarray per thread-cycle, both systems
        pe_m, pe_p = row["pe_cycle_pj"]
        art_both = (mono - pe_m * 15 / 16) / (pl - pe_p * 15 / 16)
        art_pl = mono / (pl - pe_p * 15 / 16)
        st_m, st_p = row["static_w_per_subarray"]  # the artifact adds no leakage
        art_dyn = (mono - pe_m * 15 / 16 - st_m) / (pl - pe_p * 15 / 16 - st_p)
        print(
            json.dumps(
                {
                    "network": net,
                    "terms_mj_mono_planaria": row,
                    "ratio": round(mono / pl, 3),
                    "ratio_artifact_pe_both": round(art_both, 3),
                    "ratio_artifact_pe_planaria_only": round(art_pl, 3),
                    "ratio_artifact_pe_both_no_static": round(art_dyn, 3),
                    "speedup": round(float(parts["pe_cycle_pj"].loc[net, "isolated_speedup"]), 3),
                }
            ),
            flush=True,
        )


def nodes() -> None:
    """Fig. 16's node counts per load (a load of Workload-C on the monolithic array) and each
    load's residual against the paper's nine counts: the sum and RMS of squared ln(ours /
    paper) (the fit of ``fig16_load``). ``argv[3]``: ``full`` runs the full run's instances
    (99% of 20 instances: all 20), else the quick run's 4."""
    st = P.MultiTenantSetup.of(quick=len(sys.argv) <= 3 or sys.argv[3] != "full")
    sim = systems(st)["planaria"]
    loads = [float(x) for x in sys.argv[2].split(",")] if len(sys.argv) > 2 else [0.5, 1.0, 2.0]
    paper = P.PAPER_MULTI_TENANT["fig16_nodes"]
    for load in loads:
        rate = P.reference_rate("C", load, _points.monolithic_array())
        out = {
            f"{w}/{q}": P.nodes_for_sla(sim, st, w, q, rate, max_nodes=st.max_nodes)
            for w in "ABC"
            for q in "SMH"
        }
        sq = [
            float(np.log((out[k] or st.max_nodes + 1) / paper[k]) ** 2) for k in out if k in paper
        ]
        fit = {"ssq_ln": round(sum(sq), 3), "rms_ln": round(float(np.sqrt(np.mean(sq))), 3)}
        inst = {"instances": st.instances}
        print(json.dumps({"fig16_load": load, "rate": round(rate, 1), **inst, **out, **fit}))


def compare(quick_dir: str, full_dir: str) -> None:
    """Each quick comparison value against the full run's value and spread."""
    q = {r["id"]: r for r in json.loads(Path(quick_dir, "summary.json").read_text())["comparisons"]}
    f = {r["id"]: r for r in json.loads(Path(full_dir, "summary.json").read_text())["comparisons"]}
    print("| id | quick | full | full spread | quick inside? |\n|---|---:|---:|---|---|")
    for cid, rf in f.items():
        rq = q.get(cid, {})
        vq, vf, sp = rq.get("ours"), rf.get("ours"), rf.get("spread")
        inside = "-"
        if sp and isinstance(vq, (int, float)):
            inside = "yes" if sp[0] - 1e-9 <= vq <= sp[1] + 1e-9 else "**no**"
        print(f"| {cid} | {vq} | {vf} | {sp or '-'} | {inside} |")


if __name__ == "__main__":
    cmd = sys.argv[1]
    if cmd == "compare":
        compare(sys.argv[2], sys.argv[3])
    else:
        cmds = {"ablations": ablations, "fig13": fig13, "throughput": throughput}
        {**cmds, "isolated": isolated, "terms": terms, "nodes": nodes, "clock": clock}[cmd]()
