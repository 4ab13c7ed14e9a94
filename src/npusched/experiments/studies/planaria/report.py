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
        "energy model: no accounting measured gives an energy reduction above the speed-up "
        "(2.61x), which the paper's 6.3x (against 3.5x) needs. Term by term on the "
        "artifact's ResNet-50, monolithic / Planaria mJ: PE 12.8 / 12.0, static 14.1 / 11.0, "
        "DRAM 12.6 / 10.3, SRAM 1.2 / 1.8, ring 0 / 0.9 (1.13x at a 1.28x speed-up); "
        "MobileNet-v1: PE 62.7 / 6.3, static 68.0 / 5.7, DRAM 6.1 / 5.6 (7.49x at 11.9x). "
        "Geometric means over the nine: 2.04x as modelled; 1.94x with the artifact's core "
        "accounting on both (stats.get_energy charges one 32x32 subarray's dynamic energy per "
        "cycle of a thread, not times the threads or the composed size), 1.14x with it and no "
        "leakage (the artifact adds none), 2.99x with it on Planaria only. With Algorithm 1's "
        "per-tile fill and drain (the previous model) 2.73x at a 3.63x speed-up"
    ),
    "fig17/tiny-yolo/energy_x": (
        "energy model: 1.64x at a 1.99x speed-up (paper 5.5x at 2.8x); 1.56x with the "
        "artifact's core accounting on both systems, 2.40x on Planaria only, 1.07x with it and "
        "no leakage: the paper's energy reduction is twice its own speed-up, which no term "
        "proportional to time or to bytes moved gives"
    ),
    "fig15/A/": (
        "energy per instance, PREMA over Planaria: Workload-A's networks gain only 1.23-1.37x "
        "on 16 subarrays (GNMT 1.00x), so Planaria's subarray-time is close to the monolithic "
        "array's and the ring bus, SRAM traffic and 20.6% fission overhead make it cost more "
        "(A/S 0.87x at load 1.0, 0.98x at load 0.5, 0.82x without static energy); with "
        "Algorithm 1's fill and drain (the previous model) 1.70x, the opposite way"
    ),
    "fig15/": (
        "energy model: the same networks' isolated energy ratio is 2.04x against the paper's "
        "6.3x (fig17/energy_mean_x: no accounting measured exceeds the speed-up, the paper's "
        "does); without static energy C/S is 1.43x, with Algorithm 1's fill and drain 2.44x"
    ),
    "fig14/B/": (
        "instance size (the paper gives none): fairness is a min/max over an instance's "
        "requests, and PREMA's most delayed request gets worse the longer the instance, while "
        "Planaria starts most requests at once. B/M, Planaria over PREMA (200 requests, the "
        "artifact's arrivals): 6.92x quick (4 instances), 4.51x over the full run's 20; with "
        "exponential gaps 3.92x quick, 4.45x full. The aggregation over instances is not "
        "given either: ours is the ratio of the two systems' mean fairness; the geometric "
        "mean of the per-instance ratios is 5.13x full (6.90x quick), their median 5.25x "
        "(not adopted: no rule of the paper or the artifact picks it). Measured with "
        "exponential gaps and PREMA on "
        "CHECKPOINT only (quick: 4 instances, "
        "the suite's seeds): 1.15x at 50 requests (the artifact's scheduler.ini num_tasks; "
        "1.25x over the full run's 80 instances of 50), 2.80x at 200 (the suite's), 3.81x at "
        "500; at load 0.5 1.20x. Larger instances are not in the paper and move Workload C's "
        "fairness out of band (C/M 4.20x at 200, 7.53x at 500; paper 2.3x), so the size stays "
        "ours (docs/papers/planaria.md, 'Instance size')"
    ),
    "fig14/C/": (
        "instances: fairness is a min/max over each instance's requests, mean over instances "
        "(the paper gives neither the instance size nor the count); where Planaria leads it "
        "grows with the size and scatters across instances. C/M, Planaria over PREMA at 200 "
        "requests: 5.83x over the quick run's 4 instances (the artifact's arrivals), 2.42x "
        "over the full run's 20 (paper 2.3x); with exponential gaps 4.20x quick, 3.74x full; "
        "C/M 4.20x at 200 requests, 7.53x at 500 (exponential gaps, PREMA on CHECKPOINT only)"
    ),
    "fig14/": (
        "capacity on Workload A: its networks gain only 1.23-1.37x on 16 subarrays over the "
        "monolithic array (the artifact's compute model; GNMT 1.00x), so at one rate both "
        "systems queue alike and Planaria's Algorithm 1, which gives a task the fewest "
        "subarrays that meet its deadline, stretches loose-QoS tasks against their 16-subarray "
        "isolated time. Planaria over PREMA, A/S / A/M / A/H: 0.47 / 0.27 / 0.16x at load 1.0 "
        "(quick run, the artifact's arrivals); 0.71 / 0.51 / 0.26x with exponential gaps; with "
        "those and PREMA on CHECKPOINT only (ours before; the rest of this list was "
        "measured so) 0.70 / 0.41 / 0.21x, "
        "0.73 / 0.80 / 0.47x at load 0.5; 0.44 / 0.19 / 0.08x at 500 requests; 0.65 / 0.40 / "
        "0.21x against the monolithic isolated time; 1.32 / 1.37 / 1.02x with Algorithm 1's "
        "per-tile fill and drain, where the monolithic array is 1.6-2.3x slower on these "
        "networks. Fairness also grows with the instance size where Planaria leads (C/S "
        "4.28x at 200 requests, 5.30x at 500; C/H 2.29x, 8.24x; B/M 2.80x, 3.81x) and moves "
        "with the rate (load 0.5: C/S 1.16x, B/M 1.20x): neither is given by the paper"
    ),
    "fig16/": (
        "the one rate is a fitted constant (the paper gives none): load 2.0 on the monolithic "
        "array running Workload-C (965 req/s), the grid point whose full-run counts are "
        "nearest the paper's nine in ln(nodes) (summed squares 3.24 / 2.70 / 2.63 / 2.82 / "
        "3.32 at loads 1.5 / 1.75 / 2 / 2.25 / 2.5, the artifact's arrivals; 3.5 and 1.88 "
        "with exponential gaps). Workload-B's light networks meet QoS-S/M on one or two nodes "
        "at every load, where the paper needs 2-4"
    ),
}


