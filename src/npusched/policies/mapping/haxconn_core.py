"""The compiled core of HaX-CoNN's machine policy (:mod:`npusched.policies.mapping.policy`).

:class:`HaxconnCore` holds the policy's per-wake decision (``select``: the groups that start on
their accelerators, the transition timers and the contention rates) and ``on_complete``: the
general loop calls them at every wake, so this module is listed in
``npusched.native.COMPILED_MODULES`` and runs as mypyc native code where the package is built
compiled. The public class (``HaxconnPolicy``) stays in the interpreted ``policy.py`` and
subclasses the core: its ``__init__`` keeps a Python signature, which ``Component``
(parameters, ``clone``) and the config checks read with ``inspect.signature`` (a native
class's ``__init__`` has none); planning (``_plan``: the solves, the schedules, the per-job
plans) stays there too, once per frame. The rule is documented in ``policy.py``; this module
only holds its code.

The constructor's parameters are declared ``Any`` (the core reads ``swaps`` and
``contention``): a native attribute annotated with their types would refuse a bad value with a
``TypeError`` before ``validate`` names it. A job's plan (:class:`_Plan`) and a frame's
planning (:class:`_Frame`) are native classes of this module; the group profiles stay generic
objects (``GroupProfile`` is an interpreted dataclass).
"""

from __future__ import annotations

from collections import deque
from operator import itemgetter
from typing import Any, Final

from mypy_extensions import mypyc_attr

from npusched.errors import ConfigError
from npusched.hardware.contention import PccsContention
from npusched.hardware.soc import GroupProfile, generate_profile
from npusched.models.zoo import get_network
from npusched.policies.contract import (
    NOTHING,
    Allocation,
    JobCore,
    JobState,
    JobView,
    MachineView,
    MadeSchedule,
    Schedule,
    keeps_method,
    made_schedule,
)
from npusched.policies.machine_core import (
    NO_ASSIGN,
    NO_MECHANISM,
    NO_MERGE,
    NO_PREEMPT,
    NO_RATES,
    NO_TIMERS,
    NO_UNTIL,
    refill_schedule,
)
from npusched.policies.mapping.execute import Schedule as GroupSchedule
from npusched.policies.mapping.execute import Task, Workload
from npusched.policies.mapping.haxconn import haxconn

_first = itemgetter(0)

#: served entries an accelerator's queue keeps at most beyond half its length (``queues_``)
_QUEUE_TRIM: Final = 1024

#: :attr:`_Plan.ready` of a job with no wait pending (no finite time equals it)
_NO_READY: Final = float("-inf")

#: ``NOTHING`` and the job states :meth:`HaxconnCore.lone_wake` compares by identity, as
#: ``Final`` names (compiled, C statics)
_NOTHING: Final = NOTHING
_WAITING: Final = JobState.WAITING
_RUNNING: Final = JobState.RUNNING


class _Plan:
    """One job's plan: its group profile, the accelerator of each group (``row``), the first
    layer of each group, its producers and the per-group demand and wait lists.

    A plain native class (compiled: a constructor in C; a dataclass's ``__init__`` went
    through the type's Python-level init slot, about 2,800 instructions per job). Fields whose
    values may hold NumPy integers (the search's rows) are declared ``Any``: a native attribute
    declared ``int`` refuses ``numpy.int64``. The lists are shared by every plan of the same
    profile and row (``rows_of``, :class:`_Frame`): nothing writes them."""

    profile: GroupProfile
    row: Any
    starts: Any  # first layer of each group
    deps: tuple[int, ...]  # job ids of producers in the same frame
    #: per group: requested memory throughput on its accelerator as a fraction of the SoC's
    #: bandwidth (``mem_bps[g, row[g]] / memory_bandwidth_bps``)
    demand: Any
    #: per group: the transition wait before it (``out_s[g-1, row[g-1]] + in_s[g, row[g]]``,
    #: seconds; 0.0 where the accelerator does not change, and for group 0)
    wait: Any
    #: ``row`` as Python integers (the same values): ``select`` indexes the queues and the free
    #: units with it natively where compiled (a NumPy integer index is a generic call)
    acc: list[int]
    #: the job's id (read once, when the job is planned: ``select`` finds the plan by the job
    #: itself, so it reads no ``job.id``, a generic attribute read compiled)
    jid: int
    #: The group the job last started (-1: none yet). A job stops only at the end of its
    #: group, so a waiting job's group is the next one, a running job's this one. (Kept on the
    #: plan, a native integer, where a dictionary by id cost a look-up and a write per start.)
    grp: int
    #: The decision (``HaxconnCore.dec_``) that last assigned the job: ``select`` skips a job
    #: it started in an earlier pass by this integer, where ``job in assign`` was a hashed
    #: look-up per job and pass (twentieth round).
    dec: int
    #: The time from which the job's next group may start (a transition's wait or a
    #: consumer's hand-over, seconds), set when the wait begins and :data:`_NO_READY` when
    #: none is pending. Kept on the plan, a native float, where a dictionary by
    #: job id cost a boxed id and a hashed look-up per start (twenty-first round).
    ready: float

    def __init__(
        self,
        profile: GroupProfile,
        row: Any,
        starts: Any,
        deps: tuple[int, ...],
        demand: Any,
        wait: Any,
        acc: list[int],
        jid: int,
    ) -> None:
        self.profile = profile
        self.row = row
        self.starts = starts
        self.deps = deps
        self.demand = demand
        self.wait = wait
        self.acc = acc
        self.jid = jid
        self.grp = -1
        self.dec = -1
        self.ready = _NO_READY


