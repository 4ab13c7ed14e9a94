"""``npusched validate``: real runs and the simulator's predictions of them, side by side.

For a config (``examples/validate_cpu.toml``):

1. every tenant network is exported (:mod:`npusched.models.onnx_export`) at its ``input_size``,
   cut into ``groups`` layer groups and loaded as ONNX Runtime sessions (``threads`` intra-op
   threads, ``provider`` cpu or cuda);
2. the ``cpu-ort`` device is calibrated on this machine (``calibration.json``);
3. for each load and policy, MLPerf LoadGen drives the real executor (Server scenario at
   ``qps = load / mean isolated seconds`` of the tenant mix, or SingleStream), and the simulator
   replays LoadGen's real issue instants on the calibrated profile with the same policy;
4. both runs' records, LoadGen's logs, ``summary.json``, latency CDF plots and ``report.md``
   are written to ``--out``.

The simulator also replays each point once more with every request's *measured* group seconds
(its own plan, from the real run): the ``ablation`` record. What that removes from the error is
the per-group-time term; what is left is queueing, preemption cost and dispatch overhead.

Every point runs ``repeats`` times (LoadGen seeds ``seed + r``, or ``seed`` each time with
``repeat_seeds = "same"``) and is scored on the means over its repeats, with the measured spread
(``spread``, ``within_spread``, ``paired_error_pct``, ``standard_error_pct``) beside it; see
:func:`run_point`. The worker thread is pinned to a CPU of its own (``pin``,
:mod:`npusched.realexec.affinity`) and Python's garbage collector is off while a run is timed
(``gc_off``).
"""

from __future__ import annotations

import json
import math
import tomllib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd

from npusched.errors import ConfigError
from npusched.hardware.profile import Profile
from npusched.metrics.core import antt, fairness, slo_attainment, stp
from npusched.realexec.affinity import CpuPlan, pinned, plan_cpus
from npusched.workloads.request import Request

METRICS = ("antt", "stp", "fairness", "p99_s", "sla_rate")
#: Metric -> whether larger is better (for the policy orderings of the rank agreement).
HIGHER_IS_BETTER = {"antt": False, "stp": True, "fairness": True, "p99_s": False, "sla_rate": True}
TARGETS = {
    "median_abs_pct": 10.0,
    "p90_abs_pct": 25.0,
    "antt_abs_pct": 15.0,
    "p99_abs_pct": 15.0,
    "antt_tau": 1.0,
}
_KEYS = {
    "policies",
    "loads",
    "scenario",
    "n_requests",
    "groups",
    "threads",
    "provider",
    "warmup",
    "runs",
    "statistic",
    "warmup_s",
    "seed",
    "tenants",
    "quick",
    "overheads",
    "recalibrate",
    "repeats",
    "repeat_seeds",
    "pin",
    "gc_off",
}
#: How the repeats of a point pick LoadGen's seeds: ``vary`` (``seed + r``: new arrivals and
#: tenant order each repeat) or ``same`` (``seed`` every time: the same arrivals, so the spread
#: is the execution's alone).
REPEAT_SEEDS = ("vary", "same")
_TENANT_KEYS = {"network", "input_size", "priority", "slo_factor"}


@dataclass(frozen=True)
class Tenant:
    """A tenant: zoo ``network`` at square ``input_size`` (pixels; ``None``: the zoo's own),
    ``priority`` (PREMA levels 1/3/9) and SLO ``slo_factor`` x its calibrated isolated time."""

    network: str
    input_size: int | None = None
    priority: int = 1
    slo_factor: float = 10.0


@dataclass(frozen=True)
class ValidateConfig:
    """The ``validate`` config (see ``examples/validate_cpu.toml`` for every field)."""

    tenants: tuple[Tenant, ...]
    policies: tuple[str, ...] = ("NP-FCFS", "P-HPF", "P-SJF", "P-PREMA")
    loads: tuple[float, ...] = (0.5, 0.9)
    scenario: str = "server"
    n_requests: int = 400
    groups: int = 4
    threads: int = 1
    provider: str = "cpu"
    warmup: int = 3
    runs: int = 15
    statistic: str = "median"
    warmup_s: float = 0.0
    seed: int = 0
    overheads: bool = True
    recalibrate: bool = True
    repeats: int = 1
    repeat_seeds: str = "vary"
    pin: bool = True
    gc_off: bool = True
    source: str = ""


def _bad(src: str, fld: str, what: str, allowed: str) -> ConfigError:
    return ConfigError(f"{src}: {fld}: {what}; allowed: {allowed}")


