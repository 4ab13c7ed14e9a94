"""``AB9``: the systolic tensor core (STC) of ETRI's AB9 NPU and its operation-aware power model.

Source: "Layer-wise dynamic frequency scaling for a neural processing unit" (ETRI Journal 2022;
``shared/papers/004``), Sec. 2-3, Tables 1-5, Eq. 1-4.

The device (Sec. 2)
-------------------
128 x 128 PEs (fp16 MAC), 32 MB of on-chip memory (128 DC buffers of 256 KB), up to 1 GHz, two
LPDDR4 channels. The run-time choice is the STC clock (Table 5: 20 levels, 100-1000 MHz) and the
supply voltage (DVFS: 0.95 V at or below 500 MHz, 1.00 V above; DFS: always 1.00 V). Both are
plan-variant axes (:attr:`AB9.variant_axes`), keyword-only arguments of :meth:`AB9.layer_costs`.

Dataflow and tiling (Sec. 2.2-2.3, Table 1, Fig. 3)
---------------------------------------------------
DC buffer ``y`` feeds the IFM (and the PE instruction) into row ``y`` and the kernel into column
``y``; every PE accumulates one output, so the array is output-stationary: a tile is ``R`` output
pixels (rows, our IR's streamed ``B*M``) x ``C`` output channels (columns, ``N``), and its
reduction ``K`` streams through in ``m = K`` cycles. A layer's GEMM ``groups x (B*M x K) @ (K x N)``
is cut into ``ceil(B*M/128) * ceil(N/128) * groups`` tiles (the edge tiles have ``R = B*M mod
128`` or ``C = N mod 128``). Per tile, the operations of Table 1 and their ``N_op`` (PEs or DC
buffers executing them) and ``T_op`` (cycles):

==========  =========================  ================  ==============================
op          executed by (Table 1)      ``N_op``          ``T_op``
==========  =========================  ================  ==============================
RD_I        DC buffer(y < R)           ``R``             ``m``
RD_K        DC buffer(y < C)           ``C``             ``m``
TR_I        PE(x >= 0, y < R)          ``128 * R``       ``m``
TR_K        PE(x < C, y >= 0)          ``C * 128``       ``m``
MAC         PE(x < C, y < R)           ``R * C``         ``m``
MAC_ineff   PE(x >= C, y < R)          ``(128 - C) * R`` ``m``
TR_O        PE(x < C, y < R)           ``R * C``         ``n = 2C - 1`` (Table 4)
WR_O        DC buffer(y < R)           ``R``             ``C`` (one output per column)
==========  =========================  ================  ==============================

``T_TR_O = 2C - 1`` is Table 4's ``n`` (63, 127, 191, 255 for C = 32..128). ``T_WR_O = C`` is our
choice (the paper gives no WR_O count): DC buffer ``y`` receives and writes the ``C`` outputs of
its row. A tile occupies the array for ``max(m, 2C - 1)`` cycles: TR_O of one tile drains while
the next tile's MACs run (Table 4: total cycle count = ``m``), and a layer adds one pipeline fill
and drain of ``rows + cols`` cycles.

**Vector layers** (pooling, element-wise, concat, ...) are not described by the paper. We run them
on the PEs as ADD (Table 1 note a: ADD costs as MAC): ``E_out = B * output_elems`` outputs in
full-array tiles of 128 x 128 outputs, each reducing ``k = ceil(input_elems / output_elems)``
inputs (``m = k``); IFM operations (RD_I, TR_I) as for a GEMM, no kernel operations, TR_O and
WR_O as above.

Power (Eq. 1-4, Tables 2-3)
---------------------------
``P = P_static + alpha*C * f * V^2 * k + P_const`` with

* ``alpha*C = sum_op(N_op * W_op * T_op) / total cycle count`` (Eq. 3), ``W_op`` of Table 3
  (MAC 10, MAC_ineff 6, TR_I/TR_K/RD_I/RD_K 86, TR_O 2, WR_O 79; relative units 1..100);
* the total cycle count is every STC cycle of the layer, ``latency * f``: cycles the array spends
  waiting (on memory, or on the FC/MM, see ``stc_efficiency``) count, so a memory-bound layer's
  ``alpha*C`` falls as ``f`` rises;
* ``P_static`` (``static_power_w``) the maximum static power at the hottest on-chip temperature
  (Sec. 3.1), ``P_const`` (``constant_power_w``) the other components (SPARC CPU, NoC, PLLs) whose
  ``alpha*C`` the paper treats as constant (footnote 1);
* ``k`` (W per W_op unit per Hz per V^2) is not given: the paper's ``W_op`` are relative. We fix
  the scale by ``peak_dynamic_power_w``: the dynamic power, at 1 GHz and 1.00 V, of a full
  128 x 128 tile streaming a long reduction (all Table-1 operations, TR_O and WR_O amortised to
  nothing), i.e. ``k = peak_dynamic_power_w / (alpha*C_full * f_max)`` with
  ``alpha*C_full = 2 * 86 * 128 + 2 * 86 * 128**2 + 10 * 128**2`` (= :data:`ALPHA_C_FULL`,
  divided by ``stc_efficiency`` so that the efficiency stretches time without changing power).

The defaults (``static_power_w = 18``, ``constant_power_w = 6``, ``peak_dynamic_power_w = 21``)
are our choice, from two readings of the paper:

* **Idle power ~ 24 W.** The paper's SqueezeNet spends 10 x 2.15 ms of its 50 ms DVFS frame
  (Table 6: s = 43%) changing voltage, yet DFS draws only 8% more average power (Sec. 4.2). If
  the layers draw about the same power P_run under both policies (both sit at the cap) and the
  STC idles during a switch, ``P_dvfs = s * P_idle + (1 - s) * P_run = P_run / 1.08``, so
  ``P_idle = 0.83 * P_run``, about 24-25 W for P_run ~ 30 W. The split between static (18 W)
  and constant (6 W) does not change any result.
* **The limit binds for heavy layers at high clocks** (Fig. 4) and pushes them to or below
  500 MHz (every network of Table 6 changes voltage under DVFS, so some layers must run at or
  below 500 MHz and others above): a full-array convolution draws ``24 + 21 * f/1GHz * V^2`` W,
  so DFS caps it at 400 MHz (32.4 W; 450 MHz would be 33.45 W) and DVFS at 450 MHz / 0.95 V
  (32.5 W), while layers that fill fewer PEs (few output channels, FC layers at batch 1) or wait
  on memory run faster, up to 1 GHz.

``npusched reproduce dfs`` does not use these defaults: it fits the idle power, the dynamic
power and ``stc_efficiency`` by least squares to the paper's own numbers (idle 25 W, dynamic
20 W, efficiency 0.0178; :mod:`npusched.experiments.reproduce.dfs_fit`) and reports the residual
per network and the sensitivity around the fit. The defaults stay for the other suites that run
the AB9.

Layer time: ``t(f) = max(cycles / (stc_efficiency * f), bytes / memory_bandwidth)``. The compute
part scales with ``1/f``; the memory part (the LPDDR4 transfers of inputs, weights and outputs)
does not (double buffering overlaps the two). Each layer reads its inputs and weights and writes
its outputs once (the 32 MB on-chip memory holds a tile's working set).
``stc_efficiency`` (default 1.0) is the fraction of STC cycles doing Table-1 work; the rest are
stall cycles at the STC clock (instruction fetch, address generation, DC refills). The measured
AB9 frame times of Table 6 imply that the chip sustains only a few percent of its peak; the
``reproduce dfs`` suite calibrates it (see :mod:`npusched.experiments.reproduce.dfs`).

Energy per layer: ``P * t``; :meth:`AB9.power_table` gives latency, power, ``alpha*C`` and
energy for every (frequency level, layer) at once.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from numbers import Integral, Real
from typing import Any

import numpy as np

from npusched.base import Component
from npusched.errors import HardwareConfigError
from npusched.hardware.base import FloatArray, IntArray, LayerCosts
from npusched.models.ir import Network

__all__ = [
    "AB9",
    "ALPHA_C_FULL",
    "DFS_VOLTAGES_V",
    "DVFS_VOLTAGES_V",
    "FREQUENCIES_HZ",
    "OPS",
    "W_OP",
    "LayerOps",
    "PowerTable",
    "alpha_c",
    "full_array_alpha_c",
    "fused_steps",
    "microbenchmark_alpha_c",
    "tile_op_counts",
]

#: Table 5: the 20 STC clock levels (Hz), index 0..19.
FREQUENCIES_HZ: tuple[float, ...] = tuple(
    float(mhz) * 1e6
    for mhz in (
        *(100, 125, 150, 175, 200, 225, 250, 275, 300, 350),  # index 0-9
        *(400, 450, 500, 550, 600, 650, 700, 800, 900, 1000),  # index 10-19
    )
)
#: Table 5: DVFS voltage per level (0.95 V at or below 500 MHz, 1.00 V above).
DVFS_VOLTAGES_V: tuple[float, ...] = tuple(0.95 if f <= 500e6 else 1.00 for f in FREQUENCIES_HZ)
#: Table 5: DFS voltage per level (always 1.00 V).
DFS_VOLTAGES_V: tuple[float, ...] = tuple(1.00 for _ in FREQUENCIES_HZ)

#: Table 1's operations, in the order of every op-count array.
OPS: tuple[str, ...] = ("RD_I", "RD_K", "TR_I", "TR_K", "MAC", "MAC_ineff", "TR_O", "WR_O")
#: Table 3: W_op per operation (TR_I, RD_I, TR_K, RD_K share W_TR_IK/RD_IK = 86).
W_OP: dict[str, int] = {
    "RD_I": 86,
    "RD_K": 86,
    "TR_I": 86,
    "TR_K": 86,
    "MAC": 10,
    "MAC_ineff": 6,
    "TR_O": 2,
    "WR_O": 79,
}
_W = np.array([W_OP[op] for op in OPS], dtype=np.float64)

_ARRAY = 128


def full_array_alpha_c(rows: int = _ARRAY, cols: int = _ARRAY) -> float:
    """``alpha*C`` (W_op units per cycle) of a full ``rows x cols`` tile over a long reduction
    (TR_O and WR_O amortised away): the power model's scale anchor."""
    return float(
        W_OP["RD_I"] * rows
        + W_OP["RD_K"] * cols
        + W_OP["TR_I"] * cols * rows
        + W_OP["TR_K"] * cols * rows
        + W_OP["MAC"] * rows * cols
    )


