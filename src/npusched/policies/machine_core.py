"""A machine policy's :class:`~npusched.policies.contract.Schedule` and
:class:`~npusched.policies.contract.Merge` built in compiled code (thirteenth round).

:func:`npusched.policies.machine.fast_schedule` takes keyword arguments and runs interpreted:
from a compiled decision its call (the keyword dictionary, the interpreted frame, the
``dict.update``) cost several thousand instructions per decision, more than FluidB's whole
decision. :func:`make_schedule` takes every field positionally and fills the new schedule's
``__dict__`` in the fields' order; :func:`make_merge` does the same for a ``Merge``. Both
objects equal the constructors' (where the dataclasses change shape they call the
constructors). The compiled cores (``batching/core.py``, ``spatial/planaria_core.py``,
``mapping/haxconn_core.py``) call them; this module is listed in
``npusched.native.COMPILED_MODULES`` with them.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from dataclasses import fields as dataclass_fields
from sys import getrefcount
from typing import Any, Final, cast
from weakref import getweakrefcount

from npusched.policies.contract import NOTHING, RUN_END, JobView, Mechanism, Merge, Schedule
from npusched.policies.machine import _FAST_SCHEDULE

#: ``Merge`` is a plain frozen dataclass of ``(into, jobs)``: :func:`make_merge` may fill its
#: ``__dict__`` directly (else it calls the constructor).
_FAST_MERGE: Final = (
    tuple(f.name for f in dataclass_fields(Merge)) == ("into", "jobs")
    and "__slots__" not in vars(Merge)
    and "__post_init__" not in vars(Merge)
)

#: ``NOTHING``'s values: a field a decision leaves out shares them (the engine only reads a
#: schedule), as :func:`~npusched.policies.machine.fast_schedule` does.
NO_ASSIGN: Final[Mapping[Any, Any]] = NOTHING.assign
NO_PREEMPT: Final[Sequence[Any]] = NOTHING.preempt
NO_MECHANISM: Final = NOTHING.mechanism
NO_UNTIL: Final[Mapping[Any, int]] = NOTHING.until_step
NO_MERGE: Final[Sequence[Merge]] = NOTHING.merge
NO_TIMERS: Final[Sequence[float]] = NOTHING.timers
NO_RATES: Final[Mapping[Any, float]] = NOTHING.rates

#: ``object.__new__`` and the two classes as ``Final`` names: compiled, a C static each, where
#: ``object.__new__(Schedule)`` written out is a method look-up on ``object`` and two
#: module-dictionary reads per call.
_NEW: Final = object.__new__
_SCHEDULE: Final = Schedule
_MERGE: Final = Merge


class MadeSchedule:
    """The schedule :func:`make_schedule` filled last, and its fields as it wrote them
    (seventeenth round).

    A decision's schedule lives from the policy's ``return`` to the end of the engine's
    ``_apply``: nobody else holds it. So :func:`make_schedule` refills the one it made last
    (writing into its ``__dict__`` only the fields that are not the same objects as before)
    instead of a new object and a new instance dictionary per decision, unless something
    beside this record still refers to it, to its ``__dict__`` or by a weak reference (a policy
    that keeps the schedules it returned, ``vars()`` of one): then that one stays as it was and
    a new one takes its place, as the engine does with its machine view. The fields are kept
    here as native attributes for the identity tests of a refill."""

    def __init__(self) -> None:
        self.sched: Schedule | None = None
        self.d: dict[str, Any] = {}
        #: the references to ``sched`` and ``d`` when only this record held them
        self.refs0 = 0
        self.assign: Mapping[Any, Any] = NO_ASSIGN
        self.preempt: Sequence[Any] = NO_PREEMPT
        self.mechanism: Mechanism = NO_MECHANISM
        self.until_step: Mapping[Any, int] = NO_UNTIL
        self.merge: Sequence[Merge] = NO_MERGE
        self.timers: Sequence[float] = NO_TIMERS
        self.rates: Mapping[Any, float] = NO_RATES


#: One record per thread (``threading.local``): runs are sequential within a thread (a nested
#: run's schedules are made and dropped inside the outer decision), but the ``dask`` backend's
#: local cluster with ``local_processes=False`` runs points in threads of one process, and two
#: threads refilling one record could hand one thread the other's decision. Emptied when a run
#: ends (:func:`release`, in the run's thread).
_LOCAL: Final = threading.local()


def _made() -> MadeSchedule:
    """This thread's record (made on its first use)."""
    m = _LOCAL.__dict__.get("m")
    if m is None:
        m = MadeSchedule()
        _LOCAL.m = m
    return cast(MadeSchedule, m)

