"""CP-SAT encodings of an instance file under the ``artifact`` and ``paper`` semantics.

See :mod:`npusched.policies.mapping.instance` for the semantics. Times are integer ticks of
``tick_ms``; every group time, slowed time and transition is rounded to a tick. ``x[n][g]`` is 1
when group ``g`` of DNN ``n`` runs on the GPU; ``y[n][g]`` (g >= 1) is 1 when it changes
accelerator after group ``g - 1``. Each accelerator runs one group at a time (``AddNoOverlap``
over optional intervals); under ``artifact`` semantics the artifact forbids overlaps only between
groups of different DNNs, which is the same constraint whenever ``max_transitions <= 1`` (a DNN's
groups on one accelerator are then consecutive, and its chain already separates them).
"""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np
from ortools.sat.python import cp_model

from npusched.policies.mapping.instance_bounds import PaperBound
from npusched.policies.mapping.instance_model import MapInstance, serial_bound_ms

__all__ = ["solve_cpsat_instance"]

COEF_SCALE = 1000
INV_Q = 10**12

Raw = tuple[
    tuple[tuple[int, ...], ...], list[list[float]], list[float], str, float
]


def solve_cpsat_instance(
    inst: MapInstance,
    semantics: str,
    *,
    time_limit_s: float,
    tick_ms: float,
    fixed: tuple[tuple[int, ...], ...] | None = None,
    bounds: PaperBound | None = None,
    union_cut: bool = True,
) -> Raw:
    """Solve; returns ``(devices, starts_ms, ends_ms, status, solve_s)``. ``bounds`` (``paper``
    semantics, two DNNs, latency): the enumeration's per-mapping lower bounds, added as
    ``makespan >= bound`` implied by each pair of device rows
    (:mod:`npusched.policies.mapping.instance_bounds`)."""

    def ticks(v: float) -> int:
        return max(round(v / tick_ms), 0)

    m = cp_model.CpModel()
    N = len(inst.dnns)
    s_gpu = [inst.slowdown(n, 0) for n in range(N)]
    s_dla = [inst.slowdown(n, 1) for n in range(N)]
    horizon = 0
    for n, d in enumerate(inst.dnns):
        worst = np.maximum(np.asarray(d.gpu_ms) * s_gpu[n], np.asarray(d.dla_ms) * s_dla[n])
        horizon += ticks(float(worst.sum()) + sum(d.transition_ms)) + d.n_groups + 2
    if inst.objective == "latency":
        # every DNN on one accelerator, one DNN after the other: nothing overlaps, so this
        # schedule is feasible and bounds the optimum; a tight horizon speeds CP-SAT up a lot
        serial = serial_bound_ms(inst, semantics, fixed)
        horizon = min(horizon, ticks(serial) + sum(d.n_groups for d in inst.dnns) + 2)
    x = [[m.new_bool_var(f"x{n}_{g}") for g in range(d.n_groups)] for n, d in enumerate(inst.dnns)]
    if fixed is not None:
        for row, frow in zip(x, fixed, strict=True):
            for v, dev in zip(row, frow, strict=True):
                m.add(v == (1 if dev == 0 else 0))
    y: list[list[cp_model.IntVar | None]] = []
    st = [[m.new_int_var(0, horizon, f"st{n}_{g}") for g in range(d.n_groups)]
          for n, d in enumerate(inst.dnns)]
    ends: list[cp_model.IntVar] = []
    ivs: list[list[cp_model.IntervalVar]] = [[], []]
    et_all: list[list[cp_model.IntVar]] = []
    for n, d in enumerate(inst.dnns):
        yn: list[cp_model.IntVar | None] = [None]
        for g in range(1, d.n_groups):
            v = m.new_bool_var(f"y{n}_{g}")
            a, b = x[n][g - 1], x[n][g]
            m.add(v >= a - b)
            m.add(v >= b - a)
            m.add(v <= a + b)
            m.add(v <= 2 - a - b)
            yn.append(v)
        y.append(yn)
        if d.n_groups > 1:
            m.add(sum(v for v in yn[1:] if v is not None) <= inst.max_transitions)
        tg = [ticks(t) for t in d.gpu_ms]
        td = [ticks(t) for t in d.dla_ms]
        tr = [ticks(t) for t in d.transition_ms]
        et_n = []
        for g in range(d.n_groups):
            if semantics == "artifact":
                size = m.new_int_var(min(tg[g], td[g]), max(tg[g], td[g]), f"sz{n}_{g}")
                m.add(size == td[g] + (tg[g] - td[g]) * x[n][g])
            else:
                size = m.new_int_var(min(tg[g], td[g]), horizon, f"sz{n}_{g}")
            et = m.new_int_var(0, horizon, f"et{n}_{g}")
            m.add(et == st[n][g] + size)
            et_n.append(et)
            ivs[0].append(m.new_optional_interval_var(st[n][g], size, et, x[n][g], f"ig{n}_{g}"))
            ivs[1].append(
                m.new_optional_interval_var(st[n][g], size, et, x[n][g].negated(), f"id{n}_{g}")
            )
            if g >= 1:
                yv = y[n][g]
                assert yv is not None
                if semantics == "artifact":
                    cg = ticks(d.gpu_ms[g - 1] * float(s_gpu[n][g - 1]))
                    cd = ticks(d.dla_ms[g - 1] * float(s_dla[n][g - 1]))
                    m.add(st[n][g] >= st[n][g - 1] + cd + (cg - cd) * x[n][g] + tr[g - 1] * yv)
                else:
                    m.add(st[n][g] >= et_n[g - 1] + tr[g - 1] * yv)
        et_all.append(et_n)
        ends.append(et_n[-1])
    for dev in (0, 1):
        m.add_no_overlap(ivs[dev])
    mk = m.new_int_var(0, horizon, "makespan")
    m.add_max_equality(mk, ends)
    if semantics == "paper":
        ovs = _contention(m, inst, x, st, et_all, s_gpu, s_dla, horizon, tick_ms,
                          keep_all=union_cut)
        if union_cut:
            # the busy times of two DNNs intersect for at least R_n + R_k - makespan, and the
            # intersection is their overlap (same-accelerator pairs never overlap)
            for (n, k), pair_ovs in ovs.items():
                busy = [et_all[i][g] - st[i][g] for i in (n, k)
                        for g in range(inst.dnns[i].n_groups)]
                m.add(sum(pair_ovs) >= sum(busy) - mk)
    if inst.objective == "latency":
        if bounds is not None:
            _add_pair_bounds(m, x, mk, bounds, tick_ms)
        m.minimize(mk)
    else:
        invs = []
        for n, e in enumerate(ends):
            pos = m.new_int_var(1, horizon, f"T{n}")
            m.add(pos == e)
            inv = m.new_int_var(0, INV_Q, f"inv{n}")
            m.add_division_equality(inv, INV_Q, pos)
            invs.append(inv)
        m.maximize(sum(invs))
    _hint_serial(m, inst, x, st, ticks, fixed)
    solver = cp_model.CpSolver()
    solver.parameters.max_time_in_seconds = float(time_limit_s)
    solver.parameters.num_workers = 1
    solver.parameters.random_seed = 0
    if semantics == "paper":
        # no LP relaxation: the overlap disjunctions make it weak, and the union cut and the
        # pair bounds act by propagation. Measured on the artifact's instance: 2.2 s to the
        # proven optimum instead of 11 s; 2.2-4.7 s instead of 4-17 s on three variants of it
        solver.parameters.linearization_level = 0
    t0 = time.perf_counter()
    code = solver.solve(m)
    solve_s = time.perf_counter() - t0
    if code not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        from npusched.errors import SimulationError

        raise SimulationError(f"CP-SAT found no schedule in {time_limit_s} s")
    devices = tuple(
        tuple(0 if solver.value(v) else 1 for v in row) for row in x
    )
    starts = [[solver.value(v) * tick_ms for v in row] for row in st]
    end_ms = [solver.value(e) * tick_ms for e in ends]
    status = "optimal" if code == cp_model.OPTIMAL else "feasible"
    return devices, starts, end_ms, status, solve_s


