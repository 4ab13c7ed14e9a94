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
from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt

from npusched.base import Component
from npusched.errors import ParameterError, SimulationError
from npusched.hardware.profile import ExecPlan
from npusched.policies.contract import (
    NOTHING,
    Allocation,
    JobState,
    JobView,
    MachineView,
    Mechanism,
    Schedule,
)
from npusched.policies.machine import MachinePolicyBase, fast_schedule

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

#: Floor on a remaining time in a score's denominator, seconds.
_MIN_REMAINING_S = 1e-9


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


def _unfit_counts(prio: list[float], slack: list[float], est: list[int], size: int) -> list[int]:
    """ALLOCATEUNFITTASKS (lines 36-49) on plain lists, as :func:`allocate_unfit_tasks`:
    the tasks in descending ``priority / (slack x estimate)`` order (past their deadline
    last) get their estimates until the array is full."""
    keyed = []
    for pos, (p, sl, e) in enumerate(zip(prio, slack, est, strict=True)):
        if sl > 0:
            keyed.append((0, -(p / (sl * e)), pos))
        else:
            keyed.append((1, -(p / e), pos))
    keyed.sort()
    counts = [0] * len(prio)
    left = size
    for _, _, pos in keyed:
        if left <= 0:
            break
        give = min(est[pos], left)
        counts[pos] = give
        left -= give
    return counts


#: Below this many tasks :func:`schedule_counts_small` runs Algorithm 1 on Python floats
#: (NumPy's per-call cost dominates small arrays; its sums of fewer than 8 values are the
#: sequential sums Python makes, so the bits agree).
SMALL_QUEUE = 8


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


def _counts_from_estimates(
    priority: list[float], slack_s: list[float], est: list[int], at_est: list[float], size: int
) -> list[int]:
    """Lines 6-11 of Algorithm 1 on Python floats for fewer than :data:`SMALL_QUEUE` tasks,
    given each task's estimate ``est`` (ESTIMATERESOURCES) and its predicted remaining seconds
    on it ``at_est``: :func:`schedule_counts_small`'s counts from there on."""
    n = len(priority)
    total_est = sum(est)
    if total_est > size:
        return _unfit_counts(priority, slack_s, est, size)
    # plain loops: on Python 3.11 a comprehension's or a key function's frame costs more than
    # these few items
    scores = []
    for p, a in zip(priority, at_est, strict=True):
        scores.append(p / (a if a >= _MIN_REMAINING_S else _MIN_REMAINING_S))
    remaining_array = size - total_est
    total = sum(scores)
    shares = []
    base = []
    floor = math.floor
    for sc in scores:
        sh = sc / total * remaining_array
        shares.append(sh)
        base.append(floor(sh + 1e-12))
    left = remaining_array - sum(base)
    if left == 1 and n == 2:  # the common pair: the one leftover to the first in key order
        b0 = base[0]
        b1 = base[1]
        k0 = (-(round((shares[0] - b0) * 1e9) / 1e9), -scores[0], 0)
        k1 = (-(round((shares[1] - b1) * 1e9) / 1e9), -scores[1], 1)
        if k1 < k0:
            return [est[0] + b0, est[1] + b1 + 1]
        return [est[0] + b0 + 1, est[1] + b1]
    if left > 0:
        keyed = []
        for i in range(n):
            keyed.append((-(round((shares[i] - base[i]) * 1e9) / 1e9), -scores[i], i))
        keyed.sort()
        for _, _, i in keyed[:left]:
            base[i] += 1
    out = []
    for e, b in zip(est, base, strict=True):
        out.append(e + b)
    return out


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
class _Table(NamedTuple):
    """One request shape's configuration table: ``cum_t[s]`` the prefix sums (seconds) at step
    ``s`` on 1..size subarrays, ``total`` the last row, ``at_start`` the remaining time at
    ``(0, 0.0)``, ``steps`` the plan's steps; ``zeros`` a finished job's remaining time.
    ``rows``, ``total_l`` and ``at_start_l`` are ``cum_t``, ``total`` and ``at_start`` as Python
    floats (the small-queue path reads single entries: no NumPy call per job)."""

    cum_t: FloatArray
    total: FloatArray
    at_start: FloatArray
    steps: int
    rows: list[list[float]]
    total_l: list[float]
    at_start_l: list[float]

    @property
    def zeros(self) -> FloatArray:
        return np.zeros(len(self.total))