#: :func:`full_array_alpha_c` of the 128 x 128 AB9.
ALPHA_C_FULL: float = full_array_alpha_c()


def tile_op_counts(
    r: Any,
    c: Any,
    m: Any,
    n: Any | None = None,
    *,
    array_rows: int = _ARRAY,
    array_cols: int = _ARRAY,
    kernel: Any = True,
) -> FloatArray:
    """``N_op * T_op`` of every Table-1 operation for tiles of ``r x c`` PEs reducing ``m`` cycles.

    Args:
        r: rows ``R`` (PEs doing MAC per column), any broadcastable array.
        c: columns ``C``.
        m: MAC cycles ``T_MAC``.
        n: TR_O cycles; ``None`` means ``2C - 1`` (Table 4).
        array_rows: PE rows of the array (128; the kernel travels down all of them).
        array_cols: PE columns of the array (128; the IFM travels across all of them).
        kernel: whether the tile reads kernels (RD_K, TR_K); ``False`` for vector layers.

    Returns:
        Array of shape ``(8, *broadcast shape)``: ``N_op * T_op`` per op in :data:`OPS` order
        (PE- or DC-buffer-cycles).
    """
    r, c, m = (np.asarray(x, dtype=np.float64) for x in (r, c, m))
    n_ = 2.0 * c - 1.0 if n is None else np.asarray(n, dtype=np.float64)
    kf = np.asarray(kernel, dtype=np.float64)
    r, c, m, n_, kf = np.broadcast_arrays(r, c, m, n_, kf)
    return np.stack(
        [
            r * m,  # RD_I: DC buffer(y < R)
            kf * c * m,  # RD_K: DC buffer(y < C)
            array_cols * r * m,  # TR_I: PE(x >= 0, y < R)
            kf * c * array_rows * m,  # TR_K: PE(x < C, y >= 0)
            r * c * m,  # MAC: PE(x < C, y < R)
            (array_cols - c) * r * m,  # MAC_ineff: PE(x >= C, y < R)
            r * c * n_,  # TR_O: PE(x < C, y < R)
            r * c,  # WR_O: DC buffer(y < R), C outputs each
        ]
    )


