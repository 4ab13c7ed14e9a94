"""Highest priority first (PREMA Sec. III-B and IV-D: NP-HPF and P-HPF)."""

from __future__ import annotations

from operator import attrgetter

from npusched.base import Component
from npusched.policies.base import POLICIES, TemporalPolicyBase
from npusched.policies.temporal.fcfs import _mechanism
from npusched.sim.types import KEEP, Decision, SchedulerView

_priority = attrgetter("priority")  # C-level key: select runs at every decision


class HPF(TemporalPolicyBase, Component):
    """Run the ready job with the highest ``priority`` (ties: earliest dispatched).

    Args:
        preemptive: ``P-HPF`` when true: a ready job of strictly higher priority than the running
            one preempts it with ``mechanism``; ``NP-HPF`` when false (the running job always
            finishes).
        mechanism: the static preemption mechanism of P-HPF: ``"checkpoint"``, ``"kill"`` or
            ``"drain"``.
    """

    period_s: float | None = None

    def __init__(self, preemptive: bool = True, mechanism: str = "checkpoint") -> None:
        self.preemptive = preemptive
        self.mechanism = mechanism

    @property
    def name(self) -> str:  # type: ignore[override]
        return "P-HPF" if self.preemptive else "NP-HPF"

    def reset(self) -> None:
        self.mechanism_ = _mechanism(self.name, self.mechanism)

    def select(self, view: SchedulerView) -> Decision:
        ready = view.ready
        if not ready:
            return KEEP
        # ``max`` keeps the first of equal keys and the ready queue is in dispatch order.
        best = max(ready, key=_priority)
        running = view.running
        if running is None:
            return Decision(best)
        if self.preemptive and best.priority > running.priority:
            return Decision(best, self.mechanism_)
        return KEEP


@POLICIES.register("NP-HPF")
def _np_hpf(mechanism: str = "checkpoint") -> HPF:
    return HPF(preemptive=False, mechanism=mechanism)


@POLICIES.register("P-HPF")
def _p_hpf(mechanism: str = "checkpoint") -> HPF:
    return HPF(preemptive=True, mechanism=mechanism)