class _Frame:
    """What planning a frame makes that does not depend on its jobs' ids: per job of the frame
    (in the frame's order) its profile, row, ``rows_of`` lists and ``acc``, and per
    accelerator its queue as two lists of Python integers, the job's index in the frame
    (``order_n``) and the group (``order_g``).

    Frames repeat their networks, and a solved frame's plan is a function of its networks
    alone (the memoised solve): :meth:`HaxconnCore._plan` keeps one ``_Frame`` per tuple of
    networks (``frames_``) and per frame only makes the jobs' :class:`_Plan` records and queue
    entries from it, with the jobs' ids."""

    profiles: list[GroupProfile]
    rows: list[Any]
    starts: list[Any]
    demand: list[Any]
    wait: list[Any]
    acc: list[list[int]]
    order_n: list[list[int]]
    order_g: list[list[int]]

    def __init__(self, sched: GroupSchedule, core: HaxconnCore, profiles: list[GroupProfile]):
        assert sched.order is not None
        assignment = sched.assignment
        if len(assignment) != len(profiles):  # (``zip(strict=True)``'s check, without its call)
            raise ValueError("haxconn policy: the schedule's rows do not match the frame's jobs")
        self.profiles = profiles
        self.rows = []
        self.starts = []
        self.demand = []
        self.wait = []
        self.acc = []
        for n in range(len(profiles)):
            row = assignment[n]
            starts, demand, wait = rows_of(core, profiles[n], tuple(row))
            self.rows.append(row)
            self.starts.append(starts)
            self.demand.append(demand)
            self.wait.append(wait)
            self.acc.append([int(a) for a in row])
        self.order_n = [[int(n) for n, _ in q] for q in sched.order]
        self.order_g = [[int(g) for _, g in q] for q in sched.order]


#: Process-wide memo of the planning inputs and solves, shared by every policy instance (a
#: sweep's points or a bench's repeats re-create the policy): per (network, SoC, ``n_groups``)
#: the group profile, and per (goal, ``max_transitions``, profiles) the solved schedule. The
#: restricted search is exhaustive (its result does not depend on the machine's speed), so a
#: memoised schedule is the one a fresh solve returns. Keys hold ``id`` of objects the entry
#: keeps alive, so an id is never reused while its entry exists. Cleared when it holds
#: :data:`_SHARED_MAX` entries.
_SHARED: dict[tuple[object, ...], tuple[object, ...]] = {}
_SHARED_MAX = 256


def _shared(key: tuple[object, ...], keep: tuple[object, ...], make: Any) -> Any:
    """``make()`` memoised under ``key`` in :data:`_SHARED` (``keep``: the objects whose ids
    ``key`` holds, kept alive with the value)."""
    hit = _SHARED.get(key)
    if hit is not None:
        return hit[0]
    if len(_SHARED) >= _SHARED_MAX:
        _SHARED.clear()
    value = make()
    _SHARED[key] = (value, keep)
    return value


