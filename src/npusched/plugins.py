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
from pathlib import Path
from types import ModuleType

from npusched.errors import ConfigError, NpuschedError

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
