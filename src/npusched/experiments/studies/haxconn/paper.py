"""HaX-CoNN (PPoPP'24): the paper's numbers as data, each with its table or figure.

Table 6 (p. 9: the experiments and their measured latencies), Table 7 (the solver's overhead),
Table 8 (p. 10: every DNN pair on AGX Orin), the DNNs of Fig. 5 and Fig. 7, and the objective
each part solves.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["FIG5_NETS", "FIG7_EXPS", "TABLE6", "TABLE7_PAPER", "TABLE8_NETS", "TABLE8_PAPER",
           "Experiment"]


#: The objective Table 6, Fig. 5 and Fig. 7 solve, named in each row (issue 22): Eq. 11, also
#: for Table 6's "Max FPS" rows, whose FPS is frames per round / makespan (see the module
#: docstring); Table 8 solves Eq. 10 (:data:`TABLE8_OBJECTIVE`).
OBJECTIVE_SOLVED = "Eq. 11 (min max latency)"


@dataclass(frozen=True)
class Experiment:
    """One Table 6 row: the design and the paper's measured latencies (ms).

    ``after`` maps a task index to its producers (Scenario 4's DNN_1 -> DNN_2).
    """

    exp: int
    goal: str
    soc: str
    scenario: int
    nets: tuple[str, ...]
    after: tuple[tuple[int, tuple[int, ...]], ...]
    paper_ms: tuple[float, float, float, float, float]  # GPU-only, GPU&DSA, Herald, H2H, HaX-CoNN
    paper_improvement_pct: float


# HaX-CoNN Table 6 (latency columns, ms; improvement = latency improvement over the best baseline)
TABLE6: tuple[Experiment, ...] = (
    Experiment(1, "Min Latency", "xavier", 2, ("vgg-19", "resnet-152"), (), (17.05, 16.05, 19.73, 16.55, 13.01), 23),
    Experiment(2, "Min Latency", "xavier", 2, ("resnet-152", "inception-v4"), (), (16.23, 15.96, 15.81, 15.75, 13.11), 20),
    Experiment(3, "Max FPS", "xavier", 3, ("alexnet", "resnet-101"), (), (11.04, 10.97, 12.10, 11.49, 8.7), 26),
    Experiment(4, "Max FPS", "xavier", 3, ("resnet-101", "googlenet"), (), (7.02, 7.37, 8.95, 9.10, 7.02), 0),
    Experiment(5, "Min Latency", "xavier", 4, ("googlenet", "resnet-152", "fcn-resnet18"), ((1, (0,)),), (15.41, 18.88, 23.68, 20.90, 12.09), 22),
    Experiment(6, "Min Latency", "orin", 2, ("vgg-19", "resnet-152"), (), (3.95, 4.58, 5.76, 4.90, 3.21), 23),
    Experiment(7, "Max FPS", "orin", 3, ("googlenet", "resnet-101"), (), (4.12, 4.24, 4.44, 4.13, 3.4), 19),
    Experiment(8, "Min Latency", "orin", 4, ("resnet-101", "googlenet", "inception-v4"), ((1, (0,)),), (5.06, 4.97, 5.56, 4.91, 4.41), 13),
    Experiment(9, "Max FPS", "snapdragon-865", 3, ("googlenet", "resnet-101"), (), (98.3, 79.1, 95.9, 113.8, 71.08), 11),
    Experiment(10, "Min Latency", "snapdragon-865", 2, ("inception-v4", "resnet-152"), (), (219.6, 178.2, 223.1, 202.3, 155.3), 15),
)

FIG5_NETS = ("googlenet", "resnet-18", "resnet-50", "resnet-101", "vgg-19")
FIG7_EXPS = (2, 5, 1)
FIG7_MARKS_S = (0.025, 0.1, 0.25, 0.5, 1.5)
TABLE8_NETS = (
    "alexnet", "densenet-121", "googlenet", "inception-resnet-v2", "inception-v4",
    "resnet-18", "resnet-50", "resnet-101", "resnet-152", "vgg-19",
)


#: Table 6's four baseline columns (Sec. 5.2: "four baselines we compare our work against").
TABLE6_BASELINES = ("GPU-only", "GPU & DSA", "Herald", "H2H")


#: Table 8's objective: its cells are throughput (FPS) gains, so Eq. 10 (issue 22).
TABLE8_OBJECTIVE = "Eq. 10 (max sum 1/T_n)"


#: Table 2's measured GoogLeNet transition costs over our generated ones (Xavier, 10 groups; the
#: mean of G->D 2.96x and D->G 1.88x), the ``transitions x2.4`` factor of :func:`gap_analysis`.
TABLE2_TRANSITION_RATIO = 2.4


#: The paper's Table 8 (AGX Orin), lower triangle in :data:`TABLE8_NETS` order: per cell the
#: best baseline the paper names and HaX-CoNN's FPS over it (x); ``None`` is the paper's "x"
#: (GPU-only is HaX-CoNN's best, no gain).
TABLE8_PAPER: tuple[tuple[tuple[str, float | None], ...], ...] = (
    (("GPU", 1.13),),
    (("GPU", 1.14), ("H2H", 1.18)),
    (("GPU", 1.06), ("D/G", 1.18), ("GPU", 1.22)),
    (("GPU", 1.08), ("GPU", None), ("D/G", 1.25), ("D/G", 1.18)),
    (("GPU", 1.10), ("GPU", 1.15), ("GPU", 1.15), ("D/G", 1.06), ("H2H", 1.05)),
    (("GPU", None), ("D/G", 1.14), ("G/D", 1.13), ("D/G", 1.32), ("GPU", 1.19), ("GPU", 1.23)),
    (("GPU", None), ("D/G", 1.21), ("H2H", 1.06), ("GPU", 1.16), ("GPU", 1.11), ("GPU", 1.06),
     ("GPU", 1.17)),
    (("GPU", 1.11), ("G/D", 1.05), ("G/D", 1.08), ("D/G", 1.19), ("GPU", 1.08), ("D/G", 1.24),
     ("GPU", 1.11), ("GPU", 1.09)),
    (("GPU", 1.09), ("G/D", 1.08), ("G/D", 1.17), ("GPU", 1.14), ("Her.", 1.07), ("D/G", 1.18),
     ("H2H", 1.09), ("GPU", 1.08), ("GPU", 1.18)),
    (("GPU", None), ("GPU", 1.11), ("GPU", 1.04), ("GPU", None), ("GPU", None), ("GPU", 1.08),
     ("GPU", None), ("GPU", None), ("GPU", None), ("GPU", None)),
)

#: Table 7: the slowdown (%) of the DNNs when the Z3 solver runs beside them on a CPU core.
TABLE7_PAPER: dict[str, float] = {
    "CaffeNet": 0.45, "DenseNet": 0.89, "GoogleNet": 1.64, "Inc-res-v2": 0.69,
    "Inception": 1.64, "MobileNet": 1.31, "ResNet18": 0.16, "ResNet52": 0.23,
    "ResNet101": 0.38, "ResNet152": 0.71, "VGG16": 1.12, "VGG19": 1.59,
}
