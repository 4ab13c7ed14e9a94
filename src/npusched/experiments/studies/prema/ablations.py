"""One-factor ablations of the PREMA study: what moves the fairness gain and Fig. 15.

``npusched reproduce prema`` (the full run of a setup with the paper's eight DNNs) calls
:func:`ablations` and writes the result to
``ablations.json`` / ``ablations.csv``; the ``cause`` of every comparison that misses the paper
quotes these measurements. Each variant changes exactly one factor of the base setup (load 1.5,
every job length, linear tokens, 0.25 ms period, batch sizes 1/4/16, tile preemption, the
paper's uniform low/medium/high priorities, 142 GB/s checkpoint bandwidth) and runs the same
workloads (same seeds) for a small set of policies:

* the fairness / ANTT / STP gains of P-PREMA (dynamic) and NP-TOKEN over NP-FCFS;
* Fig. 15's CHECKPOINT-over-KILL percentages, averaged over the pairs P-HPF, P-SJF, P-PREMA
  (static and dynamic), as ``_checkpoint_vs_kill`` computes them for the main run;
* how often NP-TOKEN's schedule differs from NP-FCFS's (workloads with any task finishing at
  another time).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from npusched.experiments.studies.prema.paper import PAPER_JOB_RANGE_S
from npusched.experiments.studies.prema.points import (
    PolicySpec,
    PremaSetup,
    _Context,
)
from npusched.workloads.request import Request

__all__ = ["ABLATION_LABELS", "VERSION", "Variant", "ablations", "default_variants", "flat"]

#: Bumped when a variant or a measurement changes (cached ablations.json are then redone).
VERSION = 1

#: The policies every ablation variant runs.
ABLATION_LABELS: tuple[tuple[str, str, str | None], ...] = (
    ("NP-FCFS", "NP-FCFS", None),
    ("NP-TOKEN", "NP-TOKEN", None),
    ("NP-PREMA", "NP-PREMA", None),
    ("P-HPF", "P-HPF", "checkpoint"),
    ("P-HPF-kill", "P-HPF", "kill"),
    ("P-HPF-dynamic", "P-HPF", "dynamic"),
    ("P-HPF-dynamic-kill", "P-HPF", "dynamic-kill"),
    ("P-SJF", "P-SJF", "checkpoint"),
    ("P-SJF-kill", "P-SJF", "kill"),
    ("P-PREMA", "P-PREMA", "checkpoint"),
    ("P-PREMA-kill", "P-PREMA", "kill"),
    ("P-PREMA-dynamic", "P-PREMA", "dynamic"),
    ("P-PREMA-dynamic-kill", "P-PREMA", "dynamic-kill"),
)
_PAIRS = (
    ("P-HPF", "P-HPF-kill"),
    ("P-HPF-dynamic", "P-HPF-dynamic-kill"),
    ("P-SJF", "P-SJF-kill"),
    ("P-PREMA", "P-PREMA-kill"),
    ("P-PREMA-dynamic", "P-PREMA-dynamic-kill"),
)


@dataclass(frozen=True)
class Variant:
    """One factor changed from the base setup.

    Attributes:
        factor: the factor's name (``"load"``, ``"token rule"``, ...).
        value: the value in words.
        setup: changes to :class:`PremaSetup` (``load``, ``job_range_s``, ``batch_sizes``,
            ``preemption_point``).
        policy: parameters given to every token policy (``tokens``, ``period_s``).
        priorities: the priority levels workloads draw from uniformly.
        device: device parameter overrides (``checkpoint_bandwidth_bps``).
    """

    factor: str
    value: str
    setup: dict[str, Any] = field(default_factory=dict)
    policy: dict[str, Any] = field(default_factory=dict)
    priorities: tuple[int, ...] = (1, 3, 9)
    device: dict[str, Any] = field(default_factory=dict)


def default_variants() -> list[Variant]:
    """The base setup and one variant per (factor, value) studied."""
    return [
        Variant("base", "load 1.5, all lengths, linear tokens"),
        Variant("token rule", "cumulative", policy={"tokens": "cumulative"}),
        Variant("job-length range", "0.5-45 ms", setup={"job_range_s": PAPER_JOB_RANGE_S}),
        Variant("load", "0.75", setup={"load": 0.75}),
        Variant("load", "3", setup={"load": 3.0}),
        Variant("period", "0.05 ms", policy={"period_s": 0.05e-3}),
        Variant("period", "2.5 ms", policy={"period_s": 2.5e-3}),
        Variant(
            "checkpoint size", "x10 (bandwidth / 10)", device={"checkpoint_bandwidth_bps": 14.2e9}
        ),
        Variant("batch", "1 only", setup={"batch_sizes": (1,)}),
        Variant("batch", "16 only", setup={"batch_sizes": (16,)}),
        Variant("priority mix", "low and high only", priorities=(1, 9)),
        Variant("priority mix", "one level (all 9)", priorities=(9,)),
        Variant("preemption point", "layer", setup={"preemption_point": "layer"}),
    ]


class _VariantContext(_Context):
    """A :class:`_Context` whose workloads draw priorities from the variant's levels and whose
    device takes the variant's overrides."""

    def __init__(self, setup: PremaSetup, variant: Variant) -> None:
        self._variant = variant
        super().__init__(setup)
        if variant.device:
            from npusched.hardware import compile_profile, get_device
            from npusched.models import get_network

            dev = get_device(setup.device, **variant.device)
            bs = tuple(sorted(set(setup.batch_sizes)))
            self.profiles = {n: compile_profile(get_network(n), dev, bs) for n in setup.networks}
            self.bandwidth = next(iter(self.profiles.values())).memory_bandwidth_bps

    def draw(self, n: int, window_s: float, batch: int, seed: Sequence[int]) -> list[Request]:
        reqs = super().draw(n, window_s, batch, seed)
        levels = self._variant.priorities
        if levels == (1, 3, 9):
            return reqs
        # the same tasks and times; only the priorities are redrawn from the variant's levels
        rng = np.random.default_rng(np.random.SeedSequence([*seed, 77]))
        prios = rng.choice(np.asarray(levels), size=len(reqs))
        return [replace(r, priority=int(p)) for r, p in zip(reqs, prios, strict=True)]


