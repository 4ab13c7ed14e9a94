"""Reproduce Planaria (MICRO 2020) Sec. VI: ``npusched reproduce planaria``.

The suite has two parts.

* **Isolated (Fig. 17), engine-independent - implemented.** Each of the nine DNNs of Table I
  runs alone at batch 1 on the whole fission array (16 subarrays, every layer on its fastest
  fission configuration, :class:`~npusched.hardware.fission.FissionArray`) and on PREMA's
  monolithic 128x128 array with the same PEs, buffers, clock and bandwidth (``prema-npu``,
  :class:`~npusched.hardware.systolic.SystolicArray`). Speedup = monolithic latency / fission
  latency; energy ratio = monolithic energy / fission energy, both charged with the same
  :class:`~npusched.hardware.energy.EnergyModel` (45 nm constants). Recurrent GNMT runs at the
  zoo's default sequence lengths. The paper reports 3.5x speedup and 6.3x energy reduction on
  average (arithmetic mean over the nine; Tiny YOLO 2.8x / 5.5x; depthwise networks most).
* **Multi-tenant (Fig. 12-15) - implemented; Fig. 16 not yet.** Throughput at SLA (Fig. 12:
  :func:`throughput_qps`: the highest rate at which a seeded workload instance meets the
  MLPerf SLA, searched by :func:`npusched.metrics.throughput_at_sla`). SLA satisfaction rate,
  fairness and energy at a fixed rate (Fig. 13-15: :func:`fixed_rate_point` over many
  instances). Both on Workloads A/B/C x QoS S/M/H. A system under test is any
  :data:`Simulate` (workload -> records): :func:`planaria_simulate` runs
  :class:`~npusched.policies.spatial.planaria.PlanariaPolicy` on the 16-subarray fission
  machine, :func:`prema_simulate` runs P-PREMA on ``prema-npu``. Fig. 16 (nodes for 99% SLA,
  requests routed to nodes) needs a routing layer and is not done. ``reproduce(...,
  multi_tenant=True)`` fills ``workloads[W][Q][metric][system]``. :data:`PAPER_MULTI_TENANT`
  holds the paper's numbers. The paper states none of the study's parameters (requests per
  instance, instances, the fixed rate); ours are in :class:`MultiTenantSetup`.

Outputs in the output directory: ``fig17.csv``, ``fig17_speedup.png``, ``fig17_energy.png``,
``summary.json`` and ``report.md``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from npusched._io import atomic_write_text
from npusched.hardware.energy import EnergyModel, systolic_energy_j
from npusched.hardware.fission import FissionArray
from npusched.hardware.profile import compile_profile
from npusched.hardware.systolic import SystolicArray
from npusched.models.ir import LayerKind
from npusched.models.zoo import get_network
from npusched.workloads.planaria import QOS_LEVELS, SLA_FRACTION, WORKLOADS, planaria_workload
from npusched.workloads.request import Request

__all__ = [
    "MULTI_TENANT_FIGURES",
    "PAPER",
    "PAPER_MULTI_TENANT",
    "MultiTenantSetup",
    "Simulate",
    "fixed_rate_point",
    "isolated_comparison",
    "nodes_for_sla",
    "planaria_simulate",
    "prema_simulate",
    "reference_rate",
    "reproduce",
    "throughput_qps",
    "workload_instance",
]

#: A system under test: a workload -> per-request records with at least ``network``,
#: ``priority``, ``latency_s``, ``slo_s``, ``isolated_s`` and (for energy) ``energy_j``.
Simulate = Callable[[Sequence[Request]], pd.DataFrame]

#: The paper's Fig. 17 numbers (Sec. VI-B2) that ``report.md`` sets ours against.
PAPER: dict[str, float] = {
    "isolated_speedup_mean": 3.5,
    "isolated_energy_ratio_mean": 6.3,
    "isolated_speedup_tiny-yolov3": 2.8,
    "isolated_energy_ratio_tiny-yolov3": 5.5,
}

#: The paper's multi-tenant headline numbers (Sec. VI-B1), Planaria over PREMA, by figure.
PAPER_MULTI_TENANT: dict[str, dict[str, float]] = {
    "fig12_throughput_x": {
        "A/S": 1.1,
        "A/M": 1.5,
        "A/H": 2.3,
        "B/S": 13.2,
        "B/M": 43.1,
        "C/S": 7.4,
        "C/M": 7.2,
        "C/H": 12.2,
    },
    "fig13_sla_gain": {"A/M": 0.14, "A/H": 0.28, "C/S": 0.16, "C/H": 0.45},
    "fig14_fairness_x": {
        "A/S": 2.8,
        "A/M": 5.1,
        "A/H": 2.8,
        "B/M": 9.1,
        "C/S": 2.1,
        "C/M": 2.3,
        "C/H": 1.9,
    },
    "fig15_energy_reduction_x": {"C/S": 3.3, "C/M": 4.3, "C/H": 5.1},
    "fig16_nodes": {
        "A/S": 1,
        "A/M": 2,
        "A/H": 3,
        "B/S": 2,
        "B/M": 4,
        "B/H": 7,
        "C/S": 2,
        "C/M": 3,
        "C/H": 5,
    },
}

#: Figures that need the multi-tenant engine (issue 9), with what each measures.
MULTI_TENANT_FIGURES: dict[str, str] = {
    "fig12": "throughput_qps: highest Poisson rate meeting the SLA, planaria vs prema",
    "fig13": "sla_rate: fraction of workload instances meeting the SLA at a fixed rate",
    "fig14": "fairness (PREMA's definition), planaria / prema",
    "fig15": "energy_j of the workloads, prema / planaria",
    "fig16": "minimum nodes for 99% SLA at a constant rate, one DNN per node",
}


def _has_depthwise(name: str) -> bool:
    return any(ly.kind == LayerKind.DWCONV for ly in get_network(name).layers)


def isolated_comparison(
    networks: Sequence[str] = WORKLOADS["C"],
    *,
    batch: int = 1,
    fission: FissionArray | None = None,
    monolithic: SystolicArray | None = None,
    energy: EnergyModel | None = None,
) -> pd.DataFrame:
    """Fig. 17: each network alone on 16 fission subarrays vs the monolithic array.

    Args:
        networks: zoo names (default: the nine of Workload-C).
        batch: batch size.
        fission: the fission device (default :class:`FissionArray` with ``energy``).
        monolithic: the baseline (default ``SystolicArray()``, i.e. ``prema-npu``).
        energy: the energy model charged to both (defaults if ``None``; a ``fission`` given
            with its own ``energy`` keeps it).

    Returns:
        One row per network: ``network``, ``depthwise`` (has depthwise layers),
        ``monolithic_ms`` / ``planaria_ms`` (isolated latency, milliseconds),
        ``isolated_speedup``, ``monolithic_mj`` / ``planaria_mj`` (energy, millijoules),
        ``isolated_energy_ratio``.
    """
    model = energy if energy is not None else EnergyModel()
    fa = fission if fission is not None else FissionArray(energy=model)
    sa = monolithic if monolithic is not None else SystolicArray()
    full = fa.variant(subarrays=int(fa.num_subarrays))
    rows = []
    for name in networks:
        net = get_network(name)
        p_f = compile_profile(net, full, (batch,))
        p_m = compile_profile(net, sa, (batch,))
        t_f = p_f.isolated_latency(batch)
        t_m = p_m.isolated_latency(batch)
        steps = p_m.plan(batch).layer  # executed layers (recurrent cells unrolled)
        e_m = float(systolic_energy_j(sa, net, batch, model)[steps].sum())
        e_f = p_f.energy(batch)
        rows.append(
            {
                "network": name,
                "depthwise": _has_depthwise(name),
                "monolithic_ms": t_m * 1e3,
                "planaria_ms": t_f * 1e3,
                "isolated_speedup": t_m / t_f,
                "monolithic_mj": e_m * 1e3,
                "planaria_mj": e_f * 1e3,
                "isolated_energy_ratio": e_m / e_f,
            }
        )
    return pd.DataFrame(rows)


# --- multi-tenant harness (Fig. 12-15): any system behind a ``Simulate`` ----------------------
@dataclass(frozen=True)
class MultiTenantSetup:
    """The fixed parameters of the multi-tenant study (the paper gives none of them).

    Attributes:
        n_requests: requests per workload instance.
        instances: workload instances per point for the SLA rate, fairness and energy.
        seed: base seed; instance ``i`` of ``(scenario, qos)`` draws from
            ``SeedSequence([seed, scenario index, qos index, i])``, the same at every rate
            (common random numbers: a rate only rescales the exponential gaps), so the
            throughput search is deterministic for a seed.
        rate_tol: relative tolerance of the throughput search.
        min_rate: the search's starting rate, requests per second.
        load: the fixed rate of Fig. 13-16 as a load on the monolithic array
            (:func:`reference_rate`).
        max_nodes: Fig. 16's search stops here (``None``: more nodes would be needed).
    """

    n_requests: int = 500
    instances: int = 20
    seed: int = 0
    rate_tol: float = 0.02
    min_rate: float = 1.0
    load: float = 0.25
    max_nodes: int = 8


def workload_instance(
    setup: MultiTenantSetup, scenario: str, qos: str, rate: float, instance: int = 0
) -> list[Request]:
    """Instance ``instance`` of Table I's ``scenario`` at QoS level ``qos`` and ``rate`` req/s."""
    key = np.random.SeedSequence(
        [setup.seed, "ABC".index(scenario), list(QOS_LEVELS).index(qos), instance]
    )
    return planaria_workload(
        scenario, qos, rate, n_requests=setup.n_requests, random_state=np.random.default_rng(key)
    )


