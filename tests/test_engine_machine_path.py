"""The general loop's machine-policy path after issue 25's round-6 work: a start at the decision's
rate, a start at assignment and the capacity check that only runs when it can fail."""

from __future__ import annotations

import pytest

from npusched.errors import SimulationError
from npusched.policies.contract import Allocation, MachineView, Schedule
from npusched.policies.machine import fast_schedule
from npusched.sim import Machine, Resource, Simulator
from npusched.testing import variant_profile
from npusched.workloads.request import Request
from simhelpers import Scripted

MS = 1e-3


def two_pools() -> Machine:
    """Two 4-unit resources whose units change the plan (``subarrays``)."""
    return Machine(
        (
            Resource("a", capacity=4, units_axis="subarrays"),
            Resource("b", capacity=4, units_axis="subarrays"),
        )
    )


def test_fast_schedule_equals_the_constructor() -> None:
    j = object()
    fast = fast_schedule(assign={j: Allocation("a")}, timers=[1.0], rates={j: 0.5})
    slow = Schedule(assign={j: Allocation("a")}, timers=[1.0], rates={j: 0.5})
    assert fast == slow
    assert fast_schedule() == Schedule()


def test_start_at_the_decisions_rate_equals_start_then_retime() -> None:
    """A job started with a rate in the same decision finishes at its isolated time over the
    rate, exactly, and a zero rate is still refused (no division before the check)."""
    prof = variant_profile("n", [1 * MS, 3 * MS], values=(1, 2, 3, 4))

    def script(v: MachineView) -> Schedule:
        return Schedule(
            assign={j: Allocation("a", 4) for j in v.ready},
            rates={j: 0.5 for j in v.ready},
        )

    res = Simulator({"n": prof}, Scripted(script), machine=two_pools()).run(
        [Request(0, 0.0, "n")]
    )
    iso = float(res.columns["isolated_s"][0])
    assert res.columns["finish_s"][0] == 0.0 + (iso - 0.0) / 0.5

    def zero(v: MachineView) -> Schedule:
        return Schedule(assign={j: Allocation("a", 4) for j in v.ready}, rates={j: 0.0 for j in v.ready})

    with pytest.raises(SimulationError, match="must be > 0"):
        Simulator({"n": prof}, Scripted(zero), machine=two_pools()).run([Request(0, 0.0, "n")])


def test_a_start_on_units_a_moving_job_needs_is_refused() -> None:
    """Job 0 runs on ``a``; at job 1's arrival both are given ``b``'s four units: job 0 moves
    (checkpoint, then start on ``b``), job 1's units are free at once. The decision needs 8 of
    4 units: refused although job 1 could start at assignment."""
    prof = variant_profile("n", [5 * MS, 5 * MS], values=(1, 2, 3, 4))

    def script(v: MachineView) -> Schedule:
        if v.reason == "arrival" and v.now == 0.0:
            return Schedule(assign={j: Allocation("a", 4) for j in v.ready})
        if v.reason == "arrival":
            moving = {j: Allocation("b", 4) for j in v.running}
            return Schedule(assign={**moving, **{j: Allocation("b", 4) for j in v.ready}})
        return Schedule()

    reqs = [Request(0, 0.0, "n"), Request(1, 1 * MS, "n")]
    with pytest.raises(SimulationError, match="allocated 8 unit"):
        Simulator({"n": prof}, Scripted(script), machine=two_pools()).run(reqs)


def test_events_at_one_time_keep_the_order_of_a_start_then_a_retime() -> None:
    """Job 0 runs alone on ``a``; at 1 ms job 1 starts on ``b`` and both get rate 0.5, so both
    end at exactly 3 ms. The general loop has always pushed the new job's start, then re-timed
    job 0, then job 1: job 0's completion comes first. A start at assignment keeps that order
    (its one event is pushed where the re-timing pushed it)."""
    prof_x = variant_profile("x", [8 * MS], values=(1, 2, 3, 4))
    prof_y = variant_profile("y", [4 * MS], values=(1, 2, 3, 4))
    done: list[int] = []

    class Recording(Scripted):
        def on_complete(self, job: object, now: float) -> None:
            done.append(job.id)  # type: ignore[attr-defined]

    def script(v: MachineView) -> Schedule:
        if v.reason != "arrival":
            return Schedule()
        if v.now == 0.0:
            return Schedule(assign={j: Allocation("a", 4) for j in v.ready})
        (x,) = v.running
        (y,) = v.ready
        return Schedule(assign={y: Allocation("b", 4)}, rates={x: 0.5, y: 0.5})

    reqs = [Request(0, 0.0, "x"), Request(1, 1 * MS, "y")]
    res = Simulator({"x": prof_x, "y": prof_y}, Recording(script), machine=two_pools()).run(reqs)
    assert res.columns["finish_s"][0] == res.columns["finish_s"][1] == 3 * MS
    assert done == [0, 1]
