"""P-RRB chooses from per-model heaps instead of scanning the ready queue (issue 25 item 3): every
result, the event count included, equals the scan's (the rule as written in ``next_job``)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from golden_engine import digest, load_simulator
from npusched.bench import bench_workload, synthetic_profiles
from npusched.policies.contract import SchedulerView
from npusched.policies.temporal.rrb import PRRB


class ScanningRRB(PRRB):
    """P-RRB as before issue 25's third round: the ready queue scanned at every decision."""

    def _counted(self, view: SchedulerView) -> bool:
        return False


def _run(policy: Any, n: int, load: float) -> dict[str, Any]:
    return digest(_run_with(policy, n, load, timeline=False))


@pytest.mark.parametrize("mechanism", ["checkpoint", "dynamic", "dynamic-kill"])
@pytest.mark.parametrize("load", [0.9, 1.5])
def test_heaps_equal_the_scan(mechanism: str, load: float) -> None:
    kw = {"mechanism": mechanism, "quantum_s": 0.5e-3, "period_s": 0.25e-3}
    assert _run(PRRB(**kw), 150, load) == _run(ScanningRRB(**kw), 150, load)


def test_an_overridden_counted_takes_the_scan() -> None:
    """The decisions test ``_counted`` inline only where the class keeps the policy's own: a
    subclass that overrides it (``ScanningRRB`` above) never reaches the heaps, so the test
    before compares two different paths."""
    calls: list[str] = []

    def spy(base: type[PRRB]) -> PRRB:
        class Spy(base):  # type: ignore[valid-type, misc]
            def _next_counted(self, after: str | None, skip: str | None = None) -> Any:
                calls.append(type(self).__mro__[1].__name__)
                return super()._next_counted(after, skip)

        return Spy(mechanism="checkpoint")

    _run(spy(ScanningRRB), 60, 0.9)
    assert calls == []
    _run(spy(PRRB), 60, 0.9)
    assert calls and set(calls) == {"PRRB"}


def test_a_hand_built_view_is_scanned() -> None:
    """A view whose ready list is not the counted one (jobs removed by hand) takes the scan."""
    from test_prema_policies import FakeJob, started, view

    a = FakeJob(0, network="alexnet")
    b = FakeJob(1, network="vgg-16", arrival_s=1e-5)
    pol = started(PRRB(), a, b)
    assert pol._counted(view([a, b]))
    assert not pol._counted(view([b]))
    assert pol.select(view([b])).run is b


class TickingRRB(PRRB):
    """P-RRB woken at every period boundary while jobs wait (no ``quiet_before``), as before
    issue 25's seventh round."""

    quiet_before = None  # type: ignore[assignment]


def _run_with(
    policy: Any, n: int, load: float, until: float | None = None, timeline: bool = True
) -> Any:
    """The bench workload of ``n`` requests at ``load`` under ``policy`` (tile preemption,
    checkpoint cost, PREMA's predictor, power recorded; the timeline too unless ``timeline``
    is false)."""
    profiles = synthetic_profiles(random_state=3)
    reqs = bench_workload(n, profiles, load=load, random_state=11)
    sim = load_simulator(profiles, policy, record_timeline=timeline)
    return sim.run(reqs) if until is None else sim.run(reqs, until=until)


@pytest.mark.parametrize("mechanism", ["checkpoint", "dynamic", "dynamic-kill"])
@pytest.mark.parametrize("load", [0.9, 1.5])
@pytest.mark.parametrize("quantum_s", [0.25e-3, 0.5e-3, 0.37e-3])
def test_quiet_ticks_change_only_the_event_count(
    mechanism: str, load: float, quantum_s: float
) -> None:
    """Ticks that cannot change the decision (quantum not used up, no other model waiting, a
    save in flight) are passed over: every result but ``events`` equals ticking every period,
    the timeline included, and the events fall."""
    kw = {"mechanism": mechanism, "quantum_s": quantum_s, "period_s": 0.25e-3}
    a = _run_with(PRRB(**kw), 150, load)
    b = _run_with(TickingRRB(**kw), 150, load)
    da, db = digest(a), digest(b)
    assert da.pop("events") < db.pop("events")
    assert da == db
    assert a.timeline == b.timeline


@pytest.mark.parametrize("fraction", [0.1, 0.5, 0.9])
def test_quiet_ticks_stop_where_every_tick_stops(fraction: float) -> None:
    """With ``until``, the partial records (and the run's end) are the ticking run's."""
    kw = {"mechanism": "checkpoint", "quantum_s": 0.5e-3, "period_s": 0.25e-3}
    until_s = fraction * _run_with(PRRB(**kw), 150, 1.5).end_s
    a = _run_with(PRRB(**kw), 150, 1.5, until_s)
    assert a.events > 0
    assert np.isnan(a.columns["finish_s"]).any()  # stopped mid-run
    da = digest(a)
    db = digest(_run_with(TickingRRB(**kw), 150, 1.5, until_s))
    da.pop("events")
    db.pop("events")
    assert da == db