def _estimate(
    tab: _Table, step: int, frac: float, slack: float, size: int
) -> tuple[int, float] | None:
    """ESTIMATERESOURCES (lines 13-22) of a task at ``(step, frac)`` of ``tab`` with ``slack``
    seconds: ``(estimate, predicted remaining seconds on it)``, computing PREDICTTIME only for
    the counts it scans (each entry with :meth:`PlanariaPolicy._remaining`'s float operations,
    so the same bits); ``None`` where it would take the fastest count of a row holding a NaN
    (NumPy's ``argmin`` and Python's ``min`` differ there)."""
    if step >= tab.steps:  # finished: zero on every count, the first count either way
        return 1, 0.0
    if frac == 0.0:
        if step == 0:
            row = tab.at_start_l
            for i in range(size):
                x = row[i]
                if x <= slack:
                    return i + 1, x
            r = row[:size]
        else:
            tot = tab.total_l
            cur = tab.rows[step]
            for i in range(size):
                x = tot[i] - cur[i]
                if x < 0.0:  # np.maximum(x, 0.0) (NaN stays NaN)
                    x = 0.0
                if x <= slack:
                    return i + 1, x
            r = [tot[i] - cur[i] for i in range(size)]
            r = [x if not x < 0.0 else 0.0 for x in r]
    else:
        tot = tab.total_l
        cur = tab.rows[step]
        nxt = tab.rows[step + 1]
        for i in range(size):
            c = cur[i]
            x = tot[i] - (c + frac * (nxt[i] - c))
            if x < 0.0:
                x = 0.0
            if x <= slack:
                return i + 1, x
        r = []
        for i in range(size):
            c = cur[i]
            x = tot[i] - (c + frac * (nxt[i] - c))
            r.append(x if not x < 0.0 else 0.0)
    if any(x != x for x in r):
        return None
    m = min(r)  # no count meets the QoS: the fastest count (the first of equal minima)
    return r.index(m) + 1, m


