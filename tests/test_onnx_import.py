"""ONNX import: layer tables checked against hand-computed GEMM views, errors, the CLI."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from npusched.errors import ModelError
from npusched.models import LayerKind, Network, from_onnx

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

Dim = int | str | None


def _init(name: str, shape: Sequence[int], dtype: Any = np.float32) -> Any:
    return numpy_helper.from_array(np.zeros(shape, dtype=dtype), name)


def _const_i64(name: str, values: Sequence[int]) -> Any:
    return numpy_helper.from_array(np.array(values, dtype=np.int64), name)


def _save(
    tmp_path: Path,
    nodes: list[Any],
    inputs: dict[str, Sequence[Dim]],
    outputs: dict[str, Sequence[Dim]],
    inits: list[Any],
    *,
    fname: str = "model.onnx",
    opset: int = 17,
    extra_opsets: Sequence[tuple[str, int]] = (),
) -> Path:
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info(k, TensorProto.FLOAT, list(v)) for k, v in inputs.items()],
        [helper.make_tensor_value_info(k, TensorProto.FLOAT, list(v)) for k, v in outputs.items()],
        initializer=inits,
    )
    opsets = [helper.make_opsetid("", opset)] + [helper.make_opsetid(d, v) for d, v in extra_opsets]
    model = helper.make_model(graph, opset_imports=opsets)
    path = tmp_path / fname
    onnx.save(model, str(path))
    return path


def _by_name(net: Network) -> dict[str, Any]:
    return {ly.name: ly for ly in net.layers}


# --- a small CNN -------------------------------------------------------------------------------
def _cnn(tmp_path: Path, flatten: str, batch: Dim) -> Path:
    """conv3x3/s2 (pads) + BN + relu, depthwise 3x3 + clip, maxpool, 1x1 conv, GAP, flatten, gemm."""
    inits = [
        _init("w1", (16, 3, 3, 3)),
        *(_init(f"bn_{p}", (16,)) for p in ("scale", "bias", "mean", "var")),
        _init("wdw", (16, 1, 3, 3)),
        _init("bdw", (16,)),
        _init("w2", (32, 16, 1, 1)),
        _init("b2", (32,)),
        _init("wfc", (10, 32)),
        _init("bfc", (10,)),
        numpy_helper.from_array(np.array(0.0, np.float32), "lo"),
        numpy_helper.from_array(np.array(6.0, np.float32), "hi"),
    ]
    nodes = [
        helper.make_node(
            "Conv",
            ["x", "w1"],
            ["c1"],
            name="conv1",
            kernel_shape=[3, 3],
            strides=[2, 2],
            pads=[1, 1, 1, 1],
        ),
        helper.make_node(
            "BatchNormalization",
            ["c1", "bn_scale", "bn_bias", "bn_mean", "bn_var"],
            ["b1"],
            name="bn1",
        ),
        helper.make_node("Relu", ["b1"], ["r1"], name="relu1"),
        helper.make_node(
            "Conv", ["r1", "wdw", "bdw"], ["d1"], name="dw", group=16, pads=[1, 1, 1, 1]
        ),
        helper.make_node("Clip", ["d1", "lo", "hi"], ["a1"], name="relu6"),
        helper.make_node(
            "MaxPool", ["a1"], ["p1"], name="maxpool", kernel_shape=[2, 2], strides=[2, 2]
        ),
        helper.make_node("Conv", ["p1", "w2", "b2"], ["c2"], name="conv2"),
        helper.make_node("GlobalAveragePool", ["c2"], ["g"], name="gap"),
    ]
    if flatten == "flatten":
        nodes.append(helper.make_node("Flatten", ["g"], ["f"], name="flat", axis=1))
    else:  # what torch.flatten exports with a dynamic batch: Shape -> Gather -> Concat -> Reshape
        inits += [_const_i64("zero", [0]), _const_i64("minus1", [-1])]
        nodes += [
            helper.make_node("Shape", ["g"], ["gs"], name="shape"),
            helper.make_node("Gather", ["gs", "zero"], ["n0"], name="gather", axis=0),
            helper.make_node("Concat", ["n0", "minus1"], ["newshape"], name="cat_shape", axis=0),
            helper.make_node("Reshape", ["g", "newshape"], ["f"], name="reshape"),
        ]
    nodes.append(helper.make_node("Gemm", ["f", "wfc", "bfc"], ["y"], name="fc", transB=1))
    return _save(tmp_path, nodes, {"x": (batch, 3, 32, 32)}, {"y": (batch, 10)}, inits)


@pytest.mark.parametrize("flatten", ["flatten", "reshape"])
@pytest.mark.parametrize("batch", ["N", None, 1, 4])
def test_small_cnn_golden(tmp_path: Path, flatten: str, batch: Dim) -> None:
    net = from_onnx(_cnn(tmp_path, flatten, batch))
    assert net.name == "model"
    assert net.input_shape == (3, 32, 32)
    assert net.meta["batch"] == (batch if isinstance(batch, int) else 1)
    names = [ly.name for ly in net.layers]
    # BN folded, flatten / shape arithmetic dropped
    assert names == ["conv1", "relu1", "dw", "relu6", "maxpool", "conv2", "gap", "fc"]
    ly = _by_name(net)
    # (name, kind, M, K, N, groups, MACs, params, weight elems, in elems, out elems)
    expected = {
        "conv1": (LayerKind.CONV, 256, 27, 16, 1, 256 * 27 * 16, 432 + 32, 432, 3072, 4096),
        "relu1": (LayerKind.ACT, 0, 0, 0, 1, 0, 0, 0, 4096, 4096),
        "dw": (LayerKind.DWCONV, 256, 9, 1, 16, 256 * 9 * 16, 144 + 16, 144, 4096, 4096),
        "relu6": (LayerKind.ACT, 0, 0, 0, 1, 0, 0, 0, 4096, 4096),
        "maxpool": (LayerKind.POOL, 0, 0, 0, 1, 0, 0, 0, 4096, 1024),
        "conv2": (LayerKind.CONV, 64, 16, 32, 1, 64 * 16 * 32, 512 + 32, 512, 1024, 2048),
        "gap": (LayerKind.POOL, 0, 0, 0, 1, 0, 0, 0, 2048, 32),
        "fc": (LayerKind.FC, 1, 32, 10, 1, 320, 330, 320, 32, 10),
    }
    for nm, (kind, m, k, n, g, macs, params, w, i, o) in expected.items():
        got = ly[nm]
        assert (got.kind, got.m, got.k, got.n, got.groups) == (kind, m, k, n, g), nm
        assert (got.macs, got.params, got.weight_elems) == (macs, params, w), nm
        assert (got.input_elems, got.output_elems) == (i, o), nm
    assert ly["conv1"].attrs["post"] == ("bn",)
    assert ly["conv1"].attrs["stride"] == (2, 2)
    assert ly["conv1"].attrs["pads"] == (1, 1, 1, 1)
    assert ly["maxpool"].attrs["mode"] == "max"
    # the chain keeps its data dependencies through the dropped flatten
    assert ly["conv1"].inputs == ()
    assert ly["relu1"].inputs == ("conv1",)
    assert ly["fc"].inputs == ("gap",)
    assert net.macs == sum(e[5] for e in expected.values())
    assert net.params == sum(e[6] for e in expected.values()) == 1498


# --- branches ----------------------------------------------------------------------------------
def _residual_nodes() -> tuple[list[Any], list[Any]]:
    inits = [
        _init("wa", (8, 8, 3, 3)),
        _init("wb", (8, 8, 3, 3)),
        _init("wc", (4, 8, 1, 1)),
        _init("wd", (4, 8, 1, 1)),
        *(_init(f"bn_{p}", (8,)) for p in ("scale", "bias", "mean", "var")),
    ]
    nodes = [
        helper.make_node("Conv", ["x", "wa"], ["a"], name="conv_a", pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["a"], ["ra"], name="relu_a"),
        helper.make_node("Identity", ["ra"], ["ra_id"], name="id"),
        helper.make_node("Conv", ["ra", "wb"], ["b"], name="conv_b", pads=[1, 1, 1, 1]),
        helper.make_node("Add", ["b", "ra_id"], ["s"], name="add"),
        # BN after an Add is not foldable: a vector layer with 2 * C parameters
        helper.make_node(
            "BatchNormalization",
            ["s", "bn_scale", "bn_bias", "bn_mean", "bn_var"],
            ["sb"],
            name="bn",
        ),
        helper.make_node("Conv", ["sb", "wc"], ["c"], name="conv_c"),
        helper.make_node("Conv", ["sb", "wd"], ["d"], name="conv_d"),
        helper.make_node("Concat", ["c", "d"], ["y"], name="cat", axis=1),
    ]
    return nodes, inits


def test_residual_and_concat_keep_branches(tmp_path: Path) -> None:
    nodes, inits = _residual_nodes()
    net = from_onnx(_save(tmp_path, nodes, {"x": (1, 8, 8, 8)}, {"y": (1, 8, 8, 8)}, inits))
    ly = _by_name(net)
    assert [x.name for x in net.layers] == [
        "conv_a",
        "relu_a",
        "conv_b",
        "add",
        "bn",
        "conv_c",
        "conv_d",
        "cat",
    ]
    assert ly["conv_b"].inputs == ("relu_a",)
    assert ly["add"].inputs == ("conv_b", "relu_a")  # through the Identity
    assert ly["add"].kind == LayerKind.ELTWISE
    assert (ly["add"].input_elems, ly["add"].output_elems) == (1024, 512)
    assert ly["bn"].kind == LayerKind.VECTOR and ly["bn"].params == 16
    assert ly["conv_c"].inputs == ly["conv_d"].inputs == ("bn",)
    assert ly["cat"].kind == LayerKind.CONCAT
    assert ly["cat"].inputs == ("conv_c", "conv_d")
    assert (ly["cat"].input_elems, ly["cat"].output_elems) == (512, 512)
    assert ly["conv_a"].macs == 64 * 72 * 8
    assert ly["conv_c"].macs == 64 * 8 * 4


def test_unsorted_graph_is_sorted(tmp_path: Path) -> None:
    nodes, inits = _residual_nodes()
    shuffled = [nodes[i] for i in (8, 6, 7, 5, 4, 3, 2, 1, 0)]
    path = _save(tmp_path, shuffled, {"x": (1, 8, 8, 8)}, {"y": (1, 8, 8, 8)}, inits)
    net = from_onnx(path, name="res")
    assert net.name == "res"
    order = [x.name for x in net.layers]
    pos = {n: i for i, n in enumerate(order)}
    for layer in net.layers:  # Network validates this too; check the branch layers are all there
        assert all(pos[s] < pos[layer.name] for s in layer.inputs)
    assert set(order) == {"conv_a", "relu_a", "conv_b", "add", "bn", "conv_c", "conv_d", "cat"}


# --- MatMul ------------------------------------------------------------------------------------
@pytest.mark.parametrize("batch", ["B", 1, 4])
def test_matmul_fc_and_activation_matmul(tmp_path: Path, batch: Dim) -> None:
    inits = [_init("wq", (16, 32)), _init("bq", (32,))]
    nodes = [
        helper.make_node("MatMul", ["x", "wq"], ["q0"], name="proj"),
        helper.make_node("Add", ["q0", "bq"], ["q"], name="proj_bias"),  # folded: nn.Linear
        helper.make_node("Transpose", ["q"], ["qt"], name="t", perm=[0, 2, 1]),
        helper.make_node("MatMul", ["q", "qt"], ["s"], name="scores"),
        helper.make_node("Softmax", ["s"], ["p"], name="softmax", axis=-1),
        helper.make_node("MatMul", ["h", "ht"], ["z"], name="heads"),
    ]
    path = _save(
        tmp_path,
        nodes,
        {"x": (batch, 6, 16), "h": (batch, 4, 6, 8), "ht": (batch, 4, 8, 6)},
        {"p": (batch, 6, 6), "z": (batch, 4, 6, 6)},
        inits,
    )
    net = from_onnx(path)
    ly = _by_name(net)
    assert [x.name for x in net.layers] == ["proj", "scores", "softmax", "heads"]
    proj = ly["proj"]
    assert (proj.kind, proj.m, proj.k, proj.n, proj.groups) == (LayerKind.FC, 6, 16, 32, 1)
    assert (proj.weight_elems, proj.params, proj.macs) == (512, 544, 6 * 16 * 32)
    assert proj.attrs["post"] == ("bias",)
    scores = ly["scores"]
    assert (scores.kind, scores.m, scores.k, scores.n) == (LayerKind.MATMUL, 6, 32, 6)
    assert scores.inputs == ("proj",)
    assert scores.weight_elems == 0 and scores.params == 0
    assert (scores.input_elems, scores.output_elems) == (2 * 192, 36)
    assert ly["softmax"].kind == LayerKind.VECTOR and ly["softmax"].inputs == ("scores",)
    heads = ly["heads"]  # batched over 4 heads: one group (own stationary operand) per head
    assert (heads.kind, heads.m, heads.k, heads.n, heads.groups) == (LayerKind.MATMUL, 6, 8, 6, 4)
    assert heads.macs == 4 * 6 * 8 * 6
    assert heads.inputs == ()
    assert net.params == 544


def test_gemm_with_activation_operands_is_matmul(tmp_path: Path) -> None:
    nodes = [helper.make_node("Gemm", ["a", "b"], ["y"], name="g", transA=1)]
    net = from_onnx(_save(tmp_path, nodes, {"a": (5, 3), "b": (5, 7)}, {"y": (3, 7)}, []))
    g = net.layers[0]
    # batch = leading dim of the first input = 5 does not divide M = 3: kept whole
    assert (g.kind, g.m, g.k, g.n) == (LayerKind.MATMUL, 3, 5, 7)
    assert (g.weight_elems, g.params) == (0, 0)


def test_gemm_activation_operands_with_constant_bias(tmp_path: Path) -> None:
    """Two activation operands and a constant bias: a MatMul whose only parameters are the bias."""
    nodes = [helper.make_node("Gemm", ["a", "b", "c"], ["y"], name="g", transA=1)]
    path = _save(tmp_path, nodes, {"a": (5, 3), "b": (5, 7)}, {"y": (3, 7)}, [_init("c", (7,))])
    g = from_onnx(path).layers[0]
    assert (g.kind, g.m, g.k, g.n) == (LayerKind.MATMUL, 3, 5, 7)
    assert (g.weight_elems, g.params, g.inputs) == (0, 7, ())


# --- recurrent ---------------------------------------------------------------------------------
@pytest.mark.parametrize("direction, dirs", [("forward", 1), ("bidirectional", 2)])
def test_lstm_one_step(tmp_path: Path, direction: str, dirs: int) -> None:
    hidden, feat, steps = 32, 20, 10
    inits = [
        _init("W", (dirs, 4 * hidden, feat)),
        _init("R", (dirs, 4 * hidden, hidden)),
        _init("B", (dirs, 8 * hidden)),
        _init("wo", (dirs * hidden, 5)),
    ]
    nodes = [
        helper.make_node(
            "LSTM",
            ["x", "W", "R", "B"],
            ["Y", "Yh"],
            name="lstm",
            hidden_size=hidden,
            direction=direction,
        ),
        helper.make_node("Transpose", ["Y"], ["Yt"], name="t", perm=[0, 2, 1, 3]),
        helper.make_node("Reshape", ["Yt", "shape"], ["Yr"], name="r"),
        helper.make_node("MatMul", ["Yr", "wo"], ["out"], name="head"),
    ]
    inits.append(_const_i64("shape", [steps, -1, dirs * hidden]))
    path = _save(tmp_path, nodes, {"x": (steps, "batch", feat)}, {"out": (steps, 1, 5)}, inits)
    net = from_onnx(path)
    lstm, head = net.layers
    assert lstm.kind == LayerKind.LSTM and lstm.repeat == "in"
    assert (lstm.m, lstm.k, lstm.n, lstm.groups) == (1, feat + hidden, 4 * hidden, dirs)
    assert lstm.macs == (feat + hidden) * 4 * hidden * dirs
    assert lstm.weight_elems == dirs * 4 * hidden * (feat + hidden)
    assert lstm.params == lstm.weight_elems + dirs * 8 * hidden
    assert net.seq_len == (steps, 1)
    assert net.input_shape == (steps, feat)  # time-major input: axis 1 is the batch
    assert net.total_macs(seq_in=3) == 3 * lstm.macs + head.macs
    assert head.kind == LayerKind.FC and head.inputs == ("lstm",)
    assert (head.m, head.k, head.n) == (steps, dirs * hidden, 5)


def test_gru_batch_major(tmp_path: Path) -> None:
    inits = [_init("W", (1, 48, 8)), _init("R", (1, 48, 16))]
    nodes = [helper.make_node("GRU", ["x", "W", "R"], ["Y"], name="gru", hidden_size=16, layout=1)]
    path = _save(tmp_path, nodes, {"x": (2, 7, 8)}, {"Y": (2, 7, 1, 16)}, inits)
    net = from_onnx(path)
    gru = net.layers[0]
    assert (gru.kind, gru.m, gru.k, gru.n, gru.groups) == (LayerKind.RNN, 1, 24, 48, 1)
    assert net.seq_len == (7, 1) and net.meta["batch"] == 2


# --- errors ------------------------------------------------------------------------------------
def _one_line_error(exc: pytest.ExceptionInfo[ModelError], path: Path) -> str:
    msg = str(exc.value)
    assert "\n" not in msg
    assert str(path) in msg
    return msg


def test_malformed_file(tmp_path: Path) -> None:
    path = tmp_path / "garbage.onnx"
    path.write_bytes(np.random.default_rng(0).bytes(512))
    with pytest.raises(ModelError) as exc:
        from_onnx(path)
    _one_line_error(exc, path)


def test_empty_file(tmp_path: Path) -> None:
    path = tmp_path / "empty.onnx"
    path.write_bytes(b"")
    with pytest.raises(ModelError, match="not a valid ONNX model") as exc:
        from_onnx(path)
    _one_line_error(exc, path)


def test_model_failing_the_checker(tmp_path: Path) -> None:
    nodes = [helper.make_node("Relu", ["undefined"], ["y"], name="relu")]
    path = _save(tmp_path, nodes, {"x": (1, 4)}, {"y": (1, 4)}, [])
    with pytest.raises(ModelError, match="fails the ONNX checker") as exc:
        from_onnx(path)
    _one_line_error(exc, path)


def test_missing_file(tmp_path: Path) -> None:
    path = tmp_path / "nope.onnx"
    with pytest.raises(ModelError, match="no such file") as exc:
        from_onnx(path)
    _one_line_error(exc, path)


def test_unsupported_standard_op(tmp_path: Path) -> None:
    nodes = [
        helper.make_node("Relu", ["boxes"], ["b2"], name="relu"),
        helper.make_node("NonMaxSuppression", ["b2", "scores"], ["sel"], name="nms"),
    ]
    graph = helper.make_graph(
        nodes,
        "g",
        [
            helper.make_tensor_value_info("boxes", TensorProto.FLOAT, [1, 4, 4]),
            helper.make_tensor_value_info("scores", TensorProto.FLOAT, [1, 1, 4]),
        ],
        [helper.make_tensor_value_info("sel", TensorProto.INT64, [None, 3])],
    )
    path = tmp_path / "nms.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(path))
    with pytest.raises(ModelError) as exc:
        from_onnx(path)
    msg = _one_line_error(exc, path)
    assert "node 'nms'" in msg and "'NonMaxSuppression'" in msg and "supported: " in msg


def test_unsupported_custom_domain_op(tmp_path: Path) -> None:
    nodes = [helper.make_node("Foo", ["x"], ["y"], name="foo1", domain="acme.ops")]
    path = _save(tmp_path, nodes, {"x": (1, 4)}, {"y": (1, 4)}, [], extra_opsets=[("acme.ops", 1)])
    with pytest.raises(ModelError) as exc:
        from_onnx(path)
    msg = _one_line_error(exc, path)
    assert "node 'foo1'" in msg and "'Foo'" in msg and "acme.ops" in msg


def test_onnx_missing_gives_install_hint(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "onnx", None)
    with pytest.raises(ModelError, match=r"pip install 'npusched\[onnx\]'"):
        from_onnx(tmp_path / "x.onnx")


def test_constant_only_graph_has_no_layers(tmp_path: Path) -> None:
    nodes = [helper.make_node("Identity", ["x"], ["y"], name="id")]
    path = _save(tmp_path, nodes, {"x": (1, 4)}, {"y": (1, 4)}, [])
    with pytest.raises(ModelError, match="no layers") as exc:
        from_onnx(path)
    _one_line_error(exc, path)


# --- CLI ---------------------------------------------------------------------------------------
def test_cli_import_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from npusched.cli import main

    path = _cnn(tmp_path, "flatten", "N")
    rc = main(["models", "import", str(path), "--format", "json"])
    out = capsys.readouterr().out
    assert rc == 0
    rows = json.loads(out)
    assert [r["name"] for r in rows] == [
        "conv1",
        "relu1",
        "dw",
        "relu6",
        "maxpool",
        "conv2",
        "gap",
        "fc",
    ]
    dw = rows[2]
    assert (dw["kind"], dw["M"], dw["K"], dw["N"], dw["groups"], dw["macs"]) == (
        "dwconv",
        256,
        9,
        1,
        16,
        36864,
    )


@pytest.mark.parametrize("case", ["missing", "garbage", "unsupported"])
def test_cli_import_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str], case: str) -> None:
    from npusched.cli import main

    if case == "missing":
        path = tmp_path / "missing.onnx"
    elif case == "garbage":
        path = tmp_path / "garbage.onnx"
        path.write_bytes(np.random.default_rng(1).bytes(300))
    else:
        nodes = [helper.make_node("Foo", ["x"], ["y"], name="foo1", domain="acme.ops")]
        path = _save(
            tmp_path, nodes, {"x": (1, 4)}, {"y": (1, 4)}, [], extra_opsets=[("acme.ops", 1)]
        )
    rc = main(["models", "import", str(path)])
    err = capsys.readouterr().err
    assert rc == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("npusched: error: ")
    assert str(path) in lines[0]


# --- a full network against the zoo -------------------------------------------------------------
def _resnet18(tmp_path: Path) -> Path:
    """torchvision ResNet-18 as an ONNX graph (Conv + BatchNormalization + Relu, float16 zeros)."""
    nodes: list[Any] = []
    inits: list[Any] = []

    def conv_bn(x: str, c_in: int, c_out: int, k: int, s: int, name: str, relu: bool) -> str:
        inits.append(_init(f"{name}.w", (c_out, c_in, k, k), np.float16))
        inits.extend(_init(f"{name}.bn_{p}", (c_out,), np.float16) for p in "sbmv")
        p = k // 2
        nodes.append(
            helper.make_node(
                "Conv",
                [x, f"{name}.w"],
                [f"{name}.c"],
                name=name,
                kernel_shape=[k, k],
                strides=[s, s],
                pads=[p, p, p, p],
            )
        )
        bn_in = [f"{name}.c", *(f"{name}.bn_{p}" for p in "sbmv")]
        nodes.append(helper.make_node("BatchNormalization", bn_in, [f"{name}.bn"]))
        if not relu:
            return f"{name}.bn"
        nodes.append(helper.make_node("Relu", [f"{name}.bn"], [f"{name}.r"]))
        return f"{name}.r"

    x = conv_bn("x", 3, 64, 7, 2, "conv1", relu=True)
    nodes.append(
        helper.make_node(
            "MaxPool",
            [x],
            ["pool1"],
            name="pool1",
            kernel_shape=[3, 3],
            strides=[2, 2],
            pads=[1, 1, 1, 1],
        )
    )
    x, c = "pool1", 64
    for stage in range(4):
        width = 64 * 2**stage
        for i in range(2):
            stride = 2 if stage > 0 and i == 0 else 1
            pre = f"layer{stage + 1}_{i}"
            y = conv_bn(x, c, width, 3, stride, f"{pre}_conv1", relu=True)
            y = conv_bn(y, width, width, 3, 1, f"{pre}_conv2", relu=False)
            short = x
            if stride != 1 or c != width:
                short = conv_bn(x, c, width, 1, stride, f"{pre}_down", relu=False)
            nodes.append(helper.make_node("Add", [y, short], [f"{pre}.sum"], name=f"{pre}_add"))
            nodes.append(helper.make_node("Relu", [f"{pre}.sum"], [f"{pre}.out"]))
            x, c = f"{pre}.out", width
    inits += [_init("fc.w", (1000, 512), np.float16), _init("fc.b", (1000,), np.float16)]
    nodes += [
        helper.make_node("GlobalAveragePool", [x], ["gap"], name="avgpool"),
        helper.make_node("Flatten", ["gap"], ["flat"]),
        helper.make_node("Gemm", ["flat", "fc.w", "fc.b"], ["y"], name="fc", transB=1),
    ]
    graph = helper.make_graph(
        nodes,
        "resnet18",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT16, ["N", 3, 224, 224])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT16, ["N", 1000])],
        initializer=inits,
    )
    path = tmp_path / "resnet18.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(path))
    return path


def test_resnet18_matches_zoo(tmp_path: Path) -> None:
    from npusched.models import get_network

    net = from_onnx(_resnet18(tmp_path))
    zoo = get_network("resnet-18")
    assert net.macs == zoo.macs == 1_814_073_344
    assert net.params == zoo.params == 11_689_512
    gemm = {
        ly.name: (ly.kind, ly.m, ly.k, ly.n, ly.groups, ly.params)
        for ly in net.layers
        if ly.is_gemm
    }
    ref = {
        ly.name: (ly.kind, ly.m, ly.k, ly.n, ly.groups, ly.params)
        for ly in zoo.layers
        if ly.is_gemm
    }
    assert gemm == ref
    ly = _by_name(net)
    assert ly["layer2_0_add"].inputs == ("layer2_0_conv2", "layer2_0_down")
    assert ly["layer2_0_down"].inputs == ly["layer2_0_conv1"].inputs


def test_conv_transpose(tmp_path: Path) -> None:
    nodes = [
        helper.make_node(
            "ConvTranspose", ["x", "w", "b"], ["y"], name="up", kernel_shape=[2, 2], strides=[2, 2]
        )
    ]
    inits = [_init("w", (8, 4, 2, 2)), _init("b", (4,))]
    net = from_onnx(_save(tmp_path, nodes, {"x": (1, 8, 4, 4)}, {"y": (1, 4, 8, 8)}, inits))
    up = net.layers[0]
    # every input pixel (16) multiplies C_in (8) by C_out * R * S (4 * 2 * 2)
    assert (up.kind, up.m, up.k, up.n, up.groups) == (LayerKind.CONV, 16, 8, 16, 1)
    assert up.macs == 16 * 8 * 4 * 4 and up.params == 128 + 4
    assert (up.input_elems, up.output_elems) == (128, 256)
    assert up.attrs["transposed"] is True


def test_embedding_layernorm_split_vector_ops(tmp_path: Path) -> None:
    seq, dim = 5, 8
    inits = [
        _init("emb", (100, dim)),
        _init("ln_s", (dim,)),
        _init("ln_b", (dim,)),
        _init("w", (dim, 3 * dim)),
        _const_i64("split", [dim, dim, dim]),
        numpy_helper.from_array(np.array(0.5, np.float32), "half"),
    ]
    nodes = [
        helper.make_node("Gather", ["emb", "ids"], ["e"], name="embed"),
        helper.make_node("LayerNormalization", ["e", "ln_s", "ln_b"], ["n"], name="ln", axis=-1),
        helper.make_node("MatMul", ["n", "w"], ["qkv"], name="qkv"),
        helper.make_node("Split", ["qkv", "split"], ["q", "k", "v"], name="split", axis=-1),
        helper.make_node("Mul", ["q", "half"], ["qs"], name="scale"),
        helper.make_node("Add", ["qs", "v"], ["y"], name="mix"),
    ]
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("ids", TensorProto.INT64, ["B", seq])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["B", seq, dim])],
        initializer=inits,
    )
    path = tmp_path / "tiny_encoder.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(path))
    net = from_onnx(path)
    ly = _by_name(net)
    assert [x.name for x in net.layers] == ["embed", "ln", "qkv", "split", "scale", "mix"]
    assert ly["embed"].kind == LayerKind.EMBED and ly["embed"].params == 800
    # an embedding look-up reads the rows it gathers
    assert (ly["embed"].input_elems, ly["embed"].output_elems) == (seq * dim, seq * dim)
    assert ly["ln"].params == 2 * dim
    assert (ly["qkv"].m, ly["qkv"].k, ly["qkv"].n) == (seq, dim, 3 * dim)
    assert ly["split"].output_elems == 3 * seq * dim
    assert ly["scale"].kind == LayerKind.ELTWISE and ly["scale"].params == 0  # scalar constant
    assert ly["mix"].inputs == ("scale", "split")
    assert net.params == 800 + 2 * dim + dim * 3 * dim
    assert net.input_shape == (seq,)


@pytest.mark.parametrize(
    "c_in, c_out, group, kind, k, n",
    [
        (8, 16, 2, LayerKind.CONV, 9 * 4, 8),  # grouped, not depthwise
        (8, 8, 8, LayerKind.DWCONV, 9, 1),  # depthwise
        (8, 16, 8, LayerKind.DWCONV, 9, 2),  # depthwise, channel multiplier 2
        (1, 4, 1, LayerKind.CONV, 9, 4),  # one input channel: a plain convolution
    ],
)
def test_grouped_and_depthwise_conv(
    tmp_path: Path, c_in: int, c_out: int, group: int, kind: LayerKind, k: int, n: int
) -> None:
    nodes = [
        helper.make_node(
            "Conv", ["x", "w"], ["y"], name="c", group=group, strides=[2, 2], auto_pad="SAME_UPPER"
        )
    ]
    inits = [_init("w", (c_out, c_in // group, 3, 3))]
    net = from_onnx(_save(tmp_path, nodes, {"x": (1, c_in, 9, 9)}, {"y": (1, c_out, 5, 5)}, inits))
    c = net.layers[0]
    assert (c.kind, c.m, c.k, c.n, c.groups) == (kind, 25, k, n, group)
    assert c.macs == 25 * 9 * (c_in // group) * c_out
    assert c.weight_elems == c.params == c_out * (c_in // group) * 9


@pytest.mark.parametrize(
    "attrs, expected",
    [
        ({"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]}, (2, 16, 8, 8)),
        ({"kernel_shape": [3, 3], "dilations": [2, 2]}, (2, 16, 11, 11)),
        ({"kernel_shape": [3, 3], "strides": [2, 2], "auto_pad": "SAME_UPPER"}, (2, 16, 8, 8)),
        ({"kernel_shape": [3, 3], "strides": [2, 2], "auto_pad": "VALID"}, (2, 16, 7, 7)),
    ],
)
def test_conv_output_shape_from_attributes(
    attrs: dict[str, Any], expected: tuple[int, ...]
) -> None:
    """The fallback used when shape inference leaves a convolution's output shape open."""
    from npusched.models.onnx_import import _Importer

    node = helper.make_node("Conv", ["x", "w"], ["y"], **attrs)
    imp = _Importer(helper.make_model(helper.make_graph([], "g", [], [])), Path("m.onnx"), "m")
    assert imp._conv_out(node, (2, 3, 15, 15), (16, 3, 3, 3), 1, False) == expected


