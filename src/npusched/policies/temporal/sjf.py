"""Shortest-estimated-job-first (PREMA Sec. VI-A, the latency-optimal reference).

The job with the least *estimated remaining* work (``estimated_s - executed_s``, clamped at 0;
see :func:`~npusched.policies.temporal.mechanism.remaining_s`) holds the array. Ties go to the
running job (no needless preemption), then to the earlier arrival, then to the lower id.

* ``NP-SJF`` picks only when the array is idle.
* ``P-SJF`` re-evaluates at every arrival and completion and preempts the running job when a
  waiting job is estimated to finish sooner; ``mechanism`` chooses how (see
  :mod:`~npusched.policies.temporal.mechanism`).

SJF is priority-unaware: it uses the predictor's estimate (``JobView.estimated_s``) only.
"""

from __future__ import annotations

from collections.abc import Iterable

from npusched.base import Component
from npusched.policies.base import TemporalPolicyBase
from npusched.policies.contract import KEEP, Decision, JobView, SchedulerView
from npusched.policies.temporal.mechanism import check_mode, decide


def shortest_remaining(jobs: Iterable[JobView], running: JobView | None = None) -> JobView | None:
    """The job with the least estimated remaining seconds (ties: ``running``, arrival, id).

    Exactly ``min(jobs, key=(remaining_s(j), j is not running, arrival_s, id))`` (the first
    minimal job, ``None`` if there is none), with the key inlined: this runs at every decision.
    """
    run_id = running.id if running is not None else -1
    best: JobView | None = None
    best_key: tuple[float, int, float, int] | None = None
    for j in jobs:
        rem = j.estimated_s - j.executed_s
        if rem < 0.0:  # max(rem, 0.0), as remaining_s
            rem = 0.0
        jid = j.id
        key = (rem, 0 if jid == run_id else 1, j.arrival_s, jid)
        if best_key is None or key < best_key:
            best, best_key = j, key
    return best


class NPSJF(TemporalPolicyBase, Component):
    """Non-preemptive shortest-estimated-job-first."""

    name = "NP-SJF"
    preemptive = False
    #: The ready order this class's ``select`` follows (the engine keeps its ready queue in it:
    #: ``(max(estimated - executed, 0), arrival, id)``).
    ready_order = "remaining"

    def __init__(self) -> None:
        pass

    def select(self, view: SchedulerView) -> Decision:
        if view.running is not None:
            return KEEP
        return decide(view, shortest_remaining(view.ready), preemptive=False, mode="checkpoint")


class PSJF(TemporalPolicyBase, Component):
    """Preemptive shortest-estimated-remaining-job-first.

    Args:
        mechanism: ``"checkpoint"``, ``"kill"``, ``"dynamic"`` (Algorithm 3) or
            ``"dynamic-kill"``.
    """

    name = "P-SJF"
    preemptive = True
    #: As :attr:`NPSJF.ready_order`; the running job keeps the array on ties.
    ready_order = "remaining"

    def __init__(self, mechanism: str = "checkpoint") -> None:
        self.mechanism = mechanism

    def validate(self) -> None:
        check_mode(self.mechanism, self.name)

    def select(self, view: SchedulerView) -> Decision:
        pool = [*view.ready, view.running] if view.running is not None else list(view.ready)
        return decide(
            view, shortest_remaining(pool, view.running), preemptive=True, mode=self.mechanism
        )
