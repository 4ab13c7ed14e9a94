"""A first-order 45 nm energy model shared by the monolithic array and the fission array.

Planaria (MICRO 2020, Sec. VI-A) compares its energy with PREMA's monolithic NPU; for that
comparison both accelerators must be charged with the same constants. This module holds them
and the per-layer accounting; :class:`~npusched.hardware.fission.FissionArray` feeds its
``energy_j`` from :meth:`EnergyModel.layer_energy_j`, and :func:`systolic_energy_j` costs a
:class:`~npusched.hardware.systolic.SystolicArray` run with the very same model (the PREMA
device keeps its own simpler ``energy_j`` hook unchanged).

Terms (per layer, joules)
-------------------------
* **Array (PE) energy** ``pe_cycle_pj x powered PEs x busy cycles``. A systolic PE has no
  operand gating: its pipeline registers shift every cycle whether or not its MAC does useful
  work, so a powered array spends energy in proportion to time x size. This is how the authors'
  artifact charges its subarrays (synthesised dynamic power / frequency per cycle per active
  subarray, he-actlab/planaria.code ``Simulator.get_energy_cost``), and it is what makes a
  monolithic 128x128 array expensive on a depthwise layer that keeps one column busy.
  Default 1.0 pJ: a 16-bit integer multiply (~0.8 pJ: Horowitz, ISSCC 2014, 8-bit multiply
  0.2 pJ scaled quadratically) plus a 32-bit add (0.1 pJ, same source) and the PE registers -
  the same constant as ``SystolicArray.mac_energy_pj``. The fission array powers only the
  allocated subarrays (``n x 32 x 32`` PEs); the monolithic array always all ``128 x 128``.
  :data:`PLANARIA_ENERGY` takes the artifact's synthesised subarray instead (1.365 W at
  700 MHz over 1024 PEs: 1.904 pJ).
* **Vector energy** ``vector_op_pj`` per SIMD element operation (1.0 pJ, as above).
* **SRAM energy** ``sram_pj_per_byte`` per on-chip buffer byte read or written. 2.5 pJ/B: a
  32 KB SRAM bank reads 64 bits for ~20 pJ at 45 nm (Horowitz, ISSCC 2014). Both designs have
  the same 12 MB split into banks of this class (Planaria's Pod Memories and PREMA's UBUF /
  weight SRAM / ACCQ), so one constant serves both. Counted: every DRAM-loaded byte once into
  SRAM and once out to the array, the 32-bit partial-sum read-modify-write of every output
  element once per reduction tile, and the layer's output write.
* **DRAM energy** ``dram_pj_per_bit`` per off-chip bit (4 pJ/bit, HBM2-class, O'Connor et al.,
  MICRO 2017; the same 32 pJ/byte as ``SystolicArray.dram_energy_pj_per_byte``. The authors'
  artifact uses 12.5 pJ/bit, a DDR figure, which :data:`PLANARIA_ENERGY` takes).
* **Ring-bus energy** ``ring_pj_per_bit_hop`` per bit per hop between subarrays: 0.64 pJ/bit
  per hop (Planaria Sec. VI-A, McPAT 1.3). A logical array of ``r x c`` subarrays forwards
  every streamed input element across ``c - 1`` subarray boundaries and every 32-bit partial
  sum across ``r - 1`` (the omni-directional chains of Sec. III-A); the monolithic array has none.

* **Static (leakage) energy** ``static_w_per_subarray x powered subarrays x seconds``: the
  leakage of one 32x32 PE subarray and its 1/16 share of the 12 MB buffers, charged for as long
  as the subarrays are allocated to a layer (``n`` on the fission array, all 16 on the
  monolithic 128x128 array, whose 16,384 PEs count as 16 subarrays). Idle subarrays are taken as
  power-gated: the paper says nothing about power gating or leakage (Sec. VI-A names only
  Design Compiler, CACTI-P and McPAT), and the authors' artifact computes leakage but adds none
  of it (``src/simulator/simulator.py``: ``total_leak_energy = 0``; ``stats.py``:
  ``leak_energy = 0``) - it scales the core leakage by the *active* subarrays (idle ones gated)
  and the SRAM leakage by every bank. Default 0 (as the artifact's totals);
  :data:`PLANARIA_ENERGY` sets 1.48 W, the artifact's own CACTI-P figures at 45 nm
  (``sram/cacti_sweep.csv``, ``leak_power_mW``) for its 12 MB: 16,384 weight banks of 256 B
  (0.530 mW each), 512 activation banks of 8 KB (13.78 mW) and 512 output banks of 8 KB with
  a read-write port (15.49 mW) = 23.67 W, divided over 16 subarrays; the subarray logic's
  leakage is 0 in the artifact's synthesis table (``results/systolic_array_synth.csv``). Gating
  the buffers with their subarray is our choice (the artifact keeps all banks leaking; with
  that reading the chip's 23.67 W leak over the whole run on both systems, an ablation in
  ``docs/papers/planaria.md``).
* **Fission logic overhead** ``fission_logic_overhead``: the fission array's PE and vector
  energy is ``1 + overhead`` times the monolithic array's. Planaria Sec. VI-B2 / Fig. 19:
  "dynamic fission adds 12.6%, 20.6% extra area and power" over the same PEs, buffers
  excluded. Default 0; :data:`PLANARIA_ENERGY` sets 0.206.
"""

