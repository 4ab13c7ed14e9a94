"""``npusched reproduce haxconn``: outputs and summary keys (a small subset runs by default)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from npusched.cli import main
from npusched.experiments.reproduce.haxconn import TABLE6, TABLE8_NETS, reproduce
from npusched.experiments.studies.haxconn.paper import TABLE8_PAPER
from npusched.experiments.studies.haxconn.report import _spearman, record
from npusched.report.comparisons import flagged, records_from_summary

FIELDS = ("id", "figure", "label", "paper", "ours", "ratio", "direction", "cause", "spread")


def test_table6_data_matches_paper() -> None:
    assert [e.exp for e in TABLE6] == list(range(1, 11))
    assert TABLE6[0].paper_ms == (17.05, 16.05, 19.73, 16.55, 13.01)
    assert {e.soc for e in TABLE6} == {"xavier", "orin", "snapdragon-865"}


def test_reproduce_subset(tmp_path: Path) -> None:
    s = reproduce(tmp_path, quick=True, parts=("table6",), experiments=(6,))
    exp = s["experiments"]["6"]
    for key in ("best_baseline", "best_baseline_latency_ms", "haxconn_latency_ms",
                "improvement_pct", "solver_s", "proven", "transitions"):
        assert key in exp
    assert exp["proven"] is True
    (row,) = s["solver_table6"]
    assert row["restricted proven"] and row["free <= heuristic"] and row["free gap"] >= 0
    assert exp["haxconn_latency_ms"] <= exp["best_baseline_latency_ms"] + 1e-9
    assert exp["improvement_pct"] >= 0
    for f in ("table6.csv", "table6.md", "predicted_vs_realised.csv", "gantt_exp6.png",
              "summary.json", "report.md"):
        assert (tmp_path / f).stat().st_size > 0
    assert json.loads((tmp_path / "summary.json").read_text())["experiments"]["6"] == exp


def test_table8_paper_data() -> None:
    """The paper's lower triangle: 55 cells, 10 of them "x" (Sec. 5.4)."""
    assert [len(r) for r in TABLE8_PAPER] == list(range(1, len(TABLE8_NETS) + 1))
    cells = [c for r in TABLE8_PAPER for c in r]
    assert len(cells) == 55 and sum(v is None for _, v in cells) == 10
    assert TABLE8_PAPER[5][3] == ("D/G", 1.32)  # ResNet18 x Inc-res-v2, the largest gain


def test_record_contract() -> None:
    r = record("x", "Table 6", "gain (%)", 20.0, 5.0, cause="because")
    assert tuple(r) == FIELDS and r["ratio"] == 0.25 and r["direction"] == "same"
    assert r["cause"] == "because"  # outside 0.5-2: the cause stays
    assert record("x", "Table 6", "gain (%)", 20.0, 15.0, cause="c")["cause"] == ""
    assert record("x", "Table 6", "gain (%)", 0.0, 0.0)["direction"] == "same"
    assert record("x", "Table 8", "gain (%)", 13.0, 0.0, cause="c")["direction"] == "n/a"
    assert record("x", "Table 7", "overhead (%)", 1.6, None, cause="c")["cause"] == "c"
    assert _spearman([1, 2, 3, 4], [10, 20, 30, 40]) == 1.0
    assert _spearman([1, 2, 3], [3, 2, 1]) == -1.0 and _spearman([1, 1, 1], [1, 2, 3]) is None


def test_comparisons_records(tmp_path: Path) -> None:
    """summary.json's comparisons: the contract's fields, a cause wherever one is asked for,
    `synthetic` in every label computed on our rooflines, Eq. 10 named in Table 8's."""
    s = reproduce(tmp_path, quick=True, parts=("table6", "table8", "fig5"), experiments=(6,),
                  table8_networks=("resnet-18",), fig5_networks=("resnet-18",))
    recs = s["comparisons"]
    figs = {r["figure"] for r in recs}
    assert {"Table 6", "Table 7", "Table 8", "Fig. 5", "Fig. 6", "Sec. 5.2", "abstract"} <= figs
    for r in recs:
        assert tuple(r) == FIELDS
        assert r["ours"] is not None or r["cause"]
        plain = r["id"].endswith("/latency_ms")  # a plain value: direction n/a by the contract
        if (r["direction"] != "same" and r["paper"] is not None and not plain) or flagged(r):
            assert r["cause"], r["id"]
        if r["figure"] != "Table 7":
            assert "synthetic" in r["label"], r["id"]
    (t8,) = [r for r in recs if r["id"].endswith("/fps_gain_pct")]
    assert t8["id"] == "table8/resnet-18/resnet-18/fps_gain_pct" and t8["paper"] == 23.0
    assert "Eq. 10" in t8["label"] and "Eq. 11" in t8["cause"]
    (n8,) = [r for r in recs if r["id"] == "table8/improved_cells"]
    assert n8["paper"] == 1.0 and n8["ours"] in (0.0, 1.0)  # the paper's resnet-18 pair: 1.23
    (t6,) = [r for r in recs if r["figure"] == "Table 6"]
    assert t6["paper"] == 23.0 and t6["ours"] == s["experiments"]["6"]["improvement_pct"]
    shown, source = records_from_summary(json.loads((tmp_path / "summary.json").read_text()))
    assert source == "comparisons" and len(shown) == len(recs)
    assert "## Comparisons with the paper" in (tmp_path / "report.md").read_text()


