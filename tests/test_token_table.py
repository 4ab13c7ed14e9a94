"""Algorithm 2's token table (``policies/temporal/levels.py``) is made by the policy and used by
the engine: it calls the table's steps directly where the policy keeps the built-in rule
(``general_table``), or the policy's declared ready-queue hooks (``contract.ready_hooks``), so
its token rule no longer scans the queue."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

import golden_loops
from npusched.bench import bench_workload, synthetic_profiles
from npusched.policies.base import POLICIES
from npusched.policies.contract import JobView, ready_hooks
from npusched.policies.temporal import levels, prema
from npusched.policies.temporal.prema import PPrema
from npusched.sim.engine import Simulator
from simhelpers import assert_same_result


class ArrivalPrema(PPrema):
    """A subclass with its own ``choose``: the declared order no longer holds."""

    name = "P-PREMA-arrival"

    def choose(self, candidates: Sequence[JobView], running: JobView | None) -> JobView | None:
        return min(candidates, key=lambda j: (j.arrival_s, j.id), default=None)


def _workload(n: int = 300, load: float = 1.5) -> tuple[dict, list]:
    profiles = synthetic_profiles(random_state=3)
    return profiles, bench_workload(n, profiles, random_state=5, load=load)


def test_ready_hooks_only_where_the_order_holds() -> None:
    _, reqs = _workload(5)
    assert ready_hooks(POLICIES.create("P-FCFS"), reqs) is None  # no such method
    pol = POLICIES.create("P-PREMA")
    pol.reset()
    hooks = ready_hooks(pol, reqs)
    assert hooks is not None and len(hooks) == 2
    assert pol.table_ is not None and pol.table_.lazy  # the default rule: by level
    off = POLICIES.create("P-PREMA")
    off.level_table = False
    off.reset()
    assert ready_hooks(off, reqs) is None and off.table_ is None
    own = ArrivalPrema()
    own.reset()
    assert ready_hooks(own, reqs) is None  # its own choose: the scan over job views
    # a new run (reset) drops the previous run's table
    pol.reset()
    assert pol.table_ is None


@pytest.mark.parametrize("name", ["P-PREMA", "P-TOKEN", "NP-PREMA"])
def test_general_loop_scans_no_queue(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """With the table the general loop never reads every waiting job's tokens (``token_list``,
    the scan's one reader); with ``level_table = False`` it does, at every decision. Both give
    the same result to the bit."""
    calls = {"token_list": 0, "tables": 0}
    token_list = prema.TokenScheduler.token_list
    make = levels.token_table

    def counted_list(self: prema.TokenScheduler, jobs: Sequence[JobView]) -> list[float]:
        calls["token_list"] += 1
        return token_list(self, jobs)

    def counted_table(*args: object, **kw: object) -> levels.TokenTable:
        calls["tables"] += 1
        return make(*args, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(prema.TokenScheduler, "token_list", counted_list)
    monkeypatch.setattr(prema, "token_table", counted_table)
    profiles, reqs = _workload()
    results = []
    for table in (True, False):
        calls["token_list"] = calls["tables"] = 0
        pol = POLICIES.create(name)
        pol.level_table = table
        results.append(Simulator(profiles, pol).run(reqs))
        if table:
            assert calls == {"token_list": 0, "tables": 1}
        else:
            assert calls["token_list"] > 100 and calls["tables"] == 0
    assert_same_result(results[0], results[1])
    assert results[0].events == results[1].events


def test_engine_uses_the_policys_table(monkeypatch: pytest.MonkeyPatch) -> None:
    """The engine makes its token state through the policy (``token_table``): one table per
    run, and the same result as the policy's scan."""
    made = []
    make = levels.token_table

    def counted_table(*args: object, **kw: object) -> levels.TokenTable:
        t = make(*args, **kw)  # type: ignore[arg-type]
        made.append(t)
        return t

    monkeypatch.setattr(prema, "token_table", counted_table)
    profiles, reqs = _workload()
    got = Simulator(profiles, POLICIES.create("P-PREMA")).run(reqs)
    assert len(made) == 1 and made[0].lazy
    scan = POLICIES.create("P-PREMA")
    scan.level_table = False
    ref = Simulator(profiles, scan).run(reqs)
    assert_same_result(got, ref)
    assert got.events == ref.events


