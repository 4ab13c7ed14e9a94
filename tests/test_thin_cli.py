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


def test_sweep_dry_run_lists_what_the_library_plans(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``sweep --dry-run`` renders :func:`plan_sweep`'s rows: the library returns data (and
    writes nothing), the CLI only renders it."""
    from npusched.experiments.store import plan_sweep, run_sweep
    from npusched.experiments.sweep import load_experiment, parse_filters

    data = Path(__file__).parents[1] / "src" / "npusched" / "data" / "experiments"
    packaged = data / "prema_rates.toml"
    exp = load_experiment(packaged)
    out = tmp_path / "o"
    run_sweep(exp, out, backend="inprocess", max_points=2, progress=False)
    flt = parse_filters(["policy=P-PREMA"], exp)
    title, rows = plan_sweep(exp, out, flt, None)
    assert capsys.readouterr().out == ""
    assert rows and all(r["policy"] == "P-PREMA" for r in rows)
    assert sum(r["done"] for r in rows) == sum(
        1 for r in rows if (out / "points" / f"{r['id']}.parquet").exists()
    )
    before = sorted(p.name for p in (out / "points").iterdir())
    args = ["sweep", str(packaged), "--out", str(out), "--filter", "policy=P-PREMA"]
    assert main([*args, "--dry-run", "-q"]) == 0
    printed = capsys.readouterr().out
    assert title in printed
    assert sorted(p.name for p in (out / "points").iterdir()) == before  # nothing written
