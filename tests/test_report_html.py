"""The HTML report of ``npusched report`` / ``reproduce all``: parsed, every image decoded,
every suite's figures and comparisons present, flags and causes shown, provenance, Markdown
rendered, ``--figure-format``; and ``npusched schema``."""

from __future__ import annotations

import base64
import json
import os
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from npusched.cli import main
from npusched.experiments.store import load_results
from npusched.report.comparisons import flagged, records_from_summary
from npusched.report.plots import figure_formats, lines
from npusched.report.sweep_report import figure_caption, write_report

PNG = b"\x89PNG\r\n\x1a\n"


class Page(HTMLParser):
    """Sections (``<section id>``), their images, tables, rows, links and text."""

    def __init__(self) -> None:
        super().__init__()
        self.sections: dict[str, dict[str, Any]] = {}
        self.current: dict[str, Any] | None = None
        self.text: list[str] = []
        self.flag_rows = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "section" and a.get("id"):
            self.current = {"imgs": [], "tables": [], "links": [], "rows": 0}
            self.sections[str(a["id"])] = self.current
        if self.current is None:
            return
        if tag == "img":
            self.current["imgs"].append(a.get("src") or "")
        elif tag == "table":
            self.current["tables"].append(a.get("class") or "")
        elif tag == "a":
            self.current["links"].append(a.get("href") or "")
        elif tag == "tr" and a.get("data-id"):
            self.current["rows"] += 1
            if a.get("class") == "flag":
                self.flag_rows += 1

    def handle_endtag(self, tag: str) -> None:
        if tag == "section":
            self.current = None

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def _decode(uri: str) -> bytes:
    head, _, data = uri.partition(",")
    assert head in ("data:image/png;base64", "data:image/svg+xml;base64"), head
    return base64.b64decode(data, validate=True)


def _suite(root: Path, name: str, summary: dict[str, Any], figs: tuple[str, ...]) -> None:
    d = root / name
    d.mkdir(parents=True)
    (d / "summary.json").write_text(json.dumps(summary))
    for f in figs:
        lines(d / f, [1, 2, 3], {"a": [1, 2, 3]}, xlabel="load (x)", ylabel="ANTT (x)")
    (d / "report.md").write_text(
        f"# {name}\n\nSee `fig.csv` and [the data](data.csv); **bold**.\n\n"
        "| a | b |\n|---|---|\n| 1 | 2 |\n\n"
        f"![first]({figs[0]})\n"
    )


COMPARISONS = [
    {"id": "fig14/antt", "figure": "Fig. 14", "label": "ANTT gain (x)", "paper": 2.0,
     "ours": 2.2, "ratio": 1.1, "direction": "same", "cause": "", "spread": [2.0, 2.4]},
    {"id": "fig14/fair", "figure": "Fig. 14", "label": "fairness gain (x)", "paper": 4.0,
     "ours": 0.8, "ratio": 0.2, "direction": "opposite",
     "cause": "job lengths limited to the paper's 0.5-45 ms: 3.1x", "spread": None},
    {"id": "tab6/x", "figure": "Table 6", "label": "latency (ms)", "paper": 10.0,
     "ours": 35.0, "ratio": 3.5, "direction": "n/a", "cause": "", "spread": None},
]  # fmt: skip


@pytest.fixture
def outdir(tmp_path: Path) -> Path:
    root = tmp_path / "out"
    _suite(root, "prema", {"comparisons": COMPARISONS, "quick": True},
           ("fig11_nonpreemptive.png", "fig5a_preemption_latency.png"))  # fmt: skip
    _suite(root, "dfs", {"headline": {"fps_gain_mean": {"ours": 1.1, "paper": 0.33},
                                      "energy_change_mean": {"ours": 0.2, "paper": -0.14}}},
           ("fig5_fps.png",))  # fmt: skip
    (root / "provenance.json").write_text(
        json.dumps({"command": "npusched reproduce all --quick --out out", "mode": "quick",
                    "version": "9.9", "commit": "abc123", "started": "then", "finished": "now"})
    )  # fmt: skip
    return root


