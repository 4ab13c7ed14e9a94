"""The engine core's capabilities, each driven by a small machine policy written here.

Resources with capacity and re-allocation, rate changes, batches that lose samples at exits and
gain merged ones, timers, dependent requests, in-place variant (frequency) switches with their
cost, energy accounting, and positions that stay exact across plan variants (against a
brute-force step-by-step executor). Times are seconds, checked exactly or to 1e-12 s.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from npusched.errors import ConfigError, SimulationError
from npusched.hardware.profile import ExecPlan, Profile
from npusched.models.ir import ExitPoint, Layer, LayerKind, make_network
from npusched.policies.contract import (
    NOTHING,
    Allocation,
    JobView,
    MachineView,
    Merge,
    Schedule,
)
from npusched.sim import Machine, Resource, Simulator, fission_array, single_npu, soc
from npusched.testing import variant_profile
from npusched.workloads.request import Request
from simhelpers import Scripted, make_network_stub

MS = 1e-3
US = 1e-6


def by_id(view: MachineView, i: int) -> JobView | None:
    for j in (*view.ready, *view.running, *view.preempting):
        if j.id == i:
            return j
    return None


def col(res: object, name: str) -> list[float]:
    return [float(x) for x in res.columns[name]]  # type: ignore[attr-defined]


# --- resources, allocations, re-allocation ----------------------------------------------------
def test_two_jobs_share_16_units_with_reallocation_mid_layer() -> None:
    """Job 0 (2 layers of 16 ms on 1 subarray, speed linear in subarrays) starts alone on all 16
    subarrays (1 ms per layer). Job 1 arrives at 0.6 ms, mid-tile of layer 0: the policy
    re-splits 8/8.
    Job 0 runs to its next tile boundary (4 tiles per layer: 0.75 ms), saves 1000 B (1 us at
    1 GB/s), restores it (1 us) on 8 subarrays at 0.752 ms and needs 1.25 ms more of its 8-unit
    plan (a quarter of layer 0 at 0.5 ms per quarter ... 2 ms per layer): finishes at 0.752 +
    0.5 + 2.0 = 3.252 ms. Job 1 gets 8 units only when job 0 releases its 16 (0.751 ms) and runs
    one layer of 16 ms / 8 = 2 ms: finishes at 2.751 ms."""
    prof = variant_profile("n", [16 * MS, 16 * MS], tiles=4, checkpoint_bytes=1000)

    def script(v: MachineView) -> Schedule:
        j0, j1 = by_id(v, 0), by_id(v, 1)
        if v.reason == "arrival" and j1 is None:
            return Schedule(assign={j0: Allocation("array", 16)})
        if v.reason == "arrival":
            return Schedule(assign={j0: Allocation("array", 8), j1: Allocation("array", 8)})
        return NOTHING

    reqs = [Request(0, 0.0, "n"), Request(1, 0.6 * MS, "n2")]
    prof2 = variant_profile("n2", [16 * MS], tiles=4)
    res = Simulator(
        {"n": prof, "n2": prof2},
        Scripted(script),
        machine=fission_array(16),
        record_timeline=True,
    ).run(reqs)
    assert col(res, "finish_s") == pytest.approx([3.252 * MS, 2.751 * MS], abs=1e-12)
    assert res.columns["preemptions"].tolist() == [1, 0]
    assert res.columns["checkpoint_bytes"].tolist() == [1000, 0]
    # Isolated latency is on the fastest variant (16 subarrays).
    assert col(res, "isolated_s") == pytest.approx([2 * MS, 1 * MS])
    check_capacity(res, {"array": 16})


def check_capacity(res: object, caps: dict[str, int]) -> None:
    """Summed units held on each resource never exceed its capacity (timeline sweep)."""
    tl = res.timeline  # type: ignore[attr-defined]
    for name, cap in caps.items():
        ev = sorted(
            [(s.start_s, s.units) for s in tl if s.resource == name]
            + [(s.end_s, -s.units) for s in tl if s.resource == name],
            key=lambda x: (x[0], x[1]),
        )
        level = 0
        for _, d in ev:
            level += d
            assert level <= cap


def test_oversubscription_is_refused() -> None:
    prof = variant_profile("n", [1 * MS])

    def script(v: MachineView) -> Schedule:
        return Schedule(assign={j: Allocation("array", 10) for j in v.ready})

    reqs = [Request(0, 0.0, "n"), Request(1, 0.0, "n")]
    with pytest.raises(SimulationError, match="allocated 20 unit"):
        Simulator({"n": prof}, Scripted(script), machine=fission_array(16)).run(reqs)
    with pytest.raises(SimulationError, match=r"allowed: 1\.\.16"):
        Simulator(
            {"n": prof},
            Scripted(lambda v: Schedule(assign={j: Allocation("array", 17) for j in v.ready})),
            machine=fission_array(16),
        ).run(reqs[:1])
    with pytest.raises(SimulationError, match="no resource 'gpu'"):
        Simulator(
            {"n": prof},
            Scripted(lambda v: Schedule(assign={j: Allocation("gpu") for j in v.ready})),
            machine=fission_array(16),
        ).run(reqs[:1])


def test_temporal_policy_needs_one_resource() -> None:
    from npusched.policies.temporal import FCFS

    with pytest.raises(ConfigError, match="one-resource machine"):
        Simulator({}, FCFS(), machine=soc())
    with pytest.raises(ConfigError, match="capacity"):
        Resource("x", capacity=0)
    with pytest.raises(ConfigError, match="twice"):
        Machine.of(Resource("x"), Resource("x"))


def test_heterogeneous_resources_run_concurrently() -> None:
    """A GPU and a DLA: the accelerator axis picks each job's plan (DLA 2x slower here)."""
    prof = variant_profile(
        "n",
        [1 * MS, 1 * MS],
        axis="accelerator",
        values=("gpu", "dla"),
        speed=lambda a: 1.0 if a == "gpu" else 0.5,
    )

    def script(v: MachineView) -> Schedule:
        free = [name for name, r in v.resources.items() if r.free]
        return Schedule(assign=dict(zip(v.ready, (Allocation(f) for f in free), strict=False)))

    reqs = [Request(0, 0.0, "n"), Request(1, 0.0, "n"), Request(2, 0.0, "n")]
    res = Simulator({"n": prof}, Scripted(script), machine=soc()).run(reqs)
    # 0 on the GPU (2 ms), 1 on the DLA (4 ms), 2 on the GPU after 0 (2 + 2 ms).
    assert col(res, "finish_s") == pytest.approx([2 * MS, 4 * MS, 4 * MS])
    assert res.columns["resource"].tolist() == ["gpu", "dla", "gpu"]
    assert res.resources is not None and res.resources["dla"]["busy_s"] == pytest.approx(4 * MS)


