"""Planaria's spatial task scheduling (MICRO 2020, Sec. V, Algorithm 1) as pure functions.

The scheduler runs on the host whenever a task is dispatched or a running task finishes. It
sees the queue ``Q`` (running and waiting tasks), each with its priority, its slack (QoS
constraint minus the time since dispatch, i.e. seconds left until its deadline) and its
predicted remaining time on every subarray count (``PREDICTTIME``: the remaining tiles of the
compiled configuration tables times their cycles per tile). It returns how many subarrays each
task gets. Executing that allocation (tile-granular re-allocation, preempting only tasks whose
count changes, checkpointing one tile) is the engine's job, not these functions'.

Each function follows its pseudo-code line by line (line numbers of Algorithm 1 in comments);
where the pseudo-code is silent or ill-defined we choose, and say so:

* **ESTIMATERESOURCES with no feasible count** (``min`` of an empty candidate list, line 21):
  the task cannot meet its QoS on any allocation; we return the count with the shortest
  predicted remaining time (the smallest such count on ties), i.e. the most it can use.
* **remaining_time in ALLOCATEFITTASKS** (line 27): the predicted remaining time on the task's
  estimated (minimum) allocation ``remaining_s[estimate - 1]``, floored at 1 ns so a task about
  to finish has a large but finite score.
* **Whole subarrays** (lines 31-32 give fractional shares ``fraction x remaining_array``): the
  spare subarrays are apportioned by the largest-remainder (Hamilton) method - each task first
  gets ``floor(share)``, then the leftover subarrays go one each to the largest fractional
  remainders (ties: higher score, then queue order). The allocation sums to exactly
  ``size`` and every task's count is its share rounded down or up.
* **Slack <= 0 in ALLOCATEUNFITTASKS** (line 40 divides by the slack): a task past its deadline
  has no finite positive score; such tasks rank after every task that can still meet its QoS,
  among themselves by ``priority / estimate`` (descending). Equal scores keep queue order.
* **The last task that does not fit** (lines 44-47 subtract estimates until the array is full,
  which can overshoot): the first task in score order whose estimate exceeds the subarrays
  left gets what is left, and allocation stops; the array is never oversubscribed. (The
  pseudo-code's loop variable ``task`` is the next task in score order.)

Tasks that get no subarrays are left out of the returned mapping (they wait in the queue).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from npusched.base import Component
from npusched.errors import ParameterError, SimulationError
from npusched.hardware.profile import ExecPlan
from npusched.policies.contract import (
    Allocation,
    JobState,
    JobView,
    MachineView,
    keeps_method,
)
from npusched.policies.machine import MachinePolicyBase
from npusched.policies.spatial.planaria_core import (
    _MIN_REMAINING_S,
    SMALL_QUEUE,
    PlanariaCore,
    _counts_from_estimates,
    _JobRec,
    _Table,
    _unfit_counts,
    core_rows,
)
from npusched.policies.spatial.planaria_core import (
    _estimate as _estimate,  # re-exported: the small-queue estimate
)

__all__ = [
    "PlanariaPolicy",
    "SpatialTask",
    "allocate_fit_tasks",
    "allocate_unfit_tasks",
    "estimate_resources",
    "fits",
    "predict_remaining",
    "schedule_counts",
    "schedule_tasks_spatially",
]

FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True)
class SpatialTask:
    """One task in Planaria's queue (plain data: the engine builds these from its jobs).

    Attributes:
        id: the task (request) id.
        priority: its priority (Planaria: 1..11), > 0.
        slack_s: seconds left until its QoS deadline (``constraint - executed_time``, line 15);
            may be <= 0 once the deadline has passed.
        remaining_s: predicted remaining seconds on ``n = 1..size`` subarrays (index ``n - 1``),
            from the configuration tables and the task's current position.
    """

    id: int
    priority: float
    slack_s: float
    remaining_s: Any

    def __post_init__(self) -> None:
        r = np.asarray(self.remaining_s, dtype=np.float64)
        if r.ndim != 1 or r.size == 0 or not np.all(np.isfinite(r)) or (r < 0).any():
            raise SimulationError(
                f"task {self.id}: remaining_s must be a non-empty 1-D array of finite "
                f"seconds >= 0, got {self.remaining_s!r}"
            )
        if not self.priority > 0:
            raise SimulationError(f"task {self.id}: priority must be > 0, got {self.priority}")
        r.flags.writeable = False
        object.__setattr__(self, "remaining_s", r)


def predict_remaining(plans: Sequence[ExecPlan], step: int, fraction: float = 0.0) -> FloatArray:
    """PREDICTTIME for every subarray count: remaining seconds of a task at position
    ``(step, fraction)`` of its plan on each of ``plans`` (one per count, ``plans[n - 1]`` for
    ``n`` subarrays; all plans of one request share their step sequence).

    The remaining time is the rest of the current step (``1 - fraction`` of it, i.e. its
    remaining tiles times cycles per tile) plus every later step, from the plan's prefix sums
    (Sec. V: "looking up the number of remaining tiles with their cycles").
    """
    if not 0.0 <= fraction <= 1.0:
        raise SimulationError(f"fraction must be in [0, 1], got {fraction}")
    out = np.empty(len(plans), dtype=np.float64)
    for i, plan in enumerate(plans):
        if not 0 <= step <= plan.steps:
            raise SimulationError(f"step {step} outside 0..{plan.steps}")
        if step == plan.steps:
            out[i] = 0.0
            continue
        cum = plan.cum_s
        done = float(cum[step]) + fraction * float(cum[step + 1] - cum[step])
        out[i] = max(plan.total_s - done, 0.0)
    return out


def estimate_resources(task: SpatialTask, size: int = 16) -> int:
    """ESTIMATERESOURCES (lines 13-22): the fewest subarrays whose predicted remaining time
    fits the task's slack; if none does, the count with the shortest remaining time."""
    remaining = np.asarray(task.remaining_s)[:size]  # PREDICTTIME for 1..size subarrays
    if remaining.size < size:
        raise SimulationError(
            f"task {task.id}: remaining_s has {remaining.size} entries, need {size}"
        )
    slack = task.slack_s  # line 15
    candidates = [n for n in range(1, size + 1) if remaining[n - 1] <= slack]  # lines 16-20
    if candidates:
        return min(candidates)  # line 21
    return int(np.argmin(remaining)) + 1  # no count meets the QoS (see module docstring)


