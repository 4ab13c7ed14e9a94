"""The compiled core: which modules run as mypyc-compiled C extensions, and the switches.

The modules in :data:`COMPILED_MODULES` are compiled by mypyc from their own Python source when
the package is built with a C compiler (``setup.py`` reads the list from this file); their
results equal the pure modules' to the last bit. At run time:

* ``NPUSCHED_PURE=1`` (any value but empty or ``0``) imports the pure ``.py`` of every module
  in the list, extensions or not;
* a **stale** build (an editable install whose ``.py`` was edited after the build: the SHA-256
  of each source recorded at build time in ``_native_build.json`` no longer matches, or there is
  no record) runs every module pure and warns once (:class:`StaleExtensionWarning`), naming the
  rebuild command, so an edit never silently does nothing;
* :func:`compiled` lists the modules that run compiled (``npusched --version`` and
  ``npusched bench`` report it).

All modules of the list are one mypyc group (compiled code calls its group's functions
directly), so the choice is all or nothing: one stale source makes every module pure.

The import hook (:class:`_Finder`) is installed by ``import npusched``; for any other module it
costs one set look-up. See docs/engine.md, "The compiled core (eleventh round)".
"""

from __future__ import annotations

import os
import sys
from importlib.machinery import EXTENSION_SUFFIXES, SourceFileLoader
from importlib.util import module_from_spec, spec_from_file_location
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from collections.abc import Sequence
    from importlib.machinery import ModuleSpec
    from types import ModuleType

#: The modules compiled by mypyc when the build can (``setup.py`` reads this tuple literally:
#: keep it a tuple of string literals).
COMPILED_MODULES: Final = (
    # Algorithm 2's token table (the engine's for PREMA / TOKEN) and the bench's bare loop.
    "npusched.policies.temporal.levels",
    "npusched.bench.bare_loop",
    # The engine's loop (eleventh round; the one loop since the twenty-eighth), its job and
    # event records, the resources.
    "npusched.sim.engine",
    "npusched.sim.job",
    "npusched.sim.events",
    "npusched.sim.resources",
    "npusched.sim.common",
    # The clock / voltage levels between jobs under a power policy (fifteenth round).
    "npusched.sim.levels",
    # The preemption mechanisms (start's restore, segment close, CHECKPOINT's stop, the save,
    # KILL), written once (twenty-first round).
    "npusched.sim.mechanisms",
    # The writer of the per-request result columns (twenty-third round).
    "npusched.sim.records",
    # The typed heaps (twenty-seventh round): the declared orders' ready queue, stale times.
    "npusched.sim.heaps",
    # The families' cores (twelfth round): P-RRB's hooks (under the interpreted public
    # classes), Fluid Batching's tables and the power schedules (DFS, DVFS).
    "npusched.policies.temporal.rrb_core",
    "npusched.policies.batching.fluidb",
    "npusched.policies.power.schedule",
    # The execution plan's look-ups, called at every event (twelfth round).
    "npusched.hardware.plan",
    # The machine policies' per-decision code (thirteenth round), each under its interpreted
    # public class: the batching policies (FluidB's decision), Planaria (its decision and the
    # small-queue Algorithm 1), HaX-CoNN (its per-wake decision) and DFS / DVFS (the switch
    # cost at every start); the schedules they build.
    "npusched.policies.machine_core",
    "npusched.policies.batching.core",
    "npusched.policies.spatial.planaria_core",
    "npusched.policies.mapping.haxconn_core",
    "npusched.policies.power.core",
    # Algorithm 2's hooks on the token table (fourteenth round), under the interpreted token
    # policies: what P-PREMA / P-TOKEN do at a wake where the engine keeps no table of its own.
    "npusched.policies.temporal.prema_core",
    # The contract's native classes (eighteenth round): the engine's job as policies read it.
    "npusched.policies.native_contract",
)

#: The build record ``setup.py`` writes next to this file: ``{"sources": {module: sha256}}``.
BUILD_RECORD: Final = "_native_build.json"

#: The command that rebuilds the extensions in a source checkout.
REBUILD: Final = "python setup.py build_ext --inplace (or pip install -e . again)"

