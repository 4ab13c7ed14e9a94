"""Reproduce HaX-CoNN (PPoPP'24) Sec. 5: ``npusched reproduce haxconn [--quick] [--out DIR]``.

Methodology (with the choices the paper leaves open):

* **Profiles**: :func:`npusched.hardware.soc.generate_profile` (roofline per accelerator,
  calibrated to Table 5; Snapdragon calibrated on Table 6 exp. 9), 10 layer groups per DNN
  (Table 2's count; 5 per iteration in Table 8). The paper's DNNs map to
  zoo networks as in ``npusched/data/haxconn/table5_standalone.csv`` (Alexnet/CaffeNet ->
  ``alexnet``, Inception -> ``inception-v4``, FC_ResN18 -> ``fcn-resnet18``).
* **Rounds and metrics**: every experiment is one *round*: the DNN set processes one frame
  (Scenarios 2 and 4: the DNNs of one frame, with DNN_1 -> DNN_2 a dependency in Scenario 4;
  Scenario 3, a streaming pipeline, in steady state: DNN_1 on frame k+1 beside DNN_2 on frame
  k, so no dependency inside the round; Scenario 1: several instances on consecutive frames).
  Latency = the round's makespan, FPS = frames per round / makespan (Table 6's FPS column is
  1000 / latency in every row). Maximising that FPS is minimising the makespan, so Table 6,
  Fig. 5 and Fig. 7 solve Eq. 11; Table 6's Max-FPS rows also report the gain when solved for
  Eq. 10. Table 8 (throughput gains) solves Eq. 10 (sum_n 1/T_n), with the Eq. 11 gain and the
  gain without contention beside it (one factor at a time).
* **Comparisons**: ``summary.json``'s ``comparisons`` (:mod:`.report`): every Table 6
  row, Table 8 cell, Fig. 5 and Fig. 6 value, the misprediction figure, the abstract's
  contention reduction and Table 7 (not modelled: no CPU in the simulated SoC), each with the
  paper's number, ours and the measured cause. ``synthetic`` in a label: our rooflines.
* **Table 6's baselines**: the paper's four columns as the artifact runs them
  (:func:`~.points.table6_baselines`: GPU-only, GPU & DSA with DNN-1 on the GPU and DNN-2 on
  the DLA, Herald, one-shot H2H); our stronger variants (best-orientation GPU & DSA, H2H with a
  remapping hill climb, Mensa) are columns beside them.
* **HaX-CoNN**: the restricted space with one transition per DNN (Table 6's setting), proven
  optimal by the bounded exhaustive search (:mod:`npusched.policies.mapping.exhaustive`;
  ``solver s`` is the whole search, baselines included), and the free space with CP-SAT seeded
  by the best heuristic (one second; ``free gap`` to the best proven lower bound).
* **Table 8**: every pair (with itself too) of the ten Table 5 DNNs on Orin; the faster DNN runs
  ``round(t_slow / t_fast)`` iterations (GPU times, Sec. 5.4); the cell is HaX-CoNN's FPS over
  the best baseline's and the best baseline's name; "x" when HaX-CoNN's best is GPU-only.
* **Fig. 5**: two instances of each of five DNNs on Orin (the paper names GoogLeNet; the other
  four are our pick from Table 5).
* **Fig. 7**: D-HaX-CoNN in one engine run (:func:`engine_dynamic`): the DNN sets of
  experiments 2, 5 and 1 in turn, 10 s each, frames at a fixed rate; the schedule swaps come
  from :func:`~npusched.policies.mapping.haxconn.dynamic_haxconn` on a deterministic clock and
  are installed by engine timers; the realised latency at 25 ms, 100 ms, 250 ms, 500 ms and
  1.5 s after each change is the engine's; the oracle is the restricted optimum.
* **Gap**: :func:`gap_analysis` measures why our Table 6 gains are smaller than the paper's.
* **Solver benchmark**: CP-SAT vs Z3 on 2 and 3 DNNs x 10/20/40/80 groups, restricted (T = 1)
  and free, same instances, cold (no hint); time to proven optimum or the gap at the limit;
  median of repeats; plus HaX-CoNN's pipeline (bounded exhaustive restricted search where the
  space fits 2,000,000 schedules, else CP-SAT seeded with the best heuristic) with a 1 s budget.

Outputs: ``table6.csv/.md``, ``solver_table6.csv``, ``table6_gap.csv``, ``table8.csv/.md``,
``fig5.csv/.png``, ``fig6.csv``, ``fig7.csv/.png``, ``fig7_swaps.csv``, ``solver.csv/.md``, ``gantt_exp<N>.png`` (the first experiment run), ``predicted_vs_realised.csv``, ``summary.json``,
``report.md``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from npusched._io import atomic_write_text
from npusched.errors import ConfigError
from npusched.experiments.store import StudyPoint, point_key, run_points
from npusched.experiments.studies.haxconn.figures import (
    FIG7_TEXT,
    GAP_TEXT,
    _csv,
    _md,
    gantt,
    gap_reading,
)
from npusched.experiments.studies.haxconn.paper import (
    TABLE6,
    TABLE6_BASELINES,
    TABLE8_NETS,
    Experiment,
)
from npusched.experiments.studies.haxconn.points import (
    _fig5,
    _fig6,
    _fig7,
    _groups,
    _solver_bench,
    _table6,
    _table8,
    _workload,
    gap_analysis,
    table6_baselines,
)
from npusched.experiments.studies.haxconn.report import build_records, measured_records
from npusched.experiments.studies.haxconn.suite import HaxconnSuite
from npusched.experiments.suite_io import load_suite_as

if TYPE_CHECKING:
    from npusched.policies.mapping.execute import Workload
    from npusched.policies.mapping.haxconn import HaxconnResult

__all__ = ["PARTS", "TABLE6", "Experiment", "gantt", "reproduce"]

MEASURED_TEXT = (
    "The artifact measured four DNN pairs on Xavier under five methods, with each method's "
    "schedule (`data/haxconn/artifact/multi_dnn_xavier.json`). Each schedule runs here through "
    "our model (Table 5-calibrated rooflines at the finest grouping, the artifact's TensorRT "
    "layer index mapped to our groups by Convolution / InnerProduct count, PCCS-style "
    "contention); each latency is aggregated as the artifact's summary script does.\n"
)


PARTS = ("table6", "table8", "fig5", "fig7", "solver", "gap")


def reproduce(
    out: str | Path,
    *,
    quick: bool = False,
    parts: Sequence[str] | None = None,
    experiments: Sequence[int] | str | None = None,
    table6_free_time_limit_s: float | None = None,
    table8_networks: Sequence[str] | None = None,
    fig5_networks: Sequence[str] | None = None,
    fig7_experiments: Sequence[int] | None = None,
    fig7_time_limit_s: float | None = None,
    fig7_phase_s: float | None = None,
    solver_groups: Sequence[int] | None = None,
    solver_time_limit_s: float | None = None,
    solver_repeats: int | None = None,
    z3_max_groups: int | None = None,
    progress: bool = False,
) -> dict[str, Any]:
    """Run the suite into ``out`` (created) and return ``summary.json``'s content.

    ``progress``: a progress bar on stderr over the suite's parts (Table 6, then each of
    ``parts``), shown after 1 s.

    ``quick``: shorter solver limits, Table 8 over four DNNs, the solver benchmark at 10 and 20
    groups once. ``parts`` selects outputs (:data:`PARTS`; the solver benchmark needs z3);
    ``experiments`` restricts Table 6 to those numbers (Table 6 and the Gantt chart of the first
    one always run; ``None`` or ``"all"``: every one). A keyword left ``None`` takes the packaged
    suite file's value (:class:`~npusched.experiments.studies.haxconn.suite.HaxconnSuite`, its
    quick run with ``quick``; the values are declared once, there; seconds for the time
    limits): the free-space CP-SAT limit of Table 6 (1.0; quick 0.3), Table 8's DNNs
    (:data:`TABLE8_NETS`; quick the first four), Fig. 5's DNNs, Fig. 7's experiments, its
    D-HaX-CoNN CP-SAT budget per change (1.5; quick 0.3) and phase length (10; quick 2), and the
    solver benchmark's layer-group counts (10, 20, 40, 80; quick 10, 20), per-solve limit (5.0;
    quick 1.0), repeats (3; quick 1) and the largest group count Z3 is run at (40; quick 20).
    """
    model = load_suite_as(HaxconnSuite, "haxconn", quick=quick)  # the values of the keywords not given
    parts = model.parts if parts is None else parts
    if experiments is None:
        experiments = model.experiments
    if experiments == "all":
        experiments = None  # (every experiment)
    if isinstance(experiments, str):
        raise ConfigError(f"experiments={experiments!r}; allowed: a list of numbers or 'all'")
    fig5_networks = model.fig5_networks if fig5_networks is None else fig5_networks
    fig7_experiments = model.fig7_experiments if fig7_experiments is None else fig7_experiments
    if table6_free_time_limit_s is None:
        table6_free_time_limit_s = float(model.table6_free_time_limit_s)
    table8_networks = model.table8_networks if table8_networks is None else table8_networks
    if fig7_time_limit_s is None:
        fig7_time_limit_s = float(model.fig7_time_limit_s)
    fig7_phase_s = float(model.fig7_phase_s) if fig7_phase_s is None else fig7_phase_s
    solver_groups = model.solver_groups if solver_groups is None else solver_groups
    if solver_time_limit_s is None:
        solver_time_limit_s = float(model.solver_time_limit_s)
    solver_repeats = model.solver_repeats if solver_repeats is None else solver_repeats
    z3_max_groups = model.z3_max_groups if z3_max_groups is None else z3_max_groups
    bad = [p for p in parts if p not in PARTS]
    if bad:
        raise ConfigError(f"--only {bad[0]!r}; allowed: {', '.join(PARTS)}")
    if experiments is not None and not any(e.exp in experiments for e in TABLE6):
        raise ConfigError(f"experiments={list(experiments)!r}; allowed: "
                          + ", ".join(str(e.exp) for e in TABLE6))
    from npusched.report.plots import grouped_bars, lines

    outdir = Path(out)
    if outdir.exists() and not outdir.is_dir():
        raise ConfigError(f"--out {out}: not a directory")
    outdir.mkdir(parents=True, exist_ok=True)
    t6_limit = table6_free_time_limit_s
    t8_nets = list(table8_networks)
    f7_limit, f7_phase = fig7_time_limit_s, fig7_phase_s
    gap_exps = (1, 5) if quick else experiments
    s_groups = list(solver_groups)
    s_limit, s_repeats, s_z3 = solver_time_limit_s, solver_repeats, z3_max_groups
    config = {"table6_free_time_limit_s": t6_limit, "table8_networks": t8_nets,
              "fig5_networks": list(fig5_networks), "fig7_experiments": list(fig7_experiments),
              "fig7_time_limit_s": f7_limit, "fig7_phase_s": f7_phase,
              "solver_groups": s_groups, "solver_time_limit_s": s_limit,
              "solver_repeats": s_repeats, "z3_max_groups": s_z3}
    meta = {"study": "haxconn", "config_hash": point_key(config)}

    def run(points: Sequence[StudyPoint], desc: str) -> list[dict[str, Any]]:
        return run_points(outdir, meta, points, progress=progress, desc=desc)

    def key(*parts: Any) -> str:
        return point_key("haxconn", meta["config_hash"], *parts)

    live: dict[int, tuple[Workload, HaxconnResult]] = {}
    t6_exps = [e.exp for e in TABLE6 if experiments is None or e.exp in experiments]
    t6_found = run([StudyPoint(key("table6", x), partial(_table6_point, x, t6_limit, live),
                               f"Table 6 exp. {x}") for x in t6_exps], "haxconn Table 6")
    t6 = [r["row"] for r in t6_found]
    s6 = [r["solver"] for r in t6_found]
    pvr = [row for r in t6_found for row in r["pvr"]]
    slow = [x for r in t6_found for x in r["slowdowns"]]
    _csv(outdir / "table6.csv", t6)
    _csv(outdir / "solver_table6.csv", s6)
    atomic_write_text(outdir / "table6.md", _md(t6))
    _csv(outdir / "predicted_vs_realised.csv", pvr)
    first = min(t6_exps)
    w1, h1 = live[first] if first in live else _table6_solution(first)
    gantt(outdir / f"gantt_exp{first}.png", w1, h1.realised,
          f"Exp. {first} ({w1.soc.name}, {' + '.join(t.name for t in w1.tasks)}): HaX-CoNN")
    t8: list[dict[str, Any]] = []
    if "table8" in parts:
        t8 = run([StudyPoint(key("table8"), lambda: {"rows": _table8(t8_nets)}, "Table 8")],
                 "haxconn Table 8")[0]["rows"]
        _csv(outdir / "table8.csv", t8)
        atomic_write_text(outdir / "table8.md", _md(t8))
    f5: list[dict[str, Any]] = []
    if "fig5" in parts:
        f5 = [row for r in run([StudyPoint(key("fig5", n), partial(_rows, _fig5, [n]), f"Fig. 5 {n}")
                                for n in fig5_networks], "haxconn Fig. 5") for row in r["rows"]]
        _csv(outdir / "fig5.csv", f5)
        grouped_bars(outdir / "fig5.png", [r["dnn"] for r in f5],
                     {m: [r[f"{m} FPS"] for r in f5] for m in ("GPU-only", "GPU & DSA", "Mensa", "HaX-CoNN")},
                     ylabel="FPS (2 instances, Orin)", title="Fig. 5: Scenario 1")
    f7: list[dict[str, Any]] = []
    f7_swaps: list[dict[str, Any]] = []
    if "fig7" in parts:
        f7_found = run([StudyPoint(key("fig7"), partial(_fig7_point, fig7_experiments, f7_limit,
                                                          f7_phase), "Fig. 7")], "haxconn Fig. 7")
        f7, f7_swaps = f7_found[0]["rows"], f7_found[0]["swaps"]
        _csv(outdir / "fig7.csv", f7)
        _csv(outdir / "fig7_swaps.csv", f7_swaps)
        found = [r for r in f7 if r["mode"] == "found"]
        marks = [r for r in f7 if r["mode"] == "marks"]
        lines(outdir / "fig7.png", [r["t_s"] for r in found],
              {"D-HaX-CoNN (swap when found)": [r["latency_ms"] for r in found],
               "D-HaX-CoNN (swap at the paper's marks)": [r["latency_ms"] for r in marks],
               "oracle": [r["oracle_ms"] for r in found]},
              xlabel="time (s); the DNN set changes every 10 s", ylabel="latency per frame (ms)",
              title="Fig. 7: D-HaX-CoNN")
    gap: list[dict[str, Any]] = []
    if "gap" in parts:
        g_exps = [e.exp for e in TABLE6 if gap_exps is None or e.exp in gap_exps]
        gap = [row for r in run([StudyPoint(key("gap", x), partial(_rows, gap_analysis, [x]),
                                            f"gap exp. {x}") for x in g_exps], "haxconn gap")
               for row in r["rows"]]
        _csv(outdir / "table6_gap.csv", gap)
    solver: list[dict[str, Any]] = []
    if "solver" in parts:
        by_size = run([StudyPoint(key("solver", g), partial(_rows, _solver_bench, [g], s_limit,
                                                              s_repeats, s_z3), f"solvers {g} groups")
                       for g in s_groups], "haxconn solver benchmark")
        # the benchmark's order: DNN count, then group count
        solver = [row for n_dnn in sorted({r["dnns"] for b in by_size for r in b["rows"]})
                  for b in by_size for row in b["rows"] if row["dnns"] == n_dnn]
    if solver:
        _csv(outdir / "solver.csv", solver)
        atomic_write_text(outdir / "solver.md", _md(solver))
    f6 = _fig6([n for n in TABLE8_NETS if n != "googlenet"])
    _csv(outdir / "fig6.csv", f6)
    comparisons = build_records(
        t6, t8, f5, pvr, gap, max(slow) if slow else None,
        {r["dnn"]: r["no contention %"] for r in f5}, f6,
        t8_nets,
    )
    from npusched.experiments.studies.haxconn.measured import study as measured_study

    measured = measured_study()  # our model against the artifact's 20 measured latencies
    mv = measured["validation"]
    t6_gain = {int(r["exp"]): r["improvement %"] for r in t6}
    for r in mv["experiments"]:  # our own optimum against our baselines, same pair (Table 6)
        r["Table 6 gain, ours %"] = t6_gain.get(r["Table 6 exp."], "-")
    _csv(outdir / "measured.csv", mv["pairs"])
    _csv(outdir / "measured_gains.csv", mv["experiments"])
    _csv(outdir / "measured_factors.csv", measured["factor_table"])
    comparisons += measured_records(measured)
    mf = measured["factors"]
    for c in comparisons:
        if c["id"] == "table6/mean_latency_improvement_pct" and c["cause"]:
            c["cause"] += (
                "; on the artifact's 20 measured Xavier latencies (measured/*) the two factors "
                f"that reach the target fit worse than ours: RMS ln(predicted / measured) "
                f"{mv['rms_log_ratio']} ours, {mf['no contention']['rms_log_ratio']} no "
                f"contention, {mf['memory demand x0.6']['rms_log_ratio']} memory demand x0.6"
            )
    improved = sum(1 for r in t8 if r["cell"] != "x")
    summary: dict[str, Any] = {
        "experiments": {
            str(r["exp"]): {
                "best_baseline": r["best baseline"],
                "best_baseline_latency_ms": min(r[f"{m} ms"] for m in TABLE6_BASELINES),
                "haxconn_latency_ms": r["HaX-CoNN ms"],
                "improvement_pct": r["improvement %"],
                "solver_s": r["solver s"],
                "proven": r["proven"],
                "transitions": r["TR"],
                "paper_improvement_pct": r["paper improvement %"],
            }
            for r in t6
        },
        "table8": {"pairs": len(t8), "improved": improved, "gpu_only_or_equal": len(t8) - improved},
        "fig5": {r["dnn"]: r["improvement %"] for r in f5},
        "solver": solver,
        "solver_table6": s6,
        "table6_gap": gap,
        "quick": quick,
        "measured_xavier": {
            "source": measured["source"],
            **{k: mv[k] for k in ("rms_log_ratio", "mean_log_ratio", "mean_abs_error_pct",
                                  "gain_mean_measured_pct", "gain_mean_predicted_pct")},
            "factors": {k: {"rms_log_ratio": f["rms_log_ratio"],
                            "gain_mean_predicted_pct": f["gain_mean_predicted_pct"]}
                        for k, f in mf.items()},
        },
        "comparisons": comparisons,
    }
    if t6:  # ours beside the paper's, in the shape every suite's headline has
        ours = [float(r["improvement %"]) for r in t6]
        paper = [float(r["paper improvement %"]) for r in t6]
        summary["headline"] = {
            "table6_improvement_pct_mean": {"ours": float(np.mean(ours)), "paper": float(np.mean(paper))},
            "table6_improvement_pct_max": {"ours": max(ours), "paper": max(paper)},
            "table6_improvement_pct_min": {"ours": min(ours), "paper": min(paper)},
        }
    atomic_write_text(outdir / "summary.json", json.dumps(summary, indent=2) + "\n")
    report = [
        "# HaX-CoNN reproduced\n",
        "## Table 6 (latency in ms, realised under the contention model; synthetic rooflines)\n", _md(t6),
        "## Solver per Table 6 experiment (restricted: proven optimum; free: 1 s anytime)\n",
        _md(s6),
        "## Why our Table 6 gains are smaller than the paper's (measured)\n",
        GAP_TEXT, _md(gap), gap_reading(gap),
        "## Predicted vs realised\n", _md(pvr),
        "## Table 8 (Orin, all pairs; synthetic rooflines; Eq. 10)\n", _md(t8),
        "## Fig. 5 (Scenario 1; synthetic rooflines)\n", _md(f5),
        "## Fig. 6 (GoogLeNet on the GPU beside another DNN on the DLA, Xavier; synthetic rooflines)\n",
        _md(f6),
        "## Our Xavier model against the artifact's measured latencies\n",
        MEASURED_TEXT, _md(mv["pairs"]), _md(mv["experiments"]),
        f"RMS of ln(predicted / measured): {mv['rms_log_ratio']}; mean |error| "
        f"{mv['mean_abs_error_pct']}%.\n",
        "### One factor at a time (the same 20 schedules)\n", _md(measured["factor_table"]),
        "## Comparisons with the paper (synthetic rooflines wherever the label says so)\n",
        _md([{k: v for k, v in c.items() if k != "spread"} for c in comparisons]),
        "## Fig. 7 (D-HaX-CoNN in an engine run)\n", FIG7_TEXT, _md(f7),
        "### Swaps (deterministic clock)\n", _md(f7_swaps),
    ]
    if solver:
        report += ["## Solver benchmark (CP-SAT vs Z3)\n", _md(solver)]
    atomic_write_text(outdir / "report.md", "\n".join(report))
    return summary


def _table6_point(exp: int, free_time_limit_s: float,
                  live: dict[int, tuple[Workload, HaxconnResult]]) -> dict[str, Any]:
    """One Table 6 experiment: its row, solver row, predicted-vs-realised rows and the largest
    slowdowns of H2H's and Herald's contention intervals; the solved workload is kept in
    ``live`` (for the Gantt chart)."""
    t6, pvr, kept, s6 = _table6(free_time_limit_s, [exp])
    live.update(kept)
    w, h = kept[exp]
    slow = [max(iv.slowdown) for m, r in table6_baselines(w, h).items() if m in ("H2H", "Herald")
            for iv in r.realised.intervals if iv.slowdown]
    return {"row": t6[0], "solver": s6[0], "pvr": pvr, "slowdowns": slow}


def _table6_solution(exp: int) -> tuple[Workload, HaxconnResult]:
    """Table 6 experiment ``exp``'s workload and restricted optimum (the bounded exhaustive
    search: deterministic), for a resumed run's Gantt chart."""
    from npusched.policies.mapping.haxconn import haxconn

    e = next(e for e in TABLE6 if e.exp == exp)
    w = _workload(e.soc, e.nets, _groups(e), dict(e.after))
    return w, haxconn(w, "latency", max_transitions=1)