def throughput_qps(
    simulate: Simulate,
    setup: MultiTenantSetup,
    scenario: str,
    qos: str,
    *,
    history: list[tuple[float, bool]] | None = None,
) -> float:
    """Fig. 12: the highest Poisson rate (req/s) at which instance 0 meets the SLA (99% of
    vision and 97% of GNMT requests within QoS), by :func:`npusched.metrics.throughput_at_sla`
    (galloping then bisection); 0.0 if the SLA fails even at ``setup.min_rate``."""
    from npusched.metrics import throughput_at_sla

    return throughput_at_sla(
        lambda rate: simulate(workload_instance(setup, scenario, qos, rate)),
        SLA_FRACTION,
        lo=setup.min_rate,
        tol=setup.rate_tol,
        history=history,
    )


def fixed_rate_point(
    simulate: Simulate, setup: MultiTenantSetup, scenario: str, qos: str, rate: float
) -> dict[str, float]:
    """Fig. 13-15 at one rate over ``setup.instances`` instances: ``sla_rate`` (fraction of
    instances meeting the SLA), ``fairness`` (PREMA's definition, mean over instances) and
    ``energy_j`` (mean total energy per instance; NaN without an ``energy_j`` column)."""
    from npusched.metrics import fairness, sla_met

    met, fair, energy = [], [], []
    for i in range(setup.instances):
        df = simulate(workload_instance(setup, scenario, qos, rate, i))
        met.append(sla_met(df, SLA_FRACTION))
        fair.append(fairness(df))
        energy.append(float(df["energy_j"].sum()) if "energy_j" in df else float("nan"))
    return {
        "sla_rate": float(np.mean(met)),
        "fairness": float(np.mean(fair)),
        "energy_j": float(np.mean(energy)),
    }


