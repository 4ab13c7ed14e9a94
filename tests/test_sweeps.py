"""Sweeps: experiment files, backends, the resumable results store, the report and the trace."""

from __future__ import annotations

import itertools
import json
import os
import signal
import subprocess
import sys
import time
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from npusched.cli import main
from npusched.errors import ConfigError, NpuschedError
from npusched.experiments.store import done_ids, load_results, run_sweep
from npusched.experiments.sweep import (
    load_experiment,
    parse_experiment,
    parse_filters,
    select_points,
)
from npusched.report.sweep_report import write_report
from npusched.report.timeline import _lanes

SRC = Path(__file__).resolve().parent.parent / "src"
PACKAGED = SRC / "npusched" / "data" / "experiments" / "prema_rates.toml"

# Small PREMA-style experiment: 2 rates x 2 policies x 2 seeds = 8 points.
SMALL = """
name = "small"
seeds = [0, 1]
[base.workload]
kind = "poisson"
models = ["resnet-18", "alexnet"]
n_requests = {n}
rate_per_s = 100.0
[base.metrics]
sla_n = [2, 10]
[grid]
"workload.rate_per_s" = [100.0, 300.0]
policy = [{{name = "NP-FCFS"}}, {{name = "P-PREMA"}}]
[report]
metrics = ["antt", "stp", "p99_latency_s"]
baseline = "NP-FCFS"
"""


def _exp_file(tmp_path: Path, text: str | None = None, name: str = "exp.toml", n: int = 12) -> Path:
    p = tmp_path / name
    p.write_text(SMALL.format(n=n) if text is None else text)
    return p


def _metrics(df: pd.DataFrame) -> pd.DataFrame:
    return df.drop(columns=["wall_s"]).sort_values("point_id").reset_index(drop=True)


# --- experiment files -------------------------------------------------------------------------
def test_grid_expansion_order_ids_and_params(tmp_path: Path) -> None:
    exp = load_experiment(_exp_file(tmp_path))
    assert exp.name == "small"
    assert exp.axes == ["workload.rate_per_s", "policy"]
    assert len(exp.points) == 8  # 2 rates x 2 policies x 2 seeds
    assert [p.seed for p in exp.points] == [0, 1] * 4
    assert [p.combo for p in exp.points] == [0, 0, 1, 1, 2, 2, 3, 3]
    assert exp.points[2].params == {"workload.rate_per_s": 100.0, "policy": "P-PREMA"}
    assert exp.points[4].config["workload"]["rate_per_s"] == 300.0
    assert exp.points[3].config["policy"]["name"] == "P-PREMA"
    assert exp.points[3].config["seed"] == 1
    assert len({p.point_id for p in exp.points}) == 8
    # ids are a function of the complete config: reloading gives the same ids
    again = load_experiment(_exp_file(tmp_path))
    assert [p.point_id for p in again.points] == [p.point_id for p in exp.points]
    # changing the base changes every id
    other = load_experiment(_exp_file(tmp_path, name="other.toml", n=13))
    assert not {p.point_id for p in other.points} & {p.point_id for p in exp.points}


def test_seed_range_yaml_and_policy_params_label(tmp_path: Path) -> None:
    p = tmp_path / "e.yaml"
    p.write_text(
        "seeds: {start: 5, count: 3}\n"
        "base:\n  workload: {kind: prema, models: [alexnet], window_s: 0.01, n_tasks: 4}\n"
        "grid:\n  policy:\n    - {name: P-PREMA, params: {mechanism: kill}}\n"
        "    - {name: NP-FCFS}\n"
    )
    exp = load_experiment(p)
    assert exp.name == "e"
    assert [pt.seed for pt in exp.points] == [5, 6, 7, 5, 6, 7]
    assert exp.points[0].params["policy"] == "P-PREMA(mechanism=kill)"
    assert exp.points[3].params["policy"] == "NP-FCFS"


def test_packaged_experiment_loads() -> None:
    exp = load_experiment(PACKAGED)
    assert len(exp.points) == 3 * 4 * 5


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "seedz = [1]\n[base.workload]\nkind='prema'\nmodels=['alexnet']\nwindow_s=0.1\n",
            "seedz: unknown key; allowed: name, description, seeds, base, grid, grids, report",
        ),
        (
            "[base.workload]\nkind='prema'\nmodels=['alexnet']\nwindow_s=0.1\n[grid]\n'wrkld.x'=[1]\n",
            "grid.wrkld.x: unknown field path; allowed: a dotted path starting with name, hardware",
        ),
        (
            "[base.workload]\nkind='poisson'\nmodels=['alexnet']\nn_requests=5\nrate_per_s=1.0\n"
            "[grid]\n'workload.rate_per_s'=[1.0, -2.0]\n",
            "[point workload.rate_per_s=-2.0]: workload.rate_per_s: input should be greater than 0",
        ),
        (
            "[base.workload]\nkind='prema'\nmodels=['alexnet']\nwindow_s=0.1\n[grid]\n"
            "policy=[{name='P-PREMAX'}]\n",
            "[point policy=P-PREMAX]: policy.name:",
        ),
        (
            "[base]\nseed=3\n[base.workload]\nkind='prema'\nmodels=['alexnet']\nwindow_s=0.1\n",
            "base.seed: set seeds at the top level",
        ),
        (
            "[base.workload]\nkind='prema'\nmodels=['alexnet']\nwindow_s=0.1\n[grid]\n'sim.until_s'=[]\n",
            "grid.sim.until_s: list should have at least 1 item",
        ),
        (
            "[base.workload]\nkind='prema'\nmodels=['alexnet']\nwindow_s=0.1\n[report]\nx='policy'\n",
            "report.x: 'policy' is not a grid axis; allowed: (no grid axes)",
        ),
        ("seeds = {count = 0}\n", "seeds.count: input should be greater than 0"),
        ("[report]\nxx=1\n", "report.xx: unknown key; allowed: x, metrics, baseline"),
    ],
)
def test_bad_files_give_one_line_errors(tmp_path: Path, text: str, expected: str) -> None:
    p = _exp_file(tmp_path, text)
    with pytest.raises(ConfigError) as e:
        load_experiment(p)
    msg = str(e.value)
    assert msg.startswith(str(p)), msg
    assert expected in msg, msg
    assert "\n" not in msg


