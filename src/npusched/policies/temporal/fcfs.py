"""First-come first-served (PREMA Sec. III-B baseline, NP-FCFS)."""

from __future__ import annotations

import operator
from typing import Any

from npusched.policies.temporal.mechanism import RankedPolicy


class FCFS(RankedPolicy):
    """Run the earliest-dispatched ready job (ties by request id).

    Args:
        preemptive: registered as ``P-FCFS`` when true. Under FCFS the running job is always the
            earliest-dispatched unfinished one, so the preemptive variant never actually preempts;
            it exists as the preemptive baseline.
        mechanism: mechanism requested if a preemption were ever needed (``"checkpoint"``,
            ``"kill"``, ``"drain"``, ``"dynamic"`` or ``"dynamic-kill"``).
    """

    family = "FCFS"
    pick_best = operator.itemgetter(0)  # the ready queue is in dispatch order
    rank_key = operator.attrgetter("arrival_s", "id")
    better = staticmethod(operator.lt)  # dispatched earlier

    @staticmethod
    def queue_key(job: Any) -> int:
        """Dispatch order alone."""
        return 0

    queue_key_reads: tuple[str, ...] = ()

    def __init__(self, preemptive: bool = False, mechanism: str = "checkpoint") -> None:
        self.preemptive = preemptive
        self.mechanism = mechanism
