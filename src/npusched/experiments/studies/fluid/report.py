"""Fluid Batching: the ``comparisons`` records and the report's prose (the measured causes of
the values outside 0.5-2x, one factor at a time)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from npusched.experiments.studies.fluid.points import FIG10_CONFIGS, TABLE2_ABLATIONS, c_mapping
from npusched.models import get_network

__all__ = ["comparisons", "headline_causes", "report"]


def _serving_report(summary: dict[str, Any]) -> list[str]:
    lines = [
        "## Fig. 7/8: per policy and arrival rate (mean over seeds)",
        "",
        f"Setup: {summary['serving_setup']['seeds']} seed(s), "
        f"{summary['serving_setup']['samples_per_point']} samples per point, NPU designs: "
        f"{summary['serving_setup']['designs']}.",
        "",
    ]
    for model, pols in summary["serving"].items():
        rates = list(next(iter(pols.values())).keys())
        for metric, scale, unit in (
            ("avg_latency_s", 1e3, "ms"),
            ("p99_latency_s", 1e3, "ms"),
            ("violation_rate", 100, "%"),
            ("utilisation", 100, "%"),
            ("processing_rate", 1, "samples/s"),
        ):
            lines.append(f"### {model}: {metric} ({unit})")
            lines.append("")
            lines.append("| policy | " + " | ".join(f"{r}/s" for r in rates) + " |")
            lines.append("|---|" + "---|" * len(rates))
            for pol, by_rate in pols.items():
                vals = " | ".join(f"{by_rate[r][metric] * scale:.1f}" for r in rates)
                lines.append(f"| {pol} | {vals} |")
            lines.append("")
    lines += [
        "## Table II: FluidB vs LazyBatching (ours; paper in brackets)",
        "",
        "| model | board | rate | SLO | Lazy avg (ms) | Lazy viol. | FluidB avg (ms) | "
        "FluidB viol. | avg-latency gain |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in summary["table2"]:
        lines.append(
            f"| {r['model']} | {r['board']} | {r['rate']:g}/s | {r['slo_s'] * 1e3:.0f} ms | "
            f"{r['lazy_avg_latency_s'] * 1e3:.0f} ({r['paper_lazy'][0] * 1e3:.0f}) | "
            f"{100 * r['lazy_violation_rate']:.1f}% ({100 * r['paper_lazy'][1]:.1f}%) | "
            f"{r['fluidb_avg_latency_s'] * 1e3:.0f} ({r['paper_fluidb'][0] * 1e3:.0f}) | "
            f"{100 * r['fluidb_violation_rate']:.1f}% ({100 * r['paper_fluidb'][1]:.1f}%) | "
            f"{r['avg_latency_gain']:.2f}x ({r['paper_gain']:.2f}x) |"
        )
    lines += ["", "## Scheduler invocations per sample (engine, mean over rates)", ""]
    for model, v in summary["invocations"].items():
        lines.append(
            f"- {model}: LazyBatching {v['lazybatching']:.1f}, FluidB {v['fluidb']:.2f}: "
            f"{v['ratio']:.1f}x (paper: 16.6x for ResNet-50)"
        )
    lines += [
        "",
        "## Headline: FluidB vs the best AdaptB variant at each rate (mean)",
        "",
        "| quantity | ours | paper (averaged over its setups) |",
        "|---|---:|---:|",
    ]
    for key, v in summary["headline"].items():
        lines.append(f"| {key} | {v['ours']:.2f}x | {v['paper']:.2f}x |")
    abl = summary.get("table2_ablations")
    if abl:
        lines += [
            "",
            "## Table II, one factor at a time (seed 0)",
            "",
            "| variant | model | board | Lazy viol. | FluidB viol. | avg-latency gain |",
            "|---|---|---|---:|---:|---:|",
        ]
        for r in abl:
            lines.append(
                f"| {r['variant']} | {r['model']} | {r['board']} | "
                f"{100 * r['lazy_violation_rate']:.1f}% | {100 * r['fluidb_violation_rate']:.1f}% "
                f"| {r['avg_latency_gain']:.2f}x |"
            )
        lines += ["", *(f"- `{k}`: {v[0]}" for k, v in TABLE2_ABLATIONS.items())]
    lines += [
        "",
        "Utilisation is the NPU's efficiency while busy (executed operations over peak "
        "operations in the time it executes); `run_utilisation` in the CSVs is over the whole run.",
        "",
        "Fig. 9 (violation rate vs SLO): `fig9.csv`, `fig9_<model>.png`.",
        "",
    ]
    comps = summary.get("comparisons") or []
    if comps:
        lines += [
            "## Comparisons with the paper (`comparisons` in summary.json)",
            "",
            "| id | paper | ours | ratio | direction | cause |",
            "|---|---:|---:|---:|---|---|",
        ]
        for c in comps:
            if c["paper"] is None:
                continue
            ratio = "-" if c["ratio"] is None else f"{c['ratio']:.2f}"
            ours = "-" if c["ours"] is None else f"{c['ours']:.4g}"
            lines.append(
                f"| {c['id']} | {c['paper']:.4g} | {ours} | {ratio} | {c['direction']} | "
                f"{c['cause']} |"
            )
        lines.append("")
    return lines


def report(
    fig: pd.DataFrame,
    dse: pd.DataFrame,
    quick: bool,
    inv: dict[str, dict[str, float]],
    summary: dict[str, Any] | None = None,
) -> str:
    lines = [
        "# Fluid Batching (Kouris et al.) reproduced with npusched",
        "",
        "DSE (Table I), the NPU ablation (Fig. 10) and, on the engine, the serving experiments "
        "(Fig. 7-9, Table II)." + (" Quick mode (coarser search, two pairs)." if quick else ""),
        "",
        "## DSE: chosen design points vs Table I",
        "",
        "| model | board | ours <T_R,T_P,T_C> | DSP / BRAM % | paper | paper DSP / BRAM % "
        "(our model) | paper's design under our model |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in dse.to_dict(orient="records"):
        lines.append(
            f"| {r['model']} | {r['board']} | {r['ours']} | {r['ours_dsp_pct']:.2f} / "
            f"{r['ours_bram_pct']:.2f} | {r['paper']} | {r['paper_dsp_pct']:.2f} / "
            f"{r['paper_bram_pct']:.2f} | {100 * r['paper_over_ours']:.1f}% of ours |"
        )
    lines += ["", "## Fig. 10: throughput (GOP/s) vs batch size", ""]
    for (model, board), g in fig.groupby(["model", "board"], sort=False):
        piv = g.pivot(index="config", columns="batch", values="throughput_gops")
        piv = piv.loc[[c for c in FIG10_CONFIGS if c in piv.index]]
        lines.append(
            f"### {model} on {str(board).upper()} (peak {g['peak_gops'].iloc[0]:.0f} GOP/s)"
        )
        lines.append("")
        lines.append("| config | " + " | ".join(f"B={b}" for b in piv.columns) + " |")
        lines.append("|---|" + "---|" * len(piv.columns))
        for cfg, row in piv.iterrows():
            lines.append(f"| {cfg} | " + " | ".join(f"{v:.1f}" for v in row) + " |")
        lines.append("")
    lines += [
        "## Scheduler invocations per sample (analytical, batch of 1, no backfill)",
        "",
        "| model | FluidB | LazyBatching | ratio (paper: 16.6x for ResNet-50) |",
        "|---|---|---|---|",
        *(
            f"| {m} | {v['fluidb']:.2f} | {v['lazybatching']:.1f} | {v['ratio']:.1f}x |"
            for m, v in inv.items()
        ),
        "",
    ]
    if summary is not None and "table2" in summary:
        lines += _serving_report(summary)
    else:
        lines += [
            "## Serving experiments not run (--no-serving)",
            "",
        ]
    return "\n".join(lines)


def headline_causes(summary: dict[str, Any]) -> dict[str, str]:
    """Measured causes of the headline values outside 0.5-2x (see :func:`_comparisons`)."""
    out: dict[str, str] = {}
    serving = summary.get("serving")
    if not serving:
        return out
    viol = []
    for pols in serving.values():
        for rate in next(iter(pols.values())):
            viol.append(min(v[rate]["violation_rate"] for k, v in pols.items() if "AdaptB" in k))
    abl = [r for r in summary.get("table2_ablations", []) if r["variant"] == "arrival_cv2"]
    cv2 = (
        "; Table II with gamma arrivals of CV 2 (one factor): LazyBatching violates "
        + ", ".join(f"{100 * r['lazy_violation_rate']:.0f}%" for r in abl)
        + " (paper 14-35%)"
        if abl
        else ""
    )
    out["slo_satisfaction_gain_vs_best_adaptb"] = (
        f"the best AdaptB variant violates the SLO in {100 * float(np.mean(viol)):.1f}% of "
        "samples on average over our rates (a 6.7x satisfaction gain needs the baselines to "
        "violate in ~85%): our Poisson arrivals and deterministic layer times leave little tail"
        + cv2
    )
    for model in ("resnet-50", "inception-v3"):
        key = f"utilisation_gain_over_serial_{model}"
        h = summary.get("headline", {}).get(key)
        if h is None:
            continue
        pols = serving.get(model, {})
        rates = [f"{r:g}" for r in h.get("rates", [])]
        ser = [pols["SERIAL"][r]["utilisation"] for r in rates if r in pols.get("SERIAL", {})]
        fb = [pols["FluidB"][r]["utilisation"] for r in rates if r in pols.get("FluidB", {})]
        if ser and fb:
            out[key] = (
                f"at our rates {', '.join(rates)}/s SERIAL already runs at "
                f"{100 * float(np.mean(ser)):.0f}% of peak while busy (its own DSE design at "
                f"B = 1, Fig. 10), FluidB at {100 * float(np.mean(fb)):.0f}%: the gap is the "
                "batch-1 efficiency our cost model gives the DSE designs"
            )
    return out


def _ablation_cause(summary: dict[str, Any], model: str, board: str, what: str) -> str:
    """The measured movement of one Table II row's ``what`` (``gain``, ``violation``) under each
    one-factor ablation (seed 0), as a cause string."""
    rows = [
        r
        for r in summary.get("table2_ablations", [])
        if r["model"] == model and r["board"] == board
    ]
    if not rows:
        return "not measured (run without ablations)"
    parts = []
    for r in rows:
        if what == "gain":
            parts.append(f"{r['variant']}: {r['avg_latency_gain']:.2f}x")
        else:
            parts.append(
                f"{r['variant']}: Lazy {100 * r['lazy_violation_rate']:.1f}% / "
                f"FluidB {100 * r['fluidb_violation_rate']:.1f}%"
            )
    return "one factor at a time, seed 0: " + "; ".join(parts)


def comparisons(summary: dict[str, Any]) -> list[dict[str, Any]]:
    """The ``comparisons`` records (``DESIGN.md``): Table I points, Table II rows, the
    Fig. 7-9 values the paper's text gives, the scheduler invocations and the headline."""
    from npusched.experiments.reproduce._fidelity import comparison

    out: list[dict[str, Any]] = []
    for r in summary["dse"]:
        key = f"table1/{r['model']}/{r['board']}"
        ours = [int(x) for x in r["ours"].strip("<>").split(",")]
        paper = [int(x) for x in r["paper"].strip("<>").split(",")]
        net = get_network(str(r["model"]))
        cause = (
            f"the resource terms agree (our BRAM model allows T_R <= "
            f"{r['paper_tr_by_our_bram_model']} at the paper's <T_P, T_C>, DSP use "
            f"{r['paper_dsp_pct']:.1f}%); the throughput term disagrees: our model rates the "
            f"paper's design at {100 * r['paper_over_ours']:.1f}% of ours (GOP/s summed over "
            f"B = 1..8) because it pads every layer's C to a multiple of T_C, which maps the "
            f"network's output channels at {100 * c_mapping(net, paper[2]):.0f}% with the "
            f"paper's T_C = {paper[2]} and {100 * c_mapping(net, ours[2]):.0f}% with ours"
        )
        for i, name in enumerate(("T_R", "T_P", "T_C")):
            out.append(
                comparison(
                    f"{key}/{name}",
                    "Table I",
                    f"{name} of the DSE's design, {r['model']} on {r['board'].upper()}",
                    paper[i],
                    ours[i],
                    cause=cause,
                )
            )
    for r in summary.get("table2", []):
        key = f"table2/{r['model']}/{r['board']}"
        where = f"{r['model']} on {r['board'].upper()}, {r['rate']:g}/s"
        spread = summary.get("spread", {}).get(key)
        out.append(
            comparison(
                f"{key}/avg_latency_gain_x",
                "Table II",
                f"average latency, LazyBatching over FluidB (x), {where}",
                r["paper_gain"],
                r["avg_latency_gain"],
                kind="gain",
                cause=_ablation_cause(summary, r["model"], r["board"], "gain"),
                spread=spread,
            )
        )
        out.append(
            comparison(
                f"{key}/violation_reduction",
                "Table II",
                f"violation rate, LazyBatching minus FluidB (fraction), {where}",
                r["paper_lazy"][1] - r["paper_fluidb"][1],
                r["lazy_violation_rate"] - r["fluidb_violation_rate"],
                kind="change",
                cause=_ablation_cause(summary, r["model"], r["board"], "violation"),
            )
        )
        for pol, ours_avg, ours_v, paper in (
            ("lazy", r["lazy_avg_latency_s"], r["lazy_violation_rate"], r["paper_lazy"]),
            ("fluidb", r["fluidb_avg_latency_s"], r["fluidb_violation_rate"], r["paper_fluidb"]),
        ):
            name = "LazyBatching" if pol == "lazy" else "FluidB"
            out.append(
                comparison(
                    f"{key}/{pol}_avg_latency_s",
                    "Table II",
                    f"{name} average latency (s), {where}",
                    paper[0],
                    ours_avg,
                    cause=_ablation_cause(summary, r["model"], r["board"], "gain")
                    + " (absolute latencies: see service_x2)",
                )
            )
            out.append(
                comparison(
                    f"{key}/{pol}_violation_rate",
                    "Table II",
                    f"{name} violation rate (fraction), {where}",
                    paper[1],
                    ours_v,
                    cause=_ablation_cause(summary, r["model"], r["board"], "violation"),
                )
            )
    head = summary.get("headline", {})
    labels = {
        "avg_latency_gain_vs_best_adaptb": (
            "abstract",
            "average latency, best AdaptB over FluidB, mean over rates and setups (x)",
            "gain",
        ),
        "slo_satisfaction_gain_vs_best_adaptb": (
            "abstract",
            "SLO satisfaction (1 - violation rate), FluidB over best AdaptB, mean (x)",
            "gain",
        ),
        "invocations_lazybatching_over_fluidb_resnet-50": (
            "Sec. III-B",
            "scheduler invocations, LazyBatching over FluidB, ResNet-50 (x)",
            "gain",
        ),
        "utilisation_gain_over_serial_resnet-50": (
            "Fig. 7c",
            "NPU utilisation while busy, FluidB minus SERIAL, 5-18/s on ZC706 (fraction)",
            "change",
        ),
        "utilisation_gain_over_serial_inception-v3": (
            "Fig. 8c",
            "NPU utilisation while busy, FluidB minus SERIAL, 25-35/s on ZCU104 (fraction)",
            "change",
        ),
        "fluidb_utilisation_at_top_rate_resnet-50": (
            "Fig. 7c",
            "FluidB NPU utilisation while busy at the highest rate, ResNet-50 (fraction)",
            "value",
        ),
        "fluidb_utilisation_at_top_rate_inception-v3": (
            "Fig. 8c",
            "FluidB NPU utilisation while busy at the highest rate, Inception-v3 (fraction)",
            "value",
        ),
    }
    causes = summary.get("headline_causes", {})
    for k, (fig, label, kind) in labels.items():
        if k in head:
            out.append(
                comparison(
                    f"headline/{k}",
                    fig,
                    label,
                    head[k]["paper"],
                    head[k]["ours"],
                    kind=kind,  # type: ignore[arg-type]
                    cause=causes.get(k, ""),
                    spread=summary.get("spread", {}).get(k),
                )
            )
    # Fig. 7/8 processing rate at the highest rate ("above 20 and 55 inf/s") and Fig. 9
    for model, fig, paper_rate in (
        ("resnet-50", "Fig. 7a", 20.0),
        ("inception-v3", "Fig. 8a", 55.0),
    ):
        pols = summary.get("serving", {}).get(model)
        if not pols:
            continue
        top = max(pols["FluidB"], key=float)
        out.append(
            comparison(
                f"fig{fig.split()[1].rstrip('a')}/{model}/fluidb_processing_rate",
                fig,
                f"FluidB processing rate at {top}/s offered "
                f"(samples/s; paper: above {paper_rate:g})",
                paper_rate,
                pols["FluidB"][top]["processing_rate"],
            )
        )
    for r in summary.get("fig9", []):
        if r["policy"] != "FluidB":
            continue
        out.append(
            comparison(
                f"fig9/{r['model']}/{r['slo_s']:g}/fluidb_violation_rate",
                "Fig. 9",
                f"FluidB violation rate at SLO {1e3 * r['slo_s']:g} ms, {r['model']} "
                f"(fraction; paper: none unless the SLO is excessively low)",
                None,
                r["violation_rate"],
            )
        )
    for key, v in summary.get("fig10", {}).items():
        for cfg, vals in v.items():
            if cfg == "peak_gops":
                continue
            out.append(
                comparison(
                    f"fig10/{key}/{cfg}/b8_gops",
                    "Fig. 10",
                    f"throughput at B = 8 (GOP/s), {cfg}, {key}; the paper plots it without "
                    "numbers",
                    None,
                    vals[-1],
                )
            )
    return out
