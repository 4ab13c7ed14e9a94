"""``Clocked``: a cycle-costed device given a ``frequency_hz`` plan axis and the AB9's power form.

Why
---
DFS under a power cap (shared paper 004) needs a device whose profile has a ``frequency_hz``
axis and whose per-step power depends on the clock. The AB9 (:mod:`npusched.hardware.power`)
has one, but it is another chip (1 GHz, 25.6 GB/s LPDDR4) than the 128 x 128, 700 MHz,
358 GB/s NPU on which PREMA, Planaria and ``npusched compare`` run. ``Clocked`` adds the axis to
those devices instead, so a capped system keeps the compute and memory budget of the uncapped
ones: ``planaria-dfs`` is Planaria's 16-subarray fission array
(:class:`~npusched.hardware.fission.FissionArray`, axes ``subarrays`` x ``frequency_hz``) and
``prema-npu-dfs`` PREMA's monolithic array (:class:`~npusched.hardware.systolic.SystolicArray`,
axis ``frequency_hz``). It is the only device with both a ``subarrays`` and a ``frequency_hz``
axis, so Planaria can run under a shared cap (``policy = "Planaria"`` with ``power = {name =
"DFS", cap_w = ...}`` and ``hardware.device = "planaria-dfs"``).

Clock levels
------------
Table 5's levels (100 MHz - 1 GHz) up to the device's own clock, so the top level is the
uncapped device (700 MHz: 17 levels, 100-700 MHz); ``frequencies_hz`` overrides them. The axis
lists them highest first: a plan that names no clock runs at the device's own, so an uncapped
run (or a policy's look-up of a job's remaining time, e.g. Planaria's) sees the wrapped device. At each
level the wrapped device is costed with its ``frequency_hz`` parameter set to that level: its
compute cycles take ``1/f`` seconds and its memory phase, bytes over a bandwidth in bytes per
second, does not scale (the AB9 model's rule, Sec. 3 of paper 004).

Power (the AB9 form, Eq. 1-2 and 4, per unit allocation)
--------------------------------------------------------
``P = P_idle * u / U + E_dyn(f) * (V / 1 V)^2 / t(f)`` for a layer on ``u`` of the ``U`` units
(subarrays; ``u = U = 1`` on the monolithic array):

* ``E_dyn(f)`` is the layer's energy at clock ``f`` under the 45 nm
  :class:`~npusched.hardware.energy.EnergyModel` that the Planaria/PREMA comparison already
  uses (the fission array's own ``energy_j``, only the allocated subarrays powered; the
  monolithic array by :func:`~npusched.hardware.energy.systolic_energy_j`). Its array term counts
  every busy cycle of the powered PEs, stalls included (the PE registers shift every cycle),
  as the AB9's ``alpha*C`` counts every STC cycle: a memory-bound layer's power grows with
  ``f`` only through its compute part. The model's constants are at 1.00 V (the DFS voltage,
  Table 5); at another voltage (DVFS, ``voltage_v = "dvfs"``) the whole dynamic energy scales
  with ``V^2`` (Eq. 2; the DRAM term too, a simplification: it is a small share).
* ``P_idle`` (``idle_power_w``) is static plus constant power (Eq. 1 and 4), drawn once by the
  chip. The 45 nm model has no leakage term (its source artifact sets it to 0), so by default
  we take the AB9's ratio of idle power to full-array dynamic power (24 W / 21 W, the defaults
  of :class:`~npusched.hardware.power.AB9`) times this device's full-array PE power at its top
  clock (``pe_cycle_pj * PEs * f_max``): 13.1 W for the 128 x 128 array at 700 MHz.
  ``static_power_w`` sets it directly.

A plan's power is therefore that of the job's own units, their dynamic power plus their share
of the idle power, which is what the engine's cap split compares with the job's share of the
cap (:func:`npusched.policies.power.job_cap_w`); the resource's ``idle_power_w`` (this device's
:attr:`Clocked.idle_power_w`) accounts for the units no job computes on.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from npusched.base import Component
from npusched.errors import HardwareConfigError
from npusched.hardware.base import LayerCosts
from npusched.hardware.machines import ResourceLayout, machine_layout
from npusched.hardware.power import AB9, FREQUENCIES_HZ
from npusched.models.ir import Network

__all__ = ["IDLE_TO_PEAK_DYNAMIC", "Clocked"]

#: The AB9's idle power over its full-array dynamic power at 1 GHz, 1.00 V: (18 + 6) / 21
#: (:class:`~npusched.hardware.power.AB9` defaults; see that module for how they were chosen).
IDLE_TO_PEAK_DYNAMIC = AB9().idle_power_w / AB9().peak_dynamic_power_w

_BASES = ("planaria", "prema-npu")


class Clocked(Component):
    """A device of the registry (``planaria`` or ``prema-npu``) with a ``frequency_hz`` plan
    axis and the AB9's power form (see the module docstring).

    Args:
        device: the wrapped device's registry name (``"planaria"``, ``"prema-npu"``).
        device_params: its constructor parameters (e.g. ``{"memory_stalls": false}``); its
            ``frequency_hz`` is the top clock level.
        frequencies_hz: the clock levels in Hz (distinct, each > 0 and at most the device's
            clock, which must be one of them); ``None``: Table 5's levels up to the device's
            clock. The axis lists them highest first, so a plan that names no clock (a policy's
            own look-up, an uncapped run) is the wrapped device's own.
        voltage_v: supply voltage in V (1.00: DFS), or ``"dvfs"``: Table 5's DVFS voltage of
            each level (0.95 V at or below 500 MHz, 1.00 V above).
        static_power_w: the chip's idle (static + constant) power in W; ``None``: the AB9's
            idle-to-dynamic ratio times this device's full-array PE power at its top clock.
        name: device name (default ``"<device>-dfs"``).
    """

    def __init__(
        self,
        device: str = "planaria",
        device_params: Mapping[str, Any] | None = None,
        frequencies_hz: Sequence[float] | None = None,
        voltage_v: float | str = 1.0,
        static_power_w: float | None = None,
        name: str | None = None,
    ) -> None:
        self.device = device
        self.device_params = device_params
        self.frequencies_hz = frequencies_hz
        self.voltage_v = voltage_v
        self.static_power_w = static_power_w
        self.name = f"{device}-dfs" if name is None else name
        self._levels()

    # --- parameters -----------------------------------------------------------------------------
    def base_(self, frequency_hz: float | None = None) -> Any:
        """The wrapped device (at ``frequency_hz`` if given, else at its own clock)."""
        from npusched.hardware.devices import DEVICES

        if self.device not in _BASES:
            raise HardwareConfigError(
                f"Clocked: device must be one of {', '.join(_BASES)}, got {self.device!r}"
            )
        params = dict(self.device_params or {})
        if frequency_hz is not None:
            params["frequency_hz"] = float(frequency_hz)
        return DEVICES.create(self.device, **params)

    def _levels(self) -> tuple[float, ...]:
        top = float(self.base_().frequency_hz)
        if self.frequencies_hz is None:
            levels = tuple(f for f in FREQUENCIES_HZ if f <= top)
            levels = levels if top in levels else (*levels, top)
        else:
            try:
                levels = tuple(float(f) for f in self.frequencies_hz)
            except (TypeError, ValueError):
                levels = ()
            if (
                not levels
                or any(not (0.0 < f <= top) for f in levels)
                or len(set(levels)) != len(levels)
                or top not in levels
            ):
                raise HardwareConfigError(
                    f"Clocked: frequencies_hz must be distinct clocks in (0, {top:g}] Hz "
                    f"including the device's {top:g} Hz, got {self.frequencies_hz!r}"
                )
        if self.voltage_v != "dvfs":
            v = self.voltage_v
            if not isinstance(v, int | float) or isinstance(v, bool) or not 0.0 < float(v) < 10:
                raise HardwareConfigError(
                    f"Clocked: voltage_v must be a voltage > 0 or 'dvfs', got {v!r}"
                )
        s = self.static_power_w
        if s is not None and (
            not isinstance(s, int | float) or isinstance(s, bool) or not 0.0 <= float(s) < 1e6
        ):
            raise HardwareConfigError(
                f"Clocked: static_power_w must be a number of watts >= 0 or None, got {s!r}"
            )
        return tuple(sorted(levels, reverse=True))

    def cache_key(self) -> tuple[object, ...]:
        """Class name, the wrapped device's key and every other parameter."""
        return (
            type(self).__name__,
            self.base_().cache_key(),
            self._levels(),
            self.voltage_v,
            self.idle_power_w,
            self.name,
        )

    # --- device protocol ------------------------------------------------------------------------
    @property
    def variant_axes(self) -> dict[str, tuple[Any, ...]]:
        """The wrapped device's axes plus ``frequency_hz`` (the clock levels, Hz)."""
        own = dict(getattr(self.base_(), "variant_axes", None) or {})
        own["frequency_hz"] = self._levels()
        return own

    def machine_layout(self) -> tuple[ResourceLayout, ...]:
        """The wrapped device's machine (a clock changes no resource)."""
        return machine_layout(self.base_())

    @property
    def frequency_hz(self) -> float:
        """The top clock level in Hz (the wrapped device's clock)."""
        return float(self._levels()[0])

    @property
    def memory_bandwidth_bps(self) -> float:
        return float(self.base_().memory_bandwidth_bps)

    @property
    def checkpoint_bandwidth_bps(self) -> float:
        """Checkpoint save/restore bandwidth in bytes/s (the wrapped device's)."""
        b = self.base_()
        return float(getattr(b, "checkpoint_bandwidth_bps", b.memory_bandwidth_bps))

    @property
    def units_(self) -> int:
        """Units of the ``subarrays`` axis (16 on the fission array; 1 without the axis)."""
        subs = (getattr(self.base_(), "variant_axes", None) or {}).get("subarrays")
        return max(int(v) for v in subs) if subs else 1

    @property
    def idle_power_w(self) -> float:
        """Static + constant power of the whole chip in W (see ``static_power_w``)."""
        if self.static_power_w is not None:
            return float(self.static_power_w)
        base = self.base_()
        pe_j = _energy_model(base).pe_cycle_pj * 1e-12
        return float(IDLE_TO_PEAK_DYNAMIC * pe_j * float(base.peak_macs_per_s))

    def voltage_at(self, frequency_hz: float) -> float:
        """The supply voltage (V) at ``frequency_hz`` (Hz)."""
        if self.voltage_v == "dvfs":
            return 0.95 if frequency_hz <= 500e6 else 1.00
        return float(self.voltage_v)

    def layer_costs(
        self, network: Network, batch: int, *, frequency_hz: float | None = None, **axes: Any
    ) -> LayerCosts:
        """Per-layer costs at one clock (default the top level) and the wrapped device's axes."""
        g = self.layer_costs_grid(network, (batch,), frequency_hz=frequency_hz, **axes)
        return LayerCosts(**{k: getattr(g, k)[0] for k in _FIELDS})

    def layer_costs_grid(
        self,
        network: Network,
        batch_sizes: Sequence[int],
        *,
        frequency_hz: float | None = None,
        **axes: Any,
    ) -> LayerCosts:
        """Costs for every (batch size, layer) at ``frequency_hz`` (Hz, a level) and the wrapped
        device's axes (e.g. ``subarrays``): the wrapped device's cycles, time, tiles, bytes and
        checkpoint bytes at that clock; ``energy_j`` the AB9-form energy of the module
        docstring (the units' idle share plus the dynamic energy at the level's voltage)."""
        levels = self._levels()
        f = levels[0] if frequency_hz is None else float(frequency_hz)
        if f not in levels:
            raise HardwareConfigError(
                f"{self.name}: frequency_hz={frequency_hz!r} is not a level; allowed: "
                f"{', '.join(f'{x:g}' for x in levels)}"
            )
        base = self.base_(f)
        grid = base.layer_costs_grid(network, batch_sizes, **axes)
        if hasattr(base, "num_subarrays"):  # the fission array: its own 45 nm energy
            dyn = np.asarray(grid.energy_j, dtype=np.float64)
            share = int(axes.get("subarrays", base.num_subarrays)) / int(base.num_subarrays)
        else:  # the monolithic array: the same model, all PEs powered
            from npusched.hardware.energy import systolic_energy_j

            model = _energy_model(base)
            dyn = np.stack([systolic_energy_j(base, network, int(b), model) for b in batch_sizes])
            share = 1.0
        v = self.voltage_at(f)
        lat = np.asarray(grid.latency_s, dtype=np.float64)
        energy = self.idle_power_w * share * lat + dyn * v * v
        out = np.asarray(energy, dtype=np.float64)
        out.flags.writeable = False
        return LayerCosts(
            cycles=grid.cycles,
            latency_s=grid.latency_s,
            tiles=grid.tiles,
            bytes_moved=grid.bytes_moved,
            checkpoint_bytes=grid.checkpoint_bytes,
            energy_j=out,
        )


_FIELDS = ("cycles", "latency_s", "tiles", "bytes_moved", "checkpoint_bytes", "energy_j")


def _energy_model(base: Any) -> Any:
    from npusched.hardware.energy import EnergyModel

    em = getattr(base, "energy_model_", None)
    return em if em is not None else EnergyModel()


def _register() -> None:
    from functools import partial

    from npusched.hardware.devices import DEVICES

    DEVICES.register("clocked", Clocked)
    DEVICES.register("planaria-dfs", partial(Clocked, device="planaria"))
    DEVICES.register("prema-npu-dfs", partial(Clocked, device="prema-npu"))


_register()
