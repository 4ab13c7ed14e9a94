"""HaX-CoNN bench scenarios (registered into :data:`npusched.bench.SCENARIOS` on import).

* ``solver``: the artifact's GoogleNet + AlexNet instance (2 DNNs, 10 + 8 groups, Xavier) under
  the ``artifact`` and ``paper`` semantics with CP-SAT and Z3, beside an *artifact-style
  reference*: a plain Z3 model of the artifact's formulation written here for the bench (one
  Boolean per group, ``Real`` starts, the chain with the slowed previous group on the new
  device, per-accelerator disjunctions, the at-most-one-switch implications, ``minimize`` of
  the larger end). Each entry value is wall-clock seconds of one solve; ``*_status`` says
  whether it proved optimality within :data:`SOLVER_LIMIT_S`.
* ``haxconn``: HaX-CoNN's engine policy running frames of GoogLeNet + ResNet-50 on Xavier
  (one solve per distinct workload, :class:`~npusched.policies.mapping.policy.HaxconnPolicy`):
  ``frames_per_s`` per CPU second of the engine run.
"""

from __future__ import annotations

import time
from typing import Any

from npusched.bench.core import TARGETS, Reporter, Target, _engine_only, _no_report, scenario
from npusched.workloads.request import Request

__all__ = ["SOLVER_LIMIT_S", "artifact_reference_z3", "haxconn_setup"]

#: Time limit of every solve in the ``solver`` scenario (seconds).
SOLVER_LIMIT_S = 30.0
#: Frame period of the ``haxconn`` scenario (seconds): a frame ends before the next arrives.
FRAME_PERIOD_S = 0.02
HAXCONN_NETWORKS = ("googlenet", "resnet-50")

TARGETS["solver"] = tuple(
    Target(f"{s}_{sem}_s", "<=", 3.0) for sem in ("artifact", "paper") for s in ("cpsat", "z3")
)
TARGETS["haxconn"] = (Target("frames_per_s", ">=", 2_000.0),)


def artifact_reference_z3(inst: Any, time_limit_s: float = SOLVER_LIMIT_S) -> tuple[float, str]:
    """Solve a 2-DNN instance with a plain Z3 model of the artifact's formulation (latency,
    at most one switch per DNN). Returns ``(makespan in ms, "optimal" | "feasible")``."""
    import z3

    opt = z3.Optimize()
    opt.set("timeout", int(time_limit_s * 1000))
    ends = []
    starts, gpus = [], []
    for n, d in enumerate(inst.dnns):
        sg, sd = inst.slowdown(n, 0), inst.slowdown(n, 1)
        st = [z3.Real(f"s{n}_{g}") for g in range(d.n_groups)]
        on_gpu = [z3.Bool(f"g{n}_{g}") for g in range(d.n_groups)]
        opt.add(st[0] >= 0)
        for g in range(1, d.n_groups):
            tr = z3.If(on_gpu[g] != on_gpu[g - 1], d.transition_ms[g - 1], 0.0)
            prev = z3.If(
                on_gpu[g], d.gpu_ms[g - 1] * float(sg[g - 1]), d.dla_ms[g - 1] * float(sd[g - 1])
            )
            opt.add(st[g] >= st[g - 1] + tr + prev)
            later = [on_gpu[k] == on_gpu[g] for k in range(g + 1, d.n_groups)]
            opt.add(z3.Implies(on_gpu[g] != on_gpu[g - 1], z3.And(*later) if later else True))
        ends.append(st[-1] + z3.If(on_gpu[-1], d.gpu_ms[-1], d.dla_ms[-1]))
        starts.append(st)
        gpus.append(on_gpu)
    a, b = inst.dnns[0], inst.dnns[1]
    for i in range(a.n_groups):
        for j in range(b.n_groups):
            s1, s2 = starts[0][i], starts[1][j]
            opt.add(
                z3.Or(
                    z3.Not(gpus[0][i]),
                    z3.Not(gpus[1][j]),
                    s1 + a.gpu_ms[i] <= s2,
                    s2 + b.gpu_ms[j] <= s1,
                )
            )
            opt.add(z3.Or(gpus[0][i], gpus[1][j], s1 + a.dla_ms[i] <= s2, s2 + b.dla_ms[j] <= s1))
    opt.minimize(z3.If(ends[0] > ends[1], ends[0], ends[1]))
    res = opt.check()
    m = opt.model()
    val = m.eval(z3.If(ends[0] > ends[1], ends[0], ends[1]), model_completion=True)
    frac = val.as_fraction()
    return float(frac.numerator) / float(frac.denominator), (
        "optimal" if res == z3.sat else "feasible"
    )


