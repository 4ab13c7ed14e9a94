"""Compiled latency profiles: per-layer tables for a (network, device) over batch sizes.

A :class:`Profile` is compiled once per ``(network, device parameters, batch sizes)`` and cached.
The simulator never calls the cost model: it asks a profile for an :class:`ExecPlan` (the job's
executed layer sequence with recurrent cells unrolled) and bisects its prefix sums to find where a
job stands at any time.
"""

from __future__ import annotations

import math
from bisect import bisect_left, bisect_right
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

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
        steps: the number of steps S (derived).
    """

    layer: IntArray
    latency_s: FloatArray
    cum_s: FloatArray
    tiles: IntArray
    checkpoint_bytes: IntArray
    energy_j: FloatArray

    # Derived at construction. ``steps`` is S; ``_cum``, ``_ckpt`` and ``_tile_s`` (seconds per
    # tile of each step, tiles evenly dividing their step) are Python-list copies for the
    # look-ups below, kept with the plan (one per cached plan): bisecting a list is several
    # times faster than ``numpy.searchsorted`` on a scalar, and the simulator asks at every
    # preemption.
    steps: int = field(init=False, repr=False)
    _cum: list[float] = field(init=False, repr=False)
    _ckpt: list[int] = field(init=False, repr=False)
    _tile_s: list[float] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        tiles = self.tiles.tolist()
        tile_s = [lat / max(t, 1) for lat, t in zip(self.latency_s.tolist(), tiles, strict=True)]
        object.__setattr__(self, "steps", len(self.layer))
        object.__setattr__(self, "_cum", self.cum_s.tolist())
        object.__setattr__(self, "_ckpt", self.checkpoint_bytes.tolist())
        object.__setattr__(self, "_tile_s", tile_s)

    @property
    def total_s(self) -> float:
        """Seconds of uninterrupted execution (the last prefix sum)."""
        return float(self.cum_s[-1])

    def step_at(self, executed_s: float) -> int:
        """Index of the step running after ``executed_s`` seconds of work (S when done)."""
        return bisect_right(self._cum, executed_s) - 1

    def steps_between(self, a: float, b: float) -> int:
        """Steps executed (whole or in part) over the work interval ``[a, b)``, ``b > a``
        (seconds of work): one plus the step ends strictly inside it."""
        cum = self._cum
        if a <= 0.0 and b >= cum[-1]:
            return self.steps
        n = bisect_left(cum, b) - bisect_right(cum, a) + 1
        return n if n > 0 else 0

    def next_layer_boundary(self, executed_s: float) -> float:
        """The smallest step boundary (in seconds of work) >= ``executed_s``."""
        cum = self._cum
        i = bisect_left(cum, executed_s)
        return cum[i] if i < len(cum) else cum[-1]

    def next_tile_boundary(self, executed_s: float) -> float:
        """The smallest tile boundary >= ``executed_s``, tiles evenly dividing their step.

        Tiles of a layer are taken as equal in length (inner tiles dominate; see the device).
        A position within a billionth of a tile past a boundary counts as at that boundary
        (floating-point slack) and returns ``executed_s`` itself, never an earlier time."""
        cum = self._cum
        s = bisect_right(cum, executed_s) - 1
        if s >= self.steps:
            return cum[-1]
        start = cum[s]
        tile = self._tile_s[s]
        if tile <= 0.0:
            return start
        k = math.ceil((executed_s - start) / tile - 1e-9)
        return min(max(start + k * tile, executed_s), cum[s + 1])

    def next_preemption_point(self, executed_s: float, *, layer: bool, tol_s: float) -> float:
        """Where a job that has done ``executed_s`` seconds of work can stop (seconds of work).

        The next step end (``layer``) or tile boundary at or after ``executed_s``, with
        positions compared within ``tol_s`` seconds: a position reached as ``start + rate * t``
        can miss a step end by a few ulps. A job up to ``tol_s`` past a step end is at that
        step end (it has finished that step and not started the next), and a tile boundary
        ``start + k * tile`` up to ``tol_s`` short of a step end is that step end (so a stop in
        the last tile is the job's end). Never earlier than ``executed_s`` minus ``tol_s``.
        """
        cum = self._cum
        i = bisect_left(cum, executed_s)
        if i and executed_s - cum[i - 1] <= tol_s:
            return cum[i - 1]
        if layer:
            return cum[i] if i < len(cum) else executed_s
        stop = self.next_tile_boundary(executed_s)
        j = bisect_left(cum, stop)
        if j < len(cum) and cum[j] - stop <= tol_s:
            return cum[j]
        return stop

    def checkpoint_bytes_at(self, executed_s: float) -> int:
        """Bytes a CHECKPOINT saves when the job stops after ``executed_s`` seconds of work."""
        if executed_s <= 0.0:
            return 0
        cum = self._cum
        s = bisect_right(cum, executed_s) - 1
        if s >= self.steps:
            return 0
        if executed_s == cum[s] and s > 0:
            s -= 1  # stopped exactly at a layer end: the finished layer's outputs are live
        return self._ckpt[s]


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

    @classmethod
    def from_tables(
        cls,
        network: Network,
        *,
        device_name: str,
        batch_sizes: tuple[int, ...],
        latency_s: Any,
        frequency_hz: float,
        memory_bandwidth_bps: float,
        cycles: Any = None,
        tiles: Any = 1,
        bytes_moved: Any = 0,
        checkpoint_bytes: Any = 0,
        energy_j: Any = 0.0,
    ) -> Profile:
        """A profile from per-(batch, layer) tables; each table may be anything that broadcasts
        to ``(len(batch_sizes), len(network.layers))`` (a scalar, a per-layer row, the full grid).

        ``cum_s`` is derived from ``latency_s``; ``cycles`` defaults to
        ``round(latency_s * frequency_hz)``. Every array is copied and made read-only.
        """
        shape = (len(batch_sizes), len(network.layers))

        def grid(v: Any, dtype: type) -> Any:
            return _ro(np.broadcast_to(np.asarray(v, dtype=dtype), shape), dtype)

        lat = grid(latency_s, np.float64)
        cum = np.zeros((shape[0], shape[1] + 1))
        np.cumsum(lat, axis=1, out=cum[:, 1:])
        cum.flags.writeable = False
        if cycles is None:
            cycles = np.round(lat * frequency_hz)
        return cls(
            network=network,
            device_name=device_name,
            frequency_hz=float(frequency_hz),
            memory_bandwidth_bps=float(memory_bandwidth_bps),
            batch_sizes=tuple(int(b) for b in batch_sizes),
            cycles=grid(cycles, np.int64),
            latency_s=lat,
            cum_s=cum,
            tiles=grid(tiles, np.int64),
            bytes_moved=grid(bytes_moved, np.int64),
            checkpoint_bytes=grid(checkpoint_bytes, np.int64),
            energy_j=grid(energy_j, np.float64),
        )

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
        """Joules of one request (the sum of its executed steps' energy)."""
        return float(self.plan(batch, seq_in, seq_out).energy_j.sum())


class GridDevice(Protocol):
    """Optional fast path: a device that costs every batch size in one vectorised call."""

    def layer_costs_grid(self, network: Network, batch_sizes: Sequence[int]) -> LayerCosts:
        """Like ``Device.layer_costs`` with arrays of shape ``(len(batch_sizes), L)``."""
        ...


def _ro(a: Any, dtype: type) -> Any:
    arr: Any = np.array(a, dtype=dtype, order="C", copy=True)
    arr.flags.writeable = False
    return arr


def _costs_grid(network: Network, device: Device, batch_sizes: tuple[int, ...]) -> LayerCosts:
    """Per-(batch, layer) costs: one vectorised call if the device offers ``layer_costs_grid``,
    else one ``layer_costs`` call per batch size, stacked."""
    grid = getattr(device, "layer_costs_grid", None)
    if grid is not None:
        out = grid(network, batch_sizes)
        assert isinstance(out, LayerCosts)
        return out
    per = [device.layer_costs(network, b) for b in batch_sizes]
    return LayerCosts(**{name: np.stack([getattr(c, name) for c in per]) for name in _COST_FIELDS})


_COST_FIELDS = ("cycles", "latency_s", "tiles", "bytes_moved", "checkpoint_bytes", "energy_j")


def _compile(network: Network, device: Device, batch_sizes: tuple[int, ...]) -> Profile:
    costs = _costs_grid(network, device, batch_sizes)
    shape = (len(batch_sizes), len(network.layers))
    for name in _COST_FIELDS:
        got = np.shape(getattr(costs, name))
        if got != shape:
            raise HardwareConfigError(
                f"device {device.name!r} returned {name} of shape {got}, expected {shape}"
            )
    return Profile.from_tables(
        network,
        device_name=device.name,
        batch_sizes=batch_sizes,
        latency_s=costs.latency_s,
        frequency_hz=device.frequency_hz,
        # the simulator uses this only for checkpoint save/restore: the effective bandwidth if the
        # device has one (SystolicArray.checkpoint_bandwidth_bps), else the memory bandwidth
        memory_bandwidth_bps=getattr(
            device, "checkpoint_bandwidth_bps", device.memory_bandwidth_bps
        ),
        cycles=costs.cycles,
        tiles=costs.tiles,
        bytes_moved=costs.bytes_moved,
        checkpoint_bytes=costs.checkpoint_bytes,
        energy_j=costs.energy_j,
    )


# Compiled profiles, most recently used last. Keyed by the network's identity (zoo networks are
# cached singletons; hashing a Network by value walks every layer), the device's parameter key
# and the batch sizes. Each entry holds its network, so an id cannot be reused while cached.
_CACHE: OrderedDict[tuple[int, tuple[object, ...], tuple[int, ...]], Profile] = OrderedDict()
_CACHE_SIZE = 512


def compile_profile(
    network: Network, device: Device, batch_sizes: Iterable[int] = (1,), *, cache: bool = True
) -> Profile:
    """Compile (or fetch from the in-process cache) the profile of ``network`` on ``device``.

    Args:
        network: the layer table.
        device: any :class:`~npusched.hardware.base.Device`; devices that also implement
            :class:`GridDevice` are costed for all batch sizes in one vectorised call.
        batch_sizes: batch sizes to tabulate (positive integers; order and repeats ignored).
        cache: look up and store the result in the in-process cache (``False``: always compile
            afresh and leave the cache untouched, e.g. to time a compile).

    Returns:
        A :class:`Profile`; the same network object, an equal device parameter key and the same
        set of batch sizes return the same object.
    """
    if not isinstance(network, Network):
        raise HardwareConfigError(
            f"compile_profile needs a Network (e.g. get_network(name)), got {type(network).__name__}"
        )
    bs = _batch_sizes(batch_sizes)
    if not cache:
        return _compile(network, device, bs)
    key = (id(network), device.cache_key(), bs)
    prof = _CACHE.get(key)
    if prof is not None and prof.network is network:
        _CACHE.move_to_end(key)
        return prof
    prof = _compile(network, device, bs)
    _CACHE[key] = prof
    if len(_CACHE) > _CACHE_SIZE:
        _CACHE.popitem(last=False)
    return prof


#: Largest batch size a profile is compiled for: far beyond any real batch, and small enough
#: that per-layer cycle and byte counts stay well inside int64 (they overflow near 1e10).
MAX_BATCH = 2**20


def _batch_sizes(batch_sizes: Iterable[int]) -> tuple[int, ...]:
    """Sorted distinct batch sizes; anything but whole numbers in ``[1, MAX_BATCH]`` is an error
    (1.5 is not silently truncated to 1)."""
    try:
        given = list(batch_sizes)
    except TypeError:
        given = None

    def whole(b: object) -> bool:
        if type(b) is int:  # the common case, without NumPy calls (cache hits stay cheap)
            return 1 <= b <= MAX_BATCH
        if isinstance(b, bool) or not isinstance(b, int | float | np.integer | np.floating):
            return False
        return bool(np.isfinite(b) and b == int(b) and 1 <= b <= MAX_BATCH)

    if not given or not all(whole(b) for b in given):
        shown = given if given is not None else batch_sizes
        raise HardwareConfigError(
            f"batch sizes must be positive integers <= {MAX_BATCH}, got {shown!r}"
        )
    return tuple(sorted({int(b) for b in given}))


def clear_profile_cache() -> None:
    """Drop every cached profile (e.g. after editing a network in place in a notebook)."""
    _CACHE.clear()
