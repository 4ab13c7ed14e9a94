"""FluidB: the exit-aware preemptive scheduler of Fluid Batching (Sec. III-B, Algorithm 1).

Algorithm 1, line by line, as pure functions (the policy class calls them at the events named):

* line 2, when the NPU is free and the queue is not empty: ``B_act = min(N_Q, B_max)``
  (:func:`initial_batch`); execution starts as soon as the first sample is queued.
* lines 5-6: the batch runs to the next exit ``i`` (preemption happens *only* at exits).
* lines 7-8, at exit ``i``: ``B_rem = B_act - B_exit`` (:func:`exits_at` splits the batch).
* lines 9-11: while ``B_rem < B_max``: ``B_slack = B_max - B_rem``,
  ``B_incr = min(N_Q, B_slack)`` (:func:`batch_increment`).
* line 12: preempt iff ``T_overhead < T_slack`` (:func:`fluidb_decide`, Eq. 3-4 from the
  ``N_exits x B_max`` look-up table, :class:`ExitLUT`).
* lines 13-17: the ``B_incr`` oldest queued samples run from the start up to exit ``i``
  (no nested preemption at the exits they pass: backfilling is non-recursive), drop the samples
  that exit on the way (at exits ``<= i``), and merge: ``B_merged = B_rem + B_incr - B_exit``
  (:func:`merge_after_catch_up`); the loop at line 9 repeats at the same exit.
* line 19: otherwise stop backfilling and continue to exit ``i + 1`` with ``B_rem`` samples.

Choices where the paper is silent:

* ``B_incr = 0`` (empty queue) ends the backfill loop: there is nothing to preempt for.
* ``B_rem = 0`` (every sample left at exit ``i``) ends the batch; the NPU is free and line 2
  starts the next one.
* Eq. 4's ``B_merged`` is ``B_rem + B_incr`` (before the new samples' own early exits): the
  paper's upper bound on the overhead.
* Exit ``i`` here is 0-based: ``0 .. N_exits - 1``; preemption is considered at the intermediate
  exits ``0 .. N_exits - 2`` (at the last exit the batch is finished).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from npusched.errors import ConfigError

__all__ = [
    "B_MAX",
    "Backfill",
    "ExitLUT",
    "batch_increment",
    "catch_up_time",
    "exits_at",
    "fluidb_decide",
    "initial_batch",
    "merge_after_catch_up",
    "overhead",
    "slack",
]

#: Maximum batch size of every scheduler in the paper's evaluation (Sec. IV "Baselines").
B_MAX = 8


@dataclass(frozen=True)
class ExitLUT:
    """The ``N_exits x B_max`` latency look-up table (Sec. III-B "Exit-Level Latency Prediction").

    ``table[i, b - 1]`` is the seconds batch size ``b`` takes to run segment ``i``: from just after
    exit ``i - 1`` up to and including exit ``i`` (its head included). Build it with
    :meth:`npusched.hardware.gemm_npu.GemmNPU.exit_lut`.
    """

    table: npt.NDArray[np.float64]
    #: Each batch size's column as Python floats (set by ``__post_init__``; a declared field,
    #: not an ad hoc attribute, so the compiled class has a slot for it).
    _cols: tuple[list[float], ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        t = np.asarray(self.table, dtype=np.float64)
        if t.ndim != 2 or t.shape[0] < 1 or t.shape[1] < 1:
            raise ConfigError(f"exit LUT must be a 2-D N_exits x B_max table, got shape {t.shape}")
        if not np.isfinite(t).all() or (t < 0).any():
            raise ConfigError("exit LUT entries must be finite seconds >= 0")
        t = t.copy()
        t.flags.writeable = False
        object.__setattr__(self, "table", t)
        # Each batch size's column as Python floats, for :meth:`span`'s short sums.
        object.__setattr__(self, "_cols", tuple(t[:, b].tolist() for b in range(t.shape[1])))

    @property
    def n_exits(self) -> int:
        return int(self.table.shape[0])

    @property
    def b_max(self) -> int:
        return int(self.table.shape[1])

    def _col(self, b: int) -> npt.NDArray[np.float64]:
        if not 1 <= b <= self.b_max:
            raise ConfigError(f"batch size {b} outside the LUT's 1..{self.b_max}")
        return self.table[:, b - 1]

    def span(self, first: int, last: int, b: int) -> float:
        """``T_{first:last}^b``: seconds for segments ``first..last`` (inclusive) at batch ``b``;
        0 for an empty range or ``b = 0``."""
        if b == 0 or last < first:
            return 0.0
        cols = self._cols
        if not 1 <= b <= len(cols):
            raise ConfigError(f"batch size {b} outside the LUT's 1..{len(cols)}")
        xs = cols[b - 1][first : last + 1]
        if len(xs) >= 8:  # NumPy sums 8 or more values pairwise: its own sum
            return float(self.table[:, b - 1][first : last + 1].sum())
        # Fewer than 8: NumPy's sum is sequential from 0.0, so this loop is the same bits
        # (checked against NumPy in ``tests/test_fluidb_span.py``), without its per-call cost.
        r = 0.0
        for x in xs:
            r += x
        return r


def slack(t_slo: float, t_wait: float, t_exec_so_far: float) -> float:
    """Eq. 3: ``T_slack = T_SLO - (T_wait + T_exec^so-far)`` for the active batch's oldest sample
    (seconds)."""
    return float(t_slo) - (float(t_wait) + float(t_exec_so_far))


def overhead(lut: ExitLUT, exit_idx: int, b_incr: int, b_merged: int) -> float:
    """Eq. 4: ``T_overhead = T_{0:i}^{B_incr} + T_{i+1:N-1}^{B_merged}`` (seconds): the new batch
    catching up to exit ``i`` plus the merged batch finishing the network."""
    return lut.span(0, exit_idx, b_incr) + lut.span(exit_idx + 1, lut.n_exits - 1, b_merged)


def initial_batch(n_queue: int, b_max: int = B_MAX) -> int:
    """Algorithm 1 line 2: ``B_act = min(N_Q, B_max)``."""
    return max(0, min(int(n_queue), int(b_max)))


def batch_increment(n_queue: int, b_rem: int, b_max: int = B_MAX) -> int:
    """Lines 10-11: ``B_incr = min(N_Q, B_max - B_rem)``."""
    return max(0, min(int(n_queue), int(b_max) - int(b_rem)))


@dataclass(frozen=True)
class Backfill:
    """One evaluation of Algorithm 1's line 12 at an exit.

    Attributes:
        preempt: whether to preempt and backfill.
        b_incr: samples to take from the head of the queue (0 if not preempting).
        b_slack: room in the batch, ``B_max - B_rem``.
        t_overhead: Eq. 4 in seconds (``nan`` if not evaluated).
        t_slack: Eq. 3 in seconds (``nan`` if not evaluated).
        reason: ``"preempt"``, ``"full"``, ``"empty-queue"``, ``"last-exit"``, ``"no-batch"`` or
            ``"slo"`` (the criterion refused).
    """

    preempt: bool
    b_incr: int
    b_slack: int
    t_overhead: float
    t_slack: float
    reason: str


def fluidb_decide(
    lut: ExitLUT,
    exit_idx: int,
    b_rem: int,
    n_queue: int,
    t_slo: float,
    t_wait_oldest: float,
    t_exec_so_far: float,
    b_max: int = B_MAX,
) -> Backfill:
    """Lines 9-12 of Algorithm 1 at exit ``exit_idx`` (0-based) with ``B_rem`` samples left.

    Args:
        lut: the exit latency table.
        exit_idx: the exit just reached.
        b_rem: samples of the active batch that did not exit.
        n_queue: samples waiting in the queue.
        t_slo: the latency SLO in seconds.
        t_wait_oldest: queueing time of the oldest sample in the active batch (seconds).
        t_exec_so_far: execution time since that batch started (seconds).
        b_max: maximum batch size.
    """
    b_slack = max(0, b_max - b_rem)
    nan = float("nan")
    if b_rem <= 0:
        return Backfill(False, 0, b_slack, nan, nan, "no-batch")
    if exit_idx >= lut.n_exits - 1:
        return Backfill(False, 0, b_slack, nan, nan, "last-exit")
    if b_rem >= b_max:
        return Backfill(False, 0, 0, nan, nan, "full")
    b_incr = batch_increment(n_queue, b_rem, b_max)
    if b_incr == 0:
        return Backfill(False, 0, b_slack, nan, nan, "empty-queue")
    t_ov = overhead(lut, exit_idx, b_incr, b_rem + b_incr)
    t_sl = slack(t_slo, t_wait_oldest, t_exec_so_far)
    if t_ov < t_sl:
        return Backfill(True, b_incr, b_slack, t_ov, t_sl, "preempt")
    return Backfill(False, 0, b_slack, t_ov, t_sl, "slo")


def exits_at(
    members: Sequence[int], exit_of: Mapping[int, int], exit_idx: int, *, catch_up: bool = False
) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Split batch ``members`` (sample ids) at exit ``exit_idx`` into ``(leaving, remaining)``.

    ``exit_of[s]`` is sample ``s``'s exit (0-based). A running batch has passed the earlier exits,
    so only samples with ``exit_of == exit_idx`` leave; a catch-up batch (``catch_up=True``) ran
    from the start and loses every sample with ``exit_of <= exit_idx``. Order is preserved.
    """
    leave = [s for s in members if (exit_of[s] <= exit_idx if catch_up else exit_of[s] == exit_idx)]
    stay = [s for s in members if (exit_of[s] > exit_idx)]
    if not catch_up and any(exit_of[s] < exit_idx for s in members):
        raise ConfigError(f"batch holds samples that should have left before exit {exit_idx}")
    return tuple(leave), tuple(stay)


def merge_after_catch_up(
    remaining: Sequence[int], new: Sequence[int], exit_of: Mapping[int, int], exit_idx: int
) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Lines 14-17: the new batch ran to exit ``exit_idx``; returns ``(left_on_the_way, merged)``
    with ``B_merged = B_rem + B_incr - B_exit``. Raises if a sample is in both batches."""
    if set(remaining) & set(new):
        raise ConfigError("a sample is both in the preempted and in the new batch")
    left, stay = exits_at(new, exit_of, exit_idx, catch_up=True)
    return left, tuple(remaining) + stay


def catch_up_time(lut: ExitLUT, exit_idx: int, member_exits: Sequence[int]) -> float:
    """Seconds a catch-up batch really takes from the start to exit ``exit_idx`` when its samples
    leave at ``member_exits`` (0-based): segment ``j`` runs with the samples still in the batch.

    Never more than Eq. 4's first term ``T_{0:i}^{B_incr}`` when the LUT grows with the batch
    size (the paper's upper-bound argument, Sec. III-B).
    """
    e = np.asarray(member_exits, dtype=np.int64)
    total = 0.0
    for j in range(exit_idx + 1):
        n = int((e >= j).sum())
        if n == 0:
            break
        total += lut.span(j, j, n)
    return total