def test_cli_bad_part_one_line(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    rc = main(["reproduce", "haxconn", "--quick", "--only", "table9", "--out", str(tmp_path)])
    err = capsys.readouterr().err
    assert rc == 2 and "allowed: table6, table8, fig5, fig7, solver, gap" in err
    assert len(err.strip().splitlines()) == 1


@pytest.mark.slow
def test_cli_quick_all(tmp_path: Path) -> None:
    assert main(["reproduce", "haxconn", "--quick", "--out", str(tmp_path)]) == 0
    s = json.loads((tmp_path / "summary.json").read_text())
    assert len(s["experiments"]) == 10 and s["solver"]
    assert all(v["proven"] for v in s["experiments"].values())
    assert len(s["table6_gap"]) == 2
    for f in ("table8.csv", "fig5.png", "fig7.png", "fig7_swaps.csv", "solver.md",
              "solver_table6.csv", "table6_gap.csv"):
        assert (tmp_path / f).exists()


def test_cli_map(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["map", "googlenet", "resnet-18", "--soc", "orin", "--format", "csv"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("method,predicted_ms,realised_ms,fps,transitions")
    assert "HaX-CoNN (exhaustive" in out and "H2H" in out


def test_cli_map_measured_profiles(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    head = "network,group,first_layer,last_layer,accelerator,time_ms,out_ms,in_ms,mem_gbps\n"
    rows = "".join(
        f"{n},{g},{g},{g},{a},{t},0.01,0,{bw}\n"
        for n in ("a", "b") for g in range(3)
        for a, t, bw in (("GPU", 1.0 + g, 60), ("DLA", 1.5 + g, 40))
    )
    good = tmp_path / "p.csv"
    good.write_text(head + rows)
    assert main(["map", "a", "b", "--soc", "xavier", "--profile-csv", str(good)]) == 0
    assert "a: groups" in capsys.readouterr().out
    bad = tmp_path / "bad.csv"
    bad.write_text(head + rows.replace("1.5", "fast", 1))
    assert main(["map", "a", "b", "--soc", "xavier", "--profile-csv", str(bad)]) == 2
    err = capsys.readouterr().err
    assert "bad.csv:3: time_ms='fast'; expected a number" in err and len(err.strip().splitlines()) == 1
    assert main(["map", "a", "c", "--soc", "xavier", "--profile-csv", str(good)]) == 2
    assert "no rows for network 'c'; networks: a, b" in capsys.readouterr().err


def test_balance_bound_gain_by_hand() -> None:
    """The most a mapping could gain over GPU-only from whole-network times (Table 8's cause)."""
    from npusched.experiments.studies.haxconn.points import balance_bound_gain

    assert balance_bound_gain([1.0, 1.0], [1.0, 1.0]) == 100.0  # one DNN per accelerator
    # half of the work moves: GPU 2 - x = DLA 3x at x = 0.5, bound 1.5 ms, 2 / 1.5 - 1
    assert balance_bound_gain([1.0, 1.0], [3.0, 3.0]) == 33.3
    # the DLA-friendly DNN moves first (DLA 1 ms for 2 ms of GPU work): GPU 1 = DLA 1, bound 1
    assert balance_bound_gain([1.0, 2.0], [4.0, 1.0]) == 200.0
    # a fraction of the first DNN: GPU 4 - 3x = DLA 3x at x = 2/3, bound 2 ms
    assert balance_bound_gain([3.0, 1.0], [3.0, 3.0]) == 100.0
