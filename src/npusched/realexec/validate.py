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
import pandas as pd

from npusched.errors import ConfigError
from npusched.hardware.profile import Profile
from npusched.metrics.core import antt, fairness, slo_attainment, stp
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
}
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


# --- the run -----------------------------------------------------------------------------------
@dataclass
class Setup:
    """Built once per validate run: grouped models, sessions, calibration, profiles."""

    models: dict[str, Any]
    sessions: dict[str, Any]
    calibration: Any
    profiles: dict[str, Profile]
    tenants: list[Any] = field(default_factory=list)


def build(cfg: ValidateConfig, out: Path | None = None) -> Setup:
    """Export, cut, load and calibrate every tenant network (writes ``calibration.json``)."""
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
        cal.dispatch_s, cal.admit_s = measure_overheads(models, sessions, pilot)
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
        profs[key] = Profile.from_tables(
            base.network,
            device_name=base.device_name,
            batch_sizes=base.batch_sizes,
            latency_s=lat[None, :],
            frequency_hz=base.frequency_hz,
            memory_bandwidth_bps=base.memory_bandwidth_bps,
            checkpoint_bytes=base.checkpoint_bytes,
        )
        reqs.append(replace(r, network=key))
    return profs, reqs, df


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


def run_point(
    setup: Setup,
    cfg: ValidateConfig,
    policy: str,
    load: float,
    *,
    out: Path | None,
    progress: Callable[[int], None] | None = None,
) -> dict[str, Any]:
    """One (policy, load) point: the real run under LoadGen, the prediction, the ablation."""
    from npusched.metrics.records import write_records
    from npusched.policies.base import POLICIES
    from npusched.realexec.executor import RealExecutor
    from npusched.realexec.loadgen import run_loadgen

    mean_iso = float(np.mean([setup.calibration.isolated_s(t.network) for t in setup.tenants]))
    qps = load / mean_iso
    tag = f"load{load:g}" if cfg.scenario == "server" else "singlestream"
    folder = None if out is None else out / tag / policy
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
    )
    res = run_loadgen(
        ex,
        setup.tenants,
        scenario=cfg.scenario,
        qps=qps,
        n_queries=cfg.n_requests,
        expected_latency_s=mean_iso,
        seed=cfg.seed,
        log_dir=None if folder is None else folder / "loadgen",
        progress=progress,
    )
    measured = res.records
    requests = _requests_of(measured)
    predicted = predict(profiles, policy, requests, admit_s=cal_.admit_s)
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
    initial = (
        predict(setup.profiles, policy, requests, admit_s=cal_.admit_s)
        if cfg.recalibrate
        else predicted
    )
    # every record normalised by the first calibration's isolated seconds (NTT comparable
    # across points and policies)
    for df in (measured, predicted, ablation, initial):
        _renormalise(df, setup.profiles)
    if folder is not None:
        write_records(measured, folder / "measured.parquet")
        write_records(predicted, folder / "predicted.parquet")
        write_records(ablation, folder / "predicted_measured_groups.parquet")
    m, p, a = point_metrics(measured), point_metrics(predicted), point_metrics(ablation)
    i0 = point_metrics(initial)

    def pct(x: float, ref: float) -> float:
        return abs(x - ref) / abs(ref) * 100.0 if ref else float("nan")

    segs = np.array([b - a_ for _, _, a_, b in res.segments])
    cpu = np.array(res.cpu_s)
    net_of = {r.id: r.network for r in requests}
    cal = cal_.latency_s
    cal_group = np.array([cal[net_of[j]][1][g] for j, g, _, _ in res.segments])
    # the calibrated compute seconds (without the dispatch term the profiles carry)
    iso = np.array([cal_.isolated_s(str(n)) for n in measured["network"]], dtype=np.float64)
    return {
        "policy": policy,
        "load": load if cfg.scenario == "server" else "singlestream",
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
        },
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
        "targets": targets,
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
    from npusched.report.progress import progress_bar

    if provider is not None:
        cfg = replace(cfg, provider=provider)
    check_provider(cfg.provider)
    out.mkdir(parents=True, exist_ok=True)
    setup = build(cfg, out)
    loads: Sequence[float] = cfg.loads if cfg.scenario == "server" else (1.0,)
    total = len(loads) * len(cfg.policies) * cfg.n_requests
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

                points.append(run_point(setup, cfg, pol, load, out=out, progress=tick))
                done += cfg.n_requests
    summary = summarize(points, cfg, setup)
    (out / "summary.json").write_text(json.dumps(summary, indent=1, default=float))
    images = plot_cdfs(out, cfg)
    (out / "report.md").write_text(report_md(summary, images))
    return summary
