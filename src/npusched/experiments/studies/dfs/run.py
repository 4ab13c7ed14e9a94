"""``npusched reproduce dfs``: run the study's points and write its outputs (the method is
:mod:`npusched.experiments.studies.dfs`'s docstring)."""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict
from functools import partial
from pathlib import Path
from typing import Any

from npusched._io import atomic_write_text
from npusched.errors import ConfigError
from npusched.experiments.store import StudyPoint, point_key, run_points
from npusched.experiments.studies.dfs.figures import draw_figures, power_rows
from npusched.experiments.studies.dfs.paper import PAPER, PAPER_TABLE6
from npusched.experiments.studies.dfs.points import (
    FrameJob,
    FrameRunner,
    _mean,
    _schedules,
    calibrate_efficiency,
    engine_frame,
    policy_table,
    sensitivity,
)
from npusched.experiments.studies.dfs.report import comparisons, report
from npusched.experiments.studies.dfs.suite import DfsSuite
from npusched.experiments.suite_io import load_suite_as
from npusched.hardware.power import AB9, fused_steps
from npusched.models import get_network
from npusched.policies.power import StepSchedule, get_power_policy
from npusched.report.suite_output import csv_text as _csv

__all__ = ["reproduce"]


def reproduce(
    out: str | Path,
    *,
    quick: bool = False,
    cap_w: float | None = None,
    efficiency: float | str | None = None,
    runner: FrameRunner = engine_frame,
    plots: bool | None = None,
    fuse: bool | None = None,
    networks: Sequence[str] | None = None,
    calibration_networks: Sequence[str] | None = None,
    sensitivity_grid: bool | None = None,
    sensitivity_idle_w: Sequence[float] | None = None,
    sensitivity_dynamic_w: Sequence[float] | None = None,
    idle_power_w: float | None = None,
    dynamic_power_w: float | None = None,
    fit: bool | None = None,
    time_scale: str | None = None,
    progress: bool = False,
) -> dict[str, Any]:
    """Run the Sec. 4 evaluation and write tables, plots, ``summary.json`` and ``report.md``.

    A study keyword left ``None`` takes the packaged suite file's value
    (:class:`~npusched.experiments.studies.dfs.suite.DfsSuite`, its quick run with ``quick``):
    the values are declared once, there.

    Args:
        out: output directory (created).
        quick: the stored fit instead of a refit, and no sensitivity grid (all eight networks:
            their mean is the headline, and a subset's mean is another number).
        cap_w: the power limit (W; 33).
        efficiency: ``stc_efficiency`` of the AB9; ``"fit"`` the least-squares fit's
            (:mod:`.dfs_fit`); ``"calibrate"`` calibrates it to the paper's 1.99 ms mean layer
            time (:func:`calibrate_efficiency`).
        idle_power_w, dynamic_power_w: the AB9's idle (static + constant) and full-array
            dynamic power at 1 GHz in W; ``None``: the fit's.
        fit: run the least-squares fit of the three scales over all eight networks (default: a
            full run does, ``--quick`` uses the stored fit :data:`.dfs_fit.FITTED`).
        time_scale: ``"global"`` (one efficiency for every network) or ``"per-network"`` (each
            network the efficiency that reproduces its Table 6 DVFS frame time).
        progress: a progress bar over the study's points on stderr.
        runner: runs one frame of a :class:`FrameJob` (default :func:`engine_frame`, the
            engine; :func:`schedule_frame` executes the per-step schedule without it).
        plots: write the PNG figures.
        fuse: decide per GEMM step with vector layers fused into it (default, as the paper's
            layer counts read) or per zoo operator (``False``).
        networks: the networks evaluated (the file's: :data:`NETWORKS`; quick
            :data:`QUICK_NETWORKS`).
        calibration_networks: the networks the STC efficiency is calibrated over (default all
            eight, whatever ``networks`` is).
        sensitivity_grid: also run the power-model sensitivity grid (default: unless ``quick``).
        sensitivity_idle_w, sensitivity_dynamic_w: that grid's idle and full-array dynamic
            powers (W).

    Returns:
        The summary written to ``summary.json``.
    """
    model = load_suite_as(DfsSuite, "dfs", quick=quick)  # the values of the keywords not given
    cap_w = model.cap_w if cap_w is None else cap_w
    if efficiency is None:
        efficiency = model.efficiency
    if efficiency == "fit":
        efficiency = None  # (the configuration hash's name for the fit)
    plots = model.plots if plots is None else plots
    fuse = model.fuse if fuse is None else fuse
    networks = model.networks if networks is None else networks
    if calibration_networks is None:
        calibration_networks = model.calibration_networks
    sensitivity_grid = model.sensitivity if sensitivity_grid is None else sensitivity_grid
    if sensitivity_idle_w is None:
        sensitivity_idle_w = model.sensitivity_idle_w
    if sensitivity_dynamic_w is None:
        sensitivity_dynamic_w = model.sensitivity_dynamic_w
    fit = model.fit if fit is None else fit
    time_scale = model.time_scale if time_scale is None else time_scale
    if not (isinstance(cap_w, int | float) and math.isfinite(cap_w) and cap_w > 0):
        raise ConfigError(f"reproduce dfs: cap_w must be a number of watts > 0, got {cap_w!r}")
    if time_scale not in ("global", "per-network"):
        raise ConfigError(f"reproduce dfs: time_scale={time_scale!r}; allowed: global, per-network")
    from npusched.experiments.studies.dfs import fit as dfs_fit

    outdir = Path(out)
    outdir.mkdir(parents=True, exist_ok=True)
    do_fit, do_sens = fit, sensitivity_grid
    config = {
        "cap_w": float(cap_w),
        "efficiency": efficiency,
        "runner": getattr(runner, "__name__", type(runner).__name__),
        "fuse": fuse,
        "calibration_networks": list(calibration_networks),
        "sensitivity_grid": do_sens,
        "sensitivity_idle_w": [float(x) for x in sensitivity_idle_w],
        "sensitivity_dynamic_w": [float(x) for x in sensitivity_dynamic_w],
        "idle_power_w": idle_power_w,
        "dynamic_power_w": dynamic_power_w,
        "fit": do_fit,
        "time_scale": time_scale,
    }
    store = _Store(outdir, config, progress)
    fitted = dict(dfs_fit.FITTED)
    fit_grid_points = None
    if do_fit:
        fitted = store.one("fit", lambda: _fit_point(cap_w, fuse), "least-squares fit")
        fit_grid_points = fitted.pop("grid_points")
    idle = fitted["idle_power_w"] if idle_power_w is None else float(idle_power_w)
    dyn = fitted["peak_dynamic_power_w"] if dynamic_power_w is None else float(dynamic_power_w)
    power_kw: dict[str, Any] = {
        "static_power_w": max(idle - 6.0, 0.0),
        "constant_power_w": min(6.0, idle),
        "peak_dynamic_power_w": dyn,
    }
    if efficiency == "calibrate":
        eff = store.one(
            "calibrate",
            lambda: {
                "stc_efficiency": calibrate_efficiency(
                    calibration_networks, cap_w=cap_w, fuse=fuse, device=AB9(**power_kw)
                )
            },
            "calibration",
        )["stc_efficiency"]
    elif efficiency is None:
        eff = fitted["stc_efficiency"]
    else:
        if not isinstance(efficiency, int | float) or not 0 < efficiency <= 1:
            raise ConfigError(
                f"reproduce dfs: efficiency={efficiency!r}; allowed: a number in (0, 1], "
                "'calibrate' or None (the fit's)"
            )
        eff = float(efficiency)
    device = AB9(**power_kw, stc_efficiency=eff)
    names = tuple(networks)
    fit_pt = store.one(
        f"fit-summary/{','.join(names)}",
        lambda: _fit_summary_point(idle, dyn, eff, names, cap_w, fuse),
        "fit residuals",
    )
    per_eff = fit_pt["per_network_efficiency"]
    fit_ssr, fit_resid, fit_vals = fit_pt["exact"]
    fit_summary: dict[str, Any] = {
        "method": "grid least squares (dfs_fit)" if do_fit else "stored fit (dfs_fit.FITTED)",
        "idle_power_w": idle,
        "peak_dynamic_power_w": dyn,
        "stc_efficiency": eff,
        "ssr": fit_ssr,
        "residuals": fit_resid,
        "values": fit_vals,
        "grid_points": fit_grid_points,
        "per_network_efficiency": per_eff,
        "time_scale": time_scale,
        "sensitivity": fit_pt["sensitivity_around"],
    }

    per_net: dict[str, dict[str, dict[str, Any]]] = {}
    rows: list[dict[str, Any]] = []
    schedules: dict[str, dict[str, StepSchedule]] = {}
    base_device = device
    devices: dict[str, AB9] = {}
    frame_points = []
    for name in names:
        if time_scale == "per-network":
            device = AB9(**{**base_device.get_params(), "stc_efficiency": per_eff[name]})
        devices[name] = device
        schedules[name] = _schedules(device, get_network(name), cap_w, fuse=fuse)
        frame_points.append(
            StudyPoint(
                store.key("frames", name),
                partial(_frames, name, device, schedules[name], cap_w, fuse, runner),
                f"{name} frames",
            )
        )
    frames = store.run(frame_points, "DFS vs DVFS frames")
    for name, fr in zip(names, frames, strict=True):
        device = devices[name]
        sch = schedules[name]
        net = get_network(name)
        step_names = policy_table(device, net, (1.0,) * 20, fuse=fuse).layer_names
        per_net[name] = fr["per_policy"]
        rows += [{"network": name, "policy": pol, **r} for pol, r in per_net[name].items()]
        trace = [
            {
                "step": i,
                "layers": step,
                "dfs_mhz": sch["DFS"].frequency_hz[i] / 1e6,
                "dfs_power_w": sch["DFS"].power_w[i],
                "dfs_latency_s": sch["DFS"].latency_s[i],
                "dfs_switch_s": sch["DFS"].switch_s[i],
                "dvfs_mhz": sch["DVFS"].frequency_hz[i] / 1e6,
                "dvfs_v": sch["DVFS"].voltage_v[i],
                "dvfs_power_w": sch["DVFS"].power_w[i],
                "dvfs_latency_s": sch["DVFS"].latency_s[i],
                "dvfs_switch_s": sch["DVFS"].switch_s[i],
            }
            for i, step in enumerate(step_names)
        ]
        atomic_write_text(outdir / f"trace_{name}.csv", _csv(trace))
        atomic_write_text(outdir / f"power_table_{name}.csv", _csv(power_rows(device, net)))

    def ratio(net: str, key: str) -> float:
        a, b = per_net[net]["DFS"][key], per_net[net]["DVFS"][key]
        return float(a / b - 1.0)

    fps_gain = {n: ratio(n, "fps") for n in names}
    energy_change = {n: ratio(n, "energy_per_frame_j") for n in names}
    power_change = {n: ratio(n, "avg_power_w") for n in names}
    all_layers = sum(int(per_net[n]["DFS"]["layers"]) for n in names)
    exec_time = sum(float(schedules[n]["DFS"].latency_s.sum()) for n in names)
    overhead = {
        n: per_net[n]["DFS"]["switch_time_s"] / per_net[n]["DFS"]["frame_time_s"] for n in names
    }
    headline: dict[str, dict[str, float | None]] = {
        "fps_gain_mean": {"ours": _mean(list(fps_gain.values())), "paper": PAPER["fps_gain_mean"]},
        "energy_change_mean": {
            "ours": _mean(list(energy_change.values())),
            "paper": PAPER["energy_change_mean"],
        },
        "avg_power_change_mean": {
            "ours": _mean(list(power_change.values())),
            "paper": PAPER["avg_power_change_mean"],
        },
        "dfs_peak_power_max_w": {
            "ours": max(per_net[n]["DFS"]["peak_power_w"] for n in names),
            "paper": PAPER["dfs_peak_power_max_w"],
        },
        "dfs_peak_power_5ms_max_w": {
            "ours": max(per_net[n]["DFS"]["peak_power_5ms_w"] for n in names),
            "paper": PAPER["dfs_peak_power_max_w"],
        },
        "dvfs_peak_power_max_w": {
            "ours": max(per_net[n]["DVFS"]["peak_power_w"] for n in names),
            "paper": None,
        },
        "mean_layer_time_s": {"ours": exec_time / all_layers, "paper": PAPER["mean_layer_time_s"]},
        "dfs_overhead_mean": {"ours": _mean(list(overhead.values())), "paper": 0.01},
    }
    if "squeezenet" in names:
        headline["fps_gain_squeezenet"] = {
            "ours": fps_gain["squeezenet"],
            "paper": PAPER["fps_gain_squeezenet"],
        }
        headline["energy_change_squeezenet"] = {
            "ours": energy_change["squeezenet"],
            "paper": PAPER["energy_change_squeezenet"],
        }
        headline["avg_power_change_squeezenet"] = {
            "ours": power_change["squeezenet"],
            "paper": PAPER["avg_power_change_squeezenet"],
        }
    table6 = [
        {
            "network": n,
            "dvfs_voltage_switches": per_net[n]["DVFS"]["voltage_switches_per_frame"],
            "dvfs_frame_ms": per_net[n]["DVFS"]["frame_time_s"] * 1e3,
            "paper_voltage_switches": PAPER_TABLE6[n][0],
            "paper_frame_ms": PAPER_TABLE6[n][1],
            "layers": per_net[n]["DVFS"]["layers"],
        }
        for n in names
    ]
    summary: dict[str, Any] = {
        "cap_w": cap_w,
        "quick": quick,
        "device": {k: v for k, v in base_device.get_params().items()},
        "calibration": {
            "stc_efficiency": eff,
            "calibrated": efficiency == "calibrate",
            "target_mean_layer_time_s": PAPER["mean_layer_time_s"],
        },
        "networks": per_net,
        "per_network": {
            n: {
                "fps_gain": fps_gain[n],
                "energy_change": energy_change[n],
                "avg_power_change": power_change[n],
                "dfs_overhead": overhead[n],
            }
            for n in names
        },
        "headline": headline,
        "table6": table6,
    }
    fit_summary["per_network_time_scale_values"] = fit_pt["per_network_time_scale_values"]
    summary["fit"] = fit_summary
    summary["comparisons"] = comparisons(summary, names)
    summary["fuse_vector_layers"] = fuse
    summary["frame_runner"] = getattr(runner, "__name__", type(runner).__name__)
    if do_sens:
        grid = [(i, d) for i in sensitivity_idle_w for d in sensitivity_dynamic_w]
        sens_points = [
            StudyPoint(
                store.key("sensitivity", names, i, d),
                partial(_sensitivity_point, names, cap_w, fuse, i, d),
                f"sensitivity idle {i:g} W, dynamic {d:g} W",
            )
            for i, d in grid
        ]
        sens = [r for p in store.run(sens_points, "DFS sensitivity grid") for r in p["rows"]]
        summary["sensitivity"] = sens
        atomic_write_text(outdir / "sensitivity.csv", _csv(sens))
    atomic_write_text(outdir / "summary.json", json.dumps(summary, indent=2) + "\n")
    atomic_write_text(outdir / "results.csv", _csv(rows))
    atomic_write_text(outdir / "table6.csv", _csv(table6))
    if plots:
        draw_figures(outdir, names, per_net, schedules, cap_w)
    atomic_write_text(outdir / "report.md", report(summary, names))
    return summary


