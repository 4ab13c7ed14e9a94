"""The PREMA suite as a sweep (:func:`prema_sweep`): the reproduction's workloads as the grid
policy x load x batch size x seed (the suite file's schema is
:class:`~npusched.experiments.studies.prema.suite.PremaSuite`)."""

from __future__ import annotations

from typing import Any

from npusched.experiments.studies.prema.points import _Context
from npusched.experiments.studies.prema.suite import PremaSuite

__all__ = ["prema_sweep"]


def prema_sweep(s: PremaSuite) -> dict[str, Any]:
    """``s`` as a sweep: policy x load (``sweep_loads``) x batch size x ``runs`` seeds. Seed
    ``i`` of batch size ``b`` draws the reproduction's workload (b, run i) (``seed_stream =
    [seed, 1, b]``), in the reproduction's dispatch window at each load; so a point at the
    reproduction's ``load`` gives the reproduction's result for that (policy, b, run)."""
    ctx = _Context(s.setup())
    batches = sorted(set(s.batch_sizes))
    policies = []
    for p in s.policies:
        params: dict[str, Any] = {}
        if p.mechanism is not None:
            params["mechanism"] = p.mechanism
        if p.tokens is not None:
            params["tokens"] = p.tokens
        policies.append(
            {"label": p.label, "policy": {"name": p.policy, "params": params},
             "sim.predictor": p.predictor}
        )
    # the reproduction's dispatch window (_Context.window), at each load of the sweep
    mean_iso = {b: ctx.mean_isolated(b) for b in batches}
    grids = [
        {
            "policy": policies,
            "load": [{"label": float(load)}],
            "batch": [
                {
                    "label": b,
                    "workload.batch_sizes": [b],
                    "workload.window_s": s.n_tasks * mean_iso[b] / float(load),
                    # the reproduction's stream of (b, run): seed i of the sweep is run i
                    "workload.seed_stream": [s.seed, 1, b],
                }
            ],
        }
        for load in s.sweep_loads
        for b in batches
    ]
    return {
        "name": "prema-suite",
        "description": (
            f"PREMA suite as a sweep: {len(s.policies)} policies x loads "
            f"{[float(x) for x in s.sweep_loads]} x batch sizes {batches} x {s.runs} seeds, "
            f"{s.n_tasks} tasks per workload."
        ),
        "seeds": {"start": 0, "count": s.runs},
        "base": {
            "hardware": {"device": s.device},
            "workload": {
                "kind": "prema",
                "n_tasks": s.n_tasks,
                "models": list(s.networks),
                "window_s": ctx.window(batches[0]),
                "batch_sizes": [batches[0]],
            },
            "sim": {"preemption_point": s.preemption_point},
        },
        "grids": grids,
        "report": {
            "x": "load",
            "metrics": ["antt", "stp", "fairness", "sla_violation_rate_n4",
                        "p95_high_priority_norm"],
            "baseline": "NP-FCFS",
        },
    }
