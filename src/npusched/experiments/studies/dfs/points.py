"""Layer-wise DFS vs DVFS: the points to run. One steady-state frame per (network, power
policy) (:class:`FrameJob` -> :class:`FrameResult`, by the engine or the pure schedule), the
schedules the policies decide, the STC-efficiency calibration and the power-model sensitivity
grid."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from npusched.errors import ConfigError
from npusched.experiments.studies.dfs.paper import NETWORKS, PAPER, POLICIES
from npusched.hardware.power import AB9, LayerOps, PowerTable, fused_steps
from npusched.models import get_network
from npusched.models.ir import Network
from npusched.policies.power import PowerPolicyBase, StepSchedule, get_power_policy, switch_costs


@dataclass(frozen=True)
class FrameResult:
    """One frame of one network under one power policy (steady state, frames back to back).

    Attributes:
        frame_time_s: execution plus switch time (seconds).
        fps: frames per second.
        peak_power_w: highest power of any step or switch (W).
        avg_power_w: frame energy / frame time (W).
        energy_per_frame_j: joules per frame.
        voltage_switches_per_frame: voltage changes per frame.
        frequency_switches_per_frame: clock-only changes per frame.
        switch_time_s: time spent switching per frame (seconds).
        layers: steps per frame.
        peak_power_5ms_w: highest 5 ms average power (W), what the paper's PMIC read every
            5 ms sees (:func:`windowed_peak_power`).
    """

    frame_time_s: float
    fps: float
    peak_power_w: float
    avg_power_w: float
    energy_per_frame_j: float
    voltage_switches_per_frame: int
    frequency_switches_per_frame: int
    switch_time_s: float
    layers: int
    peak_power_5ms_w: float


#: The paper reads the PMIC every 5 ms (Sec. 4.1).
PMIC_WINDOW_S = 5e-3


def windowed_peak_power(durations_s: Any, power_w: Any, window_s: float) -> float:
    """Highest average power over any window of ``window_s`` seconds of a periodic timeline.

    The timeline is the segments ``durations_s`` (seconds) at ``power_w`` (W), repeated (frames
    back to back). Cumulative energy is piecewise linear, so the window average is too, and its
    maximum lies where a window edge meets a segment boundary: only those starts are evaluated.
    """
    d = np.asarray(durations_s, dtype=np.float64)
    p = np.asarray(power_w, dtype=np.float64)
    keep = d > 0
    d, p = d[keep], p[keep]
    if d.size == 0 or window_s <= 0:
        raise ConfigError("windowed_peak_power: need a positive window and a non-empty timeline")
    period = float(d.sum())
    edges = np.concatenate(([0.0], np.cumsum(d)))
    e_edges = np.concatenate(([0.0], np.cumsum(d * p)))

    def energy(t: Any) -> Any:
        k = np.floor(t / period)
        r = t - k * period
        i = np.clip(np.searchsorted(edges, r, side="right") - 1, 0, d.size - 1)
        return k * e_edges[-1] + e_edges[i] + (r - edges[i]) * p[i]

    starts = np.concatenate((edges[:-1], edges[:-1] - window_s))
    return float(((energy(starts + window_s) - energy(starts)) / window_s).max())


@dataclass(frozen=True)
class FrameJob:
    """One network under one power policy, as a frame runner receives it.

    Attributes:
        network: the network (batch 1).
        policy: the power policy (its ``cap_w`` is the limit).
        device: the AB9 at the policy's voltages (``voltage_v=1.0`` for DFS, ``"dvfs"`` for
            DVFS) and the run's ``stc_efficiency``.
        schedule: the per-step schedule of the pure functions (frames back to back).
        step_groups: the step (fused group) of every layer, or ``None`` (per layer).
    """

    network: Network
    policy: PowerPolicyBase
    device: AB9
    schedule: StepSchedule
    step_groups: npt.NDArray[np.int64] | None


FrameRunner = Callable[[FrameJob], FrameResult]


def schedule_frame(job: FrameJob) -> FrameResult:
    """:func:`run_frame` of the job's per-step schedule (no engine)."""
    return run_frame(job.schedule)


