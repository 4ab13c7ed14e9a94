"""Lower bounds on the ``paper`` semantics' optimum from the transition-configuration enumeration.

Under ``paper`` semantics (see :mod:`npusched.policies.mapping.instance`) a group's time grows
with its overlap with other DNNs' groups, and neither CP-SAT nor Z3 proves the optimum of the
artifact's GoogleNet + AlexNet instance within seconds. This module bounds it from below.

For two DNNs with at most ``max_transitions`` accelerator changes each, enumerate every pair of
device rows (20 x 16 for 10 + 8 groups at one transition). For each pair a small linear
programme (GLOP) gives a valid lower bound on the latency (Eq. 11) of *every* timing of that
mapping, whatever the order and idle times:

* ``ov_g`` in ``[0, s_g t_g]``: the time group ``g`` overlaps groups of the other DNN (a group
  that overlaps for ``ov`` runs ``t + ov (1 - 1/s)`` ms, Eq. 7-8, and overlaps at most its own
  duration, so ``ov <= s t``);
* overlap is symmetric per accelerator pair: the overlap A's GPU groups see equals the overlap B's
  DLA groups see, and the other way round;
* ``M >= R_n + tau_n`` for each DNN (``R_n`` = sum of its group durations, ``tau_n`` its
  transition costs), ``M >=`` each accelerator's summed group durations, and
  ``M >= R_A + R_B - O``: both DNNs' groups lie in ``[0, M]``, so their busy times intersect for at
  least ``R_A + R_B - M``, and the intersection is the overlap ``O``.

The minimum over the pairs bounds the instance's optimum. The bound ignores where in the chain
each overlap falls, so it is not tight in general; its distance to the best schedule found is a
proven optimality gap.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any

from npusched.policies.mapping.instance_model import MapInstance, _assignments

__all__ = ["PaperBound", "contention_free_bound", "pair_lower_bound", "paper_lower_bound"]


@dataclass(frozen=True)
class PaperBound:
    """The enumeration's result.

    Attributes:
        bound_ms: the least pair bound: no schedule of the instance has a smaller makespan (ms).
        pairs: ``((row_A, row_B), bound_ms)`` for every device-row pair, least first.
        solve_s: wall-clock seconds of the enumeration.
    """

    bound_ms: float
    pairs: tuple[tuple[tuple[tuple[int, ...], tuple[int, ...]], float], ...]
    solve_s: float

    def open_pairs(self, incumbent_ms: float, rel_tol: float = 0.0) -> int:
        """How many pairs a schedule of ``incumbent_ms`` has not closed (bound below it by more
        than 1e-9 ms, or than ``rel_tol`` relative when that is larger)."""
        slack = max(1e-9, incumbent_ms * rel_tol)
        return sum(1 for _, b in self.pairs if b < incumbent_ms - slack)


def pair_lower_bound(
    inst: MapInstance,
    rows: tuple[tuple[int, ...], tuple[int, ...]],
    slowdowns: tuple[tuple[Any, Any], ...] | None = None,
) -> float:
    """Lower bound (ms) on the makespan of every ``paper``-semantics timing of the mapping
    ``rows`` (per DNN, 0 = GPU / 1 = DLA per group) of a two-DNN instance (module docstring).
    ``slowdowns``: per DNN ``(inst.slowdown(n, 0), inst.slowdown(n, 1))``, precomputed by a
    caller that bounds many pairs. The LP is built row by row (``SetCoefficient``), not through
    OR-Tools' expression API, which cost 4x the solve."""
    from ortools.linear_solver import pywraplp

    if len(inst.dnns) != 2:
        raise ValueError("pair_lower_bound needs a two-DNN instance")
    if slowdowns is None:
        slowdowns = tuple((inst.slowdown(n, 0), inst.slowdown(n, 1)) for n in range(2))
    lp = pywraplp.Solver.CreateSolver("GLOP")
    inf = lp.infinity()
    mk = lp.NumVar(0.0, inf, "M")
    # rows of the LP (each ``M + sum coef * ov >= rhs``):
    chain = [lp.Constraint(0.0, inf) for _ in range(2)]  # M >= R_n + tau_n
    union = lp.Constraint(0.0, inf)  # M >= R_A + R_B - O
    load = [lp.Constraint(0.0, inf) for _ in range(2)]  # M >= an accelerator's load
    sym = [lp.Constraint(0.0, 0.0) for _ in range(2)]  # A's overlap on dev == B's on 1 - dev
    for c in (*chain, union, *load):
        c.SetCoefficient(mk, 1.0)
    rhs_chain = [0.0, 0.0]
    rhs_load = [0.0, 0.0]
    rhs_union = 0.0
    for n, (d, row) in enumerate(zip(inst.dnns, rows, strict=True)):
        s = slowdowns[n]
        for g, dev in enumerate(row):
            t = float(d.time_ms(dev)[g])
            sg = float(s[dev][g])
            c = 1.0 - 1.0 / sg
            ov = lp.NumVar(0.0, t * sg, "")
            rhs_chain[n] += t + (d.transition_ms[g - 1] if g and row[g] != row[g - 1] else 0.0)
            rhs_load[dev] += t
            rhs_union += t
            chain[n].SetCoefficient(ov, -c)
            load[dev].SetCoefficient(ov, -c)
            # busy time counts t + c ov; A's overlaps (== B's) are subtracted once
            union.SetCoefficient(ov, -c + (1.0 if n == 0 else 0.0))
            sym[dev if n == 0 else 1 - dev].SetCoefficient(ov, 1.0 if n == 0 else -1.0)
    for c, r in ((chain[0], rhs_chain[0]), (chain[1], rhs_chain[1]), (union, rhs_union),
                 (load[0], rhs_load[0]), (load[1], rhs_load[1])):
        c.SetLb(r)
    objective = lp.Objective()
    objective.SetCoefficient(mk, 1.0)
    objective.SetMinimization()
    if lp.Solve() != pywraplp.Solver.OPTIMAL:  # pragma: no cover - the LP is always feasible
        raise RuntimeError("GLOP did not solve the bound LP")
    # GLOP's tolerance is about 1e-7 relative: step down so the bound stays valid
    return max(0.0, mk.solution_value() * (1.0 - 1e-6))


