"""Build hook: compile the engine's hot modules with mypyc (same source as the pure modules).

The modules in ``npusched.native.COMPILED_MODULES`` (read from ``src/npusched/native.py``, the
one list the runtime reads too) are compiled into C extensions by mypyc when the build can
(mypy's mypyc and a C compiler); otherwise, or with ``NPUSCHED_PURE=1`` at build time, the
package installs pure Python. A build that compiled every module writes
``npusched/_native_build.json`` (each source's SHA-256), which the runtime checks so that a
source edited after the build runs pure instead of silently running the old extension.
Results are the same to the last bit either way (the golden fixtures and
``tests/test_native.py`` check both). See docs/engine.md, "The compiled core (eleventh round)".
"""

from __future__ import annotations

import ast
import hashlib
import json
import os
from pathlib import Path

from setuptools import setup
from setuptools.command.build_ext import build_ext

HERE = Path(__file__).resolve().parent
RECORD = "_native_build.json"


def compiled_modules() -> list[str]:
    """``COMPILED_MODULES`` of ``src/npusched/native.py`` (a tuple of string literals)."""
    tree = ast.parse((HERE / "src/npusched/native.py").read_text(encoding="utf-8"))
    for node in tree.body:
        target = getattr(node, "target", None) or (getattr(node, "targets", None) or [None])[0]
        if isinstance(target, ast.Name) and target.id == "COMPILED_MODULES":
            return list(ast.literal_eval(node.value))  # type: ignore[attr-defined]
    raise RuntimeError("src/npusched/native.py defines no COMPILED_MODULES")


MODULES = compiled_modules()


def _source(module: str) -> Path:
    return HERE / "src" / (module.replace(".", "/") + ".py")


def _ext_modules() -> list:
    if os.environ.get("NPUSCHED_PURE", "") not in ("", "0"):
        return []
    try:
        from mypyc.build import mypycify
    except ImportError:  # no mypyc in the build environment: pure install
        return []
    # Only the compiled modules' own types matter; the rest of the package is read silently
    # (the build environment has no NumPy or pandas stubs, so their names are Any there).
    opts = ["--follow-imports=silent", "--ignore-missing-imports", "--no-warn-unused-ignores"]
    paths = [str(_source(m).relative_to(HERE)) for m in MODULES]
    _DIGESTS.update({m: hashlib.sha256(_source(m).read_bytes()).hexdigest() for m in MODULES})
    exts = mypycify([*opts, *paths], opt_level="3", debug_level="0")
    for ext in exts:
        ext.optional = True  # no C compiler: the build goes on, pure
    return exts


_DIGESTS: dict[str, str] = {}  # module -> SHA-256 of the source mypyc compiled


def _record_dir(ext_path: str, module: str) -> Path:
    """The ``npusched`` package directory that holds ``module``'s extension ``ext_path``."""
    return Path(ext_path).parents[module.count(".") - 1]


class BuildExt(build_ext):
    """``build_ext`` that records each compiled module's source digest once every extension
    was built, next to the extensions (the source tree with ``--inplace``, else the build
    directory, whence the wheel)."""

    def run(self) -> None:
        super().run()
        if not self.extensions or not _DIGESTS:
            return
        paths = [self.get_ext_fullpath(e.name) for e in self.extensions]
        if not all(os.path.exists(p) for p in paths):
            return  # an optional extension failed: the runtime finds no complete build
        for pkg in {_record_dir(self.get_ext_fullpath(MODULES[0]), MODULES[0]),
                    Path(self.build_lib) / "npusched"}:
            pkg.mkdir(parents=True, exist_ok=True)
            (pkg / RECORD).write_text(json.dumps({"sources": _DIGESTS}, indent=1) + "\n")

    def get_outputs(self) -> list[str]:
        out = list(super().get_outputs())
        if self.extensions and _DIGESTS:
            out.append(str(Path(self.build_lib) / "npusched" / RECORD))
        return out


setup(ext_modules=_ext_modules(), cmdclass={"build_ext": BuildExt})