def test_every_suite_has_figures_and_comparisons(outdir: Path) -> None:
    html_path, md_path = write_report(outdir, load_sweep=load_results)
    page = Page()
    page.feed(html_path.read_text(encoding="utf-8"))
    page.close()
    suites = {k: v for k, v in page.sections.items() if k.startswith("suite-")}
    assert set(suites) == {"suite-prema", "suite-dfs"}
    for sec in suites.values():
        assert "comparisons" in sec["tables"]
        assert sec["rows"] >= 2
        # the ours-vs-paper chart, the suite's figures, and the image of its report.md
        assert len(sec["imgs"]) >= 3
    assert len(suites["suite-prema"]["imgs"]) == 4
    for sec in page.sections.values():
        for uri in sec["imgs"]:
            assert _decode(uri).startswith(PNG)
    text = " ".join(page.text)
    # flags: the opposite one with its cause, the ratio one without a cause, and two of DFS
    # (fps gain 3.3x; energy change of the opposite sign)
    assert page.flag_rows == 4
    assert "job lengths limited to the paper's 0.5-45 ms: 3.1x" in text
    assert "opposite direction" in text and "ratio outside 0.5-2" in text
    assert "no cause recorded" in text
    # labels, not raw keys, for the headline fallback
    assert "FPS gain of DFS over DVFS, mean over networks (fraction)" in text
    assert "fps_gain_mean" not in text
    # provenance
    for item in ("9.9", "abc123", "npusched reproduce all --quick --out out", "quick"):
        assert item in text
    # Markdown rendered, not shown raw: backticks became <code>, links are links
    html_text = html_path.read_text(encoding="utf-8")
    assert "`fig.csv`" not in html_text and "<code>fig.csv</code>" in html_text
    assert 'href="prema/data.csv"' in html_text and "<strong>bold</strong>" in html_text
    assert "<th>a</th>" in html_text  # the suite's Markdown table is a table
    md = md_path.read_text(encoding="utf-8")
    assert "![Fig. 11: nonpreemptive](prema/fig11_nonpreemptive.png)" in md
    assert "| Fig. 14 | fairness gain (x) | 4 | 0.8 | 0.2 | opposite | FLAG |" in md


def test_figure_format_svg_embeds_svg_and_pdf_links(outdir: Path) -> None:
    html_path, _ = write_report(outdir, figure_format="svg", load_sweep=load_results)
    page = Page()
    page.feed(html_path.read_text(encoding="utf-8"))
    svgs = [u for s in page.sections.values() for u in s["imgs"] if "svg" in u.split(",")[0]]
    assert svgs and all(b"<svg" in _decode(u) for u in svgs)  # the ours-vs-paper charts
    with figure_formats("pdf"):
        p = lines(outdir / "x.png", [1, 2], {"a": [1, 2]}, xlabel="x (s)", ylabel="y (J)")
    assert p.read_bytes().startswith(PNG)
    assert p.with_suffix(".pdf").read_bytes().startswith(b"%PDF")
    assert main(["report", str(outdir), "--figure-format", "gif"]) == 2


def test_headline_fallback_and_flags() -> None:
    recs, source = records_from_summary(
        {
            "headline": {
                "fps_gain_mean": {"ours": 1.0, "paper": 0.5},
                "x_y": {"ours": -1, "paper": 2},
            }
        }
    )
    assert source == "headline"
    assert recs[0]["figure"] == "Fig. 5" and recs[0]["ratio"] == 2.0 and not recs[0]["flag"]
    assert recs[1]["label"] == "x y" and recs[1]["direction"] == "n/a" and recs[1]["flag"]
    assert flagged({"direction": "opposite", "ratio": 1.0})
    assert not flagged({"direction": "same", "ratio": 0.5})
    assert records_from_summary({}) == ([], "none")


def test_figure_captions() -> None:
    assert figure_caption(Path("fig5a_preemption_latency.png")) == "Fig. 5a: preemption latency"
    assert figure_caption(Path("fig7_8_resnet-50.png")) == "Fig. 7/8: resnet-50"
    assert figure_caption(Path("gantt_exp1.png")) == "gantt exp1"


def test_report_cli_writes_a_self_contained_page(outdir: Path, tmp_path: Path) -> None:
    dest = tmp_path / "rep"
    assert main(["report", str(outdir), "--out", str(dest), "--quiet"]) == 0
    html_text = (dest / "index.html").read_text(encoding="utf-8")
    assert "http://" not in html_text.replace("http://www.w3.org", "")
    # links into the suites are relative to the report's directory
    assert f'href="{os.path.relpath(outdir / "prema" / "report.md", dest)}"' in html_text


def test_schema_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["schema", "run"]) == 0
    schema = json.loads(capsys.readouterr().out)
    assert schema["title"] == "RunConfig" and "workload" in schema["properties"]
    out = tmp_path / "exp.json"
    assert main(["schema", "experiment", "--out", str(out)]) == 0
    assert "grid" in json.loads(out.read_text())["properties"]
    assert main(["schema", "suite-prema"]) == 0
    capsys.readouterr()
    assert main(["schema", "nope"]) == 2
    assert "allowed: run, experiment, suite-prema" in capsys.readouterr().err


@pytest.mark.slow
def test_reproduce_all_quick_report_has_every_suite(tmp_path: Path) -> None:
    """The real thing: ``reproduce all --quick``; every suite's section has comparison rows,
    its ours-vs-paper chart and at least one of its own figures; every image decodes."""
    from npusched.experiments.reproduce.suites import SUITES, reproduce_all

    html_path, _ = reproduce_all(tmp_path, quick=True, progress=False, echo=lambda _: None)
    page = Page()
    page.feed(html_path.read_text(encoding="utf-8"))
    for name in SUITES.names():
        sec = page.sections[f"suite-{name}"]
        own = list((tmp_path / name).rglob("*.png"))
        assert own, name
        assert sec["rows"] >= 1 and "comparisons" in sec["tables"], name
        assert len(sec["imgs"]) >= 1 + len(own), name
    for sec in page.sections.values():
        for uri in sec["imgs"]:
            assert _decode(uri).startswith(PNG)
    assert json.loads((tmp_path / "provenance.json").read_text())["mode"] == "quick"
