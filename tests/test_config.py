"""Run-config schema: defaults, the examples, and one-line errors naming file and field."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from npusched.errors import ConfigError
from npusched.experiments.config import (
    PoissonWorkloadConfig,
    PremaWorkloadConfig,
    TraceWorkloadConfig,
    load_config,
    parse_config,
)

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"

BASE = """seed = 3
[workload]
kind = "prema"
models = ["resnet-50", "ResNet-18"]
window_s = 0.01
"""


def _write(tmp_path: Path, text: str, name: str = "cfg.toml") -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


def _expect_error(path: Path, field: str, pattern: str) -> None:
    """Loading ``path`` fails with one line ``<path>: <field>: ...<pattern>``."""
    with pytest.raises(ConfigError) as info:
        load_config(path)
    msg = str(info.value)
    assert "\n" not in msg
    assert re.search(f"^{re.escape(str(path))}: {field}: .*{pattern}", msg), msg


def test_minimal_config_defaults(tmp_path: Path) -> None:
    cfg = load_config(_write(tmp_path, BASE))
    assert cfg.seed == 3
    assert isinstance(cfg.workload, PremaWorkloadConfig)
    assert cfg.workload.models == ["resnet-50", "resnet-18"]  # canonical
    assert cfg.workload.n_tasks == 8 and cfg.workload.batch_sizes == [1, 4, 16]
    assert cfg.hardware.device == "prema-npu" and cfg.hardware.params == {}
    assert cfg.policy.name == "NP-FCFS"
    assert cfg.sim.preemption_point == "tile" and cfg.sim.checkpoint_cost
    assert cfg.sim.predictor == "oracle"
    assert cfg.metrics.sla_n == [float(n) for n in range(2, 21)]


@pytest.mark.parametrize("name", ["prema_small.toml", "poisson_small.yaml"])
def test_examples_parse(name: str) -> None:
    cfg = load_config(EXAMPLES / name)
    assert cfg.name


def test_poisson_and_trace_from_mapping() -> None:
    cfg = parse_config(
        {
            "workload": {
                "kind": "poisson",
                "rate_per_s": 10,
                "models": ["resnet-18"],
                "duration_s": 2,
                "qos": {"ResNet-18": 0.01},
            }
        }
    )
    assert isinstance(cfg.workload, PoissonWorkloadConfig)
    assert cfg.workload.qos == {"resnet-18": 0.01}
    assert cfg.workload.priorities == (1, 11)
    cfg = parse_config({"workload": {"kind": "trace", "path": "t.csv", "qos": 3}})
    assert isinstance(cfg.workload, TraceWorkloadConfig) and cfg.workload.qos == 3.0


def test_yaml_and_toml_agree(tmp_path: Path) -> None:
    yaml_text = (
        "seed: 3\nworkload:\n  kind: prema\n  models: [resnet-50, ResNet-18]\n  window_s: 0.01\n"
    )
    a = load_config(_write(tmp_path, BASE))
    b = load_config(_write(tmp_path, yaml_text, "cfg.yaml"))
    assert a == b


@pytest.mark.parametrize(
    ("extra", "field", "pattern"),
    [
        ("foo = 1", "workload.foo", "unknown key; allowed: kind, n_tasks, models"),
        ('[policy]\nname = "NOPE"', "policy.name", "unknown policy 'NOPE'; allowed: .*NP-FCFS"),
        (
            '[policy]\nname = "NP-FCFS"\nparams = { foo = 1 }',
            "policy.params.foo",
            "unknown parameter; allowed: mechanism",
        ),
        (
            '[policy]\nname = "P-HPF"\nparams = { mechanism = "explode" }',
            "policy.params.mechanism",
            "allowed: checkpoint, kill, drain",
        ),
        ('[hardware]\ndevice = "tpu9"', "hardware.device", "unknown device 'tpu9'; allowed: "),
        ("[hardware]\nparams = { rows = -5 }", "hardware.params", "rows"),
        ("[hardware]\nparams = { rowz = 5 }", "hardware.params.rowz", "unknown parameter"),
        (
            '[sim]\npreemption_point = "bogus"',
            "sim.preemption_point",
            "invalid value 'bogus'; allowed: tile, layer",
        ),
        ('[sim]\ncheckpoint_cost = "maybe"', "sim.checkpoint_cost", "valid boolean"),
        ('[sim]\npredictor = "crystal-ball"', "sim.predictor", "allowed: oracle, prema"),
        ("[sim]\nfoo = 1", "sim.foo", "unknown key; allowed: preemption_point"),
        ("[metrics]\nsla_n = [-2]", r"metrics.sla_n\[0\]", "greater than 0"),
        ("[metrics]\npercentiles = [150]", r"metrics.percentiles\[0\]", "less than or equal"),
        ("bogus = 2", "bogus", "unknown key; allowed: name, seed, hardware"),
    ],
)
def test_config_errors_name_file_and_field(
    tmp_path: Path, extra: str, field: str, pattern: str
) -> None:
    # top-level keys go before the first table; everything else after BASE (into [workload]
    # or a new table)
    text = extra + "\n" + BASE if field == "bogus" else BASE + extra + "\n"
    _expect_error(_write(tmp_path, text), field, pattern)


@pytest.mark.parametrize(
    ("workload", "field", "pattern"),
    [
        (
            'kind = "prema"\nmodels = ["resnet-5000"]\nwindow_s = 1',
            "workload.models",
            "unknown network 'resnet-5000'; allowed: .*resnet-50",
        ),
        (
            'kind = "prema"\nmodels = ["resnet-50"]\nwindow_s = -1',
            "workload.window_s",
            "greater than or equal to 0",
        ),
        (
            'kind = "prema"\nmodels = ["resnet-50"]\nwindow_s = "abc"',
            "workload.window_s",
            "valid number",
        ),
        (
            'kind = "prema"\nmodels = ["resnet-50"]\nwindow_s = 1\nn_tasks = 3.5',
            "workload.n_tasks",
            "valid integer",
        ),
        (
            'kind = "prema"\nmodels = ["resnet-50"]\nwindow_s = 1\npriorities = ["urgent"]',
            r"workload.priorities\[0\]",
            "allowed: low, medium, high",
        ),
        ('kind = "prema"\nmodels = ["resnet-50"]', "workload.window_s", "missing required key"),
        ('kind = "nope"', "workload.kind", "unknown kind 'nope'; allowed: prema, poisson, trace"),
        ("models = []", "workload.kind", "missing; allowed: prema, poisson, trace"),
        (
            'kind = "poisson"\nmodels = ["resnet-50"]\nrate_per_s = 5',
            "workload",
            "exactly one of duration_s and n_requests",
        ),
        (
            'kind = "poisson"\nmodels = ["resnet-50"]\nrate_per_s = 0\nn_requests = 3',
            "workload.rate_per_s",
            "greater than 0",
        ),
        (
            'kind = "poisson"\nmodels = ["resnet-50"]\nrate_per_s = 5\nn_requests = 3\n'
            "priorities = [5, 2]",
            "workload",
            r"lo <= hi",
        ),
        (
            'kind = "poisson"\nmodels = ["resnet-50"]\nrate_per_s = 5\nn_requests = 3\n'
            "qos = { resnet-5 = 0.1 }",
            "workload.qos",
            "unknown network 'resnet-5'",
        ),
        (
            'kind = "poisson"\nmodels = ["resnet-50"]\nrate_per_s = 5\nn_requests = 3\n'
            "weights = [1, 2]",
            "workload",
            "weights has 2 entries; models has 1",
        ),
        ('kind = "trace"', "workload.path", "missing required key"),
        # unions report the branch the value was meant for
        (
            'kind = "poisson"\nmodels = ["resnet-50"]\nrate_per_s = 5\nn_requests = 3\n'
            "qos = { resnet-50 = -1 }",
            "workload.qos.resnet-50",
            "greater than 0",
        ),
        (
            'kind = "poisson"\nmodels = ["resnet-50"]\nrate_per_s = 5\nn_requests = 3\nqos = -3',
            "workload.qos",
            "greater than 0",
        ),
    ],
)
def test_workload_errors(tmp_path: Path, workload: str, field: str, pattern: str) -> None:
    _expect_error(_write(tmp_path, f"[workload]\n{workload}\n"), field, pattern)


def test_file_level_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="config file not found"):
        load_config(tmp_path / "missing.toml")
    with pytest.raises(ConfigError, match=r"allowed: \.toml, \.yaml, \.yml"):
        load_config(_write(tmp_path, "{}", "cfg.json"))
    with pytest.raises(ConfigError, match=r"cfg\.toml: TOML syntax error: .*line 1"):
        load_config(_write(tmp_path, "[workload\n"))
    with pytest.raises(
        ConfigError, match=r"cfg\.yaml: YAML syntax error \(line \d+, column \d+\): "
    ):
        load_config(_write(tmp_path, "workload: [kind: prema\n", "cfg.yaml"))
    with pytest.raises(ConfigError, match=r"\(top level\): expected a mapping"):
        load_config(_write(tmp_path, "- 1\n- 2\n", "cfg.yaml"))
    with pytest.raises(ConfigError, match="workload: missing required key"):
        load_config(_write(tmp_path, "", "cfg.yaml"))
    for bad in (_write(tmp_path, "[workload\n"), tmp_path / "missing.toml"):
        with pytest.raises(ConfigError) as info:
            load_config(bad)
        assert "\n" not in str(info.value)
