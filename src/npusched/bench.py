"""Engine benchmark: the prefix-sum engine against a per-layer SimPy model of the same system.

Workload (PREMA-style): ``n`` requests over eight CNNs on the ``prema-npu`` device (PREMA
Table I), batch sizes 1/4/16 and priorities 1/3/9 drawn uniformly, Poisson arrivals at 90% of
the array's capacity (so queues stay bounded). Policy: P-HPF preempting at **layer boundaries**
with free checkpoints (``preemption_point="layer"``, ``checkpoint_cost=False``).

The SimPy reference runs the same requests as one process each that executes its layers one by
one, holding a ``simpy.PriorityResource`` for one layer at a time (release and re-request at
every layer boundary is exactly preemption at layer boundaries). The request key
``(-priority, dispatch index)`` makes the resource serve the highest priority first and break
ties in dispatch order, as HPF does. Both models must agree on every finish time.

Recurrent networks are left out on purpose: unrolled they only add more steps per request, which
flatters the prefix-sum engine without exercising anything new.
"""

from __future__ import annotations

import math
import resource
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from npusched.hardware.profile import Profile
from npusched.workloads.request import PRIORITY_LEVELS, Request

#: The eight networks of the benchmark mix (zoo names).
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
BENCH_LOAD = 0.9


def bench_profiles() -> dict[str, Profile]:
    """Profiles of :data:`BENCH_NETWORKS` on ``prema-npu`` (PREMA Table I), batch 1/4/16."""
    from npusched.hardware import get_device
    from npusched.hardware.profile import compile_profile
    from npusched.models.zoo import get_network

    dev = get_device("prema-npu")
    return {name: compile_profile(get_network(name), dev, BENCH_BATCHES) for name in BENCH_NETWORKS}


def synthetic_profiles(random_state: int = 0) -> dict[str, Profile]:
    """Eight profiles with 10-120 layers of log-uniform 5-500 us latency (no cost model; the
    engine-vs-SimPy agreement test uses them)."""
    from npusched.hardware.profile import Profile
    from npusched.models.ir import Layer, LayerKind, make_network

    rng = np.random.default_rng(random_state)
    out: dict[str, Profile] = {}
    for name in BENCH_NETWORKS:
        n = int(rng.integers(10, 121))
        lat1 = np.exp(rng.uniform(np.log(5e-6), np.log(500e-6), size=n))
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


