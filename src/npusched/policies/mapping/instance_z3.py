"""Z3 encodings of an instance file under the ``artifact`` and ``paper`` semantics (exact
rationals; see :mod:`npusched.policies.mapping.instance`).

The mapping of a DNN is encoded by its first accelerator and its transition points
(``x[n][g]`` Booleans, at most ``max_transitions`` changes), times are ``Real``. Non-overlap on
an accelerator is the pairwise disjunction of Eq. 9 between groups of different DNNs (as the
artifact writes it). Eq. 10 (throughput) is nonlinear (``sum 1/T_n``); Z3 gets it as
``inv_n * T_n == 1`` with ``inv_n`` maximised, which it may not prove within the time limit
(status ``feasible``).

Under ``paper`` semantics (two DNNs, latency) the one-model encoding finds no schedule of the
artifact's instance within 20 s; :func:`solve_z3_paper_pairs` instead gives Z3 small models per
transition configuration (the mapping fixed, every coefficient a constant, every disjunction
over order literals: :func:`_fixed_paper_model`), pruned by the configurations' LP bounds, with
tight makespan targets and proofs on a rounded-down relaxation. It proves the artifact's
instance optimal (3.400312 ms) in about 1.5-3 s on a loaded 2-core machine.
"""

from __future__ import annotations

