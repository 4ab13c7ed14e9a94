"""What ``npusched profile``, ``models show|import`` and ``models exits`` print, as data.

Each function returns plain rows (lists of dicts) and titles; the CLI only renders them.

* :func:`load_network` - a zoo name, an ``.onnx`` file or a SCALE-Sim topology ``.csv``.
* :func:`layer_rows` - a network's layer table (shapes, MACs, elements).
* :func:`profile_summary` - per-layer cycles and time on a device, and the totals (isolated
  latency in ms, tiles, MB moved, energy in mJ, utilisation in % of peak MACs).
* :func:`compute_only_summary` - SCALE-Sim's compute-report convention (compute cycles only).
* :func:`exit_rows` - a network's early exits, with the device's exit latency table in ms.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from npusched.errors import ConfigError
from npusched.models.ir import Network

__all__ = [
    "ComputeOnlySummary",
    "ProfileSummary",
    "compute_only_summary",
    "exit_rows",
    "layer_rows",
    "load_network",
    "profile_summary",
]

Row = dict[str, object]


def load_network(
    spec: str | os.PathLike[str], name: str | None = None, *, zoo: bool = True
) -> Network:
    """A network from a zoo name, an ONNX file (``.onnx``) or a SCALE-Sim topology (``.csv``);
    ``zoo=False``: every name but a ``.csv`` is an ONNX file (``models import``)."""
    s = str(spec)
    if s.lower().endswith(".onnx") or (not zoo and not s.lower().endswith(".csv")):
        from npusched.models import from_onnx

        return from_onnx(s, name=name)
    if s.lower().endswith(".csv"):
        from npusched.models.scalesim import from_scalesim

        return from_scalesim(s, name=name)
    from npusched.models.zoo import get_network

    return get_network(s)


def layer_rows(net: Network) -> list[Row]:
    """One row per layer: index, name, kind, GEMM shape (M, K, N), groups, MACs, input /
    output / weight elements and the repeat count of recurrent layers."""
    return [
        {
            "idx": i,
            "name": ly.name,
            "kind": str(ly.kind),
            "M": ly.m,
            "K": ly.k,
            "N": ly.n,
            "groups": ly.groups,
            "macs": ly.macs,
            "in_elems": ly.input_elems,
            "out_elems": ly.output_elems,
            "weights": ly.weight_elems,
            "repeat": ly.repeat or "",
        }
        for i, ly in enumerate(net.layers)
    ]


@dataclass
class ProfileSummary:
    """``npusched profile``'s data: totals per batch size and per-layer rows (with a
    ``batch`` column)."""

    network: str
    device: str
    device_params: dict[str, Any]
    batches: list[int]
    totals: list[Row] = field(default_factory=list)
    layers: list[Row] = field(default_factory=list)

    def to_json(self, *, layers: bool = True) -> dict[str, object]:
        """The JSON document: device, its parameters, totals and (with ``layers``) the rows."""
        doc: dict[str, object] = {
            "network": self.network,
            "device": self.device,
            "device_params": self.device_params,
            "totals": self.totals,
        }
        if layers:
            doc["layers"] = self.layers
        return doc

    def layers_of(self, batch: int) -> list[Row]:
        """The per-layer rows of one batch size, without the ``batch`` column."""
        return [
            {k: v for k, v in row.items() if k != "batch"}
            for row in self.layers
            if row["batch"] == batch
        ]


def _check_batches(batches: list[int] | None) -> list[int]:
    bad = [b for b in batches or [] if b < 1]
    if bad:
        raise ConfigError(f"--batch must be an integer >= 1, got {bad[0]}")
    return sorted(set(batches or [1]))


def profile_summary(
    network: str | Network,
    device: str = "prema-npu",
    batches: list[int] | None = None,
    *,
    subarrays: int | None = None,
) -> ProfileSummary:
    """Per-layer cycles and time of ``network`` on ``device`` and the totals.

    Args:
        network: a :class:`Network` or what :func:`load_network` takes.
        device: a registered device name.
        batches: batch sizes (default ``[1]``; each >= 1).
        subarrays: subarrays allocated on a device with a ``subarrays`` axis (default: all).
    """
    from npusched.hardware import get_device
    from npusched.hardware.profile import compile_profile

    bs = _check_batches(batches)
    net = network if isinstance(network, Network) else load_network(network)
    dev: Any = get_device(device)
    axes = getattr(dev, "variant_axes", {})
    if subarrays is None and "subarrays" in axes:
        subarrays = max(axes["subarrays"])  # the whole array unless asked otherwise
    if subarrays is not None:
        if "subarrays" not in axes:
            raise ConfigError(f"--subarrays: device {device!r} has no subarrays axis")
        if subarrays not in axes["subarrays"]:
            allowed = axes["subarrays"]
            raise ConfigError(
                f"--subarrays must be in {allowed[0]}..{allowed[-1]} for {device!r}, "
                f"got {subarrays}"
            )
        dev = dev.variant(subarrays=subarrays)
    prof = compile_profile(net, dev, bs)
    peak = getattr(dev, "peak_macs_per_s", None)
    out = ProfileSummary(net.name, dev.name, getattr(dev, "get_params", dict)(), bs)
    for b in bs:
        r = prof.row(b)
        plan = prof.plan(b)
        busy_s = plan.total_s
        total: Row = {
            "network": net.name,
            "device": dev.name,
            "batch": b,
            "cycles": int(prof.cycles[r, plan.layer].sum()),
            "isolated_ms": round(busy_s * 1e3, 4),
            "tiles": int(plan.tiles.sum()),
            "mbytes_moved": round(float(prof.bytes_moved[r, plan.layer].sum()) / 1e6, 3),
            "energy_mj": round(prof.energy(b) * 1e3, 4),
        }
        if isinstance(peak, float) and busy_s > 0:
            macs = net.total_macs() * b
            total["util_pct"] = round(100.0 * macs / (peak * busy_s), 2)
        out.totals.append(total)
        out.layers.extend(
            {
                "batch": b,
                "idx": i,
                "layer": ly.name,
                "kind": str(ly.kind),
                "cycles": int(prof.cycles[r, i]),
                "time_us": round(float(prof.latency_s[r, i]) * 1e6, 3),
                "tiles": int(prof.tiles[r, i]),
                "bytes_moved": int(prof.bytes_moved[r, i]),
                "ckpt_bytes": int(prof.checkpoint_bytes[r, i]),
            }
            for i, ly in enumerate(net.layers)
        )
    return out


@dataclass
class ComputeOnlySummary:
    """``profile --compute-only``'s data: compute cycles per layer and in total."""

    network: str
    rows: int
    cols: int
    layers: list[Row]
    total_compute_cycles: int

    def to_json(self) -> dict[str, object]:
        return {
            "network": self.network,
            "array": f"{self.rows}x{self.cols} weight-stationary",
            "layers": self.layers,
            "total_compute_cycles": self.total_compute_cycles,
        }


