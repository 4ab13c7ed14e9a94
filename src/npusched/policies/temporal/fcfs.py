"""First-come first-served (PREMA Sec. III-B baseline, NP-FCFS)."""

from __future__ import annotations

from npusched.base import Component
from npusched.errors import ConfigError
from npusched.policies.base import POLICIES, TemporalPolicyBase
from npusched.sim.types import KEEP, Decision, Mechanism, SchedulerView

_MECHANISMS = tuple(m.value for m in Mechanism)


def _mechanism(policy: str, value: object) -> Mechanism:
    """Validate a ``mechanism`` parameter (``"checkpoint"``, ``"kill"`` or ``"drain"``)."""
    try:
        return Mechanism(str(value).lower())
    except ValueError:
        raise ConfigError(
            f"{policy}: mechanism={value!r}; allowed: {', '.join(_MECHANISMS)}"
        ) from None


class FCFS(TemporalPolicyBase, Component):
    """Run the earliest-dispatched ready job (ties by request id).

    Args:
        preemptive: registered as ``P-FCFS`` when true. Under FCFS the running job is always the
            earliest-dispatched unfinished one, so the preemptive variant never actually preempts;
            it exists as the preemptive baseline.
        mechanism: mechanism requested if a preemption were ever needed (``"checkpoint"``,
            ``"kill"`` or ``"drain"``).
    """

    period_s: float | None = None

    def __init__(self, preemptive: bool = False, mechanism: str = "checkpoint") -> None:
        self.preemptive = preemptive
        self.mechanism = mechanism

    @property
    def name(self) -> str:  # type: ignore[override]
        return "P-FCFS" if self.preemptive else "NP-FCFS"

    def reset(self) -> None:
        self.mechanism_ = _mechanism(self.name, self.mechanism)

    def select(self, view: SchedulerView) -> Decision:
        ready = view.ready
        if not ready:
            return KEEP
        first = ready[0]  # the ready queue is in dispatch order
        running = view.running
        if running is None:
            return Decision(first)
        if self.preemptive and (first.arrival_s, first.id) < (running.arrival_s, running.id):
            return Decision(first, self.mechanism_)
        return KEEP


@POLICIES.register("NP-FCFS")
def _np_fcfs(mechanism: str = "checkpoint") -> FCFS:
    return FCFS(preemptive=False, mechanism=mechanism)


@POLICIES.register("P-FCFS")
def _p_fcfs(mechanism: str = "checkpoint") -> FCFS:
    return FCFS(preemptive=True, mechanism=mechanism)
