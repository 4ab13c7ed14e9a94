"""AB9 power model (ETRI J. 2022, Tables 1-5, Eq. 1-4): op counts, alpha*C, power, time."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from npusched.errors import HardwareConfigError, UnknownNameError
from npusched.hardware import get_device
from npusched.hardware.power import (
    AB9,
    ALPHA_C_FULL,
    DFS_VOLTAGES_V,
    DVFS_VOLTAGES_V,
    FREQUENCIES_HZ,
    OPS,
    W_OP,
    alpha_c,
    microbenchmark_alpha_c,
    tile_op_counts,
)
from npusched.models import get_network
from npusched.models.ir import Layer, LayerKind, Network

# Table 4: (R, C, m, n) with n = 2C - 1 and the paper's absolute error rates.
TABLE4_M = (256, 1024, 4096, 16384)
TABLE4_R = (32, 64, 96, 128)
TABLE4_CN = ((32, 63), (64, 127), (96, 191), (128, 255))


def test_table5_levels_and_voltages() -> None:
    assert len(FREQUENCIES_HZ) == 20
    assert FREQUENCIES_HZ[0] == 100e6 and FREQUENCIES_HZ[-1] == 1000e6
    assert list(FREQUENCIES_HZ) == sorted(FREQUENCIES_HZ)
    assert FREQUENCIES_HZ[12] == 500e6 and FREQUENCIES_HZ[13] == 550e6
    assert DVFS_VOLTAGES_V[:13] == (0.95,) * 13 and DVFS_VOLTAGES_V[13:] == (1.0,) * 7
    assert DFS_VOLTAGES_V == (1.0,) * 20


def test_table3_weights() -> None:
    assert W_OP == {
        "RD_I": 86, "RD_K": 86, "TR_I": 86, "TR_K": 86,
        "MAC": 10, "MAC_ineff": 6, "TR_O": 2, "WR_O": 79,
    }  # fmt: skip
    assert ALPHA_C_FULL == 86 * 128 * 2 + 86 * 128 * 128 * 2 + 10 * 128 * 128


@pytest.mark.parametrize(
    ("r", "c", "n", "m"),
    [(r, c, n, m) for m in TABLE4_M for r in TABLE4_R for c, n in TABLE4_CN],
)
def test_table4_alpha_c_by_hand(r: int, c: int, n: int, m: int) -> None:
    assert n == 2 * c - 1  # Table 4's n is the TR_O time of a C-wide tile
    by_hand = (r * c * 10 * m + r * c * 2 * n) / m  # note b: MAC and TR_O, total m cycles
    assert microbenchmark_alpha_c(r, c, m, n, ineff=False) == pytest.approx(by_hand, rel=1e-12)
    with_ineff = by_hand + (128 - c) * r * 6 * m / m  # Table 1: PE(x >= C, y < R) MAC_ineff
    assert microbenchmark_alpha_c(r, c, m, n) == pytest.approx(with_ineff, rel=1e-12)
    # the default TR_O time of tile_op_counts is Table 4's n
    counts = tile_op_counts(r, c, m)
    assert counts[OPS.index("TR_O")] == r * c * n


def test_table4_power_is_monotone_in_tile_and_shrinks_with_long_reductions() -> None:
    dev = AB9()
    grid = np.array(
        [
            [microbenchmark_alpha_c(r, c, m, 2 * c - 1) for r in TABLE4_R]
            for m, c in itertools.product(TABLE4_M, (32, 128))
        ]
    )
    assert (np.diff(grid, axis=1) > 0).all()  # more rows, more switching
    k = dev.energy_per_unit_j
    p = dev.idle_power_w + k * grid * 1e9
    assert (p > dev.idle_power_w).all()


def test_tile_op_counts_table1_executors() -> None:
    r, c, m = 3, 5, 7
    counts = dict(zip(OPS, tile_op_counts(r, c, m), strict=True))
    assert counts == {
        "RD_I": r * m,  # DC buffer(y < R)
        "RD_K": c * m,  # DC buffer(y < C)
        "TR_I": 128 * r * m,  # PE(x >= 0, y < R)
        "TR_K": c * 128 * m,  # PE(x < C, y >= 0)
        "MAC": r * c * m,
        "MAC_ineff": (128 - c) * r * m,
        "TR_O": r * c * (2 * c - 1),
        "WR_O": r * c,
    }
    assert alpha_c(tile_op_counts(r, c, m), 10) == pytest.approx(
        sum(W_OP[o] * v for o, v in counts.items()) / 10
    )


def _one_layer(m: int, k: int, n: int, groups: int = 1, *, inputs: int | None = None) -> Network:
    ins = m * k if inputs is None else inputs
    ly = Layer("l", LayerKind.CONV, m=m, k=k, n=n, groups=groups, input_elems=ins,
               output_elems=m * n * groups, weight_elems=k * n * groups)  # fmt: skip
    return Network("one", (ly,))


def test_layer_tiling_by_hand() -> None:
    dev = AB9()
    lo = dev.layer_ops(_one_layer(200, 50, 130), 1)
    # rows 200 = 128 + 72, columns 130 = 128 + 2: four tiles
    assert lo.tiles[0] == 4
    # each tile occupies max(K, 2C - 1) cycles, plus one fill/drain of 128 + 128
    assert lo.cycles[0] == 2 * 255 + 2 * max(50, 3) + 256
    counts = dict(zip(OPS, lo.op_counts[:, 0], strict=True))
    assert counts["MAC"] == 200 * 130 * 50
    assert counts["MAC_ineff"] == (128 - 128) * 200 * 50 + (128 - 2) * 200 * 50
    assert counts["TR_I"] == 128 * 200 * 50 * 2  # every row tile crosses both column tiles
    assert counts["TR_K"] == 128 * 130 * 50 * 2
    assert counts["TR_O"] == 200 * 128 * 255 + 200 * 2 * 3
    assert lo.bytes_moved[0] == (200 * 50 + 200 * 130 + 50 * 130) * 2
    # batch multiplies the streamed rows
    lo2 = dev.layer_ops(_one_layer(200, 50, 130), 2)
    assert dict(zip(OPS, lo2.op_counts[:, 0], strict=True))["MAC"] == 2 * 200 * 130 * 50


def test_time_compute_scales_with_f_memory_does_not() -> None:
    dev = AB9(stc_efficiency=0.5)
    net = get_network("resnet-18")
    lo = dev.layer_ops(net, 1)
    tab = dev.power_table(net, 1)
    f = tab.frequency_hz[:, None]
    compute = lo.cycles[None, :] / (0.5 * f)
    memory = lo.bytes_moved[None, :] / dev.memory_bandwidth_bps
    np.testing.assert_allclose(tab.latency_s, np.maximum(compute, memory))
    assert (np.diff(tab.latency_s, axis=0) <= 0).all()  # faster clock, never slower
    # at full efficiency some layers are memory bound at 1 GHz and do not speed up further
    full = AB9().power_table(net, 1)
    mem_bound = full.latency_s[-1] == lo.bytes_moved / dev.memory_bandwidth_bps
    assert mem_bound.any()
    assert (full.latency_s[-1][mem_bound] == full.latency_s[-2][mem_bound]).any()


def test_power_eq_1_2_and_full_tile_anchor() -> None:
    dev = AB9()
    net = _one_layer(128 * 64, 1 << 14, 128, inputs=1 << 16)  # full tiles, long reduction
    tab = dev.power_table(net, 1, voltages_v=1.0)
    # Eq. 1-2: P = idle + k * alpha*C * f * V^2
    k = dev.energy_per_unit_j
    np.testing.assert_allclose(
        tab.power_w, dev.idle_power_w + k * tab.alpha_c * tab.frequency_hz[:, None]
    )
    # a full tile over a long reduction is the anchor: peak dynamic power at 1 GHz, 1 V
    # (compute bound: few bytes per MAC)
    full = dev.idle_power_w + dev.peak_dynamic_power_w
    assert tab.power_w[-1, 0] == pytest.approx(full, rel=0.02)
    low = dev.power_table(net, 1, voltages_v=0.95)
    np.testing.assert_allclose(
        low.power_w - dev.idle_power_w, (tab.power_w - dev.idle_power_w) * 0.95**2
    )
    np.testing.assert_allclose(tab.energy_j, tab.power_w * tab.latency_s)


def test_stc_efficiency_stretches_time_not_power() -> None:
    net = get_network("squeezenet")
    a = AB9(stc_efficiency=0.01).power_table(net, 1)
    b = AB9(stc_efficiency=0.02).power_table(net, 1)
    np.testing.assert_allclose(a.power_w, b.power_w, rtol=1e-9)  # compute bound at 1% and 2%
    np.testing.assert_allclose(a.latency_s, 2 * b.latency_s, rtol=1e-9)


def test_cap_binds_for_heavy_layers_at_high_frequency() -> None:
    """The defaults put full-array convolutions above 33 W at 1 GHz (Fig. 4's premise)."""
    tab = AB9(stc_efficiency=0.02).power_table(get_network("vgg-16"), 1)
    assert tab.power_w[-1].max() > 33.0
    assert tab.power_w[0].max() < 33.0  # and every layer fits at 100 MHz
    assert tab.power_w[-1].min() < 33.0  # while light layers run at 1 GHz


def test_device_registry_and_plan_variants() -> None:
    dev = get_device("ab9")
    assert isinstance(dev, AB9)
    assert dev.variant_axes["frequency_hz"] == FREQUENCIES_HZ
    assert "frequency_hz" not in dict(p for p in dev.cache_key()[1:] if isinstance(p, tuple))
    assert dev.variant_axes == {"frequency_hz": FREQUENCIES_HZ}
    assert dev.cache_key() == AB9(frequency_hz=500e6).cache_key()
    assert dev.cache_key() != AB9(voltage_v="dvfs").cache_key()  # voltage is a parameter
    dv = AB9(voltage_v="dvfs")
    assert [dv.voltage_at(f) for f in FREQUENCIES_HZ] == list(DVFS_VOLTAGES_V)
    np.testing.assert_allclose(
        dv.layer_costs(get_network("resnet-18"), 1, frequency_hz=500e6).energy_j,
        dev.power_table(get_network("resnet-18"), 1, voltages_v=DVFS_VOLTAGES_V).energy_j[12],
    )
    assert dev.cache_key() != AB9(stc_efficiency=0.5).cache_key()
    net = get_network("resnet-18")
    c1 = dev.layer_costs(net, 1)
    c5 = dev.layer_costs(net, 1, frequency_hz=500e6)
    assert (c5.latency_s >= c1.latency_s).all()
    tab = dev.power_table(net, 1)
    np.testing.assert_allclose(c5.latency_s, tab.latency_s[FREQUENCIES_HZ.index(500e6)])
    np.testing.assert_allclose(c5.energy_j, tab.energy_j[FREQUENCIES_HZ.index(500e6)])
    assert (c1.checkpoint_bytes <= dev.onchip_bytes).all()
    assert dev.memory_bandwidth_bps == 25.6e9
    with pytest.raises(UnknownNameError):
        get_device("ab10")


@pytest.mark.parametrize(
    ("key", "value"),
    [("rows", 0), ("stc_efficiency", 0.0), ("stc_efficiency", 1.5), ("voltage_v", -1.0),
     ("voltage_v", "dfs"),
     ("static_power_w", float("nan")), ("name", "")],
)  # fmt: skip
def test_bad_parameters_raise(key: str, value: object) -> None:
    with pytest.raises(HardwareConfigError):
        AB9(**{key: value})  # type: ignore[arg-type]


@settings(max_examples=40, deadline=None)
@given(m=st.integers(1, 3000), k=st.integers(1, 3000), n=st.integers(1, 600), g=st.integers(1, 4))
def test_layer_counts_match_a_tile_loop(m: int, k: int, n: int, g: int) -> None:
    """The vectorised tile classes equal an explicit loop over every tile."""
    dev = AB9()
    lo = dev.layer_ops(_one_layer(m, k, n, g), 1)
    tot = np.zeros(len(OPS))
    cycles = 0
    tiles = 0
    for _ in range(g):
        for r0 in range(0, m, 128):
            for c0 in range(0, n, 128):
                r, c = min(128, m - r0), min(128, n - c0)
                tot += tile_op_counts(r, c, k)
                cycles += max(k, 2 * c - 1)
                tiles += 1
    np.testing.assert_allclose(lo.op_counts[:, 0], tot)
    assert lo.cycles[0] == cycles + 256 and lo.tiles[0] == tiles


def test_fused_steps_and_grouped_table() -> None:
    from npusched.hardware.power import fused_steps

    net = get_network("resnet-18")
    steps = fused_steps(net)
    gemm = net.columns["is_gemm"].astype(bool)
    assert steps[-1] + 1 == gemm.sum() == 21  # 20 convolutions + FC
    assert (np.diff(steps) >= 0).all() and steps[0] == 0
    assert (np.diff(steps)[~gemm[1:]] == 0).all()  # vector layers never start a step
    tab = AB9(stc_efficiency=0.02).power_table(net, 1)
    g = tab.grouped(steps)
    assert g.n_layers == 21 and g.n_levels == tab.n_levels
    for s in range(21):
        members = np.flatnonzero(steps == s)
        np.testing.assert_allclose(g.latency_s[:, s], tab.latency_s[:, members].sum(axis=1))
        np.testing.assert_allclose(g.energy_j[:, s], tab.energy_j[:, members].sum(axis=1))
        np.testing.assert_allclose(g.power_w[:, s], tab.power_w[:, members].max(axis=1))
    assert g.layer_names[0] == "conv1+pool1"
    with pytest.raises(HardwareConfigError):
        tab.grouped(steps[::-1])
    # YOLOv3: 75 convolutions, the paper's layer count (Sec. 3.2: 1.33 ms per layer)
    assert fused_steps(get_network("yolov3"))[-1] + 1 == 75


def test_non_square_array_counts_and_anchor() -> None:
    from npusched.hardware.power import full_array_alpha_c

    dev = AB9(rows=64, cols=32)
    lo = dev.layer_ops(_one_layer(100, 20, 40), 1)
    tot = np.zeros(len(OPS))
    for r in (64, 36):
        for c in (32, 8):
            tot += tile_op_counts(r, c, 20, array_rows=64, array_cols=32)
    np.testing.assert_allclose(lo.op_counts[:, 0], tot)
    counts = dict(zip(OPS, tile_op_counts(3, 5, 7, array_rows=64, array_cols=32), strict=True))
    assert counts["TR_I"] == 32 * 3 * 7 and counts["TR_K"] == 5 * 64 * 7
    assert counts["MAC_ineff"] == (32 - 5) * 3 * 7
    assert full_array_alpha_c(64, 32) == 86 * 64 + 86 * 32 + 2 * 86 * 64 * 32 + 10 * 64 * 32
    assert full_array_alpha_c() == ALPHA_C_FULL
