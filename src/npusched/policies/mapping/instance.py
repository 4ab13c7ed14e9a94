"""One HaX-CoNN mapping instance from a file, solved under the paper's or the artifact's semantics.

An *instance file* is JSON (the format ``npusched map --instance`` reads)::

    {"soc": "xavier" | "orin", "objective": "latency" | "throughput", "max_transitions": 1,
     "dnns": [{"name": "googlenet", "gpu_ms": [n], "dla_ms": [n], "transition_ms": [n-1],
               "mem_gpu": [n], "mem_dla": [n]}, ...]}

``transition_ms[k]`` is the cost of changing accelerator between group ``k`` and ``k + 1`` (one
value for both directions, as the artifact keeps it); ``mem_*`` are the groups' own memory
throughputs in percent of the SoC's peak (0-100), mapped to a slowdown by the SoC's function
(:mod:`npusched.hardware.artifact_contention`). Times are milliseconds throughout.

Two semantics, each with CP-SAT and Z3 (:func:`solve_instance`):

``artifact``
    the solver of the authors' artifact (``ismetdagli/HaX-CoNN`` ``src/z3_solver_multi_dnn.py``)
    as implemented, with its four departures from the paper:

    1. a group's slowdown is the constant factor ``s(m)`` of its *own* memory throughput, applied
       whether or not anything runs beside it;
    2. at a transition the chain charges the *preceding* group's time on the *new* device:
       ``st[g] >= st[g-1] + t(g-1, d_g) * s(g-1, d_g) + TR_g * transition_ms[g-1]``;
    3. one transition array serves both directions;
    4. the last group is never slowed: a DNN ends at ``st[last] + t(last, d_last)``.

    Accelerator occupancy uses the unslowed times ``[st, st + t(g, d_g))`` (Eq. 9, epsilon 0).
``paper``
    Eq. 1-11 as written: a group's time is ``t(g, d) + C`` where ``C`` is its slowdown over the
    contention intervals it shares with groups of other DNNs on the other accelerator (Eq. 7-8):
    during an overlap of length ``ov`` it progresses at rate ``1 / s``, so ``C = sum ov (1 - 1/s)``
    (exact for two accelerators); ``s`` is the same SoC function of the group's own throughput
    (our choice: the paper's PCCS inputs are not published, the artifact's function is);
    transitions are charged after the group that ends on the old device (Eq. 2-3); a DNN ends
    when its last group ends.

Both semantics restrict each DNN to ``max_transitions`` accelerator changes (the artifact: 1).
The objective is Eq. 11 (``latency``: min max_n T_n) or Eq. 10 (``throughput``: max sum_n 1/T_n).
"""

from __future__ import annotations

import json
import math
import time
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from npusched.errors import ConfigError
from npusched.hardware.artifact_contention import SOCS
from npusched.policies.mapping.instance_model import (
    _ARRAYS,
    ARTIFACT_QUIRKS,
    DEVICES,
    OBJECTIVES,
    SEMANTICS,
    SOLVERS,
    DnnSpec,
    MapInstance,
    _artifact_chain,
    _assignments,
    serial_bound_ms,
)

__all__ = [
    "ARTIFACT_QUIRKS",
    "OBJECTIVES",
    "SEMANTICS",
    "SOLVERS",
    "DnnSpec",
    "MapInstance",
    "MapResult",
    "artifact_instance",
    "brute_force_artifact",
    "evaluate",
    "load_instance",
    "paper_ends",
    "parse_instance",
    "serial_bound_ms",
    "solve_instance",
]

