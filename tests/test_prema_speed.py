"""The fast paths of PREMA's policy and predictor make exactly the decisions of the plain code.

* :meth:`TokenScheduler.candidates` (one pass), :func:`shortest_remaining` (inlined key) and
  :meth:`TokenScheduler._periods_to_gain` (closed-form guess) against the straightforward
  implementations they replaced (kept below as references), on random scheduler views.
* The predictor's plan-free RNN latency is bit-identical to the plan's, and estimating builds
  no plans.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from npusched.hardware import compile_profile, get_device
from npusched.models.ir import Layer, LayerKind, make_network
from npusched.policies.contract import JobState, SchedulerView
from npusched.policies.temporal.mechanism import remaining_s
from npusched.policies.temporal.predictor import (
    make_estimator,
    predict_seq_out,
    rnn_isolated_latency,
)
from npusched.policies.temporal.prema import (
    PERIOD_S,
    PPrema,
    TokenScheduler,
    round_down_to_level,
)
from npusched.policies.temporal.sjf import shortest_remaining
from npusched.policies.temporal.token import PToken
from npusched.workloads.request import Request

MS = 1e-3


@dataclass
class FakeJob:
    id: int
    priority: int = 1
    arrival_s: float = 0.0
    estimated_s: float = 1 * MS
    executed_s: float = 0.0
    waited_s: float = 0.0
    state: JobState = JobState.WAITING


# --- the reference (pre-fast-path) implementations ------------------------------------------
def ref_tokens(pol: TokenScheduler, job: Any) -> float:
    gain = pol.gain_.get(job.id, 0.0)
    return job.priority * (1.0 + gain) if gain > 0.0 else float(job.priority)


def ref_candidates(pol: TokenScheduler, jobs: Sequence[Any]) -> list[Any]:
    if not jobs:
        return []
    thr = round_down_to_level(max(ref_tokens(pol, j) for j in jobs), pol.token_levels)
    eps = 1e-12 * max(thr, 1.0)
    if pol.threshold == ">":
        strict = [j for j in jobs if ref_tokens(pol, j) > thr + eps]
        if strict:
            return strict
    return [j for j in jobs if ref_tokens(pol, j) >= thr - eps]


def ref_shortest(jobs: Sequence[Any], running: Any) -> Any:
    run_id = running.id if running is not None else -1
    return min(
        jobs,
        key=lambda j: (remaining_s(j), 0 if j.id == run_id else 1, j.arrival_s, j.id),
        default=None,
    )


def ref_periods_to_gain(
    g: float, need: float, w: float, p: float, est: float, waiting: bool, cumulative: bool
) -> int:
    if est <= 0.0:
        return 1
    never = 1 << 40

    def gain_after(k: int) -> float:
        if cumulative:
            total = k * w + (p * k * (k - 1) / 2.0 if waiting else 0.0)
            return g + total / est
        return (w + (k - 1) * p) / est if waiting else w / est

    if gain_after(never) < need:
        return never
    lo, hi = 1, never
    while lo < hi:
        mid = (lo + hi) // 2
        if gain_after(mid) >= need:
            hi = mid
        else:
            lo = mid + 1
    return lo


# --- random views ---------------------------------------------------------------------------
# Gains that put tokens exactly on, just below and just above a level (1, 3, 9) for priority 1/3.
EDGE_GAINS = [0.0, 2.0, 8.0, 2.0 - 1e-13, 2.0 + 1e-13, 0.5, 1.0 / 3.0, 2.0 / 3.0, 1e-15, math.inf]
gains = st.one_of(st.sampled_from(EDGE_GAINS), st.floats(0.0, 20.0))
times = st.one_of(st.sampled_from([0.0, 1 * MS, 2 * MS]), st.floats(0.0, 10 * MS))
jobs_st = st.lists(
    st.tuples(
        st.sampled_from([1, 3, 9]),  # priority
        gains,
        st.sampled_from([0.0, 0.5 * MS, 1 * MS, 4 * MS]),  # arrival
        st.one_of(st.just(0.0), st.floats(0.1 * MS, 5 * MS)),  # estimate
        times,  # executed
        times,  # waited
    ),
    min_size=0,
    max_size=7,
)


def build(pol: TokenScheduler, spec: list[tuple[Any, ...]], run: int | None) -> SchedulerView:
    pol.reset()
    jobs = []
    for i, (prio, g, arr, est, ex, w) in enumerate(spec):
        jobs.append(FakeJob(i, prio, arr, est, ex, w))
        if g > 0.0:
            pol.gain_[i] = g
    running = None
    if run is not None and jobs:
        running = jobs.pop(run % len(jobs))
        running.state = JobState.RUNNING
    return SchedulerView(now=5 * MS, ready=jobs, running=running, reason="period", profiles={})


@settings(max_examples=300, deadline=None)
@given(
    spec=jobs_st,
    run=st.one_of(st.none(), st.integers(0, 6)),
    threshold=st.sampled_from([">=", ">"]),
    include_running=st.booleans(),
    tokens=st.sampled_from(["cumulative", "linear"]),
    token_scheduler=st.sampled_from([PPrema, PToken]),
)
def test_candidates_and_pick_match_the_reference(
    spec: list[tuple[Any, ...]],
    run: int | None,
    threshold: str,
    include_running: bool,
    tokens: str,
    token_scheduler: type[TokenScheduler],
) -> None:
    pol = token_scheduler(
        mechanism="dynamic",  # type: ignore[call-arg]
        threshold=threshold,
        include_running=include_running,
        tokens=tokens,
    )
    v = build(pol, spec, run)
    jobs = pol.queue(v)
    fast = pol.candidates(jobs)
    ref = ref_candidates(pol, jobs)
    assert [j.id for j in fast] == [j.id for j in ref]
    if isinstance(pol, PPrema):
        assert ref_shortest(ref, v.running) is shortest_remaining(fast, v.running)
    picked = pol.pick(v)
    assert picked is pol.choose(ref, v.running)
    assert pol.select(v) == pol.select(v)  # no hidden state changes in a decision


@settings(max_examples=400, deadline=None)
@given(
    g=gains.filter(math.isfinite),
    need=st.one_of(st.sampled_from([0.0, 2.0, 8.0, 2.0 * (1 - 1e-9) - 1e-9]), st.floats(0, 30)),
    w=st.one_of(st.sampled_from([0.0, PERIOD_S, 1e-9]), st.floats(0.0, 50 * MS)),
    p=st.sampled_from([PERIOD_S, 1e-3, 1e-6]),
    est=st.one_of(st.sampled_from([0.0, 1e-7, 1 * MS]), st.floats(1e-9, 1.0)),
    waiting=st.booleans(),
    cumulative=st.booleans(),
)
def test_periods_to_gain_matches_bisection(
    g: float, need: float, w: float, p: float, est: float, waiting: bool, cumulative: bool
) -> None:
    fast = TokenScheduler._periods_to_gain(g, need, w, p, est, waiting, cumulative)
    assert fast == ref_periods_to_gain(g, need, w, p, est, waiting, cumulative)


# --- predictor ------------------------------------------------------------------------------
def seq2seq(name: str, hidden: int = 256) -> Any:
    return make_network(
        name,
        [
            Layer("emb", LayerKind.FC, m=1, k=hidden, n=hidden),
            Layer("enc", LayerKind.LSTM, m=1, k=2 * hidden, n=4 * hidden, repeat="in"),
            Layer("dec", LayerKind.LSTM, m=1, k=2 * hidden, n=4 * hidden, repeat="out"),
            Layer("proj", LayerKind.FC, m=1, k=hidden, n=1000, repeat="out"),
        ],
        seq_len=(10, 10),
    )


def test_rnn_latency_without_a_plan_is_bit_identical() -> None:
    dev = get_device("prema-npu")
    prof = compile_profile(seq2seq("rnn-mt1"), dev, (1, 4), cache=False)
    for b in (1, 4):
        for s_in, s_out in ((1, 1), (7, 33), (120, 5), (None, None), (13, None)):
            fast = rnn_isolated_latency(prof, b, s_in, s_out)
            assert fast == prof.isolated_latency(b, s_in, s_out)  # exact, not approx


def test_prema_estimate_builds_no_plans_and_matches_plan_based_estimate() -> None:
    dev = get_device("prema-npu")
    prof = compile_profile(seq2seq("rnn-mt1"), dev, (1,), cache=False)
    est = make_estimator("prema")
    rng = np.random.default_rng(3)
    reqs = [
        Request(i, 0.0, "rnn-mt1", seq_in=int(s)) for i, s in enumerate(rng.integers(1, 80, 60))
    ]
    got = [est(r, prof) for r in reqs]
    assert not prof._plans  # no ExecPlan was built for the look-ups
    for r, e in zip(reqs, got, strict=True):
        assert r.seq_in is not None
        pred = max(float(predict_seq_out("rnn-mt1", r.seq_in) or 1.0), 1.0)
        lo = math.floor(pred)
        t_lo = prof.isolated_latency(1, r.seq_in, lo)
        frac = pred - lo
        want = t_lo
        if frac > 1e-12:
            want = t_lo + frac * (prof.isolated_latency(1, r.seq_in, lo + 1) - t_lo)
        assert e == want  # the plan-based formula, bit for bit
        assert est(r, prof) == e  # memoised


@pytest.mark.parametrize("tokens", ["cumulative", "linear"])
def test_fast_quiet_periods_unchanged_on_a_view(tokens: str) -> None:
    """``quiet_periods`` of a hand-built view equals the one from the reference search."""
    pol = PPrema(mechanism="dynamic", tokens=tokens)
    pol.reset()
    a = FakeJob(0, 1, 0.0, 2 * MS, 0.0, 1 * MS)
    b = FakeJob(1, 3, 0.0, 1 * MS, 0.3 * MS, 0.2 * MS, JobState.RUNNING)
    pol.gain_[0] = 0.4
    v = SchedulerView(now=1.1 * MS, ready=[a], running=b, reason="period", profiles={})
    first = 1.25 * MS
    cum = tokens == "cumulative"
    ka = ref_periods_to_gain(
        0.4, 3 * (1 - 1e-9) - 1.0, 1 * MS + (first - 1.1 * MS), PERIOD_S, 2 * MS, True, cum
    )
    kb = ref_periods_to_gain(0.0, 9 * (1 - 1e-9) / 3 - 1.0, 0.2 * MS, PERIOD_S, 1 * MS, False, cum)
    assert pol.quiet_periods(v, first) == max(min(ka, kb) - 1, 0)


def test_quiet_periods_ignore_levels_below_the_threshold() -> None:
    """With a 9-token task present, a 1-token task reaching 3 tokens changes no candidate set:
    the next tick that matters is when it (or anyone) reaches 9."""
    pol = PPrema(mechanism="dynamic", tokens="linear")
    pol.reset()
    low = FakeJob(0, 1, 0.0, 1 * MS, 0.0, 0.0)
    high = FakeJob(1, 9, 0.0, 1 * MS, 0.0, 0.0, JobState.RUNNING)
    v = SchedulerView(now=0.0, ready=[low], running=high, reason="arrival", profiles={})
    # linear tokens of `low` after k boundaries: 1 + k p / 1 ms; 3 after 8, 9 after 32
    assert pol.quiet_periods(v, PERIOD_S) == 31
    assert [j.id for j in pol.candidates(pol.queue(v))] == [1]
