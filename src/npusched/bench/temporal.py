"""Scenario ``temporal``: P-HPF with layer-boundary preemption against the three references."""

from __future__ import annotations

import math
import time
from collections.abc import Mapping
from typing import Any

import numpy as np

from npusched.bench.core import (
    Reporter,
    _cpu_seconds,
    _engine_entry,
    _no_report,
    _ratio,
    _time_engine,
    bare_loops,
    scenario,
)
from npusched.bench.simpy_layer import simpy_reference
from npusched.bench.simpy_skip import simpy_skip_reference
from npusched.bench.workload import (
    _Shapes,
    bench_profiles,
    bench_table,
)
from npusched.hardware.profile import Profile
from npusched.workloads.request import RequestTable


def temporal_setup(
    *, requests: int, seed: int, profiles: Mapping[str, Profile] | None = None
) -> tuple[Any, RequestTable]:
    """``temporal``'s simulator (P-HPF, layer-boundary preemption, free checkpoints) and
    requests (:func:`bench_table` on ``profiles``, default :func:`bench_profiles`: a
    :class:`~npusched.workloads.request.RequestTable`, the form ``run_config`` gives the
    engine a generated workload)."""
    profs = bench_profiles() if profiles is None else profiles
    return _temporal_simulator(profs), bench_table(requests, profs, random_state=seed)


def _temporal_simulator(profiles: Mapping[str, Profile]) -> Any:
    """``temporal``'s simulator on ``profiles`` (a new one per engine run)."""
    import npusched.policies.temporal  # noqa: F401  (registers P-HPF)
    from npusched.policies.base import POLICIES
    from npusched.sim.engine import Simulator

    return Simulator(
        profiles,
        POLICIES.create("P-HPF", mechanism="checkpoint"),
        preemption_point="layer",
        checkpoint_cost=False,
    )


