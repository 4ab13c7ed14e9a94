"""Exact schedule execution with contention intervals (HaX-CoNN Eq. 2-9), hand-built timelines."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from npusched.errors import ConfigError, SimulationError
from npusched.hardware.contention import PccsContention
from npusched.hardware.soc import SOCS, GroupProfile
from npusched.policies.mapping import Schedule, Task, Workload, execute

SOC = SOCS["orin"]
BW = SOC.memory_bandwidth_bps


def prof(times: list[tuple[float, float]], demand: float | list[float] = 0.5,
         out: float = 0.0, inn: float = 0.0, name: str = "x") -> GroupProfile:
    g = len(times)
    d = np.broadcast_to(np.asarray(demand, dtype=float).reshape(-1, 1) if np.ndim(demand) else demand, (g, 2))
    return GroupProfile(
        network=name,
        accelerators=SOC.accelerators,
        bounds=tuple((i, i) for i in range(g)),
        time_s=np.array(times, dtype=float),
        out_s=np.full((g, 2), out),
        in_s=np.full((g, 2), inn),
        mem_bps=np.array(d) * BW,
    )


def test_two_layers_one_contention_interval() -> None:
    w = Workload(SOC, (Task("a", prof([(2.0, 4.0)])), Task("b", prof([(3.0, 1.0)]))))
    r = execute(w, Schedule.of([[0], [1]]))
    s = float(PccsContention().slowdown(0.5, 0.5))
    # b does 1 s of work at rate 1/s; a then finishes its remaining work alone
    assert r.end_s[1][0] == pytest.approx(s)
    assert r.end_s[0][0] == pytest.approx(s + 1.0)
    assert len(r.intervals) == 2
    iv0, iv1 = r.intervals
    assert (iv0.start_s, iv0.end_s) == (0.0, pytest.approx(s))
    assert iv0.members == ((0, 0, 0), (1, 0, 1)) and iv0.slowdown == (pytest.approx(s),) * 2
    assert iv1.members == ((0, 0, 0),) and iv1.slowdown == (1.0,)
    assert r.slowdown_s() == pytest.approx(2 * s * (1 - 1 / s))
    # contention-unaware prediction: no slowdown
    p = execute(w, Schedule.of([[0], [1]]), contention=False)
    assert p.makespan_s == pytest.approx(2.0)


def test_staggered_overlap_intervals_eq8() -> None:
    # a: GPU [0, 1) then DLA; b waits for DLA? No: b alone on DLA from 0 to 3 -> a's 2nd group
    # queues behind b on the DLA.
    w = Workload(
        SOC,
        (
            Task("a", prof([(1.0, 9.0), (9.0, 1.0)], demand=0.0)),
            Task("b", prof([(9.0, 3.0)], demand=0.0)),
        ),
    )
    r = execute(w, Schedule.of([[0, 1], [1]]))
    assert r.start_s[0][1] == pytest.approx(3.0)  # DLA busy until b ends
    assert r.makespan_s == pytest.approx(4.0)
    bounds = [(iv.start_s, iv.end_s) for iv in r.intervals]
    assert bounds == [(0.0, 1.0), (1.0, 3.0), (3.0, 4.0)]
    assert all(s == 1.0 for iv in r.intervals for s in iv.slowdown)  # no demand, no slowdown


def test_transition_cost_eq2() -> None:
    w = Workload(SOC, (Task("a", prof([(1.0, 2.0), (1.0, 2.0)], out=0.1, inn=0.05)),))
    r = execute(w, Schedule.of([[0, 1]]))
    assert r.start_s[0][1] == pytest.approx(1.15)
    assert r.makespan_s == pytest.approx(3.15)
    assert execute(w, Schedule.of([[0, 1]]), transitions=False).makespan_s == pytest.approx(3.0)
    assert execute(w, Schedule.of([[0, 0]])).makespan_s == pytest.approx(2.0)
    assert Schedule.of([[0, 1]]).transitions() == (1,)


def test_priority_and_order() -> None:
    w = Workload(SOC, (Task("a", prof([(1.0, 5.0)])), Task("b", prof([(2.0, 5.0)]))))
    r = execute(w, Schedule.of([[0], [0]]))
    assert r.end_s[0][0] == pytest.approx(1.0) and r.end_s[1][0] == pytest.approx(3.0)
    r = execute(w, Schedule.of([[0], [0]], priority=(1, 0)))
    assert r.end_s[1][0] == pytest.approx(2.0) and r.end_s[0][0] == pytest.approx(3.0)
    r2 = execute(w, Schedule.of([[0], [0]], order=(((1, 0), (0, 0)), ())))
    np.testing.assert_allclose(r2.finish_s, r.finish_s)
    assert r.schedule.order == (((1, 0), (0, 0)), ())
    with pytest.raises(ConfigError, match="every group once"):
        execute(w, Schedule.of([[0], [0]], order=(((1, 0),), ())))


def test_pipeline_dependency_with_transition() -> None:
    w = Workload(
        SOC,
        (
            Task("det", prof([(1.0, 2.0)], out=0.2)),
            Task("track", prof([(1.0, 2.0)], inn=0.1), after=(0,)),
        ),
    )
    r = execute(w, Schedule.of([[0], [1]]))
    assert r.start_s[1][0] == pytest.approx(1.3)
    assert r.makespan_s == pytest.approx(3.3)
    assert r.latency_s[1] == pytest.approx(3.3)
    r = execute(w, Schedule.of([[0], [0]]))
    assert r.makespan_s == pytest.approx(2.0)


def test_deadlock_order_raises() -> None:
    w = Workload(SOC, (Task("a", prof([(1.0, 1.0), (1.0, 1.0)])),))
    with pytest.raises(SimulationError, match="deadlock"):
        execute(w, Schedule.of([[0, 0]], order=(((0, 1), (0, 0)), ())))


def test_objectives() -> None:
    w = Workload(SOC, (Task("a", prof([(1.0, 5.0)])), Task("b", prof([(2.0, 5.0)]))))
    r = execute(w, Schedule.of([[0], [0]]))
    assert r.objective("latency") == pytest.approx(3.0)
    assert r.objective("throughput") == pytest.approx(-(1 / 1.0 + 1 / 3.0))
    assert r.fps == pytest.approx(1 / 3.0)
    with pytest.raises(ConfigError, match="allowed: latency, throughput"):
        r.objective("energy")


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.tuples(st.floats(0.1, 2), st.floats(0.1, 2), st.floats(0, 0.9)), min_size=1, max_size=5),
    st.lists(st.tuples(st.floats(0.1, 2), st.floats(0.1, 2), st.floats(0, 0.9)), min_size=1, max_size=5),
    st.integers(0, 1023),
)
def test_execution_invariants(ga: list, gb: list, bits: int) -> None:
    pa = prof([(x, y) for x, y, _ in ga], demand=[d for *_, d in ga], out=0.01)
    pb = prof([(x, y) for x, y, _ in gb], demand=[d for *_, d in gb], inn=0.02)
    w = Workload(SOC, (Task("a", pa), Task("b", pb)))
    asg = [[(bits >> i) & 1 for i in range(len(ga))], [(bits >> (5 + i)) & 1 for i in range(len(gb))]]
    r = execute(w, Schedule.of(asg))
    # contention only slows; never two groups on one accelerator at once; intervals tile time
    assert np.all(r.latency_s >= np.array([0.0, 0.0]))
    assert r.makespan_s >= max(pa.time_s[np.arange(len(ga)), asg[0]].sum(),
                               pb.time_s[np.arange(len(gb)), asg[1]].sum()) - 1e-9
    for iv in r.intervals:
        accs = [m[2] for m in iv.members]
        assert len(accs) == len(set(accs))
        assert iv.end_s > iv.start_s
    for a, b in zip(r.intervals, r.intervals[1:], strict=False):
        assert b.start_s >= a.end_s - 1e-12
    # each group's executed work equals its standalone time
    work: dict[tuple[int, int], float] = {}
    for iv in r.intervals:
        for (n, g, _), s in zip(iv.members, iv.slowdown, strict=True):
            work[(n, g)] = work.get((n, g), 0.0) + (iv.end_s - iv.start_s) / s
    for (n, g), done in work.items():
        t = w.tasks[n].profile.time_s[g, asg[n][g]]
        assert done == pytest.approx(t, rel=1e-9)
