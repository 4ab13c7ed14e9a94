"""``SystolicArray``: PREMA's weight-stationary systolic-array NPU and its Algorithm 1 cost model.

The device (PREMA, HPCA 2020, Table I)
--------------------------------------
128 x 128 16-bit MAC PEs at 700 MHz, 8 MB on-chip activation SRAM (unified buffer UBUF plus the
accumulator queue ACCQ), 4 MB weight SRAM, 8 memory channels giving 358 GB/s, 100-cycle memory
latency, weight-stationary dataflow (Google TPU style). Every figure is a constructor keyword
(SRAM sizes in binary megabytes: 8 MB = 8 * 2**20 bytes).

Mapping our GEMM view onto Algorithm 1
--------------------------------------
PREMA's ``GEMM_OP`` multiplies an ``(SW x SH)`` weight tile by an ``(SH x ACC)`` input tile into
an ``(SW x ACC)`` output tile held in ACCQ. Algorithm 1 loops over ``(m, k, n)`` where ``m`` is the
weight rows (output channels), ``k`` the reduction and ``n`` the columns streamed through the
array. Our IR (:mod:`npusched.models.ir`) has, per group, ``(M x K) @ (K x N)`` with ``M`` streamed,
``K`` the reduction on the array rows and ``N`` the output channels on the array columns, so

=====================  ===============================  ==================================
Algorithm 1            our IR                           tiled by
=====================  ===============================  ==================================
``m`` (weight rows)    ``N`` (output channels)          ``SW = cols`` (array columns)
``k`` (reduction)      ``K`` (``R*S*C_in/groups``)      ``SH = rows`` (array rows)
``n`` (streamed)       ``B * M`` (batch x rows)         ``ACC = acc_depth`` (ACCQ rows)
=====================  ===============================  ==================================

A batch of ``B`` samples multiplies the streamed dimension (``n = B * M``); a recurrent cell is
one time step, so its ``n`` is the batch.

**Activation x activation MatMuls** (kind ``matmul``: attention's ``Q.K^T`` and ``P.V``, RNN
attention over the encoder memory) are the exception. Their "weight" operand ``(K x N)`` is an
activation of the same sample and head (the keys, the values), so the samples of a batch and the
heads of a layer do not share a stationary tile: a weight-stationary array loads each sample's
and each head's operand and streams only that sample's ``M`` rows through it. Such a layer costs
``B * groups`` separate GEMMs of ``(M x K) @ (K x N)``; its tile count, loads and cycles grow
linearly with the batch (merging the samples into ``n = B * M`` would stream every sample
through the first sample's keys, undercounting by ~2.3x at batch 4 for BERT-sized heads). ``groups`` independent GEMMs (grouped and depthwise
convolutions) run one after another. A depthwise convolution (``K = R*S``, ``N = 1``) therefore
maps one channel onto a single column with ``R*S`` rows busy, one channel at a time: the poor
utilisation of monolithic arrays that Planaria (MICRO 2020, Sec. VI-B2) describes.

Per tile (one ``GEMM_OP``), with ``a`` the streamed columns of the tile (``ACC`` for an inner tile,
the remainder for an edge tile):

* compute phase ``C = a + SH + 2 * SW`` cycles (Algorithm 1 lines 3 and 6: streaming plus the
  fill and drain of the physical array; an edge tile in ``m`` or ``k`` still traverses the whole
  array, as in SCALE-Sim, so only ``a`` shrinks);
* memory phase ``Mem = L_mem + ceil(bytes / (BW / f))`` cycles, where ``bytes`` is the weight tile
  ``m_t * k_t`` plus the input tile ``k_t * a`` elements times the element width (Algorithm 1 lines
  4 and 7 with bytes made explicit, plus the 100-cycle access latency of Table I);
* the tile costs ``max(C, Mem)``: double buffering overlaps one tile's compute with the next
  tile's loads (line 5); the layer costs the sum over its tiles (line 10).

**Edge tiles.** Algorithm 1 as printed counts ``floor(m/SW) * floor(k/SH)`` weight tiles and so
drops the edge tiles of the ``m`` and ``k`` dimensions (it keeps only the ``n`` edge through
``phi``). This model counts every edge tile: ``ceil(N/SW) * ceil(K/SH) * ceil(B*M/ACC)`` tiles per
group, with the ``n``-edge tiles' compute and all edge tiles' smaller loads.

**Accumulator depth.** ``acc_depth = 2048`` rows of ``SW`` 32-bit partial sums per ACCQ buffer: the
Google TPU v1 choice (4096 accumulator rows, double-buffered, so 2048 per ``GEMM_OP``), i.e.
1 MiB per buffer for a 128-wide array. ``acc_depth=None`` removes the limit (one tile streams all
``B*M`` rows), which together with ``memory_stalls=False`` is the compute-only mode that
reproduces SCALE-Sim's compute cycles (``ceil(K/128)*ceil(N/128)*(M+382)-1`` on a 128x128 ws
array; ours is ``... * (M + 384)``: Algorithm 1 charges ``SH + 2*SW = 384`` fill/drain cycles per
fold where SCALE-Sim charges ``2*SH + SW - 2 = 382``, under 0.5% on every ResNet-50 layer).

**Traffic.** As in Algorithm 1, every ``GEMM_OP`` loads its weight tile and its input tile from
DRAM (the output tile stays in ACCQ/UBUF). A layer's outputs are written back once (its
``STORE_TILE``); that write drains behind the next layer's compute, so it is counted in
``bytes_moved`` and energy but not on the critical path. The weight-SRAM size and the channel
count do not enter the timing (the 358 GB/s is the aggregate over channels); they are validated
and part of :meth:`SystolicArray.cache_key`.

**Vector layers** (pooling, element-wise, activation, concat, softmax, ...) run on a vector unit of
``vector_lanes`` (128, one lane per array column, like the TPU's activation pipeline) elements per
cycle, over ``E = B * max(in, out)`` elements in tiles (preemption points) of
``acc_depth * vector_lanes`` elements. A tile of ``e`` elements costs
``max(ceil(e / lanes), L_mem + ceil(e * in_bytes / E / (BW / f)))`` cycles: its vector work or
its share of the input loads, whichever is longer. Activation functions and batch-norm fused into
a GEMM layer (``attrs["post"]``) are applied by the vector unit as outputs leave ACCQ and cost
nothing extra.

**Checkpoint bytes** (PREMA Sec. IV-B). The context a CHECKPOINT saves is the output activations
derived so far in the current layer, held in UBUF and ACCQ, capped by the on-chip activation
capacity (outputs beyond it have already spilled to DRAM). After ``t`` of a layer's ``T`` tiles
that is ``min(O * t / T, act_sram_bytes)`` with ``O = B * output_elems * width`` (tiles run with
the streamed chunk outermost and the reduction innermost, so outputs accrue evenly; partial sums
are counted at the activation width). ``LayerCosts.checkpoint_bytes`` is the **mean** of that over
the layer's tile boundaries ``t = 1..T`` - the expected size for a preemption at a uniformly random
point in the layer (``checkpoint="max"`` takes the worst boundary instead: the whole output,
capped). The worst case overall is the full ``act_sram_bytes`` (8 MiB; PREMA quotes 59 us).
A checkpoint holds only those output activations: weights are never saved (inference does not
change them), input activations are not saved (they are the previous layer's outputs, already in
DRAM or in the still-allocated input buffer that a restore reloads), and ACTV/POOL are fused or
in place (PREMA Sec. IV-B). The save and the restore each move those bytes at
``checkpoint_bandwidth_bps``, the *effective* DMA bandwidth of the trap routine: PREMA's 59 us
for the full 8 MiB (Sec. IV-D) implies ``8 * 2**20 B / 59 us = 142 GB/s``, not the 358 GB/s peak
(which still times the layers' own loads and stores).
:meth:`SystolicArray.tile_costs` lists the per-tile figures (cycles, bytes, checkpoint bytes).

**Energy** (first-order hooks): ``mac_energy_pj`` per MAC (default 1.0 pJ: a 16-bit multiply
~0.8 pJ plus a 32-bit accumulate ~0.1 pJ at 45 nm, Horowitz ISSCC 2014, rounded up for the PE
registers), the same per vector-unit element operation, and ``dram_energy_pj_per_byte`` per DRAM
byte (default 32 pJ = 4 pJ/bit, HBM2-class, O'Connor et al. MICRO 2017). On-chip SRAM access and
static power are not modelled.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from numbers import Integral, Real
from typing import Any

import numpy as np

from npusched.base import Component
from npusched.errors import HardwareConfigError
from npusched.hardware.base import IntArray, LayerCosts
from npusched.models.ir import KIND_CODES, Layer, LayerKind, Network

__all__ = ["CHECKPOINT_BANDWIDTH_BPS", "CHECKPOINT_STATS", "SystolicArray"]

CHECKPOINT_STATS = ("mean", "max")
#: Effective CHECKPOINT save/restore bandwidth (bytes/s) implied by PREMA Sec. IV-D: the worst
#: case, the whole 8 MiB UBUF/ACCQ, takes 59 us.
CHECKPOINT_BANDWIDTH_BPS = 8 * 2**20 / 59e-6

_PJ = 1e-12


@dataclass(frozen=True)
class _Config:
    """Validated, converted parameters (derived state; never stored on the device)."""

    rows: int
    cols: int
    f: float
    bw: float
    act_sram: int
    latency: int
    acc: int | None
    lanes: int
    stalls: bool
    mac_pj: float
    dram_pj: float
    ckpt_max: bool
    fill: bool = True

    @property
    def bytes_per_cycle(self) -> float:
        return self.bw / self.f


def _int_param(name: str, value: object, minimum: int) -> int:
    ok = isinstance(value, Integral) and not isinstance(value, bool)
    if not ok and isinstance(value, float) and value.is_integer():
        ok = True  # configs read from TOML/YAML may spell 128 as 128.0
    if not ok or int(value) < minimum:  # type: ignore[call-overload]
        raise HardwareConfigError(
            f"SystolicArray: {name} must be an integer >= {minimum}, got {value!r}"
        )
    return int(value)  # type: ignore[call-overload]


def _real_param(name: str, value: object, *, positive: bool) -> float:
    ok = isinstance(value, Real) and not isinstance(value, bool)
    v = float(value) if ok else math.nan  # type: ignore[arg-type]
    if not ok or not math.isfinite(v) or (v <= 0.0 if positive else v < 0.0):
        rng = "> 0" if positive else ">= 0"
        raise HardwareConfigError(
            f"SystolicArray: {name} must be a finite number {rng}, got {value!r}"
        )
    return v


class SystolicArray(Component):
    """PREMA's weight-stationary systolic-array NPU (Table I) costed by Algorithm 1.

    See the module docstring for the mapping, the edge-tile, accumulator, traffic, checkpoint and
    energy conventions. Parameters are stored unchanged and validated on construction and again
    on every use (so ``set_params`` with a bad value fails at the next call).

    Args:
        rows: PE rows ``SH`` (the reduction dimension ``K``), >= 1.
        cols: PE columns ``SW`` (output channels ``N``), >= 1.
        frequency_hz: PE clock in Hz (700 MHz), > 0.
        memory_bandwidth_bps: off-chip bandwidth in bytes/s (358 GB/s, all channels), > 0.
        act_sram_bytes: on-chip activation SRAM (UBUF + ACCQ) in bytes (8 MiB), >= 1; caps the
            CHECKPOINT context.
        weight_sram_bytes: weight SRAM in bytes (4 MiB), >= 1; descriptive (see module docstring).
        memory_channels: DRAM channels (8), >= 1; descriptive (``memory_bandwidth_bps`` is the
            aggregate).
        memory_latency_cycles: cycles added to every tile's memory phase (100), >= 0.
        acc_depth: ACCQ rows per ``GEMM_OP`` (``ACC``, 2048), >= 1, or ``None`` for no limit.
        vector_lanes: vector-unit elements per cycle (128), >= 1.
        memory_stalls: if ``False``, tiles cost their compute phase only (compute-only mode).
        fill_drain: if ``True`` (the default, Algorithm 1) every tile's compute phase adds the
            array's fill and drain, ``SH + 2 * SW`` cycles; ``False`` charges the streamed rows
            only, the compute model of the Planaria authors' simulator (he-actlab/planaria.code,
            ``Core.get_core_compute_cycles``: ``b*oh*ow * ceil(oc/M) * ceil(kw*kh*ic/N)``,
            ``overhead = 0``), i.e. the next weight tile loads while the current one streams.
        mac_energy_pj: energy per MAC and per vector element operation in pJ (1.0), >= 0.
        dram_energy_pj_per_byte: energy per DRAM byte in pJ (32.0), >= 0.
        checkpoint: how ``checkpoint_bytes`` summarises a layer's tile boundaries: ``"mean"``
            (expected size at a uniformly random boundary, the default) or ``"max"`` (the worst
            boundary, i.e. the layer's whole output capped by ``act_sram_bytes``).
        checkpoint_bandwidth_bps: effective bytes/s of a CHECKPOINT save or restore (> 0;
            default :data:`CHECKPOINT_BANDWIDTH_BPS`, 142 GB/s, PREMA's 59 us for 8 MiB); the
            profile's ``memory_bandwidth_bps`` (which the simulator uses only for checkpoints).
        name: the device name in profiles and caches.
    """

    def __init__(
        self,
        rows: int = 128,
        cols: int = 128,
        frequency_hz: float = 700e6,
        memory_bandwidth_bps: float = 358e9,
        act_sram_bytes: int = 8 * 2**20,
        weight_sram_bytes: int = 4 * 2**20,
        memory_channels: int = 8,
        memory_latency_cycles: int = 100,
        acc_depth: int | None = 2048,
        vector_lanes: int = 128,
        memory_stalls: bool = True,
        mac_energy_pj: float = 1.0,
        dram_energy_pj_per_byte: float = 32.0,
        checkpoint: str = "mean",
        name: str = "prema-npu",
        checkpoint_bandwidth_bps: float = CHECKPOINT_BANDWIDTH_BPS,
        fill_drain: bool = True,
    ) -> None:
        self.rows = rows
        self.cols = cols
        self.frequency_hz = frequency_hz
        self.memory_bandwidth_bps = memory_bandwidth_bps
        self.act_sram_bytes = act_sram_bytes
        self.weight_sram_bytes = weight_sram_bytes
        self.memory_channels = memory_channels
        self.memory_latency_cycles = memory_latency_cycles
        self.acc_depth = acc_depth
        self.vector_lanes = vector_lanes
        self.memory_stalls = memory_stalls
        self.mac_energy_pj = mac_energy_pj
        self.dram_energy_pj_per_byte = dram_energy_pj_per_byte
        self.checkpoint = checkpoint
        self.name = name
        self.checkpoint_bandwidth_bps = checkpoint_bandwidth_bps
        self.fill_drain = fill_drain
        self._config()  # fail fast on bad keywords; nothing is stored

    # --- parameters -----------------------------------------------------------------------------
    def _config(self) -> _Config:
        _int_param("weight_sram_bytes", self.weight_sram_bytes, 1)
        _int_param("memory_channels", self.memory_channels, 1)
        if not isinstance(self.memory_stalls, bool | np.bool_):
            raise HardwareConfigError(
                f"SystolicArray: memory_stalls must be true or false, got {self.memory_stalls!r}"
            )
        if not isinstance(self.fill_drain, bool | np.bool_):
            raise HardwareConfigError(
                f"SystolicArray: fill_drain must be true or false, got {self.fill_drain!r}"
            )
        if self.checkpoint not in CHECKPOINT_STATS:
            raise HardwareConfigError(
                f"SystolicArray: checkpoint must be one of {', '.join(CHECKPOINT_STATS)}, "
                f"got {self.checkpoint!r}"
            )
        if not isinstance(self.name, str) or not self.name:
            raise HardwareConfigError(
                f"SystolicArray: name must be a non-empty string, got {self.name!r}"
            )
        _real_param("checkpoint_bandwidth_bps", self.checkpoint_bandwidth_bps, positive=True)
        return _Config(
            rows=_int_param("rows", self.rows, 1),
            cols=_int_param("cols", self.cols, 1),
            f=_real_param("frequency_hz", self.frequency_hz, positive=True),
            bw=_real_param("memory_bandwidth_bps", self.memory_bandwidth_bps, positive=True),
            act_sram=_int_param("act_sram_bytes", self.act_sram_bytes, 1),
            latency=_int_param("memory_latency_cycles", self.memory_latency_cycles, 0),
            acc=None if self.acc_depth is None else _int_param("acc_depth", self.acc_depth, 1),
            lanes=_int_param("vector_lanes", self.vector_lanes, 1),
            stalls=bool(self.memory_stalls),
            mac_pj=_real_param("mac_energy_pj", self.mac_energy_pj, positive=False),
            dram_pj=_real_param(
                "dram_energy_pj_per_byte", self.dram_energy_pj_per_byte, positive=False
            ),
            ckpt_max=self.checkpoint == "max",
            fill=bool(self.fill_drain),
        )

    def cache_key(self) -> tuple[object, ...]:
        """Class name and every parameter (validated), hashable."""
        self._config()
        return (type(self).__name__, *((n, getattr(self, n)) for n in self._param_names()))

    @property
    def peak_macs_per_s(self) -> float:
        """Peak MAC throughput (rows x cols x frequency), MACs per second."""
        cfg = self._config()
        return cfg.rows * cfg.cols * cfg.f

    # --- costs -----------------------------------------------------------------------------------
    def layer_costs(self, network: Network, batch: int) -> LayerCosts:
        """Per-layer costs of ``network`` at batch size ``batch`` (arrays of length L)."""
        grid = self.layer_costs_grid(network, (batch,))
        return LayerCosts(
            cycles=grid.cycles[0],
            latency_s=grid.latency_s[0],
            tiles=grid.tiles[0],
            bytes_moved=grid.bytes_moved[0],
            checkpoint_bytes=grid.checkpoint_bytes[0],
            energy_j=grid.energy_j[0],
        )

    def layer_costs_grid(self, network: Network, batch_sizes: Sequence[int]) -> LayerCosts:
        """Costs for every (batch size, layer) at once: arrays of shape ``(len(batch_sizes), L)``.

        Vectorised over layers and batch sizes (no Python loop over either).

        Returns:
            A :class:`LayerCosts` whose arrays are 2-D: cycles (device cycles), latency_s
            (seconds), tiles, bytes_moved (DRAM bytes), checkpoint_bytes (bytes), energy_j
            (joules).
        """
        cfg = self._config()
        b = _batches(batch_sizes)[:, None]  # (NB, 1)
        c = network.columns
        is_gemm = c["is_gemm"].astype(bool)
        width = c["bytes_per_elem"]

        # Activation x activation MatMuls have a stationary operand per sample (and per head):
        # the batch multiplies the groups, not the streamed rows (see the module docstring).
        per_sample = (c["kind"] == KIND_CODES[LayerKind.MATMUL])[None, :]
        g_cycles, g_tiles, g_bytes = _gemm_grid(
            cfg,
            np.where(is_gemm, c["m"], 0)[None, :] * np.where(per_sample, 1, b),
            c["k"],
            c["n"],
            c["groups"][None, :] * np.where(per_sample, b, 1),
            width,
        )
        v_elems = b * np.maximum(c["input_elems"], c["output_elems"])[None, :]
        v_cycles, v_tiles, v_bytes = _vector_grid(cfg, v_elems, b * c["input_elems"] * width)

        out_elems = np.where(
            c["output_elems"] > 0, c["output_elems"], c["m"] * c["n"] * c["groups"]
        )
        out_bytes = b * out_elems * width
        cycles = np.where(is_gemm, g_cycles, v_cycles)
        tiles = np.where(is_gemm, g_tiles, v_tiles)
        moved = np.where(is_gemm, g_bytes, v_bytes) + out_bytes
        if cfg.ckpt_max:
            ckpt = np.minimum(out_bytes, cfg.act_sram)
        else:
            ckpt = _mean_checkpoint(out_bytes, tiles, cfg.act_sram)
        ops = np.where(is_gemm, b * c["macs"], v_elems)
        energy = (ops * cfg.mac_pj + moved * cfg.dram_pj) * _PJ
        return LayerCosts(
            cycles=_ro(cycles.astype(np.int64)),
            latency_s=_ro(cycles / cfg.f),
            tiles=_ro(tiles.astype(np.int64)),
            bytes_moved=_ro(moved.astype(np.int64)),
            checkpoint_bytes=_ro(ckpt),
            energy_j=_ro(energy.astype(np.float64)),
        )

    def tile_costs(self, network: Network, batch: int, layer: int | str) -> dict[str, Any]:
        """Per-tile view of one layer, tiles in execution order (a report, not the hot path).

        GEMM tiles run group by group, then streamed chunk, then output-column tile, with the
        reduction innermost (so an output tile completes after its last ``K`` tile); vector
        tiles are element chunks. The sums (and the mean of ``checkpoint_bytes``) equal
        :meth:`layer_costs` for the layer.

        Returns:
            Arrays of length T (tiles): ``streamed`` (columns streamed, or elements for a vector
            tile), ``k_rows`` and ``n_cols`` (0 for vector tiles), ``compute_cycles``,
            ``memory_cycles`` (cycles of the tile's loads incl. latency), ``cycles`` (the
            tile's cost), ``bytes_loaded`` (DRAM bytes), ``checkpoint_bytes`` (output bytes a
            CHECKPOINT right after the tile saves: ``min(O * t / T, act_sram_bytes)``), and
            ``end_cycle`` (cumulative cycles at the tile's end).
        """
        cfg = self._config()
        b = int(_batches((batch,))[0])
        idx = network.index(layer) if isinstance(layer, str) else int(layer)
        ly = network.layers[idx]
        width = ly.bytes_per_elem
        if ly.is_gemm:
            per_sample = ly.kind == LayerKind.MATMUL
            ss = _pieces(ly.m if per_sample else ly.m * b, cfg.acc)
            sn = _pieces(ly.n, cfg.cols)
            sk = _pieces(ly.k, cfg.rows)
            s3, n3, k3 = (
                np.tile(a.ravel(), ly.groups * (b if per_sample else 1))
                for a in np.meshgrid(ss, sn, sk, indexing="ij")
            )
            compute, memory, cycles, loaded = _gemm_tiles(cfg, s3, n3, k3, width)
            out_elems = ly.output_elems or ly.m * ly.n * ly.groups
        else:
            elems = b * max(ly.input_elems, ly.output_elems)
            chunk = None if cfg.acc is None else cfg.acc * cfg.lanes
            s3 = _pieces(elems, chunk) if elems > 0 else np.array([0], dtype=np.int64)
            n3 = k3 = np.zeros_like(s3)
            ratio = b * ly.input_elems * width / max(elems, 1)
            compute, memory, cycles = _vector_tiles(cfg, s3, ratio)
            cycles = cycles.copy()  # (may be the compute array itself)
            cycles[-1] += max(1 - int(cycles.sum()), 0)  # an empty layer still takes a cycle
            loaded = np.diff(np.rint(np.concatenate(([0.0], np.cumsum(s3 * ratio)))))
            out_elems = ly.output_elems
        t = np.arange(1, len(s3) + 1)
        o = b * out_elems * width
        ckpt = np.minimum(o * t / len(s3), cfg.act_sram)
        return {
            "streamed": s3,
            "k_rows": k3,
            "n_cols": n3,
            "compute_cycles": compute,
            "memory_cycles": memory,
            "cycles": cycles,
            "bytes_loaded": loaded.astype(np.int64),
            "checkpoint_bytes": ckpt,
            "end_cycle": np.cumsum(cycles),
        }

    def gemm_cycles(
        self, m: int, k: int, n: int, *, groups: int = 1, batch: int = 1, bytes_per_elem: int = 2
    ) -> int:
        """Cycles of one GEMM layer ``groups x (batch*m x k) @ (k x n)`` (see module docstring)."""
        layer = Layer(
            "gemm", LayerKind.FC, m=m, k=k, n=n, groups=groups, bytes_per_elem=bytes_per_elem
        )
        net = Network("gemm", (layer,))
        return int(self.layer_costs_grid(net, (batch,)).cycles[0, 0])


# --- vectorised kernels --------------------------------------------------------------------------
def _batches(batch_sizes: Iterable[int]) -> IntArray:
    bs = np.asarray(list(batch_sizes), dtype=np.int64)
    if bs.ndim != 1 or bs.size == 0 or (bs < 1).any():
        raise HardwareConfigError(f"batch sizes must be positive integers, got {list(bs)}")
    return bs


def _ro(a: Any) -> Any:
    a = np.ascontiguousarray(a)
    a.flags.writeable = False
    return a


def _cdiv(a: Any, b: Any) -> Any:
    return -(-a // b)


def _gemm_grid(
    cfg: _Config,
    mb: IntArray,
    k: IntArray,
    n: IntArray,
    groups: IntArray,
    width: IntArray,
    *,
    weight_share: float = 1.0,
    input_share: float = 1.0,
) -> tuple[IntArray, IntArray, IntArray]:
    """Cycles, tiles and loaded bytes of GEMM layers; ``mb`` is ``(NB, L)`` streamed rows and
    ``groups`` ``(NB, L)`` independent GEMMs (batch-dependent for activation MatMuls).

    Tiles fall in 2 x 2 x 2 classes (full or edge in each of N, K and the streamed dimension);
    each class has a count and a per-tile cost, so the layer total is a sum of 8 products.
    Layers with zero dimensions (vector layers) get zero counts. ``weight_share`` /
    ``input_share`` scale the weight / input tile bytes this array loads itself (``1/k`` when a
    tile is broadcast to ``k`` arrays that share the load; see :func:`_gemm_tiles`).
    """
    sh, sw = cfg.rows, cfg.cols
    # N over the array columns: full tiles of SW, and one edge tile of N % SW.
    cnt_n = np.stack([n // sw, (n % sw > 0).astype(np.int64)], axis=-1)  # (L, 2)
    size_n = np.stack([np.full_like(n, sw), n % sw], axis=-1)
    # K over the array rows: full tiles of SH, and one edge tile of K % SH.
    cnt_k = np.stack([k // sh, (k % sh > 0).astype(np.int64)], axis=-1)
    size_k = np.stack([np.full_like(k, sh), k % sh], axis=-1)
    # The streamed dimension in chunks of ACC (or all of it when unlimited).
    if cfg.acc is None:
        cnt_s = np.stack([(mb > 0).astype(np.int64), np.zeros_like(mb)], axis=-1)  # (NB, L, 2)
        size_s = np.stack([mb, np.zeros_like(mb)], axis=-1)
    else:
        cnt_s = np.stack([mb // cfg.acc, (mb % cfg.acc > 0).astype(np.int64)], axis=-1)
        size_s = np.stack([np.full_like(mb, cfg.acc), mb % cfg.acc], axis=-1)

    # Broadcast to (NB, L, n-class, k-class, s-class).
    cn, ck, cs = (
        cnt_n[None, :, :, None, None],
        cnt_k[None, :, None, :, None],
        cnt_s[:, :, None, None, :],
    )
    zn, zk, zs = (
        size_n[None, :, :, None, None],
        size_k[None, :, None, :, None],
        size_s[:, :, None, None, :],
    )
    count = cn * ck * cs * groups[:, :, None, None, None]
    _, _, per_tile, loaded = _gemm_tiles(
        cfg,
        zs,
        zn,
        zk,
        width[None, :, None, None, None],
        weight_share=weight_share,
        input_share=input_share,
    )
    axes = (2, 3, 4)
    return (
        (count * per_tile).sum(axis=axes),
        count.sum(axis=axes),
        (count * loaded).sum(axis=axes),
    )


def _vector_grid(
    cfg: _Config, elems: IntArray, in_bytes: IntArray
) -> tuple[IntArray, IntArray, IntArray]:
    """Cycles, tiles and loaded bytes of vector layers (``(NB, L)`` element counts).

    A tile is a chunk of ``acc_depth * vector_lanes`` elements (the whole layer when ``acc_depth``
    is ``None``) that loads its share of the inputs; like a GEMM tile it costs the larger of its
    vector work and its loads, so the layer is the sum over a full-chunk and an edge class.
    """
    if cfg.acc is None:
        cnt = np.stack([(elems > 0).astype(np.int64), np.zeros_like(elems)], axis=-1)
        size = np.stack([elems, np.zeros_like(elems)], axis=-1)
    else:
        chunk = cfg.acc * cfg.lanes
        cnt = np.stack([elems // chunk, (elems % chunk > 0).astype(np.int64)], axis=-1)
        size = np.stack([np.full_like(elems, chunk), elems % chunk], axis=-1)
    _, _, per_tile = _vector_tiles(cfg, size, (in_bytes / np.maximum(elems, 1))[..., None])
    cycles = (cnt * per_tile).sum(axis=-1)
    return np.maximum(cycles, 1), np.maximum(cnt.sum(axis=-1), 1), in_bytes


def _gemm_tiles(
    cfg: _Config,
    streamed: Any,
    n_cols: Any,
    k_rows: Any,
    width: Any,
    *,
    weight_share: float = 1.0,
    input_share: float = 1.0,
) -> tuple[IntArray, IntArray, IntArray, IntArray]:
    """Algorithm 1's cost of ``GEMM_OP`` tiles (any broadcastable integer arrays).

    A tile streams ``streamed`` columns through a ``k_rows x n_cols`` weight tile of ``width``
    bytes per element. Returns its compute phase ``a + SH + 2 * SW`` (``a`` alone when the
    device's ``fill_drain`` is off), its memory phase (access
    latency plus the weight and input tile loads at the memory bandwidth), its cost (the larger
    of the two, or the compute phase alone without memory stalls), all in cycles, and the
    bytes it loads. The one per-tile formula behind :meth:`SystolicArray.layer_costs_grid`
    (tile classes) and :meth:`SystolicArray.tile_costs` (every tile). ``weight_share`` and
    ``input_share`` (default 1) scale the weight and input tile bytes: a tile broadcast to
    ``k`` arrays that split the load is ``1/k`` of each one's traffic (Planaria's fission
    array; the loaded bytes are then fractional).
    """
    compute = streamed + (cfg.rows + 2 * cfg.cols if cfg.fill else 0)
    if weight_share == 1.0 and input_share == 1.0:
        loaded = (n_cols * k_rows + k_rows * streamed) * width
    else:
        loaded = (n_cols * k_rows * weight_share + k_rows * streamed * input_share) * width
    memory = cfg.latency + np.ceil(loaded / cfg.bytes_per_cycle).astype(np.int64)
    cycles = np.maximum(compute, memory) if cfg.stalls else compute
    return compute, memory, cycles, loaded


def _vector_tiles(
    cfg: _Config, size: Any, bytes_per_elem: Any
) -> tuple[IntArray, IntArray, IntArray]:
    """Vector-unit tiles of ``size`` elements loading ``size * bytes_per_elem`` bytes: their
    vector work, memory phase and cost in cycles (an empty tile costs 0)."""
    work = _cdiv(size, cfg.lanes)
    memory = cfg.latency + np.ceil(size * bytes_per_elem / cfg.bytes_per_cycle).astype(np.int64)
    if not cfg.stalls:
        return work, memory, work
    return work, memory, np.where(size > 0, np.maximum(work, memory), 0)


def _pieces(total: int, size: int | None) -> IntArray:
    """``total`` split into pieces of ``size`` (the last one smaller), in order."""
    if total <= 0:
        return np.zeros(0, dtype=np.int64)
    if size is None or size >= total:
        return np.array([total], dtype=np.int64)
    full, rem = divmod(total, size)
    return np.array([size] * full + ([rem] if rem else []), dtype=np.int64)


def _mean_checkpoint(out_bytes: IntArray, tiles: IntArray, cap: int) -> IntArray:
    """Mean over ``t = 1..T`` of ``min(O * t / T, cap)``, rounded to whole bytes.

    With ``t*`` the last boundary still under the cap, the sum is
    ``O/T * t*(t*+1)/2 + (T - t*) * cap``.
    """
    o = out_bytes.astype(np.float64)
    t = np.maximum(tiles, 1).astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        t_star = np.where(o > 0, np.minimum(np.floor(cap * t / o), t), t)
    total = o / t * t_star * (t_star + 1) / 2 + (t - t_star) * cap
    return np.rint(total / t).astype(np.int64)


def _register() -> None:
    from npusched.hardware.devices import DEVICES

    DEVICES.register("prema-npu", SystolicArray)


_register()
