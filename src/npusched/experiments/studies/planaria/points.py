"""Planaria (MICRO 2020): the points to run, as functions of a setup - Fig. 17's isolated
comparison and per-layer check, the multi-tenant harness (Fig. 12-16: throughput at SLA,
fixed-rate points, nodes for the SLA) with both systems behind a :data:`Simulate`, and
the small numeric helpers the tabulation shares."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Sequence
from functools import cache
from typing import Any

import numpy as np
import pandas as pd

from npusched import libm
from npusched.experiments.studies.planaria.paper import DEPTHWISE_BOUND
from npusched.experiments.studies.planaria.suite import MultiTenantSetup
from npusched.hardware.energy import EnergyModel, systolic_energy_j
from npusched.hardware.fission import FissionArray
from npusched.hardware.profile import compile_profile
from npusched.hardware.systolic import SystolicArray
from npusched.models.ir import LayerKind, Network, make_network
from npusched.models.zoo import get_network
from npusched.workloads.planaria import (
    QOS_LEVELS,
    SLA_FRACTION,
    planaria_workload,
    scenario_networks,
)
from npusched.workloads.request import Request

#: A system under test: a workload -> per-request records with at least ``network``,
#: ``priority``, ``latency_s``, ``slo_s``, ``isolated_s`` and (for energy) ``energy_j``.
Simulate = Callable[[Sequence[Request]], pd.DataFrame]


def _has_depthwise(name: str) -> bool:
    return any(ly.kind == LayerKind.DWCONV for ly in get_network(name).layers)


#: Per-tile fill and drain on both arrays: ``False``, the compute model of the authors' simulator
#: (he-actlab/planaria.code, ``Core.get_core_compute_cycles``: a tile costs its streamed rows
#: times the column and row folds, ``overhead = 0``; the paper: "cycle-accurate simulator [...]
#: We verify the cycle counts with our Verilog"). With Algorithm 1's ``SH + 2*SW`` per tile
#: (PREMA's model, ``True``) the monolithic array runs the artifact's ResNet-50 in 1.12 ms
#: against 0.60 ms, and misses QoS-H (0.94 ms) alone, where the paper's PREMA meets it.
FILL_DRAIN = False


def monolithic_array() -> SystolicArray:
    """The paper's baseline: PREMA's 128x128 array (``prema-npu``'s parameters: 700 MHz,
    358 GB/s, 12 MB) costed as the authors' simulator costs a 128x128 array (no per-tile fill
    and drain, :data:`FILL_DRAIN`); depthwise layers as :func:`paper_network` maps them."""
    return SystolicArray(fill_drain=FILL_DRAIN)


def fission_device(energy: EnergyModel | None = None) -> FissionArray:
    """Planaria's 16 x (32x32) array with ``energy``, costed like :func:`monolithic_array`."""
    return FissionArray(energy=energy, fill_drain=FILL_DRAIN)


#: Depthwise mappings: ``"pipelined"`` (the paper's, the suite's default) or ``"per-channel"``.
DEPTHWISE_MAPPINGS = ("pipelined", "per-channel")