def nodes_for_sla(
    simulate: Simulate,
    setup: MultiTenantSetup,
    scenario: str,
    qos: str,
    rate: float,
    *,
    max_nodes: int = 16,
    target: float = 0.99,
) -> int | None:
    """Fig. 16: the fewest nodes (one accelerator each) at which at least ``target`` of the
    ``setup.instances`` workload instances at ``rate`` req/s meet the SLA, or ``None`` if
    ``max_nodes`` do not suffice.

    Requests are routed round-robin in arrival order (a request runs on one node, never split:
    "each DNN task is mapped to a single chip"); the paper does not say how it routes. A
    workload instance meets the SLA when the records of all nodes together do.
    """
    from npusched.metrics import sla_met

    instances = [workload_instance(setup, scenario, qos, rate, i) for i in range(setup.instances)]
    for k in range(1, max_nodes + 1):
        met = 0
        for reqs in instances:
            parts = [
                simulate([r for i, r in enumerate(reqs) if i % k == node]) for node in range(k)
            ]
            met += sla_met(pd.concat([p for p in parts if len(p)], ignore_index=True), SLA_FRACTION)
        if met >= target * len(instances):
            return k
    return None


def reference_rate(scenario: str, load: float, monolithic: SystolicArray | None = None) -> float:
    """A fixed rate for Fig. 13-15: ``load`` / the scenario's mean isolated latency on the
    monolithic array (networks equally likely), requests per second."""
    sa = monolithic if monolithic is not None else SystolicArray()
    iso = [compile_profile(get_network(n), sa).isolated_latency(1) for n in WORKLOADS[scenario]]
    return float(load / np.mean(iso))


