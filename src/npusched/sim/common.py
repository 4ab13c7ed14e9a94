"""What the engine's loop (:mod:`npusched.sim.engine`) shares with the modules around it: the
records it writes (timeline :class:`Segment`, :class:`PowerPiece`; :mod:`npusched.sim.mechanisms`
and :mod:`npusched.metrics.power` read and write them too), its limits and the livelock error,
and the collector pause both the engine and ``run_config`` run under. (Until the twenty-eighth
round the engine had a second loop, ``sim/columns.py``'s column loop, which imported these
too.)"""

from __future__ import annotations

import gc
import math
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, Final, NamedTuple

from librt.vecs import append, vec

from npusched.errors import SimulationError
from npusched.hardware.profile import ExecPlan

__all__ = [
    "NAN_OBJ",
    "PowerColumns",
    "PowerPiece",
    "Segment",
    "collector_paused",
    "futile_preemption",
    "livelock_message",
]

_NAN = math.nan
#: The one ``math.nan`` object the loop's records hold, read at run time: compiled, mypyc
#: folds ``math.nan`` into a float constant boxed anew at each use, and timelines (``==`` holds
#: for the same nan object, not for two: tuples compare items by identity first) would compare
#: unequal. Typed ``Any`` so that a compiled module keeps the object and never unboxes it.
NAN_OBJ: Any = getattr(math, "nan")  # noqa: B009

#: Period ticks in a row with only ticks left and the machine idle before a run raises.
_MAX_IDLE_TICKS: Final = 10_000
#: Preemptions in a row that lose or gain no work (a KILL, or a CHECKPOINT stop before the job
#: computed anything new, e.g. while it was still restoring) with no completion between them:
#: beyond this the run is a livelock (time advances, nothing finishes) and raises.
_MAX_FUTILE_PREEMPTIONS: Final = 10_000
#: Most period ticks one quiet stretch may skip (a bound, not a limit: the next event re-plans).
_QUIET_MAX: Final = 1 << 40


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


class PowerColumns:
    """The power pieces of a run as columns: entry ``i`` of each column is
    :class:`PowerPiece` ``i``'s field of that name, in the order the segments closed.

    The engine appends here (:meth:`add`, one per closed segment that computed) and
    :mod:`npusched.metrics.power` reads the float columns as arrays directly, where a list of
    named tuples had each piece's five floats read back through Python (``numpy.fromiter``
    over a getter per piece: about a fifth of a warm FCFS ``run_config``). The five float
    columns are ``vec[float]`` (``librt.vecs``: packed C doubles, appended unboxed compiled,
    8 bytes a value; NumPy reads them through their buffers without a conversion per value:
    thirty-first round, lists of boxed floats until then); ``plan`` and ``resource`` are
    lists.
    :attr:`npusched.sim.engine.SimResult.power` makes the :class:`PowerPiece` list from these
    columns when it is read (:meth:`pieces`: the same values, the same objects)."""

    __slots__ = ("end_s", "exec0_s", "exec1_s", "plan", "rate", "resource", "start_s")

    def __init__(self) -> None:
        self.start_s: vec[float] = vec[float]()
        self.end_s: vec[float] = vec[float]()
        self.plan: list[Any] = []
        self.exec0_s: vec[float] = vec[float]()
        self.exec1_s: vec[float] = vec[float]()
        self.rate: vec[float] = vec[float]()
        self.resource: list[str] = []

    def add(
        self,
        start_s: float,
        end_s: float,
        plan: Any,
        exec0_s: float,
        exec1_s: float,
        rate: float,
        resource: str,
    ) -> None:
        """Append one piece (the fields of :class:`PowerPiece`, in its order)."""
        self.start_s = append(self.start_s, start_s)
        self.end_s = append(self.end_s, end_s)
        self.plan.append(plan)
        self.exec0_s = append(self.exec0_s, exec0_s)
        self.exec1_s = append(self.exec1_s, exec1_s)
        self.rate = append(self.rate, rate)
        self.resource.append(resource)

    def __len__(self) -> int:
        return len(self.start_s)

    def pieces(self) -> list[PowerPiece]:
        """The pieces as :class:`PowerPiece` entries, in order."""
        return [
            PowerPiece(*f)
            for f in zip(
                self.start_s,
                self.end_s,
                self.plan,
                self.exec0_s,
                self.exec1_s,
                self.rate,
                self.resource,
                strict=True,
            )
        ]

    def only(self, resource: str) -> PowerColumns:
        """The pieces on ``resource``, in order."""
        out = PowerColumns()
        for i, r in enumerate(self.resource):
            if r == resource:
                out.add(
                    self.start_s[i],
                    self.end_s[i],
                    self.plan[i],
                    self.exec0_s[i],
                    self.exec1_s[i],
                    self.rate[i],
                    r,
                )
        return out

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, PowerColumns):
            return NotImplemented
        return self.pieces() == other.pieces()

    def __reduce__(self) -> tuple[Any, ...]:
        return (_power_columns_of, (self.pieces(),))


def _power_columns_of(pieces: list[PowerPiece]) -> PowerColumns:
    """The :class:`PowerColumns` of ``pieces`` (unpickling)."""
    out = PowerColumns()
    for p in pieces:
        out.add(p.start_s, p.end_s, p.plan, p.exec0_s, p.exec1_s, p.rate, p.resource)
    return out


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


def futile_preemption(count: int, policy: object, now: float) -> int:
    """One more preemption in a row that made no progress (a KILL, or a CHECKPOINT stop before
    the job computed anything new), the engine's livelock guard: ``count + 1``, or the livelock
    error past :data:`_MAX_FUTILE_PREEMPTIONS` (the policy's name read only then)."""
    count += 1
    if count > _MAX_FUTILE_PREEMPTIONS:
        name = str(getattr(policy, "name", type(policy).__name__))
        raise SimulationError(livelock_message(name, now))
    return count