class _Store:
    """The study's points in ``out``'s store (:func:`~npusched.experiments.store.run_points`):
    the fit, the per-network frames and the sensitivity grid, so a killed run resumes; a
    store of another configuration (``config``: every parameter that changes a point) is
    refused."""

    def __init__(self, out: Path, config: dict[str, Any], progress: bool) -> None:
        self.out, self.progress = out, progress
        self.meta = {"study": "dfs", "config_hash": point_key(config)}

    def key(self, *parts: Any) -> str:
        return point_key("dfs", self.meta["config_hash"], *parts)

    def run(self, points: Sequence[StudyPoint], desc: str) -> list[dict[str, Any]]:
        return run_points(self.out, self.meta, points, progress=self.progress, desc=desc)

    def one(self, name: str, compute: Callable[[], Mapping[str, Any]], desc: str) -> dict[str, Any]:
        return self.run([StudyPoint(self.key(name), compute, desc)], desc)[0]


def _fit_point(cap_w: float, fuse: bool) -> dict[str, Any]:
    """The least-squares fit of the three scales (:func:`.fit.fit`)."""
    from npusched.experiments.studies.dfs import fit as dfs_fit

    res = dfs_fit.fit(cap_w=cap_w, fuse=fuse)
    return {
        "idle_power_w": res.idle_power_w,
        "peak_dynamic_power_w": res.peak_dynamic_power_w,
        "stc_efficiency": res.stc_efficiency,
        "grid_points": res.grid_points,
    }


