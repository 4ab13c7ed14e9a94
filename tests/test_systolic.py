"""SystolicArray: PREMA Algorithm 1 by hand, SCALE-Sim agreement, invariants, parameter checks."""

from __future__ import annotations

import csv
import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from npusched.base import clone
from npusched.errors import HardwareConfigError
from npusched.hardware import DEVICES, Device, get_device
from npusched.hardware.systolic import SystolicArray
from npusched.models import Layer, LayerKind, NetBuilder, Network, get_network, make_network

# Table I: 700 MHz and 358 GB/s give 358e9 / 700e6 = 511.43 bytes per cycle.
BPC = 358e9 / 700e6
FILL = 128 + 2 * 128  # Algorithm 1: SH + 2 * SW


def one_layer(m: int, k: int, n: int, groups: int = 1, kind: LayerKind = LayerKind.CONV) -> Network:
    layer = Layer("l", kind, m=m, k=k, n=n, groups=groups, output_elems=m * n * groups)
    return make_network("one", [layer])


# --- SCALE-Sim -----------------------------------------------------------------------------------
def scalesim_resnet50(data_dir: Path) -> tuple[Network, list[int]]:
    """ResNet-50 GEMMs in SCALE-Sim's unpadded convention, and its compute cycles per layer."""
    layers = []
    with open(data_dir / "scalesim" / "resnet50.csv") as f:
        for row in csv.reader(f):
            if not row or not row[0].strip() or row[0].startswith("Layer"):
                continue
            name = row[0].strip()
            h, w, r, s, c, filters, stride = (int(x) for x in row[1:8])
            ho = math.ceil((h - r + stride) / stride)
            wo = math.ceil((w - s + stride) / stride)
            m, k = ho * wo, r * s * c
            layers.append(
                Layer(name, LayerKind.CONV, m=m, k=k, n=filters, output_elems=m * filters)
            )
    with open(data_dir / "scalesim" / "resnet50_ws128_COMPUTE_REPORT.csv") as f:
        rows = list(csv.reader(f))[1:]
    cycles = [int(r[2]) for r in rows if r]
    return make_network("resnet50-scalesim", layers), cycles


def test_scalesim_resnet50_within_1pct_every_layer(data_dir: Path) -> None:
    net, ref = scalesim_resnet50(data_dir)
    assert len(net.layers) == len(ref) == 54
    dev = SystolicArray(acc_depth=None, memory_stalls=False)
    ours = dev.layer_costs(net, 1).cycles
    err = np.abs(ours - np.array(ref)) / np.array(ref)
    assert err.max() < 0.01, f"worst layer {net.layers[int(err.argmax())].name}: {err.max():.3%}"
    # the only difference is Algorithm 1's 384 fill/drain cycles per fold vs SCALE-Sim's 382
    c = net.columns
    folds = np.ceil(c["k"] / 128) * np.ceil(c["n"] / 128)
    np.testing.assert_array_equal(ours - np.array(ref), 2 * folds + 1)


def test_scalesim_formula_holds_for_reference(data_dir: Path) -> None:
    net, ref = scalesim_resnet50(data_dir)
    c = net.columns
    formula = np.ceil(c["k"] / 128) * np.ceil(c["n"] / 128) * (c["m"] + 382) - 1
    np.testing.assert_array_equal(formula, ref)


# --- Algorithm 1 by hand -------------------------------------------------------------------------
def test_inner_tiles_only() -> None:
    dev = SystolicArray()
    # M=4096, K=256, N=256: 2 x 2 x 2 inner tiles of ACC=2048 streamed columns each.
    # compute 2048 + 384 = 2432; memory 100 + ceil(2*(128*128 + 128*2048) / 511.43) = 1190.
    assert math.ceil(2 * (128 * 128 + 128 * 2048) / BPC) + 100 == 1190
    costs = dev.layer_costs(one_layer(4096, 256, 256), 1)
    assert costs.cycles[0] == 8 * 2432 == 19456
    assert costs.tiles[0] == 8
    # loads: the weight (256x256) once per streamed chunk (2), the input (4096x256) once per
    # output-column tile (2); then the outputs (4096x256) written back. 16-bit elements.
    assert costs.bytes_moved[0] == 2 * (2 * 256 * 256 + 2 * 4096 * 256 + 4096 * 256)
    assert costs.latency_s[0] == pytest.approx(19456 / 700e6)


