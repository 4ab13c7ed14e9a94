"""``NetBuilder``: emit a layer table from an architecture description (shapes are inferred).

Zoo builders call the methods below like a tiny framework: each call appends one :class:`Layer`
with its GEMM view and element counts, and returns a :class:`Tensor` handle carrying the shape.
Batch-norm and the activation that follows a convolution are *fused* into it (PREMA Sec. IV-B:
ACTV/POOL layers fuse with the preceding CONV/FC via a VECTOR_OP), recorded in ``attrs["post"]``;
their parameters (2 per channel for folded batch-norm: scale and shift) count towards ``params``.

Padding: an ``int`` is symmetric explicit padding (PyTorch), ``"same"`` is TensorFlow SAME
(output = ceil(input / stride)), ``"valid"`` is no padding.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from npusched.errors import ModelError
from npusched.models.ir import ExitPoint, Layer, LayerKind, Network, make_network

Padding = int | tuple[int, int] | str


@dataclass(frozen=True)
class Tensor:
    """A value in the graph: its producer layer (``None`` for the network input) and shape.

    Image tensors have shape ``(C, H, W)``; vectors ``(F,)``; sequences ``(T, F)``.
    """

    producer: str | None
    shape: tuple[int, ...]

    @property
    def elems(self) -> int:
        return math.prod(self.shape)

    @property
    def channels(self) -> int:
        return self.shape[0]

    @property
    def hw(self) -> tuple[int, int]:
        if len(self.shape) != 3:
            raise ModelError(f"expected an image tensor (C, H, W), got shape {self.shape}")
        return self.shape[1], self.shape[2]


def _pair(v: int | Sequence[int]) -> tuple[int, int]:
    if isinstance(v, int):
        return v, v
    a, b = v
    return int(a), int(b)


def _out_dim(
    size: int, kernel: int, stride: int, pad: Padding, dilation: int = 1
) -> tuple[int, int]:
    """Output size and total padding along one axis."""
    eff = dilation * (kernel - 1) + 1
    if pad == "same":
        out = -(-size // stride)
        total = max((out - 1) * stride + eff - size, 0)
        return out, total
    if pad == "valid":
        p = 0
    elif isinstance(pad, int):
        p = pad
    else:
        raise ModelError(f"bad padding {pad!r}")
    out = (size + 2 * p - eff) // stride + 1
    if out < 1:
        raise ModelError(f"kernel {kernel} stride {stride} pad {pad} does not fit input {size}")
    return out, 2 * p


class NetBuilder:
    """Accumulates layers; see the module docstring. Call :meth:`build` at the end."""

    def __init__(
        self,
        name: str,
        input_shape: Sequence[int],
        *,
        bytes_per_elem: int = 2,
        seq_len: tuple[int, int] | None = None,
        meta: dict[str, Any] | None = None,
    ) -> None:
        """``seq_len``: default ``(input, output)`` sequence lengths (time steps) of a recurrent
        network, see :attr:`Network.seq_len`."""
        self.name = name
        self.input_shape = tuple(int(x) for x in input_shape)
        self.bytes_per_elem = bytes_per_elem
        self.meta = dict(meta or {})
        self.layers: list[Layer] = []
        self.exits: list[ExitPoint] = []
        self._names: set[str] = set()
        self._counter: dict[str, int] = {}
        self.seq_len = seq_len

    # --- plumbing ----------------------------------------------------------------------------
    def input(self, shape: Sequence[int] | None = None) -> Tensor:
        """The network input tensor (or an extra input of the given shape)."""
        return Tensor(None, tuple(shape) if shape is not None else self.input_shape)

    def _name(self, name: str | None, kind: str) -> str:
        if name is None:
            c = self._counter.get(kind, 0) + 1
            self._counter[kind] = c
            name = f"{kind}{c}"
        if name in self._names:
            raise ModelError(f"{self.name}: duplicate layer name {name!r}")
        self._names.add(name)
        return name

    @staticmethod
    def _srcs(*xs: Tensor) -> tuple[str, ...]:
        return tuple(dict.fromkeys(x.producer for x in xs if x.producer is not None))

    def _add(self, layer: Layer, shape: tuple[int, ...]) -> Tensor:
        self.layers.append(layer)
        return Tensor(layer.name, shape)

    # --- GEMM layers -------------------------------------------------------------------------
    def conv(
        self,
        x: Tensor,
        out_ch: int,
        kernel: int | Sequence[int],
        stride: int | Sequence[int] = 1,
        padding: Padding | None = None,
        *,
        groups: int = 1,
        dilation: int = 1,
        bias: bool = False,
        bn: bool = True,
        act: str | None = "relu",
        name: str | None = None,
    ) -> Tensor:
        """2-D convolution (+ fused batch-norm and activation). Default padding keeps the size
        for odd kernels at stride 1 (``kernel // 2``)."""
        c, h, w = x.shape if len(x.shape) == 3 else (*x.shape, 1, 1)[:3]
        kh, kw = _pair(kernel)
        sh, sw = _pair(stride)
        if padding is None:
            padding = (kh // 2, kw // 2) if kh != kw else kh // 2
        ph, pw = (padding, padding) if not isinstance(padding, tuple) else padding
        ho, _ = _out_dim(h, kh, sh, ph, dilation)
        wo, _ = _out_dim(w, kw, sw, pw, dilation)
        if c % groups or out_ch % groups:
            raise ModelError(
                f"{self.name}: channels {c}->{out_ch} not divisible by groups {groups}"
            )
        depthwise = groups == c and groups > 1 and out_ch % c == 0
        kind = LayerKind.DWCONV if depthwise else LayerKind.CONV
        k = kh * kw * (c // groups)
        n = out_ch // groups
        weights = k * n * groups
        params = weights + (out_ch if bias else 0) + (2 * out_ch if bn else 0)
        post = tuple(p for p in (("bn" if bn else None), act) if p)
        nm = self._name(name, "dwconv" if depthwise else "conv")
        layer = Layer(
            name=nm,
            kind=kind,
            m=ho * wo,
            k=k,
            n=n,
            groups=groups,
            input_elems=x.elems,
            output_elems=out_ch * ho * wo,
            weight_elems=weights,
            bytes_per_elem=self.bytes_per_elem,
            params=params,
            inputs=self._srcs(x),
            attrs={
                "kernel": (kh, kw),
                "stride": (sh, sw),
                "post": post,
                "in_shape": x.shape,
                "padding": (ph, pw),
                "dilation": dilation,
            },
        )
        return self._add(layer, (out_ch, ho, wo))

    def conv3d(
        self,
        x: Tensor,
        out_ch: int,
        kernel: int,
        stride: int = 1,
        padding: int | None = None,
        *,
        transposed: bool = False,
        bias: bool = False,
        norm: bool = True,
        act: str | None = "leaky",
        name: str | None = None,
    ) -> Tensor:
        """3-D convolution over a ``(C, D, H, W)`` volume (+ fused instance norm, 2 parameters
        per channel, and activation). GEMM: ``M = Do*Ho*Wo``, ``K = k^3 * C``, ``N = out_ch``.

        ``transposed``: a non-overlapping ``ConvTranspose3d`` (``kernel == stride``, no padding),
        the ONNX importer's convention: ``M`` = input voxels, ``K = C``, ``N = out_ch * k^3``."""
        c, d, h, w = x.shape
        if transposed:
            if kernel != stride:
                raise ModelError(f"{self.name}: transposed conv3d needs kernel == stride")
            out_shape: tuple[int, ...] = (out_ch, d * stride, h * stride, w * stride)
            m, k, n = d * h * w, c, out_ch * kernel**3
        else:
            pad = kernel // 2 if padding is None else padding
            dims = [_out_dim(v, kernel, stride, pad)[0] for v in (d, h, w)]
            out_shape = (out_ch, *dims)
            m, k, n = math.prod(dims), kernel**3 * c, out_ch
        weights = k * n
        params = weights + (out_ch if bias else 0) + (2 * out_ch if norm else 0)
        post = tuple(p for p in (("instancenorm" if norm else None), act) if p)
        layer = Layer(
            name=self._name(name, "conv3d"),
            kind=LayerKind.CONV,
            m=m,
            k=k,
            n=n,
            input_elems=x.elems,
            output_elems=math.prod(out_shape),
            weight_elems=weights,
            bytes_per_elem=self.bytes_per_elem,
            params=params,
            inputs=self._srcs(x),
            attrs={
                "kernel": (kernel,) * 3,
                "stride": (stride,) * 3,
                "post": post,
                "transposed": transposed,
                "in_shape": x.shape,
            },
        )
        return self._add(layer, out_shape)

    def dwconv(
        self,
        x: Tensor,
        kernel: int | Sequence[int],
        stride: int | Sequence[int] = 1,
        padding: Padding | None = None,
        *,
        multiplier: int = 1,
        bn: bool = True,
        act: str | None = "relu",
        name: str | None = None,
    ) -> Tensor:
        """Depthwise convolution (``groups = C``)."""
        c = x.channels
        return self.conv(
            x, c * multiplier, kernel, stride, padding, groups=c, bn=bn, act=act, name=name
        )

    def fc(
        self,
        x: Tensor,
        out_features: int,
        *,
        bias: bool = True,
        act: str | None = None,
        name: str | None = None,
        repeat: str | None = None,
    ) -> Tensor:
        """Fully connected layer over the flattened input (or per row of a ``(T, F)`` sequence).

        ``repeat`` (``"in"`` / ``"out"``) marks a layer that runs once per time step of a
        recurrent segment (e.g. a decoder's output projection)."""
        if len(x.shape) == 2:  # sequence: the FC applies to every row
            rows, feat = x.shape
        else:
            rows, feat = 1, x.elems
        weights = feat * out_features
        nm = self._name(name, "fc")
        layer = Layer(
            name=nm,
            kind=LayerKind.FC,
            m=rows,
            k=feat,
            n=out_features,
            input_elems=x.elems,
            output_elems=rows * out_features,
            weight_elems=weights,
            bytes_per_elem=self.bytes_per_elem,
            params=weights + (out_features if bias else 0),
            inputs=self._srcs(x),
            repeat=repeat,
            attrs={"post": (act,) if act else ()},
        )
        shape = (rows, out_features) if len(x.shape) == 2 else (out_features,)
        return self._add(layer, shape)

    def matmul(
        self,
        a: Tensor,
        b_shape: tuple[int, int],
        *,
        name: str | None = None,
        extra_inputs: Sequence[Tensor] = (),
        repeat: str | None = None,
        attrs: Mapping[str, Any] | None = None,
    ) -> Tensor:
        """Activation x activation GEMM ``(M x K) @ (K x N)`` with ``a`` of shape ``(M, K)``.

        ``repeat`` as in :meth:`fc` (attention inside a decoder step). A vector ``a`` of shape
        ``(K,)`` is one row (``M = 1``). ``attrs``: metadata for the layer's ``attrs``."""
        m, k = (1, a.shape[0]) if len(a.shape) == 1 else (a.shape[-2], a.shape[-1])
        kb, n = b_shape
        if kb != k:
            raise ModelError(f"{self.name}: matmul inner dims differ ({k} vs {kb})")
        nm = self._name(name, "matmul")
        layer = Layer(
            name=nm,
            kind=LayerKind.MATMUL,
            m=m,
            k=k,
            n=n,
            input_elems=a.elems + k * n,
            output_elems=m * n,
            bytes_per_elem=self.bytes_per_elem,
            inputs=self._srcs(a, *extra_inputs),
            repeat=repeat,
            attrs=dict(attrs or {}),
        )
        return self._add(layer, (m, n))

    def head_matmul(
        self,
        xs: Sequence[Tensor],
        m: int,
        k: int,
        n: int,
        *,
        groups: int,
        out_shape: Sequence[int],
        name: str | None = None,
        repeat: str | None = None,
        attrs: Mapping[str, Any] | None = None,
    ) -> Tensor:
        """Activation x activation GEMM per head: ``groups`` independent ``(M x K) @ (K x N)``.

        Attention's ``Q.K^T`` (``K`` = head width, ``N`` = keys) and ``P.V`` (``K`` = keys,
        ``N`` = head width) with one group per head (per key/value head under grouped-query
        attention, whose query heads then stack into ``M``). ``input_elems`` is both operands,
        ``groups * (M*K + K*N)``: the ``K x N`` operand (keys or values, e.g. a K/V cache) is
        what a weight-stationary array loads as its stationary tile, per sample and group."""
        if min(m, k, n, groups) < 1:
            raise ModelError(f"{self.name}: head_matmul needs positive dims, got {m, k, n, groups}")
        if math.prod(out_shape) != groups * m * n:
            raise ModelError(f"{self.name}: head_matmul output {tuple(out_shape)} != G*M*N")
        nm = self._name(name, "matmul")
        layer = Layer(
            name=nm,
            kind=LayerKind.MATMUL,
            m=m,
            k=k,
            n=n,
            groups=groups,
            input_elems=groups * (m * k + k * n),
            output_elems=groups * m * n,
            bytes_per_elem=self.bytes_per_elem,
            inputs=self._srcs(*xs),
            repeat=repeat,
            attrs=dict(attrs or {}),
        )
        return self._add(layer, tuple(out_shape))

    def recurrent(
        self,
        x: Tensor,
        hidden: int,
        *,
        cell: str = "lstm",
        repeat: str = "in",
        bias: bool = True,
        extra_inputs: Sequence[Tensor] = (),
        extra_features: int = 0,
        name: str | None = None,
    ) -> Tensor:
        """One time step of an LSTM (4 gates) or GRU (3 gates) cell.

        GEMM: ``M = 1`` (per sample), ``K = input + hidden (+ extra_features)``,
        ``N = gates * hidden``. Input ``x`` is the per-step feature vector ``(F,)``.
        """
        gates = {"lstm": 4, "gru": 3, "rnn": 1}[cell]
        feat = x.shape[-1] + extra_features
        k = feat + hidden
        n = gates * hidden
        weights = k * n
        kind = LayerKind.LSTM if cell == "lstm" else LayerKind.RNN
        nm = self._name(name, cell)
        layer = Layer(
            name=nm,
            kind=kind,
            m=1,
            k=k,
            n=n,
            input_elems=feat + 2 * hidden,
            output_elems=2 * hidden if cell == "lstm" else hidden,
            weight_elems=weights,
            bytes_per_elem=self.bytes_per_elem,
            params=weights + (n if bias else 0),
            inputs=self._srcs(x, *extra_inputs),
            repeat=repeat,
            attrs={"cell": cell, "hidden": hidden},
        )
        return self._add(layer, (hidden,))

    # --- vector layers -----------------------------------------------------------------------
    def _vector(
        self,
        kind: LayerKind,
        xs: Sequence[Tensor],
        out_shape: tuple[int, ...],
        name: str | None,
        prefix: str,
        params: int = 0,
        repeat: str | None = None,
        **attrs: Any,
    ) -> Tensor:
        nm = self._name(name, prefix)
        layer = Layer(
            name=nm,
            kind=kind,
            input_elems=sum(x.elems for x in xs),
            output_elems=math.prod(out_shape),
            bytes_per_elem=self.bytes_per_elem,
            params=params,
            inputs=self._srcs(*xs),
            repeat=repeat,
            attrs=attrs,
        )
        return self._add(layer, out_shape)

    def pool(
        self,
        x: Tensor,
        kernel: int | Sequence[int],
        stride: int | Sequence[int] | None = None,
        padding: Padding = 0,
        *,
        mode: str = "max",
        ceil_mode: bool = False,
        name: str | None = None,
    ) -> Tensor:
        """Max / average pooling; window ``kernel``, default stride = kernel."""
        c, h, w = x.shape
        kh, kw = _pair(kernel)
        sh, sw = _pair(stride if stride is not None else kernel)
        ho, _ = _out_dim(h, kh, sh, padding)
        wo, _ = _out_dim(w, kw, sw, padding)
        if ceil_mode and padding != "same":
            p = padding if isinstance(padding, int) else 0
            ho = -(-(h + 2 * p - kh) // sh) + 1
            wo = -(-(w + 2 * p - kw) // sw) + 1
        return self._vector(
            LayerKind.POOL,
            [x],
            (c, ho, wo),
            name,
            f"{mode}pool",
            mode=mode,
            kernel=(kh, kw),
            stride=(sh, sw),
            padding=padding,
            ceil_mode=ceil_mode,
        )

    def global_pool(self, x: Tensor, *, mode: str = "avg", name: str | None = None) -> Tensor:
        """Global pooling to a ``(C,)`` vector."""
        return self._vector(LayerKind.POOL, [x], (x.channels,), name, "gpool", mode=mode)

    def act(self, x: Tensor, fn: str = "relu", *, name: str | None = None) -> Tensor:
        """Stand-alone activation (most are fused into the producing GEMM layer instead)."""
        return self._vector(LayerKind.ACT, [x], x.shape, name, fn, fn=fn)

    def add(self, *xs: Tensor, act: str | None = None, name: str | None = None) -> Tensor:
        """Element-wise sum of same-shaped tensors (residual connection)."""
        shapes = {x.shape for x in xs}
        if len(shapes) != 1:
            raise ModelError(f"{self.name}: add of mismatched shapes {sorted(shapes)}")
        return self._vector(LayerKind.ELTWISE, xs, xs[0].shape, name, "add", op="add", post=(act,))

    def mul(self, x: Tensor, gate: Tensor, *, name: str | None = None) -> Tensor:
        """Element-wise product with broadcasting of ``gate`` (squeeze-excitation scaling)."""
        return self._vector(LayerKind.ELTWISE, [x, gate], x.shape, name, "mul", op="mul")

    def concat(self, *xs: Tensor, name: str | None = None) -> Tensor:
        """Channel concatenation of image tensors (or feature concat of vectors)."""
        first = xs[0].shape
        if any(x.shape[1:] != first[1:] for x in xs):
            raise ModelError(f"{self.name}: concat of mismatched shapes {[x.shape for x in xs]}")
        shape = (sum(x.shape[0] for x in xs), *first[1:])
        return self._vector(LayerKind.CONCAT, xs, shape, name, "concat")

    def vector(
        self,
        xs: Tensor | Sequence[Tensor],
        op: str,
        out_shape: Sequence[int] | None = None,
        *,
        params: int = 0,
        repeat: str | None = None,
        name: str | None = None,
    ) -> Tensor:
        """Any other vector op (softmax, upsample, reshape, normalisation, ...)."""
        xs = [xs] if isinstance(xs, Tensor) else list(xs)
        shape = tuple(out_shape) if out_shape is not None else xs[0].shape
        return self._vector(
            LayerKind.VECTOR, xs, shape, name, op, params=params, repeat=repeat, op=op
        )

    def embedding(
        self,
        ids: Tensor,
        vocab: int,
        dim: int,
        *,
        lookups: int | None = None,
        pooled: bool = False,
        params: int | None = None,
        repeat: str | None = None,
        name: str | None = None,
    ) -> Tensor:
        """Embedding look-up (kind ``embed``): gathers ``lookups`` rows of a ``vocab x dim`` table.

        ``lookups`` defaults to one per id in ``ids``. The layer reads ``lookups * dim`` elements
        (its ``input_elems``; no MACs) and writes one ``dim`` row per id, shape ``(T, dim)``, or,
        if ``pooled`` (DLRM's sum-pooled ``EmbeddingBag``), one row ``(dim,)``. ``params`` is
        the table (``vocab * dim``) unless given (0 for a table tied to an output layer)."""
        rows = ids.elems
        n_look = rows if lookups is None else lookups
        shape = (dim,) if pooled else (rows, dim)
        nm = self._name(name, "embed")
        layer = Layer(
            name=nm,
            kind=LayerKind.EMBED,
            input_elems=n_look * dim,
            output_elems=math.prod(shape),
            bytes_per_elem=self.bytes_per_elem,
            params=vocab * dim if params is None else params,
            inputs=self._srcs(ids),
            repeat=repeat,
            attrs={"op": "embedding", "vocab": vocab, "dim": dim, "lookups": n_look},
        )
        return self._add(layer, shape)

    def layernorm(
        self, x: Tensor, *, rms: bool = False, repeat: str | None = None, name: str | None = None
    ) -> Tensor:
        """Layer norm (scale and shift, ``2 F`` params) or RMS norm (scale only, ``F``) over the
        last axis of ``F`` features."""
        feat = x.shape[-1]
        op = "rmsnorm" if rms else "layernorm"
        return self.vector(x, op, params=feat if rms else 2 * feat, repeat=repeat, name=name)

    def softmax(self, x: Tensor, *, repeat: str | None = None, name: str | None = None) -> Tensor:
        """Softmax over the last axis (attention scores over the keys of a sequence)."""
        return self.vector(x, "softmax", repeat=repeat, name=name)

    def upsample(self, x: Tensor, scale: int = 2, *, name: str | None = None) -> Tensor:
        c, h, w = x.shape
        return self.vector(x, "upsample", (c, h * scale, w * scale), name=name)

    # --- structure ---------------------------------------------------------------------------
    def exit(self, name: str, head: Sequence[Layer] = (), rate: float | None = None) -> None:
        """Mark an early exit after the most recent layer."""
        self.exits.append(ExitPoint(name, len(self.layers) - 1, tuple(head), rate))

    def build(self) -> Network:
        return make_network(
            self.name,
            self.layers,
            input_shape=self.input_shape,
            exits=self.exits,
            seq_len=self.seq_len,
            meta=self.meta,
        )