def _fit_summary_point(
    idle: float, dyn: float, eff: float, names: Sequence[str], cap_w: float, fuse: bool
) -> dict[str, Any]:
    """The fit's residuals and sensitivities at the scales used (:mod:`.fit`)."""
    from npusched.experiments.studies.dfs import fit as dfs_fit

    per_eff = dfs_fit.per_network_efficiency(idle, dyn, eff, names, cap_w=cap_w, fuse=fuse)
    return {
        "per_network_efficiency": per_eff,
        "exact": dfs_fit.exact(idle, dyn, eff, cap_w=cap_w, fuse=fuse),
        "sensitivity_around": dfs_fit.sensitivity_around(idle, dyn, eff, cap_w=cap_w, fuse=fuse),
        "per_network_time_scale_values": dfs_fit.evaluate_per_network(
            idle, dyn, {n: per_eff[n] for n in names}, cap_w=cap_w, fuse=fuse
        ),
    }


def _sensitivity_point(
    names: Sequence[str], cap_w: float, fuse: bool, idle_w: float, dynamic_w: float
) -> dict[str, Any]:
    """One (idle, dynamic power) cell of the sensitivity grid (:func:`.points.sensitivity`;
    no row where ``idle_w >= cap_w``)."""
    rows = sensitivity(names, cap_w=cap_w, fuse=fuse, idle_w=[idle_w], dynamic_w=[dynamic_w])
    return {"rows": rows}


