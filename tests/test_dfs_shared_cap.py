"""DFS between jobs and under a shared cap: the engine charges the (f, V) switch when a job
starts on units left at another level, one cap-split rule (job_cap_w), the planaria-dfs /
prema-npu-dfs devices, and Planaria under a cap (the machine's total power, idle units
included, never above it; conformance)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from npusched.errors import HardwareConfigError, SimulationError
from npusched.hardware import compile_profile, get_device
from npusched.hardware.clocked import IDLE_TO_PEAK_DYNAMIC, Clocked
from npusched.hardware.fission import FissionArray
from npusched.hardware.power import AB9
from npusched.hardware.systolic import SystolicArray
from npusched.metrics.power import machine_power_timeline, peak_machine_power_w
from npusched.models import get_network
from npusched.policies import POLICIES
from npusched.policies.power import DFS, DVFS, PowerCapError, job_cap_w, split_cap
from npusched.policies.spatial.planaria import PlanariaPolicy
from npusched.sim.engine import Simulator
from npusched.sim.resources import Machine, Resource
from npusched.workloads.request import Request

EFF = 0.02
LEVELS = (700e6, 400e6, 100e6)  # a coarse clock axis keeps the fission profiles small
NETS = ("resnet-50", "mobilenet-v1")


# --- 1. the (f, V) switch between jobs ----------------------------------------------------------
def _derived(pol: object, prof: object, cap: float) -> object:
    freqs = dict(prof.axes)["frequency_hz"]  # type: ignore[attr-defined]
    return pol.derive(  # type: ignore[attr-defined]
        {f: prof.plan(1, frequency_hz=f) for f in freqs},
        cap,  # type: ignore[attr-defined]
    )


@pytest.mark.parametrize(("cls", "want_s"), [(DFS, 20e-6), (DVFS, 2.15e-3)])
def test_switch_between_two_jobs_is_charged_exactly(cls: type, want_s: float) -> None:
    """squeezenet then resnet-18 under 30 W: squeezenet ends at 1 GHz (1.00 V), resnet-18
    starts at or below 500 MHz (DVFS: 0.95 V), so the second job starts after a 20 us clock switch
    (DFS) or a 2.15 ms voltage switch (DVFS), drawing the idle power; the first starts free."""
    dev = AB9(stc_efficiency=EFF, voltage_v="dvfs" if cls is DVFS else 1.0)
    cap = 30.0
    profs = {n: compile_profile(get_network(n), dev) for n in ("squeezenet", "resnet-18")}
    pol = cls(cap_w=cap, idle_power_w=dev.idle_power_w)
    a, b = (_derived(pol, profs[n], cap) for n in ("squeezenet", "resnet-18"))
    volt = dict(zip(dev.variant_axes["frequency_hz"], pol.level_voltages(), strict=True))
    prev = (float(a.frequency_hz[-1]), volt[float(a.frequency_hz[-1])])  # type: ignore[attr-defined]
    nxt = (float(b.frequency_hz[0]), volt[float(b.frequency_hz[0])])  # type: ignore[attr-defined]
    assert prev == (1e9, 1.0) and nxt[0] <= 500e6
    sw = pol.switch_cost(prev, nxt)
    assert sw == pytest.approx(want_s, rel=0, abs=0)
    reqs = [Request(0, 0.0, "squeezenet"), Request(1, 0.0, "resnet-18")]
    machine = Machine((Resource("npu", idle_power_w=dev.idle_power_w),))
    sim = Simulator(
        profs, POLICIES.create("NP-FCFS"), machine=machine, power=pol, power_cap_w=cap,
        record_timeline=True, record_power=True,
    )  # fmt: skip
    res = sim.run(reqs)
    c = res.columns
    assert c["first_start_s"][0] == 0.0
    assert c["finish_s"][0] == pytest.approx(a.total_s, rel=1e-12)  # type: ignore[attr-defined]
    assert c["first_start_s"][1] == c["finish_s"][0]
    assert c["finish_s"][1] == pytest.approx(
        a.total_s + sw + b.total_s,
        rel=1e-12,  # type: ignore[attr-defined]
    )
    # the switch draws the idle power; it is the job's, not a checkpoint
    assert c["energy_j"][1] == pytest.approx(
        b.total_energy_j + sw * dev.idle_power_w,
        rel=1e-12,  # type: ignore[attr-defined]
    )
    assert c["checkpoint_s"][1] == 0.0
    switches = [s for s in res.timeline or [] if s.kind == "switch"]
    assert len(switches) == 1 and switches[0].job_id == 1
    assert switches[0].end_s - switches[0].start_s == pytest.approx(sw, rel=1e-9)
    # nothing charged without a power policy, or for the same level
    assert pol.switch_cost(prev, prev) == 0.0


def test_resume_after_a_kill_is_charged_from_the_killers_level() -> None:
    """P-HPF with KILL: a high-priority resnet-18 arriving mid-squeezenet kills it; the killer
    starts after the switch from the victim's current step's clock, and the victim restarts
    (from step 0) after the switch from the killer's last step."""
    dev = AB9(stc_efficiency=EFF)
    cap = 30.0
    profs = {n: compile_profile(get_network(n), dev) for n in ("squeezenet", "resnet-18")}
    pol = DFS(cap_w=cap, idle_power_w=dev.idle_power_w)
    a, b = (_derived(pol, profs[n], cap) for n in ("squeezenet", "resnet-18"))
    t_kill = 0.5 * a.total_s  # type: ignore[attr-defined]
    reqs = [Request(0, 0.0, "squeezenet", priority=1), Request(1, t_kill, "resnet-18", priority=9)]
    machine = Machine((Resource("npu", idle_power_w=dev.idle_power_w),))
    sim = Simulator(
        profs, POLICIES.create("P-HPF", mechanism="kill"), machine=machine, power=pol,
        power_cap_w=cap, record_timeline=True,
    )  # fmt: skip
    res = sim.run(reqs)
    c = res.columns
    fa = a.frequency_hz  # type: ignore[attr-defined]
    fb = b.frequency_hz  # type: ignore[attr-defined]
    step = a.step_at(t_kill)  # type: ignore[attr-defined]
    sw_in = pol.switch_cost((float(fa[step]), 1.0), (float(fb[0]), 1.0))
    sw_back = pol.switch_cost((float(fb[-1]), 1.0), (float(fa[0]), 1.0))
    assert c["preemptions"][0] == 1
    assert c["finish_s"][1] == pytest.approx(t_kill + sw_in + b.total_s, rel=1e-12)  # type: ignore[attr-defined]
    assert c["finish_s"][0] == pytest.approx(
        c["finish_s"][1] + sw_back + a.total_s,
        rel=1e-12,  # type: ignore[attr-defined]
    )


