"""``npusched compare``: one workload, one compute budget, three schedulers side by side.

None of the papers ran this: the same Planaria Table I workload (scenario ``A``, ``B`` or ``C``
at a QoS level, Poisson arrivals) on the same 128x128 MAC budget, scheduled

* ``NP-FCFS``: non-preemptive first-come-first-served on the monolithic 128x128 array;
* ``PREMA``: P-PREMA (checkpoint preemption, PREMA's predictor) on the monolithic array
  (:func:`npusched.experiments.reproduce.planaria.prema_simulate`);
* ``Planaria``: :class:`~npusched.policies.spatial.planaria.PlanariaPolicy` on the 16-subarray
  fission array, the same 128x128 MACs split into 32x32 pods
  (:func:`npusched.experiments.reproduce.planaria.planaria_simulate`).

Each system runs the identical request lists: ``instances`` instances per load, the load being
a multiple of :func:`~npusched.experiments.reproduce.planaria.reference_rate` (offered load on
the monolithic array). Reported per system and load, as mean over instances: ANTT, STP,
fairness (PREMA's definitions, against each system's own isolated latency: the monolithic
array's for NP-FCFS and PREMA, all 16 subarrays' for Planaria), SLA rate (fraction of
instances meeting Planaria's SLA: 99% of vision / 97% of GNMT requests within QoS), p99 latency
(seconds) and energy per instance (joules). Energy for NP-FCFS uses the same per-layer energy
model as PREMA's baseline (no checkpoints, so no DRAM save/restore traffic).

A DFS power cap (the issue's fourth system) is not included yet: the monolithic array's
profile has no frequency axis in this comparison (see the report for what is missing).

Outputs in ``OUT``: ``compare.csv`` (one row per system, load and instance), ``summary.json``
(means per system and load), ``compare.png`` (each metric normalised to NP-FCFS at each load;
the SLA rate as it is) and ``report.md`` with the table and what it shows.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from npusched._io import atomic_write_text
from npusched.errors import ConfigError

__all__ = ["SYSTEMS", "compare"]

#: The systems compared, in report order.
SYSTEMS = ("NP-FCFS", "PREMA", "Planaria")

Simulate = Callable[[Sequence[Any]], pd.DataFrame]


def _fcfs_simulate(networks: Sequence[str]) -> Simulate:
    """NP-FCFS on the monolithic array, energy as in ``prema_simulate`` (layers only)."""
    from npusched.hardware.energy import EnergyModel, systolic_energy_j
    from npusched.hardware.profile import compile_profile
    from npusched.hardware.systolic import SystolicArray
    from npusched.models.zoo import get_network
    from npusched.policies import POLICIES
    from npusched.sim.engine import Simulator

    model = EnergyModel()
    sa = SystolicArray()
    nets = {n: get_network(n) for n in networks}
    profiles = {n: compile_profile(net, sa) for n, net in nets.items()}
    layer_energy = {n: systolic_energy_j(sa, net, 1, model) for n, net in nets.items()}

    def simulate(requests: Sequence[Any]) -> pd.DataFrame:
        sim = Simulator(profiles, POLICIES.create("NP-FCFS"))
        df = sim.run(requests).to_frame()
        e = []
        for name, a, b in zip(df["network"], df["seq_in"], df["seq_out"], strict=True):
            plan = profiles[name].plan(1, None if a < 0 else int(a), None if b < 0 else int(b))
            e.append(float(layer_energy[name][plan.layer].sum()))
        return df.assign(energy_j=np.asarray(e, dtype=np.float64))

    return simulate


def _metrics(df: pd.DataFrame) -> dict[str, float]:
    from npusched.metrics import antt, fairness, sla_met, stp
    from npusched.workloads.planaria import SLA_FRACTION

    lat = df["latency_s"].to_numpy(dtype=np.float64)
    return {
        "antt": antt(df),
        "stp": stp(df),
        "fairness": fairness(df),
        "sla_met": float(sla_met(df, SLA_FRACTION)),
        "p99_latency_s": float(np.percentile(lat, 99)),
        "energy_j": float(df["energy_j"].sum()),
    }


def compare(
    out: str | Path,
    *,
    scenario: str = "C",
    qos: str = "S",
    loads: Sequence[float] = (0.25, 0.5),
    instances: int = 3,
    n_requests: int = 200,
    seed: int = 0,
) -> pd.DataFrame:
    """Run the comparison and write its files (see the module docstring). Returns the means
    per system and load.

    Args:
        out: output directory (created).
        scenario: Planaria Table I workload, ``A``, ``B`` or ``C``.
        qos: QoS level (Planaria Table I: ``S`` soft, ``M`` medium, ``H`` hard).
        loads: offered loads on the monolithic array (multiples of the reference rate).
        instances: workload instances per load (common to all systems).
        n_requests: requests per instance.
        seed: base seed of the instances.
    """
    from npusched.experiments.reproduce.planaria import (
        MultiTenantSetup,
        planaria_simulate,
        prema_simulate,
        reference_rate,
        workload_instance,
    )
    from npusched.workloads.planaria import QOS_LEVELS, WORKLOADS

    if scenario not in WORKLOADS:
        raise ConfigError(f"--scenario {scenario!r}; allowed: {', '.join(WORKLOADS)}")
    if qos not in QOS_LEVELS:
        raise ConfigError(f"--qos {qos!r}; allowed: {', '.join(QOS_LEVELS)}")
    if not loads or any(not (x > 0) for x in loads):
        raise ConfigError(f"--load must be > 0, got {list(loads)}")
    if instances < 1 or n_requests < 1:
        raise ConfigError("--instances and --requests must be >= 1")
    nets = WORKLOADS[scenario]
    setup = MultiTenantSetup(n_requests=n_requests, instances=instances, seed=seed)
    systems: dict[str, Simulate] = {
        "NP-FCFS": _fcfs_simulate(nets),
        "PREMA": prema_simulate(nets),
        "Planaria": planaria_simulate(nets),
    }
    rows = []
    for load in loads:
        rate = reference_rate(scenario, load)
        for i in range(instances):
            reqs = workload_instance(setup, scenario, qos, rate, i)
            for name, sim in systems.items():
                rows.append(
                    {"system": name, "load": load, "rate_per_s": rate, "instance": i,
                     **_metrics(sim(reqs))}
                )  # fmt: skip
    df = pd.DataFrame(rows)
    d = Path(out)
    d.mkdir(parents=True, exist_ok=True)
    atomic_write_text(d / "compare.csv", df.to_csv(index=False))
    cols = ["antt", "stp", "fairness", "sla_met", "p99_latency_s", "energy_j"]
    means = df.groupby(["load", "system"], sort=False)[cols].mean().reset_index()
    summary = {
        "scenario": scenario,
        "qos": qos,
        "instances": instances,
        "n_requests": n_requests,
        "seed": seed,
        "means": means.to_dict(orient="records"),
    }
    atomic_write_text(d / "summary.json", json.dumps(summary, indent=2, sort_keys=True) + "\n")
    _plot(means, cols, d / "compare.png")
    atomic_write_text(d / "report.md", _report(means, cols, scenario, qos, instances, n_requests))
    return means


def _plot(means: pd.DataFrame, cols: Sequence[str], path: Path) -> None:
    from npusched.report.plots import panels

    cats = [f"load {x:g}" for x in means["load"].unique()]
    metrics: dict[str, dict[str, list[float]]] = {}
    for c in cols:
        if c == "sla_met":  # a fraction in [0, 1]: NP-FCFS may meet it in no instance
            metrics["SLA rate"] = {
                s: means[means["system"] == s][c].to_numpy(dtype=np.float64).tolist()
                for s in SYSTEMS
            }
            continue
        base = means[means["system"] == "NP-FCFS"][c].to_numpy(dtype=np.float64)
        with np.errstate(divide="ignore", invalid="ignore"):
            metrics[f"{c} / NP-FCFS"] = {
                s: (means[means["system"] == s][c].to_numpy(dtype=np.float64) / base).tolist()
                for s in SYSTEMS
            }
    panels(path, cats, metrics, title="Same workload, same 128x128 MACs", reference=1.0)


def _findings(means: pd.DataFrame) -> list[str]:
    """One bullet per load, computed from the means: ANTT and p99 of each system against
    NP-FCFS, the SLA rates and Planaria's energy against PREMA's."""
    out = []
    for load, g in means.groupby("load", sort=False):
        m: dict[str, dict[str, float]] = {
            str(r["system"]): {str(k): float(v) for k, v in r.items() if k != "system"}
            for r in g.to_dict(orient="records")
        }

        def ratio(metric: str, a: str, b: str, m: dict[str, dict[str, float]] = m) -> str:
            x, y = m[a][metric], m[b][metric]
            return f"{x / y:.2f}x" if y else "n/a"

        out.append(
            f"- load {load:g}: ANTT of PREMA {ratio('antt', 'PREMA', 'NP-FCFS')} and Planaria "
            f"{ratio('antt', 'Planaria', 'NP-FCFS')} NP-FCFS's (Planaria/PREMA "
            f"{ratio('antt', 'Planaria', 'PREMA')}); p99 latency of Planaria "
            f"{ratio('p99_latency_s', 'Planaria', 'PREMA')} PREMA's; SLA met in "
            + ", ".join(f"{s} {m[s]['sla_met']:.0%}" for s in SYSTEMS)
            + f" of instances; energy of Planaria {ratio('energy_j', 'Planaria', 'PREMA')} "
            "PREMA's."
        )
    return out


def _report(
    means: pd.DataFrame, cols: Sequence[str], scenario: str, qos: str, instances: int, n: int
) -> str:
    head = "| load | system | " + " | ".join(cols) + " |"
    lines = [
        f"# Compare: NP-FCFS, PREMA and Planaria on Planaria workload {scenario} ({qos} QoS)",
        "",
        f"{instances} instances of {n} requests per load, identical for every system; means over "
        "instances. `sla_met` is the fraction of instances meeting the SLA.",
        "",
        head,
        "|" + "---|" * (len(cols) + 2),
    ]
    for r in means.itertuples(index=False):
        vals = " | ".join(f"{getattr(r, c):.4g}" for c in cols)
        lines.append(f"| {r.load:g} | {r.system} | {vals} |")
    lines += [
        "",
        "## What it shows",
        "",
        "PREMA and NP-FCFS time-share one 128x128 array (PREMA preempts by checkpointing, "
        "NP-FCFS never preempts); Planaria splits the same MACs into 16 pods and runs several "
        "requests at once. Measured here, per load (ratios of means):",
        "",
        *_findings(means),
        "",
        "Not included yet: PREMA or Planaria under a DFS power cap (the issue's fourth system).",
        "",
    ]
    return "\n".join(lines)
