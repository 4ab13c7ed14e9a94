"""PREMA Algorithms 2 and 3 and the RRB / TOKEN / SJF baselines on hand-built scheduler views."""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas.testing as pd_testing
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import npusched.policies.temporal  # noqa: F401  (registers the policies)
from npusched.base import clone
from npusched.errors import ConfigError
from npusched.policies.base import POLICIES, TemporalPolicy
from npusched.policies.contract import KEEP, JobState, Mechanism, SchedulerView
from npusched.policies.temporal.mechanism import (
    decide,
    degradations,
    dynamic_mechanism,
    remaining_s,
    select_mechanism,
)
from npusched.policies.temporal.prema import PERIOD_S, NPPrema, PPrema, round_down_to_level
from npusched.policies.temporal.rrb import NPRRB, PRRB
from npusched.policies.temporal.sjf import NPSJF, PSJF
from npusched.policies.temporal.token import NPToken, PToken
from simhelpers import workload_strategy

MS = 1e-3


@dataclass
class FakeJob:
    """A mutable stand-in for the engine's job (the policies only read it)."""

    id: int
    network: str = "alexnet"
    priority: int = 1
    arrival_s: float = 0.0
    estimated_s: float = 1 * MS
    isolated_s: float = 1 * MS
    executed_s: float = 0.0
    waited_s: float = 0.0
    state: JobState = JobState.WAITING
    preemptions: int = 0
    request: Any = None
    plan: Any = field(default=None)


def view(
    ready: list[FakeJob], running: FakeJob | None = None, now: float = 0.0, reason: str = "period"
) -> SchedulerView:
    return SchedulerView(now=now, ready=ready, running=running, reason=reason, profiles={})


def started(policy: Any, *jobs: FakeJob) -> Any:
    policy.reset()
    for j in jobs:
        policy.on_dispatch(j, j.arrival_s)
    return policy


# --- registry and parameters ---------------------------------------------------------------
NAMES = ["NP-RRB", "P-RRB", "NP-TOKEN", "P-TOKEN", "NP-SJF", "P-SJF", "NP-PREMA", "P-PREMA"]


@pytest.mark.parametrize("name", NAMES)
def test_registered_and_conform(name: str) -> None:
    pol = POLICIES.create(name)
    assert isinstance(pol, TemporalPolicy)
    assert pol.name == name
    assert pol.preemptive == name.startswith("P-")
    twin = clone(pol)
    assert twin.get_params() == pol.get_params()
    if pol.preemptive:
        assert pol.get_params()["mechanism"] == "checkpoint"


def test_prema_table_ii_defaults() -> None:
    pol = PPrema()
    assert pol.period_s == pytest.approx(0.25e-3)
    assert pol.token_levels == (1, 3, 9)
    assert NPPrema().period_s == pytest.approx(0.25e-3)


def test_bad_mechanism_raises() -> None:
    """A bad parameter is refused before the first decision (reset validates), one line."""
    pol = PPrema(mechanism="flush")
    with pytest.raises(
        ConfigError, match=r"^P-PREMA: mechanism='flush'; allowed: checkpoint, kill, dynamic"
    ):
        pol.reset()
    with pytest.raises(ConfigError, match="mechanism='flush'"):
        pol.validate()


# --- Algorithm 2: tokens, threshold, candidates -------------------------------------------
def test_tokens_start_at_priority_and_grow_with_normalised_waiting() -> None:
    low = FakeJob(0, priority=1, estimated_s=1 * MS)
    high = FakeJob(1, priority=9, estimated_s=10 * MS)
    pol = started(NPPrema(tokens="linear"), low, high)
    cum = started(NPPrema(), low, high)
    assert cum.tokens == "cumulative"  # the default reading
    assert pol.tokens_of(low) == 1 and pol.tokens_of(high) == 9
    for k in range(1, 5):  # four periods of 0.25 ms waiting each
        low.waited_s = high.waited_s = k * 0.25 * MS
        pol.on_period(view([low, high], now=k * 0.25 * MS))
        cum.on_period(view([low, high], now=k * 0.25 * MS))
    # linear: tokens = priority * (1 + waited / estimated)
    assert pol.tokens_of(low) == pytest.approx(1 * (1 + 1.0 / 1.0))
    assert pol.tokens_of(high) == pytest.approx(9 * (1 + 1.0 / 10.0))
    # cumulative: each period re-adds the slowdown so far: 0.25 + 0.5 + 0.75 + 1 = 2.5 estimates
    assert cum.tokens_of(low) == pytest.approx(1 * (1 + 2.5 / 1.0))
    assert cum.tokens_of(high) == pytest.approx(9 * (1 + 2.5 / 10.0))


