"""Fluid Batching: the points to run. Fig. 7/8's serving setups, Fig. 9's SLO sweeps, Fig. 10's
NPU configurations, Table II's one-factor ablations, and the analytical scheduler-invocation
estimate (the engine runs each serving point: :mod:`.serving`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from npusched.experiments.studies.fluid.paper import PAPER
from npusched.hardware.gemm_npu import BOARDS, GemmNPU

__all__ = [
    "FIG9_SETUPS",
    "FIG10_CONFIGS",
    "SERVING_SETUPS",
    "TABLE2_ABLATIONS",
    "ServingSetup",
    "c_mapping",
    "invocation_estimate",
]


@dataclass(frozen=True)
class ServingSetup:
    """One serving experiment of Sec. IV (Fig. 7/8): model, board, p99 SLO (seconds) and the
    Poisson arrival rates (samples per second)."""

    model: str
    board: str
    slo_s: float
    rates: tuple[float, ...]


SERVING_SETUPS: tuple[ServingSetup, ...] = (
    ServingSetup("resnet-50", "zc706", 0.400, (5, 10, 15, 20, 25)),
    ServingSetup("inception-v3", "zcu104", 0.200, (20, 30, 40, 50, 60)),
)

#: Fig. 9: (model, board, arrival rate, SLOs swept) - the paper's 15 and 35 samples/s.
FIG9_SETUPS: tuple[tuple[str, str, float, tuple[float, ...]], ...] = (
    ("resnet-50", "zc706", 15.0, (0.1, 0.15, 0.2, 0.3, 0.4, 0.5)),
    ("inception-v3", "zcu104", 35.0, (0.05, 0.075, 0.1, 0.15, 0.2, 0.3)),
)

#: Fig. 10 configurations: label -> (strategy, stackable, DSE weights over b = 1..8).
FIG10_CONFIGS: dict[str, tuple[str, bool, str]] = {
    "SERIAL": ("serial", False, "b8"),
    "FC": ("fc", False, "b8"),
    "R": ("r", False, "b8"),
    "P": ("p", False, "b8"),
    "Fluid": ("fluid", False, "all"),
    "Fluid+Stackable": ("fluid", True, "all"),
}


def invocation_estimate(model: str) -> dict[str, float]:
    """Scheduler invocations per sample, analytically, for batches of one sample without
    backfilling (an engine-independent estimate of Sec. III-B's 16.6x; the engine's count is the
    measured one).

    FluidB decides at every intermediate exit a sample reaches: ``min(e + 1, N_exits - 1)`` for a
    sample leaving at exit ``e``. LazyBatching decides after every NPU layer (GEMM layer; the
    fused vector layers are not separate NPU layers) it passes, except the network's last. Both
    are averaged over the paper's exit rates.
    """
    from npusched.models.exits import early_exit_network, exit_rates

    net = early_exit_network(model)
    rates = exit_rates(net)
    gemm = np.cumsum(net.columns["is_gemm"])
    n_gemm = int(gemm[-1])
    n = len(net.exits)
    fluid = sum(r * min(e + 1, n - 1) for e, r in enumerate(rates))
    lazy = sum(
        r * min(int(gemm[ex.after]), n_gemm - 1) for r, ex in zip(rates, net.exits, strict=True)
    )
    return {"fluidb": float(fluid), "lazybatching": float(lazy), "ratio": float(lazy / fluid)}


def _weights(kind: str, b_max: int) -> np.ndarray[Any, np.dtype[np.float64]]:
    w = np.zeros(b_max)
    if kind == "b8":
        w[-1] = 1.0
    else:
        w[:] = 1.0
    return w


def _device(design: Any, board: str, strategy: str, stackable: bool) -> GemmNPU:
    b = BOARDS[board]
    return GemmNPU(
        tr=design.tr,
        tp=design.tp,
        tc=design.tc,
        frequency_hz=b.frequency_hz,
        memory_bandwidth_bps=b.bandwidth_bps,
        strategy=strategy,
        stackable=stackable,
    )


#: Table II's one-factor ablations (seed 0, every Table II row): name -> (what changes,
#: ``run_point`` keyword arguments). Each changes one factor of the setup against the default.
TABLE2_ABLATIONS: dict[str, tuple[str, dict[str, Any]]] = {
    "lazy_invocation_0us": ("LazyBatching's per-layer invocation cost 0 us", {"lazy": 0.0}),
    "lazy_invocation_200us": ("LazyBatching's per-layer invocation cost 200 us", {"lazy": 200e-6}),
    "arrival_cv2": (
        "arrival process: gamma inter-arrivals, coefficient of variation 2 (Poisson: 1)",
        {"arrival_cv": 2.0},
    ),
    "service_x2": (
        "service times: every layer 2x longer (the paper's absolute latencies are ~2x ours)",
        {"service_scale": 2.0},
    ),
    "violation_at_half_slo": (
        "SLO definition: violations counted against half the SLO (policies keep the SLO)",
        {"violation_slo_scale": 0.5},
    ),
}


def table2_ablations(
    base: Sequence[Any], n: int, designs: str, lazy_invocation_s: float | None
) -> list[dict[str, Any]]:
    """Table II's rows (seed 0) under each of :data:`TABLE2_ABLATIONS`, one factor at a time,
    beside the default (``variant = "default"``)."""
    from npusched.experiments.studies.fluid.serving import run_point

    def row(variant: str, what: str, lz: Any, fb: Any) -> dict[str, Any]:
        return {
            "variant": variant,
            "change": what,
            "model": lz.model,
            "board": lz.board,
            "rate": lz.rate,
            "slo_s": lz.slo_s,
            "lazy_avg_latency_s": lz.avg_latency_s,
            "lazy_violation_rate": lz.violation_rate,
            "fluidb_avg_latency_s": fb.avg_latency_s,
            "fluidb_violation_rate": fb.violation_rate,
            "avg_latency_gain": lz.avg_latency_s / fb.avg_latency_s,
        }

    seed0 = {(p.model, p.board, p.policy): p for p in base if p.seed == 0}
    rows = []
    for r in PAPER["table2"]:
        m, b = str(r[0]), str(r[1])
        rows.append(
            row("default", "none", seed0[(m, b, "LazyBatching")], seed0[(m, b, "FluidB")])
        )
    for variant, (what, kw) in TABLE2_ABLATIONS.items():
        for r in PAPER["table2"]:
            m, b, rate, slo = str(r[0]), str(r[1]), float(r[2]), float(r[3])
            pts = {}
            for pol in ("LazyBatching", "FluidB"):
                if "lazy" in kw and pol == "FluidB":
                    pts[pol] = seed0[(m, b, pol)]
                    continue
                lazy = kw.get("lazy", lazy_invocation_s)
                v_slo = slo * kw["violation_slo_scale"] if "violation_slo_scale" in kw else None
                pts[pol] = run_point(
                    m,
                    b,
                    pol,
                    rate,
                    slo,
                    0,
                    n,
                    designs,
                    lazy,
                    arrival_cv=kw.get("arrival_cv", 1.0),
                    service_scale=kw.get("service_scale", 1.0),
                    violation_slo_s=v_slo,
                )
            rows.append(row(variant, what, pts["LazyBatching"], pts["FluidB"]))
    return rows


def c_mapping(net: Any, tc: int) -> float:
    """Fraction of the MAC slots along ``C`` a ``T_C``-wide array uses over a network's GEMM
    layers at batch 1 (each layer's ``C`` padded to a multiple of ``T_C``)."""
    layers = [x for x in net.layers if x.is_gemm]
    used = sum(x.m * x.k * x.n * x.groups for x in layers)
    slots = sum(x.m * x.k * (-(-x.n // tc) * tc) * x.groups for x in layers)
    return float(used / slots)