@pytest.mark.parametrize("load", [0.9, 1.5])
def test_a_checkpoint_stop_is_carried_out_at_the_decision(load: float) -> None:
    """P-RRB's CHECKPOINT stop is not a wake of its own (nothing can happen on the array before
    the save is done): every result but ``events`` equals a run whose stops are events (any
    ``until`` keeps them), and the events fall by exactly one per preemption."""
    kw = {"mechanism": "checkpoint", "quantum_s": 0.25e-3, "period_s": 0.25e-3}
    a = _run_with(PRRB(**kw), 150, load)
    b = _run_with(PRRB(**kw), 150, load, until=1e9)  # past the end: the run is the same
    da, db = digest(a), digest(b)
    ea, eb = da.pop("events"), db.pop("events")
    assert da == db
    assert a.timeline == b.timeline
    stops = int(a.columns["preemptions"].sum())
    assert stops > 0
    assert eb - ea == stops


def _dependent_workload(n: int, load: float) -> tuple[Any, list[Any]]:
    """The bench workload with every fourth request held back until the one three before it
    finishes: such a request is dispatched after live requests that it comes before in
    first-come order (an earlier arrival)."""
    from dataclasses import replace

    profiles = synthetic_profiles(random_state=3)
    reqs = list(bench_workload(n, profiles, load=load, random_state=11))
    reqs = [replace(r, depends_on=r.id - 3, transfer_s=1e-5) if r.id % 4 == 3 else r for r in reqs]
    return profiles, reqs


@pytest.mark.parametrize("mechanism", ["checkpoint", "dynamic", "dynamic-kill"])
@pytest.mark.parametrize("policy", ["NP-RRB", "P-RRB"])
def test_the_hooks_rotation_equals_the_scan_out_of_first_come_order(
    mechanism: str, policy: str
) -> None:
    """The hooks' :class:`~npusched.policies.temporal.rrb_core.Rotation` numbers jobs as they
    are dispatched; a job dispatched after a live job of its model that it comes before
    renumbers that model's live jobs (``_renumber``), so the general loop's decisions from the
    rotation equal the scan of the ready list (``next_job``) when dependencies dispatch
    requests late."""
    from npusched.policies.temporal.rrb import NPRRB

    class ScanningNPRRB(NPRRB):
        def _counted(self, view: SchedulerView) -> bool:
            return False

    # ``select`` redefined (as the class's own): no declared order, so the general loop calls
    # the hooks and ``select`` (a declared round-robin order is decided on the engine's own
    # rotation since the twenty-sixth round)
    class HookedNPRRB(NPRRB):
        def select(self, view: SchedulerView) -> Any:
            return super().select(view)

    class HookedPRRB(PRRB):
        def select(self, view: SchedulerView) -> Any:
            return super().select(view)

    renumbered: list[int] = []

    def make(scan: bool) -> Any:
        if policy == "NP-RRB":
            return ScanningNPRRB() if scan else HookedNPRRB()
        return (ScanningRRB if scan else HookedPRRB)(mechanism=mechanism, quantum_s=0.5e-3)

    profiles, reqs = _dependent_workload(160, 1.5)
    out = []
    for scan in (False, True):
        pol = make(scan)
        sim = load_simulator(profiles, pol, record_timeline=True)  # the policy's hooks decide
        res = sim.run(reqs)
        out.append(digest(res))
        if not scan:
            renumbered.append(pol.rot_.model_of.__len__() - len(reqs))
    assert out[0] == out[1]
    assert renumbered[0] > 0  # live jobs were numbered again (numbers beyond one per job)


@pytest.mark.parametrize("mechanism", ["checkpoint", "dynamic", "dynamic-kill"])
@pytest.mark.parametrize("load", [0.9, 1.5])
def test_the_engine_rotation_equals_the_hooks(mechanism: str, load: float) -> None:
    """The engine's own rotation and the policy's hooks and ``select`` (a subclass that
    redefines ``select`` as the class's: no declared order) ask the same ``Rotation.pick``:
    every result, ``events`` included, is equal. (Until the twenty-eighth round the column
    loop was compared here too.)"""

    class HookedPRRB(PRRB):
        def select(self, view: SchedulerView) -> Any:
            return super().select(view)

    kw = {"mechanism": mechanism, "quantum_s": 0.37e-3, "period_s": 0.25e-3}
    profiles = synthetic_profiles(random_state=3)
    reqs = bench_workload(150, profiles, load=load, random_state=11)
    out = []
    for cls in (PRRB, HookedPRRB):
        sim = load_simulator(profiles, cls(**kw), record_timeline=True)
        out.append(digest(sim.run(reqs)))
    assert out[0] == out[1]
