"""HaX-CoNN's fast search: the batched executor, the bounded exhaustive search, the batched hill
climb and the free-space anytime result."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from npusched.errors import ConfigError
from npusched.hardware.soc import generate_profile, get_soc, table2_profile
from npusched.models.zoo import get_network
from npusched.policies.mapping import Schedule, Task, Workload, execute
from npusched.policies.mapping.baselines import BASELINES, local_search, run_method
from npusched.policies.mapping.batch import BatchData, execute_batch, objective_batch
from npusched.policies.mapping.brute import brute_force
from npusched.policies.mapping.exhaustive import (
    combination_bounds,
    exhaustive_search,
    task_rows,
)
from npusched.policies.mapping.haxconn import free_lower_bound, haxconn


def workload(soc: str, nets: tuple[str, ...], groups: int, after: dict[int, tuple[int, ...]] | None = None,
             release: tuple[float, ...] | None = None) -> Workload:
    spec = get_soc(soc)
    after = after or {}
    return Workload(
        spec,
        tuple(
            Task(n, generate_profile(get_network(n), spec, n_groups=groups), after=after.get(i, ()),
                 release_s=release[i] if release else 0.0)
            for i, n in enumerate(nets)
        ),
    )


W2 = workload("xavier", ("vgg-19", "resnet-152"), 6)
W3 = workload("orin", ("resnet-101", "googlenet", "inception-v4"), 4, {1: (0,)})
WR = workload("orin", ("googlenet", "resnet-50"), 5, release=(0.0, 4e-4))


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 2), st.integers(0, 2**32 - 1), st.booleans(), st.booleans())
def test_batch_bitwise_equals_execute(which: int, seed: int, cont: bool, trans: bool) -> None:
    w = (W2, W3, WR)[which]
    rng = np.random.default_rng(seed)
    n = len(w.tasks)
    g = max(t.profile.n_groups for t in w.tasks)
    asg = rng.integers(0, w.n_accelerators, size=(16, n, g))
    pri = np.array([rng.permutation(n) for _ in range(16)])
    got = execute_batch(w, asg, pri, contention=cont, transitions=trans)
    for b in range(16):
        s = Schedule.of([asg[b, k, : t.profile.n_groups] for k, t in enumerate(w.tasks)],
                        priority=tuple(int(p) for p in pri[b]))
        ref = execute(w, s, contention=cont, transitions=trans)
        assert np.array_equal(got[b], ref.finish_s)
        for goal in ("latency", "throughput"):
            assert objective_batch(w, got[b:b + 1], goal)[0] == ref.objective(goal)


def test_batch_bad_shapes() -> None:
    with pytest.raises(ConfigError, match="assignment shape"):
        execute_batch(W2, np.zeros((3, 2)))
    with pytest.raises(ConfigError, match="accelerator index"):
        execute_batch(W2, np.full((1, 2, 6), 5))
    with pytest.raises(ConfigError, match="priority shape"):
        execute_batch(W2, np.zeros((2, 2, 6)), np.zeros((1, 2)))
    with pytest.raises(ConfigError, match="goal"):
        objective_batch(W2, np.ones((1, 2)), "fps")


@pytest.mark.parametrize(
    ("w", "goal", "T"),
    [
        (W2, "latency", 1),
        (W2, "throughput", 1),
        (W2, "latency", 2),
        (W3, "latency", 1),
        (WR, "throughput", 2),
        (workload("orin", ("googlenet", "resnet-50"), 3), "latency", None),
    ],
)
def test_exhaustive_equals_brute_force(w: Workload, goal: str, T: int | None) -> None:
    _, ref, _ = brute_force(w, goal, max_transitions=T, max_evaluations=50_000)
    s, r, stats = exhaustive_search(w, goal, max_transitions=T)
    assert stats.proven and stats.evaluated <= stats.schedules
    assert r.objective(goal) == ref.objective(goal)
    assert max(s.transitions()) <= (T if T is not None else 99)
    # seeded with a baseline of the space: same optimum, fewer executions
    base = [run_method(w, m, goal) for m in BASELINES]
    fits = [b for b in base if T is None or max(b.schedule.transitions()) <= T]
    seed = min(fits, key=lambda b: b.realised.objective(goal))
    _, r2, st2 = exhaustive_search(w, goal, max_transitions=T, seed=(seed.schedule, seed.realised))
    assert r2.objective(goal) == ref.objective(goal)
    assert st2.evaluated <= stats.evaluated
    vals = [v for _, v in st2.improvements]
    assert vals == sorted(vals, reverse=True)


@pytest.mark.parametrize("goal", ["latency", "throughput"])
def test_bounds_are_lower_bounds(goal: str) -> None:
    for w in (W2, W3, WR):
        rows = task_rows(w, 1)
        combos = np.array(list(itertools.product(*[range(len(r)) for r in rows])))
        lb = combination_bounds(w, rows, combos, goal)
        asg = np.stack([rows[n][combos[:, n]] for n in range(len(rows))], axis=1)
        g = max(r.shape[1] for r in rows)
        pad = np.zeros((len(combos), len(rows), g), dtype=np.int64)
        for n, r in enumerate(rows):
            pad[:, n, : r.shape[1]] = asg[:, n]
        val = objective_batch(w, execute_batch(w, pad), goal)
        assert np.all(lb <= val + 1e-15)
        assert free_lower_bound(w, goal) <= val.min() + 1e-15


def test_exhaustive_rejects_bad_seed_and_huge_space() -> None:
    s = Schedule.of([[0, 1, 0, 1, 0, 1], [0] * 6])
    with pytest.raises(ConfigError, match="seed"):
        exhaustive_search(W2, max_transitions=1, seed=(s, execute(W2, s)))
    with pytest.raises(ConfigError, match="row combinations"):
        exhaustive_search(W2, max_transitions=1, max_combinations=10)
    with pytest.raises(ConfigError, match="goal"):
        exhaustive_search(W2, "fps")


def _local_search_scalar(w: Workload, start: Schedule, goal: str, contention: bool,
                         max_evaluations: int) -> Schedule:
    """The one-at-a-time first-improvement hill climb the batched one must equal."""
    best, evals = start, 1
    best_val = execute(w, best, contention=contention).objective(goal)
    improved = True
    while improved and evals < max_evaluations:
        improved = False
        for n, row in enumerate(best.assignment):
            for g in range(len(row)):
                for a in range(w.n_accelerators):
                    if a == row[g] or evals >= max_evaluations or improved:
                        continue
                    cand = Schedule((*best.assignment[:n], (*row[:g], a, *row[g + 1:]),
                                     *best.assignment[n + 1:]))
                    val = execute(w, cand, contention=contention).objective(goal)
                    evals += 1
                    if val < best_val - 1e-12:
                        best, best_val, improved = cand, val, True
            if improved:
                break
    return best


@pytest.mark.parametrize(("contention", "limit"), [(True, 400), (False, 400), (True, 7)])
def test_batched_local_search_equals_scalar(contention: bool, limit: int) -> None:
    for w in (W2, W3):
        start = run_method(w, "Herald").schedule
        got = local_search(w, start, "latency", contention=contention, max_evaluations=limit)
        ref = _local_search_scalar(w, start, "latency", contention, limit)
        assert got.assignment == ref.assignment


def test_table6_sized_restricted_proven_fast() -> None:
    """Three DNNs x 10 groups (Table 6 exp. 8's size): proven optimal, equal to the seeded
    search, and never worse than any baseline of the space."""
    w = workload("orin", ("resnet-101", "googlenet", "inception-v4"), 10, {1: (0,)})
    h = haxconn(w, "latency", max_transitions=1)
    assert h.proven and h.gap == 0.0 and h.source == "exhaustive"
    for r in h.baselines.values():
        if max(r.schedule.transitions()) <= 1:
            assert h.realised.makespan_s <= r.realised.makespan_s
    assert h.solve_s < 10  # ~0.4 s on an idle core; generous for a shared machine


def test_free_space_never_worse_than_hint_and_gap() -> None:
    w = workload("orin", ("googlenet", "resnet-101"), 20)
    h = haxconn(w, "latency", space="free", time_limit_s=0.3)
    best = min(r.realised.makespan_s for r in h.baselines.values())
    assert h.realised.makespan_s <= best
    lb = free_lower_bound(w, "latency")
    assert lb <= h.realised.makespan_s
    assert 0.0 <= h.gap <= (h.realised.makespan_s - lb) / h.realised.makespan_s + 1e-12


def test_table2_profile_batch() -> None:
    p = table2_profile()
    w = Workload(get_soc("xavier"), (Task("a", p), Task("b", p)))
    data = BatchData(w)
    asg = np.zeros((1, 2, p.n_groups), dtype=np.int64)
    asg[0, 1] = 1
    assert np.array_equal(execute_batch(data, asg)[0],
                          execute(w, Schedule.of(asg[0])).finish_s)


def test_batch_contested_flag_equals_execute() -> None:
    rng = np.random.default_rng(3)
    for w in (W2, W3, WR):
        n = len(w.tasks)
        g = max(t.profile.n_groups for t in w.tasks)
        asg = rng.integers(0, 2, size=(32, n, g))
        flags = np.zeros(32, dtype=bool)
        execute_batch(w, asg, contested_out=flags)
        ref = [execute(w, Schedule.of([asg[b, k, : t.profile.n_groups]
                                       for k, t in enumerate(w.tasks)])).contested
               for b in range(32)]
        assert flags.tolist() == ref


def test_exhaustive_time_limit_gives_a_bound() -> None:
    _, ref, _ = exhaustive_search(W3, max_transitions=2)
    _, r, stats = exhaustive_search(W3, max_transitions=2, time_limit_s=0.0, chunk=8)
    assert not stats.proven
    assert stats.bound <= ref.objective("latency") <= r.objective("latency")