#: Fig. 12's ablation of PREMA's scheduler (quick setup, ``benchmarks/planaria_ablations.py``).
_FIG12_SCHED = (
    "{measured}. Measured before this model (Algorithm 1's fill and drain, 2-3 instances), "
    "not the cause: the SLA pooled over all vision and all GNMT requests (A/M 6.8x, C/S "
    "39.0x, B/S 64.4x, against 6.86 / 43.6 / 208x per network). PREMA now preempts by "
    "its own Algorithm 3 (DRAIN or CHECKPOINT); with CHECKPOINT only (ours before) B/S was "
    "54.2x and C/S 18.6x on the quick run"
)
#: The measured throughput ablations per point (quick setup, 3 instances,
#: ``benchmarks/planaria_ablations.py throughput``), Planaria over PREMA.
_FIG12_ABLATIONS: dict[str, str] = {
    "A/H": (
        "temporal sharing at a tight bound: at QoS-H a ResNet-50 request has 0.94 ms and takes "
        "0.60 ms alone on the monolithic array, so it misses whenever it waits more than "
        "0.34 ms behind (or is preempted by) another request; Planaria starts it at once on "
        "free subarrays. PREMA meets the SLA near 118 req/s (17% of its capacity) with the "
        "artifact's arrivals, near 22 req/s with exponential gaps (11.2x). {abl}"
    ),
    "B/S": (
        "the depthwise networks: alone on the monolithic array EfficientNet-B0, MobileNet-v1 "
        "and SSD-MobileNet take 2.9-4.2 ms (8.4-11.9x their 16-subarray time, the artifact's "
        "own one-column mapping) and miss their bounds behind one another (PREMA 192-228 "
        "req/s with the artifact's arrivals, 10.1x; 50-100 req/s with exponential gaps, "
        "34.2x). {abl}"
    ),
    "C/S": ("the depthwise networks, as at B/S. {abl}"),
}
#: Measured Fig. 12 ablations per point (quick setup, 3 instances,
#: ``benchmarks/planaria_ablations.py throughput POINT VARIANT``).
FIG12_MEASURED: dict[str, str] = {
    "A/H": (
        "Not PREMA's token order: with the array scheduled shortest-job-first (P-SJF) the "
        "ratio is 11.1x (PREMA 15-232 req/s)"
    ),
    "B/S": (
        "Without the depthwise networks' requests both systems meet the SLA up to their "
        "sustainable rate (7.86x, the capacity ratio)"
    ),
    "C/S": (
        "Without the depthwise networks' requests both systems meet the SLA up to their "
        "sustainable rate: 2.31x (paper 7.4x), the capacity ratio"
    ),
}
#: Fig. 13's readings measured (quick setup, ``benchmarks/planaria_ablations.py``).
_SLA_READINGS = (
    "Fig. 13 is compared as the gain in the fraction of requests within their QoS bound "
    "(ours: the paper's 'fraction of multi-tenant workloads that adheres to the SLA' read "
    "per request, as its 'both satisfy the SLAs 99% of the time' for A/S suggests). Read per "
    "instance (an instance meets the SLA or not) the gain is all or nothing at one rate: "
    "{inst:g} here. Measured in earlier rounds (exponential gaps, Algorithm 1's fill and "
    "drain): per instance at loads 0.25 / 1.0 / 2.0, A/M 0 / 1 / 0.5, A/H 0.75 / 0 / 0, C/H "
    "0.25 / 0 / 0; per request at loads 0.5 / 1.0, A/M 0.01 / 0.13, A/H 0.34 / 0.55, B/M "
    "0.80 / 0.85, C/M 0.37 / 0.49, C/H 0.62 / 0.70. The paper's rate is not given ('the same throughput' for both "
    "systems; ours: load 1.0 on the monolithic array); the artifact counts no SLA (its "
    "scheduler writes each task's finish time and QoS). Measured at the two rates either "
    "names (quick, the artifact's arrivals), per request: Fig. 16's one rate (965 req/s; "
    "the paper cites Fig. 13's A/S for Fig. 16's one node) A/S -0.016, A/M +0.001, B/M "
    "+0.79, C/M +0.46; the artifact's 0.5 ms mean gap (2,000 req/s) A/S -0.064, A/M -0.029: "
    "Workload A is then over both systems' capacity, so A/S falls below 99% on Planaria, "
    "against the paper's 'both satisfy the SLAs 99% of the time'. Per instance at load 1.0 "
    "over 20 instances of 200 requests: A/M +0.35, B/M +1, C/M +1, C/H 0 (of 50: A/M "
    "+0.45, C/H +0.35)"
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
    sign = ""
    qa = p.get("qos_all")
    d = [a - b for a, b in zip(qa["planaria"], qa["prema"], strict=True)] if qa else []
    if paper and gain < 0.5 * paper and d and min(d) <= 0.0 <= max(d):
        cap = p.get("capacity_qps") or {}
        load = p["fixed_rate_qps"] / cap["planaria"] if cap.get("planaria") else float("nan")
        sign = (
            f"the gain {gain:+.4f} lies within the instances' spread [{min(d):+.3f}, "
            f"{max(d):+.3f}] around 0: the fixed rate (load 1.0 on the monolithic array) is "
            f"{load:.0%} of Planaria's capacity here, whose networks gain only 1.23-1.37x on 16 "
            "subarrays (GNMT 1.00x), so both systems queue alike (with exponential gaps at "
            "load 0.5 the gain was +0.001; with Algorithm 1's fill and drain, the previous "
            "model, +0.13)"
        )
    return "; ".join(x for x in (sign, zero, head, _SLA_READINGS.format(inst=inst)) if x)


def _throughput_cause(p: dict[str, Any], paper: float | None, point: str = "") -> str:
    """Where Fig. 12's ratio is out of 0.5-2x of the paper's: how far each system's throughput
    at SLA falls below its capacity (measured), and the ablations of :data:`CAUSES`."""
    ours = _ratio(p["throughput_qps"])
    cap = p.get("capacity_qps")
    if paper is None or not math.isfinite(ours) or 0.5 <= ours / paper <= 2.0 or not cap:
        return ""
    tp = p["throughput_qps"]
    share = {n: tp[n] / cap[n] for n in ("planaria", "prema")}
    abl = _FIG12_ABLATIONS.get(point, "{abl}").format(abl=FIG12_MEASURED.get(point, ""))
    return (
        f"capacity (1 / mean isolated latency, no QoS): Planaria {cap['planaria']:.4g} req/s, "
        f"PREMA {cap['prema']:.4g} req/s, a {cap['planaria'] / cap['prema']:.3g}x bound at "
        f"saturation; at SLA Planaria reaches {share['planaria']:.0%} of its capacity and "
        f"PREMA {share['prema']:.1%} of its own (a network's SLA fails once more than 1% of "
        f"its requests, 3% for GNMT, miss their bound). "
        + _FIG12_SCHED.format(measured=abl.strip())
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
    "paper's PREMA meets B/M, C/M and C/H, but even the authors' own compute model "
    "(he-actlab/planaria.code: a depthwise layer is one 1-in, 1-out convolution per channel, "
    "b*oh*ow cycles each on any array) gives MobileNet-v1's layers 2.84 ms of compute on a "
    "128x128 array, over QoS-M's 2.5 ms; ours is 2.87 ms with memory stalls. The one-column "
    "depthwise mapping the paper describes (Sec. VI-B2) costs MobileNet-v1's 13 depthwise "
    "layers alone 1.93 M cycles (2.76 ms at 700 MHz), SSD-MobileNet-v1's 6 layers 2.76 M "
    "(3.95 ms), EfficientNet-B0's 16 layers 2.31 M (3.30 ms). Clock and memory, both "
    "specified: at the 1 GHz the paper says its design meets (it runs both arrays at "
    "PREMA's 700 MHz) PREMA still misses QoS-M (EfficientNet-B0 2.502 ms, SSD-MobileNet-v1 "
    "2.96 ms > 2.5 ms; benchmarks/planaria_ablations.py clock 1000), and the artifact's "
    "off-chip interface (2864 bits per cycle: 250.6 GB/s at 700 MHz) is narrower than the "
    "paper's 358 GB/s (PREMA's Table I), so it could only lengthen them. No reading the "
    "paper or the artifact gives lets PREMA meet QoS-M on these networks"
)