def test_cumulative_tokens_are_quadratic_in_waiting() -> None:
    """After k periods of continuous waiting (period P), the cumulative gain is
    sum_i i*P/est = k(k+1)/2 * P/est, the linear gain k*P/est."""
    est = 2 * MS
    for k in (1, 3, 10):
        job = FakeJob(0, priority=3, estimated_s=est)
        lin, cum = started(NPPrema(tokens="linear"), job), started(NPPrema(), job)
        for i in range(1, k + 1):
            job.waited_s = i * PERIOD_S
            lin.on_period(view([job]))
            cum.on_period(view([job]))
        assert lin.tokens_of(job) == pytest.approx(3 * (1 + k * PERIOD_S / est))
        assert cum.tokens_of(job) == pytest.approx(3 * (1 + k * (k + 1) / 2 * PERIOD_S / est))


def test_cumulative_gain_closed_form_equals_per_period_sum() -> None:
    from npusched.policies.temporal.prema import cumulative_gain

    est, w0 = 3 * MS, 0.1 * MS
    job = FakeJob(0, priority=1, estimated_s=est)
    pol = started(NPPrema(), job)
    for i in range(1, 8):
        job.waited_s = w0 + i * PERIOD_S
        pol.on_period(view([job]))
    assert pol.tokens_of(job) == pytest.approx(1 + cumulative_gain(w0, 7, PERIOD_S, est))
    assert cumulative_gain(w0, 0, PERIOD_S, est) == 0.0


def test_bad_token_rule_raises() -> None:
    with pytest.raises(ConfigError, match="tokens='square'; allowed: cumulative, linear"):
        PPrema(tokens="square").reset()


def test_running_job_gains_no_tokens_but_keeps_earlier_waiting() -> None:
    a = FakeJob(0, priority=3, estimated_s=2 * MS)
    pol = started(NPPrema(tokens="linear"), a)
    a.waited_s = 0.5 * MS  # waited, then started between two periods
    a.state = JobState.RUNNING
    pol.on_period(view([], running=a))
    assert pol.tokens_of(a) == pytest.approx(3 * (1 + 0.25))
    pol.on_period(view([], running=a))  # still running: no new waiting, no new tokens
    assert pol.tokens_of(a) == pytest.approx(3.75)
    # cumulative: line 7 re-adds its slowdown so far (0.25) every period while it is queued
    cum = started(NPPrema(), a)
    cum.on_period(view([], running=a))
    cum.on_period(view([], running=a))
    assert cum.tokens_of(a) == pytest.approx(3 * (1 + 0.5))
    out = started(NPPrema(include_running=False), a)  # not in the ReadyQueue: no gain
    out.on_period(view([], running=a))
    assert out.tokens_of(a) == 3


def test_threshold_rounds_down_8_to_3() -> None:
    assert round_down_to_level(8.0, (1, 3, 9)) == 3
    assert round_down_to_level(9.0, (1, 3, 9)) == 9
    assert round_down_to_level(2.99, (1, 3, 9)) == 1
    assert round_down_to_level(40.0, (1, 3, 9)) == 9
    assert round_down_to_level(0.5, (1, 3, 9)) == 0.5
    # a low-priority job that waited 7x its estimate holds 8 tokens -> threshold 3
    jobs = [
        FakeJob(0, priority=1, estimated_s=1 * MS, waited_s=7 * MS),
        FakeJob(1, priority=3, estimated_s=50 * MS),
        FakeJob(2, priority=1, estimated_s=0.5 * MS),
    ]
    pol = started(NPPrema(), *(replace(j, waited_s=0.0) for j in jobs))
    pol.on_period(view(jobs))
    assert pol.tokens_of(jobs[0]) == pytest.approx(8.0)
    assert pol.threshold_of(jobs) == 3
    assert [j.id for j in pol.candidates(jobs)] == [0, 1]  # the 1-token job is out
    # the shortest estimated candidate wins (job 2 is shorter but not a candidate)
    assert pol.select(view(jobs)).run.id == 0