def prema_simulate(
    networks: Sequence[str] = WORKLOADS["C"],
    *,
    monolithic: SystolicArray | None = None,
    energy: EnergyModel | None = None,
    mechanism: str = "checkpoint",
) -> Simulate:
    """PREMA on the monolithic array (the paper's baseline) as a :data:`Simulate`.

    P-PREMA with the PREMA predictor. A request's energy is its executed layers' energy on the
    monolithic array (:func:`~npusched.hardware.energy.systolic_energy_j`; temporal sharing
    does not change it) plus the DRAM energy of its checkpoint save and restore
    (``2 x checkpoint_bytes``).
    """
    from npusched.policies import POLICIES
    from npusched.policies.temporal.predictor import make_estimator
    from npusched.sim.engine import Simulator

    model = energy if energy is not None else EnergyModel()
    sa = monolithic if monolithic is not None else SystolicArray()
    nets = {n: get_network(n) for n in networks}
    profiles = {n: compile_profile(net, sa) for n, net in nets.items()}
    layer_energy = {n: systolic_energy_j(sa, net, 1, model) for n, net in nets.items()}
    dram_j_per_byte = 8.0 * model.key()[3] * 1e-12

    def request_energy(name: str, seq_in: int, seq_out: int) -> float:
        plan = profiles[name].plan(
            1, None if seq_in < 0 else int(seq_in), None if seq_out < 0 else int(seq_out)
        )
        return float(layer_energy[name][plan.layer].sum())

    def simulate(requests: Sequence[Request]) -> pd.DataFrame:
        policy = POLICIES.create("P-PREMA", mechanism=mechanism)
        sim = Simulator(profiles, policy, estimator=make_estimator("prema"))
        df = sim.run(requests).to_frame()
        e = [
            request_energy(n, a, b)
            for n, a, b in zip(df["network"], df["seq_in"], df["seq_out"], strict=True)
        ]
        return df.assign(
            energy_j=np.asarray(e) + 2.0 * df["checkpoint_bytes"].to_numpy(float) * dram_j_per_byte
        )

    return simulate


def planaria_simulate(
    networks: Sequence[str] = WORKLOADS["C"],
    *,
    fission: FissionArray | None = None,
    energy: EnergyModel | None = None,
) -> Simulate:
    """Planaria (its Algorithm 1 on the 16-subarray fission array) as a :data:`Simulate`.

    :class:`~npusched.policies.spatial.planaria.PlanariaPolicy` on
    :func:`~npusched.sim.resources.fission_array`, profiles with every ``subarrays`` variant.
    ``isolated_s`` in the records is the request's latency alone on all 16 subarrays (the
    paper's ``T_isolated`` for fairness); ``energy_j`` is the engine's sum over the executed
    segments of each variant's energy (the :class:`~npusched.hardware.energy.EnergyModel`
    with only the allocated subarrays powered) plus the DRAM energy of checkpoint save and
    restore (``2 x checkpoint_bytes``).
    """
    from npusched.policies.spatial.planaria import PlanariaPolicy
    from npusched.sim.engine import Simulator
    from npusched.sim.resources import fission_array

    model = energy if energy is not None else EnergyModel()
    fa = fission if fission is not None else FissionArray(energy=model)
    size = int(fa.num_subarrays)
    profiles = {n: compile_profile(get_network(n), fa) for n in networks}
    dram_j_per_byte = 8.0 * fa.energy_model_.key()[3] * 1e-12

    def simulate(requests: Sequence[Request]) -> pd.DataFrame:
        sim = Simulator(profiles, PlanariaPolicy(), machine=fission_array(size))
        df = sim.run(requests).to_frame()
        iso = [
            profiles[r.network].isolated_latency(r.batch, r.seq_in, r.seq_out, subarrays=size)
            for r in sorted(requests, key=lambda r: r.id)
        ]
        by_id = dict(zip(sorted(r.id for r in requests), iso, strict=True))
        return df.assign(
            isolated_s=df["id"].map(by_id).to_numpy(float),
            energy_j=df["energy_j"].to_numpy(float)
            + 2.0 * df["checkpoint_bytes"].to_numpy(float) * dram_j_per_byte,
        )

    return simulate


def _r(x: float, nd: int = 4) -> float:
    return float(round(float(x), nd))


