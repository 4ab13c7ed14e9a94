"""The model zoo: builders that emit each network's layer table from its architecture.

Every built-in network registers with :func:`register`, giving its reference MACs and parameter
counts and where those figures come from; ``tests/test_zoo.py`` holds every network to them (5%).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cache

from npusched.errors import NpuschedError, UnknownNameError
from npusched.models.ir import Network


@dataclass(frozen=True)
class Reference:
    """Published figures for a network: MACs per inference and parameters, with the source."""

    macs: float
    params: float
    source: str


@dataclass(frozen=True)
class ZooEntry:
    name: str
    builder: Callable[[], Network]
    reference: Reference | None
    aliases: tuple[str, ...]
    description: str


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
) -> Callable[[Callable[[], Network]], Callable[[], Network]]:
    """Decorator registering a zero-argument network builder under ``name`` (and aliases)."""

    def deco(fn: Callable[[], Network]) -> Callable[[], Network]:
        key = name.lower()
        for k in (key, *(a.lower() for a in aliases)):
            if k in _ENTRIES or k in _ALIASES:
                raise NpuschedError(f"duplicate network name {k!r}")
        ref = Reference(macs, params, source) if macs is not None and params is not None else None
        _ENTRIES[key] = ZooEntry(key, fn, ref, tuple(aliases), description)
        for a in aliases:
            _ALIASES[a.lower()] = key
        return fn

    return deco


def canonical_name(name: str) -> str:
    if not isinstance(name, str):
        raise UnknownNameError("network", name, _ENTRIES)
    key = name.lower()
    key = _ALIASES.get(key, key)
    if key not in _ENTRIES:
        # canonical names only: with the aliases the list is cut off before it ends
        raise UnknownNameError("network", name, _ENTRIES)
    return key


@cache
def _build(key: str) -> Network:
    net = _ENTRIES[key].builder()
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
    return _ENTRIES[canonical_name(name)]


def reference(name: str) -> Reference | None:
    return entry(name).reference


# Built-in networks register on import (one module per family).
from npusched.models.zoo import (  # noqa: E402,F401
    classic,
    densenet,
    detection,
    inception,
    mlperf,
    mobile,
    resnet,
    rnn,
    transformer,
)

__all__ = [
    "Reference",
    "ZooEntry",
    "canonical_name",
    "entry",
    "get_network",
    "list_networks",
    "reference",
    "register",
]
