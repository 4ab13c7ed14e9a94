"""PREMA (HPCA 2020): ``npusched reproduce prema``: run (or resume) the study's points into the
output directory and write its tables, plots, ``summary.json``, ``report.md`` and ``fidelity.md``
(the method is in :mod:`npusched.experiments.studies.prema`)."""

from __future__ import annotations

import csv
import io
import json
import math
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from npusched._io import atomic_write_text
from npusched.errors import ConfigError
from npusched.experiments.studies.prema.comparisons import _spread, _token_rules, comparisons
from npusched.experiments.studies.prema.figures import (
    _checkpoint_vs_kill,
    _f,
    _headline,
    _job_span_ms,
    _mech_info,
    _mech_tables,
    _oracle_table,
    _p95_high,
    _per_batch,
    _policies_summary,
    _policy_table,
    _predictor_table,
    _range_summary,
)
from npusched.experiments.studies.prema.paper import (
    FAMILIES,
    PAPER_JOB_RANGE_S,
    PREMA_NETWORKS,
    SHORT,
)
from npusched.experiments.studies.prema.points import (
    ABLATION_RUNS,
    DEFAULT_RUNS,
    MAIN_COLUMNS,
    MAIN_KEY,
    MECH_COLUMNS,
    MECH_KEY,
    QUICK_RUNS,
    RECORD_COLUMNS,
    SLA_NS,
    PolicySpec,
    PremaSetup,
    _Context,
    _main_point,
    _mech_point,
    _np_token_probe,
    _Results,
    _select_runs,
    policy_specs,
)
from npusched.experiments.studies.prema.report import _fidelity, _fidelity_md, _report_md
from npusched.report.progress import progress_bar
from npusched.report.suite_output import NoPlots, json_safe, write_csv

if TYPE_CHECKING:
    import pandas as pd


#: The policies of the paper-job-range study (the headline figures only).
RANGE_LABELS: tuple[str, ...] = (
    "NP-FCFS",
    "NP-SJF",
    "NP-PREMA",
    "P-SJF-dynamic",
    "P-PREMA",
    "P-PREMA-kill",
    "P-PREMA-dynamic",
    "P-PREMA-dynamic-kill",
    "P-PREMA-dynamic-cumulative",
)


# --- resumable CSV stores ---------------------------------------------------------------------
class _Store:
    """An append-only CSV of finished points with a fixed header.

    Every row is written with one ``write`` and flushed, so a killed run loses at most the row
    being written; :meth:`lines` drops a truncated last line (and rewrites the file without it)
    and rows whose column count does not match the header.
    """

    def __init__(self, path: Path, columns: Sequence[str]) -> None:
        self.path = path
        self.columns = list(columns)

    def lines(self) -> list[str]:
        """The header and the complete rows (``[]`` if there is no file). A truncated last line
        and rows whose column count does not match are dropped, and the file rewritten without
        them; a file with another header (an older layout) is moved aside to ``.csv.old``."""
        if not self.path.exists():
            return []
        lines = self.path.read_text().splitlines(keepends=True)
        if not lines or next(csv.reader([lines[0]])) != self.columns:
            os.replace(self.path, self.path.with_suffix(".csv.old"))
            return []
        good = lines[:1] + [
            line
            for line in lines[1:]
            # a line without its newline was truncated by a kill
            if line.endswith("\n") and len(next(csv.reader([line]), [])) == len(self.columns)
        ]
        if len(good) != len(lines):
            self.rewrite(good)
        return good

    def rewrite(self, lines: Sequence[str]) -> None:
        """Replace the file's content with ``lines`` (atomically)."""
        atomic_write_text(self.path, "".join(lines))

    def load(self) -> pd.DataFrame:
        """The complete rows (see :meth:`lines`) as a frame with the store's columns."""
        import pandas as pd
        good = self.lines()
        if not good:
            return pd.DataFrame(columns=self.columns)
        # a hash of digits only (e.g. "012345678901") must not be read as a number
        return pd.read_csv(io.StringIO("".join(good)), dtype={"config_hash": str})

    def append(self, rows: Sequence[Mapping[str, Any]]) -> None:
        if not rows:
            return
        new = not self.path.exists()
        buf = io.StringIO()
        w = csv.DictWriter(buf, fieldnames=self.columns, lineterminator="\n")
        if new:
            w.writeheader()
        for r in rows:
            w.writerow({c: _cell(r.get(c)) for c in self.columns})
        with self.path.open("a") as f:
            f.write(buf.getvalue())
            f.flush()
            os.fsync(f.fileno())


