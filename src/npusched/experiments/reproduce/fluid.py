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
    designs: str = "dse",
    pairs: Sequence[tuple[str, str]] | None = None,
    min_dsp_fraction: float | None = None,
    tp_max: int | None = None,
    serving_setups: Sequence[ServingSetup] = SERVING_SETUPS,
    fig9_setups: Sequence[tuple[str, str, float, Sequence[float]]] | None = None,
    lazy_invocation_s: float | None = None,
    ablations: bool = True,
) -> dict[str, Any]:
    """Run the evaluation and write the outputs to ``out``.

    Args:
        out: output directory (created).
        quick: the two (model, board) pairs of Fig. 7/8 only, a coarser search
            (``T_P * T_C >= 98%`` of the DSPs, ``T_P <= 32``), 1 seed (of the full run's 3) and
            half the Fig. 9 SLOs. The samples per point are the full run's: where a baseline
            cannot keep up its latency grows with the run's length, so the headline is only
            comparable between runs of one length.
        b_max: largest batch size (8 in the paper).
        progress: show a progress bar on stderr.
        serving: also run the serving experiments on the engine (Fig. 7-9, Table II).
        seeds: seeds per serving point (default 3; quick 1).
        n_samples: samples per serving point (default 1500, quick too).
        designs: NPU design per serving policy: ``"dse"`` (default: each its own from our DSE,
            the paper's method, Sec. IV, at B = 8; FluidB with ``w_b = 1``) or ``"table1"``
            (Table I's for every policy).
        pairs: the (model, board) pairs of the DSE and Fig. 10 (default Table I's; quick: those
            of ``serving_setups``).
        min_dsp_fraction, tp_max: the DSE's search bounds (default 0.9 and 64; quick 0.98 and
            32).
        serving_setups: Fig. 7/8's (model, board, SLO, rates) (default :data:`SERVING_SETUPS`).
        fig9_setups: Fig. 9's (model, board, rate, SLOs) (default :data:`FIG9_SETUPS`; quick:
            every other SLO).
        lazy_invocation_s: LazyBatching's per-layer invocation cost in seconds (default
            :data:`~npusched.policies.batching.lazyb.LAZY_INVOCATION_S`).
        ablations: also run Table II's one-factor ablations (seed 0; :data:`TABLE2_ABLATIONS`).

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
        n = n_samples if n_samples is not None else 1500
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
                "fig7_8": run_points(main_pts, n, step, designs, lazy_invocation_s),
                "fig9": run_points(fig9_pts, n, step, designs, lazy_invocation_s),
                "table2": run_points(t2_pts, n, step, designs, lazy_invocation_s),
            }
        summary.update(_serving_outputs(raw, out_dir))
        from npusched.policies.batching.lazyb import LAZY_INVOCATION_S

        summary["serving_setup"] = {
            "seeds": n_seeds,
            "samples_per_point": n,
            "designs": designs,
            "lazy_invocation_s": LAZY_INVOCATION_S
            if lazy_invocation_s is None
            else float(lazy_invocation_s),
        }
        if ablations:
            abl = _table2_ablations(raw["table2"], n, designs, lazy_invocation_s)
            summary["table2_ablations"] = abl
            abl_csv = pd.DataFrame(abl).to_csv(index=False)
            atomic_write_text(out_dir / "table2_ablations.csv", abl_csv)
    summary["headline_causes"] = _headline_causes(summary)
    summary["comparisons"] = _comparisons(summary)
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
    "run_utilisation",
)

#: Table II's one-factor ablations (seed 0, every Table II row): name -> (what changes,
#: ``run_point`` keyword arguments). Each changes one factor of the setup against the default.
TABLE2_ABLATIONS: dict[str, tuple[str, dict[str, Any]]] = {
    "lazy_invocation_0us": ("LazyBatching's per-layer invocation cost 0 us", {"lazy": 0.0}),
    "lazy_invocation_200us": ("LazyBatching's per-layer invocation cost 200 us", {"lazy": 200e-6}),
    "arrival_cv2": (
        "arrival process: gamma inter-arrivals, coefficient of variation 2 (Poisson: 1)",
        {"arrival_cv": 2.0},
    ),
    "service_x2": (
        "service times: every layer 2x longer (the paper's absolute latencies are ~2x ours)",
        {"service_scale": 2.0},
    ),
    "violation_at_half_slo": (
        "SLO definition: violations counted against half the SLO (policies keep the SLO)",
        {"violation_slo_scale": 0.5},
    ),
}

#: The paper's rate ranges of its utilisation gains (Sec. IV): 5-18 samples/s on ZC706 (+20.4%)
#: and 25-35 samples/s on ZCU104 (+13.5%), FluidB over SERIAL.
UTILISATION_GAIN_RANGES: dict[str, tuple[float, float, float]] = {
    "resnet-50": (5.0, 18.0, 0.204),
    "inception-v3": (25.0, 35.0, 0.135),
}


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
    lat_all = [v["ours"] for k, v in head.items() if k.startswith("avg_latency_gain")]
    slo_all = [v["ours"] for k, v in head.items() if k.startswith("slo_satisfaction_gain")]
    head["avg_latency_gain_vs_best_adaptb"] = {"ours": float(np.mean(lat_all)), "paper": 1.97}
    head["slo_satisfaction_gain_vs_best_adaptb"] = {
        "ours": float(np.mean(slo_all)),
        "paper": 6.7,
    }
    for model, g in f78.groupby("model", sort=False):
        rng_ = UTILISATION_GAIN_RANGES.get(str(model))
        if rng_ is None:
            continue
        lo, hi, paper_gain = rng_
        sel = g[(g.rate >= lo) & (g.rate <= hi)]
        fb = sel[sel.policy == "FluidB"].set_index("rate").utilisation
        se = sel[sel.policy == "SERIAL"].set_index("rate").utilisation
        if len(fb):
            head[f"utilisation_gain_over_serial_{model!s}"] = {
                "ours": float((fb - se).mean()),
                "paper": paper_gain,
                "rates": [float(r) for r in fb.index],
            }
        top = g[g.policy == "FluidB"].sort_values("rate").utilisation
        head[f"fluidb_utilisation_at_top_rate_{model!s}"] = {
            "ours": float(top.iloc[-1]),
            "paper": 0.95,
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
        "spread": _spreads(frames),
        "pending": [],
    }


def _spreads(frames: dict[str, pd.DataFrame]) -> dict[str, Any]:
    """Per-seed ``[low, high]`` of the Table II gains and the headline latency gain."""
    out: dict[str, Any] = {}
    t2 = frames["table2"]
    for row in PAPER["table2"]:
        sel = t2[(t2.model == row[0]) & (t2.board == row[1]) & (t2.rate == float(row[2]))]
        lz = sel[sel.policy == "LazyBatching"].set_index("seed").avg_latency_s
        fb = sel[sel.policy == "FluidB"].set_index("seed").avg_latency_s
        g = lz / fb
        out[f"table2/{row[0]}/{row[1]}"] = [float(g.min()), float(g.max())]
    f78 = frames["fig7_8"]
    per_seed = []
    for _, gs in f78.groupby("seed"):
        gains = []
        for _, gr in gs.groupby(["model", "rate"]):
            fb = gr[gr.policy == "FluidB"].avg_latency_s.iloc[0]
            sota = gr[gr.policy.str.contains("AdaptB")].avg_latency_s.min()
            gains.append(sota / fb)
        per_seed.append(float(np.mean(gains)))
    out["avg_latency_gain_vs_best_adaptb"] = [min(per_seed), max(per_seed)]
    return out


def _table2_ablations(
    base: Sequence[Any], n: int, designs: str, lazy_invocation_s: float | None
) -> list[dict[str, Any]]:
    """Table II's rows (seed 0) under each of :data:`TABLE2_ABLATIONS`, one factor at a time,
    beside the default (``variant = "default"``)."""
    from npusched.experiments.reproduce.fluid_serving import run_point

    def row(variant: str, what: str, lz: Any, fb: Any) -> dict[str, Any]:
        return {
            "variant": variant,
            "change": what,
            "model": lz.model,
            "board": lz.board,
            "rate": lz.rate,
            "slo_s": lz.slo_s,
            "lazy_avg_latency_s": lz.avg_latency_s,
            "lazy_violation_rate": lz.violation_rate,
            "fluidb_avg_latency_s": fb.avg_latency_s,
            "fluidb_violation_rate": fb.violation_rate,
            "avg_latency_gain": lz.avg_latency_s / fb.avg_latency_s,
        }

    seed0 = {(p.model, p.board, p.policy): p for p in base if p.seed == 0}
    rows = []
    for r in PAPER["table2"]:
        m, b = str(r[0]), str(r[1])
        rows.append(
            row("default", "none", seed0[(m, b, "LazyBatching")], seed0[(m, b, "FluidB")])
        )
    for variant, (what, kw) in TABLE2_ABLATIONS.items():
        for r in PAPER["table2"]:
            m, b, rate, slo = str(r[0]), str(r[1]), float(r[2]), float(r[3])
            pts = {}
            for pol in ("LazyBatching", "FluidB"):
                if "lazy" in kw and pol == "FluidB":
                    pts[pol] = seed0[(m, b, pol)]
                    continue
                lazy = kw.get("lazy", lazy_invocation_s)
                v_slo = slo * kw["violation_slo_scale"] if "violation_slo_scale" in kw else None
                pts[pol] = run_point(
                    m,
                    b,
                    pol,
                    rate,
                    slo,
                    0,
                    n,
                    designs,
                    lazy,
                    arrival_cv=kw.get("arrival_cv", 1.0),
                    service_scale=kw.get("service_scale", 1.0),
                    violation_slo_s=v_slo,
                )
            rows.append(row(variant, what, pts["LazyBatching"], pts["FluidB"]))
    return rows


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


def _headline_causes(summary: dict[str, Any]) -> dict[str, str]:
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


def c_mapping(net: Any, tc: int) -> float:
    """Fraction of the MAC slots along ``C`` a ``T_C``-wide array uses over a network's GEMM
    layers at batch 1 (each layer's ``C`` padded to a multiple of ``T_C``)."""
    layers = [x for x in net.layers if x.is_gemm]
    used = sum(x.m * x.k * x.n * x.groups for x in layers)
    slots = sum(x.m * x.k * (-(-x.n // tc) * tc) * x.groups for x in layers)
    return float(used / slots)


def _comparisons(summary: dict[str, Any]) -> list[dict[str, Any]]:
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
