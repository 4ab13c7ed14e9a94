"""``npusched reproduce fluid``: run the study's points and write its outputs (the method is
:mod:`npusched.experiments.studies.fluid`'s docstring)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from npusched._io import atomic_write_text
from npusched.experiments.store import StudyPoint, point_key, run_points
from npusched.experiments.studies.fluid.figures import plot_fig10, serving_outputs, summary_of
from npusched.experiments.studies.fluid.paper import PAPER, PAPER_TABLE1
from npusched.experiments.studies.fluid.points import (
    FIG10_CONFIGS,
    ServingSetup,
    _device,
    _weights,
    invocation_estimate,
    table2_ablations,
)
from npusched.experiments.studies.fluid.report import comparisons, headline_causes, report
from npusched.experiments.studies.fluid.suite import FluidSuite
from npusched.experiments.suite_io import load_suite_as
from npusched.hardware.gemm_dse import explore, max_tr, resource_usage
from npusched.hardware.gemm_npu import BOARDS
from npusched.models import get_network

__all__ = ["reproduce"]


def reproduce(
    out: str | Path,
    *,
    quick: bool = False,
    b_max: int | None = None,
    progress: bool = False,
    serving: bool | None = None,
    seeds: int | None = None,
    n_samples: int | None = None,
    designs: str | None = None,
    pairs: Sequence[tuple[str, str]] | None = None,
    min_dsp_fraction: float | None = None,
    tp_max: int | None = None,
    serving_setups: Sequence[ServingSetup] | None = None,
    fig9_setups: Sequence[tuple[str, str, float, Sequence[float]]] | None = None,
    lazy_invocation_s: float | None = None,
    ablations: bool = True,
) -> dict[str, Any]:
    """Run the evaluation and write the outputs to ``out``.

    A study keyword left ``None`` takes the packaged suite file's value
    (:class:`~npusched.experiments.studies.fluid.suite.FluidSuite`, its quick run with
    ``quick``): the values are declared once, there.

    Args:
        out: output directory (created).
        quick: the two (model, board) pairs of Fig. 7/8 only, a coarser search
            (``T_P * T_C >= 98%`` of the DSPs, ``T_P <= 32``), 1 seed (of the full run's 3) and
            half the Fig. 9 SLOs. The samples per point are the full run's: where a baseline
            cannot keep up its latency grows with the run's length, so the headline is only
            comparable between runs of one length.
        b_max: largest batch size (the file's: 8, the paper's).
        progress: show a progress bar on stderr.
        serving: also run the serving experiments on the engine (Fig. 7-9, Table II).
        seeds: seeds per serving point (the file's: 3; quick 1).
        n_samples: samples per serving point (the file's: 1500, quick too).
        designs: NPU design per serving policy: ``"dse"`` (the file's: each its own from our DSE,
            the paper's method, Sec. IV, at B = 8; FluidB with ``w_b = 1``) or ``"table1"``
            (Table I's for every policy).
        pairs: the (model, board) pairs of the DSE and Fig. 10 (the file's: Table I's; quick: those
            of Fig. 7/8).
        min_dsp_fraction, tp_max: the DSE's search bounds (the file's: 0.9 and 64; quick 0.98
            and 32).
        serving_setups: Fig. 7/8's (model, board, SLO, rates) (the file's: :data:`SERVING_SETUPS`).
        fig9_setups: Fig. 9's (model, board, rate, SLOs) (the file's: :data:`FIG9_SETUPS`; quick:
            every other SLO).
        lazy_invocation_s: LazyBatching's per-layer invocation cost in seconds (default
            :data:`~npusched.policies.batching.lazyb.LAZY_INVOCATION_S`).
        ablations: also run Table II's one-factor ablations (seed 0; :data:`TABLE2_ABLATIONS`).

    Returns:
        The summary written to ``summary.json``.
    """
    out_dir = Path(out)
    out_dir.mkdir(parents=True, exist_ok=True)
    model = load_suite_as(FluidSuite, "fluid", quick=quick)  # the values of the keywords not given
    b_max = model.b_max if b_max is None else b_max
    serving = model.serving if serving is None else serving
    designs = model.designs if designs is None else designs
    if pairs is None:
        pairs = [(m, b) for m, b in model.pairs]
    min_dsp = float(model.min_dsp_fraction) if min_dsp_fraction is None else min_dsp_fraction
    tp_max = model.tp_max if tp_max is None else tp_max
    if serving_setups is None:
        serving_setups = [
            ServingSetup(e.model, e.board, float(e.slo_s), tuple(e.rates))
            for e in model.serving_setups
        ]
    if fig9_setups is None:
        fig9_setups = [(f.model, f.board, float(f.rate), tuple(f.slos)) for f in model.fig9]
    n_seeds = model.seeds if seeds is None else seeds
    n = model.n_samples if n_samples is None else n_samples
    config = {
        "b_max": b_max,
        "serving": serving,
        "seeds": n_seeds,
        "n_samples": n,
        "designs": designs,
        "pairs": [list(pr) for pr in pairs],
        "min_dsp_fraction": min_dsp,
        "tp_max": tp_max,
        "serving_setups": [asdict(st) for st in serving_setups],
        "fig9_setups": [[m, b, r, list(slos)] for m, b, r, slos in fig9_setups],
        "lazy_invocation_s": lazy_invocation_s,
        "ablations": ablations,
    }
    # "samples": a store written with the samples of the integer keys before issue 29 (no such
    # entry) is refused, not resumed with points of two different draws
    meta = {"study": "fluid", "config_hash": point_key(config), "samples": "seed_stream"}

    def run(points: Sequence[StudyPoint], desc: str) -> list[dict[str, Any]]:
        return run_points(out_dir, meta, points, progress=progress, desc=desc)

    dse_points = [
        StudyPoint(
            point_key("fluid/dse", model, board, label, b_max, min_dsp, tp_max),
            partial(_dse_point, model, board, label, b_max, min_dsp, tp_max),
            f"{model}/{board} {label}",
        )
        for model, board in pairs
        for label in FIG10_CONFIGS
    ]
    dse_found = run(dse_points, "reproduce fluid")
    fig_rows = [r for pt in dse_found for r in pt["fig_rows"]]
    dse_rows = [pt["dse_row"] for pt in dse_found if pt["dse_row"] is not None]
    fig = pd.DataFrame(fig_rows)
    dse = pd.DataFrame(dse_rows)
    atomic_write_text(out_dir / "fig10.csv", fig.to_csv(index=False))
    atomic_write_text(out_dir / "dse.csv", dse.to_csv(index=False))
    plot_fig10(fig, out_dir)
    summary = summary_of(fig, dse, quick)
    if serving:
        from npusched.experiments.studies.fluid.serving import POLICY_NAMES, ServingPoint

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
        every = [*main_pts, *fig9_pts, *t2_pts]
        keys = [point_key("fluid/serving", *pt, n, designs, lazy_invocation_s) for pt in every]
        # a point in two figures runs once (a run is deterministic for its parameters)
        unique = {k: pt for k, pt in zip(keys, every, strict=True)}
        serving_points = [
            StudyPoint(
                k,
                partial(_serving_point, pt, n, designs, lazy_invocation_s),
                f"{pt[0]} {pt[2]} {pt[3]:g}/s",
            )
            for k, pt in unique.items()
        ]
        rows = run(serving_points, "fluid serving")
        by_key = {p.key: ServingPoint(**r) for p, r in zip(serving_points, rows, strict=True)}
        found = [by_key[k] for k in keys]
        n_main, n_fig9 = len(main_pts), len(fig9_pts)
        raw = {
            "fig7_8": found[:n_main],
            "fig9": found[n_main : n_main + n_fig9],
            "table2": found[n_main + n_fig9 :],
        }
        summary.update(serving_outputs(raw, out_dir))
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
            abl_point = StudyPoint(
                point_key("fluid/table2-ablations", n, designs, lazy_invocation_s),
                lambda: {"rows": table2_ablations(raw["table2"], n, designs, lazy_invocation_s)},
                "Table II ablations",
            )
            abl = run([abl_point], "fluid ablations")[0]["rows"]
            summary["table2_ablations"] = abl
            abl_csv = pd.DataFrame(abl).to_csv(index=False)
            atomic_write_text(out_dir / "table2_ablations.csv", abl_csv)
    summary["headline_causes"] = headline_causes(summary)
    summary["comparisons"] = comparisons(summary)
    summary["invocations_estimate"] = {
        m: invocation_estimate(m) for m in dict.fromkeys(m for m, _ in pairs)
    }
    atomic_write_text(out_dir / "summary.json", json.dumps(summary, indent=2) + "\n")
    atomic_write_text(
        out_dir / "report.md", report(fig, dse, quick, summary["invocations_estimate"], summary)
    )
    return summary


def _dse_point(
    model: str, board: str, label: str, b_max: int, min_dsp: float, tp_max: int
) -> dict[str, Any]:
    """One (model, board, Fig. 10 configuration) design-space exploration: its Fig. 10 rows
    (``fig_rows``, one per batch size) and, for ``Fluid+Stackable``, its Table I row against
    the paper's design (``dse_row``; else ``None``)."""
    net = get_network(model)
    brd = BOARDS[board]
    peak = 2.0 * brd.dsp * brd.frequency_hz / 1e9
    strategy, stackable, wkind = FIG10_CONFIGS[label]
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
    fig_rows = [
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
        for b, thr in enumerate(res.throughput_gops, start=1)
    ]
    dse_row = None
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
        dse_row = {
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
    return {"fig_rows": fig_rows, "dse_row": dse_row}


def _serving_point(
    pt: tuple[str, str, str, float, float, int],
    n: int,
    designs: str,
    lazy_invocation_s: float | None,
) -> dict[str, Any]:
    """One ``(model, board, policy, rate, slo_s, seed)`` serving run's metrics."""
    from npusched.experiments.studies.fluid.serving import run_point

    model, board, policy, rate, slo, seed = pt
    return asdict(run_point(model, board, policy, rate, slo, seed, n, designs, lazy_invocation_s))


def run_suite(suite: FluidSuite, out: Path, *, quick: bool, progress: bool) -> dict[str, Any]:
    """``npusched reproduce fluid`` with the parameters of ``suite``."""
    return reproduce(
        out,
        quick=quick,
        b_max=suite.b_max,
        progress=progress,
        serving=suite.serving,
        seeds=suite.seeds,
        n_samples=suite.n_samples,
        designs=suite.designs,
        pairs=[(m, b) for m, b in suite.pairs],
        min_dsp_fraction=float(suite.min_dsp_fraction),
        tp_max=suite.tp_max,
        serving_setups=[
            ServingSetup(s.model, s.board, float(s.slo_s), tuple(s.rates))
            for s in suite.serving_setups
        ],
        fig9_setups=[(f.model, f.board, float(f.rate), tuple(f.slos)) for f in suite.fig9],
    )
