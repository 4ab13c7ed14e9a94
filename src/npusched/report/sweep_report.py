"""``npusched report DIR``: one report over every sweep and reproduction under ``DIR``.

Inputs, found anywhere below ``DIR``:

* sweep directories (``npusched sweep``): an ``experiment.json`` next to ``points/``;
* reproduction outputs (``npusched reproduce <paper>``): a ``summary.json`` with a
  ``headline`` section ``{quantity: {"ours": x, "paper": y}}``;
* comparisons (``npusched compare``): a ``compare.csv`` next to its ``summary.json``.

Outputs in the report directory (``DIR`` unless ``--out``): ``index.md`` (tables, images linked
from ``report_files/``), ``index.html`` (the same content, self-contained: every image is
embedded as a base64 ``data:`` URI) and the PNGs in ``report_files/``. (Not ``report.md``: the
reproduction suites write their own ``report.md`` into their directories.)

Per sweep, with ``x`` the experiment's ``report.x`` axis (default: the first grid axis whose
values are all numbers) and a *series* one combination of the other axes:

* a table: mean, standard deviation and count over seeds of each report metric, per series
  and x;
* metric-vs-x curves: the mean over seeds as a line, the band from the lowest to the highest
  seed (the seed spread);
* latency CDFs: per series, every finished request's latency pooled over seeds, at the largest
  x (the heaviest load of a rate sweep), or over all points without an x axis;
* normalised bars: each series' mean of each metric over all its points divided by the
  baseline series' (``report.baseline``, default the first series), so the baseline is 1.

Headline numbers are tabulated as ours, the paper's and their ratio.
"""

from __future__ import annotations

import base64
import html
import json
import os
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from npusched._io import atomic_write_text
from npusched.errors import ConfigError
from npusched.report.plots import figure, grouped_bars, save_png

__all__ = ["find_inputs", "write_report"]

FILES_DIR = "report_files"


@dataclass
class _Section:
    title: str
    paragraphs: list[str] = field(default_factory=list)
    tables: list[tuple[str, pd.DataFrame]] = field(default_factory=list)
    images: list[tuple[str, Path]] = field(default_factory=list)


def _read_json(path: Path) -> Any:
    """``path``'s JSON; a missing, unreadable or malformed file raises :class:`ConfigError`
    naming it (a hand-edited or truncated ``experiment.json``)."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except OSError as e:
        raise ConfigError(f"{path}: cannot read: {e.strerror}") from None
    except ValueError as e:
        raise ConfigError(f"{path}: not valid JSON: {e}") from None


def find_inputs(directory: Path) -> tuple[list[Path], list[Path]]:
    """Sweep directories and reproduction ``summary.json`` files below ``directory``."""
    sweeps = sorted(p.parent for p in directory.rglob("experiment.json"))
    # stored output of the report itself is not an input
    sweeps = [s for s in sweeps if FILES_DIR not in s.parts]
    heads: list[Path] = []
    for p in sorted(directory.rglob("summary.json")):
        try:
            data = json.loads(p.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(data, dict) and isinstance(data.get("headline"), dict):
            heads.append(p)
    return sweeps, heads


def _compare_section(d: Path, base: Path, files: Path) -> _Section:
    """``npusched compare``'s output: its means table and its normalised bars."""
    data = _read_json(d / "summary.json")
    rel = d.relative_to(base) if d.is_relative_to(base) else d
    sec = _Section(f"Compare: NP-FCFS, PREMA, Planaria, capped and not (`{rel}`)")
    sec.paragraphs.append(
        f"Planaria workload {data.get('scenario')} at QoS {data.get('qos')}, "
        f"{data.get('instances')} instance{'' if data.get('instances') == 1 else 's'} of "
        f"{data.get('n_requests')} requests per load, the "
        "same requests for every system on the same 128x128 MACs; means over instances. "
        f"What it shows: `{rel / 'report.md'}`."
    )
    if data.get("cap_w") is not None:
        sec.paragraphs.append(
            f"PREMA+DFS and Planaria+DFS run under a {float(data['cap_w']):g} W power cap: "
            "layer-wise DFS picks, before every layer, the highest clock (100-700 MHz) whose "
            "power fits the job's share of the cap (a Planaria job on n subarrays: n/16 of it, "
            "the chip's idle power counted once). Energy, peak and average power are the "
            "chip's (jobs computing plus idle units) for every system, so the capped rows show "
            "what the cap costs in latency, ANTT and SLA rate, and that the peak stays under it."
        )
    means = pd.DataFrame(data.get("means", []))
    head = [c for c in ("load", "system") if c in means.columns]
    means = means[head + [c for c in means.columns if c not in head]]
    sec.tables.append(("Means over instances", means))
    if (d / "compare.png").is_file():
        img = files / f"compare_{_slug(str(rel))}.png"
        img.write_bytes((d / "compare.png").read_bytes())
        sec.images.append(("Normalised to NP-FCFS", img))
    return sec


def _slug(text: str) -> str:
    return "".join(c if c.isalnum() else "_" for c in text).strip("_")[:60] or "x"


