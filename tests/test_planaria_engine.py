"""PlanariaPolicy on the engine core: several jobs at once on disjoint subarray sets, each at
its allocation's plan variant; never oversubscribed; deterministic; Algorithm 1's counts."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from npusched.hardware import compile_profile
from npusched.hardware.fission import FissionArray
from npusched.models import get_network
from npusched.policies.spatial import PlanariaPolicy
from npusched.sim.engine import Simulator
from npusched.sim.resources import fission_array
from npusched.workloads.planaria import WORKLOADS, planaria_workload
from npusched.workloads.request import Request

FA = FissionArray()


def profiles(names: tuple[str, ...] = WORKLOADS["C"]) -> dict:
    return {n: compile_profile(get_network(n), FA) for n in names}


def run(requests: list[Request], profs: dict, timeline: bool = False):  # type: ignore[no-untyped-def]
    sim = Simulator(profs, PlanariaPolicy(), machine=fission_array(), record_timeline=timeline)
    return sim.run(requests)


def max_units_in_use(segments) -> int:  # type: ignore[no-untyped-def]
    """Peak sum of units over overlapping timeline segments."""
    events = sorted(
        [(s.start_s, s.units) for s in segments] + [(s.end_s, -s.units) for s in segments],
        key=lambda e: (e[0], e[1]),  # releases before acquisitions at the same instant
    )
    level = peak = 0
    for _, du in events:
        level += du
        peak = max(peak, level)
    return peak


def test_workload_c_runs_deterministic_never_oversubscribed() -> None:
    profs = profiles()
    reqs = planaria_workload("C", "S", 80.0, n_requests=120, random_state=5)
    a = run(reqs, profs, timeline=True)
    b = run(reqs, profs)
    fa, fb = a.to_frame(), b.to_frame()
    assert not fa["finish_s"].isna().any()
    assert fa.drop(columns=["resource"]).equals(fb.drop(columns=["resource"]))
    assert max_units_in_use(a.timeline) <= 16
    # co-location happened: some instant had two jobs on the array at once
    segs = [s for s in a.timeline if s.kind == "run"]
    starts = sorted((s.start_s, s.end_s) for s in segs)
    assert any(s2 < e1 - 1e-12 for (s1, e1), (s2, _) in itertools.pairwise(starts))
    # no request beats its latency alone on all 16 subarrays
    iso16 = np.array(
        [
            profs[r.network].isolated_latency(r.batch, r.seq_in, r.seq_out, subarrays=16)
            for r in sorted(reqs, key=lambda r: r.id)
        ]
    )
    lat = fa.sort_values("id")["latency_s"].to_numpy()
    assert (lat >= iso16 - 1e-9).all()


def test_two_tasks_split_by_algorithm_1() -> None:
    """Two ResNet-50 requests at t=0 with loose QoS: each needs 1 subarray (ESTIMATERESOURCES),
    the 14 spare split by priority / remaining time (3 : 1 -> 10.5 : 3.5 -> 11 : 3 after the
    largest-remainder tie goes to the higher score)."""
    profs = profiles(("resnet-50",))
    reqs = [
        Request(0, 0.0, "resnet-50", priority=3, slo_s=1.0),
        Request(1, 0.0, "resnet-50", priority=1, slo_s=1.0),
    ]
    res = run(reqs, profs, timeline=True)
    first = {s.job_id: s.units for s in res.timeline if s.kind == "run" and s.start_s == 0.0}
    assert first == {0: 12, 1: 4}
    df = res.to_frame().set_index("id")
    p = profs["resnet-50"]
    # job 1 runs on 4 subarrays until job 0 completes, then gets all 16
    assert df.loc[0, "latency_s"] == pytest.approx(p.isolated_latency(1, subarrays=12), rel=1e-6)
    assert df.loc[1, "finish_s"] < p.isolated_latency(1, subarrays=4)
    assert df.loc[1, "preemptions"] >= 1  # re-allocated once (4 -> 16)


def test_unfit_queue_waits_and_runs_later() -> None:
    """Eight heavy requests with tight QoS do not fit: the highest scores run first, the rest
    wait; all finish and the array is never oversubscribed."""
    profs = profiles(("ssd-resnet34",))
    reqs = [Request(i, 0.0, "ssd-resnet34", priority=1 + i, slo_s=0.03) for i in range(8)]
    res = run(reqs, profs, timeline=True)
    df = res.to_frame()
    assert not df["finish_s"].isna().any()
    assert max_units_in_use(res.timeline) <= 16
    started_at_0 = {s.job_id for s in res.timeline if s.kind == "run" and s.start_s == 0.0}
    assert 7 in started_at_0 and 0 not in started_at_0  # priority order on equal slack
