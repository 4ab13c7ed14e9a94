"""PNG plots (matplotlib, Agg canvas; no pyplot, nothing shown on screen).

Each function draws one figure from plain data and writes it to ``path``; the experiments call
them, so figures come straight from the CSV results. Every figure is a PNG at
:data:`PNG_DPI`; inside ``with figure_formats("svg")`` (``--figure-format``) it is also written
as SVG (or PDF) next to the PNG, under the same name.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import Any

import numpy as np

from npusched._io import atomic_path
from npusched.errors import ConfigError

#: Resolution of every PNG (dots per inch); figures are sized in inches.
PNG_DPI = 150

#: The formats ``--figure-format`` accepts.
FIGURE_FORMATS = ("png", "svg", "pdf")

_EXTRA: ContextVar[tuple[str, ...]] = ContextVar("npusched_figure_formats", default=())


@contextmanager
def figure_formats(*formats: str) -> Iterator[None]:
    """Inside the block, every figure saved by :func:`save_png` is also written in each of
    ``formats`` (``svg``, ``pdf``; ``png`` is always written).

    Raises:
        ConfigError: a format outside :data:`FIGURE_FORMATS`.
    """
    bad = [f for f in formats if f not in FIGURE_FORMATS]
    if bad:
        raise ConfigError(
            f"--figure-format: {bad[0]!r} is not a figure format; allowed: "
            + ", ".join(FIGURE_FORMATS)
        )
    token = _EXTRA.set(tuple(dict.fromkeys(f for f in formats if f != "png")))
    try:
        yield
    finally:
        _EXTRA.reset(token)


def extra_formats() -> tuple[str, ...]:
    """The formats :func:`save_png` writes besides PNG in the current context."""
    return _EXTRA.get()


#: Readable names of the metrics and axes the results carry (unit in parentheses).
READABLE: dict[str, str] = {
    "antt": "ANTT (x)",
    "stp": "STP",
    "fairness": "fairness",
    "sla_met": "SLA rate (fraction)",
    "slo_attainment": "SLO attainment (fraction)",
    "sla_violation_rate": "SLA violation rate (fraction)",
    "workload.rate_per_s": "arrival rate (requests/s)",
    "rate_per_s": "arrival rate (requests/s)",
    "energy_j": "energy (J)",
    "peak_power_w": "peak power (W)",
    "avg_power_w": "average power (W)",
    "throughput_per_s": "throughput (requests/s)",
    "policy.name": "policy",
    "load": "offered load",
}

_UNITS = (("_per_s", "1/s"), ("_ms", "ms"), ("_us", "us"), ("_s", "s"), ("_j", "J"), ("_w", "W"),
          ("_hz", "Hz"), ("_pct", "%"), ("_percent", "%"))  # fmt: skip


def readable(name: str, *, unit: bool = True) -> str:
    """A label a person reads for a result column or grid axis: ``p99_latency_s`` ->
    ``p99 latency (s)``, ``workload.rate_per_s`` -> ``arrival rate (requests/s)``, ``antt`` ->
    ``ANTT (x)``. ``unit=False`` leaves the unit out."""
    text = READABLE.get(name)
    if text is None:
        base, u = name.rsplit(".", 1)[-1], ""
        for suffix, sym in _UNITS:
            if base.endswith(suffix) and len(base) > len(suffix):
                base, u = base[: -len(suffix)], sym
                break
        text = base.replace("_", " ") + (f" ({u})" if u else "")
    if not unit and text.endswith(")") and " (" in text:
        text = text[: text.rindex(" (")]
    return text


def figure(width: float, height: float, *, dpi: int = 100) -> Any:
    """A matplotlib figure of ``width`` x ``height`` inches on an Agg canvas (constrained
    layout), not registered with pyplot."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), dpi=dpi, layout="constrained")
    FigureCanvasAgg(fig)
    return fig