@scenario(
    "solver",
    default_requests=1,
    description="HaX-CoNN's solvers on the artifact's GoogleNet + AlexNet instance (Xavier)",
)
def solver_scenario(
    *,
    requests: int,
    seed: int,
    reference: bool = True,
    report: Reporter = _no_report,
    repeat: int = 1,
) -> dict[str, Any]:
    """The ``solver`` entry: seconds per solve, per semantics and solver (see the module)."""
    from npusched.policies.mapping.instance import artifact_instance, solve_instance

    inst = artifact_instance()
    entry: dict[str, Any] = {
        "name": "solver",
        "requests": 1,
        "seed": seed,
        "time_limit_s": SOLVER_LIMIT_S,
    }
    for sem in ("artifact", "paper"):
        for s in ("cpsat", "z3"):
            report(f"{s} {sem}", 0, 0)
            best = None
            for _ in range(max(repeat, 1)):
                try:
                    r = solve_instance(inst, sem, s, time_limit_s=SOLVER_LIMIT_S)
                except Exception as e:  # a time-out without a schedule is a result here
                    entry[f"{s}_{sem}_s"] = SOLVER_LIMIT_S
                    entry[f"{s}_{sem}_status"] = f"none ({type(e).__name__})"
                    entry[f"{s}_{sem}_makespan_ms"] = None
                    break
                if best is None or r.solve_s < best.solve_s:
                    best = r
            if best is not None:
                entry[f"{s}_{sem}_s"] = best.solve_s
                entry[f"{s}_{sem}_status"] = best.status
                entry[f"{s}_{sem}_makespan_ms"] = best.makespan_ms
    # the paper semantics' proven lower bound (transition-configuration enumeration) and the
    # gap of each solver's schedule to it
    from npusched.policies.mapping.instance_bounds import paper_lower_bound
    from npusched.policies.mapping.instance_z3 import PAIR_TOLERANCE

    bound = paper_lower_bound(inst)
    entry["paper_bound_ms"] = bound.bound_ms
    entry["paper_bound_s"] = bound.solve_s
    for s in ("cpsat", "z3"):
        mk = entry.get(f"{s}_paper_makespan_ms")
        entry[f"{s}_paper_gap_pct"] = (
            None if mk is None else round(100.0 * (mk - bound.bound_ms) / mk, 3))
        # pairs closed to Z3's search tolerance (2e-6 relative) count as closed
        entry[f"{s}_paper_open_pairs"] = (
            None if mk is None else bound.open_pairs(mk, PAIR_TOLERANCE))
    # Z3's exact optimum, when it proved one (every pair closed: the LP bound's gap above is
    # then the bound's weakness, not the schedule's), and CP-SAT's schedule above it (its tick
    # rounding: both solve the same model, CP-SAT on a 0.01 ms grid)
    z3_opt = entry.get("z3_paper_makespan_ms") if entry.get("z3_paper_status") == "optimal" \
        else None
    entry["paper_optimum_ms"] = z3_opt
    cp = entry.get("cpsat_paper_makespan_ms")
    entry["cpsat_paper_above_optimum_pct"] = (
        None if z3_opt is None or cp is None else round(100.0 * (cp - z3_opt) / z3_opt, 3))
    if reference:
        report("artifact-style Z3 reference", 0, 0)
        t0 = time.perf_counter()
        mk, status = artifact_reference_z3(inst)
        entry["reference_z3_s"] = time.perf_counter() - t0
        entry["reference_z3_status"] = status
        entry["reference_z3_makespan_ms"] = mk
    return entry


def haxconn_setup(*, requests: int, seed: int) -> tuple[Any, list[Request]]:
    """``haxconn``'s simulator (HaX-CoNN's policy on Xavier's GPU + DLA) and requests: frames
    of :data:`HAXCONN_NETWORKS` every :data:`FRAME_PERIOD_S` (``requests`` / 2 frames)."""
    from npusched.hardware import compile_profile
    from npusched.hardware.soc import SocDevice, get_soc
    from npusched.models.zoo import get_network
    from npusched.policies.mapping.policy import HaxconnPolicy
    from npusched.sim.engine import Simulator
    from npusched.sim.resources import soc as soc_machine

    dev = SocDevice(soc="xavier")
    profiles = {n: compile_profile(get_network(n), dev, (1,)) for n in HAXCONN_NETWORKS}
    sim = Simulator(
        profiles,
        HaxconnPolicy(soc="xavier"),
        machine=soc_machine(get_soc("xavier").accelerators),
        checkpoint_cost=False,
    )
    k = len(HAXCONN_NETWORKS)
    reqs = [
        Request(k * f + i, f * FRAME_PERIOD_S, n)
        for f in range(max(requests // k, 1))
        for i, n in enumerate(HAXCONN_NETWORKS)
    ]
    return sim, reqs


@scenario(
    "haxconn",
    default_requests=2_000,
    description="HaX-CoNN's engine policy, frames of GoogLeNet + ResNet-50 on Xavier",
    setup=haxconn_setup,
)
def haxconn_scenario(
    *,
    requests: int,
    seed: int,
    reference: bool = True,
    report: Reporter = _no_report,
    repeat: int = 1,
) -> dict[str, Any]:
    """The ``haxconn`` entry: frames per CPU second (the solve is memoised, so it is once)."""
    entry, _ = _engine_only("haxconn", haxconn_setup, requests, seed, report, repeat)
    entry["frames_per_s"] = entry["requests_per_s"] / len(HAXCONN_NETWORKS)
    return entry
