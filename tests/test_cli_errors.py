"""Bad input through the ``npusched`` command: exit status 2 and exactly one stderr line
``npusched: error: ...`` naming the offending file / field / option, never a traceback, and no
output left behind. Plus the typed errors of the matching Python API calls."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from npusched.cli import main
from npusched.errors import NpuschedError

# A valid PREMA workload table; cases append to it or replace parts of it.
WORKLOAD = """
[workload]
kind = "prema"
n_tasks = 3
models = ["alexnet"]
window_s = 0.01
"""
POISSON = """
[workload]
kind = "poisson"
rate_per_s = 100
models = ["alexnet"]
n_requests = 5
"""


def _policy(name: str, params: str) -> str:
    return f'{WORKLOAD}\n[policy]\nname = "{name}"\nparams = {{ {params} }}\n'


def _expect_error(capsys: pytest.CaptureFixture[str], argv: list[str], *needles: str) -> str:
    code = main(argv)
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert code == 2, err
    assert len(lines) == 1, err
    assert lines[0].startswith("npusched: error: "), err
    assert "Traceback" not in err
    for n in needles:
        assert n in lines[0], (n, lines[0])
    return lines[0]


# --- npusched run ------------------------------------------------------------------------------
RUN_CASES: list[tuple[str, str, str, tuple[str, ...]]] = [
    # (id, file name, text, needles in the error line)
    ("empty-toml", "c.toml", "", ("c.toml", "workload", "missing")),
    ("toml-syntax", "c.toml", "seed = = 1", ("c.toml", "TOML syntax error", "line 1")),
    ("yaml-syntax", "c.yaml", "workload: [1,\n", ("c.yaml", "YAML syntax error")),
    ("yaml-list", "c.yaml", "- 1\n- 2\n", ("c.yaml", "expected a mapping")),
    (
        "yaml-duplicate-key",
        "c.yaml",
        "workload:\n  kind: prema\n  models: [alexnet]\n  window_s: 0.01\n  window_s: 0.02\n",
        ("c.yaml", "'window_s' given twice", "line 5"),
    ),
    ("json", "c.json", "{}", ("c.json", "allowed: .toml, .yaml, .yml")),
    ("unknown-top-key", "c.toml", "foo = 1\n" + WORKLOAD, ("foo: unknown key", "allowed:")),
    ("unknown-workload-key", "c.toml", WORKLOAD + "foo = 1\n", ("workload.foo", "allowed:")),
    ("unknown-sim-key", "c.toml", WORKLOAD + "[sim]\nfoo = 1\n", ("sim.foo", "allowed:")),
    ("unknown-kind", "c.toml", WORKLOAD.replace('"prema"', '"bogus"'), ("workload.kind",)),
    ("n-tasks-0", "c.toml", WORKLOAD.replace("n_tasks = 3", "n_tasks = 0"), ("n_tasks",)),
    ("window-neg", "c.toml", WORKLOAD.replace("0.01", "-1"), ("workload.window_s",)),
    ("models-empty", "c.toml", WORKLOAD.replace('["alexnet"]', "[]"), ("workload.models",)),
    (
        "models-unknown",
        "c.toml",
        WORKLOAD.replace('["alexnet"]', '["bogus"]'),
        ("workload.models", "'bogus'", "resnet-50"),
    ),
    ("batch-0", "c.toml", WORKLOAD + "batch_sizes = [0]\n", ("workload.batch_sizes[0]",)),
    # lax parsing used to read `true` as 1
    ("seed-bool", "c.toml", "seed = true\n" + WORKLOAD, ("seed", "expected an integer")),
    (
        "batch-bool",
        "c.toml",
        WORKLOAD + "batch_sizes = [true]\n",
        ("workload.batch_sizes[0]", "got true"),
    ),
    (
        "priority-0",
        "c.toml",
        WORKLOAD + "priorities = [0]\n",
        ("workload.priorities[0]", "low, medium, high or an integer >= 1"),
    ),
    (
        "priority-name",
        "c.toml",
        WORKLOAD + 'priorities = ["urgent"]\n',
        ("workload.priorities[0]", "'urgent'", "integer >= 1"),
    ),
    ("rate-0", "c.toml", POISSON.replace("100", "0"), ("workload.rate_per_s",)),
    (
        "weights-zero-sum",
        "c.toml",
        POISSON + "weights = [0]\n",
        ("c.toml", "workload", "weights", "positive sum"),
    ),
    (
        "qos-table-typo",
        "c.toml",
        POISSON + "qos = { vgg-16 = 0.01 }\n",
        ("workload", "qos names ['vgg-16'] not in models"),
    ),
    ("device-unknown", "c.toml", WORKLOAD + '[hardware]\ndevice = "x"\n', ("hardware.device",)),
    ("rows-neg", "c.toml", WORKLOAD + "[hardware]\nparams = { rows = -1 }\n", ("rows",)),
    ("predictor", "c.toml", WORKLOAD + '[sim]\npredictor = "bogus"\n', ("sim.predictor",)),
    ("policy-unknown", "c.toml", WORKLOAD + '[policy]\nname = "x"\n', ("policy.name",)),
    ("policy-param-unknown", "c.toml", _policy("P-HPF", "bogus = 1"), ("policy.params.bogus",)),
    (
        "hpf-mechanism",
        "c.toml",
        _policy("P-HPF", 'mechanism = "bogus"'),
        ("policy.params", "allowed: checkpoint"),
    ),
    # checked when the config is read, not half-way through the simulation
    (
        "prema-mechanism",
        "c.toml",
        _policy("P-PREMA", 'mechanism = "bogus"'),
        ("c.toml", "policy.params", "allowed: checkpoint, kill, dynamic"),
    ),
    (
        "prema-threshold",
        "c.toml",
        _policy("P-PREMA", 'threshold = "bogus"'),
        ("c.toml", "policy.params", "threshold"),
    ),
    (
        "prema-period-neg",
        "c.toml",
        _policy("P-PREMA", "period_s = -1"),
        ("c.toml", "policy.params.period_s", "> 0"),
    ),
    (
        "prema-include-running",
        "c.toml",
        _policy("P-PREMA", 'include_running = "maybe"'),
        ("policy.params.include_running", "boolean"),
    ),
    (
        "prema-token-levels",
        "c.toml",
        _policy("P-PREMA", 'token_levels = "abc"'),
        ("policy.params.token_levels",),
    ),
    ("rrb-quantum-neg", "c.toml", _policy("P-RRB", "quantum_s = -1"), ("policy.params.quantum_s",)),
    (
        "rrb-quantum-str",
        "c.toml",
        _policy("P-RRB", 'quantum_s = "x"'),
        ("policy.params.quantum_s", "number"),
    ),
    (
        "trace-missing",
        "c.toml",
        '[workload]\nkind = "trace"\npath = "nope.csv"\n',
        ("nope.csv", "not found"),
    ),
    (
        "trace-directory",
        "c.toml",
        '[workload]\nkind = "trace"\npath = "."\n',
        ("is a directory",),
    ),
    (
        "trace-header-only",
        "c.toml",
        '[workload]\nkind = "trace"\npath = "header.csv"\n',
        ("c.toml", "workload.path", "'header.csv' has no rows"),
    ),
    (
        "trace-missing-column",
        "c.toml",
        '[workload]\nkind = "trace"\npath = "nonet.csv"\n',
        ("nonet.csv", "missing required column 'network'"),
    ),
    (
        "trace-duplicate-column",
        "c.toml",
        '[workload]\nkind = "trace"\npath = "dupcol.csv"\n',
        ("dupcol.csv", "column 'network' appears twice"),
    ),
    (
        "trace-long-first-row",
        "c.toml",
        '[workload]\nkind = "trace"\npath = "long.csv"\n',
        ("long.csv", "row 1 has 3 fields", "2 columns"),
    ),
    (
        "trace-huge-batch",
        "c.toml",
        '[workload]\nkind = "trace"\npath = "huge.csv"\n',
        ("huge.csv", "row 1", "column 'batch'", "<= 1048576"),
    ),
    (
        "batch-huge",
        "c.toml",
        WORKLOAD + "batch_sizes = [10000000]\n",
        ("workload.batch_sizes[0]", "1048576"),
    ),
    (
        "trace-bad-row",
        "c.toml",
        '[workload]\nkind = "trace"\npath = "badrow.csv"\n',
        ("badrow.csv", "row 2", "arrival_s"),
    ),
]


@pytest.mark.parametrize(
    ("fname", "text", "needles"), [c[1:] for c in RUN_CASES], ids=[c[0] for c in RUN_CASES]
)
def test_run_bad_config(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    fname: str,
    text: str,
    needles: tuple[str, ...],
) -> None:
    (tmp_path / "header.csv").write_text("arrival_s,network\n")
    (tmp_path / "nonet.csv").write_text("arrival_s\n0.1\n")
    (tmp_path / "badrow.csv").write_text("arrival_s,network\n0.1,alexnet\nabc,alexnet\n")
    (tmp_path / "dupcol.csv").write_text("arrival_s,network,network\n0,alexnet,alexnet\n")
    (tmp_path / "long.csv").write_text("arrival_s,network\n0,alexnet,5\n")
    (tmp_path / "huge.csv").write_text("arrival_s,network,batch\n0,alexnet,100000000000\n")
    cfg = tmp_path / fname
    cfg.write_text(text)
    out = tmp_path / "out"
    _expect_error(capsys, ["run", str(cfg), "--out", str(out), "-q"], *needles)
    assert not out.exists()  # nothing half-written


def test_run_negative_seed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cfg = tmp_path / "c.toml"
    cfg.write_text(WORKLOAD)
    _expect_error(capsys, ["run", str(cfg), "--seed", "-1", "--out", str(tmp_path / "o")], "--seed")


def test_run_missing_and_directory_config(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _expect_error(capsys, ["run", str(tmp_path / "no.toml")], "no.toml", "not found")
    d = tmp_path / "d.toml"
    d.mkdir()
    _expect_error(capsys, ["run", str(d)], "d.toml", "cannot read config")


@pytest.mark.parametrize("below_file", [False, True])
def test_run_out_is_a_file_fails_before_simulating(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    below_file: bool,
) -> None:
    import npusched.experiments.runner as runner

    def no_simulation(*args: object, **kwargs: object) -> None:
        raise AssertionError("simulated although --out is unusable")

    monkeypatch.setattr(runner, "run_config", no_simulation)
    cfg = tmp_path / "c.toml"
    cfg.write_text(WORKLOAD)
    f = tmp_path / "afile"
    f.write_text("keep me")
    out = f / "sub" if below_file else f
    msg = _expect_error(capsys, ["run", str(cfg), "--out", str(out), "-q"], str(out))
    assert ("not a directory" in msg) if below_file else ("must be a directory" in msg)
    assert f.read_text() == "keep me"


# --- other commands ----------------------------------------------------------------------------
CLI_CASES: list[tuple[str, list[str], tuple[str, ...]]] = [
    ("no-such-command", ["bogus"], ("'bogus'", "allowed: profile, run, bench")),
    ("no-such-subcommand", ["models", "bogus"], ("allowed: list, show, import",)),
    # canonical names only, so the list is complete and shows the common networks
    ("show-unknown", ["models", "show", "bogus"], ("'bogus'", "resnet-50", "vgg-16")),
    ("list-format", ["models", "list", "-f", "xml"], ("--format", "allowed: table")),
    ("profile-network", ["profile", "bogus"], ("unknown network 'bogus'", "resnet-50")),
    ("profile-device", ["profile", "alexnet", "--device", "x"], ("unknown device 'x'",)),
    ("profile-batch-0", ["profile", "alexnet", "--batch", "0"], ("--batch", ">= 1")),
    ("profile-batch-neg", ["profile", "alexnet", "--batch", "-3"], ("--batch", "-3")),
    ("profile-batch-float", ["profile", "alexnet", "--batch", "1.5"], ("--batch",)),
    # int64 byte counts would overflow (negative bytes) instead
    ("profile-batch-huge", ["profile", "alexnet", "--batch", str(10**13)], ("<= 1048576",)),
    ("bench-requests-0", ["bench", "--requests", "0"], ("--requests", ">= 1")),
    ("bench-requests-neg", ["bench", "--requests", "-5"], ("--requests", "-5")),
    ("bench-seed-neg", ["bench", "--requests", "5", "--seed", "-1"], ("--seed",)),
    ("reproduce-runs-0", ["reproduce", "prema", "--runs", "0"], ("--runs",)),
    ("reproduce-runs-neg", ["reproduce", "prema", "--runs", "-1"], ("--runs",)),
    ("reproduce-load-0", ["reproduce", "prema", "--load", "0"], ("--load",)),
    ("reproduce-load-neg", ["reproduce", "prema", "--load", "-2"], ("--load",)),
]


@pytest.mark.parametrize(
    ("argv", "needles"), [c[1:] for c in CLI_CASES], ids=[c[0] for c in CLI_CASES]
)
def test_cli_bad_arguments(
    capsys: pytest.CaptureFixture[str], argv: list[str], needles: tuple[str, ...]
) -> None:
    _expect_error(capsys, argv, *needles)


def test_reproduce_seed_and_out_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "r"
    _expect_error(capsys, ["reproduce", "prema", "--seed", "-1", "--out", str(out)], "--seed")
    assert not out.exists()
    f = tmp_path / "afile"
    f.write_text("")
    _expect_error(capsys, ["reproduce", "prema", "--runs", "1", "--out", str(f)], str(f))
    _expect_error(capsys, ["reproduce", "prema", "--runs", "1", "--out", str(f / "x")], "afile")


# --- models import -----------------------------------------------------------------------------
def _onnx_model(path: Path, *, extra_op: str | None = None, symbolic: bool = False) -> None:
    onnx = pytest.importorskip("onnx")
    import numpy as np
    from onnx import TensorProto, helper, numpy_helper

    dims: list[int | str] = ["N", 3, "H", "W"] if symbolic else [1, 3, 8, 8]
    out_dims: list[int | str] = ["N", 4, "H", "W"] if symbolic else [1, 4, 8, 8]
    w = numpy_helper.from_array(np.zeros((4, 3, 3, 3), np.float32), "w")
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1])]
    last = "c"
    opsets = [helper.make_opsetid("", 17)]
    if extra_op is not None:
        nodes.append(helper.make_node(extra_op, ["c"], ["y"], domain="com.example"))
        opsets.append(helper.make_opsetid("com.example", 1))
        last = "y"
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, dims)],
        [helper.make_tensor_value_info(last, TensorProto.FLOAT, out_dims)],
        [w],
    )
    onnx.save(helper.make_model(graph, opset_imports=opsets), str(path))


def test_models_import_bad_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _expect_error(capsys, ["models", "import", str(tmp_path / "no.onnx")], "no.onnx")
    _expect_error(capsys, ["models", "import", str(tmp_path)], str(tmp_path), "not a file")
    empty = tmp_path / "empty.onnx"
    empty.write_bytes(b"")
    _expect_error(capsys, ["models", "import", str(empty)], "empty.onnx", "not a valid ONNX")
    good = tmp_path / "good.onnx"
    _onnx_model(good)
    trunc = tmp_path / "trunc.onnx"
    trunc.write_bytes(good.read_bytes()[:40])
    _expect_error(capsys, ["models", "import", str(trunc)], "trunc.onnx", "not a valid ONNX")
    unsup = tmp_path / "unsup.onnx"
    _onnx_model(unsup, extra_op="Frobnicate")
    _expect_error(
        capsys, ["models", "import", str(unsup)], "unsup.onnx", "unsupported operator 'Frobnicate'"
    )


def test_models_import_warns_about_symbolic_dims(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "dyn.onnx"
    _onnx_model(path, symbolic=True)
    assert main(["models", "import", str(path), "-f", "csv"]) == 0
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("npusched: warning: ")
    assert "H, N, W" in lines[0]
    assert "conv" in captured.out  # the table is still printed
    fixed = tmp_path / "fixed.onnx"
    _onnx_model(fixed)
    assert main(["models", "import", str(fixed), "-f", "csv"]) == 0
    assert capsys.readouterr().err == ""


# --- Python API: typed errors ------------------------------------------------------------------
def _api_cases() -> list[tuple[str, Callable[[], object], str]]:
    from npusched.hardware import compile_profile, get_device
    from npusched.models.zoo import get_network
    from npusched.workloads import prema_workload

    def prof(batches: object) -> object:
        return compile_profile(get_network("alexnet"), get_device("prema-npu"), batches)  # type: ignore[arg-type]

    return [
        ("get_network-unknown", lambda: get_network("x"), "resnet-50"),
        ("get_network-none", lambda: get_network(None), "network None"),  # type: ignore[arg-type]
        ("device-unknown", lambda: get_device("x"), "prema-npu"),
        ("device-rows-0", lambda: get_device("prema-npu", rows=0), "rows"),
        ("device-keyword", lambda: get_device("prema-npu", freq_hz=1e9), "frequency_hz"),
        ("batch-empty", lambda: prof([]), "batch sizes must be positive integers"),
        ("workload-seed", lambda: prema_workload(2, ["alexnet"], 0.01, random_state=-1), "-1"),
        ("batch-fraction", lambda: prof([1.5]), "1.5"),
        ("batch-text", lambda: prof(["a"]), "'a'"),
        ("batch-scalar", lambda: prof(4), "got 4"),
        (
            "network-name",
            lambda: compile_profile("alexnet", get_device("prema-npu")),  # type: ignore[arg-type]
            "get_network",
        ),
    ]


@pytest.mark.parametrize("case", _api_cases(), ids=lambda c: c[0])
def test_api_errors_are_typed(case: tuple[str, Callable[[], object], str]) -> None:
    _, call, needle = case
    with pytest.raises(NpuschedError) as info:
        call()
    assert needle in str(info.value)
    assert "\n" not in str(info.value)


def test_policy_registry_rejects_unknown_keyword() -> None:
    import npusched.policies.temporal  # noqa: F401
    from npusched.policies.base import POLICIES

    with pytest.raises(NpuschedError, match="unknown parameter 'bogus'; allowed: mechanism"):
        POLICIES.create("P-HPF", bogus=1)


def test_debug_flag_anywhere_shows_the_exception(tmp_path: Path) -> None:
    from npusched.errors import ConfigError

    with pytest.raises(ConfigError, match=r"no\.toml: config file not found"):
        main(["run", str(tmp_path / "no.toml"), "--debug"])


def test_raising_runs_later_gives_the_fresh_result(tmp_path: Path) -> None:
    """``--runs 1`` then ``--runs 3`` equals ``--runs 3`` at once, to the last bit (the points
    are aggregated in a canonical order, not in the order they were computed)."""
    import json

    from npusched.experiments.studies.prema.points import PremaSetup, policy_specs
    from npusched.experiments.studies.prema.run import reproduce

    setup = PremaSetup.of(networks=("alexnet", "googlenet", "rnn-sa"), n_tasks=4, batch_sizes=(1, 4))
    labels = {"NP-FCFS", "NP-SJF", "P-HPF", "P-PREMA", "P-PREMA-dynamic"}
    specs = [s for s in policy_specs() if s.label in labels]
    reproduce(tmp_path / "fresh", runs=3, setup=setup, specs=specs, plots=False)
    reproduce(tmp_path / "grown", runs=1, setup=setup, specs=specs, plots=False)
    reproduce(tmp_path / "grown", runs=3, setup=setup, specs=specs, plots=False)
    fresh = json.loads((tmp_path / "fresh" / "summary.json").read_text())
    grown = json.loads((tmp_path / "grown" / "summary.json").read_text())
    assert grown == fresh
    for name in ("policies.csv", "per_batch.csv"):
        assert (tmp_path / "grown" / name).read_text() == (tmp_path / "fresh" / name).read_text()


def test_ctrl_c_exits_130_with_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ctrl-C used to end ``npusched run`` with status 0 and no message (typer returns the 130)."""
    import npusched.experiments.runner as runner

    def interrupted(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(runner, "run_config", interrupted)
    cfg = tmp_path / "c.toml"
    cfg.write_text(WORKLOAD)
    out = tmp_path / "out"
    assert main(["run", str(cfg), "--out", str(out), "-q"]) == 130
    assert capsys.readouterr().err.strip().splitlines() == ["npusched: error: interrupted"]
    assert not out.exists()


@pytest.mark.parametrize(
    "argv",
    [[], ["models"], ["reproduce"]],
    ids=["root", "models", "reproduce"],
)
def test_no_subcommand_prints_help_and_exits_2(
    capsys: pytest.CaptureFixture[str], argv: list[str]
) -> None:
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert "Usage: npusched" in captured.out + captured.err
    assert "Traceback" not in captured.err


def test_help_rewraps_docstring_paragraphs(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    monkeypatch.setenv("TERMINAL_WIDTH", "200")
    assert main(["profile", "--help"]) == 0
    out = capsys.readouterr().out
    # the docstring breaks the line after "models import``)."; help must not keep such breaks
    assert "(imported as by models import). Recurrent layers are listed once" in out
    assert main(["reproduce", "prema", "--help"]) == 0
    assert "Base seed" in capsys.readouterr().out


def test_parquet_trace_errors_show_plain_values(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A datetime arrival column used to be read as nanoseconds since 1970 (a run with zero
    latencies and divide-by-zero warnings); values are shown as 2.5, not np.float64(2.5)."""
    import pandas as pd

    cases = [
        ({"arrival_s": pd.to_datetime(["2020-01-01"]), "network": ["alexnet"]}, "a date/time"),
        ({"arrival_s": [0.1], "network": ["alexnet"], "batch": [2.5]}, "(got 2.5)"),
    ]
    for i, (columns, needle) in enumerate(cases):
        trace = tmp_path / f"t{i}.parquet"
        pd.DataFrame(columns).to_parquet(trace)
        cfg = tmp_path / f"c{i}.toml"
        cfg.write_text(f'[workload]\nkind = "trace"\npath = "{trace.name}"\n')
        line = _expect_error(capsys, ["run", str(cfg), "--out", str(tmp_path / "o"), "-q"])
        assert trace.name in line and needle in line and "np." not in line


def test_tables_show_undefined_values() -> None:
    # rendering a NaN (an undefined metric, e.g. in the reproduce headline) used to raise
    import io

    from npusched.report.tables import render

    buf = io.StringIO()
    render([{"quantity": "antt", "ours": float("nan"), "paper": 1.5}], "table", out=buf)
    row = next(line for line in buf.getvalue().splitlines() if "antt" in line)
    assert [c.strip() for c in row.split("│")[1:-1]] == ["antt", "-", "1.5"]
