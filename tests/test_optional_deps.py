"""A base install (no ``[solver]`` extra) runs every config that needs no exact solver: the
wheel check in ``.ci/run`` does the same in a fresh virtual environment."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

BLOCK = """
import sys
class _NoSolvers:
    def find_spec(self, name, path=None, target=None):
        if name.split('.')[0] in ('ortools', 'z3'):
            raise ModuleNotFoundError(f"No module named {name!r}")
        return None
sys.meta_path.insert(0, _NoSolvers())
from npusched.cli import main
sys.exit(main(sys.argv[1:]))
"""


def test_prema_config_runs_without_the_solvers(tmp_path: Path) -> None:
    r = subprocess.run(
        [sys.executable, "-c", BLOCK, "run", str(ROOT / "examples" / "prema_small.toml"),
         "--out", str(tmp_path / "o"), "--quiet"],
        capture_output=True, text=True, timeout=120,
    )
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "o" / "summary.json").is_file()