# --- rates ---------------------------------------------------------------------------------
def test_rate_change_slows_a_running_job_exactly() -> None:
    """One 4 ms layer; at 1 ms (a timer) the job is slowed to rate 0.5: the 3 ms left take 6 ms."""
    prof = variant_profile("n", [4 * MS], values=(1,))

    def script(v: MachineView) -> Schedule:
        if v.reason == "arrival":
            return Schedule(assign={v.ready[0]: Allocation()}, timers=(1 * MS,))
        if v.reason == "timer":
            return Schedule(rates={v.running[0]: 0.5})
        return NOTHING

    pol = Scripted(script)
    res = Simulator({"n": prof}, pol, machine=fission_array(1)).run([Request(0, 0.0, "n")])
    assert col(res, "finish_s") == pytest.approx([7 * MS], abs=1e-15)
    assert (1 * MS, "timer") in pol.log


# --- batches, exits, merges, stop steps ------------------------------------------------------
def exit_profile() -> Profile:
    """4 layers of 1 ms per sample (batch b: b ms), one early exit after layer 1."""
    layers = [
        Layer(name=f"l{i}", kind=LayerKind.VECTOR, inputs=(f"l{i - 1}",) if i else ())
        for i in range(4)
    ]
    net = make_network("e", layers, exits=(ExitPoint(name="x1", after=1),))
    lat = np.stack([np.full(4, 1 * MS) * b for b in (1, 2, 3)])
    return Profile.from_tables(
        net,
        device_name="hand-built",
        batch_sizes=(1, 2, 3),
        latency_s=lat,
        frequency_hz=1e9,
        memory_bandwidth_bps=1e9,
        energy_j=np.stack([np.full(4, 1e-3) * b for b in (1, 2, 3)]),
    )


