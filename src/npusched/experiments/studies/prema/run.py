"""PREMA (HPCA 2020): ``npusched reproduce prema``: run (or resume) the study's points into the
output directory and write its tables, plots, ``summary.json``, ``report.md`` and ``fidelity.md``
(the method is in :mod:`npusched.experiments.studies.prema`)."""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Iterable, Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from npusched._io import atomic_write_text
from npusched.errors import ConfigError
from npusched.experiments.store import StudyPoint, open_study_store, point_key, run_points
from npusched.experiments.studies.prema.comparisons import _spread, _token_rules, comparisons
from npusched.experiments.studies.prema.figures import (
    _checkpoint_vs_kill,
    _headline,
    _job_span_ms,
    _policies_summary,
    _range_summary,
    write_figures,
)
from npusched.experiments.studies.prema.paper import (
    PREMA_NETWORKS,
)
from npusched.experiments.studies.prema.points import (
    ABLATION_RUNS,
    MAIN_COLUMNS,
    MAIN_KEY,
    MECH_COLUMNS,
    MECH_KEY,
    RECORD_COLUMNS,
    PolicySpec,
    _Context,
    _main_point,
    _mech_point,
    _np_token_probe,
    _Results,
    _select_runs,
)
from npusched.experiments.studies.prema.report import _fidelity, _fidelity_md, _report_md
from npusched.experiments.studies.prema.suite import PremaSetup, PremaSuite
from npusched.experiments.suite_io import load_suite_as, parse_suite_as
from npusched.report.progress import progress_bar
from npusched.report.suite_output import json_safe, write_csv

if TYPE_CHECKING:
    import pandas as pd


# --- the raw points: one store (experiments/store.py) -------------------------------------------
def _cell(v: Any) -> Any:
    if isinstance(v, float):
        return repr(v) if math.isfinite(v) else ("" if math.isnan(v) else repr(v))
    return "" if v is None else v


def _csv_text(columns: Sequence[str], rows: Iterable[Mapping[str, Any]]) -> str:
    """``rows`` as CSV with the header ``columns`` (floats by ``repr``: exact; NaN and
    missing cells empty)."""
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=list(columns), lineterminator="\n")
    w.writeheader()
    for r in rows:
        w.writerow({c: _cell(r.get(c)) for c in columns})
    return buf.getvalue()


def _main_id(chash: str, spec: PolicySpec, batch: int, run: int) -> str:
    return point_key("prema/main", chash, spec.model_dump(), batch, run)


def _mech_id(chash: str, run: int, combo: int) -> str:
    return point_key("prema/mech", chash, run, combo)


def reproduce(
    out: str | Path,
    suite: PremaSuite | None = None,
    *,
    quick: bool = False,
    progress: bool = False,
    setup: PremaSetup | None = None,
    specs: Sequence[PolicySpec] | None = None,
    ablation_runs: int = ABLATION_RUNS,
    **params: Any,
) -> dict[str, Any]:
    """Run (or resume) the PREMA reproduction into ``out`` and write its tables and plots.

    Args:
        out: output directory (created if needed).
        suite: the parameters (:class:`~npusched.experiments.studies.prema.suite.PremaSuite`;
            default: the packaged suite file's, with ``quick`` its ``[quick]`` ones).
        quick: the quick run: the suite's ``runs`` workloads per (policy, batch size) chosen
            from the full run's :data:`DEFAULT_RUNS` by stratified sampling
            (:func:`_select_runs`), so they are a representative subset of the full run's; no
            ablations.
        progress: show a Rich progress bar over points.
        setup: a setup in place of the suite's workload keys (e.g. one with a job range).
        specs: policy configurations in place of the suite's ``policies`` (must include
            ``NP-FCFS``).
        ablation_runs: workloads per batch size of each one-factor ablation
            (:mod:`~npusched.experiments.studies.prema.ablations`, written to
            ``ablations.csv`` and quoted in the ``cause`` of the comparisons); 0 skips them.
            Full runs of setups with the paper's eight DNNs only (not with ``quick``).
        **params: any key of the suite file (``runs``, ``seed``, ``load``, ``plots``,
            ``paper_range``, ``paper_range_ms``, ...), applied over ``suite`` and checked by
            its schema (a bad value: one line naming the key).

    Returns:
        The ``summary.json`` content.
    """
    suite = _with_params(suite, quick, params)
    if setup is None:
        setup = suite.setup()
    specs = list(specs or suite.specs())
    if "NP-FCFS" not in {s.label for s in specs}:
        raise ConfigError("the PREMA study needs NP-FCFS (the baseline) among its policies")
    n_runs = suite.runs
    out = Path(out)
    res = _run_study(out, setup, specs, n_runs, progress, "reproduce prema", quick=quick)
    ranged = None
    if suite.paper_range and setup.job_range_s is None:
        lo, hi = suite.paper_range_ms
        rsetup = setup.replace(job_range_s=(lo / 1000.0, hi / 1000.0))
        rspecs = [sp for sp in specs if sp.label in set(suite.paper_range_policies)]
        rout = out / RANGE_DIR
        ranged = _run_study(rout, rsetup, rspecs, n_runs, progress, "paper job range", quick=quick)
    abl = None
    default_mix = tuple(setup.networks) == PREMA_NETWORKS and setup.job_range_s is None
    if ablation_runs and not quick and default_mix:
        abl = _run_ablations(out, setup, ablation_runs, progress)
    return write_outputs(out, res, specs, plots=suite.plots, ranged=ranged, ablations=abl)


