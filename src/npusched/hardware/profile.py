"""Compiled latency profiles: per-layer tables for a (network, device) over batch sizes.

A :class:`Profile` is compiled once per ``(network, device parameters, batch sizes)`` and cached.
The simulator never calls the cost model: it asks a profile for an :class:`ExecPlan` (the job's
executed layer sequence with recurrent cells unrolled) and bisects its prefix sums to find where a
job stands at any time.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import numpy as np

from npusched.errors import HardwareConfigError
from npusched.hardware.base import Device, FloatArray, IntArray, LayerCosts
from npusched.models.ir import Network


@dataclass(frozen=True, eq=False)
class ExecPlan:
    """The executed step sequence of one inference (a CNN's layers, or an RNN unrolled).

    Attributes:
        layer: index into ``network.layers`` of each step (length S).
        latency_s: seconds per step.
        cum_s: prefix sums, length S + 1, ``cum_s[0] = 0``, ``cum_s[-1] = total_s``.
        tiles: tiles (CHECKPOINT preemption points) per step.
        checkpoint_bytes: bytes a CHECKPOINT inside each step saves.
        energy_j: joules per step.
    """

    layer: IntArray
    latency_s: FloatArray
    cum_s: FloatArray
    tiles: IntArray
    checkpoint_bytes: IntArray
    energy_j: FloatArray

    @property
    def total_s(self) -> float:
        return float(self.cum_s[-1])

    @property
    def steps(self) -> int:
        return len(self.layer)

    def step_at(self, executed_s: float) -> int:
        """Index of the step running after ``executed_s`` seconds of work (S when done)."""
        return int(np.searchsorted(self.cum_s, executed_s, side="right")) - 1

    def next_layer_boundary(self, executed_s: float) -> float:
        """The smallest step boundary (in seconds of work) >= ``executed_s``."""
        i = int(np.searchsorted(self.cum_s, executed_s, side="left"))
        return float(self.cum_s[min(i, len(self.cum_s) - 1)])

    def next_tile_boundary(self, executed_s: float) -> float:
        """The smallest tile boundary >= ``executed_s``, tiles evenly dividing their step.

        Tiles of a layer are taken as equal in length (inner tiles dominate; see the device)."""
        s = self.step_at(executed_s)
        if s >= self.steps:
            return self.total_s
        start = float(self.cum_s[s])
        tile = float(self.latency_s[s]) / max(int(self.tiles[s]), 1)
        if tile <= 0.0:
            return start
        k = np.ceil((executed_s - start) / tile - 1e-9)
        return min(start + float(k) * tile, float(self.cum_s[s + 1]))

    def checkpoint_bytes_at(self, executed_s: float) -> int:
        """Bytes a CHECKPOINT saves when the job stops after ``executed_s`` seconds of work."""
        s = self.step_at(executed_s)
        if s >= self.steps or executed_s <= 0.0:
            return 0
        if executed_s == float(self.cum_s[s]) and s > 0:
            s -= 1  # stopped exactly at a layer end: the finished layer's outputs are live
        return int(self.checkpoint_bytes[s])


@dataclass(frozen=True, eq=False)
class Profile:
    """Per-layer tables of ``network`` on ``device`` for each batch size in ``batch_sizes``.

    All 2-D arrays have shape ``(len(batch_sizes), len(network.layers))``; ``cum_s`` has one more
    column (prefix sums over layers, one step per layer, i.e. RNN cells counted once).
    """

    network: Network
    device_name: str
    frequency_hz: float
    memory_bandwidth_bps: float
    batch_sizes: tuple[int, ...]
    cycles: IntArray
    latency_s: FloatArray
    cum_s: FloatArray
    tiles: IntArray
    bytes_moved: IntArray
    checkpoint_bytes: IntArray
    energy_j: FloatArray
    _plans: dict[tuple[int, int, int], ExecPlan] = field(default_factory=dict, repr=False)

    def row(self, batch: int) -> int:
        """Row index of ``batch`` (raises if the profile was not compiled for it)."""
        try:
            return self.batch_sizes.index(int(batch))
        except ValueError:
            raise HardwareConfigError(
                f"profile of {self.network.name} on {self.device_name} has no batch size {batch}; "
                f"compiled for {list(self.batch_sizes)}"
            ) from None

    def plan(
        self, batch: int = 1, seq_in: int | None = None, seq_out: int | None = None
    ) -> ExecPlan:
        """The executed step sequence for one request (cached per ``(batch, seq_in, seq_out)``)."""
        net = self.network
        if net.is_recurrent:
            s_in, s_out = net._resolve_seq(seq_in, seq_out)
        else:
            s_in = s_out = 1
        key = (int(batch), s_in, s_out)
        plan = self._plans.get(key)
        if plan is not None:
            return plan
        r = self.row(batch)
        if net.is_recurrent:
            idx = net.expand(s_in, s_out)
            lat = self.latency_s[r, idx]
            cum = np.concatenate(([0.0], np.cumsum(lat)))
        else:
            idx = np.arange(len(net.layers), dtype=np.int64)
            lat = self.latency_s[r]
            cum = self.cum_s[r]
        plan = ExecPlan(
            layer=idx,
            latency_s=lat,
            cum_s=cum,
            tiles=self.tiles[r, idx],
            checkpoint_bytes=self.checkpoint_bytes[r, idx],
            energy_j=self.energy_j[r, idx],
        )
        self._plans[key] = plan
        return plan

    def isolated_latency(
        self, batch: int = 1, seq_in: int | None = None, seq_out: int | None = None
    ) -> float:
        """Seconds of uninterrupted execution of one request (its ``C_single``)."""
        return self.plan(batch, seq_in, seq_out).total_s

    def energy(
        self, batch: int = 1, seq_in: int | None = None, seq_out: int | None = None
    ) -> float:
        return float(self.plan(batch, seq_in, seq_out).energy_j.sum())


def _stack(costs: list[LayerCosts], name: str, dtype: type) -> Any:
    arr: Any = np.ascontiguousarray(np.stack([getattr(c, name) for c in costs]), dtype=dtype)
    arr.flags.writeable = False
    return arr


def _compile(network: Network, device: Device, batch_sizes: tuple[int, ...]) -> Profile:
    costs = [device.layer_costs(network, b) for b in batch_sizes]
    lat = _stack(costs, "latency_s", np.float64)
    cum = np.concatenate([np.zeros((len(batch_sizes), 1)), np.cumsum(lat, axis=1)], axis=1)
    cum.flags.writeable = False
    return Profile(
        network=network,
        device_name=device.name,
        frequency_hz=float(device.frequency_hz),
        memory_bandwidth_bps=float(device.memory_bandwidth_bps),
        batch_sizes=batch_sizes,
        cycles=_stack(costs, "cycles", np.int64),
        latency_s=lat,
        cum_s=cum,
        tiles=_stack(costs, "tiles", np.int64),
        bytes_moved=_stack(costs, "bytes_moved", np.int64),
        checkpoint_bytes=_stack(costs, "checkpoint_bytes", np.int64),
        energy_j=_stack(costs, "energy_j", np.float64),
    )


@lru_cache(maxsize=512)
def _compile_cached(
    network: Network, device_key: tuple[object, ...], device: Device, batch_sizes: tuple[int, ...]
) -> Profile:
    return _compile(network, device, batch_sizes)


def compile_profile(network: Network, device: Device, batch_sizes: Iterable[int] = (1,)) -> Profile:
    """Compile (or fetch from the in-process cache) the profile of ``network`` on ``device``.

    Args:
        network: the layer table.
        device: any :class:`~npusched.hardware.base.Device`.
        batch_sizes: batch sizes to tabulate (positive integers).

    Returns:
        A :class:`Profile`; identical inputs return the same object.
    """
    bs = tuple(sorted({int(b) for b in batch_sizes}))
    if not bs or bs[0] < 1:
        raise HardwareConfigError(f"batch sizes must be positive integers, got {list(batch_sizes)}")
    # The network is hashed by identity (zoo networks are cached singletons) and the device by
    # its parameter key, so two equal devices share profiles.
    return _compile_cached(network, device.cache_key(), _KeyOnly(device), bs)


class _KeyOnly:
    """Wraps a device so the lru_cache key ignores the object and uses ``cache_key()`` only."""

    __slots__ = ("device",)

    def __init__(self, device: Device) -> None:
        self.device = device

    def __hash__(self) -> int:
        return 0

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _KeyOnly)

    def __getattr__(self, item: str) -> object:
        return getattr(self.device, item)
