"""The clock / voltage levels between jobs under a power policy (DFS, DVFS): the rule the engine
applies at every start (``_Run._level_switch``), written once.

The engine allocates unit *counts*, not unit indices, so levels are tracked per resource: the
free units of a resource stand at the ``(f, V)`` of the last step executed by the most recently
started job that has since released its units (none yet: the first start is free). Exact for a
one-unit resource (every temporal policy: job A's last step, then job B's first); on a fission
array an approximation (units freed by an earlier job may stand at another level). A job
stopped before it computed anything (preempted during its switch or restore) leaves the units
at the level they had before it started (its switch did not take effect); a policy that does
that to every job raises :class:`~npusched.errors.SimulationError` after
:data:`MAX_ABORTED_SWITCHES` starts in a row instead of running forever. The switch costs what
the power policy's ``switch_cost`` says and draws the units' share of the resource's idle power
(``idle_power_w * units / capacity``), added to the starting job's energy.

Which jobs hold units is the caller's to say (the engine reads its ``Job`` objects): a caller
reports each start's job once it has released its units (:meth:`SwitchLevels.release`),
checks the guard (:meth:`SwitchLevels.check`) and starts the next one (:meth:`SwitchLevels.start`).
This module is listed in ``npusched.native.COMPILED_MODULES`` (compiled, every call is a native
method call from the engine); it reads the power policy only through ``level_voltages`` and
``switch_cost``.
"""

from __future__ import annotations

from typing import Any, Final

from npusched.errors import SimulationError
from npusched.hardware.plan import ExecPlan
from npusched.sim.events import TIME_TOL_S

__all__ = ["MAX_ABORTED_SWITCHES", "PlanLevels", "SwitchLevels"]

#: Starts in a row on one resource stopped during their clock/voltage switch before the engine
#: reports a livelock (a policy that preempts every job before its switch completes).
MAX_ABORTED_SWITCHES: Final = 10_000


class PlanLevels:
    """One plan's levels (:meth:`SwitchLevels.plan_levels`): the ``(f, V)`` of each step (one
    shared tuple per level) and of a fresh start (its position at 0, as ``position_at``), both
    ``None`` if the plan has no clock or no steps; and the exit level of a job that ran it to
    the end (``end_level`` at ``end_s`` seconds of work, made on the first such exit)."""

    def __init__(self, levels: Any, first: Any) -> None:
        self.levels: Any = levels
        self.first: Any = first
        self.end_s = -1.0
        self.end_level: Any = None


