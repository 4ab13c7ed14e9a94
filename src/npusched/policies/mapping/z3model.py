"""HaX-CoNN's formulation in Z3 (the paper's solver), the same integer model as CP-SAT's.

Same variables and constraints as :mod:`npusched.policies.mapping.cpsat` (see
:mod:`npusched.policies.mapping.model`), written as SMT: Eq. 9 as pairwise disjunctions
``not both on a or e1 <= s2 or e2 <= s1``, overlaps with ``If``, the objective through
``Optimize``. Needs the optional ``z3-solver`` package (extra ``[solver]``).
"""

from __future__ import annotations

import time
from typing import Any

from npusched.errors import ConfigError
from npusched.policies.mapping.cpsat import GOALS, SolveOutcome
from npusched.policies.mapping.execute import Schedule, Workload
from npusched.policies.mapping.model import COEF_SCALE, INV_SCALE, to_int_instance

__all__ = ["solve_z3"]


def _z3() -> Any:
    try:
        import z3
    except ImportError:  # pragma: no cover - depends on the environment
        raise ConfigError(
            "the Z3 solver needs the z3-solver package: pip install 'npusched[solver]'"
        ) from None
    return z3


def solve_z3(
    workload: Workload,
    goal: str = "latency",
    *,
    max_transitions: int | None = None,
    time_limit_s: float = 10.0,
    contention: bool = True,
    horizon_ticks: int = 2_000,
    random_seed: int = 0,
) -> SolveOutcome:
    """Solve the HaX-CoNN model with Z3's ``Optimize`` (arguments as :func:`solve_cpsat`).

    ``status`` is ``"OPTIMAL"`` when Z3 finished (``sat``), ``"FEASIBLE"`` when it stopped at
    the time limit with a model, else ``"UNKNOWN"``; Z3 reports no bound on a time-out, so
    ``bound_s`` is then NaN.
    """
    if goal not in GOALS:
        raise ConfigError(f"goal={goal!r}; allowed: {', '.join(GOALS)}")
    z3 = _z3()
    inst = to_int_instance(workload, contention=contention, horizon_ticks=horizon_ticks)
    A, H = inst.n_acc, inst.horizon
    opt = z3.Optimize()
    opt.set("timeout", int(time_limit_s * 1000))
    z3.set_param("smt.random_seed", int(random_seed))
    x = [[[z3.Bool(f"x{n}_{g}_{a}") for a in range(A)] for g in range(inst.groups(n))]
         for n in range(inst.n_tasks)]
    st = [[z3.Int(f"st{n}_{g}") for g in range(inst.groups(n))] for n in range(inst.n_tasks)]
    et = [[z3.Int(f"et{n}_{g}") for g in range(inst.groups(n))] for n in range(inst.n_tasks)]
    ex = [[z3.Int(f"ex{n}_{g}") for g in range(inst.groups(n))] for n in range(inst.n_tasks)]
    contr: list[list[list[Any]]] = [[[] for _ in range(inst.groups(n))] for n in range(inst.n_tasks)]
    for n in range(inst.n_tasks):
        G = inst.groups(n)
        opt.add(st[n][0] >= inst.release[n])
        trs = []
        for g in range(G):
            opt.add(z3.PbEq([(x[n][g][a], 1) for a in range(A)], 1))
            opt.add(st[n][g] >= 0, et[n][g] <= H, ex[n][g] >= 0)
            t_expr = z3.Sum([z3.If(x[n][g][a], int(inst.t[n][g, a]), 0) for a in range(A)])
            opt.add(et[n][g] == st[n][g] + t_expr + ex[n][g])
        for g in range(G - 1):
            opt.add(st[n][g + 1] >= et[n][g])
            for a in range(A):
                for b in range(A):
                    c = int(inst.trans[n][g, a, b])
                    if a != b and c > 0:
                        opt.add(z3.Implies(z3.And(x[n][g][a], x[n][g + 1][b]),
                                           st[n][g + 1] >= et[n][g] + c))
            trs.append(z3.Not(z3.And([x[n][g][a] == x[n][g + 1][a] for a in range(A)])))
        if max_transitions is not None and trs:
            opt.add(z3.PbLe([(t, 1) for t in trs], max_transitions))
        for d in inst.after[n]:
            last = inst.groups(d) - 1
            opt.add(st[n][0] >= et[d][last])
            for a in range(A):
                for b in range(A):
                    c = int(inst.dep_trans[n][d][a, b])
                    if a != b and c > 0:
                        opt.add(z3.Implies(z3.And(x[d][last][a], x[n][0][b]),
                                           st[n][0] >= et[d][last] + c))
    for n in range(inst.n_tasks):
        for k in range(n + 1, inst.n_tasks):
            dep = n in inst.after[k] or k in inst.after[n]
            for g in range(inst.groups(n)):
                for h in range(inst.groups(k)):
                    for a in range(A):  # Eq. 9
                        opt.add(z3.Or(z3.Not(x[n][g][a]), z3.Not(x[k][h][a]),
                                      et[n][g] <= st[k][h], et[k][h] <= st[n][g]))
                    if dep or (n, k) not in inst.coef:
                        continue
                    lo = z3.If(et[n][g] < et[k][h], et[n][g], et[k][h])
                    hi = z3.If(st[n][g] > st[k][h], st[n][g], st[k][h])
                    ov = z3.If(lo - hi > 0, lo - hi, 0)
                    c_nk, c_kn = inst.coef[(n, k)][g, :, h, :], inst.coef[(k, n)][h, :, g, :]
                    for a in range(A):
                        for b in range(A):
                            if a == b:
                                continue
                            both = z3.And(x[n][g][a], x[k][h][b])
                            if c_nk[a, b]:
                                contr[n][g].append(z3.If(both, int(c_nk[a, b]) * ov, 0))
                            if c_kn[b, a]:
                                contr[k][h].append(z3.If(both, int(c_kn[b, a]) * ov, 0))
    half = COEF_SCALE // 2
    for n in range(inst.n_tasks):
        for g in range(inst.groups(n)):
            total = z3.Sum(contr[n][g]) if contr[n][g] else z3.IntVal(0)
            opt.add(COEF_SCALE * ex[n][g] >= total - half, COEF_SCALE * ex[n][g] <= total + half)
    for n, k in inst.identical:
        opt.add(et[n][-1] <= et[k][-1])
    lat = [et[n][-1] - inst.release[n] for n in range(inst.n_tasks)]
    if goal == "latency":
        obj = z3.Int("makespan")
        for e in lat:
            opt.add(obj >= e)
        handle = opt.minimize(obj)
    else:
        invs = []
        for n, e in enumerate(lat):
            inv = z3.Int(f"inv{n}")
            opt.add(e >= 1, inv == INV_SCALE / e)
            invs.append(inv)
        obj = z3.Int("sum_inv")
        opt.add(obj == z3.Sum(invs))
        handle = opt.maximize(obj)
    t0 = time.perf_counter()
    res = opt.check()
    elapsed = time.perf_counter() - t0

    def to_s(v: int) -> float:
        return v * inst.tick_s if goal == "latency" else v / INV_SCALE / inst.tick_s

    status = "OPTIMAL" if res == z3.sat else "UNKNOWN"
    try:
        mdl = opt.model()
    except z3.Z3Exception:
        mdl = None
    if mdl is None or mdl.eval(obj, model_completion=True).as_long() is None:
        return SolveOutcome(None, "UNKNOWN", float("nan"), float("nan"), elapsed)
    if res != z3.sat:
        status = "FEASIBLE"
    assign = []
    items: list[list[tuple[int, int, int]]] = [[] for _ in range(A)]
    for n in range(inst.n_tasks):
        row = []
        for g in range(inst.groups(n)):
            a = next(
                (a for a in range(A) if z3.is_true(mdl.eval(x[n][g][a], model_completion=True))), 0
            )
            row.append(a)
            items[a].append((mdl.eval(st[n][g], model_completion=True).as_long(), n, g))
        assign.append(tuple(row))
    order = tuple(tuple((n, g) for _, n, g in sorted(q)) for q in items)
    value = to_s(mdl.eval(obj, model_completion=True).as_long())
    bound = value if status == "OPTIMAL" else float("nan")
    del handle
    return SolveOutcome(Schedule(tuple(assign), order), status, value, bound, elapsed)