def _with_params(suite: PremaSuite | None, quick: bool, params: Mapping[str, Any]) -> PremaSuite:
    """``suite`` (default: the packaged file's, quick or full) with the suite-file keys
    ``params`` (checked by the schema, before anything runs)."""
    # a bad value is reported against the keyword, named as its command-line option
    over = {k: (f"--{k.replace('_', '-')}", v) for k, v in params.items()}
    if suite is None:
        return load_suite_as(PremaSuite, "prema", quick=quick, overrides=over)
    if params:
        return parse_suite_as(PremaSuite, suite.model_dump(), "reproduce", overrides=over)
    return suite


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


def _run_study(
    out: Path,
    setup: PremaSetup,
    specs: Sequence[PolicySpec],
    n_runs: int,
    progress: bool,
    desc: str,
    quick: bool = False,
) -> _Results:
    """Compute (or resume) every point of ``setup`` into ``out``'s store
    (:mod:`npusched.experiments.store`: one file per finished point, written atomically, so a
    killed run loses only the points running and a rerun skips the finished ones), write the
    raw CSVs of this run's points and load the results; with ``quick``, the ``n_runs``
    workloads per batch size are chosen by :func:`_select_runs`."""
    chash = setup.config_hash()
    meta = {"study": "prema", "config_hash": chash}
    open_study_store(out, meta)  # another configuration's store: refused before any work
    batches = tuple(sorted(set(setup.batch_sizes)))
    n_combos = len(setup.networks) * len(batches)
    ctx = _Context(setup)
    selected = _select_runs(ctx, n_runs, quick)

    def main_point(spec: PolicySpec, b: int, r: int) -> dict[str, Any]:
        row, recs = _main_point(ctx, spec, b, r, chash)
        return {**row, "records": recs}

    mech = [
        StudyPoint(
            _mech_id(chash, r, c),
            partial(_mech_point, ctx, r, c, chash),
            f"Fig. 5/6 sample {r}.{c}",
        )
        for r in range(n_runs)
        for c in range(n_combos)
    ]
    main = [
        StudyPoint(
            _main_id(chash, spec, b, r),
            partial(main_point, spec, b, r),
            f"{spec.label} b{b} run {r}",
        )
        for b in batches
        for r in selected[b]
        for spec in specs
    ]
    rows = run_points(out, meta, mech + main, progress=progress, desc=desc)
    mech_rows, main_rows = rows[: len(mech)], rows[len(mech) :]
    records = [rec for row in main_rows for rec in row["records"]]
    atomic_write_text(out / "mech_points.csv", _csv_text(MECH_COLUMNS, mech_rows))
    atomic_write_text(out / "main_records.csv", _csv_text(RECORD_COLUMNS, records))
    atomic_write_text(out / "main_points.csv", _csv_text(MAIN_COLUMNS, main_rows))

    res = _load_results(out, setup, n_runs, selected)
    res.windows_s = {int(b): ctx.window(b) for b in batches}
    res.labels = tuple(s.label for s in specs)
    if "NP-TOKEN" in res.labels and setup.job_range_s is None:
        res.np_token = _np_token_probe(ctx, selected)
    return res


def _load_results(
    out: Path, setup: PremaSetup, n_runs: int, selected: Mapping[int, Sequence[int]]
) -> _Results:
    """The raw CSVs of this run's points (:func:`_run_study`) as frames, in a canonical row
    order (so that the aggregates' float sums do not depend on the order the points were
    computed in: one run, a resumed one, or ``--runs`` raised later)."""
    import pandas as pd

    def load(name: str) -> pd.DataFrame:
        # a hash of digits only (e.g. "012345678901") must not be read as a number
        return pd.read_csv(out / name, dtype={"config_hash": str})

    main = load("main_points.csv").sort_values(MAIN_KEY, kind="stable")
    rec = load("main_records.csv").sort_values([*MAIN_KEY, "id"], kind="stable")
    mech = load("mech_points.csv").sort_values(MECH_KEY, kind="stable")
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
    tb = write_figures(out, res, specs, plots=plots)
    table, t, present, fig14, per_batch = tb.table, tb.t, tb.present, tb.fig14, tb.per_batch
    pred_t, pred_info, oracle_t, mt, mech_info = (
        tb.pred_t,
        tb.pred_info,
        tb.oracle_t,
        tb.mt,
        tb.mech_info,
    )

    # summary.json ----------------------------------------------------------------------------------
    policies = _policies_summary(t, present, fig14)
    headline = _headline(policies, pred_info, mech_info, oracle_t)
    range_summary = _range_summary(ranged, specs) if ranged is not None else None
    summary = json_safe(
        {
            "paper": "PREMA (HPCA 2020)",
            "runs": res.runs,
            "setup": res.setup.model_dump(),
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


def run_suite(suite: PremaSuite, out: Path, *, quick: bool, progress: bool) -> dict[str, Any]:
    """``npusched reproduce prema`` with the parameters of ``suite``."""
    return reproduce(out, suite, quick=quick, progress=progress)
