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
from typing import Any, Final

from npusched.policies.contract import NOTHING, JobView, Mechanism, Merge, Schedule
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
    a decision leaves as in ``NOTHING``)."""
    if not _FAST_SCHEDULE:  # pragma: no cover - only if Schedule changes shape
        return Schedule(assign, preempt, mechanism, until_step, merge, timers, rates)
    sch = _NEW(_SCHEDULE)
    d = sch.__dict__
    d["assign"] = assign
    d["preempt"] = preempt
    d["mechanism"] = mechanism
    d["until_step"] = until_step
    d["merge"] = merge
    d["timers"] = timers
    d["rates"] = rates
    return sch


def make_merge(into: JobView, jobs: Sequence[JobView]) -> Merge:
    """``Merge(into, jobs)`` without the frozen dataclass's per-field ``object.__setattr__``."""
    if not _FAST_MERGE:  # pragma: no cover - only if Merge changes shape
        return Merge(into, jobs)
    m = _NEW(_MERGE)
    d = m.__dict__
    d["into"] = into
    d["jobs"] = jobs
    return m
