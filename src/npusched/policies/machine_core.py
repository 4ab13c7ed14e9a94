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

from collections.abc import Mapping, Sequence
from dataclasses import fields as dataclass_fields
from sys import getrefcount
from typing import Any, Final
from weakref import getweakrefcount

from npusched.policies.contract import (
    NOTHING,
    RUN_END,
    JobView,
    MadeSchedule,
    Mechanism,
    Merge,
    Schedule,
    made_schedule,
)
from npusched.policies.machine import _FAST_SCHEDULE as _FAST_SCHEDULE_MACHINE

#: ``machine._FAST_SCHEDULE`` as a ``Final`` name of this module: compiled, a C static, where
#: a name imported from an interpreted module is a module-dictionary look-up per read (once
#: per ``refill_schedule``; twentieth round).
_FAST_SCHEDULE: Final = _FAST_SCHEDULE_MACHINE

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


#: This thread's record (:func:`~npusched.policies.contract.made_schedule`; made on first use).
_made: Final = made_schedule

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
    sch: Schedule = _NEW(_SCHEDULE)
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
    """:func:`refill_schedule` on this thread's record."""
    return refill_schedule(
        made_schedule(), assign, preempt, mechanism, until_step, merge, timers, rates
    )


def refill_schedule(
    m: MadeSchedule,
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
    changes. ``m`` is this thread's record (:func:`~npusched.policies.contract.made_schedule`:
    a core that read it at the decision's start for the view's fields passes it)."""
    if not _FAST_SCHEDULE:  # pragma: no cover - only if Schedule changes shape
        return Schedule(assign, preempt, mechanism, until_step, merge, timers, rates)
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
    sch: Schedule = m.sched
    return sch


def release() -> None:
    """Drop the record's schedule and fields (the engine calls it when a run ends, through
    :data:`~npusched.policies.contract.RUN_END`): nothing of a run outlives it."""
    m = made_schedule()
    m.sched = None
    m.d = {}
    m.assign = NO_ASSIGN
    m.preempt = NO_PREEMPT
    m.mechanism = NO_MECHANISM
    m.until_step = NO_UNTIL
    m.merge = NO_MERGE
    m.timers = NO_TIMERS
    m.rates = NO_RATES
    m.view_fields = None


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
