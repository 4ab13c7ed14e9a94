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
    assert "workloads" not in doc  # the multi-tenant part runs only when asked
    assert (tmp_path / "fig17.csv").exists() and (tmp_path / "report.md").exists()
    # deterministic: a second run gives the same numbers
    assert reproduce(tmp_path, plots=False, networks=["tiny-yolov3", "mobilenet-v1"]) == summary


@pytest.mark.slow
def test_cli_reproduce_planaria(tmp_path: Path) -> None:
    assert main(["reproduce", "planaria", "--out", str(tmp_path)]) == 0
    doc = json.loads((tmp_path / "summary.json").read_text())
    assert len(doc["isolated_speedup"]) == 9 and len(doc["isolated_energy_ratio"]) == 9
    assert (tmp_path / "fig17_speedup.png").exists()


# --- multi-tenant harness ----------------------------------------------------------------------
def test_workload_instances_common_random_numbers() -> None:
    from npusched.experiments.reproduce.planaria import MultiTenantSetup, workload_instance

    st = MultiTenantSetup(n_requests=50, seed=3)
    a = workload_instance(st, "C", "M", 10.0)
    b = workload_instance(st, "C", "M", 20.0)
    # a rate only rescales the gaps: same networks and priorities, arrivals halved
    assert [r.network for r in a] == [r.network for r in b]
    assert [r.priority for r in a] == [r.priority for r in b]
    assert [r.arrival_s / 2 for r in a] == pytest.approx([r.arrival_s for r in b])
    assert workload_instance(st, "C", "M", 10.0, 1) != a
    assert workload_instance(MultiTenantSetup(n_requests=50, seed=4), "C", "M", 10.0) != a


def test_fixed_rate_point_with_a_fake_system() -> None:
    import pandas as pd

    from npusched.experiments.reproduce.planaria import MultiTenantSetup, fixed_rate_point

    def fake(requests: list) -> pd.DataFrame:
        # every request takes half its QoS bound, except ids divisible by 7 (twice it: late)
        return pd.DataFrame(
            {
                "network": [r.network for r in requests],
                "priority": [r.priority for r in requests],
                "slo_s": [r.slo_s for r in requests],
                "isolated_s": [r.slo_s * 0.25 for r in requests],
                "latency_s": [r.slo_s * (2.0 if r.id % 7 == 0 else 0.5) for r in requests],
                "energy_j": 1.0,
            }
        )

    pt = fixed_rate_point(fake, MultiTenantSetup(n_requests=20, instances=3), "A", "S", 5.0)
    assert pt["sla_rate"] == 0.0  # 3 of 20 late: no instance meets 99%
    assert pt["energy_j"] == 20.0
    assert 0 < pt["fairness"] <= 1


def test_prema_throughput_search_deterministic_for_a_seed() -> None:
    from npusched.experiments.reproduce.planaria import (
        MultiTenantSetup,
        prema_simulate,
        throughput_qps,
        workload_instance,
    )

    prema = prema_simulate(["resnet-50", "googlenet", "yolov3", "ssd-resnet34", "gnmt"])
    st = MultiTenantSetup(n_requests=30, rate_tol=0.1)
    h1: list[tuple[float, bool]] = []
    h2: list[tuple[float, bool]] = []
    q1 = throughput_qps(prema, st, "A", "S", history=h1)
    q2 = throughput_qps(prema, st, "A", "S", history=h2)
    assert q1 == q2 and h1 == h2
    assert q1 > 0
    assert any(not met for _, met in h1)  # the search bracketed the answer
    df = prema(workload_instance(st, "A", "S", 5.0))
    assert (df["energy_j"] > 0).all() and (df["latency_s"] >= df["isolated_s"] - 1e-12).all()


def test_reproduce_multi_tenant(tmp_path: Path) -> None:
    from npusched.experiments.reproduce.planaria import MultiTenantSetup

    st = MultiTenantSetup(n_requests=20, instances=2, rate_tol=0.2)
    doc = reproduce(
        tmp_path,
        plots=False,
        networks=["tiny-yolov3"],
        multi_tenant=True,
        setup=st,
        scenarios=["A"],
        qos_levels=["S"],
    )
    point = doc["workloads"]["A"]["S"]
    assert point["throughput_qps"]["prema"] > 0
    assert point["throughput_qps"]["planaria"] > point["throughput_qps"]["prema"]
    for key in ("sla_rate", "fairness", "energy_j"):
        assert set(point[key]) == {"prema", "planaria"}
    assert "throughput x" in (tmp_path / "report.md").read_text()
    nodes = point["nodes_for_sla"]["planaria"]
    assert nodes is None or 1 <= nodes <= st.max_nodes
    assert doc["multi_tenant"]["setup"]["n_requests"] == 20
    assert json.loads((tmp_path / "summary.json").read_text())["workloads"] == doc["workloads"]


def test_nodes_for_sla_with_a_fake_system() -> None:
    import pandas as pd

    from npusched.experiments.reproduce.planaria import MultiTenantSetup, nodes_for_sla

    def fake(requests: list) -> pd.DataFrame:
        # a node meets every QoS bound while it serves at most 10 requests, none beyond
        scale = len(requests) / 10.0
        return pd.DataFrame(
            {
                "network": [r.network for r in requests],
                "latency_s": [r.slo_s * scale for r in requests],
                "slo_s": [r.slo_s for r in requests],
            }
        )

    st = MultiTenantSetup(n_requests=35, instances=2)
    assert nodes_for_sla(fake, st, "B", "S", 50.0) == 4  # 35 requests round-robin: 9 per node
    assert nodes_for_sla(fake, st, "B", "S", 50.0, max_nodes=3) is None
