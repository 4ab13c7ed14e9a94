"""Hypothesis property tests of the engine on random small profiles and workloads."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from npusched.policies.temporal import FCFS, HPF
from npusched.sim.engine import Simulator
from npusched.sim.events import TIME_TOL_S
from simhelpers import (
    assert_same_result,
    check_invariants,
    profiles_strategy,
    workload_strategy,
)

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(
    wl=workload_strategy(),
    preemptive=st.booleans(),
    mechanism=st.sampled_from(["checkpoint", "kill", "drain"]),
    point=st.sampled_from(["tile", "layer"]),
    cost=st.booleans(),
)
def test_hpf_invariants(
    wl: tuple, preemptive: bool, mechanism: str, point: str, cost: bool
) -> None:
    profiles, reqs = wl
    sim = Simulator(
        profiles,
        HPF(preemptive=preemptive, mechanism=mechanism),
        preemption_point=point,
        checkpoint_cost=cost,
        record_timeline=True,
    )
    res = sim.run(reqs)
    check_invariants(
        res,
        reqs,
        preemptive=preemptive,
        profiles=None if mechanism == "kill" else profiles,
        point=point,
        cost=cost,
    )
    cols = res.columns
    if mechanism != "kill":
        assert cols["wasted_s"].sum() == 0.0
    if mechanism != "checkpoint":
        assert cols["checkpoint_bytes"].sum() == 0
    if not cost:
        assert cols["checkpoint_s"].sum() == 0.0
    # Determinism, and the timeline does not change the results.
    assert_same_result(res, sim.run(reqs))
    quiet = Simulator(
        profiles,
        HPF(preemptive=preemptive, mechanism=mechanism),
        preemption_point=point,
        checkpoint_cost=cost,
    ).run(reqs)
    for k, v in cols.items():
        np.testing.assert_array_equal(quiet.columns[k], v, err_msg=k)
    assert quiet.busy_s == res.busy_s and quiet.events == res.events


@SETTINGS
@given(wl=workload_strategy())
def test_np_fcfs_serves_in_dispatch_order(wl: tuple) -> None:
    profiles, reqs = wl
    res = Simulator(profiles, FCFS(), record_timeline=True).run(reqs)
    check_invariants(res, reqs, preemptive=False)
    order = sorted(reqs, key=lambda r: (r.arrival_s, r.id))
    starts = [res.columns["first_start_s"][r.id] for r in order]
    assert starts == sorted(starts)
    # Work-conserving: the array is never idle while a job waits, so each job starts at
    # max(arrival, previous finish).
    t = 0.0
    for r in order:
        start = max(r.arrival_s, t)
        assert res.columns["first_start_s"][r.id] == pytest.approx(start, abs=1e-12)
        t = res.columns["finish_s"][r.id]


@SETTINGS
@given(wl=workload_strategy(max_requests=8))
def test_p_hpf_checkpoint_free_never_delays_top_priority(wl: tuple) -> None:
    """With free layer-granular checkpoints, a top-priority job waits at most one step of some
    other job per other job ahead of it of the same priority plus one step of a lower one."""
    profiles, reqs = wl
    res = Simulator(
        profiles, HPF(preemptive=True), preemption_point="layer", checkpoint_cost=False
    ).run(reqs)
    top = max(r.priority for r in reqs)
    max_step = max(float(p.latency_s.max()) for p in profiles.values())
    work_top_before = {}
    for r in reqs:
        if r.priority == top:
            work_top_before[r.id] = sum(
                profiles[o.network].isolated_latency()
                for o in reqs
                if o.priority == top and (o.arrival_s, o.id) < (r.arrival_s, r.id)
            )
    for rid, ahead in work_top_before.items():
        wait = res.columns["first_start_s"][rid] - res.columns["arrival_s"][rid]
        assert wait <= ahead + max_step + 1e-9


@SETTINGS
@given(profiles=profiles_strategy(max_networks=1), frac=st.floats(0.0, 1.0))
def test_plan_lookups_match_brute_force(profiles: dict, frac: float) -> None:
    """The plan's list-bisect look-ups the engine uses agree with a brute-force scan of the
    prefix sums, and a preemption point is a step end or tile boundary at or after the job."""
    plan = next(iter(profiles.values())).plan()
    cum = plan.cum_s
    total = plan.total_s
    positions = [frac * total, *cum.tolist(), *(c - TIME_TOL_S / 2 for c in cum[1:].tolist())]
    for e in positions:
        later = cum[cum >= e]
        assert plan.next_layer_boundary(e) == (later[0] if len(later) else cum[-1])
        ends_here = np.flatnonzero(cum[1:] == e)  # at a step end: that step's outputs
        if e <= 0.0 or e >= total:
            expect = 0
        elif len(ends_here):
            expect = int(plan.checkpoint_bytes[ends_here[-1]])
        else:  # inside a step: its partial outputs
            expect = int(plan.checkpoint_bytes[np.flatnonzero(cum[:-1] <= e)[-1]])
        assert plan.checkpoint_bytes_at(e) == expect, e
        if 0.0 < e < total:  # [0, e) is cut into pieces by the step ends inside it
            assert plan.steps_between(0.0, e) == 1 + np.count_nonzero((cum > 0.0) & (cum < e))
        for layer in (True, False):
            stop = plan.next_preemption_point(e, layer=layer, tol_s=TIME_TOL_S)
            assert stop >= e - TIME_TOL_S
            near = np.abs(cum - stop) <= TIME_TOL_S
            if near.any():
                assert stop in cum  # snapped exactly onto a step end
            else:
                assert not layer  # only a tile boundary lies inside a step
                k = int(np.searchsorted(cum, stop)) - 1
                tile = plan.latency_s[k] / plan.tiles[k]
                assert abs((stop - cum[k]) / tile - round((stop - cum[k]) / tile)) < 1e-6
                assert stop - e <= tile * (1 + 1e-9)
    assert plan.steps_between(0.0, total) == plan.steps


@SETTINGS
@given(wl=workload_strategy(), point=st.sampled_from(["tile", "layer"]))
def test_kill_wastes_exactly_the_progress_lost(wl: tuple, point: str) -> None:
    """Under KILL every killed run is thrown away whole and the job restarts at step 0.

    Replaying the timeline: a job's run pieces are separated by kills, the last piece is its
    whole isolated latency, the earlier pieces add up to ``wasted_s`` exactly, one preemption
    per killed piece, no save or restore ever happens, and every piece re-executes the plan's
    steps from the first one (``layer_executions``).
    """
    profiles, reqs = wl
    res = Simulator(
        profiles,
        HPF(preemptive=True, mechanism="kill"),
        preemption_point=point,
        record_timeline=True,
    ).run(reqs)
    check_invariants(res, reqs)
    cols = res.columns
    pieces: dict[int, list[float]] = {}
    for jid, s, e, kind, *_ in res.timeline or []:
        assert kind == "run"
        pieces.setdefault(jid, []).append(e - s)
    steps = 0
    for k, jid in enumerate(cols["id"].tolist()):
        mine = pieces[jid]
        cum = profiles[cols["network"][k]].plan().cum_s
        assert mine[-1] == pytest.approx(cols["isolated_s"][k], rel=1e-12, abs=1e-15)
        assert sum(mine[:-1]) == pytest.approx(cols["wasted_s"][k], rel=1e-12, abs=1e-15)
        assert cols["preemptions"][k] == len(mine) - 1
        assert cols["checkpoint_bytes"][k] == 0 and cols["checkpoint_s"][k] == 0.0
        # a killed piece of w seconds from step 0 is cut into 1 + (step ends inside it) steps
        steps += sum(1 + int(np.count_nonzero((cum > 0.0) & (cum < w))) for w in mine[:-1])
        steps += len(cum) - 1
    assert res.layer_executions == steps
    assert res.busy_s == pytest.approx(sum(map(sum, pieces.values())), rel=1e-12)