def _frames(
    name: str,
    device: AB9,
    sch: Mapping[str, StepSchedule],
    cap_w: float,
    fuse: bool,
    runner: FrameRunner,
) -> dict[str, Any]:
    """One network's frame under each power policy (``per_policy``: policy -> frame result)."""
    net = get_network(name)
    groups = fused_steps(net) if fuse else None
    per_policy: dict[str, Any] = {}
    for pol, s in sch.items():
        policy = get_power_policy(pol, cap_w=cap_w, idle_power_w=device.idle_power_w)
        dev_p = AB9(**{**device.get_params(), "voltage_v": "dvfs" if pol == "DVFS" else 1.0})
        per_policy[pol] = asdict(runner(FrameJob(net, policy, dev_p, s, groups)))
    return {"per_policy": per_policy}


def run_suite(suite: DfsSuite, out: Path, *, quick: bool, progress: bool) -> dict[str, Any]:
    """``npusched reproduce dfs`` with the parameters of ``suite``."""
    return reproduce(
        out,
        quick=quick,
        cap_w=float(suite.cap_w),
        efficiency=None
        if suite.efficiency == "fit"
        else ("calibrate" if suite.efficiency == "calibrate" else float(suite.efficiency)),
        fit=suite.fit,
        time_scale=suite.time_scale,
        plots=suite.plots,
        fuse=suite.fuse,
        networks=tuple(suite.networks),
        calibration_networks=tuple(suite.calibration_networks),
        sensitivity_grid=suite.sensitivity,
        sensitivity_idle_w=tuple(suite.sensitivity_idle_w),
        sensitivity_dynamic_w=tuple(suite.sensitivity_dynamic_w),
        progress=progress,
    )
