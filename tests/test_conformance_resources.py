"""Every registered temporal policy on every resource kind it supports.

A temporal policy holds the whole of a one-resource machine; the resource decides the plan
variant: PREMA's NPU (one unit, no axes), a fission array of 16 units held whole (its units axis
``subarrays`` = 16), and one accelerator of an SoC (its fixed ``accelerator`` axis). The same
invariants as the main conformance suite hold on each: every request finishes exactly once, one
job at a time, finish >= arrival + isolated on the resource's variant, work conserved, and
deterministic.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import npusched.policies.temporal  # noqa: F401  (registers the built-in policies)
from npusched.hardware.profile import Profile
from npusched.policies.base import POLICIES
from npusched.sim import Machine, Resource, Simulator, fission_array, single_npu
from simhelpers import assert_same_result, check_invariants, workload_strategy

TEMPORAL = [
    n for n in POLICIES.names() if getattr(POLICIES.create(n), "kind", "temporal") == "temporal"
]


def with_axis(prof: Profile, axis: str, values: tuple, slow: dict) -> Profile:
    """``prof`` with a plan axis: each value's layers take ``slow[value]`` times as long."""
    rows = np.concatenate([prof.latency_s * slow[v] for v in values])
    reps = len(values)
    return Profile.from_tables(
        prof.network,
        device_name=prof.device_name,
        batch_sizes=prof.batch_sizes,
        latency_s=rows,
        frequency_hz=prof.frequency_hz,
        memory_bandwidth_bps=prof.memory_bandwidth_bps,
        tiles=np.tile(prof.tiles, (reps, 1)),
        checkpoint_bytes=np.tile(prof.checkpoint_bytes, (reps, 1)),
        energy_j=np.tile(prof.energy_j, (reps, 1)),
        axes=((axis, values),),
    )


def machine_case(kind: str, profiles: dict[str, Profile]) -> tuple[Machine, dict[str, Profile]]:
    if kind == "npu":
        return single_npu(), profiles
    if kind == "fission-array":
        subs = tuple(range(1, 17))
        return fission_array(16), {
            k: with_axis(p, "subarrays", subs, {u: 16.0 / u for u in subs})
            for k, p in profiles.items()
        }
    dla = Machine.of(Resource("dla", "dla", 1, fixed={"accelerator": "dla"}))
    return dla, {
        k: with_axis(p, "accelerator", ("gpu", "dla"), {"gpu": 1.0, "dla": 2.0})
        for k, p in profiles.items()
    }


@pytest.mark.parametrize("kind", ["npu", "fission-array", "soc-accelerator"])
@pytest.mark.parametrize("name", TEMPORAL)
@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(wl=workload_strategy(), point=st.sampled_from(["tile", "layer"]))
def test_temporal_policy_on_resource_kind(name: str, kind: str, wl: tuple, point: str) -> None:
    base, reqs = wl
    machine, profiles = machine_case(kind, base)
    pol = POLICIES.create(name)
    sim = Simulator(
        profiles, pol, machine=machine, preemption_point=point, record_timeline=True
    )
    res = sim.run(reqs)
    check_invariants(res, reqs, preemptive=pol.preemptive, point=point)
    # Isolated latency is the resource's variant: the whole array, or the slower DLA.
    scale = 2.0 if kind == "soc-accelerator" else 1.0
    ref = Simulator(base, POLICIES.create(name)).run(reqs)
    np.testing.assert_allclose(
        res.columns["isolated_s"], ref.columns["isolated_s"] * scale, rtol=1e-12
    )
    units = {s.units for s in res.timeline or []}
    assert units <= {machine.resources[0].capacity}
    assert set(res.columns["resource"].tolist()) == {machine.resources[0].name}
    assert_same_result(res, sim.run(reqs))
