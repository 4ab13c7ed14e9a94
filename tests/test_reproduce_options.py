"""``npusched reproduce NAME``'s options derived from the study's model (issue 29): every field
is an option, the papers' commands keep their option names, and an option gives what
``--set`` gives."""

from __future__ import annotations

import importlib
import json
from pathlib import Path
from typing import Any

import pytest

from npusched.cli import main
from npusched.experiments import studies, suite_files
from npusched.experiments.studies.dfs.suite import DfsSuite
from npusched.experiments.studies.params import FLAG, MULTI, VALUE, study_params
from npusched.experiments.suite_files import SUITE_MODELS

STUDIES = list(SUITE_MODELS)


def _help(capsys: pytest.CaptureFixture[str], name: str) -> str:
    assert main(["reproduce", name, "--help"]) == 0
    return " ".join(capsys.readouterr().out.split())  # rich wraps the epilog


@pytest.fixture(autouse=True)
def _wide(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "250")


@pytest.mark.parametrize("name", STUDIES)
def test_help_lists_every_model_field(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    text = _help(capsys, name)
    fields = [k for k in SUITE_MODELS[name].model_fields if k not in ("suite", "description")]
    for key in fields:
        opt = "--" + key.replace("_", "-")
        assert f" {opt} " in text or f"Only as --set: {key}" in text, (name, key)
    assert "--set" in text and "--quick" in text and "--config" in text


def test_params_carry_kind_type_default_and_description() -> None:
    ps = {p.key: p for p in study_params("dfs")}
    assert ps["cap_w"].kind == VALUE and ps["cap_w"].default == "33"
    assert ps["cap_w"].type == "number" and ps["cap_w"].description == "the power limit, watts."
    assert ps["fuse"].kind == FLAG and ps["networks"].kind == MULTI
    assert ps["efficiency"].type == "number or one of calibrate, fit"
    hx = {p.key: p for p in study_params("haxconn")}
    assert hx["experiments"].kind == MULTI and hx["experiments"].literals == ("all",)
    # every parameter of every study is documented in its model's docstring
    for name in STUDIES:
        assert all(p.description for p in study_params(name)), name


def _captured(monkeypatch: pytest.MonkeyPatch, name: str) -> list[Any]:
    seen: list[Any] = []

    def run(suite: Any, out: Path, *, quick: bool, progress: bool) -> dict[str, Any]:
        seen.append(suite)
        return {"headline": {}, "experiments": {}, "dse": []}

    # the study's run module maps a suite model onto its reproduction
    monkeypatch.setattr(importlib.import_module(f"{studies.__name__}.{name}.run"), "run_suite", run)
    return seen


#: (study, the papers' command options, the same as --set)
SAME = [
    (
        "dfs",
        ["--cap-w", "34", "--no-fuse", "--networks", "vgg-16", "--networks", "yolov2",
         "--efficiency", "0.02"],
        ["cap_w=34", "fuse=false", 'networks=["vgg-16", "yolov2"]', "efficiency=0.02"],
    ),
    ("dfs", ["--efficiency", "calibrate"], ["efficiency=calibrate"]),
    ("prema", ["--runs", "3", "--load", "1.2", "--no-plots", "--seed", "4"],
     ["runs=3", "load=1.2", "plots=false", "seed=4"]),
    ("planaria", ["--networks", "full-size", "--setup", "{load = 1.2}", "--multi-tenant"],
     ["benchmarks=full-size", "setup.load=1.2", "multi_tenant=true"]),
    ("haxconn", ["--only", "table6", "--experiment", "1", "--experiment", "3"],
     ['parts=["table6"]', "experiments=[1, 3]"]),
    ("haxconn", ["--experiments", "all", "--z3-max-groups", "10"],
     ["experiments=all", "z3_max_groups=10"]),
    ("fluid", ["--no-serving", "--designs", "table1", "--seeds", "2"],
     ["serving=false", "designs=table1", "seeds=2"]),
]


@pytest.mark.parametrize(("name", "opts", "sets"), SAME, ids=lambda x: str(x)[:20])
def test_an_option_gives_what_set_gives(
    name: str, opts: list[str], sets: list[str], monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    seen = _captured(monkeypatch, name)
    base = ["reproduce", name, "--quick", "-q", "--out", str(tmp_path / "o")]
    assert main([*base, *opts]) == 0, capsys.readouterr().err
    assert main([*base, *(x for s in sets for x in ("--set", s))]) == 0, capsys.readouterr().err
    assert len(seen) == 2 and seen[0] == seen[1]
    assert seen[0] != suite_files.load_suite(name, quick=True)  # the options did change it


def test_dfs_alias_and_set_write_the_same_summary(tmp_path: Path) -> None:
    """End to end: ``reproduce dfs --cap-w 34`` and ``reproduce dfs --set cap_w=34``."""
    common = ["reproduce", "dfs", "--quick", "-q", "--no-plots", "--networks", "squeezenet"]
    a, b = tmp_path / "a", tmp_path / "b"
    assert main([*common, "--cap-w", "34", "--out", str(a)]) == 0
    assert main([*common, "--set", "cap_w=34", "--out", str(b)]) == 0
    sa = json.loads((a / "summary.json").read_text())
    assert sa == json.loads((b / "summary.json").read_text())
    assert sa["cap_w"] == 34 and list(sa["networks"]) == ["squeezenet"]


@pytest.mark.parametrize(
    ("argv", "line"),
    [
        (["dfs", "--time-scale", "x"],
         "reproduce: --time-scale: invalid value 'x'; allowed: global, per-network"),
        (["dfs", "--set", "time_scale=x"],
         "reproduce: --set time_scale: invalid value 'x'; allowed: global, per-network"),
        (["dfs", "--set", "nope=1"], "--set nope: unknown key; allowed: suite, description, networks"),
        (["dfs", "--cap-w", "34", "--set", "cap_w=35"], "--set cap_w and --cap-w: the same parameter"),
        (["dfs", "--networks", "bogus"], "--networks: unknown network 'bogus'; allowed: "),
        (["planaria", "--benchmarks", "artifact", "--networks", "full-size"],
         "--benchmarks and --networks: the same parameter; give one"),
        (["haxconn", "--experiment", "11"], "--experiment"),
        (["fluid", "--designs", "best"], "--designs: invalid value 'best'; allowed: table1, dse"),
        (["fluid", "--seeds", "two"], "--seeds: input should be a valid integer"),
    ],
)
def test_bad_option_is_one_line_before_any_work(
    argv: list[str], line: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "o"
    assert main(["reproduce", *argv, "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("npusched: error: ") and line in err[0], err
    assert not out.exists()


def test_a_field_added_to_the_model_is_an_option_at_once(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    class Wider(DfsSuite):
        """``suite = "dfs"`` with one more knob.

        Attributes:
            knob_count: a new parameter, its count of knobs.
        """

        knob_count: int = 3

    monkeypatch.setitem(SUITE_MODELS, "dfs", Wider)
    seen = _captured(monkeypatch, "dfs")
    text = _help(capsys, "dfs")
    assert "--knob-count VALUE A new parameter, its count of knobs. (integer; default 3)" in text
    base = ["reproduce", "dfs", "-q", "--out", str(tmp_path / "o")]
    assert main([*base, "--knob-count", "5"]) == 0
    assert main([*base, "--set", "knob_count=5"]) == 0
    assert [s.knob_count for s in seen] == [5, 5]
    assert main([*base, "--knob-count", "many"]) == 2
    assert "--knob-count: input should be a valid integer" in capsys.readouterr().err


def test_every_kept_option_name_names_a_field() -> None:
    """The papers' old option names (``ALIASES``) point at fields their models still have."""
    from npusched.cli.reproduce import ALIASES

    for name, keys in ALIASES.items():
        assert set(keys) <= set(SUITE_MODELS[name].model_fields), name