def test_edge_tiles_in_every_dimension() -> None:
    dev = SystolicArray()
    # M=3000 (2048 + 952), K=200 (128 + 72), N=150 (128 + 22): 8 tiles, 4 with 2048 streamed
    # columns (2432 cycles) and 4 with 952 (952 + 384 = 1336); all compute-bound.
    costs = dev.layer_costs(one_layer(3000, 200, 150), 1)
    assert costs.cycles[0] == 4 * 2432 + 4 * 1336 == 15072
    assert costs.tiles[0] == 8
    assert costs.bytes_moved[0] == 2 * (2 * 200 * 150 + 2 * 3000 * 200 + 3000 * 150)
    # Algorithm 1 as printed floors m/SW and k/SH and so keeps only 1 of the 4 weight tiles
    printed = 1 * 1 * 1 * 2432 + 1 * 1 * 1 * 1336
    assert printed == 3768 < costs.cycles[0]


def test_batch_multiplies_streamed_dimension() -> None:
    dev = SystolicArray()
    net = one_layer(750, 200, 150)
    assert (
        dev.layer_costs(net, 4).cycles[0] == dev.layer_costs(one_layer(3000, 200, 150), 1).cycles[0]
    )
    assert dev.gemm_cycles(750, 200, 150, batch=4) == 15072


def test_memory_bound_tile() -> None:
    # 1 byte per cycle, no latency: a 128x128 weight tile and a 128x64 input tile take
    # 2 * (16384 + 8192) = 49152 cycles to load, far more than 64 + 384 = 448 of compute.
    dev = SystolicArray(memory_bandwidth_bps=700e6, memory_latency_cycles=0)
    assert dev.gemm_cycles(64, 128, 128) == 49152
    # with the 100-cycle latency the memory phase grows by exactly 100
    slow = SystolicArray(memory_bandwidth_bps=700e6)
    assert slow.gemm_cycles(64, 128, 128) == 49252
    # compute-only mode ignores memory entirely
    assert (
        SystolicArray(memory_bandwidth_bps=700e6, memory_stalls=False).gemm_cycles(64, 128, 128)
        == 448
    )


def test_mixed_bound_tiles_take_max_per_tile() -> None:
    # 8 bytes/cycle, no latency. K=N=128, M=2048+16: the inner tile loads
    # 2*(16384 + 128*2048)/8 = 69632 cycles (> 2432), the edge tile 2*(16384+128*16)/8 = 4608
    # (> 400): both memory-bound here.
    dev = SystolicArray(memory_bandwidth_bps=8 * 700e6, memory_latency_cycles=0)
    assert dev.gemm_cycles(2064, 128, 128) == 69632 + 4608
    # 64 bytes/cycle: inner 8704 (memory) and edge 576 (memory > 400 compute)
    dev = SystolicArray(memory_bandwidth_bps=64 * 700e6, memory_latency_cycles=0)
    assert dev.gemm_cycles(2064, 128, 128) == 8704 + 576
    # 256 bytes/cycle: inner 2176 < 2432 (compute), edge 144 < 400 (compute)
    dev = SystolicArray(memory_bandwidth_bps=256 * 700e6, memory_latency_cycles=0)
    assert dev.gemm_cycles(2064, 128, 128) == 2432 + 400


def test_accumulator_depth_splits_the_stream() -> None:
    unlimited = SystolicArray(acc_depth=None)
    small = SystolicArray(acc_depth=512)
    assert unlimited.gemm_cycles(4096, 128, 128) == 4096 + FILL
    assert small.gemm_cycles(4096, 128, 128) == 8 * (512 + FILL)


def test_non_square_array_and_registry_overrides() -> None:
    dev = get_device("prema-npu", rows=64)
    assert isinstance(dev, SystolicArray)
    assert dev.rows == 64 and dev.cols == 128
    # K=256 now needs 4 row tiles; fill/drain is SH + 2*SW = 64 + 256 = 320
    assert dev.gemm_cycles(100, 256, 128) == 4 * (100 + 320)


def test_depthwise_one_channel_per_column_is_slow() -> None:
    net = get_network("mobilenet-v1")
    dev = get_device("prema-npu")
    costs = dev.layer_costs(net, 1)
    c = net.columns
    kinds = np.array([str(x.kind) for x in net.layers])
    per_mac = costs.cycles / np.maximum(c["macs"], 1)
    dw = per_mac[kinds == "dwconv"]
    dense = per_mac[(kinds == "conv")]
    assert dw.min() > 20 * np.median(dense)
    # a depthwise layer: groups GEMMs in sequence, each 1 tile per ACC chunk
    layer = net.layers[1]
    assert layer.kind == LayerKind.DWCONV and layer.k == 9 and layer.n == 1
    chunks = math.ceil(layer.m / 2048)
    assert costs.tiles[1] == layer.groups * chunks
    assert costs.cycles[1] == layer.groups * (layer.m + chunks * FILL)


