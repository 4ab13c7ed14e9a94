"""PREMA (HPCA 2020): the study-specific tabulation behind the figures and ``summary.json``:
the policy table (improvements over NP-FCFS), per batch size, Fig. 14's tails, the predictor,
Fig. 5/6's mechanism tables and Fig. 15's CHECKPOINT vs KILL."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from npusched import libm
from npusched.experiments.studies.prema.paper import FAMILIES, PAPER, SHORT
from npusched.experiments.studies.prema.points import SLA_NS, PolicySpec, _Results
from npusched.report.suite_output import NoPlots, write_csv

if TYPE_CHECKING:
    import pandas as pd


# --- aggregation --------------------------------------------------------------------------------
def _f(v: Any) -> float:
    """``float(v)``, NaN for missing or non-numeric cells."""
    try:
        return float(v)
    except (TypeError, ValueError):
        return math.nan


def _i(v: Any) -> int:
    """``int(v)`` of a pandas cell (typed ``Any`` so that mypy accepts any cell)."""
    return int(v)


#: The metrics compared with a reference policy (NP-FCFS, or an oracle twin).
RATED = ("antt", "stp", "fairness")


def _gain(metric: str, value: Any, reference: Any) -> Any:
    """How many times better ``value`` is than ``reference`` (scalars or Series): ANTT is
    lower-is-better (``reference / value``), STP and fairness higher-is-better
    (``value / reference``)."""
    return reference / value if metric == "antt" else value / reference


def _policy_table(res: _Results, labels: Sequence[str]) -> pd.DataFrame:
    """Per label: mean ANTT/STP/fairness/SLA over all (batch, run) points and the improvements
    over NP-FCFS: ``<metric>_improvement`` is the mean over workloads of the per-workload gain
    (each workload normalised to its own NP-FCFS run, then averaged: the headline reading, see
    the module docstring); ``_of_means`` the gain of the means, ``_gmean`` the geometric mean
    of the per-workload gains."""
    import pandas as pd
    main = res.main
    cols = ["antt", "stp", "fairness", *(f"sla_n{n}" for n in SLA_NS)]
    means = main.groupby("label")[cols].mean()
    base = main[main["label"] == "NP-FCFS"].set_index(["batch", "run"])
    rows = []
    for label in labels:
        if label not in means.index:
            continue
        m = means.loc[label]
        sub = main[main["label"] == label].set_index(["batch", "run"])
        j = sub.merge(base, left_index=True, right_index=True, suffixes=("", "_fcfs"))
        row: dict[str, Any] = {"policy": label, "points": len(sub)}
        row.update({c: _f(m[c]) for c in ("antt", "stp", "fairness")})
        if "NP-FCFS" in means.index:
            b = means.loc["NP-FCFS"]
            for k in RATED:
                row[f"{k}_improvement"] = _f(_gain(k, j[k], j[f"{k}_fcfs"]).mean())
            for k in RATED:
                row[f"{k}_improvement_of_means"] = _f(_gain(k, m[k], b[k]))
            for k in RATED:
                row[f"{k}_improvement_gmean"] = _gmean(_gain(k, j[k], j[f"{k}_fcfs"]))
        for n in SLA_NS:
            row[f"sla_n{n}"] = _f(m[f"sla_n{n}"])
        rows.append(row)
    return pd.DataFrame(rows)


def _per_batch(res: _Results, labels: Sequence[str]) -> pd.DataFrame:
    """Improvements over NP-FCFS per batch size (mean of the per-workload gains within a batch
    size, as :func:`_policy_table`)."""
    import pandas as pd
    main = res.main
    rows = []
    for label in labels:
        for b in sorted(set(res.setup.batch_sizes)):
            j = _paired(main, label, b)
            if j.empty:
                continue
            row: dict[str, Any] = {"policy": label, "batch": b}
            for k in ("antt", "fairness", "stp"):
                row[f"{k}_improvement"] = _f(_gain(k, j[k], j[f"{k}_fcfs"]).mean())
            rows.append(row)
    return pd.DataFrame(rows)


def _paired(main: pd.DataFrame, label: str, batch: int) -> pd.DataFrame:
    """``label``'s points at ``batch`` beside NP-FCFS's on the same workloads (columns
    ``<metric>`` and ``<metric>_fcfs``; empty if either is missing)."""
    cols = ["run", "antt", "stp", "fairness"]
    a = main[(main["label"] == label) & (main["batch"] == batch)][cols]
    f = main[(main["label"] == "NP-FCFS") & (main["batch"] == batch)][cols]
    return a.merge(f, on="run", suffixes=("", "_fcfs")).sort_values("run")


def _gmean(x: pd.Series) -> float:
    v = x.to_numpy(dtype=np.float64)
    v = v[np.isfinite(v) & (v > 0)]
    return math.exp(float(libm.log(v).mean())) if v.size else math.nan


def _p95_high(res: _Results, labels: Sequence[str]) -> pd.DataFrame:
    """Fig. 14: p95 NTT of high-priority tasks per network, smallest batch size (1)."""
    import pandas as pd
    rec = res.records
    b0 = min(res.setup.batch_sizes)
    rec = rec[(rec["batch"] == b0) & (rec["priority"] == 9)]
    rows = []
    for label in labels:
        sub = rec[rec["label"] == label]
        if sub.empty:
            continue
        row: dict[str, Any] = {"policy": label}
        vals = []
        for net in res.setup.networks:
            x = sub[sub["network"] == net]
            ntt = (x["latency_s"] / x["isolated_s"]).to_numpy(float)
            v = float(np.percentile(ntt, 95)) if ntt.size else math.nan
            row[SHORT.get(net, net)] = v
            vals.append(v)
        arr = np.asarray(vals)
        row["average"] = float(np.nanmean(arr)) if np.isfinite(arr).any() else math.nan
        row["max"] = float(np.nanmax(arr)) if np.isfinite(arr).any() else math.nan
        rows.append(row)
    return pd.DataFrame(rows)


def _predictor_table(res: _Results) -> tuple[pd.DataFrame, dict[str, Any]]:
    """Predictor error per network over the distinct requests of the main workloads."""
    import pandas as pd

    from npusched.policies.temporal.predictor import mape

    def mape_or_nan(x: pd.DataFrame) -> float:
        return mape(x) if len(x) else math.nan

    rec = res.records
    base = rec[rec["label"] == "NP-FCFS"]
    # the signed relative error, as in predictor.prediction_errors
    base = base.assign(error=(base["estimated_s"] - base["isolated_s"]) / base["isolated_s"])
    rows = []
    for net in res.setup.networks:
        x = base[base["network"] == net]
        rows.append(
            {
                "network": SHORT.get(net, net),
                "requests": len(x),
                "mape_percent": mape_or_nan(x),
                "max_ape_percent": float((x["error"].abs() * 100.0).max()) if len(x) else math.nan,
            }
        )
    rnn = base[base["network"].str.startswith("rnn")]
    corr = (
        float(np.corrcoef(base["estimated_s"], base["isolated_s"])[0, 1])
        if len(base) > 1
        else math.nan
    )
    info: dict[str, Any] = {
        "mape_percent": mape_or_nan(base),
        "mape_rnn_percent": mape_or_nan(rnn),
        "correlation": corr,
        "requests": len(base),
    }
    return pd.DataFrame(rows), info


def _oracle_table(table: pd.DataFrame) -> pd.DataFrame:
    """Sec. VI-D: predictor-driven policies as a fraction of their oracle twins."""
    import pandas as pd
    t = table.set_index("policy")
    rows = []
    for oracle in [p for p in t.index if p.endswith("-oracle")]:
        pred = oracle.removesuffix("-oracle")
        if pred not in t.index:
            continue
        a, o = t.loc[pred], t.loc[oracle]
        rows.append(
            {
                "policy": pred,
                "stp_fraction": float(_gain("stp", a["stp"], o["stp"])),
                "antt_fraction": float(_gain("antt", a["antt"], o["antt"])),
                "sla_n4_fraction": float((1 - a["sla_n4"]) / (1 - o["sla_n4"]))
                if o["sla_n4"] < 1
                else math.nan,
                "fairness_fraction": float(_gain("fairness", a["fairness"], o["fairness"])),
            }
        )
    return pd.DataFrame(rows)


def _mech_tables(res: _Results) -> tuple[dict[str, pd.DataFrame], pd.DataFrame]:
    """Fig. 5/6 tables by name (none without samples) and the samples with each mechanism's
    STP and NTT relative to NP-FCFS (``<kind>_stp_norm``, ``<kind>_ntt_impr``)."""
    m = res.mech.copy()
    if not m.empty:  # rows of combos skipped under a job-length range carry no measurements
        m = m.dropna(subset=["fcfs_stp"]).reset_index(drop=True)
    if m.empty:
        return {}, m
    kinds = ("checkpoint", "kill", "drain")
    for k in kinds:
        m[f"{k}_stp_norm"] = m[f"{k}_stp"] / m["fcfs_stp"]
        m[f"{k}_ntt_impr"] = m["fcfs_ntt_high"] / m[f"{k}_ntt_high"]

    def means(*pairs: tuple[str, str]) -> dict[str, tuple[str, str]]:
        """Aggregations ``<kind><out> = mean(<kind><in>)`` per (out, in) suffix pair and kind."""
        agg = {"samples": ("run", "size")}
        agg.update({f"{k}{o}": (f"{k}{i}", "mean") for o, i in pairs for k in kinds})
        return agg

    agg5 = means(("_latency_us", "_preempt_s"), ("_wait_ms", "_wait_s"))
    agg6 = means(("_stp", "_stp_norm"), ("_ntt", "_ntt_impr"))
    out = {}
    for name, key, agg in (
        ("fig5_by_network", "low_net", agg5),
        ("fig5_by_batch", "low_batch", agg5),
        ("fig6_by_network", "high_net", agg6),
        ("fig6_by_batch", "high_batch", agg6),
    ):
        t = m.groupby(key).agg(**agg).reset_index()
        for c in t.columns:
            if c.endswith("_us"):
                t[c] = t[c] * 1e6
            elif c.endswith("_ms"):
                t[c] = t[c] * 1e3
        if key.endswith("_net"):
            order = {n: i for i, n in enumerate(res.setup.networks)}
            t = t.sort_values(key, key=lambda s: s.map(order))
            t[key] = t[key].map(lambda n: SHORT.get(n, n))
        out[name] = t.reset_index(drop=True)
    return out, m


def _mech_info(m: pd.DataFrame) -> dict[str, Any]:
    """The mechanism study's summary (``summary.json``'s ``mechanisms``) from its samples."""
    if m.empty:
        return {}
    return {
        "samples": len(m),
        "checkpoint_latency_us_avg": float(m["checkpoint_preempt_s"].mean() * 1e6),
        "checkpoint_latency_us_max": float(m["checkpoint_preempt_s"].max() * 1e6),
        "checkpoint_wait_ms_avg": float(m["checkpoint_wait_s"].mean() * 1e3),
        "kill_wait_ms_avg": float(m["kill_wait_s"].mean() * 1e3),
        "drain_wait_ms_avg": float(m["drain_wait_s"].mean() * 1e3),
        "ntt_improvement_checkpoint": float(m["checkpoint_ntt_impr"].mean()),
        "ntt_improvement_kill": float(m["kill_ntt_impr"].mean()),
        "ntt_improvement_drain": float(m["drain_ntt_impr"].mean()),
        "stp_norm_checkpoint": float(m["checkpoint_stp_norm"].mean()),
        "stp_norm_kill": float(m["kill_stp_norm"].mean()),
        "stp_norm_drain": float(m["drain_stp_norm"].mean()),
        "checkpoint_share_of_low_isolated_max": float(
            (m["checkpoint_preempt_s"] / m["low_isolated_s"]).max()
        ),
    }


def _policies_summary(
    t: pd.DataFrame, present: Sequence[str], fig14: pd.DataFrame
) -> dict[str, Any]:
    """``summary.json``'s ``policies``: per label, the means and improvements over NP-FCFS."""
    import pandas as pd
    f14i = fig14.set_index("policy") if not fig14.empty else pd.DataFrame()
    policies: dict[str, Any] = {}
    for lb in present:
        row = t.loc[lb]
        policies[lb] = {
            "antt": _f(row["antt"]),
            "stp": _f(row["stp"]),
            "fairness": _f(row["fairness"]),
            "antt_improvement": _f(row["antt_improvement"]),
            "stp_improvement": _f(row["stp_improvement"]),
            "fairness_improvement": _f(row["fairness_improvement"]),
            **{f"{k}_improvement_of_means": _f(row[f"{k}_improvement_of_means"]) for k in RATED},
            **{f"{k}_improvement_gmean": _f(row[f"{k}_improvement_gmean"]) for k in RATED},
            **{f"sla_violation_rate_n{n}": _f(row[f"sla_n{n}"]) for n in SLA_NS},
            "p95_high_priority_norm": _f(f14i.loc[lb, "average"]) if lb in f14i.index else math.nan,
            "p95_high_priority_norm_max": _f(f14i.loc[lb, "max"]) if lb in f14i.index else math.nan,
            "points": _i(row["points"]),
        }
    return policies


