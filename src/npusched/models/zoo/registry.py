"""The zoo's registry: network name -> builder, with the published figures it is held to.

Every built-in network registers with :func:`register` (a decorator in its family's module),
giving its reference MACs and parameter counts and where those figures come from. This module
imports no family module; :mod:`npusched.models.zoo` imports them all.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cache

from npusched.errors import ModelError, NpuschedError, UnknownNameError
from npusched.models.ir import Network


@dataclass(frozen=True)
class Reference:
    """Published figures for a network: MACs per inference and parameters, with the source."""

    macs: float
    params: float
    source: str


@dataclass(frozen=True)
class ZooEntry:
    """A registered network. ``variant`` (optional) builds it at another size given as an
    integer after ``@`` in its name (``bert-base@128``: 128 tokens); ``variant_range`` bounds
    that integer (inclusive)."""

    name: str
    builder: Callable[[], Network]
    reference: Reference | None
    aliases: tuple[str, ...]
    description: str
    variant: Callable[[str, int], Network] | None = None
    variant_range: tuple[int, int] = (1, 1)


_ENTRIES: dict[str, ZooEntry] = {}
_ALIASES: dict[str, str] = {}


def register(
    name: str,
    *,
    macs: float | None = None,
    params: float | None = None,
    source: str = "",
    aliases: tuple[str, ...] = (),
    description: str = "",
    variant: Callable[[str, int], Network] | None = None,
    variant_range: tuple[int, int] = (1, 1),
) -> Callable[[Callable[[], Network]], Callable[[], Network]]:
    """Decorator registering a zero-argument network builder under ``name`` (and aliases).

    ``variant(name, n)``, if given, builds the network named ``name`` (``"<key>@<n>"``) at size
    ``n`` (e.g. a sequence length) for ``n`` in ``variant_range``."""

    def deco(fn: Callable[[], Network]) -> Callable[[], Network]:
        key = name.lower()
        for k in (key, *(a.lower() for a in aliases)):
            if k in _ENTRIES or k in _ALIASES:
                raise NpuschedError(f"duplicate network name {k!r}")
        ref = Reference(macs, params, source) if macs is not None and params is not None else None
        _ENTRIES[key] = ZooEntry(key, fn, ref, tuple(aliases), description, variant, variant_range)
        for a in aliases:
            _ALIASES[a.lower()] = key
        return fn

    return deco


def unregister(name: str) -> None:
    """Remove network ``name`` and its aliases (the undo of :func:`register`; used by
    :func:`npusched.registry.registered`)."""
    key = name.lower()
    if key not in _ENTRIES:
        raise UnknownNameError("network", name, _ENTRIES, limit=None)
    ent = _ENTRIES.pop(key)
    for a in ent.aliases:
        _ALIASES.pop(a.lower(), None)
    _build.cache_clear()


def canonical_name(name: str) -> str:
    """The registered name of ``name`` (an alias resolved); ``base@n`` for a size variant."""
    if not isinstance(name, str):
        raise UnknownNameError("network", name, _ENTRIES, limit=None)
    if "@" in name:
        base, _, arg = name.partition("@")
        key = canonical_name(base)
        ent = _ENTRIES[key]
        if ent.variant is None:
            raise ModelError(f"network {name!r}: {key!r} takes no '@' size")
        lo, hi = ent.variant_range
        if not (arg.isdigit() and lo <= int(arg) <= hi):
            raise ModelError(f"network {name!r}: the size after '@' must be an integer {lo}..{hi}")
        return f"{key}@{int(arg)}"
    key = name.lower()
    key = _ALIASES.get(key, key)
    if key not in _ENTRIES:
        # canonical names only (all of them; the aliases would make the line unreadable)
        raise UnknownNameError("network", name, _ENTRIES, limit=None)
    return key


@cache
def _build(key: str) -> Network:
    base, at, arg = key.partition("@")
    ent = _ENTRIES[base]
    net = ent.variant(key, int(arg)) if at and ent.variant is not None else ent.builder()
    if net.name != key:
        raise NpuschedError(f"zoo builder for {key!r} returned a network named {net.name!r}")
    return net


def get_network(name: str) -> Network:
    """The zoo network called ``name`` (or one of its aliases); built once and cached."""
    return _build(canonical_name(name))


def list_networks() -> list[str]:
    """Canonical names of all zoo networks, in registration order."""
    return list(_ENTRIES)


def entry(name: str) -> ZooEntry:
    """The registry entry of ``name`` (of its base network for a ``base@n`` variant)."""
    return _ENTRIES[canonical_name(name).partition("@")[0]]


def size_range(name: str) -> tuple[int, int] | None:
    """The sizes (inclusive) ``name`` can be built at as ``name@n`` (BERT: its sequence length
    in tokens), or ``None`` if it has no size variants (or already names one)."""
    key = canonical_name(name)
    if "@" in key:
        return None
    ent = _ENTRIES[key]
    return ent.variant_range if ent.variant is not None else None


def reference(name: str) -> Reference | None:
    """Published figures of ``name`` (``None`` for a ``base@n`` size variant)."""
    return None if "@" in canonical_name(name) else entry(name).reference
