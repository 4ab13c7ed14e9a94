"""The engine keeps a declared rank or remaining order's ready queue itself (``sim/engine.py``,
``_Run.rank_heap``): FCFS, HPF and SJF, with or without a hook of the policy's own, are decided
on the engine's heap, without a view or a call of ``select``. The decisions are the class's
``select``'s: a subclass that overrides ``select`` (with the class's own) declares no order, so
the engine calls it at every decision, and the two runs are equal to the last bit."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import golden_loops
from npusched.bench import bench_workload, synthetic_profiles
from npusched.bench.families import family_configs
from npusched.experiments.config import parse_config
from npusched.experiments.runner import run_config
from npusched.policies.base import POLICIES
from npusched.policies.contract import declared_order
from npusched.policies.temporal.predictor import make_estimator
from npusched.sim.engine import Simulator, _Run
from npusched.workloads.request import RequestTable
from simhelpers import assert_same_run
from test_ranked_fast_path import MECHANISMS, RANKED, energy_workload

#: The declared rank and remaining orders.
ORDERS = (*RANKED, "NP-SJF", "P-SJF")

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _create(name: str, mechanism: str) -> Any:
    """``name`` with ``mechanism`` (NP-SJF takes none; SJF has no DRAIN: CHECKPOINT then)."""
    if name == "NP-SJF":
        return POLICIES.create(name)
    if name == "P-SJF" and mechanism == "drain":
        mechanism = "checkpoint"
    return POLICIES.create(name, mechanism=mechanism)


def _by_select(name: str, mechanism: str) -> Any:
    """The policy ``name`` deciding through its ``select`` (a subclass that overrides it with
    the class's own: no declared order)."""
    base = type(_create(name, mechanism))

    class BySelect(base):  # type: ignore[misc,valid-type]
        def select(self, view: Any) -> Any:
            return super().select(view)

    BySelect.__name__ = base.__name__
    pol = _create(name, mechanism)
    pol.__class__ = BySelect
    assert declared_order(pol) is None
    return pol


def _pair(
    profiles: dict, reqs: list, name: str, mechanism: str, **kw: Any
) -> tuple[Any, Any, _Run]:
    declared = Simulator(profiles, _create(name, mechanism), **kw)
    run = _Run(declared, reqs, None, None)
    by_select = Simulator(profiles, _by_select(name, mechanism), **kw)
    return run.execute(), by_select.run(reqs), run


@SETTINGS
@given(
    wl=energy_workload(),
    name=st.sampled_from(ORDERS),
    mechanism=st.sampled_from(MECHANISMS),
    point=st.sampled_from(["tile", "layer"]),
    cost=st.booleans(),
)
def test_engine_heap_is_select(wl: tuple, name: str, mechanism: str, point: str, cost: bool) -> None:
    profiles, reqs = wl
    got, ref, run = _pair(
        profiles,
        reqs,
        name,
        mechanism,
        preemption_point=point,
        checkpoint_cost=cost,
        record_timeline=True,
        record_power=True,
    )
    assert_same_run(got, ref)
    assert run.rank_heap == []  # the engine's heap, emptied by the starts


@pytest.mark.parametrize("name", ORDERS)
@pytest.mark.parametrize("mechanism", MECHANISMS)
@pytest.mark.parametrize("load", [0.9, 1.5])
def test_engine_heap_is_select_at_load(name: str, mechanism: str, load: float) -> None:
    """1,500 requests of the bench's workload with PREMA's noisy predictor (Algorithm 3's
    choices read its estimates), at load 0.9 and 1.5 (long queues)."""
    profiles = synthetic_profiles(random_state=3)
    reqs = bench_workload(1_500, profiles, load=load, random_state=5)
    got, ref, _ = _pair(
        profiles,
        reqs,
        name,
        mechanism,
        preemption_point="tile",
        estimator=make_estimator("prema"),
        record_power=True,
    )
    assert_same_run(got, ref)


def test_heap_holds_the_waiting_jobs() -> None:
    """Every start pops its job's entry: at the end the heap is empty, and a run stopped
    early (``until``) holds exactly the waiting jobs' entries, which give its partial records
    (``_waiting``, in dispatch order)."""
    profiles = synthetic_profiles(random_state=3)
    reqs = bench_workload(600, profiles, load=1.5, random_state=2)
    pol = POLICIES.create("P-HPF", mechanism="kill")
    sim = Simulator(profiles, pol)
    run = _Run(sim, reqs, None, None)
    run.execute()
    assert run.rank_heap == []
    until = sorted(r.arrival_s for r in reqs)[400]
    run = _Run(sim, reqs, until, None)
    res = run.execute()
    assert run.rank_heap is not None
    assert run.ready == []  # the heap holds the waiting jobs in the list's place
    waiting = [j.order for j in run._waiting()]
    n = len(run.rank_entry)
    assert sorted(e % n for e in run.rank_heap) == waiting
    assert waiting  # the case is exercised: jobs wait at the stop
    ref = Simulator(profiles, _by_select("P-HPF", "kill")).run(reqs, until=until)
    assert_same_run(res, ref)


def test_hook_of_its_own_takes_the_engine_heap() -> None:
    """A subclass that adds a hook (its ``select`` the class's) runs on the engine's heap,
    with the hook called."""
    base = type(POLICIES.create("P-HPF"))
    done: list[int] = []

    class Counting(base):  # type: ignore[misc,valid-type]
        def on_complete(self, job: Any, now: float) -> None:
            done.append(job.request.id)

    profiles = synthetic_profiles(random_state=3)
    reqs = bench_workload(400, profiles, random_state=4)
    pol = Counting(preemptive=True, mechanism="dynamic")
    assert declared_order(pol) == "rank"
    sim = Simulator(profiles, pol, record_power=True)
    run = _Run(sim, reqs, None, None)
    got = run.execute()
    assert run.rank_heap == []  # the engine's heap
    assert sorted(done) == sorted(r.id for r in reqs)
    ref = Simulator(profiles, POLICIES.create("P-HPF", mechanism="dynamic"), record_power=True)
    assert_same_run(got, ref.run(reqs))


@pytest.mark.parametrize("fam", ["FCFS", "HPF", "SJF"])
def test_the_loop_makes_no_request_object(fam: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The families' configs (a request table) through ``run_config``: a policy without
    ``ready_hooks`` is given no requests, so none is made for it (its jobs keep
    the fields they read); PREMA's predictor (``shape_only``) is asked once per request shape,
    with its shape's first request; and the run is the one both loops gave at dbd9f47."""
    cfg = parse_config(dict(family_configs(1_000)[fam], seed=0), source=f"families:{fam}")

    def refuse(*args: Any, **kw: Any) -> Any:
        raise AssertionError("a request was made")

    made: list[int] = []
    getitem = RequestTable.__getitem__

    def one(self: Any, i: Any) -> Any:
        made.append(int(i))
        return getitem(self, i)

    monkeypatch.setattr(RequestTable, "requests", refuse)
    monkeypatch.setattr(RequestTable, "__getitem__", one)
    golden_loops.assert_frozen(f"families-table/{fam}", run_config(cfg))
    assert len(made) <= 40  # the shapes' first requests, where there is an estimator



def test_period_hook_sees_the_waiting_jobs() -> None:
    """A rank policy with a period and an ``on_period`` hook of its own: the hook's view holds
    the waiting jobs in dispatch order, built from the engine's heap (``_waiting``), the same
    jobs as the ready list of the run decided through ``select``; the ticks and the results
    are the same."""
    base = type(POLICIES.create("P-HPF"))

    def with_period(select_own: bool) -> tuple[Any, list[list[int]]]:
        seen: list[list[int]] = []

        class Ticking(base):  # type: ignore[misc,valid-type]
            period_s = 0.002

            def on_period(self, view: Any) -> None:
                seen.append([j.request.id for j in view.ready])

        cls: Any = Ticking
        if select_own:

            class BySelect(Ticking):
                def select(self, view: Any) -> Any:
                    return super().select(view)

            cls = BySelect
        pol = cls(preemptive=True, mechanism="checkpoint")
        assert (declared_order(pol) is None) == select_own
        profiles = synthetic_profiles(random_state=3)
        reqs = bench_workload(500, profiles, load=1.3, random_state=8)
        return Simulator(profiles, pol, record_power=True).run(reqs), seen

    got, seen = with_period(False)
    ref, seen_ref = with_period(True)
    assert_same_run(got, ref)
    assert seen == seen_ref
    assert any(len(s) > 1 for s in seen)  # the case is exercised: ticks with a queue
