"""The declared ready orders under a power policy (DFS, DVFS): each job on its capped plan, a
clock / voltage switch charged at each start after the restore (``checkpoint_s``, the units'
idle power as energy), the level the free units stand at and the aborted starts counted by the
one rule of :mod:`npusched.sim.levels`. The engine's own decisions give the result of the
policy deciding through its ``select`` (``simhelpers.by_select``): every column, ``events``,
energy, busy time, the power pieces and the timeline, or the same livelock error. The runs that
compared the column loop with the general loop until the twenty-eighth round are checked
against the values frozen from them (``tests/golden_loops.py``)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import golden_loops
from npusched.errors import SimulationError
from npusched.policies import POLICIES
from npusched.sim.engine import Simulator
from npusched.workloads.request import Request
from simhelpers import assert_same_outcome, by_select

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
NETS = golden_loops.POWER_NETS
#: Policies with the mechanisms they take (``None``: the policy has no ``mechanism``).
POLICY_MECHANISMS: dict[str, tuple[str | None, ...]] = {
    "P-PREMA": ("checkpoint", "kill", "dynamic", "dynamic-kill"),
    "NP-PREMA": (None,),
    "P-TOKEN": ("checkpoint", "kill", "dynamic", "dynamic-kill"),
    "P-HPF": ("checkpoint", "kill", "dynamic", "dynamic-kill"),
    "NP-FCFS": (None,),
    "P-SJF": ("checkpoint", "kill", "dynamic"),
    "NP-SJF": (None,),
    "P-RRB": ("checkpoint", "dynamic", "dynamic-kill"),
    "NP-RRB": (None,),
}
CASES = [(name, m) for name, ms in POLICY_MECHANISMS.items() for m in ms]


def _policy(name: str, mechanism: str | None, **params: Any) -> Any:
    if mechanism is not None:
        params["mechanism"] = mechanism
    return POLICIES.create(name, **params)


_sim = golden_loops.power_simulator  # the frozen runs' simulator (one builder)


def _outcome(sim: Simulator, reqs: list[Request], until: float | None) -> Any:
    try:
        return sim.run(reqs) if until is None else sim.run(reqs, until=until)
    except SimulationError as exc:
        return ("raised", str(exc))


def _both(
    volt: str, name: str, mechanism: str | None, params: dict, cap: float, reqs: list, **kw: Any
) -> tuple[Any, Any]:
    """The outcome of the engine's own decisions and of the policy's ``select``."""
    until = kw.pop("until", None)
    out = []
    for reference in (False, True):
        pol = _policy(name, mechanism, **params)
        sim = _sim(volt, by_select(pol) if reference else pol, cap, **kw)
        out.append(_outcome(sim, reqs, until))
    return out[0], out[1]


@st.composite
def _requests(draw: st.DrawFn) -> list[Request]:
    """Up to 16 requests on a 0.1 ms grid (ties) over 40 ms, priorities 1/3/9."""
    return [
        Request(
            id=i,
            arrival_s=draw(st.integers(0, 400)) * 1e-4,
            network=draw(st.sampled_from(NETS)),
            priority=draw(st.sampled_from([1, 3, 9])),
        )
        for i in range(draw(st.integers(1, 16)))
    ]


@SETTINGS
@given(
    reqs=_requests(),
    case=st.sampled_from(CASES),
    volt=st.sampled_from(["dfs", "dvfs"]),
    cap=st.sampled_from([30.0, 33.0, 45.0]),
    point=st.sampled_from(["tile", "layer"]),
    cost=st.booleans(),
    quantum=st.sampled_from([0.5e-3, 2.5e-3]),
    until=st.sampled_from([None, 5e-3, 2.05e-2]),
)
def test_declared_orders_equal_select(
    reqs: list[Request],
    case: tuple[str, str | None],
    volt: str,
    cap: float,
    point: str,
    cost: bool,
    quantum: float,
    until: float | None,
) -> None:
    """(Until the twenty-eighth round: the column loop against the general loop.)"""
    name, mechanism = case
    params: dict[str, Any] = {}
    if name == "P-RRB":
        params = {"quantum_s": quantum, "period_s": quantum / 2}
    got, ref = _both(
        volt,
        name,
        mechanism,
        params,
        cap,
        reqs,
        preemption_point=point,
        checkpoint_cost=cost,
        record_power=True,
        record_timeline=True,
        until=until,
    )
    assert_same_outcome(got, ref)


@pytest.mark.parametrize(("name", "mechanism"), golden_loops.POWER_CASES)
@pytest.mark.parametrize("volt", ["dfs", "dvfs"])
def test_power_runs_at_load(name: str, mechanism: str | None, volt: str) -> None:
    """150 requests of three models arriving faster than they run (switches at most starts,
    preemptions, restores), power and timeline recorded: the run both loops gave at dbd9f47
    (its digest holds the timeline and the power pieces)."""
    res = golden_loops.frozen(f"power-load/{volt}/{name}/{mechanism}")
    switches = [s for s in res.timeline if s.kind == "switch"]
    if volt == "dvfs" or name != "NP-FCFS":
        assert switches or res.columns["checkpoint_s"].sum() > 0


def test_a_quantum_shorter_than_the_voltage_switch_raises() -> None:
    """P-RRB's 0.25 ms quantum against DVFS's 2.15 ms voltage change: every slice ends before
    its job computes; the engine raises a livelock error (the aborted starts counted by the
    one rule), the policy's own ``select`` the same, and a 2.5 ms quantum runs."""
    reqs = [Request(i, 0.0, ("squeezenet", "resnet-18", "squeezenet")[i]) for i in range(3)]
    for params in ({"period_s": 0.25e-3}, {"period_s": 0.25e-3, "quantum_s": 2.5e-3}):
        got, ref = _both("dvfs", "P-RRB", "checkpoint", params, 30.0, reqs)
        assert_same_outcome(got, ref)
        if "quantum_s" in params:
            assert got.n_finished == 3
        else:
            assert got[0] == "raised" and "livelock" in got[1]


def test_the_aborted_switches_guard_raises(monkeypatch: pytest.MonkeyPatch) -> None:
    """The clock / voltage guard itself (not the preemptions' one): with its limit lowered, a
    DVFS run whose slices end inside their switch raises ``stopped ... before their
    clock/voltage switch completed``, the policy's own ``select`` with the same message."""
    import npusched.sim.levels as levels_mod
    from npusched.native import compiled

    if "npusched.sim.levels" in compiled():
        pytest.skip("compiled, the limit is a C constant (the pure run checks it)")
    monkeypatch.setattr(levels_mod, "MAX_ABORTED_SWITCHES", 5)
    reqs = [Request(i, 0.0, ("squeezenet", "resnet-18", "squeezenet")[i]) for i in range(3)]
    got, ref = _both("dvfs", "P-RRB", "checkpoint", {"period_s": 0.25e-3}, 30.0, reqs)
    assert got == ref
    assert got[0] == "raised" and "clock/voltage switch completed" in got[1]