@cache
def paper_network(name: str, depthwise: str = "pipelined") -> Network:
    """Zoo network ``name`` with its depthwise layers mapped as Planaria Sec. VI-B2 describes.

    ``"pipelined"``: "a depth-wise 2-D filter is vectorized and mapped to one column of the
    array [...] while the filter weight remains stationary for all the inputs of the pertinent
    channel" - the channels stream back to back through that column (the next channel's
    ``R*S`` weights load while the current one streams), so a ``C``-channel layer of ``M``
    outputs per channel is one ``(C*M x R*S) @ (R*S x 1)`` GEMM: the array fills and drains
    once per accumulator tile, not once per channel. The same layer table goes to both
    systems, so on the fission array ``k`` copies split the ``C*M`` streamed rows (16
    channels' worth of columns at once: the paper's up-to-16x). Same MACs, same outputs.

    ``"per-channel"``: the zoo's table unchanged; every channel is its own GEMM and pays the
    array's fill and drain (``SH + 2*SW`` cycles: 384 on 128x128, 96 on 32x32), so a
    depthwise layer on 16 subarrays gains ``16 x (a + 384) / (a + 96)`` with ``a`` the rows per
    tile: up to 64x on small planes (the issue's 47.8x).

    Cached by name, so each mapped network is one object (profiles are cached by identity).
    """
    net = get_network(name)
    if depthwise not in DEPTHWISE_MAPPINGS:
        raise ValueError(f"depthwise {depthwise!r}; allowed: {', '.join(DEPTHWISE_MAPPINGS)}")
    if depthwise == "per-channel" or not any(ly.kind == LayerKind.DWCONV for ly in net.layers):
        return net
    layers = [
        dataclasses.replace(ly, m=ly.m * ly.groups, groups=1)
        if ly.kind == LayerKind.DWCONV and ly.n == 1
        else ly
        for ly in net.layers
    ]
    return make_network(
        net.name,
        layers,
        input_shape=net.input_shape,
        exits=net.exits,
        seq_len=net.seq_len,
        meta={**net.meta, "depthwise": "pipelined"},
    )


def isolated_comparison(
    networks: Sequence[str] = scenario_networks("C", "artifact"),
    *,
    batch: int = 1,
    fission: FissionArray | None = None,
    monolithic: SystolicArray | None = None,
    energy: EnergyModel | None = None,
    depthwise: str = "pipelined",
) -> pd.DataFrame:
    """Fig. 17: each network alone on 16 fission subarrays vs the monolithic array.

    Args:
        networks: zoo names (default: the nine of Workload-C).
        batch: batch size.
        fission: the fission device (default :class:`FissionArray` with ``energy``).
        monolithic: the baseline (default :func:`monolithic_array`).
        energy: the energy model charged to both (defaults if ``None``; a ``fission`` given
            with its own ``energy`` keeps it).
        depthwise: the depthwise mapping of both systems (:func:`paper_network`).

    Returns:
        One row per network: ``network``, ``depthwise`` (has depthwise layers),
        ``monolithic_ms`` / ``planaria_ms`` (isolated latency, milliseconds),
        ``isolated_speedup``, ``monolithic_mj`` / ``planaria_mj`` (energy, millijoules),
        ``isolated_energy_ratio``.
    """
    model = energy if energy is not None else EnergyModel.planaria()
    fa = fission if fission is not None else fission_device(model)
    sa = monolithic if monolithic is not None else monolithic_array()
    full = fa.variant(subarrays=int(fa.num_subarrays))
    rows = []
    for name in networks:
        net = paper_network(name, depthwise)
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


def layer_speedups(
    networks: Sequence[str], *, depthwise: str = "pipelined", bound: float = DEPTHWISE_BOUND
) -> pd.DataFrame:
    """Every GEMM layer's speed-up on 16 fission subarrays over the monolithic array (batch 1),
    checked against the paper's bound (Sec. VI-B2: up to 16x, from 16 columns instead of one).

    Returns:
        One row per GEMM layer: ``network``, ``layer``, ``kind``, ``speedup``,
        ``streamed_per_tile`` (mean streamed rows ``a`` per monolithic tile), ``fill_bound``
        (``16 x (a + 384) / (a + 96)`` with Algorithm 1's fill and drain of ``SH + 2*SW``
        cycles per tile, 384 on 128x128 and 96 on 32x32; ``16`` without, the suite's default
        :data:`FILL_DRAIN`) and ``reason``: empty
        within ``bound``; the fill-and-drain reason where the speed-up is within
        ``fill_bound``; ``"unexplained"`` otherwise.
    """
    fa = fission_device()
    full = fa.variant(subarrays=int(fa.num_subarrays))
    sa = monolithic_array()
    rows = []
    for name in networks:
        net = paper_network(name, depthwise)
        cm = sa.layer_costs(net, 1)
        cf = full.layer_costs(net, 1)
        for i, ly in enumerate(net.layers):
            if not ly.is_gemm:
                continue
            sp = float(cm.cycles[i] / cf.cycles[i])
            a = ly.m * ly.groups / max(int(cm.tiles[i]), 1) * math.ceil(ly.n / sa.cols)
            a *= math.ceil(ly.k / sa.rows)
            om, of = (sa.rows + 2 * sa.cols, 32 + 2 * 32) if sa.fill_drain else (0, 0)
            fill = bound * (a + om) / (a + of)
            reason = ""
            if sp > bound:
                reason = (
                    f"fill/drain: Algorithm 1 charges SH+2SW per tile ({om} cycles on 128x128, "
                    f"{of} on 32x32); {a:.0f} rows per tile: 16 x {a + om:.0f}/{a + of:.0f} = "
                    f"{fill:.1f}x"
                    if sp <= fill * 1.01
                    else "unexplained"
                )
            rows.append(
                {
                    "network": name,
                    "layer": ly.name,
                    "kind": str(ly.kind),
                    "speedup": sp,
                    "streamed_per_tile": a,
                    "fill_bound": fill,
                    "reason": reason,
                }
            )
    return pd.DataFrame(rows)


