"""Proven-optimal search of the restricted space: vectorised enumeration with bound pruning.

The restricted space (at most ``T`` accelerator changes per DNN, the paper's artifact) is small
enough to search completely, but the scalar executor costs ~0.4 ms a schedule, so a two-DNN x
ten-group instance (800 schedules) took 0.3-0.5 s and three DNNs seconds. This module searches
the same space - every transition-point combination crossed with every DNN priority order, each
executed exactly under the contention model - in three steps:

1. **Rows**: per DNN every accelerator row with at most ``T`` changes
   (:func:`~npusched.policies.mapping.brute.assignments`), with its contention-free chain time
   (groups plus transitions) and its per-accelerator busy time, as NumPy arrays.
2. **Bounds**: for every combination of rows a lower bound on the objective that no contention
   or dispatch order can beat: a DNN cannot finish before its release (or its producers' bound
   plus the hand-over transition) plus its chain, and no accelerator before the sum of the busy
   time assigned to it. Latency: ``max`` of those; throughput: ``-sum_n 1 / T_n^lb``.
3. **Branch and bound**: combinations in increasing bound order, in chunks, each chunk's
   schedules executed at once by :func:`~npusched.policies.mapping.batch.execute_batch` in
   task-index priority, and in every other priority order only where the dispatch had a choice
   (elsewhere every order gives the same run, the brute force's rule); the search stops at the first
   combination whose bound is not below the incumbent (seeded with the best heuristic). Every
   skipped combination has a bound >= the incumbent, so the incumbent is the optimum of the
   space under the exact model: the same value as :func:`~npusched.policies.mapping.brute.brute_force`.

Only priority dispatch is searched (as the brute force does): for two accelerators an explicit
per-accelerator order that differs from every priority order would have an accelerator idle
with a ready group, which the executor never does.
"""

from __future__ import annotations

import itertools
import math
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from npusched.errors import ConfigError
from npusched.policies.mapping.batch import BatchData, execute_batch, objective_batch
from npusched.policies.mapping.brute import assignments
from npusched.policies.mapping.execute import ExecutionResult, Schedule, Workload, execute

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

__all__ = ["SearchStats", "combination_bounds", "exhaustive_search", "task_rows"]


@dataclass(frozen=True)
class SearchStats:
    """What :func:`exhaustive_search` did.

    Attributes:
        combinations: row combinations in the space.
        schedules: combinations x priority orders (the space's size).
        evaluated: schedules executed.
        proven: the whole space was covered (evaluated or pruned by its bound).
        bound: a proven lower bound on the space's optimum (the optimum when ``proven``;
            otherwise the smallest bound of the combinations not searched).
        improvements: ``(schedules evaluated so far, objective)`` at every improvement, the
            first being the seed (0 evaluations).
    """

    combinations: int
    schedules: int
    evaluated: int
    proven: bool
    bound: float
    improvements: tuple[tuple[int, float], ...]


def task_rows(workload: Workload, max_transitions: int | None) -> list[IntArray]:
    """Per task, ``(R_n, G_n)`` every accelerator row with at most ``max_transitions`` changes."""
    return [
        np.array(list(assignments(t.profile.n_groups, workload.n_accelerators, max_transitions)),
                 dtype=np.int64)
        for t in workload.tasks
    ]


def _row_costs(workload: Workload, n: int, rows: IntArray) -> tuple[FloatArray, FloatArray]:
    """Chain seconds ``(R,)`` and per-accelerator busy seconds ``(R, A)`` of task ``n``'s rows,
    contention-free."""
    p = workload.tasks[n].profile
    g = np.arange(p.n_groups)
    t = p.time_s[g[None, :], rows]  # (R, G)
    chain = t.sum(axis=1)
    if p.n_groups > 1:
        a, b = rows[:, :-1], rows[:, 1:]
        tr = np.where(a != b, p.out_s[g[None, :-1], a] + p.in_s[g[None, 1:], b], 0.0)
        chain = chain + tr.sum(axis=1)
    busy = np.stack([np.where(rows == a, t, 0.0).sum(axis=1)
                     for a in range(workload.n_accelerators)], axis=1)
    return chain, busy


def combination_bounds(
    workload: Workload, rows: list[IntArray], combos: IntArray, goal: str
) -> FloatArray:
    """Lower bound on the objective (to minimise) of each combination ``combos[c, n]`` (row
    index of task ``n``); see the module docstring."""
    tasks = workload.tasks
    costs = [_row_costs(workload, n, r) for n, r in enumerate(rows)]
    lb_finish: list[FloatArray] = []
    for n, t in enumerate(tasks):
        chain = costs[n][0][combos[:, n]]
        start = np.full(combos.shape[0], t.release_s)
        for d in t.after:
            q = tasks[d].profile
            a = rows[d][combos[:, d], -1]
            b = rows[n][combos[:, n], 0]
            tr = np.where(a != b, q.out_s[-1][a] + t.profile.in_s[0][b], 0.0)
            start = np.maximum(start, lb_finish[d] + tr)
        lb_finish.append(start + chain)
    release = np.array([t.release_s for t in tasks])
    lat = np.stack(lb_finish, axis=1) - release[None, :]
    if goal == "throughput":
        return np.asarray(-np.sum(1.0 / lat, axis=1), dtype=np.float64)
    busy = sum(costs[n][1][combos[:, n]] for n in range(len(tasks)))
    first = float(release.min())
    return np.asarray(np.maximum(lat.max(axis=1), np.max(busy, axis=1) + first - release.max()),
                      dtype=np.float64)


