"""The cost-model protocol every device implements, and the per-layer cost table it returns."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from npusched.models.ir import Network

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]


@dataclass(frozen=True)
class LayerCosts:
    """Per-layer costs of one network at one batch size on one device (arrays of length L).

    Attributes:
        cycles: device cycles per layer (per time step for recurrent cells).
        latency_s: seconds per layer (``cycles / frequency``).
        tiles: number of tiles (GEMM_OP instructions), i.e. CHECKPOINT preemption points, >= 1.
        bytes_moved: DRAM bytes read + written per layer.
        checkpoint_bytes: output-activation bytes a CHECKPOINT at a tile boundary of this layer
            must save (and later restore); see the device's docstring for the exact form.
        energy_j: energy per layer in joules (a first-order hook: MACs and bytes times constants).
    """

    cycles: IntArray
    latency_s: FloatArray
    tiles: IntArray
    bytes_moved: IntArray
    checkpoint_bytes: IntArray
    energy_j: FloatArray

    def __post_init__(self) -> None:
        n = len(self.cycles)
        for name in ("latency_s", "tiles", "bytes_moved", "checkpoint_bytes", "energy_j"):
            if len(getattr(self, name)) != n:
                raise ValueError(f"LayerCosts.{name} has length {len(getattr(self, name))} != {n}")


@runtime_checkable
class Device(Protocol):
    """A hardware cost model. ``name`` identifies it in profiles, configs and caches.

    Implementations must be deterministic and vectorised: ``layer_costs`` is called once per
    (network, batch) when a profile compiles, never inside the simulator's loop.
    """

    name: str

    @property
    def frequency_hz(self) -> float: ...

    @property
    def memory_bandwidth_bps(self) -> float:
        """Off-chip bandwidth in bytes per second (used for checkpoint save/restore time)."""
        ...

    def layer_costs(self, network: Network, batch: int) -> LayerCosts: ...

    def cache_key(self) -> tuple[object, ...]:
        """A hashable key of every parameter that changes the costs."""
        ...