# --- 2. the cap split ---------------------------------------------------------------------------
def test_job_cap_is_idle_share_plus_dynamic_share() -> None:
    assert job_cap_w(30.0, 12.0, 4, 16) == pytest.approx(12.0 * 4 / 16 + 18.0 * 4 / 16)
    assert job_cap_w(30.0, 12.0, 4, 16) == pytest.approx(30.0 * 4 / 16)
    assert job_cap_w(33.0, 24.0, 1, 1) == 33.0
    dyn = split_cap(30.0, 12.0, {"a": 4}, 16)["a"]
    assert job_cap_w(30.0, 12.0, 4, 16) == pytest.approx(dyn + 12.0 * 4 / 16)
    with pytest.raises(PowerCapError):
        job_cap_w(10.0, 12.0, 4, 16)  # the idle power alone is above the cap
    with pytest.raises(PowerCapError):
        job_cap_w(30.0, 12.0, 17, 16)


def test_engine_rejects_a_cap_below_the_idle_power() -> None:
    dev = _fission_dev()
    profs = {n: compile_profile(get_network(n), dev) for n in NETS}
    sim = Simulator(
        profs, PlanariaPolicy(), machine=_fission_machine(dev), power=_dfs(dev, 10.0),
        power_cap_w=10.0,
    )  # fmt: skip
    with pytest.raises(SimulationError, match="below the idle power"):
        sim.run([Request(0, 0.0, NETS[0])])


