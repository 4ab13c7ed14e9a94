"""The one policy registry: every policy name, its ``kind`` and its factory.

A policy has one of three kinds:

* ``"temporal"``: holds the whole accelerator (:class:`~npusched.policies.base.TemporalPolicy`);
* ``"machine"``: sees the whole machine (:class:`~npusched.policies.machine.MachinePolicy`);
* ``"power"``: a power-limit component (:class:`~npusched.policies.power.PowerPolicyBase`).

:data:`REGISTRY` holds all of them in one table, so a name means one policy of one kind (a
second registration under a name already taken by *any* kind raises). The familiar per-kind
registries are views of it: :data:`POLICIES` (temporal), :data:`MACHINE_POLICIES` and
:data:`POWER_POLICIES`; each behaves like a :class:`~npusched.registry.Registry` (``register``,
``get``, ``create``, ``names``, ``in``) restricted to its kind, with its own entry-point group
(``npusched.policies``, ``npusched.machine_policies``, ``npusched.power_policies``).

The built-in policies are filled in **one place**, :mod:`npusched.policies.catalog`, which the
package ``npusched.policies`` imports: importing this module (or any module of the package)
runs the package first, so the built-ins are always registered before anyone can look a name
up. This module imports no policy implementation, and no implementation imports the registry to
register itself.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Generic, Literal, TypeVar, cast, get_args

from npusched.errors import ConfigError, NpuschedError, UnknownNameError
from npusched.registry import Registry

__all__ = [
    "KINDS",
    "MACHINE_POLICIES",
    "POLICIES",
    "POWER_POLICIES",
    "REGISTRY",
    "KindRegistry",
    "PolicyEntry",
    "PolicyKind",
    "PolicyRegistry",
]

PolicyKind = Literal["temporal", "machine", "power"]
#: The kinds, in the order :meth:`PolicyRegistry.names` lists them.
KINDS: tuple[PolicyKind, ...] = get_args(PolicyKind)

T = TypeVar("T")


@dataclass(frozen=True)
class PolicyEntry:
    """One registered policy: its ``kind`` and the factory that builds it."""

    name: str
    kind: PolicyKind
    factory: Callable[..., Any]


class PolicyRegistry:
    """Name -> :class:`PolicyEntry`, one table for every kind (names are unique across kinds)."""

    def __init__(self) -> None:
        self._entries: dict[str, PolicyEntry] = {}
        self._views: dict[PolicyKind, KindRegistry[Any]] = {}

    # -- filling -------------------------------------------------------------------------------
    def load_builtins(self) -> None:
        """Nothing left to do: the package ``npusched.policies`` registered the built-ins
        (:mod:`npusched.policies.catalog`) when this module was imported. Kept so callers can
        say that they rely on them."""

    def _add(self, kind: PolicyKind, name: str, factory: Callable[..., Any]) -> None:
        old = self._entries.get(name)
        if old is not None:
            if old.kind == kind:
                raise NpuschedError(f"duplicate {self.view(kind).kind} name {name!r}")
            raise NpuschedError(f"policy name {name!r} is registered as {old.kind} and {kind}")
        self._entries[name] = PolicyEntry(name, kind, factory)

    def register(self, kind: PolicyKind, name: str, factory: Callable[..., Any]) -> None:
        """Register ``factory`` under ``name`` as a policy of ``kind`` (a taken name raises)."""
        if kind not in KINDS:
            raise ConfigError(f"policy kind {kind!r}: unknown; allowed: {', '.join(KINDS)}")
        self._add(kind, name, factory)

    def unregister(self, name: str) -> None:
        """Remove ``name`` (an unknown name raises :class:`UnknownNameError`)."""
        if name not in self._entries:
            raise UnknownNameError("policy", name, self._entries)
        del self._entries[name]

    # -- looking up ----------------------------------------------------------------------------
    def _load_entry_points(self, kinds: tuple[PolicyKind, ...]) -> None:
        for k in kinds:
            self.view(k)._load_entry_points()

    def entries(self, kind: PolicyKind | None = None) -> list[PolicyEntry]:
        """Every entry (of ``kind``), in :data:`KINDS` order, then registration order."""
        kinds = KINDS if kind is None else (kind,)
        self._load_entry_points(kinds)
        return [e for k in kinds for e in self._entries.values() if e.kind == k]

    def names(self, kind: PolicyKind | None = None) -> list[str]:
        """Every registered name (of ``kind``): temporal first, then machine, then power."""
        return [e.name for e in self.entries(kind)]

    def entry(self, name: str, kinds: tuple[PolicyKind, ...] = KINDS) -> PolicyEntry:
        """The entry registered under ``name`` among ``kinds`` (exact match first, then
        case-insensitive); raises :class:`UnknownNameError` listing those kinds' names."""
        self._load_entry_points(kinds)
        e = self._entries.get(name)
        if e is not None and e.kind in kinds:
            return e
        folded = {
            k.lower(): v for k, v in self._entries.items() if v.kind in kinds
        }  # case-insensitive fallback
        e = folded.get(name.lower())
        if e is None:
            label = self.view(kinds[0]).kind if len(kinds) == 1 else "policy"
            raise UnknownNameError(label, name, [n for k in kinds for n in self.names(k)])
        return e

    def kind_of(self, name: str) -> PolicyKind:
        """The kind of the policy registered under ``name``."""
        return self.entry(name).kind

    def create(self, name: str, /, *, kinds: tuple[PolicyKind, ...] = KINDS, **params: Any) -> Any:
        """The policy ``name`` (one of ``kinds``) built with ``params``; an unknown keyword
        raises :class:`ConfigError` naming the allowed ones."""
        e = self.entry(name, kinds)
        return self.view(e.kind).create(name, **params)

    def view(self, kind: PolicyKind) -> KindRegistry[Any]:
        """The :class:`KindRegistry` of ``kind``."""
        return self._views[kind]


