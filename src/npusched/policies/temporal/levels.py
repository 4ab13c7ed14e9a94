"""Algorithm 2's token table: the ready queue's token state, held by the policy and written once.

:func:`token_table` makes it for a token scheduler (PREMA, TOKEN) whose ready order holds
(:func:`~npusched.policies.contract.declared_order`): per job, by its index in dispatch order
``k``, its tokens (``tok``, as :meth:`~.prema.TokenScheduler.token_value` of the gain ``gain``),
its ready-queue seconds before its current stay (``waited``) and that stay's start (``since``),
and the structures that answer Algorithm 2 without a scan of the queue. The engine keeps one
for a run where the policy gives it (:meth:`~.prema.TokenScheduler.general_table`) and calls its
methods directly; otherwise it reaches the table through the policy
(:meth:`~.prema.TokenScheduler.ready_hooks` hears of a job entering and leaving the ready queue;
``on_period``, ``on_periods``, ``quiet_periods`` and ``pick`` then read the table).

Under the linear rule with threshold ``>=`` and every priority at or above the lowest level
(``lazy``, the default) a waiting job's tokens at the period boundary ``b`` are
``priority x (1 + (waited + (b - since)) / estimate)`` (``waiting_gain``: the boundary's and
the stay's alone), so the boundary at which they reach a level is known in advance:

- ``promo``: a heap of ``(boundary index, stay, job)``, the boundary a little before (2e-9
  relative) the job can reach its next level; a credited boundary evaluates only the jobs due;
- ``cnt_x[i]``: waiting jobs whose tokens reached level ``i``; the threshold is the highest level
  with one (or the running job's);
- ``cheap[i]``: the jobs whose tokens pass level ``i``'s candidate cut, in ``choose``'s order;
  the pick is the best of the heads at and above the threshold against the running job;
- ``qheap[i]``: the jobs still below level ``i`` by the exact boundary index at which their gain
  reaches ``quiet_periods``' need for it (``_boundaries_to_gain``, once per stay); the next tick
  that can change a decision is the least valid top at and above the threshold.

A decision then costs O(levels log n). Otherwise (the cumulative rule, threshold ``>``, a
priority below the lowest level) the waiting jobs are a list scanned as
:class:`~.prema.TokenScheduler` does, with, under the cumulative rule and ``>=``, the jobs that
reached the top level in a heap in ``choose``'s order (``sat``). Every float operation is the
scan's (:class:`~.prema.TokenScheduler` over job views), in the same order, so every path gives
the same bits (``tests/test_token_fast_path.py`` compares the engine with this table and with the
scan, and checks runs against the values frozen from the column loop and the general loop, which
agreed before the column loop was deleted in the twenty-eighth round). Times are seconds; ``p``
and ``period`` are the token rule's period in seconds.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Callable, Sequence
from types import FunctionType
from typing import Any, Final

from mypy_extensions import i64

from npusched.policies.contract import declared_order

__all__ = [
    "NEVER_PERIODS",
    "TokenTable",
    "boundaries_to_gain",
    "periods_to_gain",
    "slowdown_of",
    "token_table",
    "token_value",
]

#: ``quiet_periods``' "never" (more boundaries than any run has).
NEVER_PERIODS: Final = 1 << 40
#: The one float a finished job's per-stay values become (:meth:`TokenTable.finished`).
#: (Not ``Final``: compiled, a ``Final`` float is a C double, boxed anew at each write.)
_FREED: Any = float("0")

# ``heapq``'s functions as ``Final`` names: compiled, a name imported with ``from heapq import``
# is a look-up in the module's dictionary at every call; a ``Final`` one is a C static.
heappush: Final = heapq.heappush
heappop: Final = heapq.heappop


def _round(x: float) -> int:
    """``round(x)`` of a finite float: the nearest integer, a half to the even one (Python's
    rule). Compiled, ``round`` is a generic call of ``float.__round__``; this is native
    (``x - floor(x)`` is exact, so the halves are found exactly)."""
    f = math.floor(x)
    d = x - f
    if d > 0.5 or (d == 0.5 and f % 2 == 1):
        return f + 1
    return f


# --- Algorithm 2's formulas (the policy's methods are these functions) ---------------------
def token_value(priority: float, gain: float) -> float:
    """Algorithm 2's tokens of a task of ``priority`` that gained ``gain`` (in units of its
    priority): ``priority x (1 + gain)``, its priority while it gained nothing
    (``TokenScheduler.token_value`` calls it with ``float(priority)``: the same product as an
    integer priority's)."""
    return priority * (1.0 + gain) if gain > 0.0 else priority


def slowdown_of(waited_s: float, estimated_s: float) -> float:
    """Slowdown_normalized (Algorithm 2 line 6): ``waited_s`` ready-queue seconds over the
    estimated isolated seconds (0 before any wait; infinite for a zero estimate). The one
    place the formula is written (``TokenScheduler.slowdown_of`` is this function)."""
    if waited_s <= 0.0:
        return 0.0
    return waited_s / estimated_s if estimated_s > 0.0 else math.inf


def waiting_gain(waited_s: float, since_s: float, boundary_s: float, estimated_s: float) -> float:
    """``TokenScheduler.waiting_gain`` of the built-in rule: the slowdown of a waiting job with
    ``waited_s + (boundary_s - since_s)`` ready-queue seconds at the boundary ``boundary_s``."""
    return slowdown_of(waited_s + (boundary_s - since_s), estimated_s)


def boundaries_to_gain(
    need: float, waited: float, since: float, n0: int, p: float, est: float
) -> int:
    """The linear rule's waiting job: the smallest ``k >= 1`` such that its gain at the
    boundary of index ``n0 + k - 1`` (at ``(n0 + k - 1) x p`` seconds; ``waiting_gain``
    with ready-queue seconds ``waited`` before the stay that began at ``since``) reaches
    ``need`` (``1 << 40`` if never). The gain is non-decreasing in the index (each float
    operation rounds monotonically), so the answer is unique, and it is a function of the
    stay and ``n0`` alone: ``n0 + k - 1``, the boundary the job crosses at, is the same
    whichever wake asks. A closed-form guess corrected by stepping, else a bisection
    (``TokenScheduler._boundaries_to_gain`` is this function)."""
    if est <= 0.0:
        return 1
    never = NEVER_PERIODS
    # ``waiting_gain`` inline: slowdown_of(waited + (b - since), est), 0 for no waiting.
    x = waited + ((n0 + never - 1) * p - since)
    if (x / est if x > 0.0 else 0.0) < need:
        return never
    guess = (need * est - waited + since) / p - n0 + 1.0 if p > 0.0 else 1.0
    if not guess < never:  # also NaN
        k = never
    elif guess <= 1.0:  # also -inf
        k = 1
    else:
        k = math.ceil(guess)
        if k > never:
            k = never
    x = waited + ((n0 + k - 1) * p - since)
    if (x / est if x > 0.0 else 0.0) >= need:
        if k == 1:
            return k
        x = waited + ((n0 + k - 2) * p - since)
        if (x / est if x > 0.0 else 0.0) < need:
            return k
        lo, hi = 1, k - 1
    else:
        x = waited + ((n0 + k) * p - since)
        if (x / est if x > 0.0 else 0.0) >= need:
            return k + 1
        lo, hi = k + 2, never
    while lo < hi:
        mid = (lo + hi) // 2
        x = waited + ((n0 + mid - 1) * p - since)
        if (x / est if x > 0.0 else 0.0) >= need:
            hi = mid
        else:
            lo = mid + 1
    return lo


def _gain_after(mode: int, k: int, g: float, w: float, p: float, est: float) -> float:
    """``periods_to_gain``'s gain after ``k`` boundaries: ``mode`` 0 the cumulative rule's
    waiting job, 1 its running job, 2 the linear rule's waiting job (a module function, not a
    closure: compiled, a native call on unboxed floats)."""
    if mode == 0:
        return g + (k * w + p * k * (k - 1) / 2.0) / est
    if mode == 1:
        return g + k * w / est
    return (w + (k - 1) * p) / est


def periods_to_gain(
    g: float, need: float, w: float, p: float, est: float, waiting: bool, cumulative: bool
) -> int:
    """The smallest number ``k >= 1`` of boundaries after which the gain reaches ``need``
    (``1 << 40`` if never): ``w`` is the task's ready-queue seconds at the first boundary,
    growing by ``p`` per boundary while it waits (``TokenScheduler._periods_to_gain`` is this
    function).

    The gain after ``k`` boundaries, evaluated in floating point exactly as the ticks would
    add it, is non-decreasing in ``k`` (every operation rounds monotonically), so the
    smallest such ``k`` is unique: a closed-form guess (the root of the quadratic or linear
    gain) corrected by stepping to it, the same ``k`` a bisection over ``[1, 1 << 40]``
    finds.
    """
    if est <= 0.0:
        return 1
    never = NEVER_PERIODS
    if cumulative:
        if waiting:
            mode = 0
            # p/2 k^2 + (w - p/2) k - (need - g) est = 0
            c = (need - g) * est
            bq = w - 0.5 * p
            disc = bq * bq + 2.0 * p * c
            guess = (-bq + math.sqrt(disc)) / p if disc > 0.0 and p > 0.0 else 1.0
        else:
            mode = 1
            guess = (need - g) * est / w if w > 0.0 else float(never)
    elif waiting:
        # The linear rule's waiting job. The table asks ``boundaries_to_gain`` for it (a
        # function of the stay alone); this form stays for direct callers.
        mode = 2
        guess = (need * est - w) / p + 1.0 if p > 0.0 else 1.0
    else:
        return 1 if w / est >= need else never
    if _gain_after(mode, never, g, w, p, est) < need:
        return never
    # The answer lies in [lo, hi]; test the guess and its neighbour, bisect if it is off.
    lo, hi = 1, never
    if not guess < never:  # also NaN
        k = never
    elif guess <= 1.0:  # also -inf
        k = 1
    else:
        k = min(math.ceil(guess), never)
    if _gain_after(mode, k, g, w, p, est) >= need:
        if k == 1 or _gain_after(mode, k - 1, g, w, p, est) < need:
            return k
        hi = k - 1
    else:
        if _gain_after(mode, k + 1, g, w, p, est) >= need:
            return k + 1
        lo = k + 2
    while lo < hi:
        mid = (lo + hi) // 2
        if _gain_after(mode, mid, g, w, p, est) >= need:
            hi = mid
        else:
            lo = mid + 1
    return lo


#: An entry of a ``cheap`` heap: ``choose``'s key of a waiting job (``(remaining, arrival, id)``
#: under ``shortest_remaining``, ``(arrival, arrival, id)`` under ``first_come``: the arrival
#: twice orders as ``(arrival, id)`` does), its stay's version and its index.
CheapEntry = tuple[float, float, Any, int, int]
#: An entry of ``promo`` or a ``qheap``: (boundary index, the job's stay, job index).
BoundEntry = tuple[int, int, int]


# The table's heaps compiled: ``heapq``'s algorithm (``heappush`` = append and ``_siftdown``;
# ``heappop`` = pop the last, ``_siftup`` from the root to a leaf by the smaller child, ties to
# the right child, then ``_siftdown``) written out on lists of the same tuples, as the engine's
# ready heaps are (``sim/heaps.py``), their ``<`` the tuples' own written out on the
# typed fields: the first pair of fields that is not equal decides. The fields are ints, the
# job's id (an int) and floats that are never nan (arrivals are finite, a remaining estimate
# is clamped at 0.0), so each field's ``==`` and ``<`` are the ones the tuple comparison makes,
# and the heaps move the same entries to the same places and pop them in the same order as
# ``heapq``. Compiled, a push or pop is a native call and a step two unboxed entries compared
# in C, where ``heapq``'s C functions were generic calls and a ``tuplerichcompare`` per step
# (a ``PyObject_RichCompareBool`` per field): about 2,400 instructions per event of a warm
# TOKEN run went to ``heappush`` / ``heappop`` on these heaps. The heaps are ``list[Any]``:
# the entries themselves are moved, not reboxed (an entry read as a typed tuple and written
# back would be a new tuple), and unboxed only to be compared. Interpreted, ``heapq``'s C
# functions are faster, and the table takes them (``_TYPED_HEAP``).


def _blt(a: BoundEntry, b: BoundEntry) -> bool:
    """``a < b`` as the tuples compare (ints)."""
    if a[0] != b[0]:
        return a[0] < b[0]
    if a[1] != b[1]:
        return a[1] < b[1]
    return a[2] < b[2]


def _bsift_down(heap: list[Any], startpos: i64, pos: i64) -> None:
    """``heapq._siftdown`` on a heap of :data:`BoundEntry`."""
    newitem = heap[pos]
    while pos > startpos:
        parentpos = (pos - 1) >> 1
        parent = heap[parentpos]
        if _blt(newitem, parent):
            heap[pos] = parent
            pos = parentpos
            continue
        break
    heap[pos] = newitem


def _bpush(heap: list[Any], item: object) -> None:
    """``heapq.heappush`` on a heap of :data:`BoundEntry`."""
    heap.append(item)
    _bsift_down(heap, 0, len(heap) - 1)


def _bpop(heap: list[Any]) -> BoundEntry:
    """``heapq.heappop`` on a heap of :data:`BoundEntry` (``heap`` not empty)."""
    last = heap.pop()
    endpos: i64 = len(heap)
    if not endpos:
        return last
    top = heap[0]
    heap[0] = last
    pos: i64 = 0
    child: i64 = 1
    while child < endpos:
        right = child + 1
        if right < endpos and not _blt(heap[child], heap[right]):
            child = right
        heap[pos] = heap[child]
        pos = child
        child = 2 * pos + 1
    heap[pos] = last
    _bsift_down(heap, 0, pos)
    return top


def _clt(a: CheapEntry, b: CheapEntry) -> bool:
    """``a < b`` as the tuples compare (floats never nan, the id, ints)."""
    if a[0] != b[0]:
        return a[0] < b[0]
    if a[1] != b[1]:
        return a[1] < b[1]
    ra: Any = a[2]
    rb: Any = b[2]
    if ra != rb:
        return bool(ra < rb)
    if a[3] != b[3]:
        return a[3] < b[3]
    return a[4] < b[4]


def _csift_down(heap: list[Any], startpos: i64, pos: i64) -> None:
    """``heapq._siftdown`` on a heap of :data:`CheapEntry`."""
    newitem = heap[pos]
    while pos > startpos:
        parentpos = (pos - 1) >> 1
        parent = heap[parentpos]
        if _clt(newitem, parent):
            heap[pos] = parent
            pos = parentpos
            continue
        break
    heap[pos] = newitem


def _cpush(heap: list[Any], item: object) -> None:
    """``heapq.heappush`` on a heap of :data:`CheapEntry`."""
    heap.append(item)
    _csift_down(heap, 0, len(heap) - 1)


def _cpop(heap: list[Any]) -> object:
    """``heapq.heappop`` on a heap of :data:`CheapEntry` (``heap`` not empty)."""
    last = heap.pop()
    endpos: i64 = len(heap)
    if not endpos:
        return last
    top = heap[0]
    heap[0] = last
    pos: i64 = 0
    child: i64 = 1
    while child < endpos:
        right = child + 1
        if right < endpos and not _clt(heap[child], heap[right]):
            child = right
        heap[pos] = heap[child]
        pos = child
        child = 2 * pos + 1
    heap[pos] = last
    _csift_down(heap, 0, pos)
    return top


#: Whether the heaps above are compiled (C functions, not Python ``function`` objects): the
#: table takes them then, and ``heapq``'s C functions when this module runs pure. Both pop the
#: same entries in the same order.
_TYPED_HEAP: Final = not isinstance(_bpush, FunctionType)


class TokenTable:
    """One run's token table (see the module docstring): a class whose state is typed
    attributes, so that compiled its methods are native calls on unboxed floats and ints (the
    engine calls them on its typed ``TokenTable``, ``_Run.tokens``).

    Methods (``k``: a job's index in dispatch order; ``now``, ``first_s``: seconds;
    ``run_k``: the running job's index, -1 for none; ``run_exec``: its work done, seconds):

    - ``enqueue(k, now)``: job ``k`` enters the ready queue (its stay begins at ``now``);
    - ``dequeue(k, now)``: it leaves it and starts (its waiting grows by the stay);
    - ``credit_tick(now, run_k)``: Algorithm 2 lines 6-7 at a period tick (``on_period``);
    - ``credit_periods(now, first_s, count, run_k)``: ``count`` skipped boundaries from
      ``first_s`` at once (``on_periods``);
    - ``pick(now, run_k, run_exec) -> k``: lines 9-10, the chosen job (-1 for none);
    - ``quiet(now, first_s, run_k) -> int``: ``quiet_periods``, the boundaries from ``first_s``
      that cannot change the decision.

    Made by :func:`token_table` (``TokenTable()`` alone is an empty table whose methods must
    not be called, which :func:`token_table` then fills).
    """

    __slots__ = (
        "arr_s",
        "cand_cut",
        "cheap",
        "cnt_x",
        "cred_k",
        "cumulative",
        "est",
        "exe",
        "fprio",
        "gain",
        "incl_run",
        "lazy",
        "levels",
        "levels_t",
        "low",
        "lvl_c",
        "lvl_x",
        "never",
        "nlev",
        "p",
        "period",
        "preemptive",
        "promo",
        "qheap",
        "rid",
        "round_down",
        "rq_best",
        "rq_g",
        "rq_k",
        "rq_t",
        "rq_w",
        "sat",
        "saturating",
        "since",
        "sjf",
        "strict",
        "tok",
        "top_cut",
        "top_level",
        "ver",
        "waited",
        "waiting",
    )

    #: Per job: estimated isolated seconds, work done when it entered the queue (seconds),
    #: token gain (in units of its priority), tokens, ready-queue seconds before its stay and
    #: the stay's start (seconds).
    est: list[float]
    exe: list[float]
    gain: list[float]
    tok: list[float]
    waited: list[float]
    since: list[float]
    #: Whether the waiting jobs are held by token level (see the module docstring).
    lazy: bool
    # Per job: priority (as a float), arrival (seconds) and id (``choose``'s ties).
    fprio: list[float]
    arr_s: list[float]
    rid: list[Any]
    # The rule: the period of ticks and of the token rule ``p`` (seconds), the levels (as
    # floats, and as the policy gives them for ``round_down``), the switches.
    period: float
    p: float
    levels: list[float]
    levels_t: tuple[float, ...]
    nlev: int
    top_level: float
    top_cut: float
    cand_cut: list[float]
    cumulative: bool
    strict: bool
    incl_run: bool
    preemptive: bool
    sjf: bool
    saturating: bool
    never: int
    round_down: Callable[..., Any]
    # The lazy structures (module docstring) and the scanned ones (``low``, ``sat``).
    lvl_c: list[int]
    lvl_x: list[int]
    cnt_x: list[int]
    cheap: list[list[CheapEntry]]
    qheap: list[list[BoundEntry]]
    promo: list[BoundEntry]
    ver: list[int]
    waiting: list[bool]
    low: list[int]
    sat: list[tuple[Any, ...]]
    # The running job whose linear credit was made in its current stay (it depends only on its
    # waiting before it started: made once per stay, the same value every time).
    cred_k: int
    # ``quiet``'s running-job part, kept while its job, threshold index, gain and waiting stay
    # as they were (job -1: none kept).
    rq_k: int
    rq_t: int
    rq_g: float
    rq_w: float
    rq_best: int

    # --- shared -----------------------------------------------------------------------------
    def set_gain(self, k: int, g: float) -> None:
        """Store job ``k``'s gain and its tokens (``token_value``)."""
        self.gain[k] = g
        self.tok[k] = token_value(self.fprio[k], g)

    def sat_key(self, k: int) -> tuple[Any, ...]:
        """Job ``k``'s entry in ``sat``: the waiting-job part of ``choose``'s key."""
        if self.sjf:  # shortest_remaining: (remaining, arrival, id)
            rem = self.est[k] - self.exe[k]
            return (rem if rem > 0.0 else 0.0, self.arr_s[k], self.rid[k], k)
        return (self.arr_s[k], self.rid[k], k)  # first_come: (arrival, id)

    def promo_at(self, k: int, nx: int) -> int:
        """A boundary index at or before the first at which waiting job ``k`` can reach level
        ``nx`` (tokens at boundary ``b``: ``priority x (1 + (waited + b - since) / est)``)."""
        e = self.est[k]
        if e <= 0.0:
            return -1
        b = (
            self.since[k]
            - self.waited[k]
            + (self.levels[nx] * (1.0 - 2e-9) / self.fprio[k] - 1.0) * e
        )
        return math.floor(b / self.period) - 1

    def enqueue(self, k: int, now: float) -> None:
        """Job ``k`` joins the ready queue at ``now`` (a new stay)."""
        self.since[k] = now
        if not self.lazy:
            if self.saturating and self.tok[k] >= self.top_level:
                heappush(self.sat, self.sat_key(k))
            else:
                self.low.append(k)
            return
        self.waiting[k] = True
        v = self.ver[k] + 1  # a new stay: entries of the earlier ones are stale
        self.ver[k] = v
        t = self.tok[k]
        levels = self.levels
        nlev = self.nlev
        cand_cut = self.cand_cut
        # The levels reached (``bisect_right(cuts, t) - 1`` written out: a few levels; NaN
        # tokens reach none).
        c = 0
        while c < nlev and cand_cut[c] <= t:
            c += 1
        c -= 1
        x = 0
        while x < nlev and levels[x] <= t:
            x += 1
        x -= 1
        self.lvl_c[k] = c
        self.lvl_x[k] = x
        self.cnt_x[x] += 1
        # Its ``cheap`` entry: ``choose``'s key of a waiting job, its stay and its index.
        if self.sjf:  # shortest_remaining: (remaining, arrival, id)
            rem = self.est[k] - self.exe[k]
            ce: CheapEntry = (rem if rem > 0.0 else 0.0, self.arr_s[k], self.rid[k], v, k)
        else:  # first_come: (arrival, id)
            a = self.arr_s[k]
            ce = (a, a, self.rid[k], v, k)
        if _TYPED_HEAP:
            _cpush(self.cheap[c], ce)
        else:
            heappush(self.cheap[c], ce)
        if x + 1 < nlev:
            w = self.waited[k]
            e = self.est[k]
            fp = self.fprio[k]
            if e <= 0.0:
                nb = -1
            else:
                b = now - w + (levels[x + 1] * (1.0 - 2e-9) / fp - 1.0) * e
                nb = math.floor(b / self.period) - 1
            if _TYPED_HEAP:
                _bpush(self.promo, (nb, v, k))
            else:
                heappush(self.promo, (nb, v, k))
            top = t * (1.0 + 1e-12)
            p = self.p
            for i in range(x + 1, nlev):
                lv = levels[i]
                if lv > top:
                    # The boundary index at which its gain reaches ``quiet_periods``' need
                    # for this level: a function of the stay alone (``boundaries_to_gain``
                    # from index 0), the same whichever wake asks.
                    need = lv * (1.0 - 1e-9) / fp - 1.0
                    q = boundaries_to_gain(need, w, now, 0, p, e) - 1
                    if _TYPED_HEAP:
                        _bpush(self.qheap[i], (q, v, k))
                    else:
                        heappush(self.qheap[i], (q, v, k))

    def dequeue(self, k: int, now: float) -> None:
        """Job ``k`` leaves the ready queue at ``now`` (it starts)."""
        if self.lazy:
            self.waiting[k] = False
            self.cnt_x[self.lvl_x[k]] -= 1
        elif self.saturating and self.tok[k] >= self.top_level:
            heappop(self.sat)  # ``k`` is its best job
        else:
            self.low.remove(k)
        self.waited[k] += now - self.since[k]
        self.cred_k = -1  # a new stay: its credit is made again

    def finished(self, k: int) -> None:
        """Job ``k`` finished (it completed or left at its early exit): its gain, tokens, time
        waited and the start of its last stay are never read again, so each becomes one
        shared float and its own object is let go. Those are written at every stay of every
        job (compiled, each write a new 32-byte float), so a run kept four floats per finished
        request to its end: about 128 MB at 1e6 P-PREMA requests. Only the jobs in flight keep
        theirs now; no value read changes."""
        z = _FREED  # (read once: a module attribute compiled is a dictionary look-up)
        freed: list[Any] = self.gain  # (objects: the shared float is stored, not boxed anew)
        freed[k] = z
        freed = self.tok
        freed[k] = z
        freed = self.waited
        freed[k] = z
        freed = self.since
        freed[k] = z

    # --- the lazy structures (linear rule, ">=") ----------------------------------------------
    def lazy_credit(self, kb: int) -> None:
        """Credit the boundary of index ``kb`` (at ``kb x period``): the jobs due in ``promo``
        get their tokens there (``waiting_gain``: the boundary's alone) and move up their
        levels."""
        b = kb * self.period
        promo = self.promo
        waiting = self.waiting
        ver = self.ver
        levels = self.levels
        cand_cut = self.cand_cut
        lvl_c = self.lvl_c
        lvl_x = self.lvl_x
        cnt_x = self.cnt_x
        nlev = self.nlev
        while promo and promo[0][0] <= kb:
            _, v, k = _bpop(promo) if _TYPED_HEAP else heappop(promo)
            if not waiting[k] or ver[k] != v:
                continue
            g = waiting_gain(self.waited[k], self.since[k], b, self.est[k])
            self.gain[k] = g  # ``set_gain`` and the levels written out
            t = token_value(self.fprio[k], g)
            self.tok[k] = t
            c = 0
            while c < nlev and cand_cut[c] <= t:
                c += 1
            c -= 1
            x = 0
            while x < nlev and levels[x] <= t:
                x += 1
            x -= 1
            if c != lvl_c[k]:
                lvl_c[k] = c
                if self.sjf:  # ``choose``'s key of a waiting job: (remaining, arrival, id)
                    rem = self.est[k] - self.exe[k]
                    ce: CheapEntry = (rem if rem > 0.0 else 0.0, self.arr_s[k], self.rid[k], v, k)
                else:  # (arrival, id)
                    a = self.arr_s[k]
                    ce = (a, a, self.rid[k], v, k)
                if _TYPED_HEAP:
                    _cpush(self.cheap[c], ce)
                else:
                    heappush(self.cheap[c], ce)
            if x != lvl_x[k]:
                cnt_x[lvl_x[k]] -= 1
                cnt_x[x] += 1
                lvl_x[k] = x
            if x + 1 < nlev:
                nb = self.promo_at(k, x + 1)
                if _TYPED_HEAP:
                    _bpush(promo, (nb if nb > kb else kb + 1, v, k))
                else:
                    heappush(promo, (nb if nb > kb else kb + 1, v, k))

    # --- the scanned structures (cumulative rule, ">", a priority below the lowest level) -----
    def saturate(self) -> None:
        """Move the jobs of ``low`` whose tokens reached the top level to ``sat``."""
        tok = self.tok
        top_level = self.top_level
        for k in self.low:
            if tok[k] >= top_level:
                heappush(self.sat, self.sat_key(k))
        self.low[:] = [k for k in self.low if tok[k] < top_level]

    def scan_periods(self, now: float, first_s: float, count: int, run_k: int) -> None:
        """``TokenScheduler.on_periods``: ``count`` boundaries from ``first_s`` at once (jobs
        at the top level under ``sat`` are left as they are)."""
        waited = self.waited
        since = self.since
        est = self.est
        if not self.cumulative:
            r = -1 if run_k == self.cred_k else run_k
            self.cred_k = run_k
            last = (_round(first_s / self.period) + count - 1) * self.period
            for k in self.low:
                self.set_gain(k, waiting_gain(waited[k], since[k], last, est[k]))
            if r >= 0:
                self.set_gain(r, slowdown_of(waited[r], est[r]))
            return
        p = self.p
        span = count * (now - first_s) - p * count * (count - 1) / 2.0
        up = False
        top_level = self.top_level
        for k in self.low:
            total = count * (waited[k] + (now - since[k])) - span
            if total > 0.0:
                g = self.gain[k] + slowdown_of(total, est[k])
                self.gain[k] = g
                t = token_value(self.fprio[k], g)
                self.tok[k] = t
                if t >= top_level:
                    up = True
        if up and self.saturating:
            self.saturate()
        if run_k >= 0 and self.incl_run and (self.tok[run_k] < top_level or not self.saturating):
            w = waited[run_k]
            if w > 0.0:
                self.set_gain(run_k, self.gain[run_k] + count * slowdown_of(w, est[run_k]))

    def scan_tick(self, now: float, run_k: int) -> None:
        """``TokenScheduler.on_period`` (Algorithm 2 lines 6-7) at a tick."""
        waited = self.waited
        since = self.since
        est = self.est
        if not self.cumulative:
            r = -1 if run_k == self.cred_k else run_k
            self.cred_k = run_k
            b = _round(now / self.period) * self.period  # the boundary the tick stands for
            for k in self.low:
                self.set_gain(k, waiting_gain(waited[k], since[k], b, est[k]))
            if r >= 0:
                self.set_gain(r, slowdown_of(waited[r], est[r]))
            return
        for k in self.low:
            self.set_gain(k, self.gain[k] + slowdown_of(waited[k] + (now - since[k]), est[k]))
        if self.saturating:
            self.saturate()
        if (
            run_k >= 0
            and self.incl_run
            and (self.tok[run_k] < self.top_level or not self.saturating)
        ):
            self.set_gain(run_k, self.gain[run_k] + slowdown_of(waited[run_k], est[run_k]))

    def scan_pick(self, run_k: int, run_exec: float) -> int:
        """Algorithm 2 lines 9-10 (``TokenScheduler.pick``) over ``low`` and ``sat``."""
        tok = self.tok
        top_level = self.top_level
        low = self.low
        sat = self.sat
        run_in = run_k >= 0 and self.incl_run
        cands: list[int] = []
        if not self.strict and (sat or (run_in and tok[run_k] >= top_level)):
            # The threshold is the top level: the candidates are ``sat`` and the jobs within
            # the float margin below it (``eps`` of the threshold 9).
            top_cut = self.top_cut
            cands = [k for k in low if tok[k] >= top_cut]
            if sat:  # the best of them by ``choose``'s order
                cands.append(sat[0][-1])
            if run_in and tok[run_k] >= top_cut:
                cands.append(run_k)
        else:
            jobs = [*low, *[e[-1] for e in sat]]
            if run_in:
                jobs.append(run_k)
            if not jobs:
                return -1
            thr = float(self.round_down(max([tok[k] for k in jobs]), self.levels_t))
            eps = 1e-12 * max(thr, 1.0)
            if self.strict:
                cut = thr + eps
                cands = [k for k in jobs if tok[k] > cut]
            if not cands:
                cut = thr - eps
                cands = [k for k in jobs if tok[k] >= cut]
        best = cands[0]
        if len(cands) == 1:
            return best
        est = self.est
        exe = self.exe
        arr_s = self.arr_s
        rid = self.rid
        if self.sjf:  # shortest_remaining: (remaining, not running, arrival, id)
            brem = est[best] - (run_exec if best == run_k else exe[best])
            if brem < 0.0:
                brem = 0.0
            for k in cands[1:]:
                rem = est[k] - (run_exec if k == run_k else exe[k])
                if rem < 0.0:
                    rem = 0.0
                if rem < brem or (
                    rem == brem
                    and (0 if k == run_k else 1, arr_s[k], rid[k])
                    < (0 if best == run_k else 1, arr_s[best], rid[best])
                ):
                    best, brem = k, rem
            return best
        bkey = (arr_s[best], 0 if best == run_k else 1, rid[best])  # first_come
        for k in cands[1:]:
            key = (arr_s[k], 0 if k == run_k else 1, rid[k])
            if key < bkey:
                best, bkey = k, key
        return best

    def scan_quiet(self, now: float, first_s: float, run_k: int) -> int:
        """``TokenScheduler.quiet_periods``: boundaries that cannot change the decision."""
        never = self.never
        if run_k >= 0 and not self.preemptive:
            return never
        if run_k < 0 or self.strict:
            return 0
        tok = self.tok
        top_level = self.top_level
        incl_run = self.incl_run
        low = self.low
        run_low = incl_run and tok[run_k] < top_level
        if self.sat or (incl_run and not run_low):
            # The threshold is the top level: only a job below it reaching it can matter.
            below = [*low, run_k] if run_low else low
            thr = top_level
        else:
            below = [*low, run_k] if incl_run else low
            thr = float(self.round_down(max([tok[k] for k in below]), self.levels_t))
        best = never
        ahead = first_s - now
        p = self.p
        n0 = _round(first_s / self.period)
        cumulative = self.cumulative
        gain = self.gain
        waited = self.waited
        est = self.est
        for k in below:
            top = tok[k] * (1.0 + 1e-12)
            if top >= top_level:
                continue  # no level above its tokens
            for lv in self.levels:
                if lv <= top or lv < thr:
                    continue
                need = lv * (1.0 - 1e-9) / self.fprio[k] - 1.0
                if k != run_k:
                    w = waited[k] + (now - self.since[k]) + ahead
                    # ``periods_to_gain`` returns the least k whose gain (this very float
                    # expression, non-decreasing in k) reaches ``need``: if ``best - 1``
                    # boundaries fall short, this job cannot come sooner.
                    if (
                        cumulative
                        and best < never
                        and est[k] > 0.0
                        and _gain_after(0, best - 1, gain[k], w, p, est[k]) < need
                    ):
                        break
                    if cumulative:
                        kk = periods_to_gain(gain[k], need, w, p, est[k], True, True)
                    else:
                        kk = boundaries_to_gain(need, waited[k], self.since[k], n0, p, est[k])
                else:
                    kk = periods_to_gain(gain[k], need, waited[k], p, est[k], False, cumulative)
                if kk < best:
                    best = kk
                break  # the next level up is reached first
        return best - 1 if best > 1 else 0

    # --- the entry points (the engine's, and the policy's hooks') -----------------------------
    # Each writes the lazy structures' part out (no further call per wake, pure or compiled)
    # and hands the other rules to the ``scan_*`` methods.
    def credit_tick(self, now: float, run_k: int) -> None:
        """``TokenScheduler.on_period`` at a tick: the lazy structures credit the boundary the
        tick stands for (only if a job is due) and the running job once per stay (its linear
        credit depends only on its waiting before it started: the same value every time)."""
        if not self.lazy:
            self.scan_tick(now, run_k)
            return
        promo = self.promo
        if promo:
            kb = _round(now / self.period)
            if promo[0][0] <= kb:
                self.lazy_credit(kb)
        if run_k != self.cred_k:
            self.cred_k = run_k
            if run_k >= 0:
                self.set_gain(run_k, slowdown_of(self.waited[run_k], self.est[run_k]))

    def credit_periods(self, now: float, first_s: float, count: int, run_k: int) -> None:
        """``TokenScheduler.on_periods``: ``count`` skipped boundaries from ``first_s``; the
        lazy structures credit the last of them (only if a job is due), and the running job
        once per stay (see ``credit_tick``)."""
        if not self.lazy:
            self.scan_periods(now, first_s, count, run_k)
            return
        promo = self.promo
        if promo:
            kb = _round(first_s / self.period) + count - 1
            if promo[0][0] <= kb:
                self.lazy_credit(kb)
        if run_k != self.cred_k:
            self.cred_k = run_k
            if run_k >= 0:
                self.set_gain(run_k, slowdown_of(self.waited[run_k], self.est[run_k]))

    def pick(self, now: float, run_k: int, run_exec: float) -> int:
        """Algorithm 2 lines 9-10 (``TokenScheduler.pick``): the chosen job, -1 if none. Over
        the level structure: the best of the heads of ``cheap`` at and above the threshold, and
        the running job if it is a candidate."""
        if not self.lazy:
            return self.scan_pick(run_k, run_exec)
        # The threshold's level index: the highest level with a waiting job, or the running
        # job's if it is included and higher (written out here and in ``quiet``).
        cnt_x = self.cnt_x
        nlev = self.nlev
        t_i = nlev - 1
        while t_i >= 0 and cnt_x[t_i] == 0:
            t_i -= 1
        run_in = run_k >= 0 and self.incl_run
        if run_in:
            tr = self.tok[run_k]
            levels = self.levels
            xr = 0
            while xr < nlev and levels[xr] <= tr:  # NaN tokens reach no level
                xr += 1
            if xr - 1 > t_i:
                t_i = xr - 1
        if t_i < 0:
            return -1
        # The valid heads are distinct jobs (``lvl_c`` names one level per job), so their keys
        # (ending in the unique id) never tie: whole entries compare as their keys do, and no
        # key slice is made.
        waiting = self.waiting
        ver = self.ver
        lvl_c = self.lvl_c
        found = False
        be: CheapEntry = (0.0, 0.0, 0, 0, -1)
        for i in range(t_i, nlev):
            h = self.cheap[i]
            while h:
                e = h[0]
                k = e[4]
                if waiting[k] and ver[k] == e[3] and lvl_c[k] == i:
                    if not found or e < be:
                        be = e
                        found = True
                    break
                if _TYPED_HEAP:
                    _cpop(h)
                else:
                    heappop(h)
        if run_in and self.tok[run_k] >= self.cand_cut[t_i]:
            if not found:
                return run_k
            if self.sjf:  # (remaining, running first, arrival, id)
                rem = self.est[run_k] - run_exec
                if rem < 0.0:
                    rem = 0.0
                if rem <= be[0]:
                    return run_k
            elif self.arr_s[run_k] <= be[0]:  # (arrival, running first, id)
                return run_k
        return be[4] if found else -1

    def quiet(self, now: float, first_s: float, run_k: int) -> int:
        """``TokenScheduler.quiet_periods``: boundaries that cannot change the decision. Over
        the level structure: the soonest crossing of a level at or above the threshold is the
        top of that level's ``qheap`` (exact boundary indices, computed once per stay), against
        the running job's part."""
        if not self.lazy:
            return self.scan_quiet(now, first_s, run_k)
        if run_k < 0:
            return 0
        never = self.never
        if not self.preemptive:
            return never
        cnt_x = self.cnt_x
        nlev = self.nlev
        levels = self.levels
        tok = self.tok
        t_i = nlev - 1  # the threshold's level index, as in ``pick``
        while t_i >= 0 and cnt_x[t_i] == 0:
            t_i -= 1
        incl_run = self.incl_run
        if incl_run:
            tr = tok[run_k]
            xr = 0
            while xr < nlev and levels[xr] <= tr:  # NaN tokens reach no level
                xr += 1
            if xr - 1 > t_i:
                t_i = xr - 1
        thr = levels[t_i]
        best = never
        if incl_run:
            # The running job's part depends only on its gain, its waiting before it started
            # and the threshold: kept (``rq_*``) while those stay as they were.
            g = self.gain[run_k]
            w = self.waited[run_k]
            if self.rq_k == run_k and self.rq_t == t_i and self.rq_g == g and self.rq_w == w:
                best = self.rq_best
            else:
                top = tok[run_k] * (1.0 + 1e-12)
                if top < self.top_level:
                    for lv in levels:
                        if lv <= top or lv < thr:
                            continue
                        need = lv * (1.0 - 1e-9) / self.fprio[run_k] - 1.0
                        best = periods_to_gain(g, need, w, self.p, self.est[run_k], False, False)
                        break
                self.rq_k = run_k
                self.rq_t = t_i
                self.rq_g = g
                self.rq_w = w
                self.rq_best = best
        n0 = _round(first_s / self.period)  # the first boundary's index
        qmin = never + n0  # the soonest waiting job's crossing (a boundary index)
        waiting = self.waiting
        ver = self.ver
        for i in range(t_i, nlev):
            h = self.qheap[i]
            lv = levels[i]
            while h:
                q, v, k = h[0]
                if waiting[k] and ver[k] == v and tok[k] * (1.0 + 1e-12) < lv:
                    if q < qmin:
                        qmin = q
                    break
                if _TYPED_HEAP:
                    _bpop(h)
                else:
                    heappop(h)
        # ``quiet_periods``: the least ``k >= 1`` over the jobs (a waiting job's is its
        # crossing index less ``n0``, plus one, at least 1), less one, at least 0.
        kq = qmin - n0 + 1
        if kq < 1:
            kq = 1
        if kq < best:
            best = kq
        return best - 1 if best > 1 else 0


def token_table(
    pol: Any,
    priorities: Sequence[int],
    arrivals_s: Sequence[float],
    ids: Sequence[int],
    est: list[float],
    exe: list[float],
) -> TokenTable:
    """The token table of ``pol`` (a token scheduler whose ready order holds) for a run of
    ``len(priorities)`` requests in dispatch order: their priorities, arrival times (seconds)
    and ids (lists are kept, not copied); ``est`` their estimates (seconds) and ``exe`` their
    work done (seconds), lists the caller owns and keeps current (a job's entries are read when
    it enters the queue, and the running job's estimate at each pick). The rule's formulas are
    this module's functions, which ``TokenScheduler``'s methods are (its ready order holds
    only while a class keeps them, ``ALGORITHM_2_METHODS``); ``round_down`` is the policy's."""
    n = len(priorities)
    levels_t: tuple[float, ...] = tuple(pol.token_levels)
    levels = [float(lv) for lv in levels_t]
    t = TokenTable()
    t.period = float(pol.period_s)
    t.p = float(pol.token_period_s)  # the policy's own ``p``
    t.cumulative = pol.tokens == "cumulative"
    t.strict = pol.threshold == ">"
    t.incl_run = bool(pol.include_running)
    t.preemptive = bool(pol.preemptive)
    t.sjf = declared_order(pol) == "tokens-remaining"
    t.never = int(pol.never_periods)  # ``quiet_periods``' "never"
    t.round_down = pol.round_down
    # (lists are kept, not copied: the caller hands them over)
    arr_s = arrivals_s if isinstance(arrivals_s, list) else list(arrivals_s)
    t.arr_s = arr_s
    t.rid = ids if isinstance(ids, list) else list(ids)
    fprio = [float(x) for x in priorities]
    t.fprio = fprio
    t.levels = levels
    t.levels_t = levels_t
    t.nlev = len(levels)
    top_level = levels[-1]
    t.top_level = top_level
    t.top_cut = top_level - 1e-12 * max(top_level, 1.0)  # the candidate cut of threshold 9
    # Under ">" a job at 9 tokens is not a candidate.
    t.saturating = t.cumulative and not t.strict
    t.lazy = not t.cumulative and not t.strict and min(fprio, default=top_level) >= levels[0]
    t.cand_cut = [lv - 1e-12 * max(lv, 1.0) for lv in levels]  # ``candidates``' cut at lv
    t.est = est
    t.exe = exe
    t.gain = [0.0] * n
    t.tok = fprio.copy()
    t.waited = [0.0] * n
    t.since = [0.0] * n
    # The ready queue in two parts (not ``lazy``): ``sat`` holds the jobs whose tokens reached
    # the top level (cumulative rule and threshold ">=" only; tokens never fall, so such a job
    # is a candidate at every decision and its exact tokens no longer matter: they are not
    # updated), as a heap in the order ``choose`` ranks waiting jobs (``sat_key``); ``low`` the
    # others.
    t.low = []
    t.sat = []
    t.lvl_c = [-1] * n  # highest level whose candidate cut its tokens pass
    t.lvl_x = [-1] * n  # highest level its tokens reach
    t.cnt_x = [0] * len(levels)
    t.cheap = [[] for _ in levels]
    t.qheap = [[] for _ in levels]
    t.promo = []
    t.ver = [0] * n  # bumped at each enqueue: entries of an earlier stay are stale
    t.waiting = [False] * n
    t.cred_k = -1
    t.rq_k = -1
    t.rq_t = -1
    t.rq_g = 0.0
    t.rq_w = 0.0
    t.rq_best = t.never
    return t
