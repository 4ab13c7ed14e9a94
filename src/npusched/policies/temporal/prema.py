"""PREMA: the predictive token-based multi-task scheduler (PREMA Algorithm 2, Table II).

Every dispatched task holds *tokens*. Exactly as implemented here:

1. **Dispatch** (Algorithm 2 line 3): ``tokens = priority`` (the user-defined priority; PREMA's
   levels low/medium/high are 1/3/9, which are also Table II's initial tokens).
2. **Each scheduling period** (``period_s`` = 0.25 ms, Table II; lines 6-7), every task gains
   ``priority x Slowdown_normalized``, where Slowdown_normalized is the time the task was left
   idle *in the ready queue* (``JobView.waited_s``, not time spent running) over the predictor's
   ``Time_estimated`` (the scheduler cannot know the true isolated time). Line 7 admits two
   readings, both offered as ``tokens``:

   * ``"linear"`` (default): each period adds only the slowdown accrued *during that period* (its
     ready-queue time since the previous token update over the estimate), so at every period
     boundary ``tokens = priority x (1 + waited / estimated)``: the tokens track the slowdown
     itself. This needs "this period's" idle time, which the text never mentions.
     The default since the reproduction (``npusched reproduce prema``) measured both: under
     ``"linear"`` 18 of its 26 comparisons with the paper lie within a factor of 2 against 17
     under ``"cumulative"``, and it lands closer on ANTT (9.9x vs 7.8x; cumulative 13.7x), the
     SLA gain (4.6x vs 4.8x; cumulative: no violation at N=4), PREMA's high-priority tail
     (1.41x vs 1.4x; cumulative 1.75x) and NP-TOKEN (under cumulative tokens every waiting task
     holds the top level's 9 tokens at nearly every pick, so NP-TOKEN schedules exactly as
     NP-FCFS); cumulative is closer only on the fairness gain. It also makes the tokens
     independent of ``period_s`` at period boundaries.
   * ``"cumulative"``: Slowdown_normalized is the task's slowdown so far (all its
     ready-queue time over its estimate) and line 7 adds it again every period, so tokens grow
     quadratically in the waiting time: ``tokens = priority x (1 + sum over periods of
     waited_at_period / estimated)``. This is the literal text: Sec. V-C defines
     Slowdown_normalized as "the amount of time it was left idle inside the ReadyQueue against
     its Time_isolated" (a state of the task, with no "since the previous period"), and line 7
     is ``Token += Priority x Slowdown`` "each scheduling period"; the paper speaks of tasks that
     "gradually accumulate more tokens". The Sparse-DySta re-implementation of PREMA reads it
     the same way.

3. **Threshold** (line 9): the largest token count among the tasks, rounded *down* to the
   closest priority level (1, 3 or 9); e.g. a maximum of 8 gives 3. A maximum below the lowest
   level (impossible with the default levels) makes the maximum itself the threshold.
4. **Candidates**: tasks whose tokens are ``>=`` the threshold. The paper prints ``>``, but then
   a queue where every task holds exactly its initial tokens (e.g. all tasks low priority and
   just dispatched: tokens 1, threshold 1) has no candidate at all, and a freshly dispatched
   high-priority task (9 tokens, threshold 9) could never be chosen over nothing. ``>=`` is the
   only reading under which the scheduler always makes progress; ``threshold=">"`` gives the
   printed rule, falling back to ``>=`` when it leaves no candidate.
5. **Choice** (line 10): the candidate with the shortest estimated *remaining* time
   (``estimated_s - executed_s``, so a preempted task is credited with its progress); ties go to
   the running task, then the earlier arrival, then the lower id.

The running task belongs to the ReadyQueue of Algorithm 2 (it is dispatched and unfinished): its
tokens count for the threshold and it competes as a candidate, so it keeps the array unless a
candidate is estimated to finish sooner. Under ``"linear"`` it gains no tokens while it runs (its idle time does not grow);
under ``"cumulative"`` line 7 applies to it like to every ReadyQueue task (its slowdown so far,
from waiting before it ran, is added each period). ``include_running=False`` leaves it out
(any candidate then preempts it, and it gains no tokens).

Wake-ups: on dispatch, on completion and on period expiry (the engine honours ``period_s``).
``NP-PREMA`` only picks when the array is idle; ``P-PREMA`` may preempt at any wake-up, with the
mechanism its ``mechanism`` parameter names (``"dynamic"`` is Algorithm 3).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from itertools import pairwise
from typing import Any

from npusched.base import Component
from npusched.errors import ParameterError
from npusched.policies.base import TemporalPolicyBase
from npusched.policies.contract import (
    KEEP,
    Decision,
    JobView,
    SchedulerView,
    declared_order,
    keeps_method,
    wait_stay,
)
from npusched.policies.temporal.levels import (
    NEVER_PERIODS,
    TokenTable,
    boundaries_to_gain,
    periods_to_gain,
    slowdown_of,
    token_table,
)
from npusched.policies.temporal.levels import token_value as _token_value
from npusched.policies.temporal.mechanism import check_mode, check_seconds, decide
from npusched.policies.temporal.prema_core import TokenHooks
from npusched.policies.temporal.sjf import shortest_remaining

#: Table II: the scheduling period (seconds).
PERIOD_S = 0.25e-3
#: Table II: tokens per user-defined priority level (low, medium, high).
TOKEN_LEVELS: tuple[int, ...] = (1, 3, 9)
THRESHOLD_OPS = (">=", ">")
#: The two readings of Algorithm 2 line 7 (see the module docstring); the first is the default.
TOKEN_RULES = ("linear", "cumulative")
#: ``quiet_periods``' "never" (more boundaries than any run has).
_NEVER = NEVER_PERIODS


#: The Algorithm 2 methods the engine's token table stands for (with ``choose``): a subclass
#: that overrides any of them decides its own way (``ready_order_methods``; the engine then
#: calls its ``select``).
ALGORITHM_2_METHODS: tuple[str, ...] = (
    "select",
    "pick",
    "queue",
    "candidates",
    "threshold_of",
    "tokens_of",
    "slowdown",
    "_slowdown_at",
    "on_period",
    "on_periods",
    "quiet_periods",
    "_periods_to_gain",
    "_boundaries_to_gain",
    "waiting_gain",
    "on_complete",
    "token_value",
    "slowdown_of",
)


#: The methods the engine's general loop calls on a token policy at its wakes, or that those
#: call on the table path: where a class keeps every one as :class:`TokenScheduler` has it, the
#: engine calls their compiled steps (``prema_core.TokenHooks``) directly.
DIRECT_METHODS: tuple[str, ...] = (
    "select",
    "pick",
    "on_complete",
    "on_period",
    "on_periods",
    "quiet_periods",
    "_run_k",
)


def round_down_to_level(tokens: float, levels: Sequence[float]) -> float:
    """The largest level ``<= tokens`` (``tokens`` itself if it is below every level)."""
    below = [lv for lv in levels if lv <= tokens]
    return max(below) if below else tokens


def cumulative_gain(waited_s: float, periods: int, period_s: float, estimated_s: float) -> float:
    """Cumulative-rule token gain (in units of ``priority``) of ``periods`` consecutive period
    boundaries at which a job waited throughout: ``sum_{i=1..k} (waited_s + i * period_s) /
    estimated_s`` in closed form, ``(k * waited_s + period_s * k (k + 1) / 2) / estimated_s``.

    ``waited_s`` is its ready-queue time at the boundary before the first of them. An engine
    that skips period ticks while nothing changes can credit the skipped ones with this instead
    of calling :meth:`TokenScheduler.on_period` once per tick (the linear rule needs no such
    help: its gain is the slowdown at the latest boundary).
    """
    if periods <= 0:
        return 0.0
    if estimated_s <= 0:
        return float("inf")
    k = float(periods)
    return (k * waited_s + period_s * k * (k + 1.0) / 2.0) / estimated_s


_OVERRIDES: dict[tuple[type, tuple[str, ...]], bool] = {}


def overrides(cls: type, names: tuple[str, ...]) -> bool:
    """Whether class ``cls`` defines any of ``names`` other than :class:`TokenScheduler` does
    (compared as stored on the classes, so static and class methods compare by identity).
    Cached per class: a class's methods are fixed once it is defined, and the engine asks at
    every period boundary."""
    key = (cls, names)
    hit = _OVERRIDES.get(key)
    if hit is None:
        from inspect import getattr_static

        hit = _OVERRIDES[key] = any(
            getattr_static(cls, m) is not getattr_static(TokenScheduler, m) for m in names
        )
    return hit


class TokenScheduler(TemporalPolicyBase, Component):
    """Token bookkeeping shared by PREMA and TOKEN (Algorithm 2 lines 1-9).

    Subclasses choose the final task among the candidates (:meth:`choose`).

    Args:
        period_s: scheduling period in seconds (Table II: 0.25 ms).
        token_levels: the priority levels thresholds are rounded down to (Table II: 1/3/9).
        threshold: ``">="`` (default, see the module docstring) or ``">"`` (as printed).
        include_running: whether the running task is part of the ready queue for tokens,
            threshold and candidates.
        tokens: ``"linear"`` (default) or ``"cumulative"``: the reading of line 7 (module
            docstring).
    """

    name = "token-base"
    preemptive = False

    def __init__(
        self,
        period_s: float = PERIOD_S,
        token_levels: tuple[int, ...] = TOKEN_LEVELS,
        threshold: str = ">=",
        include_running: bool = True,
        tokens: str = "linear",
    ) -> None:
        self.period_s = period_s
        self.token_levels = token_levels
        self.threshold = threshold
        self.include_running = include_running
        self.tokens = tokens

    def validate(self) -> None:
        check_seconds(self.name, "period_s", self.period_s)
        levels = self.token_levels
        if (
            not isinstance(levels, tuple | list)
            or not levels
            or not all(isinstance(v, int | float) and not isinstance(v, bool) for v in levels)
            or not all(a < b for a, b in pairwise(levels))
            or levels[0] <= 0
        ):
            raise ParameterError(self.name, "token_levels", levels, "increasing positive numbers")
        if self.threshold not in THRESHOLD_OPS:
            raise ParameterError(self.name, "threshold", self.threshold, ", ".join(THRESHOLD_OPS))
        if not isinstance(self.include_running, bool):
            raise ParameterError(
                self.name, "include_running", self.include_running, "a boolean (true, false)"
            )
        if self.tokens not in TOKEN_RULES:
            raise ParameterError(self.name, "tokens", self.tokens, ", ".join(TOKEN_RULES))

    # --- per-run state ------------------------------------------------------------------
    def reset(self) -> None:
        self.validate()
        #: Per dispatched job, the token gain so far in units of ``priority`` (tokens are
        #: ``priority x (1 + gain)``). ``"linear"``: its ready-queue seconds credited at its last
        #: period boundary over its estimate; ``"cumulative"``: the sum over period boundaries of
        #: its ready-queue seconds so far over its estimate. The only per-job state.
        self.gain_: dict[int, float] = {}
        #: The general loop's token table for this run (:meth:`ready_hooks`), else ``None``.
        self.table_: TokenTable | None = None
        #: Per job of the table (by dispatch index), its view, and each view's index by ``id``.
        self.jobs_: list[JobView | None] = []
        self.index_: dict[int, int] = {}
        #: The run's compiled hooks on the table (:meth:`ready_hooks`), else ``None``.
        self.hooks_: TokenHooks | None = None

    # --- the token table (Algorithm 2 written once) -----------------------------------------
    #: Whether the engine keeps Algorithm 2 in the token table (:meth:`general_table`,
    #: :meth:`ready_hooks`) where the ready order holds. ``False`` (on an instance) keeps the
    #: scan over job views (:meth:`candidates`, :meth:`on_period`, ...): the reference the
    #: tests hold the table to.
    level_table: bool = True
    table_: TokenTable | None = None
    hooks_: TokenHooks | None = None

    def token_table(
        self,
        priorities: Sequence[int],
        arrivals_s: Sequence[float],
        ids: Sequence[int],
        est: list[float],
        exe: list[float],
    ) -> TokenTable:
        """Algorithm 2's token table (:func:`~npusched.policies.temporal.levels.token_table`)
        for a run's requests in dispatch order (index ``k``: a job's place in it), given as
        columns: their priorities, arrival times (seconds; a longer list is read only at its
        first ``len(priorities)`` places) and ids, with the lists of their estimates and work
        done (seconds) that the caller keeps current (lists are kept, not copied)."""
        return token_table(self, priorities, arrivals_s, ids, est, exe)

    def ready_hooks(
        self, requests: Sequence[Any]
    ) -> tuple[Callable[[int, JobView, float], None], Callable[[int, JobView, float], None]] | None:
        """The engine's general loop asks once per run, after :meth:`reset`, with the run's
        requests in dispatch order (see :func:`~npusched.policies.contract.ready_hooks`).
        Where this class's ready order holds (:func:`~npusched.policies.contract.declared_order`:
        the built-in Algorithm 2) and :attr:`level_table` is true, the policy keeps the token
        table and answers the hooks the engine then calls: ``enter(k, job, now)`` when job ``k``
        enters the ready queue (dispatch, or back after a preemption) and ``leave(k, job,
        now)`` when it leaves it to start; :meth:`on_period`, :meth:`on_periods`,
        :meth:`quiet_periods` and :meth:`pick` read the table then (O(levels log n) per tick
        under the default rule), not the queue. Otherwise ``None``: the scan over job views."""
        self.table_ = None
        self.hooks_ = None
        if not self.level_table or declared_order(self) not in (
            "tokens-remaining",
            "tokens-arrival",
        ):
            return None
        n = len(requests)
        tbl = self.token_table(
            [r.priority for r in requests],
            [r.arrival_s for r in requests],
            [r.id for r in requests],
            [0.0] * n,
            [0.0] * n,
        )
        jobs: list[JobView | None] = [None] * n
        index: dict[int, int] = {}
        # The steps on the table are compiled (``prema_core``); the engine calls the hooks'
        # methods directly where it is given this object's ``enter`` and ``leave``: only
        # where the methods it would otherwise call are this class's (a class that declares
        # its own ready order may redefine them).
        hooks = TokenHooks(tbl, jobs, index, self._state())
        self.table_ = tbl
        self.jobs_ = jobs
        self.index_ = index
        self.hooks_ = hooks
        if not overrides(type(self), DIRECT_METHODS):
            return hooks.enter, hooks.leave
        h_enter, h_leave = hooks.enter, hooks.leave

        def enter(k: int, job: JobView, now: float) -> None:
            h_enter(k, job, now)

        def leave(k: int, job: JobView, now: float) -> None:
            h_leave(k, job, now)

        return enter, leave

    def general_table(
        self,
        priorities: Sequence[int],
        arrivals_s: Sequence[float],
        ids: Sequence[int],
        est: list[float],
        exe: list[float],
    ) -> TokenTable | None:
        """The token table the engine's general loop keeps for a run itself (the arguments as
        :meth:`token_table`'s), or ``None``. Given where this class's ready order holds
        (:func:`~npusched.policies.contract.declared_order`: the built-in Algorithm 2),
        :attr:`level_table` is true and the policy keeps, on its class and the instance, every
        method the engine's own steps on the table stand for (:data:`DIRECT_METHODS`) and the
        ones that make and hand over the table (``ready_hooks``, ``token_table``, this one):
        the engine then calls the table's steps by dispatch index, with no view, no hook and
        no request made (since the twenty-sixth round; before, it called :meth:`ready_hooks`'
        compiled hooks). ``None`` otherwise: the engine asks :meth:`ready_hooks` and calls
        :meth:`select` with views."""
        if not self.level_table or declared_order(self) not in (
            "tokens-remaining",
            "tokens-arrival",
        ):
            return None
        from inspect import getattr_static

        for m in (*DIRECT_METHODS, "ready_hooks", "token_table", "general_table"):
            if not keeps_method(self, m, getattr_static(TokenScheduler, m)):
                return None
        return self.token_table(priorities, arrivals_s, ids, est, exe)

    def _run_k(self, running: JobView | None) -> int:
        """The table's index of the running job (-1 for none)."""
        return -1 if running is None else self.index_[id(running)]

    def _state(self) -> dict[int, float]:
        if not hasattr(self, "gain_"):
            self.reset()
        return self.gain_

    def on_complete(self, job: JobView, now: float) -> None:
        self._state().pop(job.id, None)

    #: ``quiet_periods``' "never" (more boundaries than any run has).
    never_periods: int = _NEVER
    #: Algorithm 2's threshold: the largest level ``<= tokens`` (the token table's too).
    round_down = staticmethod(round_down_to_level)

    @property
    def token_period_s(self) -> float:
        """The period ``p`` of the token rule (seconds): ``period_s``, or Table II's 0.25 ms."""
        return float(self.period_s or PERIOD_S)

    #: The methods that define the token rule (Algorithm 2 lines 3, 6-7): a subclass that
    #: overrides one of them has its own rule, which the closed forms of the period skipping
    #: (:meth:`quiet_periods`, :meth:`on_periods`) cannot know.
    RULE_METHODS: tuple[str, ...] = (
        "tokens_of",
        "on_period",
        "slowdown",
        "token_value",
        "slowdown_of",
        "waiting_gain",
    )

    def own_rule(self) -> bool:
        """Whether this policy's class overrides the token rule (:data:`RULE_METHODS`) without
        also giving its own :meth:`quiet_periods`: then every period boundary is a tick (the
        engine skips none), and :meth:`candidates` reads the tokens through :meth:`tokens_of`."""
        cls = type(self)
        if cls.quiet_periods is not TokenScheduler.quiet_periods:
            return False
        return overrides(cls, self.RULE_METHODS)

    @property
    def ticks_every_period(self) -> bool:
        """The engine's cue (``Simulator(skip_periods=...)``): skip no period boundary, because
        :meth:`on_periods` cannot credit skipped ones under a subclass's own token rule."""
        return self.own_rule()

    def token_list(self, jobs: Sequence[JobView]) -> list[float]:
        """:meth:`tokens_of` of each of ``jobs``: the one place the candidate search, the
        threshold and the period skipping read tokens (inlined for the built-in rule)."""
        if type(self).tokens_of is not TokenScheduler.tokens_of:
            return [self.tokens_of(j) for j in jobs]
        get = self._state().get
        value = self.token_value
        return [value(j.priority, get(j.id, 0.0)) for j in jobs]

    @staticmethod
    def token_value(priority: float, gain: float) -> float:
        """Algorithm 2's tokens of a task of ``priority`` that gained ``gain`` (in units of its
        priority): ``priority x (1 + gain)``, its priority while it gained nothing. The one
        place the formula is written is :func:`~npusched.policies.temporal.levels.token_value`
        (the token table calls it; :meth:`tokens_of`, :meth:`token_list` through this)."""
        return _token_value(float(priority), gain)

    #: Slowdown_normalized (Algorithm 2 line 6): ``slowdown_of(waited_s, estimated_s)``, the
    #: ready-queue seconds over the estimated isolated seconds (0 before any wait; infinite for
    #: a zero estimate). The one place the formula is written:
    #: :func:`~npusched.policies.temporal.levels.slowdown_of` (:meth:`slowdown`, the period
    #: credits and the token table all call it).
    slowdown_of = staticmethod(slowdown_of)

    @classmethod
    def waiting_gain(
        cls, waited_s: float, since_s: float, boundary_s: float, estimated_s: float
    ) -> float:
        """The linear rule's gain of a waiting job at the period boundary ``boundary_s``
        (seconds): its slowdown with ``waited_s + (boundary_s - since_s)`` ready-queue seconds
        (``waited_s`` before its current stay, which began at ``since_s``). A function of the
        boundary and the stay alone, not of the wake that credits it, so every path (a tick at
        each boundary, skipped boundaries credited later, the engine's token table) gets the
        same bits. The one place it is written: the period credits, :meth:`quiet_periods` and
        the token table all call it (or, in :meth:`_boundaries_to_gain`, its inline copy)."""
        return cls.slowdown_of(waited_s + (boundary_s - since_s), estimated_s)

    def tokens_of(self, job: JobView) -> float:
        """Current tokens of ``job``: ``priority x (1 + gain)`` (its priority if it never
        gained at a period boundary or was never seen dispatching)."""
        return self.token_value(job.priority, self._state().get(job.id, 0.0))

    @classmethod
    def slowdown(cls, job: JobView) -> float:
        """Slowdown_normalized so far: ready-queue seconds over the estimated isolated time."""
        return cls.slowdown_of(job.waited_s, job.estimated_s)

    def on_period(self, view: SchedulerView) -> None:
        """Algorithm 2 lines 6-7 (``tokens += priority x slowdown``), in the configured reading.

        ``"linear"``: the gain is the slowdown accrued up to now (each period adds this period's
        share; the running job is credited too, for waiting it did before it started between
        two periods). ``"cumulative"``: every task of the ReadyQueue (:meth:`queue`) adds its
        slowdown so far.
        """
        hooks = self.hooks_
        if hooks is not None and hooks.table is self.table_:
            hooks.on_period(view.now, view.running)
            return
        gain = self._state()
        if self.tokens == "linear":
            now = view.now
            if overrides(type(self), ("slowdown",)):  # a subclass's own slowdown of a view
                for job in view.ready:
                    gain[job.id] = self.slowdown(job)
            else:  # the boundary the tick stands for (``k x period``), not the wake's time
                p = self.token_period_s
                b = round(now / p) * p
                waiting_gain = self.waiting_gain
                for job in view.ready:
                    w, since = wait_stay(job, now)
                    gain[job.id] = waiting_gain(w, since, b, job.estimated_s)
            if view.running is not None:
                gain[view.running.id] = self.slowdown(view.running)
            return
        for job in self.queue(view):
            gain[job.id] = gain.get(job.id, 0.0) + self.slowdown(job)

    # --- period skipping (the engine asks; see Simulator(skip_periods=...)) -----------------
    def on_periods(self, view: SchedulerView, first_s: float, count: int) -> None:
        """Credit ``count`` period boundaries at ``first_s``, ``first_s + period_s``, ... (all
        before ``view.now``) at once, exactly as ``count`` calls of :meth:`on_period` at those
        times would: nothing changed between them, so a waiting job had waited ``waited_s -
        (now - b)`` at boundary ``b`` and the running job ``waited_s``."""
        hooks = self.hooks_
        if hooks is not None and hooks.table is self.table_:
            hooks.on_periods(view.now, first_s, count, view.running)
            return
        gain = self._state()
        now = view.now
        p = float(self.period_s or PERIOD_S)
        running = view.running
        if self.tokens == "linear":
            # The last boundary, ``k x period`` as the engine schedules it (its index from
            # ``first_s``): the tokens a tick there would have given.
            last = (round(first_s / p) + count - 1) * p
            waiting_gain = self.waiting_gain
            for job in view.ready:
                w, since = wait_stay(job, now)
                gain[job.id] = waiting_gain(w, since, last, job.estimated_s)
            if running is not None:
                gain[running.id] = self.slowdown(running)
            return
        # cumulative: sum over the boundaries b_i = first + i p of waited(b_i) / estimated
        span = count * (now - first_s) - p * count * (count - 1) / 2.0  # sum of (now - b_i)
        get = gain.get
        slowdown_of = self.slowdown_of
        for job in view.ready:
            total = count * job.waited_s - span
            if total > 0.0:
                jid = job.id
                gain[jid] = get(jid, 0.0) + slowdown_of(total, job.estimated_s)
        if running is not None and self.include_running:
            w = running.waited_s
            if w > 0.0:
                rid = running.id
                gain[rid] = get(rid, 0.0) + count * slowdown_of(w, running.estimated_s)

    @classmethod
    def _slowdown_at(cls, job: JobView, waited_s: float) -> float:
        return cls.slowdown_of(waited_s, job.estimated_s)

    def quiet_periods(self, view: SchedulerView, first_s: float) -> int:
        """How many of the next period boundaries (``first_s``, the first after ``view.now``,
        and the ones after it) cannot change this policy's decision if nothing else happens:
        the engine skips them and credits them later through :meth:`on_periods`.

        Between events the candidate set changes only when some task's tokens reach a priority
        level (the threshold is a level, and tokens only grow); the choice within an unchanged
        set cannot change (waiting tasks' estimates are fixed, the running one only gets
        closer to done, and Algorithm 3's DRAIN answer only gets firmer), and it changes only
        when a task's tokens reach the threshold (it joins the candidates) or a level above it
        (the threshold rises); reaching a level below the threshold changes nothing. So this is
        the number of boundaries before the first one at which any task's tokens could reach
        the threshold or a level above it, whichever is the next level above its current tokens
        (with a 1e-9 relative margin, so rounding can only make it tick early). A non-preemptive policy never changes a running task at a tick.
        """
        if self.own_rule():
            return 0  # a subclass's token rule: tick at every boundary
        hooks = self.hooks_
        if hooks is not None and hooks.table is self.table_:
            return hooks.quiet(view.now, first_s, view.running)
        running = view.running
        if running is not None and not self.preemptive:
            return _NEVER
        if running is None or self.threshold == ">":
            return 0
        now = view.now
        p = float(self.period_s or PERIOD_S)
        best = _NEVER
        gain = self._state()
        get = gain.get
        levels = self.token_levels
        cumulative = self.tokens == "cumulative"
        ahead = first_s - now
        n0 = round(first_s / p)  # the first boundary's index
        jobs = list(view.ready)
        if self.include_running:
            jobs.append(running)
        gs = [get(j.id, 0.0) for j in jobs]
        toks = self.token_list(jobs)
        # Levels below the threshold are irrelevant: a task reaching one stays out of the
        # candidates, and the threshold (a level) changes only when a task reaches a higher one.
        thr = round_down_to_level(max(toks), levels)
        for job, g, tok in zip(jobs, gs, toks, strict=True):
            top = tok * (1.0 + 1e-12)
            if top >= levels[-1]:
                continue  # no level above its tokens
            prio = float(job.priority)
            for lv in levels:
                if lv <= top or lv < thr:
                    continue
                need = lv * (1.0 - 1e-9) / prio - 1.0  # gain that reaches the level
                waiting = job is not running
                if waiting and not cumulative:
                    w, since = wait_stay(job, now)
                    k = self._boundaries_to_gain(need, w, since, n0, p, job.estimated_s)
                else:
                    w = job.waited_s + ahead if waiting else job.waited_s
                    k = self._periods_to_gain(g, need, w, p, job.estimated_s, waiting, cumulative)
                if k < best:
                    best = k
                break  # the next level up is reached first
        return max(best - 1, 0)

    #: The linear rule's waiting job: the smallest ``k >= 1`` such that its gain at the
    #: boundary of index ``n0 + k - 1`` reaches ``need``
    #: (:func:`~npusched.policies.temporal.levels.boundaries_to_gain`, written there once).
    _boundaries_to_gain = staticmethod(boundaries_to_gain)
    #: The smallest number ``k >= 1`` of boundaries after which the gain reaches ``need``
    #: (:func:`~npusched.policies.temporal.levels.periods_to_gain`, written there once).
    _periods_to_gain = staticmethod(periods_to_gain)

    # --- Algorithm 2 lines 9-10 -----------------------------------------------------------
    def queue(self, view: SchedulerView) -> list[JobView]:
        """The ReadyQueue of Algorithm 2 (waiting jobs, plus the running one if included)."""
        jobs = list(view.ready)
        if view.running is not None and self.include_running:
            jobs.append(view.running)
        return jobs

    def threshold_of(self, jobs: Sequence[JobView]) -> float:
        """The largest token count among ``jobs`` rounded down to a priority level."""
        return round_down_to_level(max(self.token_list(jobs)), self.token_levels)

    def candidates(self, jobs: Sequence[JobView]) -> list[JobView]:
        """Tasks whose tokens pass the threshold (``>=``; or ``>`` with a ``>=`` fallback), in
        the order of ``jobs``. One pass: each task's tokens are read once
        (:meth:`token_list`, so a subclass's :meth:`tokens_of` is honoured), the threshold is
        :meth:`threshold_of` of them."""
        if not jobs:
            return []
        toks = self.token_list(jobs)
        thr = round_down_to_level(max(toks), self.token_levels)
        eps = 1e-12 * max(thr, 1.0)  # token sums are floats; levels are exact
        if self.threshold == ">":
            cut = thr + eps
            strict = [j for j, t in zip(jobs, toks, strict=True) if t > cut]
            if strict:
                return strict
        cut = thr - eps
        return [j for j, t in zip(jobs, toks, strict=True) if t >= cut]

    def choose(self, candidates: Sequence[JobView], running: JobView | None) -> JobView | None:
        raise NotImplementedError  # pragma: no cover - subclasses

    def pick(self, view: SchedulerView) -> JobView | None:
        """The task Algorithm 2 returns for ``view`` (``None`` if nothing is dispatched)."""
        hooks = self.hooks_
        if hooks is not None and hooks.table is self.table_:
            return hooks.pick(view.now, view.running)
        return self.choose(self.candidates(self.queue(view)), view.running)

    def select(self, view: SchedulerView) -> Decision:
        if view.running is not None and not self.preemptive:
            return KEEP  # no need to run Algorithm 2: the array is not reassigned
        mode = getattr(self, "mechanism", "checkpoint")
        return decide(view, self.pick(view), preemptive=self.preemptive, mode=mode)


