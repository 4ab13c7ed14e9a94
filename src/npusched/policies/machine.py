"""Machine policies (``kind = "machine"``): the protocol and the :data:`MACHINE_POLICIES` registry.

A machine policy sees the whole machine (:class:`~npusched.policies.contract.MachineView`:
every resource, every running, stopping and waiting job) and answers a
:class:`~npusched.policies.contract.Schedule` (allocations, preemptions, merges, stops, timers,
rates). Registered built-ins: Planaria's spatial scheduler (``"Planaria"``, on a fission array
of subarrays) and Fluid Batching's serving policies (``"FluidB"``, ``"AdaptB"``, ``"SERIAL"``,
``"LazyBatching"``, on one NPU serving one early-exit model at batch sizes 1..8) and
HaX-CoNN's layer-group mapping (``"HaX-CoNN"``, on an SoC: one one-unit resource per
accelerator, named like the accelerators).

Machine policies have their **own registry**, beside the temporal :data:`POLICIES`: the two
kinds answer different decision types, run on different machines (a temporal policy holds the
whole of a one-resource machine) and pass different conformance suites, so every caller that
lists ``POLICIES.names()`` keeps getting temporal policies only. A run config names either
kind in ``[policy] name``: :func:`get_any_policy` looks in both, and the two registries never
share a name (:func:`check_disjoint`).

Built-ins register when :func:`import_builtin_machine_policies` imports their package.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal, Protocol, runtime_checkable

from npusched.errors import NpuschedError, UnknownNameError
from npusched.policies.base import PolicyBase
from npusched.policies.contract import JobView, MachineView, Schedule
from npusched.registry import Registry

__all__ = [
    "MACHINE_POLICIES",
    "MachinePolicy",
    "MachinePolicyBase",
    "all_policy_names",
    "check_disjoint",
    "get_any_policy",
    "import_builtin_machine_policies",
    "policy_factory",
    "policy_kind",
]


@runtime_checkable
class MachinePolicy(Protocol):
    """Hooks the engine calls on a machine policy, in this order per wake-up: ``on_complete`` /
    ``on_dispatch`` for the events at this instant, ``on_period`` if a period expired, then
    ``select`` once."""

    #: ``"machine"`` (the engine's switch between the two contracts).
    kind: str
    name: str
    preemptive: bool
    #: Seconds between periodic wake-ups while jobs wait (``None``: wake on events only).
    period_s: float | None

    def reset(self) -> None:
        """Validate the parameters and forget all per-run state (called before a run)."""
        ...

    def on_dispatch(self, job: JobView, now: float) -> None: ...

    def on_complete(self, job: JobView, now: float) -> None: ...

    def on_period(self, view: MachineView) -> None: ...

    def select(self, view: MachineView) -> Schedule: ...


class MachinePolicyBase(PolicyBase):
    """Convenience base of a machine policy: ``kind = "machine"`` and the no-op hooks;
    subclasses implement :meth:`select` (and ``validate`` / ``reset`` for their state)."""

    kind = "machine"
    name: str = "machine-base"
    preemptive: bool = True

    def select(self, view: MachineView) -> Schedule:  # pragma: no cover - abstract
        raise NotImplementedError


MACHINE_POLICIES: Registry[MachinePolicy] = Registry(
    "machine policy", entry_point_group="npusched.machine_policies"
)


def import_builtin_machine_policies() -> None:
    """Register the built-in machine policies (they register when their package is imported)."""
    import npusched.policies.batching
    import npusched.policies.mapping.policy
    import npusched.policies.spatial  # noqa: F401


def _import_all() -> None:
    import npusched.policies.temporal  # noqa: F401

    import_builtin_machine_policies()


def all_policy_names() -> list[str]:
    """Every registered policy name: temporal first, then machine policies."""
    from npusched.policies.base import POLICIES

    _import_all()
    return [*POLICIES.names(), *MACHINE_POLICIES.names()]


def check_disjoint() -> None:
    """Raise :class:`~npusched.errors.NpuschedError` if a name is registered as both a temporal
    and a machine policy (a config could not tell which one it means)."""
    from npusched.policies.base import POLICIES

    _import_all()
    both = sorted(set(POLICIES.names()) & set(MACHINE_POLICIES.names()))
    if both:
        raise NpuschedError(f"policy name {both[0]!r} is registered as temporal and machine")


def _factory(name: str) -> tuple[Literal["temporal", "machine"], Callable[..., Any]]:
    from npusched.policies.base import POLICIES

    _import_all()
    for kind, reg in (("temporal", POLICIES), ("machine", MACHINE_POLICIES)):
        try:
            return kind, reg.get(name)  # type: ignore[return-value]
        except UnknownNameError:
            continue
    raise UnknownNameError("policy", name, all_policy_names())


def policy_kind(name: str) -> Literal["temporal", "machine"]:
    """``"temporal"`` or ``"machine"`` for a registered policy name (unknown names raise
    :class:`~npusched.errors.UnknownNameError` listing both registries)."""
    return _factory(name)[0]


def policy_factory(name: str) -> Callable[..., Any]:
    """The factory registered under ``name`` in either registry."""
    return _factory(name)[1]


def get_any_policy(name: str, /, **params: Any) -> Any:
    """A temporal or machine policy by name with constructor ``params``."""
    from npusched.policies.base import POLICIES

    kind, _ = _factory(name)
    reg: Registry[Any] = POLICIES if kind == "temporal" else MACHINE_POLICIES
    return reg.create(name, **params)
