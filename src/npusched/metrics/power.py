"""The machine's total power over a run: computing jobs plus every idle unit's idle power.

:meth:`npusched.sim.engine.SimResult.power_timeline` sums the plans' power of the jobs computing
(each plan's power includes its units' share of the idle power, see
:mod:`npusched.policies.power`). The machine also draws the idle power of every unit no job
computes on (unallocated, or held by a job restoring, saving or switching):
``idle_power_w * (capacity - computing units) / capacity`` per resource.
:func:`machine_power_timeline` adds that term, giving the power a cap must bound.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from npusched.errors import ConfigError

__all__ = ["machine_power_timeline", "peak_machine_power_w"]


def machine_power_timeline(
    result: Any, machine: Any
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """``(times_s, watts)``: the machine's total power, piecewise constant (``watts[i]`` holds
    on ``[times_s[i], times_s[i+1])``), from time 0 to the run's end, then 0.

    Args:
        result: a :class:`~npusched.sim.engine.SimResult` run with ``record_power=True`` and
            ``record_timeline=True`` (the ``run`` segments tell which units compute).
        machine: the :class:`~npusched.sim.resources.Machine` it ran on (capacities and idle
            powers).

    Raises:
        ConfigError: if the power or the timeline was not recorded.
    """
    if result.power is None or result.timeline is None:
        raise ConfigError("machine power needs record_power=True and record_timeline=True")
    tp, wp = result.power_timeline()
    end = float(result.end_s)
    starts: list[float] = []
    deltas: list[float] = []
    idle_total = 0.0
    for res in machine.resources:
        idle = float(res.idle_power_w)
        idle_total += idle
        if idle == 0.0:
            continue
        per_unit = idle / res.capacity
        for s in result.timeline:
            if s.kind == "run" and s.resource == res.name and s.end_s > s.start_s:
                starts += [s.start_s, s.end_s]
                deltas += [-per_unit * s.units, per_unit * s.units]
    grid = np.unique(np.concatenate([tp, np.asarray(starts, dtype=np.float64), [0.0, end]]))
    grid = grid[(grid >= 0.0) & (grid <= end)]
    # jobs' power at each breakpoint (right-continuous)
    k = np.searchsorted(tp, grid, side="right") - 1
    jobs = np.where(k >= 0, wp[np.maximum(k, 0)], 0.0)
    # idle power of the units not computing
    if starts:
        t = np.asarray(starts, dtype=np.float64)
        order = np.argsort(t, kind="stable")
        t = t[order]
        cum = np.cumsum(np.asarray(deltas, dtype=np.float64)[order])
        j = np.searchsorted(t, grid, side="right") - 1
        idle_now = idle_total + np.where(j >= 0, cum[np.maximum(j, 0)], 0.0)
    else:
        idle_now = np.full(grid.shape, idle_total)
    watts = jobs + idle_now
    watts[-1] = 0.0  # after the end
    return grid, watts


def peak_machine_power_w(result: Any, machine: Any) -> float:
    """The highest total power of :func:`machine_power_timeline` (W)."""
    _, w = machine_power_timeline(result, machine)
    return float(w.max()) if w.size else 0.0
