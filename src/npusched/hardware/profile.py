"""Compiled latency profiles: per-layer tables for a (network, device) over batch sizes.

A :class:`Profile` is compiled once per ``(network, device parameters, batch sizes)`` and cached.
The simulator never calls the cost model: it asks a profile for an :class:`ExecPlan` (the job's
executed layer sequence with recurrent cells unrolled) and bisects its prefix sums to find where a
job stands at any time.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np
from librt.vecs import vec

from npusched.errors import HardwareConfigError
from npusched.hardware.base import Device, FloatArray, IntArray, LayerCosts
from npusched.hardware.plan import (
    ExecPlan,
    _ro,
    recurrent_prefix,
    tile_seconds,
)
from npusched.models.ir import MAX_BATCH as _MAX_BATCH
from npusched.models.ir import Network

Axes = tuple[tuple[str, tuple[Any, ...]], ...]
"""Named plan axes beside batch, in table order: ``(("subarrays", (1, ..., 16)), ...)``."""


@dataclass(frozen=True, eq=False)
class Profile:
    """Per-layer tables of ``network`` on ``device`` for every plan variant.

    A variant is a batch size plus one value of each named axis in ``axes`` (subarray count,
    frequency, accelerator: whatever run-time choices the device offers). All 2-D arrays have
    shape ``(rows, len(network.layers))`` with one row per variant, rows in C order over
    ``(axis_0, ..., axis_k, batch)``; without axes the rows are the batch sizes. ``cum_s`` has one
    more column (prefix sums over layers, RNN cells counted once).
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
    axes: Axes = ()
    _plans: dict[tuple[Any, ...], ExecPlan] = field(default_factory=dict, repr=False)
    #: Per row: seconds of one tile of each layer, shared by every plan of the row (made once,
    #: with the row's first plan: thousands of RNN plans would otherwise each make their own
    #: during a run, and those long-lived lists pin the allocator's memory among freed jobs).
    _tile_rows: dict[int, list[float]] = field(default_factory=dict, repr=False)

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
        axes: Axes = (),
    ) -> Profile:
        """A profile from per-(variant, layer) tables; each table may be anything that
        broadcasts to ``(rows, len(network.layers))`` (a scalar, a per-layer row, the full grid),
        with ``rows`` the product of the axis lengths and the number of batch sizes.

        ``cum_s`` is derived from ``latency_s``; ``cycles`` defaults to
        ``round(latency_s * frequency_hz)``. Every array is copied and made read-only.
        """
        axes = tuple((str(n), tuple(v)) for n, v in axes)
        rows = len(batch_sizes)
        for _, values in axes:
            rows *= len(values)
        shape = (rows, len(network.layers))

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
            axes=axes,
        )

    @property
    def axis_names(self) -> tuple[str, ...]:
        """Names of the plan axes beside batch."""
        return tuple(n for n, _ in self.axes)

    def variants(self) -> list[dict[str, Any]]:
        """Every combination of axis values (without batch), in row order."""
        out: list[dict[str, Any]] = [{}]
        for name, values in self.axes:
            out = [{**d, name: v} for d in out for v in values]
        return out

    def row(self, batch: int, **variant: Any) -> int:
        """Row index of ``batch`` on ``variant`` (raises if the profile was not compiled for
        it; an axis left out takes its first value)."""
        try:
            r = self.batch_sizes.index(int(batch))
        except ValueError:
            raise HardwareConfigError(
                f"profile of {self.network.name} on {self.device_name} has no batch size {batch}; "
                f"compiled for {list(self.batch_sizes)}"
            ) from None
        if not self.axes and not variant:
            return r
        unknown = set(variant) - set(self.axis_names)
        if unknown:
            raise HardwareConfigError(
                f"profile of {self.network.name} on {self.device_name} has no plan axis "
                f"{sorted(unknown)[0]!r}; axes: {', '.join(self.axis_names) or 'none'}"
            )
        stride = len(self.batch_sizes)
        idx = r
        for name, values in reversed(self.axes):
            v = variant.get(name, values[0])
            try:
                k = values.index(v)
            except ValueError:
                raise HardwareConfigError(
                    f"profile of {self.network.name} on {self.device_name} has no {name}={v!r}; "
                    f"compiled for {list(values)}"
                ) from None
            idx += k * stride
            stride *= len(values)
        return idx

    def plan(
        self,
        batch: int = 1,
        seq_in: int | None = None,
        seq_out: int | None = None,
        **variant: Any,
    ) -> ExecPlan:
        """The executed step sequence for one request on one plan variant (cached per
        ``(batch, seq_in, seq_out, variant)`` and shared by every job of that shape)."""
        if seq_in is not None and self.axes and self.axes[0][0] == SIZE_AXIS:
            # a sized profile (compile_sized_profile): the request's length picks the row
            variant = {**variant, SIZE_AXIS: int(seq_in)}
        # Look up by the arguments as given first (the common case, no resolution needed).
        fast: tuple[Any, ...] = (batch, seq_in, seq_out, *sorted(variant.items()))
        plan = self._plans.get(fast)
        if plan is not None:
            return plan
        net = self.network
        if net.is_recurrent:
            s_in, s_out = net._resolve_seq(seq_in, seq_out)
        else:
            s_in = s_out = 1
        key: tuple[Any, ...] = (int(batch), s_in, s_out, *sorted(variant.items()))
        plan = self._plans.get(key)
        if plan is not None:
            self._plans[fast] = plan
            return plan
        r = self.row(batch, **variant)
        cum_table: vec[float] | None = None
        if net.is_recurrent:
            # One plan per sequence-length pair: thousands of them in an RNN mix, so the step
            # map takes the smallest integer type and the prefix sums are stored once, as the
            # table the look-ups search, with ``cum_s`` a read-only NumPy view of it.
            steps = net.expand(s_in, s_out)
            idx = _ro(steps, np.int16 if len(net.layers) < 2**15 else np.int32)
            cum_arr = np.empty(len(steps) + 1)
            cum_arr[0] = 0.0
            np.cumsum(self.latency_s[r, steps], out=cum_arr[1:])
            cum_table, cum = recurrent_prefix(cum_arr)
            del cum_arr
            exits: tuple[int, ...] = ()
        else:
            idx = _arange(len(net.layers))
            cum = self.cum_s[r]
            n = len(net.layers)
            exits = tuple(sorted({ex.after + 1 for ex in net.exits if ex.after + 1 < n}))
        tile_s = self._tile_rows.get(r)
        if tile_s is None:
            tile_s = self._tile_rows[r] = tile_seconds(self.latency_s[r], self.tiles[r])
        plan = ExecPlan(
            idx,
            cum,
            latency_row=self.latency_s[r],
            tiles_row=self.tiles[r],
            checkpoint_row=self.checkpoint_bytes[r],
            energy_row=self.energy_j[r],
            exits=exits,
            cum_table=cum_table,
        )
        plan._tile_s_row = tile_s
        self._plans[key] = plan
        self._plans[fast] = plan
        return plan

    def isolated_latency(
        self, batch: int = 1, seq_in: int | None = None, seq_out: int | None = None, **variant: Any
    ) -> float:
        """Seconds of uninterrupted execution of one request (its ``C_single``)."""
        return self.plan(batch, seq_in, seq_out, **variant).total_s

    def energy(
        self, batch: int = 1, seq_in: int | None = None, seq_out: int | None = None, **variant: Any
    ) -> float:
        """Joules of one request (the sum of its executed steps' energy)."""
        return self.plan(batch, seq_in, seq_out, **variant).total_energy_j