def bench_workload(
    n_requests: int,
    profiles: Mapping[str, Profile],
    *,
    load: float = BENCH_LOAD,
    random_state: int | None = 0,
) -> list[Request]:
    """``n_requests`` requests with Poisson arrivals at ``load`` x the array's capacity.

    Networks, batch sizes (1/4/16) and priorities (1/3/9) are uniform; the arrival rate is
    ``load / E[isolated latency]`` requests per second, so the offered load is ``load``.
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
    return [
        Request(id=i, arrival_s=a, network=names[k], batch=BENCH_BATCHES[b], priority=p)
        for i, (a, k, b, p) in enumerate(
            zip(
                arrival.tolist(),
                net_idx.tolist(),
                bat_idx.tolist(),
                prio.tolist(),
                strict=True,
            )
        )
    ]


def simpy_reference(requests: Sequence[Request], profiles: Mapping[str, Profile]) -> np.ndarray:
    """Finish times (seconds, by request id order) of the per-layer SimPy model of P-HPF.

    Each request is a process that, for every layer, requests a ``PriorityResource`` of
    capacity 1 with key ``(-priority, dispatch index)``, holds it for the layer's latency and
    releases it: preemption at layer boundaries with free checkpoints.
    """
    import simpy

    env = simpy.Environment()
    npu = simpy.PriorityResource(env, capacity=1)
    ordered = sorted(requests, key=lambda r: (r.arrival_s, r.id))
    ids = sorted(r.id for r in requests)
    row = {rid: k for k, rid in enumerate(ids)}
    finish = np.full(len(requests), np.nan)
    lat_cache: dict[tuple[str, int], list[float]] = {}

    def layers(r: Request) -> list[float]:
        key = (r.network, r.batch)
        lats = lat_cache.get(key)
        if lats is None:
            lats = profiles[r.network].plan(r.batch).latency_s.tolist()
            lat_cache[key] = lats
        return lats

    def job(r: Request, key: tuple[int, int]) -> Any:
        for lat in layers(r):
            with npu.request(priority=key) as req:  # type: ignore[arg-type]  # any ordered key
                yield req
                yield env.timeout(lat)
        finish[row[r.id]] = env.now

    def source() -> Any:
        for k, r in enumerate(ordered):
            if r.arrival_s > env.now:
                yield env.timeout(r.arrival_s - env.now)
            env.process(job(r, (-r.priority, k)))

    env.process(source())
    env.run()
    return finish


def _peak_rss_mb() -> float:
    """Peak resident set size of this process in MiB (``ru_maxrss``: KiB on Linux)."""
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return rss / 1024.0 if sys.platform != "darwin" else rss / 2**20


def run_bench(
    n_requests: int = 100_000,
    seed: int = 0,
    reference: bool = True,
    progress: bool = True,
) -> dict[str, Any]:
    """Time the engine (and the SimPy reference) on the benchmark workload.

    Args:
        n_requests: requests in the workload.
        seed: workload seed.
        reference: also run the SimPy model, compare finish times and report the speed-up.
        progress: print progress lines on stderr.

    Times are process CPU seconds (``*_wall_s``: wall clock), so a busy machine does not skew
    the speed-up.

    Returns:
        A dict with at least ``n_requests``, ``requests_per_s`` (simulated requests per CPU
        second), ``layer_executions_per_s``, ``peak_memory_mb`` (peak RSS after the engine
        run, before SimPy), ``speedup_vs_simpy`` and ``max_abs_finish_diff_s`` (seconds; both
        ``None`` without the reference).
    """
    import npusched.policies.temporal  # noqa: F401  (registers P-HPF)
    from npusched.errors import ConfigError
    from npusched.policies.base import POLICIES
    from npusched.sim.engine import Simulator

    if isinstance(n_requests, bool) or not isinstance(n_requests, int) or n_requests < 1:
        raise ConfigError(f"--requests must be an integer >= 1, got {n_requests!r}")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ConfigError(f"--seed must be an integer >= 0, got {seed!r}")

    say: Callable[[str], None] = (
        (lambda s: print(f"bench: {s}", file=sys.stderr, flush=True)) if progress else _quiet
    )
    t = time.perf_counter()
    profiles = bench_profiles()
    device = profiles[BENCH_NETWORKS[0]].device_name
    reqs = bench_workload(n_requests, profiles, random_state=seed)
    say(f"{n_requests:,} requests on {device} ready in {time.perf_counter() - t:.2f} s")

    sim = Simulator(
        profiles,
        POLICIES.create("P-HPF", mechanism="checkpoint"),
        preemption_point="layer",
        checkpoint_cost=False,
    )
    # Speeds use process CPU time, so other processes sharing the machine do not skew the
    # ratio; wall-clock times are reported next to them.
    w, c = time.perf_counter(), time.process_time()
    res = sim.run(reqs)
    engine_s = time.process_time() - c
    engine_wall_s = time.perf_counter() - w
    peak_mb = _peak_rss_mb()
    cols = res.columns
    say(
        f"engine: {engine_s:.3f} s CPU ({engine_wall_s:.3f} s wall), "
        f"{n_requests / engine_s:,.0f} requests/s, "
        f"{res.layer_executions / engine_s:,.0f} layer executions/s, peak RSS {peak_mb:.0f} MiB"
    )
    out: dict[str, Any] = {
        "n_requests": n_requests,
        "seed": seed,
        "device": device,
        "networks": ",".join(BENCH_NETWORKS),
        "load": BENCH_LOAD,
        "policy": "P-HPF (layer-boundary preemption, free checkpoints)",
        "engine_s": engine_s,
        "engine_wall_s": engine_wall_s,
        "requests_per_s": n_requests / engine_s if engine_s > 0 else math.inf,
        "layer_executions": res.layer_executions,
        "layer_executions_per_s": res.layer_executions / engine_s if engine_s > 0 else math.inf,
        "events": res.events,
        "events_per_s": res.events / engine_s if engine_s > 0 else math.inf,
        "preemptions": int(cols["preemptions"].sum()),
        "makespan_s": res.makespan_s,
        "utilisation": res.busy_s / res.makespan_s if res.makespan_s > 0 else 0.0,
        "mean_latency_s": float(np.mean(cols["latency_s"])) if n_requests else 0.0,
        "peak_memory_mb": peak_mb,
        # Filled by the reference run; ``None`` (JSON null) without it.
        "simpy_s": None,
        "simpy_wall_s": None,
        "simpy_requests_per_s": None,
        "speedup_vs_simpy": None,
        "max_abs_finish_diff_s": None,
    }
    if reference:
        w, c = time.perf_counter(), time.process_time()
        ref_finish = simpy_reference(reqs, profiles)
        simpy_s = time.process_time() - c
        simpy_wall_s = time.perf_counter() - w
        diff = float(np.max(np.abs(ref_finish - cols["finish_s"]))) if n_requests else 0.0
        out.update(
            simpy_s=simpy_s,
            simpy_wall_s=simpy_wall_s,
            simpy_requests_per_s=n_requests / simpy_s if simpy_s > 0 else math.inf,
            speedup_vs_simpy=simpy_s / engine_s if engine_s > 0 else math.inf,
            max_abs_finish_diff_s=diff,
        )
        say(
            f"simpy: {simpy_s:.3f} s CPU ({simpy_wall_s:.3f} s wall); "
            f"speed-up {simpy_s / engine_s:.1f}x; "
            f"max |finish difference| {diff:.3g} s"
        )
    return out


def _quiet(_: str) -> None:
    return None
