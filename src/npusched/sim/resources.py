"""Machines: named resources with a capacity in units, and how units map to plan variants.

A machine is what the policies share. PREMA's NPU is one resource of one unit; Planaria's array is
one resource of 16 units (subarrays) whose allocation picks the ``subarrays`` plan axis; an SoC is
several one-unit resources (a GPU and a DLA) each fixing the ``accelerator`` axis.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from npusched.errors import ConfigError


@dataclass(frozen=True)
class Resource:
    """One resource of a machine.

    Attributes:
        name: unique within the machine (e.g. ``"npu"``, ``"array"``, ``"gpu"``).
        kind: free text naming the resource kind (``"npu"``, ``"fission-array"``, ``"gpu"``).
        capacity: units a job can be allocated (>= 1).
        units_axis: the profile's plan axis set to the allocated units (``"subarrays"``), or
            ``None`` if the unit count does not change the plan.
        fixed: plan axes every job on this resource runs with, e.g. ``{"accelerator": "dla"}``.
        idle_power_w: watts the resource draws when no job runs on it (energy accounting).
    """

    name: str
    kind: str = "npu"
    capacity: int = 1
    units_axis: str | None = None
    fixed: Mapping[str, Any] = field(default_factory=dict)
    idle_power_w: float = 0.0

    def __post_init__(self) -> None:
        if not self.name:
            raise ConfigError("resource name must be a non-empty string")
        if (
            not isinstance(self.capacity, int)
            or isinstance(self.capacity, bool)
            or self.capacity < 1
        ):
            raise ConfigError(
                f"resource {self.name!r}: capacity={self.capacity!r}; must be an integer >= 1"
            )
        if not self.idle_power_w >= 0.0:
            raise ConfigError(
                f"resource {self.name!r}: idle_power_w={self.idle_power_w!r}; must be >= 0"
            )

    def variant(self, units: int) -> dict[str, Any]:
        """The plan axes a job holding ``units`` of this resource runs on."""
        out = dict(self.fixed)
        if self.units_axis is not None:
            out[self.units_axis] = units
        return out


@dataclass(frozen=True)
class Machine:
    """An ordered set of resources; the first is the default of an allocation."""

    resources: tuple[Resource, ...]

    def __post_init__(self) -> None:
        if not self.resources:
            raise ConfigError("a machine needs at least one resource")
        names = [r.name for r in self.resources]
        dup = {n for n in names if names.count(n) > 1}
        if dup:
            raise ConfigError(f"machine: resource name {sorted(dup)[0]!r} appears twice")

    @classmethod
    def of(cls, *resources: Resource) -> Machine:
        return cls(tuple(resources))

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(r.name for r in self.resources)

    def index(self, name: str | None) -> int:
        """Position of resource ``name`` (``None``: the first)."""
        if name is None:
            return 0
        for i, r in enumerate(self.resources):
            if r.name == name:
                return i
        raise ConfigError(f"machine has no resource {name!r}; resources: {', '.join(self.names)}")


def single_npu(name: str = "npu") -> Machine:
    """One accelerator of one unit (PREMA's NPU): the default machine."""
    return Machine((Resource(name),))


def fission_array(subarrays: int = 16, name: str = "array") -> Machine:
    """One array of ``subarrays`` units whose allocation selects the ``subarrays`` plan axis
    (Planaria's 16 subarrays of 32x32)."""
    return Machine((Resource(name, "fission-array", subarrays, units_axis="subarrays"),))


def soc(accelerators: Sequence[str] = ("gpu", "dla"), axis: str = "accelerator") -> Machine:
    """One one-unit resource per accelerator, each fixing the ``accelerator`` plan axis."""
    return Machine(tuple(Resource(a, a, 1, fixed={axis: a}) for a in accelerators))
