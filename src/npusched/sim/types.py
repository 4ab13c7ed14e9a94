"""Types shared by the engine and the policies: mechanisms, the read-only views, decisions."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Protocol

from npusched.hardware.profile import ExecPlan, Profile
from npusched.workloads.request import Request


class Mechanism(StrEnum):
    """Preemption mechanisms (PREMA Sec. IV-C), executed by the engine with modelled costs.

    * ``CHECKPOINT``: the running job stops at the end of its current tile (or layer, with
      layer-granularity preemption); its live output activations are saved at memory bandwidth
      and restored, at the same cost, when it resumes.
    * ``KILL``: the running job stops at once; all its progress is lost (restarts at layer 0).
    * ``DRAIN``: no preemption; the candidate waits until the running job finishes.
    """

    CHECKPOINT = "checkpoint"
    KILL = "kill"
    DRAIN = "drain"


class JobState(StrEnum):
    WAITING = "waiting"  # in the ready queue (never started, or preempted)
    RUNNING = "running"
    PREEMPTING = "preempting"  # stopping at a preemption point / saving its context
    DONE = "done"


class JobView(Protocol):
    """What a policy may read of a job (the engine's ``Job`` satisfies it; do not mutate)."""

    @property
    def id(self) -> int: ...
    @property
    def request(self) -> Request: ...
    @property
    def network(self) -> str: ...
    @property
    def priority(self) -> int: ...
    @property
    def arrival_s(self) -> float: ...
    @property
    def isolated_s(self) -> float:
        """True uninterrupted latency (C_single) in seconds."""
        ...

    @property
    def estimated_s(self) -> float:
        """The predictor's estimate of the isolated latency (Time_estimated), seconds."""
        ...

    @property
    def executed_s(self) -> float:
        """Work completed (seconds of isolated execution), as of the view's ``now``."""
        ...

    @property
    def waited_s(self) -> float:
        """Total time spent in the ready queue so far (seconds), as of the view's ``now``."""
        ...

    @property
    def state(self) -> JobState: ...
    @property
    def preemptions(self) -> int: ...
    @property
    def plan(self) -> ExecPlan: ...


@dataclass(frozen=True)
class SchedulerView:
    """The read-only state a temporal policy decides on.

    Attributes:
        now: simulated time in seconds.
        ready: waiting jobs in dispatch order (ties by id).
        running: the job on the accelerator, if any (``None`` while idle or switching).
        reason: why the scheduler woke: ``"arrival"``, ``"completion"``, ``"period"``,
            ``"preempted"`` (a preemption finished, the array is free).
        profiles: profiles by network name.
    """

    now: float
    ready: Sequence[JobView]
    running: JobView | None
    reason: str
    profiles: Mapping[str, Profile]


@dataclass(frozen=True, slots=True)
class Decision:
    """A temporal policy's answer.

    ``run`` is the job that should hold the accelerator now (``None``: leave it as it is / idle).
    If ``run`` differs from the running job, ``mechanism`` says how to preempt it; the engine
    ignores it on a non-preemptive policy (it behaves as DRAIN).
    """

    run: JobView | None
    mechanism: Mechanism = Mechanism.CHECKPOINT


KEEP = Decision(None, Mechanism.DRAIN)
