"""Scenario ``prema``: P-PREMA-dynamic as ``npusched reproduce prema`` sets it up."""

from __future__ import annotations

from typing import Any

import numpy as np

from npusched.bench.core import Reporter, _engine_only, _no_report, scenario
from npusched.bench.workload import BENCH_LOAD
from npusched.workloads.request import RequestTable


def prema_setup(*, requests: int, seed: int) -> tuple[Any, RequestTable]:
    """``prema``'s simulator (P-PREMA-dynamic as ``reproduce prema`` configures it) and
    requests (:func:`~npusched.workloads.prema_table` at load :data:`BENCH_LOAD`: the table
    :func:`~npusched.experiments.runner.run_config` gives the engine for a PREMA workload;
    :func:`~npusched.workloads.prema_workload` is its requests as a list)."""
    from npusched.experiments.studies.prema.suite import PolicySpec, PremaSetup
    from npusched.hardware import compile_profile, get_device
    from npusched.models import get_network
    from npusched.policies.temporal.predictor import make_estimator
    from npusched.sim.engine import Simulator
    from npusched.workloads import prema_table, prema_workload

    setup = PremaSetup.of(seed=seed)
    dev = get_device(setup.device)
    bs = tuple(sorted(set(setup.batch_sizes)))
    profiles = {n: compile_profile(get_network(n), dev, bs) for n in setup.networks}
    # Window for load BENCH_LOAD from the mean isolated latency of the mix, estimated as
    # ``reproduce prema`` does (512 tasks per batch size, their own seed stream).
    mean_s = float(
        np.mean(
            [
                profiles[r.network].isolated_latency(r.batch, r.seq_in, r.seq_out)
                for b in bs
                for r in prema_workload(
                    512,
                    setup.networks,
                    0.0,
                    batch_sizes=(b,),
                    random_state=np.random.SeedSequence([seed, 99, b]),
                )
            ]
        )
    )
    reqs = prema_table(
        requests,
        setup.networks,
        requests * mean_s / BENCH_LOAD,
        batch_sizes=bs,
        random_state=np.random.SeedSequence([seed, 1]),
    )
    sim = Simulator(
        profiles,
        PolicySpec("P-PREMA-dynamic", "P-PREMA", "dynamic").build(),
        preemption_point=setup.preemption_point,
        estimator=make_estimator("prema"),
    )
    return sim, reqs


@scenario(
    "prema",
    default_requests=20_000,
    description="P-PREMA-dynamic, tile preemption, PREMA's 8 DNNs with RNNs on prema-npu",
    setup=prema_setup,
)
def prema_scenario(
    *,
    requests: int,
    seed: int,
    reference: bool = True,
    report: Reporter = _no_report,
    repeat: int = 1,
) -> dict[str, Any]:
    """The ``prema`` entry: P-PREMA-dynamic as ``reproduce prema`` runs it (no reference)."""
    return _engine_only("prema", prema_setup, requests, seed, report, repeat)[0]
