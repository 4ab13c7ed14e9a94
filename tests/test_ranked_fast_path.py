"""The rank and remaining orders (FCFS, HPF, SJF), which the engine decides on its own heap
(``declared_order``): the runs that compared the column loop with the general loop until the
twenty-eighth round, now checked against the values frozen from them (``tests/golden_loops.py``)
or against the policy deciding through its own ``select`` (``simhelpers.by_select``)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import golden_loops
from npusched.bench import bench_workload, synthetic_profiles
from npusched.policies.base import POLICIES
from npusched.policies.temporal.mechanism import RankedPolicy
from npusched.policies.temporal.predictor import make_estimator
from npusched.sim import heaps, records
from npusched.sim.engine import Simulator, _Run
from npusched.workloads.request import Request
from simhelpers import assert_same_outcome, assert_same_result, by_select, make_profile

SETTINGS = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
#: Every registered rank-order policy (a RankedPolicy with a queue_key).
RANKED = tuple(
    name
    for name in POLICIES.names()
    if isinstance(p := POLICIES.create(name), RankedPolicy) and p.queue_key is not None
)
MECHANISMS = ("checkpoint", "kill", "drain", "dynamic", "dynamic-kill")


def _run(profiles: dict, reqs: list[Request], name: str, mechanism: str, **kw: object) -> object:
    return Simulator(profiles, POLICIES.create(name, mechanism=mechanism), **kw).run(reqs)


def _assert_identical(a: object, b: object) -> None:
    assert_same_result(a, b)
    for attr in ("energy_j", "end_s", "resources", "policy"):
        assert getattr(a, attr) == getattr(b, attr), attr


@st.composite
def energy_workload(draw: st.DrawFn) -> tuple[dict, list[Request]]:
    """Random profiles with per-layer energy, tiles and checkpoint bytes, and requests on a
    10 us grid (ties) with priorities 1/3/9."""
    profiles = {}
    for i in range(draw(st.integers(1, 3))):
        n = draw(st.integers(1, 6))
        lat = draw(st.lists(st.integers(0, 1000), min_size=n, max_size=n))
        if sum(lat) == 0:
            lat[0] = 1
        profiles[f"n{i}"] = make_profile(
            f"n{i}",
            [x * 1e-6 for x in lat],
            tiles=draw(st.lists(st.integers(1, 4), min_size=n, max_size=n)),
            checkpoint_bytes=draw(st.lists(st.integers(0, 64_000), min_size=n, max_size=n)),
            energy_j=draw(st.lists(st.floats(0.0, 1e-3), min_size=n, max_size=n)),
        )
    names = sorted(profiles)
    reqs = [
        Request(
            id=i,
            arrival_s=draw(st.integers(0, 300)) * 1e-5,
            network=draw(st.sampled_from(names)),
            priority=draw(st.sampled_from([1, 3, 9])),
        )
        for i in range(draw(st.integers(1, 14)))
    ]
    return profiles, reqs


#: Every declared ready order: rank (FCFS, HPF), remaining (SJF) and the token orders.
DECLARED = (*RANKED, "NP-SJF", "P-SJF", "NP-PREMA", "P-PREMA", "NP-TOKEN", "P-TOKEN")


@SETTINGS
@given(
    wl=energy_workload(),
    name=st.sampled_from(DECLARED),
    mechanism=st.sampled_from(MECHANISMS),
    point=st.sampled_from(["tile", "layer"]),
    cost=st.booleans(),
    until=st.one_of(st.none(), st.integers(0, 400).map(lambda x: x * 1e-5)),
)
def test_timeline_and_until_of_the_declared_orders_equal_select(
    wl: tuple, name: str, mechanism: str, point: str, cost: bool, until: float | None
) -> None:
    """With ``record_timeline`` and ``until``, the engine's own decisions on a declared order
    write the same ``Segment`` entries (run, restore, save) in the same order as the policy
    deciding through its ``select`` (``by_select``), and stop where it stops, with the same
    partial records (nan finish, no resource, no estimate for requests that never arrived).
    (Until the twenty-eighth round: the column loop against the general loop.)"""
    profiles, reqs = wl
    # NP-SJF, NP-PREMA and NP-TOKEN take no mechanism; only FCFS and HPF DRAIN
    if mechanism == "drain" and name not in RANKED:
        mechanism = "checkpoint"
    mech = {} if name in ("NP-SJF", "NP-PREMA", "NP-TOKEN") else {"mechanism": mechanism}
    kw = dict(preemption_point=point, checkpoint_cost=cost, record_timeline=True)
    runs = []
    for reference in (False, True):
        pol = POLICIES.create(name, **mech)  # type: ignore[arg-type]
        sim = Simulator(profiles, by_select(pol) if reference else pol, **kw)  # type: ignore[arg-type]
        runs.append(golden_loops.outcome(sim, reqs, until))
    assert_same_outcome(runs[0], runs[1])
    if not isinstance(runs[0], tuple):
        assert runs[0].timeline is not None


@pytest.mark.parametrize("name", golden_loops.RANKED)
@pytest.mark.parametrize("mechanism", golden_loops.MECHANISMS)
def test_ranked_orders_at_load_equal_the_frozen_runs(name: str, mechanism: str) -> None:
    """2,000 requests at load 0.9 on the bench's synthetic profiles with a noisy predictor:
    thousands of preemptions, restores and ties, equal to the last bit to the run both loops
    gave at dbd9f47."""
    res = golden_loops.frozen(f"ranked-load/{name}/{mechanism}")
    if name.startswith("P-HPF") and mechanism != "drain":
        assert res.columns["preemptions"].sum() > 100


def test_progress_reports() -> None:
    """The progress callback's counts of finished requests: about 100 calls, never
    decreasing, the last one all of them; the same for the same run again."""
    profiles = synthetic_profiles(random_state=1)
    reqs = bench_workload(500, profiles, random_state=2)
    seen: list[list[int]] = [[], []]
    for got in seen:
        Simulator(profiles, POLICIES.create("P-HPF")).run(reqs, progress=got.append)
    assert seen[0] == seen[1] and seen[0][-1] == 500
    assert seen[0] == sorted(seen[0]) and 50 <= len(seen[0]) <= 501


def test_the_ranked_policies_are_found() -> None:
    assert {"NP-FCFS", "P-FCFS", "NP-HPF", "P-HPF"} <= set(RANKED)


@pytest.mark.parametrize("name", ["P-HPF", "P-FCFS", "P-PREMA", "P-TOKEN"])
@pytest.mark.parametrize("mechanism", ["checkpoint", "kill", "dynamic"])
def test_power_pieces_equal_the_frozen_runs(name: str, mechanism: str) -> None:
    """With ``record_power`` (every ``run_config`` run) the power pieces, in their order, and
    the power timeline are the frozen run's to the last bit (its digest holds both); the
    pieces are the timeline's."""
    res = golden_loops.frozen(f"ranked-power/{name}/{mechanism}")
    assert len(res.power) > 300
    times, watts = res.power_timeline()
    assert len(times) == len(watts) > len(res.power)