def test_candidate_choice_is_shortest_estimated_remaining() -> None:
    big = FakeJob(0, priority=9, estimated_s=20 * MS, executed_s=19 * MS)  # 1 ms left
    small = FakeJob(1, priority=9, estimated_s=4 * MS)
    low = FakeJob(2, priority=1, estimated_s=0.1 * MS)
    pol = started(NPPrema(), big, small, low)
    d = pol.select(view([big, small, low]))
    assert d.run is big  # remaining 1 ms < 4 ms; the 1-token job is below threshold 9


def test_strict_threshold_edge_all_tokens_equal() -> None:
    jobs = [FakeJob(i, priority=1, estimated_s=(3 - i) * MS) for i in range(3)]
    strict = started(NPPrema(threshold=">"), *jobs)
    # as printed, "> 1" leaves nobody; we fall back to ">=" instead of idling
    assert [j.id for j in strict.candidates(jobs)] == [0, 1, 2]
    assert strict.select(view(jobs)).run.id == 2
    relaxed = started(NPPrema(), *jobs)
    assert relaxed.select(view(jobs)).run.id == 2
    # a fresh high-priority job alone (9 tokens, threshold 9) is schedulable
    hi = FakeJob(7, priority=9)
    assert started(NPPrema(threshold=">"), hi).select(view([hi])).run is hi


def test_strict_threshold_prefers_jobs_strictly_above() -> None:
    a = FakeJob(0, priority=3, estimated_s=1 * MS)
    b = FakeJob(1, priority=3, estimated_s=9 * MS)
    pol = started(NPPrema(threshold=">"), a, b)
    b.waited_s = 1 * MS
    pol.on_period(view([a, b]))  # b: 3 * (1 + 1/9) > 3 = threshold
    assert [j.id for j in pol.candidates([a, b])] == [1]
    assert pol.select(view([a, b])).run is b
    relaxed = started(NPPrema(), a, replace(b, waited_s=0.0))
    relaxed.on_period(view([a, b]))
    assert [j.id for j in relaxed.candidates([a, b])] == [0, 1]  # 3 >= 3: both
    assert relaxed.select(view([a, b])).run is a


def test_running_high_priority_job_is_not_preempted_by_short_low_one() -> None:
    run = FakeJob(0, priority=9, estimated_s=10 * MS, executed_s=1 * MS, state=JobState.RUNNING)
    low = FakeJob(1, priority=1, estimated_s=0.5 * MS)
    pol = started(PPrema(), run, low)
    assert pol.select(view([low], running=run)) == KEEP
    # after waiting 8x its estimate the low job holds 9 tokens and, being shorter, preempts
    low.waited_s = 4 * MS
    pol.on_period(view([low], running=run))
    assert pol.tokens_of(low) == pytest.approx(9.0)
    d = pol.select(view([low], running=run))
    assert d.run is low and d.mechanism == Mechanism.CHECKPOINT
    # leaving the running job out of the ready queue lets the threshold drop
    out = started(PPrema(include_running=False), run, replace(low, waited_s=0))
    assert out.select(view([low], running=run)).run is low


def test_np_prema_never_preempts() -> None:
    run = FakeJob(0, priority=1, estimated_s=10 * MS, state=JobState.RUNNING)
    hi = FakeJob(1, priority=9, estimated_s=1 * MS)
    pol = started(NPPrema(), run, hi)
    assert pol.select(view([hi], running=run)) == KEEP
    assert pol.select(view([hi])).run is hi


def test_completion_forgets_tokens_and_reset_clears() -> None:
    a = FakeJob(0, priority=3)
    pol = started(NPPrema(), a)
    a.waited_s = 1 * MS
    pol.on_period(view([a]))
    pol.on_complete(a, 1.0)
    assert pol.tokens_of(a) == 3  # unknown again: back to its priority
    pol.on_dispatch(a, 0.0)
    pol.reset()
    assert pol.gain_ == {}