def _is_number(v: Any) -> bool:
    return isinstance(v, int | float | np.integer | np.floating) and not isinstance(v, bool)


def _sweep_section(sweep_dir: Path, files: Path, base: Path) -> _Section:
    from npusched.experiments.store import load_results

    meta = _read_json(sweep_dir / "experiment.json")
    if not isinstance(meta, dict):
        raise ConfigError(f"{sweep_dir / 'experiment.json'}: not a JSON object")
    name = str(meta.get("name", sweep_dir.name))
    sec = _Section(f"Sweep: {name}")
    if meta.get("description"):
        sec.paragraphs.append(str(meta["description"]))
    df = load_results(sweep_dir)
    rel = sweep_dir.relative_to(base) if sweep_dir.is_relative_to(base) else sweep_dir
    sec.paragraphs.append(
        f"Directory `{rel}`: {len(df)} of {meta.get('n_points', '?')} points finished; "
        f"axes: {', '.join(meta.get('axes', [])) or '(none)'}; seeds: {meta.get('seeds')}."
    )
    if df.empty:
        return sec
    hints = meta.get("report", {})
    axes = [a for a in meta.get("axes", []) if a in df.columns]
    x = hints.get("x")
    if x is None:
        x = next((a for a in axes if all(_is_number(v) for v in df[a])), None)
    others = [a for a in axes if a != x]
    metrics = [m for m in hints.get("metrics", ["antt", "stp"]) if m in df.columns]
    df = df.copy()
    df["series"] = (
        df[others].astype(str).agg(" / ".join, axis=1) if others else pd.Series("all", df.index)
    )
    series = list(dict.fromkeys(df["series"]))
    keys = ["series", *([x] if x else [])]
    if metrics:
        g = df.groupby(keys, sort=False)[metrics]
        table = g.mean().round(4).astype(str) + " ± " + g.std(ddof=0).round(4).astype(str)
        table.insert(0, "seeds", g.size())
        sec.tables.append(("Mean ± standard deviation over seeds", table.reset_index()))
    slug = _slug(name)
    # Many series (a suite's grid has a hundred) are split over several figures.
    per = max(1, int(hints.get("series_per_plot") or 12))
    chunks = [series[i : i + per] for i in range(0, len(series), per)]
    baseline = hints.get("baseline")
    if baseline not in series:
        baseline = next((s for s in series if baseline is not None and baseline in s), series[0])
    means = df.groupby("series", sort=False)[metrics].mean() if metrics else None
    for ci, chunk in enumerate(chunks):
        part = "" if len(chunks) == 1 else f" ({ci + 1}/{len(chunks)})"
        tag = "" if len(chunks) == 1 else f"_{ci + 1}"
        if x and metrics:
            sec.images.append(
                (
                    f"Metrics against {x}{part}",
                    _curves(df, x, chunk, metrics, files / f"{slug}_curves{tag}.png"),
                )
            )
        if "latencies_s" in df.columns:
            sub = df if x is None else df[df[x] == df[x].max()]
            where = "all points" if x is None else f"{x} = {df[x].max()}"
            sec.images.append(
                (
                    f"Latency CDF ({where}, pooled over seeds){part}",
                    _cdf(sub, chunk, files / f"{slug}_cdf{tag}.png"),
                )
            )
        if means is not None and len(series) > 1:
            shown = chunk if baseline in chunk else [baseline, *chunk]
            norm = {
                s: [float(means.loc[s, m] / means.loc[baseline, m]) for m in metrics]
                for s in shown
            }
            path = grouped_bars(
                files / f"{slug}_bars{tag}.png",
                [textwrap.fill(m.replace("_", " "), 14) for m in metrics],  # labels must differ
                norm,
                ylabel=f"normalised to {baseline}",
                title=f"{name}: mean over all points, normalised to {baseline}{part}",
                reference=1.0,
            )
            sec.images.append((f"Normalised to {baseline}{part}", path))
    return sec


def _curves(
    df: pd.DataFrame, x: str, series: Sequence[str], metrics: Sequence[str], path: Path
) -> Path:
    k = len(metrics)
    cols = min(k, 3)
    rows = (k + cols - 1) // cols
    fig = figure(4.0 * cols, 3.2 * rows)
    axes = fig.subplots(rows, cols, squeeze=False).ravel()
    for ax, m in zip(axes, metrics, strict=False):
        for s in series:
            g = df[df["series"] == s].groupby(x)[m]
            xs = np.asarray(g.mean().index, dtype=np.float64)
            ax.plot(xs, g.mean().to_numpy(dtype=np.float64), marker="o", markersize=3, label=s)
            ax.fill_between(
                xs,
                g.min().to_numpy(dtype=np.float64),
                g.max().to_numpy(dtype=np.float64),
                alpha=0.2,
            )
        ax.set_xlabel(x, fontsize=8)
        ax.set_ylabel(m, fontsize=8)
        ax.grid(alpha=0.3)
    for ax in axes[k:]:
        ax.set_visible(False)
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside upper center", ncol=min(len(series), 4), fontsize=7)
    return save_png(fig, path)


