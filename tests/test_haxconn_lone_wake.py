"""HaX-CoNN's decisions made without a view (twenty-third round): on a machine with no job
(``empty_wake(reason)``, ``policies.contract.empty_wake_rule``) and on one whose one job waits
or runs (``lone_wake(reason, job)``, ``lone_wake_rule``). The policy's answer there is the
decision ``select`` makes on that view, with the same state of its own left (the queues and
their heads, the plans' groups, stamps and waits, the plans by id and by job, the decision
count). Checked at every such wake of runs on Xavier (one accelerator per DNN's groups) and
Orin (transitions), with and without contention, against ``select`` itself on the view the
engine would have built; the runs equal those of the plain policy and of the policy without
the rules."""

from __future__ import annotations

import copy
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from npusched.hardware import compile_profile
from npusched.hardware.soc import SocDevice, get_soc
from npusched.models.zoo import get_network
from npusched.policies.contract import (
    NOTHING,
    Allocation,
    JobState,
    MachineView,
    ResourceView,
    Schedule,
)
from npusched.policies.mapping.haxconn_core import HaxconnCore
from npusched.policies.mapping.policy import HaxconnPolicy, Swap
from npusched.sim.engine import Simulator
from npusched.sim.resources import soc as soc_machine
from npusched.workloads.request import Request

sys.path.insert(0, str(Path(__file__).resolve().parent))

from golden_engine import digest


def _state(pol: HaxconnCore) -> Any:
    """The core's state by value (plans by job id), as a decision leaves it; ``select``'s
    free units per decision (``free_``, ``free_dec_``: read only under their own stamp) left
    out."""

    def plan(p: Any) -> Any:
        return (p.jid, p.grp, p.dec, p.ready, list(p.acc), p.deps, list(p.starts))

    return (
        pol.dec_,
        [[(p.jid, g) for p, g in zip(q, qg, strict=True)] for q, qg in
         zip(pol.queues_, pol.qgroups_, strict=True)],
        list(pol.qhead_),
        sorted((jid, plan(p)) for jid, p in pol.plans_.items()),
        sorted((j.id, p.jid) for j, p in pol.plan_of_.items()),
        all(pol.plans_[p.jid] is p for p in pol.plan_of_.values()),
    )


#: The core's state a decision writes: plain values and containers copied whole, the
#: queues' lists copied each (the plans' own fields are kept apart).
_KEPT = ("dec_", "qhead_", "plans_", "plan_of_")
_QUEUES = ("queues_", "qgroups_")
_FIELDS = ("assign", "preempt", "mechanism", "until_step", "merge", "timers", "rates")


class _Snapshot:
    """The core's state by object, to put back (the plans' fields, the queues' lists)."""

    def __init__(self, pol: HaxconnCore) -> None:
        self.kept = {a: copy.copy(getattr(pol, a)) for a in _KEPT}
        self.queues = {a: [list(q) for q in getattr(pol, a)] for a in _QUEUES}
        self.fields = {p: (p.grp, p.dec, p.ready) for p in pol.plans_.values()}

    def restore(self, pol: HaxconnCore) -> None:
        for a, v in self.kept.items():
            setattr(pol, a, copy.copy(v))
        for a, qs in self.queues.items():
            setattr(pol, a, [list(q) for q in qs])
        for p, (grp, dec, ready) in self.fields.items():
            p.grp, p.dec, p.ready = grp, dec, ready


def _fields(out: Any) -> Any:
    """A decision's fields (``NOTHING`` itself for ``NOTHING``)."""
    return out if out is NOTHING else tuple(getattr(out, f) for f in _FIELDS)