def reproduce(
    out: str | Path,
    *,
    quick: bool = False,
    plots: bool = True,
    progress: bool = False,
    networks: Sequence[str] = WORKLOADS["C"],
    multi_tenant: bool = False,
    setup: MultiTenantSetup | None = None,
    scenarios: Sequence[str] = tuple(WORKLOADS),
    qos_levels: Sequence[str] = tuple(QOS_LEVELS),
) -> dict[str, Any]:
    """Write the Planaria reproduction into ``out`` and return the ``summary.json`` content.

    Args:
        out: output directory (created if needed).
        networks: the DNNs of Fig. 17 (default: the nine of Table I).
        quick: fewer and shorter workload instances in the multi-tenant part.
        plots: also draw the PNG figures.
        progress: show a progress bar over the multi-tenant points.
        multi_tenant: also run Fig. 12-15 for both systems (``workloads`` in
            ``summary.json``). Slow.
        setup: the multi-tenant study's parameters (default :class:`MultiTenantSetup`, or a
            quick one).
        scenarios, qos_levels: the multi-tenant grid (default A/B/C x S/M/H).
    """
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    fig17 = isolated_comparison(networks)
    atomic_write_text(out / "fig17.csv", fig17.to_csv(index=False, float_format="%.6g"))
    nets = fig17["network"].tolist()
    if plots:
        from npusched.report.plots import grouped_bars

        for col, label, fname in (
            ("isolated_speedup", "speedup over the monolithic array (x)", "fig17_speedup.png"),
            ("isolated_energy_ratio", "energy reduction (x)", "fig17_energy.png"),
        ):
            grouped_bars(
                out / fname,
                [*nets, "mean"],
                {"planaria": [*fig17[col].tolist(), float(fig17[col].mean())]},
                ylabel=label,
                title="Fig. 17: each DNN alone, 16 fission subarrays vs 128x128 (batch 1)",
                reference=1.0,
                annotate=True,
            )
    speedup = {n: _r(v) for n, v in zip(nets, fig17["isolated_speedup"], strict=True)}
    eratio = {n: _r(v) for n, v in zip(nets, fig17["isolated_energy_ratio"], strict=True)}
    dw = fig17["depthwise"].to_numpy(bool)
    summary: dict[str, Any] = {
        "isolated_speedup": speedup,
        "isolated_energy_ratio": eratio,
        "headline": {
            "isolated_speedup_mean": {
                "ours": _r(fig17["isolated_speedup"].mean(), 3),
                "paper": PAPER["isolated_speedup_mean"],
            },
            "isolated_energy_ratio_mean": {
                "ours": _r(fig17["isolated_energy_ratio"].mean(), 3),
                "paper": PAPER["isolated_energy_ratio_mean"],
            },
            "isolated_speedup_tiny-yolov3": {
                "ours": speedup.get("tiny-yolov3"),
                "paper": PAPER["isolated_speedup_tiny-yolov3"],
            },
            "isolated_energy_ratio_tiny-yolov3": {
                "ours": eratio.get("tiny-yolov3"),
                "paper": PAPER["isolated_energy_ratio_tiny-yolov3"],
            },
            "isolated_speedup_mean_depthwise": {
                "ours": _r(np.mean(fig17["isolated_speedup"][dw]), 3) if dw.any() else None,
                "paper": None,
            },
            "isolated_speedup_mean_other": {
                "ours": _r(np.mean(fig17["isolated_speedup"][~dw]), 3) if (~dw).any() else None,
                "paper": None,
            },
        },
        "multi_tenant": {
            "status": "Fig. 12-16 with --multi-tenant (workloads in this file)",
            "figures": MULTI_TENANT_FIGURES,
            "paper": PAPER_MULTI_TENANT,
        },
    }
    if multi_tenant:
        st = setup or (MultiTenantSetup(n_requests=100, instances=4) if quick else None)
        summary["workloads"] = _multi_tenant(
            st or MultiTenantSetup(), scenarios, qos_levels, progress=progress
        )
        summary["multi_tenant"]["setup"] = vars(st or MultiTenantSetup())
    atomic_write_text(out / "summary.json", json.dumps(summary, indent=2) + "\n")
    atomic_write_text(out / "report.md", _report_md(fig17, summary))
    return summary


