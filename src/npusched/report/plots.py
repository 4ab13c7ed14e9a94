"""PNG plots (matplotlib, Agg canvas; no pyplot, no global state, nothing shown on screen).

Each function draws one figure from plain data and writes it to ``path``; the experiments call
them, so figures come straight from the CSV results.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from npusched._io import atomic_path


def figure(width: float, height: float, *, dpi: int = 100) -> Any:
    """A matplotlib figure of ``width`` x ``height`` inches on an Agg canvas (constrained
    layout), not registered with pyplot."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), dpi=dpi, layout="constrained")
    FigureCanvasAgg(fig)
    return fig


def save_png(fig: Any, path: str | os.PathLike[str]) -> Path:
    """Save ``fig`` as a PNG file atomically (:func:`npusched._io.atomic_path`). Returns the
    path."""
    out = Path(path)
    with atomic_path(out) as tmp:
        fig.savefig(tmp, format="png")
    return out


def _mark_missing(ax: Any, xs: Any, values: Any) -> None:
    """Write "n/a" at the foot of every bar slot whose value is NaN (not run, or no data), so
    an empty slot is never mistaken for a zero."""
    for xi, v in zip(
        np.asarray(xs).tolist(), np.asarray(values, dtype=np.float64).tolist(), strict=True
    ):
        if not np.isfinite(v):
            ax.text(
                xi,
                0.02,
                "n/a",
                transform=ax.get_xaxis_transform(),
                rotation=90,
                ha="center",
                va="bottom",
                fontsize=6,
                color="0.4",
            )


def _legend_outside(fig: Any, ax: Any, n: int, *, right: bool = False) -> None:
    """One legend for the figure outside the axes, so it never covers a bar: above them, or
    to their right (``right``; for panels under a title)."""
    handles, labels = ax.get_legend_handles_labels()
    if len(handles) > 1:
        loc, ncol = ("outside right upper", 1) if right else ("outside upper center", min(n, 4))
        fig.legend(handles, labels, loc=loc, ncol=ncol, fontsize=7)


def grouped_bars(
    path: str | Path,
    categories: Sequence[str],
    series: Mapping[str, Sequence[float]],
    *,
    ylabel: str,
    title: str = "",
    log: bool = False,
    reference: float | None = None,
    annotate: bool = False,
    note: str | None = None,
) -> Path:
    """One group of bars per category, one bar per series; a NaN bar is marked "n/a" and the
    legend sits below the axes.

    Args:
        path: output PNG file.
        categories: x-axis groups.
        series: bar heights per series name (one value per category; NaN leaves a gap).
        ylabel: y-axis label (state the unit or "normalised to ...").
        title: figure title.
        log: logarithmic y axis.
        reference: draw a dashed horizontal line at this value (e.g. 1.0 for a baseline).
        annotate: print each bar's value above it.
        note: a footnote under the figure (e.g. why some bars are n/a).
    """
    fig = figure(min(12.0, max(6.0, 0.45 * len(categories) * max(1, len(series)) ** 0.5 + 2)), 4.0)
    ax = fig.add_subplot()
    n = max(len(series), 1)
    width = 0.8 / n
    x = np.arange(len(categories), dtype=np.float64)
    for i, (name, vals) in enumerate(series.items()):
        v = np.asarray(vals, dtype=np.float64)
        xs = x + (i - (n - 1) / 2) * width
        bars = ax.bar(xs, v, width, label=name)
        _mark_missing(ax, xs, v)
        if annotate:
            ax.bar_label(bars, fmt="%.2g", fontsize=6, padding=1)
    ax.set_xticks(x, list(categories), rotation=30 if len(categories) > 6 else 0, ha="right")
    ax.set_ylabel(ylabel)
    if title:
        ax.set_title(title, fontsize=10)
    if log:
        ax.set_yscale("log")
    if reference is not None:
        ax.axhline(reference, color="black", linestyle="--", linewidth=0.8)
    _legend_outside(fig, ax, len(series))
    if note:
        fig.supxlabel(note, fontsize=6, color="0.3")
    ax.grid(axis="y", alpha=0.3)
    return save_png(fig, path)


def lines(
    path: str | Path,
    x: Sequence[float],
    series: Mapping[str, Sequence[float]],
    *,
    xlabel: str,
    ylabel: str,
    title: str = "",
    percent: bool = False,
) -> Path:
    """One line per series over ``x`` (e.g. SLA violation rate vs the SLA multiplier N).

    ``percent`` formats the y axis as percentages of fractions in [0, 1].
    """
    fig = figure(6.0, 3.6)
    ax = fig.add_subplot()
    xs = np.asarray(x, dtype=np.float64)
    for name, vals in series.items():
        ax.plot(xs, np.asarray(vals, dtype=np.float64), marker="o", markersize=3, label=name)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if percent:
        from matplotlib.ticker import PercentFormatter

        ax.yaxis.set_major_formatter(PercentFormatter(1.0))
    if title:
        ax.set_title(title, fontsize=10)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
    return save_png(fig, path)


def panels(
    path: str | Path,
    categories: Sequence[str],
    metrics: Mapping[str, Mapping[str, Sequence[float]]],
    *,
    title: str = "",
    reference: float | None = 1.0,
    note: str | None = None,
) -> Path:
    """Side-by-side bar panels, one per metric (e.g. ANTT / fairness / STP improvements).

    ``metrics`` maps a panel's y label to its series (as in :func:`grouped_bars`); NaN bars
    are marked "n/a", one legend for all panels sits below them, ``note`` is a footnote.
    """
    k = max(len(metrics), 1)
    fig = figure(4.2 * k, 3.6)
    axes = fig.subplots(1, k, squeeze=False)[0]
    x = np.arange(len(categories), dtype=np.float64)
    for ax, (ylabel, series) in zip(axes, metrics.items(), strict=False):
        n = max(len(series), 1)
        width = 0.8 / n
        for i, (name, vals) in enumerate(series.items()):
            xs = x + (i - (n - 1) / 2) * width
            v = np.asarray(vals, float)
            ax.bar(xs, v, width, label=name)
            _mark_missing(ax, xs, v)
        ax.set_xticks(x, list(categories), rotation=30, ha="right", fontsize=8)
        ax.set_ylabel(ylabel)
        if reference is not None:
            ax.axhline(reference, color="black", linestyle="--", linewidth=0.8)
        ax.grid(axis="y", alpha=0.3)
    _legend_outside(fig, axes[0], max((len(s) for s in metrics.values()), default=0), right=True)
    if title:
        fig.suptitle(title, fontsize=10)
    if note:
        fig.supxlabel(note, fontsize=6, color="0.3")
    return save_png(fig, path)
