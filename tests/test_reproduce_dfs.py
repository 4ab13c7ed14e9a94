"""``npusched reproduce dfs``: the frame run, the calibration, summary/report and the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from npusched.experiments.reproduce.dfs import reproduce
from npusched.experiments.studies.dfs.paper import NETWORKS, PAPER_TABLE6
from npusched.experiments.studies.dfs.points import (
    FrameJob,
    FrameResult,
    _schedules,
    calibrate_efficiency,
    engine_frame,
    policy_table,
    run_frame,
    schedule_frame,
    sensitivity,
)
from npusched.hardware.power import AB9, fused_steps
from npusched.models import get_network
from npusched.policies.power import DFS, StepSchedule, get_power_policy

KEYS = ("fps", "peak_power_w", "avg_power_w", "energy_per_frame_j", "voltage_switches_per_frame")


def test_run_frame_is_the_schedule_executed_in_order() -> None:
    s = StepSchedule(
        level=np.array([1, 0]),
        frequency_hz=np.array([2.0, 1.0]),
        voltage_v=np.array([1.0, 0.95]),
        latency_s=np.array([1.0, 2.0]),
        power_w=np.array([30.0, 20.0]),
        energy_j=np.array([30.0, 40.0]),
        switch_s=np.array([0.5, 0.5]),
        freq_switch=np.array([False, False]),
        volt_switch=np.array([True, True]),
        idle_power_w=10.0,
        cap_w=33.0,
    )
    fr = run_frame(s)
    assert fr.frame_time_s == 4.0 and fr.fps == 0.25
    assert fr.energy_per_frame_j == 30.0 + 40.0 + 1.0 * 10.0
    assert fr.avg_power_w == 80.0 / 4.0 and fr.peak_power_w == 30.0
    assert fr.voltage_switches_per_frame == 2 and fr.frequency_switches_per_frame == 0


def test_calibration_hits_the_mean_layer_time() -> None:
    nets = ("squeezenet", "resnet-18")
    eff = calibrate_efficiency(nets, target_mean_layer_s=1e-3)
    dev = AB9(stc_efficiency=eff)
    total = n = 0.0
    for name in nets:
        net = get_network(name)
        s = DFS().schedule(policy_table(dev, net, DFS().level_voltages()))  # fused steps
        total += float(s.latency_s.sum())
        n += len(s.level)
    assert total / n == pytest.approx(1e-3, rel=1e-4)
    per_op = calibrate_efficiency(nets, target_mean_layer_s=1e-3, fuse=False)
    assert per_op < eff  # more, shorter steps need a slower chip for the same mean
    # a target faster than the full-efficiency chip cannot be met: efficiency stays 1
    assert calibrate_efficiency(nets, target_mean_layer_s=1e-9) == 1.0


THREE = ("vgg-16", "resnet-18", "squeezenet")


def test_reproduce_quick_writes_summary_and_report(tmp_path: Path) -> None:
    calls: list[int] = []

    def runner(job: FrameJob) -> FrameResult:  # a swapped-in frame runner is used
        calls.append(len(job.schedule.level))
        return schedule_frame(job)

    summary = reproduce(
        tmp_path, quick=True, efficiency=0.02, runner=runner, plots=False, networks=THREE
    )
    assert len(calls) == 2 * 3
    on_disk = json.loads((tmp_path / "summary.json").read_text())
    assert on_disk["networks"].keys() == summary["networks"].keys()
    for net, pols in on_disk["networks"].items():
        assert set(pols) == {"DFS", "DVFS"}
        for res in pols.values():
            assert all(k in res for k in KEYS)
            assert res["peak_power_w"] <= 33.0
        assert pols["DFS"]["voltage_switches_per_frame"] == 0
        assert net in PAPER_TABLE6
    h = on_disk["headline"]
    assert h["fps_gain_mean"]["paper"] == 0.33 and h["energy_change_mean"]["paper"] == -0.14
    assert h["dfs_peak_power_max_w"]["ours"] <= 33.0
    comps = {c["id"]: c for c in on_disk["comparisons"]}
    for n in THREE:
        assert {f"table6/{n}/voltage_switches", f"table6/{n}/dvfs_frame_ms"} <= set(comps)
    assert comps["fig5/fps_gain_mean"]["paper"] == 0.33
    assert all(c["cause"] for c in comps.values() if c["direction"] == "opposite")
    fit = on_disk["fit"]
    assert fit["stc_efficiency"] == 0.02 and set(fit["per_network_efficiency"]) == set(THREE)
    report = (tmp_path / "report.md").read_text()
    assert "+33%" in report and "Why ours differs" in report and "fitted power model" in report
    assert (tmp_path / "trace_squeezenet.csv").exists() and (tmp_path / "table6.csv").exists()


def test_sensitivity_rows() -> None:
    rows = sensitivity(("squeezenet",), idle_w=(24.0, 40.0), dynamic_w=(21.0,))
    assert len(rows) == 1  # an idle power above the cap is skipped
    r = rows[0]
    assert r["idle_power_w"] == 24.0 and 0 < r["stc_efficiency"] <= 1
    assert r["fps_gain_mean"] > 0 and r["dvfs_voltage_switches_total"] > 0


def test_reproduce_rejects_bad_cap(tmp_path: Path) -> None:
    from npusched.errors import ConfigError

    with pytest.raises(ConfigError, match="cap_w"):
        reproduce(tmp_path, quick=True, cap_w=-1.0, efficiency=0.02, plots=False)


def test_cli_reproduce_dfs_quick(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from npusched.cli import main

    out = tmp_path / "d"
    assert main(["reproduce", "dfs", "--quick", "--efficiency", "0.02", "--out", str(out)]) == 0
    assert "DFS vs DVFS" in capsys.readouterr().out
    for f in ("fig4_frequency.png", "fig5_fps.png", "fig6_power.png", "report.md"):
        assert (out / f).stat().st_size > 0
    assert main(["reproduce", "dfs", "--quick", "--cap-w", "5", "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("npusched: error:")


@pytest.mark.slow
def test_cli_reproduce_dfs_full(tmp_path: Path) -> None:
    from npusched.cli import main

    assert main(["reproduce", "dfs", "--out", str(tmp_path)]) == 0
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert set(summary["networks"]) == set(NETWORKS)
    assert summary["headline"]["dfs_peak_power_max_w"]["ours"] <= 33.0
    assert summary["headline"]["fps_gain_mean"]["ours"] > 0  # DFS beats DVFS on average


def test_windowed_peak_power() -> None:
    from npusched.experiments.studies.dfs.points import windowed_peak_power

    # constant power: any window sees it
    assert windowed_peak_power([1.0, 2.0], [5.0, 5.0], 0.5) == pytest.approx(5.0)
    # a 1 s burst at 30 W in a 4 s period at 10 W: a 1 s window catches the whole burst,
    # a 2 s window half of it, a window of many periods the mean
    d, p = [1.0, 3.0], [30.0, 10.0]
    assert windowed_peak_power(d, p, 1.0) == pytest.approx(30.0)
    assert windowed_peak_power(d, p, 2.0) == pytest.approx(20.0)
    assert windowed_peak_power(d, p, 400.0) == pytest.approx(15.0)
    # windows wrap across the frame boundary: the burst split over the end and the start
    assert windowed_peak_power([0.5, 3.0, 0.5], [30.0, 10.0, 30.0], 1.0) == pytest.approx(30.0)
    # brute force on a random timeline
    rng = np.random.default_rng(0)
    d = rng.uniform(0.1, 1.0, 12)
    p = rng.uniform(5.0, 40.0, 12)
    w = 0.7
    t = np.linspace(0, d.sum(), 4001)
    dt = 1e-4
    grid = np.arange(0, 2 * d.sum() + w, dt)
    seg = np.searchsorted(np.cumsum(np.tile(d, 3)), grid, side="right")
    power = np.tile(p, 3)[seg]
    csum = np.concatenate(([0.0], np.cumsum(power) * dt))
    k = round(w / dt)
    idx = np.searchsorted(grid, t)
    brute = ((csum[idx + k] - csum[idx]) / w).max()
    got = windowed_peak_power(d, p, w)
    assert got >= brute - 0.2 and got <= p.max()


def _job(name: str, pol: str, *, fuse: bool, cap_w: float = 33.0, eff: float = 0.029) -> FrameJob:
    dev = AB9(stc_efficiency=eff)
    net = get_network(name)
    sch = _schedules(dev, net, cap_w, fuse=fuse)[pol]
    policy = get_power_policy(pol, cap_w=cap_w, idle_power_w=dev.idle_power_w)
    dev_p = AB9(stc_efficiency=eff, voltage_v="dvfs" if pol == "DVFS" else 1.0)
    return FrameJob(net, policy, dev_p, sch, fused_steps(net) if fuse else None)


@pytest.mark.parametrize("fuse", [True, False])
@pytest.mark.parametrize("pol", ["DFS", "DVFS"])
@pytest.mark.parametrize("name", ["squeezenet", "resnet-50", "yolov3"])
def test_engine_frame_equals_the_schedule(name: str, pol: str, fuse: bool) -> None:
    """The engine (Simulator with the power hook; it charges the wrap-around switch between
    two frames itself) gives the per-step schedule's frame exactly, as engine_frame did when it
    added that switch by hand (the frame results are unchanged); only the 5 ms window differs (the
    engine folds a switch into the step after it; a fused step's schedule power is its peak
    layer's for the whole step, the engine's timeline has each layer's own)."""
    job = _job(name, pol, fuse=fuse)
    a, b = engine_frame(job), run_frame(job.schedule)
    for k in ("frame_time_s", "fps", "avg_power_w", "energy_per_frame_j", "switch_time_s"):
        assert getattr(a, k) == pytest.approx(getattr(b, k), rel=1e-9), k
    for k in ("peak_power_w", "voltage_switches_per_frame", "frequency_switches_per_frame"):
        assert getattr(a, k) == pytest.approx(getattr(b, k), rel=1e-12), k
    assert a.layers == b.layers
    assert a.peak_power_w <= 33.0 and a.peak_power_5ms_w <= 33.0 + 1e-9
    if fuse:  # the schedule's fused timeline holds each step at its peak layer's power
        assert a.peak_power_5ms_w <= b.peak_power_5ms_w + 1e-9
    # back-to-back frames in one run give the same frame
    c = engine_frame(job, frames=3)
    assert c.frame_time_s == pytest.approx(a.frame_time_s, rel=1e-9)
    assert c.energy_per_frame_j == pytest.approx(a.energy_per_frame_j, rel=1e-9)
    assert job.policy.idle_power_w == AB9().idle_power_w  # the job's policy is not mutated


def test_grouped_steps_choose_one_level_per_group() -> None:
    from npusched.hardware import compile_profile
    from npusched.policies.power import GroupedSteps, PowerCapError

    dev = AB9(stc_efficiency=0.029)
    net = get_network("resnet-18")
    prof = compile_profile(net, dev)
    freqs = dict(prof.axes)["frequency_hz"]
    plans = {f: prof.plan(1, frequency_hz=f) for f in freqs}
    groups = fused_steps(net)
    plan = GroupedSteps(DFS(cap_w=33.0), groups).derive(plans, 33.0)
    f = np.asarray(plan.frequency_hz)
    for g in np.unique(groups):
        assert len(set(f[groups == g])) == 1  # one clock per fused step
    sch = DFS(cap_w=33.0).schedule(policy_table(dev, net, DFS().level_voltages()), cyclic=False)
    starts = np.flatnonzero(np.diff(groups, prepend=-1))
    np.testing.assert_array_equal(f[starts], sch.frequency_hz)
    with pytest.raises(PowerCapError, match="step_groups"):
        DFS(cap_w=33.0).derive(plans, 33.0, step_groups=groups[:-1])


def test_reproduce_runs_frames_through_the_engine_by_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import npusched.sim.engine as engine

    runs: list[int] = []
    real = engine.Simulator.run

    def counting(self: object, requests: object, **kw: object) -> object:
        runs.append(1)
        return real(self, requests, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(engine.Simulator, "run", counting)
    summary = reproduce(tmp_path, quick=True, efficiency=0.02, plots=False, networks=THREE)
    assert len(runs) == 2 * 3  # one engine run per network and policy
    swapped = reproduce(
        tmp_path / "s",
        quick=True,
        efficiency=0.02,
        plots=False,
        runner=schedule_frame,
        networks=THREE,
    )
    for net, pols in summary["networks"].items():
        for pol, res in pols.items():
            for k in ("fps", "energy_per_frame_j", "avg_power_w", "peak_power_w"):
                assert res[k] == pytest.approx(swapped["networks"][net][pol][k], rel=1e-9)


def test_reproduce_per_network_time_scale_hits_table6(tmp_path: Path) -> None:
    """``time_scale="per-network"``: each network's DVFS frame time is Table 6's (the fitted
    power scales, each network its own efficiency); a bad value is one ConfigError."""
    from npusched.errors import ConfigError

    s = reproduce(
        tmp_path,
        quick=True,
        plots=False,
        networks=THREE,
        runner=schedule_frame,
        time_scale="per-network",
    )
    for n in THREE:
        assert s["networks"][n]["DVFS"]["frame_time_s"] * 1e3 == pytest.approx(
            PAPER_TABLE6[n][1], rel=0.02
        )
    with pytest.raises(ConfigError, match="time_scale"):
        reproduce(tmp_path, quick=True, plots=False, time_scale="each")
