"""The model zoo: every registered network against its published MACs / parameters, structural
invariants of the layer tables, exact golden numbers, and the ``npusched models`` CLI."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from npusched.cli import main
from npusched.errors import ModelError
from npusched.models import NetBuilder
from npusched.models.ir import LayerKind
from npusched.models.zoo import get_network, list_networks, reference

NETWORKS = list_networks()
TOL = 0.05
# Layers whose input count is not simply the sum of their producers' outputs (recurrent cells
# also read their state; an attention MatMul reads a second operand).
_OPAQUE_INPUTS = {LayerKind.LSTM, LayerKind.RNN, LayerKind.MATMUL, LayerKind.EMBED}


# --- every network ---------------------------------------------------------------------------
@pytest.mark.parametrize("name", NETWORKS)
def test_matches_published_reference(name: str) -> None:
    ref = reference(name)
    assert ref is not None, f"{name} has no reference MACs/params"
    assert ref.source, f"{name}: reference without a source"
    net = get_network(name)
    assert net.macs == pytest.approx(ref.macs, rel=TOL), f"{name} MACs vs {ref.source}"
    assert net.params == pytest.approx(ref.params, rel=TOL), f"{name} params vs {ref.source}"


@pytest.mark.parametrize("name", NETWORKS)
def test_layer_table_invariants(name: str) -> None:
    net = get_network(name)
    assert net.name == name
    names = [ly.name for ly in net.layers]
    assert len(set(names)) == len(names)
    cols = net.columns
    gemm = cols["is_gemm"] == 1
    assert gemm.any()
    assert (cols["macs"][gemm] > 0).all()
    assert (cols["macs"][~gemm] == 0).all()
    assert np.array_equal(cols["macs"], cols["m"] * cols["k"] * cols["n"] * cols["groups"])
    assert net.macs > 0 and net.params > 0
    # A GEMM layer's weights are its K x N x groups matrix; params add bias / folded BN only.
    # (A decode step's layers reuse the prefill's weights: counted once, attrs["shared_weights"].)
    shared = np.array(["shared_weights" in ly.attrs for ly in net.layers])
    kinds_with_weights = gemm & (cols["kind"] != list(LayerKind).index(LayerKind.MATMUL))
    w = cols["k"] * cols["n"] * cols["groups"]
    assert np.array_equal(cols["weight_elems"][kinds_with_weights], w[kinds_with_weights])
    assert (cols["params"][~shared] >= cols["weight_elems"][~shared]).all()
    assert (cols["params"][shared] == 0).all()


@pytest.mark.parametrize("name", NETWORKS)
def test_shapes_chain(name: str) -> None:
    """Each layer reads exactly what its producers wrote (or the network input)."""
    net = get_network(name)
    out = {ly.name: ly.output_elems for ly in net.layers}
    net_in = math.prod(net.input_shape) if net.input_shape else None
    for ly in net.layers:
        if ly.kind in _OPAQUE_INPUTS or ly.repeat is not None:
            continue
        produced = sum(out[s] for s in ly.inputs)
        if not ly.inputs:
            if net_in is not None:
                assert ly.input_elems == net_in, ly.name
        else:
            assert ly.input_elems in (produced, produced + (net_in or 0)), ly.name
    for ly in net.layers:  # convolutions: M is the output plane, output = M * channels
        if ly.kind in (LayerKind.CONV, LayerKind.DWCONV):
            assert ly.output_elems == ly.m * ly.n * ly.groups, ly.name


def test_builder_raises_on_shape_mismatch() -> None:
    b = NetBuilder("bad", (3, 32, 32))
    x = b.input()
    a = b.conv(x, 8, 3, 1)
    c = b.conv(x, 8, 3, 2)
    with pytest.raises(ModelError, match="concat"):
        b.concat(a, c)
    with pytest.raises(ModelError, match="add"):
        b.add(a, c)


# --- exact golden numbers (torchvision / paper layer tables) ----------------------------------
GOLDEN = {
    # name: (MACs, params); params match torchvision's / timm's parameter counts exactly.
    "resnet-50": (4_089_184_256, 25_557_032),
    "vgg-16": (15_470_264_320, 138_357_544),
    "vgg-19": (19_632_062_464, 143_667_240),
    "alexnet": (714_188_480, 61_100_840),
    "squeezenet": (818_924_576, 1_248_424),
    "squeezenet-1.1": (349_151_936, 1_235_496),
    "mobilenet-v1": (568_740_352, 4_231_976),
    "efficientnet-b0": (385_814_752, 5_288_548),
    "inception-v3": (5_713_216_096, 23_834_568),  # torchvision 27,161,264 minus the aux head
    "inception-v4": (12_253_974_624, 42_679_816),
    "inception-resnet-v2": (13_155_794_016, 55_843_464),
    "densenet-121": (2_834_161_664, 7_978_856),
}


@pytest.mark.parametrize("name", sorted(GOLDEN))
def test_golden_totals(name: str) -> None:
    macs, params = GOLDEN[name]
    net = get_network(name)
    assert (net.macs, net.params) == (macs, params)


def test_vgg16_first_conv() -> None:
    first = get_network("vgg-16").layers[0]
    assert (first.kind, first.m, first.k, first.n, first.groups) == (
        LayerKind.CONV,
        224 * 224,
        27,
        64,
        1,
    )
    assert first.params == 27 * 64 + 64  # weights + bias


def test_mobilenet_depthwise_layers() -> None:
    net = get_network("mobilenet-v1")
    dw = [ly for ly in net.layers if ly.kind == LayerKind.DWCONV]
    assert len(dw) == 13
    for ly in dw:
        channels = ly.attrs["in_shape"][0]
        assert (ly.groups, ly.k, ly.n) == (channels, 9, 1), ly.name
        assert ly.macs == ly.m * 9 * channels
    # 1.0-224: 7x7x1024 before the pool; pointwise layers carry 95% of the MACs (paper Table 2).
    last = net.layers[net.index("conv13_pw")]
    assert last.output_elems == 1024 * 7 * 7
    pw = sum(ly.macs for ly in net.layers if ly.name.endswith("_pw"))
    assert pw / net.macs == pytest.approx(0.95, abs=0.01)


def test_efficientnet_b0_blocks() -> None:
    net = get_network("efficientnet-b0")
    kinds = [ly.kind for ly in net.layers]
    assert kinds.count(LayerKind.DWCONV) == 16  # 16 MBConv blocks
    scales = [ly for ly in net.layers if ly.name.endswith("_se_scale")]
    assert len(scales) == 16 and all(ly.kind == LayerKind.ELTWISE for ly in scales)
    assert sum(ly.name.endswith("_add") for ly in net.layers) == 9  # residual blocks
    stem = net.layers[0]
    assert stem.attrs["post"] == ("bn", "swish")
    assert net.layers[net.index("head")].output_elems == 1280 * 7 * 7


@pytest.mark.parametrize(
    ("name", "layer", "shape"),
    [
        ("inception-v3", "mixed_5d_concat", (288, 35, 35)),
        ("inception-v3", "mixed_6e_concat", (768, 17, 17)),
        ("inception-v3", "mixed_7c_concat", (2048, 8, 8)),
        ("inception-v4", "mixed_5a_concat", (384, 35, 35)),
        ("inception-v4", "reduction_a_concat", (1024, 17, 17)),
        ("inception-v4", "inception_c2_concat", (1536, 8, 8)),
        ("inception-resnet-v2", "mixed_6a_concat", (1088, 17, 17)),
        ("inception-resnet-v2", "block8_9_add", (2080, 8, 8)),
    ],
)
def test_inception_grid_sizes(name: str, layer: str, shape: tuple[int, int, int]) -> None:
    """The paper's grid sizes (35 / 17 / 8) and channel counts at module boundaries."""
    net = get_network(name)
    assert net.layers[net.index(layer)].output_elems == math.prod(shape)
    consumers = [ly for ly in net.layers if layer in ly.inputs]
    assert consumers, f"{layer} feeds nothing"
    for ly in consumers:
        if ly.kind == LayerKind.CONV:
            assert ly.attrs["in_shape"] == shape


