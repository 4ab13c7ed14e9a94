"""Planaria's per-event cost (twenty-third round): the engine's process-wide memo of the fastest
plans per request shape (``sim.engine._SHARED_BASE``, ``_Run._base_plan``) holds each
profile's own plans and is checked by the profile's identity; the event queue's sequence
numbers (``EventQueue.next_seq``) are ``itertools.count()``'s; Algorithm 1's leftover units
(``_counts_from_estimates``) go where the sorted key tuples sent them."""

from __future__ import annotations

import math
import random
import sys
from pathlib import Path
from typing import Any

import numpy as np

from npusched.policies.spatial import PlanariaPolicy
from npusched.policies.spatial.planaria_core import _counts_from_estimates, _estimate, _Table
from npusched.sim import engine
from npusched.sim.events import COMPLETE, EventQueue

sys.path.insert(0, str(Path(__file__).resolve().parent))

# the runs' helpers and the leftover units' reference (the sorted key tuples) of the earlier
# rounds' tests
from test_planaria_core_paths import _counts_reference
from test_planaria_decision_paths import _profiles, _run


def _fastest(prof: Any, batch: int, seq_in: Any, seq_out: Any) -> Any:
    """The scan ``_base_plan`` memoises: the first plan of least ``total_s`` over the
    profile's variants."""
    best = None
    for v in prof.variants():
        p = prof.plan(batch, seq_in, seq_out, **v)
        if best is None or p.total_s < best.total_s:
            best = p
    return best


def _mine(profs: dict[str, Any]) -> dict[tuple[Any, ...], tuple[Any, Any]]:
    return {k: v for k, v in engine._SHARED_BASE.items() if any(v[1] is p for p in profs.values())}


def test_shared_base_plans_are_the_fastest_of_the_profiles_own() -> None:
    profs = _profiles("C")
    engine._SHARED_BASE.clear()
    first = _run(PlanariaPolicy(), "C", 80.0, 5, profs=profs)
    mine = _mine(profs)
    assert len(mine) > 1  # several request shapes
    for key, (plan, prof) in mine.items():
        assert key[0] == id(prof)
        _, batch, seq_in, seq_out = key
        assert _fastest(prof, batch, seq_in, seq_out) is plan
    # a second run takes its base plans from the memo: the same results
    assert _run(PlanariaPolicy(), "C", 80.0, 5, profs=profs) == first
    # and so does a run without the memo
    engine._SHARED_BASE.clear()
    assert _run(PlanariaPolicy(), "C", 80.0, 5, profs=profs) == first


def test_shared_base_plans_checked_by_the_profiles_identity() -> None:
    profs = _profiles("A")
    engine._SHARED_BASE.clear()
    first = _run(PlanariaPolicy(), "A", 150.0, 1, profs=profs)
    keys = list(_mine(profs))
    assert len(keys) > 1
    # every entry poisoned: another entry's plan (a wrong one) under another profile object
    # (as if the id were reused); the run must scan again, with the same results
    plans = [engine._SHARED_BASE[k][0] for k in keys]
    for i, key in enumerate(keys):
        engine._SHARED_BASE[key] = (plans[(i + 1) % len(plans)], object())
    assert _run(PlanariaPolicy(), "A", 150.0, 1, profs=profs) == first
    for key in keys:
        plan, prof = engine._SHARED_BASE[key]
        assert key[0] == id(prof) and _fastest(prof, key[1], key[2], key[3]) is plan
    engine._SHARED_BASE.clear()


def test_event_queue_numbers_as_a_count() -> None:
    """``next_seq`` counts 0, 1, 2, ... per queue, and ``push`` takes the next number."""
    q = EventQueue()
    other = EventQueue()
    assert [q.next_seq() for _ in range(3)] == [0, 1, 2]
    assert other.next_seq() == 0
    q.push(1.0, COMPLETE, "job", 4)
    assert q.heap == [(1.0, COMPLETE, 3, "job", 4)]
    assert q.next_seq() == 4 and other.next_seq() == 1


def test_leftover_units_as_the_sorted_keys() -> None:
    """Queues of 2..7 tasks whose shares leave several units over: equal remainders with equal
    and with different scores, equal tasks, and tasks of every score (the scans' every branch),
    give the counts the sorted key tuples give."""
    rng = random.Random(23)
    checked = 0
    for trial in range(4000):
        n = rng.randint(2, 7)
        size = rng.choice([16, 16, 32, 64])
        est = [1] * n if trial % 2 else [rng.randint(1, 3) for _ in range(n)]
        kind = trial % 4
        if kind == 0:  # every task alike: every key ties on its remainder and score
            prio = [2.0] * n
            at = [1e-3] * n
        elif kind == 1:  # scores in small integer ratios: remainders tie, scores differ
            prio = [float(rng.choice([1, 2, 3, 6])) for _ in range(n)]
            at = [1e-3] * n
        elif kind == 2:  # pairs of equal tasks among different ones
            base_p = [float(rng.randint(1, 5)) for _ in range((n + 1) // 2)]
            prio = (base_p * 2)[:n]
            at = [2e-3] * n
        else:
            prio = [float(rng.randint(1, 11)) for _ in range(n)]
            at = [rng.choice([1e-12, rng.uniform(1e-4, 1e-1)]) for _ in range(n)]
        slack = [math.inf] * n
        got = _counts_from_estimates(prio, slack, est, at, size)
        assert got == _counts_reference(prio, slack, est, at, size), (prio, est, at, size)
        if sum(est) <= size and sum(got) == size:
            checked += 1
    assert checked > 3000  # the fitting path, with leftovers handed out, checked throughout


def _table(rows: list[list[float]]) -> _Table:
    cum_t = np.asarray(rows, dtype=np.float64)
    total = cum_t[-1]
    at_start = np.maximum(total - cum_t[0], 0.0)
    return _Table(
        cum_t,
        total,
        at_start,
        len(rows) - 1,
        cum_t.tolist(),
        total.tolist(),
        at_start.tolist(),
    )


def test_estimate_without_a_count_is_zero() -> None:
    """A row holding a NaN where no count meets the slack: ``(0, 0.0)`` (no count; the caller
    hands the queue to the NumPy Algorithm 1), where ``None`` was returned; a count that
    meets the slack before the NaN, and a row without one, give the count as before."""
    nan = math.nan
    tab = _table([[0.0, 0.0, 0.0], [2.0, nan, 1.0], [4.0, nan, 2.0]])
    assert _estimate(tab, 0, 0.0, 0.5, 3) == (0, 0.0)  # no count meets it: the NaN row
    assert _estimate(tab, 1, 0.5, 0.1, 3) == (0, 0.0)
    assert _estimate(tab, 1, 0.5, 0.5, 3) == (3, 0.5)  # met past the NaN
    assert _estimate(tab, 0, 0.0, 4.0, 3) == (1, 4.0)  # the first count meets it
    fine = _table([[0.0, 0.0], [2.0, 1.0], [4.0, 2.0]])
    assert _estimate(fine, 0, 0.0, 0.5, 2) == (2, 2.0)  # none meets it: the fastest count
    assert _estimate(fine, 2, 0.0, 0.5, 2) == (1, 0.0)  # finished
