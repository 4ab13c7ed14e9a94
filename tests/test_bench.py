"""``npusched bench``: the three references agree with the engine, the JSON schema, scenario
selection, targets and the up-front SimPy check. Small workloads only (no timing asserted)."""

from __future__ import annotations

import dataclasses
import json
import sys
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from npusched import bench
from npusched.bench import (
    BENCH_NETWORKS,
    SCENARIOS,
    TARGETS,
    Target,
    _Shapes,
    bare_loop_reference,
    bench_rows,
    bench_workload,
    run_bench,
    simpy_reference,
    simpy_skip_reference,
    synthetic_profiles,
    temporal_scenario,
)
from npusched.cli import main
from npusched.errors import ConfigError, UnknownNameError
from npusched.policies.temporal import HPF
from npusched.sim.engine import Simulator

ENTRY_KEYS = {"name", "requests", "requests_per_s", "events_per_s", "peak_rss_mib"}
REF_KEYS = {
    "speedup_vs_simpy",
    "speedup_vs_simpy_skip",
    "fraction_of_bare_loop",
    "max_abs_finish_diff_s",
}


@pytest.mark.parametrize("seed", [0, 3])
def test_references_agree_with_engine(seed: int) -> None:
    profiles = synthetic_profiles(random_state=seed)
    assert sorted(profiles) == sorted(BENCH_NETWORKS)
    reqs = bench_workload(600, profiles, load=0.95, random_state=seed + 5)
    res = Simulator(
        profiles, HPF(preemptive=True), preemption_point="layer", checkpoint_cost=False
    ).run(reqs)
    engine = res.columns["finish_s"]
    assert res.columns["preemptions"].sum() > 20  # the workload does exercise preemption
    shapes = _Shapes(reqs, profiles)
    # Per-layer timeouts add latencies one by one: rounding differs from the prefix sums.
    np.testing.assert_allclose(simpy_reference(shapes), engine, rtol=0, atol=1e-9)
    # The event-skipping models do the engine's arithmetic.
    np.testing.assert_allclose(simpy_skip_reference(shapes), engine, rtol=0, atol=1e-12)
    bare, events = bare_loop_reference(shapes)
    np.testing.assert_allclose(bare, engine, rtol=0, atol=1e-12)
    assert events == res.events  # the same events, counted the same way


def test_references_keep_request_id_order() -> None:
    """Rows follow request ids even when the list is shuffled and ids are not 0..n-1."""
    profiles = synthetic_profiles(random_state=1)
    reqs = bench_workload(200, profiles, load=0.95, random_state=2)
    shuffled = [dataclasses.replace(reqs[i], id=1000 - reqs[i].id) for i in range(len(reqs))]
    shuffled = shuffled[::-1][50:] + shuffled[::-1][:50]
    res = Simulator(
        profiles, HPF(preemptive=True), preemption_point="layer", checkpoint_cost=False
    ).run(shuffled)
    shapes = _Shapes(shuffled, profiles)
    for finish in (simpy_reference(shapes), simpy_skip_reference(shapes)):
        np.testing.assert_allclose(finish, res.columns["finish_s"], rtol=0, atol=1e-9)
    np.testing.assert_allclose(
        bare_loop_reference(shapes)[0], res.columns["finish_s"], rtol=0, atol=1e-12
    )


def test_bench_workload_is_seeded_and_loaded() -> None:
    profiles = synthetic_profiles()
    a = bench_workload(2000, profiles, random_state=7)
    b = bench_workload(2000, profiles, random_state=7)
    assert a == b
    assert [r.id for r in a] == list(range(2000))
    work = sum(profiles[r.network].isolated_latency(r.batch) for r in a)
    assert work / a[-1].arrival_s == pytest.approx(0.9, rel=0.15)
    assert {r.priority for r in a} == {1, 3, 9}


