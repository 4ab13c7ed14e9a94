"""End to end: ``npusched run`` for every policy family - machine policies (Planaria on the
fission array), temporal policies on any device, and a power cap (DFS / DVFS on AB9) - with the
machine, plan-axis and power config sections validated as one-line errors."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from npusched.cli import main
from npusched.experiments.config import axes_for, load_config, machine_for, parse_config
from npusched.experiments.runner import run_config
from npusched.hardware import compile_profile, get_device
from npusched.metrics import read_records
from npusched.models import get_network

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"

PLANARIA = """seed = 3
[hardware]
device = "planaria"
[workload]
kind = "poisson"
rate_per_s = 200.0
n_requests = 24
models = ["mobilenet-v1", "resnet-50", "tiny-yolov3"]
priorities = [1, 11]
qos = { mobilenet-v1 = 0.01, resnet-50 = 0.015, tiny-yolov3 = 0.01 }
[policy]
name = "Planaria"
[metrics]
sla_n = [2, 4]
"""

CAPPED = """seed = 1
power = { name = "DFS", cap_w = 30 }
[hardware]
device = "ab9"
params = { stc_efficiency = 0.03 }
[workload]
kind = "prema"
n_tasks = 6
models = ["squeezenet", "resnet-18"]
window_s = 0.02
batch_sizes = [1]
[policy]
name = "P-PREMA"
[metrics]
sla_n = [2, 4]
"""


def _cfg(tmp_path: Path, text: str, name: str = "cfg.toml") -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


def _run(cfg: Path, out: Path, *extra: str) -> int:
    return main(["run", str(cfg), "--out", str(out), "--quiet", *extra])


def test_planaria_run_end_to_end(tmp_path: Path) -> None:
    cfg = _cfg(tmp_path, PLANARIA)
    a, b = tmp_path / "a", tmp_path / "b"
    assert _run(cfg, a, "--timeline") == 0 and _run(cfg, b) == 0
    summary = json.loads((a / "summary.json").read_text())
    assert summary["n_requests"] == 24 and summary["n_unfinished"] == 0
    assert summary["energy_j"] > 0 and summary["peak_power_w"] > 0
    assert 0 < summary["avg_power_w"] <= summary["peak_power_w"]
    # deterministic: the same config gives the same summary
    assert (a / "summary.json").read_bytes() == (b / "summary.json").read_bytes()
    rec = read_records(a / "records.parquet")
    assert (rec["resource"] == "array").all()
    # no request beats its latency alone on all 16 subarrays
    dev = get_device("planaria")
    iso16 = [
        compile_profile(get_network(n), dev).isolated_latency(1, subarrays=16)
        for n in rec["network"]
    ]
    assert (rec["latency_s"].to_numpy() >= np.asarray(iso16) * (1 - 1e-9)).all()
    # QoS given in seconds: slo_s carried to the records
    assert set(rec["slo_s"].round(6)) <= {0.01, 0.015}


def test_planaria_colocates_and_uses_the_fission_machine(tmp_path: Path) -> None:
    cfg = parse_config(__import__("tomllib").loads(PLANARIA), source="p")
    out = run_config(cfg, timeline=True)
    tl = out.result.timeline
    assert tl is not None
    runs = sorted((s.start_s, s.end_s, s.units) for s in tl if s.kind == "run")
    assert {u for *_, u in runs} - {16}, "every job ran on all 16 subarrays: no fission"
    assert max(u for *_, u in runs) <= 16


def test_temporal_policy_on_planaria_holds_all_16_subarrays() -> None:
    text = PLANARIA.replace('name = "Planaria"', 'name = "NP-FCFS"')
    cfg = parse_config(__import__("tomllib").loads(text), source="p")
    dev = get_device("planaria")
    machine = machine_for(cfg, dev)
    assert machine.resources[0].capacity == 16 and machine.resources[0].units_axis == "subarrays"
    out = run_config(cfg)
    rec = out.records
    iso16 = [
        compile_profile(get_network(n), dev).isolated_latency(1, subarrays=16)
        for n in rec["network"]
    ]
    np.testing.assert_allclose(rec["isolated_s"].to_numpy(), iso16, rtol=1e-12)


def test_capped_run_never_exceeds_the_cap(tmp_path: Path) -> None:
    cfg = _cfg(tmp_path, CAPPED)
    out = tmp_path / "o"
    assert _run(cfg, out) == 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["n_unfinished"] == 0
    assert 24.0 < summary["peak_power_w"] <= 30.0 + 1e-9  # AB9 idle power is 24 W
    assert 24.0 <= summary["avg_power_w"] <= summary["peak_power_w"]
    # the uncapped run is faster and draws more
    loose = _cfg(tmp_path, CAPPED.replace("cap_w = 30", "cap_w = 1000"), "loose.toml")
    assert _run(loose, tmp_path / "l") == 0
    s2 = json.loads((tmp_path / "l" / "summary.json").read_text())
    assert s2["peak_power_w"] > 30.0
    assert s2["mean_latency_s"] < summary["mean_latency_s"]


def test_dvfs_needs_dvfs_voltages(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = CAPPED.replace('name = "DFS"', 'name = "DVFS"')
    assert _run(_cfg(tmp_path, bad), tmp_path / "o") == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "hardware.params.voltage_v" in err[0] and "dvfs" in err[0]
    good = bad.replace("stc_efficiency = 0.03", 'stc_efficiency = 0.03, voltage_v = "dvfs"')
    assert _run(_cfg(tmp_path, good, "g.toml"), tmp_path / "g") == 0
    summary = json.loads((tmp_path / "g" / "summary.json").read_text())
    assert summary["peak_power_w"] <= 30.0 + 1e-9


def test_uncapped_ab9_runs_at_its_own_clock() -> None:
    cfg = parse_config(
        __import__("tomllib").loads(CAPPED.replace('power = { name = "DFS", cap_w = 30 }\n', "")),
        source="p",
    )
    dev = get_device("ab9", stc_efficiency=0.03)
    assert axes_for(cfg, dev) == {"frequency_hz": (1e9,)}
    out = run_config(cfg)
    iso = [
        compile_profile(get_network(n), dev).isolated_latency(1, frequency_hz=1e9)
        for n in out.records["network"]
    ]
    np.testing.assert_allclose(out.records["isolated_s"].to_numpy(), iso, rtol=1e-12)


@pytest.mark.parametrize(
    ("text", "where", "msg"),
    [
        (
            PLANARIA.replace('device = "planaria"', 'device = "prema-npu"'),
            "policy.name",
            "units_axis is 'subarrays'",
        ),
        (
            PLANARIA + '[machine]\nresources = [{ name = "a" }, { name = "b" }]\n',
            "policy.name",
            "",
        ),
        (
            PLANARIA.replace('name = "Planaria"', 'name = "P-HPF"')
            + '[machine]\nresources = [{ name = "a" }, { name = "b" }]\n',
            "machine.resources",
            "temporal policy",
        ),
        (
            PLANARIA + '[machine]\nresources = [{ name = "a", capacity = 32, '
            'units_axis = "subarrays" }]\n',
            "machine.resources[0].capacity",
            "no subarrays=17",
        ),
        (
            PLANARIA + '[machine]\nresources = [{ name = "a", units_axis = "freq" }]\n',
            "machine.resources[0].units_axis",
            "no plan axis 'freq'; allowed: subarrays",
        ),
        (
            PLANARIA + '[machine]\nresources = [{ name = "a" }, { name = "a" }]\n',
            "machine.resources",
            "appears twice",
        ),
        (
            PLANARIA + '[machine]\nresources = [{ name = "a", colour = 1 }]\n',
            "machine.resources[0].colour",
            "unknown key",
        ),
        (
            PLANARIA.replace(
                'device = "planaria"', 'device = "planaria"\naxes = { subarrays = [1, 99] }'
            ),
            "hardware.axes.subarrays",
            "99 not offered",
        ),
        (
            PLANARIA.replace(
                'device = "planaria"', 'device = "planaria"\naxes = { subarrays = [1, 16] }'
            ),
            "hardware.axes.subarrays",
            "2 is missing",
        ),
        (
            PLANARIA.replace('device = "planaria"', 'device = "planaria"\naxes = { volts = [1] }'),
            "hardware.axes.volts",
            "allowed: subarrays",
        ),
        (CAPPED.replace('"DFS"', '"XFS"'), "power", "unknown power policy 'XFS'; allowed: DFS"),
        (CAPPED.replace("cap_w = 30", "cap_w = -3"), "power", "cap_w=-3"),
        (CAPPED.replace("cap_w = 30", "cap_x = 3"), "power", "unknown parameter 'cap_x'"),
        (
            CAPPED.replace('device = "ab9"', 'device = "prema-npu"').replace(
                "params = { stc_efficiency = 0.03 }", ""
            ),
            "power",
            "no frequency_hz plan axis",
        ),
        (PLANARIA.replace('"Planaria"', '"Planarya"'), "policy.name", "allowed: .*Planaria"),
    ],
)
def test_config_errors_are_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, where: str, msg: str
) -> None:
    cfg = _cfg(tmp_path, text)
    assert _run(cfg, tmp_path / "o") == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    assert err[0].startswith(f"npusched: error: {cfg}: {where}"), err[0]
    import re

    assert re.search(msg, err[0]), err[0]
    assert not (tmp_path / "o").exists()


def test_examples_parse_and_planaria_example_runs(tmp_path: Path) -> None:
    for name in ("planaria_workload_c.toml", "prema_dfs_ab9.toml"):
        load_config(EXAMPLES / name)
    assert _run(EXAMPLES / "prema_dfs_ab9.toml", tmp_path / "d") == 0
    s = json.loads((tmp_path / "d" / "summary.json").read_text())
    assert s["n_unfinished"] == 0 and s["peak_power_w"] <= 33.0 + 1e-9


@pytest.mark.slow
def test_planaria_example_runs(tmp_path: Path) -> None:
    assert _run(EXAMPLES / "planaria_workload_c.toml", tmp_path / "p") == 0
    s = json.loads((tmp_path / "p" / "summary.json").read_text())
    assert s["n_requests"] == 200 and s["n_unfinished"] == 0


def test_power_as_a_table_and_yaml_machine(tmp_path: Path) -> None:
    """``[power]`` as a table equals the inline form; a YAML config with a ``machine``."""
    table = CAPPED.replace('power = { name = "DFS", cap_w = 30 }\n', "") + (
        '[power]\nname = "DFS"\ncap_w = 30\n'
    )
    a = load_config(_cfg(tmp_path, table, "t.toml"))
    b = load_config(_cfg(tmp_path, CAPPED, "i.toml"))
    assert a.power == b.power == {"name": "DFS", "cap_w": 30}
    yaml_text = """seed: 3