# --- 3. the clocked devices ---------------------------------------------------------------------
def test_top_level_is_the_wrapped_device() -> None:
    net = get_network("resnet-50")
    fa = compile_profile(net, FissionArray())
    pf = compile_profile(net, get_device("planaria-dfs", frequencies_hz=LEVELS))
    for n in (1, 5, 16):
        a = fa.plan(1, subarrays=n)
        b = pf.plan(1, subarrays=n)  # no clock named: the top one
        np.testing.assert_array_equal(a.latency_s, b.latency_s)
        np.testing.assert_array_equal(
            b.latency_s, pf.plan(1, subarrays=n, frequency_hz=7e8).latency_s
        )
    sa = compile_profile(net, SystolicArray())
    ps = compile_profile(net, get_device("prema-npu-dfs"))
    np.testing.assert_array_equal(sa.plan(1).latency_s, ps.plan(1).latency_s)
    assert dict(ps.axes)["frequency_hz"][0] == 700e6 and len(dict(ps.axes)["frequency_hz"]) == 17


def test_power_form_and_clock_scaling() -> None:
    dev = Clocked("prema-npu")
    net = get_network("resnet-50")
    # idle: the AB9's idle / peak-dynamic ratio times 128x128 PEs x 1 pJ x 700 MHz
    assert dev.idle_power_w == pytest.approx(IDLE_TO_PEAK_DYNAMIC * 128 * 128 * 1e-12 * 700e6)
    assert pytest.approx(24.0 / 21.0) == IDLE_TO_PEAK_DYNAMIC
    hi = dev.layer_costs(net, 1, frequency_hz=700e6)
    lo = dev.layer_costs(net, 1, frequency_hz=350e6)
    # compute-bound layers take twice as long at half the clock; none gets faster
    assert (lo.latency_s >= hi.latency_s - 1e-15).all()
    assert np.isclose(lo.latency_s / hi.latency_s, 2.0, rtol=0.05).any()
    # power = idle + dynamic energy / time; lower clock, lower power
    p_hi, p_lo = hi.energy_j / hi.latency_s, lo.energy_j / lo.latency_s
    assert (p_lo <= p_hi + 1e-9).all() and (p_lo >= dev.idle_power_w).all()
    # a job on n subarrays draws n/16 of the idle power
    fd = Clocked("planaria", frequencies_hz=LEVELS, static_power_w=16.0)
    c4 = fd.layer_costs(net, 1, frequency_hz=100e6, subarrays=4)
    c16 = fd.layer_costs(net, 1, frequency_hz=100e6, subarrays=16)
    assert (c4.energy_j / c4.latency_s > 4.0).all() and (c16.energy_j / c16.latency_s > 16.0).all()
    # DVFS: 0.95 V at or below 500 MHz scales the dynamic part by 0.95^2
    dv = Clocked("prema-npu", voltage_v="dvfs")
    d_lo = dv.layer_costs(net, 1, frequency_hz=350e6)
    dyn_dfs = lo.energy_j - dev.idle_power_w * lo.latency_s
    dyn_dvfs = d_lo.energy_j - dev.idle_power_w * d_lo.latency_s
    np.testing.assert_allclose(dyn_dvfs, 0.95**2 * dyn_dfs, rtol=1e-9)


@pytest.mark.parametrize(
    "params",
    [
        {"device": "ab9"},
        {"frequencies_hz": [8e8]},
        {"frequencies_hz": [1e8, 2e8]},  # the device's own clock is missing
        {"voltage_v": -1.0},
        {"static_power_w": "x"},
    ],
)
def test_clocked_rejects_bad_parameters(params: dict[str, object]) -> None:
    with pytest.raises(HardwareConfigError):
        Clocked(**params)  # type: ignore[arg-type]


