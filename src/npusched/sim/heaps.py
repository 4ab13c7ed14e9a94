"""The engine's heaps, compiled: ``heapq``'s algorithm on typed keys (moved out of the column
loop, ``sim/columns.py``, in the twenty-seventh round; the one loop's since the twenty-eighth).

- :func:`heap_keys`: each request's ready entry as one int for a declared rank order
  (``rank * n + k``), so a heap of them pops ``(queue_key, dispatch order)``.
- :func:`ipush` / :func:`ipop`: a heap of ints (the rank order's ready queue).
- :func:`fpush` / :func:`fpop`: a heap of floats (the times of superseded completions and ticks).
- :func:`kpush` / :func:`kpop`: a heap of request indices ``k`` ordered as ``(key[k], k)``
  (SJF's ready queue, its key the remaining estimate as the job last waited).

Each pops the same objects in the same order as ``heapq`` on the same entries (ints, floats,
or the tuples ``(key[k], k)``), so the loop makes the same decisions to the last bit compiled or
pure. This module is listed in ``npusched.native.COMPILED_MODULES``.
"""

from __future__ import annotations

from typing import Any, cast

import numpy as np
from mypy_extensions import i64

from npusched.sim.records import pack_list

__all__ = [
    "fpop",
    "fpush",
    "heap_keys",
    "ipop",
    "ipush",
    "kpop",
    "kpush",
]


def heap_keys(qkey: list[Any]) -> list[int]:
    """Each request's ready-queue entry as one int, ordered as ``(queue_key, dispatch order)``.

    An entry is ``r * n + k`` for request ``k`` of ``n`` (so ``entry % n`` is ``k``), ``r`` its
    queue key where every key is an int (FCFS, HPF; computed in NumPy when the entries fit in
    int64), else the key's dense rank among the distinct keys (keys are totally ordered, as a
    heap of them already needs). Ints compare faster than tuples and cost no tuple per push;
    the heap holds the same order, so it makes the same comparisons with the same outcomes and
    pops the same jobs."""
    n = len(qkey)
    if not n:
        return []
    # ints within int64 packed in one C call (bools are 0 / 1, ordered alike); else (floats,
    # tuples, larger ints) as NumPy makes them
    packed = pack_list(qkey, np.int64)
    a = packed if packed is not None else np.array(qkey)
    if a.dtype.kind in "ib":
        a = a.astype(np.int64)
        big = max(abs(int(a.min())), abs(int(a.max())))
        if (big + 1) * n < 2**63:
            return cast(list[int], (a * n + np.arange(n, dtype=np.int64)).tolist())
    if set(map(type, qkey)) <= {int}:  # larger ints
        return [q * n + k for k, q in enumerate(qkey)]
    by_key = sorted(range(n), key=qkey.__getitem__)
    dense = [0] * n
    r = 0
    for j in range(1, n):
        if qkey[by_key[j]] != qkey[by_key[j - 1]]:
            r += 1
        dense[by_key[j]] = r
    return [q * n + k for k, q in enumerate(dense)]


# The ready and stale heaps compiled: ``heapq``'s algorithm (``heappush`` = append and
# ``_siftdown``; ``heappop`` = pop the last, ``_siftup`` from the root to a leaf by the smaller
# child, ties to the right child, then ``_siftdown``) written out on lists of the same objects,
# its ``<`` a typed comparison of their keys. It moves the same objects to the same places and
# pops them in the same order as ``heapq`` for any keys whose ``<`` is the one written here
# (for floats and ints, their own ``<``; SJF's ``(remaining, k)`` as a tuple compares them).
# Compiled, a call is a native call and a comparison two unboxed keys compared in C, where
# ``heapq``'s C functions were generic calls and a boxed ``PyObject_RichCompare`` per step; the
# objects themselves are moved, not reboxed (a ``list[int]`` item is a Python int: writing an
# unboxed int back allocates one). Positions are ``i64``: native arithmetic compiled, ``int``
# interpreted. Interpreted, ``heapq``'s C functions are faster, and the loop takes them
# (``TYPED_HEAPS``).


