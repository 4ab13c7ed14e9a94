"""The temporal-policy protocol (its registry, :data:`POLICIES`, is the ``temporal`` kind of
:data:`npusched.policies.registry.REGISTRY`).

A temporal policy decides *which ready job holds the whole accelerator* and, when that means
displacing the running job, *which preemption mechanism* to use. It never advances time and never
mutates jobs; it may keep private per-job state (e.g. PREMA's tokens) keyed by job id, reset in
:meth:`TemporalPolicy.reset`.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

from npusched.policies.contract import Decision, JobView, SchedulerView, no_op_hook
from npusched.policies.registry import POLICIES as POLICIES


@runtime_checkable
class TemporalPolicy(Protocol):
    """Hooks the engine calls, in this order per wake-up: ``on_dispatch`` / ``on_complete`` for
    the events at this instant, then ``on_period`` if a scheduling period expired, then
    ``select``."""

    name: str
    preemptive: bool
    #: Seconds between periodic wake-ups while jobs wait (``None``: wake on events only).
    period_s: float | None

    def validate(self) -> None:
        """Check the constructor parameters; raise a one-line ``ConfigError`` naming the bad
        one and the allowed values. Called by ``reset()`` and when a config is loaded."""
        ...

    def reset(self) -> None:
        """Validate the parameters and forget all per-run state (called by the engine before a
        simulation)."""
        ...

    def on_dispatch(self, job: JobView, now: float) -> None: ...

    def on_complete(self, job: JobView, now: float) -> None: ...

    def on_period(self, view: SchedulerView) -> None: ...

    def select(self, view: SchedulerView) -> Decision: ...


class PolicyBase:
    """No-op hooks shared by both policy kinds (the engine skips hooks left as these)."""

    name: str = "base"
    period_s: float | None = None

    def validate(self) -> None:
        return None

    def reset(self) -> None:
        self.validate()

    @no_op_hook
    def on_dispatch(self, job: JobView, now: float) -> None:
        return None

    @no_op_hook
    def on_complete(self, job: JobView, now: float) -> None:
        return None

    @no_op_hook
    def on_period(self, view: Any) -> None:
        return None


class TemporalPolicyBase(PolicyBase):
    """Convenience base of a temporal policy: no-op hooks; subclasses implement
    :meth:`select`."""

    preemptive: bool = False

    def select(self, view: SchedulerView) -> Decision:  # pragma: no cover - abstract
        raise NotImplementedError