def parse_config(raw: Mapping[str, Any], src: str, *, quick: bool = False) -> ValidateConfig:
    """Check a parsed config (``src`` names it in errors) and apply ``[quick]`` if asked."""
    from npusched.models.zoo import get_network
    from npusched.policies.base import POLICIES
    from npusched.realexec.loadgen import SCENARIOS

    unknown = set(raw) - _KEYS
    if unknown:
        k = sorted(unknown)[0]
        raise _bad(src, k, "unknown field", ", ".join(sorted(_KEYS)))
    data = dict(raw)
    q = data.pop("quick", {})
    if not isinstance(q, dict) or set(q) - (_KEYS - {"quick", "tenants"}):
        raise _bad(src, "quick", "must be a table of top-level fields", "n_requests, runs, ...")
    if quick:
        data.update(q)
    tenants_raw = data.pop("tenants", None)
    if not isinstance(tenants_raw, list) or not tenants_raw:
        raise _bad(src, "tenants", "missing or empty", "[[tenants]] tables with network = ...")
    tenants = []
    for i, t in enumerate(tenants_raw):
        where = f"tenants[{i}]"
        if not isinstance(t, dict) or "network" not in t:
            raise _bad(src, where, "needs a network", "a zoo CNN name")
        if set(t) - _TENANT_KEYS:
            k = sorted(set(t) - _TENANT_KEYS)[0]
            raise _bad(src, f"{where}.{k}", "unknown field", ", ".join(sorted(_TENANT_KEYS)))
        try:
            get_network(str(t["network"]))
        except Exception as e:  # the zoo's own message names the allowed networks
            raise _bad(src, f"{where}.network", str(e).splitlines()[0], "zoo CNNs") from None
        size = t.get("input_size")
        if size is not None and (not isinstance(size, int) or isinstance(size, bool) or size < 8):
            raise _bad(src, f"{where}.input_size", f"{size!r}", "integers >= 8")
        pr = t.get("priority", 1)
        if not isinstance(pr, int) or isinstance(pr, bool) or pr < 1:
            raise _bad(src, f"{where}.priority", f"{pr!r}", "integers >= 1 (PREMA: 1, 3, 9)")
        slo = t.get("slo_factor", 10.0)
        if not isinstance(slo, int | float) or isinstance(slo, bool) or not slo > 0:
            raise _bad(src, f"{where}.slo_factor", f"{slo!r}", "numbers > 0")
        tenants.append(Tenant(str(t["network"]), size, pr, float(slo)))
    names = [t.network for t in tenants]
    if len(set(names)) != len(names):
        raise _bad(src, "tenants", "a network appears twice", "distinct networks")
    policies = data.get("policies", ValidateConfig.policies)
    if not isinstance(policies, list | tuple) or not policies:
        raise _bad(src, "policies", f"{policies!r}", "a list of temporal policy names")
    for p in policies:
        if p not in POLICIES:
            raise _bad(src, "policies", f"unknown policy {p!r}", ", ".join(sorted(POLICIES)))
        if getattr(POLICIES.create(p), "kind", "temporal") != "temporal":
            raise _bad(src, "policies", f"{p!r} is not a temporal policy", "temporal policies")
    loads = data.get("loads", ValidateConfig.loads)
    if (
        not isinstance(loads, list | tuple)
        or not loads
        or not all(isinstance(x, int | float) and 0 < x < 1.5 for x in loads)
    ):
        raise _bad(src, "loads", f"{loads!r}", "a list of utilisations in (0, 1.5)")
    scenario = data.get("scenario", "server")
    if scenario not in SCENARIOS:
        raise _bad(src, "scenario", f"{scenario!r}", ", ".join(SCENARIOS))

    def pos_int(name: str, default: int, lo: int = 1) -> int:
        v = data.get(name, default)
        if not isinstance(v, int) or isinstance(v, bool) or v < lo:
            raise _bad(src, name, f"{v!r}", f"integers >= {lo}")
        return v

    provider = data.get("provider", "cpu")
    if provider not in ("cpu", "cuda"):
        raise _bad(src, "provider", f"{provider!r}", "cpu, cuda")
    return ValidateConfig(
        tenants=tuple(tenants),
        policies=tuple(str(p) for p in policies),
        loads=tuple(float(x) for x in loads),
        scenario=str(scenario),
        n_requests=pos_int("n_requests", ValidateConfig.n_requests, 4),
        groups=pos_int("groups", ValidateConfig.groups),
        threads=pos_int("threads", ValidateConfig.threads),
        provider=str(provider),
        warmup=pos_int("warmup", ValidateConfig.warmup, 0),
        runs=pos_int("runs", ValidateConfig.runs, 3),
        statistic=_statistic(data, src),
        warmup_s=_seconds(data, src, "warmup_s"),
        seed=pos_int("seed", 0, 0),
        overheads=_flag(data, src, "overheads"),
        recalibrate=_flag(data, src, "recalibrate"),
        repeats=pos_int("repeats", ValidateConfig.repeats),
        repeat_seeds=_choice(data, src, "repeat_seeds", REPEAT_SEEDS),
        pin=_flag(data, src, "pin"),
        gc_off=_flag(data, src, "gc_off"),
        source=src,
    )


def _seconds(data: Mapping[str, Any], src: str, name: str) -> float:
    v = data.get(name, 0.0)
    if not isinstance(v, int | float) or isinstance(v, bool) or not 0 <= v < 3600:
        raise _bad(src, name, f"{v!r}", "seconds in [0, 3600)")
    return float(v)


def _flag(data: Mapping[str, Any], src: str, name: str) -> bool:
    v = data.get(name, True)
    if not isinstance(v, bool):
        raise _bad(src, name, f"{v!r}", "true, false")
    return v


def _choice(data: Mapping[str, Any], src: str, name: str, allowed: Sequence[str]) -> str:
    v = data.get(name, allowed[0])
    if v not in allowed:
        raise _bad(src, name, f"{v!r}", ", ".join(allowed))
    return str(v)


def _statistic(data: Mapping[str, Any], src: str) -> str:
    from npusched.realexec.calibrate import STATISTICS

    v = data.get("statistic", "median")
    if v not in STATISTICS:
        raise _bad(src, "statistic", f"{v!r}", ", ".join(STATISTICS))
    return str(v)


def load_config(path: str | Path, *, quick: bool = False) -> ValidateConfig:
    """Read and check a ``validate`` TOML config (one-line :class:`ConfigError` if bad)."""
    p = Path(path)
    if p.suffix.lower() != ".toml":
        raise ConfigError(f"{p}: unknown config format {p.suffix!r}; allowed: .toml")
    try:
        raw = tomllib.loads(p.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"{p}: config file not found") from None
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"{p}: TOML syntax error: {e}".replace("\n", " ")) from None
    return parse_config(raw, str(p), quick=quick)


# --- metrics -----------------------------------------------------------------------------------
def point_metrics(df: pd.DataFrame) -> dict[str, float]:
    """ANTT, STP, fairness (PREMA Eq. 1-2), p99 latency (seconds), SLA rate (fraction meeting
    the SLO)."""
    return {
        "antt": antt(df),
        "stp": stp(df),
        "fairness": fairness(df),
        "p99_s": float(np.percentile(df["latency_s"].to_numpy(), 99)),
        "sla_rate": slo_attainment(df),
    }


def request_errors(measured: pd.DataFrame, predicted: pd.DataFrame) -> dict[str, float]:
    """Median and p90 of ``|predicted - measured| / measured`` latency per request (percent)."""
    m = measured.set_index("id")["latency_s"]
    p = predicted.set_index("id")["latency_s"].reindex(m.index)
    err = (np.abs(p.to_numpy() - m.to_numpy()) / m.to_numpy()) * 100.0
    return {
        "median_abs_pct": float(np.median(err)),
        "p90_abs_pct": float(np.percentile(err, 90)),
    }


def kendall_tau(a: Sequence[float], b: Sequence[float]) -> float:
    """Kendall's tau-b between two score lists (1.0: the same order; NaN if undefined)."""
    n = len(a)
    conc = disc = ties_a = ties_b = 0
    for i in range(n):
        for j in range(i + 1, n):
            da = np.sign(a[i] - a[j])
            db = np.sign(b[i] - b[j])
            if da == 0 and db == 0:
                continue
            if da == 0:
                ties_a += 1
            elif db == 0:
                ties_b += 1
            elif da == db:
                conc += 1
            else:
                disc += 1
    denom = math.sqrt((conc + disc + ties_a) * (conc + disc + ties_b))
    return float((conc - disc) / denom) if denom > 0 else float("nan")


