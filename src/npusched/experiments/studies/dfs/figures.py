"""Layer-wise DFS vs DVFS: the figures (Fig. 4 clock per step, Fig. 5 FPS, Fig. 6 power and
energy) and the per-layer power table the study writes."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from npusched.experiments.studies.dfs.paper import POLICIES
from npusched.hardware.power import AB9
from npusched.models.ir import Network
from npusched.policies.power import StepSchedule

__all__ = ["draw_figures", "power_rows"]


def power_rows(device: AB9, net: Network) -> list[dict[str, Any]]:
    """Per-layer latency, power and energy at every Table-5 level, at 1.00 V and at DVFS's
    voltage (long format: one row per layer and level)."""
    from npusched.hardware.power import DVFS_VOLTAGES_V

    hi = device.power_table(net, 1, voltages_v=1.0)
    dv = device.power_table(net, 1, voltages_v=DVFS_VOLTAGES_V)
    rows = []
    for j, layer in enumerate(hi.layer_names):
        for i, f in enumerate(hi.frequency_hz):
            rows.append(
                {
                    "layer": j,
                    "name": layer,
                    "mhz": f / 1e6,
                    "latency_s": hi.latency_s[i, j],
                    "alpha_c": hi.alpha_c[i, j],
                    "power_w_1v00": hi.power_w[i, j],
                    "energy_j_1v00": hi.energy_j[i, j],
                    "dvfs_v": dv.voltage_v[i],
                    "power_w_dvfs": dv.power_w[i, j],
                    "energy_j_dvfs": dv.energy_j[i, j],
                }
            )
    return rows


def draw_figures(
    outdir: Path,
    names: Sequence[str],
    per_net: Mapping[str, Mapping[str, Mapping[str, Any]]],
    schedules: Mapping[str, Mapping[str, StepSchedule]],
    cap_w: float,
) -> None:
    from npusched.report.plots import figure, grouped_bars, panels, save_png

    cols = 2 if len(names) > 1 else 1
    nrows = -(-len(names) // cols)
    fig = figure(5.0 * cols, 2.2 * nrows)
    axes = fig.subplots(nrows, cols, squeeze=False).ravel()
    for ax, name in zip(axes, names, strict=False):
        for pol, style in (("DVFS", "-"), ("DFS", "--")):
            f = schedules[name][pol].frequency_hz / 1e6
            x = np.arange(len(f))
            ax.step(x, f, where="post", linestyle=style, label=pol, linewidth=1.0)
        ax.axhline(500, color="grey", linewidth=0.6, linestyle=":")
        ax.set_title(name, fontsize=9)
        ax.set_ylim(0, 1050)
        ax.set_xlabel("layer (step)", fontsize=8)
        ax.set_ylabel("MHz", fontsize=8)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    for ax in axes[len(names) :]:
        ax.set_visible(False)
    fig.suptitle(f"Fig. 4: layer-wise clock under {cap_w:g} W (DVFS 0.95 V at <= 500 MHz)")
    save_png(fig, outdir / "fig4_frequency.png")

    grouped_bars(
        outdir / "fig5_fps.png",
        list(names),
        {pol: [per_net[n][pol]["fps"] for n in names] for pol in POLICIES},
        ylabel="frames per second",
        title="Fig. 5: FPS at batch 1",
        annotate=True,
    )
    panels(
        outdir / "fig6_power.png",
        list(names),
        {
            "peak power (W)": {
                pol: [per_net[n][pol]["peak_power_w"] for n in names] for pol in POLICIES
            },
            "average power (W)": {
                pol: [per_net[n][pol]["avg_power_w"] for n in names] for pol in POLICIES
            },
        },
        title=f"Fig. 6: peak / average power (limit {cap_w:g} W, dashed)",
        reference=cap_w,
    )
    grouped_bars(
        outdir / "fig6_energy.png",
        list(names),
        {pol: [per_net[n][pol]["energy_per_frame_j"] for n in names] for pol in POLICIES},
        ylabel="energy per frame (J)",
        title="Energy per frame",
    )
