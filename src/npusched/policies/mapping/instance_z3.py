"""Z3 encodings of an instance file under the ``artifact`` and ``paper`` semantics (exact
rationals; see :mod:`npusched.policies.mapping.instance`).

The mapping of a DNN is encoded by its first accelerator and its transition points
(``x[n][g]`` Booleans, at most ``max_transitions`` changes), times are ``Real``. Non-overlap on
an accelerator is the pairwise disjunction of Eq. 9 between groups of different DNNs (as the
artifact writes it). Eq. 10 (throughput) is nonlinear (``sum 1/T_n``); Z3 gets it as
``inv_n * T_n == 1`` with ``inv_n`` maximised, which it may not prove within the time limit
(status ``feasible``).

Under ``paper`` semantics (two DNNs, latency) the one-model encoding finds no schedule of the
artifact's instance within 20 s; :func:`solve_z3_paper_pairs` instead gives Z3 one small model
per transition configuration (the mapping fixed, every coefficient a constant), pruned by the
configurations' LP bounds, with tight makespan targets that Z3 decides quickly.
"""

from __future__ import annotations

import time
from fractions import Fraction
from typing import Any

from npusched.errors import ConfigError, SimulationError
from npusched.policies.mapping.instance_bounds import PaperBound
from npusched.policies.mapping.instance_model import MapInstance, serial_bound_ms

__all__ = ["solve_z3_instance", "solve_z3_paper_pairs"]

Raw = tuple[tuple[tuple[int, ...], ...], list[list[float]], list[float], str, float]


def _z3() -> Any:
    try:
        import z3
    except ImportError:  # pragma: no cover - depends on the environment
        raise ConfigError(
            "solver: z3 needs the z3-solver package; allowed: pip install 'npusched[solver]'"
        ) from None
    return z3


RESOLUTION = 10**6  # rationals in 1e-6 ms (1 ns): small denominators keep Z3's simplex fast


def _q(v: float) -> Fraction:
    return Fraction(round(float(v) * RESOLUTION), RESOLUTION)


