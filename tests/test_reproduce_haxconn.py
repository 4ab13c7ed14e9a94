"""``npusched reproduce haxconn``: outputs and summary keys (a small subset runs by default)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from npusched.cli import main
from npusched.experiments.reproduce.haxconn import TABLE6, reproduce


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
