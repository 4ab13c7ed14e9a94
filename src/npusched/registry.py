"""Strict name -> factory registries (a duplicate name is an error; unknown names list the allowed ones)."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable, Iterator
from functools import cache, lru_cache
from importlib.metadata import EntryPoints, entry_points
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from npusched.errors import ConfigError, NpuschedError, UnknownNameError

if TYPE_CHECKING:
    pass

T = TypeVar("T")


@cache
def _installed_entry_points() -> Any:
    """Every installed distribution's entry points, read once per process (one read scans
    every distribution's metadata: about 0.07 s, which each registry and each policy kind used
    to pay again on its first look-up)."""
    return entry_points()


def group_entry_points(group: str) -> EntryPoints:
    """The installed entry points of ``group`` (``importlib.metadata.entry_points(group=...)``
    from the one read of :func:`_installed_entry_points`)."""
    eps: EntryPoints = _installed_entry_points().select(group=group)
    return eps


@lru_cache(maxsize=256)
def _keywords(factory: Callable[..., object]) -> tuple[str, ...] | None:
    """The keyword names ``factory`` takes, read from its signature once per factory (a
    config's run creates its device and policy through a registry: ``inspect.signature`` of a
    class is about 40 us, paid twice per run); ``None`` if it takes ``**kwargs`` or has no
    signature."""
    try:
        params = inspect.signature(factory).parameters.values()
    except (TypeError, ValueError):  # pragma: no cover - builtins without a signature
        return None
    if any(p.kind is p.VAR_KEYWORD for p in params):
        return None
    return tuple(p.name for p in params if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY))


def unknown_keyword(
    factory: Callable[..., object], keywords: Iterable[str]
) -> tuple[str, list[str]] | None:
    """The first of ``keywords`` that ``factory`` does not take, with the keyword names it does
    take; ``None`` if it takes them all (or takes ``**kwargs``, or has no signature)."""
    try:
        names = _keywords(factory)
    except TypeError:  # an unhashable factory: its signature read every time
        names = _keywords.__wrapped__(factory)
    if names is None:
        return None
    bad = next((k for k in keywords if k not in names), None)
    return None if bad is None else (bad, list(names))


class Registry(Generic[T]):
    """Maps names to factories.

    Built-ins register at import time of their package; users add their own with
    :meth:`register` or through the entry-point group ``entry_point_group``.
    """

    def __init__(self, kind: str, entry_point_group: str | None = None) -> None:
        self.kind = kind
        self._entry_point_group = entry_point_group
        self._factories: dict[str, Callable[..., T]] = {}
        self._loaded_entry_points = False

    def register(self, name: str, factory: Callable[..., T] | None = None) -> Callable[..., T]:
        """Register ``factory`` under ``name``; usable as a decorator. Duplicates raise."""

        def deco(f: Callable[..., T]) -> Callable[..., T]:
            key = name
            if key in self._factories:
                raise NpuschedError(f"duplicate {self.kind} name {name!r}")
            self._factories[key] = f
            return f

        if factory is not None:
            return deco(factory)
        return deco  # type: ignore[return-value]

    def unregister(self, name: str) -> None:
        """Remove ``name`` (exactly as registered); an unknown name raises
        :class:`UnknownNameError`. Used by :func:`registered` to undo a scoped registration."""
        if name not in self._factories:
            raise UnknownNameError(self.kind, name, self._factories)
        del self._factories[name]

    def _load_entry_points(self) -> None:
        if self._loaded_entry_points or self._entry_point_group is None:
            return
        self._loaded_entry_points = True
        for ep in group_entry_points(self._entry_point_group):
            if ep.name not in self._factories:
                self._factories[ep.name] = ep.load()

    def get(self, name: str) -> Callable[..., T]:
        """The factory registered under ``name`` (raises :class:`UnknownNameError`)."""
        self._load_entry_points()
        f = self._factories.get(name)
        if f is None:  # names are matched case-insensitively as a fallback
            folded = {k.lower(): v for k, v in self._factories.items()}
            f = folded.get(name.lower())
        if f is None:
            raise UnknownNameError(self.kind, name, self._factories)
        return f

    def create(self, name: str, /, **kwargs: object) -> T:
        """``get(name)(**kwargs)``; a keyword the factory does not take raises
        :class:`~npusched.errors.ConfigError` naming the allowed ones (not a bare TypeError)."""
        factory = self.get(name)
        bad = unknown_keyword(factory, kwargs)
        if bad is not None:
            key, allowed = bad
            raise ConfigError(
                f"{self.kind} {name!r}: unknown parameter {key!r}; "
                f"allowed: {', '.join(allowed) or '(none)'}"
            )
        return factory(**kwargs)

    def names(self) -> list[str]:
        self._load_entry_points()
        return list(self._factories)

    def __contains__(self, name: object) -> bool:
        self._load_entry_points()
        return name in self._factories

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())
