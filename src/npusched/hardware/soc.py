"""Shared-memory SoCs with several accelerators (HaX-CoNN, PPoPP'24, Sec. 3.1-3.3 and Sec. 4).

An SoC (:class:`SocSpec`) is a set of accelerators (GPU, DLA or DSP) sharing one DRAM. A network
runs on it as a chain of *layer groups* (Sec. 3.1): the atomic units a schedule maps to an
accelerator. A :class:`GroupProfile` holds, per group and accelerator (arrays of shape ``(G, A)``):

* ``time_s`` - standalone execution time in seconds (``t(L, A)`` of Eq. 2);
* ``out_s`` - transition cost in seconds paid when execution *leaves* accelerator ``a`` after
  group ``g`` (flushing the group's output to shared memory, ``tau(L, A, OUT)``);
* ``in_s`` - transition cost in seconds paid when execution *enters* accelerator ``a`` before
  group ``g`` (``tau(L, A, IN)``);
* ``mem_bps`` - requested memory throughput in bytes per second when the group runs alone on
  ``a`` (Sec. 3.3; the input of the contention model, :mod:`npusched.hardware.contention`).

Profiles come from three sources:

1. the paper's tables (:func:`table2_profile`: GoogLeNet's ten groups on Xavier, Table 2;
   :func:`table5_times`: whole-network GPU/DLA times of ten networks on Orin and Xavier, Table 5),
   copied into ``npusched/data/haxconn/`` with the source noted;
2. :func:`generate_profile`, a per-accelerator roofline model over the zoo's layer table, grouped
   by :func:`group_layers` and calibrated so whole-network times match Table 5;
3. :func:`load_profile_csv`, measured profiles (e.g. TensorRT's ``IProfiler``) in the CSV format
   documented there; a bad row gives a one-line :class:`ProfileFormatError`.
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from pathlib import Path

import numpy as np
import numpy.typing as npt

from npusched.base import Component
from npusched.errors import ConfigError, HardwareConfigError, UnknownNameError
from npusched.hardware.base import LayerCosts
from npusched.hardware.machines import ResourceLayout
from npusched.models.ir import LayerKind, Network

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

__all__ = [
    "SOCS",
    "GroupProfile",
    "ProfileFormatError",
    "Roofline",
    "SocDevice",
    "SocSpec",
    "generate_profile",
    "get_soc",
    "group_layers",
    "layer_times",
    "load_profile_csv",
    "table2_profile",
    "table5_times",
    "transition_points",
]


class ProfileFormatError(ConfigError):
    """A measured-profile CSV is malformed (the message names file, line and field)."""


# --- SoCs --------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Roofline:
    """A per-accelerator roofline: ``t = max(macs / peak_macs_per_s, bytes / bandwidth) + launch``.

    Attributes:
        peak_macs_per_s: peak multiply-accumulates per second (FP16/INT8 as TensorRT runs it).
        bandwidth_fraction: share of the SoC's DRAM bandwidth the accelerator can draw alone.
        launch_s: fixed cost per layer in seconds (kernel launch / DLA command).
    """

    peak_macs_per_s: float
    bandwidth_fraction: float
    launch_s: float


@dataclass(frozen=True)
class SocSpec:
    """An SoC: accelerators sharing one memory (Table 4).

    Attributes:
        name: registry name.
        accelerators: accelerator names; index 0 is the GPU (the "GPU-only" baseline's target).
        memory_bandwidth_bps: shared DRAM bandwidth in bytes per second (Table 4).
        rooflines: per accelerator, the roofline :func:`generate_profile` uses. Only the *shape*
            matters where Table 5 calibrates the total (the ratio of compute to bandwidth decides
            which layers an accelerator is relatively good at); the peaks are nominal figures.
        leave_fixed_s: per accelerator, fixed cost in seconds of a transition leaving it
            (Table 2's smallest G-to-D and D-to-G times, 0.007 and 0.03 ms).
        description: what the SoC is.
    """

    name: str
    accelerators: tuple[str, ...]
    memory_bandwidth_bps: float
    rooflines: tuple[Roofline, ...]
    leave_fixed_s: tuple[float, ...]
    description: str = ""

    def index(self, accelerator: str) -> int:
        """Position of ``accelerator`` (case-insensitive) in :attr:`accelerators`."""
        for i, a in enumerate(self.accelerators):
            if a.lower() == accelerator.lower():
                return i
        raise UnknownNameError(f"accelerator of {self.name}", accelerator, self.accelerators)


# Nominal peaks (vendor data sheets): Orin GPU ~ 2x Xavier's; DLAs are weaker at large GEMMs
# (Sec. 3.2), which the lower compute-to-bandwidth ratio expresses.
SOCS: dict[str, SocSpec] = {
    "orin": SocSpec(
        "orin",
        ("GPU", "DLA"),
        204.8e9,
        (Roofline(21.0e12, 0.8, 8e-6), Roofline(5.0e12, 0.5, 12e-6)),
        (0.007e-3, 0.03e-3),
        "NVIDIA AGX Orin: Ampere GPU + NVDLA v2.0, LPDDR5 204.8 GB/s (Table 4)",
    ),
    "xavier": SocSpec(
        "xavier",
        ("GPU", "DLA"),
        136.5e9,
        (Roofline(11.0e12, 0.8, 10e-6), Roofline(2.5e12, 0.5, 15e-6)),
        (0.007e-3, 0.03e-3),
        "NVIDIA Xavier AGX: Volta GPU + NVDLA v1.0, LPDDR4 136.5 GB/s (Table 4)",
    ),
    "snapdragon-865": SocSpec(
        "snapdragon-865",
        ("GPU", "DSP"),
        34.1e9,
        (Roofline(0.6e12, 0.8, 30e-6), Roofline(0.5e12, 0.6, 40e-6)),
        (0.007e-3, 0.03e-3),
        "Qualcomm Snapdragon 865: Adreno 650 GPU + Hexagon 698 DSP, LPDDR5 34.1 GB/s (Table 4)",
    ),
}

# Snapdragon 865 has no Table 5 row; its two accelerators are calibrated on Table 6, exp. 9
# (GoogLeNet + ResNet101): GPU-only latency 98.3 ms = GPU(GoogLeNet) + GPU(ResNet101), and the
# GPU & DSP baseline 79.1 ms read as ResNet101 wholly on the DSP.
SNAPDRAGON_CALIBRATION: dict[str, tuple[tuple[str, ...], float]] = {
    "GPU": (("googlenet", "resnet-101"), 98.3e-3),
    "DSP": (("resnet-101",), 79.1e-3),
}


def get_soc(name: str) -> SocSpec:
    """The built-in SoC called ``name`` (``orin``, ``xavier``, ``snapdragon-865``)."""
    key = name.lower()
    if key not in SOCS:
        raise UnknownNameError("soc", name, SOCS)
    return SOCS[key]


# --- profiles ----------------------------------------------------------------------------------
def _frozen(a: npt.ArrayLike) -> FloatArray:
    arr = np.array(a, dtype=np.float64)
    arr.flags.writeable = False
    return arr


@dataclass(frozen=True)
class GroupProfile:
    """Per-layer-group costs of one network on one SoC (see the module docstring for units).

    Attributes:
        network: network name.
        accelerators: accelerator names (columns of the arrays).
        bounds: ``(first_layer, last_layer)`` per group (inclusive, in the source's indexing).
        time_s, out_s, in_s, mem_bps: ``(G, A)`` arrays in seconds / bytes per second.
        source: where the numbers come from.
    """

    network: str
    accelerators: tuple[str, ...]
    bounds: tuple[tuple[int, int], ...]
    time_s: FloatArray
    out_s: FloatArray
    in_s: FloatArray
    mem_bps: FloatArray
    source: str = ""
    meta: Mapping[str, object] = field(default_factory=dict, compare=False, hash=False)

    def __post_init__(self) -> None:
        g, a = len(self.bounds), len(self.accelerators)
        if g < 1 or a < 1:
            raise HardwareConfigError(f"profile {self.network!r}: needs >= 1 group and accelerator")
        for name in ("time_s", "out_s", "in_s", "mem_bps"):
            arr = _frozen(getattr(self, name))
            if arr.shape != (g, a):
                raise HardwareConfigError(
                    f"profile {self.network!r}: {name} has shape {arr.shape}, expected {(g, a)}"
                )
            if not np.all(np.isfinite(arr)) or np.any(arr < 0):
                raise HardwareConfigError(
                    f"profile {self.network!r}: {name} must be finite and >= 0"
                )
            object.__setattr__(self, name, arr)
        if np.any(self.time_s <= 0):
            raise HardwareConfigError(f"profile {self.network!r}: time_s must be > 0")

    @property
    def n_groups(self) -> int:
        return len(self.bounds)

    @property
    def n_accelerators(self) -> int:
        return len(self.accelerators)

    def standalone_s(self, accelerator: int = 0) -> float:
        """Seconds the whole network takes alone on one accelerator (no transitions)."""
        return float(self.time_s[:, accelerator].sum())

    def coarsen(self, n_groups: int) -> GroupProfile:
        """Merge adjacent groups into at most ``n_groups`` of balanced GPU time.

        Times add; requested throughput is the time-weighted mean (bytes are conserved); the
        merged group keeps the IN cost of its first and the OUT cost of its last member.
        """
        if n_groups >= self.n_groups:
            return self
        if n_groups < 1:
            raise HardwareConfigError(f"coarsen: n_groups must be >= 1, got {n_groups}")
        cum = np.cumsum(self.time_s[:, 0])
        targets = cum[-1] * np.arange(1, n_groups) / n_groups
        cuts = sorted(set(np.clip(np.searchsorted(cum, targets), 0, self.n_groups - 2).tolist()))
        starts = [0, *[c + 1 for c in cuts]]
        ends = [*cuts, self.n_groups - 1]
        time = np.array([self.time_s[s : e + 1].sum(axis=0) for s, e in zip(starts, ends, strict=True)])
        traffic = self.mem_bps * self.time_s
        mem = np.array([traffic[s : e + 1].sum(axis=0) for s, e in zip(starts, ends, strict=True)]) / time
        return GroupProfile(
            network=self.network,
            accelerators=self.accelerators,
            bounds=tuple((self.bounds[s][0], self.bounds[e][1]) for s, e in zip(starts, ends, strict=True)),
            time_s=time,
            out_s=self.out_s[ends],
            in_s=self.in_s[starts],
            mem_bps=mem,
            source=self.source + f"; coarsened to {len(starts)} groups",
            meta=dict(self.meta),
        )

    def repeat(self, k: int) -> GroupProfile:
        """``k`` back-to-back iterations of the network as one chain of ``k * G`` groups
        (Sec. 5.4 balances a pair by running the faster DNN several times)."""
        if k < 1:
            raise HardwareConfigError(f"repeat: k must be >= 1, got {k}")
        if k == 1:
            return self
        return GroupProfile(
            network=f"{self.network}x{k}",
            accelerators=self.accelerators,
            bounds=self.bounds * k,
            time_s=np.tile(self.time_s, (k, 1)),
            out_s=np.tile(self.out_s, (k, 1)),
            in_s=np.tile(self.in_s, (k, 1)),
            mem_bps=np.tile(self.mem_bps, (k, 1)),
            source=self.source + f"; {k} iterations",
            meta=dict(self.meta),
        )


# --- paper tables ------------------------------------------------------------------------------
def _read_data(name: str) -> list[dict[str, str]]:
    text = resources.files("npusched.data.haxconn").joinpath(name).read_text(encoding="utf-8")
    lines = [ln for ln in text.splitlines() if ln and not ln.startswith("#")]
    return list(csv.DictReader(lines))


def table2_profile() -> GroupProfile:
    """GoogLeNet's ten layer groups on Xavier AGX, HaX-CoNN Table 2.

    Our readings: Table 2's G-to-D / D-to-G time after a group is the whole transition cost,
    recorded as the OUT cost of the accelerator left (IN costs zero). The memory throughput
    column (% of Xavier's 136.5 GB/s) is measured on the GPU; the DLA's is derived by Sec. 3.3's
    step 3 with the same traffic spread over the DLA's longer time (``pct * t_GPU / t_DLA``),
    because Fig. 3's EMC ratios are not given as numbers.
    """
    soc = SOCS["xavier"]
    rows = _read_data("table2_googlenet_xavier.csv")
    gpu = np.array([float(r["gpu_ms"]) for r in rows]) * 1e-3
    dla = np.array([float(r["dla_ms"]) for r in rows]) * 1e-3
    g2d = np.array([float(r["g_to_d_ms"]) for r in rows]) * 1e-3
    d2g = np.array([float(r["d_to_g_ms"]) for r in rows]) * 1e-3
    pct = np.array([float(r["mem_throughput_pct"]) for r in rows]) / 100.0
    mem_gpu = pct * soc.memory_bandwidth_bps
    return GroupProfile(
        network="googlenet",
        accelerators=soc.accelerators,
        bounds=tuple((int(r["first_layer"]), int(r["last_layer"])) for r in rows),
        time_s=np.stack([gpu, dla], axis=1),
        out_s=np.stack([g2d, d2g], axis=1),
        in_s=np.zeros((len(rows), 2)),
        mem_bps=np.stack([mem_gpu, mem_gpu * gpu / dla], axis=1),
        source="HaX-CoNN Table 2 (GoogLeNet on Xavier AGX)",
        meta={"soc": "xavier"},
    )


@cache
def table5_times() -> dict[str, dict[str, float]]:
    """HaX-CoNN Table 5 as ``{zoo network: {"orin_gpu": s, "orin_dla": s, "xavier_gpu": s,
    "xavier_dla": s}}`` in seconds; a missing entry (DenseNet on Xavier's DLA) is absent."""
    out: dict[str, dict[str, float]] = {}
    for r in _read_data("table5_standalone.csv"):
        out[r["network"]] = {
            k.removesuffix("_ms"): float(v) * 1e-3
            for k, v in r.items()
            if k.endswith("_ms") and v not in ("", None)
        }
    return out


# --- layer grouping (Sec. 3.1) -----------------------------------------------------------------
_FUSED_POST_OPS = frozenset({LayerKind.ACT, LayerKind.VECTOR})


def transition_points(network: Network) -> IntArray:
    """Layer indices ``i`` after which a transition to another accelerator is allowed (Sec. 3.1).

    A cut after layer ``i`` is allowed when (1) exactly one tensor crosses it, the output of
    layer ``i`` (cutting inside an Inception/ResNet block would move several live tensors,
    which TensorRT's ``markOutput``/``addInput`` pair does not do), and (2) layer ``i + 1`` is not
    an activation or normalisation that fuses into layer ``i`` (operator fusion must not break).
    The last layer is never a transition point (nothing follows it).
    """
    n = len(network)
    index = {layer.name: i for i, layer in enumerate(network.layers)}
    blocked = np.zeros(n + 1, dtype=np.int64)
    for d, layer in enumerate(network.layers):
        for src in layer.inputs:
            s = index[src]
            if d - 1 >= s + 1:  # edge s -> d crosses every cut in [s+1, d-1]
                blocked[s + 1] += 1
                blocked[d] -= 1
    crossing = np.cumsum(blocked)[:n]
    ok = crossing == 0
    for i in range(n - 1):
        nxt = network.layers[i + 1]
        if nxt.kind in _FUSED_POST_OPS and nxt.inputs == (network.layers[i].name,):
            ok[i] = False
    ok[n - 1] = False
    return np.flatnonzero(ok).astype(np.int64)


def group_layers(
    network: Network, n_groups: int | None = None, weights: npt.ArrayLike | None = None
) -> tuple[tuple[int, int], ...]:
    """Layer groups ``(first, last)`` of ``network`` (Sec. 3.1).

    Without ``n_groups`` every allowed transition point (:func:`transition_points`) ends a group
    (the minimal groups). With ``n_groups`` the cuts are the allowed points nearest to equal
    shares of ``weights`` (default: MACs + 1 per layer), giving at most ``n_groups`` groups.
    """
    pts = transition_points(network)
    n = len(network)
    if n_groups is not None:
        if n_groups < 1:
            raise HardwareConfigError(f"group_layers: n_groups must be >= 1, got {n_groups}")
        w = (
            network.columns["macs"].astype(np.float64) + 1.0
            if weights is None
            else np.asarray(weights, dtype=np.float64)
        )
        cum = np.cumsum(w)
        if len(pts) > n_groups - 1:
            targets = cum[-1] * np.arange(1, n_groups) / n_groups
            chosen: list[int] = []
            avail = pts.copy()
            for t in targets:
                j = int(np.argmin(np.abs(cum[avail] - t)))
                chosen.append(int(avail[j]))
                avail = np.delete(avail, j)
            pts = np.array(sorted(chosen), dtype=np.int64)
    starts = [0, *(int(p) + 1 for p in pts)]
    ends = [*(int(p) for p in pts), n - 1]
    return tuple(zip(starts, ends, strict=True))


# --- roofline generator ------------------------------------------------------------------------
def _layer_bytes(network: Network) -> tuple[FloatArray, FloatArray]:
    c = network.columns
    bpe = c["bytes_per_elem"].astype(np.float64)
    traffic = (c["input_elems"] + c["output_elems"] + c["weight_elems"]) * bpe
    return traffic, c["output_elems"] * bpe


def _roofline_layer_s(network: Network, soc: SocSpec, acc: int) -> FloatArray:
    rl = soc.rooflines[acc]
    traffic, _ = _layer_bytes(network)
    macs = network.columns["macs"].astype(np.float64)
    bw = rl.bandwidth_fraction * soc.memory_bandwidth_bps
    return np.maximum(macs / rl.peak_macs_per_s, traffic / bw) + rl.launch_s


@cache
def _traffic_factor() -> float:
    """DRAM traffic per byte of layer tensors, fitted so the roofline GoogLeNet on Xavier's GPU
    requests Table 2's time-weighted mean memory throughput (tiling and im2col re-reads make
    real traffic several times the tensor sizes)."""
    t2 = table2_profile()
    target = float((t2.mem_bps[:, 0] * t2.time_s[:, 0]).sum() / t2.time_s[:, 0].sum())
    from npusched.models.zoo import get_network

    net = get_network("googlenet")
    SOCS["xavier"]
    traffic, _ = _layer_bytes(net)
    total_s = table5_times()["googlenet"]["xavier_gpu"]
    return target * total_s / float(traffic.sum())


def _calibration_s(network: str, soc: SocSpec, acc: int) -> float | None:
    """Table 5's whole-network time of ``network`` on accelerator ``acc`` (None if absent)."""
    key = f"{soc.name}_{soc.accelerators[acc].lower()}"
    return table5_times().get(network, {}).get(key)


def _soc_scale(soc: SocSpec, acc: int) -> float:
    """Seconds of real time per roofline second on ``acc`` when a network has no Table 5 entry:
    the median over Table 5's networks (Snapdragon: fitted on Table 6, exp. 9)."""
    from npusched.models.zoo import get_network

    if soc.name == "snapdragon-865":
        nets, total = SNAPDRAGON_CALIBRATION[soc.accelerators[acc]]
        raw = sum(float(_roofline_layer_s(get_network(n), soc, acc).sum()) for n in nets)
        return total / raw
    ratios = []
    for net_name in table5_times():
        cal = _calibration_s(net_name, soc, acc)
        if cal is not None:
            ratios.append(cal / float(_roofline_layer_s(get_network(net_name), soc, acc).sum()))
    return float(np.median(ratios))


def layer_times(network: Network, soc: SocSpec, *, calibrate: bool = True) -> FloatArray:
    """Per-layer seconds of ``network`` on every accelerator of ``soc``, shape ``(L, A)``: the
    roofline, scaled to Table 5 when ``calibrate`` (see :func:`generate_profile`)."""
    out = np.empty((len(network), len(soc.accelerators)))
    for a in range(len(soc.accelerators)):
        raw = _roofline_layer_s(network, soc, a)
        if calibrate:
            cal = _calibration_s(network.name, soc, a)
            raw = raw * (cal / float(raw.sum()) if cal is not None else _soc_scale(soc, a))
        out[:, a] = raw
    return out


def generate_profile(
    network: Network, soc: SocSpec | str, *, n_groups: int | None = 10, calibrate: bool = True
) -> GroupProfile:
    """Per-group profile of a zoo ``network`` on ``soc`` from per-accelerator rooflines.

    Per layer and accelerator ``t = max(MACs / peak, bytes / bandwidth) + launch``
    (:class:`Roofline`); with ``calibrate`` the layer times on each accelerator are scaled so
    the whole network matches Table 5 (networks or SoCs without an entry use the SoC's median
    scale, see :func:`_soc_scale`). Layers are grouped by :func:`group_layers` (``n_groups``;
    ``None`` = every allowed transition point). Requested memory throughput is the group's
    DRAM traffic (tensor bytes times a traffic factor fitted to Table 2) over its time, capped
    at the accelerator's bandwidth share. A transition out of ``a`` after a group costs
    ``leave_fixed_s[a]`` plus writing the group's output at the SoC bandwidth; entering costs
    reading it back at the same bandwidth.
    """
    spec = get_soc(soc) if isinstance(soc, str) else soc
    bounds = group_layers(network, n_groups)
    traffic, out_bytes = _layer_bytes(network)
    traffic = traffic * _traffic_factor()
    layer_t = layer_times(network, spec, calibrate=calibrate)
    idx = np.array([e for _, e in bounds])
    cum_t = np.vstack([np.zeros((1, layer_t.shape[1])), np.cumsum(layer_t, axis=0)])
    starts = np.array([s for s, _ in bounds])
    time = cum_t[idx + 1] - cum_t[starts]
    cum_b = np.concatenate([[0.0], np.cumsum(traffic)])
    group_bytes = cum_b[idx + 1] - cum_b[starts]
    caps = np.array([r.bandwidth_fraction for r in spec.rooflines]) * spec.memory_bandwidth_bps
    mem = np.minimum(group_bytes[:, None] / time, caps[None, :])
    flush = out_bytes[idx] / spec.memory_bandwidth_bps
    out = np.array(spec.leave_fixed_s)[None, :] + flush[:, None]
    in_bytes = np.concatenate([[0.0], out_bytes[idx[:-1]]]) / spec.memory_bandwidth_bps
    in_ = np.repeat(in_bytes[:, None], len(spec.accelerators), axis=1)
    return GroupProfile(
        network=network.name,
        accelerators=spec.accelerators,
        bounds=bounds,
        time_s=time,
        out_s=out,
        in_s=in_,
        mem_bps=mem,
        source=f"roofline on {spec.name}" + (", calibrated to Table 5" if calibrate else ""),
        meta={"soc": spec.name},
    )


# --- measured profiles (CSV) -------------------------------------------------------------------
CSV_COLUMNS = (
    "network",
    "group",
    "first_layer",
    "last_layer",
    "accelerator",
    "time_ms",
    "out_ms",
    "in_ms",
    "mem_gbps",
)


def load_profile_csv(
    source: str | Path | io.TextIOBase, soc: SocSpec | str
) -> dict[str, GroupProfile]:
    """Measured per-group profiles from a CSV file, one :class:`GroupProfile` per network.

    Format (header required; ``#`` lines are comments; one row per group and accelerator)::

        network,group,first_layer,last_layer,accelerator,time_ms,out_ms,in_ms,mem_gbps
        googlenet,0,0,9,GPU,0.45,0.056,0,57.3
        googlenet,0,0,9,DLA,0.75,0.15,0,34.4

    * ``group``: 0-based, contiguous per network; ``first_layer``/``last_layer``: inclusive layer
      indices (e.g. TensorRT's), the same for every accelerator of a group;
    * ``accelerator``: one of the SoC's accelerators; every group needs a row for each;
    * ``time_ms``: standalone execution time (> 0); ``out_ms``/``in_ms``: transition cost leaving
      / entering this accelerator at this group (>= 0); ``mem_gbps``: requested memory
      throughput alone, GB/s (10^9 bytes/s, >= 0).

    Raises:
        ProfileFormatError: one line naming the file, line, field and what is allowed.
    """
    spec = get_soc(soc) if isinstance(soc, str) else soc
    name = str(source) if isinstance(source, str | Path) else "<csv>"
    if isinstance(source, str | Path):
        try:
            text = Path(source).read_text(encoding="utf-8")
        except OSError as e:
            raise ProfileFormatError(f"{name}: cannot read ({e.strerror})") from None
    else:
        text = source.read()
    numbered = [
        (i + 1, ln) for i, ln in enumerate(text.splitlines()) if ln.strip() and not ln.startswith("#")
    ]
    if not numbered:
        raise ProfileFormatError(f"{name}: empty; expected header {','.join(CSV_COLUMNS)}")
    header_line, header = numbered[0]
    cols = [c.strip() for c in next(csv.reader([header]))]
    missing = [c for c in CSV_COLUMNS if c not in cols]
    if missing:
        raise ProfileFormatError(
            f"{name}:{header_line}: missing column(s) {', '.join(missing)}; "
            f"expected {','.join(CSV_COLUMNS)}"
        )
    rows: dict[str, dict[tuple[int, int], tuple[int, int, int, list[float]]]] = {}
    for line_no, line in numbered[1:]:
        values = next(csv.reader([line]))
        if len(values) != len(cols):
            raise ProfileFormatError(
                f"{name}:{line_no}: {len(values)} fields, header has {len(cols)}"
            )
        rec = dict(zip(cols, (v.strip() for v in values), strict=True))

        def _num(field_: str, *, integer: bool = False, positive: bool = False,
                 rec: dict[str, str] = rec, line_no: int = line_no) -> float:
            raw = rec[field_]
            try:
                val = int(raw) if integer else float(raw)
            except ValueError:
                kind = "an integer" if integer else "a number"
                raise ProfileFormatError(
                    f"{name}:{line_no}: {field_}={raw!r}; expected {kind}"
                ) from None
            if not math.isfinite(val) or val < 0 or (positive and val == 0):
                bound = "> 0" if positive else ">= 0"
                raise ProfileFormatError(f"{name}:{line_no}: {field_}={raw!r}; allowed: {bound}")
            return val

        net = rec["network"]
        if not net:
            raise ProfileFormatError(f"{name}:{line_no}: network is empty")
        acc_name = rec["accelerator"]
        try:
            acc = spec.index(acc_name)
        except UnknownNameError:
            raise ProfileFormatError(
                f"{name}:{line_no}: accelerator={acc_name!r}; allowed on {spec.name}: "
                f"{', '.join(spec.accelerators)}"
            ) from None
        g = int(_num("group", integer=True))
        first, last = int(_num("first_layer", integer=True)), int(_num("last_layer", integer=True))
        if last < first:
            raise ProfileFormatError(
                f"{name}:{line_no}: last_layer={last} < first_layer={first}"
            )
        vals = [
            _num("time_ms", positive=True) * 1e-3,
            _num("out_ms") * 1e-3,
            _num("in_ms") * 1e-3,
            _num("mem_gbps") * 1e9,
        ]
        per_net = rows.setdefault(net, {})
        if (g, acc) in per_net:
            raise ProfileFormatError(
                f"{name}:{line_no}: duplicate row for network {net!r} group {g} "
                f"accelerator {spec.accelerators[acc]}"
            )
        per_net[(g, acc)] = (line_no, first, last, vals)
    if not rows:
        raise ProfileFormatError(f"{name}: no data rows")
    out: dict[str, GroupProfile] = {}
    n_acc = len(spec.accelerators)
    for net, per_net in rows.items():
        groups = sorted({g for g, _ in per_net})
        if groups != list(range(len(groups))):
            raise ProfileFormatError(
                f"{name}: network {net!r}: groups {groups[:8]}... must be 0..{len(groups) - 1}"
            )
        arr = np.zeros((4, len(groups), n_acc))
        bounds: list[tuple[int, int]] = []
        for g in groups:
            seen: tuple[int, int] | None = None
            for a in range(n_acc):
                if (g, a) not in per_net:
                    raise ProfileFormatError(
                        f"{name}: network {net!r} group {g}: no row for accelerator "
                        f"{spec.accelerators[a]}"
                    )
                line_no, first, last, vals = per_net[(g, a)]
                if seen is not None and seen != (first, last):
                    raise ProfileFormatError(
                        f"{name}:{line_no}: group {g} layers {first}-{last} differ from "
                        f"{seen[0]}-{seen[1]} on another accelerator"
                    )
                seen = (first, last)
                arr[:, g, a] = vals
            assert seen is not None
            bounds.append(seen)
        out[net] = GroupProfile(
            network=net,
            accelerators=spec.accelerators,
            bounds=tuple(bounds),
            time_s=arr[0],
            out_s=arr[1],
            in_s=arr[2],
            mem_bps=arr[3],
            source=f"measured ({name})",
            meta={"soc": spec.name},
        )
    return out


def profile_to_csv_rows(profile: GroupProfile) -> Iterable[Sequence[object]]:
    """Rows of :func:`load_profile_csv`'s format for ``profile`` (header not included)."""
    for g, (first, last) in enumerate(profile.bounds):
        for a, acc in enumerate(profile.accelerators):
            yield (
                profile.network,
                g,
                first,
                last,
                acc,
                f"{profile.time_s[g, a] * 1e3:.6g}",
                f"{profile.out_s[g, a] * 1e3:.6g}",
                f"{profile.in_s[g, a] * 1e3:.6g}",
                f"{profile.mem_bps[g, a] / 1e9:.6g}",
            )


# --- the SoC as an engine device (plan variants per accelerator) ----------------------------
class SocDevice(Component):
    """An SoC as a :class:`~npusched.hardware.base.Device` whose run-time choice is the
    accelerator: ``layer_costs(network, batch, accelerator="DLA")`` (plan variants, see the
    engine core) with ``variant_axes == {"accelerator": soc.accelerators}``.

    Per-layer times are :func:`layer_times` (roofline calibrated to Table 5) times ``batch``
    (the paper profiles batch 1; we scale linearly). ``cycles`` count nanoseconds
    (``frequency_hz`` = 1 GHz, nominal); one tile per layer; ``bytes_moved`` is the DRAM
    traffic the contention model sees; ``energy_j`` is zero (HaX-CoNN models no energy).

    Args:
        soc: built-in SoC name (``orin``, ``xavier``, ``snapdragon-865``).
        calibrate: scale to Table 5.
        name: the device's name in profiles and configs.
    """

    def __init__(self, *, soc: str = "orin", calibrate: bool = True, name: str = "soc") -> None:
        self.soc = soc
        self.calibrate = calibrate
        self.name = name

    @property
    def spec(self) -> SocSpec:
        return get_soc(self.soc)

    @property
    def frequency_hz(self) -> float:
        return 1e9

    @property
    def memory_bandwidth_bps(self) -> float:
        return self.spec.memory_bandwidth_bps

    @property
    def variant_axes(self) -> dict[str, tuple[str, ...]]:
        return {"accelerator": self.spec.accelerators}

    def machine_layout(self) -> tuple[ResourceLayout, ...]:
        """The machine this SoC makes: one one-unit resource per accelerator, named like it and
        fixing the ``accelerator`` axis, drawing no idle power (:mod:`npusched.hardware.machines`)."""
        return tuple(
            ResourceLayout(str(a), str(a), 1, fixed={"accelerator": a}, idle_power_w=0.0)
            for a in self.spec.accelerators
        )

    def cache_key(self) -> tuple[object, ...]:
        return ("soc", self.soc, self.calibrate)

    def layer_costs(self, network: Network, batch: int, *, accelerator: str = "GPU") -> LayerCosts:
        """Per-layer costs of ``network`` at ``batch`` on one accelerator of the SoC."""
        if batch < 1:
            raise HardwareConfigError(f"batch must be >= 1, got {batch}")
        spec = self.spec
        a = spec.index(accelerator)
        lat = layer_times(network, spec, calibrate=self.calibrate)[:, a] * batch
        traffic, out_bytes = _layer_bytes(network)
        n = len(network)
        return LayerCosts(
            cycles=np.maximum(np.rint(lat * self.frequency_hz), 1).astype(np.int64),
            latency_s=lat,
            tiles=np.ones(n, dtype=np.int64),
            bytes_moved=np.rint(traffic * _traffic_factor() * batch).astype(np.int64),
            checkpoint_bytes=np.rint(out_bytes * batch).astype(np.int64),
            energy_j=np.zeros(n),
        )


def _register() -> None:
    from npusched.hardware.devices import DEVICES

    DEVICES.register("soc", SocDevice)


_register()
