"""P-RRB wakes only where its decision can change (issue 25 item 3): at slice ends, not at every
period boundary, and chooses from per-model heaps instead of scanning the ready queue. Both must
leave every result equal to the scan at every period (the rule as written in ``next_job``)."""

from __future__ import annotations

from typing import Any

import pytest

from golden_engine import digest
from npusched.bench import bench_workload, synthetic_profiles
from npusched.policies.contract import SchedulerView
from npusched.policies.temporal.predictor import make_estimator
from npusched.policies.temporal.rrb import PRRB
from npusched.sim.engine import Simulator


class ScanningRRB(PRRB):
    """P-RRB as before issue 25's third round: the ready queue scanned at every decision and a
    tick at every period boundary (``quiet_periods`` answers 0 when the queue is not counted)."""

    def _counted(self, view: SchedulerView) -> bool:
        return False


def _run(policy: Any, n: int, load: float, skip: bool = True) -> dict[str, Any]:
    profiles = synthetic_profiles(random_state=3)
    reqs = bench_workload(n, profiles, load=load, random_state=11)
    sim = Simulator(
        profiles,
        policy,
        preemption_point="tile",
        checkpoint_cost=True,
        estimator=make_estimator("prema"),
        record_power=True,
        skip_periods=skip,
    )
    return digest(sim.run(reqs))


@pytest.mark.parametrize("mechanism", ["checkpoint", "dynamic", "dynamic-kill"])
@pytest.mark.parametrize("load", [0.9, 1.5])
def test_slice_end_wakes_equal_the_scan_at_every_period(mechanism: str, load: float) -> None:
    kw = {"mechanism": mechanism, "quantum_s": 0.5e-3, "period_s": 0.25e-3}
    fast = _run(PRRB(**kw), 150, load)
    scan = _run(ScanningRRB(**kw), 150, load, skip=False)  # main before this change
    every = _run(PRRB(**kw), 150, load, skip=False)  # heaps, a tick at every boundary
    for key in scan:
        if key != "events":
            assert fast[key] == scan[key], key
            assert every[key] == scan[key], key
    assert every["events"] == scan["events"]
    assert fast["events"] < scan["events"]  # the quiet boundaries are not events


def test_quiet_periods_counts_the_boundaries_before_the_quantum_ends() -> None:
    from npusched.policies.contract import JobState
    from test_prema_policies import FakeJob, started, view

    ms = 1e-3
    a = FakeJob(0, network="alexnet")
    b = FakeJob(1, network="vgg-16", arrival_s=0.01 * ms)
    pol = started(PRRB(quantum_s=1 * ms, period_s=0.25 * ms), a, b)
    assert pol.select(view([a, b], now=0.1 * ms)).run is a  # slice starts at 0.1 ms
    a.state = JobState.RUNNING
    # boundaries 0.25, 0.5, 0.75, 1.0 ms are inside the slice; 1.25 ms is the first past it
    assert pol.quiet_periods(view([b], running=a, now=0.1 * ms), 0.25 * ms) == 4
    assert pol.quiet_periods(view([b], running=a, now=1.0 * ms), 1.25 * ms) == 0
    # only the running model has work: nothing until an event
    pol2 = started(PRRB(), a, FakeJob(2, network="alexnet"))
    pol2.slice_job_ = 0
    assert pol2.quiet_periods(view([FakeJob(2, network="alexnet")], running=a), 0.25 * ms) > 1e9
    # a hand-built view the counts do not match: every boundary ticks
    assert pol.quiet_periods(view([], running=a, now=0.1 * ms), 0.25 * ms) == 0
