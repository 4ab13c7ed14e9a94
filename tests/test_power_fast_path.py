"""The column loop (:mod:`npusched.sim.columns`) gives exactly the general loop's result under a
power policy (DFS, DVFS): each job on its capped plan, a clock / voltage switch charged at each
start after the restore (``checkpoint_s``, the units' idle power as energy), the level the free
units stand at and the aborted starts counted by the one rule of :mod:`npusched.sim.levels`.
Every column, ``events``, energy, busy time, the power pieces and the timeline are equal; a
livelock raises the same error in both loops."""

from __future__ import annotations

import functools
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from npusched.errors import SimulationError
from npusched.policies import POLICIES
from npusched.sim import columns
from npusched.sim.engine import Simulator, _Run
from npusched.sim.resources import Machine, Resource
from npusched.workloads.request import Request
from simhelpers import assert_same_run, jobs_made

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
NETS = ("squeezenet", "resnet-18", "mobilenet-v2")
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


@functools.cache
def _setup(volt: str) -> tuple[Any, dict[str, Any]]:
    """The AB9 (DFS: one voltage; DVFS: a voltage per level) and its profiles of ``NETS``."""
    from npusched.hardware import compile_profile
    from npusched.hardware.power import AB9
    from npusched.models import get_network

    dev = AB9(stc_efficiency=0.02, voltage_v="dvfs") if volt == "dvfs" else AB9(stc_efficiency=0.02)
    return dev, {n: compile_profile(get_network(n), dev) for n in NETS}


def _policy(name: str, mechanism: str | None, **params: Any) -> Any:
    if mechanism is not None:
        params["mechanism"] = mechanism
    return POLICIES.create(name, **params)


def _sim(volt: str, policy: Any, cap: float, **kw: Any) -> Simulator:
    from npusched.policies.power import DFS, DVFS

    dev, profs = _setup(volt)
    power = (DFS if volt == "dfs" else DVFS)(cap_w=cap, idle_power_w=dev.idle_power_w)
    return Simulator(
        profs,
        policy,
        machine=Machine((Resource("npu", idle_power_w=dev.idle_power_w),)),
        power=power,
        power_cap_w=cap,
        **kw,
    )


def _outcome(sim: Simulator, reqs: list[Request], until: float | None) -> Any:
    try:
        return sim.run(reqs) if until is None else sim.run(reqs, until=until)
    except SimulationError as exc:
        return ("raised", str(exc))


def _both(
    volt: str, name: str, mechanism: str | None, params: dict, cap: float, reqs: list, **kw: Any
) -> tuple[Any, Any]:
    until = kw.pop("until", None)
    out = []
    for fast in (True, False):
        sim = _sim(volt, _policy(name, mechanism, **params), cap, fast_path=fast, **kw)
        if fast:  # the column loop takes it
            assert columns.applies(_Run(sim, reqs, None, None))
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
def test_fast_path_equals_general_loop(
    reqs: list[Request],
    case: tuple[str, str | None],
    volt: str,
    cap: float,
    point: str,
    cost: bool,
    quantum: float,
    until: float | None,
) -> None:
    name, mechanism = case
    params: dict[str, Any] = {}
    if name == "P-RRB":
        params = {"quantum_s": quantum, "period_s": quantum / 2}
    fast, general = _both(
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
    if isinstance(fast, tuple) or isinstance(general, tuple):
        assert fast == general
    else:
        assert_same_run(fast, general)


@pytest.mark.parametrize(("name", "mechanism"), CASES)
@pytest.mark.parametrize("volt", ["dfs", "dvfs"])
def test_fast_path_equals_general_loop_at_load(name: str, mechanism: str | None, volt: str) -> None:
    """150 requests of three models arriving faster than they run (switches at most starts,
    preemptions, restores), power and timeline recorded: identical to the last bit."""
    import random

    rng = random.Random(1)
    t = 0.0
    reqs = []
    for i in range(150):
        t += rng.expovariate(1 / 2.5e-3)
        reqs.append(
            Request(id=i, arrival_s=t, network=NETS[rng.randrange(3)], priority=(1, 3, 9)[i % 3])
        )
    params = {"quantum_s": 2.5e-3, "period_s": 1e-3} if name == "P-RRB" else {}
    fast, general = _both(
        volt, name, mechanism, params, 33.0, reqs, record_power=True, record_timeline=True
    )
    assert_same_run(fast, general)
    switches = [s for s in fast.timeline if s.kind == "switch"]
    if volt == "dvfs" or name != "NP-FCFS":
        assert switches or fast.columns["checkpoint_s"].sum() > 0


def test_a_quantum_shorter_than_the_voltage_switch_raises_in_both_loops() -> None:
    """P-RRB's 0.25 ms quantum against DVFS's 2.15 ms voltage change: every slice ends before
    its job computes; both loops raise the same livelock error (the aborted starts counted by
    the one rule), and a 2.5 ms quantum runs the same in both."""
    reqs = [Request(i, 0.0, ("squeezenet", "resnet-18", "squeezenet")[i]) for i in range(3)]
    for params in ({"period_s": 0.25e-3}, {"period_s": 0.25e-3, "quantum_s": 2.5e-3}):
        fast, general = _both("dvfs", "P-RRB", "checkpoint", params, 30.0, reqs)
        if "quantum_s" in params:
            assert_same_run(fast, general)
            assert fast.n_finished == 3
        else:
            assert fast == general
            assert fast[0] == "raised" and "livelock" in fast[1]


def test_the_aborted_switches_guard_raises_in_both_loops(monkeypatch: pytest.MonkeyPatch) -> None:
    """The clock / voltage guard itself (not the preemptions' one): with its limit lowered, a
    DVFS run whose slices end inside their switch raises ``stopped ... before their
    clock/voltage switch completed`` from both loops, with the same message."""
    import npusched.sim.levels as levels_mod
    from npusched.native import compiled

    if "npusched.sim.levels" in compiled():
        pytest.skip("compiled, the limit is a C constant (the pure run checks it)")
    monkeypatch.setattr(levels_mod, "MAX_ABORTED_SWITCHES", 5)
    reqs = [Request(i, 0.0, ("squeezenet", "resnet-18", "squeezenet")[i]) for i in range(3)]
    fast, general = _both("dvfs", "P-RRB", "checkpoint", {"period_s": 0.25e-3}, 30.0, reqs)
    assert fast == general
    assert fast[0] == "raised" and "clock/voltage switch completed" in fast[1]


def test_power_runs_take_the_column_loop() -> None:
    """A temporal policy with a declared order under DFS runs without ``Job`` objects;
    ``fast_path=False`` still forces the general loop."""
    reqs = [Request(id=i, arrival_s=i * 1e-3, network=NETS[i % 3]) for i in range(6)]
    assert jobs_made(_sim("dfs", _policy("P-PREMA", "dynamic"), 33.0), reqs) == 0
    assert jobs_made(_sim("dfs", _policy("P-PREMA", "dynamic"), 33.0, fast_path=False), reqs) == 6