def seed_stream(seed: int, scenario: str, qos: str) -> list[int]:
    """The random stream of ``(scenario, qos)``'s workload instances without the instance:
    ``[seed, scenario index, QoS index]`` (instance ``i`` draws from ``SeedSequence([*stream,
    i])``; the suite as a sweep sets it as ``workload.seed_stream`` with seeds ``i``)."""
    return [int(seed), "ABC".index(scenario), list(QOS_LEVELS).index(qos)]


def workload_instance(
    setup: MultiTenantSetup, scenario: str, qos: str, rate: float, instance: int = 0
) -> list[Request]:
    """Instance ``instance`` of Table I's ``scenario`` at QoS level ``qos`` and ``rate`` req/s
    (networks from ``setup.benchmarks``), drawn from ``SeedSequence([*seed_stream(...),
    instance])``."""
    key = np.random.SeedSequence([*seed_stream(setup.seed, scenario, qos), instance])
    return planaria_workload(
        scenario,
        qos,
        rate,
        n_requests=setup.n_requests,
        random_state=np.random.default_rng(key),
        benchmarks=setup.benchmarks,
        arrivals=setup.arrivals,
    )


def isolated_over_qos(
    setup: MultiTenantSetup, scenario: str, qos: str, system: str
) -> dict[str, list[float]]:
    """The networks of ``scenario`` whose isolated latency on ``system`` (``"planaria"``: 16
    subarrays, ``"prema"``: the monolithic array) exceeds their QoS-``qos`` bound, as
    ``{network: [isolated ms, bound ms]}``: such a network misses its bound at any rate."""
    from npusched.workloads.planaria import qos_table

    fa = fission_device()
    dev: Any = fa.variant(subarrays=int(fa.num_subarrays)) if system == "planaria" else None
    dev = dev if dev is not None else monolithic_array()
    out = {}
    for n, bound in qos_table(scenario, qos, setup.benchmarks).items():
        iso = compile_profile(paper_network(n, setup.depthwise), dev).isolated_latency(1)
        if iso > bound:
            out[n] = [_r(iso * 1e3), _r(bound * 1e3)]
    return out