@mypyc_attr(allow_interpreted_subclasses=True)
class HaxconnCore:
    """HaX-CoNN's per-run state and per-wake decision (the rule: ``policy.HaxconnPolicy``)."""

    n_groups: Any
    goal: Any
    max_transitions: Any
    schedule: Any
    swaps: Any
    contention: Any
    spec_: Any
    acc_index_: dict[str, int]
    allocs_: list[Allocation]
    checked_: bool
    model_: PccsContention
    plans_: dict[int, _Plan]
    #: The same plans by the job object (identity hash): what ``select`` looks its jobs up in.
    #: An entry is added when ``select`` first sees the object and dropped at its completion.
    plan_of_: dict[object, _Plan]
    #: ``spec_.accelerators`` as a list, read once per run (with the resource check)
    accs_: list[str]
    #: ``select``'s free units by accelerator index, valid where ``free_dec_`` holds the
    #: decision's count (:attr:`dec_`): read from the view at the decision's first start on
    #: the accelerator (a stamp per accelerator, where a sentinel was set back per decision)
    free_: list[int]
    free_dec_: list[int]
    #: per accelerator index, its resource's position in the engine's machine order (the
    #: index of ``ViewFields.free``); empty until the run's first view from the engine
    res_pos_: list[int]
    profiles_: dict[str, GroupProfile]
    #: Per accelerator, the groups it serves, in order, from ``qhead_``'s index on: the job's
    #: plan (``queues_``, compared by identity: one plan per job) and the group (``qgroups_``),
    #: two lists in step (read natively where compiled, where a ``deque``'s head and
    #: ``popleft`` were generic calls, and a ``(job id, group)`` tuple per entry was a new
    #: object). A queue served to its end is emptied, and one whose served part passes
    #: :data:`_QUEUE_TRIM` entries and half its length loses that part.
    queues_: list[list[_Plan]]
    qgroups_: list[list[int]]
    qhead_: list[int]
    pending_: deque[Any]
    current_: Any
    timers_sent_: bool
    ended_: dict[int, tuple[float, Any, Any]]  # id -> (end, acc, profile)
    used_fixed_: bool
    # memo: one solve (and one ordering) per distinct workload, i.e. per tuple of networks of a
    # frame (and per swap schedule for D-HaX-CoNN): frames repeat their networks
    memo_: dict[tuple[object, ...], GroupSchedule]
    solves_: int
    #: per tuple of a solved frame's networks: what planning it makes apart from the jobs' ids
    frames_: dict[tuple[str, ...], _Frame]
    #: per (profile id, row): the per-group demand and wait lists of :class:`_Plan`
    rows_: dict[tuple[int, Any], tuple[list[int], list[float], list[float]]]
    #: slowdown per (own demand, external demand): the contention model is a pure function
    slow_: dict[tuple[float, float], float]
    #: the two rates (boxed, as ``rates`` holds them) per pair of demands of two jobs running
    #: at once, in machine order (:meth:`_rates_of_two`): the common contention case's rates
    #: found by one look-up (twenty-first round)
    rates2_: dict[tuple[Any, Any], tuple[object, object]]
    #: the decisions ``select`` made this run (:attr:`_Plan.dec`)
    dec_: int
    #: The policy decides with the core's ``select`` (set at the run's first decision, with
    #: the resource check): only then are :meth:`lone_wake` and :meth:`empty_wake` made (a
    #: subclass's own ``select``, or one set on the instance, decides every wake).
    own_select_: bool
    #: per accelerator index, its resource's capacity (read with the resource check from the
    #: engine's view; empty where the first decision's view was not the engine's): the free
    #: units :meth:`lone_wake` reads where no job holds units
    cap_: list[int]
    #: This run's record of the schedule made last (``made_schedule()`` at the run's first
    #: decision on the engine's view, in the run's thread: every decision of a run is made
    #: there), for :meth:`lone_wake`'s schedules; ``None`` until then
    made_: MadeSchedule | None
    #: The assignment :meth:`lone_wake` handed last (``{job: allocation}``, never written
    #: after): handed again, unchanged, where the next one is the same job on the same
    #: allocation (a job's next group on the same accelerator), where a new dictionary
    #: would be made and the last one freed when the record is refilled; dropped at its
    #: job's completion
    assign_: dict[Any, Allocation] | None

    def _plan(self, jobs: list[JobView]) -> None:
        nets_l: list[str] = []
        for j in jobs:
            nets_l.append(j.network)
        nets = tuple(nets_l)
        # A solved frame (no swaps, the fixed schedule used or none given) is planned as every
        # earlier frame of the same networks: its ``_Frame`` is kept.
        solved = self.swaps is None and (self.schedule is None or self.used_fixed_)
        frame = self.frames_.get(nets) if solved else None
        after: Any = ()  # (a swap's ``after``: declared Any, as the rows, for NumPy integers)
        if frame is None:
            if self.swaps is not None and self.current_ is not None:
                after = self.current_.after
            frame = _Frame(self._schedule_of(jobs, nets), self, self._profiles_of(nets))
            if solved:
                self.frames_[nets] = frame
        ids: list[int] = []
        for j in jobs:
            ids.append(j.id)
        plans = self.plans_
        plan_of = self.plan_of_
        profiles, rows, starts, demand = frame.profiles, frame.rows, frame.starts, frame.demand
        wait, acc = frame.wait, frame.acc
        made: list[_Plan] = []
        for n in range(len(jobs)):
            deps = tuple(ids[d] for d in after[n]) if after else ()
            jid = ids[n]
            plan = _Plan(profiles[n], rows[n], starts[n], deps, demand[n], wait[n], acc[n], jid)
            plans[jid] = plan
            plan_of[jobs[n]] = plan
            made.append(plan)
        queues = self.queues_
        qgroups = self.qgroups_
        order_n = frame.order_n
        order_g = frame.order_g
        for a in range(len(order_n)):
            on = order_n[a]
            if on:
                qa = queues[a]
                for n in on:
                    qa.append(made[n])
                qgroups[a].extend(order_g[a])

    def _profiles_of(self, nets: tuple[str, ...]) -> list[GroupProfile]:
        """The group profile of each network (one per network for the whole run: frames
        repeat networks)."""
        for name in nets:
            if name not in self.profiles_:
                net, spec, k = get_network(name), self.spec_, self.n_groups
                self.profiles_[name] = _shared(
                    ("profile", id(net), id(spec), k),
                    (net, spec),
                    lambda: generate_profile(net, spec, n_groups=k),  # noqa: B023
                )
        return [self.profiles_[name] for name in nets]

    def _schedule_of(self, jobs: list[JobView], nets: tuple[str, ...]) -> GroupSchedule:
        """The group schedule of a frame of ``jobs`` (networks ``nets``), with its order: the
        swap in force, the fixed schedule (first frame) or the memoised solve."""
        profiles = self._profiles_of(nets)
        if self.swaps is not None:
            if self.current_ is None:
                raise ConfigError("haxconn policy: a frame arrived before the first swap")
            sched = self.current_.schedule
            if len(sched.assignment) != len(jobs) or any(
                len(r) != p.n_groups for r, p in zip(sched.assignment, profiles, strict=True)
            ):
                raise ConfigError(
                    f"haxconn policy: frame of {len(jobs)} jobs does not fit the swap at "
                    f"{self.current_.time_s} s ({len(sched.assignment)} DNNs)"
                )
        elif self.schedule is not None and not self.used_fixed_:
            sched = self.schedule
            self.used_fixed_ = True
        else:
            key = ("solve", nets)
            if key not in self.memo_:
                self.solves_ += 1
                self.memo_[key] = _shared(
                    ("solve", self.goal, self.max_transitions, nets, *map(id, profiles)),
                    tuple(profiles),
                    lambda: haxconn(
                        self._workload(nets, profiles),
                        self.goal,
                        max_transitions=self.max_transitions,
                    ).schedule,
                )
            sched = self.memo_[key]
        if sched.order is None:
            from npusched.policies.mapping.execute import execute

            okey = ("order", nets, sched.assignment)
            if okey not in self.memo_:
                self.memo_[okey] = execute(self._workload(nets, profiles), sched).schedule
            sched = self.memo_[okey]
        return sched

    def _rows(self, p: GroupProfile, row: Any) -> tuple[list[int], list[float], list[float]]:
        """:func:`rows_of` (a module function: compiled, a method called on an instance of the
        interpreted subclass goes through mypyc's glue)."""
        return rows_of(self, p, row)

    def _workload(self, nets: tuple[str, ...], profiles: list[GroupProfile]) -> Workload:
        return Workload(self.spec_, tuple(Task(n, p) for n, p in zip(nets, profiles, strict=True)))

    def _rates_of_two(self, d0: Any, d1: Any) -> tuple[object, object]:
        """The rates of two jobs running at once with demands ``d0`` and ``d1`` (the general
        case of ``select``'s rates for two jobs, kept per pair in ``rates2_``: a pure function
        of the two demands)."""
        tot = 0 + d0 + d1  # as ``sum``: from the integer 0, left to right
        memo = self.slow_
        k = (d0, tot - d0)
        slow = memo.get(k)
        if slow is None:
            slow = memo[k] = self.model_.slowdown_one(d0, tot - d0)
        r0 = 1.0 / slow
        k = (d1, tot - d1)
        slow = memo.get(k)
        if slow is None:
            slow = memo[k] = self.model_.slowdown_one(d1, tot - d1)
        return r0, 1.0 / slow

    def on_complete(self, job: Any, now: float) -> None:
        plan = self.plan_of_.pop(job, None)
        jid: int = plan.jid if plan is not None else job.id  # (no ``job.id`` read if known)
        plan = self.plans_.pop(jid, None)
        if plan is not None and self.swaps is not None:
            self.ended_[jid] = (now, plan.row[-1], plan.profile)
        last = self.assign_
        if last is not None and job in last:  # (no finished job kept past its run)
            self.assign_ = None

    def empty_wake(self, reason: str) -> bool:
        """``select``'s decision at a wake on a view with no job (the engine calls it only
        there, ``policies.contract.empty_wake_rule``), made without the view: ``True`` where
        made. Without swaps, ``select`` on such a view starts nothing, asks for no timer and
        sets no rate (no job runs): ``NOTHING``, its only state the decision counted (``dec_``).
        Not made (``False``: ``select`` runs) before the run's first decision (the resource
        check), with swaps (their timers and the schedule in force are ``select``'s), or where
        the class or the instance has a ``select`` of its own."""
        if not self.checked_ or not self.own_select_ or self.swaps is not None:
            return False
        self.dec_ += 1
        return True

    def lone_wake(self, reason: str, job: Any) -> Schedule | Allocation | None:
        """``select``'s decision at a wake on a view whose one job is ``job`` (the engine
        calls it only there, ``policies.contract.lone_wake_rule``: no other job waits, holds
        units or waits for units), made without the view; ``None`` where not made (then
        ``select`` runs): before the run's first decision or where the class decides its own
        way (as :meth:`empty_wake`), with swaps, where the first decision's view was not the
        engine's (no capacities), for a job not the engine's, one neither waiting nor running,
        and for a waiting job whose next group has a wait before it (a transition, or a
        consumer's producers: ``select``'s timers).

        ``select`` on such a view, step by step. A waiting job: its plan (planned now where it
        has none: a frame of this job alone, as ``select``'s frame of the unplanned ready
        jobs), then its pass over the one job: the next group starts where it is at its
        accelerator's queue's head and the accelerator has a free unit (no job holds one, so
        its free units are its capacity), else nothing; no job runs, so no rate is set. A
        running job: with contention its rate 1.0 (the rule's rate of a job running alone),
        else nothing. This makes the same steps on the same state and returns the same
        decision: ``NOTHING`` where nothing starts and no rate is set, the accelerator's
        allocation where the schedule would only assign the job (its last group: the
        contract's short form, no schedule is filled), else the schedule
        (``refill_schedule`` with the same fields). ``select``'s free units per decision
        (``free_``, ``free_dec_``) are not written: a later decision reads them only under its
        own stamp."""
        m = self.made_
        if not self.checked_ or not self.own_select_ or self.swaps is not None or m is None:
            return None
        if not isinstance(job, JobCore):
            return None
        jc: JobCore = job
        jv: Any = job  # (as ``select``'s frame: a list of job views)
        st = jc.state
        plan_of = self.plan_of_
        plan = plan_of.get(job)
        if st is _RUNNING:
            self.dec_ += 1
            if not self.contention:
                return _NOTHING
            if plan is None:
                plan = self.plans_.get(jc.id)
                if plan is None:
                    return _NOTHING
                plan_of[job] = plan
            return refill_schedule(
                m, NO_ASSIGN, NO_PREEMPT, NO_MECHANISM, NO_UNTIL, NO_MERGE, NO_TIMERS, {job: 1.0}
            )
        if st is not _WAITING:
            return None
        if plan is None:
            jid = jc.id
            plan = self.plans_.get(jid)
            if plan is None:
                self._plan([jv])
                plan = self.plans_[jid]
            plan_of[job] = plan
        g = plan.grp + 1
        row = plan.acc
        a = row[g]
        if g == 0:
            if plan.deps:
                return None
        elif row[g - 1] != a:
            return None
        dec = self.dec_ = self.dec_ + 1
        qa = self.queues_[a]
        h = self.qhead_[a]
        if h >= len(qa) or qa[h] is not plan or self.qgroups_[a][h] != g or self.cap_[a] < 1:
            return _NOTHING
        _started(self, plan, a, h, dec, g)
        alloc = self.allocs_[a]
        if g + 1 < len(row):
            starts: list[int] = plan.starts
            assign = self.assign_
            if assign is None or len(assign) != 1 or assign.get(job) is not alloc:
                assign = self.assign_ = {job: alloc}
            return refill_schedule(
                m, assign, NO_PREEMPT, NO_MECHANISM, {job: starts[g + 1]}, NO_MERGE, NO_TIMERS,
                NO_RATES,
            )
        return alloc

    def select(self, view: MachineView) -> Schedule:
        # The decision's timers, until-steps and rates are made when the first is written; a
        # decision that writes none of them and starts nothing is ``NOTHING`` (the engine
        # carries out an empty schedule as ``NOTHING``: only the starts waiting for units).
        # The engine's view: its fields as the engine's native record holds them (typed where
        # compiled); any other view through its attributes.
        m = made_schedule()
        vf = m.view_fields
        # the engine's free units by resource, natively (``ViewFields.free``, machine order),
        # where the view is the engine's; else each read from the view's resources by name
        free_now: list[int] | None = None
        if vf is not None and vf.view is view:
            now = vf.now
            given: Any = vf.ready
            resources = vf.resources
            free_now = vf.free
        else:
            vf = None
            now = view.now
            given = view.ready
            resources = view.resources
        timers: list[float] | None = None
        if self.swaps is not None:
            if not self.timers_sent_:  # one engine timer per swap
                timers = [s.time_s for s in self.pending_ if s.time_s > now]
                self.timers_sent_ = True
            while self.pending_ and self.pending_[0].time_s <= now:
                self.current_ = self.pending_.popleft()
        # (``given``: the engine's own list; any other sequence is copied)
        ready: list[Any] = given if type(given) is list else list(given)
        plans = self.plans_
        plan_of = self.plan_of_
        # (plain loops here and below: on the hot path, with one or two jobs, a comprehension's
        # own frame costs more than its items)
        # the ready jobs' plans in the queue's order (one look-up per job and decision)
        rplans: list[_Plan] = []
        for j in ready:
            pj = plan_of.get(j)
            if pj is None:
                # a job object not seen yet: its plan by id (another view's object for a job
                # planned before), else the frame's jobs not planned yet are planned now
                known = plans.get(j.id)
                if known is None:
                    self._plan([j for j in ready if j.id not in plans])
                    known = plans[j.id]
                pj = plan_of[j] = known
            rplans.append(pj)
        if not self.checked_:
            accs = self.spec_.accelerators
            for name in accs:
                if name not in resources:
                    raise ConfigError(
                        f"haxconn policy: machine has no resource {name!r}; use "
                        f"npusched.sim.resources.soc({accs!r})"
                    )
            self.accs_ = list(accs)
            self.free_ = [0] * len(self.accs_)
            self.free_dec_ = [-1] * len(self.accs_)
            # (the class's ``select`` the core's, and none set on the instance: a ``select``
            # the engine calls in its place decides every wake)
            self.own_select_ = keeps_method(self, "select", _CORE_SELECT)
            self.cap_ = [resources[name].capacity for name in accs] if vf is not None else []
            self.made_ = m if vf is not None else None
            self.checked_ = True
        accs_l = self.accs_
        res_pos = self.res_pos_
        if free_now is not None and not res_pos:
            # each accelerator's position in the engine's machine order (one run's views
            # all list the run's resources in that order; found at its first engine view)
            names = list(resources)
            for name in accs_l:
                res_pos.append(names.index(name))
        # by accelerator index, each read from the view at its first start in this decision
        # (``free_dec``: the decision that read it)
        free = self.free_
        free_dec = self.free_dec_
        queues = self.queues_
        qgroups = self.qgroups_
        qhead = self.qhead_
        allocs = self.allocs_
        assign: dict[JobView, Allocation] = {}
        until: dict[JobView, int] | None = None
        last_job: Any = None  # the job the decision started last, its accelerator and plan
        last_a = -1
        last_plan: _Plan | None = None
        dec = self.dec_ = self.dec_ + 1
        # Passes over the ready queue until one starts nothing: a start moves its
        # accelerator's queue on, and the job now at its head may begin its transition wait
        # at this instant (the decision the engine would otherwise make right after the start).
        while True:
            started = len(assign)
            left = 0  # jobs of this pass left waiting: the next pass may start one
            for n in range(len(ready)):
                plan = rplans[n]
                if plan.dec == dec:  # started by this decision
                    continue
                left += 1  # (taken back below when it starts)
                job = ready[n]
                g = plan.grp + 1  # as _group(job), without the look-up
                row = plan.acc
                a = row[g]
                qa = queues[a]
                h = qhead[a]
                if h >= len(qa):
                    continue
                if qa[h] is not plan or qgroups[a][h] != g:
                    continue
                if g == 0:
                    if plan.deps:  # a consumer (Scenario 4): producers, then the hand-over
                        if any(d not in self.ended_ for d in plan.deps):
                            continue
                        if plan.ready == _NO_READY:
                            r = 0.0
                            for dep in plan.deps:
                                end, last, prof = self.ended_[dep]
                                tr = (
                                    0.0
                                    if last == a
                                    else float(prof.out_s[-1, last] + plan.profile.in_s[0, a])
                                )
                                r = max(r, end + tr)
                            plan.ready = r
                            if r > now + 1e-12:
                                if timers is None:
                                    timers = []
                                timers.append(r)
                                continue
                        if plan.ready > now + 1e-12:
                            continue
                elif row[g - 1] != a:  # transition (Eq. 2): wait out + in
                    t_ready = plan.ready
                    if t_ready == _NO_READY:
                        wait: list[float] = plan.wait
                        t_ready = plan.ready = now + wait[g]
                        if timers is None:
                            timers = []
                        timers.append(t_ready)
                        continue
                    if t_ready > now + 1e-12:
                        continue
                if free_dec[a] == dec:
                    fa = free[a]
                else:
                    if free_now is not None:
                        fa = free[a] = free_now[res_pos[a]]
                    else:
                        fa = free[a] = resources[accs_l[a]].free
                    free_dec[a] = dec
                if fa < 1:
                    continue
                _started(self, plan, a, h, dec, g)
                free[a] = fa - 1
                assign[job] = allocs[a]
                last_job = job
                last_a = a
                last_plan = plan
                if g + 1 < len(row):
                    starts: list[int] = plan.starts
                    if until is None:
                        until = {}
                    until[job] = starts[g + 1]
                left -= 1
            # Another pass only when this one started a job and left one waiting: a pass over
            # jobs all started (or already assigned) starts nothing.
            if len(assign) == started or not left:
                break
        rates: dict[Any, Any] | None = None  # (values boxed: the pairs of ``rates2_`` as kept)
        if self.contention:
            # Every job running once this decision is carried out (the engine applies rates
            # after it starts the assigned jobs), in machine order as the engine lists them.
            acc_index = self.acc_index_
            # (the engine's list, typed: iterated natively; another view's sequence copied)
            given_running: list[Any] = vf.running if vf is not None else list(view.running)
            # the running jobs with a plan, in the engine's order: the first two by name (the
            # common cases hold one or two, and no list is made for them), a list from three on
            n_run = 0
            rj0: Any = None
            rj1: Any = None
            rp0: _Plan | None = None  # their plans
            rp1: _Plan | None = None
            more: list[Any] | None = None
            for j in given_running:
                pj = plan_of.get(j)  # (as in the ready queue above)
                if pj is None:
                    pj = plans.get(j.id)
                    if pj is None:
                        continue
                    plan_of[j] = pj
                if n_run == 0:
                    rj0 = j
                    rp0 = pj
                elif n_run == 1:
                    rj1 = j
                    rp1 = pj
                else:
                    if more is None:
                        more = [rj0, rj1]
                    more.append(j)
                n_run += 1
            # Every job running once the decision is carried out, in machine order: two by
            # name with their plans where known here (``two``), else three or more as a list
            # (``running``); one start beside no running job is left out (its rate would be
            # 1.0, the rate the engine starts every job at: ``rates`` stays empty).
            two = False
            j0: Any = None
            j1: Any = None
            p0: _Plan | None = None
            p1: _Plan | None = None
            running: list[Any] | None = None
            if assign and len(assign) == 1 and n_run < 2:
                if n_run == 1:  # two: the stable sort of the general case below, written out
                    ral = rj0.allocation
                    ir = acc_index.get(ral.resource or "", -1) if ral else -1
                    aal = allocs[last_a]
                    two = True
                    if ir <= acc_index[aal.resource or ""]:
                        j0, j1, p0, p1 = rj0, last_job, rp0, last_plan
                    else:
                        j0, j1, p0, p1 = last_job, rj0, last_plan, rp0
            elif assign:
                given_l: list[Any]
                if more is not None:
                    given_l = more
                elif n_run == 2:
                    given_l = [rj0, rj1]
                elif n_run == 1:
                    given_l = [rj0]
                else:
                    given_l = []
                entries = []
                for j in given_l:
                    al = j.allocation
                    entries.append((acc_index.get(al.resource or "", -1) if al else -1, j))
                for j, al in assign.items():
                    entries.append((acc_index[al.resource or ""], j))
                entries.sort(key=_first)
                if len(entries) == 2:
                    two = True
                    j0 = entries[0][1]
                    j1 = entries[1][1]
                else:
                    running = []
                    for e in entries:
                        running.append(e[1])
            elif n_run == 2:
                two = True
                j0, j1, p0, p1 = rj0, rj1, rp0, rp1
            elif more is not None:
                running = more
            elif n_run == 1:
                rates = {rj0: 1.0}
            if two:  # the general case below, written out for two jobs
                if p0 is None or p1 is None:
                    p0, p1 = plan_of[j0], plan_of[j1]
                d0 = p0.demand[p0.grp]
                d1 = p1.demand[p1.grp]
                pair = self.rates2_.get((d0, d1))
                if pair is None:
                    pair = self.rates2_[(d0, d1)] = self._rates_of_two(d0, d1)
                rates = {j0: pair[0]}
                rates[j1] = pair[1]
            elif running is not None:  # three or more
                demand = []
                for j in running:
                    pj = plan_of[j]
                    demand.append(pj.demand[pj.grp])
                tot = sum(demand)
                memo = self.slow_
                rates = {}
                for i in range(len(running)):  # (``running`` and ``demand`` pair up)
                    j, d = running[i], demand[i]
                    k = (d, tot - d)
                    slow = memo.get(k)
                    if slow is None:
                        slow = memo[k] = self.model_.slowdown_one(d, tot - d)
                    rates[j] = 1.0 / slow
        if not assign and until is None and timers is None and rates is None:
            return NOTHING
        return refill_schedule(
            m,
            assign if assign else NO_ASSIGN,
            NO_PREEMPT,
            NO_MECHANISM,
            until if until is not None else NO_UNTIL,
            NO_MERGE,
            timers if timers is not None else NO_TIMERS,
            rates if rates is not None else NO_RATES,
        )


