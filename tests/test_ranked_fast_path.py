"""The column loop (:mod:`npusched.sim.columns`) gives exactly the general loop's result for
the rank and remaining orders (FCFS, HPF, SJF)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from npusched.bench import bench_workload, synthetic_profiles
from npusched.policies.base import POLICIES
from npusched.policies.temporal import HPF
from npusched.policies.temporal.mechanism import RankedPolicy
from npusched.policies.temporal.predictor import make_estimator
from npusched.sim import columns, heaps, records
from npusched.sim.engine import Simulator, _Run
from npusched.workloads.request import Request
from simhelpers import assert_same_result, jobs_made, make_profile

SETTINGS = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
#: Every registered policy that can take the fast path (a RankedPolicy with a queue_key).
RANKED = tuple(
    name
    for name in POLICIES.names()
    if isinstance(p := POLICIES.create(name), RankedPolicy) and p.queue_key is not None
)
MECHANISMS = ("checkpoint", "kill", "drain", "dynamic", "dynamic-kill")


def _both(profiles: dict, reqs: list[Request], name: str, mechanism: str, **kw: object) -> tuple:
    runs = []
    for fast in (True, False):
        sim = Simulator(profiles, POLICIES.create(name, mechanism=mechanism), fast_path=fast, **kw)
        runs.append(sim.run(reqs))
    return runs[0], runs[1]


def _assert_identical(fast: object, general: object) -> None:
    assert_same_result(fast, general)
    for attr in ("energy_j", "end_s", "resources", "policy"):
        assert getattr(fast, attr) == getattr(general, attr), attr


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


@SETTINGS
@given(
    wl=energy_workload(),
    name=st.sampled_from(RANKED),
    mechanism=st.sampled_from(MECHANISMS),
    point=st.sampled_from(["tile", "layer"]),
    cost=st.booleans(),
)
def test_fast_path_equals_general_loop(
    wl: tuple, name: str, mechanism: str, point: str, cost: bool
) -> None:
    profiles, reqs = wl
    fast, general = _both(
        profiles, reqs, name, mechanism, preemption_point=point, checkpoint_cost=cost
    )
    _assert_identical(fast, general)


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
def test_timeline_and_until_on_the_column_loop_equal_general_loop(
    wl: tuple, name: str, mechanism: str, point: str, cost: bool, until: float | None
) -> None:
    """``record_timeline`` and ``until`` no longer send a run to the general loop: the column
    loop writes the same ``Segment`` entries (run, restore, save) in the same order, and stops
    where the general loop stops, with the same partial records (nan finish, no resource, no
    estimate for requests that never arrived)."""
    profiles, reqs = wl
    # NP-SJF, NP-PREMA and NP-TOKEN take no mechanism; only FCFS and HPF DRAIN
    if mechanism == "drain" and name not in RANKED:
        mechanism = "checkpoint"
    mech = {} if name in ("NP-SJF", "NP-PREMA", "NP-TOKEN") else {"mechanism": mechanism}
    kw = dict(preemption_point=point, checkpoint_cost=cost, record_timeline=True)
    runs = []
    for fast in (True, False):
        sim = Simulator(profiles, POLICIES.create(name, **mech), fast_path=fast, **kw)  # type: ignore[arg-type]
        assert columns.applies(_Run(sim, reqs, until, None)) == fast
        runs.append(sim.run(reqs, until=until))
    fast_r, general = runs
    assert fast_r.timeline is not None and fast_r.timeline == general.timeline
    _assert_identical(fast_r, general)


@pytest.mark.parametrize("name", RANKED)
@pytest.mark.parametrize("mechanism", MECHANISMS)
def test_fast_path_equals_general_loop_at_load(name: str, mechanism: str) -> None:
    """2,000 requests at load 0.9 on the bench's synthetic profiles with a noisy predictor:
    thousands of preemptions, restores and ties, identical to the last bit."""
    profiles = synthetic_profiles(random_state=3)
    reqs = bench_workload(2_000, profiles, random_state=5)
    fast, general = _both(
        profiles, reqs, name, mechanism, preemption_point="tile", estimator=make_estimator("prema")
    )
    _assert_identical(fast, general)
    if name.startswith("P-HPF") and mechanism != "drain":
        assert fast.columns["preemptions"].sum() > 100


def test_progress_reports_match() -> None:
    profiles = synthetic_profiles(random_state=1)
    reqs = bench_workload(500, profiles, random_state=2)
    seen: dict[bool, list[int]] = {True: [], False: []}
    for fast in (True, False):
        Simulator(profiles, POLICIES.create("P-HPF"), fast_path=fast).run(
            reqs, progress=seen[fast].append
        )
    assert seen[True] == seen[False] and seen[True][-1] == 500


def test_the_ranked_policies_are_found() -> None:
    assert {"NP-FCFS", "P-FCFS", "NP-HPF", "P-HPF"} <= set(RANKED)


def test_applies_only_where_the_result_is_the_same() -> None:
    profiles = {"a": make_profile("a", [1e-3, 2e-3])}
    reqs = [Request(id=0, arrival_s=0.0, network="a")]

    def takes(policy: object, **kw: object) -> bool:
        until = kw.pop("until", None)
        sim = Simulator(profiles, policy, **kw)  # type: ignore[arg-type]
        return columns.applies(_Run(sim, reqs, until, None))  # type: ignore[arg-type]

    assert takes(POLICIES.create("P-HPF"))
    assert takes(POLICIES.create("NP-FCFS"))
    assert takes(POLICIES.create("P-HPF"), record_power=True)  # the CLI's runs
    assert not takes(POLICIES.create("P-HPF"), fast_path=False)
    assert takes(POLICIES.create("P-HPF"), record_timeline=True)  # the timeline is recorded
    assert takes(POLICIES.create("P-HPF"), until=1.0)  # stops as the general loop does
    assert takes(POLICIES.create("P-SJF"))  # its ready order is declared
    assert takes(POLICIES.create("P-PREMA"))  # a token order: the same loop
    assert takes(POLICIES.create("P-RRB"))  # round-robin: the same loop
    assert takes(POLICIES.create("NP-RRB"))

    class Hooked(HPF):
        def on_complete(self, job: object, now: float) -> None:
            pass

    assert not takes(Hooked(preemptive=True))
    dep = [
        Request(id=0, arrival_s=0.0, network="a"),
        Request(id=1, arrival_s=0.0, network="a", depends_on=0),
    ]
    sim = Simulator(profiles, POLICIES.create("P-HPF"))
    # dependent requests (and early exits) take the column loop too (eighteenth round)
    assert columns.applies(_Run(sim, dep, None, None))


def test_fast_path_is_what_runs_by_default() -> None:
    """P-HPF without a timeline takes the fast path (no ``Job`` objects are created)."""
    profiles = synthetic_profiles(random_state=0)
    reqs = bench_workload(50, profiles, random_state=0)
    assert jobs_made(Simulator(profiles, POLICIES.create("P-HPF")), reqs) == 0
    assert jobs_made(Simulator(profiles, POLICIES.create("P-HPF"), fast_path=False), reqs) == 50


def _pieces(res: object) -> list[tuple]:
    return [(*p[:2], p.plan.total_s, *p[3:]) for p in res.power]  # type: ignore[attr-defined]


@pytest.mark.parametrize("name", ["P-HPF", "P-FCFS", "P-PREMA", "P-TOKEN"])
@pytest.mark.parametrize("mechanism", ["checkpoint", "kill", "dynamic"])
def test_power_pieces_equal_the_general_loops(name: str, mechanism: str) -> None:
    """With ``record_power`` (every ``run_config`` run) the fast paths record the general
    loop's power pieces, in its order, so the power timeline is the same to the last bit."""
    profiles = synthetic_profiles(random_state=3)
    reqs = bench_workload(400, profiles, random_state=5)
    runs = []
    for fast in (True, False):
        sim = Simulator(
            profiles,
            POLICIES.create(name, mechanism=mechanism),
            preemption_point="tile",
            estimator=make_estimator("prema"),
            record_power=True,
            fast_path=fast,
        )
        runs.append(sim.run(reqs))
        if fast:
            assert jobs_made(sim, reqs) == 0
    fast, general = runs
    _assert_identical(fast, general)
    assert len(fast.power) > 300 and _pieces(fast) == _pieces(general)
    for a, b in zip(fast.power_timeline(), general.power_timeline(), strict=True):
        assert a.tobytes() == b.tobytes()