def test_cycle_is_reported(tmp_path: Path) -> None:
    nodes = [
        helper.make_node("Relu", ["b"], ["a"], name="r1"),
        helper.make_node("Relu", ["a"], ["b"], name="r2"),
        helper.make_node("Add", ["x", "a"], ["y"], name="add"),
    ]
    path = _save(tmp_path, nodes, {"x": (1, 4)}, {"y": (1, 4)}, [])
    with pytest.raises(ModelError, match="cycle") as exc:
        from_onnx(path)
    _one_line_error(exc, path)


def test_profile_accepts_an_onnx_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`npusched profile FILE.onnx` imports the file and profiles it like a zoo network."""
    import json

    from npusched.cli import main

    path = _cnn(tmp_path, "flatten", 1)
    assert main(["profile", str(path), "--batch", "1", "--batch", "4", "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    totals = doc["totals"]
    assert [t["batch"] for t in totals] == [1, 4]
    assert totals[1]["isolated_ms"] >= totals[0]["isolated_ms"] > 0


# --- transformers: Einsum, erf-GELU, LayerNormalization, embeddings, masks --------------------
def _bert_layer(tmp_path: Path, batch: int, gelu: str = "erf") -> Path:
    """One BERT encoder layer as exported by PyTorch/TF: Gather embedding, LayerNormalization,
    Einsum projections and attention, an Expand/Where attention mask, erf-based GELU."""
    s, d, h, hd, ff, vocab = 8, 16, 2, 8, 32, 50
    inits = [
        _init("emb", (vocab, d)),
        *(_init(f"ln{i}_{p}", (d,)) for i in range(3) for p in ("g", "b")),
        *(_init(f"w{p}", (d, d)) for p in "qkvo"),
        _init("w1", (d, ff)),
        _init("w2", (ff, d)),
        _const_i64("shape4", [batch, s, h, hd]),
        _const_i64("shape3", [batch, s, d]),
        _const_i64("mask_shape", [batch, h, s, s]),
        numpy_helper.from_array(np.array(-1e4, np.float32), "neg"),
        numpy_helper.from_array(np.array(1.4142135, np.float32), "sqrt2"),
        numpy_helper.from_array(np.array(1.0, np.float32), "one"),
        numpy_helper.from_array(np.array(0.5, np.float32), "half"),
    ]
    n = helper.make_node
    nodes = [
        n("Gather", ["emb", "ids"], ["e"], name="embed"),
        n("LayerNormalization", ["e", "ln0_g", "ln0_b"], ["x"], name="ln0", axis=-1),
        *(
            n("Einsum", ["x", f"w{p}"], [p], name=f"proj_{p}", equation="bsd,dk->bsk")
            for p in "qkv"
        ),
        *(n("Reshape", [p, "shape4"], [f"{p}4"], name=f"split_{p}") for p in "qkv"),
        n("Einsum", ["q4", "k4"], ["sc"], name="qk", equation="bshd,bthd->bhst"),
        n("Expand", ["mask", "mask_shape"], ["mexp"], name="mask_expand"),
        n("Where", ["mexp", "sc", "neg"], ["scm"], name="mask_where"),
        n("Softmax", ["scm"], ["p"], name="softmax", axis=-1),
        n("Einsum", ["p", "v4"], ["c4"], name="pv", equation="bhst,bthd->bshd"),
        n("Reshape", ["c4", "shape3"], ["c"], name="merge"),
        n("MatMul", ["c", "wo"], ["o"], name="proj_o"),
        n("Add", ["o", "x"], ["r1"], name="res1"),
        n("LayerNormalization", ["r1", "ln1_g", "ln1_b"], ["x2"], name="ln1", axis=-1),
        n("Einsum", ["x2", "w1"], ["f"], name="fc1", equation="...d,df->...f"),
        *(
            [
                n("Div", ["f", "sqrt2"], ["fd"], name="gelu_div"),
                n("Erf", ["fd"], ["fe"], name="gelu_erf"),
                n("Add", ["fe", "one"], ["fa"], name="gelu_add"),
                n("Mul", ["f", "fa"], ["fm"], name="gelu_mul"),
                n("Mul", ["fm", "half"], ["g"], name="gelu_half"),
            ]
            if gelu == "erf"
            else [n("Gelu", ["f"], ["g"], name="gelu")]  # opset 20
        ),
        n("MatMul", ["g", "w2"], ["y"], name="fc2"),
        n("Add", ["y", "x2"], ["r2"], name="res2"),
        n("LayerNormalization", ["r2", "ln2_g", "ln2_b"], ["out"], name="ln2", axis=-1),
    ]
    graph = helper.make_graph(
        nodes,
        "bert_layer",
        [
            helper.make_tensor_value_info("ids", TensorProto.INT64, [batch, s]),
            helper.make_tensor_value_info("mask", TensorProto.BOOL, [batch, 1, 1, s]),
        ],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, [batch, s, d])],
        initializer=inits,
    )
    path = tmp_path / "bert_layer.onnx"
    opset = 17 if gelu == "erf" else 20
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)]), str(path))
    return path


@pytest.mark.parametrize("batch", [1, 3])
def test_bert_layer_with_einsum_and_erf_gelu(tmp_path: Path, batch: int) -> None:
    s, d, h, hd, ff = 8, 16, 2, 8, 32
    net = from_onnx(_bert_layer(tmp_path, batch))
    _check_bert_layer(net, s, d, h, hd, ff)
    ly = _by_name(net)
    assert ly["gelu_erf"].kind == LayerKind.ACT and ly["gelu_erf"].attrs["fn"] == "erf"


def test_bert_layer_with_gelu_op(tmp_path: Path) -> None:
    net = from_onnx(_bert_layer(tmp_path, 2, gelu="op"))
    _check_bert_layer(net, 8, 16, 2, 8, 32)
    gelu = _by_name(net)["gelu"]
    assert (gelu.kind, gelu.attrs["fn"], gelu.inputs) == (LayerKind.ACT, "gelu", ("fc1",))
    assert _by_name(net)["fc2"].inputs == ("gelu",)


def _check_bert_layer(net: Network, s: int, d: int, h: int, hd: int, ff: int) -> None:
    ly = _by_name(net)
    # hand count: S (4 d^2 + 2 d ff) projections and MLP + 2 S^2 d attention = 16,384 + 2,048
    assert net.macs == s * (4 * d * d + 2 * d * ff) + 2 * s * s * d == 18432
    for p in "qkv":
        assert (ly[f"proj_{p}"].kind, ly[f"proj_{p}"].m, ly[f"proj_{p}"].k, ly[f"proj_{p}"].n) == (
            LayerKind.FC,
            s,
            d,
            d,
        )
    qk, pv = ly["qk"], ly["pv"]
    assert (qk.kind, qk.groups, qk.m, qk.k, qk.n) == (LayerKind.MATMUL, h, s, hd, s)
    assert (pv.kind, pv.groups, pv.m, pv.k, pv.n) == (LayerKind.MATMUL, h, s, s, hd)
    assert qk.inputs == ("proj_q", "proj_k") and pv.inputs == ("softmax", "proj_v")
    assert (ly["fc1"].m, ly["fc1"].k, ly["fc1"].n) == (s, d, ff)
    assert ly["embed"].kind == LayerKind.EMBED and ly["embed"].input_elems == s * d
    assert ly["mask_where"].inputs == ("mask_expand", "qk")
    assert ly["mask_expand"].output_elems == h * s * s
    assert ly["ln2"].params == 2 * d
    assert net.params == 50 * d + 3 * 2 * d + 4 * d * d + 2 * d * ff == 2944


def test_einsum_forms() -> None:
    from npusched.models.onnx_import import _einsum_terms, einsum_gemm

    assert _einsum_terms("bhid,bhjd->bhij", [4, 4]) == (["bhid", "bhjd"], "bhij")
    assert _einsum_terms("...d,df->...f", [3, 2]) == (["89d", "df"], "89f")
    assert _einsum_terms("ij,jk", [2, 2]) == (["ij", "jk"], "ik")  # implicit output
    assert einsum_gemm("bhid", "bhjd", "bhij") == ("bh", "i", "d", "j")
    assert einsum_gemm("bhij", "bhjd", "bhid") == ("bh", "i", "j", "d")
    with pytest.raises(ValueError):
        einsum_gemm("ij", "jk", "k")  # i summed within one operand


def test_einsum_unsupported_forms_name_the_node(tmp_path: Path) -> None:
    nodes = [
        helper.make_node("Einsum", ["a", "b", "c"], ["y"], name="tri", equation="ij,jk,kl->il")
    ]
    path = _save(tmp_path, nodes, {"a": (2, 3), "b": (3, 4), "c": (4, 5)}, {"y": (2, 5)}, [])
    with pytest.raises(ModelError, match=r"'tri'.*3 operands"):
        from_onnx(path)
    nodes = [helper.make_node("Einsum", ["a", "b"], ["y"], name="odd", equation="ij,jk->k")]
    path = _save(tmp_path, nodes, {"a": (2, 3), "b": (3, 4)}, {"y": (4,)}, [], fname="o.onnx")
    with pytest.raises(ModelError, match=r"'odd'.*not a \(batched\) matrix product"):
        from_onnx(path)
