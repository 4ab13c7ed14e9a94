"""Planaria's decisions made without a view (twenty-second round): on a machine with no job
(``empty_wake(reason)``: the engine calls it only at a wake where no job waits, holds units or
waits for units, ``policies.contract.empty_wake_rule``) and on one whose one job waits
(``lone_wake(reason, job)``, ``lone_wake_rule``). The policy's answer there is the decision
``select`` makes on that view, with the same state of its own left (targets, promises,
``settled_``). Checked at every such wake of runs of Workloads A, B and C against ``select``
itself, with the jobs in the machine counted by the policy's own hooks; the runs equal those
of the plain policy and of the policy without the rules."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from npusched.hardware import compile_profile
from npusched.hardware.fission import FissionArray
from npusched.models import get_network
from npusched.policies.contract import (
    NOTHING,
    Allocation,
    JobState,
    MachineView,
    Schedule,
    empty_wake_rule,
    lone_wake_rule,
)
from npusched.policies.spatial import PlanariaPolicy
from npusched.policies.spatial.planaria_core import PlanariaCore
from npusched.sim.engine import Simulator
from npusched.sim.resources import fission_array
from npusched.workloads.planaria import WORKLOADS, planaria_workload

sys.path.insert(0, str(Path(__file__).resolve().parent))

from golden_engine import digest

FA = FissionArray()


def _state(pol: PlanariaCore) -> tuple[dict[int, int], dict[int, int], bool]:
    return dict(pol.targets_), dict(pol.promised_), pol.settled_


class _EmptyChecked(PlanariaPolicy):
    """Each ``empty_wake`` checked against ``select`` on the empty view from the same state;
    the jobs in the machine counted by the hooks (dispatched, not yet completed)."""

    def reset(self) -> None:
        super().reset()
        self.live = 0
        self.asked = 0
        self.made: dict[str, int] = {}

    def on_dispatch(self, job: Any, now: float) -> None:
        self.live += 1

    def on_complete(self, job: Any, now: float) -> None:
        self.live -= 1

    def empty_wake(self, reason: str) -> bool:
        assert self.live == 0  # asked only where no job is in the machine
        self.asked += 1
        snap = _state(self)
        made = super().empty_wake(reason)
        if not made:
            assert _state(self) == snap  # nothing changed where not made
            return False
        self.made[reason] = self.made.get(reason, 0) + 1
        after = _state(self)
        # the reference: ``select`` on the empty view, from the state before
        self.targets_, self.promised_, self.settled_ = dict(snap[0]), dict(snap[1]), snap[2]
        view = MachineView(0.0, [], [], [], {}, reason, {})
        assert PlanariaCore.select(self, view) is NOTHING
        assert _state(self) == after
        return True



def _fields(out: Schedule) -> Any:
    if out is NOTHING:
        return NOTHING
    return (
        list(out.assign.items()),
        out.preempt,
        out.mechanism,
        out.until_step,
        out.merge,
        out.timers,
        out.rates,
    )


def _short(job: Any, alloc: Allocation) -> Any:
    """The fields of ``Schedule(assign={job: alloc})`` (``lone_wake``'s short form)."""
    n = NOTHING
    return ([(job, alloc)], n.preempt, n.mechanism, n.until_step, n.merge, n.timers, n.rates)


class _LoneChecked(_EmptyChecked):
    """Each ``lone_wake`` checked against ``select`` on the view of the one waiting job."""

    def reset(self) -> None:
        super().reset()
        self.lone_asked = 0
        self.lone_made: dict[str, int] = {}

    def lone_wake(self, reason: str, job: Any) -> Schedule | Allocation | None:
        assert self.live == 1  # its one job
        self.lone_asked += 1
        snap = _state(self)
        out = super().lone_wake(reason, job)
        if out is None:
            assert _state(self) == snap
            return None
        short = isinstance(out, Allocation)
        key = f"{reason}:{'nothing' if out is NOTHING else 'assign' if short else 'schedule'}"
        self.lone_made[key] = self.lone_made.get(key, 0) + 1
        got = _short(job, out) if isinstance(out, Allocation) else _fields(out)
        after = _state(self)
        self.targets_, self.promised_, self.settled_ = dict(snap[0]), dict(snap[1]), snap[2]
        waiting = job.state is JobState.WAITING
        one = [job]
        view = MachineView(0.0, one if waiting else [], [] if waiting else one, [], {}, reason, {})
        ref = PlanariaCore.select(self, view)
        assert _fields(ref) == got and (ref is NOTHING) == (out is NOTHING)
        if short:  # the same allocation object
            assert next(iter(ref.assign.values())) is out
        assert _state(self) == after
        return out  # (the engine carries out the short form)


class _NoEmptyWake(PlanariaPolicy):
    """The policy without the rules: every wake's decision through ``select``."""

    empty_wake = None  # type: ignore[assignment]
    lone_wake = None  # type: ignore[assignment]


def _profiles(workload: str) -> dict[str, Any]:
    return {n: compile_profile(get_network(n), FA) for n in WORKLOADS[workload]}


def _run(policy: Any, workload: str, load: float, seed: int, n: int = 150) -> dict[str, Any]:
    reqs = planaria_workload(workload, "S", load, n_requests=n, random_state=seed)
    sim = Simulator(_profiles(workload), policy, machine=fission_array(), record_power=True)
    return digest(sim.run(reqs))


@pytest.mark.parametrize(
    ("workload", "load", "seed"), [("C", 80.0, 5), ("A", 150.0, 1), ("B", 40.0, 3)]
)
def test_decisions_without_a_view_are_selects(workload: str, load: float, seed: int) -> None:
    pol = _LoneChecked()  # (both rules checked)
    got = _run(pol, workload, load, seed)
    assert got == _run(PlanariaPolicy(), workload, load, seed)
    assert got == _run(_NoEmptyWake(), workload, load, seed)
    assert pol.made.get("completion", 0) > 5  # the last job's completion, many times
    assert pol.asked == sum(pol.made.values())  # every one made after the first decision
    assert pol.lone_made.get("arrival:assign", 0) > 2  # arrivals on an idle array
    assert pol.lone_made.get("completion:assign", 0) > 0  # the last job's growth
    # every one made but at the run's first decision (the array's size is read there)
    assert pol.lone_asked - sum(pol.lone_made.values()) <= 1


def test_lone_wake_steps() -> None:
    pol = PlanariaPolicy()
    pol.reset()

    class _J:  # a job seen through the ``JobView`` protocol (not the engine's)
        def __init__(self, jid: int, state: JobState, units: int | None = None) -> None:
            self.id = jid
            self.state = state
            self.allocation = None if units is None else Allocation(None, units)

    job: Any = _J(7, JobState.WAITING)
    assert pol.lone_wake("arrival", job) is None  # before the first decision
    pol.size_ = 16
    out = pol.lone_wake("arrival", job)
    assert isinstance(out, Allocation) and out.units == 16
    assert (pol.targets_, pol.promised_, pol.settled_) == ({7: 16}, {7: 16}, True)
    # promised its target already: no change
    assert pol.lone_wake("preempted", job) is NOTHING and pol.settled_
    # its target 0 with a count promised (a wake that re-runs no Algorithm 1): deferred
    pol.targets_ = {}
    assert pol.lone_wake("timer", job) is NOTHING and not pol.settled_
    # a completion keeps only this job's promise
    pol.promised_ = {7: 4, 9: 12}
    out = pol.lone_wake("completion", job)
    assert isinstance(out, Allocation) and out.units == 16
    assert pol.promised_ == {7: 16}
    # a running job: its count is what it holds where it has no promise
    run: Any = _J(3, JobState.RUNNING, 4)
    pol.promised_ = {}
    out = pol.lone_wake("completion", run)
    assert isinstance(out, Allocation) and out.units == 16 and pol.promised_ == {3: 16}
    assert pol.lone_wake("completion", run) is NOTHING  # promised already
    pol.targets_ = {3: 2}  # a shrink (a wake that re-runs no Algorithm 1)
    out = pol.lone_wake("preempted", run)
    assert isinstance(out, Allocation) and out.units == 2 and pol.promised_ == {3: 2}
    pol.targets_ = {}  # to 0: preempted
    out = pol.lone_wake("preempted", run)
    assert isinstance(out, Schedule) and list(out.preempt) == [run] and not out.assign
    assert pol.promised_ == {3: 0} and pol.settled_
    # a job being stopped: not made
    assert pol.lone_wake("completion", _J(4, JobState.PREEMPTING, 4)) is None


def test_rule_only_where_declared() -> None:
    assert empty_wake_rule(_NoEmptyWake()) is None
    assert empty_wake_rule(PlanariaPolicy()) is not None
    assert lone_wake_rule(_NoEmptyWake()) is None
    assert lone_wake_rule(PlanariaPolicy()) is not None


def test_empty_wake_not_made_before_the_first_decision_or_for_other_targets() -> None:
    pol = PlanariaPolicy()
    pol.reset()
    assert not pol.empty_wake("completion")  # the array's size is read at the first decision
    pol.size_ = 16
    pol.targets_ = {7: 16}
    pol.promised_ = {7: 16}
    pol.settled_ = False
    assert pol.empty_wake("completion")
    assert (pol.targets_, pol.promised_, pol.settled_) == ({}, {}, True)

    class _OwnTargets(PlanariaPolicy):
        def _targets(self, jobs: Any, view: Any, size: int) -> dict[int, int]:
            return {}

    own = _OwnTargets()
    own.reset()
    own.size_ = 16
    own.targets_ = {7: 16}
    assert not own.empty_wake("completion")
    assert own.targets_ == {7: 16}
    # a wake that re-runs no Algorithm 1 keeps the targets
    assert own.empty_wake("preempted") and own.targets_ == {7: 16} and own.settled_
