"""The contract's native classes (eighteenth round): the engine's job as both sides read it.

:class:`JobCore` holds what a policy may read of the engine's job (the fields of
:class:`~npusched.policies.contract.JobView` that the engine keeps as attributes, and the
properties computed from them: ``executed_s``, ``waited_s``, ``position``, ``stay``) and the
simulator's :class:`Clock` they are computed against. The engine's job
(:class:`npusched.sim.job.Job`) subclasses it and adds its own bookkeeping. The module is
compiled (``npusched.native.COMPILED_MODULES``, one mypyc group with the engine and the
policies' cores), so a compiled policy core that finds a job to be a ``JobCore``
(``isinstance``, which a user's own job object is not) reads its fields as native attributes
and calls its properties directly, where the ``JobView`` protocol is a generic attribute read
per field (a dictionary look-up on the type, then the slot's descriptor). Other job objects
(test doubles, the real-execution executor's) are read through the protocol as before.

It lives under ``policies`` because ``npusched.policies`` may not import ``npusched.sim``;
:mod:`npusched.policies.contract` re-exports it, the one module of ``policies`` the simulator
imports. The protocols stay in the interpreted ``contract`` (a ``runtime_checkable``
protocol cannot be compiled), and this module imports nothing from it (``contract`` imports
this one): the job's state and allocation are typed as objects here (the contract's
``JobState`` and ``Allocation``), which policies compare by identity or read on.
"""

from __future__ import annotations

import threading
from typing import Any, Final

from npusched.hardware.plan import ExecPlan


class Clock:
    """The simulator's current time in seconds, shared by reference with every live job."""

    __slots__ = ("now",)

    def __init__(self) -> None:
        self.now = 0.0


#: ``JobState.WAITING``, ``RUNNING`` and ``PREEMPTING``, compared by identity in the properties
#: below (set by :mod:`npusched.policies.contract` when it defines ``JobState``: this module
#: cannot import it). ``Final``: compiled, a C static (a module-dictionary look-up otherwise).
_STATES: Final[list[Any]] = []


def set_states(waiting: Any, running: Any, preempting: Any) -> None:
    """The contract's ``JobState.WAITING``, ``RUNNING`` and ``PREEMPTING`` (called once by
    :mod:`npusched.policies.contract`)."""
    _STATES[:] = [waiting, running, preempting]


class JobCore:
    """The engine's job as a policy may read it (see the module's docstring); never made
    alone (the engine makes :class:`npusched.sim.job.Job`, which sets every field).

    Times are seconds; ``executed_s`` is seconds of work on the current plan, not wall time.
    """

    __slots__ = (
        "_clock",
        "_exec",
        "_limit",
        "_t0",
        "_wait_since",
        "_waited",
        "allocation",
        "arrival_s",
        "estimated_s",
        "id",
        "isolated_s",
        "network",
        "plan",
        "preemptions",
        "priority",
        "rate",
        "slo_s",
        "state",
        "units",
    )

    id: int
    network: str
    priority: int
    arrival_s: float
    #: The first request's SLO (``request.slo_s``), kept as the request has it.
    slo_s: Any
    plan: ExecPlan
    #: ``plan.total_s``: seconds of the current plan variant, uninterrupted.
    isolated_s: float
    estimated_s: float
    #: The contract's ``JobState`` (compared by identity).
    state: Any
    preemptions: int
    #: Speed factor of the current segment (1.0: the plan variant's own speed).
    rate: float
    #: The contract's ``Allocation`` the job runs on, or ``None`` while waiting.
    allocation: Any
    #: The units the job holds on its resource (its allocation's ``units``, resolved: ``None``
    #: is the resource's capacity; 0 while it holds none).
    units: int
    _clock: Clock
    _exec: float
    _t0: float
    # Set when the job first starts (the engine sets it before a running read needs it).
    _limit: float
    _waited: float
    _wait_since: float

    @property
    def executed_s(self) -> float:
        """Seconds of work completed as of the simulator clock (excludes restore time)."""
        st = self.state
        if st is _STATES[1] or st is _STATES[2]:
            dt = self._clock.now - self._t0
            if dt > 0.0:
                e = self._exec + self.rate * dt
                lim = self._limit
                return e if e < lim else lim
        return self._exec

    @property
    def waited_s(self) -> float:
        """Seconds spent in the ready queue so far (as of the simulator clock)."""
        if self.state is _STATES[0]:
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


#: The empty list a :class:`ViewFields` holds between decisions (never written to).
NO_JOBS: Final[list[Any]] = []
#: The free units a :class:`ViewFields` holds before its first decision (never written to).
NO_FREE: Final[list[int]] = []


