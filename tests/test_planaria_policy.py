"""Planaria's Algorithm 1 (pure functions) on hand-built queues, plus a never-oversubscribed
property over random queues."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from npusched.errors import SimulationError
from npusched.policies.spatial.planaria import (
    SpatialTask,
    allocate_fit_tasks,
    allocate_unfit_tasks,
    estimate_resources,
    fits,
    predict_remaining,
    schedule_counts,
    schedule_counts_small,
    schedule_tasks_spatially,
)

N = np.arange(1, 17)


def task(id: int, priority: float, slack: float, work: float, floor: float = 0.0) -> SpatialTask:
    """A task whose remaining time on n subarrays is ``max(work / n, floor)`` seconds."""
    return SpatialTask(id, priority, slack, np.maximum(work / N, floor))


# --- ESTIMATERESOURCES -----------------------------------------------------------------------
def test_estimate_smallest_count_that_fits_slack() -> None:
    assert estimate_resources(task(0, 1, 3.0, 10.0)) == 4  # 10/3 > 3 >= 10/4
    assert estimate_resources(task(0, 1, 10.0, 10.0)) == 1
    assert estimate_resources(task(0, 1, 0.625, 10.0)) == 16  # exactly 10/16


def test_estimate_infeasible_takes_fastest_count() -> None:
    # no count meets the slack: the shortest remaining time, smallest such count
    assert estimate_resources(task(0, 1, 0.1, 10.0)) == 16
    assert estimate_resources(task(0, 1, 1.0, 10.0, floor=2.0)) == 5  # plateau from n = 5
    assert estimate_resources(task(0, 1, -1.0, 10.0)) == 16  # deadline already passed


def test_fits() -> None:
    assert fits({1: 8, 2: 8})
    assert not fits({1: 8, 2: 9})
    assert fits({})


# --- ALLOCATEFITTASKS ------------------------------------------------------------------------
def test_fit_spare_in_proportion_to_priority_over_remaining() -> None:
    q = [task(1, 3, 5.0, 2.0), task(2, 1, 5.0, 2.0)]  # remaining on 2 subarrays: 1 s each
    est = {1: 2, 2: 2}
    # scores 3/1 and 1/1: the 12 spare subarrays split 9 : 3
    assert allocate_fit_tasks(q, est) == {1: 11, 2: 5}


def test_fit_remaining_time_at_the_estimate() -> None:
    # same priority; task 2 has 4x the remaining time at its estimate -> 1/4 of the score
    q = [task(1, 1, 5.0, 1.0), task(2, 1, 5.0, 4.0)]
    est = {1: 1, 2: 1}
    assert allocate_fit_tasks(q, est) == {1: 1 + 11, 2: 1 + 3}  # 14 * 4/5 = 11.2, 14/5 = 2.8


def test_fit_whole_subarrays_largest_remainder() -> None:
    q = [task(i, 1, 5.0, 1.0) for i in range(3)]
    est = {0: 2, 1: 2, 2: 2}
    # 10 spare in equal thirds: floors 3, 3, 3 and the leftover one to the first in queue order
    alloc = allocate_fit_tasks(q, est)
    assert alloc == {0: 6, 1: 5, 2: 5}
    assert sum(alloc.values()) == 16
    assert allocate_fit_tasks([], {}) == {}
    with pytest.raises(SimulationError):
        allocate_fit_tasks(q, {0: 8, 1: 8, 2: 8})


# --- ALLOCATEUNFITTASKS ----------------------------------------------------------------------
def test_unfit_score_order_and_remainder() -> None:
    q = [task(1, 1, 1.0, 8.0), task(2, 10, 1.0, 8.0), task(3, 5, 1.0, 4.0)]
    est = {1: 8, 2: 8, 3: 4}
    # scores p / (slack * est): 0.125, 1.25, 1.25 -> tasks 2, 3 (queue order on the tie), 1;
    # task 1 gets the 4 subarrays left
    assert allocate_unfit_tasks(q, est) == {2: 8, 3: 4, 1: 4}


def test_unfit_stops_when_full_and_late_tasks_go_last() -> None:
    q = [task(1, 11, -0.5, 8.0), task(2, 1, 2.0, 8.0), task(3, 1, 4.0, 8.0), task(4, 1, 8.0, 8.0)]
    est = {1: 8, 2: 8, 3: 8, 4: 8}
    # task 1 is past its deadline: after every task that can still meet QoS, whatever its
    # priority; 2 (least slack) then 3 fill the array; 4 and 1 wait
    assert allocate_unfit_tasks(q, est) == {2: 8, 3: 8}


def test_schedule_dispatches_fit_and_unfit() -> None:
    fit_q = [task(1, 1, 10.0, 10.0), task(2, 1, 5.0, 10.0)]  # estimates 1 and 2
    s = schedule_tasks_spatially(fit_q)
    assert sum(s.values()) == 16 and s[1] >= 1 and s[2] >= 2
    unfit_q = [task(i, 1 + i, 1.0, 10.0) for i in range(4)]  # estimates 10 each
    s = schedule_tasks_spatially(unfit_q)
    assert s == {3: 10, 2: 6}  # highest priority first (equal slack and estimate)
    assert schedule_tasks_spatially([]) == {}
    with pytest.raises(SimulationError, match="duplicate"):
        schedule_tasks_spatially([task(1, 1, 1.0, 1.0), task(1, 2, 1.0, 1.0)])
    with pytest.raises(SimulationError, match="remaining_s"):
        SpatialTask(1, 1, 1.0, [np.nan])
    with pytest.raises(SimulationError, match="priority"):
        SpatialTask(1, 0, 1.0, N * 1.0)


# --- invariants ------------------------------------------------------------------------------
@st.composite
def queues(draw: st.DrawFn) -> list[SpatialTask]:
    n = draw(st.integers(1, 20))
    out = []
    for i in range(n):
        work = draw(st.floats(1e-4, 1.0))
        floor = draw(st.floats(0.0, 0.05))
        out.append(task(i, draw(st.integers(1, 11)), draw(st.floats(-0.1, 0.5)), work, floor))
    return out


@settings(max_examples=150, deadline=None)
@given(q=queues())
def test_never_oversubscribed(q: list[SpatialTask]) -> None:
    s = schedule_tasks_spatially(q)
    assert sum(s.values()) <= 16
    assert all(isinstance(v, int) and 1 <= v <= 16 for v in s.values())
    assert set(s) <= {t.id for t in q}
    est = {t.id: estimate_resources(t) for t in q}
    if fits(est):  # every task runs, at least at its estimate, and the array is full
        assert set(s) == {t.id for t in q}
        assert sum(s.values()) == 16
        assert all(s[i] >= est[i] for i in s)
    else:  # tasks in score order get their estimate, only the last one possibly less
        short = [i for i in s if s[i] < est[i]]
        assert len(short) <= 1
        assert sum(s.values()) == 16 or len(s) == len(q)


# --- PREDICTTIME -----------------------------------------------------------------------------
def test_predict_remaining_from_variant_profiles() -> None:
    from npusched.hardware.fission import FissionArray, variant_profiles
    from npusched.models import get_network

    net = get_network("mobilenet-v1")
    plans = [p.plan(1) for p in variant_profiles(net, FissionArray())]
    assert len(plans) == 16
    full = predict_remaining(plans, 0, 0.0)
    np.testing.assert_allclose(full, [p.total_s for p in plans])
    assert full[15] < full[0] / 8  # 16 subarrays much faster than one
    mid = predict_remaining(plans, 5, 0.5)
    want = [p.total_s - p.cum_s[5] - 0.5 * p.latency_s[5] for p in plans]
    np.testing.assert_allclose(mid, want)
    assert (predict_remaining(plans, plans[0].steps) == 0).all()
    # the estimate uses it: a slack just above the 4-subarray time needs at most 4
    t = SpatialTask(0, 1, float(full[3]) * 1.0001, full)
    assert estimate_resources(t) <= 4
    with pytest.raises(SimulationError):
        predict_remaining(plans, 0, 1.5)
    with pytest.raises(SimulationError):
        predict_remaining(plans, plans[0].steps + 1)


# --- the vectorised Algorithm 1 the policy runs ------------------------------------------------
@settings(max_examples=300)
@given(
    st.lists(
        st.tuples(
            st.sampled_from([1.0, 2.0, 3.0, 11.0]),  # priority
            st.one_of(st.floats(-0.01, 0.05), st.just(float("inf"))),  # slack, s
            st.floats(0.0, 0.05),  # work, s
            st.floats(0.0, 0.01),  # floor, s
        ),
        max_size=12,
    )
)
def test_schedule_counts_equals_the_pseudo_code(rows: list[tuple[float, ...]]) -> None:
    """``schedule_counts`` (arrays, every task at once) gives the counts of
    ``schedule_tasks_spatially`` (one task record at a time) on every queue."""
    q = [task(i, p, s, w, f) for i, (p, s, w, f) in enumerate(rows)]
    ref = schedule_tasks_spatially(q, 16)
    prio = np.array([t.priority for t in q], dtype=np.float64)
    slack = np.array([t.slack_s for t in q], dtype=np.float64)
    rem = np.array([t.remaining_s for t in q], dtype=np.float64).reshape(len(q), 16)
    got = schedule_counts(prio, slack, rem, 16)
    assert {i: int(c) for i, c in enumerate(got) if c > 0} == ref


@settings(max_examples=500)
@given(
    st.lists(
        st.tuples(
            st.sampled_from([1.0, 2.0, 3.0, 11.0]),  # priority
            st.one_of(st.floats(-0.01, 0.05), st.just(float("inf"))),  # slack, s
            st.one_of(
                st.tuples(st.floats(0.0, 0.05), st.floats(0.0, 0.01)),  # work, floor (s)
                st.lists(st.floats(0.0, 0.02), min_size=16, max_size=16),  # any row
            ),
        ),
        min_size=0,
        max_size=9,
    )
)
def test_schedule_counts_small_equals_the_arrays(rows: list[tuple[object, ...]]) -> None:
    """The policy's Python-float Algorithm 1 for small queues gives ``schedule_counts``'s
    counts (NumPy) on every queue of 2..7 tasks (ties in remainders and scores included),
    and declines outside that range."""
    prio = [float(r[0]) for r in rows]  # type: ignore[arg-type]
    slack = [float(r[1]) for r in rows]  # type: ignore[arg-type]
    rem = []
    for r in rows:
        x = r[2]
        if isinstance(x, tuple):
            rem.append(np.maximum(x[0] / N, x[1]).tolist())
        else:
            rem.append(list(x))  # type: ignore[call-overload]
    got = schedule_counts_small(prio, slack, rem, 16)
    if not 2 <= len(rows) < 8:
        assert got is None
        return
    want = schedule_counts(
        np.array(prio), np.array(slack), np.array(rem, dtype=np.float64).reshape(len(rows), 16)
    )
    assert got == want.tolist()
