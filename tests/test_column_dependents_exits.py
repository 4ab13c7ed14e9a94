"""The column loop (:mod:`npusched.sim.columns`) takes runs with dependent requests
(``depends_on`` / ``transfer_s``) and plans with early exits (a request's ``exit``), and gives the
general loop's result (``fast_path=False``, the reference) to the last bit for every temporal
family and mechanism: every column, ``events``, energy, busy time, the timeline and the power
pieces, with ``until`` stops, released requests arriving at the same time as a completion or a
tick, and preemptions of a job whose exit is pending."""

from __future__ import annotations

import dataclasses
import functools
import math
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from npusched.errors import SimulationError
from npusched.hardware.profile import Profile
from npusched.models.ir import ExitPoint
from npusched.policies.base import POLICIES
from npusched.sim import columns
from npusched.sim.engine import Simulator, _Run
from npusched.sim.resources import Machine, Resource
from npusched.workloads.request import Request
from simhelpers import assert_same_run, jobs_made, make_network_stub

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
#: Every temporal family the column loop runs, with the mechanisms it takes (``None``: none).
FAMILIES: dict[str, tuple[str | None, ...]] = {
    "NP-FCFS": (None,),
    "P-FCFS": ("checkpoint", "kill", "drain", "dynamic", "dynamic-kill"),
    "NP-HPF": (None,),
    "P-HPF": ("checkpoint", "kill", "drain", "dynamic", "dynamic-kill"),
    "NP-SJF": (None,),
    "P-SJF": ("checkpoint", "kill", "dynamic", "dynamic-kill"),
    "NP-PREMA": (None,),
    "P-PREMA": ("checkpoint", "kill", "dynamic", "dynamic-kill"),
    "NP-TOKEN": (None,),
    "P-TOKEN": ("checkpoint", "kill", "dynamic", "dynamic-kill"),
    "NP-RRB": (None,),
    "P-RRB": ("checkpoint", "dynamic", "dynamic-kill"),
}
CASES = [(name, m) for name, ms in FAMILIES.items() for m in ms]


def exit_profile(
    name: str,
    lat: list[float],
    exits: tuple[int, ...],
    *,
    tiles: list[int],
    ckpt: list[int],
    energy: list[float],
) -> Profile:
    """A hand-built profile whose network has early exits after the given layers."""
    net = make_network_stub(name, len(lat))
    net = dataclasses.replace(
        net, exits=tuple(ExitPoint(name=f"x{i}", after=a) for i, a in enumerate(exits))
    )
    return Profile.from_tables(
        net,
        device_name="hand-built",
        batch_sizes=(1,),
        latency_s=np.asarray(lat, dtype=np.float64),
        frequency_hz=1e9,
        memory_bandwidth_bps=1e9,
        tiles=tiles,
        checkpoint_bytes=ckpt,
        energy_j=energy,
    )


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
    runs = []
    for fast in (True, False):
        sim = Simulator(profiles, _policy(name, mechanism), fast_path=fast, **kw)
        assert columns.applies(_Run(sim, reqs, until, None)) == fast
        runs.append(_outcome(sim, reqs, until))
    return runs[0], runs[1]


def _same(fast: Any, general: Any) -> None:
    if isinstance(general, tuple):  # both raise the same error (a livelock)
        assert fast == general
        return
    assert_same_run(fast, general)


