"""``npusched report DIR``: one report over every sweep and reproduction under ``DIR``.

Inputs, found anywhere below ``DIR``:

* sweep directories (``npusched sweep``): an ``experiment.json`` next to ``points/``;
* reproduction outputs (``npusched reproduce <paper>``): a ``summary.json`` with
  ``comparisons`` (the reproduction contract, see :mod:`npusched.report.comparisons`) or, from
  a suite that writes none yet, a ``headline`` ``{quantity: {"ours": x, "paper": y}}``; every
  figure (``*.png``) in the suite's directory, and its ``report.md`` rendered;
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
import re
import textwrap
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from npusched._io import atomic_write_text
from npusched.errors import ConfigError
from npusched.report.plots import figure, grouped_bars, readable, save_png

__all__ = ["figure_caption", "find_inputs", "write_report"]

FILES_DIR = "report_files"


@dataclass
class _Section:
    title: str
    paragraphs: list[str] = field(default_factory=list)
    tables: list[tuple[str, pd.DataFrame]] = field(default_factory=list)
    images: list[tuple[str, Path]] = field(default_factory=list)
    comparisons: list[dict[str, Any]] = field(default_factory=list)
    source: str = "none"
    markdown_file: Path | None = None
    anchor: str = ""


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
    """Sweep directories and reproduction ``summary.json`` files (those with ``comparisons``
    or a ``headline``) below ``directory``."""
    sweeps = sorted(p.parent for p in directory.rglob("experiment.json"))
    # stored output of the report itself is not an input
    sweeps = [s for s in sweeps if FILES_DIR not in s.parts]
    heads: list[Path] = []
    for p in sorted(directory.rglob("summary.json")):
        try:
            data = json.loads(p.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(data, dict) and (
            isinstance(data.get("headline"), dict) or isinstance(data.get("comparisons"), list)
        ):
            heads.append(p)
    return sweeps, heads


def _compare_section(d: Path, base: Path, files: Path) -> _Section:
    """``npusched compare``'s output: its means table and its normalised bars."""
    data = _read_json(d / "summary.json")
    rel = d.relative_to(base) if d.is_relative_to(base) else d
    sec = _Section("Compare: NP-FCFS, PREMA, Planaria, capped and not")
    sec.paragraphs.append(
        f"Planaria workload {data.get('scenario')} at QoS {data.get('qos')}, "
        f"{data.get('instances')} instance{'' if data.get('instances') == 1 else 's'} of "
        f"{data.get('n_requests')} requests per load, the "
        "same requests for every system on the same 128x128 MACs; means over instances. "
        f"What it shows: [`{rel / 'report.md'}`]({rel / 'report.md'})."
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
    sec.tables.append(("Means over instances", means.rename(columns=readable)))
    if (d / "compare.png").is_file():
        img = files / f"compare_{_slug(str(rel))}.png"
        img.write_bytes((d / "compare.png").read_bytes())
        sec.images.append(("Normalised to NP-FCFS", img))
    return sec


def _slug(text: str) -> str:
    return "".join(c if c.isalnum() else "_" for c in text).strip("_")[:60] or "x"


def _is_number(v: Any) -> bool:
    return isinstance(v, int | float | np.integer | np.floating) and not isinstance(v, bool)


def _sweep_meta(sweep_dir: Path) -> dict[str, Any]:
    """A sweep's ``experiment.json`` as a dict, or :class:`ConfigError` naming the file."""
    meta = _read_json(sweep_dir / "experiment.json")
    if not isinstance(meta, dict):
        raise ConfigError(f"{sweep_dir / 'experiment.json'}: not a JSON object")
    return meta


def _sweep_section(
    sweep_dir: Path, files: Path, base: Path, load_results: Callable[[Path], pd.DataFrame]
) -> _Section:
    meta = _sweep_meta(sweep_dir)
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
        table = table.reset_index().rename(columns=readable)
        sec.tables.append(("Mean ± standard deviation over seeds", table))
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
                    f"Metrics against {readable(x)}: mean over seeds, band from the lowest to "
                    f"the highest seed{part}",
                    _curves(df, x, chunk, metrics, files / f"{slug}_curves{tag}.png"),
                )
            )
        if "latencies_s" in df.columns:
            sub = df if x is None else df[df[x] == df[x].max()]
            where = "all points" if x is None else f"{readable(x)} = {df[x].max()}"
            sec.images.append(
                (
                    f"Latency CDF ({where}, pooled over seeds){part}",
                    _cdf(sub, chunk, files / f"{slug}_cdf{tag}.png"),
                )
            )
        if means is not None and len(series) > 1:
            shown = chunk if baseline in chunk else [baseline, *chunk]
            norm = {
                s: [float(means.loc[s, m] / means.loc[baseline, m]) for m in metrics] for s in shown
            }
            path = grouped_bars(
                files / f"{slug}_bars{tag}.png",
                [textwrap.fill(readable(m, unit=False), 10) for m in metrics],  # labels must differ
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
        ax.set_xlabel(readable(x), fontsize=8)
        ax.set_ylabel(readable(m), fontsize=8)
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


_FIG = re.compile(r"^(fig|table)(\d+[a-z]?)((?:_\d+[a-z]?)*)(?:_(.*))?$")


def figure_caption(path: Path) -> str:
    """A readable caption from a figure's file name: ``fig5a_preemption_latency.png`` ->
    ``Fig. 5a: preemption latency``; ``fig7_8_resnet-50.png`` -> ``Fig. 7/8: resnet-50``."""
    m = _FIG.match(path.stem)
    if not m:
        return path.stem.replace("_", " ")
    kind = "Fig." if m.group(1) == "fig" else "Table"
    nums = m.group(2) + m.group(3).replace("_", "/")
    rest = (m.group(4) or "").replace("_", " ")
    return f"{kind} {nums}" + (f": {rest}" if rest else "")


def _suite_title(name: str) -> str:
    titles = {
        "prema": "PREMA (HPCA 2020)",
        "planaria": "Planaria (MICRO 2020)",
        "dfs": "Layer-wise DFS under a power cap",
        "fluid": "Fluid Batching",
        "haxconn": "HaX-CoNN (PPoPP 2024)",
    }
    return titles.get(name, name)


def _headline_section(path: Path, base: Path, files: Path) -> _Section:
    from npusched.report.comparisons import records_from_summary
    from npusched.report.plots import ours_vs_paper

    data = _read_json(path)
    rel = path.parent.relative_to(base) if path.parent.is_relative_to(base) else path.parent
    sec = _Section(f"Reproduction: {_suite_title(str(rel))}", anchor=f"suite-{_slug(str(rel))}")
    mode = data.get("quick")
    mode_txt = "" if mode is None else (" Quick mode." if mode else " Full run.")
    sec.paragraphs.append(
        f"Output directory [`{rel}`]({rel}/), numbers from [`{rel / path.name}`]({rel / path.name})."
        f"{mode_txt}"
    )
    sec.comparisons, sec.source = records_from_summary(data)
    full = path.parent / "report.md"
    if full.is_file():
        sec.markdown_file = full
    rows = [c for c in sec.comparisons if c["ours"] is not None and c["paper"] is not None]
    if rows:
        img = ours_vs_paper(
            files / f"{_slug(str(rel))}_ours_vs_paper.png",
            [f"{c['figure']}: {c['label']}" if c["figure"] else c["label"] for c in rows],
            [c["ours"] for c in rows],
            [c["paper"] for c in rows],
            flagged=[c["flag"] for c in rows],
            title=f"{_suite_title(str(rel))}: every compared value, ours over the paper's",
        )
        sec.images.append(("Ours against the paper: ours / paper for every compared value", img))
    for fig in sorted(path.parent.rglob("*.png"), key=lambda q: _natural(q.stem)):
        if FILES_DIR in fig.parts:
            continue
        cap = figure_caption(fig)
        sub = fig.parent.relative_to(path.parent)
        sec.images.append((cap if str(sub) == "." else f"{cap} ({sub})", fig))
    return sec


def _natural(text: str) -> list[Any]:
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", text)]


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
        "<tr>"
        + "".join(
            f"<td{' class=num' if _is_number(v) else ''}>{html.escape(_cell(v))}</td>" for v in row
        )
        + "</tr>"
        for row in df.itertuples(index=False)
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


#: A figure at least this many pixels wide (multi-panel, about 8.7 inches at 150 dpi) takes a
#: whole row of the report's figure grid; narrower ones sit two to a row.
WIDE_PX = 1300


def _png_width(path: Path) -> int:
    """Width in pixels from a PNG's header (0 if the file is not a PNG)."""
    with path.open("rb") as f:
        head = f.read(24)
    if head[:8] != b"\x89PNG\r\n\x1a\n":
        return 0
    return int.from_bytes(head[16:20], "big")


def _markdown() -> Any:
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark", {"html": False, "linkify": False}).enable("table")


_MIME = {".png": "image/png", ".svg": "image/svg+xml"}


def _data_uri(path: Path) -> str:
    mime = _MIME.get(path.suffix.lower(), "application/octet-stream")
    return f"data:{mime};base64," + base64.b64encode(path.read_bytes()).decode("ascii")


def _rebase_links(rendered: str, src_dir: Path, out_dir: Path) -> str:
    """Relative ``href``/``src`` of a suite's rendered ``report.md`` made relative to the
    report; images become ``data:`` URIs so the page stays self-contained."""

    def fix(m: re.Match[str]) -> str:
        attr, url = m.group(1), html.unescape(m.group(2))
        if re.match(r"^[a-z][a-z0-9+.-]*:|^#|^/", url):
            return m.group(0)
        target = src_dir / url
        if attr == "src" and target.is_file() and target.suffix.lower() in _MIME:
            return f'src="{_data_uri(target)}"'
        return f'{attr}="{html.escape(os.path.relpath(target, out_dir))}"'

    return re.sub(r'(href|src)="([^"]*)"', fix, rendered)


def _num_filter(v: Any) -> str:
    if v is None:
        return "-"
    if isinstance(v, bool):
        return str(v)
    if isinstance(v, int | float | np.integer | np.floating):
        f = float(v)
        if not np.isfinite(f):
            return "-"
        return f"{f:.3g}" if abs(f) < 1e5 else f"{f:.3e}"
    if isinstance(v, list | tuple):
        return " / ".join(_num_filter(x) for x in v)
    return str(v)


def _env() -> Any:
    from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape

    env = Environment(
        loader=PackageLoader("npusched.report", "templates"),
        autoescape=select_autoescape(enabled_extensions=("html", "html.j2"), default=False),
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    md = _markdown()
    from markupsafe import Markup

    env.filters["md_inline"] = lambda text: Markup(md.render(str(text)))
    env.filters["num"] = _num_filter
    env.filters["cell"] = lambda text: str(text).replace("|", "\\|").replace("\n", " ")
    return env


def write_report(
    directory: str | os.PathLike[str],
    out: str | os.PathLike[str] | None = None,
    *,
    figure_format: str = "png",
    progress: bool = False,
    load_sweep: Callable[[Path], pd.DataFrame] | None = None,
) -> tuple[Path, Path]:
    """Write ``index.html`` (self-contained) and ``index.md`` for everything below
    ``directory`` (see the module docstring). Returns their paths.

    Args:
        directory: a sweep, reproduction or ``reproduce all`` output directory.
        out: the report's directory (default ``directory``).
        figure_format: ``png`` (the default), ``svg`` (figures that have an SVG beside their
            PNG are embedded as SVG; the report's own figures are drawn as SVG too) or ``pdf``
            (PDFs written and linked beside the embedded PNGs).
        progress: a progress bar on stderr over the sections, shown after 1 s.
        load_sweep: reads a sweep directory's finished points as one frame (the caller's
            store: :func:`npusched.experiments.store.load_results`; the report reads no
            store itself); needed when ``directory`` holds a sweep.
    """
    from npusched.report.comparisons import RATIO_BAND
    from npusched.report.plots import FIGURE_FORMATS, figure_formats
    from npusched.report.progress import progress_bar
    from npusched.report.provenance import read_provenance

    if figure_format not in FIGURE_FORMATS:
        raise ConfigError(
            f"--figure-format: {figure_format!r} is not a figure format; allowed: "
            + ", ".join(FIGURE_FORMATS)
        )
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
    for s in sweeps:  # every input checked before any work starts (one line, nothing written)
        _sweep_meta(s)
    if sweeps and load_sweep is None:
        raise TypeError("write_report: load_sweep is needed to report a sweep")
    o = Path(out) if out is not None else d
    from npusched._io import check_out_dir

    check_out_dir(o, option="--out" if out is not None else "DIRECTORY")
    files = o / FILES_DIR
    files.mkdir(parents=True, exist_ok=True)
    prov = read_provenance(d)
    for key in ("started", "finished", "commit"):
        prov.setdefault(key, None)
    if prov.get("mode") == "unknown":  # no provenance.json: what the suites say of themselves
        flags = set()
        for p in heads:
            q = json.loads(p.read_text(encoding="utf-8")).get("quick")
            if isinstance(q, bool):
                flags.add(q)
        if len(flags) == 1:
            prov["mode"] = ("quick" if flags.pop() else "full") + " (from the suites' summary.json)"
    order = ["prema", "planaria", "dfs", "fluid", "haxconn"]
    heads.sort(key=lambda p: (order.index(p.parent.name) if p.parent.name in order else 99, p))
    jobs: list[Any] = [(_headline_section, (p, d, files)) for p in heads]
    jobs += [(_compare_section, (c, d, files)) for c in compares]
    jobs += [(_sweep_section, (s, files, d, load_sweep)) for s in sweeps]
    sections: list[_Section] = []
    with (
        figure_formats(figure_format),
        progress_bar(len(jobs), "report", enabled=progress, delay_s=1.0) as bar,
    ):
        for fn, args in jobs:
            sections.append(fn(*args))
            if bar is not None:
                bar.step(sections[-1].title[:40])
    if prov.get("mode") == "quick":
        for sec in sections:
            sec.paragraphs = [
                p.replace(" points finished;", " points of the quick run (seeds 0 and 1) finished;")
                for p in sec.paragraphs
            ]
    from markupsafe import Markup

    md = _markdown()
    used: set[str] = set()
    views: list[dict[str, Any]] = []
    for sec in sections:
        anchor = sec.anchor or _slug(sec.title).lower()
        while anchor in used:
            anchor += "_"
        used.add(anchor)
        figs = []
        for caption, img in sec.images:
            shown = img
            if figure_format == "svg" and img.with_suffix(".svg").is_file():
                shown = img.with_suffix(".svg")
            others = [
                os.path.relpath(img.with_suffix(f".{f}"), o)
                for f in ("svg", "pdf")
                if f == figure_format and img.with_suffix(f".{f}").is_file()
            ]
            figs.append(
                {
                    "caption": caption,
                    "uri": _data_uri(shown),
                    "rel": os.path.relpath(shown, o),
                    "others": others,
                    "wide": _png_width(img) >= WIDE_PX,
                }
            )
        markdown: Markup | None = None
        link = ""
        if sec.markdown_file is not None:
            text = sec.markdown_file.read_text(encoding="utf-8")
            markdown = Markup(_rebase_links(md.render(text), sec.markdown_file.parent, o))
            link = os.path.relpath(sec.markdown_file, o)
        views.append(
            {
                "title": sec.title,
                "anchor": anchor,
                "paragraphs": sec.paragraphs,
                "comparisons": sec.comparisons,
                "source": sec.source,
                "tables": [(c, Markup(_html_table(t))) for c, t in sec.tables],
                "md_tables": [(c, _md_table(t)) for c, t in sec.tables],
                "figures": figs,
                "markdown": markdown,
                "markdown_link": link,
            }
        )
    overview = [
        {
            "title": sec.title,
            "anchor": v["anchor"],
            "n": len(sec.comparisons),
            "flags": sum(1 for c in sec.comparisons if c["flag"]),
            "source": sec.source if sec.source != "headline" else "headline (no comparisons yet)",
        }
        for sec, v in zip(sections, views, strict=True)
        if sec.comparisons
    ]
    env = _env()
    ctx = {
        "title": f"npusched report: {d.resolve().name}",
        "prov": prov,
        "sections": views,
        "overview": overview,
        "band": [f"{RATIO_BAND[0]:g}", f"{RATIO_BAND[1]:g}"],
        "full_command": "npusched reproduce all --out " + str(d),
    }
    page = env.get_template("index.html.j2").render(**ctx)
    text = env.get_template("index.md.j2").render(**ctx)
    html_path = atomic_write_text(o / "index.html", page)
    md_path = atomic_write_text(o / "index.md", text)
    return html_path, md_path