def exhaustive_search(
    workload: Workload,
    goal: str = "latency",
    *,
    max_transitions: int | None = 1,
    seed: tuple[Schedule, ExecutionResult] | None = None,
    max_combinations: int = 2_000_000,
    chunk: int = 2_048,
    time_limit_s: float | None = None,
    on_improve: Callable[[Schedule, ExecutionResult, int], None] | None = None,
) -> tuple[Schedule, ExecutionResult, SearchStats]:
    """The optimum of the restricted space (see the module docstring).

    Args:
        goal: ``"latency"`` or ``"throughput"``.
        max_transitions: T per task (None = any row: the free space, exponential).
        seed: a schedule *of this space* and its execution to start from (the best heuristic);
            the search then only evaluates combinations whose bound is below it.
        max_combinations: refuse larger spaces (their bounds alone need memory).
        chunk: combinations executed per batch.
        time_limit_s: stop after about this many wall-clock seconds, once there is an incumbent
            (the seed, or the first chunk's best; then ``stats.proven`` is
            False and ``stats.bound`` bounds the rest); None = search to the proof, the default,
            so results never depend on the machine's speed.
        on_improve: called with ``(schedule, execution, schedules evaluated so far)`` at every
            improvement found (D-HaX-CoNN's anytime use).

    Returns:
        ``(schedule, execution, stats)``; the execution is :func:`execute`'s (scalar).

    Raises:
        ConfigError: unknown goal, a seed outside the space, or a space over the limit.
    """
    if goal not in ("latency", "throughput"):
        raise ConfigError(f"goal={goal!r}; allowed: latency, throughput")
    tasks = workload.tasks
    n_tasks = len(tasks)
    rows = task_rows(workload, max_transitions)
    n_combo = math.prod(len(r) for r in rows)
    if n_combo > max_combinations:
        raise ConfigError(
            f"restricted space has {n_combo} row combinations; allowed: <= {max_combinations}"
        )
    perms = np.array(list(itertools.permutations(range(n_tasks))), dtype=np.int64)
    grids = np.meshgrid(*[np.arange(len(r)) for r in rows], indexing="ij")
    combos = np.stack([g.ravel() for g in grids], axis=1)
    lb = combination_bounds(workload, rows, combos, goal)
    order = np.argsort(lb, kind="stable")
    combos, lb = combos[order], lb[order]

    best_val = math.inf
    best: tuple[Schedule, ExecutionResult] | None = None
    if seed is not None:
        s, r = seed
        if max_transitions is not None and max(s.transitions(), default=0) > max_transitions:
            raise ConfigError("seed schedule has more transitions than the space allows")
        best_val, best = r.objective(goal), (s, r)
    improvements = [(0, best_val)] if best is not None else []
    data = BatchData(workload)
    gmax = int(data.n_groups.max())
    padded = []
    for row_set in rows:
        pad = np.zeros((len(row_set), gmax), dtype=np.int64)
        pad[:, : row_set.shape[1]] = row_set
        padded.append(pad)
    n_perm = len(perms)
    evaluated = 0
    pos = 0
    tol = 1e-15
    proven = True
    deadline = None if time_limit_s is None else time.perf_counter() + time_limit_s
    while pos < n_combo:
        if lb[pos] >= best_val - tol:
            break  # every remaining combination is bounded at or above the incumbent
        if deadline is not None and best is not None and time.perf_counter() > deadline:
            proven = False
            break
        stop = min(n_combo, pos + chunk)
        stop = pos + int(np.searchsorted(lb[pos:stop], best_val - tol, side="left"))
        cs = combos[pos:stop]
        asg = np.stack([padded[n][cs[:, n]] for n in range(n_tasks)], axis=1)  # (C, N, G)
        # every combination in task-index priority first; the other priority orders only where
        # the dispatch had a choice (elsewhere every order gives the same run, as brute_force)
        contested = np.zeros(len(cs), dtype=bool)
        val = np.full((len(cs), n_perm), np.inf)
        val[:, 0] = objective_batch(data, execute_batch(data, asg, contested_out=contested), goal)
        evaluated += len(cs)
        idx = np.flatnonzero(contested)
        if n_perm > 1 and idx.size:
            asg2 = np.repeat(asg[idx], n_perm - 1, axis=0)
            pri2 = np.tile(perms[1:], (idx.size, 1))
            v2 = objective_batch(data, execute_batch(data, asg2, pri2), goal)
            val[idx, 1:] = v2.reshape(idx.size, n_perm - 1)
            evaluated += len(v2)
        flat = int(np.argmin(val))  # first minimum in (combination, priority) order
        c, j = divmod(flat, n_perm)
        if val[c, j] < best_val - tol:
            sched = Schedule(
                tuple(tuple(int(a) for a in asg[c, n, : data.n_groups[n]]) for n in range(n_tasks)),
                priority=tuple(int(p) for p in perms[j]),
            )
            res = execute(workload, sched)
            best_val, best = res.objective(goal), (res.schedule, res)
            improvements.append((evaluated, best_val))
            if on_improve is not None:
                on_improve(res.schedule, res, evaluated)
        pos = stop
    assert best is not None
    stats = SearchStats(
        combinations=n_combo,
        schedules=n_combo * n_perm,
        evaluated=evaluated,
        proven=proven,
        bound=best_val if proven else min(best_val, float(lb[pos])),
        improvements=tuple(improvements),
    )
    return best[0], best[1], stats
