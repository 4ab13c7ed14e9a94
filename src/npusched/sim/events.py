"""The engine's fully ordered event queue.

Events are ordered by ``(time, priority, seq)``: time in seconds, then a small integer priority
(lower first) that fixes the order of different event kinds at one instant, then ``seq`` from a
per-queue counter (``EventQueue.next_seq``: 0, 1, 2, ...) so that equal keys keep their
insertion order. No two entries ever compare equal on the key, so the payload is never compared
and the order is fully deterministic.
"""

from __future__ import annotations

import heapq
from types import FunctionType
from typing import Any, Final

from mypy_extensions import i64

from npusched.errors import SimulationError

#: Two event times closer than this (seconds) are the same instant; a time more than this
#: before the clock is a causality error. 1 ps is far below any modelled latency (one cycle at
#: 1 GHz is 1 ns) and far above float64 rounding of times up to ~10^3 s (~1e-13 s).
TIME_TOL_S: Final = 1e-12

# Event kinds, in the order they are handled at one instant (also their queue priority). Each
# kind has one handler in the engine (``_Run.handlers``).
COMPLETE: Final = 0  # a job reached the end of its plan
BOUNDARY: Final = 1  # a job reached an exit point or a step a policy asked it to stop at
STOP: Final = 2  # a job being preempted or re-allocated reached its preemption point
SAVE_DONE: Final = 3  # a checkpoint save finished, the job's units are free
ARRIVAL: Final = 4  # a request is dispatched (a dependent request released)
TIMER: Final = 5  # a timer a policy asked for
PERIOD: Final = 6  # the policy's scheduling period expired

KIND_NAMES = {
    COMPLETE: "completion",
    BOUNDARY: "boundary",
    STOP: "stop",
    SAVE_DONE: "preempted",
    ARRIVAL: "arrival",
    TIMER: "timer",
    PERIOD: "period",
}

Event = tuple[float, int, int, Any, int]
"""``(time_s, kind, seq, job, epoch)``; ``epoch`` invalidates events of a job that moved on."""


# The queue's heap compiled: ``heapq``'s algorithm (``heappush`` = append and ``_siftdown``;
# ``heappop`` = pop the last, ``_siftup`` from the root to a leaf by the smaller child, ties to
# the right child, then ``_siftdown``) written out on the same list of the same tuples, as the
# token table's heaps are (``policies/temporal/levels.py``), so the heap holds the same entries
# in the same places whichever functions push and pop (the tick's ``heapreplace`` and the
# rarer pushes keep ``heapq``'s). ``_elt`` is the tuples' ``<`` written out on the fields that
# decide it: the time, then the kind, then ``seq``, which is unique, so the payload is never
# reached. Where both times are ``float`` (always, but for a timer a policy asked for at an
# ``int`` time) they are compared as C doubles compiled (an event time is never nan: the
# engine's times are finite sums); otherwise, and for the kinds and sequence numbers where
# they are not both ``int``, the fields' own ``!=`` and ``<``, the ones the tuple comparison
# makes. Compiled, a push or pop is a native call and a step two field reads and a C
# comparison, where ``heapq``'s C functions were generic calls and a ``tuplerichcompare`` per
# step (a ``PyObject_RichCompareBool`` for the time's ``==``, then its ``<``). Interpreted,
# ``heapq``'s C functions are faster, and the engine takes them (:data:`TYPED_HEAP`).


def _elt(a: tuple[Any, ...], b: tuple[Any, ...]) -> bool:
    """``a < b`` for two events, as the tuples compare."""
    x = a[0]
    y = b[0]
    if type(x) is float and type(y) is float:
        fx: float = x
        fy: float = y
        if fx != fy:
            return fx < fy
    elif x != y:
        return bool(x < y)
    k = a[1]
    j = b[1]
    if type(k) is int and type(j) is int:
        ik: int = k
        ij: int = j
        if ik != ij:
            return ik < ij
    elif k != j:
        return bool(k < j)
    s = a[2]
    r = b[2]
    if type(s) is int and type(r) is int:
        i_s: int = s
        i_r: int = r
        return i_s < i_r
    return bool(s < r)


def _esift_down(heap: list[Any], startpos: i64, pos: i64) -> None:
    """``heapq._siftdown`` on a heap of events. The new entry's time is read and, where it is a
    ``float``, unboxed once for the whole walk: a step whose parent's time is a different
    ``float`` is decided on the two C doubles (the ``<`` :func:`_elt` returns there), any other
    by :func:`_elt` (twenty-third round: compiled, one native call and two unboxings a step
    before)."""
    newitem: tuple[Any, ...] = heap[pos]
    x = newitem[0]
    fast = type(x) is float
    fx: float = x if fast else 0.0
    while pos > startpos:
        parentpos = (pos - 1) >> 1
        parent: tuple[Any, ...] = heap[parentpos]
        y = parent[0]
        if fast and type(y) is float:
            fy: float = y
            lt = fx < fy if fx != fy else _elt(newitem, parent)
        else:
            lt = _elt(newitem, parent)
        if not lt:
            break
        heap[pos] = parent
        pos = parentpos
    heap[pos] = newitem