def test_inception_resnet_residuals() -> None:
    net = get_network("inception-resnet-v2")
    adds = [ly for ly in net.layers if ly.kind == LayerKind.ELTWISE]
    assert len(adds) == 40  # 10 x block35, 20 x block17, 10 x block8
    assert adds[-1].attrs["post"] == (None,) and adds[0].attrs["post"] == ("relu",)


def test_densenet121_structure() -> None:
    net = get_network("densenet-121")
    convs = [ly for ly in net.layers if ly.kind == LayerKind.CONV]
    assert len(convs) + 1 == 121  # 120 convolutions + the classifier
    # Channels grow by 32 per dense layer and halve at transitions: 64+6*32=256 -> 128, ...
    ends = {"block1_layer6": 256, "block2_layer12": 512, "block3_layer24": 1024}
    ends["block4_layer16"] = 1024
    for prefix, ch in ends.items():
        concat = net.layers[net.index(f"{prefix}_concat")]
        side = {"block1": 56, "block2": 28, "block3": 14, "block4": 7}[prefix[:6]]
        assert concat.output_elems == ch * side * side, prefix
    # Pre-activation BN on the concatenated input: 2 params per input channel.
    norm = net.layers[net.index("block3_layer24_norm1")]
    assert norm.kind == LayerKind.VECTOR and norm.params == 2 * (1024 - 32)


