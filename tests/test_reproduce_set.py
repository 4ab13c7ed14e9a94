"""``npusched reproduce NAME [--set KEY=VALUE ...] [--quick]`` over the study registry (#29)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from npusched.cli import main
from npusched.errors import ConfigError
from npusched.experiments.reproduce.suites import SUITES
from npusched.experiments.suite_files import load_suite, set_overrides


def test_set_overrides_parse_toml_values() -> None:
    got = set_overrides(["runs=5", "load=1.5", "plots=false", "device=planaria"])
    assert got == {
        "runs": ("--set runs", 5),
        "load": ("--set load", 1.5),
        "plots": ("--set plots", False),
        "device": ("--set device", "planaria"),
    }
    nested = set_overrides(["setup.load=1.2", "setup.instances=3"])
    assert nested == {"setup": ("--set setup", {"load": 1.2, "instances": 3})}
    for bad in ("runs", "=1", "a..b=1"):
        with pytest.raises(ConfigError, match="expected KEY=VALUE"):
            set_overrides([bad])
    with pytest.raises(ConfigError, match="given twice"):
        set_overrides(["runs=1", "runs=2"])


def test_set_reaches_the_suite_parameters() -> None:
    s = load_suite("prema", quick=True, overrides=set_overrides(["runs=3", "load=1.2"]))
    assert (s.runs, s.load) == (3, 1.2)  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["reproduce", "prema", "--set", "runs=x"], "--set runs: input should be a valid integer"),
        (["reproduce", "prema", "--set", "runs=3", "--runs", "2"], "the same parameter"),
        (["reproduce", "dfs", "--set", "nope=1"], "--set nope: unknown key; allowed: suite"),
    ],
)
def test_bad_set_fails_before_any_work(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], needle: str
) -> None:
    out = tmp_path / "o"
    assert main([*argv, "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and needle in err[0], err
    assert not out.exists()


def test_any_registered_study_is_a_reproduce_command(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    seen: dict[str, Any] = {}

    def study(
        out: Path, *, quick: bool, progress: bool, overrides: Any = None
    ) -> dict[str, Any]:
        seen.update(out=out, quick=quick, overrides=overrides)
        return {"headline": {"gain": {"ours": 2.0, "paper": 2.1}}}

    SUITES.register("toy", study)
    try:
        code = main(["reproduce", "toy", "--quick", "--set", "k=4", "-q", "--out", str(tmp_path)])
        assert code == 0, capsys.readouterr().err
        assert seen == {"out": tmp_path, "quick": True, "overrides": {"k": ("--set k", 4)}}
        assert "toy" in capsys.readouterr().out
        assert main(["reproduce", "--help"]) == 0
        assert "toy" in capsys.readouterr().out
    finally:
        SUITES.unregister("toy")


def test_planaria_setup_declared_once() -> None:
    """Issue 29: the multi-tenant study's keys are declared once (the suite file's ``[setup]``
    schema is the base of :class:`MultiTenantSetup`), with the packaged file's values, and
    ``depthwise`` is settable from the suite file (``--set``) like every other key."""
    from npusched.experiments.studies.planaria.suite import MultiTenantSetup, PlanariaSetupEntry

    assert set(MultiTenantSetup.model_fields) == {*PlanariaSetupEntry.model_fields, "benchmarks"}
    full = MultiTenantSetup.of()
    assert (full.n_requests, full.instances, full.depthwise, full.benchmarks) == (
        200, 20, "pipelined", "artifact",
    )
    assert MultiTenantSetup.of(quick=True) == full.replace(instances=4, throughput_instances=3)
    s = load_suite(
        "planaria", quick=True, overrides=set_overrides(["setup.depthwise=per-channel"])
    )
    assert s.mt_setup().depthwise == "per-channel"  # type: ignore[union-attr]
    with pytest.raises(ConfigError, match="pipelined, per-channel"):
        load_suite("planaria", overrides=set_overrides(["setup.depthwise=diagonal"]))
