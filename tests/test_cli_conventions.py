"""Issue 28: the bad inputs and faults that escaped (one line, exit 2, nothing left behind; or
exit 1 for an internal error), and the CLI conventions (``-h``, completion, ``-q``/``-v``,
``--format``, choices, table width, subcommand order, exit codes)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from npusched.cli import main

SRC = Path(__file__).resolve().parents[1] / "src"

RUN = """seed = 0
[workload]
kind = "prema"
n_tasks = 6
models = ["alexnet", "resnet-18"]
window_s = 0.01
[policy]
name = "P-PREMA"
"""

SWEEP = """
name = "tiny"
seeds = [0]
[base.workload]
kind = "prema"
models = ["alexnet"]
n_tasks = 4
window_s = 0.01
[grid]
policy = [{name = "NP-FCFS"}, {name = "P-PREMA"}]
"""


def cli(
    *args: str, cwd: Path | None = None, env: dict[str, str] | None = None
) -> tuple[int, str, str]:
    """``npusched ARGS`` in a subprocess: (exit status, stdout, stderr)."""
    e = {**os.environ, "PYTHONPATH": str(SRC), **(env or {})}
    r = subprocess.run(
        [sys.executable, "-m", "npusched.cli", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=e,
        timeout=300,
    )
    return r.returncode, r.stdout, r.stderr


def one_error_line(err: str, *needles: str) -> None:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("npusched: error: "), err
    for n in needles:
        assert n in lines[0], (n, lines[0])


@pytest.fixture
def afile(tmp_path: Path) -> Path:
    p = tmp_path / "afile"
    p.write_text("x\n")
    return p


@pytest.fixture
def run_cfg(tmp_path: Path) -> Path:
    p = tmp_path / "cfg.toml"
    p.write_text(RUN)
    return p


# --- 1, 2: --out checked before any work -------------------------------------------------------
def test_out_is_a_file_or_unwritable(tmp_path: Path, afile: Path, run_cfg: Path) -> None:
    rep = tmp_path / "rep"
    rep.mkdir()
    (rep / "summary.json").write_text(json.dumps({"headline": {"x": {"ours": 1, "paper": 1}}}))
    cases = [
        (["compare", "--out", str(afile), "--instances", "1", "--requests", "5"], "afile"),
        (["reproduce", "dfs", "--quick", "--out", str(afile)], "afile"),
        (["reproduce", "all", "--out", str(afile)], "afile"),
        (["report", str(rep), "--out", str(afile)], "afile"),
        (["report", str(rep), "--out", "/proc/x"], "/proc/x"),
        (["trace", str(run_cfg), "--out", "/proc/t.json"], "/proc/t.json"),
    ]
    for args, needle in cases:
        rc, _, err = cli(*args)
        assert rc == 2, (args, err)
        one_error_line(err, needle, "--out")
    assert afile.read_text() == "x\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["afile", "cfg.toml", "rep"]


# --- 3, 4: sweep options checked before anything is created -------------------------------------
def test_sweep_bad_options_leave_nothing(tmp_path: Path) -> None:
    exp = tmp_path / "exp.toml"
    exp.write_text(SWEEP)
    out = tmp_path / "o"
    cases = [
        (["--backend", "bogus"], "--backend 'bogus'; allowed: inprocess, process, dask"),
        (["--workers", "0"], "--workers must be >= 1"),
        (["--backend", "dask", "--address", "not-an-address"], "--address: 'not-an-address'"),
        (["--backend", "dask", "--address", "tcp://host"], "allowed: [tcp://]HOST:PORT"),
    ]
    for extra, needle in cases:
        rc, _, err = cli("sweep", str(exp), "--out", str(out), *extra)
        assert rc == 2, err
        one_error_line(err, needle)
        assert not out.exists()


def test_sweep_failure_before_any_point_removes_the_new_dir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An unreachable scheduler (any bad input found once the sweep has started) leaves no
    directory that this call created."""
    from npusched.errors import ConfigError
    from npusched.experiments import store
    from npusched.experiments.sweep import load_experiment

    def unreachable(*a: object, **k: object) -> None:
        raise ConfigError("--address tcp://10.0.0.1:1: cannot reach a Dask scheduler")

    monkeypatch.setattr(store, "run_tasks", unreachable)
    exp = tmp_path / "exp.toml"
    exp.write_text(SWEEP)
    out = tmp_path / "o"
    with pytest.raises(ConfigError, match="cannot reach"):
        store.run_sweep(load_experiment(exp), out, backend="inprocess", progress=False)
    assert not out.exists()