def _add_pair_bounds(
    m: cp_model.CpModel,
    x: list[list[cp_model.IntVar]],
    mk: cp_model.IntVar,
    bounds: PaperBound,
    tick_ms: float,
) -> None:
    """One literal per device row of each DNN (``z[n][row]`` forces ``x`` to the row; exactly
    one per DNN, since the rows are every row the transition limit allows), and for each pair of
    rows ``makespan >= ceil(bound / tick)`` when both are chosen; the least bound holds always."""
    z: list[dict[tuple[int, ...], cp_model.IntVar]] = [{}, {}]
    for (ra, rb), _ in bounds.pairs:
        for n, row in ((0, ra), (1, rb)):
            if row not in z[n]:
                lit = m.new_bool_var(f"z{n}_{len(z[n])}")
                for g, dev in enumerate(row):
                    m.add_implication(lit, x[n][g] if dev == 0 else x[n][g].negated())
                z[n][row] = lit
    for n in (0, 1):
        m.add_exactly_one(z[n].values())
    m.add(mk >= math.ceil(bounds.bound_ms / tick_ms))
    for (ra, rb), b in bounds.pairs:
        need = math.ceil(b / tick_ms)
        if need > math.ceil(bounds.bound_ms / tick_ms):
            m.add(mk >= need).only_enforce_if([z[0][ra], z[1][rb]])