def solve_z3_instance(
    inst: MapInstance,
    semantics: str,
    *,
    time_limit_s: float,
    fixed: tuple[tuple[int, ...], ...] | None = None,
    bounds: PaperBound | None = None,
) -> Raw:
    """Solve; returns ``(devices, starts_ms, ends_ms, status, solve_s)``. ``bounds``: as in
    :func:`~npusched.policies.mapping.instance_cpsat.solve_cpsat_instance`."""
    z3 = _z3()
    N = len(inst.dnns)
    opt = z3.Optimize()
    opt.set("timeout", int(time_limit_s * 1000))
    z3.set_param("smt.random_seed", 0)

    def R(v: float) -> Any:
        f = _q(v)
        return z3.RealVal(f"{f.numerator}/{f.denominator}")

    s_gpu = [inst.slowdown(n, 0) for n in range(N)]
    s_dla = [inst.slowdown(n, 1) for n in range(N)]
    x = [[z3.Bool(f"x{n}_{g}") for g in range(d.n_groups)] for n, d in enumerate(inst.dnns)]
    st = [[z3.Real(f"st{n}_{g}") for g in range(d.n_groups)] for n, d in enumerate(inst.dnns)]
    et = [[z3.Real(f"et{n}_{g}") for g in range(d.n_groups)] for n, d in enumerate(inst.dnns)]
    if fixed is not None:
        for row, frow in zip(x, fixed, strict=True):
            for v, a in zip(row, frow, strict=True):
                opt.add(v if a == 0 else z3.Not(v))
    ends = []
    for n, d in enumerate(inst.dnns):
        changes = []
        for g in range(d.n_groups):
            opt.add(st[n][g] >= 0)
            t = z3.If(x[n][g], R(d.gpu_ms[g]), R(d.dla_ms[g]))
            if semantics == "artifact":
                et[n][g] = st[n][g] + t  # occupancy: unslowed time (an expression, no variable)
            if g >= 1:
                ch = x[n][g] != x[n][g - 1]
                changes.append(ch)
                tr = z3.If(ch, R(d.transition_ms[g - 1]), R(0))
                if semantics == "artifact":
                    prev = z3.If(
                        x[n][g],
                        R(d.gpu_ms[g - 1] * float(s_gpu[n][g - 1])),
                        R(d.dla_ms[g - 1] * float(s_dla[n][g - 1])),
                    )
                    opt.add(st[n][g] >= st[n][g - 1] + prev + tr)
                else:
                    opt.add(st[n][g] >= et[n][g - 1] + tr)
        if changes and inst.max_transitions == 1:
            # the artifact's form: after a change, every later group stays where it went
            for g in range(1, d.n_groups):
                later = [x[n][k] == x[n][g] for k in range(g + 1, d.n_groups)]
                if later:
                    opt.add(z3.Implies(changes[g - 1], z3.And(*later)))
        elif changes:
            opt.add(z3.PbLe([(c, 1) for c in changes], inst.max_transitions))
        ends.append(et[n][-1])
    for n in range(N):
        for k in range(n + 1, N):
            for g in range(inst.dnns[n].n_groups):
                for h in range(inst.dnns[k].n_groups):
                    da, db = inst.dnns[n], inst.dnns[k]
                    if semantics == "artifact":  # the artifact's clauses, one per accelerator
                        for on, t1, t2 in ((True, da.gpu_ms[g], db.gpu_ms[h]),
                                           (False, da.dla_ms[g], db.dla_ms[h])):
                            lits = (z3.Not(x[n][g]), z3.Not(x[k][h])) if on else (x[n][g], x[k][h])
                            opt.add(z3.Or(*lits, st[n][g] + R(t1) <= st[k][h],
                                          st[k][h] + R(t2) <= st[n][g]))
                    else:
                        sep = z3.Or(et[n][g] <= st[k][h], et[k][h] <= st[n][g])
                        opt.add(z3.Implies(x[n][g] == x[k][h], sep))
    pair_ovs: dict[tuple[int, int], list[Any]] = {}
    if semantics == "paper":
        extra: dict[tuple[int, int], list[Any]] = {
            (n, g): [] for n in range(N) for g in range(inst.dnns[n].n_groups)
        }
        for n in range(N):
            for k in range(n + 1, N):
                for g in range(inst.dnns[n].n_groups):
                    for h in range(inst.dnns[k].n_groups):
                        # relaxed as in the CP-SAT encoding (exact in the objective)
                        lo = z3.If(st[n][g] >= st[k][h], st[n][g], st[k][h])
                        hi = z3.If(et[n][g] <= et[k][h], et[n][g], et[k][h])
                        ov = z3.Real(f"ov{n}_{g}_{k}_{h}")
                        opt.add(ov >= 0, ov >= hi - lo)
                        pair_ovs.setdefault((n, k), []).append(ov)
                        for (a, i), (b, j) in (((n, g), (k, h)), ((k, h), (n, g))):
                            # linear: a constant coefficient per branch (an If-valued
                            # coefficient times ov would be a nonlinear product for Z3)
                            cg = R(1.0 - 1.0 / float(s_gpu[a][i])) * ov
                            cd = R(1.0 - 1.0 / float(s_dla[a][i])) * ov
                            extra[(a, i)].append(z3.If(
                                x[a][i], z3.If(x[b][j], R(0), cg), z3.If(x[b][j], cd, R(0))))
        for n, d in enumerate(inst.dnns):
            for g in range(d.n_groups):
                t = z3.If(x[n][g], R(d.gpu_ms[g]), R(d.dla_ms[g]))
                ex = z3.Sum(extra[(n, g)]) if extra[(n, g)] else R(0)
                opt.add(et[n][g] >= st[n][g] + t + ex)
    if inst.objective == "latency":
        mk = ends[0]
        for e in ends[1:]:
            mk = z3.If(mk >= e, mk, e)
        if semantics == "paper":
            # the serial schedule (each DNN on one accelerator, one after the other) bounds it
            opt.add(mk <= R(serial_bound_ms(inst, semantics)))
            # the union cut (as in the CP-SAT encoding): two DNNs' busy times intersect for at
            # least R_n + R_k - makespan, and the intersection is their overlap
            for (n, k), ovl in pair_ovs.items():
                busy = [et[i][g] - st[i][g] for i in (n, k) for g in range(inst.dnns[i].n_groups)]
                opt.add(z3.Sum(ovl) >= z3.Sum(busy) - mk)
        if bounds is not None:  # the enumeration's bounds, implied by each pair of rows
            opt.add(mk >= R(bounds.bound_ms))
            for (ra, rb), pair_lb in bounds.pairs:
                if pair_lb > bounds.bound_ms:
                    match = [v if dev == 0 else z3.Not(v)
                             for row, xs in ((ra, x[0]), (rb, x[1]))
                             for v, dev in zip(xs, row, strict=True)]
                    opt.add(z3.Implies(z3.And(*match), mk >= R(pair_lb)))
        h = opt.minimize(mk)
    else:
        invs = []
        for n, e in enumerate(ends):
            inv = z3.Real(f"inv{n}")
            opt.add(inv * e == 1, inv > 0)
            invs.append(inv)
        h = opt.maximize(z3.Sum(invs))
    t0 = time.perf_counter()
    res = opt.check()
    solve_s = time.perf_counter() - t0
    if res == z3.unsat:
        raise SimulationError("Z3: the instance has no schedule (unsat)")
    try:
        model = opt.model()
    except z3.Z3Exception:
        model = None
    if model is None or len(model) == 0:
        raise SimulationError(f"Z3 found no schedule in {time_limit_s} s")
    del h

    def val(v: Any) -> float:
        r = model.eval(v, model_completion=True)
        return float(Fraction(str(r.as_fraction()))) if z3.is_rational_value(r) else float(
            r.approx(12).as_fraction()
        )

    devices = tuple(
        tuple(0 if z3.is_true(model.eval(v, model_completion=True)) else 1 for v in row)
        for row in x
    )
    starts = [[val(v) for v in row] for row in st]
    end_ms = [val(e) for e in ends]
    status = "optimal" if res == z3.sat else "feasible"
    return devices, starts, end_ms, status, solve_s


