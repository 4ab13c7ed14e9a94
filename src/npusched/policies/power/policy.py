"""Power policies as components: ``DFS`` and ``DVFS`` under a cap, and the cap split among jobs.

A :class:`PowerPolicy` maps one job's per-step power/latency tables (one row per frequency level)
and its cap to a :class:`~npusched.policies.power.schedule.StepSchedule`. It is engine-independent:
the engine (or the frame runner of ``reproduce dfs``) asks the policy which voltage each level runs
at (:meth:`PowerPolicy.level_voltages`), builds the tables with those voltages (e.g.
:meth:`npusched.hardware.power.AB9.power_table`) and calls :meth:`PowerPolicy.schedule`.

A run config selects one by name: ``power = {name = "DFS", cap_w = 33}``
(:func:`get_power_policy`).

Sharing a cap among concurrent jobs (Planaria's spatial co-location)
--------------------------------------------------------------------
The idle power (static + constant, Eq. 1 and 4) is drawn once by the chip, whatever runs. The
rest of the cap, the dynamic budget ``cap - idle``, is split among the running jobs **in
proportion to the compute units each holds** (:func:`split_cap`): a job on ``u`` of ``U`` units
may draw ``(cap - idle) * u / U`` of dynamic power. Units are proportional to the PEs a job
occupies, and dynamic power is proportional to the PEs switching (Eq. 3's ``N_op``), so equal
shares per unit give every job the same clock when they run the same layer kind.

**The rule the engine applies** (:func:`job_cap_w`, the one function both use). A plan's power
(:attr:`~npusched.hardware.profile.ExecPlan.power_w`) is the power of the job's own units: their
dynamic power plus their share ``idle * u / U`` of the resource's idle power (the AB9 on one
unit: the whole chip's 24 W idle; ``planaria-dfs``: ``idle * n / 16``). A job's cap is then its
idle share plus its dynamic share, ``idle * u / U + (cap - idle) * u / U = cap * u / U``. At any
instant the machine draws the plans' powers of the jobs computing plus the idle power of every
unit not computing (unallocated, or held by a job restoring, saving or switching), ``idle *
(U - held) / U``, so the total is at most ``cap * held / U + idle * (U - held) / U <= cap``
whenever ``idle <= cap`` (checked: :class:`PowerCapError` otherwise). Unallocated units' share
of the dynamic budget is left unused (a conservative choice: handing it to the running jobs
would require re-timing them whenever one finishes or starts).
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from npusched.base import Component
from npusched.errors import ParameterError
from npusched.hardware.power import DFS_VOLTAGES_V, DVFS_VOLTAGES_V, FREQUENCIES_HZ, PowerTable
from npusched.policies.contract import job_cap_w, split_cap
from npusched.policies.power.core import PowerCore
from npusched.policies.power.schedule import (
    PowerCapError,
    StepSchedule,
    highest_feasible_levels,
    schedule_steps,
    switch_costs,
)
from npusched.policies.registry import POWER_POLICIES as _POWER_POLICIES

if TYPE_CHECKING:
    from npusched.hardware.profile import ExecPlan

__all__ = [
    "DFS",
    "DVFS",
    "POWER_POLICIES",
    "GroupedSteps",
    "PowerPolicy",
    "PowerPolicyBase",
    "get_power_policy",
    "job_cap_w",
    "power_policy_from_config",
    "shared_cap_levels",
    "split_cap",
]


@runtime_checkable
class PowerPolicy(Protocol):
    """What the engine needs from a power policy."""

    name: str
    cap_w: float

    def level_voltages(self, frequencies_hz: Sequence[float]) -> tuple[float, ...]:
        """Supply voltage (V) the policy uses at each clock level (Hz)."""
        ...

    def schedule(self, table: PowerTable, *, cyclic: bool = True) -> StepSchedule:
        """The per-step schedule of one job under ``cap_w``."""
        ...

    def step_levels(self, table: PowerTable, *, cap_w: float | None = None) -> Any:
        """The level of every step under ``cap_w`` (or a job's share of it)."""
        ...

    def switch_cost(self, prev: tuple[float, float] | None, nxt: tuple[float, float]) -> float:
        """Seconds to change from ``prev`` to ``nxt`` ``(f, V)``."""
        ...


def _check_cap(owner: str, cap_w: object) -> float:
    ok = isinstance(cap_w, int | float) and not isinstance(cap_w, bool)
    if not ok or not np.isfinite(float(cap_w)) or float(cap_w) <= 0:  # type: ignore[arg-type]
        raise ParameterError(owner, "cap_w", cap_w, "a finite number of watts > 0")
    return float(cap_w)  # type: ignore[arg-type]


def _check_time(owner: str, name: str, value: object) -> float:
    ok = isinstance(value, int | float) and not isinstance(value, bool)
    if not ok or not np.isfinite(float(value)) or float(value) < 0:  # type: ignore[arg-type]
        raise ParameterError(owner, name, value, "a finite number of seconds >= 0")
    return float(value)  # type: ignore[arg-type]


#: :meth:`PowerPolicyBase.derive`'s plans by their inputs (the policy's class and checked
#: values, the voltages, the clock levels, the input plans by identity, the cap and the idle
#: share): each run of a config derives the same plans from its profiles' plans (which the
#: profiles keep), about 2 M instructions each; the memo keeps the input plans alive. Cleared
#: when it holds :data:`_DERIVED_MAX` entries.
_DERIVED: dict[tuple[Any, ...], tuple[tuple[ExecPlan, ...], ExecPlan]] = {}
_DERIVED_MAX = 4096


class PowerPolicyBase(PowerCore, Component):
    """Shared logic: highest feasible level per step on the policy's voltage table (the
    per-start switch cost and its parameter check: :class:`~npusched.policies.power.core.PowerCore`,
    compiled)."""

    name: str = ""
    cap_w: float
    freq_switch_s: float
    volt_switch_s: float
    idle_power_w: float

    def level_voltages(self, frequencies_hz: Sequence[float] = FREQUENCIES_HZ) -> tuple[float, ...]:
        raise NotImplementedError

    def _check_values(self) -> tuple[float, float, float]:
        owner = type(self).__name__
        idle = self.idle_power_w
        if (
            not isinstance(idle, int | float)
            or isinstance(idle, bool)
            or not (0.0 <= float(idle) < float("inf"))
        ):
            raise ParameterError(owner, "idle_power_w", idle, "a finite number of watts >= 0")
        return (
            _check_cap(owner, self.cap_w),
            _check_time(owner, "freq_switch_s", self.freq_switch_s),
            _check_time(owner, "volt_switch_s", self.volt_switch_s),
        )

    def step_levels(
        self, table: PowerTable, *, cap_w: float | None = None
    ) -> npt.NDArray[np.int64]:
        """Compile-time choice (Sec. 3: the power model runs at compile time): the highest level
        within ``cap_w`` (default the policy's own; pass a job's share of a shared cap) for
        every step of ``table``. The engine applies a step's level when the step starts."""
        cap, _, _ = self._validated()
        return highest_feasible_levels(table.power_w, cap if cap_w is None else float(cap_w))

    def derive(
        self,
        plans: Mapping[float, ExecPlan],
        cap_w: float,
        *,
        step_groups: Any = None,
        idle_share: float = 1.0,
    ) -> ExecPlan:
        """The engine's hook (:class:`npusched.sim.engine.Simulator` ``power=``): one job's plan
        under ``cap_w`` from its plans at every clock level.

        Every step runs at the highest level whose power (the plan's ``power_w``) is within
        ``cap_w`` (the engine passes the job's share of the machine's cap). A change of clock or
        voltage from the previous step is folded into the step: its time (:meth:`switch_cost`)
        is added to the step's latency and ``idle_power_w * idle_share`` times it to its
        energy. The first step is free here: the engine charges the switch into it when the job
        starts (from the level the job's units were left at). The plans must have been
        compiled at the policy's voltages (``AB9()`` for DFS, ``AB9(voltage_v="dvfs")`` for
        DVFS).

        With ``step_groups`` (one group index per step, non-decreasing from 0, e.g.
        :func:`npusched.hardware.power.fused_steps`: vector layers fused into the GEMM layer
        before them) the choice is made once per group: every step of a group runs at the
        highest level at which **each** of its steps is within ``cap_w`` (the group's peak,
        as :meth:`~npusched.hardware.power.PowerTable.grouped` defines a fused step's power), so
        clock changes happen only at group starts.

        Args:
            plans: ``{frequency_hz: ExecPlan}`` of one job, all with the same steps.
            cap_w: the job's power cap (W).
            step_groups: group index per step, or ``None`` (every step decides alone).
            idle_share: the fraction of ``idle_power_w`` the job's units draw during a switch
                (the engine passes ``units / capacity``: 1 for a job holding a whole chip).

        Returns:
            An :class:`~npusched.hardware.profile.ExecPlan` with per-step ``frequency_hz``.
        """
        from npusched.hardware.profile import ExecPlan

        _, fsw, vsw = self._validated()
        freqs = sorted(plans)
        if not freqs:
            raise PowerCapError(f"{type(self).__name__}.derive: no plans")
        ps = [plans[f] for f in freqs]
        if len({p.steps for p in ps}) != 1:
            raise PowerCapError(f"{type(self).__name__}.derive: plans differ in their steps")
        volts = self.level_voltages(freqs)
        key: tuple[Any, ...] | None = None
        if step_groups is None:
            # A plan of the same inputs (the same plan objects: a profile keeps its plans) is
            # the one derived before, kept with its inputs (alive, so their ids stay theirs).
            key = (
                type(self),
                fsw,
                vsw,
                float(self.idle_power_w),
                tuple(volts),
                tuple(freqs),
                tuple(map(id, ps)),
                float(cap_w),
                float(idle_share),
            )
            hit = _DERIVED.get(key)
            if hit is not None and all(a is b for a, b in zip(hit[0], ps, strict=True)):
                return hit[1]
        power = np.stack([p.power_w for p in ps])
        if step_groups is None:
            levels = highest_feasible_levels(power, float(cap_w))
        else:
            idx = np.asarray(step_groups, dtype=np.int64)
            if idx.shape != (ps[0].steps,) or (
                idx.size and (idx[0] != 0 or (np.diff(idx) < 0).any() or (np.diff(idx) > 1).any())
            ):
                raise PowerCapError(
                    f"{type(self).__name__}.derive: step_groups must be one group index per step "
                    f"({ps[0].steps}), non-decreasing from 0 in steps of 0 or 1"
                )
            starts = np.flatnonzero(np.diff(idx, prepend=-1))
            peak = np.maximum.reduceat(power, starts, axis=1)
            levels = highest_feasible_levels(peak, float(cap_w))[idx]
        cols = np.arange(ps[0].steps)
        f = np.asarray(freqs, dtype=np.float64)[levels]
        v = np.asarray(volts, dtype=np.float64)[levels]
        sw, _, _ = switch_costs(f, v, freq_switch_s=fsw, volt_switch_s=vsw, cyclic=False)
        idle = float(self.idle_power_w) * float(idle_share)
        plan = ExecPlan.from_steps(
            np.stack([p.latency_s for p in ps])[levels, cols] + sw,
            tiles=np.stack([p.tiles for p in ps])[levels, cols],
            checkpoint_bytes=np.stack([p.checkpoint_bytes for p in ps])[levels, cols],
            energy_j=np.stack([p.energy_j for p in ps])[levels, cols] + sw * idle,
            exits=ps[0].exits,
            frequency_hz=f,
        )
        if key is not None:
            if len(_DERIVED) >= _DERIVED_MAX:
                _DERIVED.clear()
            _DERIVED[key] = (tuple(ps), plan)
        return plan

    def schedule(self, table: PowerTable, *, cyclic: bool = True) -> StepSchedule:
        """Highest level within ``cap_w`` before every step, with switch costs (see
        :func:`~npusched.policies.power.schedule.schedule_steps`). ``table`` must have been built
        with :meth:`level_voltages` (checked)."""
        cap, fsw, vsw = self._validated()
        want = np.asarray(self.level_voltages(tuple(table.frequency_hz)))
        if not np.allclose(want, table.voltage_v):
            raise PowerCapError(
                f"{type(self).__name__}: table voltages {list(table.voltage_v)} differ from the "
                f"policy's {list(want)}"
            )
        return schedule_steps(
            table.latency_s,
            table.power_w,
            table.frequency_hz,
            table.voltage_v,
            cap,
            idle_power_w=table.idle_power_w,
            freq_switch_s=fsw,
            volt_switch_s=vsw,
            cyclic=cyclic,
            energy_j=table.energy_j,
        )


class DFS(PowerPolicyBase):
    """Layer-wise dynamic frequency scaling (Sec. 3.2): always 1.00 V; before each layer the
    highest clock whose predicted power is within ``cap_w``.

    Args:
        cap_w: power limit in W (33, Sec. 4.1).
        freq_switch_s: cost of a clock change in seconds (20 us, Sec. 3.2).
        voltage_v: the fixed supply voltage in V (1.00, Table 5).
        idle_power_w: power during a switch in W, used by :meth:`derive` (engine runs) for the
            energy of the switches it folds into steps (set it to the device's idle power,
            e.g. ``AB9().idle_power_w``; 0 by default).
    """

    name = "DFS"

    def __init__(
        self,
        cap_w: float = 33.0,
        freq_switch_s: float = 20e-6,
        voltage_v: float = 1.0,
        idle_power_w: float = 0.0,
    ) -> None:
        self.cap_w = cap_w
        self.freq_switch_s = freq_switch_s
        self.voltage_v = voltage_v
        self.idle_power_w = idle_power_w
        self.volt_switch_s = 0.0  # never used: the voltage never changes

    def level_voltages(self, frequencies_hz: Sequence[float] = FREQUENCIES_HZ) -> tuple[float, ...]:
        """``voltage_v`` at every level (Table 5: DFS 1.00 V)."""
        if tuple(frequencies_hz) == FREQUENCIES_HZ and self.voltage_v == 1.0:
            return DFS_VOLTAGES_V
        return tuple(float(self.voltage_v) for _ in frequencies_hz)


class DVFS(PowerPolicyBase):
    """Layer-wise DVFS, the paper's baseline (Sec. 4): per layer the highest (f, V) pair of
    Table 5 within ``cap_w``; a voltage change costs ``volt_switch_s``, a clock-only change
    ``freq_switch_s``.

    Args:
        cap_w: power limit in W (33).
        freq_switch_s: clock-only change in seconds (20 us).
        volt_switch_s: voltage change in seconds (2.15 ms, Sec. 4.2).
        low_voltage_v: voltage at or below ``threshold_hz`` (0.95 V, Table 5).
        high_voltage_v: voltage above it (1.00 V).
        threshold_hz: highest clock of the low voltage (500 MHz, Table 5).
        idle_power_w: power during a switch in W, for :meth:`derive` (as :class:`DFS`).
    """

    name = "DVFS"

    def __init__(
        self,
        cap_w: float = 33.0,
        freq_switch_s: float = 20e-6,
        volt_switch_s: float = 2.15e-3,
        low_voltage_v: float = 0.95,
        high_voltage_v: float = 1.0,
        threshold_hz: float = 500e6,
        idle_power_w: float = 0.0,
    ) -> None:
        self.cap_w = cap_w
        self.freq_switch_s = freq_switch_s
        self.volt_switch_s = volt_switch_s
        self.idle_power_w = idle_power_w
        self.low_voltage_v = low_voltage_v
        self.high_voltage_v = high_voltage_v
        self.threshold_hz = threshold_hz

    def level_voltages(self, frequencies_hz: Sequence[float] = FREQUENCIES_HZ) -> tuple[float, ...]:
        """Table 5's DVFS voltages (0.95 V at or below 500 MHz, 1.00 V above)."""
        if tuple(frequencies_hz) == FREQUENCIES_HZ and (
            self.low_voltage_v,
            self.high_voltage_v,
            self.threshold_hz,
        ) == (0.95, 1.0, 500e6):
            return DVFS_VOLTAGES_V
        return tuple(
            float(self.low_voltage_v if f <= self.threshold_hz else self.high_voltage_v)
            for f in frequencies_hz
        )


class GroupedSteps(Component):
    """A power policy that decides once per group of consecutive steps of one network (the
    engine's ``power=`` hook, for a simulation whose jobs all run that network).

    ``derive(plans, cap_w)`` is ``policy.derive(plans, cap_w, step_groups=step_groups)``: e.g.
    ``GroupedSteps(DFS(cap_w=33), fused_steps(network))`` runs every vector layer at the clock of
    the GEMM layer it is fused into, as ``reproduce dfs`` decides by default.

    Args:
        policy: the power policy (``DFS``, ``DVFS``).
        step_groups: group index per step of the network's plan (non-decreasing from 0).
    """

    def __init__(self, policy: PowerPolicyBase, step_groups: Any) -> None:
        self.policy = policy
        self.step_groups = step_groups

    @property
    def name(self) -> str:
        return self.policy.name

    @property
    def cap_w(self) -> float:
        return float(self.policy.cap_w)

    def derive(
        self, plans: Mapping[float, ExecPlan], cap_w: float, *, idle_share: float = 1.0
    ) -> ExecPlan:
        """One job's plan under ``cap_w`` with one level per group (see
        :meth:`PowerPolicyBase.derive`)."""
        return self.policy.derive(plans, cap_w, step_groups=self.step_groups, idle_share=idle_share)

    def level_voltages(self, frequencies_hz: Sequence[float] = FREQUENCIES_HZ) -> tuple[float, ...]:
        """The wrapped policy's voltage (V) at each clock level (Hz)."""
        return self.policy.level_voltages(frequencies_hz)

    def switch_cost(self, prev: tuple[float, float] | None, nxt: tuple[float, float]) -> float:
        """The wrapped policy's switch time in seconds (:meth:`PowerPolicyBase.switch_cost`)."""
        return self.policy.switch_cost(prev, nxt)


# the power kind of the one policy registry (DFS and DVFS are filled in by the catalog)
POWER_POLICIES = _POWER_POLICIES


def get_power_policy(name: str, /, **params: object) -> PowerPolicyBase:
    """A power policy by name (``"DFS"``, ``"DVFS"``) with parameters, e.g. ``cap_w=33``."""
    return POWER_POLICIES.create(name, **params)


def power_policy_from_config(
    spec: Mapping[str, object], *, where: str = "power"
) -> PowerPolicyBase:
    """The policy a run config's ``power = {name = "DFS", cap_w = 33, ...}`` table names.

    ``name`` selects the registry entry; every other key is a constructor parameter.

    Args:
        spec: the table (``name`` plus parameters).
        where: the table's path in the config, for error messages.

    Raises:
        ConfigError: a missing or non-string ``name``, an unknown name or parameter (the
            message names ``where`` and the allowed values).
    """
    from npusched.errors import ConfigError, NpuschedError

    if not isinstance(spec, Mapping):
        raise ConfigError(f'{where}: expected a table like {{name = "DFS", cap_w = 33}}')
    name = spec.get("name")
    if not isinstance(name, str):
        raise ConfigError(
            f"{where}.name: missing or not a string; allowed: {', '.join(POWER_POLICIES.names())}"
        )
    params = {k: v for k, v in spec.items() if k != "name"}
    try:
        pol = POWER_POLICIES.create(name, **params)
        pol._validated()
    except NpuschedError as exc:
        raise ConfigError(f"{where}: {exc}") from exc
    return pol


def shared_cap_levels(
    dynamic_power_w: Mapping[Hashable, Sequence[float]],
    units: Mapping[Hashable, int],
    total_units: int,
    cap_w: float,
    idle_power_w: float,
) -> dict[Hashable, int]:
    """DFS for jobs running at once: each job's highest level whose dynamic power fits its share.

    The engine calls this at every decision point where the set of running jobs or a job's step
    changes. A single job holding the whole resource gets the whole dynamic budget, i.e. plain
    DFS (so every temporal policy, which runs one job at a time, is capped by it).

    Args:
        dynamic_power_w: per job, the dynamic power (W, above the idle power) of its current step
            at each level (ascending levels), **at its allocation** (the job's own PEs).
        units: allocated units per job (keys as ``dynamic_power_w``).
        total_units: the resource's capacity in units.
        cap_w: the chip's power limit (W).
        idle_power_w: static + constant power (W), drawn once.

    Returns:
        The chosen level index per job. The chosen dynamic powers sum to at most
        ``cap_w - idle_power_w``.

    Raises:
        PowerCapError: if a job exceeds its share even at the lowest level, or on a bad split.
    """
    shares = split_cap(cap_w, idle_power_w, units, total_units)
    out: dict[Hashable, int] = {}
    for job, dyn in dynamic_power_w.items():
        d = np.asarray(dyn, dtype=np.float64)
        if job not in shares:
            raise PowerCapError(f"shared_cap_levels: job {job!r} has no allocation")
        ok = np.flatnonzero(d <= shares[job])
        if ok.size == 0:
            raise PowerCapError(
                f"job {job!r}: its share {shares[job]:.3f} W of the {cap_w:g} W cap is below its "
                f"lowest-level dynamic power {float(d.min()):.3f} W"
            )
        out[job] = int(ok[-1])
    return out
