"""HaX-CoNN optimal mapping: CP-SAT vs brute force vs Z3, baselines, the search pipeline."""

from __future__ import annotations

import pytest

from npusched.errors import ConfigError
from npusched.hardware.soc import generate_profile, get_soc, table2_profile
from npusched.models.zoo import get_network
from npusched.policies.mapping import Schedule, Task, Workload, execute
from npusched.policies.mapping.baselines import BASELINES, run_method
from npusched.policies.mapping.brute import assignments, brute_force
from npusched.policies.mapping.cpsat import solve_cpsat
from npusched.policies.mapping.haxconn import dynamic_haxconn, haxconn, space_size
from npusched.policies.mapping.model import to_int_instance


def workload(soc: str, nets: tuple[str, ...], groups: int, after: dict[int, tuple[int, ...]] | None = None) -> Workload:
    spec = get_soc(soc)
    after = after or {}
    return Workload(
        spec,
        tuple(
            Task(n, generate_profile(get_network(n), spec, n_groups=groups), after=after.get(i, ()))
            for i, n in enumerate(nets)
        ),
    )


def test_assignments_enumeration() -> None:
    rows = list(assignments(4, 2, 1))
    assert len(rows) == 2 + 3 * 2 and len(set(rows)) == len(rows)
    assert all(sum(r[i] != r[i + 1] for i in range(3)) <= 1 for r in rows)
    assert len(list(assignments(4, 2, None))) == 16


def _tol(w: Workload, ticks: int) -> float:
    inst = to_int_instance(w, horizon_ticks=ticks)
    return inst.tick_s * (sum(inst.groups(n) for n in range(inst.n_tasks)) + 1)


@pytest.mark.parametrize(
    ("soc", "nets", "groups", "goal", "T"),
    [
        ("orin", ("googlenet", "resnet-50"), 2, "latency", None),
        ("xavier", ("vgg-19", "resnet-152"), 3, "latency", 1),
        ("orin", ("googlenet", "resnet-50"), 3, "throughput", None),
    ],
)
def test_cpsat_optimum_equals_brute_force(soc: str, nets: tuple[str, ...], groups: int, goal: str, T: int | None) -> None:
    w = workload(soc, nets, groups)
    _, ref, _ = brute_force(w, goal, max_transitions=T)
    out = solve_cpsat(w, goal, max_transitions=T, time_limit_s=20, horizon_ticks=1000)
    assert out.status == "OPTIMAL" and out.gap == 0.0
    assert out.schedule is not None
    if goal == "latency":
        assert out.objective_s == pytest.approx(ref.objective(goal), abs=_tol(w, 1000))
    else:  # sum of 1/T_n, each T_n within the tick tolerance
        assert out.objective_s == pytest.approx(-ref.objective(goal), rel=0.01)
    assert max(out.schedule.transitions()) <= (T if T is not None else 99)


def test_z3_agrees_with_cpsat() -> None:
    pytest.importorskip("z3")
    from npusched.policies.mapping.z3model import solve_z3

    w = workload("orin", ("googlenet", "resnet-50"), 2)
    c = solve_cpsat(w, "latency", time_limit_s=20, horizon_ticks=1000)
    z = solve_z3(w, "latency", time_limit_s=30, horizon_ticks=1000)
    assert c.status == z.status == "OPTIMAL"
    assert z.objective_s == pytest.approx(c.objective_s, rel=1e-9)
    assert z.schedule is not None
    assert execute(w, z.schedule).makespan_s == pytest.approx(execute(w, c.schedule).makespan_s, rel=0.01)  # type: ignore[arg-type]


def test_cpsat_callback_and_hint_and_pipeline_dependency() -> None:
    w = workload("orin", ("googlenet", "resnet-18"), 2, after={1: (0,)})
    seen: list[float] = []
    hint = Schedule(((0, 0), (0, 0)))
    out = solve_cpsat(w, "latency", time_limit_s=10, hint=hint, hint_result=execute(w, hint),
                      on_solution=lambda s, t, v: seen.append(v), horizon_ticks=1000)
    assert out.status == "OPTIMAL" and seen and seen[-1] == pytest.approx(out.objective_s)
    r = execute(w, out.schedule)  # type: ignore[arg-type]
    assert r.start_s[1][0] >= r.end_s[0][-1]  # pipeline respected
    with pytest.raises(ConfigError, match="allowed: latency, throughput"):
        solve_cpsat(w, "energy")


def test_baselines_predicted_vs_realised() -> None:
    w = workload("xavier", ("vgg-19", "resnet-152"), 10)
    res = {m: run_method(w, m) for m in BASELINES}
    assert res["GPU-only"].schedule.transitions() == (0, 0)
    assert all(max(r.schedule.transitions()) == 0 for r in (res["GPU & DSA"],))
    # a contention-unaware method never predicts slower than it runs
    for r in res.values():
        assert r.predicted.makespan_s <= r.realised.makespan_s + 1e-12
    assert res["GPU & DSA"].misprediction() > 0.05  # contention it did not see


def test_haxconn_never_worse_than_expressible_baselines() -> None:
    w = workload("xavier", ("vgg-19", "resnet-152"), 10)
    h = haxconn(w, "latency", max_transitions=1)
    assert h.proven and h.gap == 0.0 and h.source == "exhaustive"
    assert max(h.schedule.transitions()) <= 1
    for r in h.baselines.values():
        if max(r.schedule.transitions()) <= 1:
            assert h.realised.makespan_s <= r.realised.makespan_s + 1e-12
    assert h.realised.makespan_s < h.baselines["GPU-only"].realised.makespan_s  # it does improve
    free = haxconn(w, "latency", space="free", time_limit_s=0.5, baselines=h.baselines)
    assert free.realised.makespan_s <= min(r.realised.makespan_s for r in h.baselines.values()) + 1e-12
    assert free.realised.makespan_s <= h.realised.makespan_s + 1e-12
    assert space_size(w, 1) == 20 * 20 * 2


def test_scenario1_identical_instances_table2() -> None:
    p = table2_profile().coarsen(4)
    w = Workload(get_soc("xavier"), (Task("g0", p), Task("g1", p)))
    inst = to_int_instance(w)
    assert inst.identical == ((0, 1),)
    h = haxconn(w, "throughput", max_transitions=1)
    assert h.proven
    assert h.realised.objective("throughput") <= h.baselines["GPU-only"].realised.objective("throughput")


def test_dynamic_haxconn_improves_monotonically() -> None:
    w = workload("orin", ("googlenet", "resnet-50"), 3)
    trace = dynamic_haxconn(w, "latency", time_limit_s=0.5)
    vals = [s.objective for s in trace]
    assert vals == sorted(vals, reverse=True) and len(set(vals)) == len(vals)
    assert trace[0].time_s == 0.0 and trace[0].source.startswith("naive:")
    times = [s.time_s for s in trace]
    assert times == sorted(times)
    for s in trace:
        assert execute(w, s.schedule).objective("latency") == s.objective
