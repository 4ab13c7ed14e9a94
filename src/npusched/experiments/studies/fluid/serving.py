"""Fluid Batching's serving experiments on the engine: Fig. 7/8, Fig. 9, Table II, invocations.

Methodology (Sec. IV), with the choices the paper leaves open stated:

* **Model and NPU.** The 4-exit model (:func:`npusched.models.exits.early_exit_network`, the
  paper's exit rates) with its heads in the plan (:func:`~npusched.models.exits.inline_heads`).
  The NPU's batching follows the policy: SERIAL - serial; FC-AdaptB - FC-only; R-AdaptB and
  LazyBatching - R-batching; FluidB - Fluid Batching with Stackable PEs. ``designs="table1"``
  runs every policy on Table I's design point for the (model, board), so that only the
  batching differs; ``designs="dse"`` (default) gives each its own design from our DSE, as the
  paper does for its baselines (Sec. IV: at B = 8; FluidB with ``w_b = 1``).
* **Workload.** Poisson arrivals at the given rate (samples/s); ``n`` samples per point (the
  paper gives no duration); each sample's exit drawn from the exit rates; the same arrivals and
  exits for every policy at a given (rate, seed), drawn from the stream
  ``SeedSequence([*seed_stream(rate), seed])`` exactly as the suite as a sweep draws them
  (:func:`serving_requests`); 3 seeds, averaged (quick: 1).
* **Metrics** per (model, policy, rate): ``avg_latency_s``, ``p99_latency_s``,
  ``violation_rate`` (fraction of samples with latency above the p99 SLO), ``processing_rate``
  (finished samples / (last finish - first arrival)), ``utilisation`` (the NPU's efficiency while
  busy: operations the samples executed, 2 per MAC of every layer up to their exit, over peak
  operations in the time the NPU executed; the paper's sense, Sec. IV: "SERIAL yields the lowest
  latency, but also the lowest utilisation" at low traffic, and FluidB "reaching close to 95%"
  at high traffic, neither possible for operations over the whole run), ``run_utilisation``
  (the same operations over peak operations in the whole run, first arrival to last finish),
  ``invocations_per_sample`` (scheduler decisions / samples).
* **Fig. 9**: violation rate against the SLO at 15 samples/s (ResNet-50, ZC706) and 35 samples/s
  (Inception-v3, ZCU104); the SLO also sets the AdaptB timeouts and the FluidB/LazyBatching
  criterion. **Table II**: FluidB vs LazyBatching at the paper's (board, rate, SLO) rows.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from npusched.errors import ConfigError
from npusched.hardware import compile_profile
from npusched.hardware.gemm_dse import PAPER_TABLE1, explore
from npusched.hardware.gemm_npu import BOARDS, Design, GemmNPU
from npusched.hardware.profile import Profile
from npusched.models import get_network
from npusched.models.exits import early_exit_network, exit_rates, inline_heads, sample_exits
from npusched.models.ir import Network
from npusched.policies.batching.policies import (
    AdaptBPolicy,
    FluidBPolicy,
    LazyBatchingPolicy,
    SerialPolicy,
)
from npusched.sim import Simulator
from npusched.workloads.request import Request

__all__ = [
    "POLICY_NAMES",
    "ServingPoint",
    "policy_for",
    "run_point",
    "seed_stream",
    "serving_requests",
]

#: The policies of Fig. 7-9, in the paper's legend order.
POLICY_NAMES: tuple[str, ...] = (
    "SERIAL",
    "FC-AdaptB-S",
    "FC-AdaptB-M",
    "FC-AdaptB-L",
    "R-AdaptB-S",
    "R-AdaptB-M",
    "R-AdaptB-L",
    "LazyBatching",
    "FluidB",
)


def policy_for(
    name: str, slo_s: float, lazy_invocation_s: float | None = None
) -> tuple[Any, str, bool]:
    """``(policy, NPU strategy, stackable)`` for a policy name of :data:`POLICY_NAMES`
    (``lazy_invocation_s``: LazyBatching's per-layer invocation cost in seconds; ``None``: its
    default)."""
    if name == "SERIAL":
        return SerialPolicy(), "serial", False
    if name == "FluidB":
        return FluidBPolicy(slo_s=slo_s), "fluid", True
    if name == "LazyBatching":
        if lazy_invocation_s is None:
            return LazyBatchingPolicy(slo_s=slo_s), "r", False
        return LazyBatchingPolicy(slo_s=slo_s, invocation_s=lazy_invocation_s), "r", False
    kind, _, size = name.split("-")
    return AdaptBPolicy(slo_s=slo_s, timeout=size, name=name), kind.lower(), False


@dataclass(frozen=True)
class ServingPoint:
    """One (model, board, policy, rate, SLO, seed) run's metrics (seconds, samples/s)."""

    model: str
    board: str
    policy: str
    rate: float
    slo_s: float
    seed: int
    avg_latency_s: float
    p99_latency_s: float
    violation_rate: float
    processing_rate: float
    utilisation: float
    invocations_per_sample: float
    preemptions: int
    run_utilisation: float = float("nan")