def test_bad_file_on_the_cli_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    p = _exp_file(tmp_path, "[grid]\nfoo = [1]\n")
    assert main(["sweep", str(p), "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("npusched: error: ") and "grid.foo: unknown field path" in err
    assert len(err.splitlines()) == 1


def test_filters_and_max_points(tmp_path: Path) -> None:
    exp = load_experiment(_exp_file(tmp_path))
    f = parse_filters(["policy=P-PREMA", "workload.rate_per_s=300"], exp)
    pts = select_points(exp, f)
    assert [(p.params["policy"], p.params["workload.rate_per_s"]) for p in pts] == [
        ("P-PREMA", 300.0)
    ] * 2
    assert len(select_points(exp, parse_filters(["seed=0", "seed=1"], exp))) == 8
    assert [p.index for p in select_points(exp, max_points=3)] == [0, 1, 2]
    with pytest.raises(ConfigError, match=r"unknown key 'polcy'; allowed: workload\.rate_per_s"):
        parse_filters(["polcy=x"], exp)
    with pytest.raises(ConfigError, match="expected KEY=VALUE"):
        parse_filters(["policy"], exp)
    with pytest.raises(ConfigError, match="--max-points must be >= 1"):
        select_points(exp, max_points=0)


# --- backends and store ------------------------------------------------------------------------
def test_backends_give_identical_results(tmp_path: Path) -> None:
    exp = load_experiment(_exp_file(tmp_path))
    frames = {}
    runs = {
        "inprocess": {"backend": "inprocess"},
        "process": {"backend": "process", "workers": 2},
        # a real Dask scheduler with two workers (threads of this process: no start-up cost)
        "dask": {"backend": "dask", "workers": 2, "local_processes": False},
    }
    for name, kw in runs.items():
        res = run_sweep(exp, tmp_path / name, progress=False, **kw)  # type: ignore[arg-type]
        assert (res.selected, res.skipped, res.ran) == (8, 0, 8)
        frames[name] = _metrics(pd.read_parquet(res.results))
    assert len(frames["inprocess"]) == 8
    pd.testing.assert_frame_equal(frames["inprocess"], frames["process"])
    pd.testing.assert_frame_equal(frames["inprocess"], frames["dask"])
    # a rerun resumes: nothing left to run
    res = run_sweep(exp, tmp_path / "inprocess", backend="inprocess", progress=False)
    assert (res.skipped, res.ran) == (8, 0)


def test_rows_carry_parameters_metrics_and_latencies(tmp_path: Path) -> None:
    exp = load_experiment(_exp_file(tmp_path))
    run_sweep(exp, tmp_path / "o", backend="inprocess", max_points=2, progress=False)
    df = pd.read_parquet(tmp_path / "o" / "results.parquet")
    assert list(df["index"]) == [0, 1]
    row = df.iloc[0]
    assert row["policy"] == "NP-FCFS" and row["workload.rate_per_s"] == 100.0
    assert row["n_requests"] == 12 and row["antt"] >= 1.0
    assert len(row["latencies_s"]) == row["n_finished"]
    assert json.loads(row["config_json"])["seed"] == 0
    meta = json.loads((tmp_path / "o" / "experiment.json").read_text())
    assert meta["name"] == "small" and meta["n_points"] == 8
    assert (tmp_path / "o" / "experiment.toml").read_text() == (tmp_path / "exp.toml").read_text()


def test_other_experiment_in_the_same_dir_is_refused(tmp_path: Path) -> None:
    exp = load_experiment(_exp_file(tmp_path))
    run_sweep(exp, tmp_path / "o", backend="inprocess", max_points=1, progress=False)
    other = parse_experiment({**exp.spec.model_dump(), "name": "other"}, "x.toml")
    with pytest.raises(ConfigError, match="holds experiment 'small', not 'other'"):
        run_sweep(other, tmp_path / "o", backend="inprocess", progress=False)


def test_unknown_backend_and_address(tmp_path: Path) -> None:
    exp = load_experiment(_exp_file(tmp_path))
    with pytest.raises(
        ConfigError, match="unknown backend 'ray'; allowed: inprocess, process, dask"
    ):
        run_sweep(exp, tmp_path / "o", backend="ray", progress=False)
    with pytest.raises(ConfigError, match="only the dask backend takes an address"):
        run_sweep(exp, tmp_path / "o", backend="process", address="tcp://x:1", progress=False)


def _tagged_processes(tag: str) -> list[int]:
    """The live processes whose environment holds ``NPUSCHED_TEST_TAG=tag`` (Linux's /proc)."""
    want = f"NPUSCHED_TEST_TAG={tag}".encode()
    pids = []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            env = (d / "environ").read_bytes()
            state = (d / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if want in env.split(b"\0") and state != "Z":
            pids.append(int(d.name))
    return pids


_SLOW_CALL = """
import time
from pathlib import Path


def slow(mark, s):
    time.sleep(s)
    Path(mark).write_text("x")
    return mark
"""

_WORKER_DRIVER = """
import multiprocessing, sys, time

import slow_call
from npusched.experiments import backends

if __name__ == "__main__":
    pool = backends._Workers(backends._pool_context(multiprocessing))
    conn = pool.start()
    assert pool.call(conn, slow_call.slow, sys.argv[1], 0.0) == sys.argv[1]
    conn.send_bytes(backends._call_bytes(slow_call.slow, sys.argv[2], 1.5))
    print(pool.procs[0].pid, flush=True)
    time.sleep(120)
"""


def test_a_worker_exits_after_its_chunk_once_the_driver_is_gone(tmp_path: Path) -> None:
    """A pool worker (``pool_worker`` on a pipe of its own): while the driver lives it waits for
    the next call; once the driver is gone (SIGKILL: nothing closed in order) the worker
    finishes the call under way and exits, the pool's fork server with it."""
    (tmp_path / "slow_call.py").write_text(_SLOW_CALL)
    first, second = tmp_path / "first", tmp_path / "second"
    tag = f"worker-exit-{os.getpid()}"
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(SRC), str(tmp_path)]),
        "NPUSCHED_TEST_TAG": tag,
    }
    driver = subprocess.Popen(
        [sys.executable, "-c", _WORKER_DRIVER, str(first), str(second)],
        env=env, cwd=tmp_path, stdout=subprocess.PIPE,
    )  # fmt: skip
    try:
        assert driver.stdout is not None
        worker = int(driver.stdout.readline())
        assert first.read_text() == "x"  # the first call done, the worker waits for the next
        time.sleep(0.2)
        assert worker in _tagged_processes(tag)  # the driver lives: the worker stays
        assert not second.exists()
        driver.kill()
        driver.wait()
        if Path("/proc/self/environ").exists():
            deadline = time.monotonic() + 30
            while _tagged_processes(tag) and time.monotonic() < deadline:
                time.sleep(0.1)
            assert not _tagged_processes(tag), "the worker or its fork server still runs"
            assert second.read_text() == "x"  # the call under way finished first
    finally:
        if driver.poll() is None:
            driver.kill()
            driver.wait()