def fits(estimates: Mapping[int, int], size: int = 16) -> bool:
    """``Planaria.fits(estimates)`` (line 6): the minimum allocations fit on the array."""
    return sum(estimates.values()) <= size


def _largest_remainder(shares: FloatArray, total: int, order_keys: FloatArray) -> npt.NDArray[Any]:
    """Whole units summing to ``total`` from real ``shares`` (summing to ``total``): floors,
    then one more unit to each of the largest remainders (ties: larger ``order_keys``, then
    lower index)."""
    base = np.floor(shares + 1e-12).astype(np.int64)
    left = total - int(base.sum())
    if left > 0:
        rem = np.round(shares - base, 9)  # remainders equal up to rounding are ties
        idx = np.arange(len(shares))
        order = np.lexsort((idx, -order_keys, -rem))
        base[order[:left]] += 1
    return base


def allocate_fit_tasks(
    queue: Sequence[SpatialTask], estimates: Mapping[int, int], size: int = 16
) -> dict[int, int]:
    """ALLOCATEFITTASKS (lines 23-35): every task its estimate, plus the spare subarrays split
    in proportion to ``priority / remaining_time`` (whole subarrays, largest remainder)."""
    if not queue:
        return {}
    allocation = {t.id: int(estimates[t.id]) for t in queue}  # line 26
    scores = np.array(  # line 27
        [
            t.priority / max(float(t.remaining_s[allocation[t.id] - 1]), _MIN_REMAINING_S)
            for t in queue
        ]
    )
    remaining_array = size - sum(allocation.values())  # line 29
    if remaining_array < 0:
        raise SimulationError(f"estimates need {size - remaining_array} subarrays of {size}")
    fraction = scores / scores.sum()  # line 31
    extra = _largest_remainder(fraction * remaining_array, remaining_array, scores)  # line 32
    for t, e in zip(queue, extra.tolist(), strict=True):
        allocation[t.id] += int(e)
    return allocation


