"""Machine policies (``kind = "machine"``): the protocol and the :data:`MACHINE_POLICIES` registry.

A machine policy sees the whole machine (:class:`~npusched.policies.contract.MachineView`:
every resource, every running, stopping and waiting job) and answers a
:class:`~npusched.policies.contract.Schedule` (allocations, preemptions, merges, stops, timers,
rates). Registered built-ins: Planaria's spatial scheduler (``"Planaria"``, on a fission array
of subarrays) and Fluid Batching's serving policies (``"FluidB"``, ``"AdaptB"``, ``"SERIAL"``,
``"LazyBatching"``, on one NPU serving one early-exit model at batch sizes 1..8) and
HaX-CoNN's layer-group mapping (``"HaX-CoNN"``, on an SoC: one one-unit resource per
accelerator, named like the accelerators).

Machine policies are the ``machine`` kind of the one policy registry
(:data:`npusched.policies.registry.REGISTRY`); :data:`MACHINE_POLICIES` is its view of that
kind, beside the temporal :data:`POLICIES`: the two kinds answer different decision types, run
on different machines (a temporal policy holds the whole of a one-resource machine) and pass
different conformance suites, so every caller that lists ``POLICIES.names()`` keeps getting
temporal policies only. A run config names either kind in ``[policy] name``:
:func:`get_any_policy` looks in both, and one registry never holds a name twice.

Built-ins are registered by :mod:`npusched.policies.catalog` when the package is imported.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import fields as _dataclass_fields
from typing import Any, Literal, Protocol, runtime_checkable

from npusched.errors import NpuschedError
from npusched.policies.base import PolicyBase
from npusched.policies.contract import NOTHING, JobView, MachineView, Schedule
from npusched.policies.registry import MACHINE_POLICIES, REGISTRY

_SCHEDULE_FIELDS = (
    "assign", "preempt", "mechanism", "until_step", "merge", "timers", "rates"
)
#: ``Schedule`` is a plain frozen dataclass of these fields: :func:`fast_schedule` may fill
#: its ``__dict__`` directly (else it calls the constructor).
_FAST_SCHEDULE = (
    tuple(f.name for f in _dataclass_fields(Schedule)) == _SCHEDULE_FIELDS
    and "__slots__" not in Schedule.__dict__
    and "__post_init__" not in Schedule.__dict__
)
_NOTHING_FIELDS = {f: getattr(NOTHING, f) for f in _SCHEDULE_FIELDS}


def fast_schedule(**changes: Any) -> Schedule:
    """A :class:`Schedule` of ``changes`` (field name -> value, the rest as in ``NOTHING``)
    built without the frozen dataclass's per-field ``object.__setattr__`` (a machine policy's
    hot path: one per decision). Equal to ``Schedule(**changes)``; a field left out shares
    ``NOTHING``'s empty value (the engine only reads a schedule)."""
    if not _FAST_SCHEDULE:  # pragma: no cover - only if Schedule changes shape
        return Schedule(**changes)
    sch = object.__new__(Schedule)
    d = sch.__dict__
    d.update(_NOTHING_FIELDS, **changes)
    return sch


def assign_schedule(
    assign: Any, until_step: Any, timers: Any, rates: Any
) -> Schedule:
    """``fast_schedule(assign=..., until_step=..., timers=..., rates=...)`` without the keyword
    arguments (HaX-CoNN's decision, one per wake-up): the same :class:`Schedule`."""
    if not _FAST_SCHEDULE:  # pragma: no cover - only if Schedule changes shape
        return Schedule(assign=assign, until_step=until_step, timers=timers, rates=rates)
    sch = object.__new__(Schedule)
    d = sch.__dict__
    d.update(_NOTHING_FIELDS)
    d["assign"] = assign
    d["until_step"] = until_step
    d["timers"] = timers
    d["rates"] = rates
    return sch


__all__ = [
    "MACHINE_POLICIES",
    "MachinePolicy",
    "MachinePolicyBase",
    "all_policy_names",
    "assign_schedule",
    "check_disjoint",
    "fast_schedule",
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


def import_builtin_machine_policies() -> None:
    """Kept for callers of the old API: the built-ins are registered when the package
    ``npusched.policies`` is imported (it was, to import this module)."""
    REGISTRY.load_builtins()


def all_policy_names() -> list[str]:
    """Every registered temporal or machine policy name: temporal first, then machine."""
    return [*REGISTRY.names("temporal"), *REGISTRY.names("machine")]


def check_disjoint() -> None:
    """Raise :class:`~npusched.errors.NpuschedError` if a name is registered as both a temporal
    and a machine policy (the one registry refuses such a registration; this re-checks the
    entry points too)."""
    both = sorted(set(REGISTRY.names("temporal")) & set(REGISTRY.names("machine")))
    if both:
        raise NpuschedError(f"policy name {both[0]!r} is registered as temporal and machine")


_RUNNABLE: tuple[Literal["temporal", "machine"], ...] = ("temporal", "machine")


def policy_kind(name: str) -> Literal["temporal", "machine"]:
    """``"temporal"`` or ``"machine"`` for a registered policy name (unknown names raise
    :class:`~npusched.errors.UnknownNameError` listing both kinds)."""
    return REGISTRY.entry(name, _RUNNABLE).kind  # type: ignore[return-value]


def policy_factory(name: str) -> Callable[..., Any]:
    """The factory registered under ``name`` as a temporal or machine policy."""
    return REGISTRY.entry(name, _RUNNABLE).factory


def get_any_policy(name: str, /, **params: Any) -> Any:
    """A temporal or machine policy by name with constructor ``params``."""
    return REGISTRY.create(name, kinds=_RUNNABLE, **params)
