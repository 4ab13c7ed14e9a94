"""The baselines of HaX-CoNN's evaluation (Sec. 5), each as *our reading* of its paper.

Every baseline returns a :class:`~npusched.policies.mapping.execute.Schedule`; :func:`run_method`
executes it twice: under the method's *own* cost model (its prediction) and under the full model
with contention and transitions (what it realises). The gap between the two is the
misprediction the paper reports (up to 75% for contention-unaware methods, Sec. 5.2).

* **GPU-only**: every group of every DNN on accelerator 0, DNNs served in index order.
* **GPU & DSA**: each DNN wholly on one accelerator (no layer-level split), at least one DNN off
  the GPU; the best such assignment *as measured* (realised), like picking the best naive
  configuration on the board. Predicted without contention.
* **Mensa-like** (Boroumand et al., PACT'21): per DNN independently, walk the layer groups and
  put each on the accelerator with the smallest ``time + transition from the previous group's
  accelerator``; greedy, no look-ahead, contention-unaware (Mensa schedules one DNN).
* **Herald-like** (Kwon et al., HPCA'21): layer-level earliest-finish-time list scheduling of
  all DNNs' groups over the accelerators, with neither transition costs nor contention in its
  cost model (it balances load across accelerators).
* **H2H-like** (Zhang et al., DAC'22): the same list scheduling *with* transition costs, then
  H2H's remapping step as a hill climb that moves single groups while its (contention-unaware,
  transition-aware) predicted objective improves.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from npusched.policies.mapping.execute import ExecutionResult, Schedule, Workload, execute

__all__ = [
    "BASELINES",
    "MethodResult",
    "gpu_and_dsa",
    "gpu_only",
    "h2h_like",
    "herald_like",
    "local_search",
    "mensa_like",
    "run_method",
]


@dataclass(frozen=True)
class MethodResult:
    """A method's schedule with its predicted and realised execution.

    Attributes:
        method: name.
        schedule: what it chose.
        predicted: execution under the method's own cost model.
        realised: execution under the full model (contention + transitions).
    """

    method: str
    schedule: Schedule
    predicted: ExecutionResult
    realised: ExecutionResult

    def misprediction(self, goal: str = "latency") -> float:
        """``|realised - predicted| / realised`` of the goal's objective."""
        r, p = self.realised.objective(goal), self.predicted.objective(goal)
        return abs(r - p) / abs(r)


def gpu_only(workload: Workload, goal: str = "latency") -> Schedule:
    """Every group on accelerator 0 (the GPU)."""
    return Schedule(tuple((0,) * t.profile.n_groups for t in workload.tasks))


def gpu_and_dsa(workload: Workload, goal: str = "latency") -> Schedule:
    """Each DNN wholly on one accelerator, the best realised assignment with at least one DNN
    off the GPU (with one accelerator, GPU-only)."""
    n_acc = workload.n_accelerators
    best: tuple[float, Schedule] | None = None
    for accs in itertools.product(range(n_acc), repeat=len(workload.tasks)):
        if n_acc > 1 and all(a == 0 for a in accs):
            continue
        sched = Schedule(tuple((a,) * t.profile.n_groups for a, t in zip(accs, workload.tasks, strict=True)))
        val = execute(workload, sched).objective(goal)
        if best is None or val < best[0]:
            best = (val, sched)
    return gpu_only(workload) if best is None else best[1]


def mensa_like(workload: Workload, goal: str = "latency") -> Schedule:
    """Per DNN, per group the accelerator minimising its time plus the transition from the
    previous group's accelerator (greedy, no look-ahead, no contention)."""
    rows = []
    for t in workload.tasks:
        p = t.profile
        row = [int(np.argmin(p.time_s[0]))]
        for g in range(1, p.n_groups):
            prev = row[-1]
            cost = p.time_s[g].copy()
            for a in range(p.n_accelerators):
                if a != prev:
                    cost[a] += p.out_s[g - 1, prev] + p.in_s[g, a]
            row.append(int(np.argmin(cost)))
        rows.append(tuple(row))
    return Schedule(tuple(rows))