def throughput_qps(
    simulate: Simulate,
    setup: MultiTenantSetup,
    scenario: str,
    qos: str,
    *,
    instance: int = 0,
    history: list[tuple[float, bool]] | None = None,
    cap: float | None = None,
) -> float:
    """Fig. 12: the highest Poisson rate (req/s) at which instance ``instance`` meets the SLA
    (99% of vision and 97% of GNMT requests within QoS), by
    :func:`npusched.metrics.throughput_at_sla` (galloping then bisection to ``rate_tol``),
    at most ``cap`` (the system's sustainable rate, :func:`stable_qps`): MLPerf's server
    scenario, whose SLA the paper adopts, runs at least 60 s (270,336 queries), over which a
    rate above what the system can serve grows its queue without bound and misses; a
    200-request instance above it is a burst that can still drain within loose bounds
    (Workload-A QoS-S: 15-100 ms).

    No artificial floor: if the SLA fails at ``setup.min_rate``, the rate is halved until it
    holds and the search brackets between the two. 0.0 only where it fails even once the mean
    gap exceeds 1000x the loosest QoS bound (requests then do not overlap: too many requests'
    isolated latencies exceed their bounds; :func:`isolated_over_qos` names them)."""
    from npusched.metrics import sla_met, throughput_at_sla

    def run(rate: float) -> pd.DataFrame:
        return simulate(workload_instance(setup, scenario, qos, rate, instance))

    lo = setup.min_rate
    # below this rate the mean gap is 1000x the loosest QoS bound: requests do not overlap
    floor = 1e-3 / max(r.slo_s or 0.0 for r in workload_instance(setup, scenario, qos, 1.0))
    while True:
        met = sla_met(run(lo), SLA_FRACTION)
        if history is not None:
            history.append((lo, met))
        if met:
            break
        if lo < floor:
            return 0.0
        lo *= 0.5
    if cap is not None and lo >= cap:
        return float(cap)
    hi = None if lo == setup.min_rate else 2.0 * lo
    if cap is not None and hi is not None:
        hi = min(hi, cap)
    found = throughput_at_sla(
        run,
        SLA_FRACTION,
        lo=lo,
        hi=hi,
        tol=setup.rate_tol,
        history=history,
        max_rate=cap if cap is not None else 1e12,
    )
    return float(min(found, cap)) if cap is not None else found


def _monolithic_capacity_qps(setup: MultiTenantSetup, scenario: str) -> float:
    """PREMA's one array on ``scenario``: 1 / the mean isolated latency of its networks alone
    on the monolithic array, requests per second (sustainable rate and capacity alike)."""
    return reference_rate(
        scenario, 1.0, monolithic_array(), benchmarks=setup.benchmarks, depthwise=setup.depthwise
    )


def stable_qps(setup: MultiTenantSetup, scenario: str) -> dict[str, float]:
    """Each system's sustainable rate on ``scenario`` (networks equally likely), requests
    per second: above it no schedule keeps up. PREMA's one array serves one request at a
    time: ``1 / mean T_mono``. Planaria's 16 subarrays are best used when every request gets
    the count ``n`` that minimises its subarray-time ``n x T(n)``: ``16 / mean min_n n T(n)``
    (``T(n)`` the isolated latency on ``n`` subarrays; ``n = 16`` gives ``capacity_qps``'s
    bound, smaller ``n`` are more efficient)."""
    fa = fission_device()
    size = int(fa.num_subarrays)
    best = []
    for n in scenario_networks(scenario, setup.benchmarks):
        prof = compile_profile(paper_network(n, setup.depthwise), fa)
        best.append(min(k * prof.isolated_latency(1, subarrays=k) for k in range(1, size + 1)))
    return {
        "planaria": float(size / np.mean(best)),
        "prema": _monolithic_capacity_qps(setup, scenario),
    }


