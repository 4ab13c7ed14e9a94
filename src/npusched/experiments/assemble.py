"""Assembling a run from a parsed config: its machine, its plan axes and its power policy.

:func:`machine_for`, :func:`axes_for` and :func:`power_for` take a parsed
:class:`~npusched.experiments.config.RunConfig` and the built device; each raises a one-line
:class:`~npusched.errors.ConfigError` naming the field and the allowed values.

* ``[machine]`` lists the resources (``resources = [{name, kind, capacity, units_axis, fixed,
  idle_power_w}]``, :class:`~npusched.sim.resources.Resource`). Without it the device says
  which machine it makes (:func:`npusched.hardware.machines.machine_layout`): ``planaria`` is
  one fission array of 16 subarrays whose allocation picks the ``subarrays`` axis, ``soc`` one
  one-unit resource per accelerator, any other device one NPU of one unit. A resource's
  ``idle_power_w`` defaults to the device's
  ``idle_power_w`` (AB9: static + constant power), else 0. A temporal policy needs exactly one
  resource (it holds all of it: on ``planaria``, all 16 subarrays).
* ``[hardware] axes = {axis = [values]}`` restricts the plan variants compiled (checked against
  the device's ``variant_axes``). An axis nobody chooses at run time (not a resource's units or
  fixed axis, not ``frequency_hz`` under a power policy) runs at its first value, so by default
  it is compiled only at the device's own parameter of that name when there is one (AB9 without
  a power policy: its ``frequency_hz``, 1 GHz).
* ``[power]`` (or top-level ``power = {name = "DFS", cap_w = 33}``) caps the machine's power
  with a registered power policy (``DFS``, ``DVFS``); the device needs a ``frequency_hz`` axis
  (``ab9``), DVFS needs ``hardware.params.voltage_v = "dvfs"``, and ``idle_power_w`` defaults to
  the device's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from npusched.errors import ConfigError
from npusched.hardware.machines import machine_layout

if TYPE_CHECKING:
    from npusched.experiments.config import RunConfig

__all__ = ["axes_for", "machine_for", "power_for"]


def _offered_axes(device: Any) -> dict[str, tuple[Any, ...]]:
    return {str(k): tuple(v) for k, v in (getattr(device, "variant_axes", None) or {}).items()}


def _device_idle_w(device: Any) -> float:
    idle = getattr(device, "idle_power_w", 0.0)
    return float(idle) if isinstance(idle, int | float) else 0.0


def machine_for(cfg: RunConfig, device: Any, source: str = "<config>") -> Any:
    """The :class:`~npusched.sim.resources.Machine` of ``cfg``: its ``[machine]`` table, or the
    one the device implies (see the module docstring). Checks every resource's ``units_axis``
    (a device axis offering ``1 .. capacity``) and ``fixed`` axes (offered values)."""
    from npusched.sim.resources import Machine, Resource

    offered = _offered_axes(device)
    idle = _device_idle_w(device)
    if cfg.machine is None:  # the machine the device says it makes
        return Machine(
            tuple(
                Resource(
                    r.name,
                    r.kind,
                    r.capacity,
                    units_axis=r.units_axis,
                    fixed=dict(r.fixed),
                    idle_power_w=idle if r.idle_power_w is None else float(r.idle_power_w),
                )
                for r in machine_layout(device)
            )
        )
    out = []
    for i, r in enumerate(cfg.machine.resources):
        where = f"{source}: machine.resources[{i}]"
        if r.units_axis is not None:
            values = offered.get(r.units_axis)
            if values is None:
                raise ConfigError(
                    f"{where}.units_axis: device {cfg.hardware.device!r} has no plan axis "
                    f"{r.units_axis!r}; allowed: {', '.join(offered) or '(none)'}"
                )
            missing = [u for u in range(1, r.capacity + 1) if u not in values]
            if missing:
                raise ConfigError(
                    f"{where}.capacity: {r.capacity} units need {r.units_axis} = 1..{r.capacity}, "
                    f"but the device has no {r.units_axis}={missing[0]}; allowed: "
                    f"{', '.join(map(str, values))}"
                )
        for k, v in r.fixed.items():
            if k not in offered:
                raise ConfigError(
                    f"{where}.fixed.{k}: device {cfg.hardware.device!r} has no plan axis {k!r}; "
                    f"allowed: {', '.join(offered) or '(none)'}"
                )
            if v not in offered[k]:
                raise ConfigError(
                    f"{where}.fixed.{k}: {v!r} not offered; allowed: "
                    f"{', '.join(map(str, offered[k]))}"
                )
        out.append(
            Resource(
                r.name,
                r.kind,
                r.capacity,
                units_axis=r.units_axis,
                fixed=dict(r.fixed),
                idle_power_w=idle if r.idle_power_w is None else float(r.idle_power_w),
            )
        )
    return Machine(tuple(out))


def _check_policy_machine(
    cfg: RunConfig, policy: Any, machine: Any, source: str, device: Any = None
) -> None:
    """A temporal policy needs a one-resource machine; a machine policy that names the plan
    axis its units select (``units_axis``, Planaria: ``subarrays``) needs a resource with it;
    a policy built for one SoC (``soc``) needs a device that says it is that SoC (its own
    ``soc`` attribute: the device, not this module, knows which SoC it models)."""
    kind = getattr(policy, "kind", "temporal")
    if kind == "temporal" and len(machine.resources) != 1:
        raise ConfigError(
            f"{source}: machine.resources: {cfg.policy.name} is a temporal policy and holds the "
            f"whole of a one-resource machine; this machine has {len(machine.resources)}"
        )
    soc = getattr(policy, "soc", None)
    dev_soc = getattr(device, "soc", None)
    dev_soc = dev_soc if isinstance(dev_soc, str) else None
    if kind == "machine" and soc is not None and dev_soc is not None and soc != dev_soc:
        raise ConfigError(
            f"{source}: policy.params.soc: {soc!r}, but the device is SoC {dev_soc!r}; "
            f"allowed: {dev_soc}"
        )
    want = getattr(policy, "units_axis", None)
    if kind == "machine" and want is not None:
        name = getattr(policy, "resource", None)
        if name is not None and name not in machine.names:
            raise ConfigError(
                f"{source}: policy.params.resource: no resource {name!r}; allowed: "
                f"{', '.join(machine.names)}"
            )
        res = machine.resources[machine.index(name)]
        if res.units_axis != want:
            raise ConfigError(
                f"{source}: policy.name: {cfg.policy.name} allocates units of a resource whose "
                f'units_axis is {want!r} (e.g. hardware.device = "planaria"); resource '
                f"{res.name!r} has {res.units_axis!r}"
            )


def power_for(cfg: RunConfig, device: Any, source: str = "<config>") -> Any:
    """The power policy of ``cfg.power`` (``None`` without one), with ``idle_power_w`` set to
    the device's unless the table gives it; checks the device has a ``frequency_hz`` axis and
    runs at the policy's voltages."""
    if cfg.power is None:
        return None
    from npusched.policies.power import power_policy_from_config

    pol = power_policy_from_config(cfg.power, where=f"{source}: power")
    if "cap_w" not in cfg.power:  # no silent default cap
        raise ConfigError(
            f"{source}: power.cap_w: missing required key (the machine's power cap in watts, "
            'e.g. power = { name = "DFS", cap_w = 33 })'
        )
    freqs = _offered_axes(device).get("frequency_hz")
    if not freqs:
        raise ConfigError(
            f"{source}: power: device {cfg.hardware.device!r} has no frequency_hz plan axis; "
            f'a power policy needs one (e.g. hardware.device = "ab9")'
        )
    if "idle_power_w" not in cfg.power and hasattr(device, "idle_power_w"):
        pol.set_params(idle_power_w=_device_idle_w(device))
    idle = getattr(pol, "idle_power_w", 0.0)
    cap = getattr(pol, "cap_w", None)
    if isinstance(cap, int | float) and isinstance(idle, int | float) and cap <= idle:
        raise ConfigError(
            f"{source}: power.cap_w: {cap:g} W is not above the idle power {idle:g} W of "
            f"{cfg.hardware.device!r}; allowed: > {idle:g} W"
        )
    voltage_at = getattr(device, "voltage_at", None)
    if voltage_at is not None:
        want = pol.level_voltages(freqs)
        have = tuple(float(voltage_at(f)) for f in freqs)
        if not all(abs(a - b) < 1e-12 for a, b in zip(want, have, strict=True)):
            hint = '"dvfs"' if len(set(want)) > 1 else repr(want[0])
            raise ConfigError(
                f"{source}: hardware.params.voltage_v: power policy {pol.name} runs at "
                f"{sorted(set(want))} V but the device at {sorted(set(have))} V; "
                f"allowed: {hint}"
            )
    return pol