@scenario(
    "temporal",
    default_requests=100_000,
    needs_simpy=True,
    description="P-HPF, layer-boundary preemption, free checkpoints, 8 CNNs on prema-npu",
    setup=temporal_setup,
)
def temporal_scenario(
    *,
    requests: int,
    seed: int,
    reference: bool = True,
    report: Reporter = _no_report,
    profiles: Mapping[str, Profile] | None = None,
    repeat: int = 1,
) -> dict[str, Any]:
    """The ``temporal`` entry: the engine and (with ``reference``) the three references.

    ``profiles`` replaces the ``prema-npu`` profiles of :data:`BENCH_NETWORKS` (tests pass
    :func:`synthetic_profiles`). With ``repeat`` > 1 the engine and each reference run that
    many times, interleaved (engine, engine on the list, bare loop, SimPy skip, SimPy per
    round), and each keeps its fastest time (as ``timeit`` does): the VM's speed drifts
    between runs. The engine runs on the workload's table (``run_config``'s input), and once
    a round on the same requests as a list (``engine_list_s``).
    """
    report("workload", 0, 0)
    profs = bench_profiles() if profiles is None else profiles
    sim, table = temporal_setup(requests=requests, seed=seed, profiles=profs)
    # The engine is timed on the workload's table (its input on the CLI's path, made outside
    # the timing as the references' ``_Shapes`` are); ``engine_list_s``: on the same requests
    # as a list (the Python API's other input, each field read from the request objects).
    res, engine_s, wall_s = _time_engine(sim, table, report)
    entry = _engine_entry("temporal", res, requests, engine_s, wall_s, seed)
    entry.update(cold_engine_s=engine_s, cold_requests_per_s=_ratio(requests, engine_s))
    entry.update(
        speedup_vs_simpy=None,
        speedup_vs_simpy_skip=None,
        fraction_of_bare_loop=None,
        max_abs_finish_diff_s=None,
    )
    if not reference:
        return entry
    engine_finish = res.columns["finish_s"]
    del res, sim
    reqs = table.requests()
    engine_list_s = math.inf
    seconds: dict[str, float] = {}
    diffs: dict[str, float] = {}
    setup_s: dict[str, float] = {}
    bare_events = 0
    # the bare loop interpreted (the reference) and, when it is, compiled by mypyc (same source)
    bare_loop_reference, bare_compiled = bare_loops()
    refs = ["bare_loop", "simpy_skip", "simpy"]
    if bare_compiled is not None:
        refs.insert(1, "bare_loop_compiled")
    for rnd in range(repeat):
        if rnd:  # the engine again (its first run gave the entry, the records and the RSS)
            engine_s = min(engine_s, _cpu_seconds(_temporal_simulator(profs), table))
        report("engine_list", rnd, repeat)
        engine_list_s = min(engine_list_s, _cpu_seconds(_temporal_simulator(profs), reqs))
        for ref in refs:
            report(ref, rnd, repeat)
            # Timed from the same requests and profiles as the engine (whose run includes its
            # own set-up and result columns): the references' set-up is part of their time.
            c = time.process_time()
            shapes = _Shapes(reqs, profs)
            t_setup = time.process_time() - c
            if ref == "bare_loop":
                finish, bare_events = bare_loop_reference(shapes)
            elif ref == "bare_loop_compiled" and bare_compiled is not None:
                finish = bare_compiled(shapes)[0]
            elif ref == "simpy_skip":
                finish = simpy_skip_reference(shapes)
            else:
                finish = simpy_reference(shapes)
            t = time.process_time() - c
            if ref not in seconds or t < seconds[ref]:
                seconds[ref], setup_s[ref] = t, t_setup
            diffs[ref] = float(np.max(np.abs(finish - engine_finish))) if requests else 0.0
    entry.update(
        engine_s=engine_s,
        requests_per_s=_ratio(requests, engine_s),
        events_per_s=_ratio(entry["events"], engine_s),
        repeat=repeat,
    )
    entry.update(
        speedup_vs_simpy=_ratio(seconds["simpy"], engine_s),
        speedup_vs_simpy_skip=_ratio(seconds["simpy_skip"], engine_s),
        # Both count the same events, so the events/s ratio is the inverse ratio of times. Each
        # side from its own input made outside its timing: the bare loop's time is its loop
        # only (its inputs, ``_Shapes``), the engine's its whole run from the workload's table
        # (its plans, queues and result columns included). ``_with_setup``: both from the list
        # of requests, end to end (the bare loop with ``_Shapes`` made from it, the engine
        # reading it: ``engine_list_s``).
        fraction_of_bare_loop=_ratio(seconds["bare_loop"] - setup_s["bare_loop"], engine_s),
        fraction_of_bare_loop_with_setup=_ratio(seconds["bare_loop"], engine_list_s),
        engine_list_s=engine_list_s,
        list_requests_per_s=_ratio(requests, engine_list_s),
        # the same against the bare loop compiled by mypyc (None when it runs pure)
        fraction_of_compiled_bare_loop=(
            _ratio(seconds["bare_loop_compiled"] - setup_s["bare_loop_compiled"], engine_s)
            if "bare_loop_compiled" in seconds
            else None
        ),
        # The SimPy models' seconds above include the same pure-Python set-up (``_Shapes``),
        # which flatters the engine; ``_loop_only``: their models without it (the engine's
        # side still with its set-up, so these are the lower bounds).
        speedup_vs_simpy_loop_only=_ratio(seconds["simpy"] - setup_s["simpy"], engine_s),
        speedup_vs_simpy_skip_loop_only=_ratio(
            seconds["simpy_skip"] - setup_s["simpy_skip"], engine_s
        ),
        max_abs_finish_diff_s=max(diffs.values()),
        reference_s=seconds,
        reference_setup_s=setup_s,
        finish_diff_s=diffs,
        bare_loop_events=bare_events,
    )
    return entry