# --- Algorithm 3 ----------------------------------------------------------------------------
def test_algorithm3_drains_near_the_end_of_the_running_job() -> None:
    cur = FakeJob(0, estimated_s=10 * MS, executed_s=9.9 * MS, state=JobState.RUNNING)
    cand = FakeJob(1, estimated_s=5 * MS)
    d_cur, d_cand = degradations(cur, cand)
    assert d_cur == pytest.approx(5 / 10) and d_cand == pytest.approx(0.1 / 5)
    assert dynamic_mechanism(cur, cand) == Mechanism.DRAIN
    cur.executed_s = 1 * MS  # early: preempting costs the running job less
    assert dynamic_mechanism(cur, cand) == Mechanism.CHECKPOINT
    assert dynamic_mechanism(cur, cand, Mechanism.KILL) == Mechanism.KILL
    cur.executed_s = 9.9 * MS
    assert select_mechanism("dynamic-kill", cur, cand) == Mechanism.DRAIN
    assert select_mechanism("checkpoint", cur, cand) == Mechanism.CHECKPOINT
    assert select_mechanism("kill", cur, cand) == Mechanism.KILL


def test_algorithm3_equal_degradation_checkpoints_and_overrun_drains() -> None:
    cur = FakeJob(0, estimated_s=4 * MS, executed_s=2 * MS)
    cand = FakeJob(1, estimated_s=4 * MS, executed_s=2 * MS)
    assert dynamic_mechanism(cur, cand) == Mechanism.CHECKPOINT  # ">" is strict
    over = FakeJob(2, estimated_s=1 * MS, executed_s=3 * MS)  # ran past its estimate
    assert remaining_s(over) == 0.0
    assert dynamic_mechanism(over, cand) == Mechanism.DRAIN


def test_p_prema_dynamic_returns_drain_near_the_end() -> None:
    run = FakeJob(0, priority=1, estimated_s=10 * MS, executed_s=9.95 * MS)
    short = FakeJob(1, priority=1, estimated_s=2 * MS)
    pol = started(PPrema(mechanism="dynamic", include_running=False), run, short)
    d = pol.select(view([short], running=run))
    assert d.run is short and d.mechanism == Mechanism.DRAIN
    run.executed_s = 1 * MS
    assert pol.select(view([short], running=run)).mechanism == Mechanism.CHECKPOINT


@settings(max_examples=200, deadline=None)
@given(
    est=st.lists(st.floats(0.1, 50), min_size=2, max_size=2),
    frac=st.lists(st.floats(0, 1), min_size=2, max_size=2),
)
def test_algorithm3_matches_printed_formula(est: list[float], frac: list[float]) -> None:
    cur = FakeJob(0, estimated_s=est[0] * MS, executed_s=est[0] * frac[0] * MS)
    cand = FakeJob(1, estimated_s=est[1] * MS, executed_s=est[1] * frac[1] * MS)
    rc = cur.estimated_s - cur.executed_s
    rk = cand.estimated_s - cand.executed_s
    want = Mechanism.DRAIN if rk / cur.estimated_s > rc / cand.estimated_s else Mechanism.CHECKPOINT
    assert dynamic_mechanism(cur, cand) == want


def test_decide_keeps_idle_runs_and_respects_non_preemptive() -> None:
    a, b = FakeJob(0), FakeJob(1)
    assert decide(view([a]), None, preemptive=True, mode="checkpoint") == KEEP
    assert decide(view([a]), a, preemptive=False, mode="checkpoint").run is a
    assert decide(view([b], running=a), a, preemptive=True, mode="kill") == KEEP
    assert decide(view([b], running=a), b, preemptive=False, mode="kill") == KEEP
    assert decide(view([b], running=a), b, preemptive=True, mode="kill").mechanism == "kill"