_ARANGE: dict[int, IntArray] = {}


def _arange(n: int) -> IntArray:
    """A shared read-only ``arange(n)`` (the step-to-layer map of every non-recurrent plan)."""
    a = _ARANGE.get(n)
    if a is None:
        a = _ARANGE[n] = _ro(np.arange(n, dtype=np.int64), np.int64)
    return a


class GridDevice(Protocol):
    """Optional fast path: a device that costs every batch size in one vectorised call."""

    def layer_costs_grid(self, network: Network, batch_sizes: Sequence[int]) -> LayerCosts:
        """Like ``Device.layer_costs`` with arrays of shape ``(len(batch_sizes), L)``."""
        ...




def _costs_grid(
    network: Network,
    device: Device,
    batch_sizes: tuple[int, ...],
    variant: dict[str, Any] | None = None,
) -> LayerCosts:
    """Per-(batch, layer) costs on one plan variant: one vectorised call if the device offers
    ``layer_costs_grid``, else one ``layer_costs`` call per batch size, stacked. The variant's
    axis values are passed as keywords."""
    kw = variant or {}
    grid = getattr(device, "layer_costs_grid", None)
    if grid is not None:
        out = grid(network, batch_sizes, **kw)
        assert isinstance(out, LayerCosts)
        return out
    per = [device.layer_costs(network, b, **kw) for b in batch_sizes]
    return LayerCosts(**{name: np.stack([getattr(c, name) for c in per]) for name in _COST_FIELDS})