def axes_for(
    cfg: RunConfig,
    device: Any,
    source: str = "<config>",
    *,
    machine: Any = None,
    power: Any = None,
) -> dict[str, tuple[Any, ...]] | None:
    """Plan axes to compile for ``cfg`` (``None``: the device has none).

    ``[hardware] axes`` values are checked against the device's ``variant_axes``; an axis left
    out is compiled at every offered value if something chooses it at run time (a resource's
    units or fixed axis, ``frequency_hz`` under a power policy), else at the device's own
    parameter of that name when it is offered, else at every value (the first runs).
    """
    offered = _offered_axes(device)
    if not offered:
        if cfg.hardware.axes:
            name = next(iter(cfg.hardware.axes))
            raise ConfigError(
                f"{source}: hardware.axes.{name}: device {cfg.hardware.device!r} has no plan "
                "axes; allowed: (none)"
            )
        return None
    given = dict(cfg.hardware.axes or {})
    for name, values in given.items():
        if name not in offered:
            raise ConfigError(
                f"{source}: hardware.axes.{name}: device {cfg.hardware.device!r} has no such "
                f"plan axis; allowed: {', '.join(offered)}"
            )
        bad = [v for v in values if v not in offered[name]]
        if bad:
            raise ConfigError(
                f"{source}: hardware.axes.{name}: {bad[0]!r} not offered; allowed: "
                f"{', '.join(map(str, offered[name]))}"
            )
    machine = machine_for(cfg, device, source) if machine is None else machine
    chosen: set[str] = set()
    for r in machine.resources:
        if r.units_axis is not None:
            chosen.add(r.units_axis)
        chosen.update(r.fixed)
    if power is not None:
        chosen.add("frequency_hz")
    out: dict[str, tuple[Any, ...]] = {}
    for name, offered_values in offered.items():
        if name in given:
            out[name] = tuple(dict.fromkeys(given[name]))
        elif name in chosen:
            out[name] = offered_values
        else:
            own = getattr(device, name, None)
            out[name] = (own,) if own is not None and own in offered_values else offered_values
    for r in machine.resources:
        if r.units_axis is not None:
            missing = [u for u in range(1, r.capacity + 1) if u not in out[r.units_axis]]
            if missing:
                raise ConfigError(
                    f"{source}: hardware.axes.{r.units_axis}: resource {r.name!r} allocates "
                    f"1..{r.capacity} units; {missing[0]} is missing"
                )
    return out
