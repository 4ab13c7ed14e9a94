"""``FissionArray``: Planaria's fissionable systolic accelerator (MICRO 2020, Sec. III-IV).

The device
----------
The 128 x 128 PEs of PREMA's NPU are 16 omni-directional systolic subarrays of 32 x 32 in 4
Fission Pods (4 subarrays, a Pod Memory and one off-chip memory channel each), connected by
bi-directional ring buses for activations and partial sums. Totals are those of the
``prema-npu`` device (PREMA Table I, as Planaria Sec. VI-A requires for a fair comparison):
700 MHz, 12 MB of on-chip buffers (8 MiB activations, 4 MiB weights), 358 GB/s off-chip, a
128-lane SIMD vector unit split into one 8-lane segment per subarray.

A task holds ``n`` of the 16 subarrays (the plan-variant axis ``subarrays``, 1..16). Its
share of the shared resources is proportional: ``n/16`` of the off-chip bandwidth (each pod
owns a quarter of the channels and each subarray a quarter of its pod's), of the activation
SRAM (the CHECKPOINT cap) and of the vector lanes. Shares are additive, so co-located tasks
never oversubscribe a pod however the scheduler splits the array.

Fission configurations (what the compiler chooses from, per layer)
-----------------------------------------------------------------
A configuration of ``n`` subarrays is ``k`` identical logical systolic arrays of ``r x c``
subarrays (``32r`` rows by ``32c`` columns; ``k * r * c = n``) that each run a ``1/k`` part
of the layer in parallel. ``r`` and ``c`` are powers of two and ``r * c`` divides the largest
power of two dividing ``n`` - the homogeneous compositions of the authors' compiler
(he-actlab/planaria.code, ``Simulator.get_possible_composition_configs``): a pod is 2 x 2
subarrays, pods compose as 1x4 / 4x1 / 2x2 / 1x2 / 2x1, so chains and grids of non-power-of-two
size cannot be formed. That gives (tall ``r > c``, wide ``r < c`` omni-directional chains,
square grids, and ``k`` independent arrays):

==============  ==============================================  =====
n               ``(k, r, c)``, ``r`` and ``c`` powers of two    count
==============  ==============================================  =====
16              ``r*c <= 16``                                   15
8               ``r*c <= 8``                                    10
4, 12           ``r*c <= 4``                                    6
2, 6, 10, 14    ``r*c <= 2``                                    3
odd             ``(n, 1, 1)`` only                              1
==============  ==============================================  =====

57 configurations over ``n = 1..16``, 15 of them for the whole accelerator - the "15 fission
possibilities" of Table II. The paper's 65 "fission scenarios" (Sec. IV-C) depend "on the
combination of the co-located DNNs"; neither the paper nor the artifact gives the enumeration
behind 65. The compiler needs the configurations of one task's ``n`` subarrays, and that is
what we enumerate. We do not model heterogeneous compositions inside one task (e.g. a 2 x 2
grid plus one spare subarray), which the artifact does not model either.

The ``k`` copies split the layer one of three ways, each a candidate: the streamed rows
(``B*M``; every copy needs the same weight tiles), the output channels ``N`` (every copy needs
the same input tiles) or the groups (grouped and depthwise convolutions; only when
``groups > 1``; nothing shared). The shared operand is broadcast: the off-chip bus "goes around
the subarrays and can fill their weight buffers" and the pods' direct links forward
activations (Sec. IV-C), so a shared tile is loaded from DRAM once for the ``k`` copies and
each copy's memory phase carries ``1/k`` of it (its own tile in full). The slowest copy (the
one with the ``ceil`` share) sets the layer time. A depthwise layer on ``(16, 1, 1)`` split by
groups runs 16 channels at once, one column of each subarray (Sec. VI-B2); on the monolithic
array one column of 128 x 128 does all channels in turn.

Per tile, each logical array is costed with PREMA Algorithm 1's formulas from
:mod:`npusched.hardware.systolic` (reused, not rewritten): compute ``a + SH + 2*SW`` with
``SH = 32r`` and ``SW = 32c``, memory ``L_mem + bytes / (BW_copy / f)`` with
``BW_copy = BW * n / 16 / k``, a tile costs the larger. Crossing a subarray boundary on the
ring bus adds ``ring_hop_cycles`` (1: the buses are pipelined, 12 registers around the ring,
Sec. IV) per boundary, ``r - 1 + c - 1`` per tile, added to the tile cost (conservatively,
even when the memory phase would hide it). Accumulators: ``acc_depth`` = 2048 rows per
logical array, as PREMA's ACCQ. Vector layers run on ``vector_lanes * n / 16`` lanes with the
same ``n/16`` bandwidth share (PREMA's vector model).

The compiler keeps, per layer, the fastest candidate (Sec. IV-C: "the optimal fission
configuration, the number of tiles, and the estimated number of cycles per tile"); ties go to
the lower energy. A task given ``n`` subarrays runs each layer on the best configuration of *at
most* ``n`` (the spare ones idle, unpowered), so the latency ``T(n)`` never increases with ``n``:
without it an odd count, which composes only ``(n, 1, 1)``, could be slower than ``n - 1``
(ResNet-50: 1.39 ms on 15 subarrays against 1.15 ms on 14). (The authors' artifact ranks by energy x delay instead; the brief and the
paper's scheduler use time.) :meth:`FissionArray.fission_table` returns that table with the
time of every candidate.

Energy comes from :class:`~npusched.hardware.energy.EnergyModel` (45 nm constants with their
sources), with ``n x 1024`` PEs powered and ring-bus hops charged; where the model sets them,
static energy for the ``n`` powered subarrays over the layer's cycles and the fission logic
overhead on the PE and vector terms.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from npusched.base import Component
from npusched.errors import HardwareConfigError
from npusched.hardware.base import FloatArray, IntArray, LayerCosts
from npusched.hardware.energy import PSUM_BYTES, EnergyModel, gemm_sram_bytes
from npusched.hardware.machines import ResourceLayout
from npusched.hardware.systolic import (
    CHECKPOINT_STATS,
    _batches,
    _cdiv,
    _Config,
    _gemm_grid,
    _int_param,
    _mean_checkpoint,
    _real_param,
    _ro,
    _vector_grid,
)
from npusched.models.ir import KIND_CODES, LayerKind, Network

if TYPE_CHECKING:
    import pandas as pd

    from npusched.hardware.profile import Profile

__all__ = [
    "SPLITS",
    "FissionArray",
    "FissionTable",
    "FissionVariant",
    "fission_configs",
    "variant_profiles",
]

#: What a preemption saves per layer (see :class:`FissionArray`'s ``checkpoint``).
FISSION_CHECKPOINTS = ("tile", *CHECKPOINT_STATS)

#: How the ``k`` copies of a configuration share a layer.
SPLITS = ("stream", "channel", "group")


def _largest_pow2_divisor(n: int) -> int:
    return n & -n


def fission_configs(n: int, total: int = 16) -> tuple[tuple[int, int, int], ...]:
    """The fission configurations ``(k, r, c)`` of a logical accelerator of ``n`` subarrays.

    ``k`` copies of an ``r x c`` grid of subarrays, ``k*r*c = n``, ``r`` and ``c`` powers of
    two with ``r*c`` dividing the largest power of two that divides ``n`` (see the module
    docstring). Ordered by ``k`` ascending, then ``r`` descending (tall before wide).
    """
    if not 1 <= n <= total:
        raise HardwareConfigError(f"subarrays must be an integer in 1..{total}, got {n!r}")
    p = _largest_pow2_divisor(n)
    pows = [1 << i for i in range(p.bit_length()) if (1 << i) <= p]
    out = [(n // (r * c), r, c) for r in pows for c in pows if r * c <= p]
    return tuple(sorted(out, key=lambda t: (t[0], -t[1])))


@dataclass(frozen=True)
class FissionTable:
    """Planaria's per-layer configuration table of one network at one batch and ``n`` subarrays.

    Attributes:
        subarrays: ``n``.
        candidates: labels ``"k x rxc/split"`` of the candidates, length C (the last is
            ``"simd"``, the vector unit, for non-GEMM layers).
        cycles: ``(L, C)`` cycles of every layer on every candidate (``inf`` where a candidate
            does not apply: vector layers on the array, GEMMs on the vector unit, group splits
            of ungrouped layers).
        best: ``(L,)`` index of the chosen candidate.
        tiles: ``(L,)`` tiles of the chosen candidate (preemption points).
        cycles_per_tile: ``(L,)`` mean cycles per tile of the chosen candidate.
        layer_names: the layer names.
        frequency_hz: to convert cycles to seconds.
    """

    subarrays: int
    candidates: tuple[str, ...]
    cycles: FloatArray
    best: IntArray
    tiles: IntArray
    cycles_per_tile: FloatArray
    layer_names: tuple[str, ...]
    frequency_hz: float

    @property
    def chosen(self) -> tuple[str, ...]:
        """The chosen candidate's label per layer."""
        return tuple(self.candidates[i] for i in self.best)

    @property
    def layer_cycles(self) -> IntArray:
        """Cycles per layer of the chosen candidate."""
        return np.take_along_axis(self.cycles, self.best[:, None], axis=1)[:, 0].astype(np.int64)

    def to_frame(self) -> pd.DataFrame:
        """One row per layer: ``layer``, ``config``, ``cycles``, ``time_us``, ``tiles``,
        ``cycles_per_tile``, and ``time_us[<candidate>]`` for every candidate (NaN where
        it does not apply)."""
        import pandas as pd

        f = self.frequency_hz
        per = np.where(np.isfinite(self.cycles), self.cycles / f * 1e6, np.nan)
        df = pd.DataFrame(
            {
                "layer": self.layer_names,
                "config": self.chosen,
                "cycles": self.layer_cycles,
                "time_us": self.layer_cycles / f * 1e6,
                "tiles": self.tiles,
                "cycles_per_tile": self.cycles_per_tile,
            }
        )
        extra = pd.DataFrame(per, columns=[f"time_us[{c}]" for c in self.candidates])
        return pd.concat([df, extra], axis=1)