def test_aliases_resolve() -> None:
    for alias, name in [
        ("cnn-vn", "vgg-16"),
        ("cnn-an", "alexnet"),
        ("caffenet", "alexnet"),
        ("cnn-gn", "googlenet"),
        ("inception-v1", "googlenet"),
        ("CNN-GN", "googlenet"),
        ("cnn-mn", "mobilenet-v1"),
    ]:
        assert get_network(alias) is get_network(name)


def test_googlenet_matches_paper_table1() -> None:
    """Szegedy et al. 2015 Table 1, ops column (M multiply-adds) per stage."""
    net = get_network("googlenet")
    per_stage: dict[str, int] = {}
    for ly in net.layers:
        key = ly.name.split("_")[1] if ly.name.startswith("inception_") else ly.name
        per_stage[key] = per_stage.get(key, 0) + ly.macs
    table1 = {"conv1": 118, "3a": 128, "3b": 304, "4a": 73, "4b": 88, "4c": 100, "4d": 119}
    table1 |= {"4e": 170, "5a": 54, "5b": 71, "fc": 1.024}
    for stage, mops in table1.items():
        # Table 1 prints 54 M for 5a, but its own widths at 7x7 give 51.1 M (1,043 K weights).
        rel = 0.06 if stage == "5a" else 0.02
        assert per_stage[stage] / 1e6 == pytest.approx(mops, rel=rel), stage
    assert (per_stage["conv2_reduce"] + per_stage["conv2"]) / 1e6 == pytest.approx(360, rel=0.01)
    last = net.layers[net.index("inception_5b_concat")]
    assert last.output_elems == 1024 * 7 * 7


# --- CLI -----------------------------------------------------------------------------------------
def test_cli_models_list_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["models", "list", "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["name"] for r in rows] == NETWORKS
    for r in rows:
        assert {"name", "layers", "macs", "params"} <= set(r)
        net = get_network(r["name"])
        assert (r["layers"], r["macs"], r["params"]) == (len(net), net.macs, net.params)


def test_cli_models_show_csv(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["models", "show", "vgg-16", "--format", "csv"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    header = lines[0].split(",")
    assert header[:3] == ["idx", "name", "kind"]
    assert len(lines) == 1 + len(get_network("vgg-16"))
    first = dict(zip(header, lines[1].split(","), strict=True))
    assert (first["name"], first["M"], first["K"], first["N"]) == ("conv1_1", "50176", "27", "64")


def test_cli_models_show_unknown(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["models", "show", "nope"]) == 2
    captured = capsys.readouterr()
    err = captured.err.strip().splitlines()
    assert len(err) == 1
    assert err[0].startswith("npusched: error: unknown network 'nope'")
    assert captured.out == ""