def _isift_down(heap: list[Any], startpos: i64, pos: i64) -> None:
    """``heapq._siftdown`` on a heap of ints."""
    newitem = heap[pos]
    nk = cast(int, newitem)
    while pos > startpos:
        parentpos = (pos - 1) >> 1
        parent = heap[parentpos]
        if nk < cast(int, parent):
            heap[pos] = parent
            pos = parentpos
            continue
        break
    heap[pos] = newitem


def ipush(heap: list[Any], item: object) -> None:
    """``heapq.heappush`` on a heap of ints (``item`` an int)."""
    heap.append(item)
    _isift_down(heap, 0, len(heap) - 1)


def ipop(heap: list[Any]) -> object:
    """``heapq.heappop`` on a heap of ints (``heap`` not empty)."""
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
        if right < endpos and not cast(int, heap[child]) < cast(int, heap[right]):
            child = right
        heap[pos] = heap[child]
        pos = child
        child = 2 * pos + 1
    heap[pos] = last
    _isift_down(heap, 0, pos)
    return top


def _fsift_down(heap: list[Any], startpos: i64, pos: i64) -> None:
    """``heapq._siftdown`` on a heap of floats."""
    newitem = heap[pos]
    nk = cast(float, newitem)
    while pos > startpos:
        parentpos = (pos - 1) >> 1
        parent = heap[parentpos]
        if nk < cast(float, parent):
            heap[pos] = parent
            pos = parentpos
            continue
        break
    heap[pos] = newitem


def fpush(heap: list[Any], item: object) -> None:
    """``heapq.heappush`` on a heap of floats (``item`` a float)."""
    heap.append(item)
    _fsift_down(heap, 0, len(heap) - 1)


def fpop(heap: list[Any]) -> object:
    """``heapq.heappop`` on a heap of floats (``heap`` not empty)."""
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
        if right < endpos and not cast(float, heap[child]) < cast(float, heap[right]):
            child = right
        heap[pos] = heap[child]
        pos = child
        child = 2 * pos + 1
    heap[pos] = last
    _fsift_down(heap, 0, pos)
    return top


def _klt(key: list[float], a: object, b: object) -> bool:
    """``(key[a], a) < (key[b], b)`` as tuples compare (the first pair that is not equal
    decides; a nan key is never equal, so never less and nothing is less than it)."""
    ia = cast(int, a)
    ib = cast(int, b)
    ka = key[ia]
    kb = key[ib]
    if ka < kb:
        return True
    return ka == kb and ia < ib


def _ksift_down(heap: list[Any], key: list[float], startpos: i64, pos: i64) -> None:
    """``heapq._siftdown`` on a heap of request indices ``k`` ordered as ``(key[k], k)``."""
    newitem = heap[pos]
    while pos > startpos:
        parentpos = (pos - 1) >> 1
        parent = heap[parentpos]
        if _klt(key, newitem, parent):
            heap[pos] = parent
            pos = parentpos
            continue
        break
    heap[pos] = newitem


def kpush(heap: list[Any], key: list[float], k: int) -> None:
    """``heapq.heappush(heap, (key[k], k))`` on a heap of the indices alone."""
    heap.append(k)
    _ksift_down(heap, key, 0, len(heap) - 1)


def kpop(heap: list[Any], key: list[float]) -> int:
    """``heapq.heappop`` on a heap of indices ordered as ``(key[k], k)`` (``heap`` not
    empty): the index."""
    last = heap.pop()
    endpos: i64 = len(heap)
    if not endpos:
        return cast(int, last)
    top = heap[0]
    heap[0] = last
    pos: i64 = 0
    child: i64 = 1
    while child < endpos:
        right = child + 1
        if right < endpos and not _klt(key, heap[child], heap[right]):
            child = right
        heap[pos] = heap[child]
        pos = child
        child = 2 * pos + 1
    heap[pos] = last
    _ksift_down(heap, key, 0, pos)
    return cast(int, top)