# --- SJF and TOKEN -----------------------------------------------------------------------
def test_sjf_uses_estimated_remaining_and_preempts() -> None:
    run = FakeJob(0, estimated_s=10 * MS, executed_s=2 * MS)  # 8 ms left
    mid = FakeJob(1, estimated_s=9 * MS, priority=9)
    short = FakeJob(2, estimated_s=3 * MS, isolated_s=30 * MS)  # estimate, not truth, counts
    assert NPSJF().select(view([mid, short])).run is short
    assert PSJF().select(view([mid, short], running=run)).run is short
    assert PSJF().select(view([mid], running=run)) == KEEP
    assert NPSJF().select(view([short], running=run)) == KEEP
    tie = FakeJob(3, estimated_s=8 * MS)  # ties go to the running job
    assert PSJF().select(view([tie], running=run)) == KEEP


def test_token_serves_candidates_first_come() -> None:
    early = FakeJob(0, priority=3, arrival_s=0.0, estimated_s=9 * MS)
    late = FakeJob(1, priority=3, arrival_s=1 * MS, estimated_s=1 * MS)
    low = FakeJob(2, priority=1, arrival_s=-1.0, estimated_s=0.1 * MS)
    pol = started(NPToken(), early, late, low)
    assert pol.select(view([late, early, low])).run is early  # low is below threshold 3
    prema = started(NPPrema(), early, late, low)
    assert prema.select(view([late, early, low])).run is late
    # preemptive TOKEN: an earlier-arrived candidate displaces the running one
    run = replace(late, state=JobState.RUNNING, executed_s=0.1 * MS)
    d = started(PToken(mechanism="kill"), early, run).select(view([early], running=run))
    assert d.run is early and d.mechanism == Mechanism.KILL


# --- RRB --------------------------------------------------------------------------------
def test_np_rrb_rotates_models_in_first_dispatch_order() -> None:
    jobs = [
        FakeJob(0, network="alexnet", arrival_s=0.0),
        FakeJob(1, network="alexnet", arrival_s=0.1),
        FakeJob(2, network="vgg-16", arrival_s=0.2),
        FakeJob(3, network="rnn-sa", arrival_s=0.3),
    ]
    pol = started(NPRRB(), *jobs)
    assert pol.order_ == ["alexnet", "vgg-16", "rnn-sa"]
    ready = list(jobs)
    served = []
    while ready:
        j = pol.select(view(ready)).run
        served.append(j.id)
        ready.remove(j)
    assert served == [0, 2, 3, 1]  # alexnet, vgg-16, rnn-sa, then alexnet again


def test_p_rrb_time_slices_after_quantum() -> None:
    a = FakeJob(0, network="alexnet")
    b = FakeJob(1, network="vgg-16", arrival_s=0.01 * MS)
    pol = started(PRRB(quantum_s=1 * MS), a, b)
    assert pol.select(view([a, b], now=0.0)).run is a
    a.state = JobState.RUNNING
    assert pol.select(view([b], running=a, now=0.5 * MS)) == KEEP  # quantum not used up
    d = pol.select(view([b], running=a, now=1.0 * MS))
    assert d.run is b and d.mechanism == Mechanism.CHECKPOINT
    # only its own model waiting: no switch
    a2 = FakeJob(2, network="alexnet")
    pol2 = started(PRRB(quantum_s=1 * MS), a, a2)
    pol2.select(view([a, a2]))
    assert pol2.select(view([a2], running=a, now=5 * MS)) == KEEP


def test_p_hpf_dynamic_applies_algorithm3() -> None:
    """P-HPF picks *which* job (strictly higher priority); ``"dynamic"`` picks *how* (Fig. 12)."""
    dyn = POLICIES.create("P-HPF", mechanism="dynamic")
    run = FakeJob(0, priority=1, estimated_s=10 * MS, executed_s=9.9 * MS, state=JobState.RUNNING)
    hi = FakeJob(1, priority=9, estimated_s=5 * MS)
    started(dyn, run, hi)
    d = dyn.select(view([hi], running=run))
    assert d.run is hi and d.mechanism == Mechanism.DRAIN  # static CHECKPOINT would preempt
    assert started(POLICIES.create("P-HPF"), run, hi).select(view([hi], running=run)) == (
        replace(d, mechanism=Mechanism.CHECKPOINT)
    )
    run.executed_s = 1 * MS
    assert dyn.select(view([hi], running=run)).mechanism == Mechanism.CHECKPOINT
    dyn_kill = started(POLICIES.create("P-HPF", mechanism="Dynamic-Kill"), run, hi)
    assert dyn_kill.select(view([hi], running=run)).mechanism == Mechanism.KILL
    assert dyn.select(view([hi])).run is hi  # idle array: plain dispatch
    same = FakeJob(2, priority=1, estimated_s=0.1 * MS)
    assert dyn.select(view([same], running=run)) == KEEP  # not higher priority: no preemption
    with pytest.raises(ConfigError, match="allowed: checkpoint, kill, drain, dynamic"):
        POLICIES.create("P-HPF", mechanism="bogus").reset()


