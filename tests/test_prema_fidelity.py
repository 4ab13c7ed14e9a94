"""Issue 15: PREMA fidelity (token readings, paper job range, Fig. 15, checkpoint bandwidth,
report labels), SCALE-Sim topology import, and the defects a new user hit."""

from __future__ import annotations

import io
import json
import math
import tomllib
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from npusched.cli import main
from npusched.errors import ConfigError
from npusched.experiments.studies.prema.paper import HEADLINE_TEXT, PAPER_JOB_RANGE_S
from npusched.experiments.studies.prema.points import PremaSetup, policy_specs
from npusched.experiments.studies.prema.run import RANGE_DIR, reproduce
from npusched.hardware import compile_profile, get_device
from npusched.hardware.systolic import CHECKPOINT_BANDWIDTH_BPS, SystolicArray
from npusched.models.scalesim import from_scalesim, scalesim_output_size

ROOT = Path(__file__).resolve().parent.parent
TINY = PremaSetup.of(networks=("googlenet", "alexnet", "rnn-sa"), n_tasks=4, batch_sizes=(1,))
LABELS = {
    "NP-FCFS",
    "NP-SJF",
    "NP-PREMA",
    "P-PREMA",
    "P-PREMA-kill",
    "P-PREMA-dynamic",
    "P-PREMA-dynamic-kill",
    "P-PREMA-dynamic-cumulative",
}
SPECS = [s for s in policy_specs() if s.label in LABELS]


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    """One tiny reproduction with the paper-job-range study (shared by the tests below)."""
    out = tmp_path_factory.mktemp("prema") / "out"
    return out, reproduce(out, runs=2, setup=TINY, specs=SPECS, plots=False)


# --- fidelity --------------------------------------------------------------------------------
def test_report_label_matches_value(tiny_run: tuple[Path, dict[str, Any]]) -> None:
    """The NP-PREMA vs NP-SJF figure is SJF ANTT / PREMA ANTT (the paper's "92% of the ANTT of
    SJF": PREMA's performance as a share of SJF's), and its label says so."""
    out, summary = tiny_run
    pol = summary["policies"]
    value = summary["headline"]["np_prema_antt_vs_sjf"]["ours"]
    assert value == pytest.approx(pol["NP-SJF"]["antt"] / pol["NP-PREMA"]["antt"])
    label = HEADLINE_TEXT["np_prema_antt_vs_sjf"]
    assert "NP-SJF ANTT / NP-PREMA ANTT" in label
    report = (out / "report.md").read_text()
    assert f"| {label} | {value:.3g} |" in report
    row = next(r for r in summary["fidelity"] if "NP-SJF ANTT / NP-PREMA ANTT" in r["figure"])
    assert row["ours"] == f"{100 * value:.1f}%"


def test_both_token_readings_and_the_paper_range_are_reported(
    tiny_run: tuple[Path, dict[str, Any]],
) -> None:
    out, summary = tiny_run
    pol = summary["policies"]
    assert "P-PREMA-dynamic" in pol and "P-PREMA-dynamic-cumulative" in pol
    rng = summary["paper_job_range"]
    assert rng["setup"]["job_range_s"] == list(PAPER_JOB_RANGE_S)
    lo, hi = rng["job_span_ms"]
    assert lo >= 0.5 and hi <= 45.0
    import pandas as pd

    rec = pd.read_csv(out / RANGE_DIR / "main_records.csv")
    assert rec["isolated_s"].between(*PAPER_JOB_RANGE_S).all()
    fid = (out / "fidelity.md").read_text()
    assert "| figure | paper | ours | ours, cumulative tokens | ours, paper job range |" in fid
    assert "offered load 1.5" in fid and "0.5-45 ms" in fid
    assert "## Fidelity" in (out / "report.md").read_text()


