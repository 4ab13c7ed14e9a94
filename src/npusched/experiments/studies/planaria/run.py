"""Planaria (MICRO 2020): ``npusched reproduce planaria``, the study's entry."""

from __future__ import annotations

import json
from collections.abc import Sequence
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from npusched._io import atomic_write_text
from npusched.experiments.store import StudyPoint, open_study_store, point_key, run_points
from npusched.experiments.studies.planaria.figures import (
    MULTI_TENANT_FIGURES,
    _report_md,
    comparisons,
    fidelity,
)
from npusched.experiments.studies.planaria.paper import DEPTHWISE_BOUND, PAPER, PAPER_MULTI_TENANT
from npusched.experiments.studies.planaria.points import (
    _gmean,
    _multi_tenant,
    _r,
    isolated_comparison,
    layer_speedups,
)
from npusched.experiments.studies.planaria.suite import MultiTenantSetup, PlanariaSuite
from npusched.models.ir import LayerKind
from npusched.workloads.planaria import (
    ARTIFACT_BENCHMARKS,
    QOS_LEVELS,
    WORKLOADS,
)


def reproduce(
    out: str | Path,
    *,
    quick: bool = False,
    plots: bool = True,
    progress: bool = False,
    networks: Sequence[str] | None = None,
    multi_tenant: bool = False,
    setup: MultiTenantSetup | None = None,
    scenarios: Sequence[str] = tuple(WORKLOADS),
    qos_levels: Sequence[str] = tuple(QOS_LEVELS),
    benchmarks: str | None = None,
) -> dict[str, Any]:
    """Write the Planaria reproduction into ``out`` and return the ``summary.json`` content.

    Args:
        out: output directory (created if needed).
        networks: the DNNs of Fig. 17 (default: the nine of Table I); with ``benchmarks =
            "artifact"`` each full-size name maps to the authors' benchmark of that DNN.
        quick: fewer and shorter workload instances in the multi-tenant part.
        plots: also draw the PNG figures.
        progress: show a progress bar over the multi-tenant points.
        multi_tenant: also run Fig. 12-16 for both systems (``workloads`` in
            ``summary.json``). Slow.
        setup: the multi-tenant study's parameters (default: the packaged suite file's, its
            quick run's with ``quick``: :meth:`MultiTenantSetup.of`).
        scenarios, qos_levels: the multi-tenant grid (default A/B/C x S/M/H).
        benchmarks: ``"artifact"`` or ``"full-size"`` (default: ``setup.benchmarks``).

    ``summary.json`` carries ``comparisons`` (one record per paper value, the reproduction
    contract of ``DESIGN.md``); ``report.md`` shows the same table.
    """
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    st = setup or MultiTenantSetup.of(quick=quick)
    if benchmarks is not None:
        st = st.replace(benchmarks=benchmarks)
    if multi_tenant:  # a store of another setup is refused before any work
        open_study_store(out, _store_meta(st))
    names = list(networks) if networks is not None else list(WORKLOADS["C"])
    if st.benchmarks == "artifact":
        names = [ARTIFACT_BENCHMARKS.get(n, n) for n in names]
    fig17 = isolated_comparison(names, depthwise=st.depthwise)
    layers = layer_speedups(names, depthwise=st.depthwise)
    atomic_write_text(out / "fig17.csv", fig17.to_csv(index=False, float_format="%.6g"))
    atomic_write_text(out / "fig17_layers.csv", layers.to_csv(index=False, float_format="%.6g"))
    nets = fig17["network"].tolist()
    if plots:
        from npusched.report.plots import grouped_bars

        for col, label, fname in (
            ("isolated_speedup", "speedup over the monolithic array (x)", "fig17_speedup.png"),
            ("isolated_energy_ratio", "energy reduction (x)", "fig17_energy.png"),
        ):
            grouped_bars(
                out / fname,
                [*nets, "geomean"],
                {"planaria": [*fig17[col].tolist(), _gmean(fig17[col])]},
                ylabel=label,
                title="Fig. 17: each DNN alone, 16 fission subarrays vs 128x128 (batch 1)",
                reference=1.0,
                annotate=True,
            )
    speedup = {n: _r(v) for n, v in zip(nets, fig17["isolated_speedup"], strict=True)}
    eratio = {n: _r(v) for n, v in zip(nets, fig17["isolated_energy_ratio"], strict=True)}
    dw = fig17["depthwise"].to_numpy(bool)
    tiny = next((n for n in nets if "tiny-yolo" in n), None)
    over = layers[layers["speedup"] > DEPTHWISE_BOUND]
    dwl = layers[layers["kind"] == str(LayerKind.DWCONV)]
    summary: dict[str, Any] = {
        "benchmarks": st.benchmarks,
        "depthwise": st.depthwise,
        "isolated_speedup": speedup,
        "isolated_energy_ratio": eratio,
        "headline": {
            "isolated_speedup_geomean": {
                "ours": _r(_gmean(fig17["isolated_speedup"]), 3),
                "paper": PAPER["isolated_speedup_mean"],
            },
            "isolated_energy_ratio_geomean": {
                "ours": _r(_gmean(fig17["isolated_energy_ratio"]), 3),
                "paper": PAPER["isolated_energy_ratio_mean"],
            },
            "isolated_speedup_mean": {
                "ours": _r(fig17["isolated_speedup"].mean(), 3),
                "paper": PAPER["isolated_speedup_mean"],
            },
            "isolated_energy_ratio_mean": {
                "ours": _r(fig17["isolated_energy_ratio"].mean(), 3),
                "paper": PAPER["isolated_energy_ratio_mean"],
            },
            "isolated_speedup_tiny-yolo": {
                "ours": speedup.get(tiny) if tiny else None,
                "paper": PAPER["isolated_speedup_tiny-yolov3"],
            },
            "isolated_energy_ratio_tiny-yolo": {
                "ours": eratio.get(tiny) if tiny else None,
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
        "layer_bound": {
            "paper_bound_x": DEPTHWISE_BOUND,
            "max_layer_speedup_x": _r(layers["speedup"].max(), 3) if len(layers) else None,
            "max_depthwise_speedup_x": _r(dwl["speedup"].max(), 3) if len(dwl) else None,
            "layers_over_bound": len(over),
            "unexplained": over[over["reason"] == "unexplained"][
                ["network", "layer", "speedup"]
            ].to_dict("records"),
            "reason": over["reason"].iloc[int(np.argmax(over["speedup"]))] if len(over) else "",
        },
        "multi_tenant": {
            "status": "Fig. 12-16 with --multi-tenant (workloads in this file)",
            "figures": MULTI_TENANT_FIGURES,
            "paper": PAPER_MULTI_TENANT,
        },
    }
    if multi_tenant:
        summary["workloads"] = _workloads(out, st, scenarios, qos_levels, progress)
        summary["multi_tenant"]["setup"] = st.model_dump()
    summary["comparisons"] = comparisons(summary)
    summary["fidelity"] = fidelity(summary)
    atomic_write_text(out / "summary.json", json.dumps(summary, indent=2) + "\n")
    atomic_write_text(out / "report.md", _report_md(fig17, summary))
    return summary


def _workload(setup: MultiTenantSetup, scenario: str, qos: str) -> dict[str, Any]:
    """One (workload, QoS) point of Fig. 12-16: both systems' row."""
    row: dict[str, Any] = _multi_tenant(setup, [scenario], [qos])[scenario][qos]
    return row


def _store_meta(setup: MultiTenantSetup) -> dict[str, str]:
    return {"study": "planaria", "config_hash": point_key(setup.model_dump())}


def _workloads(
    out: Path,
    setup: MultiTenantSetup,
    scenarios: Sequence[str],
    qos_levels: Sequence[str],
    progress: bool,
) -> dict[str, dict[str, Any]]:
    """Fig. 12-16 per (workload, QoS), each one point of ``out``'s store
    (:func:`~npusched.experiments.store.run_points`: a killed run resumes, a store of another
    setup is refused)."""
    params = setup.model_dump()
    grid = [(w, q) for w in scenarios for q in qos_levels]
    points = [
        StudyPoint(
            point_key("planaria/multi-tenant", params, w, q),
            partial(_workload, setup, w, q),
            f"{w}/{q}",
        )
        for w, q in grid
    ]
    rows = run_points(out, _store_meta(setup), points, progress=progress, desc="Planaria Fig. 12-16")
    found: dict[str, dict[str, Any]] = {}
    for (w, q), row in zip(grid, rows, strict=True):
        found.setdefault(w, {})[q] = row
    return found


def run_suite(suite: PlanariaSuite, out: Path, *, quick: bool, progress: bool) -> dict[str, Any]:
    """``npusched reproduce planaria`` with the parameters of ``suite``."""
    return reproduce(
        out,
        quick=quick,
        plots=suite.plots,
        progress=progress,
        networks=tuple(suite.networks),
        multi_tenant=suite.multi_tenant,
        setup=suite.mt_setup(),
        scenarios=tuple(suite.scenarios),
        qos_levels=tuple(suite.qos_levels),
    )