def _cdf(df: pd.DataFrame, series: Sequence[str], path: Path) -> Path:
    fig = figure(6.0, 3.6)
    ax = fig.add_subplot()
    for s in series:
        parts = [np.asarray(v, dtype=np.float64) for v in df.loc[df["series"] == s, "latencies_s"]]
        v = np.sort(np.concatenate(parts)) if parts else np.empty(0)
        if v.size:
            ax.step(v * 1e3, np.arange(1, v.size + 1) / v.size, where="post", label=s)
    ax.set_xscale("log")
    ax.set_xlabel("latency (ms)")
    ax.set_ylabel("fraction of requests")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
    return save_png(fig, path)


def _headline_section(path: Path, base: Path) -> _Section:
    data = _read_json(path)
    rel = path.parent.relative_to(base) if path.parent.is_relative_to(base) else path.parent
    sec = _Section(f"Reproduction: {rel}")
    rows = []
    for key, val in data["headline"].items():
        if not isinstance(val, dict):
            continue
        ours, paper = val.get("ours"), val.get("paper")
        ratio = ours / paper if _is_number(ours) and _is_number(paper) and paper else None
        rows.append({"quantity": key, "ours": ours, "paper": paper, "ours / paper": ratio})
    full = path.parent / "report.md"
    more = f" Full reproduction report: `{rel / 'report.md'}`." if full.is_file() else ""
    sec.paragraphs.append(
        f"Headline numbers of `{rel / path.name}`: ours beside the paper's.{more}"
    )
    sec.tables.append(("Headline", pd.DataFrame(rows)))
    return sec


def _cell(v: Any) -> str:
    if v is None or (isinstance(v, float) and not np.isfinite(v)):
        return "-"
    if isinstance(v, float):
        return f"{v:.4g}"
    return str(v)


def _md_table(df: pd.DataFrame) -> str:
    cols = [str(c) for c in df.columns]
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for row in df.itertuples(index=False):
        lines.append("| " + " | ".join(_cell(v).replace("|", "\\|") for v in row) + " |")
    return "\n".join(lines)


def _html_table(df: pd.DataFrame) -> str:
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in df.columns)
    body = "".join(
        "<tr>" + "".join(f"<td>{html.escape(_cell(v))}</td>" for v in row) + "</tr>"
        for row in df.itertuples(index=False)
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


_CSS = (
    "body{font-family:sans-serif;max-width:1100px;margin:2em auto;color:#222}"
    "table{border-collapse:collapse;font-size:13px;margin:1em 0}"
    "td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}"
    "img{max-width:100%}"
)


def write_report(
    directory: str | os.PathLike[str], out: str | os.PathLike[str] | None = None
) -> tuple[Path, Path]:
    """Write ``index.html`` and ``index.md`` for everything below ``directory`` (see the
    module docstring). Returns their paths."""
    d = Path(directory)
    if not d.is_dir():
        raise ConfigError(f"{d}: not a directory; give a sweep or reproduction output directory")
    sweeps, heads = find_inputs(d)
    compares = sorted(
        p.parent for p in d.rglob("compare.csv") if (p.parent / "summary.json").is_file()
    )
    if not sweeps and not heads and not compares:
        raise ConfigError(
            f"{d}: no sweep (experiment.json) or reproduction (summary.json with a headline) "
            "below it; run `npusched sweep` or `npusched reproduce` first"
        )
    o = Path(out) if out is not None else d
    from npusched.experiments.runner import check_out_dir

    check_out_dir(o, option="--out" if out is not None else "DIRECTORY")
    files = o / FILES_DIR
    files.mkdir(parents=True, exist_ok=True)
    sections = [_headline_section(p, d) for p in heads]
    sections += [_compare_section(c, d, files) for c in compares]
    sections += [_sweep_section(s, files, d) for s in sweeps]
    title = f"npusched report: {d.resolve().name}"
    md = [f"# {title}", ""]
    body = [f"<h1>{html.escape(title)}</h1>"]
    for sec in sections:
        md += [f"## {sec.title}", ""]
        body.append(f"<h2>{html.escape(sec.title)}</h2>")
        for p in sec.paragraphs:
            md += [p, ""]
            body.append(f"<p>{html.escape(p)}</p>")
        for caption, table in sec.tables:
            md += [f"**{caption}**", "", _md_table(table), ""]
            body.append(f"<h3>{html.escape(caption)}</h3>{_html_table(table)}")
        for caption, img in sec.images:
            rel = os.path.relpath(img, o)
            md += [f"![{caption}]({rel})", ""]
            data = base64.b64encode(img.read_bytes()).decode("ascii")
            body.append(
                f'<figure><img alt="{html.escape(caption)}" src="data:image/png;base64,{data}">'
                f"<figcaption>{html.escape(caption)}</figcaption></figure>"
            )
    page = (
        f'<!DOCTYPE html><html><head><meta charset="utf-8"><title>{html.escape(title)}</title>'
        f"<style>{_CSS}</style></head><body>{''.join(body)}</body></html>\n"
    )
    html_path = atomic_write_text(o / "index.html", page)
    md_path = atomic_write_text(o / "index.md", "\n".join(md))
    return html_path, md_path