@dataclass(frozen=True)
class MapResult:
    """A solved instance.

    Attributes:
        makespan_ms: max over DNNs of their end time, ms (under the solved semantics).
        status: ``"optimal"`` (proven) or ``"feasible"``.
        solve_s: solver wall-clock seconds.
        devices: per DNN, "gpu"/"dla" per group.
        start_ms: per DNN, the start of every group, ms.
        end_ms: per DNN, its end time T_n, ms.
        objective: the objective's value (ms for latency, frames/s for throughput).
    """

    makespan_ms: float
    status: str
    solve_s: float
    devices: tuple[tuple[str, ...], ...]
    start_ms: tuple[tuple[float, ...], ...]
    end_ms: tuple[float, ...]
    objective: float

    def to_json(self, instance: MapInstance) -> dict[str, Any]:
        """The ``--format json`` record of ``npusched map --instance``."""
        return {
            "makespan_ms": round(self.makespan_ms, 6),
            "status": self.status,
            "solve_s": round(self.solve_s, 4),
            "objective": instance.objective,
            "objective_value": round(self.objective, 6),
            "dnns": [
                {
                    "name": d.name,
                    "devices": list(dev),
                    "start_ms": [round(s, 6) for s in st],
                    "end_ms": round(e, 6),
                }
                for d, dev, st, e in zip(
                    instance.dnns, self.devices, self.start_ms, self.end_ms, strict=True
                )
            ],
        }


# --- parsing -----------------------------------------------------------------------------------
def _err(where: str, field: str, what: str, allowed: str) -> ConfigError:
    return ConfigError(f"{where}: {field}: {what}; allowed: {allowed}")


def parse_instance(data: object, where: str = "instance") -> MapInstance:
    """Validate ``data`` (the decoded JSON) and build the instance; errors name the field."""
    if not isinstance(data, dict):
        raise _err(where, "(top level)", f"is {type(data).__name__}", "a JSON object")
    soc = data.get("soc")
    if soc not in SOCS:
        raise _err(where, "soc", f"{soc!r}", ", ".join(SOCS))
    objective = data.get("objective", "latency")
    if objective not in OBJECTIVES:
        raise _err(where, "objective", f"{objective!r}", ", ".join(OBJECTIVES))
    mt = data.get("max_transitions", 1)
    if isinstance(mt, bool) or not isinstance(mt, int) or mt < 0:
        raise _err(where, "max_transitions", f"{mt!r}", "an integer >= 0")
    dnns_raw = data.get("dnns")
    if not isinstance(dnns_raw, list) or not 2 <= len(dnns_raw) <= 4:
        raise _err(where, "dnns", "missing or wrong length", "a list of 2 to 4 DNN objects")
    dnns = []
    for i, d in enumerate(dnns_raw):
        f = f"dnns[{i}]"
        if not isinstance(d, dict):
            raise _err(where, f, f"is {type(d).__name__}", "a JSON object")
        name = d.get("name")
        if not isinstance(name, str) or not name:
            raise _err(where, f"{f}.name", f"{name!r}", "a non-empty string")
        arrays: dict[str, tuple[float, ...]] = {}
        for key in _ARRAYS:
            v = d.get(key)
            if not isinstance(v, list) or not all(
                isinstance(x, int | float) and not isinstance(x, bool) and math.isfinite(x)
                for x in v
            ):
                raise _err(where, f"{f}.{key}", "missing or not a list of numbers",
                           "a list of finite numbers")
            arrays[key] = tuple(float(x) for x in v)
        n = len(arrays["gpu_ms"])
        if n < 1:
            raise _err(where, f"{f}.gpu_ms", "is empty", "one time per layer group (>= 1)")
        for key, want in (("dla_ms", n), ("transition_ms", n - 1), ("mem_gpu", n),
                          ("mem_dla", n)):
            if len(arrays[key]) != want:
                raise _err(where, f"{f}.{key}", f"has {len(arrays[key])} values",
                           f"{want} (gpu_ms has {n} groups)")
        for key in ("gpu_ms", "dla_ms"):
            if any(x <= 0 for x in arrays[key]):
                raise _err(where, f"{f}.{key}", "has a value <= 0", "times > 0 ms")
        if any(x < 0 for x in arrays["transition_ms"]):
            raise _err(where, f"{f}.transition_ms", "has a negative value", "costs >= 0 ms")
        for key in ("mem_gpu", "mem_dla"):
            if any(not 0 <= x <= 100 for x in arrays[key]):
                raise _err(where, f"{f}.{key}", "has a value outside 0-100", "0 to 100 (%)")
        dnns.append(DnnSpec(name=name, **arrays))
    return MapInstance(soc=str(soc), objective=str(objective), max_transitions=mt,
                       dnns=tuple(dnns))


