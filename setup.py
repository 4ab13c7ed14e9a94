"""Build hook: compile the engine's hot modules with mypyc (same source as the pure modules).

The modules in ``COMPILED`` are compiled into C extensions by mypyc when the build can
(mypy's mypyc and a C compiler); otherwise, or with ``NPUSCHED_PURE=1`` at build time, the
package installs pure Python. Results are the same to the last bit either way (the golden
fixtures and ``tests/test_native.py`` check both). See docs/engine.md, "The compiled core".
"""

from __future__ import annotations

import os

from setuptools import setup

COMPILED = [
    "src/npusched/sim/columns.py",
    "src/npusched/policies/temporal/levels.py",
    # The general loop (eleventh round): the engine, its job and event records, the resources.
    "src/npusched/sim/engine.py",
    "src/npusched/sim/job.py",
    "src/npusched/sim/events.py",
    "src/npusched/sim/resources.py",
    "src/npusched/sim/common.py",
]


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
    exts = mypycify([*opts, *COMPILED], opt_level="3", debug_level="0")
    for ext in exts:
        ext.optional = True  # no C compiler: the build goes on, pure
    return exts


setup(ext_modules=_ext_modules())