class _Checked(HaxconnPolicy):
    """Each ``empty_wake`` and ``lone_wake`` checked against ``select`` on the view the engine
    would build there, from the same state; the jobs in the machine counted by the hooks."""

    def reset(self) -> None:
        super().reset()
        self.live = 0
        self.made: dict[str, int] = {}
        self.declined = 0

    def on_dispatch(self, job: Any, now: float) -> None:
        self.live += 1

    def on_complete(self, job: Any, now: float) -> None:
        super().on_complete(job, now)
        self.live -= 1

    def _count(self, key: str) -> None:
        self.made[key] = self.made.get(key, 0) + 1

    def _view(self, ready: list[Any], running: list[Any], now: float, reason: str) -> Any:
        held = {j.allocation.resource: j.units for j in running}
        res = {
            name: ResourceView(name, "accelerator", cap, cap - held.get(name, 0))
            for name, cap in zip(self.accs_, self.cap_, strict=True)
        }
        return MachineView(now, ready, running, [], res, reason, {})

    def empty_wake(self, reason: str) -> bool:
        assert self.live == 0  # asked only where no job is in the machine
        before = _Snapshot(self)
        snap = _state(self)
        made = super().empty_wake(reason)
        if not made:
            assert _state(self) == snap  # nothing changed where not made
            self.declined += 1
            return False
        self._count("empty")
        after = _state(self)
        before.restore(self)
        assert HaxconnCore.select(self, self._view([], [], 0.0, reason)) is NOTHING
        assert _state(self) == after
        return True

    def lone_wake(self, reason: str, job: Any) -> Schedule | Allocation | None:
        assert self.live == 1  # its one job
        before = _Snapshot(self)
        snap = _state(self)
        out = super().lone_wake(reason, job)
        if out is None:
            # nothing changed where not made, but a plan made for a new job (``select``
            # makes the same)
            got = _state(self)
            assert got[0] == snap[0] and got[2] == snap[2]
            self.declined += 1
            return None
        short = isinstance(out, Allocation)
        waiting = job.state is JobState.WAITING
        kind = "nothing" if out is NOTHING else "short" if short else "schedule"
        self._count(f"{'waiting' if waiting else 'running'}:{kind}")
        # (the short form stands for ``Schedule(assign={job: out})``)
        got = _fields(Schedule(assign={job: out})) if short else _fields(out)
        after = _state(self)
        kept = _Snapshot(self)
        before.restore(self)
        one = [job]
        view = self._view(one if waiting else [], [] if waiting else one, job._clock.now, reason)
        ref = HaxconnCore.select(self, view)
        assert _fields(ref) == got and (ref is NOTHING) == (out is NOTHING)
        if short:  # the same allocation object
            assert next(iter(ref.assign.values())) is out
        assert _state(self) == after
        kept.restore(self)  # (the plan objects ``out`` was made with)
        return out


class _NoRules(HaxconnPolicy):
    """The policy without the rules: every wake's decision through ``select``."""

    empty_wake = None  # type: ignore[assignment]
    lone_wake = None  # type: ignore[assignment]


def _run(policy: HaxconnPolicy, soc: str, frames: tuple[tuple[str, ...], ...], rate: float,
         seed: int, n: int = 40, checkpoint_cost: bool = False) -> dict[str, Any]:
    """``n`` frames arriving at ``rate`` per second (Poisson), each one of ``frames`` (its
    networks arrive together: a frame of two is planned together, its groups split between
    the accelerators with transitions)."""
    dev = SocDevice(soc=soc)
    nets = sorted({m for f in frames for m in f})
    profiles = {m: compile_profile(get_network(m), dev, (1,)) for m in nets}
    sim = Simulator(
        profiles,
        policy,
        machine=soc_machine(get_soc(soc).accelerators),
        checkpoint_cost=checkpoint_cost,
        record_power=True,
    )
    rng = np.random.default_rng(seed)
    t = np.cumsum(rng.exponential(1.0 / rate, n))
    reqs: list[Request] = []
    for i in range(n):
        for m in frames[int(rng.integers(len(frames)))]:
            reqs.append(Request(len(reqs), float(t[i]), m))
    return digest(sim.run(reqs))


_SINGLE = (("resnet-18",), ("googlenet",))
_PAIRS = (("googlenet", "resnet-50"), ("resnet-18",))


@pytest.mark.parametrize(
    ("soc", "frames", "rate", "seed", "params"),
    [
        ("xavier", _SINGLE, 50.0, 0, {}),
        ("xavier", _PAIRS, 40.0, 1, {}),
        ("xavier", _PAIRS, 60.0, 2, {"contention": False}),
        ("orin", _PAIRS, 50.0, 3, {"n_groups": 6}),
    ],
)
def test_decisions_without_a_view_are_selects(
    soc: str, frames: tuple[tuple[str, ...], ...], rate: float, seed: int, params: dict[str, Any]
) -> None:
    pol = _Checked(soc=soc, **params)
    got = _run(pol, soc, frames, rate, seed)
    assert got == _run(HaxconnPolicy(soc=soc, **params), soc, frames, rate, seed)
    assert got == _run(_NoRules(soc=soc, **params), soc, frames, rate, seed)
    made = pol.made
    assert pol.assign_ is None  # the last assignment handed dropped at its job's completion
    assert made.get("empty", 0) > 0
    assert made.get("waiting:schedule", 0) > 10  # a group's start with its stop step
    assert made.get("waiting:short", 0) > 0  # a job's last group
    if frames is _PAIRS:  # one job of a frame left running alone
        assert made.get("running:schedule" if pol.contention else "running:nothing", 0) > 0