# --- through the engine: conformance on random workloads -----------------------------------
@pytest.fixture(scope="module")
def profiles() -> dict[str, Any]:
    from npusched.hardware import compile_profile, get_device
    from npusched.models import get_network

    dev = get_device("prema-npu")
    return {
        n: compile_profile(get_network(n), dev, (1, 4))
        for n in ("alexnet", "googlenet", "rnn-sa", "rnn-mt2")
    }


ENGINE_CASES = [
    (name, mech)
    for name in NAMES
    for mech in ((None,) if name.startswith("NP-") else ("checkpoint", "dynamic", "dynamic-kill"))
] + [("P-SJF", "kill"), ("P-PREMA", "kill"), ("P-TOKEN", "kill")]
ENGINE_CASES += [("P-HPF", "dynamic"), ("P-HPF", "dynamic-kill")]


@pytest.mark.parametrize(("name", "mech"), ENGINE_CASES)
def test_policies_conform_in_the_engine(name: str, mech: str | None, profiles: Any) -> None:
    from npusched.policies.temporal.predictor import make_estimator
    from npusched.sim.engine import Simulator
    from npusched.workloads import prema_workload

    params = {} if mech is None else {"mechanism": mech}
    policy = POLICIES.create(name, **params)
    before = policy.get_params()
    for seed in (0, 1):
        reqs = prema_workload(10, list(profiles), 0.02, batch_sizes=(1, 4), random_state=seed)
        sim = Simulator(profiles, policy, estimator=make_estimator("prema"))
        a = sim.run(reqs).to_frame()
        b = sim.run(reqs).to_frame()
        pd_testing.assert_frame_equal(a, b)  # deterministic, and reset between runs
        assert len(a) == len(reqs) and not a["finish_s"].isna().any()
        assert (a["latency_s"] >= a["isolated_s"] * (1 - 1e-9)).all()
        if not policy.preemptive:
            assert (a["preemptions"] == 0).all()
    assert policy.get_params() == before