class ViewFields:
    """The engine's machine view's fields as native attributes (eighteenth round).

    The engine keeps one per run beside its machine view and writes it where it refills the
    view (``sim.engine._Run._machine_view``), and hands it to this thread's
    :class:`MadeSchedule` (``view_fields``) before each decision. A compiled policy core whose
    view is the record's ``view`` reads the fields here (native attributes, typed) instead of
    through the interpreted ``MachineView`` (a generic attribute read per field); any other
    view (a test's own, a view the policy kept from an earlier decision) is read as before.
    ``running`` and ``preempting`` are :data:`NO_JOBS` between decisions (the engine counts the
    references to its lists to refill them), and the record is dropped when a run ends.
    ``free`` is every resource's free units in machine order (the order of ``resources``),
    the same numbers as the resource views' ``free``: a core reads a resource's free units
    with a native list read where ``resources[name].free`` is a mapping look-up and a generic
    attribute read (nineteenth round). It is the engine's list, shared by every decision with
    the same free units: read only."""

    def __init__(self) -> None:
        #: the view whose fields these are (the engine's current one)
        self.view: Any = None
        self.now = 0.0
        self.ready: list[Any] = NO_JOBS
        self.running: list[Any] = NO_JOBS
        self.preempting: list[Any] = NO_JOBS
        self.resources: Any = None
        self.free: list[int] = NO_FREE
        self.reason = ""
        self.profiles: Any = None


class MadeSchedule:
    """The schedule ``policies.machine_core.make_schedule`` filled last, and its fields as it
    wrote them (seventeenth round; here since the eighteenth, so that the engine reads them).

    A decision's schedule lives from the policy's ``return`` to the end of the engine's
    ``_apply``: nobody else holds it. So ``make_schedule`` refills the one it made last
    (writing into its ``__dict__`` only the fields that are not the same objects as before)
    instead of a new object and a new instance dictionary per decision, unless something
    beside this record still refers to it, to its ``__dict__`` or by a weak reference (a policy
    that keeps the schedules it returned, ``vars()`` of one): then that one stays as it was and
    a new one takes its place, as the engine does with its machine view. The fields are kept
    here as native attributes, for the identity tests of a refill and for the engine: where
    the schedule a policy returns is this record's ``sched``, ``_apply`` reads the fields here
    (typed, compiled) instead of from the schedule's ``__dict__``. Typed as objects: the
    contract's ``Schedule``, ``Mechanism`` and ``Merge`` live above this module. ``None`` where
    no schedule is held (the fields of a new schedule are all written)."""

    def __init__(self) -> None:
        self.sched: Any = None
        self.d: dict[str, Any] = {}
        #: the references to ``sched`` and ``d`` when only this record held them
        self.refs0 = 0
        self.assign: Any = None
        self.preempt: Any = None
        self.mechanism: Any = None
        self.until_step: Any = None
        self.merge: Any = None
        self.timers: Any = None
        self.rates: Any = None
        #: The fields of the machine view of the decision under way (set by the engine before
        #: it calls the policy; ``None`` between runs).
        self.view_fields: ViewFields | None = None


#: One record per thread (``threading.local``): runs are sequential within a thread (a nested
#: run's schedules are made and dropped inside the outer decision), but the ``dask`` backend's
#: local cluster with ``local_processes=False`` runs points in threads of one process, and two
#: threads refilling one record could hand one thread the other's decision. Emptied when a run
#: ends (``machine_core.release``, in the run's thread).
_LOCAL: Final = threading.local()


class _LastMade:
    """The thread that called :func:`made_schedule` last and its record, as one pair (one
    attribute written at once: a thread switch between two writes cannot pair one thread's
    identity with another's record)."""

    def __init__(self) -> None:
        self.pair: tuple[int, MadeSchedule] | None = None


#: :func:`made_schedule`'s last answer (twentieth round). ``threading.local``'s ``__dict__``
#: is a generic attribute read on the local object and a dictionary look-up (about 390
#: instructions compiled, once per decision of every compiled machine core); the thread's
#: identity is a C call and an integer comparison. Identities are unique among live threads;
#: a thread that starts after one that ended may get its identity, and then its record: the
#: ended thread no longer uses it (a record serves one thread at a time), and once another
#: thread has called, the new one gets a record of its own from ``_LOCAL``. Either way every
#: reader reads the record it is handed: the engine reads a schedule's fields from the record
#: only where the schedule is that record's, and a core reads the view's fields from it only
#: where they are the view's (``view_fields.view is view``), else both read the objects.
_LAST: Final = _LastMade()
_GET_IDENT: Final = threading.get_ident


def made_schedule() -> MadeSchedule:
    """This thread's :class:`MadeSchedule` (made on its first use). The engine reads it once
    per run (its decisions are made in the run's thread), ``make_schedule`` once per call."""
    tid: int = _GET_IDENT()
    last = _LAST.pair
    if last is not None and last[0] == tid:
        return last[1]
    m = _LOCAL.__dict__.get("m")
    if m is None:
        m = MadeSchedule()
        _LOCAL.m = m
    assert isinstance(m, MadeSchedule)
    _LAST.pair = (tid, m)
    return m
