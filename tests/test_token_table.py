"""Algorithm 2's token table (``policies/temporal/levels.py``) is held by the policy and used by
both engine loops: the column loop calls it directly, the general loop through the declared
ready-queue hooks (``contract.ready_hooks``), so its token rule no longer scans the queue."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

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
        results.append(Simulator(profiles, pol, fast_path=False).run(reqs))
        if table:
            assert calls == {"token_list": 0, "tables": 1}
        else:
            assert calls["token_list"] > 100 and calls["tables"] == 0
    assert_same_result(results[0], results[1])
    assert results[0].events == results[1].events


def test_column_loop_uses_the_policys_table(monkeypatch: pytest.MonkeyPatch) -> None:
    """The column loop makes its token state through the policy (``token_table``): one table
    per run, and the same result as the general loop with the scan."""
    made = []
    make = levels.token_table

    def counted_table(*args: object, **kw: object) -> levels.TokenTable:
        t = make(*args, **kw)  # type: ignore[arg-type]
        made.append(t)
        return t

    monkeypatch.setattr(prema, "token_table", counted_table)
    profiles, reqs = _workload()
    fast = Simulator(profiles, POLICIES.create("P-PREMA")).run(reqs)
    assert len(made) == 1 and made[0].lazy
    scan = POLICIES.create("P-PREMA")
    scan.level_table = False
    general = Simulator(profiles, scan, fast_path=False).run(reqs)
    assert_same_result(fast, general)
    assert fast.events == general.events
