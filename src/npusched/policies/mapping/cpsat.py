"""HaX-CoNN's formulation in OR-Tools CP-SAT (see :mod:`npusched.policies.mapping.model`).

Interval variables carry the timing: each group has one start, end and (variable) size, and one
*optional* interval per accelerator whose presence literal is ``x[n, g, a]``; ``AddNoOverlap``
per accelerator enforces Eq. 9. The solver can be seeded with a schedule (``AddHint`` on every
assignment literal and time), reports its incumbents through a solution callback (anytime use,
D-HaX-CoNN) and returns the proven bound, so the caller can state the optimality gap.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from ortools.sat.python import cp_model

from npusched.errors import ConfigError
from npusched.policies.mapping.execute import ExecutionResult, Schedule, Workload
from npusched.policies.mapping.model import COEF_SCALE, INV_SCALE, IntInstance, to_int_instance

__all__ = ["SolveOutcome", "solve_cpsat"]

GOALS = ("latency", "throughput")


@dataclass(frozen=True)
class SolveOutcome:
    """What an exact solver returned.

    Attributes:
        schedule: the best schedule found (None if none was found in the time limit).
        status: ``"OPTIMAL"``, ``"FEASIBLE"`` or ``"UNKNOWN"``.
        objective_s: the model's objective of ``schedule`` in seconds (``latency``) or
            frames per second (``throughput``: sum of 1/T_n).
        bound_s: the proven bound in the same unit.
        solve_s: wall-clock seconds spent in the solver.
        incumbents: ``(seconds since start, objective)`` of every improving solution (seconds
            of the solve's ``clock``).
    """

    schedule: Schedule | None
    status: str
    objective_s: float
    bound_s: float
    solve_s: float
    incumbents: tuple[tuple[float, float], ...] = field(default=())

    @property
    def gap(self) -> float:
        """Relative optimality gap ``|objective - bound| / |objective|`` (0 when proven)."""
        if self.status == "OPTIMAL":
            return 0.0
        if self.schedule is None or not np.isfinite(self.objective_s) or self.objective_s == 0:
            return float("inf")
        return abs(self.objective_s - self.bound_s) / abs(self.objective_s)


class _Model:
    """The CP-SAT model of one instance; ``vars`` are kept for hints and decoding."""

    def __init__(
        self, inst: IntInstance, goal: str, max_transitions: int | None, exact: bool = True
    ) -> None:
        if goal not in GOALS:
            raise ConfigError(f"goal={goal!r}; allowed: {', '.join(GOALS)}")
        m = cp_model.CpModel()
        H, A = inst.horizon, inst.n_acc
        self.inst, self.model, self.goal, self.exact = inst, m, goal, exact
        self.x: list[list[list[cp_model.IntVar]]] = []
        self.st: list[list[cp_model.IntVar]] = []
        self.et: list[list[cp_model.IntVar]] = []
        self.extra: list[list[cp_model.IntVar]] = []
        ivs: list[list[cp_model.IntervalVar]] = [[] for _ in range(A)]
        sizes: dict[int, list[cp_model.IntVar]] = {}
        contr: list[list[list[cp_model.LinearExprT]]] = []
        for n in range(inst.n_tasks):
            G = inst.groups(n)
            xs, sts, ets, exs = [], [], [], []
            for g in range(G):
                xg = [m.new_bool_var(f"x{n}_{g}_{a}") for a in range(A)]
                m.add_exactly_one(xg)
                s = m.new_int_var(0, H, f"st{n}_{g}")
                e = m.new_int_var(0, H, f"et{n}_{g}")
                ex = m.new_int_var(0, H, f"ex{n}_{g}")
                size = m.new_int_var(1, H, f"d{n}_{g}")
                sizes.setdefault(n, []).append(size)
                m.add(size == sum(int(inst.t[n][g, a]) * xg[a] for a in range(A)) + ex)
                m.add(e == s + size)
                for a in range(A):
                    ivs[a].append(m.new_optional_interval_var(s, size, e, xg[a], f"i{n}_{g}_{a}"))
                xs.append(xg)
                sts.append(s)
                ets.append(e)
                exs.append(ex)
            self.x.append(xs)
            self.st.append(sts)
            self.et.append(ets)
            self.extra.append(exs)
            contr.append([[] for _ in range(G)])
        for a in range(A):
            m.add_no_overlap(ivs[a])
        # chains, transitions (Eq. 2-3), restricted space
        self.tr: list[list[cp_model.IntVar]] = []
        for n in range(inst.n_tasks):
            G = inst.groups(n)
            m.add(self.st[n][0] >= inst.release[n])
            trs = []
            for g in range(G - 1):
                m.add(self.st[n][g + 1] >= self.et[n][g])
                tr = m.new_bool_var(f"tr{n}_{g}")
                for a in range(A):
                    m.add(tr >= self.x[n][g][a] - self.x[n][g + 1][a])
                    for b in range(A):
                        c = int(inst.trans[n][g, a, b])
                        if a != b and c > 0:
                            m.add(self.st[n][g + 1] >= self.et[n][g] + c).only_enforce_if(
                                [self.x[n][g][a], self.x[n][g + 1][b]]
                            )
                trs.append(tr)
            self.tr.append(trs)
            if max_transitions is not None and trs:
                m.add(sum(trs) <= max_transitions)
            for d in inst.after[n]:
                last = inst.groups(d) - 1
                m.add(self.st[n][0] >= self.et[d][last])
                for a in range(A):
                    for b in range(A):
                        c = int(inst.dep_trans[n][d][a, b])
                        if a != b and c > 0:
                            m.add(self.st[n][0] >= self.et[d][last] + c).only_enforce_if(
                                [self.x[d][last][a], self.x[n][0][b]]
                            )
        # contention (Eq. 7-8), see model.py for the linearisation
        pair_ov: dict[tuple[int, int], list[cp_model.IntVar]] = {}
        low: list[list[list[cp_model.LinearExprT]]] = [
            [[] for _ in range(inst.groups(n))] for n in range(inst.n_tasks)
        ]
        self.size = sizes
        for (n, k), coef in inst.coef.items():
            if k < n:
                continue
            for g in range(inst.groups(n)):
                for h in range(inst.groups(k)):
                    c_nk = coef[g, :, h, :]
                    c_kn = inst.coef[(k, n)][h, :, g, :]
                    if not c_nk.any() and not c_kn.any():
                        continue
                    if n in inst.after[k] or k in inst.after[n]:
                        continue  # a producer and its consumer never overlap
                    lo = m.new_int_var(0, H, "")
                    hi = m.new_int_var(0, H, "")
                    m.add_min_equality(lo, [self.et[n][g], self.et[k][h]])
                    m.add_max_equality(hi, [self.st[n][g], self.st[k][h]])
                    ov = m.new_int_var(0, H, f"ov{n}_{g}_{k}_{h}")
                    m.add_max_equality(ov, [0, lo - hi])
                    pair_ov.setdefault((n, k), []).append(ov)
                    # overlap implies different accelerators (NoOverlap), so each side loses at
                    # least the smallest coefficient over those pairs: a linear cut for the LP
                    off = ~np.eye(A, dtype=bool)
                    low[n][g].append(int(c_nk[off].min()) * ov)
                    low[k][h].append(int(c_kn[off.T].min()) * ov)
                    for a in range(A):
                        for b in range(A):
                            if a == b or (c_nk[a, b] == 0 and c_kn[b, a] == 0):
                                continue
                            p = m.new_bool_var("")
                            m.add_bool_and([self.x[n][g][a], self.x[k][h][b]]).only_enforce_if(p)
                            m.add_bool_or(
                                [self.x[n][g][a].negated(), self.x[k][h][b].negated()]
                            ).only_enforce_if(p.negated())
                            z = m.new_int_var(0, H, "")
                            m.add(z == ov).only_enforce_if(p)
                            m.add(z == 0).only_enforce_if(p.negated())
                            if c_nk[a, b]:
                                contr[n][g].append(int(c_nk[a, b]) * z)
                            if c_kn[b, a]:
                                contr[k][h].append(int(c_kn[b, a]) * z)
        for n in range(inst.n_tasks):
            for g in range(inst.groups(n)):
                terms = contr[n][g]
                if not terms:
                    m.add(self.extra[n][g] == 0)
                    continue
                total = sum(terms)
                m.add(COEF_SCALE * self.extra[n][g] >= sum(low[n][g]) - COEF_SCALE // 2)
                half = COEF_SCALE // 2
                m.add(COEF_SCALE * self.extra[n][g] >= total - half)
                if self.exact:
                    m.add(COEF_SCALE * self.extra[n][g] <= total + half)
        # tightening: the busy time of two tasks fits in [0, end of the later one], so their
        # groups overlap for at least busy_n + busy_k - max(end_n, end_k) in total
        self.pair_ov = pair_ov
        # symmetry: interchangeable tasks finish in index order
        for n, k in inst.identical:
            m.add(self.et[n][-1] <= self.et[k][-1])
        # search: assign accelerators, then start every group as early as possible (a
        # list-scheduling dive that yields a first incumbent at once)
        m.add_decision_strategy(
            [v for xs in self.x for xg in xs for v in xg],
            cp_model.CHOOSE_FIRST,
            cp_model.SELECT_MAX_VALUE,
        )
        m.add_decision_strategy(
            [v for row in self.st for v in row],
            cp_model.CHOOSE_LOWEST_MIN,
            cp_model.SELECT_MIN_VALUE,
        )
        # objective (Eq. 10 / 11)
        self.lat = [
            self.et[n][-1] - inst.release[n] for n in range(inst.n_tasks)
        ]
        if goal == "latency":
            self.obj = m.new_int_var(0, H, "makespan")
            for expr in self.lat:
                m.add(self.obj >= expr)
            for (n, k), ovs in pair_ov.items():
                if not inst.release[n] and not inst.release[k]:
                    m.add(sum(ovs) >= sum(sizes[n]) + sum(sizes[k]) - self.obj)
            m.minimize(self.obj)
        else:
            invs = []
            for n, expr in enumerate(self.lat):
                tn = m.new_int_var(1, H, f"T{n}")
                m.add(tn == expr)
                inv = m.new_int_var(0, INV_SCALE, f"inv{n}")
                m.add_division_equality(inv, INV_SCALE, tn)
                invs.append(inv)
            self.obj = m.new_int_var(0, INV_SCALE * inst.n_tasks, "sum_inv")
            m.add(self.obj == sum(invs))
            m.maximize(self.obj)

    def to_seconds(self, value: float) -> float:
        if self.goal == "latency":
            return value * self.inst.tick_s
        return value / INV_SCALE / self.inst.tick_s

    def hint(self, schedule: Schedule, result: ExecutionResult | None) -> None:
        m, inst = self.model, self.inst
        for n, row in enumerate(schedule.assignment):
            for g, a in enumerate(row):
                for b in range(inst.n_acc):
                    m.add_hint(self.x[n][g][b], int(a == b))
                if result is not None:
                    m.add_hint(self.st[n][g], round(result.start_s[n][g] / inst.tick_s))
                    m.add_hint(self.et[n][g], round(result.end_s[n][g] / inst.tick_s))
            for g in range(len(row) - 1):
                m.add_hint(self.tr[n][g], int(row[g] != row[g + 1]))

    def decode(self, value: Callable[[cp_model.IntVar], int]) -> Schedule:
        inst = self.inst
        assign = []
        items: list[list[tuple[int, int, int]]] = [[] for _ in range(inst.n_acc)]
        for n in range(inst.n_tasks):
            row = []
            for g in range(inst.groups(n)):
                a = next(a for a in range(inst.n_acc) if value(self.x[n][g][a]))
                row.append(a)
                items[a].append((value(self.st[n][g]), n, g))
            assign.append(tuple(row))
        order = tuple(tuple((n, g) for _, n, g in sorted(q)) for q in items)
        return Schedule(tuple(assign), order)


class _Recorder(cp_model.CpSolverSolutionCallback):
    def __init__(
        self,
        mdl: _Model,
        t0: float,
        on_solution: Callable[[Schedule, float, float], None] | None,
        clock: str = "wall",
    ) -> None:
        super().__init__()
        self.mdl, self.t0, self.on_solution, self.clock = mdl, t0, on_solution, clock
        self.seen: list[tuple[float, float]] = []

    def on_solution_callback(self) -> None:
        if self.clock == "deterministic":
            elapsed = float(self.deterministic_time)
        else:
            elapsed = time.perf_counter() - self.t0
        obj = self.mdl.to_seconds(self.objective_value)
        self.seen.append((elapsed, obj))
        if self.on_solution is not None:
            self.on_solution(self.mdl.decode(self.value), elapsed, obj)


def solve_cpsat(
    workload: Workload,
    goal: str = "latency",
    *,
    max_transitions: int | None = None,
    time_limit_s: float = 10.0,
    hint: Schedule | None = None,
    hint_result: ExecutionResult | None = None,
    workers: int = 1,
    random_seed: int = 0,
    on_solution: Callable[[Schedule, float, float], None] | None = None,
    contention: bool = True,
    horizon_ticks: int = 2_000,
    exact: bool = True,
    clock: str = "wall",
    limit_includes_build: bool = False,
) -> SolveOutcome:
    """Solve the HaX-CoNN model of ``workload`` with CP-SAT.

    Args:
        goal: ``"latency"`` (Eq. 11) or ``"throughput"`` (Eq. 10).
        max_transitions: at most this many accelerator changes per task (restricted space);
            None = free (any group on any accelerator).
        time_limit_s: wall-clock limit in seconds.
        hint: a schedule to start from (``AddHint``); ``hint_result`` its execution (times).
        workers: CP-SAT search workers (1 = deterministic and fair on a shared machine).
        on_solution: called with ``(schedule, seconds since start, objective)`` per incumbent.
        contention: False drops the contention terms (a contention-unaware optimum).
        horizon_ticks: time resolution (see :func:`~npusched.policies.mapping.model.to_int_instance`).
        exact: True pins each group's contention time to the rounded sum (``=``); False keeps
            only the lower bound (``>=``), a relaxation in which any schedule is feasible at
            once (extra time may be over-stated off the critical path, never under-stated), so
            CP-SAT finds incumbents far sooner; the objective then bounds the model's from above.
        clock: ``"wall"`` - ``time_limit_s`` and the incumbents' times are wall-clock seconds;
            ``"deterministic"`` - both are CP-SAT's deterministic time (its work counter;
            3-6 wall seconds per unit for these models on a loaded 2-core machine), so with one worker and a fixed seed a rerun finds the
            same incumbents at the same times (D-HaX-CoNN's reproducible swaps).
        limit_includes_build: a wall-clock ``time_limit_s`` also covers building the model (the
            solve gets what is left, at least 10 ms): a caller's whole budget.
    """
    if clock not in ("wall", "deterministic"):
        raise ConfigError(f"clock={clock!r}; allowed: wall, deterministic")
    t_build = time.perf_counter()
    inst = to_int_instance(workload, contention=contention, horizon_ticks=horizon_ticks)
    mdl = _Model(inst, goal, max_transitions, exact)
    if hint is not None:
        mdl.hint(hint, hint_result)
    solver = cp_model.CpSolver()
    if clock == "deterministic":
        solver.parameters.max_deterministic_time = float(time_limit_s)
        solver.parameters.max_time_in_seconds = max(60.0, 20.0 * float(time_limit_s))  # safety
    elif limit_includes_build:
        left = float(time_limit_s) - (time.perf_counter() - t_build)
        solver.parameters.max_time_in_seconds = max(0.01, left)
    else:
        solver.parameters.max_time_in_seconds = float(time_limit_s)
    solver.parameters.num_search_workers = int(workers)
    solver.parameters.random_seed = int(random_seed)
    if workers == 1:  # one worker: follow the model's decision strategy (see _Model)
        solver.parameters.search_branching = cp_model.FIXED_SEARCH
    t0 = time.perf_counter()
    rec = _Recorder(mdl, t0, on_solution, clock)
    status = solver.solve(mdl.model, rec)
    elapsed = time.perf_counter() - t0
    name = solver.status_name(status)
    if status in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        sched = mdl.decode(solver.value)
        return SolveOutcome(
            sched,
            name,
            mdl.to_seconds(solver.objective_value),
            mdl.to_seconds(solver.best_objective_bound),
            elapsed,
            tuple(rec.seen),
        )
    return SolveOutcome(None, name, float("nan"), float("nan"), elapsed, tuple(rec.seen))