from __future__ import annotations

import math
from numbers import Real
from typing import TYPE_CHECKING, Any

import numpy as np

from npusched.base import Component
from npusched.errors import HardwareConfigError
from npusched.hardware.base import FloatArray

if TYPE_CHECKING:
    from npusched.hardware.systolic import SystolicArray
    from npusched.models.ir import Network

__all__ = [
    "PLANARIA_ENERGY",
    "PSUM_BYTES",
    "EnergyModel",
    "gemm_sram_bytes",
    "systolic_energy_j",
]

_PJ = 1e-12
#: Bytes of one partial sum in the accumulators (32-bit).
PSUM_BYTES = 4
#: PEs of one subarray (32 x 32), the unit of :attr:`EnergyModel.static_w_per_subarray`.
SUBARRAY_PES = 32 * 32
#: The artifact's SRAM leakage at 45 nm (CACTI-P, he-actlab/planaria.code
#: ``sram/cacti_sweep.csv``) for its 12 MB, watts: weight, activation, output banks.
ARTIFACT_SRAM_LEAK_W = (16384 * 0.530261 + 512 * 13.7842 + 512 * 15.4853) * 1e-3
#: The artifact's synthesised 32x32 subarray: 1.365 W dynamic at 700 MHz
#: (``results/systolic_array_synth.csv``), pJ per PE per cycle.
ARTIFACT_PE_CYCLE_PJ = 1.365 / 700e6 / SUBARRAY_PES * 1e12
#: The energy constants of the Planaria reproduction (``npusched reproduce planaria``), the
#: paper's where it gives one, else the authors' artifact (he-actlab/planaria.code): static
#: energy (the artifact's CACTI-P SRAM leakage, over 16 subarrays), the paper's fission power
#: overhead (Fig. 19, 20.6%), the artifact's PE energy (1.904 pJ per PE-cycle) and DRAM energy
#: (``configs/cmx-*.ini``: ``dram_cost = 12.5`` pJ/bit); the ring bus keeps the paper's 0.64
#: pJ/bit/hop and SRAM accesses our 2.5 pJ/B (the artifact's CACTI-P reads range 0.27-2.9 pJ/B
#: by bank, a split our byte counts do not make). See the module docstring.
PLANARIA_ENERGY: dict[str, float] = {
    "pe_cycle_pj": ARTIFACT_PE_CYCLE_PJ,
    "dram_pj_per_bit": 12.5,
    "static_w_per_subarray": ARTIFACT_SRAM_LEAK_W / 16,
    "fission_logic_overhead": 0.206,
}