def test_checkpoint_vs_kill_in_summary(tiny_run: tuple[Path, dict[str, Any]]) -> None:
    _, summary = tiny_run
    ck = summary["checkpoint_vs_kill"]
    pol = summary["policies"]
    a, b = pol["P-PREMA"], pol["P-PREMA-kill"]
    c, d = pol["P-PREMA-dynamic"], pol["P-PREMA-dynamic-kill"]
    antt = 100 * np.mean([b["antt"] / a["antt"] - 1, d["antt"] / c["antt"] - 1])
    stp = 100 * np.mean([a["stp"] / b["stp"] - 1, c["stp"] / d["stp"] - 1])
    fair = 100 * np.mean([a["fairness"] / b["fairness"] - 1, c["fairness"] / d["fairness"] - 1])
    assert ck["antt_pct"] == pytest.approx(antt)
    assert ck["stp_pct"] == pytest.approx(stp)
    assert ck["fairness_pct"] == pytest.approx(fair)
    assert {p["pair"] for p in ck["pairs"]} == {
        "P-PREMA vs P-PREMA-kill",
        "P-PREMA-dynamic vs P-PREMA-dynamic-kill",
    }
    assert all(p["kill_wasted_share_pct"] >= 0 for p in ck["pairs"])


def test_checkpoint_bandwidth_is_the_paper_implied_one() -> None:
    """59 us for the full 8 MiB UBUF/ACCQ (PREMA Sec. IV-D) -> 142 GB/s; the profile (which
    the engine uses for checkpoint saves and restores) carries it, not the 358 GB/s peak."""
    assert pytest.approx(142.2e9, rel=1e-3) == CHECKPOINT_BANDWIDTH_BPS
    dev = SystolicArray()
    assert dev.memory_bandwidth_bps == 358e9
    assert 8 * 2**20 / dev.checkpoint_bandwidth_bps == pytest.approx(59e-6)
    from npusched.models import get_network

    prof = compile_profile(get_network("alexnet"), dev, (1,))
    assert prof.memory_bandwidth_bps == pytest.approx(CHECKPOINT_BANDWIDTH_BPS)
    other = compile_profile(
        get_network("alexnet"), get_device("prema-npu", checkpoint_bandwidth_bps=1e9), (1,)
    )
    assert other.memory_bandwidth_bps == 1e9
    np.testing.assert_array_equal(other.latency_s, prof.latency_s)  # layer timing unchanged
    with pytest.raises(Exception, match="checkpoint_bandwidth_bps"):
        SystolicArray(checkpoint_bandwidth_bps=0)


# --- defect 1, 6, 10: output directories -------------------------------------------------------
def test_reproduce_checks_the_output_dir_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(ConfigError, match="cannot create the output directory"):
        reproduce(blocker / "out", runs=1, setup=TINY, specs=SPECS[:1], plots=False)
    # an unwritable directory (simulated: tests may run as root) fails before any point
    import tempfile

    def deny(*args: Any, **kwargs: Any) -> str:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(tempfile, "mkdtemp", deny)
    out = tmp_path / "ro"
    with pytest.raises(ConfigError, match=r"cannot write there: .*Permission denied"):
        reproduce(out, runs=1, setup=TINY, specs=SPECS[:1], plots=False)
    assert not (out / "main_points.csv").exists()


def test_empty_out_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["reproduce", "prema", "--out", "", "--runs", "1"]) == 2
    assert "--out: empty path" in capsys.readouterr().err
    cfg = tmp_path / "c.toml"
    cfg.write_text('[workload]\nkind = "prema"\nmodels = ["alexnet"]\nwindow_s = 0.01\n')
    assert main(["run", str(cfg), "--out", "", "--quiet"]) == 2
    assert "--out: empty path" in capsys.readouterr().err


def test_folder_of_another_configuration_is_refused(tmp_path: Path) -> None:
    specs = [s for s in SPECS if s.label == "NP-FCFS"]
    reproduce(tmp_path, runs=1, setup=TINY, specs=specs, plots=False, paper_range=False)
    other = TINY.replace(seed=1)
    with pytest.raises(ConfigError, match="holds points of another configuration"):
        reproduce(tmp_path, runs=1, setup=other, specs=specs, plots=False, paper_range=False)


# --- defect 7, 8: strict configs ---------------------------------------------------------------
BASE = {
    "workload": {"kind": "prema", "models": ["alexnet"], "window_s": 0.01},
}