def test_batch_loses_samples_at_an_exit_and_gains_a_merged_sample() -> None:
    """Samples 0 and 1 arrive at 0 and are merged into one batch of 2 (2 ms per layer); sample 0
    exits after layer 1 (t = 4 ms). Sample 2 arrives at 1 ms; at the exit the policy runs it
    alone from the start to the exit step (2 layers of 1 ms: 4 -> 6 ms) while the batch waits,
    merges it back, and the batch of 2 finishes layers 2-3 at 2 ms each: 6 -> 10 ms."""
    prof = exit_profile()
    assert prof.plan(2).exits == (2,)

    def script(v: MachineView) -> Schedule:
        j0, j1, j2 = by_id(v, 0), by_id(v, 1), by_id(v, 2)
        if v.reason == "arrival" and v.now == 0.0:
            return Schedule(merge=(Merge(j0, (j1,)),), assign={j0: Allocation()})
        if v.reason == "exit":  # the batch is at the exit: park it, catch sample 2 up
            return Schedule(
                preempt=(j1 or j0,), until_step={j2: 2}, assign={j2: Allocation()}
            )
        if v.reason == "stopped":
            batch = v.ready[0] if v.ready[0].id != 2 else v.ready[1]
            return Schedule(merge=(Merge(batch, (j2,)),), assign={batch: Allocation()})
        return NOTHING

    reqs = [
        Request(0, 0.0, "e", exit=0),
        Request(1, 0.0, "e"),
        Request(2, 1 * MS, "e"),
    ]
    res = Simulator(
        {"e": prof}, Scripted(script), machine=single_npu(), checkpoint_cost=False
    ).run(reqs)
    assert col(res, "finish_s") == pytest.approx([4 * MS, 10 * MS, 10 * MS], abs=1e-12)
    # Every request finishes exactly once and no earlier than alone on the machine.
    assert np.all(res.columns["finish_s"] >= res.columns["arrival_s"] + res.columns["isolated_s"])
    # Energy: 2 layers at batch 2 (2 x 2 mJ) shared by 0 and 1, then 2 layers of sample 2
    # alone (2 mJ), then 2 layers at batch 2 (4 mJ) shared by 1 and 2.
    assert res.energy_j == pytest.approx(10e-3)
    assert col(res, "energy_j") == pytest.approx([2e-3, 4e-3, 4e-3])


def test_single_sample_early_exit_completes_at_the_exit() -> None:
    prof = exit_profile()
    pol = Scripted(lambda v: Schedule(assign={j: Allocation() for j in v.ready[:1]}))
    res = Simulator({"e": prof}, pol, machine=single_npu()).run(
        [Request(0, 0.0, "e", exit=0), Request(1, 0.0, "e")]
    )
    assert col(res, "finish_s") == pytest.approx([2 * MS, 6 * MS])


def test_merge_refuses_jobs_at_different_positions() -> None:
    prof = exit_profile()

    def script(v: MachineView) -> Schedule:
        if v.reason == "stopped":
            return Schedule(merge=(Merge(by_id(v, 0), (by_id(v, 1),)),))
        if v.now == 0.0:
            return Schedule(assign={by_id(v, 0): Allocation()}, until_step={by_id(v, 0): 1})
        return NOTHING

    with pytest.raises(SimulationError, match="same position"):
        Simulator({"e": prof}, Scripted(script), machine=single_npu()).run(
            [Request(0, 0.0, "e"), Request(1, 0.0, "e")]
        )


# --- timers and dependent requests -----------------------------------------------------------
def test_timer_wakes_the_policy_adaptb_style() -> None:
    """A policy that waits for a second request or a 5 ms timeout, whichever first."""
    prof = variant_profile("n", [1 * MS], values=(1,))

    def script(v: MachineView) -> Schedule:
        if v.reason == "arrival" and len(v.ready) == 1 and not v.running:
            return Schedule(timers=(v.now + 5 * MS,))
        if v.reason == "timer" and v.ready:
            return Schedule(assign={v.ready[0]: Allocation()})
        return NOTHING

    res = Simulator({"n": prof}, Scripted(script), machine=fission_array(1)).run(
        [Request(0, 0.0, "n")]
    )
    assert col(res, "first_start_s") == pytest.approx([5 * MS])
    assert col(res, "finish_s") == pytest.approx([6 * MS])