def _spec(label: str, registry: str, mechanism: str | None, policy: dict[str, Any]) -> Any:
    """A fresh policy; the variant's token-policy parameters go to PREMA and TOKEN only."""
    pol = PolicySpec(label, registry, mechanism).build()
    if registry.endswith(("PREMA", "TOKEN")) and policy:
        pol.set_params(**policy)
    return pol


def run_variant(variant: Variant, runs: int, base: PremaSetup | None = None) -> dict[str, Any]:
    """The gains and Fig. 15 percentages of one variant of ``base`` (default
    :class:`PremaSetup`) over ``runs`` workloads per batch size (see the module docstring)."""
    from npusched.metrics import antt, fairness, stp

    setup = (base or PremaSetup.of()).replace(**variant.setup)
    ctx = _VariantContext(setup, variant)
    per: dict[str, dict[str, list[float]]] = {}
    finish: dict[str, list[np.ndarray]] = {}
    for label, registry, mech in ABLATION_LABELS:
        m: dict[str, list[float]] = {"antt": [], "stp": [], "fairness": []}
        fins: list[np.ndarray] = []
        for b in sorted(set(setup.batch_sizes)):
            for r in range(runs):
                pol = _spec(label, registry, mech, variant.policy)
                df = ctx.simulate(pol, ctx.workload(b, r), "prema")
                m["antt"].append(antt(df))
                m["stp"].append(stp(df))
                m["fairness"].append(fairness(df))
                fins.append(df.sort_values("id")["finish_s"].to_numpy(float))
        per[label] = m
        finish[label] = fins
    mean = {lb: {k: float(np.mean(v)) for k, v in m.items()} for lb, m in per.items()}
    fm = mean["NP-FCFS"]
    fc = {k: np.asarray(v) for k, v in per["NP-FCFS"].items()}

    def gains(lb: str) -> dict[str, float]:
        """Mean of the per-workload gains (the headline reading) and the gain of the means."""
        x = {k: np.asarray(v) for k, v in per[lb].items()}
        return {
            "antt_x": float(np.mean(fc["antt"] / x["antt"])),
            "fairness_x": float(np.mean(x["fairness"] / fc["fairness"])),
            "stp_x": float(np.mean(x["stp"] / fc["stp"])),
            "antt_x_of_means": fm["antt"] / mean[lb]["antt"],
            "fairness_x_of_means": mean[lb]["fairness"] / fm["fairness"],
            "stp_x_of_means": mean[lb]["stp"] / fm["stp"],
        }

    ck: dict[str, list[float]] = {"antt_pct": [], "stp_pct": [], "fairness_pct": []}
    for a, k in _PAIRS:
        ck["antt_pct"].append(100.0 * (mean[k]["antt"] / mean[a]["antt"] - 1.0))
        ck["stp_pct"].append(100.0 * (mean[a]["stp"] / mean[k]["stp"] - 1.0))
        ck["fairness_pct"].append(100.0 * (mean[a]["fairness"] / mean[k]["fairness"] - 1.0))
    differ = sum(
        not np.allclose(t, f, rtol=1e-12, atol=0.0)
        for t, f in zip(finish["NP-TOKEN"], finish["NP-FCFS"], strict=True)
    )
    return {
        "factor": variant.factor,
        "value": variant.value,
        "workloads": len(finish["NP-FCFS"]),
        "prema_dynamic": gains("P-PREMA-dynamic"),
        "np_token": gains("NP-TOKEN"),
        "np_prema": gains("NP-PREMA"),
        "fig15": {k: float(np.mean(v)) for k, v in ck.items()},
        "np_token_differs_from_fcfs": int(differ),
    }


def ablations(
    runs: int = 10,
    base: PremaSetup | None = None,
    variants: Sequence[Variant] | None = None,
    step: Callable[[str], None] | None = None,
) -> list[dict[str, Any]]:
    """Every variant of :func:`default_variants` (or ``variants``) of ``base``, in order;
    ``step`` is called with a description after each."""
    rows = []
    for v in variants or default_variants():
        rows.append(run_variant(v, runs, base))
        if step is not None:
            step(f"ablation {v.factor}: {v.value}")
    return rows


def flat(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """One flat record per variant (for ``ablations.csv``)."""
    out = []
    for r in rows:
        rec: dict[str, Any] = {
            "factor": r["factor"],
            "value": r["value"],
            "workloads": r["workloads"],
        }
        for grp in ("prema_dynamic", "np_token", "fig15"):
            for k, v in r[grp].items():
                rec[f"{grp}_{k}"] = v if math.isfinite(v) else None
        rec["np_token_differs_from_fcfs"] = r["np_token_differs_from_fcfs"]
        out.append(rec)
    return out