def load_instance(path: str | Path) -> MapInstance:
    """Read and validate an instance file (see the module docstring)."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as e:
        raise ConfigError(f"{p}: cannot read: {e.strerror}; allowed: a readable JSON file") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise ConfigError(
            f"{p}: (file): not JSON (line {e.lineno}: {e.msg}); allowed: a JSON object"
        ) from None
    return parse_instance(data, str(p))


def artifact_instance() -> MapInstance:
    """The artifact's own GoogleNet + AlexNet instance on Xavier AGX (packaged data)."""
    text = (
        resources.files("npusched.data.haxconn")
        .joinpath("artifact/googlenet_alexnet_xavier.json")
        .read_text(encoding="utf-8")
    )
    return parse_instance(json.loads(text), "googlenet_alexnet_xavier.json")


# --- exact evaluation of a schedule --------------------------------------------------------------
# (ARTIFACT_QUIRKS and the artifact's chain live in instance_model, which the solvers share)
def evaluate(
    inst: MapInstance,
    devices: tuple[tuple[int, ...], ...],
    order: list[tuple[int, int]],
    quirks: frozenset[str] = ARTIFACT_QUIRKS,
) -> tuple[list[list[float]], list[float]]:
    """Earliest start times (ms) under the *artifact* semantics for a mapping and a priority
    ``order`` of ``(dnn, group)`` pairs on the shared accelerators: each group starts at the
    earliest time its chain allows after every group of another DNN earlier in ``order`` on
    its accelerator ended. Returns ``(starts, ends)``."""
    N = len(inst.dnns)
    starts = [[0.0] * d.n_groups for d in inst.dnns]
    chains = [_artifact_chain(inst, n, devices[n], quirks) for n in range(N)]
    busy: list[list[float]] = [[0.0, 0.0] for _ in range(N)]  # per DNN, per device: last end
    done = [0] * N
    for n, g in order:
        if g != done[n]:
            raise ConfigError(f"order: group {g} of DNN {n} before group {done[n]}")
        a = devices[n][g]
        t = 0.0 if g == 0 else starts[n][g - 1] + float(chains[n][g])
        for m in range(N):
            if m != n:
                t = max(t, busy[m][a])
        starts[n][g] = t
        busy[n][a] = max(busy[n][a], t + float(inst.dnns[n].time_ms(a)[g]))
        done[n] += 1
    ends = [starts[n][-1] + float(chains[n][-1]) for n in range(N)]
    return starts, ends


def paper_ends(
    inst: MapInstance, devices: tuple[tuple[int, ...], ...], starts: list[list[float]]
) -> list[list[float]]:
    """End time (ms) of every group under the *paper* semantics for given starts: the least
    solution of ``et = st + t + sum_j ov_j (1 - 1/s)`` (Eq. 7-8), found by iterating from
    ``et = st + t`` (the map is monotone, so the iteration rises to its least fixpoint)."""
    N = len(inst.dnns)
    groups = [(n, g) for n in range(N) for g in range(inst.dnns[n].n_groups)]
    base = {
        (n, g): float(inst.dnns[n].time_ms(devices[n][g])[g]) for n, g in groups
    }
    coef = {
        (n, g): 1.0 - 1.0 / float(inst.slowdown(n, devices[n][g])[g]) for n, g in groups
    }
    st = {(n, g): float(starts[n][g]) for n, g in groups}
    et = {p: st[p] + base[p] for p in groups}
    for _ in range(100_000):
        new = {}
        for p in groups:
            extra = 0.0
            for q in groups:
                if q[0] != p[0] and devices[q[0]][q[1]] != devices[p[0]][p[1]]:
                    extra += max(0.0, min(et[p], et[q]) - max(st[p], st[q]))
            new[p] = st[p] + base[p] + coef[p] * extra
        delta = max(abs(new[p] - et[p]) for p in groups)
        et = new
        if delta < 1e-12:
            break
    return [[et[(n, g)] for g in range(inst.dnns[n].n_groups)] for n in range(N)]


