"""Early-exit networks: attach exits to a backbone and draw each sample's exit.

Fluid Batching (Kouris et al., Sec. IV "Benchmarks") builds its multi-exit models after HAPI
(Laskaridis et al., ICCAD 2020): **three intermediate exits placed equidistantly in FLOPs** on the
frozen backbone, plus the backbone's own classifier as the final exit. Each intermediate exit
head is a global average pool and a fully connected classifier (``num_classes`` outputs), costed
as ordinary layers (:class:`~npusched.models.ir.ExitPoint.layers`); the final exit has no extra
head (the backbone's ``avgpool`` + ``fc`` already are one).

Choices where the paper is silent (stated here, used everywhere):

* **Where "equidistant in FLOPs" lands.** Exit ``j`` of ``n`` (``j = 1..n-1``) is attached after
  the *cut layer* whose cumulative backbone MACs is nearest to ``j / n`` of the total. A cut layer
  is one whose output is the only tensor alive at that point of the topological order (the end
  of a residual block or an Inception module), so an exit never splits a block. Head MACs are not
  counted in the placement (they are < 0.1% of the backbone's).
* **Exit rates** are the fraction of all samples leaving at each exit (summing to 1, the final
  exit included), as the paper reports them. Each sample's exit index is drawn independently
  from that categorical distribution with a local ``numpy.random.Generator``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np
import numpy.typing as npt

from npusched.errors import ConfigError, ModelError
from npusched.models.ir import ExitPoint, Layer, LayerKind, Network

__all__ = [
    "PAPER_EXIT_RATES",
    "attach_exits",
    "cut_layers",
    "early_exit_network",
    "exit_rates",
    "exit_segments",
    "inline_heads",
    "parse_rates",
    "sample_exits",
]

#: Exit rates of the paper's 4-exit models (Fluid Batching, Sec. IV "Benchmarks", confidence
#: threshold 0.8): fractions of samples leaving at exits 1..4 (the last is the final classifier).
PAPER_EXIT_RATES: dict[str, tuple[float, ...]] = {
    "resnet-50": (0.051, 0.169, 0.090, 0.690),
    "inception-v3": (0.145, 0.186, 0.222, 0.447),
}


def cut_layers(network: Network) -> npt.NDArray[np.int64]:
    """Indices ``i`` whose output is the only live tensor between layers ``i`` and ``i + 1``.

    An edge ``src -> dst`` is live across every boundary ``src..dst-1``; boundary ``i`` is a cut
    when every edge live across it starts at ``i``. The last layer is always a cut.
    """
    index = {layer.name: i for i, layer in enumerate(network.layers)}
    n = len(network.layers)
    # earliest source still live across each boundary: a boundary i is a cut iff that is i itself
    live_from = np.full(n, n, dtype=np.int64)
    for dst, layer in enumerate(network.layers):
        for src_name in layer.inputs:
            src = index[src_name]
            if dst - src > 1:
                seg = live_from[src + 1 : dst]
                np.minimum(seg, src, out=seg)
    # a boundary also fails if a producer other than i is read after it: covered above, since
    # every such edge spans the boundary with a source < i.
    ok = live_from >= np.arange(n)
    # the network input is read by the first layer only for every zoo CNN; boundaries before a
    # second reader of the input would be caught by the same rule with src = -1, which we skip.
    return np.flatnonzero(ok).astype(np.int64)


def _channels(network: Network, idx: int) -> int:
    """Channels (first dimension) of layer ``idx``'s output, traced through vector layers."""
    layer = network.layers[idx]
    if layer.is_gemm:
        return layer.n * layer.groups
    if layer.kind is LayerKind.CONCAT:
        return sum(_channels(network, network.index(s)) for s in layer.inputs)
    if not layer.inputs:
        if network.input_shape:
            return int(network.input_shape[0])
        raise ModelError(f"network {network.name!r}: cannot infer channels of {layer.name!r}")
    return _channels(network, network.index(layer.inputs[0]))