# --- 3. Planaria (and a temporal policy) under a shared cap --------------------------------------
def _fission_dev() -> Clocked:
    return Clocked("planaria", frequencies_hz=LEVELS)


def _fission_machine(dev: Clocked) -> Machine:
    return Machine(
        (Resource("array", "fission-array", 16, units_axis="subarrays",
                  idle_power_w=dev.idle_power_w),)
    )  # fmt: skip


def _dfs(dev: Clocked, cap: float) -> DFS:
    return DFS(cap_w=cap, idle_power_w=dev.idle_power_w)


def _held_units_ok(res: object, capacity: int) -> bool:
    """Units held (restore, run, save, switch segments) never exceed the capacity."""
    ev: list[tuple[float, int]] = []
    for s in res.timeline:  # type: ignore[attr-defined]
        if s.end_s > s.start_s:
            ev += [(s.start_s, s.units), (s.end_s, -s.units)]
    ev.sort(key=lambda e: (e[0], e[1]))  # releases first at a tie
    held = 0
    for _, d in ev:
        held += d
        if held > capacity:
            return False
    return True


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 2**16),
    cap=st.floats(24.0, 45.0),
    n=st.integers(3, 10),
    span=st.floats(1e-4, 5e-3),
)
def test_planaria_under_a_cap_never_exceeds_it(seed: int, cap: float, n: int, span: float) -> None:
    dev = _fission_dev()
    profs = {m: compile_profile(get_network(m), dev) for m in NETS}
    rng = np.random.default_rng(seed)
    t = np.sort(rng.uniform(0.0, span, n))
    reqs = [
        Request(i, float(t[i]), NETS[int(rng.integers(2))], priority=int(rng.integers(1, 12)),
                slo_s=float(rng.uniform(1e-3, 2e-2)))
        for i in range(n)
    ]  # fmt: skip
    machine = _fission_machine(dev)
    sim = Simulator(
        profs, PlanariaPolicy(), machine=machine, power=_dfs(dev, cap), power_cap_w=cap,
        record_power=True, record_timeline=True,
    )  # fmt: skip
    res = sim.run(reqs)
    # conformance: every request finishes exactly once, at or after its isolated latency on the
    # whole array at the top clock, and the array is never oversubscribed
    assert res.n_finished == n
    assert sorted(res.columns["id"].tolist()) == list(range(n))
    lat = res.columns["latency_s"]
    assert (lat >= res.columns["isolated_s"] - 1e-12).all()
    assert _held_units_ok(res, 16)
    # the machine's power, idle units included, never exceeds the cap
    _, watts = machine_power_timeline(res, machine)
    assert watts.max() <= cap + 1e-9
    _, jobs = res.power_timeline()
    assert jobs.max() <= cap + 1e-9
    # and the cap binds somewhere: some job ran below the top clock
    if cap < 30.0:
        assert any(
            p.plan.frequency_hz is not None and (p.plan.frequency_hz < 700e6).any()
            for p in res.power or []
        )


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**16), cap=st.floats(20.0, 36.0), n=st.integers(2, 8))
def test_temporal_policy_under_a_cap_never_exceeds_it(seed: int, cap: float, n: int) -> None:
    dev = Clocked("prema-npu", frequencies_hz=LEVELS)
    profs = {m: compile_profile(get_network(m), dev) for m in NETS}
    rng = np.random.default_rng(seed)
    t = np.sort(rng.uniform(0.0, 0.01, n))
    reqs = [
        Request(i, float(t[i]), NETS[int(rng.integers(2))], priority=int(rng.integers(1, 12)))
        for i in range(n)
    ]
    machine = Machine((Resource("npu", idle_power_w=dev.idle_power_w),))
    sim = Simulator(
        profs, POLICIES.create("P-PREMA", mechanism="dynamic"), machine=machine,
        power=_dfs(dev, cap), power_cap_w=cap, record_power=True, record_timeline=True,
    )  # fmt: skip
    res = sim.run(reqs)
    assert res.n_finished == n
    assert _held_units_ok(res, 1)
    assert peak_machine_power_w(res, machine) <= cap + 1e-9