def save_png(fig: Any, path: str | os.PathLike[str]) -> Path:
    """Save ``fig`` as a PNG file at :data:`PNG_DPI` atomically
    (:func:`npusched._io.atomic_path`), and in every format of :func:`figure_formats` beside
    it (``x.png`` -> ``x.svg``). Returns the PNG's path."""
    out = Path(path)
    with atomic_path(out) as tmp:
        fig.savefig(tmp, format="png", dpi=PNG_DPI)
    for fmt in _EXTRA.get():
        with atomic_path(out.with_suffix(f".{fmt}")) as tmp:
            fig.savefig(tmp, format=fmt)
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
    cols = k if k <= 4 else 3  # more panels wrap into a grid, three to a row
    rows = (k + cols - 1) // cols
    fig = figure(4.2 * cols + (1.6 if k > 1 else 0.0), 3.4 * rows + 0.4)
    grid = fig.subplots(rows, cols, squeeze=False).ravel()
    for ax in grid[k:]:
        ax.set_visible(False)
    axes = grid[:k]
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


def ours_vs_paper(
    path: str | Path,
    labels: Sequence[str],
    ours: Sequence[float],
    paper: Sequence[float],
    *,
    flagged: Sequence[bool],
    band: tuple[float, float] = (0.5, 2.0),
    title: str = "",
) -> Path:
    """Every compared value of a suite on one axis: ours as a dot, the paper's as a diamond
    marker, both divided by the paper's value (so every paper marker sits at 1 on a log axis and
    each dot's distance from it is ``ours / paper``). The ``band`` is shaded; flagged values
    are red.

    Args:
        path: output PNG file.
        labels: one per value (label with unit and figure).
        ours: our values (a row without both values is drawn "n/a").
        paper: the paper's values, in the unit of ``ours`` row by row.
        flagged: rows whose direction is opposite or whose ratio lies outside ``band``.
        band: the ratio interval the contract accepts (0.5-2).
        title: figure title.
    """
    n = max(len(labels), 1)
    fig = figure(9.0, 0.9 + 0.28 * n)
    ax = fig.add_subplot()
    y = np.arange(len(labels), dtype=np.float64)[::-1]
    ax.axvspan(band[0], band[1], color="0.92", zorder=0, label=f"ours / paper in {band[0]:g}-{band[1]:g}")
    ax.axvline(1.0, color="0.5", linewidth=0.8, zorder=1)
    lo, hi = band
    for yi, o, p, f in zip(y.tolist(), ours, paper, flagged, strict=True):
        o_f, p_f = float(o), float(p)
        if not (np.isfinite(o_f) and np.isfinite(p_f)) or p_f == 0.0:
            ax.text(1.0, yi, "n/a", ha="center", va="center", fontsize=7, color="0.4")
            continue
        r = o_f / p_f
        shown = r if r > 0 else band[0] / 4  # an opposite sign: drawn at the left edge, flagged
        lo, hi = min(lo, shown), max(hi, shown)
        ax.plot([1.0, shown], [yi, yi], color="0.6", linewidth=0.8, zorder=2)
        ax.plot(1.0, yi, marker="D", color="black", markersize=4, zorder=3, linestyle="none")
        ax.plot(shown, yi, marker="o", color="tab:red" if f else "tab:blue", markersize=6,
                zorder=4, linestyle="none")
        ax.annotate(f"{r:.2g}x", (max(shown, 1.0), yi), xytext=(7, 0), textcoords="offset points",
                    va="center", fontsize=7, color="tab:red" if f else "0.2")
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullFormatter

    ax.set_xscale("log")
    ax.set_xlim(lo / 1.6, hi * 1.6)
    ticks = [m * 10.0**e for e in range(-4, 5) for m in (1, 2, 5)]
    ax.xaxis.set_major_locator(FixedLocator([t for t in ticks if lo / 1.6 <= t <= hi * 1.6]))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_yticks(y, [str(s) for s in labels], fontsize=7)
    ax.set_ylim(-0.7, len(labels) - 0.3)
    ax.set_xlabel("ours / paper (log); diamond: paper, dot: ours, red: flagged")
    ax.grid(axis="x", alpha=0.3, which="both")
    if title:
        fig.suptitle(title, fontsize=10)
    return save_png(fig, path)
