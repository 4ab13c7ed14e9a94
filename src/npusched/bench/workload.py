"""The bench's workloads and the inputs its references share: the ``temporal`` mix (:data:`BENCH_NETWORKS`, batch 1/4/16, priorities 1/3/9, Poisson arrivals at :data:`BENCH_LOAD`), synthetic profiles for fast tests, and :class:`_Shapes` (dispatch order, per-layer latencies and prefix sums, built outside the references' loops)."""

from __future__ import annotations

import math
from bisect import bisect_left
from collections.abc import Mapping, Sequence

import numpy as np

from npusched import libm
from npusched.hardware.profile import Profile
from npusched.workloads.request import PRIORITY_LEVELS, Request, RequestTable

#: The eight networks of the ``temporal`` mix (zoo names).
BENCH_NETWORKS = (
    "alexnet",
    "googlenet",
    "vgg-16",
    "mobilenet-v1",
    "resnet-50",
    "resnet-18",
    "squeezenet",
    "inception-v3",
)
BENCH_BATCHES = (1, 4, 16)
#: Offered load of the bench workloads (fraction of the array's capacity).
BENCH_LOAD = 0.9
#: Positions (seconds of work) closer than this to a layer end are at that layer end; the
#: engine's tolerance (``npusched.sim.events.TIME_TOL_S``), repeated so the references do not
#: import engine internals.
BOUNDARY_TOL_S = 1e-12

#: The networks of ``concurrent`` (batch 1 on ``planaria``'s 16-subarray array).
CONCURRENT_NETWORKS = ("resnet-50", "mobilenet-v1", "googlenet", "alexnet", "squeezenet")
#: At most this many jobs share the array (equal shares: 16 or 8 subarrays each).
CONCURRENT_JOBS = 2


# --- workloads --------------------------------------------------------------------------------
def bench_profiles() -> dict[str, Profile]:
    """Profiles of :data:`BENCH_NETWORKS` on ``prema-npu`` (PREMA Table I), batch 1/4/16."""
    from npusched.hardware import get_device
    from npusched.hardware.profile import compile_profile
    from npusched.models.zoo import get_network

    dev = get_device("prema-npu")
    return {name: compile_profile(get_network(name), dev, BENCH_BATCHES) for name in BENCH_NETWORKS}


def synthetic_profiles(random_state: int = 0) -> dict[str, Profile]:
    """Eight profiles with 10-120 layers of log-uniform 5-500 us latency at batch 1 (x batch^0.8
    at batch 4 and 16); no cost model, for fast agreement tests."""
    from npusched.models.ir import Layer, LayerKind, make_network

    rng = np.random.default_rng(random_state)
    out: dict[str, Profile] = {}
    for name in BENCH_NETWORKS:
        n = int(rng.integers(10, 121))
        lat1 = libm.exp(rng.uniform(math.log(5e-6), math.log(500e-6), size=n))
        lat = np.stack([lat1 * b**0.8 for b in BENCH_BATCHES])
        layers = [
            Layer(name=f"l{i}", kind=LayerKind.VECTOR, inputs=(f"l{i - 1}",) if i else ())
            for i in range(n)
        ]
        out[name] = Profile.from_tables(
            make_network(name, layers),
            device_name="synthetic",
            batch_sizes=BENCH_BATCHES,
            latency_s=lat,
            frequency_hz=1e9,
            memory_bandwidth_bps=358e9,
            checkpoint_bytes=4096,
        )
    return out


def bench_table(
    n_requests: int,
    profiles: Mapping[str, Profile],
    *,
    load: float = BENCH_LOAD,
    random_state: int | None = 0,
) -> RequestTable:
    """``n_requests`` requests with Poisson arrivals at ``load`` x the array's capacity, as a
    :class:`~npusched.workloads.request.RequestTable` (the form
    :func:`~npusched.experiments.runner.run_config` gives the engine its generated workloads).

    Networks, batch sizes (1/4/16) and priorities (1/3/9) are uniform; the arrival rate is
    ``load / E[isolated latency]`` requests per second, so the offered load is ``load``. Ids are
    ``0 .. n_requests - 1`` in arrival order.
    """
    rng = np.random.default_rng(random_state)
    names = sorted(profiles)
    net_idx = rng.integers(0, len(names), size=n_requests)
    bat_idx = rng.integers(0, len(BENCH_BATCHES), size=n_requests)
    levels = np.array(sorted(PRIORITY_LEVELS.values()))
    prio = levels[rng.integers(0, len(levels), size=n_requests)]
    mean_s = float(
        np.mean([[profiles[nm].isolated_latency(b) for b in BENCH_BATCHES] for nm in names])
    )
    gaps = rng.exponential(mean_s / load, size=n_requests)
    arrival = np.cumsum(gaps)
    return RequestTable(
        arrival.tolist(),
        [names[k] for k in net_idx.tolist()],
        [BENCH_BATCHES[b] for b in bat_idx.tolist()],
        prio.tolist(),
        [None] * n_requests,
        [None] * n_requests,
        [None] * n_requests,
    )


def bench_workload(
    n_requests: int,
    profiles: Mapping[str, Profile],
    *,
    load: float = BENCH_LOAD,
    random_state: int | None = 0,
) -> list[Request]:
    """:func:`bench_table`'s requests as a list (equal requests)."""
    return bench_table(n_requests, profiles, load=load, random_state=random_state).requests()


# --- references: the same system (P-HPF, layer-boundary preemption, free checkpoints) ---------
class _Shapes:
    """What every reference needs, prepared outside its timing: the requests in dispatch order
    (arrival, then id) with their priority, per-layer latencies and prefix sums (lists shared by
    requests of one shape), and each dispatched request's row in id order."""

    def __init__(self, requests: Sequence[Request], profiles: Mapping[str, Profile]) -> None:
        order = sorted(range(len(requests)), key=lambda i: (requests[i].arrival_s, requests[i].id))
        by_id = sorted(range(len(requests)), key=lambda i: requests[i].id)
        row_of = [0] * len(requests)
        for row, i in enumerate(by_id):
            row_of[i] = row
        lats: dict[tuple[str, int], tuple[list[float], list[float]]] = {}
        self.arrival: list[float] = []
        self.priority: list[int] = []
        self.layers: list[list[float]] = []
        self.cum: list[list[float]] = []
        self.row: list[int] = []
        for i in order:
            r = requests[i]
            key = (r.network, r.batch)
            if key not in lats:
                plan = profiles[r.network].plan(r.batch)
                lats[key] = (plan.latency_s.tolist(), plan.cum_s.tolist())
            lat, cum = lats[key]
            self.arrival.append(float(r.arrival_s))
            self.priority.append(int(r.priority))
            self.layers.append(lat)
            self.cum.append(cum)
            self.row.append(row_of[i])
        self.n = len(order)


def _stop_point(cum: list[float], executed_s: float) -> float:
    """The layer end at or after ``executed_s`` (seconds of work), a position up to
    :data:`BOUNDARY_TOL_S` past a layer end counting as that layer end (the engine's rule)."""
    i = bisect_left(cum, executed_s)
    if i and executed_s - cum[i - 1] <= BOUNDARY_TOL_S:
        return cum[i - 1]
    return cum[i] if i < len(cum) else executed_s
