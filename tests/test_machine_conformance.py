"""The conformance suite every registered machine policy must pass (``MACHINE_POLICIES``).

The machine counterpart of ``test_conformance.py`` (which covers ``POLICIES``, the temporal
ones). Each policy runs on the setting it is built for: a policy that names a ``units_axis``
(Planaria: ``subarrays``) on a 16-unit fission array with hand-built profiles whose axis speeds
layers up; the others (the batching policies) on one NPU serving early-exit networks compiled
for batch sizes 1..8, each sample leaving at a random exit. Each policy must never lose or duplicate a request, never hold more units of
a resource than its capacity (a sweep over the timeline's ``Segment.units``), finish no request
before ``arrival + isolated`` (isolated = its fastest variant), be deterministic (the same
simulator twice and a fresh policy), and leave its parameters and the requests unchanged.
"""

from __future__ import annotations

import copy
import functools
import itertools

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from npusched.base import clone
from npusched.hardware import compile_profile
from npusched.hardware.profile import Profile
from npusched.hardware.soc import SocDevice
from npusched.models import get_network
from npusched.models.ir import ExitPoint, Layer, LayerKind, make_network
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
from npusched.sim.resources import Machine, fission_array, single_npu, soc
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
    assert {"Planaria", "FluidB", "AdaptB", "SERIAL", "LazyBatching", "HaX-CoNN"} <= set(NAMES)
    check_disjoint()
    assert set(all_policy_names()) == set(POLICIES.names()) | set(NAMES)
    assert policy_kind("Planaria") == "machine" and policy_kind("P-PREMA") == "temporal"
    assert get_any_policy("planaria").name == "Planaria"  # case-insensitive fallback


@pytest.mark.parametrize("name", NAMES)
def test_protocol(name: str) -> None:
    pol = MACHINE_POLICIES.create(name)
    assert isinstance(pol, MachinePolicy)
    assert pol.kind == "machine"
    assert pol.name.lower().replace("-", "") == name.lower().replace("-", "")
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


def _exit_profile() -> Profile:
    """An early-exit network served at batch sizes 1..8: six layers, exits after layers 1 and
    3; a batch of ``b`` takes ``1 + 0.6 (b - 1)`` times a sample's time (batching pays)."""
    lat = np.array([1.0, 2.0, 1.0, 3.0, 1.0, 2.0]) * MS
    layers = [
        Layer(name=f"l{i}", kind=LayerKind.VECTOR, inputs=(f"l{i - 1}",) if i else ())
        for i in range(len(lat))
    ]
    net = make_network(
        "e", layers, exits=(ExitPoint(name="x0", after=1), ExitPoint(name="x1", after=3))
    )
    rows = np.stack([lat * (1.0 + 0.6 * (b - 1)) for b in range(1, 9)])
    return Profile.from_tables(
        net,
        device_name="hand-built",
        batch_sizes=tuple(range(1, 9)),
        latency_s=rows,
        frequency_hz=1e9,
        memory_bandwidth_bps=1e9,
        energy_j=rows * 10.0,
    )


SPATIAL = _profiles()
BATCHING = {"e": _exit_profile()}
SOC_NETS = ("resnet-18", "googlenet")


@functools.cache
def _soc_profiles() -> dict:
    dev = SocDevice(soc="orin")
    return {n: compile_profile(get_network(n), dev, (1,)) for n in SOC_NETS}


def is_spatial(name: str) -> bool:
    """A policy that allocates units of a resource selecting a plan axis (Planaria)."""
    return getattr(MACHINE_POLICIES.get(name), "units_axis", None) is not None


def is_soc(name: str) -> bool:
    """A policy mapping layer groups onto an SoC's accelerators (HaX-CoNN)."""
    return "soc" in getattr(MACHINE_POLICIES.get(name), "_param_names", lambda: ())()


def kind_of(name: str) -> str:
    return "spatial" if is_spatial(name) else "soc" if is_soc(name) else "batching"


def setting(name: str, capacity: int = 16) -> tuple[dict, Machine, dict[str, int]]:
    """``(profiles, machine, capacities)`` the policy runs on."""
    if is_spatial(name):
        return SPATIAL, fission_array(capacity), {"array": capacity}
    if is_soc(name):
        return _soc_profiles(), soc(("GPU", "DLA")), {"GPU": 1, "DLA": 1}
    return BATCHING, single_npu(), {"npu": 1}


def _network(draw: st.DrawFn, kind: str) -> str:
    if kind == "spatial":
        return draw(st.sampled_from(sorted(SPATIAL)))
    return draw(st.sampled_from(SOC_NETS)) if kind == "soc" else "e"


@st.composite
def machine_workload(draw: st.DrawFn, kind: str) -> list[Request]:
    n = draw(st.integers(1, 4 if kind == "soc" else 12))
    reqs = []
    for i in range(n):
        slo = draw(st.one_of(st.none(), st.integers(1, 60)))
        reqs.append(
            Request(
                id=i,
                arrival_s=draw(st.integers(0, 40)) * 0.5 * MS,
                network=_network(draw, kind),
                priority=draw(st.integers(1, 11)),
                slo_s=None if slo is None else slo * MS,
                exit=draw(st.integers(0, 2)) if kind == "batching" else None,
            )
        )
    return reqs


def _alone_to_exit(r: Request, whole_s: float) -> float:
    """Seconds a request takes alone, computed independently of the engine: ``whole_s`` (the
    whole plan), or for a sample leaving at an intermediate exit, batch 1 up to that exit."""
    if r.exit is None or r.network not in BATCHING:
        return whole_s
    plan = BATCHING[r.network].plan(1)
    return float(plan.cum_s[plan.exits[r.exit]]) if r.exit < len(plan.exits) else whole_s


