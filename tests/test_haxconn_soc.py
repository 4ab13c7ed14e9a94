"""HaX-CoNN SoC model: paper tables, roofline generator, layer grouping, CSV import, contention."""

from __future__ import annotations

import io

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from npusched.errors import NpuschedError, UnknownNameError
from npusched.hardware.contention import PccsContention
from npusched.hardware.soc import (
    SOCS,
    ProfileFormatError,
    generate_profile,
    get_soc,
    group_layers,
    load_profile_csv,
    profile_to_csv_rows,
    table2_profile,
    table5_times,
    transition_points,
)
from npusched.models.zoo import get_network

HEADER = "network,group,first_layer,last_layer,accelerator,time_ms,out_ms,in_ms,mem_gbps\n"


def test_soc_bandwidths_table4() -> None:
    assert SOCS["orin"].memory_bandwidth_bps == 204.8e9
    assert SOCS["xavier"].memory_bandwidth_bps == 136.5e9
    assert SOCS["snapdragon-865"].memory_bandwidth_bps == 34.1e9
    assert get_soc("SNAPDRAGON-865").accelerators == ("GPU", "DSP")
    with pytest.raises(UnknownNameError, match="allowed: orin"):
        get_soc("tegra")


def test_table2_golden() -> None:
    p = table2_profile()
    assert p.n_groups == 10 and p.accelerators == ("GPU", "DLA")
    assert p.time_s[:, 0].sum() == pytest.approx(2.32e-3)
    # Table 2's fourth column (D/G ratio), to its printed precision
    ratio = [1.65, 1.80, 1.44, 2.02, 1.98, 1.96, 1.50, 1.40, 1.66, 1.49]
    np.testing.assert_allclose(p.time_s[:, 1] / p.time_s[:, 0], ratio, atol=0.07)
    assert p.out_s[0, 0] == pytest.approx(0.056e-3) and p.out_s[0, 1] == pytest.approx(0.15e-3)
    assert p.mem_bps[2, 0] == pytest.approx(0.7849 * 136.5e9)
    # the DLA moves the same bytes over its longer time
    np.testing.assert_allclose(p.mem_bps[:, 1] * p.time_s[:, 1], p.mem_bps[:, 0] * p.time_s[:, 0])


def test_table5_calibration() -> None:
    t5 = table5_times()
    assert len(t5) == 10 and "xavier_dla" not in t5["densenet-121"]
    for net in ("googlenet", "resnet-101", "vgg-19"):
        for soc in ("orin", "xavier"):
            p = generate_profile(get_network(net), soc)
            assert p.standalone_s(0) == pytest.approx(t5[net][f"{soc}_gpu"])
            assert p.standalone_s(1) == pytest.approx(t5[net][f"{soc}_dla"])


def test_generated_profile_shape_and_invariants() -> None:
    net = get_network("googlenet")
    p = generate_profile(net, "orin", n_groups=10)
    assert p.n_groups == 10
    assert p.bounds[0][0] == 0 and p.bounds[-1][1] == len(net) - 1
    for (_, e), (s, _) in zip(p.bounds, p.bounds[1:], strict=False):
        assert s == e + 1
    ratio = p.time_s[:, 1] / p.time_s[:, 0]
    assert ratio.min() < ratio.max()  # per-group heterogeneity, the paper's premise
    caps = np.array([r.bandwidth_fraction for r in SOCS["orin"].rooflines]) * 204.8e9
    assert np.all(p.mem_bps <= caps + 1e-6) and np.all(p.out_s > 0)
    # a network without a Table 5 row still gets a profile (SoC median scale)
    q = generate_profile(get_network("fcn-resnet18"), "xavier")
    assert q.standalone_s(0) > 0
    s = generate_profile(get_network("resnet-101"), "snapdragon-865")
    assert s.standalone_s(1) == pytest.approx(79.1e-3)


def test_transition_points_respect_blocks_and_fusion() -> None:
    net = get_network("resnet-18")
    pts = set(transition_points(net).tolist())
    for i in pts:
        # no edge other than layer i's output crosses the cut
        for d in range(i + 2, len(net)):
            for src in net.layers[d].inputs:
                assert net.index(src) > i or net.index(src) == i or d <= i
    names = {net.layers[i].name for i in pts}
    assert "layer1_0_conv1" not in names  # inside a residual block
    assert "layer1_0_add" in names  # block boundary
    assert len(net) - 1 not in pts
    gn = get_network("googlenet")
    for i in transition_points(gn):
        nxt = gn.layers[i + 1]
        assert not (nxt.kind.value in ("act", "vector") and nxt.inputs == (gn.layers[i].name,))


@pytest.mark.parametrize("n", [1, 3, 10, 1000])
def test_group_layers_partition(n: int) -> None:
    net = get_network("inception-v4")
    groups = group_layers(net, n)
    assert len(groups) <= n
    flat = [i for s, e in groups for i in range(s, e + 1)]
    assert flat == list(range(len(net)))
    allowed = set(transition_points(net).tolist())
    assert all(e in allowed for _, e in groups[:-1])


