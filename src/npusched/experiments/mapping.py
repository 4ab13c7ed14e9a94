"""What ``npusched map`` computes, as data: HaX-CoNN's schedule of two or three DNNs on an SoC
against the baselines (:func:`map_networks`), or one instance file solved exactly
(:func:`map_instance`). The CLI checks nothing itself and only renders the result."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from npusched.errors import ConfigError

__all__ = ["MapInstanceResult", "MapSummary", "map_instance", "map_networks"]

Row = dict[str, object]


@dataclass
class MapSummary:
    """One row per method (baselines, then HaX-CoNN; times in ms, ``fps`` frames/s), the
    table's title and, per network, the segments of its schedule (``"groups 0-4 on GPU"``)."""

    title: str
    rows: list[Row]
    segments: list[tuple[str, list[str]]] = field(default_factory=list)


def check_time_limit(time_limit: float | None) -> None:
    """``--time-limit``: a positive finite number of seconds (or ``None``)."""
    if time_limit is not None and not (0 < time_limit < float("inf")):
        raise ConfigError(f"--time-limit must be a number of seconds > 0, got {time_limit}")


def map_networks(
    networks: list[str] | None,
    *,
    soc: str = "orin",
    goal: str = "latency",
    space: str = "restricted",
    transitions: int = 1,
    groups: int = 10,
    profile_csv: str | os.PathLike[str] | None = None,
    time_limit: float | None = None,
) -> MapSummary:
    """HaX-CoNN (PPoPP'24) on ``soc`` for two or three zoo ``networks``: generated layer-group
    profiles (``groups`` per DNN) or measured ones (``profile_csv``), the ``goal`` (``latency``:
    Eq. 11, ``throughput``: Eq. 10) in the ``space`` (``restricted``: ``transitions`` per DNN;
    ``free``: CP-SAT, ``time_limit`` seconds, default 1)."""
    check_time_limit(time_limit)
    if not networks:
        raise ConfigError(
            "map: networks: none given; allowed: two or three zoo networks, or --instance FILE"
        )
    if not 2 <= len(networks) <= 3:
        raise ConfigError(f"NETWORKS: give two or three networks, got {len(networks)}")
    if transitions < 0:
        raise ConfigError(f"--transitions must be >= 0, got {transitions}")
    if groups < 1:
        raise ConfigError(f"--groups must be >= 1, got {groups}")
    from npusched.hardware.soc import generate_profile, get_soc, load_profile_csv
    from npusched.models.zoo import get_network
    from npusched.policies.mapping import Task, Workload
    from npusched.policies.mapping.haxconn import haxconn

    spec = get_soc(soc)
    measured = load_profile_csv(Path(profile_csv), spec) if profile_csv is not None else {}
    tasks = []
    for n in networks:
        if profile_csv is not None:
            if n not in measured:
                raise ConfigError(
                    f"{profile_csv}: no rows for network {n!r}; networks: {', '.join(sorted(measured))}"
                )
            tasks.append(Task(n, measured[n]))
        else:
            tasks.append(Task(n, generate_profile(get_network(n), spec, n_groups=groups)))
    h = haxconn(
        Workload(spec, tuple(tasks)),
        goal,
        space=space,
        max_transitions=transitions,
        time_limit_s=1.0 if time_limit is None else time_limit,
    )
    accs = spec.accelerators
    rows: list[Row] = [
        {
            "method": m,
            "predicted_ms": round(r.predicted.makespan_s * 1e3, 3),
            "realised_ms": round(r.realised.makespan_s * 1e3, 3),
            "fps": round(r.realised.fps, 1),
            "transitions": str(r.schedule.transitions()),
        }
        for m, r in h.baselines.items()
    ]
    rows.append(
        {
            "method": f"HaX-CoNN ({h.source}{', proven' if h.proven else ''})",
            "predicted_ms": round(
                (h.predicted_objective if goal == "latency" else h.realised.makespan_s) * 1e3, 3
            ),
            "realised_ms": round(h.realised.makespan_s * 1e3, 3),
            "fps": round(h.realised.fps, 1),
            "transitions": str(h.schedule.transitions()),
        }
    )
    segments: list[tuple[str, list[str]]] = []
    for t, row in zip(tasks, h.schedule.assignment, strict=True):
        segs, start = [], 0
        for g in range(1, len(row) + 1):
            if g == len(row) or row[g] != row[start]:
                segs.append(f"groups {start}-{g - 1} on {accs[row[start]]}")
                start = g
        segments.append((t.name, segs))
    title = f"HaX-CoNN on {spec.name}: {' + '.join(networks)} ({goal})"
    return MapSummary(title, rows, segments)


@dataclass
class MapInstanceResult:
    """An instance file solved: the JSON document, one row per DNN (devices ``G``/``D`` per
    group, end time in ms) and the table's title."""

    doc: dict[str, Any]
    rows: list[Row]
    title: str


def map_instance(
    path: str | os.PathLike[str],
    semantics: str = "artifact",
    solver: str = "cpsat",
    time_limit: float | None = None,
) -> MapInstanceResult:
    """Solve the instance file ``path`` exactly with ``solver`` under ``semantics`` (the
    artifact's or the paper's), ``time_limit`` seconds (default 60)."""
    check_time_limit(time_limit)
    from npusched.policies.mapping.instance import (
        SEMANTICS,
        SOLVERS,
        load_instance,
        solve_instance,
    )

    if semantics not in SEMANTICS:
        raise ConfigError(f"--semantics: {semantics!r}; allowed: {', '.join(SEMANTICS)}")
    if solver not in SOLVERS:
        raise ConfigError(f"--solver: {solver!r}; allowed: {', '.join(SOLVERS)}")
    p = Path(path)
    inst = load_instance(p)
    res = solve_instance(
        inst, semantics, solver, time_limit_s=60.0 if time_limit is None else time_limit
    )
    rows: list[Row] = [
        {
            "dnn": d.name,
            "devices": "".join("G" if v == "gpu" else "D" for v in dev),
            "end_ms": round(e, 4),
        }
        for d, dev, e in zip(inst.dnns, res.devices, res.end_ms, strict=True)
    ]
    title = (
        f"{p.name}: {semantics} semantics, {solver}, {inst.objective}: makespan "
        f"{res.makespan_ms:.4f} ms ({res.status}, {res.solve_s:.2f} s)"
    )
    return MapInstanceResult(res.to_json(inst), rows, title)
