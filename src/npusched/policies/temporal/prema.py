"""PREMA: the predictive token-based multi-task scheduler (PREMA Algorithm 2, Table II).

Every dispatched task holds *tokens*. Exactly as implemented here:

1. **Dispatch** (Algorithm 2 line 3): ``tokens = priority`` (the user-defined priority; PREMA's
   levels low/medium/high are 1/3/9, which are also Table II's initial tokens).
2. **Each scheduling period** (``period_s`` = 0.25 ms, Table II; lines 6-7), every task gains
   ``priority x (waiting time accrued since its previous token update) / estimated isolated
   time``. The normalised slowdown therefore uses the time the task spent *in the ready queue*
   (``JobView.waited_s``, not time spent running) over the predictor's ``Time_estimated`` (the
   scheduler cannot know the true isolated time). Summed over periods this gives, at every
   period boundary, ``tokens = priority x (1 + waited / estimated)``.
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
candidate is estimated to finish sooner. It gains no tokens while it runs (it is not waiting).
``include_running=False`` leaves it out (any candidate then preempts it).

Wake-ups: on dispatch, on completion and on period expiry (the engine honours ``period_s``).
``NP-PREMA`` only picks when the array is idle; ``P-PREMA`` may preempt at any wake-up, with the
mechanism its ``mechanism`` parameter names (``"dynamic"`` is Algorithm 3).
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import pairwise

from npusched.base import Component
from npusched.errors import ParameterError
from npusched.policies.base import POLICIES, TemporalPolicyBase
from npusched.policies.contract import KEEP, Decision, JobView, SchedulerView
from npusched.policies.temporal.mechanism import check_mode, check_seconds, decide
from npusched.policies.temporal.sjf import shortest_remaining

#: Table II: the scheduling period (seconds).
PERIOD_S = 0.25e-3
#: Table II: tokens per user-defined priority level (low, medium, high).
TOKEN_LEVELS: tuple[int, ...] = (1, 3, 9)
THRESHOLD_OPS = (">=", ">")


def round_down_to_level(tokens: float, levels: Sequence[float]) -> float:
    """The largest level ``<= tokens`` (``tokens`` itself if it is below every level)."""
    below = [lv for lv in levels if lv <= tokens]
    return max(below) if below else tokens


class TokenScheduler(TemporalPolicyBase, Component):
    """Token bookkeeping shared by PREMA and TOKEN (Algorithm 2 lines 1-9).

    Subclasses choose the final task among the candidates (:meth:`choose`).

    Args:
        period_s: scheduling period in seconds (Table II: 0.25 ms).
        token_levels: the priority levels thresholds are rounded down to (Table II: 1/3/9).
        threshold: ``">="`` (default, see the module docstring) or ``">"`` (as printed).
        include_running: whether the running task is part of the ready queue for tokens,
            threshold and candidates.
    """

    name = "token-base"
    preemptive = False

    def __init__(
        self,
        period_s: float = PERIOD_S,
        token_levels: tuple[int, ...] = TOKEN_LEVELS,
        threshold: str = ">=",
        include_running: bool = True,
    ) -> None:
        self.period_s = period_s
        self.token_levels = token_levels
        self.threshold = threshold
        self.include_running = include_running

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

    # --- per-run state ------------------------------------------------------------------
    def reset(self) -> None:
        self.validate()
        #: Ready-queue seconds of each dispatched job credited at its last period boundary: its
        #: tokens are ``priority x (1 + credited / estimated)`` (the sum of lines 6-7's
        #: per-period gains), so this is the only per-job state.
        self.credited_: dict[int, float] = {}

    def _state(self) -> dict[int, float]:
        if not hasattr(self, "credited_"):
            self.reset()
        return self.credited_

    def on_complete(self, job: JobView, now: float) -> None:
        self._state().pop(job.id, None)

    def tokens_of(self, job: JobView) -> float:
        """Current tokens of ``job``: ``priority x (1 + credited waiting / estimated)`` (its
        priority if it never waited at a period boundary or was never seen dispatching)."""
        credited = self._state().get(job.id, 0.0)
        if credited <= 0.0:
            return float(job.priority)
        slowdown = credited / job.estimated_s if job.estimated_s > 0 else float("inf")
        return job.priority * (1.0 + slowdown)

    def on_period(self, view: SchedulerView) -> None:
        """Algorithm 2 lines 6-7: ``tokens += priority x waited_this_period / estimated``, i.e.
        credit each job's waiting up to now (the running job's too: waiting it did before it
        started between two periods)."""
        credited = self._state()
        for job in view.ready:
            credited[job.id] = job.waited_s
        if view.running is not None:
            credited[view.running.id] = view.running.waited_s

    # --- Algorithm 2 lines 9-10 -----------------------------------------------------------
    def queue(self, view: SchedulerView) -> list[JobView]:
        """The ReadyQueue of Algorithm 2 (waiting jobs, plus the running one if included)."""
        jobs = list(view.ready)
        if view.running is not None and self.include_running:
            jobs.append(view.running)
        return jobs

    def threshold_of(self, jobs: Sequence[JobView]) -> float:
        """The largest token count among ``jobs`` rounded down to a priority level."""
        return round_down_to_level(max(self.tokens_of(j) for j in jobs), self.token_levels)

    def candidates(self, jobs: Sequence[JobView]) -> list[JobView]:
        """Tasks whose tokens pass the threshold (``>=``; or ``>`` with a ``>=`` fallback)."""
        if not jobs:
            return []
        thr = self.threshold_of(jobs)
        eps = 1e-12 * max(thr, 1.0)  # token sums are floats; levels are exact
        if self.threshold == ">":
            strict = [j for j in jobs if self.tokens_of(j) > thr + eps]
            if strict:
                return strict
        return [j for j in jobs if self.tokens_of(j) >= thr - eps]

    def choose(self, candidates: Sequence[JobView], running: JobView | None) -> JobView | None:
        raise NotImplementedError  # pragma: no cover - subclasses

    def pick(self, view: SchedulerView) -> JobView | None:
        """The task Algorithm 2 returns for ``view`` (``None`` if nothing is dispatched)."""
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

    def choose(self, candidates: Sequence[JobView], running: JobView | None) -> JobView | None:
        """Algorithm 2 line 10: the shortest estimated remaining job among the candidates."""
        return shortest_remaining(candidates, running)


class PreemptiveTokenScheduler(TokenScheduler):
    """The preemptive variant of a token scheduler (P-PREMA, P-TOKEN): the same parameters plus
    ``mechanism``. Put it first among the bases, before the non-preemptive class.

    Args:
        mechanism: ``"checkpoint"`` (default), ``"kill"``, ``"dynamic"`` (Algorithm 3) or
            ``"dynamic-kill"``.
        period_s, token_levels, threshold, include_running: see :class:`TokenScheduler`.
    """

    preemptive = True

    def __init__(
        self,
        mechanism: str = "checkpoint",
        period_s: float = PERIOD_S,
        token_levels: tuple[int, ...] = TOKEN_LEVELS,
        threshold: str = ">=",
        include_running: bool = True,
    ) -> None:
        super().__init__(period_s, token_levels, threshold, include_running)
        self.mechanism = mechanism

    def validate(self) -> None:
        check_mode(self.mechanism, self.name)
        super().validate()


class PPrema(PreemptiveTokenScheduler, NPPrema):
    """Preemptive PREMA (Algorithm 2 + a preemption mechanism; ``"dynamic"`` = Algorithm 3).

    Parameters: see :class:`PreemptiveTokenScheduler`.
    """

    name = "P-PREMA"


POLICIES.register("NP-PREMA", NPPrema)
POLICIES.register("P-PREMA", PPrema)
