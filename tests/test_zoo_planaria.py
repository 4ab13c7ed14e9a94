"""The Planaria authors' benchmarks (``planaria/<name>``) against their artifact's layer tables
(he-actlab/planaria.code ``src/benchmarks/benchmarks.py``)."""

from __future__ import annotations

import pytest

from npusched.models.ir import LayerKind
from npusched.models.zoo import get_network, reference
from npusched.models.zoo.planaria import ARTIFACT

# name: (ConvLayer + DWConvLayer + FCLayer count, PoolingLayer count, MACs per inference), counted
# from the artifact's ``get_*`` functions (GNMT: 8 encoder + 8 decoder FCs x 32 steps each).
ARTIFACT_COUNTS = {
    "planaria/resnet-50": (49, 1, 3_496_263_680),
    "planaria/googlenet": (58, 5, 1_582_671_872),
    "planaria/mobilenet-v1": (28, 1, 567_818_752),
    "planaria/ssd-resnet34": (24, 1, 4_062_814_208),
    "planaria/ssd-mobilenet-v1": (23, 0, 1_104_760_832),
    "planaria/tiny-yolov2": (9, 5, 3_485_520_896),
    "planaria/yolov3": (52, 0, 9_284_091_904),
    "planaria/gnmt": (16, 0, 310_378_496),
}


def test_every_artifact_benchmark_is_registered() -> None:
    assert set(ARTIFACT) == set(ARTIFACT_COUNTS)


@pytest.mark.parametrize("name", sorted(ARTIFACT_COUNTS))
def test_layer_count_and_macs(name: str) -> None:
    gemm, pools, macs = ARTIFACT_COUNTS[name]
    net = get_network(name)
    assert sum(ly.is_gemm for ly in net.layers) == gemm
    assert sum(ly.kind == LayerKind.POOL for ly in net.layers) == pools
    assert len(net.layers) == gemm + pools
    assert net.macs == macs
    ref = reference(name)
    assert ref is not None and "planaria.code" in ref.source
    assert net.meta["source"].startswith("he-actlab/planaria.code")


def _dims(name: str, layer: str) -> tuple[LayerKind, int, int, int, int]:
    ly = get_network(name).layers[get_network(name).index(layer)]
    return ly.kind, ly.m, ly.k, ly.n, ly.groups


def test_single_layers_match_the_artifact() -> None:
    # ConvLayer(3, 64, 160, 7, 2): out 160x160, K = 7*7*3
    assert _dims("planaria/ssd-resnet34", "conv1") == (LayerKind.CONV, 160 * 160, 147, 64, 1)
    # ConvLayer(64, 128, 1, 3, 2): the last SSD extra layer
    assert _dims("planaria/ssd-resnet34", "conv9_2") == (LayerKind.CONV, 1, 576, 128, 1)
    # DWConvLayer(512, 512, 7, 3, 2)
    assert _dims("planaria/mobilenet-v1", "conv24-dw") == (LayerKind.DWCONV, 49, 9, 1, 512)
    assert _dims("planaria/mobilenet-v1", "fc29") == (LayerKind.FC, 1, 1024, 100, 1)
    # ConvLayer(1024, 125, 13, 1, 1), 8-bit
    assert _dims("planaria/tiny-yolov2", "conv8") == (LayerKind.CONV, 169, 1024, 125, 1)
    assert {ly.bytes_per_elem for ly in get_network("planaria/tiny-yolov2").layers} == {1}
    # YOLOv3 at 256: ConvLayer(512, 1024, 8, 3, 2) and the last residual block
    assert _dims("planaria/yolov3", "conv10") == (LayerKind.CONV, 64, 4608, 1024, 1)
    assert _dims("planaria/yolov3", "conv11_4_b") == (LayerKind.CONV, 64, 4608, 1024, 1)
    # GoogLeNet inception 5b 5x5 branch: ConvLayer(48, 128, 7, 5)
    assert _dims("planaria/googlenet", "inception_5b_5x5") == (LayerKind.CONV, 49, 1200, 128, 1)


def test_gnmt_is_single_step_fc_layers_over_32_steps() -> None:
    net = get_network("planaria/gnmt")
    assert net.seq_len == (32, 32)
    assert [ly.repeat for ly in net.layers] == ["in"] * 8 + ["out"] * 8
    assert all(ly.kind == LayerKind.FC and ly.m == 1 for ly in net.layers)
    per_step = sum(ly.macs for ly in net.layers)
    assert net.macs == 32 * per_step


def test_artifact_networks_are_much_lighter_than_the_full_size_ones() -> None:
    # the example: SSD-ResNet34 at 320x320 (~4 GMAC) vs MLPerf's 1200x1200 model
    assert get_network("planaria/ssd-resnet34").macs < get_network("ssd-resnet34").macs / 40
