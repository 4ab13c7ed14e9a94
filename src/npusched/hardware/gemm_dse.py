"""Design-space exploration for the Fluid Batching NPU (Kouris et al., Sec. III-A, Eq. 2).

    <d*, k, B_R> = argmax_d  sum_{b=1..B_max} w_b  max_{k, B_R} T(<d, k, B_R>, W, b)

``T`` is the backbone throughput in GOP/s from :class:`~npusched.hardware.gemm_npu.GemmNPU`'s
analytical + roofline model; the inner max is the per-layer choice of ``B_R`` (and ``k`` with
Stackable PEs) that the device already makes (its Fluid Batching Engine table). The outer search
is exhaustive over the design points the board admits, with two stated reductions:

* ``T_R`` is the largest that fits the block RAM for the given ``(T_P, T_C)``
  (:func:`max_tr`): a deeper pipeline never adds compute and only removes weight re-reads, so a
  smaller ``T_R`` is never better in this model; every Table I design fills its BRAM (99.9%+).
* ``T_P * T_C >= min_dsp_fraction * DSPs`` (default 0.9; 0 searches every point) and
  ``T_P <= tp_max`` (default 64, a MAC tree wider than the paper's largest, 10, by 6x).

Uniform baselines (SERIAL, FC, R, P) are explored the paper's way ("DSE using a batch size of 8"),
i.e. with ``w = (0, ..., 0, 1)``; Fluid Batching with ``w_b = 1`` for every ``b`` (Table I).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from npusched.errors import HardwareConfigError
from npusched.hardware.base import FloatArray
from npusched.hardware.gemm_npu import (
    BOARDS,
    STRATEGIES,
    Board,
    Design,
    GemmColumns,
    GemmNPU,
    choose_many,
)
from npusched.models.ir import Network

__all__ = [
    "PAPER_TABLE1",
    "DSEResult",
    "candidate_designs",
    "explore",
    "max_tr",
    "resource_usage",
]

#: Table I of the paper: (model, board) -> design point <T_R, T_P, T_C>.
PAPER_TABLE1: dict[tuple[str, str], Design] = {
    ("resnet-50", "zc706"): Design(4652, 7, 128),
    ("resnet-50", "zcu104"): Design(6832, 10, 172),
    ("inception-v3", "zc706"): Design(2742, 4, 225),
    ("inception-v3", "zcu104"): Design(6832, 10, 172),
}


def max_tr(board: Board, tp: int, tc: int, bits_per_elem: int = 16) -> int:
    """Largest ``T_R`` whose double-buffered input and output tiles fit ``board``'s BRAM."""
    return int(board.bram_bits // (2 * bits_per_elem * (tp + tc)))


def resource_usage(design: Design, board: Board) -> dict[str, float]:
    """Fractions of the board's DSPs and block RAM the design uses."""
    return {
        "dsp": design.dsp() / board.dsp,
        "bram": design.buffer_bits() / board.bram_bits,
    }


def candidate_designs(
    board: Board, *, min_dsp_fraction: float = 0.9, tp_max: int = 64
) -> list[Design]:
    """Every ``<max_tr, T_P, T_C>`` with ``min_dsp_fraction * DSPs <= T_P*T_C <= DSPs``."""
    if not 0.0 <= min_dsp_fraction <= 1.0:
        raise HardwareConfigError(f"min_dsp_fraction must be in [0, 1], got {min_dsp_fraction}")
    out = []
    for tp in range(1, min(tp_max, board.dsp) + 1):
        lo = max(1, int(np.ceil(min_dsp_fraction * board.dsp / tp)))
        for tc in range(lo, board.dsp // tp + 1):
            tr = max_tr(board, tp, tc)
            if tr >= 1:
                out.append(Design(tr, tp, tc))
    return out


@dataclass(frozen=True)
class DSEResult:
    """The outcome of :func:`explore`.

    Attributes:
        design: the best design point.
        score: its weighted throughput ``sum_b w_b T_b`` in GOP/s.
        throughput_gops: its throughput per batch size 1..B_max (GOP/s).
        visited: number of design points evaluated.
        board, strategy, stackable: the search's setting.
    """

    design: Design
    score: float
    throughput_gops: FloatArray
    visited: int
    board: str
    strategy: str
    stackable: bool

    def device(self) -> GemmNPU:
        """The chosen design as a device on the board."""
        b = BOARDS[self.board]
        return GemmNPU(
            tr=self.design.tr,
            tp=self.design.tp,
            tc=self.design.tc,
            frequency_hz=b.frequency_hz,
            memory_bandwidth_bps=b.bandwidth_bps,
            strategy=self.strategy,
            stackable=self.stackable,
            name=f"{self.board}-{self.strategy}{'-stack' if self.stackable else ''}",
        )


def explore(
    network: Network,
    board: str | Board,
    *,
    strategy: str = "fluid",
    stackable: bool = True,
    weights: Sequence[float] | None = None,
    b_max: int = 8,
    min_dsp_fraction: float = 0.9,
    tp_max: int = 64,
    designs: Sequence[Design] | None = None,
    chunk: int = 32,
) -> DSEResult:
    """Eq. 2: the design maximising ``sum_b w_b T(d, b)`` over the board's design points.

    Args:
        network: the workload ``W`` (the backbone; exits are not part of the DSE, Sec. IV).
        board: a :data:`~npusched.hardware.gemm_npu.BOARDS` name or a :class:`Board`.
        strategy: batching strategy of the device (:data:`STRATEGIES`).
        stackable: allow Stackable PEs.
        weights: ``w_b`` for ``b = 1..b_max`` (default all 1).
        b_max: largest batch size.
        min_dsp_fraction, tp_max: the search reductions of the module docstring.
        designs: explicit design points to search instead of :func:`candidate_designs`.
        chunk: design points evaluated together in one vectorised pass (memory vs speed).
    """
    brd = BOARDS.get(board) if isinstance(board, str) else board
    if brd is None:
        raise HardwareConfigError(f"unknown board {board!r}; allowed: {', '.join(BOARDS)}")
    if strategy not in STRATEGIES:
        raise HardwareConfigError(f"strategy={strategy!r}; allowed: {', '.join(STRATEGIES)}")
    w = np.ones(b_max) if weights is None else np.asarray(weights, dtype=float)
    if w.shape != (b_max,) or (w < 0).any() or not w.any():
        raise HardwareConfigError(f"weights must be {b_max} values >= 0, not all 0; got {weights}")
    cands = (
        list(designs)
        if designs is not None
        else candidate_designs(brd, min_dsp_fraction=min_dsp_fraction, tp_max=tp_max)
    )
    if not cands:
        raise HardwareConfigError(f"no design point fits board {brd.name!r}")
    cols = GemmColumns.of(network.layers)
    des = np.array([[d.tr, d.tp, d.tc] for d in cands], dtype=np.int64)
    thr = np.zeros((len(cands), b_max))
    ops = 2.0 * network.macs
    for lo in range(0, len(cands), chunk):
        part = des[lo : lo + chunk]
        for b in range(1, b_max + 1):
            if w[b - 1] > 0:
                cyc = choose_many(
                    cols,
                    part,
                    b,
                    strategy,
                    stackable,
                    brd.bandwidth_bps / brd.frequency_hz,
                    2,
                    True,
                )[2]
                seconds = np.ceil(cyc).sum(axis=1) / brd.frequency_hz
                thr[lo : lo + chunk, b - 1] = ops * b / seconds / 1e9
    scores = thr @ w
    # the first of the best (candidates are in a fixed order), within float noise
    i_best = int(np.flatnonzero(scores >= scores.max() - 1e-9)[0])
    d = cands[i_best]
    score = float(scores[i_best])
    dev = GemmNPU(
        tr=d.tr,
        tp=d.tp,
        tc=d.tc,
        frequency_hz=brd.frequency_hz,
        memory_bandwidth_bps=brd.bandwidth_bps,
        strategy=strategy,
        stackable=stackable,
    )
    full = np.array([dev.throughput_gops(network, b) for b in range(1, b_max + 1)])
    return DSEResult(d, score, full, len(cands), brd.name, strategy, stackable)
