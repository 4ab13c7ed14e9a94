"""Planaria (MICRO 2020): the report's prose - the measured causes of the values that
differ from the paper (each from an ablation in ``benchmarks/planaria_ablations.py``)."""

from __future__ import annotations

import math
from typing import Any

from npusched.experiments.studies.planaria.points import _ratio

#: Measured causes of the values that differ (id prefix -> the ablation and what moved), from
#: ``benchmarks/planaria_ablations.py`` (quick setup: 200 requests x 4 instances, 3 throughput
#: instances; one factor changed at a time; tables in ``docs/papers/planaria.md``). The first
#: matching prefix applies.
CAUSES: dict[str, str] = {
    "fig17/energy_mean_x": (
        "energy model: the ratio is 2.24x without static energy, 2.73x with it, 3.41x with only "
        "the PE and static terms - the speed-up's level (3.63x), since both scale with powered "
        "subarrays x time; SRAM and DRAM bytes, which fission does not cut, pull it down (no DRAM "
        "term 3.20x, our 4 pJ/bit 3.02x). The paper's 6.3x exceeds its own 3.5x speed-up, which "
        "no term proportional to time or to bytes moved gives; its per-access energies are not "
        "published"
    ),
    "fig17/tiny-yolo/energy_x": (
        "energy model: PE and static terms only 2.49x, the speed-up's level (2.62x; paper 2.8x); "
        "all terms 2.14x, without static energy 1.84x. The paper's 5.5x is twice its own speed-up"
    ),
    "fig15/A/": (
        "energy per request, monolithic over Planaria on n subarrays (Workload-A networks): "
        "0.61-1.84x on 1 subarray, 1.09-1.85x on 2, 1.27-1.87x on 4-16: only a CNN alone on "
        "one subarray (0.61-0.95x) costs more than on the monolithic array. Measured A/S: 1.46x "
        "without static energy, 1.70x with it (idle subarrays gated), 1.22x with the chip's "
        "SRAM leaking over the whole run on both (the artifact's bank count), 1.82x without the "
        "fission overhead, 1.73x / 1.61x at loads 0.25 / 2.0: always less energy. The paper's "
        "reason ('slower execution manifests itself as increased total energy') needs a cost "
        "per unit of a task's time that grows when it runs on fewer subarrays; here n x T(n) / "
        "(16 x T_monolithic) is 0.43-0.62 for every Workload-A network at n >= 2 (up to 1.12 "
        "at n = 1)"
    ),
    "fig15/": (
        "energy model: the same networks' isolated energy ratio is 2.73x against the paper's "
        "6.3x (fig17/energy_mean_x: the paper's exceeds its own speed-up); without the paper's "
        "20.6% fission power overhead C/S is 2.61x, without static energy 2.01x, with the SRAM "
        "never gated 1.48x"
    ),
    "fig14/": (
        "instance size (the paper gives none; the artifact runs 50 requests): fairness is the "
        "min/max of progress over an instance's requests, set by the most delayed one, and PREMA's "
        "worst request gets worse with more requests. Planaria over PREMA at 50 / 100 / 200 / 500 "
        "requests: A/S 0.58 / 1.21 / 1.32 / 3.01x, A/M 0.77 / 1.22 / 1.37 / 1.59x, A/H 0.43 / 0.18 "
        "/ 1.02 / 1.34x, B/M 1.20 / 2.21 / 2.48 / 3.89x, C/S 2.44 / 1.66 / 3.39 / 4.45x, C/H "
        "0.42 / 1.76 / 2.75 / 6.66x. The rate moves it too (load 0.25 / 1.0 / 2.0: A/M 1.04 / "
        "1.37 / 0.47x, B/M 1.17 / 2.48 / 5.42x). Not the cause: full-size networks (A/S 0.63x), "
        "per-channel depthwise (A/S 1.32x, B/M 3.45x), the monolithic isolated time (A/S 1.26x, "
        "B/M 0.59x); PREMA scheduled by P-SJF instead: A/S 2.38x, B/M 5.73x"
    ),
    "fig16/": (
        "the one rate is fitted (the paper gives none): load 4.0 on the monolithic array "
        "running Workload-C, the best of loads 0.5-6 against the paper's nine counts (quick "
        "run, RMS log error 0.50); the node count grows with the rate (docs/papers/planaria.md)."
        " Workload-B's light networks meet QoS-S/M on one node at any rate tried (Planaria's "
        "throughput at SLA, fig12, is 2,400 req/s at B/S), where the paper needs 2-4"
    ),
}