# --- 5, 6: corrupt results and experiment files ---------------------------------------------
def test_corrupt_results_and_point_recovered(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from npusched.experiments.store import run_sweep
    from npusched.experiments.sweep import load_experiment

    exp_path = tmp_path / "exp.toml"
    exp_path.write_text(SWEEP)
    exp = load_experiment(exp_path)
    out = tmp_path / "o"
    run_sweep(exp, out, backend="inprocess", progress=False)
    good = pd.read_parquet(out / "results.parquet").drop(columns=["wall_s"])
    (out / "results.parquet").write_bytes(b"PAR1 not really")
    points = sorted((out / "points").glob("*.parquet"))
    points[0].write_bytes(points[0].read_bytes()[:40])  # truncated
    capsys.readouterr()
    res = run_sweep(exp, out, backend="inprocess", progress=False)
    err = capsys.readouterr().err
    assert res.ran == 1 and res.skipped == 1  # the corrupt point was recomputed
    assert f"npusched: warning: {points[0]}: unreadable" in err
    assert "results.parquet: unreadable" in err and "rebuilt from the point files" in err
    again = pd.read_parquet(out / "results.parquet").drop(columns=["wall_s"])
    pd.testing.assert_frame_equal(again, good)
    assert main(["report", str(out), "-q"]) == 0


def test_report_names_a_corrupt_experiment_json(tmp_path: Path) -> None:
    d = tmp_path / "sw"
    (d / "points").mkdir(parents=True)
    (d / "experiment.json").write_text("{not json")
    rc, _, err = cli("report", str(d))
    assert rc == 2
    one_error_line(err, "experiment.json: not valid JSON")
    assert not (d / "report_files").exists()  # checked before any work: nothing written


# --- 7-10: config fields ----------------------------------------------------------------------
def _cfg_text(tables: str = "", n_tasks: int = 6) -> str:
    body = RUN.replace("seed = 0\n", "").replace("n_tasks = 6", f"n_tasks = {n_tasks}")
    return "seed = 0\n" + tables + body


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        (_cfg_text("[hardware]\nparams = {rows = 1e30}\n"), "hardware.params.rows: 1e+30"),
        (_cfg_text("[hardware]\nparams = {rows = 64.0}\n"), "hardware.params.rows: 64.0 not"),
        (
            _cfg_text("[hardware]\nparams = {rows = 1099511627776}\n"),
            "allowed: an integer <= 2,147,483,647",
        ),
        (_cfg_text(n_tasks=1_000_000_000_000), "workload.n_tasks: input should be less than"),
        (
            _cfg_text('[hardware]\ndevice = "ab9"\n[power]\nname = "DFS"\n'),
            "power.cap_w: missing required key",
        ),
        (
            _cfg_text('[hardware]\ndevice = "ab9"\n[power]\nname = "DFS"\ncap_w = 10\n'),
            "cfg.toml: power.cap_w: 10 W is not above the idle power 24 W",
        ),
    ],
)
def test_config_field_errors(
    tmp_path: Path, text: str, needle: str, capsys: pytest.CaptureFixture[str]
) -> None:
    cfg = tmp_path / "cfg.toml"
    cfg.write_text(text)
    out = tmp_path / "o"
    assert main(["run", str(cfg), "--out", str(out), "-q"]) == 2
    one_error_line(capsys.readouterr().err, needle)
    assert not out.exists()


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("params = {rows = 1e30}", "hardware.params.rows: 1e+30 not allowed"),
        ("params = {rows = 64.0}", "hardware.params.rows: 64.0 not allowed"),
    ],
)
def test_config_field_errors_subprocess(tmp_path: Path, text: str, needle: str) -> None:
    cfg = tmp_path / "cfg.toml"
    cfg.write_text(_cfg_text(f"[hardware]\n{text}\n"))
    rc, _, err = cli("run", str(cfg), "--out", str(tmp_path / "o"))
    assert rc == 2
    one_error_line(err, "cfg.toml: ", needle)