# --- through the engine: a hand-computed multi-task scenario -----------------------------
def test_prema_scenario_hand_computed_in_the_engine() -> None:
    """Three tasks, oracle estimates, Table II (period 0.25 ms, tokens 1/3/9); times in ms.

    Profiles: "a" = layers of 1, 2, 1 ms (the middle one 4 tiles of 0.5 ms), checkpoint bytes
    1000/2000/3000 at 1 GB/s (2,000 B save or restore = 2 us); "b" = one 0.5 ms layer.
    J0 = a, priority 3, at 0; J1 = b, priority 1, at 0.1; J2 = a, priority 9, at 3.204.

    P-PREMA, static CHECKPOINT:
    * 0: J0 runs (3 tokens). J1 waits from 0.1 and gains 1 x 0.25/0.5 = 0.5 tokens a period
      (0.3 at the 0.25 tick): 1.3, 1.8, 2.3, 2.8, and 3.3 at 1.25.
    * 1.25: max tokens 3.3 -> threshold 3; candidates J0 (3, running) and J1 (3.3); J1 is
      shorter (0.5 < 4 - 1.25) -> CHECKPOINT J0, 0.25 ms into its 2nd layer: it runs to the tile
      end at 1.5, saves 2,000 B to 1.502; J1 runs 1.502 -> 2.002.
    * 2.002: J0 restores to 2.004 and runs on (work 1.5 ms done).
    * 3.204: J2 arrives with 9 tokens > anything J0 holds -> threshold 9, J2 alone is the
      candidate -> CHECKPOINT J0 at work 2.7 ms: it runs to the tile end (= its 2nd layer's end,
      work 3.0) at 3.504, saves 2,000 B (the finished layer's outputs) to 3.506; J2 runs to
      7.506; J0 restores to 7.508 and finishes its last 1 ms at 8.508.

    P-PREMA with Algorithm 3: the same until 3.204, where Degradation_current = J2 remaining /
    J0 estimated = 4/4 > Degradation_candidate = J0 remaining / J2 estimated = 1.3/4 -> DRAIN
    (and at every later tick too): J0 finishes at 4.504, J2 runs 4.504 -> 8.504.

    NP-PREMA: J0 runs 0 -> 4. At 4 (a tick) J1 holds 1 + 3.9/0.5 = 8.8 tokens and J2 holds
    9 x (1 + 0.796/4) = 10.791 -> threshold 9: J2 runs 4 -> 8, then J1 8 -> 8.5.

    P-TOKEN (candidates first-come): at 1.25 J0 and J1 are candidates and J0 came first: no
    preemption; at 4 J2 is the only candidate (as above) and starts; at 4.25 J1 reaches 9.3
    tokens, joins the candidates and, having arrived first, preempts J2 0.25 ms into its
    single-tile first layer: J2 stops at the layer end 5.0, saves 1,000 B (1 us); J1 runs
    5.001 -> 5.501; J2 restores 1 us and finishes at 5.502 + 3 = 8.502.
    """
    from npusched.sim.engine import Simulator
    from simhelpers import make_profile, req

    profiles = {
        "a": make_profile(
            "a", [1 * MS, 2 * MS, 1 * MS], tiles=[1, 4, 1], checkpoint_bytes=[1000, 2000, 3000]
        ),
        "b": make_profile("b", [0.5 * MS], checkpoint_bytes=[500]),
    }
    reqs = [req(0, 0.0, "a", 3), req(1, 0.1 * MS, "b", 1), req(2, 3.204 * MS, "a", 9)]
    US = 1e-6
    cases = {
        ("P-PREMA", "checkpoint"): ([8.508, 2.002, 7.506], [2, 0, 0], [4000, 0, 0], [8, 0, 0]),
        ("P-PREMA", "dynamic"): ([4.504, 2.002, 8.504], [1, 0, 0], [2000, 0, 0], [4, 0, 0]),
        ("NP-PREMA", None): ([4.0, 8.5, 8.0], [0, 0, 0], [0, 0, 0], [0, 0, 0]),
        ("P-TOKEN", "checkpoint"): ([4.0, 5.501, 8.502], [0, 0, 1], [0, 0, 1000], [0, 0, 2]),
    }
    results = {}
    for (name, mech), (finish, pre, nbytes, ck_us) in cases.items():
        # the hand computation follows the linear token rule (tokens = priority x slowdown)
        params: dict[str, Any] = {"tokens": "linear"}
        if mech is not None:
            params["mechanism"] = mech
        pol = POLICIES.create(name, **params)
        res = results[name, mech] = Simulator(profiles, pol, record_timeline=True).run(reqs)
        cols = res.columns
        assert cols["finish_s"].tolist() == pytest.approx([f * MS for f in finish], abs=1e-12)
        assert cols["preemptions"].tolist() == pre, name
        assert cols["checkpoint_bytes"].tolist() == nbytes, name
        assert cols["checkpoint_s"].tolist() == pytest.approx([c * US for c in ck_us], abs=1e-15)
    timeline = [(j, round(s / MS, 9), round(e / MS, 9), k) for j, s, e, k, *_ in res.timeline or []]
    assert timeline == [
        (0, 0.0, 4.0, "run"),
        (2, 4.0, 5.0, "run"),
        (2, 5.0, 5.001, "save"),
        (1, 5.001, 5.501, "run"),
        (2, 5.501, 5.502, "restore"),
        (2, 5.502, 8.502, "run"),
    ]
    # Eq. 1-2 on the dynamic run's records: NTT = (finish - arrival) / isolated.
    from npusched.metrics import antt, fairness, sla_violation_rates, stp

    df = results["P-PREMA", "dynamic"].to_frame()
    ntt = [4.504 / 4, (2.002 - 0.1) / 0.5, (8.504 - 3.204) / 4]  # 1.126, 3.804, 1.325
    assert antt(df) == pytest.approx(sum(ntt) / 3)
    assert stp(df) == pytest.approx(sum(1 / x for x in ntt))
    pp = [(1 / x) / (p / 13) for x, p in zip(ntt, (3, 1, 9), strict=True)]  # priorities sum 13
    assert fairness(df) == pytest.approx(min(pp) / max(pp))
    assert sla_violation_rates(df, [2, 4]).tolist() == pytest.approx([1 / 3, 0.0])