@pytest.mark.parametrize(
    ("patch", "field"),
    [
        ({"workload": {**BASE["workload"], "n_tasks": "8"}}, "workload.n_tasks"),
        ({"workload": {**BASE["workload"], "n_tasks": 8.0}}, "workload.n_tasks"),
        ({"workload": {**BASE["workload"], "batch_sizes": [4.0]}}, "workload.batch_sizes"),
        ({"sim": {"checkpoint_cost": "yes"}}, "sim.checkpoint_cost"),
        ({"sim": {"checkpoint_cost": 1}}, "sim.checkpoint_cost"),
        ({"seed": "3"}, "seed"),
    ],
)
def test_counts_and_switches_are_strict(patch: dict[str, Any], field: str) -> None:
    from npusched.experiments.config import parse_config

    with pytest.raises(ConfigError, match=rf"^c\.toml: {field}"):
        parse_config({**BASE, **patch}, source="c.toml")
    parse_config({**BASE, "sim": {"checkpoint_cost": False}}, source="c.toml")  # still fine


def test_parameter_a_policy_never_uses_is_refused() -> None:
    from npusched.experiments.config import parse_config

    with pytest.raises(
        ConfigError,
        match=r"policy\.params\.mechanism: NP-FCFS is non-preemptive and never uses it; "
        r"allowed: \(none\)",
    ):
        parse_config({**BASE, "policy": {"name": "NP-FCFS", "params": {"mechanism": "kill"}}})
    cfg = parse_config({**BASE, "policy": {"name": "P-HPF", "params": {"mechanism": "kill"}}})
    assert cfg.policy.params == {"mechanism": "kill"}


# --- defect 9: help text ------------------------------------------------------------------------
def test_help_shows_no_bool_after_flags(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "--help"]) == 0
    text = capsys.readouterr().out
    assert "<bool>" not in text and "{config}" not in text
    assert "npusched run [OPTIONS] CONFIG" in text
    assert main(["profile", "--help"]) == 0
    text = capsys.readouterr().out
    assert "prema-npu" in text and "see the README" not in text
    assert main(["reproduce", "prema", "--help"]) == 0
    assert "<bool>" not in capsys.readouterr().out


# --- defect 11: summary.json of npusched run ------------------------------------------------------
def test_run_summary_counts_are_integers(tmp_path: Path) -> None:
    cfg = tmp_path / "c.toml"
    cfg.write_text(
        'seed = 1\n[workload]\nkind = "prema"\nmodels = ["alexnet", "vgg-16"]\n'
        "window_s = 0.001\nn_tasks = 6\nbatch_sizes = [1]\n[sim]\nuntil_s = 0.01\n"
    )
    assert main(["run", str(cfg), "--out", str(tmp_path / "o"), "--quiet"]) == 0
    text = (tmp_path / "o" / "summary.json").read_text()
    assert text.endswith("}\n")
    doc = json.loads(text)
    for key in ("n_requests", "n_finished", "n_unfinished", "preemptions"):
        assert isinstance(doc[key], int), key
    assert doc["n_requests"] == 6 == doc["n_finished"] + doc["n_unfinished"]
    assert doc["n_unfinished"] > 0  # the horizon cut the run: the counts differ


# --- defect 12: packaging ------------------------------------------------------------------------
def test_license_is_an_spdx_string() -> None:
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert meta["project"]["license"] == "Apache-2.0"
    assert any(r.startswith("setuptools>=77") for r in meta["build-system"]["requires"])


# --- defect 13: plots and tables -------------------------------------------------------------------
def test_table_column_uses_one_separator_style() -> None:
    from npusched.report.tables import render

    buf = io.StringIO()
    render([{"n": 9408}, {"n": 36864}, {"n": 12}], "table", out=buf)
    text = buf.getvalue()
    assert "9,408" in text and "36,864" in text and "9408" not in text
    buf = io.StringIO()
    render([{"n": 9408}, {"n": 12}], "table", out=buf)
    assert "9408" in buf.getvalue()


