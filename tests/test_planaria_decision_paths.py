"""Planaria's decision and the machine path as the twenty-first round left them: the core's
allocations by unit count kept twice (``allocs_`` and the list ``alloc_l_``) and in step, a
decision without preemptions handing the contract's ``NOTHING.preempt``, a decision on any
other view (read through its attributes) the same as on the engine's (its native fields), and
the engine's process-wide memo of plans (``sim.engine._SHARED_PLANS``) holding each profile's
own plans, checked by the profile's identity."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from npusched.hardware import compile_profile
from npusched.hardware.fission import FissionArray
from npusched.models import get_network
from npusched.policies.contract import NOTHING, MachineView, Schedule
from npusched.policies.spatial import PlanariaPolicy
from npusched.sim import engine
from npusched.sim.engine import Simulator
from npusched.sim.resources import fission_array
from npusched.workloads.planaria import WORKLOADS, planaria_workload

sys.path.insert(0, str(Path(__file__).resolve().parent))

from golden_engine import digest

FA = FissionArray()


class _Checked(PlanariaPolicy):
    """Every decision checked: the two allocation tables agree, a schedule's ``preempt`` is
    ``NOTHING``'s exactly where it holds no job."""

    def reset(self) -> None:
        super().reset()
        self.own_select_ = True  # quiet wakes as the plain class (``select`` is wrapped here)
        self.decided = 0
        self.preempted = 0

    def select(self, view: MachineView) -> Schedule:
        out = super().select(view)
        for u, alloc in self.allocs_.items():
            assert self.alloc_l_[u] is alloc
            assert alloc.units == u
        assert all(a is None or self.allocs_[u] is a for u, a in enumerate(self.alloc_l_))
        if out is not NOTHING:
            self.decided += 1
            if out.preempt is NOTHING.preempt:
                assert out.assign
            else:
                assert isinstance(out.preempt, list) and out.preempt
                self.preempted += 1
        return out


class _OtherView(PlanariaPolicy):
    """Every decision on a view of its own (the same fields, not the engine's view): the core
    reads it through its attributes, never through the engine's native fields."""

    def reset(self) -> None:
        super().reset()
        self.own_select_ = True

    def select(self, view: MachineView) -> Schedule:
        mine = MachineView(
            view.now,
            tuple(view.ready),
            tuple(view.running),
            tuple(view.preempting),
            view.resources,
            view.reason,
            view.profiles,
        )
        return super().select(mine)


def _profiles(workload: str) -> dict[str, Any]:
    return {n: compile_profile(get_network(n), FA) for n in WORKLOADS[workload]}


def _run(
    policy: Any, workload: str, load: float, seed: int, n: int = 150, profs: Any = None
) -> dict[str, Any]:
    profs = _profiles(workload) if profs is None else profs
    reqs = planaria_workload(workload, "S", load, n_requests=n, random_state=seed)
    sim = Simulator(profs, policy, machine=fission_array(), record_power=True)
    return digest(sim.run(reqs))


@pytest.mark.parametrize(("workload", "load", "seed"), [("C", 80.0, 5), ("A", 150.0, 1)])
def test_allocation_tables_agree_and_preempt_is_nothings(
    workload: str, load: float, seed: int
) -> None:
    pol = _Checked()
    assert _run(pol, workload, load, seed) == _run(PlanariaPolicy(), workload, load, seed)
    assert pol.decided > 20 and pol.preempted > 0  # both kinds of decision were made


@pytest.mark.parametrize(("workload", "load", "seed"), [("C", 80.0, 5), ("B", 200.0, 2)])
def test_other_views_decide_as_the_engines(workload: str, load: float, seed: int) -> None:
    assert _run(_OtherView(), workload, load, seed) == _run(PlanariaPolicy(), workload, load, seed)


def test_shared_plans_are_the_profiles_own() -> None:
    profs = _profiles("C")
    engine._SHARED_PLANS.clear()
    first = _run(PlanariaPolicy(), "C", 80.0, 5, profs=profs)
    mine = {k: v for k, v in engine._SHARED_PLANS.items() if any(v[1] is p for p in profs.values())}
    assert len(mine) > 3  # several shapes on several variants
    for key, (plan, prof) in mine.items():
        assert key[0] == id(prof) and key[-1] is None
        _, batch, seq_in, seq_out, variant, _ = key
        assert prof.plan(batch, seq_in, seq_out, **dict(variant)) is plan
    # a second run takes its plans from the memo: the same results
    assert _run(PlanariaPolicy(), "C", 80.0, 5, profs=profs) == first


def test_shared_plans_checked_by_the_profiles_identity() -> None:
    profs = _profiles("C")
    engine._SHARED_PLANS.clear()
    first = _run(PlanariaPolicy(), "C", 80.0, 5, profs=profs)
    keys = list(engine._SHARED_PLANS)
    assert keys
    # every entry poisoned: another entry's plan (a wrong one) under another profile object
    # (as if the id were reused); the run must look its plans up again, with the same results
    plans = [engine._SHARED_PLANS[k][0] for k in keys]
    wrong = {k: plans[(i + 1) % len(plans)] for i, k in enumerate(keys)}
    for key in keys:
        engine._SHARED_PLANS[key] = (wrong[key], object())
    assert _run(PlanariaPolicy(), "C", 80.0, 5, profs=profs) == first
    for key in keys:
        plan, prof = engine._SHARED_PLANS[key]
        assert key[0] == id(prof) and prof.plan(key[1], key[2], key[3], **dict(key[4])) is plan
    engine._SHARED_PLANS.clear()
