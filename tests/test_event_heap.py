"""The engine's event heap (``sim/events.py``: ``epush`` / ``epop`` / ``ereplace`` /
``eheapify``, which the compiled engine takes) holds and pops the same entries at the same places (the same objects) and pops them in
the same order as :mod:`heapq` on the same ``(time, kind, seq, job, epoch)`` tuples: ties of
time and of kind, ``int`` times (a timer a policy asked for), and ``heapq``'s own pushes and
``heapreplace`` on the same heap (the tick's) mixed in."""

from __future__ import annotations

import heapq
import itertools
import random

import pytest

from npusched.sim import events


def _event(rng: random.Random, seq: itertools.count[int]) -> tuple[object, ...]:
    t: object = rng.choice([0.0, 0.5, 1.25, 1.25, 2.0, 1e-12, 3.5])
    if rng.random() < 0.1:
        t = rng.choice([0, 1, 2])  # an int time compares with the floats as the tuple does
    return (t, rng.randint(0, 6), next(seq), object(), rng.randint(0, 3))


@pytest.mark.parametrize("seed", range(8))
def test_event_heap_matches_heapq(seed: int) -> None:
    rng = random.Random(seed)
    seq = itertools.count()
    ours: list[object] = []
    ref: list[tuple[object, ...]] = []
    for _ in range(800):
        r = rng.random()
        if ref and r < 0.4:
            got, want = events.epop(ours), heapq.heappop(ref)
            assert got is want
        elif ref and r < 0.43:  # ``heapq``'s own operations on the same heap
            e = _event(rng, seq)
            assert heapq.heapreplace(ours, e) is heapq.heapreplace(ref, e)  # type: ignore[misc]
        elif ref and r < 0.46:
            e = _event(rng, seq)
            assert events.ereplace(ours, e) is heapq.heapreplace(ref, e)
        elif ref and r < 0.47:  # a filter and a heapify (``_Run._compact_heap``)
            keep = [e for e in ref if rng.random() < 0.8]
            ours[:] = keep
            ref[:] = keep
            events.eheapify(ours)
            heapq.heapify(ref)
        elif r < 0.5:
            e = _event(rng, seq)
            heapq.heappush(ours, e)  # type: ignore[misc]
            heapq.heappush(ref, e)
        else:
            e = _event(rng, seq)
            events.epush(ours, e)
            heapq.heappush(ref, e)
        assert len(ours) == len(ref) and all(x is y for x, y in zip(ours, ref, strict=True))
    while ref:
        assert events.epop(ours) is heapq.heappop(ref)
    assert not ours


def test_typed_heap_follows_the_build() -> None:
    """The engine takes the typed functions exactly where the module runs compiled."""
    from types import FunctionType

    assert (not isinstance(events.epop, FunctionType)) == events.TYPED_HEAP