def epush(heap: list[Any], item: tuple[Any, ...]) -> None:
    """``heapq.heappush`` on a heap of events."""
    heap.append(item)
    _esift_down(heap, 0, len(heap) - 1)


def _esift_up(heap: list[Any], pos: i64) -> None:
    """``heapq._siftup`` on a heap of events: the entry at ``pos`` moved down to a leaf along
    the smaller children, then up to its place (:func:`_esift_down`)."""
    endpos: i64 = len(heap)
    startpos = pos
    newitem = heap[pos]
    child: i64 = 2 * pos + 1
    while child < endpos:
        right = child + 1
        if right < endpos:
            # ``not _elt(heap[child], heap[right])``, decided on the C doubles where both
            # times are different ``float``s (as in :func:`_esift_down`)
            a: tuple[Any, ...] = heap[child]
            b: tuple[Any, ...] = heap[right]
            ta = a[0]
            tb = b[0]
            if type(ta) is float and type(tb) is float:
                fa: float = ta
                fb: float = tb
                lt = fa < fb if fa != fb else _elt(a, b)
            else:
                lt = _elt(a, b)
            if not lt:
                child = right
        heap[pos] = heap[child]
        pos = child
        child = 2 * pos + 1
    heap[pos] = newitem
    _esift_down(heap, startpos, pos)


def epop(heap: list[Any]) -> tuple[Any, ...]:
    """``heapq.heappop`` on a heap of events (``heap`` not empty)."""
    last = heap.pop()
    if not heap:
        return last
    top: tuple[Any, ...] = heap[0]
    heap[0] = last
    _esift_up(heap, 0)
    return top


def ereplace(heap: list[Any], item: tuple[Any, ...]) -> tuple[Any, ...]:
    """``heapq.heapreplace`` on a heap of events (``heap`` not empty): the smallest event
    returned, ``item`` put in its place."""
    top: tuple[Any, ...] = heap[0]
    heap[0] = item
    _esift_up(heap, 0)
    return top


def eheapify(heap: list[Any]) -> None:
    """``heapq.heapify`` on a list of events (the same order of sifts, so the same list)."""
    i: i64 = len(heap) // 2 - 1
    while i >= 0:
        _esift_up(heap, i)
        i -= 1


#: The module runs compiled: the engine pushes and pops with :func:`epush` / :func:`epop`
#: (interpreted, with ``heapq``'s C functions).
TYPED_HEAP: Final = not isinstance(epush, FunctionType)


class EventQueue:
    """A heap of :data:`Event` tuples with ``push``/``peek``/``pop``.

    The engine's hot loop reads ``heap`` directly with :mod:`heapq` for speed; everything else
    goes through the methods. ``now`` only moves forward: popping an event more than
    :data:`TIME_TOL_S` before the last popped time raises :class:`SimulationError`.
    """

    __slots__ = ("_seq", "heap", "now")

    def __init__(self) -> None:
        self.heap: list[Event] = []
        self._seq = 0
        self.now = 0.0

    def next_seq(self) -> int:
        """A fresh sequence number per call, 0, 1, 2, ... (for callers pushing onto ``heap``
        directly; ``itertools.count()``'s numbers). A method of the compiled class
        (twenty-third round): the compiled engine's pushes call it natively, where the
        counter's ``__next__`` kept in an attribute was a generic call."""
        n = self._seq
        self._seq = n + 1
        return n

    def __len__(self) -> int:
        return len(self.heap)

    def push(self, time_s: float, kind: int, job: Any = None, epoch: int = 0) -> None:
        """Schedule an event at ``time_s`` seconds (clamped to ``now`` within the tolerance)."""
        if time_s < self.now:
            if time_s < self.now - TIME_TOL_S:
                raise SimulationError(
                    f"event of kind {KIND_NAMES.get(kind, kind)} at t={time_s!r} s is before "
                    f"the clock t={self.now!r} s"
                )
            time_s = self.now
        heapq.heappush(self.heap, (time_s, kind, self.next_seq(), job, epoch))

    def peek(self) -> float:
        """Time of the next event in seconds (``inf`` if empty)."""
        return self.heap[0][0] if self.heap else float("inf")

    def pop(self) -> Event:
        """Remove and return the next event, advancing ``now`` to its time."""
        if not self.heap:
            raise SimulationError("pop from an empty event queue")
        ev = heapq.heappop(self.heap)
        if ev[0] > self.now:
            self.now = ev[0]
        return ev
