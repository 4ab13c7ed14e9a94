"""The token table's heaps (``policies/temporal/levels.py``: ``_bpush`` / ``_bpop`` on
``promo`` and ``qheap`` entries, ``_cpush`` / ``_cpop`` on ``cheap`` entries) hold and pop the
same entries at the same places (the same objects) and pop them in the same order as
:mod:`heapq` on the same tuples, ties in the leading fields included (the compiled table takes them, the pure one ``heapq``'s C functions)."""

from __future__ import annotations

import heapq
import random

import pytest

from npusched.policies.temporal import levels


def _bound(rng: random.Random) -> tuple[int, int, int]:
    return (rng.randint(-1, 6), rng.randint(0, 3), rng.randint(0, 9))


def _cheap(rng: random.Random) -> tuple[float, float, int, int, int]:
    a = rng.choice([0.0, 0.5, 1.25, 2.0, float("inf")])
    return (a, rng.choice([a, 0.25, 3.0]), rng.randint(0, 4), rng.randint(0, 3), rng.randint(0, 9))


@pytest.mark.parametrize(
    ("make", "push", "pop"),
    [(_bound, levels._bpush, levels._bpop), (_cheap, levels._cpush, levels._cpop)],
    ids=["bound", "cheap"],
)
@pytest.mark.parametrize("seed", range(6))
def test_heaps_match_heapq(make, push, pop, seed: int) -> None:  # type: ignore[no-untyped-def]
    rng = random.Random(seed)
    ours: list = []  # type: ignore[type-arg]
    ref: list = []  # type: ignore[type-arg]
    for _ in range(600):
        if ref and rng.random() < 0.45:
            got, want = pop(ours), heapq.heappop(ref)
            assert got == want  # (compiled, a typed entry returned is boxed anew)
        else:
            e = make(rng)
            push(ours, e)
            heapq.heappush(ref, e)
        # the same objects at the same places
        assert len(ours) == len(ref) and all(x is y for x, y in zip(ours, ref, strict=True))
    while ref:
        assert pop(ours) == heapq.heappop(ref)