def _hint_serial(
    m: cp_model.CpModel,
    inst: MapInstance,
    x: list[list[cp_model.IntVar]],
    st: list[list[cp_model.IntVar]],
    ticks: Any,
    fixed: tuple[tuple[int, ...], ...] | None,
) -> None:
    """Hint the serial schedule: each DNN on its faster accelerator (summed standalone times,
    or the ``fixed`` mapping), one DNN after the other, every group spaced by its slowed time
    plus transition: nothing overlaps, so it is feasible under both semantics."""
    t0 = 0
    for n, d in enumerate(inst.dnns):
        if fixed is None:
            row = (0 if sum(d.gpu_ms) <= sum(d.dla_ms) else 1,) * d.n_groups
        else:
            row = fixed[n]
        s = (inst.slowdown(n, 0), inst.slowdown(n, 1))
        for g in range(d.n_groups):
            if g and row[g] != row[g - 1]:
                t0 += ticks(d.transition_ms[g - 1]) + 1
            m.add_hint(x[n][g], row[g] == 0)
            m.add_hint(st[n][g], t0)
            t0 += ticks(float(d.time_ms(row[g])[g] * s[row[g]][g])) + 1


def _contention(
    m: cp_model.CpModel,
    inst: MapInstance,
    x: list[list[cp_model.IntVar]],
    st: list[list[cp_model.IntVar]],
    et: list[list[cp_model.IntVar]],
    s_gpu: list[np.ndarray],
    s_dla: list[np.ndarray],
    horizon: int,
    tick_ms: float,
    keep_all: bool = False,
) -> dict[tuple[int, int], list[Any]]:
    """Eq. 7-8 for two accelerators: a group on accelerator ``a`` loses ``ov (1 - 1/s_a)`` for
    every overlap ``ov`` with a group of another DNN (necessarily on the other accelerator).

    Encoded as a *relaxation*: ``ov >= min(et) - max(st)``, ``ov >= 0`` and
    ``extra >= sum c ov`` (all coefficients >= 0). It is exact in the objective: the contention
    map is monotone in the end times, so any solution's ends are a post-fixpoint and the least
    fixpoint (what fluid execution gives, :func:`paper_ends`) is no later, keeps every chain and
    no-overlap constraint and ends no later; the caller re-times the solution to it."""
    N = len(inst.dnns)
    ovs: dict[tuple[int, int], list[Any]] = {}
    terms: dict[tuple[int, int], list[Any]] = {
        (n, g): [] for n in range(N) for g in range(inst.dnns[n].n_groups)
    }

    def coef(n: int, g: int) -> tuple[int, int]:
        cg = round((1.0 - 1.0 / float(s_gpu[n][g])) * COEF_SCALE)
        cd = round((1.0 - 1.0 / float(s_dla[n][g])) * COEF_SCALE)
        return cg, cd

    for n in range(N):
        for k in range(n + 1, N):
            for g in range(inst.dnns[n].n_groups):
                for h in range(inst.dnns[k].n_groups):
                    cg, cd = coef(n, g)
                    cg2, cd2 = coef(k, h)
                    if cg == cd == cg2 == cd2 == 0 and not keep_all:
                        continue
                    tag = f"{n}_{g}_{k}_{h}"
                    # min(e1, e2) - max(s1, s2) is the least of the four e - s: ov is at
                    # least one of them (a clause of four literals)
                    ov = m.new_int_var(0, horizon, f"ov{tag}")
                    ovs.setdefault((n, k), []).append(ov)
                    lits = []
                    for e_ in (et[n][g], et[k][h]):
                        for s_ in (st[n][g], st[k][h]):
                            lit = m.new_bool_var("")
                            m.add(ov >= e_ - s_).only_enforce_if(lit)
                            lits.append(lit)
                    m.add_bool_or(lits)
                    qg = m.new_int_var(0, horizon, f"qg{tag}")  # ov, n's group on the GPU
                    qd = m.new_int_var(0, horizon, f"qd{tag}")  # ov, n's group on the DLA
                    m.add(qg >= ov).only_enforce_if(x[n][g])
                    m.add(qd >= ov).only_enforce_if(x[n][g].negated())
                    terms[(n, g)].append(cg * qg + cd * qd)
                    terms[(k, h)].append(cd2 * qg + cg2 * qd)
    for n in range(N):
        d = inst.dnns[n]
        for g in range(d.n_groups):
            tg = max(round(d.gpu_ms[g] / tick_ms), 0)
            td = max(round(d.dla_ms[g] / tick_ms), 0)
            extra = m.new_int_var(0, horizon, f"ex{n}_{g}")
            if terms[(n, g)]:
                m.add(extra * COEF_SCALE >= sum(terms[(n, g)]))
            m.add(et[n][g] - st[n][g] == td + (tg - td) * x[n][g] + extra)
    return ovs