def resolved_tau(points: Sequence[Mapping[str, Any]], metric: str) -> dict[str, Any]:
    """Kendall tau over the policy pairs the measurement resolves: pairs whose measured means
    differ by more than twice their combined standard error (over the repeats); a pair inside
    that is a tie the measurement cannot order and is left out. Returns ``tau`` (NaN if no
    pair is resolved), ``pairs`` resolved and ``of`` all pairs."""
    conc = disc = n = 0
    for i in range(len(points)):
        for j in range(i + 1, len(points)):
            n += 1
            a, b = points[i], points[j]
            sa, sb = a["spread"]["measured"][metric], b["spread"]["measured"][metric]
            se = math.sqrt(
                sa["std"] ** 2 / max(len(sa["values"]), 1)
                + sb["std"] ** 2 / max(len(sb["values"]), 1)
            )
            dm = a["measured"][metric] - b["measured"][metric]
            if abs(dm) <= 2.0 * se:
                continue
            dp = a["predicted"][metric] - b["predicted"][metric]
            if np.sign(dp) == np.sign(dm):
                conc += 1
            else:
                disc += 1
    used = conc + disc
    return {"tau": (conc - disc) / used if used else float("nan"), "pairs": used, "of": n}


# --- the run -----------------------------------------------------------------------------------
@dataclass
class Setup:
    """Built once per validate run: grouped models, sessions, calibration, profiles."""

    models: dict[str, Any]
    sessions: dict[str, Any]
    calibration: Any
    profiles: dict[str, Profile]
    tenants: list[Any] = field(default_factory=list)


def build(
    cfg: ValidateConfig, out: Path | None = None, *, cpus: frozenset[int] | None = None
) -> Setup:
    """Export, cut, load and calibrate every tenant network (writes ``calibration.json``).
    ``cpus``: LoadGen's CPUs (the admission pilot's pushing thread runs there)."""
    from npusched.models.zoo import get_network
    from npusched.realexec.calibrate import calibrate, measure_overheads
    from npusched.realexec.groups import build_grouped
    from npusched.realexec.loadgen import TenantSpec

    models = {
        t.network: build_grouped(
            t.network,
            get_network(t.network),
            n_groups=cfg.groups,
            input_size=t.input_size,
            seed=cfg.seed,
        )
        for t in cfg.tenants
    }
    sessions = {
        n: m.sessions(threads=cfg.threads, provider=cfg.provider) for n, m in models.items()
    }
    cal = calibrate(
        {(n, 1): m for n, m in models.items()},
        {(n, 1): s for n, s in sessions.items()},
        warmup=cfg.warmup,
        runs=cfg.runs,
        statistic=cfg.statistic,
        warmup_s=cfg.warmup_s,
        threads=cfg.threads,
        provider=cfg.provider,
    )
    if cfg.overheads:  # the executor's own seconds, measured by running it
        pilot = {n: cal.profile(m) for n, m in models.items()}
        cal.dispatch_s, cal.admit_s = measure_overheads(models, sessions, pilot, cpus=cpus)
    if out is not None:
        cal.save(out / "calibration.json")
    profiles = {n: cal.profile(m) for n, m in models.items()}
    tenants = [
        TenantSpec(t.network, t.priority, t.slo_factor * cal.isolated_s(t.network))
        for t in cfg.tenants
    ]
    return Setup(models, sessions, cal, profiles, tenants)


def _estimator(policy: str) -> Any:
    if "PREMA" in policy:
        from npusched.policies.temporal.predictor import make_estimator

        return make_estimator("prema")
    return None


def predict(
    profiles: Mapping[str, Profile],
    policy: str,
    requests: Sequence[Request],
    *,
    estimator: Callable[[Request, Profile], float] | None = None,
    admit_s: float = 0.0,
) -> pd.DataFrame:
    """The simulator's records for ``requests`` under ``policy`` on ``profiles`` (CHECKPOINT at
    group boundaries: ``preemption_point="layer"``, checkpoint copies priced). ``estimator``:
    the policies' ``estimated_s`` (default: PREMA's predictor for PREMA, else exact).
    ``admit_s`` (seconds): each request enters the simulator this long after its issue instant
    (the executor's measured hand-off, :attr:`Calibration.admit_s`); its latency is still
    counted from the issue instant."""
    from npusched.policies.base import POLICIES
    from npusched.sim import Simulator

    sim = Simulator(
        profiles,
        POLICIES.create(policy),
        preemption_point="layer",
        checkpoint_cost=True,
        estimator=estimator if estimator is not None else _estimator(policy),
    )
    if admit_s <= 0.0:
        return sim.run(requests).to_frame()
    issued = {r.id: r.arrival_s for r in requests}
    df = sim.run([replace(r, arrival_s=r.arrival_s + admit_s) for r in requests]).to_frame()
    arr = np.array([issued[int(i)] for i in df["id"].to_numpy()], dtype=np.float64)
    df["latency_s"] = df["finish_s"].to_numpy() - arr
    df["waiting_s"] = df["waiting_s"].to_numpy() + (df["arrival_s"].to_numpy() - arr)
    df["arrival_s"] = arr
    return df


def _requests_of(df: pd.DataFrame) -> list[Request]:
    """The requests of a real run's records (id, arrival instant, network, priority, SLO)."""
    slo = df["slo_s"].to_numpy(dtype=np.float64)
    return [
        Request(
            int(i), float(a), str(n), priority=int(p), slo_s=None if math.isnan(s) else float(s)
        )
        for i, a, n, p, s in zip(
            df["id"].to_numpy(),
            df["arrival_s"].to_numpy(dtype=np.float64),
            df["network"].to_numpy(),
            df["priority"].to_numpy(),
            slo,
            strict=True,
        )
    ]


def measured_profiles(
    result: Any, profiles: Mapping[str, Profile], dispatch_s: float = 0.0
) -> tuple[dict[str, Profile], list[Request], pd.DataFrame]:
    """The ablation's inputs: a profile per request with the group seconds it really ran (its
    last execution of each group; plus ``dispatch_s`` per group, as the calibrated profile),
    requests re-keyed to them, and the measured records with ``isolated_s`` kept at the
    calibrated value (so NTT is comparable)."""
    per: dict[int, dict[int, float]] = {}
    for jid, g, a, b in result.segments:
        per.setdefault(jid, {})[g] = b - a
    profs: dict[str, Profile] = {}
    reqs: list[Request] = []
    df = result.records
    for r in _requests_of(df):
        base = profiles[r.network]
        times = per[r.id]
        lat = np.array([times[g] for g in range(len(times))], dtype=np.float64) + dispatch_s
        key = f"{r.network}#{r.id}"
        profs[key] = _retimed(base, lat)
        reqs.append(replace(r, network=key))
    return profs, reqs, df


