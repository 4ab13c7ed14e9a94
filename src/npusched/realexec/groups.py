"""A network cut into layer groups, each an ONNX Runtime session (the real preemption points).

The exported graph (:mod:`npusched.models.onnx_export`) names every node after the IR layer it
comes from (``<layer>`` or ``<layer>/<what>``), so a group of consecutive IR layers is a set of
nodes. :func:`cut_points` splits the layers into ``n_groups`` runs of about equal MACs; each run
becomes its own ONNX sub-model (``onnx.utils.Extractor``) whose inputs are the tensors it reads
from earlier groups (or the network input) and whose outputs are the tensors later groups (or the
network's outputs) read. The intermediate tensors pass between sessions in memory.

**The mapping to the simulator** (documented choice): the simulator predicts on a *grouped
network* with one layer per group (:meth:`GroupedModel.grouped_network`), so its plan has one
step per group, its layer-granularity preemption points are exactly the group boundaries, and its
checkpoint bytes at a boundary are the real bytes of the tensors alive there (float32).
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from npusched.errors import ConfigError
from npusched.models.ir import Layer, LayerKind, Network, make_network

PROVIDERS = {"cpu": "CPUExecutionProvider", "cuda": "CUDAExecutionProvider"}


def cut_points(net: Network, n_groups: int) -> list[int]:
    """Start indices (into ``net.layers``) of ``n_groups`` runs of consecutive layers with about
    equal MACs (each run non-empty; fewer groups if the network has fewer layers)."""
    n = len(net.layers)
    g = max(1, min(int(n_groups), n))
    macs = np.maximum(net.columns["macs"].astype(np.float64), 1.0)
    cum = np.cumsum(macs) / macs.sum()
    starts = [0]
    for k in range(1, g):
        i = int(np.searchsorted(cum, k / g, side="left")) + 1
        i = max(i, starts[-1] + 1)
        if i >= n - (g - k) + 1:
            i = n - (g - k)
        starts.append(i)
    return starts


@dataclass
class Group:
    """One layer group: IR layers ``layers``, its session's ``inputs`` / ``outputs`` (tensor
    names), the tensors alive after it (``live_after``, their float32 ``live_bytes``)."""

    index: int
    layers: tuple[str, ...]
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    live_after: tuple[str, ...]
    live_bytes: int
    model: Any = field(repr=False, default=None)


@dataclass
class GroupedModel:
    """A zoo network exported at ``input_size`` and batch ``batch``, cut into groups.

    Attributes:
        name: the tenant's network name (the simulator's profile key).
        network: the zoo IR (at its own input size; used for the cut and for reference).
        groups: the layer groups in execution order.
        input_shape: the ONNX input shape incl. the batch, e.g. ``(1, 3, 112, 112)``.
        outputs: the network's output tensor names.
    """

    name: str
    network: Network
    batch: int
    input_size: int | None
    groups: list[Group]
    input_shape: tuple[int, ...]
    outputs: tuple[str, ...]

    def sessions(self, *, threads: int = 1, provider: str = "cpu") -> list[Any]:
        """One ONNX Runtime session per group with ``threads`` intra-op threads (1 inter-op,
        sequential execution) on ``provider`` (``cpu`` or ``cuda``)."""
        import onnxruntime as ort

        if provider not in PROVIDERS:
            raise ConfigError(f"provider: {provider!r} is unknown; allowed: {', '.join(PROVIDERS)}")
        name = PROVIDERS[provider]
        if name not in ort.get_available_providers():
            raise ConfigError(
                f"provider: {provider!r} is not available in this onnxruntime "
                f"({', '.join(ort.get_available_providers())}); install onnxruntime-gpu for cuda"
            )
        # an operator the GPU provider lacks falls back to the CPU (ONNX Runtime's own rule)
        chain = [name] if provider == "cpu" else [name, PROVIDERS["cpu"]]
        out = []
        for g in self.groups:
            so = ort.SessionOptions()
            so.intra_op_num_threads = int(threads)
            so.inter_op_num_threads = 1
            so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
            so.log_severity_level = 3
            out.append(ort.InferenceSession(g.model.SerializeToString(), so, providers=chain))
        return out

    def sample_input(self, seed: int = 0) -> np.ndarray[Any, Any]:
        """A seeded random input tensor (float32)."""
        rng = np.random.default_rng(seed)
        return rng.random(self.input_shape, dtype=np.float32)

    def grouped_network(self) -> Network:
        """The simulator's view: one vector layer per group (``attrs["layers"]`` lists the IR
        layers; ``output_elems`` the float32 elements alive after it, ``bytes_per_elem`` 4)."""
        layers = []
        prev: tuple[str, ...] = ()
        for g in self.groups:
            layers.append(
                Layer(
                    name=f"g{g.index}",
                    kind=LayerKind.VECTOR,
                    output_elems=g.live_bytes // 4,
                    bytes_per_elem=4,
                    params=0,
                    inputs=prev,
                    attrs={"layers": g.layers, "op": "onnx_group"},
                )
            )
            prev = (f"g{g.index}",)
        return make_network(
            self.name,
            layers,
            input_shape=self.input_shape[1:],
            meta={"zoo": self.network.name, "input_size": self.input_size, "batch": self.batch},
        )


def build_grouped(
    name: str,
    net: Network,
    *,
    n_groups: int,
    batch: int = 1,
    input_size: int | None = None,
    seed: int = 0,
) -> GroupedModel:
    """Export ``net`` (:func:`~npusched.models.onnx_export.to_onnx`) and cut it into
    ``n_groups`` sessions' sub-models (see the module docstring)."""
    import onnx.utils

    from npusched.models.onnx_export import to_onnx

    model = to_onnx(net, batch=batch, input_size=input_size, seed=seed)
    graph = model.graph
    starts = cut_points(net, n_groups)
    layer_group: dict[str, int] = {}
    for gi, (a, b) in enumerate(zip(starts, [*starts[1:], len(net.layers)], strict=True)):
        for layer in net.layers[a:b]:
            layer_group[layer.name] = gi
    inits = {t.name for t in graph.initializer}
    node_group: list[int] = [layer_group[nd.name.split("/")[0]] for nd in graph.node]
    produced_in: dict[str, int] = {"input": -1}
    for nd, gi in zip(graph.node, node_group, strict=True):
        for o in nd.output:
            produced_in[o] = gi
    last_use: dict[str, int] = {}
    reads: dict[int, list[str]] = {}
    for nd, gi in zip(graph.node, node_group, strict=True):
        for t in nd.input:
            if t and t not in inits and produced_in.get(t, gi) != gi:
                reads.setdefault(gi, [])
                if t not in reads[gi]:
                    reads[gi].append(t)
                last_use[t] = max(last_use.get(t, -1), gi)
    n = len(starts)
    final = tuple(o.name for o in graph.output)
    for o in final:
        last_use[o] = n  # read "after" the last group
    shapes: dict[str, int] = {}
    for vi in [*graph.value_info, *graph.output, *graph.input]:
        dims = [d.dim_value for d in vi.type.tensor_type.shape.dim]
        shapes[vi.name] = int(np.prod(dims)) * 4
    extractor = onnx.utils.Extractor(model)
    groups: list[Group] = []
    for gi in range(n):
        ins = tuple(reads.get(gi, []))
        outs = tuple(t for t, g in produced_in.items() if g == gi and last_use.get(t, gi) > gi)
        live = tuple(t for t, g in produced_in.items() if g <= gi and last_use.get(t, -2) > gi)
        sub = extractor.extract_model(list(ins), list(outs))
        layers = tuple(x.name for x in net.layers[starts[gi] : [*starts, len(net.layers)][gi + 1]])
        groups.append(Group(gi, layers, ins, outs, live, sum(shapes.get(t, 0) for t in live), sub))
    shape = tuple(d.dim_value for d in graph.input[0].type.tensor_type.shape.dim)
    return GroupedModel(name, net, batch, input_size, groups, shape, final)


def run_groups(
    sessions: Sequence[Any], model: GroupedModel, x: np.ndarray[Any, Any]
) -> tuple[dict[str, np.ndarray[Any, Any]], list[float]]:
    """Run every group in order on input ``x``; returns the network outputs and the seconds of
    each group's ``session.run`` (wall clock)."""
    live: dict[str, Any] = {"input": x}
    times: list[float] = []
    for sess, g in zip(sessions, model.groups, strict=True):
        feed = {t: live[t] for t in g.inputs}
        t0 = time.perf_counter()
        res = sess.run(list(g.outputs), feed)
        times.append(time.perf_counter() - t0)
        live.update(zip(g.outputs, res, strict=True))
        live = {t: live[t] for t in g.live_after}
    return {t: live[t] for t in model.outputs}, times


def live_tensors(
    group: Group, live: Mapping[str, np.ndarray[Any, Any]]
) -> dict[str, np.ndarray[Any, Any]]:
    """The tensors alive after ``group`` (drops the rest)."""
    return {t: live[t] for t in group.live_after}