def check_machine_invariants(
    res: object, reqs: list[Request], caps: dict[str, int]
) -> None:
    cols = res.columns  # type: ignore[attr-defined]
    ids = cols["id"].tolist()
    assert sorted(ids) == sorted(r.id for r in reqs) and len(set(ids)) == len(ids)
    fin = cols["finish_s"]
    assert np.all(np.isfinite(fin)), "a request never finished"
    # no request beats its latency alone (isolated_s: on the fastest variant, up to its exit)
    by_id = {r.id: r for r in reqs}
    alone = cols["isolated_s"]
    for i, t in zip(ids, alone, strict=True):
        r = by_id[int(i)]
        if r.exit is not None and r.network in BATCHING:
            whole = BATCHING[r.network].plan(1).total_s
            assert t == pytest.approx(_alone_to_exit(r, whole), abs=1e-15)
    assert np.all(fin >= cols["arrival_s"] + alone - 1e-12)
    assert np.all(cols["first_start_s"] >= cols["arrival_s"] - 1e-12)
    assert np.all(cols["checkpoint_s"] >= 0.0) and np.all(cols["wasted_s"] >= 0.0)
    check_capacity(res, caps)
    runs = [s for s in res.timeline if s.kind == "run"]  # type: ignore[attr-defined]
    assert {s.job_id for s in runs} <= set(ids)
    assert all(1 <= s.units <= caps[s.resource] and s.end_s >= s.start_s for s in runs)


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), cost=st.booleans(), point=st.sampled_from(["tile", "layer"]))
def test_invariants_on_random_workloads(
    name: str, data: st.DataObject, cost: bool, point: str
) -> None:
    if is_soc(name) and (cost or point == "layer"):
        return  # HaX-CoNN stops jobs only at group ends, free of cost: one setting suffices
    reqs = data.draw(machine_workload(kind_of(name)))
    profiles, machine, caps = setting(name)
    pol = MACHINE_POLICIES.create(name)
    before = params(pol)
    frozen = copy.deepcopy(reqs)

    def sim(policy: object) -> Simulator:
        return Simulator(
            profiles,
            policy,
            machine=machine,
            record_timeline=True,
            checkpoint_cost=cost,
            preemption_point=point,
        )

    s = sim(pol)
    res = s.run(reqs)
    check_machine_invariants(res, reqs, caps)
    assert params(pol) == before, "a run mutated the policy's parameters"
    assert reqs == frozen, "a run mutated the requests"
    assert_same_result(res, s.run(reqs))
    assert_same_result(res, sim(MACHINE_POLICIES.create(name)).run(reqs))


def _busy_requests(spatial: bool, n: int = 150) -> list[Request]:
    rng = np.random.default_rng(11)
    nets = rng.choice(sorted(SPATIAL), size=n) if spatial else np.full(n, "e")
    gaps = rng.exponential(1.5 * MS if spatial else 2.0 * MS, size=n)
    return [
        Request(
            id=i,
            arrival_s=float(t),
            network=str(net),
            priority=int(rng.integers(1, 12)),
            slo_s=float(rng.choice([5 * MS, 20 * MS, 100 * MS])),
            exit=None if spatial else int(rng.integers(0, 3)),
        )
        for i, (t, net) in enumerate(zip(np.cumsum(gaps), nets, strict=True))
    ]


@pytest.mark.parametrize("name", NAMES)
def test_busy_mixed_workload(name: str) -> None:
    """A dense overload (150 requests, tight and loose QoS, all priorities)."""
    if is_soc(name):
        pytest.skip("HaX-CoNN solves a CP-SAT model per arrival: the random suite covers it")
    spatial = is_spatial(name)
    reqs = _busy_requests(spatial)
    profiles, machine, caps = setting(name)
    res = Simulator(
        profiles, MACHINE_POLICIES.create(name), machine=machine, record_timeline=True
    ).run(reqs)
    check_machine_invariants(res, reqs, caps)
    if spatial:  # several jobs shared the array at some instant (a spatial policy co-locates)
        runs = sorted((s.start_s, s.end_s) for s in res.timeline if s.kind == "run")
        assert any(b[0] < a[1] - 1e-12 for a, b in itertools.pairwise(runs))


@pytest.mark.parametrize("name", [n for n in NAMES if is_spatial(n)])
@pytest.mark.parametrize("capacity", [4, 8])
def test_smaller_arrays(name: str, capacity: int) -> None:
    """A spatial policy reads the capacity from the machine, not a constant 16."""
    reqs = [Request(i, i * 0.2 * MS, "pqr"[i % 3], priority=1 + i % 11) for i in range(20)]
    profiles, machine, caps = setting(name, capacity)
    res = Simulator(
        profiles, MACHINE_POLICIES.create(name), machine=machine, record_timeline=True
    ).run(reqs)
    check_machine_invariants(res, reqs, caps)


def test_merged_sample_first_start_not_before_its_arrival() -> None:
    """A sample merged into a batch keeps its own first start (its catch-up run), never the
    batch's earlier one."""
    reqs = [Request(0, 0.0, "e", exit=1), Request(1, 0.5 * MS, "e", exit=1)]
    res = Simulator(BATCHING, MACHINE_POLICIES.create("FluidB"), machine=single_npu()).run(reqs)
    cols = res.columns
    assert np.all(cols["first_start_s"] >= cols["arrival_s"])
