"""Which machine a device makes: its resources, as plain hardware data.

A device that is more than one whole NPU says so with a ``machine_layout()`` method returning
:class:`ResourceLayout` rows: the fission array (:class:`~npusched.hardware.fission.FissionArray`)
is one resource of ``num_subarrays`` units whose allocation picks the ``subarrays`` plan axis; an
SoC (:class:`~npusched.hardware.soc.SocDevice`) is one one-unit resource per accelerator, named
like it and fixing the ``accelerator`` axis; a clocked wrapper makes its wrapped device's
machine. Any other device is one NPU of one unit. The simulator's
:class:`~npusched.sim.resources.Machine` is built from these rows by
:func:`npusched.experiments.assemble.machine_for` (hardware knows nothing of the engine).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["ResourceLayout", "machine_layout"]


@dataclass(frozen=True)
class ResourceLayout:
    """One resource of the machine a device makes.

    Attributes:
        name: unique within the machine (``"npu"``, ``"array"``, ``"GPU"``).
        kind: free text naming the resource kind (``"npu"``, ``"fission-array"``).
        capacity: units a job can be allocated (>= 1).
        units_axis: the plan axis set to the allocated units (``"subarrays"``), or ``None``.
        fixed: plan axes every job on this resource runs with (``{"accelerator": "DLA"}``).
        idle_power_w: watts drawn while idle; ``None``: the device's ``idle_power_w`` (else 0).
    """

    name: str
    kind: str = "npu"
    capacity: int = 1
    units_axis: str | None = None
    fixed: Mapping[str, Any] = field(default_factory=dict)
    idle_power_w: float | None = None


def machine_layout(device: Any) -> tuple[ResourceLayout, ...]:
    """The resources ``device`` makes: its own ``machine_layout()`` if it has one, else one
    NPU of one unit."""
    own = getattr(device, "machine_layout", None)
    if callable(own):
        return tuple(own())
    return (ResourceLayout("npu"),)
