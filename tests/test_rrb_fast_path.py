"""Round-robin among models (NP-RRB, P-RRB; the declared order ``"round-robin"``), which the
engine decides on its own rotation, gives exactly the result of the policy's hooks and
``select`` (a subclass that redefines ``select``: no declared order): every column,
``events``, energy, busy time, the power pieces and the timeline, with the quiet ticks passed
over and the CHECKPOINT stops carried out at the decision. The runs that compared the column
loop with the general loop until the twenty-eighth round are checked against the values frozen
from them (``tests/golden_loops.py``)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import golden_loops
from golden_engine import load_simulator
from npusched.bench import bench_workload, synthetic_profiles
from npusched.policies.contract import declared_order
from npusched.policies.temporal.rrb import NPRRB, PRRB
from npusched.sim.engine import Simulator
from simhelpers import assert_same_run
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
    """The run on the engine's rotation and the run of the policy's hooks and ``select``."""
    until = kw.pop("until", None)
    out = []
    for hooked in (False, True):
        sim = Simulator(profiles, _policy(preemptive, hooked, **params), **kw)
        out.append(sim.run(reqs) if until is None else sim.run(reqs, until=until))
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
def test_engine_rotation_equals_the_hooks(
    wl: tuple,
    preemptive: bool,
    mechanism: str,
    period: float,
    quantum: float,
    point: str,
    cost: bool,
    until: float | None,
) -> None:
    """(Until the twenty-eighth round the column loop was compared here too.)"""
    profiles, reqs = wl
    params = {"mechanism": mechanism, "quantum_s": quantum, "period_s": period}
    got, hooked = _both(
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
    assert_same_run(got, hooked)


@pytest.mark.parametrize("mechanism", golden_loops.RRB_MECHANISMS)
@pytest.mark.parametrize("load", golden_loops.RRB_LOADS)
@pytest.mark.parametrize(("quantum_s", "period_s"), golden_loops.RRB_SLICES)
def test_round_robin_at_load(
    mechanism: str, load: float, quantum_s: float, period_s: float
) -> None:
    """The bench workload (tile preemption, checkpoint cost, PREMA's predictor, power and
    timeline recorded) at loads 0.9 and 1.5: thousands of slices, the run both loops gave at
    dbd9f47 (its digest holds the timeline and the power pieces), and the hooks give it too."""
    res = golden_loops.frozen(f"rrb-load/{mechanism}/{load}/{quantum_s}/{period_s}")
    profiles, reqs = golden_loops.load_workload(400, load, random_state=11)
    pol = _HookedPRRB(mechanism=mechanism, quantum_s=quantum_s, period_s=period_s)
    hooked = load_simulator(profiles, pol, record_timeline=True).run(reqs)
    assert_same_run(res, hooked)
    assert res.columns["preemptions"].sum() > 10


@pytest.mark.parametrize("fraction", [0.1, 0.5, 0.9])
@pytest.mark.parametrize("preemptive", [True, False])
def test_until_stops_where_the_hooks_stop(fraction: float, preemptive: bool) -> None:
    """With ``until`` (stops are events then, not carried out at the decision), the partial
    records and the run's end are those of the policy's hooks and ``select``."""
    profiles = synthetic_profiles(random_state=3)
    reqs = bench_workload(200, profiles, load=1.5, random_state=11)
    params = {"mechanism": "checkpoint", "quantum_s": 0.5e-3, "period_s": 0.25e-3}
    end = Simulator(profiles, _policy(preemptive, **params)).run(reqs).end_s
    got, hooked = _both(
        profiles, reqs, preemptive, params, until=fraction * end, record_power=True
    )
    assert_same_run(got, hooked)


def test_round_robin_is_declared() -> None:
    """NP-RRB and P-RRB declare ``"round-robin"`` (the engine keeps the rotation); a subclass
    that overrides a method of the rule or of the ticks declares nothing (the engine calls
    its hooks and ``select``)."""
    assert declared_order(PRRB()) == declared_order(NPRRB()) == "round-robin"
    assert declared_order(PRRB(mechanism="dynamic-kill")) == "round-robin"

    class Ticking(PRRB):
        quiet_before = None  # type: ignore[assignment]

    class Hooked(PRRB):
        def on_complete(self, job: Any, now: float) -> None:
            super().on_complete(job, now)

    class Preempting(NPRRB):
        preemptive = True

    for cls in (Ticking, Hooked, Preempting):
        assert declared_order(cls()) is None, cls.__name__