def test_machine_power_counts_idle_units() -> None:
    """One job on 4 of 16 subarrays: the machine draws the job's plan power plus 12/16 of the
    idle power while it computes, and the whole idle power before and after."""
    dev = _fission_dev()
    prof = compile_profile(get_network("resnet-50"), dev)

    class Four(PlanariaPolicy):
        def select(self, view):  # type: ignore[no-untyped-def]
            from npusched.policies.contract import Allocation, Schedule

            return Schedule(assign={j: Allocation(units=4) for j in view.ready})

    machine = _fission_machine(dev)
    sim = Simulator(
        {"resnet-50": prof}, Four(), machine=machine, power=_dfs(dev, 40.0), power_cap_w=40.0,
        record_power=True, record_timeline=True,
    )  # fmt: skip
    res = sim.run([Request(0, 1e-3, "resnet-50")])
    times, watts = machine_power_timeline(res, machine)
    _, jobs = res.power_timeline()
    idle = dev.idle_power_w
    assert watts[0] == pytest.approx(idle)  # before the arrival
    during = watts[(times >= 1e-3) & (times < res.end_s)]
    assert during.min() >= idle * 12 / 16 + jobs[jobs > 0].min() - 1e-9
    assert during.max() <= 40.0 * 4 / 16 + idle * 12 / 16 + 1e-9


def test_run_config_planaria_under_a_cap(tmp_path: object) -> None:
    """``npusched run`` of a Planaria config with a DFS cap (the example, fewer requests)."""
    import tomllib
    from pathlib import Path

    from npusched.experiments.config import RunConfig
    from npusched.experiments.runner import run_config

    raw = tomllib.loads(Path("examples/planaria_dfs.toml").read_text())
    raw["workload"]["n_requests"] = 12
    raw["hardware"]["params"] = {"frequencies_hz": list(LEVELS)}
    cfg = RunConfig.model_validate(raw)
    out = run_config(cfg, timeline=True)
    s = out.summary
    assert s["n_unfinished"] == 0
    assert s["peak_power_w"] <= 30.0 + 1e-9
    assert s["energy_j"] > 0 and 0 < s["avg_power_w"] <= 30.0
    assert out.result.power is not None


def test_cli_run_planaria_dfs(tmp_path: object, capsys: pytest.CaptureFixture[str]) -> None:
    from pathlib import Path

    from typer.testing import CliRunner

    from npusched.cli import app

    text = (
        Path("examples/planaria_dfs.toml").read_text().replace("n_requests = 60", "n_requests = 8")
    )
    text = text.replace(
        "# params = { static_power_w = 13.1, frequencies_hz = [7e8, 5.5e8, 4e8, 2.5e8, 1e8] }",
        "params = { frequencies_hz = [7e8, 4e8, 1e8] }",
    )
    cfg = Path(str(tmp_path)) / "p.toml"
    cfg.write_text(text)
    r = CliRunner().invoke(app, ["run", str(cfg), "--out", str(Path(str(tmp_path)) / "o")])
    assert r.exit_code == 0, r.output
    assert "peak_power_w" in r.output


