"""Planaria's decision on a machine with no job, made without a view (twenty-second round):
the engine calls ``empty_wake(reason)`` only at a wake where no job waits, holds units or
waits for units (``policies.contract.empty_wake_rule``), and the policy's answer there is
the decision ``select`` makes on that (empty) view: ``NOTHING``, with the same state of its
own left (targets, promises, ``settled_``). Checked at every such wake of runs of Workloads A,
B and C against ``select`` itself, with the jobs in the machine counted by the policy's own
hooks; the runs equal those of the plain policy and of the policy without the rule."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from npusched.hardware import compile_profile
from npusched.hardware.fission import FissionArray
from npusched.models import get_network
from npusched.policies.contract import NOTHING, MachineView, empty_wake_rule
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
        before = (self.targets_, self.promised_, self.settled_)
        snap = _state(self)
        made = super().empty_wake(reason)
        if not made:
            assert _state(self) == snap  # nothing changed where not made
            return False
        self.made[reason] = self.made.get(reason, 0) + 1
        after = _state(self)
        # the reference: ``select`` on the empty view, from the state before
        self.targets_, self.promised_, self.settled_ = before
        view = MachineView(0.0, [], [], [], {}, reason, {})
        assert PlanariaCore.select(self, view) is NOTHING
        assert _state(self) == after
        return True


class _NoEmptyWake(PlanariaPolicy):
    """The policy without the rule: every wake's decision through ``select``."""

    empty_wake = None  # type: ignore[assignment]


def _profiles(workload: str) -> dict[str, Any]:
    return {n: compile_profile(get_network(n), FA) for n in WORKLOADS[workload]}


def _run(policy: Any, workload: str, load: float, seed: int, n: int = 150) -> dict[str, Any]:
    reqs = planaria_workload(workload, "S", load, n_requests=n, random_state=seed)
    sim = Simulator(_profiles(workload), policy, machine=fission_array(), record_power=True)
    return digest(sim.run(reqs))


@pytest.mark.parametrize(
    ("workload", "load", "seed"), [("C", 80.0, 5), ("A", 150.0, 1), ("B", 40.0, 3)]
)
def test_empty_wake_is_selects_decision(workload: str, load: float, seed: int) -> None:
    pol = _EmptyChecked()
    got = _run(pol, workload, load, seed)
    assert got == _run(PlanariaPolicy(), workload, load, seed)
    assert got == _run(_NoEmptyWake(), workload, load, seed)
    assert pol.made.get("completion", 0) > 5  # the last job's completion, many times
    assert pol.asked == sum(pol.made.values())  # every one made after the first decision


def test_rule_only_where_declared() -> None:
    assert empty_wake_rule(_NoEmptyWake()) is None
    assert empty_wake_rule(PlanariaPolicy()) is not None


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
