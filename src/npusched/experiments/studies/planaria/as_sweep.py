"""The Planaria suite as a sweep (:func:`planaria_sweep`): system x (scenario, QoS) workload x
instance at Fig. 13-15's fixed rate (the suite file's schema is
:class:`~npusched.experiments.studies.planaria.suite.PlanariaSuite`)."""

from __future__ import annotations

from typing import Any

from npusched.experiments.studies.planaria.points import reference_rate, seed_stream
from npusched.experiments.studies.planaria.suite import PlanariaSuite
from npusched.workloads.planaria import PRIORITIES, qos_table, scenario_networks

__all__ = ["planaria_sweep"]


def planaria_sweep(s: PlanariaSuite) -> dict[str, Any]:
    """``s`` as a sweep mapping: system x Table I (scenario, QoS) workload at the fixed rate
    (requests per second) of Fig. 13-15 x ``setup.instances`` seeds (seed ``i`` is instance
    ``i``)."""
    st = s.mt_setup()
    # The requests are the reproduction's (Fig. 13-15's fixed rate, its seed stream: seed i is
    # instance i); the machines run the zoo's layer tables as they are (the per-channel
    # depthwise mapping), which the reproduction's ``depthwise`` may change.
    workloads = [
        {
            "label": f"{w}/{q}",
            "workload": {
                "kind": "poisson",
                "models": list(scenario_networks(w, s.benchmarks)),
                "rate_per_s": reference_rate(
                    w, st.load, benchmarks=st.benchmarks, depthwise=st.depthwise
                ),
                "n_requests": st.n_requests,
                "priorities": list(PRIORITIES),
                "qos": qos_table(w, q, s.benchmarks),
                "seed_stream": seed_stream(st.seed, w, q),
                "arrivals": st.arrivals,
            },
        }
        for w in s.scenarios
        for q in s.qos_levels
    ]
    return {
        "name": "planaria-suite",
        "description": (
            "Planaria suite as a sweep: P-PREMA on the 128x128 array vs Planaria on 16 fission "
            f"subarrays, Table I workloads at load {st.load:g}, {st.instances} instance"
            f"{'' if st.instances == 1 else 's'}."
        ),
        "seeds": {"start": 0, "count": st.instances},
        "base": {"workload": workloads[0]["workload"]},
        "grid": {
            "system": [
                {
                    "label": "PREMA",
                    "hardware": {"device": "prema-npu"},
                    "policy": {"name": "P-PREMA", "params": {"mechanism": "dynamic"}},
                    "sim.predictor": "prema",
                },
                {
                    "label": "Planaria",
                    "hardware": {"device": "planaria"},
                    "policy": {"name": "Planaria"},
                },
            ],
            "workload": workloads,
        },
        "report": {
            "metrics": ["slo_attainment", "fairness", "antt", "p99_latency_s", "energy_j"],
            "baseline": "PREMA",
        },
    }