@SETTINGS
@given(
    wl=workload(),
    case=st.sampled_from(CASES),
    point=st.sampled_from(["tile", "layer"]),
    cost=st.booleans(),
    until=st.one_of(st.none(), st.integers(0, 300).map(lambda x: x * 1e-5)),
)
def test_dependents_and_exits_equal_the_general_loop(
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
def test_dependents_alone_equal_the_general_loop(wl: tuple, case: tuple, cost: bool) -> None:
    profiles, reqs = wl
    name, mechanism = case
    fast, general = _both(profiles, reqs, name, mechanism, None, checkpoint_cost=cost)
    _same(fast, general)


@SETTINGS
@given(wl=workload(deps=False), case=st.sampled_from(CASES), cost=st.booleans())
def test_exits_alone_equal_the_general_loop(wl: tuple, case: tuple, cost: bool) -> None:
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


def test_such_runs_take_the_column_loop() -> None:
    """Dependent requests and early exits no longer send a run to the general loop: no ``Job``
    is made (the general loop makes one per arrived request)."""
    prof = exit_profile("e", [1e-3] * 4, (1,), tiles=[2] * 4, ckpt=[64] * 4, energy=[1e-3] * 4)
    profiles = {"e": prof}
    reqs = [
        Request(0, 0.0, "e", exit=0),
        Request(1, 0.0, "e", depends_on=0, transfer_s=0.5e-3),
        Request(2, 1e-4, "e", priority=9),
    ]
    for name in FAMILIES:
        sim = Simulator(profiles, POLICIES.create(name))
        assert columns.applies(_Run(sim, reqs, None, None)), name
        assert jobs_made(sim, reqs) == 0, name
        general = Simulator(profiles, POLICIES.create(name), fast_path=False)
        assert jobs_made(general, reqs) == 3, name
        _same(sim.run(reqs), general.run(reqs))


def test_checkpoint_with_a_pending_exit_stops_at_the_exit() -> None:
    """The general loop's quirk: a CHECKPOINT victim whose exit comes before its next
    preemption point (one tile per layer) stops at the exit, saves, and leaves at once when
    it starts again (after its restore)."""
    prof = exit_profile("e", [1e-3] * 4, (2,), tiles=[1] * 4, ckpt=[1000] * 4, energy=[1e-3] * 4)
    hi = exit_profile("h", [0.1e-3], (), tiles=[1], ckpt=[0], energy=[1e-4])
    profiles = {"e": prof, "h": hi}
    reqs = [
        Request(0, 0.0, "e", priority=1, exit=0),
        Request(1, 1.5e-3, "h", priority=9),
        Request(2, 2.5e-3, "e", priority=1, depends_on=1, transfer_s=0.0),
    ]
    fast, general = _both(
        profiles, reqs, "P-HPF", "checkpoint", None, preemption_point="layer", record_timeline=True
    )
    _same(fast, general)
    c = fast.columns
    # request 0 was preempted once, and finished at its exit (3 layers' work done)
    assert c["preemptions"][0] == 1
    assert c["isolated_s"][0] == pytest.approx(3e-3)


@functools.cache
def _power_setup(volt: str) -> tuple[Any, dict[str, Any]]:
    from npusched.hardware import compile_profile
    from npusched.hardware.power import AB9
    from npusched.models import get_network
    from npusched.models.exits import attach_exits

    dev = AB9(stc_efficiency=0.02, voltage_v="dvfs") if volt == "dvfs" else AB9(stc_efficiency=0.02)
    nets = ("squeezenet", "resnet-18")
    return dev, {n: compile_profile(attach_exits(get_network(n), 3, "30,30,40"), dev) for n in nets}


@pytest.mark.parametrize("volt", ["dfs", "dvfs"])
@pytest.mark.parametrize(
    ("name", "mechanism"),
    [("P-PREMA", "dynamic"), ("P-HPF", "checkpoint"), ("P-SJF", "kill"), ("P-RRB", "checkpoint")],
)
def test_power_policies_with_dependents_and_exits(volt: str, name: str, mechanism: str) -> None:
    """Under DFS / DVFS (a clock / voltage switch at each start, the level left by a job that
    left at its exit) the column loop still equals the general loop."""
    from npusched.policies.power import DFS, DVFS

    dev, profs = _power_setup(volt)
    rng = np.random.default_rng(7)
    nets = sorted(profs)
    n = 60
    arr = np.sort(rng.uniform(0.0, 0.2, n))
    reqs = [
        Request(
            id=i,
            arrival_s=float(arr[i]),
            network=nets[int(rng.integers(len(nets)))],
            priority=int(rng.choice([1, 3, 9])),
            depends_on=int(rng.integers(i)) if i and rng.random() < 0.3 else None,
            transfer_s=float(rng.choice([0.0, 1e-3])),
            exit=int(rng.integers(0, 4)) if rng.random() < 0.6 else None,
        )
        for i in range(n)
    ]
    runs = []
    for fast in (True, False):
        cap = 33.0
        power = (DFS if volt == "dfs" else DVFS)(cap_w=cap, idle_power_w=dev.idle_power_w)
        sim = Simulator(
            profs,
            _policy(name, mechanism, quantum=2e-3),
            machine=Machine((Resource("npu", idle_power_w=dev.idle_power_w),)),
            power=power,
            power_cap_w=cap,
            record_power=True,
            record_timeline=True,
            fast_path=fast,
        )
        runs.append(_outcome(sim, reqs, None))
    _same(*runs)
    assert not isinstance(runs[0], tuple)
    assert math.isfinite(runs[0].end_s)