def _cell(v: Any) -> Any:
    if isinstance(v, float):
        return repr(v) if math.isfinite(v) else ("" if math.isnan(v) else repr(v))
    return "" if v is None else v


# --- driver -----------------------------------------------------------------------------------
def _done_keys(df: pd.DataFrame, key: Sequence[str], chash: str) -> set[tuple[Any, ...]]:
    if df.empty:
        return set()
    sub = df[df["config_hash"].astype(str) == chash]
    return {tuple(r) for r in sub[list(key)].itertuples(index=False, name=None)}


def _drop_orphan_records(store: _Store, done: set[tuple[Any, ...]], chash: str) -> None:
    """Remove records of points without a row in ``main_points.csv`` (a run killed after writing
    a point's records but before its row): the point is computed again, and the resumed
    ``main_records.csv`` then equals an uninterrupted run's instead of holding both copies."""
    lines = store.lines()
    if not lines:
        return
    i_label, i_batch, i_run = (RECORD_COLUMNS.index(k) for k in MAIN_KEY)
    i_hash = RECORD_COLUMNS.index("config_hash")
    keep = lines[:1]
    for line in lines[1:]:
        row = next(csv.reader([line]))
        key = (row[i_label], int(row[i_batch]), int(row[i_run]))
        if row[i_hash] != chash or key in done:
            keep.append(line)
    if len(keep) != len(lines):
        store.rewrite(keep)