def _retimed(base: Profile, latency_s: npt.NDArray[np.float64]) -> Profile:
    """``base`` with its groups' seconds replaced by ``latency_s`` (one row; everything else,
    the checkpoint bytes included, kept)."""
    return Profile.from_tables(
        base.network,
        device_name=base.device_name,
        batch_sizes=base.batch_sizes,
        latency_s=latency_s[None, :],
        frequency_hz=base.frequency_hz,
        memory_bandwidth_bps=base.memory_bandwidth_bps,
        checkpoint_bytes=base.checkpoint_bytes,
    )


def scaled_profiles(cal: Any, models: Mapping[str, Any], speed: float) -> dict[str, Profile]:
    """The profiles of ``cal`` (a :class:`~npusched.realexec.calibrate.Calibration`) with every
    calibrated group's seconds times ``speed`` (its dispatch seconds added unscaled)."""
    out = {}
    for n, m in models.items():
        base = cal.profile(m)
        lat = np.array(cal.latency_s[n][1], dtype=np.float64) * speed + cal.dispatch_s
        out[n] = _retimed(base, lat)
    return out


def admission_s(records: pd.DataFrame) -> float:
    """The median seconds from issue to first start of the requests of a real run that found
    the worker idle and nothing queued (every request issued before had finished); 0 if none."""
    m = records.sort_values(["arrival_s", "id"], kind="stable")
    out = []
    busy_until = -math.inf
    for a, s, f in zip(
        m["arrival_s"].to_numpy(),
        m["first_start_s"].to_numpy(),
        m["finish_s"].to_numpy(),
        strict=True,
    ):
        if busy_until <= a:
            out.append(s - a)
        busy_until = max(busy_until, f)
    return float(np.median(out)) if out else 0.0


def _renormalise(df: pd.DataFrame, profiles: Mapping[str, Profile]) -> None:
    """Set ``isolated_s`` (and ``waiting_s``) of records to ``profiles``' isolated seconds."""
    pairs = zip(df["network"], df["batch"], strict=True)
    iso = np.array([profiles[str(n)].plan(int(b)).total_s for n, b in pairs], dtype=np.float64)
    df["isolated_s"] = iso
    df["waiting_s"] = df["latency_s"].to_numpy() - iso - df["checkpoint_s"].to_numpy()


