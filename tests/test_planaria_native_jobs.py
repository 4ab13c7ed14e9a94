"""Planaria's decision reads the engine's jobs through their native class (``type(job) is
Job``: their slots and ``position`` read directly where compiled, a held allocation's units
taken from ``Job.units`` where the allocation is the policy's own object for that count) and
any other job through the ``JobView`` protocol. At every decision of busy runs, a twin of the
policy (the same per-run state, copied) decides on the same view with every job wrapped in a
plain proxy (the protocol's path): the same schedule, the same targets and promises after."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from npusched.hardware import compile_profile
from npusched.hardware.fission import FissionArray
from npusched.models import get_network
from npusched.policies.contract import NOTHING, MachineView, Schedule
from npusched.policies.spatial import PlanariaPolicy
from npusched.sim.engine import Simulator
from npusched.sim.job import Job
from npusched.sim.resources import fission_array
from npusched.workloads.planaria import WORKLOADS, planaria_workload

FA = FissionArray()


class _Proxy:
    """A job seen only through its attributes (not the engine's class)."""

    def __init__(self, job: Any) -> None:
        self._job = job

    def __getattr__(self, name: str) -> Any:
        return getattr(self._job, name)


def _twin(pol: PlanariaPolicy) -> PlanariaPolicy:
    """A policy with a copy of ``pol``'s per-run state."""
    t = PlanariaPolicy(resource=pol.resource)
    t.reset()
    t.targets_ = dict(pol.targets_)
    t.promised_ = dict(pol.promised_)
    t.tables_ = pol.tables_
    t.size_ = pol.size_
    t.allocs_ = dict(pol.allocs_)
    t.tab_of_ = dict(pol.tab_of_)
    t.rec_of_ = dict(pol.rec_of_)
    return t


def _as_ids(s: Schedule) -> tuple[dict[int, Any], list[int]]:
    if s is NOTHING:
        return {}, []
    return (
        {j.id: (a.resource, a.units) for j, a in s.assign.items()},
        [j.id for j in s.preempt],
    )


class _Twinned(PlanariaPolicy):
    """Planaria whose every decision is compared with a twin's on proxied jobs."""

    def __init__(self) -> None:
        super().__init__()
        self.decisions = 0
        self.native_jobs = 0

    def select(self, view: MachineView) -> Schedule:
        twin = _twin(self)
        pview = replace(
            view,
            running=[_Proxy(j) for j in view.running],
            preempting=[_Proxy(j) for j in view.preempting],
            ready=[_Proxy(j) for j in view.ready],
        )
        want = twin.select(pview)
        got = super().select(view)
        assert (got is NOTHING) == (want is NOTHING), (view.now, view.reason)
        assert _as_ids(got) == _as_ids(want), (view.now, view.reason)
        assert self.targets_ == twin.targets_
        assert self.promised_ == twin.promised_
        self.decisions += 1
        self.native_jobs += sum(
            type(j) is Job for j in (*view.running, *view.preempting, *view.ready)
        )
        return got


@pytest.mark.parametrize(("workload", "qos", "rate"), [("C", "S", 400.0), ("B", "H", 3000.0)])
def test_native_jobs_decide_as_the_protocol(workload: str, qos: str, rate: float) -> None:
    names = WORKLOADS[workload]
    profs = {n: compile_profile(get_network(n), FA) for n in names}
    reqs = planaria_workload(workload, qos, rate, n_requests=150, random_state=3)
    pol = _Twinned()
    res = Simulator(profs, pol, machine=fission_array()).run(reqs)
    ref = Simulator(profs, PlanariaPolicy(), machine=fission_array()).run(reqs)
    assert res.n_finished == len(reqs)
    assert pol.decisions > 100 and pol.native_jobs > 0
    # the twins' decisions changed nothing of the run
    assert res.to_frame().equals(ref.to_frame())