def reproduce(
    out: str | Path,
    *,
    quick: bool = False,
    runs: int | None = None,
    seed: int = 0,
    progress: bool = False,
    setup: PremaSetup | None = None,
    specs: Sequence[PolicySpec] | None = None,
    plots: bool = True,
    load: float | None = None,
    paper_range: bool = True,
    paper_range_s: tuple[float, float] = PAPER_JOB_RANGE_S,
    range_labels: Sequence[str] = RANGE_LABELS,
    ablation_runs: int = ABLATION_RUNS,
) -> dict[str, Any]:
    """Run (or resume) the PREMA reproduction into ``out`` and write its tables and plots.

    Args:
        out: output directory (created if needed).
        quick: :data:`QUICK_RUNS` workloads per (policy, batch size) instead of
            :data:`DEFAULT_RUNS`, chosen from the full run's :data:`DEFAULT_RUNS` by
            stratified sampling (:func:`_select_runs`), so the quick run's workloads are a
            representative subset of the full run's; no ablations.
        runs: workloads per (policy, batch size), and low-priority samples per (DNN, batch
            size) in the mechanism study (with ``quick``: how many to select).
        seed: base seed.
        progress: show a Rich progress bar over points.
        setup: the study's fixed parameters (default :class:`PremaSetup` with ``seed``).
        specs: policy configurations (default :func:`policy_specs`; must include ``NP-FCFS``).
        plots: also draw the PNG figures (the CSV tables and reports are always written).
        load: offered load while tasks arrive (default :attr:`PremaSetup.load`, 1.5); sets the
            dispatch window. Ignored when ``setup`` is given.
        paper_range: also run the headline policies (:data:`RANGE_LABELS`) with tasks limited
            to the paper's 0.5-45 ms (:data:`PAPER_JOB_RANGE_S`) into ``out/paper-range`` and
            report their figures beside the main ones (only if ``setup`` has no range itself).
        paper_range_s: ``(lo, hi)`` seconds of that study (default the paper's 0.5-45 ms).
        range_labels: the policy labels of that study (default :data:`RANGE_LABELS`).
        ablation_runs: workloads per batch size of each one-factor ablation
            (:mod:`~npusched.experiments.studies.prema.ablations`, written to
            ``ablations.csv`` and quoted in the ``cause`` of the comparisons); 0 skips them.
            Full runs of setups with the paper's eight DNNs only (not with ``quick``).

    Returns:
        The ``summary.json`` content.
    """
    n_runs = runs if runs is not None else (QUICK_RUNS if quick else DEFAULT_RUNS)
    if n_runs < 1:
        raise ConfigError(f"--runs must be >= 1, got {n_runs}")
    if seed < 0:
        raise ConfigError(f"--seed must be >= 0, got {seed}")
    if load is not None and not (0.0 < load <= 100.0):
        raise ConfigError(f"--load must be in (0, 100], got {load}")
    if setup is None:
        setup = PremaSetup(seed=seed) if load is None else PremaSetup(seed=seed, load=load)
    specs = list(specs or policy_specs())
    if "NP-FCFS" not in {s.label for s in specs}:
        raise ConfigError("the PREMA study needs NP-FCFS (the baseline) among its policies")
    out = _check_out(out)
    res = _run_study(out, setup, specs, n_runs, progress, "reproduce prema", quick=quick)
    ranged = None
    if paper_range and setup.job_range_s is None:
        rsetup = replace(setup, job_range_s=(paper_range_s[0], paper_range_s[1]))
        rspecs = [sp for sp in specs if sp.label in set(range_labels)]
        rout = _check_out(out / RANGE_DIR)
        ranged = _run_study(rout, rsetup, rspecs, n_runs, progress, "paper job range", quick=quick)
    abl = None
    default_mix = setup.networks == PREMA_NETWORKS and setup.job_range_s is None
    if ablation_runs and not quick and default_mix:
        abl = _run_ablations(out, setup, ablation_runs, progress)
    return write_outputs(out, res, specs, plots=plots, ranged=ranged, ablations=abl)


#: Subdirectory of the output directory holding the paper-job-range study's raw points.
RANGE_DIR = "paper-range"


def _run_ablations(
    out: Path, setup: PremaSetup, runs: int, progress: bool
) -> list[dict[str, Any]]:
    """The one-factor ablations (:func:`~npusched.experiments.studies.prema.ablations.
    ablations`) of ``setup`` with ``runs`` workloads per batch size, reused from
    ``out/ablations.json`` when it holds the same (setup, runs, versions)."""
    from npusched.experiments.studies.prema import ablations as pa

    key = {"setup": setup.config_hash(), "runs": runs, "ablations": pa.VERSION}
    path = out / "ablations.json"
    if path.exists():
        try:
            old = json.loads(path.read_text())
        except (OSError, ValueError):
            old = {}
        if isinstance(old, dict) and old.get("key") == key:
            rows: list[dict[str, Any]] = old["variants"]
            return rows
    variants = pa.default_variants()
    with progress_bar(len(variants), "[bold]one-factor ablations[/]", enabled=progress) as bar:
        rows = pa.ablations(runs, setup, variants, None if bar is None else bar.step)
    atomic_write_text(path, json.dumps(json_safe({"key": key, "variants": rows}), indent=2) + "\n")
    import pandas as pd

    write_csv(out / "ablations.csv", pd.DataFrame(pa.flat(rows)))
    return rows


def _check_out(out: str | Path) -> Path:
    """The output directory, created and checked writable before any work starts."""
    if str(out).strip() == "":
        raise ConfigError("--out: empty path; name an output directory (e.g. out/prema)")
    path = Path(out)
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as e:  # e.g. --out names an existing file, or a read-only parent
        raise ConfigError(f"{path}: cannot use as the output directory: {e.strerror}") from None
    probe = path / ".npusched-write-test"
    try:
        probe.write_text("")
        probe.unlink()
    except OSError as e:
        raise ConfigError(f"{path}: output directory is not writable: {e.strerror}") from None
    return path