def engine_frame(job: FrameJob, *, frames: int = 1) -> FrameResult:
    """Run ``frames + 1`` back-to-back frames of ``job`` through the engine and return one
    steady-state frame.

    A :class:`~npusched.sim.engine.Simulator` (NP-FCFS, one NPU with the AB9's idle power,
    the policy as its ``power`` hook under ``power_cap_w = cap_w``, power recorded) runs
    ``frames + 1`` requests of the network dispatched at 0. The engine charges the switch from
    one frame's last step (f, V) to the next frame's first (the policy's ``switch_cost``,
    drawing the idle power) when the next request starts, so every frame but the first (which
    starts free) is a steady-state frame: frame time and energy are the mean over requests
    ``1..frames`` of finish-to-finish time and of the request's ``energy_j``. The clock and
    voltage per step, the switch counts and the peak power are read off the derived plan the
    engine ran (``SimResult.power``) and its power timeline.

    The engine folds a switch inside a job into the step after it, so its power timeline shows
    that step at its average over switch and step; the 5 ms window peak
    (:func:`windowed_peak_power` over the first frame's timeline and the wrap-around switch)
    can therefore differ from the schedule's by a fraction of a watt, and ``peak_power_w`` is
    the highest step power of the derived plan without its folded switch (the power the PMIC
    sees while the step computes).
    """
    from npusched.base import clone
    from npusched.hardware import compile_profile
    from npusched.policies.base import POLICIES as TEMPORAL
    from npusched.policies.power import GroupedSteps
    from npusched.sim.engine import Simulator
    from npusched.sim.resources import Machine, Resource
    from npusched.workloads.request import Request

    if not (isinstance(frames, int) and frames >= 1):
        raise ConfigError(f"engine_frame: frames must be an integer >= 1, got {frames!r}")
    dev = job.device
    idle = dev.idle_power_w
    net = job.network
    prof = compile_profile(net, dev)
    pol = clone(job.policy).set_params(idle_power_w=idle)  # the job's policy stays unchanged
    power: Any = pol if job.step_groups is None else GroupedSteps(pol, job.step_groups)
    sim = Simulator(
        {net.name: prof},
        TEMPORAL.create("NP-FCFS"),
        machine=Machine((Resource("npu", idle_power_w=idle),)),
        power=power,
        power_cap_w=float(pol.cap_w),
        record_power=True,
    )
    res = sim.run([Request(id=i, arrival_s=0.0, network=net.name) for i in range(frames + 1)])
    assert res.power is not None and res.power
    plan = res.power[0].plan
    assert plan.frequency_hz is not None
    freqs = tuple(dict(prof.axes)["frequency_hz"])
    volt_of = dict(zip(freqs, pol.level_voltages(freqs), strict=True))
    f = np.asarray(plan.frequency_hz, dtype=np.float64)
    v = np.asarray([volt_of[float(x)] for x in f], dtype=np.float64)
    _, fsw, vsw = pol._validated()
    _, freq_sw, volt_sw = switch_costs(f, v, freq_switch_s=fsw, volt_switch_s=vsw, cyclic=True)
    finish = np.sort(res.columns["finish_s"])
    first = float(finish[0])  # the first frame, started free
    frame_time = float(finish[-1] - finish[0]) / frames
    wrap = frame_time - first  # the switch the engine charged before each later frame
    energy = float(np.mean(res.columns["energy_j"][1:]))
    # step power while computing: the plain plan at each step's clock (no folded switch)
    by_f = {x: prof.plan(1, frequency_hz=x) for x in freqs}
    steps = np.arange(plan.steps)
    plain_lat = np.asarray([by_f[float(x)].latency_s[i] for i, x in zip(steps, f, strict=True)])
    plain_pow = np.asarray([by_f[float(x)].power_w[i] for i, x in zip(steps, f, strict=True)])
    times, watts = res.power_timeline()
    one = times <= first + 1e-15
    t1, w1 = times[one], watts[one]
    durations = np.diff(np.append(t1, first))
    return FrameResult(
        frame_time_s=frame_time,
        fps=1.0 / frame_time,
        peak_power_w=float(max(plain_pow.max(), idle if wrap > 1e-15 else 0.0)),
        avg_power_w=energy / frame_time,
        energy_per_frame_j=energy,
        voltage_switches_per_frame=int(volt_sw.sum()),
        frequency_switches_per_frame=int(freq_sw.sum()),
        switch_time_s=float(frame_time - plain_lat.sum()),
        layers=len(np.unique(job.step_groups)) if job.step_groups is not None else plan.steps,
        peak_power_5ms_w=windowed_peak_power(
            np.append(durations, max(wrap, 0.0)), np.append(w1, idle), PMIC_WINDOW_S
        ),
    )