def test_transitions_left_to_select() -> None:
    """A lone job whose next group changes accelerator (a fixed schedule moving one DNN from
    the GPU to the DLA, frames of one job): its transition's timer and the start after it
    are ``select``'s (declined), and the run equals the one without the rules."""
    from npusched.policies.mapping.execute import Schedule as GroupSchedule

    fixed = GroupSchedule.of([[0] * 5 + [1] * 5])
    pol = _Checked(soc="xavier", schedule=fixed)
    args = ("xavier", (("resnet-18",),), 20.0, 8)
    got = _run(pol, *args, n=1)
    assert got == _run(_NoRules(soc="xavier", schedule=fixed), *args, n=1)
    # the first decision (before the resource check), the transition's wake and its timer's
    assert pol.declined >= 3 and pol.made.get("waiting:schedule", 0) > 0


def test_checkpoint_cost_runs_equal() -> None:
    """Stops at group ends with a checkpoint's cost (jobs being stopped hold their units):
    the run equals the one without the rules."""
    args = ("xavier", _PAIRS, 60.0, 4)
    got = _run(_Checked(soc="xavier"), *args, checkpoint_cost=True)
    assert got == _run(_NoRules(soc="xavier"), *args, checkpoint_cost=True)


class _Job:
    """A job seen through the ``JobView`` protocol (not the engine's)."""

    def __init__(self, jid: int, state: JobState) -> None:
        self.id = jid
        self.network = "resnet-18"
        self.state = state
        self.allocation = None


def test_rules_declined() -> None:
    pol = HaxconnPolicy(soc="xavier")
    pol.reset()
    job: Any = _Job(0, JobState.WAITING)
    # before the run's first decision (the resource check)
    assert pol.lone_wake("arrival", job) is None
    assert pol.empty_wake("completion") is False
    assert pol.dec_ == 0
    # a job not the engine's, after a first decision on the engine's view: declined
    pol = _Checked(soc="xavier")
    _run(pol, "xavier", (("resnet-18",),), 50.0, 5, n=4)
    assert pol.checked_ and pol.own_select_ and pol.cap_ == [1, 1]
    assert HaxconnCore.lone_wake(pol, "arrival", job) is None
    # a first decision on a view that is not the engine's: no capacities, declined
    other = HaxconnPolicy(soc="xavier")
    other.reset()
    res = {a: ResourceView(a, "accelerator", 1, 1) for a in get_soc("xavier").accelerators}
    assert other.select(MachineView(0.0, [], [], [], res, "arrival", {})) is NOTHING
    assert other.checked_ and other.cap_ == []


def test_own_select_and_swaps_decline() -> None:
    """A subclass with its own ``select`` decides every wake; with swaps (their timers and the
    schedule in force are ``select``'s) no wake is decided without the view."""
    seen = {"own": 0, "plain": 0}

    class Own(HaxconnPolicy):
        def select(self, view):  # type: ignore[no-untyped-def]
            seen["own"] += 1
            return super().select(view)

    class Plain(_NoRules):
        def select(self, view):  # type: ignore[no-untyped-def]
            seen["plain"] += 1
            return super().select(view)

    class Counted(HaxconnPolicy):
        def lone_wake(self, reason: str, job: Any) -> Any:
            out = super().lone_wake(reason, job)
            assert out is None
            return out

        def empty_wake(self, reason: str) -> bool:
            assert super().empty_wake(reason) is False
            return False

    own = Own(soc="xavier")
    args = ("xavier", _PAIRS, 50.0, 6)
    got = _run(own, *args, n=20)
    assert got == _run(Plain(soc="xavier"), *args, n=20)
    assert not own.own_select_ and seen["own"] == seen["plain"] > 0  # every wake's
    assert own.lone_wake("arrival", _Job(0, JobState.WAITING)) is None
    assert own.empty_wake("completion") is False
    # a ``select`` set on the instance (the engine calls it): every wake's too
    inst = HaxconnPolicy(soc="xavier")
    core_select = inst.select

    def watched(view: Any) -> Any:
        seen["own"] += 1
        return core_select(view)

    inst.select = watched  # type: ignore[method-assign]
    seen["own"] = seen["plain"] = 0
    assert _run(inst, *args, n=20) == got
    assert _run(Plain(soc="xavier"), *args, n=20) == got
    assert not inst.own_select_ and seen["own"] == seen["plain"] > 0
    # swaps: a single-DNN frame's schedule (every group on the GPU)
    from npusched.policies.mapping.execute import Schedule as GroupSchedule

    swap = Swap(0.0, GroupSchedule.of([[0] * 10]))
    swapped = Counted(soc="xavier", swaps=(swap,))
    one = ("xavier", (("resnet-18",),), 50.0, 7)
    assert _run(swapped, *one, n=10) == _run(_NoRules(soc="xavier", swaps=(swap,)), *one, n=10)
