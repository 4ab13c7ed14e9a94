"""P-RRB chooses from per-model heaps instead of scanning the ready queue (issue 25 item 3): every
result, the event count included, equals the scan's (the rule as written in ``next_job``)."""

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
    """P-RRB as before issue 25's third round: the ready queue scanned at every decision."""

    def _counted(self, view: SchedulerView) -> bool:
        return False


def _run(policy: Any, n: int, load: float) -> dict[str, Any]:
    profiles = synthetic_profiles(random_state=3)
    reqs = bench_workload(n, profiles, load=load, random_state=11)
    sim = Simulator(
        profiles,
        policy,
        preemption_point="tile",
        checkpoint_cost=True,
        estimator=make_estimator("prema"),
        record_power=True,
    )
    return digest(sim.run(reqs))


@pytest.mark.parametrize("mechanism", ["checkpoint", "dynamic", "dynamic-kill"])
@pytest.mark.parametrize("load", [0.9, 1.5])
def test_heaps_equal_the_scan(mechanism: str, load: float) -> None:
    kw = {"mechanism": mechanism, "quantum_s": 0.5e-3, "period_s": 0.25e-3}
    assert _run(PRRB(**kw), 150, load) == _run(ScanningRRB(**kw), 150, load)


def test_a_hand_built_view_is_scanned() -> None:
    """A view whose ready list is not the counted one (jobs removed by hand) takes the scan."""
    from test_prema_policies import FakeJob, started, view

    a = FakeJob(0, network="alexnet")
    b = FakeJob(1, network="vgg-16", arrival_s=1e-5)
    pol = started(PRRB(), a, b)
    assert pol._counted(view([a, b]))
    assert not pol._counted(view([b]))
    assert pol.select(view([b])).run is b
