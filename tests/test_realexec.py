"""The real executor (npusched.realexec): registry policies scheduling real ONNX Runtime
inference, its invariants, the cpu-ort calibration, LoadGen traffic and ``npusched validate``."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from npusched.cli import main
from npusched.errors import ConfigError, SimulationError
from npusched.models.zoo import get_network
from npusched.policies.base import POLICIES
from npusched.workloads.request import Request

ort = pytest.importorskip("onnxruntime")

from npusched.realexec.calibrate import Calibration, calibrate  # noqa: E402
from npusched.realexec.executor import (  # noqa: E402
    RealExecutor,
    RealResult,
    ReplaySource,
    check_invariants,
)
from npusched.realexec.groups import build_grouped, cut_points, run_groups  # noqa: E402
from npusched.realexec.validate import kendall_tau, parse_config, predict  # noqa: E402

NETS = {"squeezenet-1.1": 64, "mobilenet-v2": 64}


@pytest.fixture(scope="module")
def setup() -> tuple[dict[str, Any], dict[str, Any], Calibration, dict[str, Any]]:
    models = {
        n: build_grouped(n, get_network(n), n_groups=3, input_size=s) for n, s in NETS.items()
    }
    sessions = {n: m.sessions(threads=1) for n, m in models.items()}
    cal = calibrate(
        {(n, 1): m for n, m in models.items()},
        {(n, 1): s for n, s in sessions.items()},
        warmup=1,
        runs=5,
    )
    profiles = {n: cal.profile(m) for n, m in models.items()}
    return models, sessions, cal, profiles


def test_groups_reproduce_the_whole_network(setup: Any) -> None:
    from npusched.models.onnx_export import to_onnx

    models, sessions, _, _ = setup
    m = models["mobilenet-v2"]
    x = m.sample_input()
    out, times = run_groups(sessions["mobilenet-v2"], m, x)
    whole = ort.InferenceSession(
        to_onnx(get_network("mobilenet-v2"), input_size=64).SerializeToString(),
        providers=["CPUExecutionProvider"],
    )
    (ref,) = whole.run(None, {"input": x})
    assert np.allclose(out[m.outputs[0]], ref, rtol=1e-4, atol=1e-5)
    assert len(times) == 3 and all(t > 0 for t in times)
    # the live bytes at a boundary are the float32 tensors that cross it
    assert m.groups[0].live_bytes == sum(
        4 * int(np.prod(v.shape)) for v in _live_after_first(sessions["mobilenet-v2"], m, x)
    )


def _live_after_first(sessions: Any, m: Any, x: Any) -> list[Any]:
    g = m.groups[0]
    res = sessions[0].run(list(g.outputs), {"input": x})
    return [a for t, a in zip(g.outputs, res, strict=True) if t in g.live_after]


def test_cut_points_balance_macs() -> None:
    net = get_network("resnet-18")
    starts = cut_points(net, 4)
    assert starts[0] == 0 and starts == sorted(set(starts)) and len(starts) == 4
    macs = np.add.reduceat(net.columns["macs"], starts) / net.macs
    assert macs.max() < 0.45


def test_calibration_round_trip_and_device(setup: Any, tmp_path: Path) -> None:
    from npusched.hardware import get_device

    models, _, cal, profiles = setup
    path = cal.save(tmp_path / "cal.json")
    back = Calibration.load(path)
    assert back.latency_s == cal.latency_s and back.machine["intra_op_threads"] == 1
    assert back.cpu_s == cal.cpu_s and cal.cpu_s["squeezenet-1.1"][1][0] > 0
    prof = profiles["squeezenet-1.1"]
    assert prof.plan(1).total_s == pytest.approx(cal.isolated_s("squeezenet-1.1"))
    dev = get_device("cpu-ort", calibration=str(path))
    grouped = models["squeezenet-1.1"].grouped_network()
    costs = dev.layer_costs(grouped, 1)
    assert list(costs.latency_s) == pytest.approx(cal.latency_s["squeezenet-1.1"][1])
    assert list(costs.checkpoint_bytes) == [g.live_bytes for g in models["squeezenet-1.1"].groups]
    with pytest.raises(ConfigError, match="not a cpu-ort calibration"):
        Calibration.load(tmp_path / "missing.json")


def _requests(n: int, cal: Calibration, load: float, seed: int = 0) -> list[Request]:
    rng = np.random.default_rng(seed)
    names = list(NETS)
    mean = float(np.mean([cal.isolated_s(x) for x in names]))
    t = np.cumsum(rng.exponential(mean / load, n))
    return [
        Request(i, float(t[i]), names[i % 2], priority=int(rng.choice([1, 3, 9]))) for i in range(n)
    ]


@pytest.mark.parametrize(
    "policy",
    [f"{v}-{f}" for f in ("FCFS", "HPF", "SJF", "TOKEN", "PREMA") for v in ("NP", "P")],
)
def test_tiny_real_run_keeps_the_invariants(setup: Any, policy: str) -> None:
    models, sessions, cal, profiles = setup
    reqs = _requests(50, cal, 0.7)
    t0 = time.perf_counter()
    res = RealExecutor(models, sessions, profiles, POLICIES.create(policy)).run(ReplaySource(reqs))
    assert time.perf_counter() - t0 < 20.0
    df = res.records
    assert sorted(df["id"]) == list(range(50))
    assert (df["latency_s"] >= df["exec_s"]).all()
    assert (df["finish_s"] >= df["arrival_s"]).all()
    # every request ran each of its groups at least once, one group at a time
    assert len(res.segments) >= 3 * 50
    # the simulator predicts the same run: every request finishes there too
    pred = predict(profiles, policy, reqs)
    assert len(pred) == 50 and np.isfinite(pred["finish_s"]).all()


class _Slow:
    """A session that runs the real one and then sleeps ``extra_s`` (a known minimum group
    time, so arrivals fall inside a group deterministically)."""

    def __init__(self, sess: Any, extra_s: float) -> None:
        self.sess, self.extra_s = sess, extra_s

    def run(self, outputs: Any, feed: Any) -> Any:
        out = self.sess.run(outputs, feed)
        time.sleep(self.extra_s)
        return out


@pytest.mark.parametrize(("mechanism", "kept"), [("checkpoint", True), ("kill", False)])
def test_preemption_mechanisms_for_real(setup: Any, mechanism: str, kept: bool) -> None:
    models, sessions, _, profiles = setup
    slow = {n: [_Slow(s, 0.02) for s in ss] for n, ss in sessions.items()}
    reqs = [
        Request(0, 0.0, "squeezenet-1.1", priority=1),
        Request(1, 0.005, "mobilenet-v2", priority=9),  # arrives inside group 0 of request 0
    ]
    pol = POLICIES.create("P-HPF", mechanism=mechanism)
    res = RealExecutor(models, slow, profiles, pol).run(ReplaySource(reqs))
    df = res.records.set_index("id")
    assert df.loc[0, "preemptions"] == 1 and df.loc[1, "preemptions"] == 0
    assert df.loc[1, "finish_s"] < df.loc[0, "finish_s"]
    order = [(j, g) for j, g, _, _ in res.segments]
    # request 0 stops at its first group boundary; request 1 runs all its groups
    assert order[:4] == [(0, 0), (1, 0), (1, 1), (1, 2)]
    if kept:  # CHECKPOINT: resumes at group 1, the tensors copied out and back
        assert order[4:] == [(0, 1), (0, 2)]
        assert df.loc[0, "checkpoint_bytes"] == models["squeezenet-1.1"].groups[0].live_bytes
        assert df.loc[0, "wasted_s"] == 0.0
    else:  # KILL: restarts at group 0
        assert order[4:] == [(0, 0), (0, 1), (0, 2)]
        assert df.loc[0, "wasted_s"] > 0.0


def test_invariant_violations_are_caught() -> None:
    def result(ids: list[int], segs: list[Any], lat: float = 1.0) -> RealResult:
        df = pd.DataFrame({"id": ids, "latency_s": [lat] * len(ids), "exec_s": [0.5] * len(ids)})
        return RealResult(df, segs)

    check_invariants(result([0, 1], [(0, 0, 0.0, 1.0), (1, 0, 1.0, 2.0)]), n_delivered=2)
    with pytest.raises(SimulationError, match="lost or duplicated"):
        check_invariants(result([0, 0], []), n_delivered=2)
    with pytest.raises(SimulationError, match="lost or duplicated"):
        check_invariants(result([0], []), n_delivered=2)
    with pytest.raises(SimulationError, match="two groups at once"):
        check_invariants(result([0, 1], [(0, 0, 0.0, 1.0), (1, 0, 0.5, 2.0)]), n_delivered=2)
    with pytest.raises(SimulationError, match="below its own execution time"):
        check_invariants(result([0], [], lat=0.1), n_delivered=1)


def test_loadgen_server_run(setup: Any, tmp_path: Path) -> None:
    from npusched.realexec.loadgen import TenantSpec, run_loadgen

    models, sessions, cal, profiles = setup
    tenants = [TenantSpec("squeezenet-1.1", 1, 1.0), TenantSpec("mobilenet-v2", 9, 1.0)]
    ex = RealExecutor(models, sessions, profiles, POLICIES.create("P-HPF"))
    mean = float(np.mean([cal.isolated_s(n) for n in NETS]))
    res = run_loadgen(
        ex, tenants, scenario="server", qps=0.5 / mean, n_queries=40, log_dir=tmp_path / "lg"
    )
    df = res.records
    assert len(df) == 40 and set(df["network"]) == set(NETS)
    assert set(df["priority"]) == {1, 9}
    assert (np.diff(df.sort_values("id")["arrival_s"].to_numpy()) >= 0).all()
    summary = (tmp_path / "lg" / "mlperf_log_summary.txt").read_text()
    assert "Scenario : Server" in summary


def test_loadgen_singlestream_run(setup: Any) -> None:
    from npusched.realexec.loadgen import TenantSpec, run_loadgen

    models, sessions, _, profiles = setup
    tenants = [TenantSpec("squeezenet-1.1"), TenantSpec("mobilenet-v2")]
    ex = RealExecutor(models, sessions, profiles, POLICIES.create("NP-FCFS"))
    res = run_loadgen(ex, tenants, scenario="singlestream", n_queries=12)
    df = res.records.sort_values("id")
    assert len(df) == 12
    # one query at a time: each is issued after the previous one finished
    assert (df["arrival_s"].to_numpy()[1:] >= df["finish_s"].to_numpy()[:-1]).all()
    assert (df["preemptions"] == 0).all()


def test_kendall_tau() -> None:
    assert kendall_tau([1, 2, 3, 4], [10, 20, 30, 40]) == 1.0
    assert kendall_tau([1, 2, 3, 4], [4, 3, 2, 1]) == -1.0
    assert kendall_tau([1, 2, 3], [1, 3, 2]) == pytest.approx(1 / 3)


def test_config_errors_are_one_line() -> None:
    good = {"tenants": [{"network": "squeezenet", "input_size": 64}]}
    cfg = parse_config(good, "x.toml")
    assert cfg.policies == ("NP-FCFS", "P-HPF", "P-SJF", "P-PREMA")
    cases = [
        ({"tenants": []}, "x.toml: tenants: missing or empty"),
        ({**good, "policies": ["NOPE"]}, "x.toml: policies: unknown policy 'NOPE'"),
        ({**good, "loads": [2.0]}, "x.toml: loads:"),
        ({**good, "scenario": "offline"}, "x.toml: scenario: 'offline'; allowed: server"),
        ({"tenants": [{"network": "squeezenet", "priority": 0}]}, "x.toml: tenants[0].priority"),
        ({"tenants": [{"network": "squeezenet", "colour": 1}]}, "x.toml: tenants[0].colour"),
        ({**good, "bogus": 1}, "x.toml: bogus: unknown field"),
    ]
    for raw, needle in cases:
        with pytest.raises(ConfigError, match=None) as e:
            parse_config(raw, "x.toml")
        assert str(e.value).startswith(needle), str(e.value)
        assert "\n" not in str(e.value)


def test_validate_cli_bad_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cfg = tmp_path / "v.toml"
    cfg.write_text('policies = ["P-HPF"]\n[[tenants]]\nnetwork = "gnmt-9000"\n')
    assert main(["validate", str(cfg), "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"npusched: error: {cfg}: tenants[0].network")
    assert not (tmp_path / "o").exists()
    if "CUDAExecutionProvider" not in ort.get_available_providers():
        good = tmp_path / "g.toml"
        good.write_text('[[tenants]]\nnetwork = "squeezenet"\n')
        argv = ["validate", str(good), "--out", str(tmp_path / "o"), "--provider", "cuda"]
        assert main(argv) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and "provider: 'cuda' is not available" in err[0]
        assert not (tmp_path / "o").exists()


@pytest.mark.slow
def test_validate_cli_end_to_end(tmp_path: Path) -> None:
    cfg = tmp_path / "v.toml"
    cfg.write_text(
        'policies = ["NP-FCFS", "P-HPF"]\nloads = [0.5]\nn_requests = 30\nruns = 3\n'
        "groups = 3\n"
        '[[tenants]]\nnetwork = "squeezenet-1.1"\ninput_size = 64\npriority = 1\n'
        '[[tenants]]\nnetwork = "mobilenet-v2"\ninput_size = 64\npriority = 9\n'
    )
    out = tmp_path / "o"
    assert main(["validate", str(cfg), "--out", str(out), "--quiet", "--format", "json"]) == 0
    s = json.loads((out / "summary.json").read_text())
    assert [p["policy"] for p in s["points"]] == ["NP-FCFS", "P-HPF"]
    for p in s["points"]:
        assert (
            set(p["measured"])
            == set(p["predicted"])
            == {"antt", "stp", "fairness", "p99_s", "sla_rate"}
        )
        assert set(p["request_error"]) == {"median_abs_pct", "p90_abs_pct"}
        assert set(p["initial_calibration"]["metric_error_pct"]) == set(p["measured"])
        assert p["terms"]["recalibrated_over_initial"] > 0
        assert p["terms"]["dispatch_s"] == s["overheads"]["dispatch_s"] > 0
        # every record normalised by the first calibration's isolated seconds
        rec = pd.read_parquet(out / "load0.5" / p["policy"] / "measured.parquet")
        first = {n: v["isolated_s"] for n, v in s["calibration"].items()}
        iso = rec["isolated_s"].to_numpy() - rec["network"].map(first).to_numpy()
        assert np.allclose(iso, 3 * s["overheads"]["dispatch_s"])
    assert (out / "load0.5" / "P-HPF" / "calibration.json").is_file()
    assert set(s["rank_agreement"]) >= {"antt", "p99_s", "sla_rate"}
    assert (out / "latency_cdf_load0.5.png").is_file() and (out / "report.md").is_file()
    assert (out / "load0.5" / "P-HPF" / "loadgen" / "mlperf_log_summary.txt").is_file()


class _Failing:
    """A temporal policy whose ``select`` raises at its fifth call."""

    name = "failing"
    preemptive = False
    period_s = None

    def __init__(self) -> None:
        self.calls = 0

    def reset(self) -> None:
        self.calls = 0

    def on_dispatch(self, job: Any, now: float) -> None:
        return None

    def on_complete(self, job: Any, now: float) -> None:
        return None

    def select(self, view: Any) -> Any:
        from npusched.policies.contract import Decision

        self.calls += 1
        if self.calls == 5:
            raise RuntimeError("policy broke")
        return Decision(view.ready[0]) if view.running is None and view.ready else Decision(None)


def test_loadgen_run_fails_cleanly_when_the_policy_fails(setup: Any) -> None:
    from npusched.realexec.loadgen import TenantSpec, run_loadgen

    models, sessions, cal, profiles = setup
    ex = RealExecutor(models, sessions, profiles, _Failing())
    mean = float(np.mean([cal.isolated_s(n) for n in NETS]))
    with pytest.raises(RuntimeError, match="policy broke"):
        run_loadgen(ex, [TenantSpec("squeezenet-1.1")], qps=0.5 / mean, n_queries=20)


def test_measured_overheads_enter_the_profile_and_the_admission(setup: Any, tmp_path: Path) -> None:
    from dataclasses import replace as dc_replace

    from npusched.realexec.calibrate import measure_overheads

    models, sessions, cal, profiles = setup
    dispatch, admit = measure_overheads(models, sessions, profiles, per_network=2)
    # the executor's own seconds: positive and small (an absolute bound: a ratio to the
    # calibrated group seconds, measured at another moment, failed on a machine under load 8)
    assert 0 < dispatch < 0.05
    assert 0 < admit < 0.05
    c2 = dc_replace(cal, dispatch_s=1e-3, admit_s=2e-3)
    back = Calibration.load(c2.save(tmp_path / "c.json"))
    assert (back.dispatch_s, back.admit_s) == (1e-3, 2e-3)
    m = models["squeezenet-1.1"]
    # dispatch: added to every group, so a request's plan grows by groups x dispatch_s
    assert back.profile(m).plan(1).total_s == pytest.approx(
        cal.isolated_s("squeezenet-1.1") + 3 * 1e-3
    )
    # admission: one request alone starts admit_s after its issue instant; latency from issue
    reqs = [Request(0, 0.5, "squeezenet-1.1")]
    p0 = predict(profiles, "NP-FCFS", reqs)
    p1 = predict(profiles, "NP-FCFS", reqs, admit_s=2e-3)
    assert p1["arrival_s"].iloc[0] == 0.5
    assert p1["latency_s"].iloc[0] == pytest.approx(p0["latency_s"].iloc[0] + 2e-3)
    assert p1["waiting_s"].iloc[0] == pytest.approx(p0["waiting_s"].iloc[0] + 2e-3)


def test_overheads_flag_is_checked() -> None:
    base = {"tenants": [{"network": "squeezenet-1.1"}]}
    assert parse_config(base, "v.toml").overheads is True
    assert parse_config({**base, "overheads": False}, "v.toml").overheads is False
    with pytest.raises(ConfigError, match=r"^v.toml: overheads: 'yes'; allowed: true, false$"):
        parse_config({**base, "overheads": "yes"}, "v.toml")


def test_admission_is_measured_on_requests_that_found_the_worker_idle() -> None:
    from npusched.realexec.validate import admission_s

    rec = pd.DataFrame(
        {
            "id": [0, 1, 2, 3, 4],
            "arrival_s": [0.0, 0.001, 0.020, 0.020, 0.040],
            "first_start_s": [0.0002, 0.010, 0.0203, 0.030, 0.0404],
            "finish_s": [0.010, 0.015, 0.025, 0.035, 0.045],
        }
    )
    # request 1 arrived while request 0 ran, request 3 together with request 2 (queued behind
    # it, not yet started): neither is an admission; the others waited 0.2-0.4 ms
    assert admission_s(rec) == pytest.approx(0.0003)
    assert admission_s(rec.iloc[:0]) == 0.0


# --- statistically sound validation: repeats, spread, CPU placement, GC (third round) ---------
def test_repeat_config_fields_are_checked() -> None:
    good = {"tenants": [{"network": "squeezenet", "input_size": 64}]}
    cfg = parse_config(good, "x.toml")
    assert (cfg.repeats, cfg.repeat_seeds, cfg.pin, cfg.gc_off) == (1, "vary", True, True)
    cfg = parse_config({**good, "repeats": 3, "repeat_seeds": "same", "pin": False}, "x.toml")
    assert (cfg.repeats, cfg.repeat_seeds, cfg.pin) == (3, "same", False)
    for raw, needle in [
        ({**good, "repeats": 0}, "x.toml: repeats: 0; allowed: integers >= 1"),
        ({**good, "repeat_seeds": "x"}, "x.toml: repeat_seeds: 'x'; allowed: vary, same"),
        ({**good, "pin": "yes"}, "x.toml: pin: 'yes'; allowed: true, false"),
        ({**good, "gc_off": 1}, "x.toml: gc_off: 1; allowed: true, false"),
    ]:
        with pytest.raises(ConfigError) as e:
            parse_config(raw, "x.toml")
        assert str(e.value) == needle
    shipped = Path(__file__).parents[1] / "examples" / "validate_cpu.toml"
    from npusched.realexec.validate import load_config

    assert load_config(shipped).repeats == 5 and load_config(shipped, quick=True).repeats == 2


def test_cpu_plan_keeps_loadgen_off_the_worker_core(monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    from npusched.realexec import affinity

    monkeypatch.setattr(affinity, "allowed_cpus", lambda: {0, 1, 2, 3})
    monkeypatch.setattr(affinity, "_siblings", lambda c: {c, c ^ 1})  # SMT pairs (0,1), (2,3)
    plan = affinity.plan_cpus(1)
    assert plan is not None and plan.worker == {3} and plan.others == {0, 1}
    plan = affinity.plan_cpus(2)
    assert plan is None  # two cores for the worker leave LoadGen nothing
    monkeypatch.setattr(affinity, "allowed_cpus", lambda: {5})
    assert affinity.plan_cpus(1) is None
    if hasattr(os, "sched_getaffinity"):
        before = os.sched_getaffinity(0)
        cpu = min(before)
        with affinity.pinned({cpu}):
            assert os.sched_getaffinity(0) == {cpu}
        assert os.sched_getaffinity(0) == before
    with affinity.pinned(None):  # nothing to pin: a no-op
        pass


def test_gc_is_off_while_a_run_is_timed_and_back_after(setup: Any) -> None:
    import gc

    models, sessions, cal, profiles = setup
    seen: list[bool] = []
    pol = POLICIES.create("NP-FCFS")
    select = pol.select

    def spy(view: Any) -> Any:
        seen.append(gc.isenabled())
        return select(view)

    pol.select = spy  # type: ignore[method-assign]
    reqs = _requests(6, cal, 0.5)
    assert gc.isenabled()
    RealExecutor(models, sessions, profiles, pol).run(ReplaySource(reqs))
    assert seen and not any(seen) and gc.isenabled()
    seen.clear()
    RealExecutor(models, sessions, profiles, pol, gc_off=False).run(ReplaySource(reqs))
    assert seen and all(seen)


def test_resolved_tau_leaves_out_pairs_inside_the_noise() -> None:
    from npusched.realexec.validate import resolved_tau

    def pt(values: list[float], pred: float) -> dict[str, Any]:
        v = np.array(values)
        spread = {"std": float(v.std(ddof=1)), "values": values}
        return {
            "measured": {"antt": float(v.mean())},
            "predicted": {"antt": pred},
            "spread": {"measured": {"antt": spread}},
        }

    # a and b overlap (a tie the measurement cannot order); c is far above both
    pts = [pt([1.0, 3.0, 2.0], 2.5), pt([2.1, 2.2, 2.0], 2.0), pt([9.0, 9.5, 10.0], 9.0)]
    r = resolved_tau(pts, "antt")
    assert r == {"tau": 1.0, "pairs": 2, "of": 3}
    pts[2]["predicted"]["antt"] = 1.0  # now c is predicted below both: discordant
    assert resolved_tau(pts, "antt")["tau"] == -1.0


def test_validate_repeats_score_against_the_measured_spread(tmp_path: Path) -> None:
    cfg = tmp_path / "v.toml"
    cfg.write_text(
        'policies = ["P-SJF"]\nloads = [0.5]\nn_requests = 16\nruns = 3\ngroups = 2\n'
        'repeats = 2\nrepeat_seeds = "same"\noverheads = false\n'
        '[[tenants]]\nnetwork = "squeezenet-1.1"\ninput_size = 48\npriority = 1\n'
        '[[tenants]]\nnetwork = "mobilenet-v2"\ninput_size = 48\npriority = 9\n'
    )
    out = tmp_path / "o"
    assert main(["validate", str(cfg), "--out", str(out), "--quiet"]) == 0
    s = json.loads((out / "summary.json").read_text())
    (p,) = s["points"]
    assert p["repeats"] == 2 and p["seed"] == [0, 0] and p["n_requests"] == 32
    assert len(p["per_repeat"]) == 2
    for k in ("antt", "p99_s"):
        sp = p["spread"]["measured"][k]
        assert len(sp["values"]) == 2 and sp["min"] <= sp["mean"] <= sp["max"]
        assert p["measured"][k] == pytest.approx(np.mean(sp["values"]))
        assert isinstance(p["within_spread"][k], bool)
        assert set(p["paired_error_pct"][k]) == {"mean", "se", "significant"}
    # the same seed: LoadGen issues the same tenants at the same instants (to its jitter)
    assert p["arrivals"]["same_tenant_sequence"] is True
    assert p["arrivals"]["issue_instant_diff_s_median"] < 0.05
    # the one-factor terms
    assert len(p["speed_corrected"]["speed"]) == 2 and p["speed_corrected"]["speed"][0] > 0
    assert len(p["bracketed"]["after_over_before"]) == 2
    for key in ("ablation", "initial_calibration", "speed_corrected", "bracketed"):
        assert set(p[key]["metric_error_pct"]) == set(p["measured"])
    assert (out / "load0.5" / "P-SJF" / "measured.parquet").is_file()
    assert (out / "load0.5" / "P-SJF" / "repeat1" / "measured.parquet").is_file()
    assert s["execution"]["repeats"] == 2 and s["execution"]["gc_off"] is True
    assert s["within_spread"]["antt"]["of"] == 1
    assert s["rank_agreement_resolved_by_load"]["0.5"]["antt"]["of"] == 0
    assert "Over the repeats" in (out / "report.md").read_text()