def test_dependent_request_starts_after_its_predecessor_plus_transfer() -> None:
    from npusched.policies.temporal import FCFS
    from simhelpers import make_profile

    profiles = {"a": make_profile("a", [2 * MS]), "b": make_profile("b", [1 * MS])}
    reqs = [
        Request(0, 0.0, "a"),
        Request(1, 0.0, "b", depends_on=0, transfer_s=0.5 * MS),
        Request(2, 0.1 * MS, "a"),
    ]
    res = Simulator(profiles, FCFS()).run(reqs)
    # 0: 0-2 ms; 2 queued at 0.1 ms runs 2-4 ms; 1 is dispatched at 2.5 ms and runs 4-5 ms.
    assert col(res, "finish_s") == pytest.approx([2 * MS, 5 * MS, 4 * MS])
    bad = [Request(0, 0.0, "a", depends_on=7)]
    with pytest.raises(SimulationError, match="depends_on=7"):
        Simulator(profiles, FCFS()).run(bad)


# --- frequency switches and energy -----------------------------------------------------------
def freq_profile() -> Profile:
    """Two layers of 1 ms at 1 GHz, twice as long at 0.5 GHz; 1 mJ per layer at 1 GHz and
    0.4 mJ at 0.5 GHz."""
    net = make_network_stub("f", 2)
    return Profile.from_tables(
        net,
        device_name="hand-built",
        batch_sizes=(1,),
        latency_s=np.array([[2 * MS, 2 * MS], [1 * MS, 1 * MS]]),
        frequency_hz=1e9,
        memory_bandwidth_bps=1e9,
        energy_j=np.array([[0.4e-3, 0.4e-3], [1e-3, 1e-3]]),
        axes=(("frequency_hz", (5e8, 1e9)),),
    )


def test_frequency_switch_costs_its_pause_and_keeps_position() -> None:
    """Start at 1 GHz; at 0.5 ms switch to 0.5 GHz (20 us pause): 1.5 layers left at 2 ms per
    layer: finish at 0.5 + 0.02 + 3.0 = 3.52 ms; energy 0.5 mJ + 0.5 x 0.4 + 0.4 mJ."""
    prof = freq_profile()

    def script(v: MachineView) -> Schedule:
        if v.reason == "arrival":
            return Schedule(assign={v.ready[0]: Allocation.of(frequency_hz=1e9)}, timers=(0.5 * MS,))
        if v.reason == "timer":
            return Schedule(assign={v.running[0]: Allocation.of(frequency_hz=5e8)})
        return NOTHING

    sim = Simulator({"f": prof}, Scripted(script), record_timeline=True, record_power=True)
    res = sim.run([Request(0, 0.0, "f")])
    assert col(res, "finish_s") == pytest.approx([3.52 * MS], abs=1e-12)
    assert res.energy_j == pytest.approx(0.5e-3 + 0.2e-3 + 0.4e-3)
    kinds = [(s.kind, s.frequency_hz) for s in res.timeline or []]
    assert kinds == [("run", 1e9), ("switch", 5e8), ("run", 5e8)]
    t, w = res.power_timeline()
    assert float(w.max()) == pytest.approx(1.0)  # 1 mJ per 1 ms at 1 GHz
    # Energy from the power timeline equals the accounted energy.
    assert float(np.sum(w[:-1] * np.diff(t))) == pytest.approx(res.energy_j)