#: Fig. 12's ablation of PREMA's scheduler (quick setup, ``benchmarks/planaria_ablations.py``).
_FIG12_SCHED = (
    "Scheduler, not array: with the monolithic array scheduled shortest-job-first (P-SJF) "
    "instead of PREMA's tokens, A/M falls from 6.86x to 2.82x (PREMA 236-328 req/s instead of "
    "83-118; the capacity bound is 2.19x), but C/S only to 38.9x: there the depthwise "
    "networks, 3.5-5.2 ms alone on the monolithic array against 10 ms QoS-S bounds (Fig. 17: "
    "9.6-13.1x slower than on 16 subarrays), miss behind any longer request: without the depthwise networks' requests C/S is 6.32x "
    "(paper 7.4x). Without "
    "GNMT requests A/M is 4.39x, C/S 50.5x. Not the cause (2-3 instances each): the SLA read "
    "as 99% of all vision and 97% of all GNMT requests pooled instead of per network (A/M "
    "6.8x, C/S 39.0x, B/S 64.4x); PREMA with Algorithm 3's dynamic mechanism instead of "
    "checkpointing (PREMA's median 118 / 35.5 / 36.5 req/s at A/M / C/S / B/S, ratios about "
    "6.6x / 48x / 65x)"
)
#: Fig. 13's readings measured (quick setup, ``benchmarks/planaria_ablations.py``).
_SLA_READINGS = (
    "Fig. 13 is compared as the gain in the fraction of requests within their QoS bound "
    "(ours: the paper's 'fraction of multi-tenant workloads that adheres to the SLA' read "
    "per request, as its 'both satisfy the SLAs 99% of the time' for A/S suggests). Read per "
    "instance (an instance meets the SLA or not) the gain is all or nothing at one rate: "
    "{inst:g} here; gains at loads 0.25 / 1.0 / 2.0 per instance: A/M 0 / 1 / 0.5, A/H "
    "0.75 / 0 / 0, C/H 0.25 / 0 / 0; per request at loads 0.5 / 1.0: A/M 0.01 / 0.13, A/H "
    "0.34 / 0.55, B/M 0.80 / 0.85, C/M 0.37 / 0.49, C/H 0.62 / 0.70. The paper's rate is not "
    "given (ours: load 1.0)"
)


def _sla_gain(p: dict[str, Any]) -> float:
    """Fig. 13's gain as compared: Planaria's fraction of requests within QoS minus PREMA's
    (``sla_rate``, the per-instance reading, for summaries written before ``qos_rate``)."""
    r = p.get("qos_rate") or p["sla_rate"]
    return float(r["planaria"] - r["prema"])


def _sla_cause(p: dict[str, Any], q: str, paper: float | None) -> str:
    """Why Fig. 13's gain differs: where PREMA cannot meet the QoS bound at any rate, and the
    two readings of the SLA satisfaction rate with the rate's effect (:data:`_SLA_READINGS`)."""
    gain = _sla_gain(p)
    if paper and 0.5 <= gain / paper <= 2.0:
        return ""
    inst = p["sla_rate"]["planaria"] - p["sla_rate"]["prema"]
    qr = p.get("qos_rate") or p["sla_rate"]
    head = (
        f"at the fixed rate {p['fixed_rate_qps']:.3g} req/s, {qr['planaria']:.1%} of Planaria's "
        f"and {qr['prema']:.1%} of PREMA's requests finish within QoS"
    )
    zero = _zero_cause(p, q)
    return "; ".join(x for x in (zero, head, _SLA_READINGS.format(inst=inst)) if x)


def _throughput_cause(p: dict[str, Any], paper: float | None) -> str:
    """Where Fig. 12's ratio is out of 0.5-2x of the paper's: how far each system's throughput
    at SLA falls below its capacity (measured), and the ablations of :data:`CAUSES`."""
    ours = _ratio(p["throughput_qps"])
    cap = p.get("capacity_qps")
    if paper is None or not math.isfinite(ours) or 0.5 <= ours / paper <= 2.0 or not cap:
        return ""
    tp = p["throughput_qps"]
    share = {n: tp[n] / cap[n] for n in ("planaria", "prema")}
    return (
        f"capacity (1 / mean isolated latency, no QoS): Planaria {cap['planaria']:.4g} req/s, "
        f"PREMA {cap['prema']:.4g} req/s, a {cap['planaria'] / cap['prema']:.3g}x bound at "
        f"saturation; at SLA Planaria reaches {share['planaria']:.0%} of its capacity and "
        f"PREMA {share['prema']:.1%} of its own (a network's SLA fails once more than 1% of "
        f"its requests, 3% for GNMT, miss their bound). " + _FIG12_SCHED
    )


def _zero_cause(p: dict[str, Any], q: str) -> str:
    """Why a system's throughput is 0 (measured: isolated latencies over the QoS bounds)."""
    parts = []
    for name in ("prema", "planaria"):
        over = p.get("isolated_over_qos", {}).get(name) or {}
        if p["throughput_qps"][name] == 0 and over:
            nets = ", ".join(f"{n} {iso:g} ms > {b:g} ms" for n, (iso, b) in over.items())
            where = "the monolithic array" if name == "prema" else "16 subarrays"
            parts.append(
                f"{name} 0 qps: alone on {where}, {nets} (QoS-{q}), so no rate meets the SLA"
            )
    return "; ".join(parts) + (_ZERO_READINGS if parts else "")


#: The readings checked for Fig. 12's zero throughputs (none lifts them).
_ZERO_READINGS = (
    ". Readings checked: the QoS levels as printed (1, 1/4, 1/16 x MLPerf's server bounds; "
    "the artifact's scheduler.ini has the same QoS-S bounds), the bound on the latency from "
    "arrival (MLPerf's server scenario), the SLA pooled over all vision requests (the "
    "network is 1/4 to 1/9 of them and misses every time, above 1%): each still 0. The "
    "paper's PREMA meets these points, so its monolithic array runs these networks faster "
    "than PREMA's cost model gives here"
)
