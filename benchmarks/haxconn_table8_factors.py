"""Table 8 (HaX-CoNN, AGX Orin): one factor at a time, the Eq. 11 gain per cell and its
Spearman rank correlation with the paper's cells (issue 22, fourth round).

Factors: ours (iterations balanced by Table 5's Orin GPU times), the artifact's slowdown
functions (Xavier's; the artifact publishes none for Orin), iterations balanced by Table 5's DLA
times, no iteration balancing. Usage: ``PYTHONPATH=src python benchmarks/haxconn_table8_factors.py``
(about 1 CPU minute).
"""

from __future__ import annotations

from collections.abc import Callable

from npusched.experiments.studies.haxconn.paper import TABLE8_NETS, TABLE8_PAPER
from npusched.experiments.studies.haxconn.points import _gain, _workload
from npusched.experiments.studies.haxconn.report import _spearman
from npusched.hardware.artifact_contention import ArtifactContention
from npusched.hardware.soc import table5_times
from npusched.policies.mapping.haxconn import haxconn
from npusched.policies.mapping.model import Workload


def gain(w: Workload) -> float:
    """HaX-CoNN's Eq. 11 gain over the best baseline, % (0 when GPU-only is its optimum)."""
    h = haxconn(w, "latency", max_transitions=1)
    _, r, gpu_only = _gain(h, "latency")
    return 0.0 if gpu_only or r <= 1 + 1e-9 else 100 * (r - 1)


def main() -> None:
    t5 = table5_times()

    def reps(a: str, b: str, key: str) -> tuple[int, int]:
        ta, tb = t5[a][key], t5[b][key]
        return (1, max(1, round(ta / tb))) if ta >= tb else (max(1, round(tb / ta)), 1)

    factors: dict[str, Callable[[str, str], Workload]] = {
        "ours": lambda a, b: _workload("orin", (a, b), 5, repeats=reps(a, b, "orin_gpu")),
        "artifact slowdown functions": lambda a, b: (lambda w: Workload(
            w.soc, w.tasks, ArtifactContention("orin")))(
            _workload("orin", (a, b), 5, repeats=reps(a, b, "orin_gpu"))),
        "iterations by DLA time": lambda a, b: _workload(
            "orin", (a, b), 5, repeats=reps(a, b, "orin_dla")),
        "no iteration balancing": lambda a, b: _workload("orin", (a, b), 5, repeats=(1, 1)),
    }
    paper: list[float] = []
    gains: dict[str, list[float]] = {k: [] for k in factors}
    for i, a in enumerate(TABLE8_NETS):
        for j, b in enumerate(TABLE8_NETS[: i + 1]):
            p = TABLE8_PAPER[i][j][1]
            paper.append(0.0 if p is None else 100 * (p - 1))
            for k, make in factors.items():
                gains[k].append(gain(make(a, b)))
    print("| Table 8 with | mean gain % | cells improved | Spearman |")
    print("|---|---:|---:|---:|")
    for k, v in gains.items():
        rho = _spearman(paper, v)
        print(f"| {k} | {sum(v) / len(v):.2f} | {sum(1 for x in v if x > 0)} of {len(v)} | "
              f"{'undefined (all 0)' if rho is None else f'{rho:.2f}'} |")


if __name__ == "__main__":
    main()