def allocate_unfit_tasks(
    queue: Sequence[SpatialTask], estimates: Mapping[int, int], size: int = 16
) -> dict[int, int]:
    """ALLOCATEUNFITTASKS (lines 36-49): tasks in descending ``priority / (slack x estimate)``
    order get their estimates until the array is full (the last one what is left)."""
    keyed = []
    for pos, t in enumerate(queue):  # lines 38-41
        slack = t.slack_s  # line 39
        est = int(estimates[t.id])
        if slack > 0:
            key = (0, -(t.priority / (slack * est)), pos)  # line 40
        else:  # past its deadline: after every task that can still make it
            key = (1, -(t.priority / est), pos)
        keyed.append((key, t))
    keyed.sort(key=lambda kt: kt[0])  # line 42
    allocation: dict[int, int] = {}
    remaining_array = size  # line 43
    for _, t in keyed:  # lines 44-47
        if remaining_array <= 0:
            break
        give = min(int(estimates[t.id]), remaining_array)
        allocation[t.id] = give  # line 45
        remaining_array -= give  # line 46
    return allocation


def schedule_counts(
    priority: FloatArray, slack_s: FloatArray, remaining_s: FloatArray, size: int = 16
) -> npt.NDArray[np.int64]:
    """SCHEDULETASKSSPATIALLY over arrays, every task at once: the subarrays of each task (0:
    it waits), the same counts as :func:`schedule_tasks_spatially` on the same queue, bit for
    bit (each line does the same float operations in the same order).

    Args:
        priority: ``(n,)`` priorities, > 0 (not checked: the policy builds these).
        slack_s: ``(n,)`` seconds left until each task's QoS deadline (``inf``: no bound).
        remaining_s: ``(n, >= size)`` predicted remaining seconds on 1..size subarrays.
        size: the array's subarrays.
    """
    n = len(priority)
    if n <= 1:  # a lone task: its estimate plus every spare subarray (lines 26-32), i.e. all
        return np.full(n, size, dtype=np.int64)
    counts = np.zeros(n, dtype=np.int64)
    rem = remaining_s if remaining_s.shape[1] == size else remaining_s[:, :size]
    ok = rem <= slack_s[:, None]  # lines 16-20, every task and count at once
    est = np.where(ok.any(axis=1), ok.argmax(axis=1), rem.argmin(axis=1)) + 1  # line 21
    if int(est.sum()) <= size:  # line 6: ALLOCATEFITTASKS
        at_est = rem[np.arange(n), est - 1]
        scores = priority / np.maximum(at_est, _MIN_REMAINING_S)  # line 27
        remaining_array = size - int(est.sum())  # line 29
        fraction = scores / scores.sum()  # line 31
        extra = _largest_remainder(fraction * remaining_array, remaining_array, scores)
        return est + extra
    # ALLOCATEUNFITTASKS (lines 36-49), as allocate_unfit_tasks
    counts[:] = _unfit_counts(priority.tolist(), slack_s.tolist(), est.tolist(), size)
    return counts


def schedule_counts_small(
    priority: list[float], slack_s: list[float], remaining_s: list[list[float]], size: int = 16
) -> list[int] | None:
    """:func:`schedule_counts` on Python floats for ``2 <= n <` :data:`SMALL_QUEUE` tasks:
    the same counts, bit for bit (every float operation as NumPy makes it: ``np.round(x, 9)``
    is ``rint(x * 1e9) / 1e9``, a sum of fewer than 8 values is sequential, ``lexsort`` is a
    sort on the key tuple), or ``None`` outside that range or where a remaining time is NaN
    (NumPy's ``argmin`` and Python's ``min`` treat NaN differently).

    Args:
        priority: ``n`` priorities (floats), > 0.
        slack_s: ``n`` seconds left until each task's QoS deadline (``inf``: no bound).
        remaining_s: ``n`` rows of predicted remaining seconds on 1..size (or more) subarrays.
        size: the array's subarrays.
    """
    n = len(priority)
    if not 2 <= n < SMALL_QUEUE:
        return None
    est: list[int] = []
    at_est: list[float] = []
    for row, sl in zip(remaining_s, slack_s, strict=True):
        k = -1
        for i in range(size):  # lines 16-21: the fewest subarrays that meet the QoS
            if row[i] <= sl:
                k = i
                break
        if k < 0:  # none meets it: the fastest count (the first of equal minima)
            r = row[:size]
            if any(x != x for x in r):
                return None
            k = r.index(min(r))
        est.append(k + 1)
        at_est.append(row[k])
    return _counts_from_estimates(priority, slack_s, est, at_est, size)


