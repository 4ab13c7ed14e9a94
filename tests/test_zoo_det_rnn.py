"""Detection / segmentation and recurrent zoo networks: structure of the layer tables, golden
MACs/parameters, recurrent unrolling (``expand`` / ``total_macs``) against closed forms."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from npusched.models.ir import LayerKind, Network
from npusched.models.zoo import get_network, reference
from npusched.models.zoo.rnn import (
    ASR_SEQ,
    MT1_SEQ,
    gnmt_reference,
    lstm_macs,
    lstm_params,
    seq2seq_reference,
)

DETECTION = [
    "yolov2",
    "yolov3",
    "tiny-yolov3",
    "yolov4",
    "ssd-resnet34",
    "ssd-mobilenet-v1",
    "fcn-resnet18",
]
RECURRENT = ["gnmt", "gnmt-8", "rnn-sa", "rnn-mt1", "rnn-mt2", "rnn-asr"]


def _layers(net: Network, prefix: str) -> list[str]:
    return [ly.name for ly in net.layers if ly.name.startswith(prefix)]


def _vector_ops(net: Network, op: str) -> int:
    return sum(1 for ly in net.layers if ly.attrs.get("op") == op)


def _out_shape(net: Network, name: str) -> tuple[int, int, int]:
    ly = net.layers[net.index(name)]
    side = math.isqrt(ly.m)  # square grids: M = H * W output pixels
    assert side * side == ly.m
    return ly.n * ly.groups, side, side


# --- golden numbers (reference sources in the registry) ---------------------------------------
@pytest.mark.parametrize(
    ("name", "gmacs", "mparams"),
    [
        ("yolov2", 14.73, 50.96),  # darknet yolov2.cfg 416: 29.475 BFLOPs
        ("yolov3", 32.93, 61.95),  # pjreddie YOLOv3-416: 65.86 Bn
        ("tiny-yolov3", 2.78, 8.85),  # pjreddie YOLOv3-tiny: 5.56 Bn
        ("yolov4", 30.05, 64.36),  # AlexeyAB yolov4.cfg 416: 60.137 BFLOPs
        ("ssd-resnet34", 216.4, 19.97),  # MLPerf: 433 GOPS
        ("ssd-mobilenet-v1", 1.237, 6.82),  # MLPerf: 2.47 GOPS, 6.91 M
        ("fcn-resnet18", 19.25, 11.77),
        ("gnmt", 3.401, 210.9),  # MLPerf: 210 M
    ],
)
def test_golden_macs_params(name: str, gmacs: float, mparams: float) -> None:
    net = get_network(name)
    assert net.macs / 1e9 == pytest.approx(gmacs, rel=2e-3)
    assert net.params / 1e6 == pytest.approx(mparams, rel=2e-3)


@pytest.mark.parametrize("name", DETECTION + RECURRENT)
def test_reference_has_source_and_matches(name: str) -> None:
    ref = reference(name)
    assert ref is not None and len(ref.source) > 20
    net = get_network(name)
    assert net.macs == pytest.approx(ref.macs, rel=0.05)
    assert net.params == pytest.approx(ref.params, rel=0.05)


def test_aliases_resolve() -> None:
    assert get_network("tiny-yolo") is get_network("tiny-yolov3")
    assert get_network("ssd-r34") is get_network("ssd-resnet34")
    assert get_network("ssd-mobilenet") is get_network("ssd-mobilenet-v1")


# --- detection structure -----------------------------------------------------------------------
def test_yolov3_three_scales_with_upsample_concat() -> None:
    net = get_network("yolov3")
    heads = _layers(net, "yolo")
    convs = [h for h in heads if h.endswith("_conv")]
    assert len(convs) == 3
    # 255 = 3 anchors x (80 classes + 5), on 13x13, 26x26 and 52x52 grids at 416x416
    assert [_out_shape(net, c) for c in convs] == [(255, 13, 13), (255, 26, 26), (255, 52, 52)]
    assert _vector_ops(net, "upsample") == 2
    assert sum(1 for ly in net.layers if ly.kind is LayerKind.CONCAT) == 2
    assert sum(1 for ly in net.layers if ly.kind is LayerKind.ELTWISE) == 23  # 1+2+8+8+4
    convs_all = [ly for ly in net.layers if ly.kind is LayerKind.CONV]
    assert len(convs_all) == 75  # darknet yolov3.cfg has 75 [convolutional] sections
    nms = net.layers[-1]
    assert nms.attrs.get("op") == "nms" and nms.macs == 0
    assert set(nms.inputs) == {"yolo1", "yolo2", "yolo3"}


def test_yolo_variants_structure() -> None:
    v2 = get_network("yolov2")
    assert _vector_ops(v2, "reorg") == 1
    assert _out_shape(v2, "region_conv") == (425, 13, 13)
    tiny = get_network("tiny-yolov3")
    assert [_out_shape(tiny, c) for c in ("yolo1_conv", "yolo2_conv")] == [
        (255, 13, 13),
        (255, 26, 26),
    ]
    v4 = get_network("yolov4")
    assert sum(1 for ly in v4.layers if ly.kind is LayerKind.CONV) == 110
    assert len(_layers(v4, "spp_pool")) == 3
    assert [_out_shape(v4, f"yolo{i}_conv") for i in (1, 2, 3)] == [
        (255, 52, 52),
        (255, 26, 26),
        (255, 13, 13),
    ]
    assert any("mish" in ly.attrs.get("post", ()) for ly in v4.layers)


def test_ssd_resnet34_heads() -> None:
    net = get_network("ssd-resnet34")
    grids = [50, 25, 13, 7, 3, 3]
    anchors = [4, 6, 6, 6, 4, 4]
    boxes = 0
    for i, (g, a) in enumerate(zip(grids, anchors, strict=True), start=1):
        assert _out_shape(net, f"loc{i}") == (4 * a, g, g)
        assert _out_shape(net, f"conf{i}") == (81 * a, g, g)
        boxes += a * g * g
    assert boxes == 15130
    # layer3 of the backbone keeps stride 8: 150x150 at 1200x1200
    assert _out_shape(net, "layer3_5_conv2") == (256, 150, 150)
    assert not _layers(net, "layer4")


def test_ssd_mobilenet_heads() -> None:
    net = get_network("ssd-mobilenet-v1")
    grids = [19, 10, 5, 3, 2, 1]
    anchors = [3, 6, 6, 6, 6, 6]
    boxes = 0
    for i, (g, a) in enumerate(zip(grids, anchors, strict=True)):
        assert _out_shape(net, f"box{i}") == (4 * a, g, g)
        assert _out_shape(net, f"cls{i}") == (91 * a, g, g)
        boxes += a * g * g
    assert boxes == 1917
    assert sum(1 for ly in net.layers if ly.kind is LayerKind.DWCONV) == 13


def test_fcn_resnet18_output() -> None:
    net = get_network("fcn-resnet18")
    assert net.input_shape == (3, 512, 1024)
    last = net.layers[-1]
    assert last.attrs.get("op") == "upsample"
    assert last.output_elems == 21 * 512 * 1024
    assert net.layers[net.index("classifier")].m == 16 * 32  # stride 32


def test_detection_networks_are_not_recurrent() -> None:
    for name in DETECTION:
        net = get_network(name)
        assert not net.is_recurrent
        assert np.array_equal(net.expand(), np.arange(len(net)))


# --- recurrent structure ---------------------------------------------------------------------
@pytest.mark.parametrize("name", RECURRENT)
def test_recurrent_layers_are_tagged(name: str) -> None:
    net = get_network(name)
    assert net.seq_len is not None
    for ly in net.layers:
        if ly.kind in (LayerKind.LSTM, LayerKind.RNN):
            assert ly.repeat in ("in", "out"), ly.name
    # every GEMM of a decoder-side network runs per step; only classifier heads may not
    per_step = [ly for ly in net.layers if ly.is_gemm and ly.repeat is None]
    assert all(ly.kind is LayerKind.FC and ly.n <= 2 for ly in per_step), per_step


@pytest.mark.parametrize("name", ["gnmt", "rnn-mt1", "rnn-asr"])
def test_decoder_side_layers_repeat_out(name: str) -> None:
    net = get_network(name)
    rep = {ly.name: ly.repeat for ly in net.layers}
    dec = [ly for ly in net.layers if ly.kind in (LayerKind.MATMUL, LayerKind.FC)]
    assert any(rep[ly.name] == "out" for ly in dec if ly.kind is LayerKind.MATMUL)
    last_fc = [ly for ly in net.layers if ly.kind is LayerKind.FC][-1]
    assert last_fc.repeat == "out"
    assert net.layers[-1].attrs.get("op") == "softmax" and net.layers[-1].repeat == "out"


def test_rnn_mt1_expand_matches_closed_form() -> None:
    net = get_network("rnn-mt1")
    rep = net.columns["repeat"]
    n_none, n_in, n_out = (int((rep == r).sum()) for r in (0, 1, 2))
    assert n_none == 0 and n_in > 0 and n_out > 0
    for s_in, s_out in [(1, 1), (7, 3), (16, 18), (50, 55)]:
        order = net.expand(s_in, s_out)
        assert len(order) == n_in * s_in + n_out * s_out
        counts = np.bincount(order, minlength=len(net))
        assert np.array_equal(counts, net.step_counts(s_in, s_out))
        # encoder first (step-major), then the decoder
        assert (rep[order[: n_in * s_in]] == 1).all()
        assert (rep[order[n_in * s_in :]] == 2).all()
        assert np.array_equal(order[:n_in], np.flatnonzero(rep == 1))
    # closed form at the default lengths (attention sized at the default input length)
    assert net.total_macs(*MT1_SEQ) == seq2seq_reference(MT1_SEQ)[0]


def test_gnmt_closed_form() -> None:
    net = get_network("gnmt")
    macs, params = gnmt_reference(4, 1024, 36548, (25, 25))
    assert net.total_macs(25, 25) == macs
    assert net.params == params
    # an LSTM layer of the decoder: [x, ctx, h] -> 4 gates
    dec = net.layers[net.index("dec_l1")]
    assert (dec.k, dec.n, dec.repeat) == (3 * 1024, 4 * 1024, "out")
    assert dec.params == lstm_params(2048, 1024)
    assert dec.macs == lstm_macs(2048, 1024)
    assert get_network("gnmt-8").params > net.params


def test_rnn_sa_unrolls_over_input_only() -> None:
    net = get_network("rnn-sa")
    assert {ly.repeat for ly in net.layers} == {"in", None}
    assert net.total_macs(10, 1) == net.total_macs(10, 99)
    lstm = [ly for ly in net.layers if ly.kind is LayerKind.LSTM]
    assert [(ly.k, ly.n) for ly in lstm] == [(512, 1024), (1536, 1024), (1536, 1024)]


def test_rnn_asr_listener_shares_weights() -> None:
    net = get_network("rnn-asr")
    listen = _layers(net, "listen")
    # per listener step (8 frames): 8 + 4 + 2 + 1 cell steps, both directions
    assert len([n for n in listen if n != "listen_out"]) == 2 * (8 + 4 + 2 + 1)
    owners = [ly for ly in net.layers if ly.kind is LayerKind.LSTM and ly.repeat == "in"]
    assert len(owners) == 8  # one weight-owning cell per level and direction
    copies = [ly for ly in net.layers if "shares_weights_with" in ly.attrs]
    assert len(copies) == 2 * (7 + 3 + 1)
    for ly in copies:
        owner = net.layers[net.index(ly.attrs["shares_weights_with"])]
        assert (ly.k, ly.n, ly.macs, ly.params) == (owner.k, owner.n, owner.macs, 0)
    assert net.seq_len == ASR_SEQ
    # the attention over the listener output is sized at the default input length
    assert net.layers[net.index("attn_energy")].n == ASR_SEQ[0]


@settings(max_examples=25, deadline=None)
@given(
    name=st.sampled_from(RECURRENT),
    s_in=st.integers(1, 200),
    s_out=st.integers(1, 200),
    d_in=st.integers(0, 50),
    d_out=st.integers(0, 50),
)
def test_total_macs_linear_in_each_length(
    name: str, s_in: int, s_out: int, d_in: int, d_out: int
) -> None:
    net = get_network(name)
    base = net.total_macs(1, 1)
    per_in = net.total_macs(2, 1) - base
    per_out = net.total_macs(1, 2) - base
    assert per_in > 0
    expected = base + (s_in - 1) * per_in + (s_out - 1) * per_out
    assert net.total_macs(s_in, s_out) == expected
    grown = net.total_macs(s_in + d_in, s_out + d_out)
    assert grown - net.total_macs(s_in, s_out) == d_in * per_in + d_out * per_out