def _head(network: Network, after: int, name: str, num_classes: int) -> tuple[Layer, ...]:
    """Exit head after layer ``after``: global average pool + FC(``num_classes``)."""
    src = network.layers[after]
    c = _channels(network, after)
    bpe = src.bytes_per_elem
    pool = Layer(
        name=f"{name}_pool",
        kind=LayerKind.POOL,
        input_elems=src.output_elems,
        output_elems=c,
        bytes_per_elem=bpe,
        params=0,
        attrs={"mode": "avg", "exit": name},
    )
    fc = Layer(
        name=f"{name}_fc",
        kind=LayerKind.FC,
        m=1,
        k=c,
        n=num_classes,
        input_elems=c,
        output_elems=num_classes,
        weight_elems=c * num_classes,
        bytes_per_elem=bpe,
        params=c * num_classes + num_classes,
        inputs=(f"{name}_pool",),
        attrs={"post": (), "exit": name},
    )
    return pool, fc


def parse_rates(rates: str | Sequence[float], n_exits: int | None = None) -> tuple[float, ...]:
    """Validate exit rates (a sequence, or a comma-separated string such as ``"5.1,16.9,9,69"``).

    Rates may be fractions (summing to 1) or percentages (summing to 100); they are returned as
    fractions. Raises :class:`ConfigError` naming the problem.
    """
    if isinstance(rates, str):
        try:
            vals = [float(x) for x in rates.split(",") if x.strip()]
        except ValueError as exc:
            raise ConfigError(
                f"exit rates {rates!r}: not a comma-separated list of numbers"
            ) from exc
    else:
        vals = [float(x) for x in rates]
    if not vals or any(not np.isfinite(v) or v < 0 for v in vals):
        raise ConfigError(f"exit rates {rates!r}: need one or more finite values >= 0")
    total = sum(vals)
    if abs(total - 100.0) < 0.5:
        vals = [v / 100.0 for v in vals]
        total = sum(vals)
    if abs(total - 1.0) > 5e-3:
        raise ConfigError(f"exit rates {rates!r}: must sum to 1 (or 100%), got {total:g}")
    if n_exits is not None and len(vals) != n_exits:
        raise ConfigError(f"exit rates {rates!r}: {len(vals)} values for {n_exits} exits")
    return tuple(v / total for v in vals)


def attach_exits(
    network: Network,
    n_exits: int = 4,
    rates: str | Sequence[float] | None = None,
    *,
    num_classes: int = 1000,
) -> Network:
    """A copy of ``network`` with ``n_exits - 1`` intermediate exits equidistant in MACs plus the
    final exit (the backbone's own classifier, after its last layer).

    Args:
        network: the backbone (any zoo or imported CNN; existing exits are replaced).
        n_exits: exits in total, >= 1 (the paper uses 4).
        rates: fraction of samples leaving at each exit (``n_exits`` values), or ``None`` for the
            paper's rates when ``network.name`` has them (:data:`PAPER_EXIT_RATES`) and no rates
            otherwise.
        num_classes: outputs of each intermediate head's FC layer (ImageNet: 1000).
    """
    if n_exits < 1:
        raise ConfigError(f"n_exits must be >= 1, got {n_exits}")
    if network.is_recurrent:
        raise ModelError(f"network {network.name!r}: early exits need a feed-forward network")
    if rates is None:
        rate_t: tuple[float, ...] | None = PAPER_EXIT_RATES.get(network.name)
        if rate_t is not None and len(rate_t) != n_exits:
            rate_t = None
    else:
        rate_t = parse_rates(rates, n_exits)
    cum = np.cumsum(network.columns["macs"])
    total = float(cum[-1])
    cuts = cut_layers(network)
    cuts = cuts[cuts < len(network.layers) - 1]
    afters: list[int] = []
    for j in range(1, n_exits):
        target = total * j / n_exits
        cand = cuts[~np.isin(cuts, afters)]
        if afters:
            cand = cand[cand > afters[-1]]
        if cand.size == 0:
            raise ModelError(
                f"network {network.name!r}: not enough block boundaries for {n_exits} exits"
            )
        afters.append(int(cand[np.argmin(np.abs(cum[cand] - target))]))
    exits = []
    for j, after in enumerate(afters):
        name = f"exit{j + 1}"
        exits.append(
            ExitPoint(
                name,
                after,
                _head(network, after, name, num_classes),
                None if rate_t is None else rate_t[j],
            )
        )
    exits.append(
        ExitPoint(
            f"exit{n_exits}", len(network.layers) - 1, (), None if rate_t is None else rate_t[-1]
        )
    )
    meta = dict(network.meta)
    meta["exits"] = "equidistant-flops"
    return replace(network, exits=tuple(exits), meta=meta)


