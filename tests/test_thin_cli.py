"""A thin CLI (issue 29): ``npusched run`` calls one library function that returns data and
renders it itself; the library prints nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from npusched.cli import main
from npusched.experiments.runner import run_config_file

EXAMPLE = Path(__file__).parents[1] / "examples" / "prema_small.toml"


def test_run_library_returns_data_and_prints_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = run_config_file(EXAMPLE, tmp_path / "lib", progress=False)
    assert capsys.readouterr().out == ""
    assert out.summary["n_requests"] > 0
    assert main(["run", str(EXAMPLE), "--out", str(tmp_path / "cli"), "-q", "-f", "json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    saved = json.loads((tmp_path / "lib" / "summary.json").read_text())
    assert printed == saved  # the CLI renders what the library returned, unchanged