def schedule_tasks_spatially(queue: Sequence[SpatialTask], size: int = 16) -> dict[int, int]:
    """SCHEDULETASKSSPATIALLY (lines 1-12): ``{task id: subarrays}`` for the tasks that run,
    summing to at most ``size``."""
    ids = [t.id for t in queue]
    if len(set(ids)) != len(ids):
        raise SimulationError(f"duplicate task ids in the queue: {ids}")
    estimates = {t.id: estimate_resources(t, size) for t in queue}  # lines 2-5
    if fits(estimates, size):  # line 6
        s = allocate_fit_tasks(queue, estimates, size)  # line 7
    else:
        s = allocate_unfit_tasks(queue, estimates, size)  # line 9
    return {k: v for k, v in s.items() if v > 0}  # line 11


# --- the policy on the engine contract ---------------------------------------------------------
def _own_rows(policy: Any) -> bool:
    """Whether ``policy`` computes a job's table and PREDICTTIME as this class does (neither
    ``_table`` nor ``_remaining`` replaced, on its class or the instance): then
    :func:`~npusched.policies.spatial.planaria_core.core_rows` gives the long queue's inputs,
    the same values ``_targets_arrays`` made job by job."""
    from inspect import getattr_static

    return keeps_method(policy, "_table", getattr_static(PlanariaCore, "_table")) and (
        keeps_method(policy, "_remaining", getattr_static(PlanariaPolicy, "_remaining"))
    )