def test_coarsen_and_repeat_conserve() -> None:
    p = table2_profile()
    c = p.coarsen(3)
    assert c.n_groups == 3
    np.testing.assert_allclose(c.time_s.sum(axis=0), p.time_s.sum(axis=0))
    np.testing.assert_allclose((c.mem_bps * c.time_s).sum(axis=0), (p.mem_bps * p.time_s).sum(axis=0))
    r = p.repeat(3)
    assert r.n_groups == 30 and r.standalone_s(0) == pytest.approx(3 * p.standalone_s(0))


def test_csv_roundtrip() -> None:
    p = table2_profile()
    body = "".join(",".join(map(str, row)) + "\n" for row in profile_to_csv_rows(p))
    got = load_profile_csv(io.StringIO("# measured\n" + HEADER + body), "xavier")["googlenet"]
    np.testing.assert_allclose(got.time_s, p.time_s, rtol=1e-5)
    np.testing.assert_allclose(got.mem_bps, p.mem_bps, rtol=1e-5)
    assert got.bounds == p.bounds


@pytest.mark.parametrize(
    ("body", "match"),
    [
        ("x,0,0,9,GPU,abc,0,0,1\nx,0,0,9,DLA,1,0,0,1\n", r"<csv>:2: time_ms='abc'; expected a number"),
        ("x,0,0,9,GPU,-1,0,0,1\n", r"time_ms='-1'; allowed: > 0"),
        ("x,0,0,9,NPU,1,0,0,1\n", r"accelerator='NPU'; allowed on xavier: GPU, DLA"),
        ("x,0,0,9,GPU,1,0,0,1\n", r"group 0: no row for accelerator DLA"),
        ("x,0,0,9,GPU,1,0,0,1\nx,0,0,9,GPU,1,0,0,1\n", r":3: duplicate row"),
        ("x,1,0,9,GPU,1,0,0,1\nx,1,0,9,DLA,1,0,0,1\n", r"must be 0..0"),
        ("x,0,5,2,GPU,1,0,0,1\n", r"last_layer=2 < first_layer=5"),
        ("x,0,0,9,GPU,1,0\n", r":2: 7 fields, header has 9"),
        ("x,0,0,9,GPU,1,0,0,1\nx,0,0,8,DLA,1,0,0,1\n", r"layers 0-8 differ"),
    ],
)
def test_csv_errors_one_line(body: str, match: str) -> None:
    with pytest.raises(ProfileFormatError, match=match) as ei:
        load_profile_csv(io.StringIO(HEADER + body), "xavier")
    assert "\n" not in str(ei.value)
    assert isinstance(ei.value, NpuschedError)


def test_csv_missing_column_and_file(tmp_path: object) -> None:
    with pytest.raises(ProfileFormatError, match="missing column"):
        load_profile_csv(io.StringIO("network,group\n"), "orin")
    with pytest.raises(ProfileFormatError, match="cannot read"):
        load_profile_csv("/nonexistent/profile.csv", "orin")


def test_pccs_regions() -> None:
    m = PccsContention()
    assert m.slowdown(0.7, 0.0) == 1.0 and m.slowdown(0.0, 0.9) == 1.0
    light, heavy, sat = m.slowdown([0.3, 0.6, 0.8], [0.3, 0.6, 0.8])
    assert light < 1.05 and 1.2 < heavy < 1.5 and sat > 1.6
    with pytest.raises(NpuschedError, match="knee"):
        PccsContention(knee=1.5).slowdown(0.1, 0.1)


@settings(max_examples=60, deadline=None)
@given(
    st.floats(0, 1.2), st.floats(0, 1.2), st.floats(0, 0.5)
)
def test_pccs_monotone(d: float, e: float, de: float) -> None:
    m = PccsContention()
    s = float(m.slowdown(d, e))
    assert s >= 1.0
    assert float(m.slowdown(d, e + de)) >= s - 1e-12
    assert float(m.slowdown(d + de, e)) >= s - 1e-12


def test_soc_device_plan_variants() -> None:
    from npusched.hardware.base import Device
    from npusched.hardware.soc import SocDevice

    dev = SocDevice(soc="xavier")
    assert isinstance(dev, Device)
    assert dev.variant_axes == {"accelerator": ("GPU", "DLA")}
    assert "GPU" not in dev.cache_key() and "DLA" not in dev.cache_key()
    assert dev.name == "soc"
    net = get_network("resnet-50")
    gpu = dev.layer_costs(net, 1, accelerator="GPU")
    dla = dev.layer_costs(net, 2, accelerator="dla")
    assert gpu.latency_s.sum() == pytest.approx(2.88e-3)
    assert dla.latency_s.sum() == pytest.approx(2 * 6.01e-3)
    with pytest.raises(UnknownNameError, match="allowed: DLA, GPU"):
        dev.layer_costs(net, 1, accelerator="NPU")