def alpha_c(op_counts: Any, total_cycles: Any) -> FloatArray:
    """Eq. 3: ``sum_op(N_op * W_op * T_op) / total cycle count`` (W_op units per cycle).

    Args:
        op_counts: ``N_op * T_op`` per op, shape ``(8, ...)`` in :data:`OPS` order.
        total_cycles: the total cycle count (broadcast against ``op_counts[0]``).
    """
    units = np.tensordot(_W, np.asarray(op_counts, dtype=np.float64), axes=(0, 0))
    return np.asarray(units / np.asarray(total_cycles, dtype=np.float64), dtype=np.float64)


def microbenchmark_alpha_c(r: Any, c: Any, m: Any, n: Any, *, ineff: bool = True) -> FloatArray:
    """``alpha*C`` of Table 4's measurement: ``R x C`` PEs doing MAC for ``m`` cycles and TR_O
    for ``n`` cycles, total cycle count ``m`` (Table 4 note b).

    Note b lists ``N_MAC = N_TR_O = R*C``, ``T_MAC = m``, ``T_TR_O = n``; with ``ineff`` (our
    default) the MAC_ineff of the PEs right of the tile, ``(128 - C) * R`` for ``m`` cycles, is
    counted too, since Table 1 says those PEs execute it whenever a row runs MAC.
    """
    counts = tile_op_counts(r, c, m, n)
    keep = np.array([op in ("MAC", "TR_O") or (ineff and op == "MAC_ineff") for op in OPS])
    counts = counts * keep.reshape((-1,) + (1,) * (counts.ndim - 1))
    return alpha_c(counts, m)