class PlanariaPolicy(PlanariaCore, MachinePolicyBase, Component):
    """Planaria's spatial scheduler as a machine policy (``kind = "machine"``) on one
    fission-array resource (:func:`npusched.sim.resources.fission_array`).

    Invoked on dispatch and completion (Sec. V "Overall flow"; other wakes change nothing).
    The queue ``Q`` is every unfinished job: waiting, running, and those being re-allocated.
    A job's slack is its request's QoS bound minus the time since its arrival (no bound:
    unbounded slack); its predicted remaining time on ``n`` subarrays is
    :func:`predict_remaining` at its ``(step, fraction)`` position on the profile's
    ``subarrays = n`` plan. :func:`schedule_tasks_spatially` gives the counts; only jobs whose
    count changes are touched (Sec. V: "tasks are preempted only when the resource allocation
    changes"): a waiting job starts on its count, a running job with another count is
    re-allocated (the engine stops it at its next tile boundary, checkpoints one tile and
    continues it on the new plan variant from the same position), a running job that gets none
    is preempted with CHECKPOINT.

    The counts are targets, reached in two phases because a shrinking job keeps its units
    until it reaches its preemption point (and the engine never promises units that are still
    held): shrinks and preemptions are issued at once; growths and starts follow, in queue
    order, as far as the units not held or promised allow, and the rest at the next wakes
    (units are released when a save completes, reason ``"preempted"``). Targets change only on
    a dispatch or a completion.

    Args:
        resource: the fission-array resource's name (``None``: the machine's first).
        name: the policy's name in results.
    """

    #: The plan axis its resource's units select (a run config checks the machine has it).
    units_axis = "subarrays"

    def __init__(self, resource: str | None = None, name: str = "Planaria") -> None:
        self.resource = resource
        self.name = name
        self.targets_: dict[int, int] = {}
        self.promised_: dict[int, int] = {}
        #: Per request shape: the prefix sums of its plan on 1..size subarrays, one row per
        #: step (the configuration tables PREDICTTIME reads).
        self.tables_: dict[tuple[Any, ...], _Table] = {}
        self.size_: int | None = None
        #: Allocations by unit count (immutable, shared by every decision of a run).
        self.allocs_: dict[int, Allocation] = {}
        #: ``allocs_`` as a list by unit count (``None``: not made yet).
        self.alloc_l_: list[Allocation | None] = []
        #: Each job's configuration table, by job id (its request's shape looked up once).
        self.tab_of_: dict[int, _Table] = {}
        #: Each job's table, priority and slack terms, by job id (read once per job).
        self.rec_of_: dict[int, _JobRec] = {}

    def validate(self) -> None:
        """Check the parameters: ``resource`` is ``None`` or a non-empty string, ``name`` a
        non-empty string (raises :class:`~npusched.errors.ParameterError`)."""
        if self.resource is not None and not (isinstance(self.resource, str) and self.resource):
            raise ParameterError(
                "PlanariaPolicy", "resource", self.resource, "a resource name, or none (the first)"
            )
        if not (isinstance(self.name, str) and self.name):
            raise ParameterError("PlanariaPolicy", "name", self.name, "a non-empty string")

    def reset(self) -> None:
        """Validate the parameters and forget the targets and promises of the previous run."""
        self.validate()
        self.reset_core()
        #: ``_targets_arrays`` takes ``core_rows`` (set at the first long queue)
        self.own_rows_: bool | None = None

    def _remaining(self, job: JobView, tab: _Table) -> FloatArray:
        """PREDICTTIME for every count at the job's position (as :func:`predict_remaining`,
        vectorised over counts; the same float operations)."""
        step, frac = job.position
        if step >= tab.steps:
            return tab.zeros
        if step == 0 and frac == 0.0:
            return tab.at_start
        row = tab.cum_t[step]
        if frac == 0.0:  # row + 0.0 * (...) is row exactly
            return np.maximum(tab.total - row, 0.0)
        done = row + frac * (tab.cum_t[step + 1] - row)
        return np.maximum(tab.total - done, 0.0)

    def tasks(self, view: MachineView) -> list[tuple[JobView, SpatialTask]]:
        """Algorithm 1's task records for every unfinished job, in a fixed order (running and
        re-allocating jobs first, then the ready queue in dispatch order)."""
        size = self._capacity(view)
        out = []
        now = view.now
        for job in (*view.running, *view.preempting, *view.ready):
            remaining = self._remaining(job, self._table(job, size, view.profiles))
            slo = job.request.slo_s
            slack = math.inf if slo is None else slo - (now - job.arrival_s)
            out.append((job, SpatialTask(job.id, float(job.priority), slack, remaining)))
        return out

    def _targets_arrays(
        self, jobs: Sequence[JobView], view: MachineView, size: int
    ) -> dict[int, int]:
        """Algorithm 1 with NumPy (:func:`schedule_counts`) where the queue is too long for the
        core's Python floats or a remaining time is NaN."""
        now = view.now
        profiles = view.profiles
        own = getattr(self, "own_rows_", None)
        if own is None:
            own = self.own_rows_ = _own_rows(self)
        if own:  # the core's inputs from each job's record (``core_rows``)
            prio_a, slack_a, rows_a = core_rows(self, jobs, size, profiles, now)
            counts_a = schedule_counts(prio_a, slack_a, rows_a, size).tolist()
            return {job.id: c for job, c in zip(jobs, counts_a, strict=True)}
        n = len(jobs)
        rows = []
        prio = np.empty(n)
        slack = np.empty(n)
        for i, job in enumerate(jobs):
            rows.append(self._remaining(job, self._table(job, size, profiles)))
            prio[i] = job.priority
            slo = job.request.slo_s
            slack[i] = math.inf if slo is None else slo - (now - job.arrival_s)
        counts = schedule_counts(prio, slack, np.array(rows), size).tolist()
        return {job.id: c for job, c in zip(jobs, counts, strict=True)}

    @staticmethod
    def _held(job: JobView) -> int:
        """Units the job holds now (0 while waiting or starting)."""
        if job.state in (JobState.RUNNING, JobState.PREEMPTING) and job.allocation is not None:
            return int(job.allocation.units or 0)
        return 0