class SwitchLevels:
    """One run's levels: per resource the ``(f, V)`` its free units stand at (``None``: nothing
    ran there yet) and how many starts in a row were stopped before computing anything; the
    voltage of each clock seen; per plan (the plan object the key, kept alive by it) its
    :class:`PlanLevels`, built on the plan's first start."""

    def __init__(self, power: Any, n_resources: int) -> None:
        self.power: Any = power
        self.free_level: list[Any] = [None] * n_resources
        self.aborted: list[int] = [0] * n_resources
        self.volt: dict[float, float] = {}
        self.by_plan: dict[ExecPlan, PlanLevels] = {}
        #: The energy (J) of the last :meth:`start`'s switch (0.0 when it cost nothing).
        self.energy = 0.0

    def plan_levels(self, plan: ExecPlan) -> PlanLevels:
        """``plan``'s :class:`PlanLevels`: every step's ``(f, V)`` (:meth:`level_of` of its
        clock) and a fresh start's, built once per plan."""
        hit = self.by_plan.get(plan)
        if hit is not None:
            return hit
        freqs = plan.frequency_hz
        if freqs is None or plan.steps == 0:
            hit = PlanLevels(None, None)
        else:
            memo: dict[float, tuple[float, float]] = {}
            levels: list[tuple[float, float]] = []
            for x in freqs:
                f = float(x)
                lv = memo.get(f)
                if lv is None:
                    lv = memo[f] = self.level_of(f)
                levels.append(lv)
            hit = PlanLevels(levels, levels[min(plan.position_at(0.0)[0], plan.steps - 1)])
        self.by_plan[plan] = hit
        return hit

    def level_of(self, f: float) -> tuple[float, float]:
        """``(f, V)``: the power policy's voltage at clock ``f`` (Hz)."""
        v = self.volt.get(f)
        if v is None:
            v = self.volt[f] = float(self.power.level_voltages((f,))[0])
        return (f, v)

    def exit_level(self, plan: ExecPlan, executed: float, wasted_since: float) -> Any:
        """The ``(f, V)`` of the last step a job on ``plan`` executed before releasing its
        units: at ``executed`` seconds of work, or where a KILL stopped it (it zeroes the work
        done and adds it to the work lost, ``wasted_since`` since the job's start); ``None`` if
        the plan has no clock. A job that ran to the end (the same ``executed`` each time) reads
        the level kept from the first such exit."""
        pl = self.by_plan.get(plan)
        if pl is None:
            pl = self.plan_levels(plan)
        levels = pl.levels
        if levels is None:
            return None
        if executed == pl.end_s:
            return pl.end_level
        ex = executed if executed > 0.0 else wasted_since
        step = plan.step_at(ex - TIME_TOL_S)
        lv: Any = levels[min(max(step, 0), plan.steps - 1)]
        if executed > 0.0 and executed == plan.total_s:
            pl.end_s = executed
            pl.end_level = lv
        return lv

    def release(
        self,
        ri: int,
        plan: ExecPlan,
        done: bool,
        executed: float,
        wasted: float,
        exec0: float,
        wasted0: float,
        before: Any,
    ) -> None:
        """A job that started on resource ``ri`` (with ``exec0`` work done and ``wasted0`` lost,
        the units then at ``before``) released its units, ``done`` or not, with ``executed``
        done and ``wasted`` lost now: the units stand at its exit level, or at ``before`` if it
        stopped before computing anything (one more aborted start in a row)."""
        if not done and executed == exec0 and wasted == wasted0:
            # stopped before it computed anything: its switch did not take effect
            self.free_level[ri] = before
            self.aborted[ri] += 1
        else:
            lv = self.exit_level(plan, executed, wasted - wasted0)
            if lv is not None:
                self.free_level[ri] = lv
            self.aborted[ri] = 0

    def check(self, ri: int, policy: str, resource: str) -> None:
        """Raise the livelock error if more than :data:`MAX_ABORTED_SWITCHES` starts in a row
        on resource ``ri`` stopped before their switch completed."""
        if self.aborted[ri] > MAX_ABORTED_SWITCHES:
            raise SimulationError(
                f"policy {policy!r} stopped {self.aborted[ri]} jobs in a row on "
                f"{resource!r} before their clock/voltage switch completed (a livelock: its "
                "period or quantum is shorter than the power policy's switch time)"
            )

    def start(
        self, ri: int, plan: ExecPlan, ex: float, idle_w: float, units: int, capacity: int
    ) -> float:
        """Seconds a job on ``plan`` with ``ex`` work done, starting now on ``units`` of the
        ``capacity`` units of resource ``ri`` (idle power ``idle_w``), waits for the units'
        clock and voltage to change to those of the step it starts at; the units then stand at
        that level. The switch's energy is left in :attr:`energy`. The level the units stood at
        before (for :meth:`release`) is ``free_level[ri]`` read before this call."""
        self.energy = 0.0
        pl = self.by_plan.get(plan)
        if pl is None:
            pl = self.plan_levels(plan)
        levels = pl.levels
        if levels is None:
            return 0.0
        # a fresh start (no work done) starts at the plan's first level (kept with the plan)
        nxt = pl.first if ex == 0.0 else levels[min(plan.position_at(ex)[0], plan.steps - 1)]
        prev = self.free_level[ri]
        self.free_level[ri] = nxt  # these units now run at the job's level
        sw = float(self.power.switch_cost(prev, nxt)) if prev is not None else 0.0
        if sw > 0.0:
            self.energy = idle_w * units / capacity * sw
        return sw