def _check_stores(stores: Sequence[_Store], chash: str) -> None:
    """Refuse a directory whose raw points belong to another configuration (seed, load, ...):
    the raw CSVs would mix both (the derived outputs use only this configuration's rows)."""
    for store in stores:
        df = store.load()
        if df.empty:
            continue
        other = sorted(set(df["config_hash"].astype(str)) - {chash})
        if other:
            raise ConfigError(
                f"{store.path}: holds points of another configuration (hash {other[0]}; this one "
                f"is {chash}); use another --out or delete the directory"
            )


def _run_study(
    out: Path,
    setup: PremaSetup,
    specs: Sequence[PolicySpec],
    n_runs: int,
    progress: bool,
    desc: str,
    quick: bool = False,
) -> _Results:
    """Compute (or resume) every point of ``setup`` into ``out`` and load the results; with
    ``quick``, the ``n_runs`` workloads per batch size are chosen by :func:`_select_runs`."""
    chash = setup.config_hash()
    main_store = _Store(out / "main_points.csv", MAIN_COLUMNS)
    rec_store = _Store(out / "main_records.csv", RECORD_COLUMNS)
    mech_store = _Store(out / "mech_points.csv", MECH_COLUMNS)
    _check_stores((main_store, rec_store, mech_store), chash)
    done_main = _done_keys(main_store.load(), MAIN_KEY, chash)
    done_mech = _done_keys(mech_store.load(), MECH_KEY, chash)
    _drop_orphan_records(rec_store, done_main, chash)

    batches = tuple(sorted(set(setup.batch_sizes)))
    n_combos = len(setup.networks) * len(batches)
    todo_mech = [(r, c) for r in range(n_runs) for c in range(n_combos) if (r, c) not in done_mech]
    ctx = _Context(setup)
    selected = _select_runs(ctx, n_runs, quick)
    todo_main = [
        (spec, b, r)
        for b in batches
        for r in selected[b]
        for spec in specs
        if (spec.label, b, r) not in done_main
    ]
    total = len(todo_mech) + len(todo_main)
    with progress_bar(total, f"[bold]{desc}[/]", enabled=progress) as bar:
        step: Callable[[str], None] = (lambda _desc: None) if bar is None else bar.step
        for r, c in todo_mech:
            mech_store.append([_mech_point(ctx, r, c, chash)])
            step(f"Fig. 5/6 sample {r}.{c}")
        for spec, b, r in todo_main:
            row, recs = _main_point(ctx, spec, b, r, chash)
            rec_store.append(recs)  # records first: a point counts as done once its row exists
            main_store.append([row])
            step(f"{spec.label} b{b} run {r}")

    res = _load_results(out, setup, n_runs, chash, [s.label for s in specs], selected)
    res.windows_s = {int(b): ctx.window(b) for b in batches}
    res.labels = tuple(s.label for s in specs)
    if "NP-TOKEN" in res.labels and setup.job_range_s is None:
        res.np_token = _np_token_probe(ctx, selected)
    return res