def run_frame(schedule: StepSchedule) -> FrameResult:
    """Execute one frame's per-step schedule in order: each step's switch (idle power) then the
    step at its level. The stand-in for an engine run (same inputs, same outputs)."""
    t = schedule.total_time_s
    e = schedule.total_energy_j
    return FrameResult(
        frame_time_s=t,
        fps=1.0 / t,
        peak_power_w=schedule.peak_power_w,
        avg_power_w=e / t,
        energy_per_frame_j=e,
        voltage_switches_per_frame=schedule.voltage_switches,
        frequency_switches_per_frame=schedule.frequency_switches,
        switch_time_s=float(schedule.switch_s.sum()),
        layers=len(schedule.level),
        peak_power_5ms_w=windowed_peak_power(
            np.column_stack((schedule.switch_s, schedule.latency_s)).ravel(),
            np.column_stack(
                (np.full(len(schedule.level), schedule.idle_power_w), schedule.power_w)
            ).ravel(),
            PMIC_WINDOW_S,
        ),
    )


def policy_table(
    device: AB9,
    net: Network,
    voltages_v: Sequence[float],
    *,
    fuse: bool = True,
    ops: LayerOps | None = None,
) -> PowerTable:
    """The (level, step) table a power policy decides on: per layer, or with vector layers fused
    into the GEMM step before them (:func:`npusched.hardware.power.fused_steps`)."""
    tab = device.power_table(net, 1, voltages_v=voltages_v, ops=ops)
    return tab.grouped(fused_steps(net)) if fuse else tab


def _schedules(
    device: AB9,
    net: Network,
    cap_w: float,
    *,
    fuse: bool = True,
    ops: LayerOps | None = None,
) -> dict[str, StepSchedule]:
    out = {}
    lo = device.layer_ops(net, 1) if ops is None else ops
    for name in POLICIES:
        pol = get_power_policy(name, cap_w=cap_w)
        out[name] = pol.schedule(policy_table(device, net, pol.level_voltages(), fuse=fuse, ops=lo))
    return out