def test_energy_summed_exactly_against_the_profile() -> None:
    """Every request's energy is its plan's energy; a KILL adds the energy of the lost work."""
    from npusched.policies.temporal import HPF
    from simhelpers import make_profile

    profiles = {
        "a": make_profile("a", [1 * MS, 2 * MS], energy_j=[1.0, 3.0], tiles=[1, 4]),
        "b": make_profile("b", [0.5 * MS], energy_j=[0.25]),
    }
    reqs = [Request(0, 0.0, "a"), Request(1, 1.5 * MS, "b", priority=9)]
    res = Simulator(profiles, HPF(preemptive=True, mechanism="kill")).run(reqs)
    # Job 0 did 1.5 ms of work (layer 0 + a quarter of layer 1: 1 + 0.75 J) before the kill.
    assert col(res, "energy_j") == pytest.approx([4.0 + 1.75, 0.25])
    res2 = Simulator(profiles, HPF(preemptive=True, mechanism="checkpoint")).run(reqs)
    assert col(res2, "energy_j") == pytest.approx([4.0, 0.25])
    assert res2.energy_j == pytest.approx(4.25)


# --- positions across variants: exact against a brute-force executor -----------------------
def brute_finish(lat_by_variant: dict[int, list[float]], changes: list[tuple[float, int]]) -> float:
    """Walk the steps one by one: ``changes`` are ``(time, variant)`` (the first at 0)."""
    t = 0.0
    step, frac = 0, 0.0
    n = len(next(iter(lat_by_variant.values())))
    for k, (tc, v) in enumerate(changes):
        t = max(t, tc)
        t_next = changes[k + 1][0] if k + 1 < len(changes) else float("inf")
        while step < n:
            lat = lat_by_variant[v][step]
            left = (1.0 - frac) * lat
            if t + left <= t_next:
                t += left
                step, frac = step + 1, 0.0
            else:
                frac += (t_next - t) / lat
                t = t_next
                break
        if step >= n:
            return t
    return t


@settings(max_examples=60, deadline=None)
@given(
    lat=st.lists(st.floats(0.1, 3.0), min_size=1, max_size=6),
    scale=st.lists(st.floats(0.3, 3.0), min_size=1, max_size=6),
    times=st.lists(st.floats(0.01, 8.0), min_size=0, max_size=5, unique=True),
    picks=st.lists(st.integers(0, 2), min_size=6, max_size=6),
)
def test_variant_changes_keep_position_exact(
    lat: list[float], scale: list[float], times: list[float], picks: list[int]
) -> None:
    """A job moved between three variants (per-layer speeds differ) at random times, switching
    in place with no cost, finishes exactly where a step-by-step executor says."""
    n = len(lat)
    sc = (scale * n)[:n]
    lat_v = {
        1: [x * MS for x in lat],
        2: [x * s * MS for x, s in zip(lat, sc, strict=True)],
        3: [x / s * MS for x, s in zip(lat, sc, strict=True)],
    }
    net = make_network_stub("v", n)
    prof = Profile.from_tables(
        net,
        device_name="hand-built",
        batch_sizes=(1,),
        latency_s=np.array([lat_v[1], lat_v[2], lat_v[3]]),
        frequency_hz=1e9,
        memory_bandwidth_bps=1e9,
        axes=(("mode", (1, 2, 3)),),
    )
    ts = sorted(t * MS for t in times)
    changes = [(0.0, 1 + picks[0])] + [(t, 1 + p) for t, p in zip(ts, picks[1:], strict=False)]

    def script(v: MachineView) -> Schedule:
        if v.reason == "arrival":
            return Schedule(
                assign={v.ready[0]: Allocation.of(mode=changes[0][1])},
                timers=tuple(t for t, _ in changes[1:]),
            )
        if v.reason == "timer" and v.running:
            k = max(i for i, (t, _) in enumerate(changes) if t <= v.now + 1e-15)
            return Schedule(assign={v.running[0]: Allocation.of(mode=changes[k][1])})
        return NOTHING

    res = Simulator({"v": prof}, Scripted(script), switch_s=0.0).run([Request(0, 0.0, "v")])
    assert float(res.columns["finish_s"][0]) == pytest.approx(
        brute_finish(lat_v, changes), abs=1e-12
    )


def test_plan_position_round_trip() -> None:
    plan = ExecPlan.from_steps([1.0, 0.0, 2.0, 3.0])
    assert plan.position_at(0.5) == (0, 0.5)
    assert plan.position_at(1.0) == (2, 0.0)  # the zero-length step is never in progress
    assert plan.position_at(4.5) == (3, 0.5)
    assert plan.position_at(6.0) == (4, 0.0)
    for w in (0.0, 0.25, 1.0, 2.2, 5.9):
        assert plan.executed_at(*plan.position_at(w)) == pytest.approx(w)


