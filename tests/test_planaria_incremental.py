"""Planaria's Algorithm 1 as the policy computes it during a run (estimates per job computed
lazily, only the counts ESTIMATERESOURCES scans) against the pseudo-code's functions on the
task records of the same views (:meth:`PlanariaPolicy.tasks` and
:func:`schedule_tasks_spatially`), at every decision of busy runs."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from npusched.hardware import compile_profile
from npusched.hardware.fission import FissionArray
from npusched.models import get_network
from npusched.policies.contract import MachineView
from npusched.policies.spatial import PlanariaPolicy
from npusched.policies.spatial.planaria import (
    SMALL_QUEUE,
    SpatialTask,
    _estimate,
    estimate_resources,
    schedule_tasks_spatially,
)
from npusched.sim.engine import Simulator
from npusched.sim.resources import fission_array
from npusched.workloads.planaria import WORKLOADS, planaria_workload

FA = FissionArray()


class _Checked(PlanariaPolicy):
    """Planaria whose every Algorithm 1 run is compared with the pseudo-code's."""

    def __init__(self) -> None:
        super().__init__()
        self.sizes: list[int] = []

    def _targets(self, jobs: Any, view: MachineView, size: int) -> dict[int, int]:
        got = super()._targets(jobs, view, size)
        ref = schedule_tasks_spatially([t for _, t in self.tasks(view)], size)
        assert {i: c for i, c in got.items() if c > 0} == ref, (view.now, view.reason)
        assert set(got) == {j.id for j in jobs}
        self.sizes.append(len(jobs))
        return got


@pytest.mark.parametrize(("workload", "qos", "rate"), [("C", "S", 400.0), ("B", "H", 3000.0)])
def test_targets_equal_the_pseudo_code_at_every_decision(
    workload: str, qos: str, rate: float
) -> None:
    names = WORKLOADS[workload]
    profs = {n: compile_profile(get_network(n), FA) for n in names}
    reqs = planaria_workload(workload, qos, rate, n_requests=150, random_state=3)
    pol = _Checked()
    res = Simulator(profs, pol, machine=fission_array()).run(reqs)
    assert res.n_finished == len(reqs)
    sizes = np.array(pol.sizes)
    # the lone-task, the small-queue and the array paths were all taken
    assert (sizes <= 1).any()
    assert ((sizes >= 2) & (sizes < SMALL_QUEUE)).any()
    assert (sizes >= SMALL_QUEUE).any()


def test_select_calls_a_subclass_s_targets_and_the_core_s_directly() -> None:
    """``select`` calls the core's Algorithm 1 directly (``core_targets``) only where the class
    keeps the core's ``_targets``; a subclass's own is called at every dispatch and completion
    (``_Checked``, above), and both decide the same run."""
    names = WORKLOADS["C"]
    profs = {n: compile_profile(get_network(n), FA) for n in names}
    reqs = planaria_workload("C", "S", 400.0, n_requests=60, random_state=5)
    plain, checked = PlanariaPolicy(), _Checked()
    a = Simulator(profs, plain, machine=fission_array()).run(reqs)
    b = Simulator(profs, checked, machine=fission_array()).run(reqs)
    assert plain.own_targets_ and not checked.own_targets_
    assert checked.sizes  # the subclass's ``_targets`` ran
    assert a.summary() == b.summary()


def test_estimate_equals_estimate_resources_on_every_position() -> None:
    """``_estimate`` at a table position gives ESTIMATERESOURCES' count on the full row and
    the row's entry there, bit for bit (slack below, between and above the row's values)."""
    profs = {n: compile_profile(get_network(n), FA) for n in WORKLOADS["C"]}
    pol = PlanariaPolicy()
    rng = np.random.default_rng(0)
    reqs = planaria_workload("C", "S", 50.0, n_requests=len(WORKLOADS["C"]), random_state=0)
    for r in reqs:
        job: Any = type("J", (), {"network": r.network, "request": r})()
        tab = pol._table(job, 16, profs)
        for _ in range(40):
            step = int(rng.integers(0, tab.steps + 1))
            frac = 0.0 if rng.random() < 0.3 else float(rng.random())
            job.position = (step, frac)
            row = pol._remaining(job, tab)
            for slack in (-1.0, 0.0, float(row.min()), float(row.max()), float(rng.choice(row))):
                est = estimate_resources(SpatialTask(r.id, 1.0, slack, row), 16)
                got = _estimate(tab, step, frac, slack, 16)
                assert got == (est, float(row[est - 1]))