def early_exit_network(
    name: str, rates: str | Sequence[float] | None = None, n_exits: int = 4
) -> Network:
    """The zoo network ``name`` with exits attached (:func:`attach_exits`)."""
    from npusched.models.zoo import get_network

    return attach_exits(get_network(name), n_exits, rates)


def exit_rates(network: Network) -> npt.NDArray[np.float64]:
    """The exit rates stored on ``network``'s exits (raises if any is missing)."""
    if not network.exits or any(e.rate is None for e in network.exits):
        raise ConfigError(f"network {network.name!r} has no exit rates; give them explicitly")
    return np.array([float(e.rate) for e in network.exits if e.rate is not None])


def sample_exits(
    rates: Sequence[float] | npt.NDArray[np.float64],
    n: int,
    random_state: int | np.random.Generator | None = None,
) -> npt.NDArray[np.int64]:
    """Exit index (0-based) of each of ``n`` samples, drawn i.i.d. from ``rates``
    (``random_state``: a seed or a generator)."""
    p = np.asarray(parse_rates(list(np.asarray(rates, dtype=float))), dtype=float)
    rng = np.random.default_rng(random_state)
    return rng.choice(p.size, size=int(n), p=p).astype(np.int64)


def exit_segments(network: Network) -> list[tuple[int, int]]:
    """Backbone layer ranges ``[start, stop)`` of each segment: segment ``i`` runs from just after
    exit ``i - 1`` to exit ``i`` (inclusive of the layer the exit is attached to)."""
    if not network.exits:
        raise ModelError(f"network {network.name!r} has no exits")
    out, start = [], 0
    for ex in network.exits:
        out.append((start, ex.after + 1))
        start = ex.after + 1
    if start != len(network.layers):
        raise ModelError(f"network {network.name!r}: the last exit must follow the last layer")
    return out


def inline_heads(network: Network) -> Network:
    """The same network with every exit head's layers placed in the layer table right after the
    layer its exit follows, and each exit moved to the end of its head.

    This is the form a profile compiles (:func:`npusched.hardware.compile_profile`): the plan's
    steps then include the heads, and exit ``i``'s segment is the step range
    :func:`exit_segments` gives - the exits are segments of the plan. The heads' layers keep
    their names (``exit<j>_pool``, ``exit<j>_fc``) and ``attrs["exit"]``.
    """
    if not network.exits:
        raise ModelError(f"network {network.name!r} has no exits")
    by_after: dict[int, list[ExitPoint]] = {}
    for ex in network.exits:
        by_after.setdefault(ex.after, []).append(ex)
    layers: list[Layer] = []
    exits: list[ExitPoint] = []
    for i, layer in enumerate(network.layers):
        layers.append(layer)
        for ex in by_after.get(i, []):
            for j, h in enumerate(ex.layers):
                layers.append(replace(h, inputs=(layer.name,)) if j == 0 else h)
            exits.append(ExitPoint(ex.name, len(layers) - 1, (), ex.rate))
    return replace(network, layers=tuple(layers), exits=tuple(exits))