def test_temporal_entry_in_process() -> None:
    stages: list[str] = []
    entry = temporal_scenario(
        requests=300,
        seed=1,
        profiles=synthetic_profiles(),
        report=lambda s, d, t: stages.append(s),
    )
    assert set(entry) >= ENTRY_KEYS | REF_KEYS
    assert entry["name"] == "temporal" and entry["requests"] == 300
    assert entry["max_abs_finish_diff_s"] <= 1e-9
    # the bare loop compiled by mypyc runs beside the interpreted one when it is compiled
    from npusched import native

    compiled = "npusched.bench.bare_loop" in native.compiled()
    assert set(entry["reference_s"]) == {"simpy", "simpy_skip", "bare_loop"} | (
        {"bare_loop_compiled"} if compiled else set()
    )
    assert (entry["fraction_of_compiled_bare_loop"] is not None) == compiled
    assert entry["bare_loop_events"] == entry["events"]
    # loop only: the bare loop's set-up is not counted in the fraction, only in _with_setup
    loop_s = entry["reference_s"]["bare_loop"] - entry["reference_setup_s"]["bare_loop"]
    assert entry["fraction_of_bare_loop"] == loop_s / entry["engine_s"]
    # with set-up: both from the list of requests, the engine's run on it timed apart
    assert 0 < entry["engine_list_s"] < float("inf")
    assert entry["fraction_of_bare_loop_with_setup"] == (
        entry["reference_s"]["bare_loop"] / entry["engine_list_s"]
    )
    assert entry["list_requests_per_s"] == 300 / entry["engine_list_s"]
    # the SimPy models likewise, without their set-up: lower bounds of the speed-ups
    for ref in ("simpy", "simpy_skip"):
        loop = entry["reference_s"][ref] - entry["reference_setup_s"][ref]
        assert entry[f"speedup_vs_{ref}_loop_only"] == loop / entry["engine_s"]
        assert entry[f"speedup_vs_{ref}_loop_only"] < entry[f"speedup_vs_{ref}"]
    assert entry["preemptions"] > 0
    assert stages[0] == "workload"
    assert {"engine", "engine_list", "simpy", "simpy_skip", "bare_loop"} <= set(stages)
    json.dumps(entry)