class _Model:
    """A model's early-exit network, its inlined form and compiled profiles per NPU strategy."""

    def __init__(self, model: str, board: str) -> None:
        self.model, self.board = model, board
        self.ee = early_exit_network(model)
        self.flat: Network = inline_heads(self.ee)
        self.rates = exit_rates(self.ee)
        self._profiles: dict[tuple[str, bool, str, float], Profile] = {}
        self._dse: dict[tuple[str, bool], Design] = {}
        cum_macs = np.cumsum(self.flat.columns["macs"])
        n = len(self.flat.layers)
        # MACs a sample executes when it leaves at exit e (its head included)
        self.macs_at_exit = np.array([cum_macs[min(ex.after, n - 1)] for ex in self.flat.exits])
        self.frequency_hz = BOARDS[board].frequency_hz

    def design(self, strategy: str, stackable: bool, designs: str) -> Design:
        """The NPU design a policy runs on (see the module docstring)."""
        if designs == "table1":
            return PAPER_TABLE1[(self.model, self.board)]
        if designs != "dse":
            raise ConfigError(f"designs={designs!r}; allowed: table1, dse")
        key = (strategy, stackable)
        d = self._dse.get(key)
        if d is None:
            w = [1.0] * 8 if strategy == "fluid" else [0.0] * 7 + [1.0]
            d = self._dse[key] = explore(
                get_network(self.model),
                self.board,
                strategy=strategy,
                stackable=stackable,
                weights=w,
            ).design
        return d

    def profile(
        self, strategy: str, stackable: bool, designs: str = "dse", service_scale: float = 1.0
    ) -> Profile:
        """The compiled profile; ``service_scale`` stretches every layer time by that factor
        (the board's clock and memory bandwidth divided by it)."""
        key = (strategy, stackable, designs, float(service_scale))
        prof = self._profiles.get(key)
        if prof is None:
            d = self.design(strategy, stackable, designs)
            b = BOARDS[self.board]
            dev = GemmNPU(
                tr=d.tr,
                tp=d.tp,
                tc=d.tc,
                frequency_hz=b.frequency_hz / service_scale,
                memory_bandwidth_bps=b.bandwidth_bps / service_scale,
                strategy=strategy,
                stackable=stackable,
                name=f"{self.board}-{strategy}",
            )
            prof = self._profiles[key] = compile_profile(self.flat, dev, range(1, 9))
        return prof


_MODELS: dict[tuple[str, str], _Model] = {}


def _model(model: str, board: str) -> _Model:
    m = _MODELS.get((model, board))
    if m is None:
        m = _MODELS[(model, board)] = _Model(model, board)
    return m


def seed_stream(rate: float) -> list[int]:
    """The random stream prefix of a serving point's samples: its rate in milli-samples/s.
    Seed ``i`` draws from ``SeedSequence([*seed_stream(rate), i])``
    (:func:`npusched.workloads.stream_rng`): the same samples for every model, board and policy
    at a (rate, seed), independent ones across rates and seeds. The suite as a sweep sets it as
    ``workload.seed_stream`` with seeds ``i``, so both routes draw the same samples."""
    return [round(float(rate) * 1000)]


