"""The machine policies' schedules refilled, not rebuilt (seventeenth round):
:func:`~npusched.policies.machine_core.make_schedule` refills the schedule it made last where
nothing but its record refers to it. A schedule a policy keeps (the object, its ``__dict__``, a
weak reference) never changes, and every run is the same as where each decision gets a new
one."""

from __future__ import annotations

import dataclasses
import gc
import threading
import weakref
from typing import Any

import pytest

from npusched.bench.families import family_configs
from npusched.experiments.config import parse_config
from npusched.experiments.runner import run_config
from npusched.policies import contract
from npusched.policies.contract import Allocation, Mechanism, Merge, Schedule
from npusched.policies.machine_core import (
    NO_ASSIGN,
    NO_MECHANISM,
    NO_MERGE,
    NO_PREEMPT,
    NO_RATES,
    NO_TIMERS,
    NO_UNTIL,
    _made,
    make_schedule,
)
from simhelpers import assert_same_result

_NAMES = [f.name for f in dataclasses.fields(Schedule)]


def _fields(s: Any) -> dict[str, Any]:
    """The schedule's fields as they stand: the objects, and the mappings' and sequences'
    items copied (so a later change of either shows)."""
    out: dict[str, Any] = {}
    for k in _NAMES:
        v = getattr(s, k)
        items = list(v.items()) if isinstance(v, dict) else list(v) if k != "mechanism" else v
        out[k] = (v, items)
    return out


def _same(a: dict[str, Any], b: dict[str, Any]) -> bool:
    return all(a[k][0] is b[k][0] and a[k][1] == b[k][1] for k in _NAMES)


def _args(i: int) -> tuple[Any, ...]:
    alloc = Allocation("npu", 1)
    return ({i: alloc}, NO_PREEMPT, NO_MECHANISM, {i: 2}, NO_MERGE, [float(i)], {i: 0.5})


def test_make_schedule_equals_the_constructor() -> None:
    """Equal to ``Schedule(...)``, of the class itself, its ``__dict__`` in the fields' order,
    for a refilled and for a new schedule alike."""
    merge = (Merge(1, [2]),)  # type: ignore[arg-type]
    for args in (
        (NO_ASSIGN, NO_PREEMPT, NO_MECHANISM, NO_UNTIL, NO_MERGE, NO_TIMERS, NO_RATES),
        ({1: Allocation("npu", 1)}, [3], Mechanism.KILL, {1: 2}, merge, [1.5], {1: 0.5}),
        _args(7),
    ):
        s = make_schedule(*args)
        assert type(s) is Schedule
        assert s == Schedule(*args)
        assert list(vars(s)) == _NAMES
        assert all(getattr(s, k) is a for k, a in zip(_NAMES, args, strict=True))
        assert _made().sched is s
        del s


@pytest.mark.parametrize("how", ["object", "dict", "weak"])
def test_a_kept_schedule_stays_as_it_was(how: str) -> None:
    """The next ``make_schedule`` does not touch a schedule someone holds: it makes a new one."""
    first = make_schedule(*_args(1))
    before = _fields(first)
    held: Any = first if how == "object" else vars(first) if how == "dict" else weakref.ref(first)
    if how != "object":
        keep_alive = first  # the weak reference needs the object alive; the dict is its own
        del first
    second = make_schedule(*_args(2))
    kept = held if how == "object" else keep_alive
    assert second is not kept
    assert _same(_fields(kept), before)
    assert _made().sched is second
    assert second == Schedule(*_args(2))


def test_an_unheld_schedule_is_refilled() -> None:
    """Where nothing but the record refers to the last schedule, the next one is the same
    object with the new fields (and the same ``__dict__``)."""
    gc.collect()
    s = make_schedule(*_args(1))
    d_id, s_id = id(vars(s)), id(s)
    del s
    t = make_schedule(*_args(2))
    assert id(t) == s_id and id(vars(t)) == d_id
    assert t == Schedule(*_args(2))
    assert list(vars(t)) == _NAMES


def _run(family: str, monkeypatch: pytest.MonkeyPatch, after: Any) -> Any:
    """``family``'s run (1,000 requests) with ``after(schedule)`` called on each schedule the
    policy returns."""
    import npusched.policies.machine as machine

    made = machine.get_any_policy

    def watched_policy(name: str, /, **params: Any) -> Any:
        policy = made(name, **params)
        select = policy.select

        def watched(view: Any) -> Any:
            s = select(view)
            after(s)
            return s

        policy.select = watched
        return policy

    with monkeypatch.context() as m:
        m.setattr(machine, "get_any_policy", watched_policy)
        cfg = parse_config(dict(family_configs(1000)[family], seed=0), source=family)
        return run_config(cfg).result