@pytest.mark.parametrize("backend", ["inprocess", "process"])
def test_kill_9_mid_sweep_loses_no_finished_point_and_resumes(tmp_path: Path, backend: str) -> None:
    """Killed mid-sweep, in process or with a pool of two workers (whose rows travel packed to
    the driver while each worker writes its point's file), a sweep resumes from the files."""
    text = SMALL.format(n=150).replace("seeds = [0, 1]", "seeds = {count = 10}")
    path = _exp_file(tmp_path, text)
    out = tmp_path / "o"
    tag = f"kill-test-{os.getpid()}-{backend}"
    env = {
        **os.environ,
        "PYTHONPATH": f"{SRC}{os.pathsep}{os.environ.get('PYTHONPATH', '')}",
        "NPUSCHED_TEST_TAG": tag,  # inherited by the pool's server and workers
    }
    proc = subprocess.Popen(
        [sys.executable, "-m", "npusched.cli", "sweep", str(path), "--out", str(out),
         "--backend", backend, "--workers", "2", "--quiet"],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while len(done_ids(out)) < 3:
            assert proc.poll() is None, "the sweep ended before it could be killed"
            assert time.monotonic() < deadline, "no points finished within 60 s"
            time.sleep(0.05)
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait()
    assert proc.returncode == -signal.SIGKILL
    if backend == "process":
        # the pool's workers finish the chunk they hold (writing its points) and then exit
        # (their task queue is closed): wait until the point files stop changing
        n, still, deadline = -1, 0, time.monotonic() + 60
        while still < 10 and time.monotonic() < deadline:
            m = len(done_ids(out))
            still = still + 1 if m == n else 0
            n = m
            time.sleep(0.1)
    if backend == "process" and Path("/proc/self/environ").exists():
        # ... and then exit, the pool's fork server with them: nothing of the killed sweep
        # is left running
        deadline = time.monotonic() + 30
        while _tagged_processes(tag) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not _tagged_processes(tag), "the killed sweep's workers are still running"
    before = {p.name: p.stat().st_mtime_ns for p in (out / "points").glob("*.parquet")}
    assert 3 <= len(before) < 40
    # every file that exists is complete (readable), and no temporary file looks like a point
    for f in (out / "points").glob("*.parquet"):
        assert len(pd.read_parquet(f)) == 1
    # a temporary file the killed writer left is never taken for a point, and is cleaned up
    stale = out / "points" / f".x.parquet.{proc.pid}.0123456789ab.tmp"
    stale.write_bytes(b"half a parquet file")
    assert len(done_ids(out)) == len(before)
    exp = load_experiment(path)
    res = run_sweep(exp, out, backend=backend, workers=2, progress=False)
    assert not stale.exists()
    assert res.skipped == len(before) and res.ran == 40 - len(before)
    after = {p.name: p.stat().st_mtime_ns for p in (out / "points").glob("*.parquet")}
    assert all(after[k] == v for k, v in before.items())  # finished points were not rerun
    df = pd.read_parquet(res.results)
    assert list(df["index"]) == list(range(40))
    assert not list((out / "points").glob(".*.tmp"))


def test_twenty_point_prema_sweep_on_the_cli(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "o"
    args = ["sweep", str(PACKAGED), "--out", str(out), "--max-points", "20", "--quiet"]
    assert main([*args, "--backend", "inprocess"]) == 0
    assert "20 points selected, 0 already done, ran 20" in capsys.readouterr().out
    assert len(load_results(out)) == 20
    assert main([*args, "--filter", "policy=P-PREMA", "--dry-run"]) == 0
    assert "prema-rates: 20 of 60 points" in capsys.readouterr().out


@pytest.mark.slow
def test_dask_local_cluster_of_two_worker_processes(tmp_path: Path) -> None:
    exp = load_experiment(_exp_file(tmp_path))
    a = run_sweep(exp, tmp_path / "a", backend="inprocess", progress=False)
    b = run_sweep(exp, tmp_path / "b", backend="dask", workers=2, progress=False)
    pd.testing.assert_frame_equal(
        _metrics(pd.read_parquet(a.results)), _metrics(pd.read_parquet(b.results))
    )


@pytest.mark.slow
def test_thousand_point_prema_sweep(tmp_path: Path) -> None:
    text = (
        PACKAGED.read_text()
        .replace("count = 5", "count = 84")
        .replace("n_requests = 100", "n_requests = 30")
    )
    p = _exp_file(tmp_path, text)
    exp = load_experiment(p)
    assert len(exp.points) == 1008
    res = run_sweep(exp, tmp_path / "o", max_points=1000, progress=False)
    assert res.ran == 1000
    assert len(pd.read_parquet(res.results)) == 1000


# --- report ------------------------------------------------------------------------------------
class _Collect(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.imgs: list[str] = []
        self.tags: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        if tag == "img":
            self.imgs.append(dict(attrs)["src"] or "")


def test_report_html_and_markdown(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = tmp_path / "results"
    exp = load_experiment(_exp_file(tmp_path))
    run_sweep(exp, root / "small", backend="inprocess", progress=False)
    suite = root / "prema"
    suite.mkdir()
    (suite / "summary.json").write_text(
        json.dumps({"headline": {"antt_gain": {"ours": 2.0, "paper": 4.0}, "n": 3}})
    )
    assert main(["report", str(root)]) == 0
    assert "index.html" in capsys.readouterr().out
    html_text = (root / "index.html").read_text()
    parser = _Collect()
    parser.feed(html_text)
    parser.close()
    # the fidelity overview, the suite's comparisons (from its headline), the sweep's table
    assert parser.tags.count("table") == 3
    assert len(parser.imgs) == 4  # ours vs paper; the sweep's curves, CDF, normalised bars
    assert all(s.startswith("data:image/png;base64,") for s in parser.imgs)
    md = (root / "index.md").read_text()
    assert "|  | antt gain | 4 | 2 | 0.5 | n/a |  |  |" in md
    for name in ("small_curves.png", "small_cdf.png", "small_bars.png"):
        f = root / "report_files" / name
        assert f.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert f"report_files/{name}" in md


def test_report_splits_many_series_over_figures(tmp_path: Path) -> None:
    """Two series with ``series_per_plot = 1``: two figures of each kind; the second bar chart
    repeats the baseline beside its series; the table keeps both."""
    text = SMALL.format(n=8).replace(
        'baseline = "NP-FCFS"', 'baseline = "NP-FCFS"\nseries_per_plot = 1'
    )
    exp = load_experiment(_exp_file(tmp_path, text))
    root = tmp_path / "results"
    run_sweep(exp, root / "small", backend="inprocess", progress=False)
    write_report(root, load_sweep=load_results)
    md = (root / "index.md").read_text()
    for kind in ("curves", "cdf", "bars"):
        for part in (1, 2):
            f = root / "report_files" / f"small_{kind}_{part}.png"
            assert f.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and f"small_{kind}_{part}.png" in md
    assert "(2/2)" in md and "P-PREMA" in md and "NP-FCFS" in md


def test_report_of_an_empty_dir_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="no sweep"):
        write_report(tmp_path, load_sweep=load_results)


# --- trace -------------------------------------------------------------------------------------
def test_trace_round_trip(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cfg = tmp_path / "run.toml"
    cfg.write_text(
        "seed = 3\n[workload]\nkind = 'prema'\nn_tasks = 6\nmodels = ['resnet-18', 'alexnet']\n"
        "window_s = 0.005\n[policy]\nname = 'P-HPF'\n"
    )
    out = tmp_path / "trace.json"
    assert main(["trace", str(cfg), "--out", str(out)]) == 0
    assert "segments" in capsys.readouterr().out
    doc = json.loads(out.read_text())
    assert doc["otherData"]["policy"] == "P-HPF" and doc["otherData"]["seed"] == 3
    ex = [e for e in doc["traceEvents"] if e["ph"] == "X" and e["pid"] == 1]
    assert len(ex) == doc["otherData"]["n_segments"] > 0
    for e in ex:
        assert e["args"]["resource"] == "npu" and e["args"]["units"] == 1
        assert "frequency_hz" in e["args"] and "network" in e["args"]
    ex.sort(key=lambda e: e["ts"])
    for a, b in itertools.pairwise(ex):  # one lane: nothing overlaps
        assert a["ts"] + a["dur"] <= b["ts"] + 1e-9
    arrivals = [e for e in doc["traceEvents"] if e.get("cat") == "arrival"]
    assert len(arrivals) == 6


def test_lanes_separate_concurrent_segments() -> None:
    start = [0, 1, 2, 5, 5]
    end = [4, 3, 6, 6, 7]
    order = list(np.lexsort((end, start)))
    lanes = _lanes(order, start, end)
    assert lanes == [0, 1, 2, 0, 1]
    for lane in set(lanes):
        spans = sorted((start[k], end[k]) for k in range(5) if lanes[k] == lane)
        assert all(a[1] <= b[0] for a, b in itertools.pairwise(spans))


# --- reproduce all, compare -----------------------------------------------------------------------
def test_reproduce_all_runs_registered_suites_then_the_report(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from npusched.experiments.reproduce import suites
    from npusched.registry import Registry

    reg: Registry[dict[str, object]] = Registry("reproduction suite")
    calls: list[tuple[str, bool]] = []

    @reg.register("dfs")
    def _dfs(out: Path, *, quick: bool, progress: bool) -> dict[str, object]:
        # the real suite in its quick mode would take minutes; check the orchestration here
        calls.append(("dfs", quick))
        out.mkdir(parents=True)
        summary = {"headline": {"fps_gain": {"ours": 1.1, "paper": 1.2}}}
        (out / "summary.json").write_text(json.dumps(summary))
        return summary

    @reg.register("broken")
    def _broken(out: Path, *, quick: bool, progress: bool) -> dict[str, object]:
        raise ConfigError("broken: no data")

    monkeypatch.setattr(suites, "SUITES", reg)
    with pytest.raises(ConfigError, match="failed suites: broken: broken: no data"):
        suites.reproduce_all(tmp_path, quick=True, sweeps=False, compare=False, echo=lambda s: None)
    assert calls == [("dfs", True)]
    md = (tmp_path / "index.md").read_text()  # the report is written even so
    assert "Reproduction: Layer-wise DFS" in md and "|  | fps gain | 1.2 | 1.1 | 0.917 |" in md
    prov = json.loads((tmp_path / "provenance.json").read_text())
    assert prov["mode"] == "quick" and prov["version"]
    with pytest.raises(NpuschedError, match="unknown reproduction suite 'nope'; allowed: broken"):
        suites.reproduce_all(tmp_path, only=["nope"], echo=lambda s: None)


def test_builtin_suites_are_registered() -> None:
    from npusched.experiments.reproduce.suites import SUITES, packaged_experiments

    assert SUITES.names()[:3] == ["prema", "planaria", "dfs"]
    assert PACKAGED in packaged_experiments()


def test_compare_bad_arguments(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["compare", "--out", str(tmp_path), "--scenario", "Z"]) == 2
    assert "--scenario 'Z'; allowed: A, B, C" in capsys.readouterr().err
    assert main(["compare", "--out", str(tmp_path), "--qos", "soft"]) == 2
    assert "--qos 'soft'; allowed: S, M, H" in capsys.readouterr().err


@pytest.mark.slow
def test_compare_end_to_end(tmp_path: Path) -> None:
    out = tmp_path / "cmp"
    args = ["compare", "--out", str(out), "--scenario", "B", "--instances", "1"]
    assert main([*args, "--requests", "20", "--load", "0.5"]) == 0
    df = pd.read_csv(out / "compare.csv")
    assert list(df["system"]) == ["NP-FCFS", "PREMA", "Planaria", "PREMA+DFS", "Planaria+DFS"]
    # latency = finish - arrival carries the rounding of (arrival + time) - arrival: a request
    # never slowed reads an NTT of 1 to within a few ulps (Planaria here: 0.999999999999997)
    assert (df["antt"] >= 1.0 - 1e-12).all() and (df["energy_j"] > 0).all()
    assert (df[df["system"].str.endswith("+DFS")]["peak_power_w"] <= 30.0 + 1e-9).all()
    assert (out / "compare.png").read_bytes()[:4] == b"\x89PNG"
    write_report(tmp_path, load_sweep=load_results)
    assert "Compare: NP-FCFS, PREMA, Planaria" in (tmp_path / "index.md").read_text()


def test_chrome_trace_of_concurrent_segments_uses_lanes(tmp_path: Path) -> None:
    from npusched.report.timeline import chrome_trace, write_chrome_trace
    from npusched.sim.engine import Segment

    records = pd.DataFrame(
        {
            "id": [0, 1],
            "arrival_s": [0.0, 0.0],
            "finish_s": [0.004, 0.003],
            "network": ["a", "b"],
            "priority": [1, 1],
            "batch": [1, 1],
        }
    )
    # two jobs sharing a 16-subarray array (12 + 4 units) at once, the first at 700 MHz
    segs = [
        Segment(0, 0.0, 0.004, "run", "array", 12, 7e8),
        Segment(1, 0.001, 0.003, "run", "array", 4),
    ]
    doc = chrome_trace(segs, records)
    ex = {e["args"]["id"]: e for e in doc["traceEvents"] if e["ph"] == "X" and e["pid"] == 1}
    assert ex[0]["tid"] == 1 and ex[1]["tid"] == 101  # the second runs on lane 1
    assert ex[0]["args"]["units"] == 12 and ex[0]["args"]["frequency_hz"] == 7e8
    assert ex[1]["args"]["resource"] == "array" and ex[1]["args"]["frequency_hz"] is None
    names = [e["args"]["name"] for e in doc["traceEvents"] if e.get("name") == "thread_name"]
    assert "executing (lane 1)" in names
    # the streaming writer gives the same document
    path = write_chrome_trace(segs, records, tmp_path / "t.json")
    assert json.loads(path.read_text())["traceEvents"] == json.loads(json.dumps(doc))["traceEvents"]


@settings(max_examples=15, deadline=None)
@given(
    rates=st.lists(st.sampled_from([10.0, 20.0, 50.0, 100.0]), min_size=1, max_size=3, unique=True),
    policies=st.lists(
        st.sampled_from(["NP-FCFS", "P-HPF", "P-PREMA", "NP-SJF"]),
        min_size=1,
        max_size=3,
        unique=True,
    ),
    n_seeds=st.integers(1, 3),
)
def test_expansion_is_the_cartesian_product(
    rates: list[float], policies: list[str], n_seeds: int
) -> None:
    data = {
        "seeds": {"start": 7, "count": n_seeds},
        "base": {
            "workload": {
                "kind": "poisson",
                "models": ["alexnet"],
                "n_requests": 5,
                "rate_per_s": 1.0,
            }
        },
        "grid": {"policy": [{"name": p} for p in policies], "workload.rate_per_s": rates},
    }
    exp = parse_experiment(data, "h.toml")
    assert len(exp.points) == len(rates) * len(policies) * n_seeds
    assert len({p.point_id for p in exp.points}) == len(exp.points)
    expected = [(p, r, s) for p in policies for r in rates for s in range(7, 7 + n_seeds)]
    got = [(p.params["policy"], p.params["workload.rate_per_s"], p.seed) for p in exp.points]
    assert got == expected
    for p in exp.points:
        assert p.config["policy"]["name"] == p.params["policy"]
        assert p.config["workload"]["rate_per_s"] == p.params["workload.rate_per_s"]
        assert p.config["seed"] == p.seed


def test_points_travel_in_chunks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The process pool runs points in chunks (a chunk's rows reach the driver together): the
    rows are those of the in-process run; a failing point hands over the rows before it."""
    from npusched.experiments import backends

    # guided: a quarter of a worker's share of the points left, at most 16, down to 1
    assert backends.chunk_sizes(8, 2) == [1] * 8
    assert backends.chunk_sizes(32, 2) == [4, 4, 3, 3, 3, 2, 2, 2, 2] + [1] * 7
    assert backends.chunk_sizes(5, 0) == [2, 1, 1, 1]
    big = backends.chunk_sizes(400, 2)
    assert big[:16] == [16] * 16 and big[-8:] == [1] * 8 and sum(big) == 400
    assert big == sorted(big, reverse=True)
    exp = load_experiment(_exp_file(tmp_path))
    monkeypatch.setattr(
        backends, "chunk_sizes", lambda n, w: [3] * (n // 3) + [n % 3] * (n % 3 > 0)
    )
    a = run_sweep(exp, tmp_path / "a", backend="inprocess", progress=False)
    b = run_sweep(exp, tmp_path / "b", backend="process", workers=2, progress=False)
    assert b.ran == 8
    pd.testing.assert_frame_equal(
        _metrics(pd.read_parquet(a.results)), _metrics(pd.read_parquet(b.results))
    )
    good = backends.PointTask(
        "p0",
        0,
        0,
        0,
        {},
        json.loads(pd.read_parquet(a.results)["config_json"][0]),
        str(tmp_path),
        "p0",
    )
    bad = backends.PointTask("p1", 1, 0, 0, {}, {"seed": "x"}, str(tmp_path), "p1")
    rows, err = backends.run_points([good, bad, good])
    assert [r["point_id"] for r in rows] == ["p0"] and err is not None


def test_a_finished_pool_is_left_to_exit(tmp_path: Path) -> None:
    """A pool returns at its last row; its workers exit on their own, and
    ``join_finished_pools`` waits for them (the next pool does so before it starts)."""
    from npusched.experiments import backends

    exp = load_experiment(_exp_file(tmp_path))
    run_sweep(exp, tmp_path / "a", backend="process", workers=2, progress=False)
    assert len(backends._FINISHED_POOLS) == 1
    first = backends._FINISHED_POOLS[0]
    run_sweep(exp, tmp_path / "b", backend="process", workers=2, max_points=3, progress=False)
    assert len(backends._FINISHED_POOLS) == 1 and backends._FINISHED_POOLS[0] is not first
    assert not first.is_alive()
    last = backends._FINISHED_POOLS[0]
    backends.join_finished_pools()
    assert backends._FINISHED_POOLS == [] and not last.is_alive()


def test_largest_points_are_handed_out_first(tmp_path: Path) -> None:
    """The pool hands out the points with the most requests first (ties and unknown sizes keep
    the expansion order); the results are the in-process run's, in point-index order."""
    from npusched.experiments import backends

    text = SMALL.format(n=12).replace(
        '"workload.rate_per_s" = [100.0, 300.0]', '"workload.n_requests" = [6, 14]'
    )
    exp = load_experiment(_exp_file(tmp_path, text))
    tasks = [
        backends.PointTask(p.point_id, p.index, p.combo, p.seed, {}, p.config, ".", "")
        for p in exp.points
    ]
    order = backends.dispatch_order(tasks)
    sizes = [backends.task_requests(t) for t in order]
    assert sizes == [14.0] * 4 + [6.0] * 4
    assert [t.index for t in order] == [4, 5, 6, 7, 0, 1, 2, 3]  # stable within a size
    a = run_sweep(exp, tmp_path / "a", backend="inprocess", progress=False)
    b = run_sweep(exp, tmp_path / "b", backend="process", workers=2, progress=False)
    fa, fb = pd.read_parquet(a.results), pd.read_parquet(b.results)
    assert list(fb["index"]) == list(range(8))
    pd.testing.assert_frame_equal(fa.drop(columns=["wall_s"]), fb.drop(columns=["wall_s"]))
    # a duration states its size too; a trace does not, and then nothing moves
    dur = dict(
        tasks[0].config,
        workload=dict(
            tasks[0].config["workload"], n_requests=None, duration_s=2.0, rate_per_s=50.0
        ),
    )
    assert backends.task_requests(backends.PointTask("d", 0, 0, 0, {}, dur, ".", "")) == 100.0
    trace = backends.PointTask("t", 9, 0, 0, {}, {"workload": {"kind": "trace"}}, ".", "")
    assert backends.dispatch_order([tasks[0], trace, tasks[2]]) == [tasks[0], trace, tasks[2]]


def test_pool_rows_equal_in_process_rows_for_one_and_two_workers() -> None:
    """The ``sweep`` bench's points through the pool at 1 and 2 workers give the in-process
    rows (``wall_s`` apart), ``latencies_s`` a list of the same doubles (the rows travel with
    it packed, :func:`~npusched.experiments.backends.pack_row`)."""
    import json
    from array import array

    from npusched.bench.sweep import sweep_tasks
    from npusched.experiments.backends import pack_row, run_tasks, unpack_row

    tasks = sweep_tasks(150, points=6, seed=3)

    def rows_of(backend: str, workers: int) -> list[str]:
        rows: list[dict[str, Any]] = []
        run_tasks(tasks, rows.append, backend=backend, workers=workers)
        assert all(type(r["latencies_s"]) is list for r in rows)
        rows.sort(key=lambda r: r["index"])
        return [json.dumps({k: v for k, v in r.items() if k != "wall_s"}) for r in rows]

    ref = rows_of("inprocess", 1)
    assert rows_of("process", 1) == ref
    assert rows_of("process", 2) == ref
    values = [0.1, -0.0, 5e-324, 1.7976931348623157e308]
    row = {"latencies_s": list(values), "x": 1.0}
    packed = pack_row(row)
    assert type(packed["latencies_s"]) is array and row["latencies_s"] == values  # a copy
    back = unpack_row(packed)["latencies_s"]
    assert [v.hex() for v in back] == [v.hex() for v in values]


def test_chunks_handed_ahead_or_not_give_the_same_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    """A worker is handed its next chunk ahead (it waits in the worker's pipe) unless the
    chunk pickles to more than ``AHEAD_MAX_BYTES`` or is one of the last ``workers`` chunks of
    two workers or more: on 1, 2 and 3 workers, with no chunk ahead, with every chunk but the tail ahead and with single-point chunks,
    every point runs once and the rows are the in-process ones (``wall_s`` apart)."""
    import json

    from npusched.bench.sweep import sweep_tasks
    from npusched.experiments import backends

    tasks = sweep_tasks(150, points=9, seed=5)

    def rows_of(backend: str, workers: int) -> list[str]:
        rows: list[dict[str, Any]] = []
        backends.run_tasks(tasks, rows.append, backend=backend, workers=workers)
        rows.sort(key=lambda r: r["index"])
        return [json.dumps({k: v for k, v in r.items() if k != "wall_s"}) for r in rows]

    ref = rows_of("inprocess", 1)
    assert len(ref) == 9
    for limit in (0, 1 << 20):
        monkeypatch.setattr(backends, "AHEAD_MAX_BYTES", limit)
        for workers in (1, 2, 3):
            assert rows_of("process", workers) == ref
    monkeypatch.setattr(backends, "chunk_sizes", lambda n, w: [1] * n)
    assert rows_of("process", 2) == ref


def test_a_worker_that_dies_is_replaced_and_its_points_rerun(tmp_path: Path) -> None:
    """A worker that dies (here: the first process to load a plug-in exits at once) ends its
    pool (the other workers are ended too); the unfinished points go to a new pool, and the
    rows are the in-process ones (``wall_s`` apart)."""
    import dataclasses

    from npusched.bench.sweep import sweep_tasks
    from npusched.experiments.backends import run_tasks

    plugin = tmp_path / "die_once.py"
    plugin.write_text(
        "import os\nfrom pathlib import Path\n"
        f"mark = Path({str(tmp_path / 'died')!r})\n"
        "if not mark.exists():\n    mark.write_text('x')\n    os._exit(3)\n"
    )
    tasks = sweep_tasks(150, points=6, seed=11)

    def rows_of(ts: list[Any], backend: str) -> list[str]:
        rows: list[dict[str, Any]] = []
        run_tasks(ts, rows.append, backend=backend, workers=2)
        rows.sort(key=lambda r: r["index"])
        return [json.dumps({k: v for k, v in r.items() if k != "wall_s"}) for r in rows]

    ref = rows_of(tasks, "inprocess")
    dying = [dataclasses.replace(t, plugins=(str(plugin),)) for t in tasks]
    assert rows_of(dying, "process") == ref
    assert (tmp_path / "died").exists()


_WARM_STATE = '''
import os


def warm_state():
    """In a pool worker, before its first point: the compiled profiles and built zoo networks
    it holds, and whether it sees the warm-up's environment variable."""
    from npusched.hardware import profile
    from npusched.models.zoo import registry

    nets = registry._build.cache_info().currsize
    return [len(profile._CACHE), nets, "NPUSCHED_POOL_WARM" in os.environ]
'''

_WARM_SCRIPT = '''
import json, multiprocessing, os, sys
from concurrent.futures import ProcessPoolExecutor

from npusched.bench.sweep import sweep_tasks
from npusched.experiments import backends
from warm_state import warm_state

tasks = sweep_tasks(150, points=5, seed=7)
if sys.argv[1] == "warm":
    backends.start_pool_server("process", warm={"config": tasks[0].config})
assert "NPUSCHED_POOL_WARM" not in os.environ
ctx = backends._pool_context(multiprocessing)
if ctx.get_start_method() != "forkserver":
    print(json.dumps(None))
    sys.exit()
with ProcessPoolExecutor(max_workers=1, mp_context=ctx) as pool:
    state = pool.submit(warm_state).result()
rows = []
backends.run_tasks(tasks, rows.append, backend="process", workers=2)
rows.sort(key=lambda r: r["index"])
rows = [json.dumps({k: v for k, v in r.items() if k != "wall_s"}) for r in rows]
print(json.dumps({"state": state, "rows": rows}))
'''


def test_a_warmed_pool_server_forks_workers_with_the_first_points_caches(tmp_path: Path) -> None:
    """``start_pool_server(warm=...)`` (what ``npusched sweep`` and the ``sweep`` bench call):
    the fork server runs the named point once before its first fork, so a fresh worker holds
    its networks and profiles before its first point, and no worker sees the warm-up's
    environment variable; the pool's rows are those of a server that warmed nothing and of
    the in-process backend (``wall_s`` apart). Each case in a new process: the fork server is
    one per process and keeps the state it started with."""
    from npusched.bench.sweep import sweep_tasks
    from npusched.experiments.backends import run_tasks

    (tmp_path / "warm_state.py").write_text(_WARM_STATE)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(SRC), str(tmp_path)]))

    def run(mode: str) -> Any:
        out = subprocess.run(
            [sys.executable, "-c", _WARM_SCRIPT, mode],
            env=env,
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=600,
            check=True,
        )
        return json.loads(out.stdout.strip().splitlines()[-1])

    warm, cold = run("warm"), run("cold")
    if warm is None:  # no fork server on this platform
        return
    profiles, networks, seen = warm["state"]
    assert profiles > 0 and networks > 0 and not seen
    assert cold["state"] == [0, 0, False]
    rows: list[dict[str, Any]] = []
    run_tasks(sweep_tasks(150, points=5, seed=7), rows.append, backend="inprocess")
    ref = [json.dumps({k: v for k, v in r.items() if k != "wall_s"}) for r in rows]
    assert warm["rows"] == ref and cold["rows"] == ref


def test_the_warm_up_point_and_its_limits(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """:func:`~npusched.experiments.worker_preload.warm_task` takes a config as it is and an
    experiment's first point that the filters select; it skips a point larger than
    ``WARM_MAX_REQUESTS`` and one whose size is not stated (a trace). ``warm_up`` runs it once,
    removes the variable from its environment, leaves no file behind, and is silent about a
    point that fails."""
    import tempfile

    from npusched.experiments import worker_preload
    from npusched.experiments.backends import WARM_ENV

    p = _exp_file(tmp_path)
    exp = load_experiment(p)
    first = select_points(exp, parse_filters(["policy=P-PREMA", "seed=1"], exp), 1)[0]
    task = worker_preload.warm_task(
        {"experiment": str(p), "filters": ["policy=P-PREMA", "seed=1"]}
    )
    assert task.config == first.config and task.base_dir == str(exp.base_dir)
    assert worker_preload.warm_task({"experiment": str(p), "filters": ["seed=9"]}) is None
    cfg = dict(first.config)
    assert worker_preload.warm_task({"config": cfg}).config == cfg
    big = dict(cfg, workload=dict(cfg["workload"], n_requests=worker_preload.WARM_MAX_REQUESTS + 1))
    assert worker_preload.warm_task({"config": big}) is None
    trace = dict(cfg, workload={"kind": "trace", "path": "t.csv"})
    assert worker_preload.warm_task({"config": trace}) is None

    tmp = Path(tempfile.gettempdir())
    before = set(tmp.glob("npusched-warm-*"))
    calls: list[str] = []
    real = worker_preload.warm_task

    def counted(spec: dict[str, Any]) -> Any:
        calls.append("run")
        return real(spec)

    monkeypatch.setattr(worker_preload, "warm_task", counted)
    monkeypatch.setenv(WARM_ENV, json.dumps({"experiment": str(p), "write": True}))
    worker_preload.warm_up()
    assert calls == ["run"] and WARM_ENV not in os.environ
    assert set(tmp.glob("npusched-warm-*")) == before
    bad = dict(cfg, policy={"name": "no-such-policy"})
    monkeypatch.setenv(WARM_ENV, json.dumps({"config": bad}))
    worker_preload.warm_up()  # fails inside: silent
    monkeypatch.setenv(WARM_ENV, "{not json")
    worker_preload.warm_up()
    assert WARM_ENV not in os.environ
    worker_preload.warm_up()  # nothing to do


def test_the_sweep_command_warms_the_pool_server_with_its_experiment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``npusched sweep`` starts the pool's server before it loads the experiment and names the
    experiment file and the filters for the server's warm-up (the server reads the file
    itself); a dry run starts no server."""
    from npusched.experiments import backends

    seen: list[tuple[str, Any]] = []
    monkeypatch.setattr(
        backends, "start_pool_server", lambda backend, warm=None: seen.append((backend, warm))
    )
    p = _exp_file(tmp_path)
    out = tmp_path / "o"
    args = ["sweep", str(p), "--out", str(out), "--backend", "inprocess", "-q"]
    assert main([*args, "--filter", "seed=0", "--dry-run"]) == 0
    assert seen == []
    assert main([*args, "--filter", "seed=0", "--max-points", "1"]) == 0
    assert seen == [
        ("inprocess", {"experiment": str(p.resolve()), "filters": ["seed=0"], "write": True})
    ]
