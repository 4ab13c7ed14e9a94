"""The reproduction contract's ``comparisons`` records, read for the report.

A suite's ``summary.json`` carries ``comparisons`` (see ``DESIGN.md``, "The reproduction
contract"): one record per value of the paper the suite compares, with ``id``, ``figure``,
``label``, ``paper``, ``ours``, ``ratio``, ``direction``, ``cause`` and ``spread``. A suite that
does not write them yet has only a ``headline`` (``{key: {"ours": x, "paper": y}}``); its
records are then built here from the headline with the labels of :data:`HEADLINE_LABELS`
(readable label with the unit, the paper's figure, and the baseline that decides the
direction), and marked ``source = "headline"``.

A record is *flagged* when its direction is ``opposite`` or its ratio lies outside
:data:`RATIO_BAND`; the report shows the flag with the record's ``cause`` beside it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

__all__ = ["HEADLINE_LABELS", "RATIO_BAND", "flagged", "records_from_summary"]

#: ``ours / paper`` inside this closed interval is not flagged (the contract's 0.5-2).
RATIO_BAND = (0.5, 2.0)

#: Headline key -> (label with unit, figure, baseline). ``baseline`` is the value an effect is
#: judged against for its direction (1 for a gain "x", 0 for a change or a percentage
#: improvement, ``None``: an absolute quantity without a direction).
HEADLINE_LABELS: dict[str, tuple[str, str, float | None]] = {
    # PREMA (HPCA 2020)
    "antt_improvement_prema_dynamic": ("ANTT gain, P-PREMA (dynamic) over NP-FCFS (x)", "Fig. 12", 1.0),
    "fairness_improvement_prema_dynamic": ("fairness gain, P-PREMA (dynamic) over NP-FCFS (x)", "Fig. 12", 1.0),
    "stp_improvement_prema_dynamic": ("STP gain, P-PREMA (dynamic) over NP-FCFS (x)", "Fig. 12", 1.0),
    "np_prema_antt_vs_sjf": ("NP-PREMA's share of NP-SJF's ANTT (NP-SJF ANTT / NP-PREMA ANTT)", "Fig. 11", None),
    "predictor_mape_percent": ("predictor error, MAPE over all requests (%)", "Sec. VI-A", None),
    "sla_violation_prema_n4_max": ("SLA violation rate at N=4, P-PREMA (dynamic) (fraction)", "Fig. 13", None),
    "sla_violation_np_fcfs": ("SLA violation rate at N=4, NP-FCFS (fraction)", "Fig. 13", None),
    "p95_high_np_fcfs_avg": ("p95 high-priority latency / isolated, NP-FCFS, mean over DNNs (x)", "Fig. 14", None),
    "p95_high_np_fcfs_max": ("p95 high-priority latency / isolated, NP-FCFS, worst DNN (x)", "Fig. 14", None),
    "p95_high_p_sjf_max": ("p95 high-priority latency / isolated, P-SJF (dynamic), worst DNN (x)", "Fig. 14", None),
    "p95_high_prema_avg": ("p95 high-priority latency / isolated, P-PREMA (dynamic), mean (x)", "Fig. 14", None),
    "p95_high_prema_max": ("p95 high-priority latency / isolated, P-PREMA (dynamic), worst DNN (x)", "Fig. 14", None),
    "checkpoint_latency_us_avg": ("CHECKPOINT preemption latency, mean (us)", "Fig. 5a", None),
    "checkpoint_latency_us_max": ("CHECKPOINT preemption latency, max (us)", "Fig. 5a", None),
    "ntt_improvement_kill": ("preempting task's NTT gain with KILL (x)", "Fig. 6b", 1.0),
    "ntt_improvement_checkpoint": ("preempting task's NTT gain with CHECKPOINT (x)", "Fig. 6b", 1.0),
    "drain_wait_ms_avg": ("preempting task's wait under DRAIN, mean (ms)", "Fig. 5b", None),
    "oracle_fraction": ("P-PREMA (dynamic) ANTT as a fraction of the oracle's", "Sec. VI-A", None),
    # Planaria (MICRO 2020)
    "isolated_speedup_mean": ("isolated speedup over the monolithic array, mean over DNNs (x)", "Fig. 17", 1.0),
    "isolated_energy_ratio_mean": ("isolated energy reduction over the monolithic array, mean (x)", "Fig. 17", 1.0),
    "isolated_speedup_tiny-yolov3": ("isolated speedup, Tiny-YOLOv3 (x)", "Fig. 17", 1.0),
    "isolated_energy_ratio_tiny-yolov3": ("isolated energy reduction, Tiny-YOLOv3 (x)", "Fig. 17", 1.0),
    "isolated_speedup_mean_depthwise": ("isolated speedup, mean over depthwise DNNs (x)", "Fig. 17", 1.0),
    "isolated_speedup_mean_other": ("isolated speedup, mean over the other DNNs (x)", "Fig. 17", 1.0),
    # Layer-wise DFS
    "fps_gain_mean": ("FPS gain of DFS over DVFS, mean over networks (fraction)", "Fig. 5", 0.0),
    "energy_change_mean": ("energy per frame, DFS vs DVFS, mean (fraction)", "Fig. 6", 0.0),
    "avg_power_change_mean": ("average power, DFS vs DVFS, mean (fraction)", "Fig. 6", 0.0),
    "dfs_peak_power_max_w": ("DFS peak power, max over networks (W)", "Fig. 6", None),
    "dfs_peak_power_5ms_max_w": ("DFS peak of 5 ms power averages (PMIC), max (W)", "Fig. 6", None),
    "dvfs_peak_power_max_w": ("DVFS peak power, max over networks (W)", "Fig. 6", None),
    "mean_layer_time_s": ("mean layer time under DFS (s)", "Sec. 5", None),
    "dfs_overhead_mean": ("DFS clock-switch overhead, mean (fraction of frame time)", "Sec. 5", None),
    "fps_gain_squeezenet": ("FPS gain of DFS over DVFS, SqueezeNet (fraction)", "Fig. 5", 0.0),
    "energy_change_squeezenet": ("energy per frame, DFS vs DVFS, SqueezeNet (fraction)", "Fig. 6", 0.0),
    "avg_power_change_squeezenet": ("average power, DFS vs DVFS, SqueezeNet (fraction)", "Fig. 6", 0.0),
    # Fluid Batching
    "avg_latency_gain_vs_best_adaptb_resnet-50": ("average-latency gain, FluidB over the best AdaptB, ResNet-50 (x)", "Fig. 7", 1.0),
    "slo_satisfaction_gain_vs_best_adaptb_resnet-50": ("SLO-satisfaction gain, FluidB over the best AdaptB, ResNet-50 (x)", "Fig. 9", 1.0),
    "avg_latency_gain_vs_best_adaptb_inception-v3": ("average-latency gain, FluidB over the best AdaptB, Inception-v3 (x)", "Fig. 7", 1.0),
    "slo_satisfaction_gain_vs_best_adaptb_inception-v3": ("SLO-satisfaction gain, FluidB over the best AdaptB, Inception-v3 (x)", "Fig. 9", 1.0),
    "invocations_lazybatching_over_fluidb_resnet-50": ("NPU invocations, LazyBatching over FluidB, ResNet-50 (x)", "Table II", 1.0),
    # HaX-CoNN (PPoPP 2024)
    "table6_improvement_pct_mean": ("latency improvement over the best baseline, mean over experiments (%)", "Table 6", 0.0),
    "table6_improvement_pct_max": ("latency improvement over the best baseline, max (%)", "Table 6", 0.0),
    "table6_improvement_pct_min": ("latency improvement over the best baseline, min (%)", "Table 6", 0.0),
}


def _num(v: Any) -> float | None:
    if isinstance(v, bool) or not isinstance(v, int | float):
        return None
    f = float(v)
    return f if math.isfinite(f) else None


def _ratio(ours: float | None, paper: float | None) -> float | None:
    if ours is None or paper is None or paper == 0.0:
        return None
    return ours / paper


def _direction(ours: float | None, paper: float | None, baseline: float | None) -> str:
    if ours is None or paper is None or baseline is None:
        return "n/a"
    a, b = ours - baseline, paper - baseline
    if a == 0.0 or b == 0.0:
        return "same" if a == b else "n/a"
    return "same" if (a > 0) == (b > 0) else "opposite"


def flagged(record: Mapping[str, Any]) -> bool:
    """Whether the contract asks for a cause: direction ``opposite``, or ``ours / paper``
    outside :data:`RATIO_BAND`."""
    if record.get("direction") == "opposite":
        return True
    r = _num(record.get("ratio"))
    return r is not None and not (RATIO_BAND[0] <= r <= RATIO_BAND[1])


def _normalise(rec: Mapping[str, Any], source: str) -> dict[str, Any]:
    ours, paper = _num(rec.get("ours")), _num(rec.get("paper"))
    ratio = _num(rec.get("ratio"))
    if ratio is None:
        ratio = _ratio(ours, paper)
    spread = rec.get("spread")
    if not (isinstance(spread, list | tuple) and len(spread) == 2):
        spread = None
    out = {
        "id": str(rec.get("id", "")),
        "figure": str(rec.get("figure") or ""),
        "label": str(rec.get("label") or rec.get("id", "")),
        "paper": paper,
        "paper_raw": rec.get("paper"),
        "ours": ours,
        "ours_raw": rec.get("ours"),
        "ratio": ratio,
        "direction": str(rec.get("direction") or "n/a"),
        "cause": str(rec.get("cause") or ""),
        "spread": None if spread is None else [_num(spread[0]), _num(spread[1])],
        "source": source,
    }
    out["flag"] = flagged(out)
    return out


def records_from_summary(summary: Mapping[str, Any]) -> tuple[list[dict[str, Any]], str]:
    """The suite's comparison records, normalised (numbers or ``None``, ``ratio`` filled in,
    ``flag`` set), and where they came from: ``"comparisons"``, ``"headline"`` (the fallback
    described in the module docstring) or ``"none"``."""
    comps = summary.get("comparisons")
    if isinstance(comps, list) and comps:
        return [_normalise(r, "comparisons") for r in comps if isinstance(r, Mapping)], "comparisons"
    head = summary.get("headline")
    if not isinstance(head, Mapping) or not head:
        return [], "none"
    rows = []
    for key, val in head.items():
        if not isinstance(val, Mapping):
            continue
        label, fig, base = HEADLINE_LABELS.get(
            str(key), (str(key).replace("_", " "), "", None)
        )
        ours, paper = _num(val.get("ours")), _num(val.get("paper"))
        rec = {
            "id": key,
            "figure": val.get("figure", fig),
            "label": val.get("label", label),
            "paper": paper,
            "ours": ours,
            "direction": _direction(ours, paper, base),
            "cause": val.get("cause", ""),
        }
        rows.append(_normalise(rec, "headline"))
    return rows, "headline"