@pytest.mark.parametrize("mechanism", ["kill", "checkpoint"])
def test_superseded_completion_sets_the_clock_of_a_wake(mechanism: str) -> None:
    """A preemption leaves the victim's old completion event in the general loop's queue: it
    opens a wake at its own time, and an arrival 1 ulp later (within TIME_TOL_S) is handled at
    that clock. The engine keeps those times on its declared order too and gives the same
    clock (here: C's first start, the work A had done when C preempted it)."""
    profiles, reqs = golden_loops.superseded_system()
    t_a = profiles["a"].plan(1).total_s  # A's first completion, superseded by B
    res = golden_loops.frozen(f"superseded/{mechanism}")
    assert res.columns["first_start_s"][2] == t_a < reqs[2].arrival_s
    ref = Simulator(
        profiles, by_select(POLICIES.create("P-HPF", mechanism=mechanism)), preemption_point="tile"
    ).run(reqs)
    _assert_identical(res, ref)


@pytest.mark.parametrize("name", RANKED)
def test_queue_keys_that_are_not_ints(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Queue keys other than ints (here the policy's own as floats and as tuples, with ties) are
    ranked densely into the engine's int heap entries: same pops as a heap of
    ``(queue_key, order)``, so the same run as the policy's own int keys."""
    profiles = synthetic_profiles(random_state=4)
    reqs = bench_workload(300, profiles, random_state=6)
    own_keys = _run(profiles, reqs, name, "checkpoint", preemption_point="tile")
    cls = type(POLICIES.create(name))
    own = cls.queue_key
    for key in (lambda r: float(own(r)), lambda r: (own(r), "same")):
        monkeypatch.setattr(cls, "queue_key", staticmethod(key))
        got = _run(profiles, reqs, name, "checkpoint", preemption_point="tile")
        _assert_identical(got, own_keys)


def test_heap_keys_order_as_key_then_dispatch_order() -> None:
    qkey = [(1, 2.0), (0, 5.0), (1, 2.0), (0, -1.0), (1, 0.5)]
    entries = heaps.heap_keys(list(qkey))
    n = len(qkey)
    assert [e % n for e in entries] == list(range(n))
    assert sorted(range(n), key=entries.__getitem__) == sorted(range(n), key=lambda k: (qkey[k], k))
    ints = heaps.heap_keys([-9, -1, -9, 0])
    assert ints == [-9 * 4 + 0, -1 * 4 + 1, -9 * 4 + 2, 0 * 4 + 3]
    assert all(type(e) is int for e in ints)
    assert heaps.heap_keys([]) == []
    # Ints beyond int64 (Python arithmetic) and bools mixed with ints (dense ranks).
    for keys in ([2**70, -(2**70), 5, 2**70], [True, 2, False, True], [2**64, 3]):
        m = len(keys)
        entries = heaps.heap_keys(list(keys))
        assert [e % m for e in entries] == list(range(m))
        assert sorted(range(m), key=entries.__getitem__) == sorted(
            range(m), key=lambda k: (keys[k], k)
        )


def test_write_records_sparse_and_dense_agree() -> None:
    """``write_records`` with ``touched`` (the rows a preemption touched) writes the same
    columns as with dense lists, rows scattered by ``arrival_rows``."""
    profiles = {"a": make_profile("a", [1e-3, 2e-3])}
    reqs = [Request(id=i, arrival_s=1e-3 * (5 - i), network="a") for i in range(5)]
    sim = Simulator(profiles, POLICIES.create("P-HPF"))
    npre, cbytes = [0, 2, 0, 1, 0], [0, 64, 0, 8, 0]
    csec, wasted = [0.0, 1e-6, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 3e-4, 0.0]
    est = [0.1, 0.2, 0.3, 0.4, 0.5]
    cols = {}
    for touched in (None, [3, 1]):
        run = _Run(sim, reqs, None, None)
        records.write_records(
            run, run.arrival_rows, est, npre, cbytes, csec, wasted, touched=touched
        )
        cols[touched is None] = {
            name: np.asarray(getattr(run, name))
            for name in ("col_est", "col_preempt", "col_cbytes", "col_cs", "col_wasted")
        }
        rows = np.asarray(run.arrival_rows)
    for name, col in cols[True].items():
        np.testing.assert_array_equal(col, cols[False][name], strict=True)
    np.testing.assert_array_equal(cols[True]["col_preempt"][rows], npre)
    np.testing.assert_array_equal(cols[True]["col_est"][rows], est)


@pytest.mark.parametrize("name", ["P-HPF", "P-FCFS"])
def test_a_better_that_is_not_an_operator(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """``better`` other than ``operator.gt`` / ``operator.lt`` is called (the engine writes
    those two out as comparisons), with the same run as the policy's own."""
    profiles = synthetic_profiles(random_state=2)
    reqs = bench_workload(300, profiles, random_state=7)
    plain = _run(profiles, reqs, name, "checkpoint", preemption_point="tile")
    cls = type(POLICIES.create(name))
    own = cls.better
    calls = []

    def better(a: object, b: object) -> bool:
        calls.append(1)
        return bool(own(a, b))

    monkeypatch.setattr(cls, "better", staticmethod(better))
    got = _run(profiles, reqs, name, "checkpoint", preemption_point="tile")
    _assert_identical(got, plain)
    assert calls


#: SJF (``ready_order = "remaining"``) and the mechanisms it takes.
SJF_RUNS = golden_loops.SJF_RUNS


def _both_sjf(profiles: dict, reqs: list[Request], i: int, **kw: object) -> tuple:
    """SJF run ``i`` on the engine's heap and deciding through its ``select``."""
    name, params = SJF_RUNS[i]
    runs = []
    for reference in (False, True):
        pol = POLICIES.create(name, **params)
        runs.append(Simulator(profiles, by_select(pol) if reference else pol, **kw).run(reqs))
    return runs[0], runs[1]


@SETTINGS
@given(
    wl=energy_workload(),
    i=st.integers(0, len(SJF_RUNS) - 1),
    point=st.sampled_from(["tile", "layer"]),
    cost=st.booleans(),
    noisy=st.booleans(),
)
def test_sjf_heap_equals_select(wl: tuple, i: int, point: str, cost: bool, noisy: bool) -> None:
    """SJF on the engine's heap (ready entries keyed by remaining estimate when a job enters
    the queue; the running job's remaining estimate read at each decision) is the policy's
    ``select``'s result to the last bit, with the isolated latencies (many ties) or a noisy
    predictor. (Until the twenty-eighth round: the column loop against the general loop.)"""
    profiles, reqs = wl
    est = make_estimator("prema") if noisy else None
    got, ref = _both_sjf(
        profiles, reqs, i, preemption_point=point, checkpoint_cost=cost, estimator=est
    )
    _assert_identical(got, ref)
    assert got.events == ref.events


@pytest.mark.parametrize("i", range(len(SJF_RUNS)))
def test_sjf_at_load_equals_the_frozen_run(i: int) -> None:
    """1,500 requests at load 0.9, PREMA's predictor: the run both loops gave at dbd9f47."""
    res = golden_loops.frozen(f"sjf-load/{i}")
    if i:
        assert res.columns["preemptions"].sum() > 100


def test_declared_orders() -> None:
    """The orders the engine keeps (``declared_order``), and a subclass that decides its own
    way declares none (the engine calls its ``select``)."""
    from npusched.policies.base import POLICIES
    from npusched.policies.contract import declared_order
    from npusched.policies.temporal.prema import PPrema

    want = {
        "NP-FCFS": "rank",
        "P-HPF": "rank",
        "NP-SJF": "remaining",
        "P-SJF": "remaining",
        "NP-PREMA": "tokens-remaining",
        "P-PREMA": "tokens-remaining",
        "NP-TOKEN": "tokens-arrival",
        "P-TOKEN": "tokens-arrival",
        "NP-RRB": "round-robin",
        "P-RRB": "round-robin",
    }
    for name, order in want.items():
        assert declared_order(POLICIES.create(name)) == order, name

    class OwnThreshold(PPrema):
        def threshold_of(self, jobs):  # type: ignore[no-untyped-def]
            return super().threshold_of(jobs)

    assert declared_order(OwnThreshold()) is None
