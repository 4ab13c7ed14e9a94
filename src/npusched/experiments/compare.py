"""``npusched compare``: one workload, one compute budget, five systems side by side.

None of the papers ran this: the same Planaria Table I workload (scenario ``A``, ``B`` or ``C``
at a QoS level, Poisson arrivals) on the same 128x128 MAC budget (700 MHz, 358 GB/s),
scheduled

* ``NP-FCFS``: non-preemptive first-come-first-served on the monolithic 128x128 array;
* ``PREMA``: P-PREMA (Algorithm 2 with Algorithm 3 choosing DRAIN or CHECKPOINT at each
  preemption, PREMA's predictor) on the monolithic array (as
  :func:`npusched.experiments.reproduce.planaria.prema_simulate`);
* ``Planaria``: :class:`~npusched.policies.spatial.planaria.PlanariaPolicy` on the 16-subarray
  fission array, the same 128x128 MACs split into 32x32 pods (as
  :func:`npusched.experiments.reproduce.planaria.planaria_simulate`);
* ``PREMA+DFS``: PREMA with layer-wise DFS under a power cap of ``cap_w`` (shared paper 004):
  before every layer, the highest clock whose power is within the cap, 20 us per clock change
  (inside a job and between jobs);
* ``Planaria+DFS``: Planaria with the same DFS cap shared by its co-located jobs: a job on
  ``n`` subarrays may draw ``cap * n / 16``, its plan's power including its subarrays' share of
  the chip's idle power (:func:`npusched.policies.power.job_cap_w`), so the chip, idle
  subarrays included, never draws more than the cap.

One power model for all five: the arrays are the ``prema-npu-dfs`` and ``planaria-dfs``
devices (:mod:`npusched.hardware.clocked`): the arrays above with Table 5's clock levels up to
700 MHz and the AB9's power form on the 45 nm energy model, P = idle x units/16 + dynamic
energy / time. The uncapped systems run every layer at 700 MHz (identical timings to the plain
``prema-npu`` and ``planaria`` devices, so their ANTT, STP, fairness, SLA rate and p99 are those
of ``prema_simulate`` / ``planaria_simulate``).

Each system runs the identical request lists: ``instances`` instances per load, the load being
a multiple of :func:`~npusched.experiments.reproduce.planaria.reference_rate` (offered load on
the monolithic array). Reported per system and load, as mean over instances: ANTT, STP,
fairness (PREMA's definitions, against the *uncapped* isolated latency of the system's array:
the monolithic array's at 700 MHz for NP-FCFS, PREMA and PREMA+DFS, all 16 subarrays' at
700 MHz for Planaria and Planaria+DFS, so a cap's slowdown shows in ANTT), SLA rate (fraction of
instances meeting Planaria's SLA: 99% of vision / 97% of GNMT requests within QoS), p99
latency (seconds), energy per instance (joules: the integral of the chip's power, jobs computing
plus idle units, from the first arrival to the last finish, plus the DRAM energy of checkpoint
save and restore), peak power (W, the highest total power of the chip:
:func:`npusched.metrics.power.machine_power_timeline`) and average power (energy over that span,
W).

Outputs in ``OUT``: ``compare.csv`` (one row per system, load and instance), ``summary.json``
(means per system and load, and the cap), ``compare.png`` (each metric normalised to NP-FCFS at
each load; the SLA rate as it is) and ``report.md`` with the table and what it shows.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from npusched._io import atomic_write_text
from npusched.errors import ConfigError, HardwareConfigError, SimulationError
from npusched.report.tables import plural

__all__ = ["DEFAULT_CAP_W", "SYSTEMS", "compare"]

#: The systems compared, in report order.
SYSTEMS = ("NP-FCFS", "PREMA", "Planaria", "PREMA+DFS", "Planaria+DFS")

#: The default power cap of the DFS systems (W). It binds for both arrays: uncapped, PREMA's
#: monolithic array draws 25-31 W on average over a network and up to 37 W on its heaviest
#: layers (idle 13.1 W), Planaria's fission array, busier, up to about 50 W; the lowest clock
#: (100 MHz) of any layer on any subarray count fits within 23 W.
DEFAULT_CAP_W = 30.0

Simulate = Callable[[Sequence[Any]], tuple[pd.DataFrame, dict[str, float]]]


def _engine_simulate(
    networks: Sequence[str],
    *,
    spatial: bool,
    policy: str,
    cap_w: float | None,
    levels: Sequence[float] | None,
) -> Simulate:
    """A system on the clocked array: ``spatial`` (Planaria on the fission array) or the
    monolithic array under the temporal ``policy``; DFS under ``cap_w`` (``None``: uncapped,
    every layer at the top clock). Returns the records (``isolated_s`` the uncapped isolated
    latency, ``energy_j`` per request) and the instance's power figures."""
    from npusched.hardware import get_device
    from npusched.hardware.profile import compile_profile
    from npusched.metrics.power import machine_power_timeline
    from npusched.models.zoo import get_network
    from npusched.policies import POLICIES
    from npusched.policies.power import DFS
    from npusched.policies.spatial.planaria import PlanariaPolicy
    from npusched.policies.temporal.predictor import make_estimator
    from npusched.sim.engine import Simulator
    from npusched.sim.resources import Machine, Resource

    dev: Any = get_device("planaria-dfs" if spatial else "prema-npu-dfs", frequencies_hz=levels)
    idle = float(dev.idle_power_w)
    size = dev.units_
    profiles = {n: compile_profile(get_network(n), dev) for n in networks}
    if spatial:
        res = Resource("array", "fission-array", size, units_axis="subarrays", idle_power_w=idle)
    else:
        res = Resource("npu", idle_power_w=idle)
    machine = Machine((res,))
    base = dev.base_()
    em = getattr(base, "energy_model_", None)
    dram_pj_bit = em.dram_pj_per_bit if em is not None else 4.0
    dram_j_per_byte = 8.0 * float(dram_pj_bit) * 1e-12
    axes = {"subarrays": size} if spatial else {}

    def simulate(requests: Sequence[Any]) -> tuple[pd.DataFrame, dict[str, float]]:
        if spatial:
            pol: Any = PlanariaPolicy()
            est = None
        else:
            # PREMA's scheduler is Algorithm 2 followed by Algorithm 3 (its paper, Sec. V)
            pol = POLICIES.create(
                policy, **({"mechanism": "dynamic"} if policy == "P-PREMA" else {})
            )
            est = make_estimator("prema") if policy == "P-PREMA" else None
        power = None if cap_w is None else DFS(cap_w=cap_w, idle_power_w=idle)
        sim = Simulator(
            profiles, pol, machine=machine, estimator=est, power=power, power_cap_w=cap_w,
            record_power=True, record_timeline=True,
        )  # fmt: skip
        result = sim.run(requests)
        df = result.to_frame()
        by_id = {
            r.id: profiles[r.network].isolated_latency(r.batch, r.seq_in, r.seq_out, **axes)
            for r in requests
        }
        df = df.assign(isolated_s=df["id"].map(by_id).to_numpy(float))
        times, watts = machine_power_timeline(result, machine)
        t0 = float(df["arrival_s"].min())
        t1 = float(df["finish_s"].max())
        lo = np.clip(times[:-1], t0, t1)
        hi = np.clip(times[1:], t0, t1)
        ckpt_j = 2.0 * float(df["checkpoint_bytes"].sum()) * dram_j_per_byte
        energy = float(np.sum(watts[:-1] * (hi - lo))) + ckpt_j
        span = t1 - t0
        inside = (times[:-1] < t1) & (times[1:] > t0) if times.size > 1 else np.zeros(0, bool)
        return df, {
            "energy_j": energy,
            "peak_power_w": float(watts[:-1][inside].max()) if inside.any() else 0.0,
            "avg_power_w": energy / span if span > 0 else float("nan"),
        }

    return simulate