class EnergyModel(Component):
    """Energy constants (45 nm) and the per-layer accounting; see the module docstring.

    Args:
        pe_cycle_pj: energy of one powered PE in one busy cycle, pJ (1.0), >= 0.
        vector_op_pj: energy of one SIMD vector-unit element operation, pJ (1.0), >= 0.
        sram_pj_per_byte: energy per on-chip SRAM byte read or written, pJ (2.5), >= 0.
        dram_pj_per_bit: energy per off-chip DRAM bit, pJ (4.0), >= 0.
        ring_pj_per_bit_hop: energy per bit per ring-bus hop between subarrays, pJ (0.64), >= 0.
        static_w_per_subarray: leakage of one powered 32x32 subarray with its share of the
            buffers, watts (0.0), >= 0.
        fission_logic_overhead: extra PE and vector energy of the fission array, a fraction
            (0.0), >= 0.
    """

    def __init__(
        self,
        pe_cycle_pj: float = 1.0,
        vector_op_pj: float = 1.0,
        sram_pj_per_byte: float = 2.5,
        dram_pj_per_bit: float = 4.0,
        ring_pj_per_bit_hop: float = 0.64,
        static_w_per_subarray: float = 0.0,
        fission_logic_overhead: float = 0.0,
    ) -> None:
        self.pe_cycle_pj = pe_cycle_pj
        self.vector_op_pj = vector_op_pj
        self.sram_pj_per_byte = sram_pj_per_byte
        self.dram_pj_per_bit = dram_pj_per_bit
        self.ring_pj_per_bit_hop = ring_pj_per_bit_hop
        self.static_w_per_subarray = static_w_per_subarray
        self.fission_logic_overhead = fission_logic_overhead
        self.key()

    @classmethod
    def planaria(cls, **overrides: float) -> EnergyModel:
        """The Planaria reproduction's model: :data:`PLANARIA_ENERGY` (static energy and the
        fission overhead) over the defaults, then ``overrides``."""
        return cls(**{**PLANARIA_ENERGY, **overrides})

    def key(self) -> tuple[float, ...]:
        """The validated constants as a hashable tuple (part of a device's cache key)."""
        out = []
        for name in self._param_names():
            v = getattr(self, name)
            ok = isinstance(v, Real) and not isinstance(v, bool) and math.isfinite(float(v))
            if not ok or float(v) < 0:
                raise HardwareConfigError(
                    f"EnergyModel: {name} must be a finite number >= 0, got {v!r}"
                )
            out.append(float(v))
        return tuple(out)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, EnergyModel) and self.key() == other.key()

    def __hash__(self) -> int:
        return hash(self.key())

    def layer_energy_j(
        self,
        *,
        powered_pes: Any,
        gemm_cycles: Any,
        vector_ops: Any,
        sram_bytes: Any,
        dram_bytes: Any,
        ring_bit_hops: Any,
        static_subarray_s: Any = 0.0,
        fission: bool = False,
    ) -> FloatArray:
        """Energy in joules per layer from its counts (broadcastable arrays).

        Args:
            powered_pes: PEs powered while the layer's GEMM runs.
            gemm_cycles: busy array cycles of GEMM layers (0 for vector layers).
            vector_ops: vector-unit element operations (0 for GEMM layers).
            sram_bytes: on-chip SRAM bytes read + written.
            dram_bytes: off-chip bytes read + written.
            ring_bit_hops: bits x ring-bus hops between subarrays.
            static_subarray_s: powered subarrays x seconds (32x32 PEs each: the monolithic
                128x128 array is 16), for the static term.
            fission: the fission array (its PE and vector energy carry
                ``fission_logic_overhead``).
        """
        pe, vec, sram, dram, ring, static_w, overhead = self.key()
        logic = 1.0 + overhead if fission else 1.0
        total = (
            np.asarray(powered_pes, dtype=np.float64) * np.asarray(gemm_cycles) * pe * logic
            + np.asarray(vector_ops, dtype=np.float64) * vec * logic
            + np.asarray(sram_bytes, dtype=np.float64) * sram
            + np.asarray(dram_bytes, dtype=np.float64) * 8.0 * dram
            + np.asarray(ring_bit_hops, dtype=np.float64) * ring
        )
        out = total * _PJ
        if static_w:
            out = out + np.asarray(static_subarray_s, dtype=np.float64) * static_w
        return np.asarray(out, dtype=np.float64)


def gemm_sram_bytes(
    *, streamed: Any, k: Any, n: Any, groups: Any, rows: Any, loaded: Any, out_bytes: Any
) -> Any:
    """SRAM bytes of a GEMM layer on an array of ``rows`` reduction rows (broadcastable).

    ``2 x loaded`` (each DRAM byte written into SRAM and read into the array) plus the 32-bit
    partial-sum read-modify-write of each of the ``streamed x n x groups`` outputs once per
    reduction tile (``ceil(k / rows)``), plus the output write ``out_bytes``.
    """
    k_tiles = -(-np.asarray(k) // np.asarray(rows))
    psum = 2 * PSUM_BYTES * np.asarray(streamed) * n * groups * k_tiles
    return 2 * np.asarray(loaded) + psum + out_bytes


def systolic_energy_j(
    device: SystolicArray, network: Network, batch: int, model: EnergyModel | None = None
) -> FloatArray:
    """Per-layer energy (joules) of ``network`` at ``batch`` on a monolithic
    :class:`~npusched.hardware.systolic.SystolicArray`, charged with ``model`` (the defaults of
    :class:`EnergyModel` if ``None``): all ``rows x cols`` PEs powered for every busy cycle of a
    GEMM layer, no ring bus; the static term over every layer's cycles for the array's
    ``rows x cols / 1024`` subarray equivalents (16 for 128x128)."""
    model = model or EnergyModel()
    costs = device.layer_costs(network, batch)
    c = network.columns
    is_gemm = c["is_gemm"].astype(bool)
    width = c["bytes_per_elem"]
    out_elems = np.where(c["output_elems"] > 0, c["output_elems"], c["m"] * c["n"] * c["groups"])
    out_bytes = batch * out_elems * width
    loaded = costs.bytes_moved - out_bytes
    sram_gemm = gemm_sram_bytes(
        streamed=batch * c["m"],
        k=c["k"],
        n=c["n"],
        groups=c["groups"],
        rows=max(int(device.rows), 1),
        loaded=loaded,
        out_bytes=out_bytes,
    )
    v_elems = batch * np.maximum(c["input_elems"], c["output_elems"])
    sram_vec = 2 * batch * c["input_elems"] * width + out_bytes
    return model.layer_energy_j(
        powered_pes=int(device.rows) * int(device.cols),
        gemm_cycles=np.where(is_gemm, costs.cycles, 0),
        vector_ops=np.where(is_gemm, 0, v_elems),
        sram_bytes=np.where(is_gemm, sram_gemm, sram_vec),
        dram_bytes=costs.bytes_moved,
        ring_bit_hops=0,
        static_subarray_s=(int(device.rows) * int(device.cols) / SUBARRAY_PES)
        * np.asarray(costs.cycles, dtype=np.float64)
        / float(device.frequency_hz),
    )