def run_once(
    setup: Setup,
    cfg: ValidateConfig,
    policy: str,
    load: float,
    *,
    seed: int,
    folder: Path | None,
    progress: Callable[[int], None] | None = None,
    cpus: frozenset[int] | None = None,
) -> tuple[dict[str, Any], dict[str, pd.DataFrame]]:
    """One run of a (policy, load) point with LoadGen seed ``seed``: the real run under
    LoadGen, the prediction, the ablation. Returns the point's record and its frames
    (``measured``, ``predicted``, ``ablation``, ``initial``). ``cpus``: LoadGen's CPUs."""
    from npusched.metrics.records import write_records
    from npusched.policies.base import POLICIES
    from npusched.realexec.executor import RealExecutor
    from npusched.realexec.loadgen import run_loadgen

    mean_iso = float(np.mean([setup.calibration.isolated_s(t.network) for t in setup.tenants]))
    qps = load / mean_iso
    cal_ = setup.calibration
    profiles: Mapping[str, Profile] = setup.profiles
    if cfg.recalibrate:  # the machine's speed right before this point (it drifts)
        from npusched.realexec.calibrate import calibrate

        cal_ = calibrate(
            {(n, 1): m for n, m in setup.models.items()},
            {(n, 1): s for n, s in setup.sessions.items()},
            warmup=1,
            runs=cfg.runs,
            statistic=cfg.statistic,
            threads=cfg.threads,
            provider=cfg.provider,
        )
        cal_.dispatch_s, cal_.admit_s = setup.calibration.dispatch_s, setup.calibration.admit_s
        profiles = {n: cal_.profile(m) for n, m in setup.models.items()}
        if folder is not None:
            cal_.save(folder / "calibration.json")
    ex = RealExecutor(
        setup.models,
        setup.sessions,
        profiles,
        POLICIES.create(policy),
        estimator=_estimator(policy),
        gc_off=cfg.gc_off,
    )
    res = run_loadgen(
        ex,
        setup.tenants,
        scenario=cfg.scenario,
        qps=qps,
        n_queries=cfg.n_requests,
        expected_latency_s=mean_iso,
        seed=seed,
        log_dir=None if folder is None else folder / "loadgen",
        progress=progress,
        cpus=cpus,
    )
    measured = res.records
    requests = _requests_of(measured)
    predicted = predict(profiles, policy, requests, admit_s=cal_.admit_s)
    after = None
    if cfg.recalibrate:  # a calibration right after the run too: bracketing the run
        from npusched.realexec.calibrate import calibrate

        after = calibrate(
            {(n, 1): m for n, m in setup.models.items()},
            {(n, 1): s for n, s in setup.sessions.items()},
            warmup=0,
            runs=cfg.runs,
            statistic=cfg.statistic,
            threads=cfg.threads,
            provider=cfg.provider,
        )
    # the ablation: every request's measured group seconds and this run's own measured
    # dispatch (mean gap between groups) and admission seconds
    run_dispatch = float(np.mean(res.overhead_s)) if res.overhead_s else 0.0
    run_admit = admission_s(measured)
    profs, reqs, _ = measured_profiles(res, profiles, run_dispatch)
    # the policy is told what it was told for real: the calibrated estimates
    calibrated = {r.id: e for r, e in zip(requests, measured["estimated_s"], strict=True)}
    ablation = predict(
        profs,
        policy,
        reqs,
        estimator=lambda r, _p: float(calibrated[r.id]),
        admit_s=run_admit,
    )
    ablation["network"] = predicted["network"].to_numpy()
    # one factor: the machine's speed during this run (the median request's executed over
    # calibrated seconds) scaling the calibrated group seconds; all else as the prediction
    iso_c = np.array([cal_.isolated_s(str(n)) for n in measured["network"]], dtype=np.float64)
    speed = float(np.median(measured["exec_s"].to_numpy() / iso_c))
    speeded = predict(
        scaled_profiles(cal_, setup.models, speed),
        policy,
        requests,
        estimator=lambda r, _p: float(calibrated[r.id]),
        admit_s=cal_.admit_s,
    )
    bracket = after_speed = None
    if after is not None:  # the mean of the calibrations before and after the run
        after_speed = sum(after.isolated_s(n) for n in setup.models) / sum(
            cal_.isolated_s(n) for n in setup.models
        )
        bracket = predict(
            scaled_profiles(cal_, setup.models, (1.0 + after_speed) / 2.0),
            policy,
            requests,
            estimator=lambda r, _p: float(calibrated[r.id]),
            admit_s=cal_.admit_s,
        )
    initial = (
        predict(setup.profiles, policy, requests, admit_s=cal_.admit_s)
        if cfg.recalibrate
        else predicted
    )
    # every record normalised by the first calibration's isolated seconds (NTT comparable
    # across points and policies)
    for df in (measured, predicted, ablation, initial, speeded):
        _renormalise(df, setup.profiles)
    if bracket is not None:
        _renormalise(bracket, setup.profiles)
    if folder is not None:
        write_records(measured, folder / "measured.parquet")
        write_records(predicted, folder / "predicted.parquet")
        write_records(ablation, folder / "predicted_measured_groups.parquet")
    m, p, a = point_metrics(measured), point_metrics(predicted), point_metrics(ablation)
    i0 = point_metrics(initial)
    sp = point_metrics(speeded)

    def pct(x: float, ref: float) -> float:
        return abs(x - ref) / abs(ref) * 100.0 if ref else float("nan")

    segs = np.array([b - a_ for _, _, a_, b in res.segments])
    cpu = np.array(res.cpu_s)
    net_of = {r.id: r.network for r in requests}
    cal = cal_.latency_s
    cal_group = np.array([cal[net_of[j]][1][g] for j, g, _, _ in res.segments])
    # the calibrated compute seconds (without the dispatch term the profiles carry)
    iso = np.array([cal_.isolated_s(str(n)) for n in measured["network"]], dtype=np.float64)
    frames = {"measured": measured, "predicted": predicted, "ablation": ablation}
    frames["initial"], frames["speeded"] = initial, speeded
    if bracket is not None:
        frames["bracket"] = bracket
    return {
        "policy": policy,
        "load": load if cfg.scenario == "server" else "singlestream",
        "seed": seed,
        "qps": qps,
        "n_requests": len(measured),
        "measured": m,
        "predicted": p,
        "request_error": request_errors(measured, predicted),
        "metric_error_pct": {k: pct(p[k], m[k]) for k in METRICS},
        "ablation": {
            "what": "the simulator fed every request's measured group seconds and the run's "
            "measured dispatch and admission seconds",
            "predicted": a,
            "request_error": request_errors(measured, ablation),
            "metric_error_pct": {k: pct(a[k], m[k]) for k in METRICS},
        },
        "initial_calibration": {
            "what": "the prediction on the first calibration (no per-point recalibration)",
            "predicted": i0,
            "request_error": request_errors(measured, initial),
            "metric_error_pct": {k: pct(i0[k], m[k]) for k in METRICS},
        },
        "speed_corrected": {
            "what": "the prediction with the calibrated group seconds scaled by the machine's "
            "speed measured during the run (the median request's executed over calibrated "
            "seconds, `speed`)",
            "speed": speed,
            "predicted": sp,
            "request_error": request_errors(measured, speeded),
            "metric_error_pct": {k: pct(sp[k], m[k]) for k in METRICS},
        },
        "bracketed": None
        if bracket is None
        else {
            "what": "the prediction on the mean of the calibrations right before and right "
            "after the run (`after_over_before`: the second's isolated seconds over the first's)",
            "after_over_before": after_speed,
            "predicted": point_metrics(bracket),
            "request_error": request_errors(measured, bracket),
            "metric_error_pct": {k: pct(point_metrics(bracket)[k], m[k]) for k in METRICS},
        },
        "terms": {
            "recalibrated_over_initial": float(
                sum(cal_.isolated_s(t.network) for t in setup.tenants)
                / sum(setup.calibration.isolated_s(t.network) for t in setup.tenants)
            ),
            "dispatch_s": cal_.dispatch_s,
            "admit_s": cal_.admit_s,
            "admit_s_measured": run_admit,
            "exec_over_calibrated_median": float(np.median(measured["exec_s"].to_numpy() / iso)),
            "exec_over_calibrated_mean": float(np.mean(measured["exec_s"].to_numpy() / iso)),
            "group_s_median": float(np.median(segs)) if segs.size else float("nan"),
            "group_wall_over_calibrated_mean": float(np.mean(segs / cal_group)),
            "group_cpu_over_calibrated_mean": float(np.mean(cpu / cal_group)),
            "group_wall_over_cpu_mean": float(np.sum(segs) / max(np.sum(cpu), 1e-12)),
            "dispatch_overhead_s_mean": float(np.mean(res.overhead_s)) if res.overhead_s else 0.0,
            "dispatch_overhead_s_median": float(np.median(res.overhead_s))
            if res.overhead_s
            else 0.0,
            "checkpoint_save_s_mean": float(np.mean(res.save_s)) if res.save_s else 0.0,
            "utilisation_nominal": load if cfg.scenario == "server" else float("nan"),
            "utilisation_measured": float(
                measured["exec_s"].sum()
                / (measured["finish_s"].max() - measured["arrival_s"].min())
            ),
            "utilisation_predicted": float(
                predicted["isolated_s"].sum()
                / (predicted["finish_s"].max() - predicted["arrival_s"].min())
            ),
            "preemptions_measured": int(measured["preemptions"].sum()),
            "preemptions_predicted": int(predicted["preemptions"].sum()),
            "gc_off": cfg.gc_off,
        },
    }, frames


def _pct(x: float, ref: float) -> float:
    return abs(x - ref) / abs(ref) * 100.0 if ref else float("nan")


def _abs_pct_errors(measured: pd.DataFrame, predicted: pd.DataFrame) -> np.ndarray[Any, Any]:
    m = measured.set_index("id")["latency_s"]
    p = predicted.set_index("id")["latency_s"].reindex(m.index)
    return np.asarray(np.abs(p.to_numpy() - m.to_numpy()) / m.to_numpy() * 100.0)


