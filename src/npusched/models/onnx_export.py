"""Export a zoo :class:`~npusched.models.ir.Network` as a runnable ONNX graph (needs ``onnx``).

The graph is built from the IR alone: each layer's ``inputs`` give the branch structure, its
``attrs`` the kernel, stride and padding, its ``post`` the fused batch-norm and activation. The
weights are drawn from a seeded :class:`numpy.random.Generator` (He-normal, so activations stay
finite through deep networks); nothing is downloaded.

Mapping (each IR layer becomes the nodes below; the last node's output tensor carries the
layer's name, and every node is named ``<layer>`` or ``<layer>/<what>``):

* ``conv`` / ``dwconv``: ``Conv`` (+ bias when the layer counts one), ``BatchNormalization`` when
  ``post`` has ``bn`` (the importer folds it back: ``2 * C`` parameters), then the activation.
* ``fc``: ``Flatten`` (of an image tensor), ``Gemm`` with weight and bias, then the activation.
* ``pool``: ``MaxPool`` / ``AveragePool`` with the layer's kernel, stride, padding and
  ``ceil_mode``; a pool without a kernel is ``GlobalAveragePool`` / ``GlobalMaxPool``.
* ``act``: ``Relu``, ``Clip`` (relu6), ``LeakyRelu`` (0.1), ``Sigmoid``, ``Tanh``,
  ``HardSwish``, ``HardSigmoid``, ``Mish``, swish as ``x * Sigmoid(x)``.
* ``eltwise``: ``Add`` / ``Mul`` (a ``(C,)`` gate is unsqueezed to ``(C, 1, 1)``).
* ``concat``: ``Concat`` on channels.
* ``vector`` ops ``lrn`` (``LRN``, size 5) and ``bn_relu`` (``BatchNormalization`` + ``Relu``).

Anything else (recurrent cells, attention, detection heads, 3-D convolutions, embeddings) raises
a one-line :class:`~npusched.errors.ModelError` naming the layer and its kind.

``input_size`` rebuilds the spatial shapes at another square input size, keeping every layer's
padding (explicit, or TensorFlow ``same``): the exported graph is the same network at that
resolution (its MACs scale with the pixels; import it back to get its IR).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np

from npusched.errors import ModelError
from npusched.models.ir import LayerKind, Network

#: ONNX opset of exported graphs (Mish needs 18).
OPSET = 18
EXPORTABLE = "conv, dwconv, fc, pool, act, eltwise, concat, vector (lrn, bn_relu)"
_ACTS = {
    "relu": "Relu",
    "relu6": "Clip",
    "leaky": "LeakyRelu",
    "sigmoid": "Sigmoid",
    "tanh": "Tanh",
    "hswish": "HardSwish",
    "hsigmoid": "HardSigmoid",
    "mish": "Mish",
    "swish": "swish",
}


def _pads(size: int, kernel: int, stride: int, pad: Any, dilation: int = 1) -> tuple[int, int, int]:
    """``(out, pad_begin, pad_end)`` along one axis for a builder padding value."""
    eff = dilation * (kernel - 1) + 1
    if pad == "same":
        out = -(-size // stride)
        total = max((out - 1) * stride + eff - size, 0)
        return out, total // 2, total - total // 2
    p = 0 if pad == "valid" else int(pad)
    out = (size + 2 * p - eff) // stride + 1
    if out < 1:
        raise ModelError(f"kernel {kernel} stride {stride} does not fit input {size}")
    return out, p, p


class _Exporter:
    def __init__(self, net: Network, batch: int, input_size: int | None, seed: int) -> None:
        from onnx import helper

        self.helper = helper
        self.net = net
        self.batch = int(batch)
        self.rng = np.random.default_rng(seed)
        shape = tuple(net.input_shape)
        if input_size is not None:
            if len(shape) != 3:
                raise ModelError(f"{net.name}: input_size needs an image input (C, H, W)")
            shape = (shape[0], int(input_size), int(input_size))
        self.input_shape = shape
        self.nodes: list[Any] = []
        self.inits: list[Any] = []
        #: ONNX shape (without the batch) of each layer's output tensor, by layer name.
        self.shapes: dict[str, tuple[int, ...]] = {"input": shape}

    # --- helpers ---------------------------------------------------------------------------
    def _const(self, name: str, arr: np.ndarray[Any, Any]) -> str:
        from onnx import numpy_helper

        self.inits.append(numpy_helper.from_array(arr, name))
        return name

    def _weight(self, name: str, shape: tuple[int, ...], fan_in: int) -> str:
        w = self.rng.standard_normal(shape).astype(np.float32) * math.sqrt(2.0 / max(fan_in, 1))
        return self._const(name, w)

    def _node(self, op: str, inputs: list[str], output: str, name: str, **attrs: Any) -> str:
        self.nodes.append(self.helper.make_node(op, inputs, [output], name=name, **attrs))
        return output

    def _act(self, fn: str | None, x: str, out: str, name: str) -> str:
        if fn is None:
            return x
        op = _ACTS.get(fn)
        if op is None:
            raise ModelError(
                f"{self.net.name}: activation {fn!r} of layer {name!r} is not exportable"
            )
        if op == "swish":
            s = self._node("Sigmoid", [x], f"{name}/sigmoid", f"{name}/sigmoid")
            return self._node("Mul", [x, s], out, f"{name}/swish")
        if op == "Clip":
            lo = self._const(f"{name}/clip_min", np.array(0.0, np.float32))
            hi = self._const(f"{name}/clip_max", np.array(6.0, np.float32))
            return self._node("Clip", [x, lo, hi], out, f"{name}/relu6")
        if op == "LeakyRelu":
            return self._node(op, [x], out, f"{name}/{fn}", alpha=0.1)
        return self._node(op, [x], out, f"{name}/{fn}")

    def _bn(self, x: str, c: int, out: str, name: str) -> str:
        scale = self._const(f"{name}/bn_scale", np.ones(c, np.float32))
        shift = self._const(f"{name}/bn_shift", np.zeros(c, np.float32))
        mean = self._const(f"{name}/bn_mean", np.zeros(c, np.float32))
        var = self._const(f"{name}/bn_var", np.ones(c, np.float32))
        return self._node(
            "BatchNormalization", [x, scale, shift, mean, var], out, f"{name}/bn", epsilon=1e-5
        )

    def _posts(self, name: str, x: str, post: tuple[Any, ...], channels: int) -> str:
        """Apply ``post`` ops (``bn`` and one activation); the last output is named ``name``."""
        ops = [p for p in post if p]
        for i, p in enumerate(ops):
            out = name if i == len(ops) - 1 else f"{name}/{p}_out"
            x = self._bn(x, channels, out, name) if p == "bn" else self._act(str(p), x, out, name)
        if x != name:
            x = self._node("Identity", [x], name, f"{name}/out")
        return x

    def _unsupported(self, layer: Any, what: str = "") -> ModelError:
        kind = f"{layer.kind.value}" + (f" ({what})" if what else "")
        return ModelError(
            f"{self.net.name}: layer {layer.name!r} of kind {kind} is not exportable; "
            f"exportable kinds: {EXPORTABLE}"
        )

    # --- layers ----------------------------------------------------------------------------
    def run(self) -> Any:
        from onnx import TensorProto, helper

        consumed: set[str] = set()
        for layer in self.net.layers:
            if layer.repeat is not None:
                raise self._unsupported(layer, "recurrent time step")
            srcs = list(layer.inputs) or ["input"]
            consumed.update(srcs)
            self._layer(layer, srcs)
        outs = [x.name for x in self.net.layers if x.name not in consumed]
        graph = helper.make_graph(
            self.nodes,
            self.net.name,
            [
                helper.make_tensor_value_info(
                    "input", TensorProto.FLOAT, [self.batch, *self.input_shape]
                )
            ],
            [
                helper.make_tensor_value_info(o, TensorProto.FLOAT, [self.batch, *self.shapes[o]])
                for o in outs
            ],
            initializer=self.inits,
        )
        model = helper.make_model(
            graph,
            opset_imports=[helper.make_opsetid("", OPSET)],
            producer_name="npusched",
        )
        model.ir_version = 9
        return model

    def _layer(self, layer: Any, srcs: list[str]) -> None:
        kind = layer.kind
        name = layer.name
        a = layer.attrs
        if kind in (LayerKind.CONV, LayerKind.DWCONV):
            if len(a.get("kernel", ())) != 2 or "padding" not in a:
                raise self._unsupported(layer, "not a 2-D convolution")
            c, h, w = self.shapes[srcs[0]]
            (kh, kw), (sh, sw) = a["kernel"], a["stride"]
            ph, pw = a["padding"]
            dil = int(a.get("dilation", 1))
            ho, t, b = _pads(h, kh, sh, ph, dil)
            wo, l_, r = _pads(w, kw, sw, pw, dil)
            g = layer.groups
            out_ch = layer.n * g
            post = tuple(a.get("post", ()))
            bn = "bn" in post
            weights = layer.k * layer.n * g
            has_bias = layer.params - weights - (2 * out_ch if bn else 0) == out_ch
            ins = [srcs[0], self._weight(f"{name}/w", (out_ch, c // g, kh, kw), layer.k)]
            if has_bias:
                ins.append(self._const(f"{name}/b", np.zeros(out_ch, np.float32)))
            y = self._node(
                "Conv",
                ins,
                f"{name}/conv",
                f"{name}/conv",
                kernel_shape=[kh, kw],
                strides=[sh, sw],
                pads=[t, l_, b, r],
                dilations=[dil, dil],
                group=g,
            )
            self._posts(name, y, post, out_ch)
            self.shapes[name] = (out_ch, ho, wo)
        elif kind == LayerKind.FC:
            src = srcs[0]
            if len(self.shapes[src]) == 2:
                raise self._unsupported(layer, "fully connected over a sequence")
            feat = math.prod(self.shapes[src])
            if len(self.shapes[src]) > 1:
                src = self._node("Flatten", [src], f"{name}/flat", f"{name}/flatten", axis=1)
            ins = [src, self._weight(f"{name}/w", (layer.n, feat), feat)]
            if layer.params > layer.weight_elems:
                ins.append(self._const(f"{name}/b", np.zeros(layer.n, np.float32)))
            y = self._node("Gemm", ins, f"{name}/gemm", f"{name}/gemm", transB=1)
            self._posts(name, y, tuple(a.get("post", ())), layer.n)
            self.shapes[name] = (layer.n,)
        elif kind == LayerKind.POOL:
            c, h, w = self.shapes[srcs[0]][:3]
            mode = a.get("mode", "max")
            if mode not in ("max", "avg"):
                raise self._unsupported(layer, f"{mode} pooling")
            if "kernel" not in a:
                op = "GlobalAveragePool" if mode == "avg" else "GlobalMaxPool"
                self._node(op, [srcs[0]], name, name)
                self.shapes[name] = (c, 1, 1)
                return
            (kh, kw), (sh, sw) = a["kernel"], a["stride"]
            pad = a.get("padding", 0)
            ph, pw = pad if isinstance(pad, tuple) else (pad, pad)
            ho, t, b = _pads(h, kh, sh, ph)
            wo, l_, r = _pads(w, kw, sw, pw)
            ceil = bool(a.get("ceil_mode", False)) and ph != "same"
            if ceil:
                ho = -(-(h + 2 * t - kh) // sh) + 1
                wo = -(-(w + 2 * l_ - kw) // sw) + 1
            op = "MaxPool" if mode == "max" else "AveragePool"
            self._node(
                op,
                [srcs[0]],
                name,
                name,
                kernel_shape=[kh, kw],
                strides=[sh, sw],
                pads=[t, l_, b, r],
                ceil_mode=int(ceil),
            )
            self.shapes[name] = (c, ho, wo)
        elif kind == LayerKind.ACT:
            self._act(str(a.get("fn")), srcs[0], name, name)
            self.shapes[name] = self.shapes[srcs[0]]
        elif kind == LayerKind.ELTWISE:
            op = a.get("op")
            post = tuple(a.get("post", ()) or ())
            if op == "add":
                if len(srcs) < 2:
                    raise self._unsupported(layer, "add of one tensor")
                y = srcs[0]
                for i, s in enumerate(srcs[1:]):
                    y = self._node("Add", [y, s], f"{name}/add{i}", f"{name}/add{i}")
                self._posts(name, y, post, 0)
                self.shapes[name] = self.shapes[srcs[0]]
            elif op == "mul":
                x, gate = srcs[0], srcs[-1]
                if len(self.shapes[gate]) < len(self.shapes[x]):
                    axes = self._const(f"{name}/axes", np.array([2, 3], np.int64))
                    gate = self._node(
                        "Unsqueeze", [gate, axes], f"{name}/gate", f"{name}/unsqueeze"
                    )
                self._node("Mul", [x, gate], name, name)
                self.shapes[name] = self.shapes[x]
            else:
                raise self._unsupported(layer, f"op {op!r}")
        elif kind == LayerKind.CONCAT:
            shapes = [self.shapes[s] for s in srcs]
            self._node("Concat", srcs, name, name, axis=1)
            self.shapes[name] = (sum(s[0] for s in shapes), *shapes[0][1:])
        elif kind == LayerKind.VECTOR and a.get("op") == "lrn":
            self._node("LRN", [srcs[0]], name, name, size=5, alpha=1e-4, beta=0.75, bias=1.0)
            self.shapes[name] = self.shapes[srcs[0]]
        elif kind == LayerKind.VECTOR and a.get("op") == "bn_relu":
            c = self.shapes[srcs[0]][0]
            y = self._bn(srcs[0], c, f"{name}/bn_out", name)
            self._node("Relu", [y], name, f"{name}/relu")
            self.shapes[name] = self.shapes[srcs[0]]
        else:
            raise self._unsupported(layer, f"op {a.get('op')!r}" if a.get("op") else "")


def to_onnx(net: Network, *, batch: int = 1, input_size: int | None = None, seed: int = 0) -> Any:
    """The ONNX ``ModelProto`` of ``net`` (see the module docstring), checked by
    ``onnx.checker`` and shape inference. ``batch``: the leading dimension of the input (samples);
    ``input_size``: square input side in pixels (default the network's own); ``seed``: the
    weights' random stream."""
    import onnx

    if batch < 1:
        raise ModelError(f"batch must be >= 1, got {batch}")
    if input_size is not None and input_size < 8:
        raise ModelError(f"input_size must be >= 8 pixels, got {input_size}")
    model = _Exporter(net, batch, input_size, seed).run()
    onnx.checker.check_model(model, full_check=True)
    return onnx.shape_inference.infer_shapes(model, check_type=True, strict_mode=True)


def export_onnx(
    net: Network,
    path: str | Path,
    *,
    batch: int = 1,
    input_size: int | None = None,
    seed: int = 0,
) -> Path:
    """Write ``to_onnx(net, ...)`` to ``path`` (parent folders created); returns the path."""
    import onnx

    model = to_onnx(net, batch=batch, input_size=input_size, seed=seed)
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    onnx.save_model(model, str(p))
    return p