def compute_only_summary(
    network: str | Network, device: str = "prema-npu", batches: list[int] | None = None
) -> ComputeOnlySummary:
    """Per-layer compute cycles (device cycles) of ``network`` on ``device``'s systolic array
    without memory stalls or accumulator limit (SCALE-Sim's compute report convention), batch
    1; one row per recurrent layer (one time step)."""
    from npusched.hardware import get_device
    from npusched.hardware.systolic import SystolicArray

    bs = _check_batches(batches)
    net = network if isinstance(network, Network) else load_network(network)
    dev = get_device(device)
    if not isinstance(dev, SystolicArray):
        raise ConfigError(
            f"--compute-only: device {dev.name!r} is not a systolic array; allowed: prema-npu "
            "or another SystolicArray device"
        )
    if bs != [1]:
        raise ConfigError(
            f"--compute-only: SCALE-Sim's compute report has no batch axis, got --batch "
            f"{bs[-1] if bs[0] == 1 else bs[0]}; allowed: 1 (or no --batch)"
        )
    array = SystolicArray(**{**dev.get_params(), "acc_depth": None, "memory_stalls": False})
    cycles = array.layer_costs(net, 1).cycles
    rows: list[Row] = [
        {"name": ly.name, "compute_cycles": int(c)}
        for ly, c in zip(net.layers, cycles.tolist(), strict=True)
    ]
    return ComputeOnlySummary(net.name, array.rows, array.cols, rows, int(cycles.sum()))


def exit_rows(
    name: str,
    n_exits: int = 4,
    rates: str | None = None,
    device: str | None = None,
    b_max: int = 8,
) -> tuple[Network, list[Row]]:
    """Zoo network ``name`` with early exits (equidistant in FLOPs) and one row per exit: the
    layer it follows, its FLOPs fraction, rate, head MACs and, with ``device``, its latency in
    ms at batch sizes 1..``b_max``."""
    import numpy as np

    from npusched.models.exits import early_exit_network

    net = early_exit_network(name, rates, n_exits)
    cum = np.cumsum(net.columns["macs"]) / max(net.macs, 1)
    lut = None
    if device is not None:
        from npusched.hardware import get_device

        exit_lut = getattr(get_device(device), "exit_lut", None)
        if exit_lut is None:
            raise ConfigError(f"device {device!r} has no exit latency table (try zc706-npu)")
        lut = exit_lut(net, b_max)
    rows: list[Row] = []
    for i, ex in enumerate(net.exits):
        row: Row = {
            "exit": ex.name,
            "after": net.layers[ex.after].name,
            "flops_frac": round(float(cum[ex.after]), 3),
            "rate": ex.rate,
            "head_macs": sum(x.macs for x in ex.layers),
        }
        if lut is not None:
            row.update(
                {f"B={b}": round(float(lut[i, b - 1]) * 1e3, 2) for b in range(1, b_max + 1)}
            )
        rows.append(row)
    return net, rows
