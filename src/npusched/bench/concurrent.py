"""Scenario ``concurrent``: two jobs sharing the 16-subarray fission array."""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np

from npusched.bench.core import (
    Reporter,
    _cpu_seconds,
    _engine_entry,
    _no_report,
    _ratio,
    _time_engine,
    scenario,
)
from npusched.bench.simpy_concurrent import concurrent_simpy_reference
from npusched.bench.workload import BENCH_LOAD, CONCURRENT_JOBS, CONCURRENT_NETWORKS
from npusched.workloads.request import Request

# --- concurrent: jobs sharing the fission array, re-split at arrivals and completions ----------


def pair_split_policy() -> Any:
    """``concurrent``'s machine policy: the :data:`CONCURRENT_JOBS` earliest unfinished jobs
    (dispatch order; ids are in arrival order) share the array equally, so a job runs alone on
    16 subarrays, is cut to 8 when a second one is admitted and grows back when that one
    finishes. Every change of a running job's share is a re-allocation (CHECKPOINT to its next
    preemption point, then a start on the new units)."""
    from operator import attrgetter

    from npusched.policies.contract import NOTHING, Allocation, MachineView, Schedule
    from npusched.policies.machine import MachinePolicyBase

    by_id = attrgetter("id")

    class PairSplit(MachinePolicyBase):
        name = "pair-split"

        def select(self, view: MachineView) -> Schedule:
            held = sorted([*view.preempting, *view.running], key=by_id)
            jobs = sorted([*held, *view.ready[:CONCURRENT_JOBS]], key=by_id)[:CONCURRENT_JOBS]
            if not jobs:
                return NOTHING
            units = view.resources["array"].capacity // len(jobs)
            return Schedule(assign={j: Allocation("array", units) for j in jobs})

    return PairSplit()


def concurrent_setup(*, requests: int, seed: int) -> tuple[Any, list[Request]]:
    """``concurrent``'s simulator (:func:`pair_split_policy` on ``fission_array(16)``, layer
    preemption, free checkpoints) and requests (:data:`CONCURRENT_NETWORKS` at batch 1,
    priority 1, Poisson arrivals offering :data:`BENCH_LOAD` of the array alone)."""
    from npusched.hardware import compile_profile, get_device
    from npusched.models import get_network
    from npusched.sim.engine import Simulator
    from npusched.sim.resources import fission_array

    dev = get_device("planaria")
    profiles = {n: compile_profile(get_network(n), dev, (1,)) for n in CONCURRENT_NETWORKS}
    rng = np.random.default_rng(np.random.SeedSequence([seed, 9]))
    names = sorted(profiles)
    net_idx = rng.integers(0, len(names), size=requests)
    mean_s = float(np.mean([profiles[n].plan(1, subarrays=16).total_s for n in names]))
    arrival = np.cumsum(rng.exponential(mean_s / BENCH_LOAD, size=requests))
    reqs = [
        Request(id=i, arrival_s=a, network=names[k])
        for i, (a, k) in enumerate(zip(arrival.tolist(), net_idx.tolist(), strict=True))
    ]
    sim = Simulator(
        profiles,
        pair_split_policy(),
        machine=fission_array(16),
        preemption_point="layer",
        checkpoint_cost=False,
    )
    return sim, reqs


@scenario(
    "concurrent",
    default_requests=20_000,
    needs_simpy=True,
    description="two jobs share a 16-unit fission array, re-split at arrivals and completions",
    setup=concurrent_setup,
)
def concurrent_scenario(
    *,
    requests: int,
    seed: int,
    reference: bool = True,
    report: Reporter = _no_report,
    repeat: int = 1,
) -> dict[str, Any]:
    """The ``concurrent`` entry: the engine and (with ``reference``) its SimPy model, each
    the fastest of ``repeat`` interleaved runs."""
    report("workload", 0, 0)
    sim, reqs = concurrent_setup(requests=requests, seed=seed)
    res, engine_s, wall_s = _time_engine(sim, reqs, report)
    entry = _engine_entry("concurrent", res, requests, engine_s, wall_s, seed)
    entry["reallocations"] = int(res.columns["preemptions"].sum())
    entry.update(speedup_vs_simpy=None, max_abs_finish_diff_s=None)
    if not reference:
        return entry
    engine_finish = res.columns["finish_s"]
    profiles = sim.profiles
    del res, sim
    simpy_s = math.inf
    for rnd in range(repeat):
        if rnd:
            sim2 = concurrent_setup(requests=requests, seed=seed)[0]
            engine_s = min(engine_s, _cpu_seconds(sim2, reqs))
        report("simpy", rnd, repeat)
        c = time.process_time()
        finish = concurrent_simpy_reference(reqs, profiles)
        simpy_s = min(simpy_s, time.process_time() - c)
    entry.update(
        engine_s=engine_s,
        requests_per_s=_ratio(requests, engine_s),
        events_per_s=_ratio(entry["events"], engine_s),
        repeat=repeat,
        speedup_vs_simpy=_ratio(simpy_s, engine_s),
        max_abs_finish_diff_s=float(np.max(np.abs(finish - engine_finish))) if requests else 0.0,
        reference_s={"simpy": simpy_s},
    )
    return entry
