"""The conformance suite every registered machine policy must pass (``MACHINE_POLICIES``).

The machine counterpart of ``test_conformance.py`` (which covers ``POLICIES``, the temporal
ones): on a 16-unit fission array with hand-built profiles whose ``subarrays`` axis speeds every
layer up linearly, each policy must never lose or duplicate a request, never hold more units of
a resource than its capacity (a sweep over the timeline's ``Segment.units``), finish no request
before ``arrival + isolated`` (isolated = its fastest variant), be deterministic (the same
simulator twice and a fresh policy), and leave its parameters and the requests unchanged.
"""

from __future__ import annotations

import copy
import itertools

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from npusched.base import clone
from npusched.policies.base import POLICIES
from npusched.policies.machine import (
    MACHINE_POLICIES,
    MachinePolicy,
    all_policy_names,
    check_disjoint,
    get_any_policy,
    import_builtin_machine_policies,
    policy_kind,
)
from npusched.sim.engine import Simulator
from npusched.sim.resources import fission_array
from npusched.workloads.request import Request
from simhelpers import assert_same_result
from test_engine_core import check_capacity, variant_profile

import_builtin_machine_policies()
NAMES = MACHINE_POLICIES.names()
MS = 1e-3


def params(policy: object) -> dict:
    get = getattr(policy, "get_params", None)
    return copy.deepcopy(get()) if get is not None else {}


def test_builtins_registered_and_disjoint() -> None:
    assert "Planaria" in NAMES
    check_disjoint()
    assert set(all_policy_names()) == set(POLICIES.names()) | set(NAMES)
    assert policy_kind("Planaria") == "machine" and policy_kind("P-PREMA") == "temporal"
    assert get_any_policy("planaria").name == "Planaria"  # case-insensitive fallback


@pytest.mark.parametrize("name", NAMES)
def test_protocol(name: str) -> None:
    pol = MACHINE_POLICIES.create(name)
    assert isinstance(pol, MachinePolicy)
    assert pol.kind == "machine"
    assert pol.name == name
    assert isinstance(pol.preemptive, bool)
    assert pol.period_s is None or pol.period_s > 0
    if hasattr(pol, "get_params"):
        twin = clone(pol)  # type: ignore[arg-type]
        assert type(twin) is type(pol) and params(twin) == params(pol)


def _profiles() -> dict:
    return {
        "p": variant_profile("p", [4 * MS, 8 * MS, 2 * MS], tiles=4, checkpoint_bytes=2000),
        "q": variant_profile("q", [6 * MS], tiles=3, checkpoint_bytes=500),
        # sublinear: more subarrays help less (a depthwise-like network would be superlinear)
        "r": variant_profile(
            "r", [1 * MS, 3 * MS], tiles=2, checkpoint_bytes=100, speed=lambda u: float(u) ** 0.5
        ),
    }


PROFILES = _profiles()


@st.composite
def machine_workload(draw: st.DrawFn) -> list[Request]:
    n = draw(st.integers(1, 12))
    reqs = []
    for i in range(n):
        slo = draw(st.one_of(st.none(), st.integers(1, 60)))
        reqs.append(
            Request(
                id=i,
                arrival_s=draw(st.integers(0, 40)) * 0.5 * MS,
                network=draw(st.sampled_from(sorted(PROFILES))),
                priority=draw(st.integers(1, 11)),
                slo_s=None if slo is None else slo * MS,
            )
        )
    return reqs


def check_machine_invariants(res: object, reqs: list[Request], capacity: int) -> None:
    cols = res.columns  # type: ignore[attr-defined]
    ids = cols["id"].tolist()
    assert sorted(ids) == sorted(r.id for r in reqs) and len(set(ids)) == len(ids)
    fin = cols["finish_s"]
    assert np.all(np.isfinite(fin)), "a request never finished"
    assert np.all(fin >= cols["arrival_s"] + cols["isolated_s"] - 1e-12)
    assert np.all(cols["first_start_s"] >= cols["arrival_s"] - 1e-12)
    assert np.all(cols["checkpoint_s"] >= 0.0) and np.all(cols["wasted_s"] >= 0.0)
    check_capacity(res, {"array": capacity})
    # every request ran exactly its isolated work plus what KILL wasted (on its variants)
    runs = [s for s in res.timeline if s.kind == "run"]  # type: ignore[attr-defined]
    assert {s.job_id for s in runs} <= set(ids)
    assert all(1 <= s.units <= capacity and s.end_s >= s.start_s for s in runs)


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(reqs=machine_workload(), cost=st.booleans(), point=st.sampled_from(["tile", "layer"]))
def test_invariants_on_random_workloads(
    name: str, reqs: list[Request], cost: bool, point: str
) -> None:
    pol = MACHINE_POLICIES.create(name)
    before = params(pol)
    frozen = copy.deepcopy(reqs)
    sim = Simulator(
        PROFILES,
        pol,
        machine=fission_array(16),
        record_timeline=True,
        checkpoint_cost=cost,
        preemption_point=point,
    )
    res = sim.run(reqs)
    check_machine_invariants(res, reqs, 16)
    assert params(pol) == before, "a run mutated the policy's parameters"
    assert reqs == frozen, "a run mutated the requests"
    assert_same_result(res, sim.run(reqs))
    other = Simulator(
        PROFILES,
        MACHINE_POLICIES.create(name),
        machine=fission_array(16),
        record_timeline=True,
        checkpoint_cost=cost,
        preemption_point=point,
    ).run(reqs)
    assert_same_result(res, other)


@pytest.mark.parametrize("name", NAMES)
def test_busy_mixed_workload(name: str) -> None:
    """A dense overload (150 requests, tight and loose QoS, all priorities) on 16 units."""
    rng = np.random.default_rng(11)
    nets = rng.choice(sorted(PROFILES), size=150)
    gaps = rng.exponential(1.5 * MS, size=150)
    reqs = [
        Request(
            id=i,
            arrival_s=float(t),
            network=str(n),
            priority=int(rng.integers(1, 12)),
            slo_s=float(rng.choice([5 * MS, 20 * MS, 100 * MS])),
        )
        for i, (t, n) in enumerate(zip(np.cumsum(gaps), nets, strict=True))
    ]
    res = Simulator(
        PROFILES, MACHINE_POLICIES.create(name), machine=fission_array(16), record_timeline=True
    ).run(reqs)
    check_machine_invariants(res, reqs, 16)
    # several jobs shared the array at some instant (a spatial policy co-locates)
    runs = sorted((s.start_s, s.end_s) for s in res.timeline if s.kind == "run")
    assert any(b[0] < a[1] - 1e-12 for a, b in itertools.pairwise(runs))


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("capacity", [4, 8])
def test_smaller_arrays(name: str, capacity: int) -> None:
    """The policy reads the capacity from the machine, not a constant 16."""
    reqs = [Request(i, i * 0.2 * MS, "pqr"[i % 3], priority=1 + i % 11) for i in range(20)]
    res = Simulator(
        PROFILES,
        MACHINE_POLICIES.create(name),
        machine=fission_array(capacity),
        record_timeline=True,
    ).run(reqs)
    check_machine_invariants(res, reqs, capacity)
