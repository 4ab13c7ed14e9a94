"""A brute-force reference executor for the Fluid Batching schedulers (a test oracle, not an engine).

One NPU serves one early-exit model. It walks the batch segment by segment (FluidB, AdaptB,
SERIAL) or layer by layer (LazyBatching), calling the pure decision functions of
:mod:`npusched.policies.batching` at the points the paper names and recording every sample's
finish time at its exit. The engine's batching support (issue 9) will be checked against it; its
outputs are sanity checks of the decision logic, not the reproduction.

Time model: the active batch runs segment ``i`` (or layer ``l``) in the table's time for its
current size; arrivals that happen meanwhile join the queue; decisions take no time.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from npusched.policies.batching import (
    B_MAX,
    ExitLUT,
    adaptb_decide,
    batch_increment,
    fluidb_decide,
    initial_batch,
    lazy_decide,
)


@dataclass
class RefResult:
    finish: dict[int, float] = field(default_factory=dict)
    exit_taken: dict[int, int] = field(default_factory=dict)
    invocations: int = 0
    preemptions: int = 0
    busy_s: float = 0.0
    batch_sizes: list[int] = field(default_factory=list)

    def latencies(self, arrivals: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
        ids = np.array(sorted(self.finish))
        return np.array([self.finish[i] for i in ids]) - arrivals[ids]


class _Clock:
    def __init__(self, arrivals: npt.NDArray[np.float64]) -> None:
        self.arr = arrivals
        self.t = 0.0
        self.next_id = 0
        self.queue: deque[int] = deque()

    def advance(self, dt: float) -> None:
        self.t += dt
        self._admit()

    def _admit(self) -> None:
        while self.next_id < len(self.arr) and self.arr[self.next_id] <= self.t + 1e-12:
            self.queue.append(self.next_id)
            self.next_id += 1

    def idle_until_arrival(self) -> bool:
        self._admit()
        if self.queue:
            return True
        if self.next_id >= len(self.arr):
            return False
        self.t = float(self.arr[self.next_id])
        self._admit()
        return True

    def take(self, n: int) -> list[int]:
        return [self.queue.popleft() for _ in range(n)]


def _run_segments(
    clock: _Clock,
    lut: npt.NDArray[np.float64],
    batch: list[int],
    exit_of: Sequence[int],
    first: int,
    last: int,
    res: RefResult,
) -> list[int]:
    """Run ``batch`` through segments first..last; samples leave at their exit. Returns survivors."""
    for j in range(first, last + 1):
        if not batch:
            break
        dt = float(lut[j, len(batch) - 1])
        clock.advance(dt)
        res.busy_s += dt
        res.batch_sizes.append(len(batch))
        stay = []
        for s in batch:
            if exit_of[s] == j:
                res.finish[s] = clock.t
                res.exit_taken[s] = j
            else:
                stay.append(s)
        batch = stay
    return batch


def run_fluidb(
    arrivals: npt.NDArray[np.float64],
    exit_of: Sequence[int],
    lut: npt.NDArray[np.float64],
    slo_s: float,
    b_max: int = B_MAX,
) -> RefResult:
    """Algorithm 1 on a single NPU."""
    res = RefResult()
    clock = _Clock(arrivals)
    table = ExitLUT(lut)
    n = table.n_exits
    while clock.idle_until_arrival():
        batch = clock.take(initial_batch(len(clock.queue), b_max))
        start = {s: clock.t for s in batch}
        for i in range(n):
            batch = _run_segments(clock, lut, batch, exit_of, i, i, res)
            while batch and i < n - 1:
                oldest = min(batch, key=lambda s: arrivals[s])
                res.invocations += 1
                d = fluidb_decide(
                    table,
                    i,
                    len(batch),
                    len(clock.queue),
                    slo_s,
                    start[oldest] - arrivals[oldest],
                    clock.t - start[oldest],
                    b_max,
                )
                if not d.preempt:
                    break
                res.preemptions += 1
                new = clock.take(d.b_incr)
                start.update({s: clock.t for s in new})
                alive = _run_segments(clock, lut, new, exit_of, 0, i, res)
                batch = batch + alive
                assert len(batch) <= b_max
            if not batch:
                break
    return res


def run_adaptb(
    arrivals: npt.NDArray[np.float64],
    exit_of: Sequence[int],
    lut: npt.NDArray[np.float64],
    timeout_s: float,
    b_max: int = B_MAX,
) -> RefResult:
    """AdaptB (model-level, exit-unaware) on a single NPU; ``timeout_s = 0`` with ``b_max = 1``
    is SERIAL."""
    res = RefResult()
    clock = _Clock(arrivals)
    n = lut.shape[0]
    while clock.idle_until_arrival():
        oldest = clock.queue[0]
        res.invocations += 1
        d = adaptb_decide(
            clock.t, len(clock.queue), float(arrivals[oldest]), timeout_s, True, b_max
        )
        if d.batch == 0:
            assert d.timer_at is not None
            nxt = arrivals[clock.next_id] if clock.next_id < len(arrivals) else np.inf
            clock.advance(max(0.0, min(d.timer_at, nxt) - clock.t))
            continue
        batch = clock.take(d.batch)
        _run_segments(clock, lut, batch, exit_of, 0, n - 1, res)
    return res


def run_lazy(
    arrivals: npt.NDArray[np.float64],
    exit_of: Sequence[int],
    layer_table: npt.NDArray[np.float64],
    exit_layer: Sequence[int],
    slo_s: float,
    b_max: int = B_MAX,
    invocation_s: float = 0.0,
) -> RefResult:
    """LazyBatching: decisions after every layer; ``layer_table[l, b - 1]`` is layer ``l``'s
    seconds at batch ``b`` (heads folded in), ``exit_layer[e]`` the layer exit ``e`` follows.
    Its estimate uses the single-sample column ``layer_table[:, 0]``. Each decision first idles
    ``invocation_s`` seconds; a batch that has held ``b_max`` samples is never preempted."""
    res = RefResult()
    clock = _Clock(arrivals)
    exit_at_layer = {int(l_): e for e, l_ in enumerate(exit_layer)}
    single = layer_table[:, 0]
    n_l = layer_table.shape[0]

    def run_layers(batch: list[int], first: int, last: int) -> list[int]:
        for l_ in range(first, last + 1):
            if not batch:
                break
            dt = float(layer_table[l_, len(batch) - 1])
            clock.advance(dt)
            res.busy_s += dt
            e = exit_at_layer.get(l_)
            if e is not None:
                stay = []
                for s in batch:
                    if exit_of[s] == e:
                        res.finish[s] = clock.t
                        res.exit_taken[s] = e
                    else:
                        stay.append(s)
                batch = stay
        return batch

    while clock.idle_until_arrival():
        batch = clock.take(initial_batch(len(clock.queue), b_max))
        start = {s: clock.t for s in batch}
        full = len(batch) >= b_max
        for l_ in range(n_l):
            batch = run_layers(batch, l_, l_)
            if not batch:
                break
            if l_ < n_l - 1:
                clock.advance(invocation_s)
                oldest = min(batch, key=lambda s: arrivals[s])
                res.invocations += 1
                d = lazy_decide(
                    single,
                    l_,
                    len(batch),
                    len(clock.queue),
                    slo_s,
                    start[oldest] - arrivals[oldest],
                    clock.t - start[oldest],
                    b_max,
                    was_full=full,
                )
                if d.preempt:
                    res.preemptions += 1
                    new = clock.take(batch_increment(len(clock.queue), len(batch), b_max))
                    start.update({s: clock.t for s in new})
                    caught = run_layers(new, 0, l_)
                    batch = batch + caught
                    full = full or (bool(caught) and len(batch) >= b_max)
    return res
