"""The general loop's per-decision objects after issue 25's tenth-round work: the machine view
copies the resources' holders while no job is preempting (``_Run.n_preempting``), and the
trusted :func:`~npusched.policies.contract.fast_decision` equals the constructor."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

import npusched.sim.engine as engine
from npusched.bench.families import family_configs
from npusched.experiments.config import parse_config
from npusched.experiments.runner import run_config
from npusched.policies import contract
from npusched.policies.contract import Decision, Mechanism, fast_decision
from npusched.sim.job import PREEMPTING
from simhelpers import assert_same_result, source_engine


def _scanned(run: Any) -> tuple[list[Any], list[Any]]:
    """The view's running and preempting jobs by a scan of every holder (the rule before)."""
    running: list[Any] = []
    preempting: list[Any] = []
    for res in run.res:
        for j in res.jobs:
            (preempting if j.state is PREEMPTING else running).append(j)
    running.extend(e[0] for e in run.pending)
    return running, preempting


@pytest.mark.parametrize("family", ["Planaria", "HaX-CoNN", "FluidB"])
def test_machine_view_equals_the_scan_at_every_decision(
    family: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """At every decision of a run with re-allocations (Planaria: CHECKPOINT stops and saves,
    so jobs stand PREEMPTING), two resources (HaX-CoNN) and one (FluidB), the view's lists
    equal the scan, are fresh lists (never the engine's own), and the counter matches."""
    # The interpreted source of the engine where it is compiled (a compiled ``_Run`` calls
    # its own ``_machine_view`` directly): the same code, with the method replaced.
    with source_engine() as eng:
        _check_views(eng, family, monkeypatch)


def _check_views(eng: Any, family: str, monkeypatch: pytest.MonkeyPatch) -> None:
    orig = eng._Run._machine_view
    seen = {"views": 0, "preempting": 0}

    def checked(self: Any, reason: str) -> Any:
        view = orig(self, reason)
        running, preempting = _scanned(self)
        assert view.running == running and view.preempting == preempting
        assert all(view.running is not r.jobs for r in self.res)
        assert self.n_preempting == sum(j.state is PREEMPTING for r in self.res for j in r.jobs)
        seen["views"] += 1
        seen["preempting"] += bool(preempting)
        return view

    monkeypatch.setattr(eng._Run, "_machine_view", checked)
    _views_at_every_wake(family, monkeypatch)
    monkeypatch.setattr(engine, "Simulator", eng.Simulator)  # ``run_config`` imports it per run
    cfg = parse_config(dict(family_configs(1000)[family], seed=0), source=family)
    run_config(cfg)
    assert seen["views"] > 50
    if family == "Planaria":
        assert seen["preempting"] > 0  # the counted path was taken


def test_fast_decision_equals_the_constructor_and_takes_the_slots() -> None:
    """Equal, frozen, of the class itself; and built by the descriptor path (a ``Decision``
    that changes shape falls back to the constructor and fails this test's first line)."""
    assert contract._FAST_DECISION
    job = object()
    for run in (job, None):
        for mech in Mechanism:
            d = fast_decision(run, mech)  # type: ignore[arg-type]
            assert type(d) is Decision
            assert d == Decision(run, mech)  # type: ignore[arg-type]
            assert d.run is run and d.mechanism is mech
            assert hash(d) == hash(Decision(run, mech))  # type: ignore[arg-type]
            with pytest.raises(dataclasses.FrozenInstanceError):
                d.run = None  # type: ignore[misc]


def _views_at_every_wake(family: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """HaX-CoNN's every decision through ``select`` on a view: since the twenty-third round
    it decides a wake with one job or none without one (``lone_wake``, ``empty_wake``), most
    of its wakes, and too few views would be left in the run's 20 requests (a ``select``
    replaced on the instance, as ``_run_family``'s, turns the rules off too)."""
    if family == "HaX-CoNN":
        from npusched.policies.mapping.policy import HaxconnPolicy

        monkeypatch.setattr(HaxconnPolicy, "lone_wake", None)
        monkeypatch.setattr(HaxconnPolicy, "empty_wake", None)


def _run_family(family: str, monkeypatch: pytest.MonkeyPatch, watch: Any) -> Any:
    """``family``'s run (1,000 requests) with ``watch(view)`` called before each decision."""
    import npusched.policies.machine as machine

    made = machine.get_any_policy

    def watched_policy(name: str, /, **params: Any) -> Any:
        policy = made(name, **params)
        select = policy.select

        def watched(view: Any) -> Any:
            watch(view)
            return select(view)

        policy.select = watched
        return policy

    with monkeypatch.context() as m:
        m.setattr(machine, "get_any_policy", watched_policy)
        cfg = parse_config(dict(family_configs(1000)[family], seed=0), source=family)
        return run_config(cfg).result


def _fields(view: Any) -> dict[str, Any]:
    """The view's fields as they stand, the lists copied."""
    return {k: (list(v) if isinstance(v, list) else v) for k, v in vars(view).items()}


@pytest.mark.parametrize("family", ["Planaria", "HaX-CoNN", "FluidB"])
def test_machine_view_kept_by_the_policy_stays_as_it_was(
    family: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The engine refills its last machine view only where nothing else refers to it: views a
    policy keeps (the object, its ``__dict__`` or a weak reference) keep the fields of their
    decision (the ``ready`` list is the engine's queue, shared by design), and the run is the
    same as where the policy keeps nothing (and its views are refilled)."""
    import weakref

    kept: list[tuple[Any, dict[str, Any]]] = []
    dicts: list[tuple[dict[str, Any], dict[str, Any]]] = []
    weak: list[tuple[Any, dict[str, Any]]] = []
    ids: list[int] = []

    def keep(view: Any) -> None:
        kept.append((view, _fields(view)))

    def keep_dict(view: Any) -> None:
        dicts.append((vars(view), _fields(view)))

    def keep_weak(view: Any) -> None:
        weak.append((weakref.ref(view), _fields(view)))

    plain = _run_family(family, monkeypatch, lambda view: ids.append(id(view)))
    for watch in (keep, keep_dict, keep_weak):
        assert_same_result(_run_family(family, monkeypatch, watch), plain)
    assert len(kept) == len(dicts) == len(weak) == len(ids) > 50
    for view, fields in kept:
        assert {k: v for k, v in _fields(view).items() if k != "ready"} == {
            k: v for k, v in fields.items() if k != "ready"
        }
    assert len({id(v) for v, _ in kept}) == len(kept)
    for d, fields in dicts:
        assert d["now"] == fields["now"] and d["reason"] == fields["reason"]
        assert d["running"] == fields["running"] and d["resources"] is fields["resources"]
    for ref, fields in weak:
        view = ref()
        if view is not None:  # still alive: as it was
            assert view.now == fields["now"] and view.running == fields["running"]


@pytest.mark.parametrize("family", ["Planaria", "HaX-CoNN", "FluidB"])
def test_refilled_machine_view_holds_what_a_new_view_holds(
    family: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The refill writes only the fields whose objects changed since the kept view's last fill
    (``_Run._machine_view``): at every decision the refilled view holds what a new view holds
    (the run whose policy keeps every view gets a new one each time, every field written), and
    its attribute dictionary names the fields in their order."""

    def snapshot(out: list[Any]) -> Any:
        def take(view: Any) -> None:
            out.append(
                (
                    list(vars(view)),
                    view.now,
                    view.reason,
                    [j.id for j in view.ready],
                    [j.id for j in view.running],
                    [j.id for j in view.preempting],
                    {k: (r.kind, r.capacity, r.free) for k, r in view.resources.items()},
                    sorted(view.profiles),
                )
            )

        return take

    refilled: list[Any] = []
    fresh: list[Any] = []
    views: list[Any] = []
    take_fresh = snapshot(fresh)

    def keep(view: Any) -> None:
        views.append(view)
        take_fresh(view)

    a = _run_family(family, monkeypatch, snapshot(refilled))
    b = _run_family(family, monkeypatch, keep)
    assert_same_result(a, b)
    assert len({id(v) for v in views}) == len(views) > 50
    names = [f.name for f in dataclasses.fields(contract.MachineView)]
    assert all(s[0] == names for s in refilled)
    assert refilled == fresh


@pytest.mark.parametrize("family", ["HaX-CoNN", "FluidB", "Planaria"])
def test_schedule_mappings_that_are_not_dicts_give_the_same_run(
    family: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``_apply`` iterates a plain ``dict`` of ``assign`` / ``until_step`` / ``rates`` natively
    and any other mapping through ``items()``: the same schedules as read-only mappings give
    the same run."""
    from types import MappingProxyType

    import npusched.policies.machine as machine

    plain = _run_family(family, monkeypatch, lambda view: None)
    made = machine.get_any_policy

    def proxied_policy(name: str, /, **params: Any) -> Any:
        policy = made(name, **params)
        select = policy.select

        def proxied(view: Any) -> Any:
            s = select(view)
            if s is contract.NOTHING:
                return s
            return dataclasses.replace(
                s,
                assign=MappingProxyType(dict(s.assign)),
                until_step=MappingProxyType(dict(s.until_step)),
                rates=MappingProxyType(dict(s.rates)),
            )

        policy.select = proxied
        return policy

    with monkeypatch.context() as m:
        m.setattr(machine, "get_any_policy", proxied_policy)
        cfg = parse_config(dict(family_configs(1000)[family], seed=0), source=family)
        assert_same_result(run_config(cfg).result, plain)