@pytest.mark.parametrize("mechanism", ["kill", "checkpoint"])
def test_superseded_completion_sets_the_clock_of_a_wake(mechanism: str) -> None:
    """A preemption leaves the victim's old completion event in the general loop's queue: it
    opens a wake at its own time, and an arrival 1 ulp later (within TIME_TOL_S) is handled at
    that clock. The fast path keeps those times and gives the same clock (here: C's first
    start, the work A had done when C preempted it)."""
    profiles = {
        "a": make_profile("a", [1e-3, 1e-3], tiles=4, energy_j=[1e-3, 2e-3]),
        "b": make_profile("b", [0.25e-3]),
    }
    t_a = profiles["a"].plan(1).total_s  # A's first completion, superseded by B
    reqs = [
        Request(id=0, arrival_s=0.0, network="a", priority=1),
        Request(id=1, arrival_s=0.5e-3, network="b", priority=9),
        Request(id=2, arrival_s=float(np.nextafter(t_a, 1.0)), network="b", priority=9),
    ]
    fast, general = _both(profiles, reqs, "P-HPF", mechanism, preemption_point="tile")
    _assert_identical(fast, general)
    assert general.columns["first_start_s"][2] == t_a < reqs[2].arrival_s


@pytest.mark.parametrize("name", RANKED)
def test_queue_keys_that_are_not_ints(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Queue keys other than ints (here the policy's own as floats and as tuples, with ties) are
    ranked densely into the fast path's int heap entries: same pops as a heap of
    ``(queue_key, order)``."""
    profiles = synthetic_profiles(random_state=4)
    reqs = bench_workload(300, profiles, random_state=6)
    cls = type(POLICIES.create(name))
    own = cls.queue_key
    for key in (lambda r: float(own(r)), lambda r: (own(r), "same")):
        monkeypatch.setattr(cls, "queue_key", staticmethod(key))
        fast, general = _both(profiles, reqs, name, "checkpoint", preemption_point="tile")
        _assert_identical(fast, general)


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
    """``write_records`` with ``touched`` (the fast path's) writes the same columns as with
    dense lists (the form other fast paths pass), rows scattered by ``arrival_rows``."""
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
    """``better`` other than ``operator.gt`` / ``operator.lt`` is called (the fast path writes
    those two out as comparisons)."""
    profiles = synthetic_profiles(random_state=2)
    reqs = bench_workload(300, profiles, random_state=7)
    cls = type(POLICIES.create(name))
    own = cls.better
    calls = []

    def better(a: object, b: object) -> bool:
        calls.append(1)
        return bool(own(a, b))

    monkeypatch.setattr(cls, "better", staticmethod(better))
    fast, general = _both(profiles, reqs, name, "checkpoint", preemption_point="tile")
    _assert_identical(fast, general)
    assert calls


#: SJF (``ready_order = "remaining"``) and the mechanisms it takes.
SJF_RUNS = (
    ("NP-SJF", {}),
    ("P-SJF", {"mechanism": "checkpoint"}),
    ("P-SJF", {"mechanism": "kill"}),
    ("P-SJF", {"mechanism": "dynamic"}),
    ("P-SJF", {"mechanism": "dynamic-kill"}),
)


def _both_sjf(profiles: dict, reqs: list[Request], i: int, **kw: object) -> tuple:
    name, params = SJF_RUNS[i]
    runs = []
    for fast in (True, False):
        sim = Simulator(profiles, POLICIES.create(name, **params), fast_path=fast, **kw)
        runs.append(sim.run(reqs))
        if fast:
            assert jobs_made(sim, reqs) == 0
    return runs[0], runs[1]


@SETTINGS
@given(
    wl=energy_workload(),
    i=st.integers(0, len(SJF_RUNS) - 1),
    point=st.sampled_from(["tile", "layer"]),
    cost=st.booleans(),
    noisy=st.booleans(),
)
def test_sjf_fast_path_equals_general_loop(
    wl: tuple, i: int, point: str, cost: bool, noisy: bool
) -> None:
    """SJF on the ranked path (ready entries keyed by remaining estimate when a job enters the
    queue; the running job's remaining estimate read at each decision) is the general loop's
    result to the last bit, with the isolated latencies (many ties) or a noisy predictor."""
    profiles, reqs = wl
    est = make_estimator("prema") if noisy else None
    fast, general = _both_sjf(
        profiles, reqs, i, preemption_point=point, checkpoint_cost=cost, estimator=est
    )
    _assert_identical(fast, general)


@pytest.mark.parametrize("i", range(len(SJF_RUNS)))
def test_sjf_fast_path_equals_general_loop_at_load(i: int) -> None:
    profiles = synthetic_profiles(random_state=3)
    reqs = bench_workload(1_500, profiles, random_state=5)
    fast, general = _both_sjf(
        profiles, reqs, i, preemption_point="tile", estimator=make_estimator("prema")
    )
    _assert_identical(fast, general)
    if i:
        assert fast.columns["preemptions"].sum() > 100


def test_sjf_subclass_that_chooses_otherwise_runs_the_general_loop() -> None:
    from npusched.policies.temporal.sjf import PSJF

    class Other(PSJF):
        def select(self, view: object) -> object:  # type: ignore[override]
            return super().select(view)  # type: ignore[arg-type]

    profiles = synthetic_profiles(random_state=0)
    reqs = bench_workload(40, profiles, random_state=0)
    assert jobs_made(Simulator(profiles, Other()), reqs) == 40
    assert jobs_made(Simulator(profiles, PSJF()), reqs) == 0


def test_declared_orders() -> None:
    """The orders the engine keeps (``declared_order``), and a subclass that decides its own
    way declares none (it runs the general loop)."""
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