def _pooled(pairs: Sequence[tuple[pd.DataFrame, pd.DataFrame]]) -> dict[str, float]:
    err = np.concatenate([_abs_pct_errors(m, p) for m, p in pairs])
    return {"median_abs_pct": float(np.median(err)), "p90_abs_pct": float(np.percentile(err, 90))}


def _stats(values: Sequence[float]) -> dict[str, Any]:
    v = np.asarray(values, dtype=np.float64)
    return {
        "mean": float(v.mean()),
        "std": float(v.std(ddof=1)) if v.size > 1 else 0.0,
        "min": float(v.min()),
        "max": float(v.max()),
        "values": [float(x) for x in v],
    }


def arrival_check(frames: Sequence[pd.DataFrame]) -> dict[str, Any]:
    """Are the repeats' arrivals the same? Each repeat's requests in issue order (ids are given
    in issue order): whether the tenant sequence equals the first repeat's, and how far each
    issue instant (from the first issue) is from the first repeat's (seconds)."""
    ref = frames[0].sort_values("id")
    ref_net = ref["network"].to_numpy()
    ref_t = ref["arrival_s"].to_numpy() - ref["arrival_s"].min()
    same, diffs = True, []
    for df in frames[1:]:
        d = df.sort_values("id")
        same &= bool(len(d) == len(ref) and (d["network"].to_numpy() == ref_net).all())
        t = d["arrival_s"].to_numpy() - d["arrival_s"].min()
        if len(t) == len(ref_t):
            diffs.append(np.abs(t - ref_t))
    dd = np.concatenate(diffs) if diffs else np.zeros(1)
    return {
        "same_tenant_sequence": same,
        "issue_instant_diff_s_median": float(np.median(dd)),
        "issue_instant_diff_s_p99": float(np.percentile(dd, 99)),
        "issue_instant_diff_s_max": float(dd.max()),
    }


def run_point(
    setup: Setup,
    cfg: ValidateConfig,
    policy: str,
    load: float,
    *,
    out: Path | None,
    progress: Callable[[int], None] | None = None,
    cpus: frozenset[int] | None = None,
) -> dict[str, Any]:
    """One (policy, load) point, run ``cfg.repeats`` times (LoadGen seeds per
    ``cfg.repeat_seeds``): ``measured`` / ``predicted`` / ``metric_error_pct`` are over the
    repeats' means, ``request_error`` pools every request of every repeat, ``spread`` gives
    each metric's mean, standard deviation, minimum, maximum and values over the repeats, and
    ``within_spread`` whether the mean prediction lies inside the measured ``[min, max]``.
    Repeat 0 is written to ``<out>/load<L>/<policy>/``, repeat ``r`` to its ``repeat<r>/``."""
    tag = f"load{load:g}" if cfg.scenario == "server" else "singlestream"
    base = None if out is None else out / tag / policy
    records: list[dict[str, Any]] = []
    frames: list[dict[str, pd.DataFrame]] = []
    for r in range(cfg.repeats):
        seed = cfg.seed + (r if cfg.repeat_seeds == "vary" else 0)
        folder = base if base is None or r == 0 else base / f"repeat{r}"

        def tick(n: int, r: int = r) -> None:
            if progress is not None:
                progress(r * cfg.n_requests + n)

        rec, fr = run_once(
            setup, cfg, policy, load, seed=seed, folder=folder, progress=tick, cpus=cpus
        )
        records.append(rec)
        frames.append(fr)
    if cfg.repeats == 1:
        point = dict(records[0])
        point["repeats"] = 1
    else:
        point = _aggregate(records, frames)
    point["spread"] = {
        which: {k: _stats([r[which][k] for r in records]) for k in METRICS}
        for which in ("measured", "predicted")
    }
    point["within_spread"] = {
        k: bool(
            point["spread"]["measured"][k]["min"]
            <= point["predicted"][k]
            <= point["spread"]["measured"][k]["max"]
        )
        for k in METRICS
    }
    point["measured_spread_pct"] = {  # one run's standard deviation, percent of the mean
        k: abs(point["spread"]["measured"][k]["std"] / point["measured"][k]) * 100.0
        if point["measured"][k]
        else float("nan")
        for k in METRICS
    }
    if cfg.repeats > 1:
        n = cfg.repeats
        point["standard_error_pct"] = {  # of the measured mean, percent of it
            k: point["measured_spread_pct"][k] / math.sqrt(n) for k in METRICS
        }
        paired = {}
        for k in METRICS:  # each repeat's signed error against its own measurement
            e = np.array([_signed_pct(r["predicted"][k], r["measured"][k]) for r in records])
            se = float(e.std(ddof=1) / math.sqrt(n))
            mean = float(e.mean())
            paired[k] = {"mean": mean, "se": se, "significant": bool(abs(mean) > 2.0 * se)}
        point["paired_error_pct"] = paired
        point["arrivals"] = arrival_check([f["measured"] for f in frames])
    return point


def _signed_pct(x: float, ref: float) -> float:
    return (x - ref) / abs(ref) * 100.0 if ref else float("nan")