_COST_FIELDS = ("cycles", "latency_s", "tiles", "bytes_moved", "checkpoint_bytes", "energy_j")


def _compile(
    network: Network, device: Device, batch_sizes: tuple[int, ...], axes: Axes = ()
) -> Profile:
    variants: list[dict[str, Any]] = [{}]
    for name, values in axes:
        variants = [{**d, name: v} for d in variants for v in values]
    shape = (len(batch_sizes), len(network.layers))
    parts = [_costs_grid(network, device, batch_sizes, v) for v in variants]
    for part in parts:
        for name in _COST_FIELDS:
            got = np.shape(getattr(part, name))
            if got != shape:
                raise HardwareConfigError(
                    f"device {device.name!r} returned {name} of shape {got}, expected {shape}"
                )
    costs = parts[0] if len(parts) == 1 else _stack(parts)
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
        axes=axes,
    )


def _stack(parts: list[LayerCosts]) -> LayerCosts:
    return LayerCosts(**{n: np.concatenate([getattr(c, n) for c in parts]) for n in _COST_FIELDS})


# Compiled profiles, most recently used last. Keyed by the network's identity (zoo networks are
# cached singletons; hashing a Network by value walks every layer), the device's parameter key
# and the batch sizes. Each entry holds its network, so an id cannot be reused while cached.
_CACHE: OrderedDict[tuple[int, tuple[object, ...], tuple[int, ...], Axes], Profile] = OrderedDict()
_CACHE_SIZE = 512


def compile_profile(
    network: Network,
    device: Device,
    batch_sizes: Iterable[int] = (1,),
    *,
    axes: Mapping[str, Iterable[Any]] | None = None,
    cache: bool = True,
    device_key: tuple[object, ...] | None = None,
) -> Profile:
    """Compile (or fetch from the in-process cache) the profile of ``network`` on ``device``.

    Args:
        network: the layer table.
        device: any :class:`~npusched.hardware.base.Device`; devices that also implement
            :class:`GridDevice` are costed for all batch sizes in one vectorised call.
        batch_sizes: batch sizes to tabulate (positive integers; order and repeats ignored).
        axes: plan axes beside batch and the values to tabulate, e.g. ``{"subarrays": (1, 4,
            16)}``; each value is passed to the device's cost calls as a keyword. Default: the
            device's own ``variant_axes`` (all values), or none.
        cache: look up and store the result in the in-process cache (``False``: always compile
            afresh and leave the cache untouched, e.g. to time a compile).
        device_key: ``device.cache_key()`` where the caller has it (a run compiles several
            networks on one device: the key, which validates every parameter, is made once).

    Returns:
        A :class:`Profile`; the same network object, an equal device parameter key, the same
        set of batch sizes and the same axes return the same object.
    """
    if not isinstance(network, Network):
        raise HardwareConfigError(
            f"compile_profile needs a Network (e.g. get_network(name)), got {type(network).__name__}"
        )
    bs = _batch_sizes(batch_sizes)
    ax = _axes(device, axes)
    if not cache:
        return _compile(network, device, bs, ax)
    key = (id(network), device.cache_key() if device_key is None else device_key, bs, ax)
    prof = _CACHE.get(key)
    if prof is not None and prof.network is network:
        _CACHE.move_to_end(key)
        return prof
    prof = _compile(network, device, bs, ax)
    _CACHE[key] = prof
    if len(_CACHE) > _CACHE_SIZE:
        _CACHE.popitem(last=False)
    return prof