@pytest.mark.parametrize("family", ["Planaria", "HaX-CoNN", "FluidB"])
def test_schedules_kept_by_the_policy_stay_as_they_were(
    family: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Schedules a policy keeps (the object, its ``__dict__``, a weak reference) keep their
    decision's fields, each a schedule of its own; the run is the same as where the policy
    keeps nothing (and its schedules are refilled: fewer objects than decisions)."""
    kept: list[tuple[Any, dict[str, Any]]] = []
    dicts: list[tuple[dict[str, Any], dict[str, Any]]] = []
    weak: list[tuple[Any, dict[str, Any]]] = []
    ids: list[int] = []

    def plain_ids(s: Any) -> None:
        if s is not contract.NOTHING:
            ids.append(id(s))

    def keep(s: Any) -> None:
        if s is not contract.NOTHING:
            kept.append((s, _fields(s)))

    def keep_dict(s: Any) -> None:
        if s is not contract.NOTHING:
            dicts.append((vars(s), _fields(s)))

    def keep_weak(s: Any) -> None:
        if s is not contract.NOTHING:
            weak.append((weakref.ref(s), _fields(s)))

    plain = _run(family, monkeypatch, plain_ids)
    for watch in (keep, keep_dict, keep_weak):
        assert_same_result(_run(family, monkeypatch, watch), plain)
    assert len(kept) == len(dicts) == len(weak) == len(ids) > 50
    assert len(set(ids)) < len(ids) // 2  # refilled where nobody keeps them
    assert len({id(s) for s, _ in kept}) == len(kept)
    for s, fields in kept:
        assert _same(_fields(s), fields)
    for d, fields in dicts:
        assert all(d[k] is fields[k][0] for k in _NAMES)
    for ref, fields in weak:
        s = ref()
        if s is not None:  # still alive: as it was
            assert _same(_fields(s), fields)


@pytest.mark.parametrize("family", ["HaX-CoNN", "Planaria"])
def test_a_schedule_returned_while_a_later_one_is_held(
    family: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A policy that returns a schedule made earlier while it holds a later one gets the one
    it returned carried out: here each decision's schedule is copied into a fresh
    ``make_schedule`` made after it (a new object: the first is held), and the first one is
    returned: the same run as without the copy."""
    import npusched.policies.machine as machine

    plain = _run(family, monkeypatch, lambda s: None)
    made = machine.get_any_policy

    def twice_policy(name: str, /, **params: Any) -> Any:
        policy = made(name, **params)
        select = policy.select

        def twice(view: Any) -> Any:
            s = select(view)
            if s is contract.NOTHING:
                return s
            other = make_schedule(*[getattr(s, k) for k in _NAMES])
            assert other is not s and _made().sched is other
            return s

        policy.select = twice
        return policy

    with monkeypatch.context() as m:
        m.setattr(machine, "get_any_policy", twice_policy)
        cfg = parse_config(dict(family_configs(1000)[family], seed=0), source=family)
        assert_same_result(run_config(cfg).result, plain)


@pytest.mark.parametrize("family", ["HaX-CoNN", "FluidB"])
def test_nothing_of_a_run_outlives_it(family: str) -> None:
    """The record is emptied when a run ends (``contract.RUN_END``): the last decision's
    schedule (its jobs) is not kept for the next run, so a run's cyclic garbage is the run's
    own (``tests/test_engine_gc.py``)."""
    s = make_schedule(*_args(3))
    assert _made().sched is s
    del s
    cfg = parse_config(dict(family_configs(200)[family], seed=0), source=family)
    run_config(cfg)
    assert _made().sched is None and _made().assign is NO_ASSIGN and _made().rates is NO_RATES


def test_each_thread_refills_its_own_record() -> None:
    """Points of the ``dask`` backend's threaded local cluster run in threads of one process: a
    schedule made in one thread is never refilled by a decision in another (each thread has its
    own record), and the decisions made beside each other run to the same results."""
    s = make_schedule(*_args(3))
    assert _made().sched is s
    before = _fields(s)
    del s
    seen: dict[str, Any] = {}

    def other() -> None:
        t = make_schedule(*_args(5))
        seen["sched"] = t
        seen["record"] = _made().sched

    th = threading.Thread(target=other)
    th.start()
    th.join()
    mine = _made().sched
    assert seen["record"] is seen["sched"] and seen["sched"] is not mine
    assert _fields(mine) == before


@pytest.mark.parametrize("family", ["Planaria", "HaX-CoNN"])
def test_threads_side_by_side_run_as_alone(family: str) -> None:
    """Two runs of a machine family in two threads at once give the single-thread result."""
    cfg = parse_config(dict(family_configs(300)[family], seed=0), source=family)
    plain = run_config(cfg).result
    out: list[Any] = []
    ths = [threading.Thread(target=lambda: out.append(run_config(cfg).result)) for _ in range(2)]
    for t in ths:
        t.start()
    for t in ths:
        t.join()
    assert len(out) == 2
    for r in out:
        assert_same_result(r, plain)


def test_the_record_found_by_thread_identity_is_the_threads_own() -> None:
    """``made_schedule`` answers from the thread that asked last (twentieth round): threads
    that ask in turn each get their own record every time, the same one as their first."""
    mine = contract.made_schedule()
    assert contract.made_schedule() is mine
    got: list[Any] = []
    turn = [threading.Event() for _ in range(6)]

    def other() -> None:
        for k in range(1, 6, 2):
            turn[k - 1].wait()
            got.append(contract.made_schedule())
            turn[k].set()

    th = threading.Thread(target=other)
    th.start()
    for k in range(0, 6, 2):
        turn[k].set()  # the other thread asks, then this one
        turn[k + 1].wait()
        assert contract.made_schedule() is mine
    th.join()
    assert len(got) == 3 and all(g is got[0] for g in got) and got[0] is not mine