def _checkpoint_vs_kill(
    res: _Results,
    policies: Mapping[str, Any],
    families: Sequence[str] = FAMILIES,
    suffix_all: str = "",
) -> dict[str, Any]:
    """Fig. 15: how much better CHECKPOINT is than KILL, in percent, averaged over the policy
    pairs (``P-X`` vs ``P-X-kill``, ``P-X-dynamic`` vs ``P-X-dynamic-kill``) that ran:
    ANTT ``kill / checkpoint - 1``, STP and fairness ``checkpoint / kill - 1`` (the paper: 87% /
    24% / 77%). Each pair's row also has what explains the gap: preemptions per workload and
    the KILL run's re-executed (wasted) work as a share of its makespan."""
    import pandas as pd
    main = res.main
    per: list[dict[str, Any]] = []
    for f in families:
        for suffix in ("", "-dynamic"):
            ck, kl = f"P-{f}{suffix}{suffix_all}", f"P-{f}{suffix}-kill{suffix_all}"
            if ck not in policies or kl not in policies:
                continue
            a, b = policies[ck], policies[kl]
            km = main[main["label"] == kl]
            cm = main[main["label"] == ck]
            j = cm.merge(km, on=["batch", "run"], suffixes=("", "_kill"))
            per.append(
                {
                    # each workload's percentage, then the mean (the headline gains' reading)
                    "antt_pct_per_workload": float(100.0 * (j["antt_kill"] / j["antt"] - 1).mean()),
                    "stp_pct_per_workload": float(100.0 * (j["stp"] / j["stp_kill"] - 1).mean()),
                    "fairness_pct_per_workload": float(
                        100.0 * (j["fairness"] / j["fairness_kill"] - 1).mean()
                    ),
                    "pair": f"{ck} vs {kl}",
                    "antt_pct": 100.0 * (b["antt"] / a["antt"] - 1.0),
                    "stp_pct": 100.0 * (a["stp"] / b["stp"] - 1.0),
                    "fairness_pct": 100.0 * (a["fairness"] / b["fairness"] - 1.0),
                    "preemptions_checkpoint": float(cm["preemptions"].mean()),
                    "preemptions_kill": float(km["preemptions"].mean()),
                    "kill_wasted_share_pct": float(
                        100.0 * (km["wasted_s"] / km["makespan_s"]).mean()
                    ),
                }
            )
    if not per:
        return {}
    df = pd.DataFrame(per)
    return {
        "antt_pct": float(df["antt_pct"].mean()),
        "stp_pct": float(df["stp_pct"].mean()),
        "fairness_pct": float(df["fairness_pct"].mean()),
        "per_workload": {
            k: float(df[f"{k}_per_workload"].mean())
            for k in ("antt_pct", "stp_pct", "fairness_pct")
        },
        "pairs": per,
    }