hardware: {device: planaria}
machine:
  resources:
    - {name: array, kind: fission-array, capacity: 8, units_axis: subarrays}
workload:
  kind: poisson
  rate_per_s: 300.0
  n_requests: 10
  models: [mobilenet-v1, tiny-yolov3]
policy: {name: Planaria}
"""
    cfg = load_config(_cfg(tmp_path, yaml_text, "m.yaml"))
    out = run_config(cfg, timeline=True)
    assert out.summary["n_unfinished"] == 0
    assert out.result.timeline is not None
    assert max(s.units for s in out.result.timeline) <= 8


@pytest.mark.parametrize("name", ["FluidB", "AdaptB", "SERIAL", "LazyBatching"])
def test_batching_policies_run_from_a_config(name: str) -> None:
    """The batching machine policies merge requests into batches of up to ``b_max``: their
    profiles are compiled for batch sizes 1..b_max."""
    params = "" if name == "SERIAL" else "params = { slo_s = 0.05 }\n"
    text = (
        'seed = 0\n[workload]\nkind = "poisson"\nrate_per_s = 400.0\nn_requests = 40\n'
        f'models = ["resnet-18"]\n[policy]\nname = "{name}"\n{params}'
    )
    out = run_config(parse_config(__import__("tomllib").loads(text), source="b"))
    assert out.summary["n_unfinished"] == 0 and out.summary["n_requests"] == 40
    if name != "SERIAL":
        assert out.records["latency_s"].min() > 0


HAXCONN = """seed = 0
[hardware]
device = "soc"
params = { soc = "xavier" }
[workload]
kind = "poisson"
rate_per_s = 50.0
n_requests = 4
models = ["resnet-18", "googlenet"]
[policy]
name = "HaX-CoNN"
params = { soc = "xavier" }
[sim]
checkpoint_cost = false
"""


def test_haxconn_runs_on_the_soc_machine_the_device_implies(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cfg = parse_config(__import__("tomllib").loads(HAXCONN), source="h")
    machine = machine_for(cfg, get_device("soc", soc="xavier"))
    assert machine.names == ("GPU", "DLA")
    assert [dict(r.fixed) for r in machine.resources] == [
        {"accelerator": "GPU"},
        {"accelerator": "DLA"},
    ]
    out = run_config(cfg)
    assert out.summary["n_unfinished"] == 0
    assert set(out.records["resource"]) <= {"GPU", "DLA"}
    bad = _cfg(tmp_path, HAXCONN.replace('params = { soc = "xavier" }\n[sim]', "[sim]"))
    assert _run(bad, tmp_path / "o") == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "policy.params.soc: 'orin', but the device is SoC 'xavier'" in err[0]
