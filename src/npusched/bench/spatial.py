"""Scenario ``spatial``: Planaria's Algorithm 1 on Workload-C."""

from __future__ import annotations

from typing import Any

import numpy as np

from npusched.bench.core import Reporter, _engine_only, _no_report, scenario
from npusched.workloads.request import Request

#: Workload-C arrival rate of the ``spatial`` scenario (requests/s): about 45% of the array's
#: capacity (measured: every request meets QoS-S at 50/s; at 200/s the array is saturated and
#: the queue grows without bound), so the run measures the scheduler, not an overload.
SPATIAL_RATE_PER_S = 50.0


def spatial_setup(*, requests: int, seed: int) -> tuple[Any, list[Request]]:
    """``spatial``'s simulator (Planaria's Algorithm 1 on the 16-subarray fission array, every
    ``subarrays`` variant compiled) and requests (Workload-C, QoS-S, Poisson arrivals)."""
    from npusched.hardware import compile_profile, get_device
    from npusched.models import get_network
    from npusched.policies.spatial.planaria import PlanariaPolicy
    from npusched.sim.engine import Simulator
    from npusched.sim.resources import fission_array
    from npusched.workloads.planaria import WORKLOADS, planaria_workload

    dev = get_device("planaria")
    profiles = {n: compile_profile(get_network(n), dev) for n in WORKLOADS["C"]}
    reqs = planaria_workload(
        "C",
        "S",
        SPATIAL_RATE_PER_S,
        n_requests=requests,
        random_state=np.random.SeedSequence([seed, 3]),
    )
    return Simulator(profiles, PlanariaPolicy(), machine=fission_array(16)), reqs


@scenario(
    "spatial",
    default_requests=5_000,
    description="Planaria's Algorithm 1 on Workload-C (QoS-S), 16-subarray fission array",
    setup=spatial_setup,
)
def spatial_scenario(
    *,
    requests: int,
    seed: int,
    reference: bool = True,
    report: Reporter = _no_report,
    repeat: int = 1,
) -> dict[str, Any]:
    """The ``spatial`` entry: concurrent jobs with re-allocations (no reference)."""
    entry, res = _engine_only("spatial", spatial_setup, requests, seed, report, repeat)
    entry["reallocations"] = int(res.columns["preemptions"].sum())
    return entry
