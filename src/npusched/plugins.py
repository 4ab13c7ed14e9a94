"""Load a user's Python file that registers networks, policies or devices (``--plugin FILE.py``).

A plugin is a plain Python file, no packaging needed. At import it registers what it defines,
for example::

    from npusched import POLICIES
    from npusched.policies import TemporalPolicyBase

    class EDF(TemporalPolicyBase): ...

    POLICIES.register("EDF", EDF)

``npusched run CONFIG --plugin edf.py`` then accepts ``policy = { name = "EDF" }``. For a
packaged plugin use the entry-point groups instead (``npusched.policies``,
``npusched.machine_policies``, ``npusched.devices``, ``npusched.power_policies``).
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

from npusched.errors import ConfigError, NpuschedError

if TYPE_CHECKING:
    from npusched.models.ir import Network

__all__ = ["load_plugin", "load_plugins"]

_LOADED: dict[Path, ModuleType] = {}


def load_plugin(path: str | os.PathLike[str]) -> ModuleType:
    """Import the Python file ``path`` as a module (once per process and file: loading the same
    file again returns the module already loaded, so its registrations do not clash).

    Raises:
        ConfigError: the file is missing, is not a ``.py`` file, or raises on import (the
            message names the file and the exception; ``--debug`` shows the traceback).
    """
    p = Path(path)
    if p.suffix != ".py":
        raise ConfigError(f"{p}: --plugin: not a Python file; allowed: a FILE.py")
    if not p.is_file():
        raise ConfigError(f"{p}: --plugin: no such file")
    key = p.resolve()
    if key in _LOADED:
        return _LOADED[key]
    digest = hashlib.sha1(str(key).encode()).hexdigest()[:10]
    name = f"npusched_plugin_{p.stem}_{digest}"
    spec = importlib.util.spec_from_file_location(name, key)
    if spec is None or spec.loader is None:  # pragma: no cover - a .py file always has one
        raise ConfigError(f"{p}: --plugin: cannot be imported")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except NpuschedError as e:
        sys.modules.pop(name, None)
        raise ConfigError(f"{p}: --plugin: {e}") from e
    except Exception as e:
        sys.modules.pop(name, None)
        raise ConfigError(f"{p}: --plugin: {type(e).__name__}: {e}") from e
    _LOADED[key] = module
    return module


def load_plugins(paths: list[Path] | None) -> None:
    """:func:`load_plugin` for each of ``paths`` in order (``None``: nothing)."""
    for p in paths or ():
        load_plugin(p)


@contextmanager
def registered(
    *,
    networks: Iterable[Network] = (),
    policies: Mapping[str, Callable[..., Any]] | None = None,
    machine_policies: Mapping[str, Callable[..., Any]] | None = None,
    devices: Mapping[str, Callable[..., Any]] | None = None,
) -> Iterator[None]:
    """Register user networks, policies and devices for the duration of a ``with`` block.

    Inside the block the names behave like built-ins (``get_network``, ``POLICIES.create``, run
    configs, ``npusched.run_config``); on leaving it (normally or by an exception) every name
    registered here is removed again, so the same block can run twice in one session (a
    notebook cell, a test) without ``duplicate ... name`` errors. A name that is already
    registered raises :class:`~npusched.errors.NpuschedError` and registers nothing.

    Args:
        networks: :class:`~npusched.models.ir.Network` objects, registered under their names.
        policies: temporal policy name -> factory (usually the class).
        machine_policies: machine policy name -> factory.
        devices: device name -> factory.
    """
    from npusched.hardware import DEVICES
    from npusched.models import zoo
    from npusched.policies.registry import MACHINE_POLICIES, POLICIES, REGISTRY

    REGISTRY.load_builtins()  # built-ins first: a clash shows here, not later
    nets = list(networks)
    undo: list[Callable[[], None]] = []
    try:
        for net in nets:
            if net.name != net.name.lower():
                raise ConfigError(
                    f"network {net.name!r}: zoo names are lower case; build it as "
                    f"{net.name.lower()!r}"
                )
            zoo.register(net.name)(_constant(net))
            undo.append(partial(zoo.unregister, net.name))
        for reg, table in (
            (POLICIES, policies),
            (MACHINE_POLICIES, machine_policies),
            (DEVICES, devices),
        ):
            for name, factory in (table or {}).items():
                reg.register(name, factory)
                undo.append(partial(reg.unregister, name))
        yield
    finally:
        for fn in reversed(undo):
            fn()


def _constant(net: Network) -> Callable[[], Network]:
    def build() -> Network:
        return net

    return build