import math
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
                       lower_ms: float, coef_den: int | None = None,
                       ) -> tuple[Any, Any, list[list[Any]], list[list[Any]]]:
    """The ``paper`` semantics of two DNNs with the mapping fixed to ``rows``, every
    coefficient a constant, every disjunction over *order literals* (times in ms, rationals).

    For each group ``i`` of DNN A and ``j`` of DNN B four Booleans name the order of their
    end points: ``a`` = ``st_i <= st_j``, ``b`` = ``et_i <= et_j``, ``c`` = ``et_i <= st_j`` (A's
    group first), ``d`` = ``et_j <= st_i`` (B's first); each literal and its negation imply the
    (non-strict) inequality. Given the literals the model is a conjunction of linear
    constraints: the chains, ``c or d`` on a shared accelerator, and on different accelerators
    the overlap ``ov >= min(et) - max(st)`` written as the one difference ``a`` and ``b`` select
    (``ov = 0`` when ``c`` or ``d``), which Eq. 7-8 charge at ``1 - 1/s`` to each group. Clauses
    that hold in every schedule (group times are > 0) let the SAT search propagate the order
    instead of the simplex: ``c -> a, b``; ``d -> not a, not b``; and the chains' monotonicity
    (``a_ij -> a_(i-1)j, a_i(j+1)``, the same for ``b`` and ``c``, and ``d_ij -> d_(i+1)j,
    d_i(j-1)``). Cuts, each valid for every schedule: a group overlaps the other DNN's (disjoint)
    groups for at most its own duration; the union cut; each accelerator's load; ``makespan >=
    lower_ms`` (the pair's bound); the union cut again on every pair of suffixes (A's groups from
    ``i``, B's from ``j``: they lie in ``[min(st_i, st_j), makespan]``, the literal ``a``
    names the minimum). ``coef_den``: the contention coefficients rounded *down* to that
    denominator and ``et >=`` instead of ``et ==``, a relaxation that admits every schedule of
    the exact model (for proofs). The model is written as SMT-LIB text and parsed, in a
    :class:`z3.Context` of its own (Z3's search depends on the terms a context already holds,
    so a fresh one makes every solve of a pair the same; the text is 5-10x faster to build
    than the Python API's terms). Measured on the artifact's instance: the pair the earlier
    encoding (an ``Or`` of four differences per overlap, no order literals) left ``unknown``
    after 20 s is ``unsat`` below the incumbent in 2.5 s without the suffix cuts and 0.5-1.9 s
    with them; without the per-group overlap cut, the union cut, or ``c``/``d`` on the
    cross-accelerator pairs, it stays ``unknown`` after 20 s."""
    if len(inst.dnns) != 2:
        raise ValueError("_fixed_paper_model needs a two-DNN instance")

    def R(v: float) -> str:
        f = _q(v)
        num = f"{abs(f.numerator)}.0" if f.denominator == 1 else \
            f"(/ {abs(f.numerator)}.0 {f.denominator}.0)"
        return f"(- {num})" if f.numerator < 0 else num

    def add(*terms: str) -> str:
        return "0.0" if not terms else terms[0] if len(terms) == 1 else f"(+ {' '.join(terms)})"

    out: list[str] = []
    decl: list[str] = []
    st = [[f"st{n}_{g}" for g in range(d.n_groups)] for n, d in enumerate(inst.dnns)]
    et = [[f"et{n}_{g}" for g in range(d.n_groups)] for n, d in enumerate(inst.dnns)]
    for row in (*st, *et):
        decl.extend(f"(declare-const {v} Real)" for v in row)
    coef: dict[tuple[int, int], float] = {}
    extra: dict[tuple[int, int], list[str]] = {}
    for n, d in enumerate(inst.dnns):
        s = (inst.slowdown(n, 0), inst.slowdown(n, 1))
        for g, dev in enumerate(rows[n]):
            coef[(n, g)] = 1.0 - 1.0 / float(s[dev][g])
            extra[(n, g)] = []
            out.append(f"(>= {st[n][g]} 0.0)")
            if g:
                tr = d.transition_ms[g - 1] if dev != rows[n][g - 1] else 0.0
                out.append(f"(>= {st[n][g]} (+ {et[n][g - 1]} {R(tr)}))")
    na, nb = inst.dnns[0].n_groups, inst.dnns[1].n_groups
    a, b, c, d_ = ([[f"{k}{i}_{j}" for j in range(nb)] for i in range(na)] for k in "abcd")
    for lits in (a, b, c, d_):
        decl.extend(f"(declare-const {v} Bool)" for row in lits for v in row)
    ovs: list[str] = []
    ov_at: dict[tuple[int, int], str] = {}
    per_group: dict[tuple[int, int], list[str]] = {p: [] for p in extra}
    for i in range(na):
        for j in range(nb):
            sa, ea, sb, eb = st[0][i], et[0][i], st[1][j], et[1][j]
            A, B, C, D = a[i][j], b[i][j], c[i][j], d_[i][j]
            for v, lo, hi in ((A, sa, sb), (B, ea, eb), (C, ea, sb), (D, eb, sa)):
                out.append(f"(=> {v} (<= {lo} {hi}))")
                out.append(f"(=> (not {v}) (<= {hi} {lo}))")
            out.extend((f"(=> {C} {A})", f"(=> {C} {B})", f"(=> {D} (not {A}))",
                        f"(=> {D} (not {B}))"))
            for lits in (a, b, c):
                if i:
                    out.append(f"(=> {lits[i][j]} {lits[i - 1][j]})")
                if j + 1 < nb:
                    out.append(f"(=> {lits[i][j]} {lits[i][j + 1]})")
            if i + 1 < na:
                out.append(f"(=> {D} {d_[i + 1][j]})")
            if j:
                out.append(f"(=> {D} {d_[i][j - 1]})")
            if rows[0][i] == rows[1][j]:
                out.append(f"(or {C} {D})")
                continue
            ov = f"ov{i}_{j}"
            decl.append(f"(declare-const {ov} Real)")
            out.append(f"(>= {ov} 0.0)")
            out.append(f"(=> (or {C} {D}) (= {ov} 0.0))")
            out.append(f"(=> (and {A} {B}) (>= {ov} (- {ea} {sb})))")
            out.append(f"(=> (and {A} (not {B})) (>= {ov} (- {eb} {sb})))")
            out.append(f"(=> (and (not {A}) {B}) (>= {ov} (- {ea} {sa})))")
            out.append(f"(=> (and (not {A}) (not {B})) (>= {ov} (- {eb} {sa})))")
            ovs.append(ov)
            ov_at[(i, j)] = ov
            for p in ((0, i), (1, j)):
                per_group[p].append(ov)
                if coef_den is not None:
                    num = math.floor(coef[p] * coef_den)
                    if num > 0:
                        extra[p].append(f"(* (/ {num}.0 {coef_den}.0) {ov})")
                elif coef[p] > 0:
                    extra[p].append(f"(* {R(coef[p])} {ov})")
    dur = [[f"(- {et[n][g]} {st[n][g]})" for g in range(inst.dnns[n].n_groups)] for n in (0, 1)]
    for (n, g), terms in extra.items():
        t = R(float(inst.dnns[n].time_ms(rows[n][g])[g]))
        rel = "=" if coef_den is None else ">="
        out.append(f"({rel} {et[n][g]} {add(st[n][g], t, *terms)})")
    for (n, g), group_ovs in per_group.items():
        if group_ovs:
            out.append(f"(<= {add(*group_ovs)} {dur[n][g]})")
    decl.append("(declare-const makespan Real)")
    for n in range(2):
        out.append(f"(>= makespan {et[n][-1]})")
    out.append(f"(>= makespan {R(lower_ms)})")
    for i in range(na):  # the union cut, (0, 0) on the whole DNNs, then on the suffixes
        for j in range(nb):
            cross = [v for (x, y), v in ov_at.items() if x >= i and y >= j]
            if not cross:
                continue
            lhs = add(*cross)
            rhs = f"(- {add(*dur[0][i:], *dur[1][j:])} makespan)"
            if i == 0 and j == 0:
                out.append(f"(>= {lhs} {rhs})")
                continue
            out.append(f"(=> {a[i][j]} (>= {lhs} (+ {rhs} {st[0][i]})))")
            out.append(f"(=> (not {a[i][j]}) (>= {lhs} (+ {rhs} {st[1][j]})))")
    for dev in (0, 1):
        load = [dur[n][g] for n in range(2) for g in range(inst.dnns[n].n_groups)
                if rows[n][g] == dev]
        if load:
            out.append(f"(>= makespan {add(*load)})")
    ctx = z3.Context()
    sol = z3.SolverFor("QF_LRA", ctx=ctx)
    sol.from_string("\n".join(decl) + "\n" + "\n".join(f"(assert {x})" for x in out))
    return (sol, z3.Real("makespan", ctx), [[z3.Real(v, ctx) for v in row] for row in st],
            [[z3.Real(v, ctx) for v in row] for row in et])


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


