"""Hand-built engine cases with exact expected times (seconds)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from npusched.errors import ConfigError, SimulationError, UnknownNameError
from npusched.policies.base import TemporalPolicyBase
from npusched.policies.contract import KEEP, Decision, Mechanism, SchedulerView
from npusched.policies.temporal import FCFS, HPF
from npusched.sim.engine import SimResult, Simulator
from npusched.sim.events import COMPLETE, PERIOD, TIME_TOL_S, EventQueue
from simhelpers import assert_same_result, make_profile, req

MS = 1e-3
US = 1e-6

# "a": 3 layers of 1, 2, 1 ms; the middle layer has 4 tiles of 0.5 ms. 1 GB/s, so 2,000 bytes
# take 2 us to save or restore. "b": a single 0.5 ms layer.
A = make_profile(
    "a", [1 * MS, 2 * MS, 1 * MS], tiles=[1, 4, 1], checkpoint_bytes=[1000, 2000, 3000]
)
B = make_profile("b", [0.5 * MS], checkpoint_bytes=[500])
PROFILES = {"a": A, "b": B}


def col(res: SimResult, name: str) -> list[float]:
    return [float(x) for x in res.columns[name]]


def run(policy: TemporalPolicyBase, reqs: list, **kw: object) -> SimResult:
    return Simulator(PROFILES, policy, record_timeline=True, **kw).run(reqs)  # type: ignore[arg-type]


# --- non-preemptive -------------------------------------------------------------------------
def test_np_fcfs_order_and_times() -> None:
    reqs = [req(0, 0.0, "a"), req(1, 1 * MS, "b", priority=9), req(2, 1 * MS, "b")]
    res = run(FCFS(), reqs)
    assert col(res, "finish_s") == pytest.approx([4 * MS, 4.5 * MS, 5 * MS], abs=1e-15)
    assert col(res, "first_start_s") == pytest.approx([0.0, 4 * MS, 4.5 * MS], abs=1e-15)
    assert col(res, "waiting_s") == pytest.approx([0.0, 3 * MS, 3.5 * MS], abs=1e-15)
    assert res.columns["preemptions"].tolist() == [0, 0, 0]
    assert res.makespan_s == pytest.approx(5 * MS)
    assert res.busy_s == pytest.approx(5 * MS)
    assert res.layer_executions == 5
    assert res.events == 6  # three arrivals, three completions
    assert res.policy == "NP-FCFS"


def test_simultaneous_arrivals_dispatch_by_id() -> None:
    # Same arrival time: dispatch order is by id, whatever the order of the input sequence.
    reqs = [req(2, 0.0, "b"), req(0, 0.0, "b"), req(1, 0.0, "b")]
    res = run(FCFS(), reqs)
    assert res.columns["id"].tolist() == [0, 1, 2]
    assert col(res, "finish_s") == pytest.approx([0.5 * MS, 1 * MS, 1.5 * MS])


def test_np_hpf_picks_highest_priority_waiting() -> None:
    reqs = [req(0, 0.0, "a"), req(1, 1 * MS, "b", 1), req(2, 2 * MS, "b", 9)]
    res = run(HPF(preemptive=False), reqs)
    assert col(res, "finish_s") == pytest.approx([4 * MS, 5 * MS, 4.5 * MS])


# --- preemption mechanisms ----------------------------------------------------------------------
def test_checkpoint_stops_at_tile_boundary_and_pays_save_and_restore() -> None:
    # At 1.2 ms job 0 is 0.2 ms into layer 1 (tiles of 0.5 ms): it stops at 1.5 ms, saves
    # 2,000 B (2 us), job 1 runs 1.502 -> 2.002 ms, job 0 restores 2 us and runs 2.5 ms more.
    reqs = [req(0, 0.0, "a", 1), req(1, 1.2 * MS, "b", 9)]
    res = run(HPF(preemptive=True, mechanism="checkpoint"), reqs)
    assert col(res, "finish_s") == pytest.approx([4.504 * MS, 2.002 * MS], abs=1e-15)
    assert res.columns["preemptions"].tolist() == [1, 0]
    assert res.columns["checkpoint_bytes"].tolist() == [2000, 0]
    assert col(res, "checkpoint_s") == pytest.approx([4 * US, 0.0])
    assert col(res, "wasted_s") == [0.0, 0.0]
    assert col(res, "waiting_s") == pytest.approx([0.5 * MS, 0.302 * MS])
    assert res.busy_s == pytest.approx(4.504 * MS)
    assert res.layer_executions == 5  # layer 1 of job 0 ran in two pieces
    kinds = [(j, k) for j, _, _, k, *_ in res.timeline or []]
    assert kinds == [(0, "run"), (0, "save"), (1, "run"), (0, "restore"), (0, "run")]
    assert [s for _, s, _, _, *_ in res.timeline or []] == pytest.approx(
        [0.0, 1.5 * MS, 1.502 * MS, 2.002 * MS, 2.004 * MS]
    )


def test_checkpoint_at_layer_boundary() -> None:
    reqs = [req(0, 0.0, "a", 1), req(1, 1.2 * MS, "b", 9)]
    res = run(HPF(preemptive=True), reqs, preemption_point="layer")
    # Runs on to the end of layer 1 (3 ms); saves layer 1's 2,000 B.
    assert col(res, "finish_s") == pytest.approx([4.504 * MS, 3.502 * MS])
    assert res.columns["checkpoint_bytes"].tolist() == [2000, 0]
    assert res.layer_executions == 4


def test_checkpoint_without_cost() -> None:
    reqs = [req(0, 0.0, "a", 1), req(1, 1.2 * MS, "b", 9)]
    res = run(HPF(preemptive=True), reqs, checkpoint_cost=False)
    assert col(res, "finish_s") == pytest.approx([4.5 * MS, 2.0 * MS])
    assert res.columns["checkpoint_bytes"].tolist() == [2000, 0]  # still recorded
    assert col(res, "checkpoint_s") == [0.0, 0.0]


def test_checkpoint_at_last_boundary_just_completes() -> None:
    # At 3.5 ms job 0 is in its last (single-tile) layer: the next preemption point is its end.
    reqs = [req(0, 0.0, "a", 1), req(1, 3.5 * MS, "b", 9)]
    res = run(HPF(preemptive=True), reqs)
    assert col(res, "finish_s") == pytest.approx([4 * MS, 4.5 * MS])
    assert res.columns["preemptions"].tolist() == [0, 0]


def test_kill_restarts_from_zero_and_records_waste() -> None:
    reqs = [req(0, 0.0, "a", 1), req(1, 1.2 * MS, "b", 9)]
    res = run(HPF(preemptive=True, mechanism="kill"), reqs)
    assert col(res, "finish_s") == pytest.approx([5.7 * MS, 1.7 * MS])
    assert col(res, "wasted_s") == pytest.approx([1.2 * MS, 0.0])
    assert res.columns["preemptions"].tolist() == [1, 0]
    assert res.columns["checkpoint_bytes"].tolist() == [0, 0]
    assert res.busy_s == pytest.approx(5.7 * MS)
    assert res.layer_executions == 2 + 1 + 3  # layers 0-1 wasted, b, then a again
    # waiting_s counts the re-execution of lost work (latency - isolated - checkpoint).
    assert col(res, "waiting_s") == pytest.approx([1.7 * MS, 0.0])


def test_drain_waits_for_completion() -> None:
    reqs = [req(0, 0.0, "a", 1), req(1, 1.2 * MS, "b", 9)]
    res = run(HPF(preemptive=True, mechanism="drain"), reqs)
    assert col(res, "finish_s") == pytest.approx([4 * MS, 4.5 * MS])
    assert res.columns["preemptions"].tolist() == [0, 0]


def test_higher_arrival_during_inflight_preemption_wins() -> None:
    # Job 1 (prio 3) triggers a checkpoint at 1.2 ms; job 2 (prio 9) arrives at 1.3 ms, before
    # job 0 reaches its tile boundary; when the save is done the policy picks job 2.
    reqs = [req(0, 0.0, "a", 1), req(1, 1.2 * MS, "b", 3), req(2, 1.3 * MS, "b", 9)]
    res = run(HPF(preemptive=True), reqs)
    assert col(res, "first_start_s") == pytest.approx([0.0, 2.002 * MS, 1.502 * MS])
    assert col(res, "finish_s") == pytest.approx([5.004 * MS, 2.502 * MS, 2.002 * MS])
    assert res.columns["preemptions"].tolist() == [1, 0, 0]


def test_kill_during_restore_charges_partial_restore() -> None:
    # Slow memory (1 MB/s): job 0 saves 2,000 B in 2 ms. It is killed 1 ms into its restore.
    a = make_profile(
        "a", [1 * MS, 2 * MS, 1 * MS], tiles=[1, 4, 1], checkpoint_bytes=2000, bandwidth_bps=1e6
    )
    b = make_profile("b", [0.5 * MS])
    profiles = {"a": a, "b": b}

    class Script(TemporalPolicyBase):
        """P-HPF with CHECKPOINT for priority 3 and KILL for priority 9 candidates."""

        preemptive = True

        def select(self, view: SchedulerView) -> Decision:
            if not view.ready:
                return KEEP
            best = max(view.ready, key=lambda j: j.priority)
            if view.running is None:
                return Decision(best)
            if best.priority > view.running.priority:
                mech = Mechanism.KILL if best.priority == 9 else Mechanism.CHECKPOINT
                return Decision(best, mech)
            return KEEP

    # 0 runs; 1 (prio 3) arrives at 1.2 ms -> stop at 1.5, save to 3.5, 1 runs 3.5-4.0,
    # 0 restores from 4.0 (2 ms); 2 (prio 9) arrives at 5.0 -> KILL 0 mid-restore.
    reqs = [req(0, 0.0, "a", 1), req(1, 1.2 * MS, "b", 3), req(2, 5 * MS, "b", 9)]
    res = Simulator(profiles, Script(), record_timeline=True).run(reqs)
    assert col(res, "finish_s") == pytest.approx([9.5 * MS, 4.0 * MS, 5.5 * MS])
    assert col(res, "wasted_s") == pytest.approx([1.5 * MS, 0.0, 0.0])
    assert col(res, "checkpoint_s") == pytest.approx([3 * MS, 0.0, 0.0])  # 2 save + 1 restore
    assert res.columns["preemptions"].tolist() == [2, 0, 0]
    assert res.busy_s == pytest.approx(4 * MS + 1.5 * MS + 3 * MS + 1 * MS)


def test_checkpoint_during_restore_stops_at_once_without_saving_again() -> None:
    a = make_profile(
        "a", [1 * MS, 2 * MS, 1 * MS], tiles=[1, 4, 1], checkpoint_bytes=2000, bandwidth_bps=1e6
    )
    profiles = {"a": a, "b": make_profile("b", [0.5 * MS])}
    # 0 stops at 1.5, saves to 3.5; 1 runs to 4.0; 0 restores 4.0-6.0 but 2 arrives at 5.0:
    # 0 stops at once (no new save), 2 runs 5.0-5.5, 0 restores again 5.5-7.5 and runs 2.5 ms.
    reqs = [req(0, 0.0, "a", 1), req(1, 1.2 * MS, "b", 3), req(2, 5 * MS, "b", 9)]
    res = Simulator(profiles, HPF(preemptive=True)).run(reqs)
    assert col(res, "finish_s") == pytest.approx([10 * MS, 4.0 * MS, 5.5 * MS])
    assert res.columns["checkpoint_bytes"].tolist() == [2000, 0, 0]
    assert col(res, "checkpoint_s") == pytest.approx([5 * MS, 0.0, 0.0])
    assert res.columns["preemptions"].tolist() == [2, 0, 0]


# --- periods, estimator, until, progress ------------------------------------------------------
class Ticker(FCFS):
    """NP-FCFS with a scheduling period; records when ``on_period`` fires."""

    period_s = 1 * MS

    def reset(self) -> None:
        super().reset()
        self.ticks_: list[float] = []

    def on_period(self, view: SchedulerView) -> None:
        self.ticks_.append(view.now)


def test_period_ticks_only_while_jobs_wait() -> None:
    pol = Ticker()
    reqs = [req(0, 0.0, "a"), req(1, 0.5 * MS, "b"), req(2, 10 * MS, "b")]
    res = Simulator(PROFILES, pol).run(reqs)
    # Job 1 waits from 0.5 ms to 4 ms: ticks at 1, 2, 3 ms (and 4 ms coincides with the
    # completion, where job 1 is still waiting until the decision). Job 2 never waits.
    assert pol.ticks_ == pytest.approx([1 * MS, 2 * MS, 3 * MS, 4 * MS])
    assert col(res, "finish_s") == pytest.approx([4 * MS, 4.5 * MS, 10.5 * MS])


def test_estimator_and_views_are_current() -> None:
    seen: list[tuple[str, float, float, float]] = []

    class Spy(HPF):
        def select(self, view: SchedulerView) -> Decision:
            if view.running is not None:
                seen.append(("run", view.now, view.running.executed_s, view.running.waited_s))
            for j in view.ready:
                seen.append(("ready", view.now, j.executed_s, j.waited_s))
            return super().select(view)

    reqs = [req(0, 0.0, "a", 1), req(1, 1.2 * MS, "b", 1), req(2, 1.4 * MS, "b", 1)]
    res = Simulator(PROFILES, Spy(preemptive=False), estimator=lambda r, p: 7.0).run(reqs)
    assert col(res, "estimated_s") == [7.0, 7.0, 7.0]
    ap = pytest.approx
    assert ("run", ap(1.4 * MS), ap(1.4 * MS), 0.0) in seen
    assert ("ready", ap(1.4 * MS), 0.0, ap(0.2 * MS)) in seen
    assert ("ready", ap(4 * MS), 0.0, ap(2.6 * MS)) in seen


def test_until_leaves_partial_records() -> None:
    reqs = [req(0, 0.0, "a"), req(1, 1 * MS, "b"), req(2, 50 * MS, "b")]
    res = Simulator(PROFILES, FCFS()).run(reqs, until=4.2 * MS)
    assert res.columns["finish_s"][0] == pytest.approx(4 * MS)
    assert math.isnan(res.columns["finish_s"][1]) and math.isnan(res.columns["finish_s"][2])
    assert res.columns["first_start_s"][1] == pytest.approx(4 * MS)
    assert res.n_finished == 1
    assert res.end_s == pytest.approx(4 * MS)


def test_progress_reports_final_count() -> None:
    calls: list[int] = []
    reqs = [req(i, i * MS, "b") for i in range(250)]
    Simulator(PROFILES, FCFS()).run(reqs, progress=calls.append)
    assert calls[-1] == 250
    assert calls == sorted(calls) and len(calls) <= 101
    # Regression: the final count was reported twice (in the loop and again at the end).
    assert len(calls) == len(set(calls))
    # Stopped by ``until`` between two reports: the count at the stop is reported once.
    calls.clear()
    Simulator(PROFILES, FCFS()).run(reqs, until=100.2 * MS, progress=calls.append)
    assert calls[-2:] == [99, 100] and len(calls) == len(set(calls))


def test_columns_and_frame() -> None:
    reqs = [req(1, 0.0, "b", slo_s=1.0), req(0, 0.0, "a", batch=1)]
    res = run(FCFS(), reqs)
    cols = res.columns
    assert list(cols) == [
        "id",
        "arrival_s",
        "first_start_s",
        "finish_s",
        "isolated_s",
        "estimated_s",
        "latency_s",
        "waiting_s",
        "preemptions",
        "checkpoint_bytes",
        "checkpoint_s",
        "wasted_s",
        "energy_j",
        "priority",
        "batch",
        "slo_s",
        "network",
        "seq_in",
        "seq_out",
        "resource",
    ]
    assert cols["resource"].tolist() == ["npu", "npu"]
    assert cols["id"].tolist() == [0, 1]
    assert cols["network"].tolist() == ["a", "b"]
    assert np.isnan(cols["slo_s"][0]) and cols["slo_s"][1] == 1.0
    assert cols["seq_in"].tolist() == [-1, -1]
    assert cols["isolated_s"].tolist() == pytest.approx([4 * MS, 0.5 * MS])
    df = res.to_frame()
    assert len(df) == 2 and list(df.columns) == list(cols)


def test_simulator_is_reusable_and_deterministic() -> None:
    reqs = [req(i, i * 0.9 * MS, "ab"[i % 2], priority=[1, 3, 9][i % 3]) for i in range(40)]
    sim = Simulator(PROFILES, HPF(preemptive=True), record_timeline=True)
    r1, r2 = sim.run(reqs), sim.run(reqs)
    assert_same_result(r1, r2)
    assert r1.columns["preemptions"].sum() > 0


# --- errors -----------------------------------------------------------------------------------
def test_invalid_decisions_raise() -> None:
    class Bad(TemporalPolicyBase):
        name = "bad"

        def select(self, view: SchedulerView) -> Decision:
            return Decision(view.running) if view.running else Decision(object())  # type: ignore[arg-type]

    with pytest.raises(SimulationError, match="ready queue"):
        Simulator(PROFILES, Bad()).run([req(0, 0.0, "b")])


def test_idle_policy_raises() -> None:
    class Idle(TemporalPolicyBase):
        name = "idle"

        def select(self, view: SchedulerView) -> Decision:
            return KEEP

    with pytest.raises(SimulationError, match="unfinished"):
        Simulator(PROFILES, Idle()).run([req(0, 0.0, "b")])

    class IdleTicking(Idle):
        period_s = 1.0

    with pytest.raises(SimulationError, match="idle"):
        Simulator(PROFILES, IdleTicking()).run([req(0, 0.0, "b")])


def test_bad_inputs_raise_typed_errors() -> None:
    with pytest.raises(UnknownNameError, match="zz"):
        Simulator(PROFILES, FCFS()).run([req(0, 0.0, "zz")])
    with pytest.raises(SimulationError, match="unique"):
        Simulator(PROFILES, FCFS()).run([req(0, 0.0, "b"), req(0, 1.0, "b")])
    with pytest.raises(SimulationError, match="arrival_s"):
        Simulator(PROFILES, FCFS()).run([req(0, -1.0, "b")])
    with pytest.raises(ConfigError, match="preemption_point"):
        Simulator(PROFILES, FCFS(), preemption_point="gemm")
    with pytest.raises(ConfigError, match="mechanism"):
        Simulator(PROFILES, HPF(mechanism="pause")).run([req(0, 0.0, "b")])


def test_empty_workload() -> None:
    res = Simulator(PROFILES, FCFS()).run([])
    assert len(res) == 0 and res.makespan_s == 0.0 and res.events == 0


# --- event queue --------------------------------------------------------------------------------
def test_event_queue_order_and_clock() -> None:
    q = EventQueue()
    q.push(2.0, PERIOD)
    q.push(1.0, PERIOD, "x")
    q.push(1.0, COMPLETE, "y")
    q.push(1.0, PERIOD, "z")
    assert q.peek() == 1.0 and len(q) == 4
    assert [q.pop()[3] for _ in range(3)] == ["y", "x", "z"]  # kind first, then insertion
    assert q.now == 1.0
    q.push(1.0 - TIME_TOL_S / 2, PERIOD, "w")  # within tolerance: clamped to now
    assert q.pop()[0] == 1.0
    with pytest.raises(SimulationError, match="before the clock"):
        q.push(0.5, PERIOD)
    assert q.pop()[0] == 2.0
    with pytest.raises(SimulationError):
        q.pop()
    assert q.peek() == math.inf


class Recorder(HPF):
    """P-HPF that records every hook call as ``(hook, now, detail)``."""

    def reset(self) -> None:
        super().reset()
        self.log_: list[tuple[str, float, object]] = []

    def on_dispatch(self, job: object, now: float) -> None:
        self.log_.append(("dispatch", now, job.id))  # type: ignore[attr-defined]

    def on_complete(self, job: object, now: float) -> None:
        self.log_.append(("complete", now, job.id))  # type: ignore[attr-defined]

    def select(self, view: SchedulerView) -> Decision:
        self.log_.append(("select", view.now, (view.reason, [j.id for j in view.ready])))
        return super().select(view)


def test_simultaneous_events_make_one_decision() -> None:
    # Job 0 ends at exactly 4 ms, when job 2 arrives: one wake, hooks in the order
    # completion then dispatch, then one select that sees both waiting jobs.
    end = float(A.isolated_latency())
    pol = Recorder(preemptive=True)
    Simulator(PROFILES, pol).run([req(0, 0.0, "a"), req(1, 1 * MS, "b"), req(2, end, "b", 9)])
    at_end = [(h, d) for h, t, d in pol.log_ if t == end]
    assert at_end == [("complete", 0), ("dispatch", 2), ("select", ("completion", [1, 2]))]
    assert [h for h, _, _ in pol.log_].count("select") == 5  # 3 arrivals, 3 completions, 1 shared


def test_preempted_wake_reason() -> None:
    pol = Recorder(preemptive=True)
    Simulator(PROFILES, pol).run([req(0, 0.0, "a", 1), req(1, 1.2 * MS, "b", 9)])
    selects = [(t, d) for h, t, d in pol.log_ if h == "select"]
    assert selects[1] == (pytest.approx(1.2 * MS), ("arrival", [1]))
    # The save finishes at 1.502 ms: the policy decides with reason "preempted".
    assert selects[2] == (pytest.approx(1.502 * MS), ("preempted", [0, 1]))


@pytest.mark.parametrize("point", ["tile", "layer"])
def test_checkpoint_at_a_step_end_reached_up_to_rounding(point: str) -> None:
    """Regression: 10 x 1e-6 s is 9.999999999999999e-06, so a request arriving at 1e-05 s finds
    the job 1.7e-21 s past its first layer's end. It must stop there and save the finished
    layer's 1,000 B, not the next layer's 5,000 B (tile) or run the whole next layer (layer)."""
    c = make_profile("c", [10 * US, 1 * US], checkpoint_bytes=[1000, 5000])
    assert c.plan().cum_s[1] < 1e-05
    reqs = [req(0, 0.0, "c", 1), req(1, 1e-05, "b", 9)]
    res = Simulator({"c": c, "b": B}, HPF(preemptive=True), preemption_point=point).run(reqs)
    assert res.columns["preemptions"].tolist() == [1, 0]
    assert res.columns["checkpoint_bytes"].tolist() == [1000, 0]
    # save 1 us, b runs 0.5 ms, restore 1 us, the last 1 us layer
    assert col(res, "finish_s") == pytest.approx([10 * US + 0.5 * MS + 3 * US, 11 * US + 0.5 * MS])


def test_checkpoint_in_the_last_tile_just_completes_despite_rounding() -> None:
    """Regression: 3 x (0.386 ms / 3) is 0.38599999999999995 ms, a few ulps short of the end.
    A CHECKPOINT requested in the last tile must let the job finish (the next preemption point
    is its end), not stop it 1e-19 s early and pay a save and a restore."""
    c = make_profile("c", [0.386 * MS], tiles=3, checkpoint_bytes=1000)
    assert c.isolated_latency() > 3 * (0.386 * MS / 3)
    reqs = [req(0, 0.0, "c", 1), req(1, 0.258 * MS, "b", 9)]
    res = Simulator({"c": c, "b": B}, HPF(preemptive=True)).run(reqs)
    assert res.columns["preemptions"].tolist() == [0, 0]
    assert res.columns["checkpoint_bytes"].tolist() == [0, 0]
    assert col(res, "finish_s") == pytest.approx([0.386 * MS, 0.886 * MS], abs=1e-15)


def test_bad_simulator_arguments_raise_typed_errors() -> None:
    """A policy name instead of an object, or a negative ``until``, is a ConfigError."""
    from npusched.errors import ConfigError
    from npusched.policies import POLICIES
    from npusched.sim.engine import Simulator

    with pytest.raises(ConfigError, match="TemporalPolicy"):
        Simulator({}, "P-HPF")  # type: ignore[arg-type]
    sim = Simulator({}, POLICIES.create("NP-FCFS"))
    with pytest.raises(ConfigError, match="until"):
        sim.run([], until=-1.0)
