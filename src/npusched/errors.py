"""Typed errors. The CLI turns any :class:`NpuschedError` into one line on stderr, exit code 2."""

from __future__ import annotations

from collections.abc import Iterable


class NpuschedError(Exception):
    """Base class of every error npusched raises on bad input."""


class UnknownNameError(NpuschedError, KeyError):
    """A name (network, device, policy, ...) is not registered."""

    def __init__(
        self, kind: str, name: str, allowed: Iterable[str], *, limit: int | None = 40
    ) -> None:
        """``limit``: how many allowed names the message lists (``None``: all of them)."""
        allowed = sorted(allowed)
        n = len(allowed) if limit is None else limit
        shown = ", ".join(allowed[:n]) + (", ..." if len(allowed) > n else "")
        super().__init__(f"unknown {kind} {name!r}; allowed: {shown}")
        self.kind, self.name, self.allowed = kind, name, allowed

    def __str__(self) -> str:  # KeyError would add quotes
        return str(self.args[0])


class ModelError(NpuschedError):
    """A network definition or an imported model is invalid or unsupported."""


class HardwareConfigError(NpuschedError, ValueError):
    """A hardware parameter is out of range."""


class ConfigError(NpuschedError, ValueError):
    """A run configuration file is invalid."""


class SimulationError(NpuschedError, RuntimeError):
    """The simulator reached an inconsistent state (a bug or an invalid policy decision)."""


class ParameterError(ConfigError):
    """A component's constructor parameter has a value it does not accept.

    ``param`` names the parameter, so a config loader can point at ``<table>.params.<param>``.
    """

    def __init__(self, owner: str, param: str, value: object, allowed: str) -> None:
        super().__init__(f"{owner}: {param}={value!r}; allowed: {allowed}")
        self.owner, self.param, self.value, self.allowed = owner, param, value, allowed
