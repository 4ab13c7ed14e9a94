"""The engine's typed heaps (``sim/heaps.py``: ``ipush`` / ``ipop`` on ints, ``fpush`` /
``fpop`` on floats, ``kpush`` / ``kpop`` on request indices ordered as ``(key[k], k)``) are
``heapq``'s algorithm: after every push and pop the list holds the same
objects in the same places as ``heapq``'s, and a pop returns the same object, for any mix of
pushes and pops with repeated keys (compiled and pure)."""

from __future__ import annotations

import heapq

from hypothesis import given, settings
from hypothesis import strategies as st

from npusched.sim import heaps

SETTINGS = settings(max_examples=200, deadline=None)

# A push (True) with its key, or a pop (False; skipped on an empty heap).
_OPS_I = st.lists(st.tuples(st.booleans(), st.integers(-3, 3) | st.integers(2**62, 2**70)))
_FLOATS = st.sampled_from([-1.0, -0.0, 0.0, 0.5, 1e-9, 2.0, 2.0 + 2**-51, float("inf")])
_OPS_F = st.lists(st.tuples(st.booleans(), _FLOATS))


@SETTINGS
@given(ops=_OPS_I)
def test_int_heap_is_heapq(ops: list[tuple[bool, int]]) -> None:
    """Ints (equal values as distinct objects, and ints past 64 bits)."""
    ours: list[object] = []
    ref: list[int] = []
    for push, v in ops:
        if push:
            item = int(str(v))  # a fresh object, so that ties are told apart by identity
            heaps.ipush(ours, item)
            heapq.heappush(ref, item)
        elif ref:
            assert heaps.ipop(ours) is heapq.heappop(ref)
        assert len(ours) == len(ref) and all(a is b for a, b in zip(ours, ref, strict=True))
    while ref:
        assert heaps.ipop(ours) is heapq.heappop(ref)


@SETTINGS
@given(ops=_OPS_F)
def test_float_heap_is_heapq(ops: list[tuple[bool, float]]) -> None:
    """Floats (ties, -0.0 against 0.0, infinity): the same objects in the same places."""
    ours: list[float] = []
    ref: list[float] = []
    for push, v in ops:
        if push:
            item = float.fromhex(v.hex())
            heaps.fpush(ours, item)
            heapq.heappush(ref, item)
        elif ref:
            assert heaps.fpop(ours) is heapq.heappop(ref)
        assert len(ours) == len(ref) and all(a is b for a, b in zip(ours, ref, strict=True))
    while ref:
        assert heaps.fpop(ours) is heapq.heappop(ref)


@SETTINGS
@given(
    keys=st.lists(st.sampled_from([0.0, -0.0, 1.0, 1.5, 3.0, float("inf")]), min_size=1),
    data=st.data(),
)
def test_keyed_heap_is_heapq_of_tuples(keys: list[float], data: st.DataObject) -> None:
    """SJF's heap of indices against ``heapq`` on ``(key[k], k)`` tuples: pushes of waiting
    indices (each at most once in the heap, its key set when it is pushed, as the loop does),
    pops, repeated keys."""
    n = len(keys)
    ours: list[object] = []
    ref: list[tuple[float, int]] = []
    key = [0.0] * n
    waiting: set[int] = set()
    for _ in range(data.draw(st.integers(0, 4 * n))):
        idle = sorted(set(range(n)) - waiting)
        if idle and (not ref or data.draw(st.booleans())):
            k = data.draw(st.sampled_from(idle))
            key[k] = data.draw(st.sampled_from(keys))
            heaps.kpush(ours, key, k)
            heapq.heappush(ref, (key[k], k))
            waiting.add(k)
        elif ref:
            got = heaps.kpop(ours, key)
            want = heapq.heappop(ref)[1]
            assert got == want
            waiting.discard(got)
        assert ours == [k for _, k in ref]
    while ref:
        assert heaps.kpop(ours, key) == heapq.heappop(ref)[1]