class PlanariaPolicy(MachinePolicyBase, Component):
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
        #: Each job's configuration table, by job id (its request's shape looked up once).
        self.tab_of_: dict[int, _Table] = {}

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
        self.targets_ = {}
        self.promised_ = {}
        self.tables_ = {}
        self.size_ = None
        self.allocs_ = {}
        self.tab_of_ = {}

    def _capacity(self, view: MachineView) -> int:
        if self.resource is None:
            return next(iter(view.resources.values())).capacity
        res = view.resources.get(self.resource)
        if res is None:
            raise SimulationError(
                f"policy {self.name!r}: no resource {self.resource!r}; "
                f"resources: {', '.join(view.resources)}"
            )
        return res.capacity

    def _table(self, job: JobView, size: int, profiles: Mapping[str, Any]) -> _Table:
        """The job's configuration table (cached per request shape)."""
        req = job.request
        key = (job.network, req.batch, req.seq_in, req.seq_out, size)
        tab = self.tables_.get(key)
        if tab is None:
            prof = profiles[job.network]
            cum = np.stack(
                [
                    prof.plan(req.batch, req.seq_in, req.seq_out, subarrays=n).cum_s
                    for n in range(1, size + 1)
                ]
            )
            cum_t = np.ascontiguousarray(cum.T)  # row s: the prefix sums at step s, 1..size
            total = cum_t[-1]
            at_start = np.maximum(total - cum_t[0], 0.0)
            tab = self.tables_[key] = _Table(
                cum_t,
                total,
                at_start,
                cum.shape[1] - 1,
                cum_t.tolist(),
                total.tolist(),
                at_start.tolist(),
            )
        return tab

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

    def _targets(self, jobs: Sequence[JobView], view: MachineView, size: int) -> dict[int, int]:
        """Algorithm 1 on every unfinished job at once (:func:`schedule_counts`): the same
        counts as :func:`schedule_tasks_spatially` over :meth:`tasks`."""
        n = len(jobs)
        if n <= 1:  # schedule_counts' lone task: the whole array, no table needed
            return {j.id: size for j in jobs}
        now = view.now
        profiles = view.profiles
        if n < SMALL_QUEUE:  # Python floats: the same counts without NumPy's per-call cost
            p_l: list[float] = []
            s_l: list[float] = []
            e_l: list[int] = []
            a_l: list[float] = []
            tab_of = self.tab_of_
            for job in jobs:
                tab = tab_of.get(job.id)
                if tab is None:
                    tab = tab_of[job.id] = self._table(job, size, profiles)
                slo = job.request.slo_s
                sl = math.inf if slo is None else slo - (now - job.arrival_s)
                step, frac = job.position
                got = _estimate(tab, step, frac, sl, size)
                if got is None:
                    break
                e_l.append(got[0])
                a_l.append(got[1])
                p_l.append(float(job.priority))
                s_l.append(sl)
            else:
                counts_l = _counts_from_estimates(p_l, s_l, e_l, a_l, size)
                return {job.id: c for job, c in zip(jobs, counts_l, strict=True)}
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

    def select(self, view: MachineView) -> Schedule:
        """Re-run Algorithm 1 on a dispatch or a completion, then move every job towards its
        count (see the class docstring); on other wakes, continue moving."""
        size = self.size_
        if size is None:
            size = self.size_ = self._capacity(view)
        jobs = [*view.running, *view.preempting, *view.ready]
        reason = view.reason
        promised_all = self.promised_
        if reason == "arrival" or reason == "completion":
            self.targets_ = self._targets(jobs, view, size)
            if reason == "completion" and promised_all:
                # forget finished jobs (ids are never reused: only live ids are looked up)
                promised_all = self.promised_ = {
                    j.id: promised_all[j.id] for j in jobs if j.id in promised_all
                }
        targets = self.targets_
        running, preempting, waiting = JobState.RUNNING, JobState.PREEMPTING, JobState.WAITING
        # One pass: each job's units held (a job holds its units until it stops), promised and
        # wanted; only jobs whose count changes are touched.
        changes: list[tuple[JobView, int, int, int]] = []
        for job in jobs:
            st = job.state
            held = 0
            if st is running or st is preempting:
                alloc = job.allocation
                if alloc is not None:
                    held = int(alloc.units or 0)
            promised = promised_all.get(job.id, held)
            want = targets.get(job.id, 0)
            if want != promised:
                changes.append((job, held, promised, want))
        if not changes:
            return NOTHING
        # Units the engine counts as held or promised (its capacity check): a move adds only
        # the growth beyond what it holds.
        need = 0
        for job in jobs:
            st = job.state
            if st is not waiting:
                held = 0
                if st is running or st is preempting:
                    alloc = job.allocation
                    if alloc is not None:
                        held = int(alloc.units or 0)
                p = promised_all.get(job.id, held)
                need += p if p > held else held
        allocs = self.allocs_
        assign: dict[JobView, Allocation] = {}
        preempt: list[JobView] = []
        grow: list[tuple[JobView, int, int, int]] = []
        for job, held, promised, want in changes:  # shrinks and preemptions first
            if want == 0:
                if job.state is running:
                    preempt.append(job)
                    promised_all[job.id] = 0
                elif job.state is JobState.STARTING:
                    preempt.append(job)  # the engine returns it to the queue
                    need -= promised
                    promised_all[job.id] = 0
                continue
            before = held if held > promised else promised
            if want < before and job.state is not waiting:
                assign[job] = allocs.get(want) or allocs.setdefault(
                    want, Allocation(self.resource, want)
                )
                need -= before - (held if held > want else want)
                promised_all[job.id] = want
            else:
                grow.append((job, want, held, before))
        for job, want, held, before in grow:  # then growths and starts, in queue order
            extra = (held if held > want else want) - before
            if need + extra > size:
                continue  # retried when units are released (the next wake)
            assign[job] = allocs.get(want) or allocs.setdefault(
                want, Allocation(self.resource, want)
            )
            need += extra
            promised_all[job.id] = want
        if not assign and not preempt:
            return NOTHING
        return fast_schedule(assign=assign, preempt=preempt, mechanism=Mechanism.CHECKPOINT)

    @staticmethod
    def _held(job: JobView) -> int:
        """Units the job holds now (0 while waiting or starting)."""
        if job.state in (JobState.RUNNING, JobState.PREEMPTING) and job.allocation is not None:
            return int(job.allocation.units or 0)
        return 0