def test_round_is_pythons_round() -> None:
    """The table's boundary indices use ``levels._round`` (native compiled): Python's
    ``round`` of a float, a half to the even integer, on both signs."""
    import random

    rng = random.Random(7)
    xs = [i / 2 for i in range(-41, 42)]
    xs += [rng.uniform(-1e6, 1e6) for _ in range(2000)]
    xs += [k * 0.25e-3 / 0.25e-3 for k in range(2000)]
    xs += [0.49999999999999994, -0.49999999999999994, 2.0**52 + 0.5, 4503599627370495.5]
    for x in xs:
        assert levels._round(x) == round(x), x


def test_table_state_is_typed_attributes() -> None:
    """The table is one object of typed attributes (``__slots__``: no instance dictionary);
    its boundary heaps hold ``(boundary, stay, job)`` entries, and a job's new stay makes its
    older entries stale."""
    pol = POLICIES.create("P-PREMA")
    pol.reset()
    n = 3
    est = [1e-3, 2e-3, 4e-3]
    t = pol.token_table([1, 3, 9], [0.0, 0.0, 0.0], [10, 11, 12], est, [0.0] * n)
    assert isinstance(t, levels.TokenTable) and t.lazy
    assert not hasattr(t, "__dict__")
    for k in range(n):
        t.enqueue(k, 0.0)
    assert t.ver == [1, 1, 1]
    assert sorted(e[2] for e in t.promo) == [0, 1]  # 9 tokens: the top level already
    assert t.pick(0.0, -1, 0.0) == 2  # the highest level wins
    t.dequeue(2, 0.0)
    t.dequeue(0, 0.0)
    t.enqueue(0, 1e-3)  # a new stay
    assert t.ver[0] == 2
    t.credit_periods(1e-2, 0.25e-3, 39, 2)
    # Credited at the boundary of index 39 (9.75 ms): 1 x (1 + 8.75 ms / 1 ms) and
    # 3 x (1 + 9.75 ms / 2 ms); every job at the top level, where the shortest remaining
    # estimate wins (job 0, 1 ms) and no later boundary can change that.
    assert t.tok == [9.75, 17.625, 9.0] and t.cnt_x == [0, 0, 2]
    assert t.pick(1e-2, 2, 0.0) == 0
    assert t.quiet(1e-2, 1.025e-2, 2) == levels.NEVER_PERIODS - 1


def test_finished_job_lets_its_floats_go() -> None:
    """``TokenTable.finished``: a finished job's gain, tokens, time waited and last stay's start
    become the one shared float (the engine holds no float of its own per finished request),
    the other jobs' values and the next pick unchanged."""
    pol = POLICIES.create("P-PREMA")
    pol.reset()
    est = [1e-3, 2e-3, 4e-3, 1e-3]
    t = pol.token_table([1, 3, 9, 3], [0.0] * 4, [10, 11, 12, 13], est, [0.0] * 4)
    for k in range(4):
        t.enqueue(k, 0.0)
    assert t.pick(0.0, -1, 0.0) == 2
    t.dequeue(2, 0.0)
    t.credit_periods(1e-2, 0.25e-3, 39, 2)
    kept = (list(t.gain), list(t.tok), list(t.waited), list(t.since))
    t.finished(2)  # job 2 ran and completed
    for col in (t.gain, t.tok, t.waited, t.since):
        assert col[2] is levels._FREED and col[2] == 0.0
    for col, before in zip((t.gain, t.tok, t.waited, t.since), kept, strict=True):
        assert [v for k, v in enumerate(col) if k != 2] == [
            v for k, v in enumerate(before) if k != 2
        ]
    assert t.pick(1e-2, -1, 0.0) == 0  # the shortest remaining estimate at the top level


def test_runs_with_jobs_finished() -> None:
    """P-PREMA and P-TOKEN, whose table lets a finished job's token floats go
    (``TokenTable.finished``), give the records both loops gave at dbd9f47
    (``tests/golden_loops.py``), at loads below and above 1."""
    for load in (0.9, 1.5):
        for name in ("P-PREMA", "P-TOKEN"):
            golden_loops.frozen(f"token-finished/{load}/{name}")
