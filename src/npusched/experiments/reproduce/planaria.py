"""Reproduce Planaria (MICRO 2020) Sec. VI: ``npusched reproduce planaria``.

The suite has two parts.

* **Isolated (Fig. 17), engine-independent - implemented.** Each of the nine DNNs of Table I
  runs alone at batch 1 on the whole fission array (16 subarrays, every layer on its fastest
  fission configuration, :class:`~npusched.hardware.fission.FissionArray`) and on PREMA's
  monolithic 128x128 array with the same PEs, buffers, clock and bandwidth (``prema-npu``,
  :class:`~npusched.hardware.systolic.SystolicArray`). Speedup = monolithic latency / fission
  latency; energy ratio = monolithic energy / fission energy, both charged with the same
  :class:`~npusched.hardware.energy.EnergyModel` (45 nm constants). Recurrent GNMT runs at the
  zoo's default sequence lengths. The paper reports 3.5x speedup and 6.3x energy reduction on
  average (arithmetic mean over the nine; Tiny YOLO 2.8x / 5.5x; depthwise networks most).
* **Multi-tenant (Fig. 12-16) - needs the engine core.** Throughput at SLA, SLA satisfaction
  rate, fairness and energy of Planaria's scheduler against PREMA on Workloads A/B/C x QoS
  S/M/H, and the node count of Fig. 16. They need several jobs at once on disjoint subarray
  sets with plan variants (issue 9). :data:`MULTI_TENANT_FIGURES` names them and
  :data:`PAPER_MULTI_TENANT` holds the paper's numbers; :func:`reproduce` records them as
  pending in ``summary.json`` until a ``multi_tenant`` runner is plugged in.

Outputs in the output directory: ``fig17.csv``, ``fig17_speedup.png``, ``fig17_energy.png``,
``summary.json`` and ``report.md``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from npusched._io import atomic_write_text
from npusched.hardware.energy import EnergyModel, systolic_energy_j
from npusched.hardware.fission import FissionArray
from npusched.hardware.profile import compile_profile
from npusched.hardware.systolic import SystolicArray
from npusched.models.ir import LayerKind
from npusched.models.zoo import get_network
from npusched.workloads.planaria import WORKLOADS

__all__ = [
    "MULTI_TENANT_FIGURES",
    "PAPER",
    "PAPER_MULTI_TENANT",
    "isolated_comparison",
    "reproduce",
]

#: The paper's Fig. 17 numbers (Sec. VI-B2) that ``report.md`` sets ours against.
PAPER: dict[str, float] = {
    "isolated_speedup_mean": 3.5,
    "isolated_energy_ratio_mean": 6.3,
    "isolated_speedup_tiny-yolov3": 2.8,
    "isolated_energy_ratio_tiny-yolov3": 5.5,
}

#: The paper's multi-tenant headline numbers (Sec. VI-B1), Planaria over PREMA, by figure.
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
    "fig13_sla_gain": {"A/M": 0.14, "A/H": 0.28, "C/S": 0.16, "C/H": 0.45},
    "fig14_fairness_x": {
        "A/S": 2.8,
        "A/M": 5.1,
        "A/H": 2.8,
        "B/M": 9.1,
        "C/S": 2.1,
        "C/M": 2.3,
        "C/H": 1.9,
    },
    "fig15_energy_reduction_x": {"C/S": 3.3, "C/M": 4.3, "C/H": 5.1},
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

#: Figures that need the multi-tenant engine (issue 9), with what each measures.
MULTI_TENANT_FIGURES: dict[str, str] = {
    "fig12": "throughput_qps: highest Poisson rate meeting the SLA, planaria vs prema",
    "fig13": "sla_rate: fraction of workload instances meeting the SLA at a fixed rate",
    "fig14": "fairness (PREMA's definition), planaria / prema",
    "fig15": "energy_j of the workloads, prema / planaria",
    "fig16": "minimum nodes for 99% SLA at a constant rate, one DNN per node",
}


def _has_depthwise(name: str) -> bool:
    return any(ly.kind == LayerKind.DWCONV for ly in get_network(name).layers)


def isolated_comparison(
    networks: Sequence[str] = WORKLOADS["C"],
    *,
    batch: int = 1,
    fission: FissionArray | None = None,
    monolithic: SystolicArray | None = None,
    energy: EnergyModel | None = None,
) -> pd.DataFrame:
    """Fig. 17: each network alone on 16 fission subarrays vs the monolithic array.

    Args:
        networks: zoo names (default: the nine of Workload-C).
        batch: batch size.
        fission: the fission device (default :class:`FissionArray` with ``energy``).
        monolithic: the baseline (default ``SystolicArray()``, i.e. ``prema-npu``).
        energy: the energy model charged to both (defaults if ``None``; a ``fission`` given
            with its own ``energy`` keeps it).

    Returns:
        One row per network: ``network``, ``depthwise`` (has depthwise layers),
        ``monolithic_ms`` / ``planaria_ms`` (isolated latency, milliseconds),
        ``isolated_speedup``, ``monolithic_mj`` / ``planaria_mj`` (energy, millijoules),
        ``isolated_energy_ratio``.
    """
    model = energy if energy is not None else EnergyModel()
    fa = fission if fission is not None else FissionArray(energy=model)
    sa = monolithic if monolithic is not None else SystolicArray()
    full = fa.variant(subarrays=int(fa.num_subarrays))
    rows = []
    for name in networks:
        net = get_network(name)
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


def _r(x: float, nd: int = 4) -> float:
    return float(round(float(x), nd))


def reproduce(
    out: str | Path,
    *,
    quick: bool = False,
    plots: bool = True,
    progress: bool = False,
    networks: Sequence[str] = WORKLOADS["C"],
) -> dict[str, Any]:
    """Write the Planaria reproduction into ``out`` and return the ``summary.json`` content.

    Args:
        out: output directory (created if needed).
        networks: the DNNs of Fig. 17 (default: the nine of Table I).
        quick: accepted for the CLI's uniformity; the isolated part is fast either way (the
            multi-tenant part will use it for fewer workload instances).
        plots: also draw the PNG figures.
        progress: unused until the multi-tenant part lands (it is one short loop).
    """
    del quick, progress
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    fig17 = isolated_comparison(networks)
    atomic_write_text(out / "fig17.csv", fig17.to_csv(index=False, float_format="%.6g"))
    nets = fig17["network"].tolist()
    if plots:
        from npusched.report.plots import grouped_bars

        for col, label, fname in (
            ("isolated_speedup", "speedup over the monolithic array (x)", "fig17_speedup.png"),
            ("isolated_energy_ratio", "energy reduction (x)", "fig17_energy.png"),
        ):
            grouped_bars(
                out / fname,
                [*nets, "mean"],
                {"planaria": [*fig17[col].tolist(), float(fig17[col].mean())]},
                ylabel=label,
                title="Fig. 17: each DNN alone, 16 fission subarrays vs 128x128 (batch 1)",
                reference=1.0,
                annotate=True,
            )
    speedup = {n: _r(v) for n, v in zip(nets, fig17["isolated_speedup"], strict=True)}
    eratio = {n: _r(v) for n, v in zip(nets, fig17["isolated_energy_ratio"], strict=True)}
    dw = fig17["depthwise"].to_numpy(bool)
    summary: dict[str, Any] = {
        "isolated_speedup": speedup,
        "isolated_energy_ratio": eratio,
        "headline": {
            "isolated_speedup_mean": {
                "ours": _r(fig17["isolated_speedup"].mean(), 3),
                "paper": PAPER["isolated_speedup_mean"],
            },
            "isolated_energy_ratio_mean": {
                "ours": _r(fig17["isolated_energy_ratio"].mean(), 3),
                "paper": PAPER["isolated_energy_ratio_mean"],
            },
            "isolated_speedup_tiny-yolov3": {
                "ours": speedup.get("tiny-yolov3"),
                "paper": PAPER["isolated_speedup_tiny-yolov3"],
            },
            "isolated_energy_ratio_tiny-yolov3": {
                "ours": eratio.get("tiny-yolov3"),
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
        "multi_tenant": {
            "status": "pending: needs the multi-tenant engine core (issue 9)",
            "figures": MULTI_TENANT_FIGURES,
            "paper": PAPER_MULTI_TENANT,
        },
    }
    atomic_write_text(out / "summary.json", json.dumps(summary, indent=2) + "\n")
    atomic_write_text(out / "report.md", _report_md(fig17, summary))
    return summary


def _report_md(fig17: pd.DataFrame, summary: dict[str, Any]) -> str:
    lines = [
        "# Planaria (MICRO 2020): our numbers vs the paper's",
        "",
        "## Fig. 17: each DNN alone (batch 1), 16 fission subarrays vs the monolithic array",
        "",
        "| network | depthwise | monolithic ms | planaria ms | speedup | energy reduction |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for r in fig17.itertuples(index=False):
        lines.append(
            f"| {r.network} | {'yes' if r.depthwise else 'no'} | {r.monolithic_ms:.3f} | "
            f"{r.planaria_ms:.3f} | {r.isolated_speedup:.2f}x | "
            f"{r.isolated_energy_ratio:.2f}x |"
        )
    lines += ["", "| quantity | ours | paper |", "|---|---:|---:|"]
    for key, val in summary["headline"].items():
        lines.append(f"| {key} | {val['ours']} | {val['paper'] if val['paper'] else '-'} |")
    lines += [
        "",
        "## Fig. 12-16 (multi-tenant)",
        "",
        summary["multi_tenant"]["status"] + ".",
        "",
    ]
    return "\n".join(lines)