def _objective(objective: str, ends: list[float]) -> float:
    return max(ends) if objective == "latency" else sum(1e3 / e for e in ends)


def _better(objective: str, a: float, b: float) -> bool:
    return a < b if objective == "latency" else a > b


def brute_force_artifact(
    inst: MapInstance, quirks: frozenset[str] = ARTIFACT_QUIRKS
) -> tuple[float, tuple[tuple[int, ...], ...]]:
    """Exact optimum of a 2-DNN instance under the artifact semantics by enumeration: every pair
    of transition configurations, and for each the best interleaving of the two chains (a
    dynamic programme over merge orders with Pareto-pruned timing states). Returns the optimal
    objective (ms or frames/s) and one optimal mapping (0 = GPU, 1 = DLA). ``quirks``: the
    artifact's departures kept (see :data:`ARTIFACT_QUIRKS`)."""
    if len(inst.dnns) != 2:
        raise ConfigError("brute force: dnns: needs exactly 2 DNNs; allowed: 2")
    d1, d2 = inst.dnns
    best = math.inf if inst.objective == "latency" else -math.inf
    best_map: tuple[tuple[int, ...], ...] = ()
    rows1 = _assignments(d1.n_groups, inst.max_transitions)
    rows2 = _assignments(d2.n_groups, inst.max_transitions)
    for r1 in rows1:
        c1 = _artifact_chain(inst, 0, r1, quirks)
        o1 = [float(d1.time_ms(r1[g])[g]) for g in range(d1.n_groups)]
        for r2 in rows2:
            c2 = _artifact_chain(inst, 1, r2, quirks)
            o2 = [float(d2.time_ms(r2[g])[g]) for g in range(d2.n_groups)]
            v = _merge_dp(inst.objective, (r1, c1, o1), (r2, c2, o2))
            if _better(inst.objective, v, best):
                best, best_map = v, (r1, r2)
    return best, best_map


def _merge_dp(objective: str, a: tuple[Any, ...], b: tuple[Any, ...]) -> float:
    (r1, c1, o1), (r2, c2, o2) = a, b
    n1, n2 = len(r1), len(r2)
    # state: (ready1, ready2, end1[gpu], end1[dla], end2[gpu], end2[dla]); ready = chain-earliest
    # start of the DNN's next group (its end time once all groups are placed)
    front: dict[tuple[int, int], list[tuple[float, ...]]] = {(0, 0): [(0.0,) * 6]}
    for k in range(n1 + n2):
        nxt: dict[tuple[int, int], list[tuple[float, ...]]] = {}
        for (i, j), states in front.items():
            if i + j != k:
                continue
            for s in states:
                if i < n1:
                    dv = r1[i]
                    st = max(s[0], s[4 + dv])
                    e = list(s)
                    e[2 + dv] = st + o1[i]
                    e[0] = st + c1[i + 1]  # c1[n1]: the last group's time to the end
                    nxt.setdefault((i + 1, j), []).append(tuple(e))
                if j < n2:
                    dv = r2[j]
                    st = max(s[1], s[2 + dv])
                    e = list(s)
                    e[4 + dv] = st + o2[j]
                    e[1] = st + c2[j + 1]
                    nxt.setdefault((i, j + 1), []).append(tuple(e))
        front = {key: _pareto(v) for key, v in nxt.items()}
    final = front[(n1, n2)]
    return min((_objective(objective, [s[0], s[1]]) for s in final),
               key=lambda v: v if objective == "latency" else -v)


def _pareto(states: list[tuple[float, ...]]) -> list[tuple[float, ...]]:
    states = sorted(set(states))
    keep: list[tuple[float, ...]] = []
    for s in states:
        if not any(all(k[i] <= s[i] + 1e-12 for i in range(len(s))) for k in keep):
            keep.append(s)
    return keep