#: A device-row pair is closed when its lower bound is within this relative distance of the
#: incumbent (the rationals' resolution is 1e-6 ms; GLOP's bounds are stepped down by 1e-6).
PAIR_TOLERANCE = 2e-6


def _fixed_paper_model(z3: Any, inst: MapInstance, rows: tuple[tuple[int, ...], ...],
                       lower_ms: float) -> tuple[Any, Any, list[list[Any]], list[list[Any]]]:
    """The ``paper`` semantics with the mapping fixed to ``rows``, every coefficient a
    constant: chains, pairwise no-overlap on the shared accelerator, Eq. 7-8's overlap terms
    between groups on different accelerators (the relaxation of :func:`solve_z3_instance`),
    the union and per-accelerator load cuts, and ``makespan >= lower_ms`` (the pair's bound)."""
    def R(v: float) -> Any:
        f = _q(v)
        return z3.RealVal(f"{f.numerator}/{f.denominator}")

    N = len(inst.dnns)
    sol = z3.SolverFor("QF_LRA")
    st = [[z3.Real(f"st{n}_{g}") for g in range(d.n_groups)] for n, d in enumerate(inst.dnns)]
    et = [[z3.Real(f"et{n}_{g}") for g in range(d.n_groups)] for n, d in enumerate(inst.dnns)]
    coef: dict[tuple[int, int], float] = {}
    extra: dict[tuple[int, int], list[Any]] = {}
    for n, d in enumerate(inst.dnns):
        s = (inst.slowdown(n, 0), inst.slowdown(n, 1))
        for g, dev in enumerate(rows[n]):
            coef[(n, g)] = 1.0 - 1.0 / float(s[dev][g])
            extra[(n, g)] = []
            sol.add(st[n][g] >= 0)
            if g:
                tr = d.transition_ms[g - 1] if dev != rows[n][g - 1] else 0.0
                sol.add(st[n][g] >= et[n][g - 1] + R(tr))
    ovs: dict[tuple[int, int], list[Any]] = {}
    for n in range(N):
        for k in range(n + 1, N):
            for g in range(inst.dnns[n].n_groups):
                for h in range(inst.dnns[k].n_groups):
                    a, b = (n, g), (k, h)
                    if rows[n][g] == rows[k][h]:
                        sol.add(z3.Or(et[n][g] <= st[k][h], et[k][h] <= st[n][g]))
                        continue
                    ov = z3.Real(f"ov{n}_{g}_{k}_{h}")
                    sol.add(ov >= 0, z3.Or(*(ov >= et[i][x] - st[j][y]
                                             for i, x in (a, b) for j, y in (a, b))))
                    ovs.setdefault((n, k), []).append(ov)
                    for p in (a, b):
                        if coef[p] > 0:
                            extra[p].append(R(coef[p]) * ov)
    for (n, g), terms in extra.items():
        t = R(float(inst.dnns[n].time_ms(rows[n][g])[g]))
        sol.add(et[n][g] == st[n][g] + t + (z3.Sum(terms) if terms else R(0)))
    mk = z3.Real("makespan")
    for n in range(N):
        sol.add(mk >= et[n][-1])
    sol.add(mk >= R(lower_ms))
    for (n, k), pair_ovs in ovs.items():
        busy = [et[i][g] - st[i][g] for i in (n, k) for g in range(inst.dnns[i].n_groups)]
        sol.add(z3.Sum(pair_ovs) >= z3.Sum(busy) - mk)
    for dev in (0, 1):
        load = [et[n][g] - st[n][g] for n in range(N) for g in range(inst.dnns[n].n_groups)
                if rows[n][g] == dev]
        if load:
            sol.add(mk >= z3.Sum(load))
    return sol, mk, st, et


