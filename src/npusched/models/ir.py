"""The DNN model IR: immutable :class:`Layer` rows and a :class:`Network` (an ordered layer table).

GEMM convention (the one SCALE-Sim uses, so cost models and peers agree)
-----------------------------------------------------------------------
Every compute layer is viewed, **per input sample**, as ``groups`` independent GEMMs of
``(M x K) @ (K x N)``:

* ``M`` - rows streamed through the array: output pixels ``Ho * Wo`` of a convolution, ``1`` for a
  fully connected layer or one time step of a recurrent cell, the sequence rows of a MatMul.
  A batch of ``B`` samples multiplies ``M`` by ``B`` (cost models do this, not the IR) - except
  for ``matmul`` layers (both operands activations: attention's ``Q.K^T`` and ``P.V``), whose
  ``K x N`` operand belongs to one sample and one head (``groups`` = heads): a batch multiplies
  their groups instead.
* ``K`` - the reduction dimension, mapped onto the array rows: ``R * S * C_in / groups``.
* ``N`` - output channels per group, mapped onto the array columns.

So ``macs = M * K * N * groups`` per sample. A depthwise convolution has ``groups = C``, ``K = R*S``
and ``N = 1``. Non-GEMM layers (pooling, activation, element-wise, concat, softmax, ...) have
``M = K = N = 0`` and are costed from their element counts as vector operations.

An embedding look-up (kind ``embed``) is a vector layer whose ``input_elems`` counts the table
elements it gathers (look-ups x row width, the bytes it reads), not its integer ids; its table
counts as ``params`` but not as ``weight_elems`` (it is not a GEMM operand).

Recurrent layers
----------------
A recurrent layer (``kind`` ``lstm`` / ``rnn``) describes **one time step** of its cell. Its
``repeat`` field says which run-time sequence length repeats it: ``"in"`` (encoder side, the
request's input length) or ``"out"`` (decoder side, the output length). Consecutive layers with the
same ``repeat`` form a segment that executes step-major (all layers of the segment for step 0, then
step 1, ...). See :meth:`Network.expand`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from functools import cached_property
from typing import Any

import numpy as np
import numpy.typing as npt

from npusched.errors import ModelError

#: Largest batch size a network is run at (requests, traces, configs and compiled profiles):
#: far beyond any real batch, and small enough that per-layer cycle and byte counts stay well
#: inside int64 (they overflow near 1e10).
MAX_BATCH = 2**20


class LayerKind(StrEnum):
    """What a layer computes. GEMM kinds run on the MAC array; the rest on the vector unit."""

    CONV = "conv"
    DWCONV = "dwconv"
    FC = "fc"
    MATMUL = "matmul"  # activation x activation GEMM (attention); no weights
    LSTM = "lstm"
    RNN = "rnn"  # GRU / vanilla recurrent cell
    POOL = "pool"
    ACT = "act"
    ELTWISE = "eltwise"
    CONCAT = "concat"
    VECTOR = "vector"  # softmax, normalisation, upsample, reshape and other vector ops
    EMBED = "embed"  # embedding look-up: gathers table rows (bytes, no MACs)


GEMM_KINDS = frozenset(
    {
        LayerKind.CONV,
        LayerKind.DWCONV,
        LayerKind.FC,
        LayerKind.MATMUL,
        LayerKind.LSTM,
        LayerKind.RNN,
    }
)
RECURRENT_KINDS = frozenset({LayerKind.LSTM, LayerKind.RNN})
KIND_CODES: dict[LayerKind, int] = {k: i for i, k in enumerate(LayerKind)}
REPEAT_CODES = {None: 0, "in": 1, "out": 2}


@dataclass(frozen=True, slots=True)
class Layer:
    """One layer (per input sample). Element counts are per sample; weights are batch-independent.

    Attributes:
        name: unique within the network.
        kind: see :class:`LayerKind`.
        m, k, n: the GEMM view (see module docstring); 0 for non-GEMM layers.
        groups: number of independent GEMMs (``C`` for depthwise convolution).
        input_elems, output_elems, weight_elems: tensor sizes in elements (per sample).
        bytes_per_elem: storage width (2 = 16-bit, PREMA's NPU).
        params: trainable parameters incl. bias / folded batch-norm (for reference checks);
            defaults to ``weight_elems``.
        inputs: names of the producing layers (empty = network input); keeps branch structure.
        repeat: ``None``, ``"in"`` or ``"out"`` for recurrent cells (per time step).
        attrs: free metadata (kernel, stride, fused post-ops, ...).
    """

    name: str
    kind: LayerKind
    m: int = 0
    k: int = 0
    n: int = 0
    groups: int = 1
    input_elems: int = 0
    output_elems: int = 0
    weight_elems: int = 0
    bytes_per_elem: int = 2
    params: int = -1
    inputs: tuple[str, ...] = ()
    repeat: str | None = None
    attrs: Mapping[str, Any] = field(default_factory=dict, compare=False, hash=False)

    def __post_init__(self) -> None:
        if not isinstance(self.kind, LayerKind):
            object.__setattr__(self, "kind", LayerKind(self.kind))
        for fld in ("m", "k", "n", "input_elems", "output_elems", "weight_elems"):
            if getattr(self, fld) < 0:
                raise ModelError(
                    f"layer {self.name!r}: {fld} must be >= 0, got {getattr(self, fld)}"
                )
        if self.groups < 1:
            raise ModelError(f"layer {self.name!r}: groups must be >= 1, got {self.groups}")
        if self.kind in GEMM_KINDS and min(self.m, self.k, self.n) <= 0:
            raise ModelError(
                f"layer {self.name!r}: {self.kind} needs positive GEMM dims, got "
                f"M={self.m} K={self.k} N={self.n}"
            )
        if self.repeat not in (None, "in", "out"):
            raise ModelError(f"layer {self.name!r}: repeat must be None, 'in' or 'out'")
        if self.params < 0:
            object.__setattr__(self, "params", self.weight_elems)

    @property
    def is_gemm(self) -> bool:
        return self.kind in GEMM_KINDS

    @property
    def macs(self) -> int:
        """Multiply-accumulates per sample (per time step for recurrent cells)."""
        return self.m * self.k * self.n * self.groups

    @property
    def output_bytes(self) -> int:
        return self.output_elems * self.bytes_per_elem

    @property
    def weight_bytes(self) -> int:
        return self.weight_elems * self.bytes_per_elem


@dataclass(frozen=True)
class ExitPoint:
    """An early-exit branch attached after layer ``after`` (index into ``Network.layers``).

    ``layers`` holds the exit head's own layers (classifier), which run only when the exit is
    evaluated; ``rate`` is an optional default fraction of samples that exit here.
    """

    name: str
    after: int
    layers: tuple[Layer, ...] = ()
    rate: float | None = None


@dataclass(frozen=True)
class Network:
    """An ordered, immutable layer table (DAGs linearised in a valid topological order).

    Attributes:
        name: zoo name.
        layers: layers in execution order.
        input_shape: per-sample input shape, e.g. ``(3, 224, 224)``.
        exits: optional early-exit points.
        seq_len: default ``(input, output)`` sequence lengths for recurrent networks.
        meta: free metadata (task, family, source of the architecture).
    """

    name: str
    layers: tuple[Layer, ...]
    input_shape: tuple[int, ...] = ()
    exits: tuple[ExitPoint, ...] = ()
    seq_len: tuple[int, int] | None = None
    meta: Mapping[str, Any] = field(default_factory=dict, compare=False, hash=False)

    def __post_init__(self) -> None:
        if not self.layers:
            raise ModelError(f"network {self.name!r} has no layers")
        seen: dict[str, int] = {}
        for i, layer in enumerate(self.layers):
            if layer.name in seen:
                raise ModelError(f"network {self.name!r}: duplicate layer name {layer.name!r}")
            for src in layer.inputs:
                if src not in seen:
                    raise ModelError(
                        f"network {self.name!r}: layer {layer.name!r} reads {src!r}, which is not "
                        "an earlier layer (the order must be topological)"
                    )
            seen[layer.name] = i
        if self.is_recurrent and self.seq_len is None:
            raise ModelError(f"network {self.name!r} has recurrent layers but no default seq_len")
        for ex in self.exits:
            if not 0 <= ex.after < len(self.layers):
                raise ModelError(f"network {self.name!r}: exit {ex.name!r} index out of range")

    # --- columns -----------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self.layers)

    @cached_property
    def columns(self) -> dict[str, npt.NDArray[np.int64]]:
        """Per-layer columns as read-only int64 arrays: m, k, n, groups, macs, input_elems,
        output_elems, weight_elems, bytes_per_elem, params, kind (code), repeat (0 none, 1 in, 2 out),
        is_gemm (0/1)."""
        ls = self.layers
        cols: dict[str, npt.NDArray[np.int64]] = {
            "m": np.array([x.m for x in ls], dtype=np.int64),
            "k": np.array([x.k for x in ls], dtype=np.int64),
            "n": np.array([x.n for x in ls], dtype=np.int64),
            "groups": np.array([x.groups for x in ls], dtype=np.int64),
            "input_elems": np.array([x.input_elems for x in ls], dtype=np.int64),
            "output_elems": np.array([x.output_elems for x in ls], dtype=np.int64),
            "weight_elems": np.array([x.weight_elems for x in ls], dtype=np.int64),
            "bytes_per_elem": np.array([x.bytes_per_elem for x in ls], dtype=np.int64),
            "params": np.array([x.params for x in ls], dtype=np.int64),
            "kind": np.array([KIND_CODES[x.kind] for x in ls], dtype=np.int64),
            "repeat": np.array([REPEAT_CODES[x.repeat] for x in ls], dtype=np.int64),
            "is_gemm": np.array([x.is_gemm for x in ls], dtype=np.int64),
        }
        cols["macs"] = cols["m"] * cols["k"] * cols["n"] * cols["groups"]
        for arr in cols.values():
            arr.flags.writeable = False
        return cols

    def index(self, layer_name: str) -> int:
        for i, layer in enumerate(self.layers):
            if layer.name == layer_name:
                return i
        raise ModelError(f"network {self.name!r} has no layer {layer_name!r}")

    # --- totals ------------------------------------------------------------------------------
    @cached_property
    def is_recurrent(self) -> bool:
        """Whether any layer is a recurrent time step (computed once: the network is frozen)."""
        return any(x.repeat is not None for x in self.layers)

    def step_counts(
        self, seq_in: int | None = None, seq_out: int | None = None
    ) -> npt.NDArray[np.int64]:
        """How many times each layer executes for the given sequence lengths (1 for CNN layers)."""
        s_in, s_out = self._resolve_seq(seq_in, seq_out)
        rep = self.columns["repeat"]
        return np.where(rep == 1, s_in, np.where(rep == 2, s_out, 1)).astype(np.int64)

    def _resolve_seq(self, seq_in: int | None, seq_out: int | None) -> tuple[int, int]:
        d_in, d_out = self.seq_len or (1, 1)
        s_in = d_in if seq_in is None else int(seq_in)
        s_out = d_out if seq_out is None else int(seq_out)
        if s_in < 1 or s_out < 1:
            raise ModelError(f"network {self.name!r}: sequence lengths must be >= 1")
        return s_in, s_out

    def total_macs(self, seq_in: int | None = None, seq_out: int | None = None) -> int:
        """MACs of one inference (per sample), recurrent cells unrolled at the given lengths."""
        return int(np.dot(self.columns["macs"], self.step_counts(seq_in, seq_out)))

    @property
    def macs(self) -> int:
        """MACs per sample at the default sequence lengths."""
        return self.total_macs()

    @property
    def params(self) -> int:
        """Trainable parameters (weights, biases, folded batch-norm)."""
        return int(self.columns["params"].sum())

    @property
    def weight_bytes(self) -> int:
        return int((self.columns["weight_elems"] * self.columns["bytes_per_elem"]).sum())

    @property
    def activation_bytes(self) -> int:
        """Sum of output-activation bytes over layers (per sample, default sequence lengths)."""
        per = self.columns["output_elems"] * self.columns["bytes_per_elem"]
        return int(np.dot(per, self.step_counts()))

    # --- execution order ---------------------------------------------------------------------
    def expand(
        self, seq_in: int | None = None, seq_out: int | None = None
    ) -> npt.NDArray[np.int64]:
        """Layer indices in execution order with recurrent segments unrolled step-major.

        For a CNN this is ``arange(len(layers))``. A maximal run of consecutive layers sharing the
        same ``repeat`` tag executes all its layers for step 0, then step 1, and so on.
        """
        rep = self.columns["repeat"]
        if not rep.any():
            return np.arange(len(self.layers), dtype=np.int64)
        s_in, s_out = self._resolve_seq(seq_in, seq_out)
        out: list[npt.NDArray[np.int64]] = []
        i, n_layers = 0, len(self.layers)
        while i < n_layers:
            j = i
            while j + 1 < n_layers and rep[j + 1] == rep[i]:
                j += 1
            seg = np.arange(i, j + 1, dtype=np.int64)
            steps = 1 if rep[i] == 0 else (s_in if rep[i] == 1 else s_out)
            out.append(np.tile(seg, steps))
            i = j + 1
        return np.concatenate(out)

    def summary(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "layers": len(self.layers),
            "macs": self.macs,
            "params": self.params,
        }


def make_network(
    name: str,
    layers: Iterable[Layer],
    *,
    input_shape: Sequence[int] = (),
    exits: Iterable[ExitPoint] = (),
    seq_len: tuple[int, int] | None = None,
    meta: Mapping[str, Any] | None = None,
) -> Network:
    """Convenience constructor that freezes sequences into tuples."""
    return Network(
        name=name,
        layers=tuple(layers),
        input_shape=tuple(input_shape),
        exits=tuple(exits),
        seq_len=seq_len,
        meta=dict(meta or {}),
    )
