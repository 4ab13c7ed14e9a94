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

from npusched.policies.mapping.instance import MapInstance, _assignments

__all__ = ["PaperBound", "pair_lower_bound", "paper_lower_bound"]


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

    def open_pairs(self, incumbent_ms: float) -> int:
        """How many pairs a schedule of ``incumbent_ms`` has not closed (bound below it)."""
        return sum(1 for _, b in self.pairs if b < incumbent_ms - 1e-9)


def pair_lower_bound(inst: MapInstance, rows: tuple[tuple[int, ...], tuple[int, ...]]) -> float:
    """Lower bound (ms) on the makespan of every ``paper``-semantics timing of the mapping
    ``rows`` (per DNN, 0 = GPU / 1 = DLA per group) of a two-DNN instance (module docstring)."""
    from ortools.linear_solver import pywraplp

    if len(inst.dnns) != 2:
        raise ValueError("pair_lower_bound needs a two-DNN instance")
    lp = pywraplp.Solver.CreateSolver("GLOP")
    inf = lp.infinity()
    mk = lp.NumVar(0.0, inf, "M")
    busy = []
    load: dict[int, list[object]] = {0: [], 1: []}
    seen: dict[tuple[int, int], list[object]] = {}
    for n, (d, row) in enumerate(zip(inst.dnns, rows, strict=True)):
        s = (inst.slowdown(n, 0), inst.slowdown(n, 1))
        tau = sum(d.transition_ms[g - 1] for g in range(1, d.n_groups) if row[g] != row[g - 1])
        terms = []
        for g, dev in enumerate(row):
            t = float(d.time_ms(dev)[g])
            sg = float(s[dev][g])
            ov = lp.NumVar(0.0, t * sg, "")
            dur = t + (1.0 - 1.0 / sg) * ov
            terms.append(dur)
            load[dev].append(dur)
            seen.setdefault((n, dev), []).append(ov)
        r = lp.Sum(terms)
        busy.append(r)
        lp.Add(mk >= r + tau)
    overlap = []
    for dev in (0, 1):  # A on dev beside B on the other accelerator
        a = lp.Sum(seen.get((0, dev), []))
        b = lp.Sum(seen.get((1, 1 - dev), []))
        lp.Add(a == b)
        overlap.append(a)
    lp.Add(mk >= busy[0] + busy[1] - overlap[0] - overlap[1])
    for dev in (0, 1):
        if load[dev]:
            lp.Add(mk >= lp.Sum(load[dev]))
    lp.Minimize(mk)
    if lp.Solve() != pywraplp.Solver.OPTIMAL:  # pragma: no cover - the LP is always feasible
        raise RuntimeError("GLOP did not solve the bound LP")
    # GLOP's tolerance is about 1e-7 relative: step down so the bound stays valid
    return max(0.0, mk.solution_value() * (1.0 - 1e-6))


def paper_lower_bound(inst: MapInstance) -> PaperBound:
    """The enumeration over every pair of device rows (module docstring); two DNNs, latency."""
    if len(inst.dnns) != 2 or inst.objective != "latency":
        raise ValueError("paper_lower_bound needs a two-DNN latency instance")
    t0 = time.perf_counter()
    a, b = inst.dnns
    pairs = []
    best = math.inf
    for ra in _assignments(a.n_groups, inst.max_transitions):
        for rb in _assignments(b.n_groups, inst.max_transitions):
            v = pair_lower_bound(inst, (ra, rb))
            pairs.append(((ra, rb), v))
            best = min(best, v)
    pairs.sort(key=lambda p: p[1])
    return PaperBound(best, tuple(pairs), time.perf_counter() - t0)