# --- conformance of machine policies ---------------------------------------------------------
def greedy_split(v: MachineView) -> Schedule:
    """Re-split the array equally among every dispatched job at each wake (at most 4 jobs, FCFS
    admission; jobs still moving to their last allocation first), a policy that re-allocates
    constantly."""
    jobs = sorted(itertools.islice((*v.preempting, *v.running, *v.ready), 4), key=lambda j: j.id)
    if not jobs:
        return NOTHING
    cap = v.resources["array"].capacity
    share, extra = divmod(cap, len(jobs))
    return Schedule(
        assign={j: Allocation("array", share + (1 if i < extra else 0)) for i, j in enumerate(jobs)}
    )


@settings(max_examples=40, deadline=None)
@given(
    arrivals=st.lists(st.floats(0.0, 20.0), min_size=1, max_size=10),
    nets=st.lists(st.integers(0, 1), min_size=10, max_size=10),
    cost=st.booleans(),
)
def test_machine_policy_invariants(arrivals: list[float], nets: list[int], cost: bool) -> None:
    """No request lost or duplicated, units never oversubscribed, finish >= arrival + isolated
    on the fastest variant, deterministic."""
    profiles = {
        "p": variant_profile("p", [4 * MS, 8 * MS, 2 * MS], tiles=4, checkpoint_bytes=2000),
        "q": variant_profile("q", [6 * MS], tiles=3, checkpoint_bytes=500),
    }
    reqs = [Request(i, a * MS, "pq"[nets[i]]) for i, a in enumerate(arrivals)]
    sim = Simulator(
        profiles,
        Scripted(greedy_split),
        machine=fission_array(16),
        record_timeline=True,
        checkpoint_cost=cost,
    )
    res = sim.run(reqs)
    fin = res.columns["finish_s"]
    assert np.all(np.isfinite(fin))
    assert np.all(fin >= res.columns["arrival_s"] + res.columns["isolated_s"] - 1e-12)
    check_capacity(res, {"array": 16})
    res2 = sim.run(reqs)
    np.testing.assert_array_equal(fin, res2.columns["finish_s"])


def test_readme_example_equal_split_runs() -> None:
    """The README's machine-policy example (examples/equal_split.py) runs and finishes all."""
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "examples" / "equal_split.py"
    spec = importlib.util.spec_from_file_location("equal_split", path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    from npusched.hardware import compile_profile, get_device
    from npusched.models import get_network
    from npusched.workloads import poisson_workload

    prof = {"mobilenet-v1": compile_profile(get_network("mobilenet-v1"), get_device("planaria"))}
    reqs = poisson_workload(2000.0, models=["mobilenet-v1"], n_requests=30, random_state=1)
    res = Simulator(prof, mod.EqualSplit(), machine=fission_array(16), record_timeline=True).run(
        reqs
    )
    assert res.n_finished == 30
    check_capacity(res, {"array": 16})
    assert res.columns["preemptions"].sum() > 0  # it re-split the array under load


def test_skipped_ticks_do_not_stretch_the_run() -> None:
    """With period skipping a far-off tick can be left in the queue when the last job
    finishes; the run ends at the last event handled (regression: a P-PREMA run on one NPU
    reported end_s ~ 2.7e8 s and charged idle power over it)."""
    from npusched.policies.base import POLICIES
    from simhelpers import make_profile

    profiles = {"a": make_profile("a", [1 * MS, 2 * MS]), "b": make_profile("b", [0.3 * MS])}
    reqs = [Request(0, 0.0, "a"), Request(1, 0.1 * MS, "b", priority=9), Request(2, 0.2 * MS, "b")]
    machine = Machine.of(Resource("npu", idle_power_w=10.0))
    res = Simulator(profiles, POLICIES.create("P-PREMA"), machine=machine).run(reqs)
    assert res.end_s == pytest.approx(float(res.columns["finish_s"].max()))
    assert res.resources is not None
    assert res.resources["npu"]["energy_j"] < 10.0 * res.end_s + 1e-9
