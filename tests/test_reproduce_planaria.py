"""``reproduce planaria``: Fig. 17 (isolated speedup and energy of fission over the monolithic
array) and the summary.json contract."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from npusched.cli import main
from npusched.experiments.reproduce.planaria import isolated_comparison, reproduce
from npusched.hardware.energy import EnergyModel
from npusched.hardware.fission import FissionArray
from npusched.models.zoo import get_network


def test_isolated_comparison_depthwise_gains_most() -> None:
    df = isolated_comparison(["resnet-50", "mobilenet-v1"])
    by = df.set_index("network")
    assert bool(by.loc["mobilenet-v1", "depthwise"]) and not by.loc["resnet-50", "depthwise"]
    assert (df.isolated_speedup > 1).all() and (df.isolated_energy_ratio > 1).all()
    assert by.loc["mobilenet-v1", "isolated_speedup"] > 4 * by.loc["resnet-50", "isolated_speedup"]
    # the fission latency is the 16-subarray profile's sum of layer times
    net = get_network("resnet-50")
    cyc = FissionArray().layer_costs(net, 1, subarrays=16).cycles.sum()
    assert by.loc["resnet-50", "planaria_ms"] == pytest.approx(cyc / 700e6 * 1e3)
    assert df.isolated_speedup.tolist() == pytest.approx(
        (df.monolithic_ms / df.planaria_ms).tolist()
    )


def test_energy_ratio_follows_the_model() -> None:
    # with only the array term, the energy ratio is the speedup x the powered-PE ratio (1:1)
    pe_only = EnergyModel(
        vector_op_pj=0.0, sram_pj_per_byte=0.0, dram_pj_per_bit=0.0, ring_pj_per_bit_hop=0.0
    )
    df = isolated_comparison(["alexnet"], energy=pe_only)
    net = get_network("alexnet")
    gemm = net.columns["is_gemm"].astype(bool)
    from npusched.hardware.systolic import SystolicArray

    mono = SystolicArray().layer_costs(net, 1).cycles[gemm].sum()
    fis = FissionArray().layer_costs(net, 1).cycles[gemm].sum()
    assert df.isolated_energy_ratio[0] == pytest.approx(mono / fis)


def test_reproduce_writes_summary(tmp_path: Path) -> None:
    summary = reproduce(tmp_path, plots=False, networks=["tiny-yolov3", "mobilenet-v1"])
    doc = json.loads((tmp_path / "summary.json").read_text())
    assert doc == json.loads(json.dumps(summary))
    for key in ("isolated_speedup", "isolated_energy_ratio"):
        assert set(doc[key]) == {"tiny-yolov3", "mobilenet-v1"}
        assert all(v > 1 for v in doc[key].values())
    assert doc["headline"]["isolated_speedup_mean"]["paper"] == 3.5
    assert "pending" in doc["multi_tenant"]["status"]
    assert (tmp_path / "fig17.csv").exists() and (tmp_path / "report.md").exists()
    # deterministic: a second run gives the same numbers
    assert reproduce(tmp_path, plots=False, networks=["tiny-yolov3", "mobilenet-v1"]) == summary


@pytest.mark.slow
def test_cli_reproduce_planaria(tmp_path: Path) -> None:
    assert main(["reproduce", "planaria", "--out", str(tmp_path)]) == 0
    doc = json.loads((tmp_path / "summary.json").read_text())
    assert len(doc["isolated_speedup"]) == 9 and len(doc["isolated_energy_ratio"]) == 9
    assert (tmp_path / "fig17_speedup.png").exists()
