"""What the engine's two loops share (:mod:`npusched.sim.engine`'s general loop and
:mod:`npusched.sim.columns`' column loop): the records they write (timeline :class:`Segment`,
:class:`PowerPiece`), their limits and the livelock error. Both import it, so neither imports
the other for them; and the collector pause both the engine and ``run_config`` run under."""

from __future__ import annotations

import gc
import math
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, NamedTuple

from npusched.hardware.profile import ExecPlan

__all__ = ["NAN_OBJ", "PowerPiece", "Segment", "collector_paused", "livelock_message"]

_NAN = math.nan
#: The one ``math.nan`` object every loop's records hold, read at run time: compiled, mypyc
#: folds ``math.nan`` into a float constant boxed anew at each use, and timelines (``==`` holds
#: for the same nan object, not for two: tuples compare items by identity first) would compare
#: unequal. Typed ``Any`` so that a compiled module keeps the object and never unboxes it.
NAN_OBJ: Any = getattr(math, "nan")  # noqa: B009

#: Period ticks in a row with only ticks left and the machine idle before a run raises.
_MAX_IDLE_TICKS = 10_000
#: Preemptions in a row that lose or gain no work (a KILL, or a CHECKPOINT stop before the job
#: computed anything new, e.g. while it was still restoring) with no completion between them:
#: beyond this the run is a livelock (time advances, nothing finishes) and raises.
_MAX_FUTILE_PREEMPTIONS = 10_000
#: Most period ticks one quiet stretch may skip (a bound, not a limit: the next event re-plans).
_QUIET_MAX = 1 << 40


class Segment(NamedTuple):
    """A timeline entry: ``job_id`` (the job's first request id) held ``units`` of ``resource``
    from ``start_s`` to ``end_s`` doing ``kind`` (``run`` / ``restore`` / ``save`` /
    ``switch``) at ``frequency_hz`` (the variant's, nan if the plan has none)."""

    job_id: int
    start_s: float
    end_s: float
    kind: str
    resource: str = ""
    units: int = 1
    frequency_hz: float = _NAN


class PowerPiece(NamedTuple):
    """A job computing on ``plan`` from work ``exec0_s`` to ``exec1_s`` (seconds of the plan)
    between ``start_s`` and ``end_s`` at ``rate``, on ``resource``."""

    start_s: float
    end_s: float
    plan: ExecPlan
    exec0_s: float
    exec1_s: float
    rate: float
    resource: str


@contextmanager
def collector_paused() -> Iterator[None]:
    """Hold the cyclic garbage collector off for the block: a run allocates per request and
    per event but makes no reference cycles that outlive it, so a collection would only rescan
    the process's objects (a full pass costs more than a 5,000-request run of a rank order).
    A caller's own ``gc.disable()`` is kept; the collector's state is restored however the
    block ends. Used by ``Simulator.run`` and by ``run_config`` around it."""
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_on:
            gc.enable()


def livelock_message(policy: str, now: float) -> str:
    """The error of a run that preempted :data:`_MAX_FUTILE_PREEMPTIONS` times in a row without
    progress (shared by every loop)."""
    return (
        f"policy {policy!r} preempted {_MAX_FUTILE_PREEMPTIONS} times in a row without any job "
        f"making progress or finishing (t={now!r} s): a livelock of the configuration (e.g. "
        "include_running=false, where any candidate preempts the running job, with KILL or a "
        "restore longer than the period); allowed: a configuration that lets a job finish"
    )