#: The denominator the proof's relaxation rounds the contention coefficients ``1 - 1/s`` down
#: to (:func:`solve_z3_paper_pairs`). Measured on the artifact's hard pair: ``unsat`` in 0.5 s
#: with 1/1000, 1.9 s exact; 1/100 is too coarse (``sat``).
PROOF_COEF_DEN = 1000


#: Z3's resource limit (``rlimit``, its deterministic work count, unlike a time slice on a
#: loaded machine) of each check in the incumbent phase of :func:`solve_z3_paper_pairs`.
#: Measured on the artifact's instance: the best pair is ``sat`` 1e-5 above its bound in
#: 340,000 units (0.1 s), the hard pair ``unsat`` there in 960,000 (0.2 s).
LADDER_RLIMIT = 1_500_000

#: The targets of the incumbent phase, as relative steps above a pair's lower bound: Z3 decides a
#: tight target (``makespan <= bound (1 + step)``) fast, a loose one often not. The first step
#: is below :data:`PAIR_TOLERANCE`: a ``sat`` there closes its pair.
TARGET_STEPS = (1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 3e-2)


def solve_z3_paper_pairs(
    inst: MapInstance, bounds: PaperBound, *, time_limit_s: float, slice_s: float = 0.25
) -> Raw:
    """Branch and bound over the transition configurations, Z3 on each (``paper`` semantics,
    two DNNs, latency).

    The incumbent starts as the serial schedule. The device-row pairs are taken in the order of
    their lower bounds (:mod:`npusched.policies.mapping.instance_bounds`); a pair whose bound
    reaches the incumbent (to :data:`PAIR_TOLERANCE`, relative) is closed without a solve. Every
    check is a fresh Z3 solver of the pair's model (:func:`_fixed_paper_model`; Z3 skips its
    preprocessing in incremental mode, and the artifact's hard pair took 12 s after earlier
    checks on one incremental solver against 2-4 s fresh).

    1. *Incumbent*: for each step of :data:`TARGET_STEPS` in turn, every open pair is asked
       ``makespan <= bound (1 + step)`` (below the incumbent) within :data:`LADDER_RLIMIT`:
       ``sat`` may lower the incumbent, ``unsat`` raises the pair's bound to the target,
       ``unknown`` leaves it for the next step; the phase ends after the first step with a
       ``sat``.
    2. *Proof*: each pair still open is asked ``makespan <= incumbent (1 - tolerance)`` with an
       equal share of the time left (at least ``slice_s``), first on the relaxation with the
       contention coefficients rounded down to :data:`PROOF_COEF_DEN` (``unsat`` there is
       ``unsat`` in the exact model, whose every schedule it admits; its small rationals keep
       the simplex cheap), then exactly: ``unsat`` closes the pair, ``sat`` lowers the
       incumbent and the pair is bisected between its bound and the new incumbent
       (``descend``), ``unknown`` keeps it open for the next round.

    ``optimal``: every pair closed by ``time_limit_s``; otherwise ``feasible`` with the best
    schedule found. Returns as :func:`solve_z3_instance` (raw end times: the caller re-times
    them)."""
    z3 = _z3()
    z3.set_param("smt.random_seed", 0)
    t0 = time.perf_counter()
    best = _serial_schedule(inst)  # the incumbent to beat: nothing overlaps, feasible
    open_pairs: dict[tuple[tuple[int, ...], ...], float] = dict(bounds.pairs)

    def cap() -> float:
        return best[0] * (1.0 - PAIR_TOLERANCE)

    def closed(lb: float) -> bool:
        return lb >= cap()

    def left() -> float:
        return time_limit_s - (time.perf_counter() - t0)

    def val(model: Any, v: Any) -> float:
        r = model.eval(v, model_completion=True)
        return float(Fraction(str(r.as_fraction())))

    def check(rows: tuple[tuple[int, ...], ...], target: float, *, seconds: float,
              rlimit: int = 0, den: int | None = None) -> Any:
        """``makespan <= target`` on a fresh model of ``rows`` (``den``: the relaxation):
        ``unsat`` raises the pair's bound; ``sat`` of the exact model may lower the
        incumbent."""
        nonlocal best
        sol, mk, st, et = _fixed_paper_model(z3, inst, rows, open_pairs[rows], den)
        f = _q(target)
        sol.add(mk <= z3.RealVal(f"{f.numerator}/{f.denominator}", mk.ctx))
        sol.set("timeout", max(1, int(seconds * 1000)))
        if rlimit:
            sol.set("rlimit", rlimit)
        res = sol.check()
        if res == z3.unsat:
            open_pairs[rows] = max(open_pairs[rows], target)
        elif res == z3.sat and den is None:
            m = sol.model()
            v = val(m, mk)
            if v < best[0]:
                best = (v, rows, [[val(m, x) for x in row] for row in st],
                        [val(m, row[-1]) for row in et])
        return res

    def ladder(pairs: list[tuple[tuple[int, ...], ...]]) -> None:
        found = False
        for step in TARGET_STEPS:
            for rows in sorted(pairs, key=lambda r: open_pairs[r]):
                if closed(open_pairs[rows]) or left() <= 0:
                    continue
                target = min(open_pairs[rows] * (1.0 + step), cap())
                found |= check(rows, target, seconds=left(), rlimit=LADDER_RLIMIT) == z3.sat
            if found:  # the proofs take it from here
                return

    def descend(rows: tuple[tuple[int, ...], ...]) -> None:
        """Bisect ``rows`` between its bound and the incumbent: ``makespan <= lb + f (cap -
        lb)``, ``f`` = 1/2 (9/10 after an ``unknown``), each within :data:`LADDER_RLIMIT`,
        until the pair closes, two checks in a row are ``unknown``, or the time is up."""
        misses = 0
        while misses < 2 and not closed(open_pairs[rows]) and left() > 0:
            lb = open_pairs[rows]
            target = lb + (0.5 if misses == 0 else 0.9) * (cap() - lb)
            res = check(rows, target, seconds=left(), rlimit=LADDER_RLIMIT)
            misses = misses + 1 if res == z3.unknown else 0

    ladder(list(open_pairs))
    while left() > 0:
        todo = sorted((r for r, lb in open_pairs.items() if not closed(lb)),
                      key=lambda r: open_pairs[r])
        if not todo:
            break
        for rows in todo:
            share = max(left() / len(todo), slice_s)
            t_end = time.perf_counter() + share
            for den in (PROOF_COEF_DEN, None):
                if closed(open_pairs[rows]) or left() <= 0:
                    break
                res = check(rows, cap(), seconds=min(t_end - time.perf_counter(), left()),
                            den=den)
                if res == z3.unsat:
                    break
                if res == z3.sat and den is None:
                    descend(rows)
                if time.perf_counter() >= t_end:
                    break
    open_left = [r for r, lb in open_pairs.items() if not closed(lb)]
    solve_s = time.perf_counter() - t0
    status = "feasible" if open_left else "optimal"
    return best[1], best[2], best[3], status, solve_s
