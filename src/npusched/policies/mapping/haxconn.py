"""HaX-CoNN: the optimal contention-aware schedule of concurrent DNNs (Sec. 3.5), and D-HaX-CoNN.

:func:`haxconn` returns the best schedule for a goal in one of two search spaces:

* ``"restricted"`` (the paper's artifact): at most ``max_transitions`` accelerator changes per
  DNN. When the space holds at most ``enumerate_limit`` schedules it is searched completely by
  :func:`~npusched.policies.mapping.exhaustive.exhaustive_search` (every transition-point
  combination x every DNN priority order, executed in NumPy batches, pruned by contention-free
  lower bounds, seeded with the best baseline of the space), which *proves* the optimum under
  the model; a larger space goes to CP-SAT with the same constraint, seeded the same way.
* ``"free"``: any group on any accelerator. CP-SAT is seeded (``AddHint``) with the best
  heuristic - the best of the baselines, the restricted search's best (given up to half of
  ``time_limit_s``) and a contention-aware hill climb from it (up to three quarters) - and runs
  for what is left of ``time_limit_s``, model building included; the result is the best of the
  hint and CP-SAT's incumbent, so never worse than the hint. The reported gap is the returned
  schedule's relative distance to the best proven lower bound: CP-SAT's bound (on its
  tick-rounded model) or :func:`free_lower_bound` (contention-free), whichever is higher.

Every candidate is judged by its realised execution (:func:`~npusched.policies.mapping.execute.execute`).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from npusched.errors import ConfigError
from npusched.policies.mapping.baselines import BASELINES, MethodResult, local_search, run_method
from npusched.policies.mapping.brute import assignments
from npusched.policies.mapping.execute import ExecutionResult, Schedule, Workload, execute
from npusched.policies.mapping.exhaustive import exhaustive_search

__all__ = [
    "DET_TIME_S",
    "EVAL_COST_S",
    "HaxconnResult",
    "Improvement",
    "dynamic_haxconn",
    "free_lower_bound",
    "haxconn",
    "space_size",
]


@dataclass(frozen=True)
class HaxconnResult:
    """The chosen schedule and how it was found.

    Attributes:
        schedule: the schedule (assignment + per-accelerator order).
        realised: its execution under the full model.
        predicted_objective: the solver model's objective (seconds for latency, 1/s summed for
            throughput), or the exact executor's for exhaustive search.
        source: ``"exhaustive"``, ``"cp-sat"`` or ``"hint:<method>"``.
        proven: optimality proven in the search space.
        gap: relative optimality gap of ``realised`` (0 when proven; otherwise to the best
            proven lower bound, see the module docstring).
        solve_s: wall-clock seconds of the whole search.
        baselines: every baseline's :class:`MethodResult`.
    """

    schedule: Schedule
    realised: ExecutionResult
    predicted_objective: float
    source: str
    proven: bool
    gap: float
    solve_s: float
    baselines: dict[str, MethodResult] = field(default_factory=dict)


def space_size(workload: Workload, max_transitions: int | None) -> int:
    """Schedules in the restricted space (assignments x DNN priority orders, an upper bound)."""
    size = math.factorial(len(workload.tasks))
    for t in workload.tasks:
        size *= sum(1 for _ in assignments(t.profile.n_groups, workload.n_accelerators, max_transitions))
    return size


def _objective_to_model(goal: str, res: ExecutionResult) -> float:
    v = res.objective(goal)
    return v if goal == "latency" else -v


def free_lower_bound(workload: Workload, goal: str) -> float:
    """A lower bound on the objective (to minimise) over *every* schedule, contention-free:
    each DNN's cheapest chain (a shortest path over its groups' accelerators with transition
    costs, after its producers' bounds) and, for latency, the total of every group's fastest
    time shared evenly by the accelerators. Seconds (latency) or minus frames per second."""
    tasks = workload.tasks
    fin: list[float] = []
    for t in tasks:
        p = t.profile
        cost = p.time_s[0].copy()  # cheapest chain ending on each accelerator
        if t.after:
            first = max(fin[d] for d in t.after)
            cost = cost + max(first - t.release_s, 0.0)
        for g in range(1, p.n_groups):
            tr = p.out_s[g - 1][:, None] + p.in_s[g][None, :]
            np.fill_diagonal(tr, 0.0)
            cost = np.min(cost[:, None] + tr, axis=0) + p.time_s[g]
        fin.append(t.release_s + float(cost.min()))
    lat = np.array(fin) - np.array([t.release_s for t in tasks])
    if goal == "throughput":
        return -float(np.sum(1.0 / lat))
    work = sum(float(t.profile.time_s.min(axis=1).sum()) for t in tasks)
    return max(float(lat.max()), work / workload.n_accelerators)


def haxconn(
    workload: Workload,
    goal: str = "latency",
    *,
    space: str = "restricted",
    max_transitions: int = 1,
    time_limit_s: float = 1.0,
    enumerate_limit: int = 2_000_000,
    baselines: dict[str, MethodResult] | None = None,
    workers: int = 1,
) -> HaxconnResult:
    """The HaX-CoNN schedule of ``workload`` (see the module docstring).

    Args:
        goal: ``"latency"`` (Eq. 11) or ``"throughput"`` (Eq. 10).
        space: ``"restricted"`` or ``"free"``.
        max_transitions: T, transitions per DNN in the restricted space.
        time_limit_s: the whole search's wall-clock budget in seconds (CP-SAT gets what the
            baselines, the exhaustive search and the hill climb left, at least 0.05 s).
        enumerate_limit: largest restricted space (row combinations x priority orders)
            searched exhaustively (:func:`~npusched.policies.mapping.exhaustive.exhaustive_search`).
        baselines: precomputed :func:`run_method` results (computed if None).
    """
    if space not in ("restricted", "free"):
        raise ConfigError(f"space={space!r}; allowed: restricted, free")
    t0 = time.perf_counter()
    base = baselines if baselines is not None else {
        m: run_method(workload, m, goal) for m in BASELINES
    }
    limit = max_transitions if space == "restricted" else None

    def fits(s: Schedule, lim: int | None) -> bool:
        return lim is None or max(s.transitions()) <= lim

    def best_of(lim: int | None) -> tuple[float, str, Schedule, ExecutionResult]:
        cands = [(r.realised.objective(goal), f"hint:{m}", r.schedule, r.realised)
                 for m, r in base.items() if fits(r.schedule, lim)]
        return min(cands, key=lambda c: c[0])

    best_val, best_src, best_s, best_r = best_of(limit)
    proven, gap, predicted = False, math.inf, _objective_to_model(goal, best_r)

    if space_size(workload, max_transitions) <= enumerate_limit:
        # the restricted optimum, proven by bounded exhaustive search (seeded with the best
        # heuristic of the restricted space); in the free space it seeds the hill climb
        _, _, rs, rr = best_of(max_transitions)
        # restricted: searched to the proof (results never depend on the machine's speed);
        # free: a seed for what follows, so it gets half the budget
        s, r, _ = exhaustive_search(
            workload, goal, max_transitions=max_transitions, seed=(rs, rr),
            max_combinations=enumerate_limit,
            time_limit_s=None if space == "restricted" else 0.5 * time_limit_s,
            chunk=2_048 if space == "restricted" else 512,
        )
        if r.objective(goal) < best_val - 1e-15:
            best_val, best_src, best_s, best_r = r.objective(goal), "exhaustive", s, r
            predicted = _objective_to_model(goal, r)
        if space == "restricted":
            proven, gap = True, 0.0
            if best_src.startswith("hint:"):
                best_src = "exhaustive"  # searched, and nothing beats the seed
    if space == "free" or not proven:
        hint = best_s
        if space == "free":
            hint = local_search(workload, best_s, goal, max_evaluations=2_000,
                                time_limit_s=max(0.0, 0.75 * time_limit_s - (time.perf_counter() - t0)))
            hr = execute(workload, hint)
            if hr.objective(goal) < best_val - 1e-15:
                best_val, best_src, best_s, best_r = hr.objective(goal), "hint:local-search", hint, hr
                predicted = _objective_to_model(goal, hr)
        # CP-SAT gets what is left of the budget, model building included, less a margin for
        # executing its answer; at least 50 ms so a tight budget still tries
        remaining = max(0.05, time_limit_s - (time.perf_counter() - t0) - 0.03)
        from npusched.policies.mapping.cpsat import solve_cpsat  # needs the [solver] extra

        out = solve_cpsat(workload, goal, max_transitions=limit, time_limit_s=remaining,
                          hint=best_s, hint_result=best_r, workers=workers,
                          limit_includes_build=True)
        bound = free_lower_bound(workload, goal) if space == "free" else -math.inf
        if out.schedule is not None:
            r = execute(workload, out.schedule)
            if r.objective(goal) < best_val - 1e-15:
                best_val, best_src, best_s, best_r = r.objective(goal), "cp-sat", r.schedule, r
                predicted = out.objective_s
            if out.status == "OPTIMAL" and space == "free":
                proven = True
        if np.isfinite(out.bound_s):
            # CP-SAT's bound is on its tick-rounded model (to within a tick per group)
            bound = max(bound, out.bound_s if goal == "latency" else -out.bound_s)
        gap = 0.0 if proven else max(0.0, (best_val - bound) / abs(best_val))
    return HaxconnResult(
        schedule=best_r.schedule,
        realised=best_r,
        predicted_objective=predicted,
        source=best_src,
        proven=proven,
        gap=gap,
        solve_s=time.perf_counter() - t0,
        baselines=base,
    )


#: Seconds charged per schedule the batched exhaustive search executes, in D-HaX-CoNN's
#: deterministic clock: the measured cost of :func:`execute_batch` on two to three DNNs of ten
#: groups on this project's development machine (12-40 us a schedule in batches of 256-4,096;
#: see docs/readme/hax2.md), so swap times do not depend on the load of the machine a rerun uses.
EVAL_COST_S = 30e-6

#: Seconds per unit of CP-SAT's deterministic time in D-HaX-CoNN's clock. Measured for these
#: models with one worker: 3.9-6.1 wall seconds per unit at a load of ~4 on the 2-core
#: development machine (so ~2-3 s on an idle core); we take 3 s.
DET_TIME_S = 3.0


@dataclass(frozen=True)
class Improvement:
    """One schedule swap of D-HaX-CoNN.

    Attributes:
        time_s: seconds after the DNN set changed at which the schedule is available (on the
            deterministic clock, see :func:`dynamic_haxconn`).
        schedule: the schedule (assignment and per-accelerator order).
        objective: its realised objective (seconds for latency).
        source: ``"naive:<method>"``, ``"exhaustive"`` or ``"cp-sat"``.
    """

    time_s: float
    schedule: Schedule
    objective: float
    source: str


def dynamic_haxconn(
    workload: Workload,
    goal: str = "latency",
    *,
    time_limit_s: float = 1.5,
    max_transitions: int = 1,
    enumerate_limit: int = 2_000_000,
    eval_cost_s: float = EVAL_COST_S,
    det_time_s: float = DET_TIME_S,
    chunk: int = 256,
    on_update: Callable[[float, Schedule, ExecutionResult], None] | None = None,
) -> list[Improvement]:
    """D-HaX-CoNN (Sec. 5.3): start from the best naive schedule (GPU-only or GPU & DSA) and
    swap in every improving schedule as the search finds it while the workload runs: first the
    bounded exhaustive search of the restricted space (in bound order, ``chunk`` combinations at a
    time), then CP-SAT on the free space seeded with the best so far (one worker, seed 0), whose
    solution callback reports its incumbents, for ``time_limit_s`` of deterministic time.

    **Deterministic clock** (so reruns are byte-identical): a swap's time is the search's work
    converted to seconds, not this machine's wall clock - ``eval_cost_s`` per schedule the
    exhaustive search executed (:data:`EVAL_COST_S`, measured), plus CP-SAT's deterministic time
    (its own work counter, calibrated by OR-Tools to roughly seconds) after it.

    Returns:
        The swaps in time order, the first being the naive start at 0 s; every later one is
        strictly better. ``on_update`` is called at every swap after the first.
    """
    naive = [run_method(workload, m, goal) for m in ("GPU-only", "GPU & DSA")]
    start = min(naive, key=lambda r: r.realised.objective(goal))
    swaps = [Improvement(0.0, start.realised.schedule, start.realised.objective(goal),
                         f"naive:{start.method}")]
    best: list[tuple[Schedule, ExecutionResult]] = [(start.schedule, start.realised)]
    offset = [0.0]

    def offer(t: float, s: Schedule, r: ExecutionResult, source: str) -> None:
        v = r.objective(goal)
        if v < swaps[-1].objective - 1e-15:
            best[0] = (s, r)
            swaps.append(Improvement(t, r.schedule, v, source))
            if on_update is not None:
                on_update(t, r.schedule, r)

    if space_size(workload, max_transitions) <= enumerate_limit:
        seed = start if max(start.schedule.transitions()) <= max_transitions else None
        _, _, stats = exhaustive_search(
            workload, goal, max_transitions=max_transitions,
            seed=(seed.schedule, seed.realised) if seed is not None else None,
            max_combinations=enumerate_limit, chunk=chunk,
            on_improve=lambda s, r, k: offer(k * eval_cost_s, s, r, "exhaustive"),
        )
        offset[0] = stats.evaluated * eval_cost_s
    sched, res = best[0]
    budget = (time_limit_s - offset[0]) / det_time_s
    if budget > 0:
        from npusched.policies.mapping.cpsat import solve_cpsat  # needs the [solver] extra

        solve_cpsat(
            workload, goal, time_limit_s=budget, hint=sched, hint_result=res,
            clock="deterministic",
            on_solution=lambda s, t, _o: offer(offset[0] + t * det_time_s, s,
                                               execute(workload, s), "cp-sat"),
        )
    return swaps
