"""Layer-wise frequency (and voltage) selection under a power limit, as pure functions.

Source: "Layer-wise dynamic frequency scaling for a neural processing unit" (ETRI Journal 2022),
Sec. 3.2 (DFS, Eq. 4) and Sec. 4 (DVFS baseline, Table 5).

Both policies pick, **before each step (layer)**, the highest level of a frequency table whose
predicted power is within the limit (Eq. 4: ``alpha*C * f * V^2 + constant <= limit``); they differ
in the table they choose from and in what a change costs:

* **DFS**: levels ``(f, 1.00 V)``; a frequency change costs ``freq_switch_s`` (20 us: CPU interrupt
  handling, frequency scaling and CPU wake-up, Sec. 3.2).
* **DVFS**: levels ``(f, V)`` of Table 5 (0.95 V at or below 500 MHz); a change of voltage costs
  ``volt_switch_s`` (2.15 ms, the PMIC's settling, Sec. 4.2), a frequency-only change
  ``freq_switch_s``. A voltage change also moves the clock; it is charged once (2.15 ms), not
  2.15 ms + 20 us.

Conventions (the paper does not spell them out):

* A change is charged **before** the step that needs it, while the STC is idle at the idle power
  (static + constant). No change, no cost: DFS's per-layer interrupt is charged only when the
  clock moves.
* Frames run back to back (the paper runs each network for 10 minutes), so the steady state is
  cyclic: step 0 of a frame follows the last step of the previous frame, and a change there is
  charged to step 0 (``cyclic=True``). With ``cyclic=False`` the first step starts at
  ``initial_level`` (default: the first step's own level, i.e. free).
* If even the lowest level of a step exceeds the limit the selection raises
  :class:`PowerCapError`: a schedule that breaks the cap is never returned.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from npusched.errors import ConfigError
from npusched.policies.contract import PowerCapError

__all__ = [
    "PowerCapError",
    "StepSchedule",
    "highest_feasible_levels",
    "schedule_steps",
    "switch_costs",
]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]


@dataclass(frozen=True)
class StepSchedule:
    """A per-step frequency/voltage schedule and what it costs (arrays of length L = steps).

    Attributes:
        level: chosen level index per step (into the table's levels).
        frequency_hz: clock per step (Hz).
        voltage_v: supply voltage per step (V).
        latency_s: step execution time at its level (seconds; switch time excluded).
        power_w: average power while the step runs (W).
        energy_j: step energy at its level (J; switch energy excluded).
        switch_s: time of the clock/voltage change charged before the step (seconds; 0 if none).
        freq_switch: whether a frequency-only change precedes the step.
        volt_switch: whether a voltage change precedes the step.
        idle_power_w: power during a switch (W).
        cap_w: the power limit the schedule was built for (W).
    """

    level: IntArray
    frequency_hz: FloatArray
    voltage_v: FloatArray
    latency_s: FloatArray
    power_w: FloatArray
    energy_j: FloatArray
    switch_s: FloatArray
    freq_switch: BoolArray
    volt_switch: BoolArray
    idle_power_w: float
    cap_w: float

    @property
    def total_time_s(self) -> float:
        """Execution plus switch time of all steps (seconds)."""
        return float(self.latency_s.sum() + self.switch_s.sum())

    @property
    def total_energy_j(self) -> float:
        """Step energy plus switch-time energy at the idle power (joules)."""
        return float(self.energy_j.sum() + self.switch_s.sum() * self.idle_power_w)

    @property
    def peak_power_w(self) -> float:
        """Highest power of any step or switch (W)."""
        idle = self.idle_power_w if bool((self.switch_s > 0).any()) else -np.inf
        return float(max(float(self.power_w.max()), idle))

    @property
    def voltage_switches(self) -> int:
        return int(self.volt_switch.sum())

    @property
    def frequency_switches(self) -> int:
        """Frequency-only changes (a voltage change is counted in :attr:`voltage_switches`)."""
        return int(self.freq_switch.sum())


def highest_feasible_levels(power_w: FloatArray, cap_w: float) -> IntArray:
    """Per step, the highest level index whose power is within ``cap_w`` (Eq. 4).

    Args:
        power_w: predicted power, shape ``(F, L)`` (levels x steps), levels in ascending order
            of preference (the policy wants the highest index).
        cap_w: the power limit (W).

    Returns:
        Level indices, shape ``(L,)``.

    Raises:
        PowerCapError: if some step exceeds ``cap_w`` at every level.
    """
    p = np.asarray(power_w, dtype=np.float64)
    if p.ndim != 2 or p.shape[0] == 0:
        raise ConfigError(f"power table must have shape (levels, steps), got {p.shape}")
    ok = p <= cap_w
    if p.shape[1] and not ok.any(axis=0).all():
        bad = int(np.flatnonzero(~ok.any(axis=0))[0])
        raise PowerCapError(
            f"power cap {cap_w:g} W is below step {bad}'s lowest-level power "
            f"{float(p[:, bad].min()):.3f} W"
        )
    # highest True index per column: F - 1 - argmax over the reversed levels
    return np.asarray(p.shape[0] - 1 - np.argmax(ok[::-1], axis=0), dtype=np.int64)


def switch_costs(
    frequency_hz: FloatArray,
    voltage_v: FloatArray,
    *,
    freq_switch_s: float,
    volt_switch_s: float,
    cyclic: bool = True,
    initial: tuple[float, float] | None = None,
) -> tuple[FloatArray, BoolArray, BoolArray]:
    """Switch time before each step and which kind of change it is.

    Args:
        frequency_hz: clock per step (Hz).
        voltage_v: voltage per step (V).
        freq_switch_s: cost of a frequency-only change (seconds).
        volt_switch_s: cost of a voltage change (seconds; includes its clock change).
        cyclic: the step before step 0 is the last step (frames back to back).
        initial: ``(f, V)`` before step 0 when not cyclic (default: step 0's own, i.e. free).

    Returns:
        ``(switch_s, freq_switch, volt_switch)``, each of length L.
    """
    f = np.asarray(frequency_hz, dtype=np.float64)
    v = np.asarray(voltage_v, dtype=np.float64)
    if f.size == 0:
        return np.zeros(0), np.zeros(0, dtype=bool), np.zeros(0, dtype=bool)
    if cyclic:
        f0, v0 = f[-1], v[-1]
    elif initial is not None:
        f0, v0 = initial
    else:
        f0, v0 = f[0], v[0]
    prev_f = np.concatenate(([f0], f[:-1]))
    prev_v = np.concatenate(([v0], v[:-1]))
    volt = v != prev_v
    freq = (f != prev_f) & ~volt
    cost = np.where(volt, volt_switch_s, np.where(freq, freq_switch_s, 0.0))
    return cost.astype(np.float64), freq, volt


def schedule_steps(
    latency_s: FloatArray,
    power_w: FloatArray,
    frequency_hz: FloatArray,
    voltage_v: FloatArray,
    cap_w: float,
    *,
    idle_power_w: float,
    freq_switch_s: float = 20e-6,
    volt_switch_s: float = 2.15e-3,
    cyclic: bool = True,
    initial: tuple[float, float] | None = None,
    energy_j: FloatArray | None = None,
) -> StepSchedule:
    """The highest feasible level before every step, with its switch costs, power and energy.

    Args:
        latency_s: step time per (level, step), shape ``(F, L)`` (seconds).
        power_w: step power per (level, step), shape ``(F, L)`` (W).
        frequency_hz: clock of each level, shape ``(F,)`` (Hz), ascending.
        voltage_v: voltage of each level, shape ``(F,)`` (V).
        cap_w: the power limit (W); must be at least ``idle_power_w`` when any switch happens.
        idle_power_w: power during a switch (W).
        freq_switch_s: cost of a frequency-only change (seconds; 20 us).
        volt_switch_s: cost of a voltage change (seconds; 2.15 ms).
        cyclic: frames back to back (see module docstring).
        initial: ``(f, V)`` before step 0 when not cyclic.
        energy_j: step energy per (level, step) in J (default ``latency_s * power_w``; a step
            whose power is its layers' peak passes its summed energy here).
    """
    lat = np.asarray(latency_s, dtype=np.float64)
    pw = np.asarray(power_w, dtype=np.float64)
    f = np.asarray(frequency_hz, dtype=np.float64)
    v = np.asarray(voltage_v, dtype=np.float64)
    if lat.shape != pw.shape or lat.ndim != 2 or f.shape != (lat.shape[0],) or v.shape != f.shape:
        raise ConfigError(
            f"schedule_steps: latency {lat.shape}, power {pw.shape}, frequency {f.shape} and "
            f"voltage {v.shape} do not match (levels, steps)"
        )
    if (np.diff(f) <= 0).any():
        raise ConfigError(f"schedule_steps: frequencies must be strictly ascending, got {list(f)}")
    if idle_power_w > cap_w:
        raise PowerCapError(f"power cap {cap_w:g} W is below the idle power {idle_power_w:g} W")
    lvl = highest_feasible_levels(pw, cap_w)
    cols = np.arange(lat.shape[1])
    fs, vs = f[lvl], v[lvl]
    sw, fsw, vsw = switch_costs(
        fs,
        vs,
        freq_switch_s=freq_switch_s,
        volt_switch_s=volt_switch_s,
        cyclic=cyclic,
        initial=initial,
    )
    step_lat = lat[lvl, cols]
    step_pw = pw[lvl, cols]
    if energy_j is None:
        step_en = step_lat * step_pw
    else:
        en = np.asarray(energy_j, dtype=np.float64)
        if en.shape != lat.shape:
            raise ConfigError(f"schedule_steps: energy {en.shape} != latency {lat.shape}")
        step_en = en[lvl, cols]
    return StepSchedule(
        level=lvl,
        frequency_hz=fs,
        voltage_v=vs,
        latency_s=step_lat,
        power_w=step_pw,
        energy_j=step_en,
        switch_s=sw,
        freq_switch=fsw,
        volt_switch=vsw,
        idle_power_w=float(idle_power_w),
        cap_w=float(cap_w),
    )