def _serial_schedule(
    inst: MapInstance,
) -> tuple[float, tuple[tuple[int, ...], ...], list[list[float]], list[float]]:
    """Each DNN wholly on its faster accelerator, one DNN after the other (the schedule of
    :func:`~npusched.policies.mapping.instance.serial_bound_ms` under ``paper``): nothing
    overlaps, so every group takes its standalone time. ``(makespan, rows, starts, ends)``."""
    t = 0.0
    rows, starts, ends = [], [], []
    for d in inst.dnns:
        dev = 0 if sum(d.gpu_ms) <= sum(d.dla_ms) else 1
        rows.append((dev,) * d.n_groups)
        row = []
        for g in range(d.n_groups):
            row.append(t)
            t += float(d.time_ms(dev)[g])
        starts.append(row)
        ends.append(t)
    return t, tuple(rows), starts, ends


#: The targets tried on a pair, as relative steps above its lower bound: Z3 decides a tight
#: target (``makespan <= bound (1 + step)``) far faster than a loose one (measured on the
#: artifact's instance: the best pair is ``sat`` at 3.4004 ms in 0.05 s, and ``unknown`` after
#: 5 s at 3.51 ms).
TARGET_STEPS = (1e-5, 1e-4, 1e-3, 1e-2, 3e-2)


def solve_z3_paper_pairs(
    inst: MapInstance, bounds: PaperBound, *, time_limit_s: float, slice_s: float = 0.25
) -> Raw:
    """Branch and bound over the transition configurations, Z3 on each (``paper`` semantics,
    two DNNs, latency).

    The incumbent starts as the serial schedule. The device-row pairs are taken in the order of
    their lower bounds (:mod:`npusched.policies.mapping.instance_bounds`); a pair whose bound
    reaches the incumbent (to :data:`PAIR_TOLERANCE`, relative) is closed without a solve. Each
    open pair gets a Z3 model with its mapping fixed (:func:`_fixed_paper_model`) and a ladder of
    targets ``makespan <= bound (1 + step)`` (:data:`TARGET_STEPS`), then the incumbent itself:
    ``sat`` lowers the incumbent and starts the ladder again below it, ``unsat`` raises the
    pair's bound to the target, ``unknown`` (after ``slice_s``) goes on to the next target. Pairs left open come back in later rounds
    with a doubled slice, until ``time_limit_s``. ``optimal``: every pair closed; otherwise
    ``feasible`` with the best schedule found. Returns as :func:`solve_z3_instance` (raw end
    times: the caller re-times them)."""
    z3 = _z3()
    z3.set_param("smt.random_seed", 0)
    t0 = time.perf_counter()
    best = _serial_schedule(inst)  # the incumbent to beat: nothing overlaps, feasible
    open_pairs = {rows: lb for rows, lb in bounds.pairs}
    models: dict[tuple[tuple[int, ...], ...], Any] = {}
    cur = slice_s

    def closed(lb: float) -> bool:
        return lb >= best[0] * (1.0 - PAIR_TOLERANCE)

    def val(model: Any, v: Any) -> float:
        r = model.eval(v, model_completion=True)
        return float(Fraction(str(r.as_fraction())))

    def rv(x: float) -> Any:
        f = _q(x)
        return z3.RealVal(f"{f.numerator}/{f.denominator}")

    while True:
        for rows in sorted(open_pairs, key=lambda r: open_pairs[r]):
            if closed(open_pairs[rows]):
                continue
            if rows not in models:
                models[rows] = _fixed_paper_model(z3, inst, rows, open_pairs[rows])
            sol, mk, st, et = models[rows]
            ladder = [*TARGET_STEPS, None]
            while ladder:
                step = ladder.pop(0)
                lb = open_pairs[rows]
                cap = best[0] * (1.0 - PAIR_TOLERANCE)
                target = cap if step is None else min(lb * (1.0 + step), cap)
                remaining = time_limit_s - (time.perf_counter() - t0)
                if closed(lb) or remaining <= 0:
                    break
                sol.push()
                sol.add(mk <= rv(target))
                sol.set("timeout", max(1, int(min(cur, remaining) * 1000)))
                res = sol.check()
                if res == z3.sat:
                    m = sol.model()
                    best = (val(m, mk), rows, [[val(m, v) for v in row] for row in st],
                            [val(m, row[-1]) for row in et])
                elif res == z3.unsat:
                    open_pairs[rows] = max(lb, target)
                sol.pop()
                if res == z3.sat:  # climb again from the bound, below the new incumbent
                    ladder = [*TARGET_STEPS, None]
                elif target >= cap:
                    break
        open_pairs = {r: lb for r, lb in open_pairs.items() if not closed(lb)}
        if not open_pairs or time.perf_counter() - t0 >= time_limit_s:
            break
        cur *= 2
    solve_s = time.perf_counter() - t0
    status = "feasible" if open_pairs else "optimal"
    return best[1], best[2], best[3], status, solve_s
