"""Run one configured simulation: requests -> profiles -> engine -> records and metrics.

``npusched run CONFIG --out DIR`` calls :func:`run_config_file`, which writes into ``DIR``:

* ``records.parquet``: one row per request (``SimResult.to_frame()``).
* ``summary.json``: metric name -> value (:func:`npusched.metrics.summarize`), sorted keys,
  ``null`` for undefined values. Written last: its presence marks a complete result. Besides
  the latency metrics it has the machine's ``energy_j`` (joules: execution energy plus each
  resource's idle power while idle, ``SimResult.energy_j``), ``peak_power_w`` (the highest
  summed power of the jobs running at once, from ``SimResult.power_timeline()``; under a power
  policy on a multi-unit resource with idle power, e.g. ``planaria-dfs``, the highest total of
  the machine, idle units included, :func:`npusched.metrics.power.machine_power_timeline`) and
  ``avg_power_w`` (``energy_j`` over the run, from the first arrival to the end).
* with ``--timeline`` (``timeline=True``): ``timeline.json`` (Chrome trace / Perfetto JSON),
  ``timeline.png`` (Gantt chart) and ``latency_cdf.png`` (:mod:`npusched.report.timeline`),
  written after the records and before the summary; a run without it removes old ones.

A run's files appear together or not at all: each is first written into a hidden staging
directory inside ``DIR``, and only when all are complete are they renamed into place (the old
``summary.json`` removed first, the new one renamed last, Ctrl-C held off meanwhile), so an
interrupted run leaves the previous run's outputs untouched and never pairs a summary with
records that are not its own (:func:`write_outputs`). The same config and seed give a
byte-identical ``summary.json`` and identical records.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from npusched._io import atomic_path, atomic_write_text, check_out_dir
from npusched._io import check_out_file as check_out_file  # re-exported (moved to _io)
from npusched.errors import ConfigError
from npusched.experiments.config import (
    PoissonWorkloadConfig,
    PremaWorkloadConfig,
    RunConfig,
    TraceWorkloadConfig,
    axes_for,
    import_builtin_policies,
    load_config,
    machine_for,
    power_for,
)
from npusched.report.progress import progress_bar
from npusched.workloads.request import Request, RequestTable

if TYPE_CHECKING:
    from npusched.hardware.profile import Profile
    from npusched.sim.engine import SimResult

__all__ = [
    "PROGRESS_DELAY_S",
    "RunOutput",
    "build_requests",
    "compile_profiles",
    "power_summary",
    "resolve_estimator",
    "run_config",
    "run_config_file",
    "summary_json",
    "write_outputs",
]

#: Seconds a run must last before its progress bar appears (any run length; shorter runs print
#: nothing).
PROGRESS_DELAY_S = 2.0

Estimator = Callable[[Request, "Profile"], float]



@dataclass
class RunOutput:
    """Everything a run produced (the files hold ``records`` and ``summary``). ``requests``
    is the workload as the simulator took it: for the generators a
    :class:`~npusched.workloads.request.RequestTable` (a sequence of requests made on access),
    for a trace a list. ``records`` is ``result.to_frame()``, made on first access when the
    constructor is given ``None`` (what :func:`run_config` passes: a sweep point reads the
    result's columns and never needs the frame)."""

    config: RunConfig
    requests: Sequence[Request]
    records: pd.DataFrame
    summary: dict[str, float]
    result: SimResult


def _records_get(self: RunOutput) -> pd.DataFrame:
    frame: pd.DataFrame | None = self.__dict__.get("_records")
    if frame is None:
        frame = self.__dict__["_records"] = self.result.to_frame()
    return frame


def _records_set(self: RunOutput, frame: pd.DataFrame | None) -> None:
    self.__dict__["_records"] = frame


# ``records`` a property over the field the dataclass made (its ``__init__`` assigns it)
RunOutput.records = property(_records_get, _records_set)  # type: ignore[assignment]


def resolve_estimator(name: str) -> Estimator | None:
    """The engine's ``estimator`` for ``[sim] predictor``: ``None`` (exact) for ``oracle``."""
    if name == "oracle":
        return None
    from npusched.policies.temporal.predictor import make_estimator

    est: Estimator = make_estimator(name)
    return est


def build_requests(cfg: RunConfig, base_dir: Path) -> Sequence[Request]:
    """The workload's requests (SLO multipliers are applied later, once profiles exist): a
    :class:`~npusched.workloads.request.RequestTable` for the generators (no request object is
    made on the way to the simulator), a list for a trace."""
    from npusched.workloads import load_trace, poisson_table, prema_table

    w = cfg.workload
    if isinstance(w, PremaWorkloadConfig):
        return prema_table(
            w.n_tasks,
            w.models,
            w.window_s,
            batch_sizes=w.batch_sizes,
            priorities=w.priorities,
            random_state=_stream(cfg, w),
        )
    if isinstance(w, PoissonWorkloadConfig):
        qos_table = w.qos if isinstance(w.qos, dict) else None
        return poisson_table(
            w.rate_per_s,
            models=w.models,
            duration_s=w.duration_s,
            n_requests=w.n_requests,
            weights=w.weights,
            priorities=w.priorities,
            qos=qos_table,
            batch_sizes=w.batch_sizes,
            random_state=_stream(cfg, w),
            arrivals=w.arrivals,
        )
    assert isinstance(w, TraceWorkloadConfig)
    path = Path(w.path)
    if not path.is_absolute():
        path = base_dir / path
    return load_trace(path, ignore_extra_columns=w.ignore_extra_columns)


def _stream(
    cfg: RunConfig, w: PremaWorkloadConfig | PoissonWorkloadConfig
) -> int | np.random.Generator:
    """The random state of a generated workload: the run's seed, or with ``seed_stream`` the
    stream ``SeedSequence([*seed_stream, seed])`` (the reproduction's, see the config field)."""
    from npusched.workloads import stream_rng

    if w.seed_stream is None:
        return cfg.seed
    return stream_rng(w.seed_stream, cfg.seed)


def _exit_stream(cfg: RunConfig) -> int | np.random.Generator:
    """The random state of the exits drawn for a network's requests: the run's seed, or with
    the workload's ``seed_stream`` part 1 of its stream (the Fluid reproduction's exits)."""
    from npusched.workloads import stream_rng

    prefix = getattr(cfg.workload, "seed_stream", None)
    return cfg.seed if prefix is None else stream_rng(prefix, cfg.seed, part=1)


def _slo_multiplier(cfg: RunConfig) -> float | None:
    w = cfg.workload
    if isinstance(w, PoissonWorkloadConfig | TraceWorkloadConfig) and isinstance(w.qos, float):
        return float(w.qos)
    return None


def compile_profiles(
    requests: Sequence[Request],
    device: Any,
    *,
    axes: Mapping[str, Sequence[Any]] | None = None,
    batch_sizes: Sequence[int] = (),
    networks: Mapping[str, Any] | None = None,
) -> dict[str, Profile]:
    """Profiles of every network in ``requests`` for every batch size it is requested at (and
    every one of ``batch_sizes``, e.g. ``1..b_max`` for a batching policy that merges
    requests), on the plan ``axes`` given (default: every axis the device offers).
    ``networks`` replaces zoo networks by name (e.g. with early exits attached)."""
    from npusched.hardware import compile_profile
    from npusched.hardware.profile import compile_sized_profile
    from npusched.models.zoo import get_network, size_range

    batches: dict[str, set[int]] = {}
    sizes: dict[str, set[int | None]] = {}
    # the distinct shapes first (one set of tuples: a pass over the requests in C-level
    # hashing, then a loop over a handful of shapes)
    for name, batch, seq_in in _shapes_of(requests):
        batches.setdefault(name, set()).add(batch)
        sizes.setdefault(name, set()).add(seq_in)
    for bs in batches.values():
        bs.update(int(b) for b in batch_sizes)
    given = networks or {}
    out: dict[str, Profile] = {}
    # the device's cache key made once for every network (it validates every parameter)
    device_key = device.cache_key() if batches else None
    for name, bs in sorted(batches.items()):
        lens = sizes[name]
        if name not in given and size_range(name) is not None and lens != {None}:
            # a sized network (BERT) with per-request lengths: one profile over its sizes
            if None in lens:
                raise ConfigError(
                    f"workload: {name} requests give seq_in (its size) for some requests and not "
                    f"others; give every {name} request a seq_in, or none"
                )
            out[name] = compile_sized_profile(
                name, device, sorted(bs), sorted(n for n in lens if n is not None), axes=axes
            )
            continue
        out[name] = compile_profile(
            given.get(name) or get_network(name),
            device,
            sorted(bs),
            axes=axes,
            device_key=device_key,
        )
    return out


def _shapes_of(requests: Sequence[Request]) -> set[tuple[str, int, int | None]]:
    """The distinct ``(network, batch, seq_in)`` of ``requests`` (one set of tuples: a pass
    in C-level hashing; a table's columns are read as they are)."""
    if isinstance(requests, RequestTable):
        # from the table's numbered shapes (kept for the simulator, which numbers them too)
        keys, _ = requests.shapes()
        return {(k[0], k[1], k[2] if len(k) == 4 else None) for k in keys}
    return {(r.network, r.batch, r.seq_in) for r in requests}


def with_exits(
    cfg: RunConfig, requests: Sequence[Request], source: str
) -> tuple[Sequence[Request], dict[str, Any]]:
    """``[exits.NETWORK]``: each such network with its exits attached and their heads in the
    layer table (the form a profile compiles), and every request of it given the exit it
    leaves at, drawn from the rates with the run's seed (with the workload's ``seed_stream``:
    from that stream's part 1, :func:`npusched.workloads.stream_rng`)."""
    from dataclasses import replace

    from npusched.errors import NpuschedError
    from npusched.models.exits import attach_exits, exit_rates, inline_heads, sample_exits
    from npusched.models.zoo import get_network

    if not cfg.exits:
        return requests, {}
    nets: dict[str, Any] = {}
    rates: dict[str, Any] = {}
    for name, ex in cfg.exits.items():
        try:
            net = attach_exits(get_network(name), ex.n_exits, ex.rates)
            rates[name] = exit_rates(net)
        except NpuschedError as e:
            raise ConfigError(f"{source}: exits.{name}: {e}") from None
        nets[name] = inline_heads(net)
    out = list(requests)
    for name, p in rates.items():
        idx = [i for i, r in enumerate(out) if r.network == name]
        drawn = sample_exits(p, len(idx), random_state=_exit_stream(cfg))
        for i, k in zip(idx, drawn.tolist(), strict=True):
            out[i] = replace(out[i], exit=int(k))
    return out, nets


def _in_job_range(
    cfg: RunConfig,
    w: PremaWorkloadConfig,
    profiles: Mapping[str, Profile],
    machine: Any,
    source: str,
) -> list[Request]:
    """``w``'s PREMA workload with only tasks whose isolated latency lies in ``job_range_ms``:
    tasks are drawn in pools from the same seeded stream and kept in order until ``n_tasks``
    remain (the uniform mix conditioned on the range), then renumbered 0..n-1 by dispatch."""
    from dataclasses import replace

    from npusched.workloads import prema_workload

    assert w.job_range_ms is not None
    lo, hi = (x * 1e-3 for x in w.job_range_ms)
    isolated = _isolated_fn(profiles, machine)
    stream = _stream(cfg, w)
    rng = stream if isinstance(stream, np.random.Generator) else np.random.default_rng(stream)
    kept: list[Request] = []
    for _ in range(1000):
        pool = prema_workload(
            4 * w.n_tasks,
            w.models,
            w.window_s,
            batch_sizes=w.batch_sizes,
            priorities=w.priorities,
            random_state=rng,
        )
        kept += [r for r in pool if lo <= isolated(r) <= hi][: w.n_tasks - len(kept)]
        if len(kept) == w.n_tasks:
            break
    else:
        raise ConfigError(
            f"{source}: workload.job_range_ms: no task of {', '.join(w.models)} at batch "
            f"{w.batch_sizes} lies in {list(w.job_range_ms)} ms"
        )
    kept.sort(key=lambda r: (r.arrival_s, r.id))
    return [replace(r, id=i) for i, r in enumerate(kept)]


def _isolated_fn(profiles: Mapping[str, Profile], machine: Any) -> Callable[[Request], float]:
    """A request's isolated latency for SLO multipliers: its fastest plan variant among those
    that agree with the machine's first resource held whole (on ``planaria``: 16 subarrays; on
    ``ab9``: the fastest clock, i.e. uncapped)."""
    res0 = machine.resources[0]
    whole = res0.variant(res0.capacity)

    def isolated(r: Request) -> float:
        prof = profiles[r.network]
        if not prof.axes:
            return prof.isolated_latency(r.batch, r.seq_in, r.seq_out)
        fits = [
            v for v in prof.variants() if all(v.get(k, x) == x for k, x in whole.items())
        ] or prof.variants()
        return min(prof.isolated_latency(r.batch, r.seq_in, r.seq_out, **v) for v in fits)

    return isolated


def power_summary(result: SimResult, machine: Any = None) -> dict[str, float]:
    """``energy_j``, ``peak_power_w`` and ``avg_power_w`` of a run (see the module docstring;
    ``peak_power_w`` needs ``record_power=True``, else it is nan; with ``machine`` and a
    recorded timeline it is the machine's total, idle units included)."""
    cols = result.columns
    start = float(np.min(cols["arrival_s"])) if len(cols["arrival_s"]) else 0.0
    span = result.end_s - start
    peak = math.nan
    pieces = result.power_columns
    if pieces is not None and machine is not None and result.timeline is not None:
        from npusched.metrics.power import peak_machine_power_w

        peak = peak_machine_power_w(result, machine)
    elif pieces is not None:
        from npusched.metrics.power import peak_piece_power_w

        peak = peak_piece_power_w(pieces)
    return {
        "energy_j": float(result.energy_j),
        "peak_power_w": peak,
        "avg_power_w": float(result.energy_j) / span if span > 0 else math.nan,
    }


@contextmanager
def _progress_bar(total: int, enabled: bool) -> Iterator[Callable[[int], None] | None]:
    """The engine's ``progress`` callback drawing a bar on stderr over ``total`` requests (shown
    once the run has lasted :data:`PROGRESS_DELAY_S`, whatever its size), or ``None`` when
    disabled."""
    with progress_bar(
        total, "simulating", enabled=enabled, transient=True, eta=True, delay_s=PROGRESS_DELAY_S
    ) as bar:
        yield None if bar is None else bar.set_completed


def run_config(
    cfg: RunConfig,
    *,
    base_dir: str | os.PathLike[str] = ".",
    progress: bool = False,
    source: str = "<config>",
    timeline: bool = False,
) -> RunOutput:
    """Simulate ``cfg`` in process and compute its metrics (writes nothing).

    Args:
        cfg: a validated config.
        base_dir: directory that relative paths in the config (trace files) are relative to.
        progress: show a progress bar on stderr for large runs.
        source: the config's name in error messages.
    """
    import_builtin_policies()
    # The collector is held off for the whole run (workload, records, summary), as the engine
    # holds it off for its loop: nothing here makes a reference cycle that outlives the run.
    from npusched.sim.common import collector_paused

    with collector_paused():
        return _run_config(cfg, Path(base_dir), progress, source, timeline)


def _run_config(
    cfg: RunConfig, base_dir: Path, progress: bool, source: str, timeline: bool
) -> RunOutput:
    """:func:`run_config` after the policies are registered."""
    from npusched.hardware import get_device
    from npusched.metrics import summarize
    from npusched.policies.machine import get_any_policy
    from npusched.sim.engine import Simulator
    from npusched.workloads import apply_slo

    requests = build_requests(cfg, base_dir)
    if not requests:
        if isinstance(cfg.workload, TraceWorkloadConfig):
            raise ConfigError(f"{source}: workload.path: trace {cfg.workload.path!r} has no rows")
        raise ConfigError(f"{source}: workload: no requests (raise n_tasks, duration_s or rate)")
    device = get_device(cfg.hardware.device, **cfg.hardware.params)
    machine = machine_for(cfg, device, source)
    power = power_for(cfg, device, source)
    axes = axes_for(cfg, device, source, machine=machine, power=power)
    policy = get_any_policy(cfg.policy.name, **cfg.policy.params)
    # a batching policy merges single requests into batches of up to b_max
    b_max = getattr(policy, "b_max", None)
    merged = range(1, b_max + 1) if isinstance(b_max, int) and b_max > 1 else ()
    w = cfg.workload
    ranged = isinstance(w, PremaWorkloadConfig) and w.job_range_ms is not None
    # with a job range, tasks are redrawn: compile every model at every batch size
    shapes = (
        [Request(0, 0.0, m, batch=b) for m in w.models for b in w.batch_sizes]
        if isinstance(w, PremaWorkloadConfig) and ranged
        else []
    )
    requests, exit_nets = with_exits(cfg, requests, source)
    profiles = compile_profiles(
        [*requests, *shapes] if shapes else requests,
        device,
        axes=axes,
        batch_sizes=merged,
        networks=exit_nets,
    )
    if isinstance(w, PremaWorkloadConfig) and ranged:
        requests, _ = with_exits(cfg, _in_job_range(cfg, w, profiles, machine, source), source)
    mult = _slo_multiplier(cfg)
    if mult is not None:
        requests = apply_slo(requests, _isolated_fn(profiles, machine), mult)
    shared_cap = power is not None and any(
        r.capacity > 1 and r.idle_power_w > 0 for r in machine.resources
    )
    sim = Simulator(
        profiles,
        policy,
        machine=machine,
        preemption_point=cfg.sim.preemption_point,
        checkpoint_cost=cfg.sim.checkpoint_cost,
        estimator=resolve_estimator(cfg.sim.predictor),
        # the machine's power needs the units computing over time (dropped after the summary
        # unless the timeline was asked for)
        record_timeline=timeline or shared_cap,
        record_power=True,
        power=power,
        power_cap_w=None if power is None else float(power.cap_w),
    )
    with _progress_bar(len(requests), progress) as callback:
        result = sim.run(requests, until=cfg.sim.until_s, progress=callback)
    # the metrics read numeric columns only: the finished rows of those, taken from the
    # result's arrays (no frame is built; every row is kept when every request finished)
    cols = result.columns
    done = ~np.isnan(cols["finish_s"])
    n_done = int(np.count_nonzero(done))
    finished = {
        k: v if n_done == len(done) else v[done] for k, v in cols.items() if v.dtype != object
    }
    summary = summarize(
        finished,
        busy_s=result.busy_s,
        makespan_s=result.makespan_s,
        sla_n=cfg.metrics.sla_n,
        percentiles=cfg.metrics.percentiles,
    )
    # summarize counts the records it is given (the finished ones): name both counts plainly
    summary["n_requests"] = float(len(done))
    summary["n_finished"] = float(n_done)
    summary["n_unfinished"] = float(len(done) - n_done)
    summary.update(power_summary(result, machine if shared_cap else None))
    if shared_cap and not timeline:
        result.timeline = None
    return RunOutput(cfg, requests, None, summary, result)  # type: ignore[arg-type]


#: Summary keys that are counts, written as JSON integers.
COUNT_KEYS = frozenset({"n_requests", "n_finished", "n_unfinished", "preemptions"})


def summary_json(summary: Mapping[str, float]) -> str:
    """Deterministic JSON text of a summary: sorted keys, ``null`` for NaN/inf, counts
    (:data:`COUNT_KEYS`) as integers, a trailing newline."""

    def cell(k: str, v: float) -> float | int | None:
        if isinstance(v, float) and not np.isfinite(v):
            return None
        if k in COUNT_KEYS and float(v).is_integer():
            return int(v)
        return v

    clean = {k: cell(k, v) for k, v in sorted(summary.items())}
    return json.dumps(clean, indent=2, sort_keys=True, allow_nan=False) + "\n"


def write_outputs(out: RunOutput, out_dir: str | os.PathLike[str]) -> tuple[Path, Path]:
    """Write the run's files into ``out_dir`` together or not at all: ``records.parquet``,
    the ``--timeline`` files (if recorded) and ``summary.json``.

    Every file is first written into a hidden staging directory inside ``out_dir``; only when
    all are complete are they renamed into place (the old summary removed first, the new one
    renamed last, stale timeline files of an earlier run removed), with Ctrl-C held off for
    those few renames. An interrupted run therefore leaves the previous run's outputs as they
    were. Returns the records' and the summary's paths."""
    import shutil
    import tempfile

    from npusched.report.timeline import TIMELINE_FILES

    d = Path(out_dir)
    check_out_dir(d)
    try:
        d.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise ConfigError(f"{d}: cannot create the output directory: {e.strerror}") from None
    rec_path, sum_path = d / "records.parquet", d / "summary.json"
    stage = Path(tempfile.mkdtemp(prefix=".npusched-run-", dir=d))
    try:
        with atomic_path(stage / rec_path.name) as rec_tmp:
            out.records.reset_index(drop=True).to_parquet(rec_tmp, index=False, engine="pyarrow")
        names = [rec_path.name]
        if out.result.timeline is not None:
            _write_timeline(out, stage)
            names += list(TIMELINE_FILES)
        atomic_write_text(stage / sum_path.name, summary_json(out.summary))
        with _no_interrupt():
            sum_path.unlink(missing_ok=True)  # a summary never sits beside other records
            for name in TIMELINE_FILES:
                if name not in names:
                    (d / name).unlink(missing_ok=True)
            for name in names:
                os.replace(stage / name, d / name)
            os.replace(stage / sum_path.name, sum_path)
    finally:
        shutil.rmtree(stage, ignore_errors=True)
    return rec_path, sum_path


@contextmanager
def _no_interrupt() -> Iterator[None]:
    """Hold SIGINT (Ctrl-C) until the block ends (main thread, POSIX; elsewhere a no-op)."""
    import signal
    import threading

    mask = getattr(signal, "pthread_sigmask", None)
    if mask is None or threading.current_thread() is not threading.main_thread():
        yield
        return
    old = mask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        mask(signal.SIG_SETMASK, old)


def _write_timeline(out: RunOutput, d: Path) -> None:
    """The ``--timeline`` files (each written atomically) into ``d``."""
    from npusched.report.timeline import write_timeline_outputs

    cfg = out.config
    name = f"{cfg.name}: " if cfg.name else ""
    meta = {"config": cfg.name, "policy": cfg.policy.name, "seed": cfg.seed}
    write_timeline_outputs(
        out.result.timeline or [],
        out.records,
        d,
        device=cfg.hardware.device,
        title=f"{name}{cfg.policy.name} on {cfg.hardware.device}, seed {cfg.seed}",
        metadata=meta,
    )


def run_config_file(
    path: str | os.PathLike[str],
    out_dir: str | os.PathLike[str],
    seed: int | None = None,
    progress: bool = True,
    timeline: bool = False,
) -> RunOutput:
    """``npusched run``: load ``path``, simulate, write the outputs and return them (the CLI
    prints the summary).

    Args:
        path: a ``.toml`` / ``.yaml`` run config.
        out_dir: output directory (created if missing).
        seed: overrides the config's ``seed``.
        progress: show a progress bar on stderr (runs with many requests).
        timeline: also record the timeline and write ``timeline.json`` (Chrome trace),
            ``timeline.png`` (Gantt chart) and ``latency_cdf.png`` (see
            :mod:`npusched.report.timeline`).
    """
    p = Path(path)
    cfg = load_config(p)
    if seed is not None:
        if seed < 0:
            raise ConfigError(f"--seed must be >= 0, got {seed}")
        cfg = cfg.model_copy(update={"seed": int(seed)})
    check_out_dir(out_dir)  # before a long simulation, not after it
    out = run_config(cfg, base_dir=p.parent, progress=progress, source=str(p), timeline=timeline)
    write_outputs(out, out_dir)
    return out