def calibrate_efficiency(
    networks: Sequence[str] = NETWORKS,
    *,
    target_mean_layer_s: float = PAPER["mean_layer_time_s"],
    cap_w: float = 33.0,
    device: AB9 | None = None,
    fuse: bool = True,
    tol: float = 1e-6,
) -> float:
    """The ``stc_efficiency`` at which the mean step (layer) time under DFS over all
    ``networks``' steps equals ``target_mean_layer_s`` (bisection on a log scale; the mean time
    falls monotonically as the efficiency rises). Returns 1.0 if even full efficiency is slower.

    Args:
        networks: zoo names.
        target_mean_layer_s: the mean execution time per step (seconds; switches excluded).
        cap_w: the power limit (W).
        device: the AB9 whose other parameters are kept (default ``AB9()``).
        fuse: steps with vector layers fused (as :func:`reproduce`).
        tol: relative width of the final bracket.
    """
    base = AB9() if device is None else device
    nets = [get_network(n) for n in networks]
    ops = [base.layer_ops(n, 1) for n in nets]
    pol = get_power_policy("DFS", cap_w=cap_w)
    volts = pol.level_voltages()

    def mean_layer(eff: float) -> float:
        dev = AB9(**{**base.get_params(), "stc_efficiency": eff})
        total, steps = 0.0, 0
        for net, lo in zip(nets, ops, strict=True):
            s = pol.schedule(policy_table(dev, net, volts, fuse=fuse, ops=lo))
            total += float(s.latency_s.sum())  # execution time only: "execution time of a layer"
            steps += len(s.level)
        return total / steps

    if mean_layer(1.0) >= target_mean_layer_s:
        return 1.0
    lo_e, hi_e = 1e-6, 1.0
    if mean_layer(lo_e) <= target_mean_layer_s:
        raise ConfigError(f"cannot reach a mean layer time of {target_mean_layer_s} s")
    while hi_e / lo_e > 1.0 + tol:
        mid = math.sqrt(lo_e * hi_e)
        if mean_layer(mid) > target_mean_layer_s:
            lo_e = mid
        else:
            hi_e = mid
    return math.sqrt(lo_e * hi_e)


def _mean(xs: Sequence[float]) -> float:
    return float(np.mean(xs)) if xs else math.nan


#: Sensitivity grid: idle power (static + constant, W) x full-array dynamic power at 1 GHz (W).
SENSITIVITY_IDLE_W: tuple[float, ...] = (12.0, 18.0, 24.0, 28.0)
SENSITIVITY_DYNAMIC_W: tuple[float, ...] = (15.0, 21.0, 30.0, 48.0)


def sensitivity(
    networks: Sequence[str] = NETWORKS,
    *,
    cap_w: float = 33.0,
    fuse: bool = True,
    idle_w: Sequence[float] = SENSITIVITY_IDLE_W,
    dynamic_w: Sequence[float] = SENSITIVITY_DYNAMIC_W,
) -> list[dict[str, float]]:
    """Headline results for other choices of the two power-model scales the paper leaves open
    (each point recalibrates the STC efficiency). Idle power is split as ``idle - 6`` W static
    plus 6 W constant (only the sum matters). Returns one row per (idle, dynamic) point."""
    nets = {n: get_network(n) for n in networks}
    rows: list[dict[str, float]] = []
    for idle in idle_w:
        for dyn in dynamic_w:
            if idle >= cap_w:
                continue
            kw = {"static_power_w": idle - 6.0, "constant_power_w": 6.0}
            dev0 = AB9(**kw, peak_dynamic_power_w=dyn)  # type: ignore[arg-type]
            eff = calibrate_efficiency(networks, cap_w=cap_w, device=dev0, fuse=fuse, tol=1e-4)
            dev = AB9(**kw, peak_dynamic_power_w=dyn, stc_efficiency=eff)  # type: ignore[arg-type]
            gains, energy, power, vsw = [], [], [], 0
            for net in nets.values():
                sch = _schedules(dev, net, cap_w, fuse=fuse)
                a, b = run_frame(sch["DFS"]), run_frame(sch["DVFS"])
                gains.append(a.fps / b.fps - 1.0)
                energy.append(a.energy_per_frame_j / b.energy_per_frame_j - 1.0)
                power.append(a.avg_power_w / b.avg_power_w - 1.0)
                vsw += b.voltage_switches_per_frame
            rows.append(
                {
                    "idle_power_w": idle,
                    "peak_dynamic_power_w": dyn,
                    "stc_efficiency": eff,
                    "fps_gain_mean": _mean(gains),
                    "energy_change_mean": _mean(energy),
                    "avg_power_change_mean": _mean(power),
                    "dvfs_voltage_switches_total": float(vsw),
                }
            )
    return rows