def serving_requests(
    m: _Model, rate: float, slo_s: float, seed: int, n_samples: int, *, arrival_cv: float = 1.0
) -> list[Request]:
    """One serving point's samples (arrivals in seconds, ``rate`` in samples/s, ``slo_s`` in
    seconds): drawn as the sweep's ``kind = "poisson"`` workload with ``seed_stream`` draws
    them (:func:`~npusched.workloads.poisson_workload` from part 0 of the stream, each sample's
    exit from part 1, as :func:`npusched.experiments.runner.with_exits`). ``arrival_cv != 1``
    (the Table II ablation, no sweep counterpart): gamma inter-arrival gaps with the same mean,
    drawn from part 0, and no other field drawn."""
    from dataclasses import replace

    from npusched.workloads import poisson_workload, stream_rng

    prefix = seed_stream(rate)
    rng = stream_rng(prefix, seed)
    if arrival_cv == 1.0:
        reqs = poisson_workload(
            rate, models=[m.flat.name], n_requests=n_samples, qos={m.flat.name: slo_s},
            random_state=rng,
        )
    else:
        shape = 1.0 / arrival_cv**2
        arrivals = np.cumsum(rng.gamma(shape, 1.0 / (rate * shape), n_samples))
        reqs = [Request(i, float(arrivals[i]), m.flat.name, slo_s=slo_s) for i in range(n_samples)]
    exits = sample_exits(m.rates, n_samples, random_state=stream_rng(prefix, seed, part=1))
    return [replace(r, exit=int(k)) for r, k in zip(reqs, exits.tolist(), strict=True)]


def run_point(
    model: str,
    board: str,
    policy: str,
    rate: float,
    slo_s: float,
    seed: int,
    n_samples: int,
    designs: str = "dse",
    lazy_invocation_s: float | None = None,
    *,
    arrival_cv: float = 1.0,
    service_scale: float = 1.0,
    violation_slo_s: float | None = None,
) -> ServingPoint:
    """Simulate one point on the engine and return its metrics (``designs``: see the module
    docstring; ``lazy_invocation_s``: see :func:`policy_for`).

    The one-factor ablations of the Table II analysis: ``arrival_cv`` the coefficient of
    variation of the inter-arrival times (1: Poisson; otherwise gamma with the same mean);
    ``service_scale`` stretches every layer time by that factor; ``violation_slo_s`` the latency
    (seconds) a violation is counted against (default the policies' ``slo_s``)."""
    if not (arrival_cv > 0 and service_scale > 0):
        raise ConfigError(
            f"run_point: arrival_cv={arrival_cv!r}, service_scale={service_scale!r}; must be > 0"
        )
    m = _model(model, board)
    reqs = serving_requests(m, rate, slo_s, seed, n_samples, arrival_cv=arrival_cv)
    arrivals = np.array([r.arrival_s for r in reqs])
    exits = np.array([r.exit for r in reqs], dtype=np.int64)
    pol, strategy, stackable = policy_for(policy, slo_s, lazy_invocation_s)
    prof = m.profile(strategy, stackable, designs, service_scale)
    res = Simulator({m.flat.name: prof}, pol, preemption_point="layer").run(reqs)
    peak_ops = 2.0 * m.design(strategy, stackable, designs).dsp() * m.frequency_hz / service_scale
    v_slo = slo_s if violation_slo_s is None else violation_slo_s
    lat = res.columns["latency_s"]
    fin = res.columns["finish_s"]
    span = float(np.nanmax(fin) - arrivals[0])
    ops = 2.0 * float(m.macs_at_exit[exits].sum())
    return ServingPoint(
        model=model,
        board=board,
        policy=policy,
        rate=float(rate),
        slo_s=float(slo_s),
        seed=int(seed),
        avg_latency_s=float(np.mean(lat)),
        p99_latency_s=float(np.percentile(lat, 99)),
        violation_rate=float(np.mean(lat > v_slo)),
        processing_rate=float(n_samples / span),
        utilisation=float(ops / (peak_ops * res.busy_s)),
        invocations_per_sample=float(pol.invocations_ / n_samples),
        preemptions=int(pol.preemptions_),
        run_utilisation=float(ops / (peak_ops * span)),
    )


def run_points(
    points: Sequence[tuple[str, str, str, float, float, int]],
    n_samples: int,
    step: Callable[[str], None] | None = None,
    designs: str = "dse",
    lazy_invocation_s: float | None = None,
) -> list[ServingPoint]:
    """Run ``(model, board, policy, rate, slo_s, seed)`` points in order."""
    out = []
    for model, board, policy, rate, slo, seed in points:
        out.append(
            run_point(
                model, board, policy, rate, slo, seed, n_samples, designs, lazy_invocation_s
            )
        )
        if step is not None:
            step(f"{model} {policy} {rate:g}/s")
    return out
