"""The compiled core of the batching machine policies (:mod:`npusched.policies.batching.policies`).

:class:`BatchingCore` holds what every batching policy does per decision (the fresh jobs of the
ready queue, the step-0 memo, the start of a merged batch, the exit steps) and
:class:`FluidBCore` FluidB's decision (Algorithm 1 at the engine's wakes): the general loop
calls ``select`` at every wake, so this module is listed in
``npusched.native.COMPILED_MODULES`` and runs as mypyc native methods where the package is built
compiled. The public classes (``FluidBPolicy``, ``AdaptBPolicy``, ``SerialPolicy``,
``LazyBatchingPolicy``) stay in the interpreted ``policies.py`` and subclass these: their
``__init__`` keeps a Python signature, which ``Component`` (parameters, ``clone``) and the config
checks read with ``inspect.signature`` (a native class's ``__init__`` has none). The rule is
documented in ``policies.py`` and ``fluidb.py``; this module only holds its code.

The constructor parameters (``slo_s``, ``b_max``) are declared ``Any``: a native attribute
annotated ``float`` or ``int`` would convert or refuse what the constructor is given before
``validate`` names the bad value.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from mypy_extensions import mypyc_attr

from npusched.hardware.profile import Profile
from npusched.policies.batching.fluidb import B_MAX, ExitLUT, fluidb_decide, initial_batch
from npusched.policies.contract import (
    NOTHING,
    Allocation,
    JobCore,
    JobView,
    MachineView,
    MadeSchedule,
    Schedule,
    made_schedule,
)
from npusched.policies.machine_core import (
    NO_MECHANISM,
    NO_PREEMPT,
    NO_RATES,
    NO_TIMERS,
    make_merge,
    refill_schedule,
)

#: The machine's first resource, whole: every batching policy's allocation (frozen, shared).
WHOLE = Allocation()


def exit_lut_from_profile(profile: Profile, b_max: int = B_MAX) -> ExitLUT:
    """The ``N_exits x B_max`` table of Sec. III-B read off a compiled profile: segment ``i`` is
    the work between intermediate exit ``i - 1`` and ``i`` (the last: to the end), per batch."""
    cols = []
    for b in range(1, b_max + 1):
        plan = profile.plan(b)
        cum = plan.cum_s
        bounds = [0.0, *(float(cum[e]) for e in plan.exits), float(plan.total_s)]
        cols.append(np.diff(bounds))
    return ExitLUT(np.stack(cols, axis=1))


def start_schedule(jobs: Sequence[JobView], until: int | None = None) -> Schedule:
    """Merge ``jobs`` into the first and start it (stopping at step ``until``) on the machine's
    first resource, whole (one shared :class:`Allocation`: the engine resolves it by
    identity)."""
    return start_on(made_schedule(), jobs, until)


def start_on(m: MadeSchedule, jobs: Sequence[JobView], until: int | None = None) -> Schedule:
    """:func:`start_schedule` on this thread's record ``m`` (a decision that read it for the
    view's fields passes it: one thread-local look-up per decision)."""
    head = jobs[0]
    merge = (make_merge(head, list(jobs[1:])),) if len(jobs) > 1 else ()
    return refill_schedule(
        m,
        {head: WHOLE},
        NO_PREEMPT,
        NO_MECHANISM,
        {head: until} if until is not None else {},
        merge,
        NO_TIMERS,
        NO_RATES,
    )


@mypyc_attr(allow_interpreted_subclasses=True)
class BatchingCore:
    """A batching machine policy's per-run counters and the per-decision pieces they share.

    The pieces are module functions (:func:`fresh_jobs`, :func:`exit_step`) with thin methods
    over them for the interpreted policies: compiled, a method called on an instance of an
    interpreted subclass goes through a Python-level look-up and call (mypyc's glue), a
    module function is a direct C call."""

    invocations_: int
    preemptions_: int
    #: per plan (by identity): whether a job with no work done stands at step 0
    step0_: dict[int, tuple[Any, bool]]
    #: per network: its plan's intermediate exits (the batch-1 plan's, as ``_exit_step``)
    exits_: dict[str, Sequence[int]]

    def reset_core(self) -> None:
        """Forget the per-run state this class holds."""
        self.invocations_ = 0
        self.preemptions_ = 0
        self.step0_ = {}
        self.exits_ = {}

    def _fresh(self, view: MachineView, exclude: Sequence[int] = ()) -> list[JobView]:
        """:func:`fresh_jobs`."""
        return fresh_jobs(self, view, exclude)

    def _at_step_0(self, j: JobView) -> bool:
        """:func:`at_step_0` of ``j`` (whose ``executed_s <= 0``)."""
        return at_step_0(self.step0_, j, j.executed_s)

    @staticmethod
    def _start(jobs: Sequence[JobView], until: int | None = None) -> Schedule:
        """:func:`start_schedule` (kept as a method: subclasses call ``self._start``)."""
        return start_schedule(jobs, until)

    def _exit_step(self, view: MachineView, job: JobView, i: int) -> int | None:
        """:func:`exit_step`."""
        return exit_step(self, view, job, i)


