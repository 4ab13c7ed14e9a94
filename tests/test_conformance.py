"""The conformance suite every registered temporal policy must pass (``POLICIES.names()``).

Like scikit-learn's ``check_estimator``: deterministic for a seed, never loses or duplicates a
request, never puts two jobs on the array, latency >= isolated latency, work conserved except
what KILL wastes, parameters not mutated by a run.
"""

from __future__ import annotations

import copy

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import npusched.policies.temporal  # noqa: F401  (registers the built-in policies)
from npusched.base import clone
from npusched.policies.base import POLICIES, TemporalPolicy
from npusched.sim.engine import Simulator
from npusched.workloads.request import Request
from simhelpers import assert_same_result, check_invariants, make_profile, workload_strategy

NAMES = POLICIES.names()


def make(name: str) -> TemporalPolicy:
    return POLICIES.create(name)


def params(policy: object) -> dict:
    get = getattr(policy, "get_params", None)
    return copy.deepcopy(get()) if get is not None else {}


def test_builtins_registered() -> None:
    """Every built-in family is registered in both variants under its PREMA name."""
    fams = ("FCFS", "HPF", "RRB", "TOKEN", "SJF", "PREMA")
    assert {f"{v}-{f}" for f in fams for v in ("NP", "P")} <= set(NAMES)
    for name in NAMES:
        assert make(name).name == name


@pytest.mark.parametrize("name", NAMES)
def test_protocol(name: str) -> None:
    pol = make(name)
    assert isinstance(pol, TemporalPolicy)
    assert isinstance(pol.name, str) and pol.name
    assert isinstance(pol.preemptive, bool)
    assert pol.period_s is None or pol.period_s > 0
    if hasattr(pol, "get_params"):
        twin = clone(pol)  # type: ignore[arg-type]
        assert type(twin) is type(pol) and params(twin) == params(pol)


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    wl=workload_strategy(),
    point=st.sampled_from(["tile", "layer"]),
    cost=st.booleans(),
)
def test_invariants_on_random_workloads(name: str, wl: tuple, point: str, cost: bool) -> None:
    profiles, reqs = wl
    pol = make(name)
    before = params(pol)
    sim = Simulator(
        profiles, pol, preemption_point=point, checkpoint_cost=cost, record_timeline=True
    )
    res = sim.run(reqs)
    # Every built-in policy defaults to CHECKPOINT: its records are checked exactly too.
    check_invariants(
        res, reqs, preemptive=pol.preemptive, profiles=profiles, point=point, cost=cost
    )
    assert params(pol) == before, "a run mutated the policy's parameters"
    # Deterministic: the same simulator again, and a fresh clone of the policy.
    assert_same_result(res, sim.run(reqs))
    other = Simulator(
        profiles, make(name), preemption_point=point, checkpoint_cost=cost, record_timeline=True
    ).run(reqs)
    assert_same_result(res, other)


@pytest.mark.parametrize("name", NAMES)
def test_busy_mixed_workload(name: str) -> None:
    """A denser workload (200 requests, three networks, all priorities) under overload."""
    profiles = {
        "s": make_profile("s", [20e-6, 30e-6], tiles=[2, 3], checkpoint_bytes=[4000, 8000]),
        "m": make_profile("m", [100e-6] * 5, tiles=4, checkpoint_bytes=16000),
        "l": make_profile("l", [300e-6, 500e-6, 200e-6], tiles=[8, 2, 1], checkpoint_bytes=64000),
    }
    rng = np.random.default_rng(7)
    nets = rng.choice(["s", "m", "l"], size=200)
    gaps = rng.exponential(150e-6, size=200)
    prios = rng.choice([1, 3, 9], size=200)
    reqs = [
        Request(id=i, arrival_s=float(t), network=str(n), priority=int(p))
        for i, (t, n, p) in enumerate(zip(np.cumsum(gaps), nets, prios, strict=True))
    ]
    pol = make(name)
    res = Simulator(profiles, pol, record_timeline=True).run(reqs)
    check_invariants(res, reqs, preemptive=pol.preemptive, profiles=profiles)
    assert res.n_finished == 200
    assert res.busy_s <= res.makespan_s + 1e-12


def _mechanism_cases() -> list[tuple[str, str]]:
    static = {"P-FCFS", "P-HPF"}  # ranked policies: drain as well as Algorithm 3's modes
    cases = []
    for name in NAMES:
        if not make(name).preemptive or "mechanism" not in params(make(name)):
            continue
        modes = ("kill", "dynamic", "dynamic-kill") + (("drain",) if name in static else ())
        cases += [(name, m) for m in modes if not (name == "P-RRB" and m == "kill")]
    return cases


@pytest.mark.parametrize(("name", "mechanism"), _mechanism_cases())
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(wl=workload_strategy(), point=st.sampled_from(["tile", "layer"]), cost=st.booleans())
def test_mechanisms_on_random_workloads(
    name: str, mechanism: str, wl: tuple, point: str, cost: bool
) -> None:
    """The invariants under every other mechanism a preemptive policy offers (KILL wastes work
    but still finishes everything; DRAIN and Algorithm 3 never lose work); runs without KILL
    get the exact checkpoint accounting too."""
    profiles, reqs = wl
    pol = POLICIES.create(name, mechanism=mechanism)
    sim = Simulator(
        profiles, pol, preemption_point=point, checkpoint_cost=cost, record_timeline=True
    )
    res = sim.run(reqs)
    kills = "kill" in mechanism
    check_invariants(res, reqs, profiles=None if kills else profiles, point=point, cost=cost)
    if not kills:
        assert res.columns["wasted_s"].sum() == 0.0
    if mechanism in ("kill", "drain"):
        assert res.columns["checkpoint_bytes"].sum() == 0
    assert_same_result(res, sim.run(reqs))