def test_vector_layer_cost() -> None:
    b = NetBuilder("vec", (64, 56, 56))
    x = b.input()
    b.pool(x, 2, 2, name="pool")
    net = b.build()
    # 64*56*56 = 200704 inputs on 128 lanes = 1568 cycles; loading 401408 bytes takes
    # 100 + 785 = 885 cycles, hidden under the vector work.
    costs = SystolicArray().layer_costs(net, 1)
    assert costs.cycles[0] == 1568
    assert costs.tiles[0] == 1  # 200704 elements < 2048 * 128
    assert costs.bytes_moved[0] == 2 * (200704 + 64 * 28 * 28)
    slow = SystolicArray(memory_bandwidth_bps=700e6, memory_latency_cycles=0)
    assert slow.layer_costs(net, 1).cycles[0] == 401408
    assert SystolicArray().layer_costs(net, 4).tiles[0] == 4  # 802816 / 262144 -> 4


def test_recurrent_cell_streams_the_batch() -> None:
    b = NetBuilder("toy-lstm", (256,))
    x = b.input()
    b.recurrent(x, 256, cell="lstm", repeat="in", name="cell")
    b.seq_len = (10, 1)
    net = b.build()
    dev = SystolicArray()
    # K = 512, N = 1024: 4 x 8 tiles, each streaming the batch
    for batch in (1, 4, 16):
        assert dev.layer_costs(net, batch).cycles[0] == 32 * (batch + FILL)


@pytest.mark.parametrize(
    ("name", "batch"), [("resnet-50", 1), ("resnet-50", 16), ("mobilenet-v1", 4), ("alexnet", 2)]
)
def test_tile_view_sums_to_layer_costs(name: str, batch: int) -> None:
    net = get_network(name)
    for dev in (SystolicArray(), SystolicArray(memory_bandwidth_bps=20e9, act_sram_bytes=2**20)):
        costs = dev.layer_costs(net, batch)
        out = batch * net.columns["output_elems"] * net.columns["bytes_per_elem"]
        for i in range(len(net.layers)):
            tv = dev.tile_costs(net, batch, i)
            assert len(tv["cycles"]) == costs.tiles[i]
            assert tv["cycles"].sum() == costs.cycles[i] == tv["end_cycle"][-1]
            assert tv["bytes_loaded"].sum() + out[i] == costs.bytes_moved[i]
            assert round(tv["checkpoint_bytes"].mean()) == pytest.approx(
                costs.checkpoint_bytes[i], abs=1
            )
            assert (np.diff(tv["checkpoint_bytes"]) >= 0).all()
            assert (tv["cycles"] >= tv["compute_cycles"]).all()


def test_tile_view_order_and_edges() -> None:
    tv = SystolicArray().tile_costs(one_layer(3000, 200, 150), 1, "l")
    # streamed chunk outermost, then output-column tile, reduction innermost
    assert tv["streamed"].tolist() == [2048] * 4 + [952] * 4
    assert tv["n_cols"].tolist() == [128, 128, 22, 22] * 2
    assert tv["k_rows"].tolist() == [128, 72] * 4
    assert tv["cycles"].tolist() == [2432] * 4 + [1336] * 4


# --- invariants ----------------------------------------------------------------------------------
@settings(max_examples=60, deadline=None)
@given(
    m=st.integers(1, 5000),
    k=st.integers(1, 700),
    n=st.integers(1, 700),
    batch=st.integers(1, 8),
    bw=st.sampled_from([358e9, 20e9, 700e6]),
    acc=st.sampled_from([2048, 100, None]),
)
def test_latency_monotone_in_m_k_n_batch(
    m: int, k: int, n: int, batch: int, bw: float, acc: int | None
) -> None:
    dev = SystolicArray(memory_bandwidth_bps=bw, acc_depth=acc)
    base = dev.gemm_cycles(m, k, n, batch=batch)
    assert dev.gemm_cycles(m + 1, k, n, batch=batch) >= base
    assert dev.gemm_cycles(m, k + 1, n, batch=batch) >= base
    assert dev.gemm_cycles(m, k, n + 1, batch=batch) >= base
    assert dev.gemm_cycles(m, k, n, batch=batch + 1) >= base


