"""``GemmNPU``: the Fluid Batching edge NPU <T_R, T_P, T_C> (Kouris et al., Sec. II-C, III-A).

The engine
----------
``T_C`` processing elements, each a MAC tree of width ``T_P``; ``T_R`` is the pipeline depth (the
rows of an input tile). Each layer is a tiled GEMM of an ``R x P`` input (Toeplitz) matrix by a
``P x C`` weight matrix into an ``R x C`` output. In our IR (:mod:`npusched.models.ir`) that is
``R = M`` (output pixels), ``P = K`` (``kh*kw*C_in/groups``), ``C = N``, and ``groups``
independent GEMMs run one after another. Three on-chip buffers hold an input tile
``T_R x T_P``, a weight tile ``T_P x T_C`` and an output tile ``T_R x T_C``, each double-buffered;
16-bit fixed point throughout (Sec. IV).

Timing (analytical + roofline, as the paper's [30]; the choices are ours where it gives no
formula). The loops run over output blocks ``(r, c)`` (``r`` outer) and, inside a block, over the
``ceil(P_hat / T_P)`` reduction tiles. One reduction tile streams its ``r_t`` rows through the PEs,
one row per cycle (``T_P x T_C`` MACs per cycle), so a block computes for
``ceil(P_hat/T_P) * r_t`` cycles. Its DRAM traffic is its input rows ``r_t x P_hat``, its weights
``P_hat x c_t`` and its output ``r_t x c_t``; double buffering overlaps the two, so a block costs
``max(compute, bytes / (BW / f))`` cycles - the roofline bound taken per block - and a layer the
sum over its blocks (full and edge blocks counted separately). Weights are re-read for each row
block and inputs for each column block (one tile of each fits on chip).

Layers that are not GEMMs (``vector_ops``). The paper's NPU is a GEMM engine only (Fig. 4b) and
its Fig. 10 throughput approaches the device peak, which leaves no NPU time for separate pooling
or residual-add passes; so by default (``"fused"``) activations, batch-norm, pooling, element-wise
ops and concatenations take no cycles: they are applied on the GEMM's output path or by the DMA's
addressing while it writes the producer's outputs (their DRAM bytes are still counted in
``bytes_moved`` and energy). ``"streamed"`` instead runs pooling, element-wise and other vector
ops as DMA passes over their inputs and outputs at the off-chip bandwidth, one sample after
another (activation and concatenation stay free); on ResNet-50 / ZC706 that adds ~20% latency.

Batching (Sec. III-A, Eq. 1 and Fig. 4a). With ``B_act`` samples in the batch and ``B_R`` of them
appended along ``R``, the GEMM is

    R_hat = B_R * R,     P_hat = (B_act - B_R + 1) * (P + P % T_P)

with ``P % T_P`` zero "guard" elements per sample along ``P`` (taken literally from Eq. 1), i.e. a
block matrix whose first column block stacks ``B_R`` samples along ``R`` and whose other
``B_act - B_R`` column blocks hold one sample each (zero blocks are computed too). ``B_R = B_act``
is R-batching, ``B_R = 1`` P-batching. The strategies of Fig. 1 / Fig. 10:

* ``serial``: one sample at a time (``B_act = B_R = 1``, ``B`` times);
* ``fc``: FC layers R-batched, every other layer serial;
* ``r`` / ``p``: every layer R- / P-batched;
* ``fluid``: ``B_R`` per layer and batch size, the fastest of ``1..B_act`` (the Fluid Batching
  Engine table, :meth:`GemmNPU.engine_table`).

Stackable PEs (``stackable=True``) let each layer also run on ``<floor(T_R/2), k*T_P,
floor(T_C/k)>`` for ``k in {1/2, 2}`` (``k = 1`` is the default design), chosen per layer (and
batch size) with ``B_R``. A configuration with ``k*T_P < 1`` is not available.

Board budgets (:data:`BOARDS`): one DSP per 16-bit MAC (``T_P * T_C <= DSPs``: Table I's
<4652,7,128> uses 896/900 DSPs = 99.56%, as printed); the input and output tile buffers in block
RAM, ``2 * 16 * T_R * (T_P + T_C)`` bits (double-buffered 16-bit); the ``T_P x T_C`` weight tile
(under 2k words) in distributed RAM. With this model the largest ``T_R`` for Table I's
``(T_P, T_C)`` is 4650 / 2741 / 6836 against the paper's 4652 / 2742 / 6832 (within 0.1%).

Energy (first-order hook, not in the paper): ``mac_energy_pj`` per MAC slot used (padding
included) and ``dram_energy_pj_per_byte`` per DRAM byte.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

import numpy as np
import numpy.typing as npt

from npusched.base import Component
from npusched.errors import HardwareConfigError
from npusched.hardware.base import FloatArray, IntArray, LayerCosts
from npusched.models.ir import Layer, LayerKind, Network

__all__ = [
    "BOARDS",
    "K_CHOICES",
    "STRATEGIES",
    "VECTOR_OPS",
    "Board",
    "Design",
    "EngineTable",
    "GemmColumns",
    "GemmNPU",
    "Strategy",
    "choose_many",
    "eq1_shape",
    "gemm_grid",
    "option_grid",
]

_PJ = 1e-12
#: Stackable-PE factors k (Sec. III-A), index 0..2 in every table.
K_CHOICES: tuple[float, ...] = (0.5, 1.0, 2.0)
_K_PREFERENCE = (1, 0, 2)  # indices into K_CHOICES, the default k = 1 first


class Strategy(StrEnum):
    """Per-layer batching strategy (Fig. 1 / Fig. 10)."""

    SERIAL = "serial"
    FC = "fc"
    R = "r"
    P = "p"
    FLUID = "fluid"


STRATEGIES: tuple[str, ...] = tuple(s.value for s in Strategy)
#: How non-GEMM layers are costed (see the module docstring).
VECTOR_OPS: tuple[str, ...] = ("fused", "streamed")


@dataclass(frozen=True)
class Board:
    """An FPGA board's budget for the NPU.

    Attributes:
        name: board name.
        dsp: DSP slices (one per 16-bit MAC).
        bram_bits: block-RAM (plus UltraRAM) capacity in bits for the tile buffers.
        frequency_hz: NPU clock in Hz (Sec. IV "Setup").
        bandwidth_bps: off-chip bandwidth in bytes per second available to the NPU.
        source: where the figures come from.
    """

    name: str
    dsp: int
    bram_bits: int
    frequency_hz: float
    bandwidth_bps: float
    source: str


#: The paper's two boards (Sec. IV). Bandwidth is the smaller of the PS DDR peak and the four AXI
#: HP ports (64-bit on Zynq-7000, 128-bit on Zynq UltraScale+) at the NPU clock.
BOARDS: dict[str, Board] = {
    "zc706": Board(
        name="zc706",
        dsp=900,
        bram_bits=545 * 36 * 1024,
        frequency_hz=150e6,
        bandwidth_bps=min(32 / 8 * 1066e6, 4 * 8 * 150e6),
        source=(
            "Xilinx DS190 (Z-7045: 900 DSP48E1, 545 x 36 Kb BRAM); UG954 (ZC706 PS DDR3, 32-bit, "
            "1066 MT/s = 4.264 GB/s); 4 AXI HP x 64 bit x 150 MHz = 4.8 GB/s; 150 MHz: paper "
            "Sec. IV"
        ),
    ),
    "zcu104": Board(
        name="zcu104",
        dsp=1728,
        bram_bits=312 * 36 * 1024 + 96 * 288 * 1024,
        frequency_hz=200e6,
        bandwidth_bps=min(64 / 8 * 2400e6, 4 * 16 * 200e6),
        source=(
            "Xilinx DS891 (ZU7EV: 1728 DSP48E2, 312 x 36 Kb BRAM, 96 x 288 Kb UltraRAM); UG1267 "
            "(ZCU104 PS DDR4, 64-bit, 2400 MT/s = 19.2 GB/s); 4 AXI HP x 128 bit x 200 MHz = "
            "12.8 GB/s; 200 MHz: paper Sec. IV"
        ),
    ),
}


@dataclass(frozen=True, order=True)
class Design:
    """An NPU design point <T_R, T_P, T_C>."""

    tr: int
    tp: int
    tc: int

    def stacked(self, k: float) -> Design | None:
        """The Stackable-PE configuration <floor(T_R/2), k*T_P, floor(T_C/k)> (``None`` if empty)."""
        if k == 1.0:
            return self
        tp = math.floor(self.tp * k)
        tc = math.floor(self.tc / k)
        tr = self.tr // 2
        if tp < 1 or tc < 1 or tr < 1:
            return None
        return Design(tr, tp, tc)

    def dsp(self) -> int:
        """DSP slices (one per MAC)."""
        return self.tp * self.tc

    def buffer_bits(self, bits_per_elem: int = 16) -> int:
        """Block-RAM bits of the double-buffered input and output tiles."""
        return 2 * bits_per_elem * self.tr * (self.tp + self.tc)


def eq1_shape(r: int, p: int, b_act: int, b_r: int, tp: int) -> tuple[int, int]:
    """Eq. 1: the batched input matrix ``(R_hat, P_hat)`` for ``B_R`` of ``B_act`` samples on R."""
    if not 1 <= b_r <= b_act:
        raise HardwareConfigError(f"Eq. 1 needs 1 <= B_R <= B_act, got B_R={b_r}, B_act={b_act}")
    return b_r * r, (b_act - b_r + 1) * (p + p % tp)


def _ceil_div(a: npt.NDArray[Any], b: npt.NDArray[Any] | int) -> npt.NDArray[np.int64]:
    return np.asarray(-(-a // b), dtype=np.int64)


def gemm_grid(
    r: npt.ArrayLike,
    p: npt.ArrayLike,
    c: npt.ArrayLike,
    groups: npt.ArrayLike,
    b_r: npt.ArrayLike,
    b_act: npt.ArrayLike,
    tr: npt.ArrayLike,
    tp: npt.ArrayLike,
    tc: npt.ArrayLike,
    bytes_per_cycle: float,
    bytes_per_elem: int = 2,
) -> tuple[FloatArray, FloatArray, IntArray]:
    """Cycles, DRAM bytes and tile count of the Eq. 1 GEMM; all arguments broadcast together.

    Returns:
        ``(cycles, bytes, tiles)``: device cycles (float), DRAM bytes, and tiles
        ``ceil(R_hat/T_R) * ceil(P_hat/T_P) * ceil(C/T_C) * groups``.
    """
    r_, p_, c_, g_ = (np.asarray(x, dtype=np.int64) for x in (r, p, c, groups))
    br, ba = np.asarray(b_r, dtype=np.int64), np.asarray(b_act, dtype=np.int64)
    tr_, tp_, tc_ = (np.asarray(x, dtype=np.int64) for x in (tr, tp, tc))
    rh = br * r_
    ph = (ba - br + 1) * (p_ + p_ % tp_)
    n_p = _ceil_div(ph, tp_)
    r_full, r_edge = rh // tr_, rh % tr_
    c_full, c_edge = c_ // tc_, c_ % tc_
    cycles = np.zeros(np.broadcast(rh, ph, c_, tr_, tc_).shape, dtype=np.float64)
    moved = np.zeros_like(cycles)
    for nr, rt in ((r_full, tr_), ((r_edge > 0).astype(np.int64), r_edge)):
        for nc, ct in ((c_full, tc_), ((c_edge > 0).astype(np.int64), c_edge)):
            blocks = (nr * nc).astype(np.float64)
            comp = n_p * rt
            byt = (rt * ph + ph * ct + rt * ct) * bytes_per_elem
            cycles += blocks * np.maximum(comp, byt / bytes_per_cycle)
            moved += blocks * byt
    tiles = _ceil_div(rh, tr_) * n_p * _ceil_div(c_, tc_) * g_
    return cycles * g_, moved * g_, tiles


@dataclass(frozen=True)
class GemmColumns:
    """Per-layer columns the cost model needs (length L)."""

    r: IntArray
    p: IntArray
    c: IntArray
    g: IntArray
    is_gemm: npt.NDArray[np.bool_]
    is_fc: npt.NDArray[np.bool_]
    stream_bytes: IntArray  # per-sample DMA bytes of non-GEMM layers (0 if free)
    macs: IntArray
    out_bytes: IntArray

    @staticmethod
    def of(layers: Sequence[Layer]) -> GemmColumns:
        streamed = {LayerKind.POOL, LayerKind.ELTWISE, LayerKind.VECTOR}
        return GemmColumns(
            r=np.array([x.m for x in layers], dtype=np.int64),
            p=np.array([x.k for x in layers], dtype=np.int64),
            c=np.array([x.n for x in layers], dtype=np.int64),
            g=np.array([x.groups for x in layers], dtype=np.int64),
            is_gemm=np.array([x.is_gemm for x in layers], dtype=bool),
            is_fc=np.array([x.kind is LayerKind.FC for x in layers], dtype=bool),
            stream_bytes=np.array(
                [
                    (x.input_elems + x.output_elems) * x.bytes_per_elem if x.kind in streamed else 0
                    for x in layers
                ],
                dtype=np.int64,
            ),
            macs=np.array([x.macs for x in layers], dtype=np.int64),
            out_bytes=np.array([x.output_elems * x.bytes_per_elem for x in layers], np.int64),
        )


def option_grid(
    cols: GemmColumns,
    designs: IntArray,
    b: int,
    bytes_per_cycle: float,
    bytes_per_elem: int,
    fused: bool,
) -> tuple[FloatArray, FloatArray, IntArray]:
    """Costs of every (k, B_R) option at batch ``b`` for ``D`` designs at once.

    Args:
        cols: the layers' columns (length L).
        designs: ``(D, 3)`` rows of ``<T_R, T_P, T_C>``.
        b: the active batch size.
        bytes_per_cycle: off-chip bytes per clock cycle.
        bytes_per_elem: element width in bytes.
        fused: non-GEMM layers take no cycles (``vector_ops="fused"``).

    Returns:
        ``(cycles, bytes, tiles)`` of shape ``(D, 3, b, L)`` (k as :data:`K_CHOICES`, ``B_R = j + 1``
        at index ``j``); ``inf`` where a Stackable-PE configuration does not exist.
    """
    des = np.asarray(designs, dtype=np.int64).reshape(-1, 3)
    n_d, n_l = des.shape[0], cols.r.size
    cyc = np.full((n_d, 3, b, n_l), np.inf)
    byt = np.full((n_d, 3, b, n_l), np.inf)
    til = np.zeros((n_d, 3, b, n_l), dtype=np.int64)
    b_r = np.arange(1, b + 1, dtype=np.int64)[None, :, None]
    r = np.where(cols.is_gemm, cols.r, 1)[None, None, :]
    p = np.where(cols.is_gemm, cols.p, 1)[None, None, :]
    c = np.where(cols.is_gemm, cols.c, 1)[None, None, :]
    tr, tp, tc = des[:, 0], des[:, 1], des[:, 2]
    for ki, k in enumerate(K_CHOICES):
        if k == 1.0:
            trk, tpk, tck = tr, tp, tc
        else:
            trk, tpk, tck = (
                tr // 2,
                np.floor(tp * k).astype(np.int64),
                np.floor(tc / k).astype(np.int64),
            )
        ok = (trk >= 1) & (tpk >= 1) & (tck >= 1)
        if not ok.any():
            continue
        cy, by, ti = gemm_grid(
            r,
            p,
            c,
            cols.g[None, None, :],
            b_r,
            b,
            np.maximum(trk, 1)[:, None, None],
            np.maximum(tpk, 1)[:, None, None],
            np.maximum(tck, 1)[:, None, None],
            bytes_per_cycle,
            bytes_per_elem,
        )
        cyc[:, ki] = np.where(ok[:, None, None], cy, np.inf)
        byt[:, ki] = np.where(ok[:, None, None], by, np.inf)
        til[:, ki] = ti
    # non-GEMM layers: every option costs the same streaming time for b samples
    s_bytes = (b * cols.stream_bytes).astype(np.float64)
    s_cyc = np.zeros_like(s_bytes) if fused else np.ceil(s_bytes / bytes_per_cycle)
    mask = ~cols.is_gemm
    cyc[..., mask] = np.where(np.isfinite(cyc[..., mask]), s_cyc[mask], np.inf)
    byt[..., mask] = np.where(np.isfinite(byt[..., mask]), s_bytes[mask], np.inf)
    til[..., mask] = 1
    return cyc, byt, til


def choose_many(
    cols: GemmColumns,
    designs: IntArray,
    b: int,
    strategy: str,
    stackable: bool,
    bytes_per_cycle: float,
    bytes_per_elem: int,
    fused: bool,
) -> tuple[IntArray, FloatArray, FloatArray, FloatArray, IntArray]:
    """Per-design, per-layer ``(B_R, k, cycles, bytes, tiles)`` of ``strategy`` at batch ``b``,
    arrays of shape ``(D, L)``: the fastest allowed option of :func:`option_grid` (ties go to
    k = 1, then to the smallest ``B_R``)."""
    cyc, byt, til = option_grid(cols, designs, b, bytes_per_cycle, bytes_per_elem, fused)
    n_d, _, _, n_l = cyc.shape
    allowed = np.zeros((3, b, n_l), dtype=bool)
    k_ok = slice(None) if stackable else slice(1, 2)
    if strategy == Strategy.FLUID:
        allowed[k_ok] = True
    elif strategy == Strategy.P:
        allowed[k_ok, 0, :] = True
    else:  # R, and the R-batched FC layers of FC
        allowed[k_ok, b - 1, :] = True
    order = np.array(_K_PREFERENCE)
    masked = np.where(allowed[None], cyc, np.inf)[:, order].reshape(n_d, 3 * b, n_l)
    best = np.argmin(masked, axis=1)[:, None, :]  # (D, 1, L)
    kpos, bri = np.divmod(best[:, 0, :], b)
    ki = order[kpos]
    c_out = np.take_along_axis(masked, best, axis=1)[:, 0, :]
    b_out = np.take_along_axis(byt[:, order].reshape(n_d, 3 * b, n_l), best, axis=1)[:, 0, :]
    t_out = np.take_along_axis(til[:, order].reshape(n_d, 3 * b, n_l), best, axis=1)[:, 0, :]
    b_r = (bri + 1).astype(np.int64)
    if strategy in (Strategy.SERIAL, Strategy.FC):
        one_c, one_b, one_t = option_grid(cols, designs, 1, bytes_per_cycle, bytes_per_elem, fused)
        k_mask = np.zeros((3, 1), dtype=bool)
        k_mask[k_ok] = True
        s_c = np.where(k_mask[None], b * one_c[:, :, 0, :], np.inf)[:, order]  # (D, 3, L)
        s_pos = np.argmin(s_c, axis=1)[:, None, :]
        s_k = order[s_pos[:, 0, :]]
        use = np.ones(n_l, dtype=bool) if strategy == Strategy.SERIAL else ~cols.is_fc
        c_out = np.where(use, np.take_along_axis(s_c, s_pos, axis=1)[:, 0, :], c_out)
        s_b = (b * one_b[:, :, 0, :])[:, order]
        s_t = (b * one_t[:, :, 0, :])[:, order]
        b_out = np.where(use, np.take_along_axis(s_b, s_pos, axis=1)[:, 0, :], b_out)
        t_out = np.where(use, np.take_along_axis(s_t, s_pos, axis=1)[:, 0, :], t_out)
        ki = np.where(use, s_k, ki)
        b_r = np.where(use, 1, b_r)
    k = np.asarray(K_CHOICES)[ki]
    return b_r, k, c_out, b_out, t_out.astype(np.int64)


@dataclass(frozen=True)
class EngineTable:
    """The Fluid Batching Engine's FBCB table (Sec. III-A, Fig. 5) and the costs it gives.

    Arrays have shape ``(L, B_max)``: column ``b - 1`` is batch size ``b``.

    Attributes:
        b_r: samples on R per layer and batch size (1..b).
        k: Stackable-PE factor per layer and batch size (0.5, 1 or 2).
        cycles: cycles of each layer for the whole batch under that choice.
        bytes_moved: DRAM bytes of each layer for the whole batch.
        tiles: tiles of each layer.
    """

    b_r: IntArray
    k: FloatArray
    cycles: FloatArray
    bytes_moved: FloatArray
    tiles: IntArray


class GemmNPU(Component):
    """The Fluid Batching NPU <T_R, T_P, T_C> on an FPGA board (see the module docstring).

    Args:
        tr, tp, tc: the design point (pipeline depth, MAC-tree width, PEs), each >= 1.
        frequency_hz: clock in Hz.
        memory_bandwidth_bps: off-chip bandwidth in bytes per second.
        strategy: batching strategy, one of :data:`STRATEGIES`.
        stackable: allow Stackable PEs (k in {1/2, 1, 2} per layer).
        vector_ops: ``"fused"`` (non-GEMM layers take no cycles) or ``"streamed"`` (they stream
            through the DMA at the off-chip bandwidth); see the module docstring.
        bytes_per_elem: element width in bytes (2: 16-bit fixed point).
        mac_energy_pj, dram_energy_pj_per_byte: energy hooks in pJ (>= 0).
        name: the device name.
    """

    def __init__(
        self,
        tr: int = 4652,
        tp: int = 7,
        tc: int = 128,
        frequency_hz: float = 150e6,
        memory_bandwidth_bps: float = BOARDS["zc706"].bandwidth_bps,
        strategy: str = "fluid",
        stackable: bool = True,
        vector_ops: str = "fused",
        bytes_per_elem: int = 2,
        mac_energy_pj: float = 1.0,
        dram_energy_pj_per_byte: float = 80.0,
        name: str = "gemm-npu",
    ) -> None:
        self.tr = tr
        self.tp = tp
        self.tc = tc
        self.frequency_hz = frequency_hz
        self.memory_bandwidth_bps = memory_bandwidth_bps
        self.strategy = strategy
        self.stackable = stackable
        self.vector_ops = vector_ops
        self.bytes_per_elem = bytes_per_elem
        self.mac_energy_pj = mac_energy_pj
        self.dram_energy_pj_per_byte = dram_energy_pj_per_byte
        self.name = name
        self._check()

    # --- parameters ---------------------------------------------------------------------------
    def _check(self) -> Design:
        for fld in ("tr", "tp", "tc", "bytes_per_elem"):
            v = getattr(self, fld)
            if isinstance(v, bool) or not isinstance(v, int | np.integer) or v < 1:
                raise HardwareConfigError(f"GemmNPU: {fld} must be an integer >= 1, got {v!r}")
        for fld in ("frequency_hz", "memory_bandwidth_bps"):
            v = getattr(self, fld)
            if isinstance(v, bool) or not isinstance(v, int | float) or not v > 0:
                raise HardwareConfigError(f"GemmNPU: {fld} must be a number > 0, got {v!r}")
        for fld in ("mac_energy_pj", "dram_energy_pj_per_byte"):
            v = getattr(self, fld)
            if isinstance(v, bool) or not isinstance(v, int | float) or not v >= 0:
                raise HardwareConfigError(f"GemmNPU: {fld} must be a number >= 0, got {v!r}")
        if self.strategy not in STRATEGIES:
            raise HardwareConfigError(
                f"GemmNPU: strategy={self.strategy!r}; allowed: {', '.join(STRATEGIES)}"
            )
        if self.vector_ops not in VECTOR_OPS:
            raise HardwareConfigError(
                f"GemmNPU: vector_ops={self.vector_ops!r}; allowed: {', '.join(VECTOR_OPS)}"
            )
        if not isinstance(self.stackable, bool):
            raise HardwareConfigError(
                f"GemmNPU: stackable must be true or false, got {self.stackable!r}"
            )
        return Design(int(self.tr), int(self.tp), int(self.tc))

    @property
    def design(self) -> Design:
        return self._check()

    def cache_key(self) -> tuple[object, ...]:
        """Class name and every parameter (validated), hashable."""
        self._check()
        return (type(self).__name__, *((n, getattr(self, n)) for n in self._param_names()))

    @property
    def bytes_per_cycle(self) -> float:
        return float(self.memory_bandwidth_bps) / float(self.frequency_hz)

    @property
    def peak_ops_per_s(self) -> float:
        """Peak throughput in operations per second (2 per MAC)."""
        d = self._check()
        return 2.0 * d.tp * d.tc * float(self.frequency_hz)

    # --- the per-layer grid ---------------------------------------------------------------------
    def _choose(
        self, cols: GemmColumns, b: int, strategy: str, stackable: bool
    ) -> tuple[IntArray, FloatArray, FloatArray, FloatArray, IntArray]:
        """Per-layer ``(B_R, k, cycles, bytes, tiles)`` of ``strategy`` at batch ``b``."""
        d = self._check()
        out = choose_many(
            cols,
            np.array([[d.tr, d.tp, d.tc]], dtype=np.int64),
            b,
            strategy,
            stackable,
            self.bytes_per_cycle,
            int(self.bytes_per_elem),
            self.vector_ops == "fused",
        )
        b_r, k, cyc, byt, til = (a[0] for a in out)
        return b_r, k, cyc, byt, til

    # --- public API ---------------------------------------------------------------------------
    def layer_costs_layers(self, layers: Sequence[Layer], batch: int) -> LayerCosts:
        """Per-layer costs of a layer list (a backbone or an exit head) at batch size ``batch``."""
        if isinstance(batch, bool) or not isinstance(batch, int | np.integer) or batch < 1:
            raise HardwareConfigError(f"GemmNPU: batch must be an integer >= 1, got {batch!r}")
        cols = GemmColumns.of(layers)
        _, _, cyc, byt, til = self._choose(cols, int(batch), self.strategy, self.stackable)
        cyc = np.ceil(cyc)  # whole cycles
        f = float(self.frequency_hz)
        macs = batch * cols.macs
        energy = (
            macs * float(self.mac_energy_pj) + byt * float(self.dram_energy_pj_per_byte)
        ) * _PJ
        ro: list[npt.NDArray[Any]] = [
            cyc.astype(np.int64),
            cyc / f,
            np.maximum(til, 1),
            byt.astype(np.int64),
            # FluidB preempts at exits, after the exit's last layer has written its outputs
            # off-chip (Sec. III-B "Overhead"): there is no on-chip context to save.
            np.zeros(cols.r.size, dtype=np.int64),
            energy.astype(np.float64),
        ]
        for a in ro:
            a.flags.writeable = False
        return LayerCosts(*ro)

    def layer_costs(self, network: Network, batch: int) -> LayerCosts:
        """Per-layer costs of ``network``'s backbone at batch size ``batch`` (length L):
        cycles, latency_s (seconds), tiles, bytes_moved (DRAM bytes), checkpoint_bytes (0) and
        energy_j (joules)."""
        return self.layer_costs_layers(network.layers, batch)

    def engine_table(self, network: Network, b_max: int = 8) -> EngineTable:
        """The Fluid Batching Engine table: ``B_R`` and ``k`` per layer and batch size 1..b_max,
        under this device's strategy and ``stackable`` setting."""
        cols = GemmColumns.of(network.layers)
        outs = [self._choose(cols, b, self.strategy, self.stackable) for b in range(1, b_max + 1)]
        return EngineTable(
            b_r=np.stack([o[0] for o in outs], axis=1),
            k=np.stack([o[1] for o in outs], axis=1),
            cycles=np.stack([o[2] for o in outs], axis=1),
            bytes_moved=np.stack([o[3] for o in outs], axis=1),
            tiles=np.stack([o[4] for o in outs], axis=1),
        )

    def latency_s(self, network: Network, batch: int) -> float:
        """Seconds for one batch of ``batch`` samples through the whole backbone."""
        return float(self.layer_costs(network, batch).latency_s.sum())

    def throughput_gops(self, network: Network, batch: int) -> float:
        """Backbone throughput in GOP/s (2 ops per MAC) at batch size ``batch``."""
        return 2.0 * network.macs * batch / self.latency_s(network, batch) / 1e9

    def exit_lut(self, network: Network, b_max: int = 8) -> FloatArray:
        """The ``N_exits x B_max`` look-up table of Sec. III-B: entry ``[i, b-1]`` is the seconds
        batch size ``b`` takes from just after exit ``i - 1`` up to and including exit ``i``
        (the backbone segment and exit ``i``'s head)."""
        from npusched.models.exits import exit_segments

        segs = exit_segments(network)
        lut = np.zeros((len(segs), b_max))
        for b in range(1, b_max + 1):
            per = self.layer_costs(network, b).latency_s
            for i, ((lo, hi), ex) in enumerate(zip(segs, network.exits, strict=True)):
                head = (
                    float(self.layer_costs_layers(ex.layers, b).latency_s.sum())
                    if ex.layers
                    else 0.0
                )
                lut[i, b - 1] = float(per[lo:hi].sum()) + head
        lut.flags.writeable = False
        return lut


def _register() -> None:
    from functools import partial

    from npusched.hardware.devices import DEVICES

    DEVICES.register("gemm-npu", GemmNPU)
    for board, (tr, tp, tc) in (("zc706", (4652, 7, 128)), ("zcu104", (6832, 10, 172))):
        # Table I's ResNet-50 design point on each board, at the board's clock and bandwidth
        b = BOARDS[board]
        DEVICES.register(
            f"{board}-npu",
            partial(
                GemmNPU,
                tr=tr,
                tp=tp,
                tc=tc,
                frequency_hz=b.frequency_hz,
                memory_bandwidth_bps=b.bandwidth_bps,
                name=f"{board}-npu",
            ),
        )


_register()
