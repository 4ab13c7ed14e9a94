"""The column loop (:mod:`npusched.sim.columns`) gives exactly the general loop's result for
round-robin among models (NP-RRB, P-RRB; the declared order ``"round-robin"``): every column,
``events``, energy, busy time, the power pieces and the timeline, with the general loop's
quiet ticks passed over and its CHECKPOINT stops carried out at the decision."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from golden_engine import digest, load_simulator
from npusched.bench import bench_workload, synthetic_profiles
from npusched.policies.contract import declared_order
from npusched.policies.temporal.rrb import NPRRB, PRRB
from npusched.sim import columns
from npusched.sim.engine import Simulator, _Run
from npusched.workloads.request import Request
from simhelpers import assert_same_run, jobs_made, make_profile
from test_ranked_fast_path import energy_workload

SETTINGS = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
MECHANISMS = ("checkpoint", "dynamic", "dynamic-kill")


def _policy(preemptive: bool, hooked: bool = False, **params: Any) -> Any:
    if hooked:
        return _HookedPRRB(**params) if preemptive else _HookedNPRRB()
    return PRRB(**params) if preemptive else NPRRB()


class _HookedNPRRB(NPRRB):
    """``select`` redefined as the class's own: no declared order, so the general loop runs
    the policy's hooks and ``select`` with views (the reference for the engine's rotation)."""

    def select(self, view: Any) -> Any:
        return super().select(view)


class _HookedPRRB(PRRB):
    """As :class:`_HookedNPRRB`, preemptive."""

    def select(self, view: Any) -> Any:
        return super().select(view)


def _both(profiles: Any, reqs: Any, preemptive: bool, params: dict, **kw: Any) -> tuple[Any, Any]:
    """The column loop's run and the general loop's (its own rotation), after checking the
    general loop's against the policy's hooks and ``select``."""
    until = kw.pop("until", None)
    out = []
    for fast, hooked in ((True, False), (False, False), (False, True)):
        sim = Simulator(profiles, _policy(preemptive, hooked, **params), fast_path=fast, **kw)
        out.append(sim.run(reqs) if until is None else sim.run(reqs, until=until))
    assert_same_run(out[2], out[1])
    return out[0], out[1]


@SETTINGS
@given(
    wl=energy_workload(),
    preemptive=st.booleans(),
    mechanism=st.sampled_from(MECHANISMS),
    # 50 us periods put boundaries on the arrivals' 10 us grid (ties within the tolerance).
    period=st.sampled_from([5e-5, 1e-4, 2.5e-4, 3.3e-5]),
    quantum=st.sampled_from([5e-5, 1e-4, 2.5e-4, 3.7e-4]),
    point=st.sampled_from(["tile", "layer"]),
    cost=st.booleans(),
    until=st.sampled_from([None, 1e-3, 2.05e-3]),
)
def test_fast_path_equals_general_loop(
    wl: tuple,
    preemptive: bool,
    mechanism: str,
    period: float,
    quantum: float,
    point: str,
    cost: bool,
    until: float | None,
) -> None:
    profiles, reqs = wl
    params = {"mechanism": mechanism, "quantum_s": quantum, "period_s": period}
    fast, general = _both(
        profiles,
        reqs,
        preemptive,
        params,
        preemption_point=point,
        checkpoint_cost=cost,
        record_power=True,
        record_timeline=True,
        until=until,
    )
    assert_same_run(fast, general)


@pytest.mark.parametrize("mechanism", MECHANISMS)
@pytest.mark.parametrize("load", [0.9, 1.5])
@pytest.mark.parametrize(("quantum_s", "period_s"), [(0.25e-3, 0.25e-3), (0.37e-3, 0.1e-3)])
def test_fast_path_equals_general_loop_at_load(
    mechanism: str, load: float, quantum_s: float, period_s: float
) -> None:
    """The bench workload (tile preemption, checkpoint cost, PREMA's predictor, power and
    timeline recorded) at loads 0.9 and 1.5: thousands of slices, identical to the last bit."""
    profiles = synthetic_profiles(random_state=3)
    reqs = bench_workload(400, profiles, load=load, random_state=11)
    runs = []
    for fast, cls in ((True, PRRB), (False, PRRB), (False, _HookedPRRB)):
        pol = cls(mechanism=mechanism, quantum_s=quantum_s, period_s=period_s)
        sim = load_simulator(profiles, pol, record_timeline=True)
        sim.fast_path = fast
        runs.append(sim.run(reqs))
    fast_r, general, hooked = runs
    assert_same_run(fast_r, general)
    assert_same_run(hooked, general)
    assert digest(fast_r) == digest(general)
    assert fast_r.columns["preemptions"].sum() > 10


@pytest.mark.parametrize("fraction", [0.1, 0.5, 0.9])
@pytest.mark.parametrize("preemptive", [True, False])
def test_until_stops_where_the_general_loop_stops(fraction: float, preemptive: bool) -> None:
    """With ``until`` (stops are events then, not carried out at the decision), the partial
    records and the run's end are the general loop's."""
    profiles = synthetic_profiles(random_state=3)
    reqs = bench_workload(200, profiles, load=1.5, random_state=11)
    params = {"mechanism": "checkpoint", "quantum_s": 0.5e-3, "period_s": 0.25e-3}
    end = Simulator(profiles, _policy(preemptive, **params)).run(reqs).end_s
    fast, general = _both(
        profiles, reqs, preemptive, params, until=fraction * end, record_power=True
    )
    assert_same_run(fast, general)


def test_round_robin_takes_the_column_loop() -> None:
    """NP-RRB and P-RRB declare ``"round-robin"`` and run without ``Job`` objects; a subclass
    that overrides a method of the rule or of the ticks declares nothing (the general loop)."""
    profiles = {"a": make_profile("a", [1e-3, 2e-3]), "b": make_profile("b", [5e-4])}
    reqs = [Request(id=i, arrival_s=i * 1e-4, network="ab"[i % 2]) for i in range(6)]

    def takes(policy: Any, **kw: Any) -> bool:
        sim = Simulator(profiles, policy, **kw)
        return columns.applies(_Run(sim, reqs, None, None))

    assert declared_order(PRRB()) == declared_order(NPRRB()) == "round-robin"
    assert takes(PRRB()) and takes(NPRRB()) and takes(PRRB(mechanism="dynamic-kill"))
    assert not takes(PRRB(), fast_path=False)
    assert jobs_made(Simulator(profiles, PRRB()), reqs) == 0
    assert jobs_made(Simulator(profiles, PRRB(), fast_path=False), reqs) == 6

    class Ticking(PRRB):
        quiet_before = None  # type: ignore[assignment]

    class Hooked(PRRB):
        def on_complete(self, job: Any, now: float) -> None:
            super().on_complete(job, now)

    class Preempting(NPRRB):
        preemptive = True

    for cls in (Ticking, Hooked, Preempting):
        assert declared_order(cls()) is None, cls.__name__
        assert not takes(cls()), cls.__name__