def _aggregate(
    records: Sequence[dict[str, Any]], frames: Sequence[dict[str, pd.DataFrame]]
) -> dict[str, Any]:
    """The point over its repeats (see :func:`run_point`)."""

    def mean_of(get: Callable[[dict[str, Any]], dict[str, float]]) -> dict[str, float]:
        return {k: float(np.mean([get(r)[k] for r in records])) for k in METRICS}

    m = mean_of(lambda r: r["measured"])
    p = mean_of(lambda r: r["predicted"])
    a = mean_of(lambda r: r["ablation"]["predicted"])
    i0 = mean_of(lambda r: r["initial_calibration"]["predicted"])
    sp = mean_of(lambda r: r["speed_corrected"]["predicted"])
    br = (
        mean_of(lambda r: r["bracketed"]["predicted"])
        if all(r.get("bracketed") for r in records)
        else None
    )

    def pairs(which: str) -> list[tuple[pd.DataFrame, pd.DataFrame]]:
        return [(f["measured"], f[which]) for f in frames]

    first = records[0]
    terms: dict[str, Any] = {}
    for k, v in first["terms"].items():
        vals = [r["terms"][k] for r in records]
        terms[k] = (
            float(np.mean(vals)) if isinstance(v, int | float) and not isinstance(v, bool) else v
        )
    return {
        "policy": first["policy"],
        "load": first["load"],
        "seed": [r["seed"] for r in records],
        "qps": first["qps"],
        "n_requests": int(sum(r["n_requests"] for r in records)),
        "repeats": len(records),
        "measured": m,
        "predicted": p,
        "request_error": _pooled(pairs("predicted")),
        "metric_error_pct": {k: _pct(p[k], m[k]) for k in METRICS},
        "ablation": {
            "what": first["ablation"]["what"],
            "predicted": a,
            "request_error": _pooled(pairs("ablation")),
            "metric_error_pct": {k: _pct(a[k], m[k]) for k in METRICS},
        },
        "initial_calibration": {
            "what": first["initial_calibration"]["what"],
            "predicted": i0,
            "request_error": _pooled(pairs("initial")),
            "metric_error_pct": {k: _pct(i0[k], m[k]) for k in METRICS},
        },
        "speed_corrected": {
            "what": first["speed_corrected"]["what"],
            "speed": [r["speed_corrected"]["speed"] for r in records],
            "predicted": sp,
            "request_error": _pooled(pairs("speeded")),
            "metric_error_pct": {k: _pct(sp[k], m[k]) for k in METRICS},
        },
        "bracketed": None
        if br is None
        else {
            "what": first["bracketed"]["what"],
            "after_over_before": [r["bracketed"]["after_over_before"] for r in records],
            "predicted": br,
            "request_error": _pooled(pairs("bracket")),
            "metric_error_pct": {k: _pct(br[k], m[k]) for k in METRICS},
        },
        "terms": terms,
        "per_repeat": [
            {
                "seed": r["seed"],
                "measured": r["measured"],
                "predicted": r["predicted"],
                "metric_error_pct": r["metric_error_pct"],
                "request_error": r["request_error"],
                "ablation_metric_error_pct": r["ablation"]["metric_error_pct"],
                "utilisation_measured": r["terms"]["utilisation_measured"],
                "utilisation_predicted": r["terms"]["utilisation_predicted"],
                "exec_over_calibrated_median": r["terms"]["exec_over_calibrated_median"],
                "recalibrated_over_initial": r["terms"]["recalibrated_over_initial"],
            }
            for r in records
        ],
    }


def summarize(points: list[dict[str, Any]], cfg: ValidateConfig, setup: Setup) -> dict[str, Any]:
    """``summary.json``: the points, the rank agreement (Kendall tau per metric between the
    policy orderings of measurement and prediction: the minimum over loads, and per load), the
    targets and whether each is met."""
    by_load: dict[str, dict[str, float]] = {}
    for load in dict.fromkeys(str(p["load"]) for p in points):
        pts = [p for p in points if str(p["load"]) == load]
        by_load[load] = {
            k: kendall_tau([p["measured"][k] for p in pts], [p["predicted"][k] for p in pts])
            for k in METRICS
        }
    resolved: dict[str, dict[str, Any]] = {}
    if any(p.get("repeats", 1) > 1 for p in points):
        for load in by_load:
            pts = [p for p in points if str(p["load"]) == load]
            resolved[load] = {k: resolved_tau(pts, k) for k in METRICS}
    rank = {
        k: float(np.nanmin([v[k] for v in by_load.values()]))
        if not all(math.isnan(v[k]) for v in by_load.values())
        else float("nan")
        for k in METRICS
    }
    worst_med = max(p["request_error"]["median_abs_pct"] for p in points)
    worst_p90 = max(p["request_error"]["p90_abs_pct"] for p in points)
    worst_antt = max(p["metric_error_pct"]["antt"] for p in points)
    worst_p99 = max(p["metric_error_pct"]["p99_s"] for p in points)
    targets = {
        "median_abs_pct": {"target": TARGETS["median_abs_pct"], "worst": worst_med},
        "p90_abs_pct": {"target": TARGETS["p90_abs_pct"], "worst": worst_p90},
        "antt_abs_pct": {"target": TARGETS["antt_abs_pct"], "worst": worst_antt},
        "p99_abs_pct": {"target": TARGETS["p99_abs_pct"], "worst": worst_p99},
    }
    for v in targets.values():
        v["met"] = bool(v["worst"] <= v["target"])
    targets["antt_tau"] = {
        "target": 1.0,
        "worst": rank["antt"],
        "met": bool(rank["antt"] >= 1.0 - 1e-12),
    }
    cal = setup.calibration
    return {
        "config": cfg.source,
        "scenario": cfg.scenario,
        "machine": cal.machine,
        "calibration": {
            n: {
                "isolated_s": cal.isolated_s(n),
                "groups": len(cal.latency_s[n][1]),
                "group_s": cal.latency_s[n][1],
                "cpu_s": cal.cpu_s.get(n, {}).get(1, [float("nan")])[0],
            }
            for n in cal.latency_s
        },
        "copy_bandwidth_bps": cal.copy_bandwidth_bps,
        "overheads": {"dispatch_s": cal.dispatch_s, "admit_s": cal.admit_s},
        "points": points,
        "rank_agreement": rank,
        "rank_agreement_by_load": by_load,
        "rank_agreement_resolved_by_load": resolved,
        "targets": targets,
        "within_spread": {
            k: {
                "points": sum(bool(p.get("within_spread", {}).get(k)) for p in points),
                "of": len(points),
            }
            for k in METRICS
        },
    }


def plot_cdfs(out: Path, cfg: ValidateConfig) -> list[Path]:
    """``latency_cdf_<load>.png``: predicted vs measured latency CDFs, one panel per policy."""
    from npusched.metrics.records import read_records
    from npusched.report.plots import figure, save_png

    paths = []
    for tag in sorted(p.name for p in out.iterdir() if p.is_dir()):
        pols = [p for p in cfg.policies if (out / tag / p / "measured.parquet").is_file()]
        if not pols:
            continue
        fig = figure(3.2 * len(pols), 3.0)
        axes = fig.subplots(1, len(pols), squeeze=False)[0]
        for ax, pol in zip(axes, pols, strict=True):
            for fname, label, style in (
                ("measured.parquet", "measured", "-"),
                ("predicted.parquet", "predicted", "--"),
            ):
                lat = np.sort(read_records(out / tag / pol / fname)["latency_s"].to_numpy()) * 1e3
                ax.plot(lat, np.arange(1, len(lat) + 1) / len(lat), style, label=label)
            ax.set_title(f"{pol} ({tag})", fontsize=9)
            ax.set_xlabel("latency (ms)")
            ax.set_xscale("log")
        axes[0].set_ylabel("CDF")
        axes[0].legend(fontsize=8)
        paths.append(save_png(fig, out / f"latency_cdf_{tag}.png"))
    return paths