def _job_span_ms(res: _Results) -> list[float]:
    """``[min, max]`` isolated latency (ms) of the tasks in the main workloads."""
    rec = res.records
    iso = rec[rec["label"] == "NP-FCFS"]["isolated_s"]
    return [float(iso.min() * 1e3), float(iso.max() * 1e3)] if len(iso) else []


def _range_summary(ranged: _Results, specs: Sequence[PolicySpec]) -> dict[str, Any]:
    """The paper-job-range study's headline: setup, windows, policies, mechanisms."""
    import pandas as pd
    labels = [s.label for s in specs if s.label in ranged.labels]
    table = _policy_table(ranged, labels)
    t = table.set_index("policy") if not table.empty else table
    present = [lb for lb in labels if not table.empty and lb in t.index]
    policies = _policies_summary(t, present, _p95_high(ranged, labels))
    _, m = _mech_tables(ranged)
    mech = _mech_info(m)
    return {
        "setup": ranged.setup.model_dump(),
        "config_hash": ranged.setup.config_hash(),
        "dispatch_window_s": ranged.windows_s,
        "job_span_ms": _job_span_ms(ranged),
        "policies": policies,
        "mechanisms": mech,
        "headline": _headline(policies, {}, mech, pd.DataFrame()),
        "checkpoint_vs_kill_prema": _checkpoint_vs_kill(ranged, policies, ("PREMA",)),
    }


