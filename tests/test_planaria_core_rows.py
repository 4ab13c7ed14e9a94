"""Planaria's long-queue inputs made from each job's record (``planaria_core.core_rows``):
the same priorities, slacks and PREDICTTIME rows, bit for bit, as ``_targets_arrays`` made job
by job through ``_remaining`` before, on queues long enough for the NumPy Algorithm 1 (at
least ``SMALL_QUEUE`` jobs) and with preempted jobs waiting at partial positions. Run compiled
and with ``NPUSCHED_PURE=1``, these check both builds."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from npusched.policies.contract import JobView
from npusched.policies.spatial import PlanariaPolicy
from npusched.policies.spatial import planaria as planaria_mod
from npusched.policies.spatial.planaria_core import SMALL_QUEUE, core_rows
from npusched.sim.engine import Simulator
from npusched.sim.resources import fission_array
from npusched.workloads.planaria import WORKLOADS, planaria_workload
from test_planaria_core_paths import _profiles, _same


class _ByJob(PlanariaPolicy):
    """``_remaining`` replaced by the class's own (a call to it): the long queue's inputs are
    then made job by job, as before ``core_rows``."""

    def _remaining(self, job: JobView, tab: Any) -> Any:
        return PlanariaPolicy._remaining(self, job, tab)


@pytest.mark.parametrize("rate", [200.0, 400.0])
def test_long_queue_rows_equal_the_job_by_job_rows(monkeypatch: pytest.MonkeyPatch, rate: float) -> None:
    """Workload-C at two and four times the bench's rate (queues of tens of jobs, many of
    them preempted mid-plan): ``core_rows``' inputs equal ``_remaining``'s at every long-queue
    decision, and the runs are the same bit for bit."""
    profs = _profiles(WORKLOADS["C"])
    reqs = planaria_workload("C", "S", rate, n_requests=400, random_state=5)
    calls: list[int] = []
    partial: list[int] = []
    real = planaria_mod.core_rows

    def checked(core: Any, jobs: Any, size: int, profiles: Any, now: Any) -> Any:
        prio, slack, rows = real(core, jobs, size, profiles, now)
        calls.append(len(jobs))
        ref_rows = np.array(
            [PlanariaPolicy._remaining(core, j, core._table(j, size, profiles)) for j in jobs]
        )
        assert rows.dtype == ref_rows.dtype and rows.tobytes() == ref_rows.tobytes()
        ref_p = np.array([float(j.priority) for j in jobs])
        assert prio.tobytes() == ref_p.tobytes()
        ref_s = np.array(
            [
                math.inf if j.request.slo_s is None else j.request.slo_s - (now - j.arrival_s)
                for j in jobs
            ]
        )
        assert slack.tobytes() == ref_s.tobytes()
        partial.append(sum(1 for j in jobs if j.position[1] != 0.0))
        return prio, slack, rows

    monkeypatch.setattr(planaria_mod, "core_rows", checked)
    pol = PlanariaPolicy()
    got = Simulator(profs, pol, machine=fission_array()).run(reqs)
    assert pol.own_rows_ is True
    assert calls and max(calls) >= SMALL_QUEUE and sum(partial) > 0
    by_job = _ByJob()
    ref = Simulator(profs, by_job, machine=fission_array()).run(reqs)
    assert by_job.own_rows_ is False
    _same(got, ref)


def test_rows_of_an_empty_queue() -> None:
    pol = PlanariaPolicy()
    pol.reset()
    prio, slack, rows = core_rows(pol, [], 16, {}, 0.0)
    assert prio.shape == (0,) and slack.shape == (0,) and rows.shape == (0, 16)
