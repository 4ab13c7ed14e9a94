"""HaX-CoNN (issue 22): our Xavier model against the authors' measured multi-DNN latencies,
one factor at a time, one constant fitted, and Table 6 / Table 8 under each fitted constant.

Prints Markdown tables: the cut mapping, the 20 (experiment, method) pairs, the gains per
experiment, the factor table, the scans of three constants (contention slopes, memory demand,
GPU group times) with the fitted value (smallest RMS of ln(predicted / measured) on a 0.025
grid), and Table 6's mean improvement (10 rows) and Table 8's Spearman correlation with the
paper's cells (55 cells, Eq. 11 gains, as ``haxconn_table8_factors.py``) under each fitted
constant beside the default. Usage:
``PYTHONPATH=src python benchmarks/haxconn_measured_fit.py [--no-tables]`` (about 4 CPU minutes
with Table 6 and Table 8; a few seconds with ``--no-tables``).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from npusched.experiments.studies.haxconn.measured import (
    ModelFactors,
    apply_factors,
    authors_baselines,
    cut_table,
    factor_table,
    fit_scan,
    validate,
)


def md(rows: Sequence[dict[str, Any]]) -> str:
    keys = list(rows[0])
    out = ["| " + " | ".join(keys) + " |", "|" + "---|" * len(keys)]
    out += ["| " + " | ".join(str(r[k]) for k in keys) + " |" for r in rows]
    return "\n".join(out)


SCANS: dict[str, tuple[Callable[[float], ModelFactors], np.ndarray]] = {
    "contention slopes x": (lambda x: ModelFactors(contention_scale=x), np.arange(0.0, 3.001, 0.025)),
    "memory demand x": (lambda x: ModelFactors(memory=x), np.arange(0.5, 1.601, 0.025)),
    "GPU group times x": (lambda x: ModelFactors(gpu_time=x), np.arange(0.9, 1.401, 0.025)),
}


def table6_mean(f: ModelFactors) -> tuple[float, float]:
    """Table 6's mean improvement over the best of the four baselines (all 10 rows, and the 5
    Xavier rows) with ``f`` applied to every row."""
    from npusched.experiments.studies.haxconn.paper import TABLE6
    from npusched.experiments.studies.haxconn.points import _groups, _improvement, _workload

    gains = {e.exp: _improvement(apply_factors(_workload(e.soc, e.nets, _groups(e), dict(e.after)), f))
             for e in TABLE6}
    xav = [g for e in TABLE6 for g in [gains[e.exp]] if e.soc == "xavier"]
    return round(sum(gains.values()) / len(gains), 2), round(sum(xav) / len(xav), 2)


def table8_spearman(f: ModelFactors) -> tuple[float, float | None]:
    """Table 8's mean Eq. 11 gain and Spearman correlation with the paper (55 cells)."""
    from npusched.experiments.studies.haxconn.paper import TABLE8_NETS, TABLE8_PAPER
    from npusched.experiments.studies.haxconn.points import _gain, _workload
    from npusched.experiments.studies.haxconn.report import _spearman
    from npusched.hardware.soc import table5_times
    from npusched.policies.mapping.haxconn import haxconn

    t5 = table5_times()
    paper, ours = [], []
    for i, a in enumerate(TABLE8_NETS):
        for j, b in enumerate(TABLE8_NETS[: i + 1]):
            ta, tb = t5[a]["orin_gpu"], t5[b]["orin_gpu"]
            reps = (1, max(1, round(ta / tb))) if ta >= tb else (max(1, round(tb / ta)), 1)
            w = apply_factors(_workload("orin", (a, b), 5, repeats=reps), f)
            h = haxconn(w, "latency", max_transitions=1)
            _, r, gpu_only = _gain(h, "latency")
            ours.append(0.0 if gpu_only or r <= 1 + 1e-9 else 100 * (r - 1))
            p = TABLE8_PAPER[i][j][1]
            paper.append(0.0 if p is None else 100 * (p - 1))
    return round(sum(ours) / len(ours), 2), _spearman(paper, ours)


def main(argv: Sequence[str]) -> None:
    print("## Cuts\n\n" + md(cut_table()))
    v = validate()
    print("\n## 20 pairs (default model)\n\n" + md(v["pairs"]))
    print("\n## Gains per experiment\n\n" + md(v["experiments"]))
    print(f"\nRMS log ratio {v['rms_log_ratio']}, mean log ratio {v['mean_log_ratio']}, "
          f"mean |error| {v['mean_abs_error_pct']}%")
    print("\n## One factor at a time\n\n" + md(factor_table()))
    print("\n## Table 6's gain on the four pairs: our baselines or the authors' schedules\n\n"
          + md(authors_baselines()))
    fits: dict[str, tuple[float, ModelFactors]] = {}
    for name, (make, grid) in SCANS.items():
        rows = fit_scan(make, [round(float(x), 3) for x in grid])
        best = min(rows, key=lambda r: r["RMS log ratio"])
        fits[name] = (best["value"], make(best["value"]))
        show = [r for r in rows if abs(r["value"] * 4 - round(r["value"] * 4)) < 1e-9 or r is best]
        print(f"\n## Scan: {name} (fit {best['value']}, RMS {best['RMS log ratio']})\n\n" + md(show))
    if "--no-tables" in argv:
        return
    rows = []
    for label, f in [("default", ModelFactors())] + [(f"{k}{x}", f) for k, (x, f) in fits.items()]:
        t6, t6x = table6_mean(f)
        t8, rho = table8_spearman(f)
        rows.append({"model": label, "RMS log ratio (20 measured)": validate(f)["rms_log_ratio"],
                     "Table 6 mean %": t6, "Table 6 Xavier rows %": t6x,
                     "Table 8 mean Eq. 11 gain %": t8, "Table 8 Spearman": rho})
        print(rows[-1], flush=True)
    print("\n## Table 6 and Table 8 under each fitted constant\n\n" + md(rows))


if __name__ == "__main__":
    main(sys.argv[1:])