def fresh_jobs(core: BatchingCore, view: MachineView, exclude: Sequence[int] = ()) -> list[JobView]:
    """Waiting jobs that have not started, oldest first (``executed_s <= 0`` and at step 0
    of their plan)."""
    return fresh_of(core, view.ready, exclude)


def fresh_of(
    core: BatchingCore, ready: Sequence[JobView], exclude: Sequence[int] = ()
) -> list[JobView]:
    """:func:`fresh_jobs` of the ready queue ``ready``. The engine's jobs (``JobCore``) are
    read natively where compiled (``executed_s``, ``id``, ``plan``), any other job object
    through the ``JobView`` protocol (a generic attribute read each): the same values."""
    out: list[JobView] = []
    step0 = core.step0_
    for j in ready:  # a plain loop: the queue is short (see at_step_0)
        jc: JobCore | None = j if isinstance(j, JobCore) else None
        if jc is not None:
            ex = jc.executed_s
            if ex <= 0.0 and (not exclude or jc.id not in exclude):
                plan = jc.plan
                hit = step0.get(id(plan))
                if hit is not None and hit[0] is plan:  # as ``at_step_0``, inline
                    ok = hit[1] or ex < 0.0
                else:
                    ok = at_step_0(step0, j, ex)
                if ok:
                    out.append(j)
        else:
            ex = j.executed_s
            if ex <= 0.0 and j.id not in exclude and at_step_0(step0, j, ex):
                out.append(j)
    return out


def at_step_0(step0: dict[int, tuple[Any, bool]], j: JobView, executed_s: float) -> bool:
    """``j.position[0] == 0`` for a job with ``executed_s <= 0``: its plan's position at no
    work (one look-up per plan in ``step0``, kept by identity; a plan whose first steps take no
    time stands past them)."""
    plan = j.plan
    hit = step0.get(id(plan))
    if hit is not None and hit[0] is plan:
        return hit[1] or executed_s < 0.0
    ok = j.position[0] == 0
    if executed_s == 0.0:
        step0[id(plan)] = (plan, ok)
    return ok


def job_id(j: JobView) -> int:
    """``j.id``: the engine's job (``JobCore``) read natively where compiled, any other job
    object through the protocol (a generic attribute read; twentieth round)."""
    jc: JobCore | None = j if isinstance(j, JobCore) else None
    return jc.id if jc is not None else j.id


def exit_step(core: BatchingCore, view: MachineView, job: JobView, i: int) -> int | None:
    """The step of intermediate exit ``i`` of ``job``'s network (``None`` past the last)."""
    jc: JobCore | None = job if isinstance(job, JobCore) else None
    net = jc.network if jc is not None else job.network  # (as ``job_id``)
    exits = core.exits_.get(net)
    if exits is None:
        exits = core.exits_[net] = view.profiles[net].plan(1).exits
    return exits[i] if i < len(exits) else None


