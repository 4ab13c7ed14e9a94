"""The general loop's ready list kept in no order (``_Run.ready_pos``, issue 25's "no
superlinear cost in the queue length").

For the built-in Algorithm 2 on its token table (P-PREMA, P-TOKEN and their non-preemptive
forms: no view is made) and for a declared round-robin order (NP-RRB, P-RRB: their own methods
read the list's length or sort it), the general loop keeps the waiting jobs in a list in no
particular order, and a starting job leaves it in one step (the last job takes its place)
instead of by a scan. These tests hold that mode at load 1.5, where the queue is thousands of
jobs long and most starts are not the list's first job, to the values frozen from the runs on
which it was compared with the column loop until the twenty-eighth round
(``tests/golden_loops.py``), with ``until`` too (whose partial records read the waiting jobs in
dispatch order), and check that a policy that reads the ready list itself still sees it in
dispatch order.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import golden_loops
from npusched.bench import bench_workload, synthetic_profiles
from npusched.policies.base import POLICIES
from npusched.policies.contract import Decision, SchedulerView
from npusched.policies.temporal.predictor import make_estimator
from npusched.policies.temporal.rrb import PRRB
from npusched.sim.engine import Simulator, _Run
from simhelpers import assert_same_run

UNORDERED = golden_loops.UNORDERED


def _setup(n: int, load: float) -> tuple[Any, Any]:
    profiles = synthetic_profiles(random_state=3)
    return profiles, bench_workload(n, profiles, load=load, random_state=5)


def _general(profiles: Any, policy: Any, reqs: Any, until: float | None) -> tuple[Any, _Run]:
    sim = Simulator(
        profiles,
        policy,
        record_power=True,
        estimator=make_estimator("prema"),
        preemption_point="tile",
    )
    run = _Run(sim, reqs, until, None)
    return run.execute(), run


@pytest.mark.parametrize("name", UNORDERED)
@pytest.mark.parametrize("stop", [None, 0.6])
def test_unordered_ready_list_at_load(name: str, stop: float | None) -> None:
    profiles, reqs = _setup(1_200, 1.5)
    until = golden_loops.unordered_until(stop)
    general, run = _general(profiles, POLICIES.create(name), reqs, until)
    assert run.ready_pos is not None  # the mode under test
    golden_loops.assert_frozen(f"unordered/{name}/{stop}", general)
    if until is not None:  # requests still waiting at ``until``: partial records
        assert int(np.isnan(general.columns["finish_s"]).sum()) > 100
    # every job waiting in the list sits where ``ready_pos`` says
    assert all(run.ready_pos[j.order] == i for i, j in enumerate(run.ready))
    assert [j.order for j in run._waiting()] == sorted(j.order for j in run.ready)


@pytest.mark.parametrize("name", ["P-HPF", "P-SJF", "NP-FCFS"])
def test_declared_rank_orders_keep_their_heap(name: str) -> None:
    """The rank and remaining orders keep their heap in place of the list."""
    profiles, reqs = _setup(200, 0.9)
    _, run = _general(profiles, POLICIES.create(name), reqs, None)
    assert run.ready_pos is None and run.rank_heap is not None


class _ReadsReady(PRRB):
    """A P-RRB whose ``select`` reads the ready list itself (no declared order then): the
    view must hold the waiting jobs in dispatch order."""

    def select(self, view: SchedulerView) -> Decision:
        keys = [(j.arrival_s, j.id) for j in view.ready]
        self.seen_sorted_.append(keys == sorted(keys))
        return super().select(view)


def test_a_policy_that_reads_the_list_sees_dispatch_order() -> None:
    profiles, reqs = _setup(600, 1.5)
    policy = _ReadsReady()
    policy.seen_sorted_ = []
    result, run = _general(profiles, policy, reqs, None)
    assert run.ready_pos is None
    assert len(policy.seen_sorted_) > 100 and all(policy.seen_sorted_)
    # and its decisions are P-RRB's own
    plain, _ = _general(profiles, PRRB(), reqs, None)
    assert_same_run(plain, result)


def test_the_general_loop_keeps_the_token_table_only_for_the_built_in_rule() -> None:
    """``TokenScheduler.general_table``: the engine keeps the table (no view, no hook, no
    request made) for the built-in Algorithm 2; a policy with ``level_table`` off, or with one
    of the methods the table stands for set on its instance, gets the views and its own
    ``select``, with the same result."""
    profiles, reqs = _setup(400, 1.5)
    plain, run = _general(profiles, POLICIES.create("P-PREMA"), reqs, None)
    assert run.tokens is not None
    calls: list[int] = []
    scan = POLICIES.create("P-PREMA")
    scan.level_table = False
    own = POLICIES.create("P-PREMA")
    real_select = own.select

    def select(view: SchedulerView) -> Decision:
        calls.append(1)
        return real_select(view)

    own.select = select  # an instance's own method: no table kept by the engine
    for pol in (scan, own):
        other, r = _general(profiles, pol, reqs, None)
        assert r.tokens is None
        assert_same_run(plain, other)
    assert len(calls) > 100
