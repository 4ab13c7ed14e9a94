"""Import an ONNX model file as a :class:`~npusched.models.ir.Network` (needs the ``onnx`` extra).

The importer loads the file, sorts the graph topologically if needed, runs the ONNX checker and
shape inference, and maps every node to at most one :class:`~npusched.models.ir.Layer` in the GEMM
convention of :mod:`npusched.models.ir` (per sample: ``M`` rows, ``K`` reduction, ``N`` output
columns per group, ``groups``; ``macs = M * K * N * groups``).

Conventions
-----------
* **Batch.** The leading dimension of the first activation input of the graph is the batch ``B``
  (dimension 1 when that input feeds a time-major recurrent node directly); a symbolic dimension
  counts as 1, and so does every other symbolic dimension (they are listed in
  ``Network.meta["symbolic_dims"]``). Counts are computed on whole tensors and divided by ``B``,
  which gives per-sample values; a tensor whose size is not a multiple of ``B`` (one that does not
  carry the batch, e.g. a constant table) is kept whole. A dimension shape inference leaves open
  (no value, or a generated ``unk__`` name) is solved from element counts after reshape-like
  operators; a GEMM operand with an open dimension other than the leading one is an error.
* **GEMM operators.** ``Conv``: ``M = output pixels``, ``K = R*S*C_in/groups``,
  ``N = C_out/groups``; kind ``dwconv`` when ``group == C_in > 1`` and ``C_out % C_in == 0``.
  ``ConvTranspose`` (kind ``conv``, ``attrs["transposed"]``): ``M = input pixels``,
  ``K = C_in/groups``, ``N = C_out/groups * R*S``. ``Gemm`` / ``MatMul`` with a constant operand:
  ``fc`` (a constant with leading batch dims gives one group per weight matrix; a constant on the
  left, ``W @ X``, is viewed as ``X^T W^T`` so the weights stay ``K x N``); with two activation
  operands: ``matmul``, one group per leading index (per head: each has its own operand, which
  a weight-stationary array loads separately; the sample batch is divided out as everywhere).
  ``Einsum`` with two operands is classified into batch / ``M`` / ``K`` / ``N`` indices
  (:func:`einsum_gemm`: the common attention and projection forms such as ``bhid,bhjd->bhij``,
  ``bhij,bhjd->bhid``, ``bsd,dk->bsk``, with ``...`` and implicit outputs) and costed like
  ``MatMul``; one operand: a transpose passes through, anything else is a vector op.
* **Weights.** Initializers, ``Constant`` nodes and everything computed from constants alone
  (``Shape``, ``Gather`` on shapes, a ``Transpose`` of a weight, ...) are constants: nodes whose
  inputs are all constant are folded away and never become layers. A GEMM operand that is a
  constant is a weight. ``Gather`` from a constant table is an embedding look-up (kind
  ``embed``) whose ``input_elems`` count the rows it gathers (the bytes it reads).
* **Parameters.** ``params`` counts the elements of constant operands used as weights and biases
  (convolution / GEMM / recurrent weights and biases, normalisation scale and shift, a non-scalar
  constant operand of an element-wise op, a ``PRelu`` slope, an embedding table read by
  ``Gather``), each constant once even when it is shared; a batch-norm folded into the preceding
  layer adds ``2 * C`` (scale and shift). ``weight_elems`` counts the weights a layer reads every
  time it runs (shared weights are counted at every use).
* **Fusion.** A ``BatchNormalization`` whose input comes straight from a ``Conv`` / ``Gemm`` /
  weight ``MatMul`` (and feeds nothing else) is folded into it; so is an ``Add`` of a constant bias
  vector after a weight ``MatMul`` (how PyTorch exports ``nn.Linear`` on 3-D inputs). Activations
  stay separate ``act`` layers.
* **Shape-only operators** (``Flatten``, ``Reshape``, ``Squeeze``, ``Unsqueeze``, ``Transpose``,
  ``Identity``, ``Dropout``, ``Cast``, ``CastLike``, ``QuantizeLinear``, ``DequantizeLinear``)
  produce no layer; layers that read their outputs list the real producer in ``inputs``.
* **Recurrent cells.** ``LSTM`` / ``GRU`` / ``RNN`` become one layer describing one time step
  (``repeat="in"``): ``M = 1``, ``K = input_size + hidden``, ``N = gates * hidden`` (4 for LSTM,
  3 for GRU, 1 for RNN). A bidirectional cell is **one layer with** ``groups = 2`` (the two
  directions are independent GEMMs of the same shape). The sequence length of the first recurrent
  node's input becomes the network's default ``seq_len = (T, 1)``. Layers after a recurrent cell
  are sized at that sequence length.
* ``bytes_per_elem`` keeps the IR default (the accelerator's storage width), whatever the file's
  data type.

Supported operators are listed in :data:`SUPPORTED_OPS`; any other operator that reads an
activation raises a one-line :class:`~npusched.errors.ModelError` naming the node and operator.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Iterable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from npusched.errors import ModelError
from npusched.models.ir import Layer, LayerKind, Network, make_network

CONV_OPS = frozenset({"Conv", "ConvTranspose"})
GEMM_OPS = frozenset({"Gemm", "MatMul"})
EINSUM_OPS = frozenset({"Einsum"})
RECURRENT_GATES: dict[str, int] = {"LSTM": 4, "GRU": 3, "RNN": 1}
POOL_OPS = frozenset(
    {
        "MaxPool",
        "AveragePool",
        "LpPool",
        "GlobalAveragePool",
        "GlobalMaxPool",
        "GlobalLpPool",
    }
)
ACT_OPS = frozenset(
    {
        "Relu",
        "LeakyRelu",
        "PRelu",
        "Sigmoid",
        "Tanh",
        "Clip",
        "HardSigmoid",
        "HardSwish",
        "Elu",
        "Selu",
        "Celu",
        "Gelu",
        "Mish",
        "Softplus",
        "Softsign",
        "ThresholdedRelu",
        "Erf",
    }
)
ELTWISE_OPS = frozenset({"Add", "Sub", "Mul", "Div", "Sum", "Max", "Min", "Mean"})
CONCAT_OPS = frozenset({"Concat"})
NORM_OPS = frozenset(
    {
        "BatchNormalization",
        "LayerNormalization",
        "InstanceNormalization",
        "GroupNormalization",
        "LpNormalization",
        "LRN",
        "MeanVarianceNormalization",
    }
)
#: Vector operators: no MACs, costed from their element counts.
VECTOR_OPS = frozenset(
    {
        # softmax family
        "Softmax",
        "LogSoftmax",
        "Hardmax",
        # unary / binary element-wise math
        "Abs",
        "Neg",
        "Exp",
        "Log",
        "Sqrt",
        "Reciprocal",
        "Pow",
        "Floor",
        "Ceil",
        "Round",
        "Sign",
        "Sin",
        "Cos",
        "Tan",
        "Asin",
        "Acos",
        "Atan",
        "Sinh",
        "Cosh",
        "Asinh",
        "Acosh",
        "Atanh",
        "Shrink",
        "Not",
        "And",
        "Or",
        "Xor",
        "Equal",
        "Less",
        "LessOrEqual",
        "Greater",
        "GreaterOrEqual",
        "Where",
        "Mod",
        "IsNaN",
        "IsInf",
        # reductions
        "ReduceMean",
        "ReduceSum",
        "ReduceMax",
        "ReduceMin",
        "ReduceProd",
        "ReduceL1",
        "ReduceL2",
        "ReduceSumSquare",
        "ReduceLogSumExp",
        "ArgMax",
        "ArgMin",
        "CumSum",
        # data movement
        "Resize",
        "Upsample",
        "Pad",
        "Slice",
        "Split",
        "Tile",
        "Expand",
        "Gather",
        "GatherElements",
        "GatherND",
        "ScatterND",
        "ScatterElements",
        "DepthToSpace",
        "SpaceToDepth",
        "TopK",
        "Trilu",
    }
)
#: Shape-only operators: no layer, the data dependency passes through their first input.
PASS_OPS = frozenset(
    {
        "Flatten",
        "Reshape",
        "Squeeze",
        "Unsqueeze",
        "Transpose",
        "Identity",
        "Dropout",
        "Cast",
        "CastLike",
        "QuantizeLinear",
        "DequantizeLinear",
    }
)
#: Operators whose outputs are constants whatever their inputs (they read shapes, not data).
CONST_OPS = frozenset({"Constant", "Shape", "Size", "ConstantOfShape"})

SUPPORTED_OPS: frozenset[str] = (
    CONV_OPS
    | GEMM_OPS
    | EINSUM_OPS
    | frozenset(RECURRENT_GATES)
    | POOL_OPS
    | ACT_OPS
    | ELTWISE_OPS
    | CONCAT_OPS
    | NORM_OPS
    | VECTOR_OPS
    | PASS_OPS
    | CONST_OPS
)

_ONNX_DOMAINS = ("", "ai.onnx")
_HINT = "pip install 'npusched[onnx]'"


def _one_line(e: BaseException, limit: int = 200) -> str:
    """The first line of an exception message, shortened (library messages span many lines)."""
    text = " ".join(str(e).split()) or type(e).__name__
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _prod(xs: Iterable[int]) -> int:
    return math.prod(int(x) for x in xs)


def _broadcast(*shapes: Sequence[int]) -> tuple[int, ...]:
    """NumPy broadcasting of static shapes (a mismatch keeps the larger dimension)."""
    rank = max((len(s) for s in shapes), default=0)
    out = [1] * rank
    for s in shapes:
        for i, d in enumerate(s):
            j = rank - len(s) + i
            out[j] = max(out[j], int(d))
    return tuple(out)


def from_onnx(path: str | Path, name: str | None = None) -> Network:
    """Import the ONNX model at ``path`` as a :class:`Network` named ``name`` (default: file stem).

    Element counts are per sample (see the module docstring for the batch convention); weights and
    activations are counted in elements, MACs per sample (per time step for recurrent cells).

    Raises:
        ModelError: the ``onnx`` package is missing, the file is missing, is not an ONNX model,
            fails the ONNX checker, or uses an unsupported operator (one line naming the file).
    """
    try:
        import onnx
    except ImportError as e:  # optional extra
        raise ModelError(f"importing ONNX models needs the onnx package: {_HINT}") from e

    p = Path(path)
    if not p.exists():
        raise ModelError(f"{p}: no such file")
    if not p.is_file():
        raise ModelError(f"{p}: not a file")
    try:
        model = onnx.load(str(p))
    except Exception as e:
        raise ModelError(f"{p}: not a valid ONNX model ({_one_line(e)})") from e
    if not model.HasField("graph"):
        raise ModelError(f"{p}: not a valid ONNX model (no graph)")
    _toposort(model.graph, p)
    try:
        onnx.checker.check_model(model)
    except Exception as e:
        raise ModelError(f"{p}: fails the ONNX checker ({_one_line(e)})") from e
    try:
        inferred = onnx.shape_inference.infer_shapes(model, strict_mode=False, data_prop=True)
    except Exception as e:
        raise ModelError(f"{p}: ONNX shape inference failed ({_one_line(e)})") from e
    try:
        return _Importer(inferred, p, name or p.stem).run()
    except ModelError as e:
        msg = str(e)
        raise ModelError(msg if msg.startswith(f"{p}:") else f"{p}: {msg}") from e


def _toposort(graph: Any, path: Path) -> None:
    """Reorder ``graph.node`` topologically in place when it is not already (stable Kahn sort)."""
    nodes = list(graph.node)
    produced_by: dict[str, int] = {}
    for i, node in enumerate(nodes):
        for out in node.output:
            if out:
                produced_by[out] = i
    available = {v.name for v in graph.input} | {t.name for t in graph.initializer}
    deps: list[set[int]] = []
    in_order = True
    for i, node in enumerate(nodes):
        d = {produced_by[x] for x in node.input if x and x not in available and x in produced_by}
        d.discard(i)
        deps.append(d)
        if any(j > i for j in d):
            in_order = False
    if in_order:
        return
    users: dict[int, list[int]] = {i: [] for i in range(len(nodes))}
    for i, d in enumerate(deps):
        for j in d:
            users[j].append(i)
    missing = [len(d) for d in deps]
    ready = [i for i, c in enumerate(missing) if c == 0]
    heapq.heapify(ready)
    order: list[int] = []
    while ready:
        i = heapq.heappop(ready)
        order.append(i)
        for u in users[i]:
            missing[u] -= 1
            if missing[u] == 0:
                heapq.heappush(ready, u)
    if len(order) != len(nodes):
        stuck = next(nodes[i] for i in range(len(nodes)) if missing[i] > 0)
        raise ModelError(
            f"{path}: the graph has a cycle through node {stuck.name or stuck.op_type!r}"
        )
    sorted_nodes = [nodes[i] for i in order]
    del graph.node[:]
    graph.node.extend(sorted_nodes)


class _Importer:
    """One import: walks the (sorted, shape-inferred) graph once and emits layers."""

    def __init__(self, model: Any, path: Path, name: str) -> None:
        self.model = model
        self.graph = model.graph
        self.path = path
        self.name = name
        self.layers: list[Layer] = []
        self.layer_index: dict[str, int] = {}
        self.producers: dict[str, tuple[str, ...]] = {}  # tensor -> producing layer names
        self.direct: dict[str, str] = {}  # tensor -> layer whose node wrote it directly
        self.const: set[str] = set()
        self.counted: set[str] = set()  # constants already counted in params
        self.shapes: dict[str, tuple[int, ...]] = {}
        self.symbolic: set[str] = set()
        self.unknown: dict[str, list[int]] = {}  # tensor -> dims shape inference left open
        self.consumers: dict[str, int] = {}
        self.used_names: set[str] = set()
        self.batch = 1
        self.seq_len: tuple[int, int] | None = None

    # --- set-up ------------------------------------------------------------------------------
    def _read_shapes(self) -> None:
        g = self.graph
        for t in g.initializer:
            self.shapes[t.name] = tuple(int(d) for d in t.dims)
        graph_inputs = {vi.name for vi in g.input}
        for vi in [*g.input, *g.value_info, *g.output]:
            if vi.name in self.shapes or not vi.type.HasField("tensor_type"):
                continue
            tt = vi.type.tensor_type
            if not tt.HasField("shape"):
                continue
            dims: list[int] = []
            unknown: list[int] = []
            for i, d in enumerate(tt.shape.dim):
                if d.HasField("dim_value") and d.dim_value > 0:
                    dims.append(int(d.dim_value))
                    continue
                # A named dimension (batch, sequence) counts as 1; one shape inference could not
                # work out (no name, or its generated "unk__" name) may be solved from sizes.
                if vi.name in graph_inputs or (d.dim_param and not d.dim_param.startswith("unk__")):
                    self.symbolic.add(d.dim_param or f"{vi.name}[{i}]")
                else:
                    unknown.append(i)
                dims.append(1)
            self.shapes[vi.name] = tuple(dims)
            if unknown:
                self.unknown[vi.name] = unknown

    def _solve_shape(self, out: str, src: str) -> None:
        """Shape of a reshape-like op's output: its unknown dimension holds the remaining size."""
        if src not in self.shapes:
            return
        total = _prod(self.shapes[src])
        if out not in self.shapes:
            self.shapes[out] = self.shapes[src]
            return
        unknown = self.unknown.get(out)
        if not unknown:
            return
        dims = list(self.shapes[out])
        known = _prod(d for i, d in enumerate(dims) if i not in unknown)
        if known and total % known == 0:
            # Several open dims: a leading one is the batch (1), the last open one takes the rest
            # (the ``-1`` of a ``(N, -1)`` flatten).
            dims[([i for i in unknown if i > 0] or unknown)[-1]] = total // known
            self.shapes[out] = tuple(dims)
            del self.unknown[out]

    def _known(self, tensor: str) -> tuple[int, ...] | None:
        """The tensor's shape when shape inference determined all of it, else ``None``."""
        return None if tensor in self.unknown else self.shapes.get(tensor)

    def _shape(self, tensor: str, node: Any) -> tuple[int, ...]:
        """A GEMM operand's shape; an open leading dimension is taken as the batch (1)."""
        if tensor not in self.shapes or any(i > 0 for i in self.unknown.get(tensor, ())):
            raise ModelError(
                f"node {node.name or node.op_type!r}: the shape of {tensor!r} is unknown "
                "(export the model with static shapes)"
            )
        return self.shapes[tensor]

    def _elems(self, tensor: str) -> int:
        """Per-sample element count of an activation tensor (whole count for constants)."""
        total = _prod(self.shapes.get(tensor, ()))
        if tensor in self.const:
            return total
        return self._per_sample(total)

    def _per_sample(self, total: int) -> int:
        b = self.batch
        return total // b if b > 1 and total % b == 0 else total

    # --- main loop ---------------------------------------------------------------------------
    def run(self) -> Network:
        g = self.graph
        self._read_shapes()
        init_names = {t.name for t in g.initializer}
        self.const |= init_names
        acts = [v for v in g.input if v.name not in init_names]
        for v in acts:
            self.producers[v.name] = ()
        for node in g.node:
            for x in node.input:
                if x:
                    self.consumers[x] = self.consumers.get(x, 0) + 1
        for v in g.output:
            self.consumers[v.name] = self.consumers.get(v.name, 0) + 1
        input_shape = self._batch_from_inputs(acts)

        for i, node in enumerate(g.node):
            self._node(node, i)

        return make_network(
            self.name,
            self.layers,
            input_shape=input_shape,
            seq_len=self.seq_len,
            meta={
                "source": "onnx",
                "file": str(self.path),
                "producer": f"{self.model.producer_name} {self.model.producer_version}".strip(),
                "opset": {o.domain or "ai.onnx": int(o.version) for o in self.model.opset_import},
                "batch": self.batch,
                "symbolic_dims": sorted(self.symbolic),
                "tensors_with_unknown_dims": sorted(self.unknown),
            },
        )

    def _batch_from_inputs(self, acts: Sequence[Any]) -> tuple[int, ...]:
        """Pick the batch size from the first activation input; return its per-sample shape."""
        if not acts:
            return ()
        first = acts[0]
        shape = self.shapes.get(first.name, ())
        if not shape:
            return ()
        axis = 0
        for node in self.graph.node:
            if first.name in node.input:
                if node.op_type in RECURRENT_GATES and node.input[0] == first.name:
                    axis = 1 if _attr(node, "layout", 0) == 0 else 0
                break
        dims = first.type.tensor_type.shape.dim
        if axis < len(dims) and dims[axis].HasField("dim_value") and dims[axis].dim_value > 0:
            self.batch = int(dims[axis].dim_value)
        return tuple(d for i, d in enumerate(shape) if i != axis)

    def _node(self, node: Any, index: int) -> None:
        op = node.op_type
        inputs = [x for x in node.input if x]
        outputs = [x for x in node.output if x]
        if op in CONST_OPS or all(x in self.const for x in inputs):
            self.const.update(outputs)  # folded: computed from constants / shapes only
            return
        if node.domain not in _ONNX_DOMAINS or op not in SUPPORTED_OPS:
            where = f" (domain {node.domain!r})" if node.domain not in _ONNX_DOMAINS else ""
            raise ModelError(
                f"node {node.name or f'#{index}'!r} uses unsupported operator {op!r}{where}; "
                f"supported: {', '.join(sorted(SUPPORTED_OPS))}"
            )
        if op in PASS_OPS:
            src = inputs[0]
            for out in outputs[:1]:
                self.producers[out] = self._srcs([src])
                self._solve_shape(out, src)
            return
        if op in CONV_OPS:
            self._conv(node)
        elif op in GEMM_OPS:
            self._gemm(node)
        elif op in EINSUM_OPS:
            self._einsum(node)
        elif op in RECURRENT_GATES:
            self._recurrent(node)
        elif not self._fold(node):
            self._vector(node)

    # --- helpers -----------------------------------------------------------------------------
    def _srcs(self, tensors: Iterable[str]) -> tuple[str, ...]:
        out: dict[str, None] = {}
        for t in tensors:
            if t in self.const:
                continue
            if t not in self.producers:
                raise ModelError(f"tensor {t!r} is read before it is produced")
            out.update(dict.fromkeys(self.producers[t]))
        return tuple(out)

    def _layer_name(self, node: Any) -> str:
        base = node.name or f"{node.op_type.lower()}_{len(self.layers)}"
        nm, i = base, 1
        while nm in self.used_names:
            i += 1
            nm = f"{base}_{i}"
        self.used_names.add(nm)
        return nm

    def _param_elems(self, tensors: Iterable[str], *, min_elems: int = 1) -> int:
        """Elements of constant operands not counted yet (each constant counts once)."""
        total = 0
        for t in tensors:
            if t and t in self.const and t not in self.counted:
                e = _prod(self.shapes.get(t, ()))
                if e >= min_elems:
                    self.counted.add(t)
                    total += e
        return total

    def _emit(self, node: Any, layer_kwargs: dict[str, Any], out_shape: tuple[int, ...]) -> None:
        """Append the node's layer (``layer_kwargs``: :class:`Layer` fields incl. ``inputs``)."""
        outputs = [x for x in node.output if x]
        name = self._layer_name(node)
        attrs = {"onnx_op": node.op_type, **layer_kwargs.pop("attrs", {})}
        if node.name:
            attrs["onnx_name"] = node.name
        layer = Layer(name=name, attrs=attrs, **layer_kwargs)
        self.layer_index[name] = len(self.layers)
        self.layers.append(layer)
        for out in outputs:
            self.producers[out] = (name,)
            self.direct[out] = name
        if outputs and out_shape and self._known(outputs[0]) is None:
            self.shapes[outputs[0]] = out_shape
            self.unknown.pop(outputs[0], None)

    # --- GEMM operators ----------------------------------------------------------------------
    def _conv(self, node: Any) -> None:
        x, w = node.input[0], node.input[1]
        bias = node.input[2] if len(node.input) > 2 else ""
        xs = self._shape(x, node)
        ws = self._shape(w, node)
        if len(xs) < 3 or len(ws) != len(xs):
            raise ModelError(
                f"node {node.name or node.op_type!r}: expected (N, C, spatial...) input and "
                f"weights of the same rank, got {xs} and {ws}"
            )
        g = int(_attr(node, "group", 1))
        kernel = tuple(int(k) for k in ws[2:])
        nsp = len(kernel)
        strides = tuple(_attr(node, "strides", [1] * nsp))
        dil = tuple(_attr(node, "dilations", [1] * nsp))
        pads = tuple(_attr(node, "pads", [0] * (2 * nsp)))
        transposed = node.op_type == "ConvTranspose"
        c_in = xs[1]
        ys = self._known(node.output[0]) or self._conv_out(node, xs, ws, g, transposed)
        if transposed:
            # col2im view: every input pixel multiplies a (C_in/g x C_out/g*R*S) weight block.
            c_out = ws[1] * g
            m = self._per_sample(xs[0] * _prod(xs[2:]))
            k = ws[0] // g
            n = ws[1] * _prod(kernel)
            kind = LayerKind.CONV
        else:
            c_out = ws[0]
            m = self._per_sample(ys[0] * _prod(ys[2:]))
            k = _prod(kernel) * ws[1]
            n = c_out // g
            kind = LayerKind.DWCONV if g > 1 and g == c_in and c_out % c_in == 0 else LayerKind.CONV
        weight_elems = _prod(ws) if w in self.const else 0
        params = self._param_elems([w, bias])
        self._emit(
            node,
            {
                "kind": kind,
                "m": m,
                "k": k,
                "n": n,
                "groups": g,
                "input_elems": self._elems(x),
                "output_elems": self._per_sample(_prod(ys)),
                "weight_elems": weight_elems,
                "params": params,
                "inputs": self._srcs([x, w, bias] if bias else [x, w]),
                "attrs": {
                    "kernel": kernel,
                    "stride": strides,
                    "pads": pads,
                    "dilation": dil,
                    "in_shape": xs[1:],
                    "post": (),
                    **({"transposed": True} if transposed else {}),
                },
            },
            ys,
        )

    def _conv_out(
        self, node: Any, xs: tuple[int, ...], ws: tuple[int, ...], g: int, transposed: bool
    ) -> tuple[int, ...]:
        """Output shape of a convolution from its attributes (when shape inference gave none)."""
        kernel = ws[2:]
        nsp = len(kernel)
        strides = list(_attr(node, "strides", [1] * nsp))
        dil = list(_attr(node, "dilations", [1] * nsp))
        pads = list(_attr(node, "pads", [0] * (2 * nsp)))
        auto = _attr(node, "auto_pad", "NOTSET")
        auto = auto.decode() if isinstance(auto, bytes) else str(auto)
        spatial: list[int] = []
        for i, (size, kk) in enumerate(zip(xs[2:], kernel, strict=True)):
            eff = dil[i] * (kk - 1) + 1
            if transposed:
                outpad = list(_attr(node, "output_padding", [0] * nsp))[i]
                out = strides[i] * (size - 1) + outpad + eff - pads[i] - pads[i + nsp]
            elif auto in ("SAME_UPPER", "SAME_LOWER"):
                out = -(-size // strides[i])
            elif auto == "VALID":
                out = (size - eff) // strides[i] + 1
            else:
                out = (size + pads[i] + pads[i + nsp] - eff) // strides[i] + 1
            if out < 1:
                raise ModelError(
                    f"node {node.name or node.op_type!r}: kernel {tuple(kernel)} does not fit "
                    f"input {xs}"
                )
            spatial.append(out)
        c_out = ws[1] * g if transposed else ws[0]
        return (xs[0], c_out, *spatial)

    def _gemm(self, node: Any) -> None:
        a, b = node.input[0], node.input[1]
        bias = node.input[2] if node.op_type == "Gemm" and len(node.input) > 2 else ""
        ash = self._shape(a, node)
        bsh = self._shape(b, node)
        if node.op_type == "Gemm":
            if len(ash) != 2 or len(bsh) != 2:
                raise ModelError(f"node {node.name or 'Gemm'!r}: Gemm needs 2-D operands")
            ash = ash[::-1] if _attr(node, "transA", 0) else ash
            bsh = bsh[::-1] if _attr(node, "transB", 0) else bsh
        a2 = (1, *ash) if len(ash) == 1 else ash
        b2 = (*bsh, 1) if len(bsh) == 1 else bsh
        rows, inner = a2[-2], a2[-1]
        inner_b, cols = b2[-2], b2[-1]
        if inner != inner_b:
            raise ModelError(
                f"node {node.name or node.op_type!r}: inner dimensions differ ({ash} x {bsh})"
            )
        a_lead, b_lead = a2[:-2], b2[:-2]
        lead = _prod(_broadcast(a_lead, b_lead))
        out_shape = self._known(node.output[0]) or (*_broadcast(a_lead, b_lead), rows, cols)
        attrs: dict[str, Any] = {"post": ()}
        if b in self.const:
            # weights on the right: K x N per group, one group per distinct weight matrix.
            groups = _prod(b_lead)
            kind, m, k, n = LayerKind.FC, self._per_sample(lead // groups * rows), inner, cols
            weight_elems, act_in = _prod(bsh), [a]
        elif a in self.const:
            # weights on the left (W @ X): the transposed product X^T W^T keeps W as K x N.
            groups = _prod(a_lead)
            kind, m, k, n = LayerKind.FC, self._per_sample(lead // groups * cols), inner, rows
            weight_elems, act_in = _prod(ash), [b]
            attrs["weight_side"] = "left"
        else:
            # one GEMM per leading index (head): each has its own stationary operand
            groups = self._per_sample(lead)
            kind, m, k, n = LayerKind.MATMUL, rows, inner, cols
            weight_elems, act_in = 0, [a, b]
        # Only constant operands count: the weights of an FC, the bias of either kind.
        params = self._param_elems([a, b, bias])
        self._emit(
            node,
            {
                "kind": kind,
                "m": m,
                "k": k,
                "n": n,
                "groups": groups,
                "input_elems": sum(self._elems(t) for t in act_in),
                "output_elems": self._per_sample(_prod(out_shape)),
                "weight_elems": weight_elems,
                "params": params,
                "inputs": self._srcs([a, b, bias] if bias else [a, b]),
                "attrs": attrs,
            },
            tuple(out_shape),
        )

    def _einsum(self, node: Any) -> None:
        """``Einsum`` with one operand (a transpose passes through; anything else, e.g. a
        reduction, is a vector op) or two operands (a GEMM, see :func:`einsum_gemm`)."""
        inputs = [x for x in node.input if x]
        label = node.name or "Einsum"
        eq = _attr(node, "equation", b"")
        eq = eq.decode() if isinstance(eq, bytes) else str(eq)
        shapes = [self._shape(t, node) for t in inputs]
        try:
            ins, out = _einsum_terms(eq, [len(sh) for sh in shapes])
        except ValueError as e:
            raise ModelError(f"node {label!r}: Einsum {eq!r}: {e}") from None
        if len(inputs) == 1:
            if sorted(ins[0]) == sorted(out):  # a permutation: shape-only, like Transpose
                self.producers[node.output[0]] = self._srcs(inputs)
                self._solve_shape(node.output[0], inputs[0])
                return
            self._vector(node)
            return
        if len(inputs) != 2:
            raise ModelError(
                f"node {label!r}: Einsum with {len(inputs)} operands is not supported (1 or 2)"
            )
        a, b = inputs
        dims: dict[str, int] = {}
        for term, sh in zip(ins, shapes, strict=True):
            for ch, d in zip(term, sh, strict=True):
                dims[ch] = max(dims.get(ch, 1), int(d))
        try:
            batch_ix, a_free, k_ix, b_free = einsum_gemm(ins[0], ins[1], out)
        except ValueError as e:
            raise ModelError(f"node {label!r}: Einsum {eq!r}: {e}") from None
        size = {
            key: _prod(dims[c] for c in ix)
            for key, ix in (("batch", batch_ix), ("m", a_free), ("k", k_ix), ("n", b_free))
        }
        out_shape = self._known(node.output[0]) or tuple(dims[c] for c in out)
        attrs: dict[str, Any] = {"post": (), "equation": eq}
        if b in self.const or a in self.const:
            w, x = (b, a) if b in self.const else (a, b)
            w_term = ins[1] if w == b else ins[0]
            groups = _prod(dims[c] for c in batch_ix if c in w_term)
            rows = size["m"] if w == b else size["n"]
            cols = size["n"] if w == b else size["m"]
            m = self._per_sample(size["batch"] // groups * rows)
            kind, k, n, weight_elems, act_in = (
                LayerKind.FC,
                size["k"],
                cols,
                _prod(self._shape(w, node)),
                [x],
            )
            if w == a:
                attrs["weight_side"] = "left"
        else:
            groups = self._per_sample(size["batch"])
            kind, m, k, n = LayerKind.MATMUL, size["m"], size["k"], size["n"]
            weight_elems, act_in = 0, [a, b]
        self._emit(
            node,
            {
                "kind": kind,
                "m": m,
                "k": k,
                "n": n,
                "groups": groups,
                "input_elems": sum(self._elems(t) for t in act_in),
                "output_elems": self._per_sample(_prod(out_shape)),
                "weight_elems": weight_elems,
                "params": self._param_elems([a, b]),
                "inputs": self._srcs([a, b]),
                "attrs": attrs,
            },
            tuple(out_shape),
        )

    def _recurrent(self, node: Any) -> None:
        op = node.op_type
        gates = RECURRENT_GATES[op]
        x, w, r = node.input[0], node.input[1], node.input[2]
        xs = self._shape(x, node)
        ws = self._shape(w, node)
        rs = self._shape(r, node)
        if len(xs) != 3 or len(ws) != 3 or len(rs) != 3:
            raise ModelError(f"node {node.name or op!r}: {op} needs 3-D X, W and R")
        hidden = int(_attr(node, "hidden_size", rs[-1]))
        dirs = ws[0]
        layout = int(_attr(node, "layout", 0))
        steps = xs[1] if layout else xs[0]
        feat = xs[2]
        if self.seq_len is None:
            self.seq_len = (max(int(steps), 1), 1)
        # Per time step of one sample: h (and c for LSTM) in and out of every direction.
        state = (2 if op == "LSTM" else 1) * hidden * dirs
        extra = [t for t in node.input[3:] if t]
        weight_elems = (_prod(ws) if w in self.const else 0) + (_prod(rs) if r in self.const else 0)
        self._emit(
            node,
            {
                "kind": LayerKind.LSTM if op == "LSTM" else LayerKind.RNN,
                "m": 1,
                "k": feat + hidden,
                "n": gates * hidden,
                "groups": dirs,
                "input_elems": feat + state,
                "output_elems": state,
                "weight_elems": weight_elems,
                "params": self._param_elems([w, r, *extra]),
                "repeat": "in",
                "inputs": self._srcs([x, w, r, *extra]),
                "attrs": {
                    "cell": op.lower(),
                    "hidden": hidden,
                    "directions": dirs,
                    "seq_len": int(steps),
                },
            },
            (),
        )

    # --- fusions -----------------------------------------------------------------------------
    def _fold(self, node: Any) -> bool:
        """Fold the node into the layer producing its input when that is safe (no new layer)."""
        if node.op_type == "BatchNormalization":
            return self._fold_bn(node)
        if node.op_type == "Add":
            return self._fold_bias(node)
        return False

    def _fusable_producer(self, tensor: str, kinds: Iterable[LayerKind]) -> int | None:
        """Index of the layer that wrote ``tensor`` directly, if fusion into it is safe."""
        owner = self.direct.get(tensor)
        if owner is None or self.consumers.get(tensor, 0) != 1:
            return None
        idx = self.layer_index[owner]
        return idx if self.layers[idx].kind in set(kinds) else None

    def _fold_bn(self, node: Any) -> bool:
        x = node.input[0]
        idx = self._fusable_producer(x, (LayerKind.CONV, LayerKind.DWCONV, LayerKind.FC))
        if idx is None:
            return False
        scale = node.input[1]
        channels = _prod(self._shape(scale, node))
        self.counted.update(t for t in node.input[1:5] if t)
        self._fuse(idx, node, 2 * channels, "bn")
        return True

    def _fold_bias(self, node: Any) -> bool:
        """``MatMul`` with weights followed by ``Add`` of a bias vector: one FC with a bias."""
        if len(node.input) != 2:
            return False
        a, b = node.input
        act, const = (a, b) if b in self.const else (b, a)
        if const not in self.const or act in self.const:
            return False
        idx = self._fusable_producer(act, (LayerKind.FC,))
        if idx is None:
            return False
        layer = self.layers[idx]
        if layer.attrs.get("onnx_op") != "MatMul" or "bias" in layer.attrs.get("post", ()):
            return False
        if _prod(self.shapes.get(const, (0,))) != layer.n * layer.groups:
            return False
        self._fuse(idx, node, self._param_elems([const]), "bias")
        return True

    def _fuse(self, idx: int, node: Any, extra_params: int, post: str) -> None:
        layer = self.layers[idx]
        attrs = dict(layer.attrs)
        attrs["post"] = (*attrs.get("post", ()), post)
        self.layers[idx] = replace(layer, params=layer.params + extra_params, attrs=attrs)
        out = node.output[0]
        self.producers[out] = (layer.name,)
        self.direct[out] = layer.name
        if out not in self.shapes and node.input[0] in self.shapes:
            self.shapes[out] = self.shapes[node.input[0]]

    # --- vector operators --------------------------------------------------------------------
    def _vector(self, node: Any) -> None:
        op = node.op_type
        data = [x for x in node.input if x]
        acts = [t for t in data if t not in self.const]
        outputs = [x for x in node.output if x]
        attrs: dict[str, Any] = {}
        params = 0
        embed = False
        if op in POOL_OPS:
            kind = LayerKind.POOL
            attrs["mode"] = "max" if "Max" in op else ("lp" if "Lp" in op else "avg")
            if op.startswith("Global"):
                attrs["global"] = True
            else:
                attrs["kernel"] = tuple(_attr(node, "kernel_shape", []))
                attrs["stride"] = tuple(_attr(node, "strides", [1] * len(attrs["kernel"])))
            data = data[:1]
        elif op in ACT_OPS:
            kind = LayerKind.ACT
            attrs["fn"] = op.lower()
            params = self._param_elems(data[1:]) if op == "PRelu" else 0
        elif op in ELTWISE_OPS:
            kind = LayerKind.ELTWISE
            # A non-scalar constant operand is a learned bias / scale (e.g. positional embedding).
            params = self._param_elems(data, min_elems=2)
        elif op in CONCAT_OPS:
            kind = LayerKind.CONCAT
        elif op == "BatchNormalization":
            kind = LayerKind.VECTOR
            params = 2 * _prod(self.shapes.get(node.input[1], ()))
            self.counted.update(t for t in node.input[1:5] if t)
        elif op in NORM_OPS:
            kind = LayerKind.VECTOR
            params = self._param_elems(data[1:])
        elif op == "Gather" and data[0] in self.const:
            kind = LayerKind.EMBED  # embedding look-up: the table is a parameter
            params = self._param_elems(data[:1])
            embed = True
        else:
            kind = LayerKind.VECTOR
        attrs["op"] = op.lower()
        out_elems = 0
        for out in outputs[: 1 if op in ("MaxPool", "TopK") else None]:
            if out not in self.shapes:
                if op in POOL_OPS or op == "Concat":
                    raise ModelError(
                        f"node {node.name or op!r}: the shape of {out!r} is unknown "
                        "(export the model with static shapes)"
                    )
                shp = _broadcast(*(self.shapes.get(t, ()) for t in acts))
                self.shapes[out] = shp
            out_elems += self._per_sample(_prod(self.shapes[out]))
        self._emit(
            node,
            {
                "kind": kind,
                # an embedding look-up reads the rows it gathers (its output), not its ids
                "input_elems": out_elems if embed else sum(self._elems(t) for t in acts),
                "output_elems": out_elems,
                "params": params,
                "inputs": self._srcs(data),
                "attrs": attrs,
            },
            (),
        )


def _einsum_terms(equation: str, ranks: Sequence[int]) -> tuple[list[str], str]:
    """Parse an Einsum equation into one index string per operand and the output's, with
    ``...`` expanded to anonymous indices (digits) and an implicit output (no ``->``) made
    explicit (the indices that occur once, in alphabetical order, after the ellipsis)."""
    eq = equation.replace(" ", "")
    lhs, arrow, rhs = eq.partition("->")
    terms = lhs.split(",")
    if len(terms) != len(ranks):
        raise ValueError(f"{len(terms)} input terms for {len(ranks)} operands")
    ell_rank = 0
    expanded: list[str] = []
    for term, rank in zip(terms, ranks, strict=True):
        if not term.replace("...", "").isalpha() and term.replace("...", ""):
            raise ValueError(f"bad term {term!r}")
        if "..." in term:
            n_ell = rank - len(term.replace("...", ""))
            if n_ell < 0:
                raise ValueError(f"term {term!r} has more indices than its operand's rank")
            ell_rank = max(ell_rank, n_ell)
            term = term.replace("...", "0123456789"[10 - n_ell :] if n_ell else "")
        elif len(term) != rank:
            raise ValueError(f"term {term!r} does not match its operand's rank {rank}")
        expanded.append(term)
    ell = "0123456789"[10 - ell_rank :] if ell_rank else ""
    if arrow:
        out = rhs.replace("...", ell)
    else:
        letters = "".join(expanded)
        once = sorted(c for c in set(letters) if c.isalpha() and letters.count(c) == 1)
        out = ell + "".join(once)
    return expanded, out


def einsum_gemm(a: str, b: str, out: str) -> tuple[str, str, str, str]:
    """Classify the indices of a two-operand Einsum ``a,b->out`` as a batched GEMM: batch
    (in ``a``, ``b`` and ``out``), ``M`` (``a`` and ``out`` only), ``K`` (``a`` and ``b``, not
    ``out``: contracted) and ``N`` (``b`` and ``out`` only). An index summed within one operand
    or broadcast into the output from nowhere is not a GEMM and raises ``ValueError``."""
    batch = "".join(c for c in out if c in a and c in b)
    m = "".join(c for c in out if c in a and c not in b)
    n = "".join(c for c in out if c in b and c not in a)
    k = "".join(c for c in a if c in b and c not in out)
    stray = [c for c in a + b if c not in out and not (c in a and c in b)]
    if stray or any(c not in a and c not in b for c in out):
        raise ValueError("not a (batched) matrix product: an index is summed in one operand only")
    return batch, m, k, n


def _attr(node: Any, name: str, default: Any) -> Any:
    """A node attribute's value (``onnx.helper.get_attribute_value``), or ``default``."""
    for a in node.attribute:
        if a.name == name:
            from onnx import helper

            return helper.get_attribute_value(a)
    return default