def _load_results(
    out: Path,
    setup: PremaSetup,
    n_runs: int,
    chash: str,
    labels: Iterable[str],
    selected: Mapping[int, Sequence[int]],
) -> _Results:
    keep = set(labels)
    pairs = {(int(b), int(r)) for b, rs in selected.items() for r in rs}

    def chosen(df: pd.DataFrame) -> Any:
        return [(int(b), int(r)) in pairs for b, r in zip(df["batch"], df["run"], strict=True)]

    main = _Store(out / "main_points.csv", MAIN_COLUMNS).load()
    main = main[main["config_hash"].astype(str) == chash]
    main = main[chosen(main)]
    main = main[main["label"].isin(keep)].drop_duplicates(MAIN_KEY, keep="last")
    rec = _Store(out / "main_records.csv", RECORD_COLUMNS).load()
    rec = rec[rec["config_hash"].astype(str) == chash]
    rec = rec[chosen(rec)]
    rec = rec.drop_duplicates([*MAIN_KEY, "id"], keep="last")
    rec = rec.merge(main[MAIN_KEY], on=MAIN_KEY, how="inner")
    mech = _Store(out / "mech_points.csv", MECH_COLUMNS).load()
    mech = mech[(mech["config_hash"].astype(str) == chash) & (mech["run"] < n_runs)]
    mech = mech.drop_duplicates(MECH_KEY, keep="last")
    # a canonical row order, so that the aggregates' float sums do not depend on the order the
    # points were computed in (one run, a resumed one, or --runs raised later)
    main = main.sort_values(MAIN_KEY, kind="stable")
    rec = rec.sort_values([*MAIN_KEY, "id"], kind="stable")
    mech = mech.sort_values(MECH_KEY, kind="stable")
    return _Results(
        main.reset_index(drop=True),
        rec.reset_index(drop=True),
        mech.reset_index(drop=True),
        n_runs,
        setup,
        selected={int(b): tuple(int(r) for r in rs) for b, rs in selected.items()},
    )


def write_outputs(
    out: Path,
    res: _Results,
    specs: Sequence[PolicySpec],
    *,
    plots: bool = True,
    ranged: _Results | None = None,
    ablations: Sequence[Mapping[str, Any]] | None = None,
) -> dict[str, Any]:
    """Tables (CSV), plots (PNG, if ``plots``), ``summary.json``, ``report.md`` and
    ``fidelity.md``; ``ranged`` is the paper-job-range study, summarised beside the main one;
    ``ablations`` the one-factor ablations quoted in the comparisons' causes."""
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

    # summary.json ----------------------------------------------------------------------------------
    policies = _policies_summary(t, present, fig14)
    headline = _headline(policies, pred_info, mech_info, oracle_t)
    range_summary = _range_summary(ranged, specs) if ranged is not None else None
    summary = json_safe(
        {
            "paper": "PREMA (HPCA 2020)",
            "runs": res.runs,
            "setup": asdict(res.setup),
            "config_hash": res.setup.config_hash(),
            "dispatch_window_s": res.windows_s,
            "policies": policies,
            "predictor": {
                **pred_info,
                "per_network": {r["network"]: r["mape_percent"] for r in pred_t.to_dict("records")},
                "vs_oracle": oracle_t.to_dict("records") if not oracle_t.empty else [],
            },
            "predictor_mape_percent": pred_info.get("mape_percent"),
            "mechanisms": mech_info,
            "headline": headline,
            "checkpoint_vs_kill": _checkpoint_vs_kill(res, policies),
            "checkpoint_vs_kill_prema": _checkpoint_vs_kill(res, policies, ("PREMA",)),
            "checkpoint_vs_kill_prema_cumulative": _checkpoint_vs_kill(
                res, policies, ("PREMA",), "-cumulative"
            ),
            "job_span_ms": _job_span_ms(res),
            "paper_job_range": range_summary,
        }
    )
    summary["workloads"] = {str(b): list(rs) for b, rs in res.selected.items()}
    summary["per_batch"] = json_safe(per_batch.to_dict("records"))
    summary["np_token"] = res.np_token
    summary["ablations"] = list(ablations) if ablations is not None else None
    summary["spread"] = _spread(res)
    summary["fidelity"] = _fidelity(summary)
    summary["comparisons"] = json_safe(comparisons(summary))
    summary["token_rules"] = _token_rules(summary)
    atomic_write_text(out / "summary.json", json.dumps(summary, indent=2, sort_keys=True) + "\n")
    atomic_write_text(
        out / "report.md", _report_md(res, table, per_batch, fig14, pred_t, oracle_t, mt, summary)
    )
    atomic_write_text(out / "fidelity.md", _fidelity_md(summary))
    return summary