def _rows(part: Callable[..., list[dict[str, Any]]], *args: Any) -> dict[str, Any]:
    return {"rows": part(*args)}


def _fig7_point(exps: Sequence[int], cpsat_s: float, phase_s: float) -> dict[str, Any]:
    rows, swaps = _fig7(exps, cpsat_s, phase_s)
    return {"rows": rows, "swaps": swaps}


def run_suite(suite: HaxconnSuite, out: Path, *, quick: bool, progress: bool) -> dict[str, Any]:
    """``npusched reproduce haxconn`` with the parameters of ``suite``."""
    return reproduce(
        out,
        quick=quick,
        parts=tuple(suite.parts),
        experiments=None if suite.experiments == "all" else list(suite.experiments),
        table6_free_time_limit_s=float(suite.table6_free_time_limit_s),
        table8_networks=tuple(suite.table8_networks),
        fig5_networks=tuple(suite.fig5_networks),
        fig7_experiments=tuple(suite.fig7_experiments),
        fig7_time_limit_s=float(suite.fig7_time_limit_s),
        fig7_phase_s=float(suite.fig7_phase_s),
        solver_groups=tuple(suite.solver_groups),
        solver_time_limit_s=float(suite.solver_time_limit_s),
        solver_repeats=suite.solver_repeats,
        z3_max_groups=suite.z3_max_groups,
        progress=progress,
    )
