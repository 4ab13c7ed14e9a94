"""Experiments: the run-config schema and the runner behind ``npusched run``.

The names below are imported on first use (PEP 562), so importing a submodule (a reproduction
suite's set-up, say) does not load pydantic and pandas with the package.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from npusched.experiments.config import RunConfig, load_config, parse_config
    from npusched.experiments.runner import RunOutput, run_config, run_config_file

__all__ = ["RunConfig", "RunOutput", "load_config", "parse_config", "run_config", "run_config_file"]

_HOME = {
    "RunConfig": "config",
    "load_config": "config",
    "parse_config": "config",
    "RunOutput": "runner",
    "run_config": "runner",
    "run_config_file": "runner",
}


def __getattr__(name: str) -> Any:
    mod = _HOME.get(name)
    if mod is None:
        raise AttributeError(f"module 'npusched.experiments' has no attribute {name!r}")
    return getattr(import_module(f"npusched.experiments.{mod}"), name)
