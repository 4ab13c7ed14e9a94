"""Planaria's quiet wakes (``PlanariaCore.quiet_wake``, ``policies.contract.quiet_wake_rule``):
a wake the policy declares quiet is not decided, and the run is the one with every wake
decided; a wake declared quiet would have been decided ``NOTHING`` with no state changed."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from npusched.hardware import compile_profile
from npusched.hardware.fission import FissionArray
from npusched.models import get_network
from npusched.policies.contract import NOTHING, MachineView, Schedule, quiet_wake_rule
from npusched.policies.spatial import PlanariaPolicy
from npusched.sim.engine import Simulator
from npusched.sim.resources import fission_array
from npusched.workloads.planaria import WORKLOADS, planaria_workload

sys.path.insert(0, str(Path(__file__).resolve().parent))

from golden_engine import digest

FA = FissionArray()


class _Calls(PlanariaPolicy):
    """Every wake decided (never quiet), counting the wakes asked about."""

    def quiet_wake(self, reason: str) -> bool:
        return False


class _Checked(PlanariaPolicy):
    """Every wake decided; where the core would call it quiet, the decision is checked to be
    ``NOTHING`` with the targets and promises unchanged."""

    def reset(self) -> None:
        super().reset()
        self.own_select_ = True  # answer as the plain class does (``select`` is wrapped here)
        self.predicted = False
        self.quiet_seen = 0

    def quiet_wake(self, reason: str) -> bool:
        self.predicted = super().quiet_wake(reason)
        return False

    def select(self, view: MachineView) -> Schedule:
        predicted, self.predicted = self.predicted, False
        before = (dict(self.targets_), dict(self.promised_), self.settled_)
        out = super().select(view)
        if predicted:
            self.quiet_seen += 1
            assert out is NOTHING
            assert (dict(self.targets_), dict(self.promised_), self.settled_) == before
        return out


def _run(
    policy: Any, workload: str, load: float, seed: int, n: int = 150
) -> dict[str, Any]:
    profs = {n: compile_profile(get_network(n), FA) for n in WORKLOADS[workload]}
    reqs = planaria_workload(workload, "S", load, n_requests=n, random_state=seed)
    sim = Simulator(
        profs, policy, machine=fission_array(), record_timeline=True, record_power=True
    )
    res = sim.run(reqs)
    out = digest(res)
    out["timeline"] = [repr(s) for s in res.timeline or []]
    return out


@pytest.mark.parametrize(("workload", "load", "seed"), [("C", 80.0, 5), ("A", 120.0, 1)])
def test_quiet_wakes_skipped_same_run(workload: str, load: float, seed: int) -> None:
    assert _run(PlanariaPolicy(), workload, load, seed) == _run(_Calls(), workload, load, seed)


@pytest.mark.parametrize(("workload", "load", "seed"), [("C", 80.0, 5), ("A", 120.0, 1)])
def test_quiet_wake_decides_nothing(workload: str, load: float, seed: int) -> None:
    pol = _Checked()
    got = _run(pol, workload, load, seed)
    assert pol.quiet_seen > 0  # the case is exercised
    assert got == _run(PlanariaPolicy(), workload, load, seed)


@settings(max_examples=8, deadline=None)
@given(
    workload=st.sampled_from(["A", "B", "C"]),
    load=st.floats(20.0, 200.0),
    seed=st.integers(0, 10_000),
)
def test_quiet_wakes_random_workloads(workload: str, load: float, seed: int) -> None:
    """Random loads and seeds: every wake declared quiet decides ``NOTHING``, and the run
    with quiet wakes skipped is the run with every wake decided."""
    pol = _Checked()
    got = _run(pol, workload, load, seed, n=60)
    assert got == _run(PlanariaPolicy(), workload, load, seed, n=60)


def test_quiet_wake_rule() -> None:
    pol = PlanariaPolicy()
    rule = quiet_wake_rule(pol)
    assert rule is not None
    pol.reset()
    assert not rule("preempted")  # nothing decided yet
    pol.settled_ = True
    assert rule("preempted") and rule("timer")
    assert not rule("arrival") and not rule("completion")
    assert quiet_wake_rule(object()) is None

    class OwnSelect(PlanariaPolicy):
        def select(self, view: MachineView) -> Schedule:
            return super().select(view)

    own = OwnSelect()
    own.reset()
    own.settled_ = True
    assert not own.quiet_wake("preempted")  # a decision of its own is never declared quiet


def test_direct_handlers_where_compiled() -> None:
    """The wake's loop calls the completion, stop and save handlers directly exactly where the
    engine runs compiled (interpreted, every kind through ``handlers``)."""
    from npusched import native
    from npusched.sim import engine

    assert ("npusched.sim.engine" in native.compiled()) == engine._DIRECT_HANDLERS