def _metric(policies: Mapping[str, Mapping[str, float]], label: str, key: str) -> float:
    """``policies[label][key]`` of ``summary.json``'s policies, NaN for a policy not run."""
    return float(policies[label][key]) if label in policies else math.nan


def _headline(
    policies: Mapping[str, Mapping[str, float]],
    pred: Mapping[str, Any],
    mech: Mapping[str, Any],
    oracle: pd.DataFrame,
) -> dict[str, Any]:
    import pandas as pd
    g = partial(_metric, policies)
    orc = oracle.set_index("policy") if not oracle.empty else pd.DataFrame()
    ours: dict[str, float] = {
        "antt_improvement_prema_dynamic": g("P-PREMA-dynamic", "antt_improvement"),
        "fairness_improvement_prema_dynamic": g("P-PREMA-dynamic", "fairness_improvement"),
        "stp_improvement_prema_dynamic": g("P-PREMA-dynamic", "stp_improvement"),
        "np_prema_antt_vs_sjf": g("NP-SJF", "antt") / g("NP-PREMA", "antt"),
        "predictor_mape_percent": float(pred.get("mape_percent", math.nan)),
        "sla_violation_prema_n4_max": g("P-PREMA-dynamic", "sla_violation_rate_n4"),
        "sla_violation_np_fcfs": g("NP-FCFS", "sla_violation_rate_n4"),
        "p95_high_np_fcfs_avg": g("NP-FCFS", "p95_high_priority_norm"),
        "p95_high_np_fcfs_max": g("NP-FCFS", "p95_high_priority_norm_max"),
        "p95_high_p_sjf_max": g("P-SJF-dynamic", "p95_high_priority_norm_max"),
        "p95_high_prema_avg": g("P-PREMA-dynamic", "p95_high_priority_norm"),
        "p95_high_prema_max": g("P-PREMA-dynamic", "p95_high_priority_norm_max"),
        "checkpoint_latency_us_avg": float(mech.get("checkpoint_latency_us_avg", math.nan)),
        "checkpoint_latency_us_max": float(mech.get("checkpoint_latency_us_max", math.nan)),
        "ntt_improvement_kill": float(mech.get("ntt_improvement_kill", math.nan)),
        "ntt_improvement_checkpoint": float(mech.get("ntt_improvement_checkpoint", math.nan)),
        "drain_wait_ms_avg": float(mech.get("drain_wait_ms_avg", math.nan)),
        "oracle_fraction": _f(orc.loc["P-PREMA-dynamic", "antt_fraction"])
        if "P-PREMA-dynamic" in orc.index
        else math.nan,
    }
    return {k: {"ours": ours[k], "paper": PAPER[k]} for k in PAPER}