@pytest.mark.parametrize("name", ["resnet-50", "googlenet", "mobilenet-v1", "vgg-16"])
def test_network_costs_monotone_in_batch_and_checkpoint_bounded(name: str) -> None:
    net = get_network(name)
    dev = SystolicArray()
    grid = dev.layer_costs_grid(net, [1, 2, 4, 8, 16])
    assert (np.diff(grid.cycles, axis=0) >= 0).all()
    assert (grid.tiles >= 1).all()
    gemm = net.columns["is_gemm"].astype(bool)
    assert (grid.checkpoint_bytes[:, gemm] > 0).all()
    assert (grid.checkpoint_bytes <= dev.act_sram_bytes).all()
    # the mean over tile boundaries never exceeds the layer's whole output
    out = net.columns["output_elems"] * net.columns["bytes_per_elem"]
    assert (grid.checkpoint_bytes <= np.array([1, 2, 4, 8, 16])[:, None] * out).all()
    # grid rows equal per-batch calls
    one = dev.layer_costs(net, 4)
    np.testing.assert_array_equal(one.cycles, grid.cycles[2])
    np.testing.assert_array_equal(one.checkpoint_bytes, grid.checkpoint_bytes[2])


def test_checkpoint_mean_formula() -> None:
    dev = SystolicArray()
    # one tile: the whole output (M*N*2 = 2 * 64 * 128 bytes)
    assert dev.layer_costs(one_layer(64, 128, 128), 1).checkpoint_bytes[0] == 2 * 64 * 128
    # 8 tiles, output O = 4096*256*2 = 2 MiB < 8 MiB: mean of O*t/8 for t=1..8 = O * 9/16
    o = 4096 * 256 * 2
    assert dev.layer_costs(one_layer(4096, 256, 256), 1).checkpoint_bytes[0] == o * 9 // 16
    # a small on-chip buffer caps it: cap = O/4, T = 8: t* = 2, sum = O/8*3 + 6*O/4
    small = SystolicArray(act_sram_bytes=o // 4)
    expect = (o / 8 * 3 + 6 * o / 4) / 8
    assert small.layer_costs(one_layer(4096, 256, 256), 1).checkpoint_bytes[0] == round(expect)
    # the worst boundary: the whole output, capped
    worst = SystolicArray(checkpoint="max")
    assert worst.layer_costs(one_layer(4096, 256, 256), 1).checkpoint_bytes[0] == o
    worst_small = SystolicArray(checkpoint="max", act_sram_bytes=o // 4)
    assert worst_small.layer_costs(one_layer(4096, 256, 256), 1).checkpoint_bytes[0] == o // 4


def test_energy_is_macs_and_bytes_times_constants() -> None:
    dev = SystolicArray(mac_energy_pj=2.0, dram_energy_pj_per_byte=10.0)
    costs = dev.layer_costs(one_layer(4096, 256, 256), 2)
    macs = 2 * 4096 * 256 * 256
    assert costs.energy_j[0] == pytest.approx((2.0 * macs + 10.0 * costs.bytes_moved[0]) * 1e-12)


def test_resnet50_isolated_latency_golden() -> None:
    dev = get_device("prema-npu")
    costs = dev.layer_costs(get_network("resnet-50"), 1)
    assert int(costs.cycles.sum()) == 1_029_305
    assert float(costs.latency_s.sum()) == pytest.approx(1.47044e-3, rel=1e-4)


# --- parameters ----------------------------------------------------------------------------------
def test_device_protocol_and_registry() -> None:
    dev = get_device("prema-npu")
    assert isinstance(dev, Device)
    assert "prema-npu" in DEVICES
    assert dev.name == "prema-npu"
    assert dev.frequency_hz == 700e6 and dev.memory_bandwidth_bps == 358e9
    assert dev.peak_macs_per_s == 128 * 128 * 700e6


@pytest.mark.parametrize(
    ("param", "value"),
    [
        ("rows", 0),
        ("rows", -128),
        ("cols", 0),
        ("rows", 1.5),
        ("rows", True),
        ("frequency_hz", 0),
        ("frequency_hz", -1e9),
        ("frequency_hz", float("nan")),
        ("memory_bandwidth_bps", 0.0),
        ("memory_bandwidth_bps", -358e9),
        ("act_sram_bytes", 0),
        ("weight_sram_bytes", -1),
        ("memory_channels", 0),
        ("memory_latency_cycles", -1),
        ("acc_depth", 0),
        ("vector_lanes", 0),
        ("mac_energy_pj", -1.0),
        ("dram_energy_pj_per_byte", float("inf")),
        ("memory_stalls", "yes"),
        ("checkpoint", "median"),
        ("name", ""),
        ("name", 3),
    ],
)
def test_bad_parameters_raise_one_line_naming_the_parameter(param: str, value: object) -> None:
    with pytest.raises(HardwareConfigError) as info:
        SystolicArray(**{param: value})  # type: ignore[arg-type]
    msg = str(info.value)
    assert param in msg and "\n" not in msg


def test_registry_overrides_are_validated() -> None:
    with pytest.raises(HardwareConfigError, match="rows must be an integer >= 1, got -64"):
        get_device("prema-npu", rows=-64)


def test_params_stored_unchanged_and_revalidated_on_use() -> None:
    dev = SystolicArray(rows=64.0)  # an integral float from a config file is accepted ...
    assert dev.rows == 64.0 and isinstance(dev.rows, float)  # ... and stored unchanged
    assert dev.gemm_cycles(10, 64, 128) == 10 + 64 + 256
    copy = clone(dev)
    assert copy.get_params() == dev.get_params() and copy.cache_key() == dev.cache_key()
    copy.set_params(cols=-1)
    with pytest.raises(HardwareConfigError, match="cols"):
        copy.layer_costs(get_network("alexnet"), 1)
    with pytest.raises(HardwareConfigError, match="cols"):
        copy.cache_key()


def test_cache_key_tracks_parameters() -> None:
    a, b = SystolicArray(), SystolicArray()
    assert a.cache_key() == b.cache_key()
    hash(a.cache_key())
    assert SystolicArray(rows=64).cache_key() != a.cache_key()
    assert SystolicArray(acc_depth=None).cache_key() != a.cache_key()


def test_bad_batch_raises() -> None:
    with pytest.raises(HardwareConfigError, match="batch"):
        SystolicArray().layer_costs(get_network("alexnet"), 0)


# --- activation x activation MatMul (issue 15, "Cost model") ----------------------------------
def test_matmul_costs_batch_times_heads_separate_gemms() -> None:
    """A Q.K^T with 2 heads of (128 x 64) @ (64 x 128): one head is one fold, ``128 + 384 = 512``
    cycles (its loads, 32 KiB, take 165), so one sample costs 1,024. At batch 4 each sample has
    its own keys, so the layer is 8 separate GEMMs (4,096 cycles), not one stationary tile with
    4 x 128 rows streamed through it (``2 * (512 + 384) = 1,792``, the old undercount)."""
    dev = SystolicArray()
    net = one_layer(128, 64, 128, groups=2, kind=LayerKind.MATMUL)
    one = int(dev.layer_costs(net, 1).cycles[0])
    assert one == 2 * (128 + FILL) == 1024
    four = dev.layer_costs(net, 4)
    assert int(four.cycles[0]) == 4 * one == 4096
    assert int(four.tiles[0]) == 8
    assert int(four.bytes_moved[0]) == 4 * int(dev.layer_costs(net, 1).bytes_moved[0])
    tiles = dev.tile_costs(net, 4, 0)
    assert int(tiles["cycles"].sum()) == 4096 and len(tiles["cycles"]) == 8
    # A weight layer of the same shape still merges the batch into the streamed rows.
    fc = one_layer(128, 64, 128, groups=2, kind=LayerKind.FC)
    assert int(dev.layer_costs(fc, 4).cycles[0]) == 2 * (4 * 128 + FILL) == 1792


@settings(max_examples=40, deadline=None)
@given(
    st.integers(1, 300),
    st.integers(1, 300),
    st.integers(1, 300),
    st.integers(1, 4),
    st.integers(1, 9),
)
def test_matmul_linear_in_batch(m: int, k: int, n: int, groups: int, batch: int) -> None:
    dev = SystolicArray()
    net = one_layer(m, k, n, groups=groups, kind=LayerKind.MATMUL)
    grid = dev.layer_costs_grid(net, (1, batch))
    assert grid.cycles[1, 0] == batch * grid.cycles[0, 0]
    assert grid.tiles[1, 0] == batch * grid.tiles[0, 0]


def test_rnn_mt1_attention_scales_with_batch() -> None:
    """rnn-mt1's attention (score 1 x 512 @ 512 x 16, context 1 x 16 @ 16 x 1024) cost 4,620
    cycles at batch 1 and only 4,800 at batch 16 before; now 16 x 4,620."""
    dev = SystolicArray()
    net = get_network("rnn-mt1")
    idx = [i for i, ly in enumerate(net.layers) if ly.kind == LayerKind.MATMUL]
    grid = dev.layer_costs_grid(net, (1, 16))
    b1, b16 = (int(grid.cycles[r, idx].sum()) for r in (0, 1))
    assert b1 == 4620
    assert b16 == 16 * 4620 == 73920
