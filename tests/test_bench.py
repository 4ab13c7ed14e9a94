"""The engine benchmark on a tiny workload: the engine agrees with the SimPy reference."""

from __future__ import annotations

import json

import numpy as np
import pytest

from npusched.bench import (
    BENCH_NETWORKS,
    bench_workload,
    run_bench,
    simpy_reference,
    synthetic_profiles,
)
from npusched.policies.temporal import HPF
from npusched.sim.engine import Simulator

KEYS = {
    "requests_per_s",
    "speedup_vs_simpy",
    "max_abs_finish_diff_s",
    "layer_executions_per_s",
    "peak_memory_mb",
    "n_requests",
}


def test_tiny_bench_agrees_with_simpy() -> None:
    res = run_bench(n_requests=300, seed=1, reference=True, progress=False)
    assert set(res) >= KEYS
    assert res["n_requests"] == 300
    assert res["max_abs_finish_diff_s"] <= 1e-9
    assert res["preemptions"] > 0  # the workload does exercise preemption
    assert res["layer_executions"] > 300
    json.dumps(res)  # serialisable


def test_synthetic_profiles_agree_with_simpy() -> None:
    profiles = synthetic_profiles(random_state=3)
    assert sorted(profiles) == sorted(BENCH_NETWORKS)
    reqs = bench_workload(400, profiles, load=0.95, random_state=5)
    res = Simulator(
        profiles, HPF(preemptive=True), preemption_point="layer", checkpoint_cost=False
    ).run(reqs)
    ref = simpy_reference(reqs, profiles)
    assert res.columns["preemptions"].sum() > 0
    np.testing.assert_allclose(res.columns["finish_s"], ref, rtol=0, atol=1e-9)
    # Layer-boundary preemption never splits a step: each executes once, as in SimPy.
    steps = sum(profiles[r.network].plan(r.batch).steps for r in reqs)
    assert res.layer_executions == steps


def test_bench_workload_is_seeded_and_loaded() -> None:
    profiles = synthetic_profiles()
    a = bench_workload(2000, profiles, random_state=7)
    b = bench_workload(2000, profiles, random_state=7)
    assert a == b
    assert [r.id for r in a] == list(range(2000))
    work = sum(profiles[r.network].isolated_latency(r.batch) for r in a)
    assert work / a[-1].arrival_s == pytest.approx(0.9, rel=0.15)
    assert {r.priority for r in a} == {1, 3, 9}


def test_cli_bench_json(capsys: pytest.CaptureFixture[str]) -> None:
    from npusched.cli import main

    assert main(["bench", "--requests", "200", "--json", "--no-reference"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out) >= KEYS and out["n_requests"] == 200
    assert out["speedup_vs_simpy"] is None and out["max_abs_finish_diff_s"] is None