def fixed_rate_point(
    simulate: Simulate, setup: MultiTenantSetup, scenario: str, qos: str, rate: float
) -> dict[str, Any]:
    """Fig. 13-15 at one rate over ``setup.instances`` instances: ``qos_rate`` (Fig. 13 as
    compared: the fraction of requests finishing within their QoS bound, mean over instances),
    ``sla_rate`` (the other reading: the fraction of instances meeting the SLA),
    ``fairness`` (PREMA's definition, mean over instances) and ``energy_j`` (mean total
    energy per instance, joules; NaN without an ``energy_j`` column), and per instance
    ``qos_all``, ``met_all``, ``fairness_all`` and ``energy_all``."""
    from npusched.metrics import fairness, sla_met, slo_attainment

    met, att, fair, energy = [], [], [], []
    for i in range(setup.instances):
        df = simulate(workload_instance(setup, scenario, qos, rate, i))
        met.append(bool(sla_met(df, SLA_FRACTION)))
        att.append(float(slo_attainment(df)))
        fair.append(float(fairness(df)))
        energy.append(float(df["energy_j"].sum()) if "energy_j" in df else float("nan"))
    return {
        "qos_rate": float(np.mean(att)),
        "sla_rate": float(np.mean(met)),
        "fairness": float(np.mean(fair)),
        "energy_j": float(np.mean(energy)),
        "qos_all": att,
        "met_all": met,
        "fairness_all": fair,
        "energy_all": energy,
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


def reference_rate(
    scenario: str,
    load: float,
    monolithic: SystolicArray | None = None,
    *,
    benchmarks: str = "artifact",
    depthwise: str = "pipelined",
) -> float:
    """A fixed rate: ``load`` / the scenario's mean isolated latency on the monolithic array
    (networks equally likely), requests per second. ``monolithic`` defaults to the registry's
    ``prema-npu`` (``SystolicArray()``, Algorithm 1's fill and drain: what ``npusched compare``
    and the suite as a sweep run); the reproduction passes :func:`monolithic_array`."""
    sa = monolithic if monolithic is not None else SystolicArray()
    iso = [
        compile_profile(paper_network(n, depthwise), sa).isolated_latency(1)
        for n in scenario_networks(scenario, benchmarks)
    ]
    return float(load / np.mean(iso))


def capacity_qps(setup: MultiTenantSetup, scenario: str) -> dict[str, float]:
    """Each system's capacity on ``scenario``, requests per second: 1 / the mean isolated
    latency of its networks (equally likely) alone on the monolithic array (``prema``) or on
    all 16 subarrays (``planaria``), no QoS bound; Fig. 12's throughputs are set against it."""
    fa = fission_device()
    full = fa.variant(subarrays=int(fa.num_subarrays))
    iso = [
        compile_profile(paper_network(n, setup.depthwise), full).isolated_latency(1)
        for n in scenario_networks(scenario, setup.benchmarks)
    ]
    return {
        "planaria": float(1.0 / np.mean(iso)),
        "prema": _monolithic_capacity_qps(setup, scenario),
    }


def prema_simulate(
    networks: Sequence[str] = scenario_networks("C", "artifact"),
    *,
    monolithic: SystolicArray | None = None,
    energy: EnergyModel | None = None,
    mechanism: str = "dynamic",
    depthwise: str = "pipelined",
    policy: str = "P-PREMA",
) -> Simulate:
    """PREMA on the monolithic array (the paper's baseline) as a :data:`Simulate`.

    PREMA as its paper defines its scheduler (PREMA Sec. V: "the scheduling policy (Algorithm
    2) determines which candidate inference task to execute next [...] once the candidate
    task is chosen, a preemption mechanism (Algorithm 3) is selected"): P-PREMA with the PREMA
    predictor and ``mechanism="dynamic"`` (Algorithm 3, DRAIN or CHECKPOINT per preemption;
    ``"checkpoint"`` was ours before, an ablation now). ``policy``: another temporal policy on
    the same array, for ablations; ``depthwise`` is the mapping of :func:`paper_network`. A
    request's energy is its executed layers' energy on the
    monolithic array (:func:`~npusched.hardware.energy.systolic_energy_j`; temporal sharing
    does not change it) plus the DRAM energy of its checkpoint save and restore
    (``2 x checkpoint_bytes``).
    """
    from npusched.policies import POLICIES
    from npusched.policies.temporal.predictor import make_estimator
    from npusched.sim.engine import Simulator

    model = energy if energy is not None else EnergyModel.planaria()
    sa = monolithic if monolithic is not None else monolithic_array()
    nets = {n: paper_network(n, depthwise) for n in networks}
    profiles = {n: compile_profile(net, sa) for n, net in nets.items()}
    layer_energy = {n: systolic_energy_j(sa, net, 1, model) for n, net in nets.items()}
    dram_j_per_byte = 8.0 * model.key()[3] * 1e-12

    def request_energy(name: str, seq_in: int, seq_out: int) -> float:
        plan = profiles[name].plan(
            1, None if seq_in < 0 else int(seq_in), None if seq_out < 0 else int(seq_out)
        )
        return float(layer_energy[name][plan.layer].sum())

    def simulate(requests: Sequence[Request]) -> pd.DataFrame:
        sched = POLICIES.create(policy, mechanism=mechanism)
        sim = Simulator(profiles, sched, estimator=make_estimator("prema"))
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
    networks: Sequence[str] = scenario_networks("C", "artifact"),
    *,
    fission: FissionArray | None = None,
    energy: EnergyModel | None = None,
    depthwise: str = "pipelined",
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

    model = energy if energy is not None else EnergyModel.planaria()
    fa = fission if fission is not None else fission_device(model)
    size = int(fa.num_subarrays)
    profiles = {n: compile_profile(paper_network(n, depthwise), fa) for n in networks}
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


def _gmean(values: Any) -> float:
    v = np.asarray(values, dtype=float)
    return math.exp(float(np.mean(libm.log(v)))) if len(v) else float("nan")


def _spread(values: Sequence[float]) -> list[float] | None:
    v = [x for x in values if math.isfinite(x)]
    return [_r(min(v)), _r(max(v))] if v else None


def _multi_tenant(
    setup: MultiTenantSetup,
    scenarios: Sequence[str],
    qos_levels: Sequence[str],
    *,
    progress: bool = False,
) -> dict[str, Any]:
    """Both systems' Fig. 12-15 per (workload, QoS), and Planaria's Fig. 16 node count at one
    throughput for every workload."""
    from npusched.report.progress import progress_bar

    nets = scenario_networks("C", setup.benchmarks)
    dwm = setup.depthwise
    systems = {
        "planaria": planaria_simulate(nets, depthwise=dwm),
        "prema": prema_simulate(nets, depthwise=dwm),
    }
    grid = [(w, q) for w in scenarios for q in qos_levels]
    capacity = {w: capacity_qps(setup, w) for w in scenarios}
    stable = {w: stable_qps(setup, w) for w in scenarios}
    mono = monolithic_array()
    fig16_rate = reference_rate(
        "C", setup.fig16_load, mono, benchmarks=setup.benchmarks, depthwise=dwm
    )
    out: dict[str, Any] = {}
    with progress_bar(len(grid), "Planaria Fig. 12-16", enabled=progress) as bar:
        for w, q in grid:
            rate = reference_rate(w, setup.load, mono, benchmarks=setup.benchmarks, depthwise=dwm)
            row: dict[str, Any] = {"fixed_rate_qps": rate, "fig16_rate_qps": fig16_rate}
            for name, sim in systems.items():
                tq = [
                    throughput_qps(sim, setup, w, q, instance=i, cap=stable[w][name])
                    for i in range(setup.throughput_instances)
                ]
                row.setdefault("throughput_qps", {})[name] = float(np.median(tq))
                row.setdefault("throughput_all", {})[name] = tq
                for k, v in fixed_rate_point(sim, setup, w, q, rate).items():
                    row.setdefault(k, {})[name] = v
            row["isolated_over_qos"] = {
                name: isolated_over_qos(setup, w, q, name) for name in systems
            }
            row["capacity_qps"] = capacity[w]
            row["stable_qps"] = stable[w]
            # Fig. 16 (Planaria only, as in the paper): nodes for 99% SLA at one rate
            row["nodes_for_sla"] = {
                "planaria": nodes_for_sla(
                    systems["planaria"], setup, w, q, fig16_rate, max_nodes=setup.max_nodes
                )
            }
            out.setdefault(w, {})[q] = row
            if bar is not None:
                bar.step(f"{w}/{q}")
    return out


def _ratio(by_system: dict[str, float], *, invert: bool = False) -> float:
    """planaria / prema (or prema / planaria with ``invert``); inf over a zero."""
    a, b = by_system["planaria"], by_system["prema"]
    if invert:
        a, b = b, a
    if b == 0:
        return float("inf") if a > 0 else float("nan")
    return float(a / b)


def _ratios(a: Sequence[float], b: Sequence[float]) -> list[float]:
    return [
        x / y if y > 0 else (math.inf if x > 0 else math.nan) for x, y in zip(a, b, strict=True)
    ]
