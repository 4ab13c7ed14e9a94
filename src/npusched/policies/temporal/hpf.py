"""Highest priority first (PREMA Sec. III-B and IV-D: NP-HPF and P-HPF)."""

from __future__ import annotations

import operator
from functools import partial
from typing import Any

from npusched.policies.temporal.mechanism import RankedPolicy


class HPF(RankedPolicy):
    """Run the ready job with the highest ``priority`` (ties: earliest dispatched).

    Args:
        preemptive: ``P-HPF`` when true: a ready job of strictly higher priority than the running
            one preempts it with ``mechanism``; ``NP-HPF`` when false (the running job always
            finishes).
        mechanism: the preemption mechanism of P-HPF: ``"checkpoint"``, ``"kill"`` or
            ``"drain"``, or ``"dynamic"`` / ``"dynamic-kill"`` (Algorithm 3 with CHECKPOINT /
            KILL; Fig. 12 and 15).
    """

    family = "HPF"
    rank_key = operator.attrgetter("priority")
    # ``max`` keeps the first of equal keys and the ready queue is in dispatch order.
    pick_best = partial(max, key=rank_key)
    better = staticmethod(operator.gt)  # strictly higher priority

    @staticmethod
    def queue_key(job: Any) -> int:
        """Highest priority first (ties: dispatch order)."""
        return -int(job.priority)

    queue_key_reads = rank_key_reads = ("priority",)

    def __init__(self, preemptive: bool = True, mechanism: str = "checkpoint") -> None:
        self.preemptive = preemptive
        self.mechanism = mechanism