# --- 4. npusched compare with the DFS-capped systems -------------------------------------------
def test_compare_with_capped_systems(tmp_path: object) -> None:
    import json
    from pathlib import Path

    import pandas as pd

    from npusched.experiments.compare import SYSTEMS, compare
    from npusched.experiments.reproduce.planaria import (
        MultiTenantSetup,
        prema_simulate,
        reference_rate,
        workload_instance,
    )
    from npusched.metrics import antt

    out = Path(str(tmp_path)) / "cmp"
    means = compare(
        out, scenario="B", loads=(0.5,), instances=1, n_requests=30, cap_w=30.0,
        levels_hz=LEVELS,
    )  # fmt: skip
    assert list(means["system"]) == list(SYSTEMS)
    m = means.set_index("system")
    # the cap binds: the uncapped arrays peak above it, the capped ones never do
    assert m.loc["PREMA", "peak_power_w"] > 30.0 and m.loc["Planaria", "peak_power_w"] > 30.0
    assert m.loc["PREMA+DFS", "peak_power_w"] <= 30.0 + 1e-9
    assert m.loc["Planaria+DFS", "peak_power_w"] <= 30.0 + 1e-9
    # ... and costs latency
    assert m.loc["PREMA+DFS", "antt"] >= m.loc["PREMA", "antt"] - 1e-12
    assert m.loc["Planaria+DFS", "antt"] >= m.loc["Planaria", "antt"] - 1e-12
    assert (m["avg_power_w"] <= m["peak_power_w"]).all() and (m["energy_j"] > 0).all()
    # the uncapped PREMA is the reproduction's PREMA on the registry's prema-npu (same
    # requests, same timings; the reproduction itself costs it without fill and drain)
    from npusched.hardware.systolic import SystolicArray

    sa = SystolicArray()
    setup = MultiTenantSetup.of(n_requests=30, instances=1, seed=0, benchmarks="full-size")
    rate = reference_rate("B", 0.5, sa, benchmarks="full-size", depthwise="per-channel")
    reqs = workload_instance(setup, "B", "S", rate, 0)
    from npusched.workloads.planaria import WORKLOADS

    # compare's PREMA is the reproduction's: Algorithm 3 picks the mechanism per preemption
    ref = prema_simulate(WORKLOADS["B"], monolithic=sa, depthwise="per-channel")(reqs)
    assert m.loc["PREMA", "antt"] == pytest.approx(antt(ref), rel=1e-12)
    summary = json.loads((out / "summary.json").read_text())
    assert summary["cap_w"] == 30.0 and len(summary["means"]) == 5
    report = (out / "report.md").read_text()
    assert "PREMA+DFS (30 W) against PREMA" in report and "Why: uncapped" in report
    df = pd.read_csv(out / "compare.csv")
    assert {"peak_power_w", "avg_power_w", "energy_j"} <= set(df.columns)


def test_compare_rejects_a_cap_below_the_lowest_clock(tmp_path: object) -> None:
    from pathlib import Path

    from npusched.errors import ConfigError
    from npusched.experiments.compare import compare

    with pytest.raises(ConfigError, match="--cap 14"):
        compare(Path(str(tmp_path)), scenario="B", loads=(0.5,), instances=1, n_requests=5,
                cap_w=14.0, levels_hz=LEVELS)  # fmt: skip
    with pytest.raises(ConfigError, match="--clock-levels"):
        compare(Path(str(tmp_path)), scenario="B", loads=(0.5,), instances=1, n_requests=5,
                levels_hz=(5e8,))  # fmt: skip


def test_a_quantum_shorter_than_the_voltage_switch_is_reported_not_run_forever() -> None:
    """P-RRB's 0.25 ms quantum against DVFS's 2.15 ms voltage change: every slice ends before
    its job computes; the engine raises instead of looping; a 2.5 ms quantum runs."""
    import npusched.policies.temporal  # noqa: F401

    dev = AB9(stc_efficiency=EFF, voltage_v="dvfs")
    cap = 30.0
    profs = {n: compile_profile(get_network(n), dev) for n in ("squeezenet", "resnet-18")}
    reqs = [Request(i, 0.0, ("squeezenet", "resnet-18", "squeezenet")[i]) for i in range(3)]

    def run(**kw: float) -> object:
        return Simulator(
            profs, POLICIES.create("P-RRB", **kw),
            machine=Machine((Resource("npu", idle_power_w=dev.idle_power_w),)),
            power=DVFS(cap_w=cap, idle_power_w=dev.idle_power_w), power_cap_w=cap,
        ).run(reqs)  # fmt: skip

    with pytest.raises(SimulationError, match="livelock"):
        run()
    assert run(quantum_s=2.5e-3).n_finished == 3  # type: ignore[attr-defined]