def _multi_tenant(
    setup: MultiTenantSetup,
    scenarios: Sequence[str],
    qos_levels: Sequence[str],
    *,
    progress: bool = False,
) -> dict[str, Any]:
    """PREMA's side of Fig. 12-15 per (workload, QoS); Planaria's entries are ``None``."""
    from npusched.report.progress import progress_bar

    systems = {"planaria": planaria_simulate(), "prema": prema_simulate()}
    grid = [(w, q) for w in scenarios for q in qos_levels]
    out: dict[str, Any] = {}
    with progress_bar(len(grid), "Planaria Fig. 12-15", enabled=progress) as bar:
        for w, q in grid:
            rate = reference_rate(w, setup.load)
            row: dict[str, Any] = {"fixed_rate_qps": rate}
            for name, sim in systems.items():
                row.setdefault("throughput_qps", {})[name] = throughput_qps(sim, setup, w, q)
                for k, v in fixed_rate_point(sim, setup, w, q, rate).items():
                    row.setdefault(k, {})[name] = v
            # Fig. 16 (Planaria only, as in the paper): nodes for 99% SLA at the fixed rate
            row["nodes_for_sla"] = {
                "planaria": nodes_for_sla(
                    systems["planaria"], setup, w, q, rate, max_nodes=setup.max_nodes
                )
            }
            out.setdefault(w, {})[q] = row
            if bar is not None:
                bar.step(f"{w}/{q}")
    return out


def _report_md(fig17: pd.DataFrame, summary: dict[str, Any]) -> str:
    lines = [
        "# Planaria (MICRO 2020): our numbers vs the paper's",
        "",
        "## Fig. 17: each DNN alone (batch 1), 16 fission subarrays vs the monolithic array",
        "",
        "| network | depthwise | monolithic ms | planaria ms | speedup | energy reduction |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for r in fig17.itertuples(index=False):
        lines.append(
            f"| {r.network} | {'yes' if r.depthwise else 'no'} | {r.monolithic_ms:.3f} | "
            f"{r.planaria_ms:.3f} | {r.isolated_speedup:.2f}x | "
            f"{r.isolated_energy_ratio:.2f}x |"
        )
    lines += ["", "| quantity | ours | paper |", "|---|---:|---:|"]
    for key, val in summary["headline"].items():
        lines.append(f"| {key} | {val['ours']} | {val['paper'] if val['paper'] else '-'} |")
    lines += [
        "",
        "## Fig. 12-16 (multi-tenant)",
        "",
        summary["multi_tenant"]["status"] + ".",
        "",
    ]
    workloads = summary.get("workloads")
    if workloads:
        lines += [
            "| workload | QoS | system | throughput qps | SLA rate | fairness | energy J |",
            "|---|---|---|---:|---:|---:|---:|",
        ]
        for w, by_q in workloads.items():
            for q, p in by_q.items():
                for name in p["throughput_qps"]:
                    lines.append(
                        f"| {w} | {q} | {name} | {p['throughput_qps'][name]:.3g} | "
                        f"{p['sla_rate'][name]:.3g} | {p['fairness'][name]:.3g} | "
                        f"{p['energy_j'][name]:.3g} |"
                    )
        lines += [
            "",
            "Planaria over PREMA (ours / paper; inf: PREMA never meets the SLA; - : not given):",
            "",
            "| workload/QoS | fixed rate qps | throughput x | SLA gain | fairness x | energy x "
            "| nodes (Fig. 16) |",
            "|---|---:|---|---|---|---|---|",
        ]
        pm = PAPER_MULTI_TENANT
        for w, by_q in workloads.items():
            for q, p in by_q.items():
                k = f"{w}/{q}"
                nodes = p.get("nodes_for_sla", {}).get("planaria")
                paper_nodes = pm["fig16_nodes"].get(k)
                nodes_txt = f"{'> max' if nodes is None else nodes} / {paper_nodes}"

                def cell(ours: float, fig: str, key: str = k) -> str:
                    paper = pm[fig].get(key)
                    return f"{ours:.3g} / {'-' if paper is None else paper}"

                lines.append(
                    f"| {k} | {p['fixed_rate_qps']:.3g} | "
                    + " | ".join(
                        (
                            cell(_ratio(p["throughput_qps"]), "fig12_throughput_x"),
                            cell(
                                p["sla_rate"]["planaria"] - p["sla_rate"]["prema"],
                                "fig13_sla_gain",
                            ),
                            cell(_ratio(p["fairness"]), "fig14_fairness_x"),
                            cell(_ratio(p["energy_j"], invert=True), "fig15_energy_reduction_x"),
                            nodes_txt,
                        )
                    )
                    + " |"
                )
        lines.append("")
    return "\n".join(lines)


def _ratio(by_system: dict[str, float], *, invert: bool = False) -> float:
    """planaria / prema (or prema / planaria with ``invert``); inf over a zero."""
    a, b = by_system["planaria"], by_system["prema"]
    if invert:
        a, b = b, a
    if b == 0:
        return float("inf") if a > 0 else float("nan")
    return float(a / b)
