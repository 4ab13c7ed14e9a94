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
from collections.abc import Callable
from typing import Any, Final

from npusched.hardware.profile import ExecPlan, Profile
from npusched.policies.contract import Allocation, Clock, JobCore, JobState
from npusched.workloads.request import Request

#: The unset start time (a module constant: ``float("nan")`` parses its string per call).
_NAN = math.nan

WAITING: Final = JobState.WAITING
STARTING: Final = JobState.STARTING
RUNNING: Final = JobState.RUNNING
PREEMPTING: Final = JobState.PREEMPTING
DONE: Final = JobState.DONE


class RowRequests:
    """A run's requests by result row, each made on its first read and kept (so a job's
    ``request`` and ``samples`` are the same objects however often they are read).

    ``make(row)`` makes (or, for a list of requests, finds) the request of result row ``row``;
    ``arrivals()`` gives every request's arrival time by result row (what a batch's oldest
    sample is found from without making its requests; made on first use)."""

    __slots__ = ("_arrival", "_made", "arrivals", "make")

    def __init__(
        self, make: Callable[[int], Request], arrivals: Callable[[], list[float]]
    ) -> None:
        self.make = make
        self.arrivals = arrivals
        self._made: dict[int, Request] = {}
        self._arrival: list[float] | None = None

    def arrival_s(self) -> list[float]:
        """Every request's arrival time (seconds) by result row."""
        got = self._arrival
        if got is None:
            got = self._arrival = self.arrivals()
        return got

    def get(self, row: int) -> Request:
        """The request of result row ``row``."""
        r = self._made.get(row)
        if r is None:
            r = self._made[row] = self.make(row)
        return r


class Job(JobCore):
    """One request, or a batch of requests, being simulated (satisfies
    :class:`npusched.policies.contract.JobView`).

    Public attributes are read-only for policies. Times are seconds; ``executed_s`` is seconds
    of work on the current plan, not wall time. The fields a policy reads, and the properties
    computed from them (``executed_s``, ``waited_s``, ``position``, ``stay``), are the
    contract's native base's (:class:`~npusched.policies.contract.JobCore`), so a compiled
    policy core reads them typed; this class adds the engine's bookkeeping.
    """

    __slots__ = (
        "_batch",
        "_epoch",
        "_leaving",
        "_next_alloc",
        "_req",
        "_res",
        "_restore_bytes",
        "_rows",
        "_samples",
        "_save_start",
        "_seg_exec0",
        "_seg_start",
        "_shape",
        "_src",
        "_until",
        "checkpoint_bytes",
        "checkpoint_s",
        "energy_j",
        "first_start_s",
        "order",
        "profile",
        "row",
        "seq_in",
        "seq_out",
        "variant",
        "wasted_s",
    )

    # Set when the job first starts / saves (annotated here since __init__ leaves them unset).
    _seg_start: float
    _seg_exec0: float
    _save_start: float

    def __init__(
        self,
        src: RowRequests,
        request: Request | None,
        rid: int,
        network: str,
        priority: int,
        arrival_s: float,
        batch: int,
        slo_s: Any,
        seq_in: Any,
        seq_out: Any,
        profile: Profile,
        plan: ExecPlan,
        isolated_s: float,
        estimated_s: float,
        order: int,
        row: int,
        clock: Clock,
    ) -> None:
        # The request itself is made on first read of ``request`` / ``samples`` (``src``, by
        # result row), where one is not given: the engine needs only the fields below, read
        # from the workload's columns, and most policies read no request at all.
        self._src = src
        self._req = request
        self.id = rid
        self.network = network
        self.priority = priority
        self.arrival_s = arrival_s
        #: The first request's SLO and sequence lengths (``request.slo_s`` ...), kept typed.
        self.slo_s = slo_s
        self.seq_in = seq_in
        self.seq_out = seq_out
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
        #: The result rows of the requests this job carries (one, or a batch): ``samples``
        #: is their requests (made on first read, ``None`` until then), ``_batch`` the sum of
        #: their batches.
        self._rows: tuple[int, ...] = (row,)
        self._samples: tuple[Request, ...] | None = None if request is None else (request,)
        self._batch = batch
        #: The run's number of the job's request shape ``(profile, batch, seq_in, seq_out)``
        #: (``_Run._plan_for``), -1 until it is looked up (and again when the batch changes).
        self._shape = -1
        self.allocation = None
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
    def request(self) -> Request:
        """The job's first request (made on first read where the run has only columns)."""
        r = self._req
        if r is None:
            r = self._req = self._src.get(self.row)
        return r

    @property
    def samples(self) -> tuple[Request, ...]:
        """Every request (sample) the job carries now, in the order they joined it (made on
        first read; made again, the same objects, after samples join or leave)."""
        s = self._samples
        if s is None:
            get = self._src.get
            s = self._samples = tuple([get(row) for row in self._rows])
        return s

    @property
    def n_samples(self) -> int:
        """``len(samples)``, without making the requests."""
        return len(self._rows)

    @property
    def oldest_arrival_s(self) -> float:
        """The earliest arrival time of the job's samples (``min(r.arrival_s for r in
        samples)``, without making the requests)."""
        rows = self._rows
        if len(rows) == 1 and rows[0] == self.row:
            return self.arrival_s
        arr = self._src.arrival_s()
        best = arr[rows[0]]
        for row in rows:
            a = arr[row]
            if a < best:
                best = a
        return best

    @property
    def request_shape(self) -> tuple[int, Any, Any]:
        """``(batch, seq_in, seq_out)`` of :attr:`request` (without making it while the job
        carries its own request alone)."""
        rows = self._rows
        if len(rows) == 1 and rows[0] == self.row:
            return (self._batch, self.seq_in, self.seq_out)
        return (self.request.batch, self.seq_in, self.seq_out)

    def _set_rows(self, rows: tuple[int, ...], batch: int) -> None:
        """The job now carries the samples of ``rows`` (their batches summing to ``batch``)."""
        self._rows = rows
        self._samples = None
        self._batch = batch
        self._shape = -1

    @property
    def batch(self) -> int:
        """The plan's batch size: the samples the job carries now (a request of batch ``b``
        counts ``b``)."""
        return self._batch

    def __repr__(self) -> str:
        return (
            f"Job(id={self.id}, network={self.network!r}, priority={self.priority}, "
            f"state={self.state.value}, executed_s={self.executed_s:.6g})"
        )