def _machine_power_loop(result: object, machine: Machine) -> tuple[np.ndarray, np.ndarray]:
    """``machine_power_timeline`` as written before its columns (one loop over the segments
    per resource): the reference its arrays must equal bit for bit."""
    from npusched.metrics.power import piece_power_timeline

    tp, wp = piece_power_timeline(result.power)  # type: ignore[attr-defined]
    end = float(result.end_s)  # type: ignore[attr-defined]
    starts: list[float] = []
    deltas: list[float] = []
    idle_total = 0.0
    for res in machine.resources:
        idle = float(res.idle_power_w)
        idle_total += idle
        if idle == 0.0:
            continue
        per_unit = idle / res.capacity
        for s in result.timeline:  # type: ignore[attr-defined]
            if s.kind == "run" and s.resource == res.name and s.end_s > s.start_s:
                starts += [s.start_s, s.end_s]
                deltas += [-per_unit * s.units, per_unit * s.units]
    grid = np.unique(np.concatenate([tp, np.asarray(starts, dtype=np.float64), [0.0, end]]))
    grid = grid[(grid >= 0.0) & (grid <= end)]
    k = np.searchsorted(tp, grid, side="right") - 1
    jobs = np.where(k >= 0, wp[np.maximum(k, 0)], 0.0)
    if starts:
        t = np.asarray(starts, dtype=np.float64)
        order = np.argsort(t, kind="stable")
        t = t[order]
        cum = np.cumsum(np.asarray(deltas, dtype=np.float64)[order])
        j = np.searchsorted(t, grid, side="right") - 1
        idle_now = idle_total + np.where(j >= 0, cum[np.maximum(j, 0)], 0.0)
    else:
        idle_now = np.full(grid.shape, idle_total)
    watts = jobs + idle_now
    watts[-1] = 0.0
    return grid, watts


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_machine_power_timeline_equals_the_segment_loop(seed: int) -> None:
    """The column form of ``machine_power_timeline`` gives the loop's arrays bit for bit: a
    Planaria run under a cap (fission units, many overlapping segments) and a synthetic
    timeline on two resources (unsorted, zero-length and non-``run`` segments, tied bounds)."""
    from types import SimpleNamespace

    from npusched.sim.common import Segment

    dev = _fission_dev()
    profs = {m: compile_profile(get_network(m), dev) for m in NETS}
    rng = np.random.default_rng(seed)
    n = 12
    t = np.sort(rng.uniform(0.0, 2e-3, n))
    reqs = [Request(i, float(t[i]), NETS[int(rng.integers(2))], slo_s=5e-3) for i in range(n)]
    machine = _fission_machine(dev)
    sim = Simulator(
        profs, PlanariaPolicy(), machine=machine, power=_dfs(dev, 35.0), power_cap_w=35.0,
        record_power=True, record_timeline=True,
    )  # fmt: skip
    res = sim.run(reqs)
    for got, want in zip(
        machine_power_timeline(res, machine), _machine_power_loop(res, machine), strict=True
    ):
        assert got.tobytes() == want.tobytes()
    two = Machine((Resource("a", capacity=3, idle_power_w=3.3), Resource("b", idle_power_w=0.1)))
    segs = []
    for i in range(600):
        s0 = round(float(rng.uniform(0.0, 1.0)), 2)  # rounded: many tied bounds
        s1 = s0 + round(float(rng.uniform(0.0, 0.2)), 2) * int(rng.integers(0, 2))
        segs.append(
            Segment(
                i, s0, s1, ("run", "save", "restore")[int(rng.integers(3))],
                ("a", "b")[int(rng.integers(2))], int(rng.integers(1, 5)),
            )
        )  # fmt: skip
    fake = SimpleNamespace(power=[], timeline=segs, end_s=1.3)
    for got, want in zip(
        machine_power_timeline(fake, two), _machine_power_loop(fake, two), strict=True
    ):
        assert got.tobytes() == want.tobytes()