def test_plots_mark_missing_bars_and_keep_legends_off_the_bars(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from npusched.report import plots

    figs: list[Any] = []
    real = plots.save_png

    def keep(fig: Any, path: Any) -> Path:
        figs.append(fig)
        return real(fig, path)

    monkeypatch.setattr(plots, "save_png", keep)
    plots.panels(
        tmp_path / "p.png",
        ["RRB", "PREMA"],
        {"ANTT": {"CHECKPOINT": [1.0, 2.0], "KILL": [math.nan, 1.5]}},
        note="n/a: not run",
    )
    plots.grouped_bars(
        tmp_path / "g.png", ["A", "B"], {"x": [1.0, math.nan], "y": [2.0, 3.0]}, ylabel="v"
    )
    for fig in figs:
        ax = fig.axes[0]
        assert ax.get_legend() is None and len(fig.legends) == 1  # a figure legend, outside
        assert sum(t.get_text() == "n/a" for t in ax.texts) == 1
    assert figs[0]._supxlabel.get_text() == "n/a: not run"


# --- SCALE-Sim topologies -----------------------------------------------------------------------
def _scalesim_cycles(net: Any, rows: int = 128, cols: int = 128) -> np.ndarray:
    """SCALE-Sim's compute cycles for a weight-stationary ``rows x cols`` array (the formula
    its ResNet-50 report obeys exactly, see tests/data/scalesim/README.md)."""
    c = net.columns
    folds = np.ceil(c["k"] / rows) * np.ceil(c["n"] / cols)
    return folds * (c["m"] + 2 * rows + cols - 2) - 1


def test_scalesim_resnet50_matches_the_report(data_dir: Path) -> None:
    import csv

    net = from_scalesim(data_dir / "scalesim" / "resnet50.csv")
    with open(data_dir / "scalesim" / "resnet50_ws128_COMPUTE_REPORT.csv") as f:
        ref = np.array([int(r[2]) for r in list(csv.reader(f))[1:] if r])
    assert len(net.layers) == len(ref) == 54 and net.name == "resnet50"
    assert net.layers[0].m == 110 * 110 and net.layers[0].k == 7 * 7 * 3  # ceil((224-7+2)/2)
    ours = SystolicArray(acc_depth=None, memory_stalls=False).layer_costs(net, 1).cycles
    err = np.abs(ours - ref) / ref
    assert err.max() < 0.0053  # 0.524% at worst for ResNet-50
    np.testing.assert_array_equal(_scalesim_cycles(net), ref)


@settings(max_examples=40, deadline=None)
@given(
    h=st.integers(1, 64),
    r=st.integers(1, 7),
    c=st.integers(1, 300),
    n=st.integers(1, 300),
    stride=st.integers(1, 4),
)
def test_scalesim_any_topology_within_0_79_pct(
    tmp_path_factory: pytest.TempPathFactory, h: int, r: int, c: int, n: int, stride: int
) -> None:
    """The per-layer bound: ours is SCALE-Sim + 2F + 1 cycles, at most 3/382 = 0.79% (one
    fold, M = 1)."""
    r = min(r, h)
    p = tmp_path_factory.mktemp("t") / "t.csv"
    p.write_text(
        "Layer name, IFMAP Height, IFMAP Width, Filter Height, Filter Width, Channels, "
        f"Num Filter, Strides,\nL, {h}, {h}, {r}, {r}, {c}, {n}, {stride},\n"
    )
    net = from_scalesim(p)
    assert net.layers[0].m == scalesim_output_size(h, r, stride) ** 2
    ours = SystolicArray(acc_depth=None, memory_stalls=False).layer_costs(net, 1).cycles
    ref = _scalesim_cycles(net)
    folds = math.ceil(r * r * c / 128) * math.ceil(n / 128)
    assert ours[0] - ref[0] == 2 * folds + 1
    assert (ours[0] - ref[0]) / ref[0] <= 3 / 382 + 1e-12


def test_scalesim_gemm_topology_and_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    p = tmp_path / "gpt.csv"
    p.write_text("Layer, M, N, K,\nQKT, 1024, 1024, 64,\nFC, 1, 1000, 2048,\n")
    net = from_scalesim(p)
    assert [(ly.m, ly.k, ly.n) for ly in net.layers] == [(1024, 64, 1024), (1, 2048, 1000)]
    worst = SystolicArray(acc_depth=None, memory_stalls=False).layer_costs(net, 1).cycles
    # one-row GEMM: 16 x 8 folds of (1 + 384) cycles against SCALE-Sim's 16 x 8 x 383 - 1
    assert worst[1] == 16 * 8 * 385 and _scalesim_cycles(net)[1] == 16 * 8 * 383 - 1
    assert main(["models", "import", str(p), "-f", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["name"] for r in rows] == ["QKT", "FC"] and rows[0]["macs"] == 1024 * 64 * 1024
    bad = tmp_path / "bad.csv"
    bad.write_text("Layer, M, N, K,\nQKT, 1024, x, 64,\n")
    assert main(["models", "import", str(bad)]) == 2
    assert "line 2: column 'N': not an integer (got 'x')" in capsys.readouterr().err
