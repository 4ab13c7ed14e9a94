"""Runs with dependent requests (``depends_on`` / ``transfer_s``) and plans with early exits (a
request's ``exit``) on the declared ready orders: the engine's own decisions give the result of
the policy deciding through its ``select`` (``simhelpers.by_select``) to the last bit for every
temporal family and mechanism: every column, ``events``, energy, busy time, the timeline and
the power pieces, with ``until`` stops, released requests arriving at the same time as a
completion or a tick, and preemptions of a job whose exit is pending. Every request finishes
once, none lost. (Until the twenty-eighth round these runs compared the column loop with the
general loop; the deterministic ones are checked against the values frozen from them,
``tests/golden_loops.py``.)"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import golden_loops
from golden_loops import exit_profile
from npusched.errors import SimulationError
from npusched.hardware.profile import Profile
from npusched.policies.base import POLICIES
from npusched.sim.engine import Simulator
from npusched.workloads.request import Request
from simhelpers import assert_same_outcome, by_select

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
#: Every temporal family with a declared ready order, with the mechanisms it takes
#: (``None``: none).
FAMILIES = golden_loops.FAMILIES
CASES = [(name, m) for name, ms in FAMILIES.items() for m in ms]


@st.composite
def workload(draw: st.DrawFn, deps: bool = True, exits: bool = True) -> tuple[dict, list[Request]]:
    """Random profiles (some with exits) and requests on a 10 us grid (ties), some depending
    on another request (cycles included) with a transfer of 0 or a few grid steps, some
    leaving at an exit (an index the plan may not have)."""
    profiles: dict[str, Profile] = {}
    for i in range(draw(st.integers(1, 3))):
        n = draw(st.integers(1, 6))
        lat = [x * 1e-6 for x in draw(st.lists(st.integers(0, 600), min_size=n, max_size=n))]
        if sum(lat) == 0:
            lat[0] = 1e-6
        after = sorted(set(draw(st.lists(st.integers(0, n - 1), max_size=3)))) if exits else []
        profiles[f"n{i}"] = exit_profile(
            f"n{i}",
            lat,
            tuple(after),
            tiles=draw(st.lists(st.integers(1, 4), min_size=n, max_size=n)),
            ckpt=draw(st.lists(st.integers(0, 64_000), min_size=n, max_size=n)),
            energy=draw(st.lists(st.floats(0.0, 1e-3), min_size=n, max_size=n)),
        )
    names = sorted(profiles)
    m = draw(st.integers(1, 12))
    reqs = []
    for i in range(m):
        dep = None
        transfer = 0.0
        if deps and m > 1 and draw(st.booleans()):
            dep = draw(st.integers(0, m - 1).filter(lambda d, i=i: d != i))
            transfer = draw(st.sampled_from([0.0, 0.0, 1e-5, 3e-5, 2.5e-4]))
        reqs.append(
            Request(
                id=i,
                arrival_s=draw(st.integers(0, 200)) * 1e-5,
                network=draw(st.sampled_from(names)),
                priority=draw(st.sampled_from([1, 3, 9])),
                depends_on=dep,
                transfer_s=transfer,
                exit=draw(st.sampled_from([None, None, 0, 1, 2, 5])) if exits else None,
            )
        )
    return profiles, reqs


def _policy(name: str, mechanism: str | None, quantum: float = 1e-4) -> Any:
    params: dict[str, Any] = {} if mechanism is None else {"mechanism": mechanism}
    if name == "P-RRB":
        params.update(quantum_s=quantum, period_s=quantum / 2)
    return POLICIES.create(name, **params)


def _outcome(sim: Simulator, reqs: list[Request], until: float | None) -> Any:
    try:
        return sim.run(reqs) if until is None else sim.run(reqs, until=until)
    except SimulationError as exc:
        return ("raised", str(exc))


def _both(
    profiles: dict,
    reqs: list[Request],
    name: str,
    mechanism: str | None,
    until: float | None,
    **kw: Any,
) -> tuple[Any, Any]:
    """The outcome of the engine's own decisions and of the policy's ``select``."""
    runs = []
    for reference in (False, True):
        pol = _policy(name, mechanism)
        sim = Simulator(profiles, by_select(pol) if reference else pol, **kw)
        runs.append(_outcome(sim, reqs, until))
    return runs[0], runs[1]


def _same(a: Any, b: Any) -> None:
    assert_same_outcome(a, b)  # (or both raise the same error: a livelock)


@SETTINGS
@given(
    wl=workload(),
    case=st.sampled_from(CASES),
    point=st.sampled_from(["tile", "layer"]),
    cost=st.booleans(),
    until=st.one_of(st.none(), st.integers(0, 300).map(lambda x: x * 1e-5)),
)
def test_dependents_and_exits_equal_select(
    wl: tuple, case: tuple, point: str, cost: bool, until: float | None
) -> None:
    profiles, reqs = wl
    name, mechanism = case
    fast, general = _both(
        profiles,
        reqs,
        name,
        mechanism,
        until,
        preemption_point=point,
        checkpoint_cost=cost,
        record_timeline=True,
        record_power=True,
    )
    _same(fast, general)


@SETTINGS
@given(wl=workload(exits=False), case=st.sampled_from(CASES), cost=st.booleans())
def test_dependents_alone_equal_select(wl: tuple, case: tuple, cost: bool) -> None:
    profiles, reqs = wl
    name, mechanism = case
    fast, general = _both(profiles, reqs, name, mechanism, None, checkpoint_cost=cost)
    _same(fast, general)


@SETTINGS
@given(wl=workload(deps=False), case=st.sampled_from(CASES), cost=st.booleans())
def test_exits_alone_equal_select(wl: tuple, case: tuple, cost: bool) -> None:
    profiles, reqs = wl
    name, mechanism = case
    fast, general = _both(
        profiles,
        reqs,
        name,
        mechanism,
        None,
        preemption_point="tile",
        checkpoint_cost=cost,
        record_timeline=True,
    )
    _same(fast, general)
    if isinstance(fast, tuple):
        return
    # Every request finishes once, no earlier than its isolated latency (to its exit) after
    # its arrival; none is lost.
    c = fast.columns
    assert not np.isnan(c["finish_s"]).any()
    assert (c["finish_s"] >= c["arrival_s"] + c["isolated_s"] - 1e-12).all()
    assert sorted(c["id"].tolist()) == sorted(r.id for r in reqs)


def _acyclic(reqs: list[Request]) -> bool:
    dep = {r.id: r.depends_on for r in reqs}
    for r in reqs:
        seen = set()
        d = r.id
        while d is not None:
            if d in seen:
                return False
            seen.add(d)
            d = dep[d]
    return True


@SETTINGS
@given(wl=workload(), case=st.sampled_from(CASES))
def test_no_request_lost_or_duplicated(wl: tuple, case: tuple) -> None:
    """Without a cycle of dependents every request finishes exactly once, a dependent no
    earlier than its predecessor's finish plus the transfer; with one, the requests on it never
    run (no start, no finish, no resource, no estimate) and the others still finish."""
    profiles, reqs = wl
    name, mechanism = case
    fast = _outcome(Simulator(profiles, _policy(name, mechanism)), reqs, None)
    if isinstance(fast, tuple):
        return
    c = fast.columns
    by_id = {int(i): j for j, i in enumerate(c["id"])}
    assert sorted(by_id) == sorted(r.id for r in reqs)
    finish = c["finish_s"]
    if _acyclic(reqs):
        assert not np.isnan(finish).any()
        assert (finish >= c["arrival_s"] + c["isolated_s"] - 1e-12).all()
        for r in reqs:
            if r.depends_on is not None:
                j, p = by_id[r.id], by_id[r.depends_on]
                assert c["first_start_s"][j] >= finish[p] + r.transfer_s - 1e-12
    ran = ~np.isnan(finish)
    assert (np.isnan(c["first_start_s"]) == ~ran).all()
    assert all((res == "") == (not done) for res, done in zip(c["resource"], ran, strict=True))


@pytest.mark.parametrize("name", FAMILIES)
def test_a_dependent_of_a_request_leaving_at_its_exit(name: str) -> None:
    """A request leaving at its exit, one depending on it (a transfer), one of priority 9:
    the run both loops gave at dbd9f47; every request finishes, the dependent no earlier than
    its predecessor's finish plus the transfer."""
    res = golden_loops.frozen(f"dependents/{name}")
    c = res.columns
    assert not np.isnan(c["finish_s"]).any()
    assert c["first_start_s"][1] >= c["finish_s"][0] + 0.5e-3 - 1e-12


def test_checkpoint_with_a_pending_exit_stops_at_the_exit() -> None:
    """The general loop's quirk: a CHECKPOINT victim whose exit comes before its next
    preemption point (one tile per layer) stops at the exit, saves, and leaves at once when
    it starts again (after its restore)."""
    res = golden_loops.frozen("pending-exit")
    c = res.columns
    # request 0 was preempted once, and finished at its exit (3 layers' work done)
    assert c["preemptions"][0] == 1
    assert c["isolated_s"][0] == pytest.approx(3e-3)


@pytest.mark.parametrize("volt", ["dfs", "dvfs"])
@pytest.mark.parametrize(("name", "mechanism"), golden_loops.POWER_DEPENDENT_CASES)
def test_power_policies_with_dependents_and_exits(volt: str, name: str, mechanism: str) -> None:
    """Under DFS / DVFS (a clock / voltage switch at each start, the level left by a job that
    left at its exit): the run both loops gave at dbd9f47."""
    res = golden_loops.frozen(f"power-dependents/{volt}/{name}/{mechanism}")
    assert not isinstance(res, tuple)
    assert math.isfinite(res.end_s)
