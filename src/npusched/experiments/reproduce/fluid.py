"""Reproduce Fluid Batching (Kouris et al.): ``npusched reproduce fluid``.

* **DSE report** (Sec. III-A Eq. 2, Table I): for each (model, board) of Table I, the design point
  our exhaustive DSE picks for Fluid Batching + Stackable PEs with ``w_b = 1`` (b = 1..8), its DSP
  and BRAM use, the paper's design point, and how our cost model rates the paper's design
  (throughput of Table I's point / throughput of ours, both under our model).
* **Fig. 10** (Sec. IV "NPU Ablation"): throughput (GOP/s) vs batch size 1..8 on the backbone
  without exits, for the uniform strategies SERIAL, FC, R and P (each with its own DSE at batch
  size 8, as the paper does for its baselines), Fluid Batching (DSE with ``w_b = 1``) and Fluid
  Batching + Stackable PEs, against the board's peak.
* An analytical estimate of scheduler invocations per sample, FluidB vs LazyBatching
  (:func:`invocation_estimate`).
* **Serving on the engine** (:mod:`.fluid_serving`, methodology there): Fig. 7/8 (processing
  rate, average and p99 latency, violation rate, utilisation vs Poisson arrival rate for SERIAL,
  FC-/R-AdaptB-S/M/L, LazyBatching and FluidB), Fig. 9 (violation rate vs SLO), Table II
  (FluidB vs LazyBatching), measured scheduler invocations and the headline ratios.

Outputs in the output directory: ``dse.csv``, ``fig10.csv``, ``fig10_<model>_<board>.png``,
``fig7_8.csv`` / ``fig9.csv`` / ``table2.csv`` (means over seeds) and ``*_points.csv`` (every
run), ``fig7_8_<model>.png``, ``fig9_<model>.png``, ``summary.json`` and ``report.md``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from npusched._io import atomic_write_text
from npusched.hardware.gemm_dse import PAPER_TABLE1, explore, max_tr, resource_usage
from npusched.hardware.gemm_npu import BOARDS, GemmNPU
from npusched.models import get_network
from npusched.report.progress import progress_bar

__all__ = [
    "FIG10_CONFIGS",
    "PAPER",
    "PENDING",
    "SERVING_SETUPS",
    "ServingSetup",
    "invocation_estimate",
    "reproduce",
]

#: The paper's headline figures, for the report (Sec. I/IV, Table I/II).
PAPER: dict[str, Any] = {
    "table1": {f"{m}/{b}": [d.tr, d.tp, d.tc] for (m, b), d in PAPER_TABLE1.items()},
    "table1_resources_pct": {
        "resnet-50/zc706": [99.56, 99.96],
        "resnet-50/zcu104": [99.53, 99.99],
        "inception-v3/zc706": [100.0, 99.94],
        "inception-v3/zcu104": [100.0, 99.99],
    },
    "avg_latency_gain_vs_sota": 1.97,
    "tail_slo_satisfaction_gain_vs_sota": 6.7,
    "table2_avg_latency_gain_vs_lazybatching_resnet50": [1.43, 2.5],
    "scheduler_invocations_lazy_over_fluidb_resnet50": 16.6,
    "table2": [
        # model, board, rate (samples/s), SLO (s), Lazy avg (s), Lazy viol, FluidB avg, FluidB viol
        ["resnet-50", "zc706", 15, 0.200, 0.173, 0.2353, 0.121, 0.1033],
        ["resnet-50", "zcu104", 40, 0.100, 0.143, 0.3548, 0.057, 0.0838],
        ["inception-v3", "zc706", 15, 0.400, 0.287, 0.1594, 0.213, 0.0793],
        ["inception-v3", "zcu104", 40, 0.200, 0.216, 0.1420, 0.097, 0.0621],
    ],
}

#: Parts of the evaluation skipped when the serving experiments are not run.
PENDING = ("fig7", "fig8", "fig9", "table2", "scheduler_invocations")


@dataclass(frozen=True)
class ServingSetup:
    """One serving experiment of Sec. IV (Fig. 7/8): model, board, p99 SLO (seconds) and the
    Poisson arrival rates (samples per second)."""

    model: str
    board: str
    slo_s: float
    rates: tuple[float, ...]


SERVING_SETUPS: tuple[ServingSetup, ...] = (
    ServingSetup("resnet-50", "zc706", 0.400, (5, 10, 15, 20, 25)),
    ServingSetup("inception-v3", "zcu104", 0.200, (20, 30, 40, 50, 60)),
)

#: Fig. 9: (model, board, arrival rate, SLOs swept) - the paper's 15 and 35 samples/s.
FIG9_SETUPS: tuple[tuple[str, str, float, tuple[float, ...]], ...] = (
    ("resnet-50", "zc706", 15.0, (0.1, 0.15, 0.2, 0.3, 0.4, 0.5)),
    ("inception-v3", "zcu104", 35.0, (0.05, 0.075, 0.1, 0.15, 0.2, 0.3)),
)

#: Fig. 10 configurations: label -> (strategy, stackable, DSE weights over b = 1..8).
FIG10_CONFIGS: dict[str, tuple[str, bool, str]] = {
    "SERIAL": ("serial", False, "b8"),
    "FC": ("fc", False, "b8"),
    "R": ("r", False, "b8"),
    "P": ("p", False, "b8"),
    "Fluid": ("fluid", False, "all"),
    "Fluid+Stackable": ("fluid", True, "all"),
}


def invocation_estimate(model: str) -> dict[str, float]:
    """Scheduler invocations per sample, analytically, for batches of one sample without
    backfilling (an engine-independent estimate of Sec. III-B's 16.6x; the engine's count is the
    measured one).

    FluidB decides at every intermediate exit a sample reaches: ``min(e + 1, N_exits - 1)`` for a
    sample leaving at exit ``e``. LazyBatching decides after every NPU layer (GEMM layer; the
    fused vector layers are not separate NPU layers) it passes, except the network's last. Both
    are averaged over the paper's exit rates.
    """
    from npusched.models.exits import early_exit_network, exit_rates

    net = early_exit_network(model)
    rates = exit_rates(net)
    gemm = np.cumsum(net.columns["is_gemm"])
    n_gemm = int(gemm[-1])
    n = len(net.exits)
    fluid = sum(r * min(e + 1, n - 1) for e, r in enumerate(rates))
    lazy = sum(
        r * min(int(gemm[ex.after]), n_gemm - 1) for r, ex in zip(rates, net.exits, strict=True)
    )
    return {"fluidb": float(fluid), "lazybatching": float(lazy), "ratio": float(lazy / fluid)}


def _weights(kind: str, b_max: int) -> np.ndarray[Any, np.dtype[np.float64]]:
    w = np.zeros(b_max)
    if kind == "b8":
        w[-1] = 1.0
    else:
        w[:] = 1.0
    return w


def _device(design: Any, board: str, strategy: str, stackable: bool) -> GemmNPU:
    b = BOARDS[board]
    return GemmNPU(
        tr=design.tr,
        tp=design.tp,
        tc=design.tc,
        frequency_hz=b.frequency_hz,
        memory_bandwidth_bps=b.bandwidth_bps,
        strategy=strategy,
        stackable=stackable,
    )


def reproduce(
    out: str | Path,
    *,
    quick: bool = False,
    b_max: int = 8,
    progress: bool = False,
    serving: bool = True,
    seeds: int | None = None,
    n_samples: int | None = None,
    designs: str = "table1",
    pairs: Sequence[tuple[str, str]] | None = None,
    min_dsp_fraction: float | None = None,
    tp_max: int | None = None,
    serving_setups: Sequence[ServingSetup] = SERVING_SETUPS,
    fig9_setups: Sequence[tuple[str, str, float, Sequence[float]]] | None = None,
) -> dict[str, Any]:
    """Run the evaluation and write the outputs to ``out``.

    Args:
        out: output directory (created).
        quick: the two (model, board) pairs of Fig. 7/8 only, a coarser search
            (``T_P * T_C >= 98%`` of the DSPs, ``T_P <= 32``), 1 seed x 200 samples per serving
            point and half the Fig. 9 SLOs (about a minute).
        b_max: largest batch size (8 in the paper).
        progress: show a progress bar on stderr.
        serving: also run the serving experiments on the engine (Fig. 7-9, Table II).
        seeds: seeds per serving point (default 3; quick 1).
        n_samples: samples per serving point (default 1500; quick 200).
        designs: NPU design per serving policy: ``"table1"`` (Table I's for every policy) or
            ``"dse"`` (each its own from our DSE, the paper's baseline method).
        pairs: the (model, board) pairs of the DSE and Fig. 10 (default Table I's; quick: those
            of ``serving_setups``).
        min_dsp_fraction, tp_max: the DSE's search bounds (default 0.9 and 64; quick 0.98 and
            32).
        serving_setups: Fig. 7/8's (model, board, SLO, rates) (default :data:`SERVING_SETUPS`).
        fig9_setups: Fig. 9's (model, board, rate, SLOs) (default :data:`FIG9_SETUPS`; quick:
            every other SLO).

    Returns:
        The summary written to ``summary.json``.
    """
    out_dir = Path(out)
    out_dir.mkdir(parents=True, exist_ok=True)
    if pairs is None:
        pairs = [(s.model, s.board) for s in serving_setups] if quick else list(PAPER_TABLE1)
    min_dsp = min_dsp_fraction if min_dsp_fraction is not None else (0.98 if quick else 0.9)
    tp_max = tp_max if tp_max is not None else (32 if quick else 64)
    if fig9_setups is None:
        fig9_setups = [(m, b, r, slos[::2] if quick else slos) for m, b, r, slos in FIG9_SETUPS]
    fig_rows: list[dict[str, Any]] = []
    dse_rows: list[dict[str, Any]] = []
    total = len(pairs) * len(FIG10_CONFIGS)
    with progress_bar(total, "[bold]reproduce fluid[/]", enabled=progress) as bar:
        for model, board in pairs:
            net = get_network(model)
            brd = BOARDS[board]
            peak = 2.0 * brd.dsp * brd.frequency_hz / 1e9
            for label, (strategy, stackable, wkind) in FIG10_CONFIGS.items():
                res = explore(
                    net,
                    board,
                    strategy=strategy,
                    stackable=stackable,
                    weights=list(_weights(wkind, b_max)),
                    b_max=b_max,
                    min_dsp_fraction=min_dsp,
                    tp_max=tp_max,
                )
                for b, thr in enumerate(res.throughput_gops, start=1):
                    fig_rows.append(
                        {
                            "model": model,
                            "board": board,
                            "config": label,
                            "tr": res.design.tr,
                            "tp": res.design.tp,
                            "tc": res.design.tc,
                            "batch": b,
                            "throughput_gops": float(thr),
                            "peak_gops": peak,
                        }
                    )
                if label == "Fluid+Stackable":
                    paper_d = PAPER_TABLE1[(model, board)]
                    paper_thr = np.array(
                        [
                            _device(paper_d, board, "fluid", True).throughput_gops(net, b)
                            for b in range(1, b_max + 1)
                        ]
                    )
                    ours_use = resource_usage(res.design, brd)
                    paper_use = resource_usage(paper_d, brd)
                    dse_rows.append(
                        {
                            "model": model,
                            "board": board,
                            "ours": f"<{res.design.tr}, {res.design.tp}, {res.design.tc}>",
                            "paper": f"<{paper_d.tr}, {paper_d.tp}, {paper_d.tc}>",
                            "ours_dsp_pct": 100 * ours_use["dsp"],
                            "ours_bram_pct": 100 * ours_use["bram"],
                            "paper_dsp_pct": 100 * paper_use["dsp"],
                            "paper_bram_pct": 100 * paper_use["bram"],
                            "paper_tr_by_our_bram_model": max_tr(brd, paper_d.tp, paper_d.tc),
                            "ours_score_gops": float(res.throughput_gops.sum()),
                            "paper_design_score_gops": float(paper_thr.sum()),
                            "paper_over_ours": float(paper_thr.sum() / res.throughput_gops.sum()),
                            "designs_visited": res.visited,
                        }
                    )
                if bar is not None:
                    bar.step(f"{model}/{board} {label}")
    fig = pd.DataFrame(fig_rows)
    dse = pd.DataFrame(dse_rows)
    atomic_write_text(out_dir / "fig10.csv", fig.to_csv(index=False))
    atomic_write_text(out_dir / "dse.csv", dse.to_csv(index=False))
    _plot_fig10(fig, out_dir)
    summary = _summary(fig, dse, quick)
    if serving:
        from npusched.experiments.reproduce.fluid_serving import POLICY_NAMES, run_points

        n_seeds = seeds if seeds is not None else (1 if quick else 3)
        n = n_samples if n_samples is not None else (200 if quick else 1500)
        main_pts = [
            (s.model, s.board, pol, float(rate), s.slo_s, seed)
            for s in serving_setups
            for rate in s.rates
            for pol in POLICY_NAMES
            for seed in range(n_seeds)
        ]
        fig9_pts = [
            (model, board, pol, rate, slo, seed)
            for model, board, rate, slos in fig9_setups
            for slo in slos
            for pol in POLICY_NAMES
            for seed in range(n_seeds)
        ]
        t2_pts = [
            (str(r[0]), str(r[1]), pol, float(r[2]), float(r[3]), seed)
            for r in PAPER["table2"]
            for pol in ("LazyBatching", "FluidB")
            for seed in range(n_seeds)
        ]
        total_pts = len(main_pts) + len(fig9_pts) + len(t2_pts)
        with progress_bar(total_pts, "[bold]fluid serving[/]", enabled=progress) as bar2:
            step = None if bar2 is None else bar2.step
            raw = {
                "fig7_8": run_points(main_pts, n, step, designs),
                "fig9": run_points(fig9_pts, n, step, designs),
                "table2": run_points(t2_pts, n, step, designs),
            }
        summary.update(_serving_outputs(raw, out_dir))
        summary["serving_setup"] = {"seeds": n_seeds, "samples_per_point": n, "designs": designs}
    summary["invocations_estimate"] = {
        m: invocation_estimate(m) for m in dict.fromkeys(m for m, _ in pairs)
    }
    atomic_write_text(out_dir / "summary.json", json.dumps(summary, indent=2) + "\n")
    atomic_write_text(
        out_dir / "report.md", _report(fig, dse, quick, summary["invocations_estimate"], summary)
    )
    return summary


def _summary(fig: pd.DataFrame, dse: pd.DataFrame, quick: bool) -> dict[str, Any]:
    fig10: dict[str, Any] = {}
    for (model, board), g in fig.groupby(["model", "board"], sort=False):
        fig10[f"{model}/{board}"] = {
            "peak_gops": float(g["peak_gops"].iloc[0]),
            **{
                cfg: [float(x) for x in gg.sort_values("batch")["throughput_gops"]]
                for cfg, gg in g.groupby("config", sort=False)
            },
        }
    return {
        "quick": quick,
        "dse": dse.to_dict(orient="records"),
        "fig10": fig10,
        "paper": PAPER,
        "pending": list(PENDING),
    }


def _plot_fig10(fig: pd.DataFrame, out_dir: Path) -> None:
    from npusched.report.plots import figure, save_png

    for (model, board), g in fig.groupby(["model", "board"], sort=False):
        f = figure(5.0, 3.4)
        ax = f.add_subplot(1, 1, 1)
        for cfg, gg in g.groupby("config", sort=False):
            gg = gg.sort_values("batch")
            ax.plot(gg["batch"], gg["throughput_gops"], marker="o", label=str(cfg))
        ax.axhline(float(g["peak_gops"].iloc[0]), linestyle="--", color="k", label="peak")
        ax.set_xlabel("batch size")
        ax.set_ylabel("throughput (GOP/s)")
        ax.set_title(f"Fig. 10: {model} on {str(board).upper()}")
        ax.legend(fontsize=7, ncol=2, loc="lower right")
        save_png(f, out_dir / f"fig10_{model}_{board}.png")


_METRICS = (
    "avg_latency_s",
    "p99_latency_s",
    "violation_rate",
    "utilisation",
    "processing_rate",
    "invocations_per_sample",
)


def _serving_outputs(raw: dict[str, list[Any]], out_dir: Path) -> dict[str, Any]:
    """Write the serving CSVs and plots; return their part of the summary."""
    from dataclasses import asdict

    frames = {k: pd.DataFrame([asdict(p) for p in v]) for k, v in raw.items()}
    for k, df in frames.items():
        atomic_write_text(out_dir / f"{k}_points.csv", df.to_csv(index=False))
    keys = ["model", "board", "policy", "rate", "slo_s"]
    means = {
        k: df.groupby(keys, sort=False)[list(_METRICS)].mean().reset_index()
        for k, df in frames.items()
    }
    for k, df in means.items():
        atomic_write_text(out_dir / f"{k}.csv", df.to_csv(index=False))
    serving: dict[str, Any] = {}
    for r in means["fig7_8"].to_dict(orient="records"):
        serving.setdefault(r["model"], {}).setdefault(r["policy"], {})[f"{r['rate']:g}"] = {
            m: float(r[m]) for m in _METRICS
        }
    t2 = means["table2"]
    table2 = []
    for row in PAPER["table2"]:
        model, board, rate, slo = row[0], row[1], float(row[2]), float(row[3])
        sel = t2[(t2.model == model) & (t2.board == board) & (t2.rate == rate)]
        lz = sel[sel.policy == "LazyBatching"].iloc[0]
        fb = sel[sel.policy == "FluidB"].iloc[0]
        table2.append(
            {
                "model": model,
                "board": board,
                "rate": rate,
                "slo_s": slo,
                "lazy_avg_latency_s": float(lz.avg_latency_s),
                "lazy_violation_rate": float(lz.violation_rate),
                "fluidb_avg_latency_s": float(fb.avg_latency_s),
                "fluidb_violation_rate": float(fb.violation_rate),
                "avg_latency_gain": float(lz.avg_latency_s / fb.avg_latency_s),
                "paper_lazy": [row[4], row[5]],
                "paper_fluidb": [row[6], row[7]],
                "paper_gain": float(row[4]) / float(row[6]),
            }
        )
    inv = {}
    f78 = means["fig7_8"]
    for model, g in f78.groupby("model", sort=False):
        lz = g[g.policy == "LazyBatching"].invocations_per_sample.mean()
        fb = g[g.policy == "FluidB"].invocations_per_sample.mean()
        inv[str(model)] = {"lazybatching": float(lz), "fluidb": float(fb), "ratio": float(lz / fb)}
    # headline ratios in the paper's sense: FluidB vs the best AdaptB variant per rate
    head: dict[str, Any] = {}
    for model, g in f78.groupby("model", sort=False):
        lat_gain, slo_gain = [], []
        for _, gr in g.groupby("rate"):
            fb = gr[gr.policy == "FluidB"].iloc[0]
            sota = gr[gr.policy.str.contains("AdaptB")]
            lat_gain.append(float(sota.avg_latency_s.min() / fb.avg_latency_s))
            sat_fb = 1.0 - float(fb.violation_rate)
            sat_sota = 1.0 - float(sota.violation_rate.min())
            slo_gain.append(sat_fb / sat_sota if sat_sota > 0 else float("inf"))
        # {quantity: {ours, paper}}, as every suite's headline (the paper's figures are its
        # averages over its setups, Sec. I)
        head[f"avg_latency_gain_vs_best_adaptb_{model!s}"] = {
            "ours": float(np.mean(lat_gain)),
            "paper": 1.97,
        }
        head[f"slo_satisfaction_gain_vs_best_adaptb_{model!s}"] = {
            "ours": float(np.mean(slo_gain)),
            "paper": 6.7,
        }
    if "resnet-50" in inv:
        head["invocations_lazybatching_over_fluidb_resnet-50"] = {
            "ours": inv["resnet-50"]["ratio"],
            "paper": 16.6,
        }
    _plot_serving(means, out_dir)
    return {
        "serving": serving,
        "fig9": means["fig9"].to_dict(orient="records"),
        "table2": table2,
        "invocations": inv,
        "headline": head,
        "pending": [],
    }


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
    lines += [
        "",
        "Fig. 9 (violation rate vs SLO): `fig9.csv`, `fig9_<model>.png`.",
        "",
    ]
    return lines


def _plot_serving(means: dict[str, pd.DataFrame], out_dir: Path) -> None:
    from npusched.report.plots import figure, save_png

    panels = (
        ("processing_rate", "processing rate (samples/s)"),
        ("avg_latency_s", "average latency (s)"),
        ("utilisation", "NPU utilisation"),
        ("p99_latency_s", "p99 latency (s)"),
    )
    for model, g in means["fig7_8"].groupby("model", sort=False):
        f = figure(9.0, 6.0)
        for i, (col, label) in enumerate(panels):
            ax = f.add_subplot(2, 2, i + 1)
            for pol, gg in g.groupby("policy", sort=False):
                ax.plot(gg["rate"], gg[col], marker="o", label=str(pol))
            if col == "p99_latency_s":
                ax.axhline(float(g["slo_s"].iloc[0]), linestyle="--", color="k")
            if col.endswith("latency_s"):
                ax.set_yscale("log")
            ax.set_xlabel("arrival rate (samples/s)")
            ax.set_ylabel(label)
        f.axes[0].legend(fontsize=6, ncol=2)
        save_png(f, out_dir / f"fig7_8_{model}.png")
    for model, g in means["fig9"].groupby("model", sort=False):
        f = figure(5.0, 3.4)
        ax = f.add_subplot(1, 1, 1)
        for pol, gg in g.groupby("policy", sort=False):
            ax.plot(gg["slo_s"], gg["violation_rate"], marker="o", label=str(pol))
        ax.set_xlabel("p99 latency SLO (s)")
        ax.set_ylabel("SLO violation rate")
        ax.set_title(f"Fig. 9: {model}, {g['rate'].iloc[0]:g} samples/s")
        ax.legend(fontsize=6, ncol=2)
        save_png(f, out_dir / f"fig9_{model}.png")


def _report(
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
