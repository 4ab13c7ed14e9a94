"""Planaria (MICRO 2020): the paper's numbers as data, each with its figure or section
(Sec. VI-B; the abstract), that ``comparisons`` sets ours against."""

from __future__ import annotations

#: The paper's Fig. 17 numbers (Sec. VI-B2) that ``report.md`` sets ours against.
PAPER: dict[str, float] = {
    "isolated_speedup_mean": 3.5,
    "isolated_energy_ratio_mean": 6.3,
    "isolated_speedup_tiny-yolov3": 2.8,
    "isolated_energy_ratio_tiny-yolov3": 5.5,
}

#: The paper's multi-tenant numbers (Sec. VI-B1 and the abstract), Planaria over PREMA, by
#: figure. ``fig13_sla_gain`` is Planaria's SLA satisfaction rate minus PREMA's (A/S: both meet
#: the SLA 99% of the time, a gain of 0; C/M from the abstract, whose "(45%, 15%, 16%)" lists
#: Workload-C in the order H, M, S against Sec. VI-B1's "16% to 45% for QoS-S to QoS-H").
#: ``fig15_energy_reduction_x`` is PREMA's energy / Planaria's: Workload-A uses 25% (S) and 11%
#: (M) *more* (1/1.25, 1/1.11); Workload-B gains "minimum of 5.6x and maximum of 12.1x" (the
#: QoS levels are not named: compared as the min and max over B's levels).
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
    "fig13_sla_gain": {
        "A/S": 0.0,
        "A/M": 0.14,
        "A/H": 0.28,
        "B/S": 0.51,
        "B/M": 0.31,
        "B/H": 0.22,
        "C/S": 0.16,
        "C/M": 0.15,
        "C/H": 0.45,
    },
    "fig14_fairness_x": {
        "A/S": 2.8,
        "A/M": 5.1,
        "A/H": 2.8,
        "B/M": 9.1,
        "C/S": 2.1,
        "C/M": 2.3,
        "C/H": 1.9,
    },
    "fig15_energy_reduction_x": {
        "A/S": 1 / 1.25,
        "A/M": 1 / 1.11,
        "B/min": 5.6,
        "B/max": 12.1,
        "C/S": 3.3,
        "C/M": 4.3,
        "C/H": 5.1,
    },
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

#: The abstract's Workload-C SLA gains as printed, "(45%, 15%, 16%)" (S, M, H in the order the
#: abstract lists fairness), set against Fig. 13's values in ``comparisons``.
PAPER_ABSTRACT_SLA_GAIN: dict[str, float] = {"C/S": 0.45, "C/M": 0.15, "C/H": 0.16}

#: Sec. VI-B2: fission runs 16 depthwise channels at once, "yielding up to 16x higher
#: utilization" over the monolithic array's one column: the per-layer speed-up bound.
DEPTHWISE_BOUND = 16.0

#: Points where the paper states an outcome in words instead of a number, which a value
#: without a ratio can agree with (:func:`~.figures.fidelity`): Fig. 12 Workload-B QoS-H,
#: "for QoS-H, the baseline PREMA does not meet the 99% QoS constraints" (Sec. VI-B1: PREMA
#: meets the SLA at no rate), and Fig. 13 Workload-A QoS-S, "both Planaria and PREMA satisfy
#: the SLAs 99% of the time" (a gain of 0: both keep at least :data:`SLA_AGREE` of their
#: requests within QoS).
PAPER_PREMA_NEVER_MEETS: tuple[str, ...] = ("B/H",)
PAPER_BOTH_MEET_SLA: tuple[str, ...] = ("A/S",)

#: "satisfy the SLAs 99% of the time": the fraction of requests within QoS at which the paper
#: counts a system as meeting the SLA in Fig. 13's words.
SLA_AGREE = 0.99