def report_md(summary: Mapping[str, Any], images: Sequence[Path] = ()) -> str:
    """A Markdown report: the table of points and the targets."""
    lines = [
        f"# validate: {summary['config']}",
        "",
        f"Machine: {summary['machine']['cpu']}, {summary['machine']['cores']} cores, "
        f"onnxruntime {summary['machine']['onnxruntime']}, "
        f"{summary['machine']['intra_op_threads']} intra-op thread(s), "
        f"provider {summary['machine']['provider']}, load average at calibration "
        f"{summary['machine']['loadavg']}.",
        "",
        "Executor overheads (measured in calibration, in the prediction): dispatch "
        f"{summary['overheads']['dispatch_s'] * 1e3:.3f} ms per group, admission "
        f"{summary['overheads']['admit_s'] * 1e3:.3f} ms per request.",
        "",
        "| policy | load | ANTT meas | ANTT pred | err % | p99 ms meas | p99 ms pred | err % | "
        "SLA meas | SLA pred | req err med % | req err p90 % | ablation req med % |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for p in summary["points"]:
        m, q, e = p["measured"], p["predicted"], p["metric_error_pct"]
        lines.append(
            f"| {p['policy']} | {p['load']} | {m['antt']:.2f} | {q['antt']:.2f} | "
            f"{e['antt']:.1f} | {m['p99_s'] * 1e3:.1f} | {q['p99_s'] * 1e3:.1f} | "
            f"{e['p99_s']:.1f} | {m['sla_rate']:.3f} | {q['sla_rate']:.3f} | "
            f"{p['request_error']['median_abs_pct']:.1f} | "
            f"{p['request_error']['p90_abs_pct']:.1f} | "
            f"{p['ablation']['request_error']['median_abs_pct']:.1f} |"
        )
    if any(p.get("repeats", 1) > 1 for p in summary["points"]):
        lines += [
            "",
            "Over the repeats (measured mean ± one run's standard deviation [min, max]; the "
            "mean prediction; whether it lies inside the measured [min, max]):",
            "",
            "| policy | load | repeats | ANTT measured | ANTT pred | inside | "
            "p99 ms measured | p99 ms pred | inside |",
            "|---|---|---|---|---|---|---|---|---|",
        ]
        for p in summary["points"]:
            sa, sp = p["spread"]["measured"]["antt"], p["spread"]["measured"]["p99_s"]
            lines.append(
                f"| {p['policy']} | {p['load']} | {p['repeats']} | {sa['mean']:.2f} ± "
                f"{sa['std']:.2f} [{sa['min']:.2f}, {sa['max']:.2f}] | "
                f"{p['predicted']['antt']:.2f} | {p['within_spread']['antt']} | "
                f"{sp['mean'] * 1e3:.1f} ± {sp['std'] * 1e3:.1f} [{sp['min'] * 1e3:.1f}, "
                f"{sp['max'] * 1e3:.1f}] | {p['predicted']['p99_s'] * 1e3:.1f} | "
                f"{p['within_spread']['p99_s']} |"
            )
    lines += ["", "Rank agreement (Kendall tau, minimum over loads): "]
    lines.append(", ".join(f"{k} {v:.2f}" for k, v in summary["rank_agreement"].items()))
    lines += ["", "| target | goal | worst | met |", "|---|---|---|---|"]
    for k, v in summary["targets"].items():
        lines.append(f"| {k} | {v['target']} | {v['worst']:.2f} | {v['met']} |")
    lines += [""] + [f"![latency CDFs]({p.name})" for p in images] + [""]
    return "\n".join(lines)


def check_provider(provider: str) -> None:
    """Raise a one-line :class:`ConfigError` unless ONNX Runtime here offers ``provider``."""
    import onnxruntime as ort

    from npusched.realexec.groups import PROVIDERS

    if provider not in PROVIDERS:
        raise ConfigError(f"provider: {provider!r} is unknown; allowed: {', '.join(PROVIDERS)}")
    if PROVIDERS[provider] not in ort.get_available_providers():
        raise ConfigError(
            f"provider: {provider!r} is not available in this onnxruntime "
            f"({', '.join(ort.get_available_providers())}); install onnxruntime-gpu for cuda"
        )


def run_validate(
    cfg: ValidateConfig, out: Path, *, progress: bool = True, provider: str | None = None
) -> dict[str, Any]:
    """Run every (load, policy) point of ``cfg`` and write everything to ``out`` (see the
    module docstring); returns the summary."""
    if provider is not None:
        cfg = replace(cfg, provider=provider)
    check_provider(cfg.provider)
    out.mkdir(parents=True, exist_ok=True)
    plan = plan_cpus(cfg.threads) if cfg.pin else None
    with pinned(None if plan is None else plan.worker):
        return _run_validate(cfg, out, progress, plan)


def _run_validate(
    cfg: ValidateConfig, out: Path, progress: bool, plan: CpuPlan | None
) -> dict[str, Any]:
    from npusched.report.progress import progress_bar

    others = None if plan is None else plan.others
    setup = build(cfg, out, cpus=others)
    loads: Sequence[float] = cfg.loads if cfg.scenario == "server" else (1.0,)
    per_point = cfg.n_requests * cfg.repeats
    total = len(loads) * len(cfg.policies) * per_point
    points = []
    with progress_bar(total, "validate", enabled=progress, eta=True) as bar:
        done = 0
        for load in loads:
            for pol in cfg.policies:
                base = done
                if bar is not None:
                    bar._bar.update(bar._task, description=f"{pol} @ {load:g}")

                def tick(n: int, base: int = base) -> None:
                    if bar is not None:
                        bar.set_completed(base + n)

                points.append(run_point(setup, cfg, pol, load, out=out, progress=tick, cpus=others))
                done += per_point
    summary = summarize(points, cfg, setup)
    summary["execution"] = {
        "repeats": cfg.repeats,
        "repeat_seeds": cfg.repeat_seeds,
        "gc_off": cfg.gc_off,
        "pin": cfg.pin,
        "worker_cpus": None if plan is None else sorted(plan.worker),
        "loadgen_cpus": None if plan is None else sorted(plan.others),
    }
    (out / "summary.json").write_text(json.dumps(summary, indent=1, default=float))
    images = plot_cdfs(out, cfg)
    (out / "report.md").write_text(report_md(summary, images))
    return summary
