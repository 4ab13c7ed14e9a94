"""The engine's job: a request in flight, i.e. a position in its execution plan plus a rate.

A job's progress is never advanced step by step. While it holds the array,

    executed_s(now) = min(executed_at_t0 + rate * (now - t0), limit)

where ``t0`` is when its current execution segment started computing (after any checkpoint
restore) and ``limit`` is where it will stop (the plan's total, or the preemption point it is
heading to). The engine sets these fields at decision points only; a policy reads
:attr:`Job.executed_s` and :attr:`Job.waited_s` as of the simulator clock.
"""

from __future__ import annotations

from npusched.hardware.profile import ExecPlan, Profile
from npusched.sim.types import JobState
from npusched.workloads.request import Request

WAITING = JobState.WAITING
RUNNING = JobState.RUNNING
PREEMPTING = JobState.PREEMPTING
DONE = JobState.DONE


class Clock:
    """The simulator's current time in seconds, shared by reference with every live job."""

    __slots__ = ("now",)

    def __init__(self) -> None:
        self.now = 0.0


class Job:
    """One request being simulated (satisfies :class:`npusched.sim.types.JobView`).

    Public attributes are read-only for policies. Times are seconds; ``executed_s`` is seconds
    of isolated execution (work), not wall time.
    """

    __slots__ = (
        "_clock",
        "_epoch",
        "_exec",
        "_limit",
        "_restore_bytes",
        "_save_start",
        "_seg_exec0",
        "_seg_start",
        "_t0",
        "_wait_since",
        "_waited",
        "arrival_s",
        "checkpoint_bytes",
        "checkpoint_s",
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
        "state",
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
        #: ``plan.total_s``, looked up once per distinct plan by the engine.
        self.isolated_s = isolated_s
        self.estimated_s = estimated_s
        #: Dispatch order (position in the arrival sequence; ties of arrival time by id).
        self.order = order
        #: Row of this request in the result columns (rank of its id).
        self.row = row
        self.state = WAITING
        self.preemptions = 0
        #: Work-seconds per second while computing (1.0: the whole array at full speed).
        self.rate = 1.0
        self.first_start_s = float("nan")
        self.checkpoint_bytes = 0
        self.checkpoint_s = 0.0
        self.wasted_s = 0.0
        self._clock = clock
        self._exec = 0.0
        self._t0 = 0.0
        # _limit, _seg_start, _seg_exec0 are set when the job starts, _save_start when it saves.
        self._waited = 0.0
        self._wait_since = clock.now
        self._epoch = 0
        self._restore_bytes = 0

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
    def remaining_s(self) -> float:
        """Seconds of work left at full rate (isolated time minus executed work)."""
        return self.isolated_s - self.executed_s

    def __repr__(self) -> str:
        return (
            f"Job(id={self.id}, network={self.network!r}, priority={self.priority}, "
            f"state={self.state.value}, executed_s={self.executed_s:.6g})"
        )