def _axes(device: Device, axes: Mapping[str, Iterable[Any]] | None) -> Axes:
    """The plan axes to compile: ``axes`` checked against the device's ``variant_axes``."""
    offered: Mapping[str, Iterable[Any]] = getattr(device, "variant_axes", None) or {}
    if axes is None:
        return tuple((str(n), tuple(v)) for n, v in offered.items())
    out = []
    for name, values in axes.items():
        if name not in offered:
            raise HardwareConfigError(
                f"device {device.name!r} has no plan axis {name!r}; axes: "
                f"{', '.join(offered) or 'none'}"
            )
        allowed = tuple(offered[name])
        vals = tuple(values)
        bad = [v for v in vals if v not in allowed]
        if bad or not vals:
            raise HardwareConfigError(
                f"device {device.name!r}: {name}={bad[0] if bad else '(empty)'!r} is not offered; "
                f"allowed: {', '.join(map(str, allowed))}"
            )
        out.append((str(name), vals))
    return tuple(out)


#: The plan axis of a profile compiled over a network's sizes (:func:`compile_sized_profile`).
SIZE_AXIS = "size"


def compile_sized_profile(
    name: str,
    device: Device,
    batch_sizes: Iterable[int] = (1,),
    sizes: Iterable[int] = (),
    *,
    axes: Mapping[str, Iterable[Any]] | None = None,
) -> Profile:
    """One profile of zoo network ``name`` over several of its sizes (BERT: sequence lengths),
    so that a request's ``seq_in`` picks its size at run time, as an RNN's lengths do.

    Each ``name@n`` is compiled (:func:`compile_profile`) and the tables are stacked under a
    leading ``size`` plan axis; ``Profile.plan(batch, seq_in=n)`` selects size ``n``. The
    profile's network is the base network (its layer table is the same at every size).

    Raises:
        HardwareConfigError: ``name`` has no size variants, or a size is out of its range.
    """
    from npusched.models.zoo import canonical_name, get_network, size_range

    rng = size_range(name)
    if rng is None:
        raise HardwareConfigError(f"network {name!r} has no size variants (name@n)")
    lens = tuple(sorted({int(n) for n in sizes}))
    if not lens or lens[0] < rng[0] or lens[-1] > rng[1]:
        raise HardwareConfigError(
            f"network {name!r}: sizes {list(lens)} outside {rng[0]}..{rng[1]}"
        )
    key = canonical_name(name)
    base = get_network(key)
    profs = [
        compile_profile(get_network(f"{key}@{n}"), device, batch_sizes, axes=axes) for n in lens
    ]
    if any(len(p.network.layers) != len(base.layers) for p in profs):
        raise HardwareConfigError(f"network {name!r}: its sizes differ in their layers")
    p0 = profs[0]

    def stack(field_name: str) -> Any:
        return np.concatenate([getattr(p, field_name) for p in profs])

    return Profile.from_tables(
        base,
        device_name=p0.device_name,
        batch_sizes=p0.batch_sizes,
        latency_s=stack("latency_s"),
        frequency_hz=p0.frequency_hz,
        memory_bandwidth_bps=p0.memory_bandwidth_bps,
        cycles=stack("cycles"),
        tiles=stack("tiles"),
        bytes_moved=stack("bytes_moved"),
        checkpoint_bytes=stack("checkpoint_bytes"),
        energy_j=stack("energy_j"),
        axes=((SIZE_AXIS, lens), *p0.axes),
    )


#: Largest batch size a profile is compiled for (defined with the network IR, which workloads
#: may read too: :data:`npusched.models.ir.MAX_BATCH`).
MAX_BATCH = _MAX_BATCH


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