# --- 11: a run's outputs appear together or not at all ---------------------------------------
def test_interrupted_run_leaves_previous_outputs(
    tmp_path: Path, run_cfg: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from npusched.experiments import runner

    out = tmp_path / "o"
    assert main(["run", str(run_cfg), "--out", str(out), "-q", "--timeline"]) == 0
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    assert set(before) == {
        "records.parquet",
        "summary.json",
        "timeline.json",
        "timeline.png",
        "latency_cdf.png",
    }

    def ctrl_c(*a: object, **k: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(runner, "_write_timeline", ctrl_c)
    assert main(["run", str(run_cfg), "--out", str(out), "-q", "--timeline", "--seed", "3"]) == 130
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before  # untouched, no staging
    fresh = tmp_path / "fresh"
    assert main(["run", str(run_cfg), "--out", str(fresh), "-q", "--timeline"]) == 130
    assert list(fresh.iterdir()) == []
    # without --timeline the old timeline files go, in the same step as the new records
    monkeypatch.undo()
    assert main(["run", str(run_cfg), "--out", str(out), "-q"]) == 0
    assert sorted(p.name for p in out.iterdir()) == ["records.parquet", "summary.json"]


# --- 12: a pool worker lost mid-sweep --------------------------------------------------------
def test_lost_pool_worker_resubmits_then_gives_up(monkeypatch: pytest.MonkeyPatch) -> None:
    from concurrent.futures.process import BrokenProcessPool

    from npusched.experiments import backends

    tasks = [backends.PointTask(f"p{i}", i, i, 0, {}, {}, ".", f"p{i}") for i in range(5)]
    calls: list[list[str]] = []

    def flaky(todo: list, on_done: object, workers: object) -> None:
        calls.append([t.point_id for t in todo])
        for t in todo[:2]:
            on_done({"point_id": t.point_id})  # type: ignore[operator]
        if len(calls) == 1:
            raise BrokenProcessPool("a worker died")
        for t in todo[2:]:
            on_done({"point_id": t.point_id})  # type: ignore[operator]

    monkeypatch.setattr(backends, "_pool_pass", flaky)
    got: list[str] = []
    backends._run_pool(tasks, lambda r: got.append(r["point_id"]), 2)
    assert calls == [["p0", "p1", "p2", "p3", "p4"], ["p2", "p3", "p4"]]
    assert sorted(got) == ["p0", "p1", "p2", "p3", "p4"]

    def dead(todo: list, on_done: object, workers: object) -> None:
        raise BrokenProcessPool("a worker died")

    monkeypatch.setattr(backends, "_pool_pass", dead)
    with pytest.raises(RuntimeError, match="worker process died 4 times"):
        backends._run_pool(tasks, lambda r: None, 2)


# --- 13: map arguments ---------------------------------------------------------------------------
def test_map_arguments() -> None:
    rc, _, err = cli("map", "alexnet")
    assert rc == 2
    one_error_line(err, "NETWORKS: give two or three networks, got 1")
    rc, _, err = cli("map", "alexnet", "resnet-18", "--time-limit", "-1")
    assert rc == 2
    one_error_line(err, "--time-limit must be a number of seconds > 0")
    rc, _, err = cli("map", "alexnet", "resnet-18", "--soc", "tx2")
    assert rc == 2
    one_error_line(err, "--soc 'tx2'; allowed: orin, xavier, snapdragon-865")


# --- 14: exit codes ------------------------------------------------------------------------------
def test_internal_error_exits_1(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from npusched.experiments import runner

    def bug(*a: object, **k: object) -> None:
        raise ZeroDivisionError("division by zero")

    monkeypatch.setattr(runner, "run_config_file", bug)
    assert main(["run", "x.toml"]) == 1
    err = capsys.readouterr().err
    assert err == "npusched: error: ZeroDivisionError: division by zero (rerun with --debug)\n"
    assert main(["run", "missing.toml", "-q", "-v"]) == 2  # bad input stays 2
    assert "give at most one" in capsys.readouterr().err


# --- conventions -------------------------------------------------------------------------------
LONG = [
    ["run"],
    ["sweep"],
    ["compare"],
    ["bench"],
    ["map"],
    ["trace"],
    ["report"],
    *(["reproduce", s] for s in ("prema", "planaria", "fluid", "haxconn", "dfs", "all")),
]


def test_help_flags_and_long_commands(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["-h"]) == 0
    top = capsys.readouterr().out
    assert "--install-completion" in top and "Exit status: 0 ok, 1 internal error" in top
    for cmd in LONG:
        assert main([*cmd, "-h"]) == 0
        text = capsys.readouterr().out
        for flag in ("--quiet", "-q", "--verbose", "-v", "--help", "-h"):
            assert flag in text, (cmd, flag)
    for cmd in (["run"], ["bench"], ["compare"], ["map"], ["suites", "list"], ["models", "list"]):
        assert main([*cmd, "-h"]) == 0
        assert "table|json|csv" in capsys.readouterr().out, cmd
    for cmd in (["run"], ["sweep"], ["compare"], ["trace"], ["profile"]):
        assert main([*cmd, "-h"]) == 0
        assert "--plugin" in capsys.readouterr().out, cmd


def test_reproduce_lists_subcommands_in_order(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["reproduce", "--help"]) == 0
    out = capsys.readouterr().out
    pos = [out.index(f" {s} ") for s in ("prema", "planaria", "fluid", "haxconn", "dfs", "all")]
    assert pos == sorted(pos)


def test_tables_fit_the_terminal() -> None:
    rc, out, _ = cli("suites", "list", env={"COLUMNS": "80"})
    assert rc == 0
    assert max(len(line) for line in out.splitlines()) <= 80


def test_run_format_json_and_csv(tmp_path: Path, run_cfg: Path) -> None:
    rc, out, err = cli("run", str(run_cfg), "--out", str(tmp_path / "o"), "-f", "json", "-v")
    assert rc == 0
    assert json.loads(out) == json.loads((tmp_path / "o" / "summary.json").read_text())
    assert "npusched: done in" in err
    rc, out, _ = cli("run", str(run_cfg), "--out", str(tmp_path / "o"), "--format", "csv", "-q")
    assert rc == 0 and out.splitlines()[0] == "metric,value"
    assert any(line.startswith("antt,") for line in out.splitlines())


def test_bench_format_csv(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["bench", "--scenario", "temporal", "--requests", "50", "--no-reference", "-q"]
    assert main([*args, "--format", "csv"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0].startswith("scenario,") or "," in out.splitlines()[0]


def test_plural() -> None:
    from npusched.report.tables import plural

    assert plural(1, "instance") == "1 instance"
    assert plural(3, "instance") == "3 instances"


def test_typer_private_hooks_still_exist() -> None:
    """cli._plain_help adjusts two private Typer hooks (no ``<bool>`` after flags, ``CONFIG``
    in usage lines); pyproject pins Typer below the next minor version. This fails when a Typer
    upgrade renames them, so the pin is raised only together with a check of the help text."""
    from typer.core import TyperArgument, TyperOption

    assert callable(getattr(TyperOption, "display_type_rich", None))
    assert callable(getattr(TyperArgument, "_usage_display_name", None))
    assert getattr(TyperOption.display_type_rich, "_npusched", False)
    assert getattr(TyperArgument._usage_display_name, "_npusched", False)


def test_help_text_plain(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "--help"]) == 0
    out = capsys.readouterr().out
    assert "npusched run [OPTIONS] CONFIG" in out
    quiet = next(line for line in out.splitlines() if "--quiet" in line)
    assert "<bool>" not in quiet


@pytest.mark.slow
def test_real_worker_killed_mid_sweep(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A pool worker killed with SIGKILL mid-sweep: its points are resubmitted and the
    results equal an in-process run's."""
    import multiprocessing
    import signal
    import threading
    import time

    from npusched.experiments.store import run_sweep
    from npusched.experiments.sweep import load_experiment

    exp_path = tmp_path / "exp.toml"
    exp_path.write_text(
        SWEEP.replace("n_tasks = 4", "n_tasks = 30000").replace("seeds = [0]", "seeds = [0, 1]")
    )
    exp = load_experiment(exp_path)
    box: dict[str, object] = {}

    def sweep() -> None:
        box["res"] = run_sweep(exp, tmp_path / "pool", backend="process", workers=2, progress=False)

    t = threading.Thread(target=sweep)
    t.start()
    deadline = time.monotonic() + 120
    while not multiprocessing.active_children() and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.3)  # the worker is simulating (forked from a server that imported the engine)
    alive = multiprocessing.active_children()
    assert alive, "the sweep finished before a worker could be killed: make its points longer"
    victim = alive[0]
    os.kill(victim.pid, signal.SIGKILL)  # type: ignore[arg-type]
    t.join(timeout=600)
    assert "res" in box
    assert "a sweep worker process died; resubmitting" in capsys.readouterr().err
    pool = pd.read_parquet(tmp_path / "pool" / "results.parquet").drop(columns=["wall_s"])
    run_sweep(exp, tmp_path / "inproc", backend="inprocess", progress=False)
    ref = pd.read_parquet(tmp_path / "inproc" / "results.parquet").drop(columns=["wall_s"])
    pd.testing.assert_frame_equal(pool, ref)