_PKG: Final = os.path.dirname(os.path.abspath(__file__))
_NAMES: Final = frozenset(COMPILED_MODULES)


class StaleExtensionWarning(UserWarning):
    """The compiled extensions are older than their source; the pure modules run instead."""


def pure_requested() -> bool:
    """``NPUSCHED_PURE`` is set to something other than empty or ``0``."""
    return os.environ.get("NPUSCHED_PURE", "") not in ("", "0")


def source_path(module: str, pkg_dir: str = _PKG) -> str:
    """The ``.py`` of ``module`` (a name in :data:`COMPILED_MODULES`) under ``pkg_dir``."""
    return os.path.join(pkg_dir, *module.split(".")[1:]) + ".py"


def extension_path(module: str, pkg_dir: str = _PKG) -> str | None:
    """The C extension of ``module`` next to its source, or ``None`` if there is none."""
    stem = source_path(module, pkg_dir)[:-3]
    for suffix in EXTENSION_SUFFIXES:
        if os.path.isfile(stem + suffix):
            return stem + suffix
    return None


def source_digest(path: str) -> str:
    """SHA-256 (hex) of a file's bytes."""
    import hashlib

    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def build_state(
    pkg_dir: str = _PKG, modules: Sequence[str] = COMPILED_MODULES
) -> tuple[list[str], list[str]]:
    """``(built, stale)``: the modules with an extension on disk, and those of them whose
    source no longer matches the build record (all of them if there is no readable record)."""
    import json  # (here: ``import npusched`` stays cheap)

    built = [m for m in modules if extension_path(m, pkg_dir) is not None]
    if not built:
        return [], []
    try:
        with open(os.path.join(pkg_dir, BUILD_RECORD), encoding="utf-8") as f:
            record = json.load(f)["sources"]
    except (OSError, ValueError, KeyError, TypeError):
        return built, list(built)
    stale = [
        m for m in built if record.get(m) != source_digest(source_path(m, pkg_dir))
    ]
    return built, stale


_state: tuple[list[str], list[str]] | None = None
_warned = False


def _current() -> tuple[list[str], list[str]]:
    global _state
    if _state is None:
        _state = build_state()
    return _state


def _runs_pure() -> bool:
    """Whether the listed modules import from their ``.py`` (switch set, or a stale build)."""
    global _warned
    if pure_requested():
        return True
    stale = _current()[1]
    if stale:
        if not _warned:
            _warned = True
            import warnings

            warnings.warn(
                f"npusched: compiled modules older than their source ({', '.join(stale)}); "
                f"running pure Python. Rebuild: {REBUILD}",
                StaleExtensionWarning,
                stacklevel=3,
            )
        return True
    return False


def compiled() -> list[str]:
    """The modules of :data:`COMPILED_MODULES` that run compiled in this process (those already
    imported as they were imported; the others as they would be)."""
    out = []
    for m in COMPILED_MODULES:
        mod = sys.modules.get(m)
        if mod is not None:
            if str(getattr(mod, "__file__", "")).endswith(tuple(EXTENSION_SUFFIXES)):
                out.append(m)
        elif not _runs_pure() and extension_path(m) is not None:
            out.append(m)
    return out


def pure_module(module: str) -> ModuleType:
    """A fresh pure-Python copy of ``module`` (from its ``.py``, under the name
    ``module + "_pure"``, not entered in ``sys.modules``): the interpreted reference beside the
    compiled one (the bench's bare loop)."""
    spec = spec_from_file_location(module + "_pure", source_path(module))
    assert spec is not None and spec.loader is not None
    mod = module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


class _Finder:
    """Imports the pure ``.py`` of a listed module when the switch is set or the build is
    stale; otherwise leaves the import to the normal finders (which prefer the extension)."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: Any = None
    ) -> ModuleSpec | None:
        if fullname not in _NAMES or not _runs_pure():
            return None
        src = source_path(fullname)
        return spec_from_file_location(fullname, src, loader=SourceFileLoader(fullname, src))


_FINDER: Final = _Finder()


def install() -> None:
    """Put the import hook first on ``sys.meta_path`` (idempotent; ``import npusched`` calls it)."""
    if _FINDER not in sys.meta_path:
        sys.meta_path.insert(0, _FINDER)