#: ``sys.getrefcount`` / ``weakref.getweakrefcount`` as ``Final`` names (C statics compiled).
_GETREFCOUNT: Final = getrefcount
_GETWEAKREFCOUNT: Final = getweakrefcount


def _refs(m: MadeSchedule) -> int:
    """The references to the record's schedule and to its ``__dict__``, as counted from here
    (the same code counts them right after the schedule is made, when only the record holds
    them)."""
    return _GETREFCOUNT(m.sched) + _GETREFCOUNT(m.d)


def _new_schedule(
    m: MadeSchedule,
    assign: Mapping[Any, Any],
    preempt: Sequence[Any],
    mechanism: Mechanism,
    until_step: Mapping[Any, int],
    merge: Sequence[Merge],
    timers: Sequence[float],
    rates: Mapping[Any, float],
) -> None:
    """A new schedule in the record, its ``__dict__`` written whole in the fields' order."""
    sch = _NEW(_SCHEDULE)
    d = sch.__dict__
    d["assign"] = m.assign = assign
    d["preempt"] = m.preempt = preempt
    d["mechanism"] = m.mechanism = mechanism
    d["until_step"] = m.until_step = until_step
    d["merge"] = m.merge = merge
    d["timers"] = m.timers = timers
    d["rates"] = m.rates = rates
    m.sched = sch
    m.d = d


def make_schedule(
    assign: Mapping[Any, Any],
    preempt: Sequence[Any],
    mechanism: Mechanism,
    until_step: Mapping[Any, int],
    merge: Sequence[Merge],
    timers: Sequence[float],
    rates: Mapping[Any, float],
) -> Schedule:
    """``Schedule(assign, preempt, mechanism, until_step, merge, timers, rates)`` without the
    frozen dataclass's per-field ``object.__setattr__`` (pass the ``NO_*`` values for the fields
    a decision leaves as in ``NOTHING``). The last schedule made is refilled where nothing but
    this thread's record refers to it (see :class:`MadeSchedule`): a schedule a policy keeps never
    changes."""
    if not _FAST_SCHEDULE:  # pragma: no cover - only if Schedule changes shape
        return Schedule(assign, preempt, mechanism, until_step, merge, timers, rates)
    m = _made()
    if m.sched is None or _refs(m) != m.refs0 or _GETWEAKREFCOUNT(m.sched):
        _new_schedule(m, assign, preempt, mechanism, until_step, merge, timers, rates)
        m.refs0 = _refs(m)
    else:
        d = m.d
        if assign is not m.assign:
            d["assign"] = m.assign = assign
        if preempt is not m.preempt:
            d["preempt"] = m.preempt = preempt
        if mechanism is not m.mechanism:
            d["mechanism"] = m.mechanism = mechanism
        if until_step is not m.until_step:
            d["until_step"] = m.until_step = until_step
        if merge is not m.merge:
            d["merge"] = m.merge = merge
        if timers is not m.timers:
            d["timers"] = m.timers = timers
        if rates is not m.rates:
            d["rates"] = m.rates = rates
    sch = m.sched
    assert sch is not None
    return sch


def release() -> None:
    """Drop the record's schedule and fields (the engine calls it when a run ends, through
    :data:`~npusched.policies.contract.RUN_END`): nothing of a run outlives it."""
    m = _made()
    m.sched = None
    m.d = {}
    m.assign = NO_ASSIGN
    m.preempt = NO_PREEMPT
    m.mechanism = NO_MECHANISM
    m.until_step = NO_UNTIL
    m.merge = NO_MERGE
    m.timers = NO_TIMERS
    m.rates = NO_RATES


RUN_END.append(release)


def make_merge(into: JobView, jobs: Sequence[JobView]) -> Merge:
    """``Merge(into, jobs)`` without the frozen dataclass's per-field ``object.__setattr__``."""
    if not _FAST_MERGE:  # pragma: no cover - only if Merge changes shape
        return Merge(into, jobs)
    m = _NEW(_MERGE)
    d = m.__dict__
    d["into"] = into
    d["jobs"] = jobs
    return m
