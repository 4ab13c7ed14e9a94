"""The compiled core of Planaria's spatial scheduler (:mod:`npusched.policies.spatial.planaria`).

:class:`PlanariaCore` holds the policy's per-run state and its decision (``select``: Algorithm 1
on a dispatch or a completion, then the moves towards the counts), and the module the
small-queue Algorithm 1 on Python floats (:func:`_estimate`, :func:`_counts_from_estimates`,
:func:`_unfit_counts`) and the configuration tables (:class:`_Table`): the general loop calls
``select`` at every wake, so this module is listed in ``npusched.native.COMPILED_MODULES`` and
runs as mypyc native code where the package is built compiled. The public class
(``PlanariaPolicy``) stays in the interpreted ``planaria.py`` and subclasses the core: its
``__init__`` keeps a Python signature, which ``Component`` (parameters, ``clone``) and the config
checks read with ``inspect.signature`` (a native class's ``__init__`` has none). The NumPy
Algorithm 1 for longer queues (``schedule_counts``) and the pseudo-code's functions stay in
``planaria.py``; the core calls the public class's ``_targets_arrays`` for those queues.

The constructor's ``resource`` is declared ``Any``: a native attribute annotated ``str | None``
would refuse a bad value with a ``TypeError`` before ``validate`` names it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, Final

import numpy as np
import numpy.typing as npt
from mypy_extensions import mypyc_attr

from npusched.errors import SimulationError
from npusched.policies.contract import (
    NOTHING,
    Allocation,
    JobCore,
    JobState,
    JobView,
    MachineView,
    Mechanism,
    Schedule,
    keeps_method,
    made_schedule,
)
from npusched.policies.machine_core import NO_MERGE, NO_RATES, NO_TIMERS, NO_UNTIL, refill_schedule

FloatArray = npt.NDArray[np.float64]

#: Floor on a remaining time in a score's denominator, seconds.
_MIN_REMAINING_S: Final = 1e-9

# ``Final``: compiled, C statics (a module-dictionary look-up per read otherwise)
_RUNNING: Final = JobState.RUNNING
_PREEMPTING: Final = JobState.PREEMPTING
_WAITING: Final = JobState.WAITING
_STARTING: Final = JobState.STARTING
_CHECKPOINT: Final = Mechanism.CHECKPOINT
_NOTHING: Final = NOTHING
#: ``NOTHING``'s ``preempt`` (``machine_core.NO_PREEMPT``): a decision that preempts nothing.
_NO_PREEMPT: Final = NOTHING.preempt
#: A missing attribute (``getattr``'s default where ``None`` is a value).
_NO_FIELD: Final = object()


def _unfit_counts(prio: list[float], slack: list[float], est: list[int], size: int) -> list[int]:
    """ALLOCATEUNFITTASKS (lines 36-49) on plain lists, as :func:`allocate_unfit_tasks`:
    the tasks in descending ``priority / (slack x estimate)`` order (past their deadline
    last) get their estimates until the array is full."""
    n = len(prio)
    if len(slack) != n or len(est) != n:
        raise ValueError(
            f"_unfit_counts: {n} priorities, {len(slack)} slacks, {len(est)} estimates"
        )
    # index loops, no zip(strict=True): compiled, a keyword call of zip is a generic call
    keyed: list[tuple[int, float, int]] = []
    for pos in range(n):
        p = prio[pos]
        sl = slack[pos]
        e = est[pos]
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


def _round9(y: float) -> float:
    """``round(y) / 1e9`` (``np.round(x, 9)`` for ``y = x * 1e9``: the nearest integer, ties to
    even, over 1e9) without the builtin's generic call compiled: ``y - floor(y)`` is exact for
    the values here (below 2**52), so the comparison with 0.5 is. A NaN or an infinity raises
    as ``round`` does (``math.floor``'s ``ValueError`` / ``OverflowError``)."""
    f = float(math.floor(y))
    d = y - f
    if d > 0.5 or (d == 0.5 and f % 2.0 == 1.0):
        f += 1.0
    return f / 1e9


#: Below this many tasks :func:`schedule_counts_small` runs Algorithm 1 on Python floats
#: (NumPy's per-call cost dominates small arrays; its sums of fewer than 8 values are the
#: sequential sums Python makes, so the bits agree).
SMALL_QUEUE: Final = 8


def _counts_from_estimates(
    priority: list[float], slack_s: list[float], est: list[int], at_est: list[float], size: int
) -> list[int]:
    """Lines 6-11 of Algorithm 1 on Python floats for fewer than :data:`SMALL_QUEUE` tasks,
    given each task's estimate ``est`` (ESTIMATERESOURCES) and its predicted remaining seconds
    on it ``at_est``: :func:`schedule_counts_small`'s counts from there on."""
    n = len(priority)
    if len(at_est) != n or len(est) != n:
        raise ValueError(f"{n} priorities, {len(est)} estimates, {len(at_est)} remaining times")
    # index loops, not ``sum``: compiled, a builtin's call is generic (the same sums: a
    # sequential one from 0, as Python's ``sum`` of these few values and NumPy's make)
    total_est = 0
    for e in est:
        total_est += e
    if total_est > size:
        return _unfit_counts(priority, slack_s, est, size)
    remaining_array = size - total_est
    if n == 2:  # the common pair on scalars (no lists of boxed floats), the same operations
        a0 = at_est[0]
        a1 = at_est[1]
        s0 = priority[0] / (a0 if a0 >= _MIN_REMAINING_S else _MIN_REMAINING_S)
        s1 = priority[1] / (a1 if a1 >= _MIN_REMAINING_S else _MIN_REMAINING_S)
        tot = 0.0
        tot += s0
        tot += s1
        h0 = s0 / tot * remaining_array
        h1 = s1 / tot * remaining_array
        b0 = math.floor(h0 + 1e-12)
        b1 = math.floor(h1 + 1e-12)
        left2 = remaining_array - b0 - b1
        if left2 <= 0:
            return [est[0] + b0, est[1] + b1]
        if left2 == 1:  # the one leftover to the first in key order
            # the key tuples ``(-rem, -score, i)`` compared as tuples are: the first entries
            # that differ (``!=``) decide by ``<``, and equal keys keep queue order
            r0 = -_round9((h0 - b0) * 1e9)
            r1 = -_round9((h1 - b1) * 1e9)
            if r1 != r0:
                second_first = r1 < r0
            else:
                q0 = -s0
                q1 = -s1
                second_first = q1 < q0 if q1 != q0 else False
            if second_first:
                return [est[0] + b0, est[1] + b1 + 1]
            return [est[0] + b0 + 1, est[1] + b1]
        # two or more left over (rounding): the general path below
    # plain loops: on Python 3.11 a comprehension's or a key function's frame costs more than
    # these few items; index loops and ``math.floor`` itself (not a local alias): compiled,
    # those are C operations, where ``zip(strict=True)`` and an alias are generic calls
    scores: list[float] = []
    for i in range(n):
        a = at_est[i]
        scores.append(priority[i] / (a if a >= _MIN_REMAINING_S else _MIN_REMAINING_S))
    total = 0.0
    for sc in scores:
        total += sc
    shares: list[float] = []
    base: list[int] = []
    for sc in scores:
        sh = sc / total * remaining_array
        shares.append(sh)
        base.append(math.floor(sh + 1e-12))
    left = remaining_array
    for b in base:
        left -= b
    if left > 0:
        # the leftover units one each to the first ``left`` tasks in the order of the keys
        # ``(-rem, -score, i)`` (a sorted list of those tuples before; twenty-third round),
        # chosen by repeated scans for the least key not yet given one, its entries compared
        # as the tuples compare them: the first that differ (``!=``) decide by ``<``. Every key
        # is a pair of finite floats (``math.floor`` above raises on a nan or an infinite
        # share, and a finite share makes a finite score) and a distinct ``i``, so the order
        # is total and the scans pick the sorted list's first ``left`` (all ``n`` where
        # ``left >= n``, as the slice did).
        rk: list[float] = []
        for i in range(n):
            rk.append(-_round9((shares[i] - base[i]) * 1e9))
        given = [False] * n
        picks = left if left < n else n
        for _ in range(picks):
            best = -1
            for i in range(n):
                if given[i]:
                    continue
                if best < 0:
                    best = i
                    continue
                ri = rk[i]
                rb = rk[best]
                if ri != rb:
                    if ri < rb:
                        best = i
                    continue
                qi = -scores[i]
                qb = -scores[best]
                if qi != qb and qi < qb:
                    best = i
                # equal entries: the lower ``i`` (``best``) first
            given[best] = True
            base[best] += 1
    out: list[int] = []
    for i in range(n):
        out.append(est[i] + base[i])
    return out


class _Table:
    """One request shape's configuration table: ``cum_t[s]`` the prefix sums (seconds) at step
    ``s`` on 1..size subarrays, ``total`` the last row, ``at_start`` the remaining time at
    ``(0, 0.0)``, ``steps`` the plan's steps; ``zeros`` a finished job's remaining time.
    ``rows``, ``total_l`` and ``at_start_l`` are ``cum_t``, ``total`` and ``at_start`` as Python
    floats (the small-queue path reads single entries: no NumPy call per job). A plain class
    with typed attributes (a native class compiled): :func:`_estimate` reads it per job."""

    cum_t: FloatArray
    total: FloatArray
    at_start: FloatArray
    steps: int
    rows: list[list[float]]
    total_l: list[float]
    at_start_l: list[float]

    def __init__(
        self,
        cum_t: FloatArray,
        total: FloatArray,
        at_start: FloatArray,
        steps: int,
        rows: list[list[float]],
        total_l: list[float],
        at_start_l: list[float],
    ) -> None:
        self.cum_t = cum_t
        self.total = total
        self.at_start = at_start
        self.steps = steps
        self.rows = rows
        self.total_l = total_l
        self.at_start_l = at_start_l

    @property
    def zeros(self) -> FloatArray:
        return np.zeros(len(self.total))


def _estimate(tab: _Table, step: int, frac: float, slack: float, size: int) -> tuple[int, float]:
    """ESTIMATERESOURCES (lines 13-22) of a task at ``(step, frac)`` of ``tab`` with ``slack``
    seconds: ``(estimate, predicted remaining seconds on it)``, computing PREDICTTIME only for
    the counts it scans (each entry with ``PlanariaPolicy._remaining``'s float operations, so
    the same bits); ``(0, 0.0)`` (no count: an estimate is at least 1) where it would take the
    fastest count of a row holding a NaN (NumPy's ``argmin`` and Python's ``min`` differ
    there). Never ``None`` (twenty-third round): compiled, a ``tuple[int, float]`` is returned
    as a C struct, where an optional one was a tuple object and a boxed float per task."""
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
        return 0, 0.0
    m = min(r)  # no count meets the QoS: the fastest count (the first of equal minima)
    return r.index(m) + 1, m



#: :class:`_JobRec` kinds: no QoS bound (unbounded slack), a bound and an arrival time that
#: are both ``float`` (the slack in C doubles compiled), anything else (read from the job).
_NO_SLO: Final = 0
_FLOAT_SLO: Final = 1
_OTHER_SLO: Final = 2


class _JobRec:
    """What Algorithm 1 reads of a job that stays fixed while it lives: its configuration
    table, its priority as a float, and its slack's terms (``slack = slo - (now -
    arrival)``). A job's request, priority and arrival time never change in a run (the
    engine sets them when it makes the job), so each is read once per job, not per decision
    (each a generic attribute read compiled: the job is seen through the ``JobView``
    protocol)."""

    tab: _Table
    priority: float
    kind: int
    slo: float
    arrival: float
    #: :func:`core_rows`' last row for this job and the position it was made at (step -1:
    #: none): a job that waits keeps its position, so its row is made once per stay.
    row_step: int
    row_frac: float
    row: list[float]

    def __init__(self, tab: _Table, priority: float, kind: int, slo: float, arrival: float) -> None:
        self.tab = tab
        self.priority = priority
        self.kind = kind
        self.slo = slo
        self.arrival = arrival
        self.row_step = -1
        self.row_frac = 0.0
        self.row = []


def _job_rec(core: PlanariaCore, job: JobView, size: int, profiles: Mapping[str, Any]) -> _JobRec:
    """The job's :class:`_JobRec` (its table through ``core.tab_of_``, as before)."""
    jid = job.id
    tab = core.tab_of_.get(jid)
    if tab is None:
        tab = core.tab_of_[jid] = shape_table(core, job, size, profiles)
    # the engine's job: its SLO, arrival and priority read natively where compiled (the
    # same values ``job_slo`` and the protocol read; twenty-first round)
    jc: JobCore | None = job if isinstance(job, JobCore) else None
    slo: Any
    arrival: Any
    prio: float
    if jc is not None:
        slo = jc.slo_s
        arrival = jc.arrival_s
        prio = float(jc.priority)
    else:
        slo = job_slo(job)
        arrival = job.arrival_s
        prio = float(job.priority)
    if slo is None:
        return _JobRec(tab, prio, _NO_SLO, 0.0, 0.0)
    if type(slo) is float and type(arrival) is float:
        return _JobRec(tab, prio, _FLOAT_SLO, slo, arrival)
    return _JobRec(tab, prio, _OTHER_SLO, 0.0, 0.0)


@mypyc_attr(allow_interpreted_subclasses=True)
class PlanariaCore:
    """Planaria's per-run state and decision (the rule: ``planaria.PlanariaPolicy``)."""

    resource: Any
    targets_: dict[int, int]
    promised_: dict[int, int]
    #: Per request shape: the prefix sums of its plan on 1..size subarrays, one row per step
    #: (the configuration tables PREDICTTIME reads).
    tables_: dict[tuple[Any, ...], _Table]
    size_: int | None
    #: Allocations by unit count (immutable, shared by every decision of a run).
    allocs_: dict[int, Allocation]
    #: ``allocs_`` as a list by unit count (``None`` where no allocation of that count was
    #: made yet; twenty-first round).
    alloc_l_: list[Allocation | None]
    #: Each job's configuration table, by job id (its request's shape looked up once).
    tab_of_: dict[int, _Table]
    #: Each job's table, priority and deadline terms, by job id (read once per job).
    rec_of_: dict[int, _JobRec]
    #: The last decision moved every job whose count changed to its count (nothing deferred
    #: for want of units, no change it could not act on): until the next dispatch or
    #: completion, every decision is empty (:meth:`quiet_wake`).
    settled_: bool
    #: The policy decides with the core's ``select`` (:func:`keeps_method`: a subclass's own,
    #: or one set on the instance, is never quiet).
    own_select_: bool
    #: The class keeps the core's ``_targets``: ``select`` calls :func:`core_targets`
    #: directly (compiled, a native call; ``self._targets`` on the interpreted public class
    #: is a Python-level call through the method's glue).
    own_targets_: bool

    def reset_core(self) -> None:
        """Forget the targets, promises and tables of the previous run."""
        self.targets_ = {}
        self.promised_ = {}
        self.tables_ = {}
        self.size_ = None
        self.allocs_ = {}
        self.alloc_l_ = []
        self.tab_of_ = {}
        self.rec_of_ = {}
        self.settled_ = False
        self.own_select_ = keeps_method(self, "select", _CORE_SELECT)
        self.own_targets_ = type(self)._targets is _CORE_TARGETS

    def _capacity(self, view: MachineView) -> int:
        if self.resource is None:
            return int(next(iter(view.resources.values())).capacity)
        res = view.resources.get(self.resource)
        if res is None:
            raise SimulationError(
                f"policy {getattr(self, 'name', '')!r}: no resource {self.resource!r}; "
                f"resources: {', '.join(view.resources)}"
            )
        return int(res.capacity)

    def _table(self, job: JobView, size: int, profiles: Mapping[str, Any]) -> _Table:
        """:func:`shape_table`."""
        return shape_table(self, job, size, profiles)

    def _targets_arrays(
        self, jobs: Sequence[JobView], view: MachineView, size: int
    ) -> dict[int, int]:
        """Algorithm 1 with NumPy (:func:`schedule_counts`), the public class's."""
        raise NotImplementedError

    def _targets(self, jobs: Sequence[JobView], view: MachineView, size: int) -> dict[int, int]:
        """Algorithm 1 on every unfinished job at once (:func:`core_targets`)."""
        return core_targets(self, jobs, view, size)

    def quiet_wake(self, reason: str) -> bool:
        """Whether ``select`` at a wake for ``reason`` returns ``NOTHING`` (the engine then
        does not build the view or call it: ``policies.contract.quiet_wake_rule``).

        Only a dispatch or a completion re-runs Algorithm 1; every other wake continues the
        last decision's moves, and ``select`` changes a job only where its target differs from
        its promised count (a job never promised one: the units it holds). After a decision
        that promised every changed job its target (:attr:`settled_`), each job it saw has
        its target promised or holds it (a job that holds units was promised them: the engine
        starts and moves jobs only as assigned), and a job dispatched since (a wake's reason
        names one cause: a dispatch woken with a save's end is ``"preempted"``) waits with
        target 0 and holds none: no change, so the decision is ``NOTHING`` and changes no
        state. A subclass that decides its own way (``select`` overridden) is never quiet."""
        return (
            self.settled_
            and self.own_select_
            and reason != "arrival"
            and reason != "completion"
        )

    def empty_wake(self, reason: str) -> bool:
        """``select``'s decision at a wake for ``reason`` on a view with no job (the engine
        calls it only there, ``policies.contract.empty_wake_rule``), made without the view:
        ``True`` where made. ``select`` on such a view returns ``NOTHING`` (no job: no change)
        and leaves: on a dispatch or a completion, the targets of no job (``{}``: the core's
        Algorithm 1 of an empty queue) and, at a completion, no promise kept (every job that
        was promised one has finished); then ``settled_`` (no change); this sets the same.
        Not made (``False``: ``select`` runs) before the first decision (``select`` reads the
        array's size from the view, and checks the resource there), or where the class
        decides or computes its targets its own way."""
        if not self.own_select_ or self.size_ is None:
            return False
        if reason == "arrival" or reason == "completion":
            if not self.own_targets_:
                return False
            self.targets_ = {}
            if reason == "completion" and self.promised_:
                self.promised_ = {}
        self.settled_ = True
        return True

    def lone_wake(self, reason: str, job: JobView) -> Schedule | Allocation | None:
        """``select``'s decision at a wake for ``reason`` on a view whose one job is ``job``
        (the engine calls it only there, ``policies.contract.lone_wake_rule``), made without
        the view, where the job waits or runs; ``None`` where not made (as
        :meth:`empty_wake`: before the first decision, where the class decides or computes
        its targets its own way; and for a job being stopped).

        ``select`` on such a view, step by step: on a dispatch or a completion Algorithm 1 of
        the lone task (:func:`core_targets`: the whole array, ``{id: size}``) and, at a
        completion, the promises kept of the jobs in the view (this job's, if it has one);
        then its pass over the one job: the units it holds (none while it waits), its count
        (its promise, else what it holds), the units needed (the larger of the two where it
        does not wait, else none), its target, and a change where the target differs from
        the count. Then the change: to 0, a running job is preempted (its promise 0), a
        waiting one is deferred (not settled); a running job's shrink is assigned; any other
        (a growth, or a waiting job's start) is assigned where it fits the array, else
        deferred. This makes the same steps on the same state and returns the same decision:
        ``NOTHING`` where nothing is assigned or preempted, the allocation where the schedule
        would only assign the job to it (the contract's short form: no schedule is filled),
        else the schedule (``refill_schedule`` with the same fields)."""
        size_o = self.size_
        if not self.own_select_ or not self.own_targets_ or size_o is None:
            return None
        size: int = size_o
        jc: JobCore | None = job if isinstance(job, JobCore) else None
        st = jc.state if jc is not None else job.state
        waiting = st is _WAITING
        if not waiting and st is not _RUNNING:
            return None
        jid: Any = _native_id(jc) if jc is not None else job.id
        promised_all = self.promised_
        if reason == "arrival" or reason == "completion":
            self.targets_ = {jid: size}
            if reason == "completion" and promised_all:
                kept: dict[int, int] = {}
                got = promised_all.get(jid)
                if got is not None:
                    kept[jid] = got
                promised_all = self.promised_ = kept
        held = 0 if waiting else _held_of(self, job, jc)
        promised = promised_all.get(jid, held)
        before = held if held > promised else promised
        need = 0 if waiting else before
        want = self.targets_.get(jid, 0)
        if want == promised:
            self.settled_ = True
            return _NOTHING
        if want == 0:
            if waiting:
                self.settled_ = False  # (waiting with a count promised)
                return _NOTHING
            promised_all[jid] = 0
            self.settled_ = True
            return refill_schedule(
                made_schedule(), {}, [job], _CHECKPOINT, NO_UNTIL, NO_MERGE, NO_TIMERS, NO_RATES
            )
        if not (want < before and not waiting):  # a growth or a start: where it fits
            extra = (held if held > want else want) - before
            if need + extra > size:
                self.settled_ = False
                return _NOTHING
        promised_all[jid] = want
        self.settled_ = True
        return _alloc_of(self, want)  # ``Schedule(assign={job: it})``

    def select(self, view: MachineView) -> Schedule:
        """Re-run Algorithm 1 on a dispatch or a completion, then move every job towards its
        count (see the public class's docstring); on other wakes, continue moving."""
        size = self.size_
        if size is None:
            size = self.size_ = self._capacity(view)
        # the engine's view: its fields as the engine's native record holds them (typed
        # where compiled); any other view through its attributes
        m = made_schedule()
        vf = m.view_fields
        # The queue's three parts (running, preempting, ready), iterated in turn: the one list
        # of every job is made only for Algorithm 1 (twenty-first round); another view's
        # parts as lists (iterated natively where compiled)
        part0: list[Any]
        part1: list[Any]
        part2: list[Any]
        if vf is not None and vf.view is view:
            part0 = vf.running
            part1 = vf.preempting
            part2 = vf.ready
            reason = vf.reason
        else:
            part0 = list(view.running)
            part1 = list(view.preempting)
            part2 = list(view.ready)
            reason = view.reason
        promised_all = self.promised_
        if reason == "arrival" or reason == "completion":
            # the one list of every job: one part as it is where the others are empty (the
            # core's Algorithm 1 only reads it; twenty-second round)
            jobs: list[Any]
            if self.own_targets_ and not part1 and (not part0 or not part2):
                jobs = part0 if part0 else part2
            else:
                jobs = [*part0, *part1, *part2]
            if not self.own_targets_:
                self.targets_ = self._targets(jobs, view, size)
            elif vf is not None and vf.view is view:
                # the view's ``now`` and ``profiles`` natively (twenty-second round)
                self.targets_ = _core_targets(self, jobs, view, size, vf.now, vf.profiles)
            else:
                self.targets_ = core_targets(self, jobs, view, size)
            if reason == "completion" and promised_all:
                # forget finished jobs (ids are never reused: only live ids are looked up);
                # the engine's jobs' ids read natively, each boxed once
                kept: dict[int, int] = {}
                for j in jobs:
                    kid: Any = j.id if not isinstance(j, JobCore) else _native_id(j)
                    got = promised_all.get(kid)
                    if got is not None:
                        kept[kid] = got
                promised_all = self.promised_ = kept
        targets = self.targets_
        running, preempting, waiting = _RUNNING, _PREEMPTING, _WAITING
        # One pass: each job's units held (a job holds its units until it stops), promised and
        # wanted; only jobs whose count changes are touched.
        # The same pass sums the units the engine counts as held or promised (its capacity
        # check; a move adds only the growth beyond what it holds): every job not waiting, its
        # larger of the two (read once per job, where a second pass read every job again).
        # The engine's jobs (``JobCore``) are read natively where compiled: their state, id
        # and allocation, and the units held where the allocation is this run's allocation of
        # ``units`` units (``allocs_``' entry: its ``units`` is that number); any other job
        # object through the ``JobView`` protocol.
        # A job's id is boxed once (``Any``: compiled, an ``int`` local is unboxed and boxed
        # anew, a fresh object past 256, at each dictionary look-up), and each change keeps
        # it and the job's state, read once here (the protocol's generic reads otherwise).
        # this run's allocations by unit count as a list (a native list read, where
        # ``allocs_.get`` boxes the count and hashes it; twenty-first round)
        alloc_l = self.alloc_l_
        n_alloc = len(alloc_l)
        changes: list[tuple[JobView, Any, Any, int, int, int]] = []
        need = 0
        jid: Any
        for k in range(3):
            part = part0 if k == 0 else part1 if k == 1 else part2
            for job in part:
                jc: JobCore | None = job if isinstance(job, JobCore) else None  # (as in _targets)
                if jc is not None:
                    st = jc.state
                    jid = jc.id
                else:
                    st = job.state
                    jid = job.id
                held = 0
                if st is running or st is preempting:
                    if jc is not None:
                        alloc = jc.allocation
                        ju = jc.units
                        if alloc is not None and 0 <= ju < n_alloc and alloc_l[ju] is alloc:
                            held = ju
                        else:
                            held = _held_of(self, job, jc)
                    else:
                        held = _held_of(self, job, jc)
                promised = promised_all.get(jid, held)
                if st is not waiting:
                    need += promised if promised > held else held
                want = targets.get(jid, 0)
                if want != promised:
                    changes.append((job, jid, st, held, promised, want))
        if not changes:
            self.settled_ = True
            return _NOTHING
        settled = True  # every change is promised its target below
        assign: dict[JobView, Allocation] = {}
        # made at the first preemption: none is the contract's ``()`` (``NOTHING``'s)
        preempt: list[JobView] | None = None
        grow: list[tuple[JobView, Any, int, int, int]] = []
        for job, jid, st, held, promised, want in changes:  # shrinks and preemptions first
            if want == 0:
                if st is running:
                    if preempt is None:
                        preempt = []
                    preempt.append(job)
                    promised_all[jid] = 0
                elif st is _STARTING:
                    if preempt is None:
                        preempt = []
                    preempt.append(job)  # the engine returns it to the queue
                    need -= promised
                    promised_all[jid] = 0
                else:
                    settled = False  # (re-allocating, or waiting with a count promised)
                continue
            before = held if held > promised else promised
            if want < before and st is not waiting:
                assign[job] = _alloc_of(self, want)
                need -= before - (held if held > want else want)
                promised_all[jid] = want
            else:
                grow.append((job, jid, want, held, before))
        for job, jid, want, held, before in grow:  # then growths and starts, in queue order
            extra = (held if held > want else want) - before
            if need + extra > size:
                settled = False
                continue  # retried when units are released (the next wake)
            assign[job] = _alloc_of(self, want)
            need += extra
            promised_all[jid] = want
        self.settled_ = settled
        if preempt is None:
            if not assign:
                return _NOTHING
            return refill_schedule(
                m, assign, _NO_PREEMPT, _CHECKPOINT, NO_UNTIL, NO_MERGE, NO_TIMERS, NO_RATES
            )
        return refill_schedule(
            m, assign, preempt, _CHECKPOINT, NO_UNTIL, NO_MERGE, NO_TIMERS, NO_RATES
        )


def _alloc_of(core: PlanariaCore, units: int) -> Allocation:
    """``core``'s allocation of ``units`` units this run (made once, shared by every
    decision): ``allocs_`` by count and ``alloc_l_`` (the same objects, by index) kept
    together. A module function, not a method (twenty-second round): compiled, a method on a
    class that allows interpreted subclasses is looked up and called generically."""
    alloc_l = core.alloc_l_
    if 0 <= units < len(alloc_l):
        got = alloc_l[units]
        if got is not None:
            return got
    made = core.allocs_.get(units)
    if made is None:
        made = core.allocs_[units] = Allocation(core.resource, units)
    if units >= 0:
        while len(alloc_l) <= units:
            alloc_l.append(None)
        alloc_l[units] = made
    return made


def _held_of(core: PlanariaCore, job: JobView, jc: JobCore | None) -> int:
    """The units a running or stopping ``job`` holds, as ``select``'s pass reads them: where
    ``jc`` (the job as the engine's) holds this run's allocation of ``units`` units (its
    entry in ``alloc_l_``), that number; else its allocation's ``units`` (0 for none)."""
    if jc is not None:
        alloc = jc.allocation
        ju = jc.units
        alloc_l = core.alloc_l_
        if alloc is not None and 0 <= ju < len(alloc_l) and alloc_l[ju] is alloc:
            return ju
    else:
        alloc = job.allocation
    if alloc is None:
        return 0
    u = alloc.units
    if type(u) is int:  # int(u or 0) without the generic int() call
        return u
    if u:
        return int(u)
    return 0


def _native_id(job: JobCore) -> Any:
    """The engine's job's id, read natively (compiled) and boxed once."""
    return job.id


#: The core's own decision (a subclass that overrides it is never quiet).
_CORE_SELECT: Final = PlanariaCore.select
#: The core's own Algorithm 1 (``select`` calls :func:`core_targets` directly where a class
#: keeps it).
_CORE_TARGETS: Final = PlanariaCore._targets


def core_targets(
    core: PlanariaCore, jobs: Sequence[JobView], view: MachineView, size: int
) -> dict[int, int]:
    """Algorithm 1 on every unfinished job at once (:func:`schedule_counts`): the same
    counts as :func:`schedule_tasks_spatially` over :meth:`tasks` (``PlanariaCore._targets``;
    a module function, so the core's ``select`` calls it natively)."""
    if len(jobs) <= 1:  # schedule_counts' lone task: the whole array, no table needed
        return {j.id: size for j in jobs}
    return _core_targets(core, jobs, view, size, view.now, view.profiles)


def _core_targets(
    core: PlanariaCore,
    jobs: Sequence[JobView],
    view: MachineView,
    size: int,
    now: Any,
    profiles: Any,
) -> dict[int, int]:
    """:func:`core_targets` given the view's ``now`` and ``profiles`` (``select`` reads them
    natively from the engine's record where the view is the engine's: a generic attribute
    read each on the view otherwise; twenty-second round)."""
    n = len(jobs)
    if n <= 1:  # schedule_counts' lone task: the whole array, no table needed
        out1: dict[int, int] = {}
        for j in jobs:
            # the engine's job's id read natively (the protocol's generic read otherwise)
            out1[j.id if not isinstance(j, JobCore) else _native_id(j)] = size
        return out1
    if n < SMALL_QUEUE:  # Python floats: the same counts without NumPy's per-call cost
        now_f = 0.0
        now_float = type(now) is float
        if now_float:
            now_f = now
        p_l: list[float] = []
        s_l: list[float] = []
        e_l: list[int] = []
        a_l: list[float] = []
        ids: list[Any] = []
        rec_of = core.rec_of_
        complete = True
        jid: Any  # boxed once per job (its id's look-up and the counts' key)
        for job in jobs:
            # the engine's job: its id and position read natively where compiled (the
            # ``JobView`` protocol's generic reads for any other job object); declared,
            # since a job narrowed by ``isinstance`` is an intersection with the protocol,
            # which mypyc reads generically
            jc: JobCore | None = job if isinstance(job, JobCore) else None
            jid = jc.id if jc is not None else job.id
            ids.append(jid)
            rec = rec_of.get(jid)
            if rec is None:
                rec = rec_of[jid] = _job_rec(core, job, size, profiles)
            tab = rec.tab
            sl = _slack(rec, job, now, now_f, now_float)
            step, frac = jc.position if jc is not None else job.position
            est_n, at_n = _estimate(tab, step, frac, sl, size)
            if est_n == 0:  # a row holding a NaN: the NumPy Algorithm 1 decides
                complete = False
                break
            e_l.append(est_n)
            a_l.append(at_n)
            p_l.append(rec.priority)
            s_l.append(sl)
        if complete:
            counts_l = _counts_from_estimates(p_l, s_l, e_l, a_l, size)
            out: dict[int, int] = {}
            for i in range(n):  # one count per job (the lists are built in step)
                out[ids[i]] = counts_l[i]
            return out
    return core._targets_arrays(jobs, view, size)


def core_rows(
    core: PlanariaCore,
    jobs: Sequence[JobView],
    size: int,
    profiles: Any,
    now: Any,
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Algorithm 1's inputs for a long queue (the NumPy path, ``schedule_counts``): each job's
    priority, slack (seconds) and PREDICTTIME for every count at its position, one row per job,
    with ``PlanariaPolicy._remaining``'s float operations (the same bits).

    Each job's fixed terms come from its :class:`_JobRec` (made once per job, as the small
    queue's path makes it), and a job at the start of its plan (every job that waits for its
    first start) takes its table's ``at_start`` row as it is, and a job whose position has not
    moved since the last decision (a preempted job waiting) its row of then: a row is made
    only for a job that ran since (at most the array's subarrays of them), entry by entry on
    Python floats (C doubles compiled, where NumPy's calls on 16 entries cost more); NumPy
    stacks the rows once. Before,
    every job of the queue was read through the view's protocol and its row made by NumPy at
    every decision, about 20 us per waiting job interpreted, so a decision's cost grew with the
    queue at 20 us a job (Planaria at four times the bench's rate: 81 us per event)."""
    n = len(jobs)
    rec_of = core.rec_of_
    now_f = 0.0
    now_float = type(now) is float
    if now_float:
        now_f = now
    p_l: list[float] = []
    s_l: list[float] = []
    rows: list[list[float]] = []
    jid: Any
    for job in jobs:
        jc: JobCore | None = job if isinstance(job, JobCore) else None
        jid = jc.id if jc is not None else job.id
        rec = rec_of.get(jid)
        if rec is None:
            rec = rec_of[jid] = _job_rec(core, job, size, profiles)
        tab = rec.tab
        sl = _slack(rec, job, now, now_f, now_float)
        p_l.append(rec.priority)
        s_l.append(sl)
        step, frac = jc.position if jc is not None else job.position
        if step == 0 and frac == 0.0 and step < tab.steps:
            rows.append(tab.at_start_l)
        elif step == rec.row_step and frac == rec.row_frac:  # (the same position: its row)
            rows.append(rec.row)
        else:
            # ``_remaining``'s NumPy operations entry by entry on C doubles (IEEE operations
            # element-wise: the same bits; ``np.maximum(x, 0.0)`` keeps a NaN and a -0.0, as
            # ``x if not x < 0.0 else 0.0`` does), as ``_estimate`` computes them
            r: list[float] = []
            tot = tab.total_l
            w = len(tot)
            if step >= tab.steps:
                r = [0.0] * w
            elif frac == 0.0:  # row + 0.0 * (...) is row exactly
                cur = tab.rows[step]
                for i in range(w):
                    x = tot[i] - cur[i]
                    r.append(x if not x < 0.0 else 0.0)
            else:
                cur = tab.rows[step]
                nxt = tab.rows[step + 1]
                for i in range(w):
                    c = cur[i]
                    x = tot[i] - (c + frac * (nxt[i] - c))
                    r.append(x if not x < 0.0 else 0.0)
            rec.row_step = step
            rec.row_frac = frac
            rec.row = r
            rows.append(r)
    if n == 0:
        return np.empty(0), np.empty(0), np.empty((0, size))
    return (
        np.array(p_l, dtype=np.float64),
        np.array(s_l, dtype=np.float64),
        np.array(rows, dtype=np.float64),
    )


def _slack(rec: _JobRec, job: JobView, now: Any, now_f: float, now_float: bool) -> float:
    """A job's slack at ``now`` (seconds) from its record: ``slo - (now - arrival)``, unbounded
    without a QoS bound; on C doubles compiled where the bound, the arrival and ``now`` are
    ``float``s (``now_f``, ``now_float``: ``now`` unboxed once per decision), else read from
    the job, the same operations."""
    kind = rec.kind
    if kind == _NO_SLO:
        return math.inf
    if kind == _FLOAT_SLO and now_float:
        return rec.slo - (now_f - rec.arrival)
    slo_any: Any = job_slo(job)
    return slo_any - (now - job.arrival_s)


def job_slo(job: JobView) -> Any:
    """``job.request.slo_s``: the engine's job keeps it (``Job.slo_s``), so its request is not
    made for it."""
    got = getattr(job, "slo_s", _NO_FIELD)
    return job.request.slo_s if got is _NO_FIELD else got


def request_shape(job: JobView) -> tuple[Any, Any, Any]:
    """``(batch, seq_in, seq_out)`` of ``job.request``: the engine's job keeps them
    (``Job.request_shape``), so its request is not made for them."""
    got = getattr(job, "request_shape", None)
    if got is None:
        req = job.request
        return (req.batch, req.seq_in, req.seq_out)
    return got


def shape_table(
    core: PlanariaCore, job: JobView, size: int, profiles: Mapping[str, Any]
) -> _Table:
    """The job's configuration table (cached per request shape in ``core.tables_``; a module
    function: compiled, a method called on an interpreted subclass's instance is a Python-level
    call)."""
    batch, seq_in, seq_out = request_shape(job)
    key = (job.network, batch, seq_in, seq_out, size)
    tab = core.tables_.get(key)
    if tab is None:
        prof = profiles[job.network]
        shared_key = (id(prof), batch, seq_in, seq_out, size)
        hit = _SHARED_TABLES.get(shared_key)
        if hit is not None and hit[1] is prof:
            tab = core.tables_[key] = hit[0]
            return tab
        cum = np.stack(
            [
                prof.plan(batch, seq_in, seq_out, subarrays=n).cum_s
                for n in range(1, size + 1)
            ]
        )
        cum_t = np.ascontiguousarray(cum.T)  # row s: the prefix sums at step s, 1..size
        total = cum_t[-1]
        at_start = np.maximum(total - cum_t[0], 0.0)
        tab = core.tables_[key] = _Table(
            cum_t,
            total,
            at_start,
            int(cum.shape[1]) - 1,
            cum_t.tolist(),
            total.tolist(),
            at_start.tolist(),
        )
        if len(_SHARED_TABLES) >= _SHARED_TABLES_MAX:
            _SHARED_TABLES.clear()
        _SHARED_TABLES[shared_key] = (tab, prof)
    return tab


#: Process-wide memo of the configuration tables, shared by every policy instance (a sweep's
#: points or a bench's repeats re-create the policy or reset it, each run rebuilt its tables:
#: about 16 plan look-ups and a ``(steps, size)`` stack per request shape): per (profile, batch,
#: ``seq_in``, ``seq_out``, size) the table. A profile is immutable (a frozen dataclass whose
#: plans are cached per shape), so a memoised table is the one a fresh build returns. The key
#: holds the profile's ``id`` and the entry keeps the profile alive (an id is never reused
#: while its entry exists; the entry is checked by identity). Cleared when it holds
#: :data:`_SHARED_TABLES_MAX` entries (a table holds ``size`` floats per plan step).
_SHARED_TABLES: dict[tuple[Any, ...], tuple[_Table, Any]] = {}
_SHARED_TABLES_MAX: Final = 128