class NPPrema(TokenScheduler):
    """Non-preemptive PREMA: Algorithm 2 picks the next task whenever the array is idle."""

    name = "NP-PREMA"
    preemptive = False
    #: Algorithm 2, the shortest estimated remaining candidate first, kept by the engine
    #: (:func:`~npusched.policies.contract.declared_order`) while these methods are this class's.
    ready_order = "tokens-remaining"
    ready_order_methods = ("choose", *ALGORITHM_2_METHODS)

    def choose(self, candidates: Sequence[JobView], running: JobView | None) -> JobView | None:
        """Algorithm 2 line 10: the shortest estimated remaining job among the candidates."""
        return shortest_remaining(candidates, running)


class PreemptiveTokenScheduler(TokenScheduler):
    """The preemptive variant of a token scheduler (P-PREMA, P-TOKEN): the same parameters plus
    ``mechanism``. Put it first among the bases, before the non-preemptive class.

    Args:
        mechanism: ``"checkpoint"`` (default), ``"kill"``, ``"dynamic"`` (Algorithm 3) or
            ``"dynamic-kill"``.
        period_s, token_levels, threshold, include_running, tokens: see :class:`TokenScheduler`.
    """

    preemptive = True

    def __init__(
        self,
        mechanism: str = "checkpoint",
        period_s: float = PERIOD_S,
        token_levels: tuple[int, ...] = TOKEN_LEVELS,
        threshold: str = ">=",
        include_running: bool = True,
        tokens: str = "linear",
    ) -> None:
        super().__init__(period_s, token_levels, threshold, include_running, tokens)
        self.mechanism = mechanism

    def validate(self) -> None:
        check_mode(self.mechanism, self.name)
        super().validate()


class PPrema(PreemptiveTokenScheduler, NPPrema):
    """Preemptive PREMA (Algorithm 2 + a preemption mechanism; ``"dynamic"`` = Algorithm 3).

    Parameters: see :class:`PreemptiveTokenScheduler`.
    """

    name = "P-PREMA"