def _started(core: HaxconnCore, plan: _Plan, a: int, h: int, dec: int, g: int) -> None:
    """``plan``'s group ``g`` started on accelerator ``a`` by decision ``dec`` (the group at
    the queue's head ``h``): its wait cleared, the queue moved on (emptied where served to its
    end; its served part dropped where it passes :data:`_QUEUE_TRIM` entries and half the
    queue), the plan stamped with the decision and the group."""
    plan.ready = _NO_READY
    qa = core.queues_[a]
    h += 1
    if h == len(qa):
        qa.clear()
        core.qgroups_[a].clear()
        h = 0
    elif h >= _QUEUE_TRIM and 2 * h >= len(qa):
        del qa[:h]
        del core.qgroups_[a][:h]
        h = 0
    core.qhead_[a] = h
    plan.dec = dec
    plan.grp = g


def rows_of(
    core: HaxconnCore, p: GroupProfile, row: Any
) -> tuple[list[int], list[float], list[float]]:
    """The first layer of each group, and :class:`_Plan`'s ``demand`` and ``wait`` lists of
    profile ``p`` run on ``row`` (built once per pair; the same float operations as a look-up
    per wake)."""
    key = (id(p), row)
    hit = core.rows_.get(key)
    if hit is None:
        bw = core.spec_.memory_bandwidth_bps
        demand = [float(p.mem_bps[g, a]) / bw for g, a in enumerate(row)]
        wait = [0.0] + [
            float(p.out_s[g - 1, row[g - 1]] + p.in_s[g, row[g]]) if row[g - 1] != row[g]
            else 0.0
            for g in range(1, len(row))
        ]
        hit = core.rows_[key] = ([s for s, _ in p.bounds], demand, wait)
    return hit


#: The core's own decision (a subclass that overrides it decides every wake: no
#: :meth:`HaxconnCore.lone_wake` or :meth:`HaxconnCore.empty_wake`).
_CORE_SELECT: Final = HaxconnCore.select