# --- solvers -------------------------------------------------------------------------------------
def solve_instance(
    inst: MapInstance,
    semantics: str = "artifact",
    solver: str = "cpsat",
    *,
    time_limit_s: float = 30.0,
    tick_ms: float | None = None,
    fixed: tuple[tuple[int, ...], ...] | None = None,
    use_bounds: bool = True,
) -> MapResult:
    """Solve ``inst`` under ``semantics`` ("artifact" or "paper") with ``solver`` ("cpsat" or
    "z3"). CP-SAT works in integer ticks of ``tick_ms`` (default 1e-4 ms for ``artifact``,
    1e-2 ms for ``paper``: the artifact's own resolution, its times have two decimals in ms;
    contention extras are rounded up to a tick, and ``optimal`` means proven in that model); under ``artifact`` the reported times are re-timed exactly from the
    solver's mapping and order (:func:`evaluate`); under ``paper`` to the least fixpoint of
    the contention equations (:func:`paper_ends`). Z3 works on rationals in 1e-6 ms; under
    ``paper`` with the bounds (two DNNs, latency) it runs per transition configuration
    (:func:`~npusched.policies.mapping.instance_z3.solve_z3_paper_pairs`: ``optimal`` to a
    relative 2e-6 when every configuration is closed).
    ``fixed`` (per DNN, 0 = GPU / 1 = DLA per group) pins the mapping: only the timing is
    solved (to time one semantics' schedule under the other). ``use_bounds`` (``paper``
    semantics, two DNNs, latency, no ``fixed``): add the transition-configuration enumeration's
    lower bounds (:mod:`npusched.policies.mapping.instance_bounds`) to the model; their time is
    part of ``solve_s``."""
    if semantics not in SEMANTICS:
        raise ConfigError(f"semantics={semantics!r}; allowed: {', '.join(SEMANTICS)}")
    if solver not in SOLVERS:
        raise ConfigError(f"solver={solver!r}; allowed: {', '.join(SOLVERS)}")
    bounds = None
    bound_s = 0.0
    if use_bounds and semantics == "paper" and fixed is None and len(inst.dnns) == 2 \
            and inst.objective == "latency":
        from npusched.policies.mapping.instance_bounds import paper_lower_bound

        bounds = paper_lower_bound(inst)
        bound_s = bounds.solve_s
    if solver == "cpsat":
        from npusched.policies.mapping.instance_cpsat import solve_cpsat_instance

        tick = tick_ms if tick_ms is not None else (1e-4 if semantics == "artifact" else 1e-2)
        raw = solve_cpsat_instance(
            inst, semantics, time_limit_s=time_limit_s, tick_ms=tick, fixed=fixed,
            bounds=bounds,
        )
    else:
        from npusched.policies.mapping.instance_z3 import solve_z3_instance, solve_z3_paper_pairs

        if bounds is not None:  # paper, two DNNs, latency: Z3 per transition configuration
            raw = solve_z3_paper_pairs(inst, bounds, time_limit_s=time_limit_s)
        else:
            raw = solve_z3_instance(inst, semantics, time_limit_s=time_limit_s, fixed=fixed,
                                    bounds=bounds)
    devices, starts, ends, status, solve_s = raw
    solve_s += bound_s
    if semantics == "artifact":
        order = sorted(
            ((n, g) for n, d in enumerate(inst.dnns) for g in range(d.n_groups)),
            key=lambda p: (starts[p[0]][p[1]], p[1], p[0]),
        )
        starts, ends = evaluate(inst, devices, order)
    else:
        ends = [row[-1] for row in paper_ends(inst, devices, starts)]
    return MapResult(
        makespan_ms=max(ends),
        status=status,
        solve_s=solve_s,
        devices=tuple(tuple(DEVICES[a] for a in row) for row in devices),
        start_ms=tuple(tuple(float(s) for s in row) for row in starts),
        end_ms=tuple(float(e) for e in ends),
        objective=_objective(inst.objective, list(ends)),
    )


def _timer() -> float:
    return time.perf_counter()