class KindRegistry(Registry[T], Generic[T]):
    """The policies of one ``kind`` in a :class:`PolicyRegistry`, with the
    :class:`~npusched.registry.Registry` interface (``.kind`` is the label in messages, e.g.
    ``"machine policy"``; ``.policy_kind`` the kind, e.g. ``"machine"``)."""

    def __init__(
        self, owner: PolicyRegistry, policy_kind: PolicyKind, label: str, group: str
    ) -> None:
        super().__init__(label, entry_point_group=group)
        self.owner = owner
        self.policy_kind: PolicyKind = policy_kind
        owner._views[policy_kind] = self

    def register(self, name: str, factory: Callable[..., T] | None = None) -> Callable[..., T]:
        """Register ``factory`` under ``name`` as a policy of this kind; usable as a decorator."""

        def deco(f: Callable[..., T]) -> Callable[..., T]:
            self.owner.register(self.policy_kind, name, f)
            return f

        if factory is not None:
            return deco(factory)
        return deco  # type: ignore[return-value]

    def unregister(self, name: str) -> None:
        e = self.owner._entries.get(name)
        if e is None or e.kind != self.policy_kind:
            raise UnknownNameError(self.kind, name, self._table())
        self.owner.unregister(name)

    def _table(self) -> dict[str, Callable[..., T]]:
        return {
            n: cast("Callable[..., T]", e.factory)
            for n, e in self.owner._entries.items()
            if e.kind == self.policy_kind
        }

    def _load_entry_points(self) -> None:
        if self._loaded_entry_points or self._entry_point_group is None:
            return
        self._loaded_entry_points = True
        from npusched.registry import group_entry_points

        for ep in group_entry_points(self._entry_point_group):
            if ep.name not in self.owner._entries:
                self.owner._add(self.policy_kind, ep.name, ep.load())

    def get(self, name: str) -> Callable[..., T]:
        """The factory registered under ``name`` (raises :class:`UnknownNameError`)."""
        return cast("Callable[..., T]", self.owner.entry(name, (self.policy_kind,)).factory)

    def names(self) -> list[str]:
        self._load_entry_points()
        return list(self._table())

    def __contains__(self, name: object) -> bool:
        self._load_entry_points()
        return name in self._table()

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())


#: The one policy registry.
REGISTRY = PolicyRegistry()
#: Temporal policies (``kind = "temporal"``), e.g. ``POLICIES.create("P-PREMA")``.
POLICIES: KindRegistry[Any] = KindRegistry(REGISTRY, "temporal", "policy", "npusched.policies")
#: Machine policies (``kind = "machine"``): Planaria, Fluid Batching's, HaX-CoNN.
MACHINE_POLICIES: KindRegistry[Any] = KindRegistry(
    REGISTRY, "machine", "machine policy", "npusched.machine_policies"
)
#: Power policies (``kind = "power"``): DFS, DVFS.
POWER_POLICIES: KindRegistry[Any] = KindRegistry(
    REGISTRY, "power", "power policy", "npusched.power_policies"
)
