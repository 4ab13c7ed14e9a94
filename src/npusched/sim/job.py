"""The engine's job: a request in flight, i.e. a position in its execution plan plus a rate.

A job's progress is never advanced step by step. While it holds the array,

    executed_s(now) = min(executed_at_t0 + rate * (now - t0), limit)

where ``t0`` is when its current execution segment started computing (after any checkpoint
restore) and ``limit`` is where it will stop (the plan's total, or the preemption point it is
heading to). The engine sets these fields at decision points only; a policy reads
:attr:`Job.executed_s` and :attr:`Job.waited_s` as of the simulator clock.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right

from npusched.hardware.profile import ExecPlan, Profile
from npusched.sim.events import TIME_TOL_S
from npusched.sim.types import JobState
from npusched.workloads.request import Request

WAITING = JobState.WAITING
RUNNING = JobState.RUNNING
PREEMPTING = JobState.PREEMPTING
DONE = JobState.DONE


class PlanTables:
    """Python-list copies of an :class:`ExecPlan`'s prefix sums and checkpoint bytes.

    Bisecting a list is several times faster than ``numpy.searchsorted`` on a scalar, and the
    engine does it at every preemption; one instance is shared by all jobs with the same plan.
    """

    __slots__ = ("ckpt", "cum", "isolated_s", "plan", "profile", "steps")

    def __init__(self, profile: Profile, plan: ExecPlan) -> None:
        self.profile = profile
        self.plan = plan
        self.cum: list[float] = plan.cum_s.tolist()
        self.ckpt: list[int] = plan.checkpoint_bytes.tolist()
        self.steps = len(self.ckpt)
        self.isolated_s = self.cum[-1]

    def steps_between(self, a: float, b: float) -> int:
        """Plan steps overlapping the work interval ``[a, b)`` (seconds of work)."""
        if a <= 0.0 and b >= self.isolated_s:
            return self.steps
        cum = self.cum
        n = bisect_left(cum, b) - bisect_right(cum, a) + 1
        return n if n > 0 else 0

    def snap_to_step_end(self, executed_s: float) -> float:
        """``executed_s``, or the step end within :data:`TIME_TOL_S` of it (seconds of work).

        A position reached by ``executed_at_t0 + rate * (now - t0)`` can miss a step end by a
        few ulps; a job stopped there has finished that step (its outputs are what a
        checkpoint saves) and has not started the next one.
        """
        cum = self.cum
        i = bisect_left(cum, executed_s)
        if i < len(cum) and cum[i] - executed_s <= TIME_TOL_S:
            return cum[i]
        if i > 0 and executed_s - cum[i - 1] <= TIME_TOL_S:
            return cum[i - 1]
        return executed_s

    def next_layer_boundary(self, executed_s: float) -> float:
        """Same as :meth:`ExecPlan.next_layer_boundary`: the first step end >= ``executed_s``."""
        cum = self.cum
        i = bisect_left(cum, executed_s)
        return cum[i] if i < len(cum) else cum[-1]

    def checkpoint_bytes_at(self, executed_s: float) -> int:
        """Same as :meth:`ExecPlan.checkpoint_bytes_at` (bytes saved when stopping there)."""
        if executed_s <= 0.0:
            return 0
        cum = self.cum
        s = bisect_right(cum, executed_s) - 1
        if s >= self.steps:
            return 0
        if executed_s == cum[s] and s > 0:
            s -= 1  # stopped exactly at a step end: the finished step's outputs are live
        return self.ckpt[s]


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
        "tables",
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
        tables: PlanTables,
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
        self.tables = tables
        self.profile = tables.profile
        self.plan = tables.plan
        self.isolated_s = tables.isolated_s
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