@mypyc_attr(allow_interpreted_subclasses=True)
class FluidBCore(BatchingCore):
    """FluidB's per-run state and decision (the rule: ``policies.FluidBPolicy``)."""

    slo_s: Any
    b_max: Any
    active_: int | None  # id of the active (possibly preempted) batch
    catch_: int | None  # id of the running catch-up batch
    exit_: int  # the exit the active batch stands at / runs to
    luts_: dict[str, ExitLUT]

    def reset_fluidb(self) -> None:
        """Forget FluidB's per-run state."""
        self.active_ = None
        self.catch_ = None
        self.exit_ = 0
        self.luts_ = {}

    def select(self, view: MachineView) -> Schedule:
        # The engine's view: its fields as the engine's native record holds them (typed where
        # compiled, nineteenth round); any other view through its attributes.
        m = made_schedule()
        vf = m.view_fields
        ready: Sequence[JobView]
        if vf is not None and vf.view is view:
            if vf.running or vf.preempting:
                return NOTHING
            ready = vf.ready
            now = vf.now
        else:
            if view.running or view.preempting:
                return NOTHING
            ready = view.ready
            now = view.now
        active_id, catch_id = self.active_, self.catch_
        if active_id is not None or catch_id is not None:
            active: JobView | None = None
            catch: JobView | None = None
            for j in ready:
                jc: JobCore | None = j if isinstance(j, JobCore) else None
                jid = jc.id if jc is not None else j.id
                if jid == active_id:
                    active = j
                elif jid == catch_id:
                    catch = j
            if catch_id is not None:  # the catch-up batch reached the exit (or all of it left)
                self.catch_ = None
                if active is not None and catch is not None:
                    return fluidb_at_exit(self, view, active, catch, m, ready, now)
            if active is not None:
                return fluidb_at_exit(self, view, active, None, m, ready, now)
            self.active_ = None
        fresh = fresh_of(self, ready)
        if not fresh:
            return NOTHING
        # Algorithm 1 line 2: a new batch of min(N_Q, B_max), run to the first exit
        batch = fresh[: initial_batch(len(fresh), self.b_max)]
        self.active_, self.exit_ = job_id(batch[0]), 0
        return start_on(m, batch, exit_step(self, view, batch[0], 0))


def n_samples(job: JobView) -> int:
    """``len(job.samples)``: the engine's job counts its samples without making their
    requests (``Job.n_samples``); another view's samples are counted."""
    n = getattr(job, "n_samples", None)
    return len(job.samples) if n is None else int(n)


def oldest_arrival(job: JobView) -> Any:
    """``min(r.arrival_s for r in job.samples)``: the engine's job finds it from the run's
    arrival times without making its samples' requests (``Job.oldest_arrival_s``)."""
    got = getattr(job, "oldest_arrival_s", None)
    return min(r.arrival_s for r in job.samples) if got is None else got


def exit_lut(core: FluidBCore, view: MachineView, job: JobView) -> ExitLUT:
    """The exit table of ``job``'s network (built once per run)."""
    lut = core.luts_.get(job.network)
    if lut is None:
        lut = core.luts_[job.network] = exit_lut_from_profile(
            view.profiles[job.network], core.b_max
        )
    return lut


def fluidb_at_exit(
    core: FluidBCore,
    view: MachineView,
    active: JobView,
    merged: JobView | None,
    m: MadeSchedule,
    ready: Sequence[JobView],
    now: float,
) -> Schedule:
    """At exit ``exit_`` with ``active`` stopped there (and ``merged`` to join it); ``m``, this
    thread's record, ``ready`` and ``now``: the view's, as ``select`` read them (natively where
    the view is the engine's)."""
    i = core.exit_
    # the samples of both (``active``'s first): their count and the oldest arrival (the first
    # of equal ones, as ``min`` over the concatenation), no request made
    b_rem = n_samples(active)
    oldest = oldest_arrival(active)
    if merged is not None:
        b_rem += n_samples(merged)
        other = oldest_arrival(merged)
        if other < oldest:
            oldest = other
    fresh = fresh_of(core, ready, (job_id(active),) + ((job_id(merged),) if merged else ()))
    lut = exit_lut(core, view, active)
    core.invocations_ += 1
    d = fluidb_decide(lut, i, b_rem, len(fresh), float(core.slo_s), 0.0, now - oldest, core.b_max)
    # (declared variable-length: compiled, the inferred ``tuple[Merge] | tuple[()]`` refuses
    # the two merges of a catch-up batch joined below)
    merge: tuple[Any, ...] = (make_merge(active, [merged]),) if merged is not None else ()
    if d.preempt:
        core.preemptions_ += 1
        new = fresh[: d.b_incr]
        head = new[0]
        core.catch_ = job_id(head)
        # ``start_schedule(new, until)``'s fields with this decision's merge before its own:
        # one schedule refilled, where the first was made and its fields read into a second
        until = exit_step(core, view, active, i)
        if len(new) > 1:
            merge = (*merge, make_merge(head, list(new[1:])))
        return refill_schedule(
            m,
            {head: WHOLE},
            NO_PREEMPT,
            NO_MECHANISM,
            {head: until} if until is not None else {},
            merge,
            NO_TIMERS,
            NO_RATES,
        )
    core.exit_ = i + 1
    nxt = exit_step(core, view, active, i + 1)
    return refill_schedule(
        m,
        {active: WHOLE},
        NO_PREEMPT,
        NO_MECHANISM,
        {active: nxt} if nxt is not None else {},
        merge,
        NO_TIMERS,
        NO_RATES,
    )
