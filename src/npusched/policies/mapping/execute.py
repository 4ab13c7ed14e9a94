"""Exact execution of a layer-group schedule on a shared-memory SoC (HaX-CoNN Eq. 2-9).

Inputs are plain data, so an engine policy can hand them over unchanged:

* a :class:`Workload` - the SoC, its contention model and the DNNs (:class:`Task`: a
  :class:`~npusched.hardware.soc.GroupProfile`, a release time and the tasks it depends on);
* a :class:`Schedule` - per task, the accelerator of every group (Eq. 1), and optionally the
  order in which each accelerator serves groups of different tasks.

:func:`execute` runs it as a fluid event simulation: a running group progresses at rate
``1 / s(d, e)`` where ``s`` is the contention model's slowdown for its own requested throughput
``d`` and the sum ``e`` of the throughputs requested by the groups running on the *other*
accelerators at that moment. Every start or end of a group opens a new *contention interval*
(Eq. 8); inside one all rates are constant, so the simulation is exact for the model (no time
step). Within a task, group ``g + 1`` may start once group ``g`` ended plus, if the accelerator
changes, the transition cost ``out_s[g, a] + in_s[g + 1, b]`` (Eq. 2-3); transitions hold no
accelerator and request no memory throughput (our reading: they are flush/copy work the paper
charges to the DNN's time, not to an accelerator). An accelerator runs one group at a time
(Eq. 9 with epsilon = 0); it serves the tasks in the schedule's ``order`` if given, otherwise the
ready group of the highest-priority task (``priority``; default: task index), never idling while
a group is ready.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from npusched.errors import ConfigError, SimulationError
from npusched.hardware.contention import PccsContention
from npusched.hardware.soc import GroupProfile, SocSpec

FloatArray = npt.NDArray[np.float64]

__all__ = [
    "ContentionInterval",
    "ExecutionResult",
    "Schedule",
    "Task",
    "Workload",
    "execute",
]


@dataclass(frozen=True)
class Task:
    """One DNN inference of the workload.

    Attributes:
        name: label (e.g. ``"resnet-152"``).
        profile: its layer-group profile on the workload's SoC.
        after: indices of tasks whose output it consumes (a pipeline, Scenario 3); it starts
            when all of them ended (plus a transition if the accelerator changes).
        release_s: earliest start in seconds.
    """

    name: str
    profile: GroupProfile
    after: tuple[int, ...] = ()
    release_s: float = 0.0


@dataclass(frozen=True)
class Workload:
    """DNNs to run together on one SoC.

    Attributes:
        soc: the SoC (its bandwidth normalises requested throughputs).
        tasks: the DNNs; dependencies must point to earlier tasks.
        contention: the slowdown model.
    """

    soc: SocSpec
    tasks: tuple[Task, ...]
    contention: PccsContention = field(default_factory=PccsContention)

    def __post_init__(self) -> None:
        if not self.tasks:
            raise ConfigError("workload has no tasks")
        for i, t in enumerate(self.tasks):
            if t.profile.accelerators != self.soc.accelerators:
                raise ConfigError(
                    f"task {t.name!r}: profile accelerators {t.profile.accelerators} != "
                    f"SoC {self.soc.name} {self.soc.accelerators}"
                )
            if any(not 0 <= d < i for d in t.after):
                raise ConfigError(f"task {t.name!r}: dependencies must be earlier tasks")

    @property
    def n_accelerators(self) -> int:
        return len(self.soc.accelerators)

    def demand(self, task: int) -> FloatArray:
        """Requested throughput of every group of ``task`` as a fraction of the SoC bandwidth,
        shape ``(G, A)``."""
        return np.asarray(
            self.tasks[task].profile.mem_bps / self.soc.memory_bandwidth_bps, dtype=np.float64
        )


@dataclass(frozen=True)
class Schedule:
    """Where and in which order every group runs.

    Attributes:
        assignment: per task, the accelerator index of each group (Eq. 1).
        order: optional, per accelerator, the ``(task, group)`` pairs it serves in that order
            (every group assigned to it exactly once).
        priority: optional task priority for dispatch when ``order`` is absent (first = highest).
    """

    assignment: tuple[tuple[int, ...], ...]
    order: tuple[tuple[tuple[int, int], ...], ...] | None = None
    priority: tuple[int, ...] | None = None

    @staticmethod
    def of(assignment: Sequence[Sequence[int]], **kw: object) -> Schedule:
        """A schedule from any nested sequence of accelerator indices."""
        return Schedule(tuple(tuple(int(a) for a in row) for row in assignment), **kw)  # type: ignore[arg-type]

    def transitions(self) -> tuple[int, ...]:
        """Number of accelerator changes inside each task (sum of Eq. 3's TR)."""
        return tuple(sum(1 for x, y in itertools.pairwise(r) if x != y) for r in self.assignment)

    def transition_points(self) -> tuple[tuple[int, ...], ...]:
        """Per task, the groups after which execution changes accelerator."""
        return tuple(
            tuple(g for g in range(len(r) - 1) if r[g] != r[g + 1]) for r in self.assignment
        )


@dataclass(frozen=True)
class ContentionInterval:
    """A period with constant co-runners (Eq. 8).

    Attributes:
        start_s, end_s: bounds in seconds.
        members: ``(task, group, accelerator)`` of every group running throughout.
        slowdown: the slowdown factor of each member in that interval.
    """

    start_s: float
    end_s: float
    members: tuple[tuple[int, int, int], ...]
    slowdown: tuple[float, ...]


@dataclass(frozen=True)
class ExecutionResult:
    """What :func:`execute` measured (all times in seconds).

    Attributes:
        start_s, end_s: per task, per group start / end times.
        release_s: per task release time.
        intervals: the contention intervals in time order (only periods with a group running).
        schedule: the executed schedule with the realised per-accelerator order filled in.
        contested: priority dispatch once chose among several ready tasks (another priority
            order could give another result).
    """

    start_s: tuple[FloatArray, ...]
    end_s: tuple[FloatArray, ...]
    release_s: FloatArray
    intervals: tuple[ContentionInterval, ...]
    schedule: Schedule
    contested: bool = False

    @property
    def finish_s(self) -> FloatArray:
        """End of each task's last group."""
        return np.array([e[-1] for e in self.end_s])

    @property
    def latency_s(self) -> FloatArray:
        """Per task ``T_n``: finish minus release (Eq. 10-11)."""
        return self.finish_s - self.release_s

    @property
    def makespan_s(self) -> float:
        """Time until every task finished (the latency of the whole DNN set)."""
        return float(self.finish_s.max())

    @property
    def fps(self) -> float:
        """Frames per second when the whole DNN set processes one frame: ``1 / makespan``."""
        return 1.0 / self.makespan_s

    def objective(self, goal: str) -> float:
        """Value to *minimise* for ``goal``: ``"latency"`` -> max_n T_n (Eq. 11) in seconds,
        ``"throughput"`` -> minus sum_n 1/T_n (Eq. 10) in 1/s."""
        if goal == "latency":
            return float(self.latency_s.max())
        if goal == "throughput":
            return -float(np.sum(1.0 / self.latency_s))
        raise ConfigError(f"goal={goal!r}; allowed: latency, throughput")

    def slowdown_s(self) -> float:
        """Total extra seconds of group execution caused by contention (sum over groups)."""
        total = 0.0
        for iv in self.intervals:
            for s in iv.slowdown:
                total += (iv.end_s - iv.start_s) * (1.0 - 1.0 / s)
        return total


def _transition(workload: Workload, task: int, g: int, a: int, b: int) -> float:
    """Seconds between group ``g`` of ``task`` ending on ``a`` and group ``g + 1`` starting on
    ``b`` (Eq. 2's ``TR * (tau_OUT + tau_IN)``)."""
    if a == b:
        return 0.0
    p = workload.tasks[task].profile
    return float(p.out_s[g, a] + p.in_s[g + 1, b])


def execute(
    workload: Workload,
    schedule: Schedule,
    *,
    contention: bool = True,
    transitions: bool = True,
) -> ExecutionResult:
    """Run ``schedule`` on ``workload`` exactly (see the module docstring).

    ``contention=False`` / ``transitions=False`` give the predictions of cost models that ignore
    them (the baselines' view of their own schedule).

    Raises:
        ConfigError: the schedule does not fit the workload.
        SimulationError: the given ``order`` contradicts the dependencies (a deadlock).
    """
    tasks = workload.tasks
    n_tasks, n_acc = len(tasks), workload.n_accelerators
    assign = schedule.assignment
    if len(assign) != n_tasks:
        raise ConfigError(f"schedule has {len(assign)} tasks, workload {n_tasks}")
    for i, (row, t) in enumerate(zip(assign, tasks, strict=True)):
        if len(row) != t.profile.n_groups:
            raise ConfigError(
                f"schedule task {i}: {len(row)} groups, profile has {t.profile.n_groups}"
            )
        if any(not 0 <= a < n_acc for a in row):
            raise ConfigError(f"schedule task {i}: accelerator index out of 0..{n_acc - 1}")
    queues: list[list[tuple[int, int]]] | None = None
    if schedule.order is not None:
        if len(schedule.order) != n_acc:
            raise ConfigError(f"schedule order has {len(schedule.order)} accelerators, not {n_acc}")
        queues = [list(q) for q in schedule.order]
        expect = sorted((n, g, a) for n, row in enumerate(assign) for g, a in enumerate(row))
        got = sorted((n, g, a) for a, q in enumerate(queues) for n, g in q)
        if expect != got:
            raise ConfigError("schedule order must list every group once, on its accelerator")
    rank = {n: r for r, n in enumerate(schedule.priority or range(n_tasks))}
    demand = [workload.demand(n).tolist() for n in range(n_tasks)]
    times = [t.profile.time_s.tolist() for t in tasks]
    model = workload.contention
    model._check()
    slow_fn = model.slowdown_one

    start = [np.full(t.profile.n_groups, np.nan) for t in tasks]
    end = [np.full(t.profile.n_groups, np.nan) for t in tasks]
    nxt = [0] * n_tasks  # next group to start per task
    ready = [math.inf] * n_tasks  # time its next group may start
    for n, t in enumerate(tasks):
        if not t.after:
            ready[n] = t.release_s
    running: dict[int, tuple[int, int, float]] = {}  # acc -> (task, group, remaining work s)
    served: list[list[tuple[int, int]]] = [[] for _ in range(n_acc)]
    intervals: list[ContentionInterval] = []
    contested = False  # did the dispatch ever choose among several ready tasks?
    done = 0
    total = sum(t.profile.n_groups for t in tasks)
    now = 0.0
    eps = 1e-15

    while done < total:
        # dispatch onto idle accelerators
        for a in range(n_acc):
            if a in running:
                continue
            choice: int | None = None
            if queues is not None:
                if queues[a]:
                    n, g = queues[a][0]
                    if nxt[n] == g and ready[n] <= now + eps:
                        choice = n
            else:
                cands = [
                    n
                    for n in range(n_tasks)
                    if nxt[n] < len(assign[n]) and assign[n][nxt[n]] == a and ready[n] <= now + eps
                ]
                if cands:
                    choice = min(cands, key=lambda n: (rank[n], ready[n]))
                    contested = contested or len(cands) > 1
            if choice is not None:
                g = nxt[choice]
                if queues is not None:
                    queues[a].pop(0)
                running[a] = (choice, g, times[choice][g][a])
                start[choice][g] = now
                served[a].append((choice, g))
                ready[choice] = math.inf
        # rates in this interval
        accs = sorted(running)
        if accs:
            own = [demand[running[a][0]][running[a][1]][a] for a in accs]
            if contention and len(accs) > 1:
                tot = sum(own)
                slow = [slow_fn(d, tot - d, a) for d, a in zip(own, accs, strict=True)]
            else:
                slow = [1.0] * len(accs)
            t_done = now + min(running[a][2] * s for a, s in zip(accs, slow, strict=True))
        else:
            slow = []
            t_done = math.inf
        t_ready = min((r for r in ready if r > now + eps), default=math.inf)
        t_next = min(t_done, t_ready)
        if not math.isfinite(t_next):
            raise SimulationError("schedule deadlocks: its order contradicts the dependencies")
        dt = t_next - now
        if accs and dt > 0:
            intervals.append(
                ContentionInterval(
                    now,
                    t_next,
                    tuple((running[a][0], running[a][1], a) for a in accs),
                    tuple(float(s) for s in slow),
                )
            )
        finished: list[int] = []
        for a, s in zip(accs, slow, strict=True):
            n, g, rem = running[a]
            rem -= dt / s
            if t_next >= t_done and rem <= 1e-12 * max(1.0, times[n][g][a]):
                finished.append(a)
            else:
                running[a] = (n, g, rem)
        now = t_next
        for a in finished:
            n, g, _ = running.pop(a)
            end[n][g] = now
            done += 1
            nxt[n] = g + 1
            if g + 1 < len(assign[n]):
                tr = _transition(workload, n, g, a, assign[n][g + 1]) if transitions else 0.0
                ready[n] = now + tr
            else:
                _release_dependents(workload, assign, end, nxt, ready, n, transitions)
    return ExecutionResult(
        start_s=tuple(start),
        end_s=tuple(end),
        release_s=np.array([t.release_s for t in tasks], dtype=np.float64),
        intervals=tuple(intervals),
        schedule=Schedule(assign, tuple(tuple(q) for q in served), schedule.priority),
        contested=contested,
    )


def _release_dependents(
    workload: Workload,
    assign: tuple[tuple[int, ...], ...],
    end: list[FloatArray],
    nxt: list[int],
    ready: list[float],
    finished_task: int,
    transitions: bool,
) -> None:
    """When ``finished_task`` ends, tasks whose dependencies all ended become ready, after the
    transition from each producer's last accelerator to the consumer's first."""
    for m, t in enumerate(workload.tasks):
        if finished_task not in t.after or nxt[m] > 0:
            continue
        if any(nxt[d] < len(assign[d]) for d in t.after):
            continue
        r = t.release_s
        for d in t.after:
            last = len(assign[d]) - 1
            a, b = assign[d][last], assign[m][0]
            tr = 0.0
            if transitions and a != b:
                tr = float(
                    workload.tasks[d].profile.out_s[last, a] + t.profile.in_s[0, b]
                )
            r = max(r, float(end[d][last]) + tr)
        ready[m] = r