@dataclass
class Tables:
    """What :func:`write_figures` tabulated, for ``summary.json`` and ``report.md``."""

    #: :func:`_policy_table` (``policies.csv``), and indexed by policy.
    table: pd.DataFrame
    t: pd.DataFrame
    #: The labels with results, in report order.
    present: list[str]
    fig14: pd.DataFrame
    per_batch: pd.DataFrame
    pred_t: pd.DataFrame
    pred_info: dict[str, Any]
    oracle_t: pd.DataFrame
    #: Fig. 5/6 tables by name (none without samples).
    mt: dict[str, pd.DataFrame]
    mech_info: dict[str, Any]


def write_figures(
    out: Path, res: _Results, specs: Sequence[PolicySpec], *, plots: bool = True
) -> Tables:
    """The figures' and tables' files: ``policies.csv``, Fig. 11-15 and Fig. 5/6 (CSV, and PNG
    if ``plots``), ``per_batch.csv``, ``predictor.csv`` and ``predictor_vs_oracle.csv``."""
    import pandas as pd

    from npusched.report import plots as png

    draw = png if plots else NoPlots()

    labels = [s.label for s in specs]
    table = _policy_table(res, labels)
    write_csv(out / "policies.csv", table)
    t = table.set_index("policy") if not table.empty else table
    present = [lb for lb in labels if not table.empty and lb in t.index]

    def imp(label: str, metric: str) -> float:
        return _f(t.loc[label, f"{metric}_improvement"]) if label in present else math.nan

    # Fig. 11 / 12 / 15 -----------------------------------------------------------------------
    metrics = ("antt", "fairness", "stp")

    def improvement_figure(
        name: str,
        groups: list[str],
        series: Mapping[str, str],
        title: str,
        xs: list[str],
        note: str | None = None,
    ) -> None:
        """``<name>.csv``: the rows of the policies ``fmt.format(group)`` for every series
        format and group; ``<name>.png``: per metric, each series' improvement vs NP-FCFS with
        the groups on the x axis (labelled ``xs``)."""
        wanted = [fmt.format(g) for fmt in series.values() for g in groups]
        write_csv(out / f"{name}.csv", table[table["policy"].isin(wanted)])
        if groups:
            draw.panels(
                out / f"{name}.png",
                xs,
                {
                    f"{m.upper()} improvement vs NP-FCFS": {
                        s: [imp(fmt.format(g), m) for g in groups] for s, fmt in series.items()
                    }
                    for m in metrics
                },
                title=title,
                note=note,
            )

    np_labels = [
        lb
        for lb in present
        if lb.startswith("NP-") and not lb.endswith(("-oracle", "-cumulative"))
    ]
    improvement_figure(
        "fig11_nonpreemptive",
        np_labels,
        {"NP": "{}"},
        "Fig. 11: non-preemptive NPU (normalised to NP-FCFS)",
        [lb.removeprefix("NP-") for lb in np_labels],
    )
    fams = [f for f in FAMILIES if f"P-{f}" in present]
    improvement_figure(
        "fig12_preemptive",
        fams,
        {"static CHECKPOINT": "P-{}", "dynamic (Alg. 3)": "P-{}-dynamic"},
        "Fig. 12: preemptive NPU, static vs dynamic mechanism",
        fams,
    )
    improvement_figure(
        "fig15_checkpoint_vs_kill",
        fams,
        {
            "CHECKPOINT": "P-{}",
            "KILL": "P-{}-kill",
            "dyn. CHECKPOINT": "P-{}-dynamic",
            "dyn. KILL": "P-{}-dynamic-kill",
        },
        "Fig. 15: CHECKPOINT vs KILL",
        fams,
        note="n/a: not run. Static P-RRB + KILL is left out: time slicing with KILL restarts "
        "every task longer than the quantum, so such tasks never finish (a livelock).",
    )

    # Fig. 13: SLA violation rate vs N ------------------------------------------------------------
    fig13 = table[["policy", *(f"sla_n{n}" for n in SLA_NS)]] if present else pd.DataFrame()
    write_csv(out / "fig13_sla.csv", fig13)
    sla_show = [
        lb
        for lb in (
            "NP-FCFS",
            "NP-HPF",
            "NP-SJF",
            "NP-PREMA",
            "P-HPF-dynamic",
            "P-SJF-dynamic",
            "P-PREMA-dynamic",
        )
        if lb in present
    ]
    if sla_show:
        draw.lines(
            out / "fig13_sla.png",
            list(SLA_NS),
            {lb: [_f(t.loc[lb, f"sla_n{n}"]) for n in SLA_NS] for lb in sla_show},
            xlabel="SLA target N (latency <= N x isolated)",
            ylabel="SLA violation rate",
            title="Fig. 13: SLA violations (all tasks)",
            percent=True,
        )

    # Fig. 14: tail latency of high-priority tasks ------------------------------------------------
    tail_labels = [
        lb
        for lb in (
            "NP-FCFS",
            "NP-HPF",
            "P-HPF",
            "P-HPF-dynamic",
            "P-SJF",
            "P-SJF-dynamic",
            "P-PREMA",
            "P-PREMA-dynamic",
        )
        if lb in present
    ]
    fig14 = _p95_high(res, labels)
    write_csv(out / "fig14_tail_high_priority.csv", fig14)
    if not fig14.empty:
        f14 = fig14.set_index("policy")
        shown = [lb for lb in tail_labels if lb in f14.index]
        cats = [SHORT.get(n, n) for n in res.setup.networks] + ["average"]
        draw.grouped_bars(
            out / "fig14_tail_high_priority.png",
            cats,
            {lb: [_f(f14.loc[lb, c]) for c in cats] for lb in shown},
            ylabel="p95 latency / isolated (high priority)",
            title="Fig. 14: 95th-percentile latency of high-priority tasks, batch 1",
            log=True,
            reference=1.0,
            note="n/a: no high-priority batch-1 task of that DNN in these workloads.",
        )

    per_batch = _per_batch(
        res,
        [
            lb
            for lb in (
                "NP-SJF",
                "NP-PREMA",
                "P-SJF-dynamic",
                "P-PREMA",
                "P-PREMA-dynamic",
                "P-PREMA-dynamic-cumulative",
            )
            if lb in present
        ],
    )
    write_csv(out / "per_batch.csv", per_batch)

    # Predictor -----------------------------------------------------------------------------------
    pred_t, pred_info = _predictor_table(res)
    write_csv(out / "predictor.csv", pred_t)
    oracle_t = _oracle_table(table) if present else pd.DataFrame()
    write_csv(out / "predictor_vs_oracle.csv", oracle_t)

    # Fig. 5/6 --------------------------------------------------------------------------------------
    mt, m = _mech_tables(res)
    mech_info: dict[str, Any] = {}
    if mt:
        for name, frame in mt.items():
            write_csv(out / f"{name}.csv", frame)
        panels = {  # file: (column suffix, y label, title)
            "fig5a_preemption_latency": (
                "_latency_us",
                "preemption latency (us)",
                "Fig. 5a: preemption latency by preempted task",
            ),
            "fig5b_wait_time": (
                "_wait_ms",
                "preempting task wait (ms)",
                "Fig. 5b: preempting task's wait time by preempted task",
            ),
            "fig6a_stp": ("_stp", "STP normalised to NP-FCFS", "Fig. 6a: STP by preempting task"),
            "fig6b_ntt": (
                "_ntt",
                "NTT improvement vs NP-FCFS",
                "Fig. 6b: preempting task's NTT improvement",
            ),
        }
        for fname, (col, ylabel, title) in panels.items():
            fig6 = fname.startswith("fig6")  # by preempting task, normalised: reference line at 1
            frame = mt["fig6_by_network"] if fig6 else mt["fig5_by_network"]
            draw.grouped_bars(
                out / f"{fname}.png",
                frame["high_net" if fig6 else "low_net"].tolist(),
                {k.upper(): frame[f"{k}{col}"].tolist() for k in ("checkpoint", "kill", "drain")},
                ylabel=ylabel,
                title=title,
                reference=1.0 if fig6 else None,
            )
        mech_info = _mech_info(m)

    return Tables(
        table, t, present, fig14, per_batch, pred_t, pred_info, oracle_t, mt, mech_info
    )
