"""FissionArray (Planaria's 16 x 32x32 array): configurations, per-layer tables, depthwise
gains, the subarrays axis, the 45 nm energy model (hand checks) and ``profile --subarrays``."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from npusched.cli import main
from npusched.errors import HardwareConfigError
from npusched.hardware import DEVICES, get_device
from npusched.hardware.energy import EnergyModel, systolic_energy_j
from npusched.hardware.fission import FissionArray, fission_configs
from npusched.hardware.profile import compile_profile
from npusched.models import Layer, LayerKind, get_network, make_network

# One subarray's share of Table I's bandwidth: 358 GB/s / 16 at 700 MHz, bytes per cycle.
BPC_1 = 358e9 / 16 / 700e6


def one_layer(m: int, k: int, n: int, groups: int = 1, kind: LayerKind = LayerKind.CONV) -> object:
    layer = Layer("l", kind, m=m, k=k, n=n, groups=groups, output_elems=m * n * groups)
    return make_network("one", [layer])


def depthwise(c: int, hw: int) -> object:
    return one_layer(hw * hw, 9, 1, groups=c, kind=LayerKind.DWCONV)


# --- configurations --------------------------------------------------------------------------
def test_configuration_counts() -> None:
    counts = {n: len(fission_configs(n)) for n in range(1, 17)}
    assert counts[16] == 15  # Table II: 15 fission possibilities for the whole accelerator
    assert counts[8] == 10 and counts[4] == counts[12] == 6 and counts[2] == 3
    assert all(counts[n] == 1 for n in range(1, 17, 2))
    assert sum(counts.values()) == 57
    for n in range(1, 17):
        for k, r, c in fission_configs(n):
            assert k * r * c == n
            assert r & (r - 1) == 0 and c & (c - 1) == 0
    assert fission_configs(3) == ((3, 1, 1),)
    with pytest.raises(HardwareConfigError):
        fission_configs(17)


def test_registered_and_axes() -> None:
    assert "planaria" in DEVICES
    fa = get_device("planaria")
    assert isinstance(fa, FissionArray)
    assert fa.variant_axes == {"subarrays": tuple(range(1, 17))}
    # the axis is per call, not part of the cache key; a bound variant's key has it
    assert fa.cache_key() == FissionArray().cache_key()
    assert fa.variant(subarrays=4).cache_key() != fa.variant(subarrays=8).cache_key()
    assert fa.peak_macs_per_s == pytest.approx(128 * 128 * 700e6)
    for bad in (0, 17, 2.5, True):
        with pytest.raises(HardwareConfigError, match="subarrays"):
            fa.layer_costs(get_network("alexnet"), 1, subarrays=bad)  # type: ignore[arg-type]
    with pytest.raises(HardwareConfigError, match="FissionArray: num_subarrays"):
        FissionArray(num_subarrays=15, pods=4)
    with pytest.raises(HardwareConfigError, match="FissionArray: subarray_rows"):
        FissionArray(subarray_rows=0)


# --- per-layer tables ------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["resnet-50", "mobilenet-v1", "gnmt", "efficientnet-b0"])
def test_n16_never_slower_than_n1(name: str) -> None:
    fa = FissionArray()
    net = get_network(name)
    c1 = fa.layer_costs(net, 1, subarrays=1).cycles
    c16 = fa.layer_costs(net, 1, subarrays=16).cycles
    assert (c16 <= c1).all()
    assert c16.sum() * 8 < c1.sum()  # 16 subarrays give a large total gain


@settings(max_examples=25, deadline=None)
@given(
    m=st.integers(1, 5000),
    k=st.integers(1, 600),
    n=st.integers(1, 600),
    doubling=st.sampled_from([(1, 2), (2, 4), (4, 8), (8, 16), (1, 16)]),
)
def test_doubling_power_of_two_never_slower(
    m: int, k: int, n: int, doubling: tuple[int, int]
) -> None:
    # n -> 2n over powers of two: every configuration of n doubles into one of 2n (k -> 2k)
    # with the same per-copy bandwidth and a smaller share of the work.
    fa = FissionArray()
    net = one_layer(m, k, n)
    lo, hi = doubling
    assert (
        fa.layer_costs(net, 1, subarrays=hi).cycles[0]
        <= fa.layer_costs(net, 1, subarrays=lo).cycles[0]
    )


def test_table_consistent_with_layer_costs() -> None:
    fa = FissionArray()
    net = get_network("mobilenet-v1")
    for n in (1, 6, 16):
        tab = fa.fission_table(net, 1, subarrays=n)
        costs = fa.layer_costs(net, 1, subarrays=n)
        np.testing.assert_array_equal(tab.layer_cycles, costs.cycles)
        np.testing.assert_array_equal(tab.tiles, costs.tiles)
        finite = np.where(np.isfinite(tab.cycles), tab.cycles, np.inf)
        np.testing.assert_array_equal(tab.layer_cycles, finite.min(axis=1))
        df = tab.to_frame()
        assert len(df) == len(net.layers)
        assert {"layer", "config", "cycles", "tiles", "cycles_per_tile"} <= set(df.columns)
        assert sum(c.startswith("time_us[") for c in df.columns) == len(tab.candidates)
        assert (df.cycles_per_tile * df.tiles).round().astype(int).tolist() == df.cycles.tolist()


def test_depthwise_golden_and_gain() -> None:
    """MobileNet's first depthwise layer (32 channels, 112x112, 3x3) by hand on 16 subarrays:
    16 independent 32x32 arrays, 2 channels each (Sec. VI-B2), 7 streamed tiles per channel."""
    fa = FissionArray()
    net = depthwise(32, 112)
    tab = fa.fission_table(net, 1, subarrays=16)
    assert tab.chosen == ("16x1x1/group",)

    def tile(a: int) -> int:
        compute = a + 32 + 2 * 32
        memory = 100 + math.ceil((9 * 1 + 9 * a) * 2 / BPC_1)
        return max(compute, memory)

    per_channel = 6 * tile(2048) + tile(12544 - 6 * 2048)
    assert int(tab.layer_cycles[0]) == 2 * per_channel == 26432
    assert int(tab.tiles[0]) == 14
    mono = get_device("prema-npu").layer_costs(net, 1).cycles[0]
    assert mono / tab.layer_cycles[0] > 12  # up to 16x: one column of 16 subarrays each


def test_depthwise_gains_over_monolithic_networks() -> None:
    fa, sa = FissionArray(), get_device("prema-npu")
    for name, lo in (("mobilenet-v1", 5.0), ("resnet-50", 1.0)):
        net = get_network(name)
        f = fa.layer_costs(net, 1, subarrays=16).cycles
        s = sa.layer_costs(net, 1).cycles
        assert s.sum() / f.sum() > lo
    # depthwise networks gain far more than plain convolutions (Fig. 17)
    mob = get_network("mobilenet-v1")
    res = get_network("resnet-50")
    g_mob = sa.layer_costs(mob, 1).cycles.sum() / fa.layer_costs(mob, 1).cycles.sum()
    g_res = sa.layer_costs(res, 1).cycles.sum() / fa.layer_costs(res, 1).cycles.sum()
    assert g_mob > 3 * g_res


def test_variant_compiles_to_profile() -> None:
    fa = FissionArray()
    net = get_network("resnet-50")
    p4 = compile_profile(net, fa.variant(subarrays=4), (1, 2))
    np.testing.assert_array_equal(p4.cycles[0], fa.layer_costs(net, 1, subarrays=4).cycles)
    p16 = compile_profile(net, fa.variant(subarrays=16), (1,))
    assert p16.isolated_latency(1) < p4.isolated_latency(1)


# --- energy ----------------------------------------------------------------------------------
def test_energy_model_hand_check() -> None:
    m = EnergyModel()
    e = m.layer_energy_j(
        powered_pes=1024,
        gemm_cycles=1000,
        vector_ops=10,
        sram_bytes=100,
        dram_bytes=10,
        ring_bit_hops=1000,
    )
    want = (1024 * 1000 * 1.0 + 10 * 1.0 + 100 * 2.5 + 10 * 8 * 4.0 + 1000 * 0.64) * 1e-12
    assert float(e) == pytest.approx(want)
    with pytest.raises(HardwareConfigError, match="ring_pj_per_bit_hop"):
        EnergyModel(ring_pj_per_bit_hop=-1.0)
    assert EnergyModel() == EnergyModel() and hash(EnergyModel()) == hash(EnergyModel())


def test_fission_energy_hand_check_one_subarray() -> None:
    """A 32x32x32 GEMM on one subarray: one tile, no ring hops; every term by hand."""
    fa = FissionArray()
    net = one_layer(32, 32, 32)
    costs = fa.layer_costs(net, 1, subarrays=1)
    cycles = int(costs.cycles[0])
    loaded = (32 * 32 + 32 * 32) * 2  # weight tile + input tile, 16-bit
    out = 32 * 32 * 2
    assert cycles == max(32 + 96, 100 + math.ceil(loaded / BPC_1))
    sram = 2 * loaded + 2 * 4 * 32 * 32 * 1 + out  # loads in/out, psum RMW, output write
    want = (1024 * cycles * 1.0 + sram * 2.5 + (loaded + out) * 8 * 4.0) * 1e-12
    assert float(costs.energy_j[0]) == pytest.approx(want)
    assert int(costs.bytes_moved[0]) == loaded + out


def test_static_energy_and_fission_overhead_hand_check() -> None:
    """The Planaria model's static term (powered subarrays x seconds x W) and the fission
    overhead (PE term x 1.206), by hand on one layer, on 1 subarray and on 128x128."""
    from npusched.hardware.energy import ARTIFACT_SRAM_LEAK_W, PLANARIA_ENERGY

    assert abs(ARTIFACT_SRAM_LEAK_W - 23.6738) < 1e-3  # the artifact's CACTI-P
    m = EnergyModel.planaria()
    assert m.pe_cycle_pj == pytest.approx(1.365 / 700e6 / 1024 * 1e12)  # 1.904 pJ
    assert m.static_w_per_subarray == pytest.approx(ARTIFACT_SRAM_LEAK_W / 16)
    assert PLANARIA_ENERGY["fission_logic_overhead"] == 0.206
    kw = dict(powered_pes=1024, gemm_cycles=1000, vector_ops=10, sram_bytes=0, dram_bytes=0)
    e = m.layer_energy_j(**kw, ring_bit_hops=0, static_subarray_s=2e-6)  # type: ignore[arg-type]
    want = (1024 * 1000 * m.pe_cycle_pj + 10) * 1e-12 + 2e-6 * 1.4796
    assert float(e) == pytest.approx(want, rel=1e-4)
    f = m.layer_energy_j(**kw, ring_bit_hops=0, fission=True)  # type: ignore[arg-type]
    assert float(f) == pytest.approx((1024 * 1000 * m.pe_cycle_pj + 10) * 1.206 * 1e-12)
    # one 32x32x32 GEMM on one subarray: the default model's energy x the terms above
    net = one_layer(32, 32, 32)
    plain = FissionArray().layer_costs(net, 1, subarrays=1)
    cyc = int(plain.cycles[0])
    fa = FissionArray(energy=EnergyModel(static_w_per_subarray=1.5, fission_logic_overhead=0.2))
    got = float(fa.layer_costs(net, 1, subarrays=1).energy_j[0])
    pe = 1024 * cyc * 1e-12
    assert got == pytest.approx(float(plain.energy_j[0]) + 0.2 * pe + 1.5 * cyc / 700e6)
    # the monolithic array: 16 subarray equivalents leak for every cycle, no overhead
    sa = get_device("prema-npu")
    leaky = EnergyModel(static_w_per_subarray=1.5)
    mono = systolic_energy_j(sa, net, 1, leaky)  # type: ignore[arg-type]
    base = systolic_energy_j(sa, net, 1)  # type: ignore[arg-type]
    mc = int(sa.layer_costs(net, 1).cycles[0])
    assert float(mono[0]) == pytest.approx(float(base[0]) + 16 * 1.5 * mc / 700e6)


def test_ring_energy_and_monolithic_energy() -> None:
    net = get_network("resnet-50")
    with_ring = FissionArray().layer_costs(net, 1).energy_j
    no_ring = FissionArray(energy=EnergyModel(ring_pj_per_bit_hop=0.0)).layer_costs(net, 1)
    assert (with_ring >= no_ring.energy_j - 1e-18).all()
    assert with_ring.sum() > no_ring.energy_j.sum()  # some layers chain subarrays
    sa = get_device("prema-npu")
    e_mono = systolic_energy_j(sa, net, 1)  # type: ignore[arg-type]
    cyc = sa.layer_costs(net, 1).cycles
    gemm = net.columns["is_gemm"].astype(bool)
    # the array term alone: all 16384 PEs for every busy cycle of a GEMM layer
    assert (e_mono[gemm] >= 16384 * cyc[gemm] * 1e-12).all()
    # depthwise networks: fission saves energy (the monolithic array idles 127 columns)
    mob = get_network("mobilenet-v1")
    e_fission = FissionArray().layer_costs(mob, 1).energy_j.sum()
    assert systolic_energy_j(sa, mob, 1).sum() > 4 * e_fission  # type: ignore[arg-type]


# --- CLI -------------------------------------------------------------------------------------
def test_cli_profile_subarrays(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["profile", "mobilenet-v1", "--device", "planaria", "--subarrays", "4"]
    assert main([*argv, "--format", "json", "--no-layers"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["device"] == "planaria[4]"
    net = get_network("mobilenet-v1")
    want = FissionArray().layer_costs(net, 1, subarrays=4).cycles.sum()
    assert doc["totals"][0]["cycles"] == int(want)
    for argv, needle in (
        (["--device", "planaria", "--subarrays", "17"], "1..16"),
        (["--subarrays", "4"], "no subarrays axis"),
    ):
        assert main(["profile", "mobilenet-v1", *argv]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and needle in err[0]


def test_device_protocol_and_params() -> None:
    from npusched.base import clone
    from npusched.hardware import Device

    fa = FissionArray(energy=EnergyModel(dram_pj_per_bit=12.5))
    assert isinstance(fa, Device) and isinstance(fa.variant(subarrays=3), Device)
    before = fa.get_params()
    fa.layer_costs(get_network("alexnet"), 2, subarrays=3)
    assert fa.get_params() == before  # a call mutates nothing
    twin = clone(fa)
    assert twin.cache_key() == fa.cache_key()
    assert twin.cache_key() != FissionArray().cache_key()  # the energy model is in the key
    v = fa.variant(subarrays=4)
    assert v.memory_bandwidth_bps == pytest.approx(358e9 / 4)
    assert v.peak_macs_per_s == pytest.approx(4 * 32 * 32 * 700e6)


def test_fill_drain_off_is_the_artifacts_compute_model() -> None:
    """``fill_drain=False``: a tile costs its streamed rows only, so a compute-only layer is
    the artifact's ``b*oh*ow * ceil(oc/M) * ceil(kw*kh*ic/N)`` (he-actlab/planaria.code,
    ``Core.get_core_compute_cycles``, ``overhead = 0``); on by default (Algorithm 1)."""
    from npusched.hardware.systolic import SystolicArray

    # a 3x3 conv, 64 -> 200 channels on 14x14 outputs: K = 576, N = 200, M = 196
    net = make_network(
        "conv", [Layer("c", LayerKind.CONV, m=196, k=576, n=200, input_elems=1, output_elems=1)]
    )
    sa = SystolicArray(fill_drain=False, memory_stalls=False)
    assert int(sa.layer_costs(net, 1).cycles[0]) == 196 * 2 * 5
    on = SystolicArray(memory_stalls=False)
    assert on.fill_drain is True
    assert int(on.layer_costs(net, 1).cycles[0]) == 2 * 5 * (196 + 128 + 2 * 128)
    assert sa.cache_key() != on.cache_key()
    # the fission array alike: one 32x32 subarray, ceil(200/32) x ceil(576/32) tiles
    fa = FissionArray(fill_drain=False, memory_stalls=False)
    assert int(fa.layer_costs(net, 1, subarrays=1).cycles[0]) == 196 * 7 * 18
    with pytest.raises(HardwareConfigError, match="fill_drain"):
        SystolicArray(fill_drain="no")  # type: ignore[arg-type]
    with pytest.raises(HardwareConfigError, match="fill_drain"):
        FissionArray(fill_drain=1)  # type: ignore[arg-type]