def _list_schedule(workload: Workload, *, transitions: bool) -> Schedule:
    """Earliest-finish-time list scheduling without contention; groups are taken in order of
    their ready time (ties: task index)."""
    tasks = workload.tasks
    n_acc = workload.n_accelerators
    free = [0.0] * n_acc
    nxt = [0] * len(tasks)
    ready = [t.release_s if not t.after else np.inf for t in tasks]
    last_acc: list[int | None] = [None] * len(tasks)
    finish = [np.inf] * len(tasks)
    rows: list[list[int]] = [[] for _ in tasks]
    remaining = sum(t.profile.n_groups for t in tasks)
    while remaining:
        for m, t in enumerate(tasks):
            if t.after and nxt[m] == 0 and all(np.isfinite(finish[d]) for d in t.after):
                ready[m] = max([t.release_s, *(finish[d] for d in t.after)])
        cands = [n for n in range(len(tasks)) if nxt[n] < tasks[n].profile.n_groups and np.isfinite(ready[n])]
        n = min(cands, key=lambda k: (ready[k], k))
        g, p = nxt[n], tasks[n].profile
        prev = last_acc[n]
        d = n
        prev_task_acc: int | None = prev
        if prev is None and tasks[n].after:  # the producer's last accelerator
            d = max(tasks[n].after, key=lambda k: finish[k])
            prev_task_acc = rows[d][-1]
        best: tuple[float, int] | None = None
        for a in range(n_acc):
            tr = 0.0
            if transitions and prev_task_acc is not None and a != prev_task_acc:
                src = tasks[n].profile if prev is not None else tasks[d].profile
                gi = g - 1 if prev is not None else src.n_groups - 1
                tr = float(src.out_s[gi, prev_task_acc] + p.in_s[g, a])
            start = max(free[a], ready[n] + tr)
            end = start + float(p.time_s[g, a])
            if best is None or end < best[0]:
                best = (end, a)
        assert best is not None
        end, a = best
        free[a] = end
        rows[n].append(a)
        last_acc[n] = a
        nxt[n] += 1
        ready[n] = end
        remaining -= 1
        if nxt[n] == p.n_groups:
            finish[n] = end
            ready[n] = np.inf
    return Schedule(tuple(tuple(r) for r in rows))


def herald_like(workload: Workload, goal: str = "latency") -> Schedule:
    """EFT list scheduling, transition- and contention-unaware (our reading of Herald)."""
    return _list_schedule(workload, transitions=False)


def local_search(
    workload: Workload,
    start: Schedule,
    goal: str = "latency",
    *,
    contention: bool = True,
    transitions: bool = True,
    max_evaluations: int = 400,
    time_limit_s: float | None = None,
) -> Schedule:
    """First-improvement hill climb over single-group accelerator moves, judged by
    :func:`execute` with the given cost-model switches; stops at a local optimum, after
    ``max_evaluations`` executions or (if given) after about ``time_limit_s`` wall-clock seconds.

    The neighbours of the current schedule (task, group, accelerator, in that order) are
    executed together by :func:`~npusched.policies.mapping.batch.execute_batch` and the first
    improving one taken: the same moves and evaluation count as scanning them one by one."""
    from npusched.policies.mapping.batch import BatchData, execute_batch, objective_batch

    data = BatchData(workload)
    gmax = int(data.n_groups.max())
    n_acc = workload.n_accelerators
    best = Schedule(start.assignment)
    best_val = execute(workload, best, contention=contention, transitions=transitions).objective(goal)
    evals = 1
    t0 = time.perf_counter()
    while evals < max_evaluations:
        if time_limit_s is not None and time.perf_counter() - t0 > time_limit_s:
            break
        cur = np.zeros((len(best.assignment), gmax), dtype=np.int64)
        for n, row in enumerate(best.assignment):
            cur[n, : len(row)] = row
        moves = [(n, g, a) for n, row in enumerate(best.assignment) for g in range(len(row))
                 for a in range(n_acc) if a != row[g]]
        moves = moves[: max_evaluations - evals]
        if not moves:
            break
        mv = np.array(moves, dtype=np.int64)
        asg = np.repeat(cur[None], len(mv), axis=0)
        asg[np.arange(len(mv)), mv[:, 0], mv[:, 1]] = mv[:, 2]
        val = objective_batch(
            data, execute_batch(data, asg, contention=contention, transitions=transitions), goal
        )
        better = np.flatnonzero(val < best_val - 1e-12)
        if better.size == 0:
            break
        i = int(better[0])
        evals += i + 1
        n, g, a = moves[i]
        row = best.assignment[n]
        best = Schedule((*best.assignment[:n], (*row[:g], a, *row[g + 1:]), *best.assignment[n + 1:]))
        best_val = float(val[i])
    return Schedule(best.assignment)


def h2h_like(workload: Workload, goal: str = "latency") -> Schedule:
    """Transition-aware EFT list scheduling plus a contention-unaware remapping hill climb (our
    reading of H2H)."""
    return local_search(
        workload, _list_schedule(workload, transitions=True), goal, contention=False
    )


# name -> (schedule builder, cost model (contention, transitions) the method predicts with)
BASELINES: dict[str, tuple[Callable[[Workload, str], Schedule], tuple[bool, bool]]] = {
    "GPU-only": (gpu_only, (False, True)),
    "GPU & DSA": (gpu_and_dsa, (False, True)),
    "Mensa": (mensa_like, (False, True)),
    "Herald": (herald_like, (False, False)),
    "H2H": (h2h_like, (False, True)),
}


def run_method(workload: Workload, method: str, goal: str = "latency") -> MethodResult:
    """Build ``method``'s schedule (a :data:`BASELINES` name) and execute it both ways."""
    build, (cont, trans) = BASELINES[method]
    sched = build(workload, goal)
    pred = execute(workload, sched, contention=cont, transitions=trans)
    real = execute(workload, sched)
    return MethodResult(method, sched, pred, real)