def test_p_rrb_rotates_through_models_after_checkpoints() -> None:
    """Regression: P-RRB moved its pointer to the candidate when it *requested* a CHECKPOINT,
    so when the save was done the idle rule skipped the candidate's model (a -> c instead of
    a -> b) and, with two models left, resumed the victim at once (save, then restore of the
    same request). Three models of 4, 2 and 1 ms (0.25 ms tiles, 1 us saves), quantum 0.25 ms."""
    from npusched.sim.engine import Simulator
    from simhelpers import make_profile, req

    profiles = {
        "a": make_profile("a", [1 * MS] * 4, tiles=4, checkpoint_bytes=1000),
        "b": make_profile("b", [1 * MS] * 2, tiles=4, checkpoint_bytes=1000),
        "c": make_profile("c", [1 * MS], tiles=4, checkpoint_bytes=1000),
    }
    reqs = [req(0, 0.0, "a"), req(1, 0.1 * MS, "b"), req(2, 0.2 * MS, "c")]
    res = Simulator(profiles, POLICIES.create("P-RRB"), record_timeline=True).run(reqs)
    tl = res.timeline or []
    runs = ["abc"[j] for j, _, _, kind, *_ in tl if kind == "run"]
    assert runs == ["a", "b", "c", "a", "b", "c", "a", "b", "a", "b", "a"]
    for (j1, _, _, k1, *_), (j2, _, _, k2, *_) in itertools.pairwise(tl):
        assert not (k1 == "save" and k2 == "restore" and j1 == j2), "victim resumed at once"
    assert col_ms(res, "finish_s") == pytest.approx([7.016, 4.765, 2.758])


def test_p_rrb_rejects_static_kill() -> None:
    with pytest.raises(ConfigError, match="never finishes"):
        POLICIES.create("P-RRB", mechanism="kill").reset()
    POLICIES.create("P-RRB", mechanism="dynamic-kill").reset()  # kills cannot cycle


def col_ms(res: Any, name: str) -> list[float]:
    return [float(x) / MS for x in res.columns[name]]


# --- period skipping: decisions identical to ticking every period ------------------------------
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    wl=workload_strategy(),
    name=st.sampled_from(["P-PREMA", "NP-PREMA", "P-TOKEN", "NP-TOKEN"]),
    tokens=st.sampled_from(["cumulative", "linear"]),
    mechanism=st.sampled_from(["checkpoint", "dynamic", "kill"]),
    period=st.sampled_from([0.25e-3, 0.1e-3, 1e-3]),
)
def test_period_skipping_matches_ticking_every_period(
    wl: tuple, name: str, tokens: str, mechanism: str, period: float
) -> None:
    """The engine skips the ticks PREMA/TOKEN call quiet and credits them in closed form: every
    finish time, preemption and checkpoint is the same as with a tick every period, and it
    handles far fewer events."""
    from npusched.sim.engine import Simulator

    profiles, reqs = wl
    kw: dict = {"tokens": tokens, "period_s": period}
    if name.startswith("P-"):
        kw["mechanism"] = mechanism
    pol = POLICIES.create(name, **kw)
    fast = Simulator(profiles, pol, record_timeline=True).run(reqs)
    slow = Simulator(profiles, pol, record_timeline=True, skip_periods=False).run(reqs)
    for c in ("finish_s", "first_start_s", "preemptions", "checkpoint_bytes", "wasted_s"):
        np.testing.assert_array_equal(fast.columns[c], slow.columns[c], err_msg=c)
    assert fast.timeline == slow.timeline
    assert fast.events <= slow.events