@dataclass(frozen=True)
class LayerOps:
    """Frequency-independent per-layer quantities of one network at one batch size (length L).

    Attributes:
        op_counts: ``N_op * T_op`` per Table-1 op, shape ``(8, L)`` (:data:`OPS` order).
        cycles: STC cycles of Table-1 work per layer (tiles plus one fill/drain).
        tiles: tiles per layer.
        bytes_moved: LPDDR4 bytes read + written per layer.
    """

    op_counts: FloatArray
    cycles: IntArray
    tiles: IntArray
    bytes_moved: IntArray

    @property
    def units(self) -> FloatArray:
        """``sum_op(N_op * W_op * T_op)`` per layer (W_op units)."""
        return np.asarray(np.tensordot(_W, self.op_counts, axes=(0, 0)), dtype=np.float64)


@dataclass(frozen=True)
class PowerTable:
    """Per (frequency level, layer) latency, power and energy of one network (arrays ``(F, L)``).

    Attributes:
        frequency_hz: the levels, shape ``(F,)`` (Hz).
        voltage_v: the supply voltage at each level, shape ``(F,)`` (V).
        latency_s: layer time (seconds).
        alpha_c: Eq. 3's ``alpha*C`` over all STC cycles of the layer (W_op units per cycle).
        power_w: average power while the layer runs (watts), Eq. 1-2.
        energy_j: ``power_w * latency_s`` (joules).
        idle_power_w: power while no layer runs (a clock or voltage switch): static + constant (W).
        layer_names: the layers' names (length L).
    """

    frequency_hz: FloatArray
    voltage_v: FloatArray
    latency_s: FloatArray
    alpha_c: FloatArray
    power_w: FloatArray
    energy_j: FloatArray
    idle_power_w: float
    layer_names: tuple[str, ...]

    @property
    def n_levels(self) -> int:
        return int(self.frequency_hz.shape[0])

    def grouped(self, step_of_layer: Any) -> PowerTable:
        """The table over steps that each run several consecutive layers at one level.

        ``step_of_layer[i]`` is the step of layer ``i`` (non-decreasing, from 0). A step's
        latency and energy are its layers' sums; its ``power_w`` is the **highest** of its
        layers' powers (what a limit must admit: every layer of the step runs at the step's
        level); ``alpha_c`` is the time-weighted mean. Names join with ``+``.
        """
        idx = np.asarray(step_of_layer, dtype=np.int64)
        if idx.shape != (self.n_layers,) or (np.diff(idx) < 0).any() or (idx.size and idx[0]):
            raise HardwareConfigError("step_of_layer must be non-decreasing from 0, one per layer")
        n = int(idx[-1]) + 1 if idx.size else 0
        starts = np.flatnonzero(np.diff(idx, prepend=-1))
        lat = np.add.reduceat(self.latency_s, starts, axis=1) if n else self.latency_s
        en = np.add.reduceat(self.energy_j, starts, axis=1) if n else self.energy_j
        pw = np.maximum.reduceat(self.power_w, starts, axis=1) if n else self.power_w
        ac_t = np.add.reduceat(self.alpha_c * self.latency_s, starts, axis=1) if n else lat
        names = tuple(
            "+".join(self.layer_names[i] for i in np.flatnonzero(idx == s)) for s in range(n)
        )
        return PowerTable(
            frequency_hz=self.frequency_hz,
            voltage_v=self.voltage_v,
            latency_s=_ro(lat),
            alpha_c=_ro(ac_t / lat),
            power_w=_ro(pw),
            energy_j=_ro(en),
            idle_power_w=self.idle_power_w,
            layer_names=names,
        )

    @property
    def n_layers(self) -> int:
        return int(self.latency_s.shape[1])