class FissionArray(Component):
    """Planaria's 16 x (32x32) fissionable systolic array (see the module docstring).

    Costs depend on the run-time subarray count, the keyword-only variant axis ``subarrays``
    of :meth:`layer_costs` / :meth:`layer_costs_grid` (``variant_axes``); it is not part of
    :meth:`cache_key`. :meth:`variant` binds it, giving a plain one-variant device.

    Args:
        subarray_rows: PE rows per subarray (32), >= 1.
        subarray_cols: PE columns per subarray (32), >= 1.
        num_subarrays: subarrays on the chip (16), a multiple of ``pods``.
        pods: Fission Pods (4), >= 1.
        frequency_hz: clock in Hz (700 MHz), > 0.
        memory_bandwidth_bps: total off-chip bandwidth in bytes/s (358 GB/s), > 0.
        act_sram_bytes: total activation SRAM in bytes (8 MiB), >= 1.
        weight_sram_bytes: total weight SRAM in bytes (4 MiB), >= 1; descriptive.
        memory_latency_cycles: cycles added to every tile's memory phase (100), >= 0.
        acc_depth: accumulator rows per tile of a logical array (2048), >= 1.
        vector_lanes: total SIMD lanes (128), >= ``num_subarrays``.
        ring_hop_cycles: cycles per subarray boundary a tile's data crosses (1), >= 0.
        memory_stalls: ``False`` costs tiles by their compute phase only.
        fill_drain: ``True`` (the default) adds each logical array's fill and drain,
            ``SH + 2*SW`` cycles, to every tile's compute phase (Algorithm 1); ``False`` charges
            the streamed rows only, as the authors' simulator does (see ``SystolicArray``).
        energy: the :class:`~npusched.hardware.energy.EnergyModel` (defaults if ``None``).
        checkpoint: what a preemption or re-allocation saves per layer: ``"tile"`` (the
            default; Sec. IV-D: "only a single tile of intermediate results needs to be stored
            off-chip", one tile's share ``ceil(O / T)`` of the layer's output bytes ``O`` over
            its ``T`` tiles, capped by the task's activation SRAM share), or ``"mean"`` /
            ``"max"`` as for ``SystolicArray`` (the partial output accumulated so far).
        name: device name.
    """

    def __init__(
        self,
        subarray_rows: int = 32,
        subarray_cols: int = 32,
        num_subarrays: int = 16,
        pods: int = 4,
        frequency_hz: float = 700e6,
        memory_bandwidth_bps: float = 358e9,
        act_sram_bytes: int = 8 * 2**20,
        weight_sram_bytes: int = 4 * 2**20,
        memory_latency_cycles: int = 100,
        acc_depth: int = 2048,
        vector_lanes: int = 128,
        ring_hop_cycles: int = 1,
        memory_stalls: bool = True,
        fill_drain: bool = True,
        energy: EnergyModel | None = None,
        checkpoint: str = "tile",
        name: str = "planaria",
    ) -> None:
        self.subarray_rows = subarray_rows
        self.subarray_cols = subarray_cols
        self.num_subarrays = num_subarrays
        self.pods = pods
        self.frequency_hz = frequency_hz
        self.memory_bandwidth_bps = memory_bandwidth_bps
        self.act_sram_bytes = act_sram_bytes
        self.weight_sram_bytes = weight_sram_bytes
        self.memory_latency_cycles = memory_latency_cycles
        self.acc_depth = acc_depth
        self.vector_lanes = vector_lanes
        self.ring_hop_cycles = ring_hop_cycles
        self.memory_stalls = memory_stalls
        self.fill_drain = fill_drain
        self.energy = energy
        self.checkpoint = checkpoint
        self.name = name
        self._config()

    # --- parameters -----------------------------------------------------------------------------
    def _config(self) -> _Config:
        try:
            n = _int_param("num_subarrays", self.num_subarrays, 1)
            pods = _int_param("pods", self.pods, 1)
            _int_param("weight_sram_bytes", self.weight_sram_bytes, 1)
            _int_param("ring_hop_cycles", self.ring_hop_cycles, 0)
            cfg = _Config(
                rows=_int_param("subarray_rows", self.subarray_rows, 1),
                cols=_int_param("subarray_cols", self.subarray_cols, 1),
                f=_real_param("frequency_hz", self.frequency_hz, positive=True),
                bw=_real_param("memory_bandwidth_bps", self.memory_bandwidth_bps, positive=True),
                act_sram=_int_param("act_sram_bytes", self.act_sram_bytes, 1),
                latency=_int_param("memory_latency_cycles", self.memory_latency_cycles, 0),
                acc=_int_param("acc_depth", self.acc_depth, 1),
                lanes=_int_param("vector_lanes", self.vector_lanes, n),
                stalls=bool(self.memory_stalls),
                mac_pj=0.0,
                dram_pj=0.0,
                ckpt_max=self.checkpoint == "max",
                fill=bool(self.fill_drain),
            )
        except HardwareConfigError as e:
            raise HardwareConfigError(str(e).replace("SystolicArray", "FissionArray")) from None
        if n % pods:
            raise HardwareConfigError(
                f"FissionArray: num_subarrays ({n}) must be a multiple of pods ({pods})"
            )
        if not isinstance(self.memory_stalls, bool | np.bool_):
            raise HardwareConfigError(
                f"FissionArray: memory_stalls must be true or false, got {self.memory_stalls!r}"
            )
        if not isinstance(self.fill_drain, bool | np.bool_):
            raise HardwareConfigError(
                f"FissionArray: fill_drain must be true or false, got {self.fill_drain!r}"
            )
        if self.checkpoint not in FISSION_CHECKPOINTS:
            raise HardwareConfigError(
                f"FissionArray: checkpoint must be one of {', '.join(FISSION_CHECKPOINTS)}, "
                f"got {self.checkpoint!r}"
            )
        if self.energy is not None and not isinstance(self.energy, EnergyModel):
            raise HardwareConfigError(
                f"FissionArray: energy must be an EnergyModel or None, got {self.energy!r}"
            )
        if not isinstance(self.name, str) or not self.name:
            raise HardwareConfigError("FissionArray: name must be a non-empty string")
        return cfg

    @property
    def energy_model_(self) -> EnergyModel:
        """The energy model in use (``energy`` or the defaults)."""
        return self.energy if self.energy is not None else EnergyModel()

    def cache_key(self) -> tuple[object, ...]:
        """Class name and every parameter (the ``subarrays`` axis is per call, not here)."""
        self._config()
        items = [(n, getattr(self, n)) for n in self._param_names() if n != "energy"]
        return (type(self).__name__, *items, ("energy", self.energy_model_.key()))

    @property
    def variant_axes(self) -> dict[str, tuple[int, ...]]:
        """``{"subarrays": (1, ..., num_subarrays)}``."""
        return {"subarrays": tuple(range(1, int(self.num_subarrays) + 1))}

    def machine_layout(self) -> tuple[ResourceLayout, ...]:
        """The machine this device makes: one fission array of ``num_subarrays`` units whose
        allocation picks the ``subarrays`` plan axis (:mod:`npusched.hardware.machines`)."""
        n = int(self.num_subarrays)
        return (ResourceLayout("array", "fission-array", n, units_axis="subarrays"),)

    @property
    def peak_macs_per_s(self) -> float:
        """Peak MAC throughput of the whole chip, MACs per second."""
        cfg = self._config()
        return cfg.rows * cfg.cols * int(self.num_subarrays) * cfg.f

    def variant(self, *, subarrays: int) -> FissionVariant:
        """A one-variant device with the subarray count fixed (for ``compile_profile``)."""
        self._check_n(subarrays)
        return FissionVariant(self, int(subarrays))

    def _check_n(self, subarrays: object) -> int:
        total = int(self.num_subarrays)
        ok = isinstance(subarrays, int | np.integer) and not isinstance(subarrays, bool)
        if not ok or not 1 <= int(subarrays) <= total:  # type: ignore[call-overload]
            raise HardwareConfigError(
                f"FissionArray: subarrays must be an integer in 1..{total}, got {subarrays!r}"
            )
        return int(subarrays)  # type: ignore[call-overload]

    # --- costs -----------------------------------------------------------------------------------
    def layer_costs(self, network: Network, batch: int, *, subarrays: int = 16) -> LayerCosts:
        """Per-layer costs of ``network`` at ``batch`` on ``subarrays`` subarrays (length L)."""
        g = self.layer_costs_grid(network, (batch,), subarrays=subarrays)
        return LayerCosts(
            cycles=g.cycles[0],
            latency_s=g.latency_s[0],
            tiles=g.tiles[0],
            bytes_moved=g.bytes_moved[0],
            checkpoint_bytes=g.checkpoint_bytes[0],
            energy_j=g.energy_j[0],
        )

    def layer_costs_grid(
        self, network: Network, batch_sizes: Sequence[int], *, subarrays: int = 16
    ) -> LayerCosts:
        """Costs for every (batch size, layer): arrays of shape ``(len(batch_sizes), L)``, each
        layer on its fastest fission configuration of ``subarrays`` subarrays.

        Returns:
            cycles (device cycles), latency_s (seconds), tiles, bytes_moved (DRAM bytes),
            checkpoint_bytes (bytes), energy_j (joules).
        """
        n = self._check_n(subarrays)
        ev = self._evaluate_cached(network, batch_sizes, n)
        cycles, tiles, dram, energy = self._chosen(ev)
        # T(n) non-increasing: each layer runs on the best configuration of at most n
        # subarrays (an odd count has only (n, 1, 1); n - 1 may compose a faster grid). The
        # spare subarrays idle, unpowered; the task keeps its n/16 bandwidth and SRAM share
        # only for the count it uses (conservative).
        for m in range(n - 1, 0, -1):
            c_m, t_m, d_m, e_m = self._chosen(self._evaluate_cached(network, batch_sizes, m))
            better = (c_m < cycles) | ((c_m == cycles) & (e_m < energy))
            if better.any():
                cycles = np.where(better, c_m, cycles)
                tiles = np.where(better, t_m, tiles)
                dram = np.where(better, d_m, dram)
                energy = np.where(better, e_m, energy)
        out_bytes, cap = ev["out_bytes"], ev["act_cap"]
        if self.checkpoint == "max":
            ckpt = np.minimum(out_bytes, cap)
        elif self.checkpoint == "tile":
            ckpt = np.minimum(-(-out_bytes // np.maximum(tiles, 1)), cap).astype(np.int64)
        else:
            ckpt = _mean_checkpoint(out_bytes, tiles, cap)
        return LayerCosts(
            cycles=_ro(cycles),
            latency_s=_ro(cycles / ev["f"]),
            tiles=_ro(tiles),
            bytes_moved=_ro(dram),
            checkpoint_bytes=_ro(ckpt),
            energy_j=_ro(energy.astype(np.float64)),
        )

    def fission_table(
        self, network: Network, batch: int = 1, *, subarrays: int = 16
    ) -> FissionTable:
        """The compiler's configuration table for ``subarrays`` subarrays (see
        :class:`FissionTable`): every candidate of exactly ``subarrays`` subarrays, its cycles
        per layer and the chosen one (:meth:`layer_costs` may run a layer on fewer subarrays
        where that is faster)."""
        ev = self._evaluate(network, (batch,), self._check_n(subarrays))
        best = ev["best"][0]
        cycles = ev["cycles"][0]
        tiles = np.take_along_axis(ev["tiles"][0], best[:, None], axis=1)[:, 0].astype(np.int64)
        chosen = np.take_along_axis(cycles, best[:, None], axis=1)[:, 0]
        return FissionTable(
            subarrays=int(subarrays),
            candidates=ev["labels"],
            cycles=_ro(cycles),
            best=_ro(best.astype(np.int64)),
            tiles=_ro(tiles),
            cycles_per_tile=_ro(chosen / np.maximum(tiles, 1)),
            layer_names=tuple(ly.name for ly in network.layers),
            frequency_hz=ev["f"],
        )

    def __getstate__(self) -> dict[str, Any]:
        """Pickles (process pools) carry the parameters, not the evaluation memo."""
        return {k: v for k, v in self.__dict__.items() if k != "_memo_"}

    @staticmethod
    def _chosen(ev: dict[str, Any]) -> tuple[Any, Any, Any, Any]:
        """Cycles, tiles, DRAM bytes and energy of each layer's chosen candidate."""
        best = ev["best"]

        def pick(a: Any) -> Any:
            return np.take_along_axis(a, best[..., None], axis=-1)[..., 0]

        return (
            pick(ev["cycles"]).astype(np.int64),
            pick(ev["tiles"]).astype(np.int64),
            np.rint(pick(ev["dram"])).astype(np.int64),
            pick(ev["energy"]),
        )

    def _evaluate_cached(
        self, network: Network, batch_sizes: Sequence[int], n: int
    ) -> dict[str, Any]:
        """:meth:`_evaluate`, remembered per (parameters, network object, batches, ``n``) so
        the 16 variants of a network cost 16 evaluations, not 136."""
        memo: dict[Any, Any] = self.__dict__.setdefault("_memo_", {})
        key = (self.cache_key(), id(network), tuple(int(b) for b in batch_sizes), n)
        hit = memo.get(key)
        if hit is not None and hit[0] is network:
            return hit[1]
        if len(memo) > 4096:
            memo.clear()
        ev = self._evaluate(network, batch_sizes, n)
        memo[key] = (network, ev)
        return ev

    def _evaluate(self, network: Network, batch_sizes: Sequence[int], n: int) -> dict[str, Any]:
        """Every candidate's cycles, tiles, DRAM bytes and energy: arrays ``(NB, L, C)``."""
        base = self._config()
        model = self.energy_model_
        total = int(self.num_subarrays)
        hop = int(self.ring_hop_cycles)
        b = _batches(batch_sizes)[:, None]  # (NB, 1)
        c = network.columns
        is_gemm = c["is_gemm"].astype(bool)
        width = c["bytes_per_elem"]
        # Activation x activation MatMuls: the batch multiplies the groups, not the streamed
        # rows (one stationary operand per sample and head, as on the monolithic array).
        per_sample = (c["kind"] == KIND_CODES[LayerKind.MATMUL])[None, :]
        bm = np.where(is_gemm, c["m"], 0)[None, :] * np.where(per_sample, 1, b)  # (NB, L)
        kk, nn = c["k"], c["n"]
        gg = c["groups"][None, :] * np.where(per_sample, b, 1)  # (NB, L)
        out_elems = np.where(c["output_elems"] > 0, c["output_elems"], c["m"] * nn * c["groups"])
        out_bytes = b * out_elems * width
        share = n / total
        pes = n * base.rows * base.cols

        labels: list[str] = []
        cyc_l: list[Any] = []
        til_l: list[Any] = []
        dram_l: list[Any] = []
        en_l: list[Any] = []
        inf = np.inf
        for k, r, cc in fission_configs(n, total):
            sh, sw = r * base.rows, cc * base.cols
            cfg = replace(base, rows=sh, cols=sw, bw=base.bw * share / k)
            for split in SPLITS if k > 1 else SPLITS[:1]:
                w_share = i_share = 1.0
                if split == "stream":
                    bm_c, n_c, g_c = _cdiv(bm, k), nn, gg
                    active = np.minimum(k, np.maximum(bm, 1))
                    w_share = 1.0 / k  # weight tiles broadcast to the k copies
                elif split == "channel":
                    bm_c, n_c, g_c = bm, _cdiv(nn, k), gg
                    active = np.minimum(k, np.maximum(nn, 1))[None, :]
                    i_share = 1.0 / k  # input tiles broadcast to the k copies
                else:
                    bm_c, n_c, g_c = bm, nn, _cdiv(gg, k)
                    active = np.minimum(k, gg)
                cyc, til, loaded = _gemm_grid(
                    cfg, bm_c, kk, n_c, g_c, width, weight_share=w_share, input_share=i_share
                )
                cyc = cyc + til * hop * (r - 1 + cc - 1)
                valid = is_gemm[None, :] & ((gg > 1) if split == "group" else True)
                sram = (
                    gemm_sram_bytes(
                        streamed=bm_c, k=kk, n=n_c, groups=g_c, rows=sh, loaded=loaded, out_bytes=0
                    )
                    * active
                    + out_bytes
                )
                ring_bits = active * (
                    bm_c * kk * g_c * _cdiv(n_c, sw) * (cc - 1) * width * 8
                    + bm_c * n_c * g_c * _cdiv(kk, sh) * (r - 1) * PSUM_BYTES * 8
                )
                dram = loaded * active + out_bytes
                en = model.layer_energy_j(
                    powered_pes=pes,
                    gemm_cycles=cyc,
                    vector_ops=0,
                    sram_bytes=sram,
                    dram_bytes=dram,
                    ring_bit_hops=ring_bits,
                    static_subarray_s=n * cyc / base.f,
                    fission=True,
                )
                labels.append(f"{k}x{r}x{cc}/{split}" if k > 1 else f"1x{r}x{cc}")
                cyc_l.append(np.where(valid, cyc, inf))
                til_l.append(til)
                dram_l.append(dram)
                en_l.append(en)
        # The vector unit (non-GEMM layers): n/16 of the lanes and of the bandwidth.
        vcfg = replace(base, lanes=max(base.lanes * n // total, 1), bw=base.bw * share)
        v_elems = b * np.maximum(c["input_elems"], c["output_elems"])[None, :]
        in_bytes = b * c["input_elems"] * width
        v_cyc, v_til, v_bytes = _vector_grid(vcfg, v_elems, in_bytes)
        labels.append("simd")
        cyc_l.append(np.where(is_gemm[None, :], inf, v_cyc))
        til_l.append(v_til)
        dram_l.append(v_bytes + out_bytes)
        en_l.append(
            model.layer_energy_j(
                powered_pes=0,
                gemm_cycles=0,
                vector_ops=v_elems,
                sram_bytes=2 * in_bytes + out_bytes,
                dram_bytes=v_bytes + out_bytes,
                ring_bit_hops=0,
                static_subarray_s=n * v_cyc / base.f,
                fission=True,
            )
        )
        shape = bm.shape
        cycles = np.stack([np.broadcast_to(a, shape) for a in cyc_l], axis=-1).astype(np.float64)
        energy = np.stack([np.broadcast_to(a, shape) for a in en_l], axis=-1)
        fastest = cycles == cycles.min(axis=-1, keepdims=True)
        best = np.argmin(np.where(fastest, energy, inf), axis=-1)
        return {
            "labels": tuple(labels),
            "cycles": cycles,
            "tiles": np.stack([np.broadcast_to(a, shape) for a in til_l], axis=-1),
            "dram": np.stack([np.broadcast_to(a, shape) for a in dram_l], axis=-1),
            "energy": energy,
            "best": best,
            "out_bytes": out_bytes,
            "act_cap": max(int(base.act_sram * share), 1),
            "f": base.f,
        }


def variant_profiles(
    network: Network, device: FissionArray, batch_sizes: Sequence[int] = (1,)
) -> tuple[Profile, ...]:
    """The compiled profiles of ``network`` on 1..``num_subarrays`` subarrays (index ``n - 1``):
    Planaria's 16 configuration tables per DNN (Sec. IV-C). A bridge until ``compile_profile``
    compiles named plan axes; each comes from the profile cache like any other."""
    from npusched.hardware.profile import compile_profile

    return tuple(
        compile_profile(network, device.variant(subarrays=n), batch_sizes)
        for n in device.variant_axes["subarrays"]
    )


class FissionVariant:
    """A :class:`FissionArray` with the subarray count bound: a plain one-variant device whose
    ``cache_key`` includes the count (a bridge until profiles compile named axes)."""

    def __init__(self, array: FissionArray, subarrays: int) -> None:
        self.array = array
        self.subarrays = subarrays
        self.name = f"{array.name}[{subarrays}]"

    @property
    def frequency_hz(self) -> float:
        return float(self.array.frequency_hz)

    @property
    def memory_bandwidth_bps(self) -> float:
        """The bandwidth share of the bound subarrays, bytes per second."""
        return float(self.array.memory_bandwidth_bps) * self.subarrays / self.array.num_subarrays

    @property
    def peak_macs_per_s(self) -> float:
        """Peak MAC throughput of the bound subarrays, MACs per second."""
        return self.array.peak_macs_per_s * self.subarrays / self.array.num_subarrays

    def get_params(self) -> dict[str, Any]:
        return {**self.array.get_params(), "subarrays": self.subarrays}

    def layer_costs(self, network: Network, batch: int) -> LayerCosts:
        return self.array.layer_costs(network, batch, subarrays=self.subarrays)

    def layer_costs_grid(self, network: Network, batch_sizes: Sequence[int]) -> LayerCosts:
        return self.array.layer_costs_grid(network, batch_sizes, subarrays=self.subarrays)

    def cache_key(self) -> tuple[object, ...]:
        return (*self.array.cache_key(), ("subarrays", self.subarrays))


def _register() -> None:
    from npusched.hardware.devices import DEVICES

    DEVICES.register("planaria", FissionArray)


_register()