def _metrics(df: pd.DataFrame, power: dict[str, float]) -> dict[str, float]:
    from npusched.metrics import antt, fairness, sla_met, stp
    from npusched.workloads.planaria import SLA_FRACTION

    lat = df["latency_s"].to_numpy(dtype=np.float64)
    return {
        "antt": antt(df),
        "stp": stp(df),
        "fairness": fairness(df),
        "sla_met": float(sla_met(df, SLA_FRACTION)),
        "p99_latency_s": float(np.percentile(lat, 99)),
        "energy_j": power["energy_j"],
        "peak_power_w": power["peak_power_w"],
        "avg_power_w": power["avg_power_w"],
    }


#: The columns reported per system and load.
COLUMNS = (
    "antt", "stp", "fairness", "sla_met", "p99_latency_s", "energy_j", "peak_power_w",
    "avg_power_w",
)  # fmt: skip


def compare(
    out: str | Path,
    *,
    scenario: str = "C",
    qos: str = "S",
    loads: Sequence[float] = (0.25, 0.5),
    instances: int = 3,
    n_requests: int = 200,
    seed: int = 0,
    cap_w: float = DEFAULT_CAP_W,
    levels_hz: Sequence[float] | None = None,
    progress: bool = False,
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
        cap_w: the DFS systems' power cap in W (:data:`DEFAULT_CAP_W`); at least the highest
            lowest-clock power of any layer (else a one-line error names the layer).
        levels_hz: the clock levels in Hz (must include 700 MHz); ``None``: Table 5's 17
            levels of 100-700 MHz. Fewer levels compile faster (the fission array's profile
            has one variant per subarray count and level).
        progress: a progress bar on stderr over the (load, instance, system) runs, shown
            after 1 s.
    """
    from npusched.experiments.reproduce.planaria import (
        MultiTenantSetup,
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
    if not (isinstance(cap_w, int | float) and np.isfinite(cap_w) and cap_w > 0):
        raise ConfigError(f"--cap must be a number of watts > 0, got {cap_w!r}")
    from npusched.experiments.runner import check_out_dir

    check_out_dir(out)  # before minutes of simulation, not after them
    nets = WORKLOADS[scenario]
    setup = MultiTenantSetup.of(
        n_requests=n_requests, instances=instances, seed=seed, benchmarks="full-size"
    )
    lv = None if levels_hz is None else tuple(float(x) for x in levels_hz)
    try:
        systems: dict[str, Simulate] = {
            "NP-FCFS": _engine_simulate(
                nets, spatial=False, policy="NP-FCFS", cap_w=None, levels=lv
            ),
            "PREMA": _engine_simulate(nets, spatial=False, policy="P-PREMA", cap_w=None, levels=lv),
            "Planaria": _engine_simulate(nets, spatial=True, policy="", cap_w=None, levels=lv),
            "PREMA+DFS": _engine_simulate(
                nets, spatial=False, policy="P-PREMA", cap_w=float(cap_w), levels=lv
            ),
            "Planaria+DFS": _engine_simulate(
                nets, spatial=True, policy="", cap_w=float(cap_w), levels=lv
            ),
        }
    except HardwareConfigError as exc:
        raise ConfigError(f"--clock-levels: {exc}") from None
    from npusched.report.progress import progress_bar

    rows = []
    total = len(loads) * instances * len(systems)
    with progress_bar(total, "compare", enabled=progress, eta=True, delay_s=1.0) as bar:
        for load in loads:
            rate = reference_rate(scenario, load, benchmarks="full-size", depthwise="per-channel")
            for i in range(instances):
                reqs = workload_instance(setup, scenario, qos, rate, i)
                for name, sim in systems.items():
                    try:
                        df, power = sim(reqs)
                    except SimulationError as exc:
                        raise ConfigError(f"--cap {cap_w:g}: {name}: {exc}") from None
                    rows.append(
                        {"system": name, "load": load, "rate_per_s": rate, "instance": i,
                         **_metrics(df, power)}
                    )  # fmt: skip
                    if bar is not None:
                        bar.step(f"load {load:g} #{i} {name}")
    df = pd.DataFrame(rows)
    d = Path(out)
    d.mkdir(parents=True, exist_ok=True)
    atomic_write_text(d / "compare.csv", df.to_csv(index=False))
    cols = list(COLUMNS)
    means = df.groupby(["load", "system"], sort=False)[cols].mean().reset_index()
    summary = {
        "scenario": scenario,
        "qos": qos,
        "instances": instances,
        "n_requests": n_requests,
        "seed": seed,
        "cap_w": float(cap_w),
        "clock_levels_hz": None if lv is None else list(lv),
        "means": means.to_dict(orient="records"),
    }
    atomic_write_text(d / "summary.json", json.dumps(summary, indent=2, sort_keys=True) + "\n")
    _plot(means, cols, d / "compare.png")
    atomic_write_text(
        d / "report.md", _report(means, cols, scenario, qos, instances, n_requests, float(cap_w))
    )
    return means


def _plot(means: pd.DataFrame, cols: Sequence[str], path: Path) -> None:
    from npusched.report.plots import panels, readable

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
            metrics[f"{readable(c, unit=False)}, normalised to NP-FCFS"] = {
                s: (means[means["system"] == s][c].to_numpy(dtype=np.float64) / base).tolist()
                for s in SYSTEMS
            }
    panels(path, cats, metrics, title="Same workload, same 128x128 MACs", reference=1.0)


def _findings(means: pd.DataFrame, cap_w: float) -> list[str]:
    """Bullets per load, computed from the means: ANTT and p99 of each system against NP-FCFS,
    the SLA rates and Planaria's energy against PREMA's; then what the DFS cap costs each
    array (ANTT, p99, energy, peak and average power, capped over uncapped)."""
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
        for base in ("PREMA", "Planaria"):
            cap = f"{base}+DFS"
            out.append(
                f"  - {cap} ({cap_w:g} W) against {base}: ANTT {ratio('antt', cap, base)}, p99 "
                f"{ratio('p99_latency_s', cap, base)}, energy {ratio('energy_j', cap, base)}; "
                f"peak power {m[base]['peak_power_w']:.1f} -> {m[cap]['peak_power_w']:.1f} W, "
                f"average {m[base]['avg_power_w']:.1f} -> {m[cap]['avg_power_w']:.1f} W."
            )
        out.append(
            f"  - under the cap, Planaria+DFS/PREMA+DFS: ANTT "
            f"{ratio('antt', 'Planaria+DFS', 'PREMA+DFS')} (uncapped "
            f"{ratio('antt', 'Planaria', 'PREMA')}), energy "
            f"{ratio('energy_j', 'Planaria+DFS', 'PREMA+DFS')}."
        )
    return out


def _report(
    means: pd.DataFrame,
    cols: Sequence[str],
    scenario: str,
    qos: str,
    instances: int,
    n: int,
    cap_w: float,
) -> str:
    head = "| load | system | " + " | ".join(cols) + " |"
    lines = [
        f"# Compare: NP-FCFS, PREMA, Planaria, and PREMA and Planaria under a {cap_w:g} W DFS "
        f"cap, on Planaria workload {scenario} ({qos} QoS)",
        "",
        f"{plural(instances, 'instance')} of {n} requests per load, identical for every system; means over "
        "instances. `sla_met` is the fraction of instances meeting the SLA. Energy (J), peak "
        "and average power (W) are the chip's: jobs computing plus idle units (idle power "
        "13.1 W), from the first arrival to the last finish.",
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
        "PREMA and NP-FCFS time-share one 128x128 array (PREMA preempts by its Algorithm 3, "
        "draining or checkpointing, "
        "NP-FCFS never preempts); Planaria splits the same MACs into 16 pods and runs several "
        "requests at once. The DFS systems add a power cap: before every layer the highest of "
        "Table 5's clocks (100-700 MHz) whose power fits the job's share of the cap (the whole "
        "cap for PREMA's one job; `cap x n/16` for a Planaria job on n subarrays, the chip's "
        "idle power counted once), 20 us per clock change. Measured here, per load (ratios of "
        "means):",
        "",
        *_findings(means, cap_w),
        "",
        _why(means, cap_w),
        "",
    ]
    return "\n".join(lines)


def _why(means: pd.DataFrame, cap_w: float) -> str:
    """The mechanisms behind the capped rows, with the uncapped peaks measured in this run."""
    peak = means.groupby("system")["peak_power_w"].max()
    return (
        f"Why: uncapped, the monolithic array peaks at {peak['PREMA']:.1f} W and Planaria's "
        f"fission array at {peak['Planaria']:.1f} W (its co-located jobs keep more PEs busy at "
        f"once), so a {cap_w:g} W cap binds on both. DFS slows the layers that do not fit to "
        "the highest clock that does, so latency grows, and ANTT with it (ANTT is against the "
        "uncapped isolated latency). Planaria gives up more: its chip needs more power to run "
        "its jobs side by side, a job on n subarrays gets only n/16 of the cap, and its "
        "Algorithm 1 still predicts remaining times at the uncapped clock. DFS keeps the "
        "voltage at 1.00 V, so a layer's dynamic energy hardly depends on its clock (only the "
        "stall cycles of memory-bound layers shrink), and the chip's idle power is paid from "
        "the first arrival to the last finish whatever the clock: the energy barely moves, "
        "while the average power stays far below the cap (the chip idles between requests at "
        "these loads). The cap's value is in the peak: never above it."
    )