def fused_steps(network: Network) -> IntArray:
    """Step index per layer when vector layers run fused with the GEMM layer before them.

    Every GEMM layer (convolution, FC, ...) starts a step; a vector layer (pool, element-wise
    add, concat/route, upsample, ...) joins the current step (leading vector layers join the
    first one). This is how the paper's layer counts read: Sec. 3.2's 1.33 ms average for YOLOv3
    over its measured frame time gives ~73 layers, YOLOv3's 75 convolutions, not its 106
    operators.
    """
    gemm = network.columns["is_gemm"].astype(bool)
    if not gemm.any():
        return np.zeros(len(gemm), dtype=np.int64)
    steps = np.cumsum(gemm) - 1
    return np.asarray(np.maximum(steps, 0), dtype=np.int64)


def _ro(a: Any) -> Any:
    a = np.ascontiguousarray(a)
    a.flags.writeable = False
    return a


def _check_int(name: str, value: object, minimum: int) -> int:
    ok = isinstance(value, Integral) and not isinstance(value, bool)
    if not ok and isinstance(value, float) and value.is_integer():
        ok = True
    if not ok or int(value) < minimum:  # type: ignore[call-overload]
        raise HardwareConfigError(f"AB9: {name} must be an integer >= {minimum}, got {value!r}")
    return int(value)  # type: ignore[call-overload]


def _check_real(name: str, value: object, *, positive: bool, maximum: float = math.inf) -> float:
    ok = isinstance(value, Real) and not isinstance(value, bool)
    v = float(value) if ok else math.nan  # type: ignore[arg-type]
    if not ok or not math.isfinite(v) or (v <= 0.0 if positive else v < 0.0) or v > maximum:
        rng = ("> 0" if positive else ">= 0") + (
            "" if maximum == math.inf else f" and <= {maximum}"
        )
        raise HardwareConfigError(f"AB9: {name} must be a finite number {rng}, got {value!r}")
    return v


