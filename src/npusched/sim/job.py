"""The engine's job: one request (or a batch of samples) in flight, i.e. a position in its
execution plan plus a rate.

A job's progress is never advanced step by step. While it computes,

    executed_s(now) = min(executed_at_t0 + rate * (now - t0), limit)

where ``t0`` is when its current execution segment started computing (after any checkpoint
restore or frequency switch) and ``limit`` is where it will stop (the plan's end, the next exit,
or the preemption point it is heading to). ``executed_s`` is seconds of the *current* plan
variant; the plan-independent progress is :attr:`Job.position` ``(step, fraction)``, which is
what carries over when the job moves to another variant (subarray count, accelerator,
frequency, batch size). The engine sets these fields at decision points only.
"""

from __future__ import annotations

import math
from typing import Any

from npusched.hardware.profile import ExecPlan, Profile
from npusched.policies.contract import Allocation, JobState
from npusched.workloads.request import Request

#: The unset start time (a module constant: ``float("nan")`` parses its string per call).
_NAN = math.nan

WAITING = JobState.WAITING
STARTING = JobState.STARTING
RUNNING = JobState.RUNNING
PREEMPTING = JobState.PREEMPTING
DONE = JobState.DONE


class Clock:
    """The simulator's current time in seconds, shared by reference with every live job."""

    __slots__ = ("now",)

    def __init__(self) -> None:
        self.now = 0.0


class Job:
    """One request, or a batch of requests, being simulated (satisfies
    :class:`npusched.policies.contract.JobView`).

    Public attributes are read-only for policies. Times are seconds; ``executed_s`` is seconds
    of work on the current plan, not wall time.
    """

    __slots__ = (
        "_clock",
        "_epoch",
        "_exec",
        "_leaving",
        "_limit",
        "_next_alloc",
        "_res",
        "_restore_bytes",
        "_rows",
        "_save_start",
        "_seg_exec0",
        "_seg_start",
        "_t0",
        "_until",
        "_wait_since",
        "_waited",
        "allocation",
        "arrival_s",
        "checkpoint_bytes",
        "checkpoint_s",
        "energy_j",
        "estimated_s",
        "first_start_s",
        "id",
        "isolated_s",
        "network",
        "order",
        "plan",
        "preemptions",
        "priority",
        "profile",
        "rate",
        "request",
        "row",
        "samples",
        "state",
        "units",
        "variant",
        "wasted_s",
    )

    # Set when the job first starts / saves (annotated here since __init__ leaves them unset).
    _limit: float
    _seg_start: float
    _seg_exec0: float
    _save_start: float

    def __init__(
        self,
        request: Request,
        profile: Profile,
        plan: ExecPlan,
        isolated_s: float,
        estimated_s: float,
        order: int,
        row: int,
        clock: Clock,
    ) -> None:
        self.request = request
        self.id = request.id
        self.network = request.network
        self.priority = request.priority
        self.arrival_s = request.arrival_s
        self.profile = profile
        self.plan = plan
        #: ``plan.total_s``: seconds of the current plan variant, uninterrupted.
        self.isolated_s = isolated_s
        self.estimated_s = estimated_s
        #: Dispatch order (position in the arrival sequence; ties of arrival time by id).
        self.order = order
        #: Row of this request in the result columns (rank of its id).
        self.row = row
        self.state = WAITING
        self.preemptions = 0
        #: Speed factor of the current segment (1.0: the plan variant's own speed).
        self.rate = 1.0
        self.first_start_s = _NAN
        self.checkpoint_bytes = 0
        self.checkpoint_s = 0.0
        self.wasted_s = 0.0
        self.energy_j = 0.0
        #: The requests this job carries (one, or a batch); ``_rows`` their result rows.
        self.samples: tuple[Request, ...] = (request,)
        self._rows: tuple[int, ...] = (row,)
        self.allocation: Allocation | None = None
        self.units = 0
        self.variant: tuple[tuple[str, Any], ...] = ()
        self._res = -1
        self._clock = clock
        self._exec = 0.0
        self._t0 = 0.0
        self._waited = 0.0
        self._wait_since = clock.now
        self._epoch = 0
        self._restore_bytes = 0
        self._next_alloc: tuple[int, int, tuple[tuple[str, Any], ...], Allocation] | None = None
        self._until = -1
        #: A preemption or re-allocation was asked for but the job finishes first.
        self._leaving = False

    @property
    def executed_s(self) -> float:
        """Seconds of work completed as of the simulator clock (excludes restore time)."""
        st = self.state
        if st is RUNNING or st is PREEMPTING:
            dt = self._clock.now - self._t0
            if dt > 0.0:
                e = self._exec + self.rate * dt
                lim = self._limit
                return e if e < lim else lim
        return self._exec

    @property
    def waited_s(self) -> float:
        """Seconds spent in the ready queue so far (as of the simulator clock)."""
        if self.state is WAITING:
            return self._waited + (self._clock.now - self._wait_since)
        return self._waited

    @property
    def stay(self) -> tuple[float, float]:
        """``(seconds waited before the current stay in the ready queue, when it began)``
        (seconds; meaningful while waiting): :func:`~npusched.policies.contract.wait_stay`."""
        return (self._waited, self._wait_since)

    @property
    def remaining_s(self) -> float:
        """Seconds of work left on the current plan at its own speed."""
        return self.isolated_s - self.executed_s

    @property
    def position(self) -> tuple[int, float]:
        """``(step, fraction of the step done)`` as of the simulator clock."""
        return self.plan.position_at(self.executed_s)

    @property
    def batch(self) -> int:
        """The plan's batch size: the samples the job carries now (a request of batch ``b``
        counts ``b``)."""
        return sum(r.batch for r in self.samples)

    def __repr__(self) -> str:
        return (
            f"Job(id={self.id}, network={self.network!r}, priority={self.priority}, "
            f"state={self.state.value}, executed_s={self.executed_s:.6g})"
        )
