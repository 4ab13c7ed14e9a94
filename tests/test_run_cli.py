"""End to end: ``npusched run CONFIG --out DIR``."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from npusched.cli import main
from npusched.experiments import runner
from npusched.experiments.config import load_config
from npusched.metrics import read_records
from npusched.workloads import poisson_workload, save_trace

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"

PREMA = """seed = 0
[workload]
kind = "prema"
n_tasks = 8
models = ["resnet-50", "resnet-18"]
window_s = 0.01
[policy]
name = "P-HPF"
[metrics]
sla_n = [2, 4]
"""


def _cfg(tmp_path: Path, text: str = PREMA, name: str = "cfg.toml") -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


def _run(cfg: Path, out: Path, *extra: str) -> int:
    return main(["run", str(cfg), "--out", str(out), "--quiet", *extra])


def test_run_writes_records_and_summary(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cfg = _cfg(tmp_path)
    out = tmp_path / "out"
    assert _run(cfg, out) == 0
    assert sorted(p.name for p in out.iterdir()) == ["records.parquet", "summary.json"]
    assert "antt" in capsys.readouterr().out  # the summary table

    summary = json.loads((out / "summary.json").read_text())
    assert list(summary) == sorted(summary)
    rec = read_records(out / "records.parquet")
    assert len(rec) == 8 and summary["n_requests"] == 8 and summary["n_unfinished"] == 0
    assert set(rec["network"]) <= {"resnet-50", "resnet-18"}
    assert (rec["latency_s"] >= rec["isolated_s"] * (1 - 1e-9)).all()
    # the summary is the metrics of the records
    ntt = rec["latency_s"] / rec["isolated_s"]
    assert summary["antt"] == pytest.approx(ntt.mean())
    assert summary["stp"] == pytest.approx((1 / ntt).sum())
    assert summary["sla_violation_rate_n4"] == pytest.approx((ntt > 4).mean())
    assert set(summary) >= {"fairness", "p95_high_priority_norm", "throughput_rps", "utilisation"}
    assert summary["slo_attainment"] is None  # no SLOs: null, not NaN
    assert 0 < summary["utilisation"] <= 1 + 1e-9


def test_rerun_is_identical_and_seed_matters(tmp_path: Path) -> None:
    cfg = _cfg(tmp_path)
    a, b, c = tmp_path / "a", tmp_path / "b", tmp_path / "c"
    assert _run(cfg, a) == 0 and _run(cfg, b) == 0
    assert (a / "summary.json").read_bytes() == (b / "summary.json").read_bytes()
    pd.testing.assert_frame_equal(
        read_records(a / "records.parquet"), read_records(b / "records.parquet")
    )
    # rerunning into the same directory replaces the files
    assert _run(cfg, a) == 0
    assert (a / "summary.json").read_bytes() == (b / "summary.json").read_bytes()
    assert _run(cfg, c, "--seed", "9") == 0
    ra, rc = read_records(a / "records.parquet"), read_records(c / "records.parquet")
    assert not np.array_equal(ra["arrival_s"].to_numpy(), rc["arrival_s"].to_numpy())


def test_bad_config_exits_2_with_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cfg = _cfg(tmp_path, PREMA.replace('name = "P-HPF"', 'name = "P-NOPE"'))
    out = tmp_path / "out"
    assert _run(cfg, out) == 2
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith(f"npusched: error: {cfg}: policy.name: unknown policy 'P-NOPE'")
    assert not out.exists()  # nothing written
    assert _run(tmp_path / "missing.toml", out) == 2
    assert "config file not found" in capsys.readouterr().err


def test_failed_write_leaves_no_half_result(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cfg = _cfg(tmp_path)
    out = tmp_path / "out"
    assert _run(cfg, out) == 0

    def boom(*args: object, **kwargs: object) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(pd.DataFrame, "to_parquet", boom)
    assert _run(cfg, out) == 2
    # the old pair is still there, untouched; no temp files
    assert sorted(p.name for p in out.iterdir()) == ["records.parquet", "summary.json"]


def test_poisson_with_qos_multiplier_and_progress(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = """seed = 4
[workload]
kind = "poisson"
rate_per_s = 200.0
n_requests = 300
models = ["resnet-18", "resnet-50"]
qos = 5.0
[policy]
name = "NP-FCFS"
"""
    monkeypatch.setattr(runner, "PROGRESS_DELAY_S", 0.01)
    with runner._progress_bar(5, True) as cb:
        assert cb is not None  # any run size gets a bar once it lasts PROGRESS_DELAY_S
    with runner._progress_bar(300, False) as cb:
        assert cb is None  # --quiet
    with runner._progress_bar(300, True) as cb:
        assert cb is not None
        cb(150)  # the engine reports finished requests
    out = runner.run_config(load_config(_cfg(tmp_path, text)), progress=True)
    rec = out.records
    assert np.allclose(rec["slo_s"], 5.0 * rec["isolated_s"])
    met = (rec["latency_s"] <= rec["slo_s"]).mean()
    assert out.summary["slo_attainment"] == pytest.approx(met)
    assert out.summary["sla_violation_rate_n5"] == pytest.approx(1 - met)


def test_trace_workload_relative_path(tmp_path: Path) -> None:
    reqs = poisson_workload(100.0, models=["resnet-18"], n_requests=20, random_state=1)
    save_trace(reqs, tmp_path / "traces" / "t.csv")
    cfg = _cfg(
        tmp_path,
        '[workload]\nkind = "trace"\npath = "traces/t.csv"\n[policy]\nname = "NP-FCFS"\n',
    )
    out = tmp_path / "out"
    assert _run(cfg, out) == 0
    rec = read_records(out / "records.parquet")
    assert rec["arrival_s"].tolist() == [r.arrival_s for r in reqs]
    # NP-FCFS on one network: requests finish in arrival order
    assert (np.diff(rec.sort_values("arrival_s")["finish_s"].to_numpy()) > 0).all()


def test_trace_errors_surface_as_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "t.csv").write_text("arrival_s,network\n0.1,resnet-18\n-2,resnet-18\n")
    cfg = _cfg(tmp_path, '[workload]\nkind = "trace"\npath = "t.csv"\n')
    assert _run(cfg, tmp_path / "out") == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "row 2: column 'arrival_s': negative arrival time" in err[0]


def test_example_prema_small_runs(tmp_path: Path) -> None:
    assert _run(EXAMPLES / "prema_small.toml", tmp_path / "o") == 0
    summary = json.loads((tmp_path / "o" / "summary.json").read_text())
    assert summary["n_requests"] == 8