class AB9(Component):
    """The AB9 systolic tensor core with the operation-aware power model (see module docstring).

    Args:
        rows: PE rows (128); output pixels of a tile.
        cols: PE columns (128); output channels of a tile.
        frequency_hz: default STC clock in Hz (1 GHz, Table 5's top level); a call may pick any
            level of :attr:`variant_axes` instead.
        voltage_v: supply voltage in V (1.00, DFS), or ``"dvfs"``: Table 5's DVFS voltage of
            each level (0.95 V at or below 500 MHz, 1.00 V above). A device parameter, not a
            plan axis: a profile for a DFS run compiles ``AB9()``, one for DVFS
            ``AB9(voltage_v="dvfs")``.
        onchip_bytes: on-chip memory (32 MiB = 128 DC buffers x 256 KiB); descriptive.
        memory_channels: LPDDR4 channels (2).
        channel_bandwidth_bps: bytes/s per channel (12.8e9: LPDDR4-3200, x32).
        stc_efficiency: fraction of STC cycles doing Table-1 work, in (0, 1] (1.0).
        static_power_w: ``P_static`` in W (18.0), Eq. 1.
        constant_power_w: the constant term of Eq. 4 in W (6.0): every component but the STC.
        peak_dynamic_power_w: dynamic power of a full-array tile at 1 GHz, 1.00 V, in W (21.0);
            fixes the scale of the relative W_op.
        bytes_per_elem: bytes per element (2: fp16).
        name: device name ("ab9").
    """

    def __init__(
        self,
        rows: int = 128,
        cols: int = 128,
        frequency_hz: float = 1e9,
        voltage_v: float | str = 1.0,
        onchip_bytes: int = 32 * 2**20,
        memory_channels: int = 2,
        channel_bandwidth_bps: float = 12.8e9,
        stc_efficiency: float = 1.0,
        static_power_w: float = 18.0,
        constant_power_w: float = 6.0,
        peak_dynamic_power_w: float = 21.0,
        bytes_per_elem: int = 2,
        name: str = "ab9",
    ) -> None:
        self.rows = rows
        self.cols = cols
        self.frequency_hz = frequency_hz
        self.voltage_v = voltage_v
        self.onchip_bytes = onchip_bytes
        self.memory_channels = memory_channels
        self.channel_bandwidth_bps = channel_bandwidth_bps
        self.stc_efficiency = stc_efficiency
        self.static_power_w = static_power_w
        self.constant_power_w = constant_power_w
        self.peak_dynamic_power_w = peak_dynamic_power_w
        self.bytes_per_elem = bytes_per_elem
        self.name = name
        self._validate()

    # --- parameters -----------------------------------------------------------------------------
    def _validate(self) -> None:
        _check_int("rows", self.rows, 1)
        _check_int("cols", self.cols, 1)
        _check_real("frequency_hz", self.frequency_hz, positive=True)
        if self.voltage_v != "dvfs":
            _check_real("voltage_v", self.voltage_v, positive=True)
        _check_int("onchip_bytes", self.onchip_bytes, 1)
        _check_int("memory_channels", self.memory_channels, 1)
        _check_real("channel_bandwidth_bps", self.channel_bandwidth_bps, positive=True)
        _check_real("stc_efficiency", self.stc_efficiency, positive=True, maximum=1.0)
        _check_real("static_power_w", self.static_power_w, positive=False)
        _check_real("constant_power_w", self.constant_power_w, positive=False)
        _check_real("peak_dynamic_power_w", self.peak_dynamic_power_w, positive=False)
        _check_int("bytes_per_elem", self.bytes_per_elem, 1)
        if not isinstance(self.name, str) or not self.name:
            raise HardwareConfigError(f"AB9: name must be a non-empty string, got {self.name!r}")

    def cache_key(self) -> tuple[object, ...]:
        """Class name and every parameter except the per-call variant axes."""
        self._validate()
        skip = set(self.variant_axes)
        return (
            type(self).__name__,
            *((n, getattr(self, n)) for n in self._param_names() if n not in skip),
        )

    @property
    def variant_axes(self) -> dict[str, tuple[float, ...]]:
        """Run-time choice: Table 5's clock levels (Hz). The voltage is a device parameter
        (``voltage_v``): DFS keeps 1.00 V, DVFS ties it to the level."""
        return {"frequency_hz": FREQUENCIES_HZ}

    def voltage_at(self, frequency_hz: float) -> float:
        """The supply voltage (V) this device runs at ``frequency_hz`` (Hz)."""
        if self.voltage_v == "dvfs":
            return 0.95 if frequency_hz <= 500e6 else 1.00
        return float(self.voltage_v)

    @property
    def memory_bandwidth_bps(self) -> float:
        """Aggregate LPDDR4 bandwidth in bytes/s (channels x per-channel bandwidth)."""
        return float(self.memory_channels) * float(self.channel_bandwidth_bps)

    @property
    def idle_power_w(self) -> float:
        """Power with no STC activity (clock/voltage switches): static + constant, in W."""
        return float(self.static_power_w) + float(self.constant_power_w)

    @property
    def energy_per_unit_j(self) -> float:
        """``k`` of Eq. 2 as joules per W_op unit at 1.00 V (``k / stc_efficiency``, see module)."""
        f_max = max(FREQUENCIES_HZ)
        full = full_array_alpha_c(int(self.rows), int(self.cols))
        return float(self.peak_dynamic_power_w) / (full * f_max * float(self.stc_efficiency))

    # --- frequency-independent part -------------------------------------------------------------
    def layer_ops(self, network: Network, batch: int) -> LayerOps:
        """Op counts, cycles, tiles and LPDDR4 bytes of every layer (vectorised over layers)."""
        self._validate()
        b = _check_int("batch", batch, 1)
        rows, cols = int(self.rows), int(self.cols)
        c = network.columns
        gemm = c["is_gemm"].astype(bool)
        width = int(self.bytes_per_elem)

        # GEMM tiles: 2 x 2 classes (full/edge in the streamed rows and in the output columns).
        mb = np.where(gemm, c["m"] * b, 0)
        n = np.where(gemm, c["n"], 0)
        k = np.where(gemm, c["k"], 0)
        g = c["groups"]
        # Vector layers: full-array tiles of rows*cols outputs reducing ceil(in/out) inputs.
        out_e = b * c["output_elems"]
        in_e = b * c["input_elems"]
        vk = np.where(out_e > 0, -(-in_e // np.maximum(out_e, 1)), 0)
        v_rows_total = -(-out_e // cols)  # outputs laid out over full-width rows
        r_total = np.where(gemm, mb, v_rows_total)
        c_total = np.where(gemm, n, cols)
        m_cyc = np.where(gemm, k, vk)
        groups = np.where(gemm, g, 1)

        cnt_r = np.stack([r_total // rows, (r_total % rows > 0).astype(np.int64)])  # (2, L)
        size_r = np.stack([np.full_like(r_total, rows), r_total % rows])
        cnt_c = np.stack([c_total // cols, (c_total % cols > 0).astype(np.int64)])
        size_c = np.stack([np.full_like(c_total, cols), c_total % cols])
        count = cnt_r[:, None, :] * cnt_c[None, :, :] * groups  # (2, 2, L)
        rr = size_r[:, None, :]
        cc = size_c[None, :, :]
        per_tile = tile_op_counts(
            rr, cc, m_cyc, array_rows=rows, array_cols=cols, kernel=gemm
        )  # (8, 2, 2, L)
        ops = (per_tile * count).sum(axis=(1, 2))
        tile_cycles = np.maximum(m_cyc, 2 * cc - 1)
        cycles = (count * tile_cycles).sum(axis=(0, 1)) + rows + cols
        tiles = count.sum(axis=(0, 1))

        weights = np.where(gemm, c["weight_elems"], 0)
        moved = (in_e + out_e + weights) * width
        return LayerOps(
            op_counts=_ro(ops),
            cycles=_ro(cycles.astype(np.int64)),
            tiles=_ro(np.maximum(tiles, 1).astype(np.int64)),
            bytes_moved=_ro(moved.astype(np.int64)),
        )

    # --- per (frequency, voltage) ----------------------------------------------------------------
    def power_table(
        self,
        network: Network,
        batch: int = 1,
        *,
        frequencies_hz: Sequence[float] = FREQUENCIES_HZ,
        voltages_v: Sequence[float] | float = 1.0,
        ops: LayerOps | None = None,
    ) -> PowerTable:
        """Latency, ``alpha*C``, power and energy for every (level, layer), shape ``(F, L)``.

        Args:
            network: the network.
            batch: batch size (>= 1).
            frequencies_hz: STC clock levels in Hz (default Table 5).
            voltages_v: supply voltage per level (V), or one voltage for all (default 1.00 V,
                i.e. DFS; pass :data:`DVFS_VOLTAGES_V` for DVFS).
            ops: precomputed :meth:`layer_ops` (reused across calls).
        """
        self._validate()
        f = np.asarray([_check_real("frequency_hz", x, positive=True) for x in frequencies_hz])
        if f.ndim != 1 or f.size == 0:
            raise HardwareConfigError("AB9: frequencies_hz must be a non-empty sequence")
        v = np.broadcast_to(np.asarray(voltages_v, dtype=np.float64), f.shape).copy()
        for x in v:
            _check_real("voltage_v", float(x), positive=True)
        lo = self.layer_ops(network, batch) if ops is None else ops
        eff = float(self.stc_efficiency)
        t_compute = lo.cycles[None, :] / (eff * f[:, None])
        t_memory = lo.bytes_moved[None, :] / self.memory_bandwidth_bps
        latency = np.maximum(t_compute, t_memory)
        units = lo.units[None, :]
        ac = units / (latency * f[:, None])  # Eq. 3 over every STC cycle of the layer
        k = self.energy_per_unit_j  # J per unit at 1 V == W per (unit/cycle) per Hz per V^2
        power = self.idle_power_w + k * ac * f[:, None] * v[:, None] ** 2  # Eq. 1-2
        return PowerTable(
            frequency_hz=_ro(f),
            voltage_v=_ro(v),
            latency_s=_ro(latency),
            alpha_c=_ro(ac),
            power_w=_ro(power),
            energy_j=_ro(power * latency),
            idle_power_w=self.idle_power_w,
            layer_names=tuple(ly.name for ly in network.layers),
        )

    def layer_costs(
        self,
        network: Network,
        batch: int,
        *,
        frequency_hz: float | None = None,
        voltage_v: float | None = None,
    ) -> LayerCosts:
        """Per-layer costs at one clock and voltage (defaults: the device's own).

        ``cycles`` are STC cycles at that clock (``latency * f``, stalls included); ``tiles`` the
        output tiles (preemption points); ``checkpoint_bytes`` the mean output bytes held on chip
        at a tile boundary (``out_bytes * (T + 1) / (2T)``, capped by ``onchip_bytes``);
        ``energy_j`` the layer energy of Eq. 1-2 (joules).
        """
        f = float(self.frequency_hz if frequency_hz is None else frequency_hz)
        v = self.voltage_at(f) if voltage_v is None else float(voltage_v)
        lo = self.layer_ops(network, batch)
        tab = self.power_table(network, batch, frequencies_hz=(f,), voltages_v=v, ops=lo)
        out_bytes = batch * network.columns["output_elems"] * int(self.bytes_per_elem)
        t = lo.tiles
        ckpt = np.minimum(np.rint(out_bytes * (t + 1) / (2 * t)), int(self.onchip_bytes))
        return LayerCosts(
            cycles=_ro(np.ceil(tab.latency_s[0] * f - 1e-9).astype(np.int64)),
            latency_s=tab.latency_s[0],
            tiles=lo.tiles,
            bytes_moved=lo.bytes_moved,
            checkpoint_bytes=_ro(ckpt.astype(np.int64)),
            energy_j=tab.energy_j[0],
        )


def _register() -> None:
    from npusched.hardware.devices import DEVICES

    DEVICES.register("ab9", AB9)


_register()