def contention_free_bound(
    inst: MapInstance, rows: tuple[tuple[int, ...], tuple[int, ...]]
) -> float:
    """The LP's bound without contention (ms): the larger of each DNN's unslowed chain (group
    times plus transitions) and each accelerator's unslowed load. Valid for every timing of
    the mapping ``rows`` and never above :func:`pair_lower_bound` (whose LP has the same
    constraints with contention terms that are >= 0)."""
    lo = 0.0
    load = [0.0, 0.0]
    for d, row in zip(inst.dnns, rows, strict=True):
        chain = 0.0
        for g, dev in enumerate(row):
            t = float(d.time_ms(dev)[g])
            chain += t + (d.transition_ms[g - 1] if g and row[g] != row[g - 1] else 0.0)
            load[dev] += t
        lo = max(lo, chain)
    # stepped down by 1e-9 relative: float sums may round above the exact value, and CP-SAT
    # rounds the bound up to a tick
    return max(lo, *load) * (1.0 - 1e-9)


def paper_lower_bound(inst: MapInstance, upper_ms: float | None = None) -> PaperBound:
    """The enumeration over every pair of device rows (module docstring); two DNNs, latency.

    ``upper_ms``: the makespan of a known schedule (default: the serial schedule,
    :func:`~npusched.policies.mapping.instance.serial_bound_ms`). A pair whose contention-free
    bound (:func:`contention_free_bound`) already reaches it cannot hold a better schedule, so
    it keeps that bound and its LP is skipped (201 of 320 pairs of the artifact's instance):
    every pair bound stays valid, the least one is unchanged."""
    from npusched.policies.mapping.instance_model import serial_bound_ms

    if len(inst.dnns) != 2 or inst.objective != "latency":
        raise ValueError("paper_lower_bound needs a two-DNN latency instance")
    t0 = time.perf_counter()
    upper = serial_bound_ms(inst, "paper") if upper_ms is None else upper_ms
    a, b = inst.dnns
    slowdowns = tuple((inst.slowdown(n, 0), inst.slowdown(n, 1)) for n in range(2))
    pairs = []
    best = math.inf
    for ra in _assignments(a.n_groups, inst.max_transitions):
        for rb in _assignments(b.n_groups, inst.max_transitions):
            v = contention_free_bound(inst, (ra, rb))
            if v < upper:
                v = max(v, pair_lower_bound(inst, (ra, rb), slowdowns))
            pairs.append(((ra, rb), v))
            best = min(best, v)
    pairs.sort(key=lambda p: p[1])
    return PaperBound(best, tuple(pairs), time.perf_counter() - t0)
