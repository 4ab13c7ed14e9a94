"""npusched: simulate and schedule multi-tenant DNN inference on NPUs.

The names a script needs are importable from here::

    from npusched import Simulator, POLICIES, get_network, NetBuilder, poisson_workload

They load on first use (module ``__getattr__``), so ``import npusched`` stays fast and the CLI
pays only for what a command touches. See ``docs/api.md``.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from npusched.native import install as _install_native

# The compiled core's import hook (NPUSCHED_PURE=1, the stale-build guard): npusched/native.py.
_install_native()

#: public name -> module that defines it (imported on first access)
_LAZY: dict[str, str] = {
    "Simulator": "npusched.sim.engine",
    "SimResult": "npusched.sim.engine",
    "Request": "npusched.workloads.request",
    "Machine": "npusched.sim.resources",
    "Resource": "npusched.sim.resources",
    "single_npu": "npusched.sim.resources",
    "fission_array": "npusched.sim.resources",
    "POLICIES": "npusched.policies",
    "MACHINE_POLICIES": "npusched.policies.registry",
    "DEVICES": "npusched.hardware",
    "get_device": "npusched.hardware",
    "compile_profile": "npusched.hardware",
    "get_network": "npusched.models",
    "list_networks": "npusched.models",
    "NetBuilder": "npusched.models",
    "Network": "npusched.models",
    "poisson_workload": "npusched.workloads",
    "prema_workload": "npusched.workloads",
    "summarize": "npusched.metrics",
    "run_config": "npusched.experiments.runner",
    "load_config": "npusched.experiments.config",
    "registered": "npusched.plugins",
    "load_plugin": "npusched.plugins",
}

__all__ = [
    "DEVICES",
    "MACHINE_POLICIES",
    "POLICIES",
    "Machine",
    "NetBuilder",
    "Network",
    "Request",
    "Resource",
    "SimResult",
    "Simulator",
    "__version__",
    "compile_profile",
    "fission_array",
    "get_device",
    "get_network",
    "list_networks",
    "load_config",
    "load_plugin",
    "poisson_workload",
    "prema_workload",
    "registered",
    "run_config",
    "single_npu",
    "summarize",
]


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("npusched")
    except PackageNotFoundError:  # pragma: no cover - running from a source tree
        return "0.1.0"


def __getattr__(name: str) -> Any:
    if name == "__version__":  # read from the installed metadata on first use (slow import)
        value = globals()["__version__"] = _version()
        return value
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'npusched' has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value  # later look-ups skip this function
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY) | {"__version__"})


if TYPE_CHECKING:  # for type checkers and IDEs; nothing is imported at run time
    __version__: str
    from npusched.experiments.config import load_config
    from npusched.experiments.runner import run_config
    from npusched.hardware import DEVICES, compile_profile, get_device
    from npusched.metrics import summarize
    from npusched.models import NetBuilder, Network, get_network, list_networks
    from npusched.plugins import load_plugin, registered
    from npusched.policies import POLICIES
    from npusched.policies.registry import MACHINE_POLICIES
    from npusched.sim.engine import SimResult, Simulator
    from npusched.sim.resources import Machine, Resource, fission_array, single_npu
    from npusched.workloads import poisson_workload, prema_workload
    from npusched.workloads.request import Request