def test_cli_bench_json_one_scenario(capsys: pytest.CaptureFixture[str]) -> None:
    """``--scenario temporal --json``: one object, one entry, run in its own process."""
    assert main(["bench", "--scenario", "temporal", "--requests", "200", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [e["name"] for e in out["scenarios"]] == ["temporal"]
    (entry,) = out["scenarios"]
    assert set(entry) >= ENTRY_KEYS | REF_KEYS
    assert entry["requests"] == 200
    assert entry["max_abs_finish_diff_s"] <= 1e-9
    assert entry["speedup_vs_simpy"] > 0 and entry["fraction_of_bare_loop"] > 0
    assert entry["peak_rss_mib"] > 10
    assert set(entry["targets"]) == {t.metric for t in TARGETS["temporal"]}


def test_cli_bench_no_reference_nulls(capsys: pytest.CaptureFixture[str]) -> None:
    assert (
        main(["bench", "--scenario", "TEMPORAL", "--requests", "50", "--no-reference", "--json"])
        == 0
    )
    (entry,) = json.loads(capsys.readouterr().out)["scenarios"]
    assert entry["name"] == "temporal"
    assert all(entry[k] is None for k in REF_KEYS)
    assert all(t["met"] is None for t in entry["targets"].values())


def test_prema_scenario_runs_without_simpy(monkeypatch: pytest.MonkeyPatch) -> None:
    """``prema`` has no reference: it runs with SimPy missing, and its entry has no ratios."""
    monkeypatch.setitem(sys.modules, "simpy", None)  # ``import simpy`` raises ImportError
    out = run_bench(["prema"], requests=40, isolate=False)
    (entry,) = out["scenarios"]
    assert set(entry) >= ENTRY_KEYS and not set(entry) & REF_KEYS
    assert entry["name"] == "prema" and entry["requests"] == 40
    assert entry["events"] >= 80  # at least an arrival and a completion per request
    assert entry["targets"]["peak_rss_mib"]["met"] is None  # applies at 1,000,000 requests
    assert entry["targets"]["requests_per_s"]["met"] is None  # also read at 1,000,000 requests
    # the first (cold) run is reported beside the fastest
    assert entry["cold_requests_per_s"] == 40 / entry["cold_engine_s"]
    assert entry["cold_engine_s"] >= entry["engine_s"]


def test_missing_simpy_fails_up_front(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "simpy", None)

    def never(*args: object, **kwargs: object) -> None:  # pragma: no cover - must not run
        raise AssertionError("a scenario ran before the SimPy check")

    monkeypatch.setattr(bench, "run_scenario", never)
    for argv in (["bench"], ["bench", "--scenario", "prema", "--scenario", "temporal"]):
        assert main(argv) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1, err
        assert "simpy" in err[0] and "pip install 'npusched[bench]'" in err[0]
    with pytest.raises(ConfigError, match="npusched\\[bench\\]"):
        bench.require_simpy()


def test_unknown_scenario(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "--scenario", "nope", "--json"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "nope" in err[0] and "temporal" in err[0] and "prema" in err[0]
    with pytest.raises(UnknownNameError):
        run_bench(["nope"], isolate=False)


def test_registry_and_targets() -> None:
    assert SCENARIOS.names()[:2] == ["temporal", "prema"]
    assert SCENARIOS.get("temporal")().needs_simpy and not SCENARIOS.get("prema")().needs_simpy
    t = Target("speedup_vs_simpy", ">=", 15.0)
    assert t.met({"requests": 5, "speedup_vs_simpy": 15.0}) is True
    assert t.met({"requests": 5, "speedup_vs_simpy": 14.9}) is False
    assert t.met({"requests": 5, "speedup_vs_simpy": None}) is None
    m = Target("peak_rss_mib", "<=", 1024.0, min_requests=1_000_000)
    assert m.met({"requests": 999_999, "peak_rss_mib": 10.0}) is None
    assert m.met({"requests": 1_000_000, "peak_rss_mib": 1025.0}) is False
    assert m.text() == "<= 1,024 at 1,000,000 requests"
    rows = bench_rows(
        {
            "scenarios": [
                {
                    "name": "temporal",
                    "requests": 10,
                    "speedup_vs_simpy": 16.0,
                    "fraction_of_bare_loop": None,
                    "targets": {
                        "speedup_vs_simpy": {"target": ">= 15", "met": True},
                        "fraction_of_bare_loop": {"target": ">= 0.4", "met": None},
                    },
                }
            ]
        }
    )
    by = {r["metric"]: r for r in rows}
    assert by["speedup_vs_simpy"]["target"] == ">= 15" and by["speedup_vs_simpy"]["met"] == "yes"
    assert by["fraction_of_bare_loop"]["value"] == "not run"
    assert by["fraction_of_bare_loop"]["met"] == "n/a"


def test_engine_setup_is_the_timed_run() -> None:
    """``engine_setup`` (used by ``benchmarks/profile_engine.py``) builds what the scenario times."""
    sim, reqs = bench.engine_setup("temporal", requests=150, seed=2)
    res = sim.run(reqs)
    entry = temporal_scenario(requests=150, seed=2, reference=False)
    assert (
        entry["events"] == res.events and entry["preemptions"] == res.columns["preemptions"].sum()
    )


def test_cli_bench_table_shows_targets(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "--scenario", "temporal", "--requests", "60"]) == 0
    captured = capsys.readouterr()
    for text in ("speedup_vs_simpy_skip", ">= 20", ">= 5", ">= 0.4", "fraction_of_bare_loop"):
        assert text in captured.out
    assert "engine" in captured.err  # the progress bar, on stderr


@settings(max_examples=8, deadline=None)
@given(
    seed=st.integers(0, 2**16),
    load=st.floats(0.5, 1.2),
    n=st.integers(1, 120),
)
def test_references_agree_on_random_workloads(seed: int, load: float, n: int) -> None:
    profiles = synthetic_profiles(random_state=seed % 7)
    reqs = bench_workload(n, profiles, load=load, random_state=seed)
    res = Simulator(
        profiles, HPF(preemptive=True), preemption_point="layer", checkpoint_cost=False
    ).run(reqs)
    engine = res.columns["finish_s"]
    shapes = _Shapes(reqs, profiles)
    np.testing.assert_allclose(simpy_reference(shapes), engine, rtol=0, atol=1e-9)
    np.testing.assert_allclose(simpy_skip_reference(shapes), engine, rtol=0, atol=1e-12)
    bare, events = bare_loop_reference(shapes)
    np.testing.assert_allclose(bare, engine, rtol=0, atol=1e-12)
    assert events == res.events


@pytest.mark.parametrize("seed", [0, 1])
def test_concurrent_simpy_model_agrees_with_engine(seed: int) -> None:
    """``concurrent``: the SimPy model of two jobs sharing the 16-unit array (re-split at
    arrivals and completions, re-allocated at layer ends) finishes every request when the
    engine does, including the structural ties (equal-share jobs of one network reaching a
    layer end exactly when another finishes)."""
    sim, reqs = bench.concurrent_setup(requests=3_000, seed=seed)
    res = sim.run(reqs)
    assert res.columns["preemptions"].sum() > 100  # the workload does re-allocate
    finish = bench.concurrent_simpy_reference(reqs, sim.profiles)
    np.testing.assert_allclose(finish, res.columns["finish_s"], rtol=0, atol=1e-9)


def test_concurrent_entry_in_process() -> None:
    entry = bench.run_scenario("concurrent", requests=300, isolate=False)
    assert entry["name"] == "concurrent" and entry["requests"] == 300
    assert entry["speedup_vs_simpy"] > 0 and entry["max_abs_finish_diff_s"] < 1e-9
    assert entry["reallocations"] > 0


def test_repeat_keeps_the_fastest_run_and_checks_its_value() -> None:
    entry = bench.run_scenario("temporal", requests=300, isolate=False, repeat=2)
    assert entry["repeat"] == 2 and entry["max_abs_finish_diff_s"] < 1e-9
    assert entry["requests_per_s"] == pytest.approx(300 / entry["engine_s"])
    with pytest.raises(ConfigError, match="--repeat"):
        bench.run_scenario("temporal", requests=300, isolate=False, repeat=0)


def test_families_entry_runs_each_family_through_run_config() -> None:
    """``families``: every family through ``run_config`` (power recorded), with its per-event
    figures, its target and (temporal families) the load-1.5 ratio; rows in the table."""
    entry = run_bench(["families"], requests=30, isolate=False)["scenarios"][0]
    fams = entry["families"]
    assert list(fams) == list(bench.FAMILY_RATIO_TARGET)
    assert entry["bare_loop_us_per_event"] > 0
    for name, f in fams.items():
        assert f["events"] > 0 and f["events_per_request"] >= 1.0, name
        assert 0 < f["engine_s"] <= f["warm_s"], name
        # each family's ratio is over the bare loop timed in turns with its warm runs
        assert f["bare_loop_us_per_event"] > 0, name
        assert f["ratio_to_bare_loop"] == pytest.approx(
            f["us_per_event"] / f["bare_loop_us_per_event"]
        )
        assert ("load_ratio" in f) == (name in bench.FAMILY_TEMPORAL), name
        # the split: the engine's part and the part around it add up to the whole
        assert f["engine_us_per_event"] + f["outside_us_per_event"] == pytest.approx(
            f["us_per_event"]
        ), name
        assert f["engine_ratio_to_bare_loop"] == pytest.approx(
            f["engine_us_per_event"] / f["bare_loop_us_per_event"]
        )
    assert fams["HPF"]["requests"] == 30 and fams["Planaria"]["requests"] == 6
    rows = {r["metric"]: r for r in bench_rows({"scenarios": [entry]})}
    assert rows["PREMA: ratio_to_bare_loop"]["target"] == "<= 10"
    assert rows["SJF: load_ratio"]["target"] == "<= 1.5"
    assert "FCFS: outside_us_per_event" in rows
    # the run_config path is not left wrapped
    assert Simulator.run.__name__ == "run"


def test_sweep_entry_times_one_and_two_workers(monkeypatch: pytest.MonkeyPatch) -> None:
    """``sweep``: the same points at 1 and 2 workers through ``run_tasks`` (here in process,
    so the test stays fast), every row back, points/s and the ratio in the entry."""
    from npusched.bench import sweep as sweep_mod
    from npusched.experiments import backends

    calls: list[int | None] = []
    real = backends.run_tasks

    def in_process(tasks: Any, on_done: Any, *, backend: str, workers: int | None) -> None:
        assert backend == "process"
        calls.append(workers)
        real(tasks, on_done, backend="inprocess")

    monkeypatch.setattr(backends, "run_tasks", in_process)
    monkeypatch.setattr(sweep_mod, "worker_start_s", lambda repeat=3: (0.25, 1.5, 0.01))
    monkeypatch.setattr(sweep_mod, "SWEEP_POINTS", 3)
    entry = bench.run_scenario("sweep", requests=20, isolate=False)
    assert calls == [1, 2] and entry["points"] == 3
    assert entry["points_per_s_1"] == pytest.approx(3 / entry["sweep_1_worker_s"])
    assert entry["speedup_2_workers"] == pytest.approx(
        entry["sweep_1_worker_s"] / entry["sweep_2_workers_s"]
    )
    assert entry["targets"]["worker_start_s"]["met"] is True
    assert entry["pool_first_start_s"] == 1.5
    assert entry["targets"]["speedup_2_workers"]["met"] is None  # under 2,000 requests
    assert 0 < entry["points_in_flight_1"] <= 1.0 and 0 < entry["points_in_flight_2"] <= 1.0
    assert entry["serial_fraction_2_workers"] == pytest.approx(2 / entry["speedup_2_workers"] - 1)
    assert entry["worker_start_cpu_s"] == 0.01 and entry["rows_equal_1_2_workers"] is True
    assert entry["driver_cpu_ms_per_point_2"] > 0
    # repeats take turns (1 then 2, then 2 then 1), and rows that differ between runs fail
    calls.clear()
    bench.run_scenario("sweep", requests=20, isolate=False, repeat=2)
    assert calls == [1, 2, 2, 1]
    state = {"n": 0}

    def other_rows(tasks: Any, on_done: Any, *, backend: str, workers: int | None) -> None:
        state["n"] += 1
        real(tasks, lambda r: on_done(dict(r, antt=r["antt"] + state["n"])), backend="inprocess")

    monkeypatch.setattr(backends, "run_tasks", other_rows)
    with pytest.raises(AssertionError, match="other rows"):
        bench.run_scenario("sweep", requests=20, isolate=False)


def test_a_pool_worker_is_forked_from_a_server_that_imported_the_engine() -> None:
    """The sweep's workers start from a fork server that preloaded the runner (Linux): a
    worker finds the engine already imported, so it does not pay the imports per worker."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    from npusched.experiments.backends import WORKER_PRELOAD, _pool_context

    ctx = _pool_context(multiprocessing)
    if "forkserver" not in multiprocessing.get_all_start_methods():
        assert ctx.get_start_method() == "spawn"
        return
    assert ctx.get_start_method() == "forkserver"
    from npusched.experiments.worker_preload import MODULES

    names = (*WORKER_PRELOAD, *MODULES)
    with ProcessPoolExecutor(max_workers=1, mp_context=ctx) as pool:
        loaded = pool.submit(_modules_loaded, names).result()
        read = pool.submit(_entry_points_read).result()
    # everything a point runs through (policies, engine, metrics, pyarrow) is imported and the
    # entry points are read before a worker's first point
    assert loaded == [True] * len(names)
    assert read


def test_the_cli_is_imported_once_in_the_fork_server() -> None:
    """A forked worker re-runs the driver's main script before its first task; the ``npusched``
    command's script imports the CLI, so when the driver has the CLI loaded the fork server
    imports it once (Python 3.11's own ``"__main__"`` preload never runs) and a worker's
    re-run of the script finds it imported."""
    import multiprocessing
    import multiprocessing.forkserver as forkserver

    import npusched.cli  # noqa: F401  (the driver runs the CLI)
    from npusched.experiments.backends import WORKER_PRELOAD, _pool_context

    ctx = _pool_context(multiprocessing)
    if ctx.get_start_method() != "forkserver":
        return
    preload = forkserver._forkserver._preload_modules  # type: ignore[attr-defined]
    assert preload == [*WORKER_PRELOAD, "npusched.cli"]


def test_the_pool_server_starts_early_without_waiting() -> None:
    """``start_pool_server`` (what ``npusched sweep`` calls before it loads the experiment)
    starts the fork server and returns; another backend starts nothing."""
    import multiprocessing
    import multiprocessing.forkserver as forkserver

    from npusched.experiments.backends import start_pool_server

    if "forkserver" not in multiprocessing.get_all_start_methods():
        return
    server = forkserver._forkserver  # type: ignore[attr-defined]
    before = server._forkserver_pid
    start_pool_server("inprocess")
    assert server._forkserver_pid == before
    start_pool_server("process")
    pid = server._forkserver_pid
    assert pid is not None and (before is None or pid == before)
    start_pool_server("process")  # a running server is kept
    assert server._forkserver_pid == pid


def _modules_loaded(names: tuple[str, ...]) -> list[bool]:
    import sys

    return [n in sys.modules for n in names]


def _entry_points_read() -> bool:
    from npusched.registry import _installed_entry_points

    return _installed_entry_points.cache_info().currsize == 1


def test_sweep_tasks_are_distinct_valid_points() -> None:
    from npusched.bench.sweep import sweep_tasks
    from npusched.experiments.backends import run_point

    tasks = sweep_tasks(12, points=2, seed=5)
    assert [t.seed for t in tasks] == [5, 6] and len({t.point_id for t in tasks}) == 2
    row = run_point(tasks[0])
    assert row["seed"] == 5 and len(row["latencies_s"]) == 12


@pytest.mark.slow
def test_sweep_scenario_through_the_pool() -> None:
    entry = bench.run_scenario("sweep", requests=10, isolate=False)
    from npusched.bench.sweep import SWEEP_POINTS

    assert entry["points"] == SWEEP_POINTS and entry["points_per_s_2"] > 0
    assert entry["worker_start_s"] > 0
