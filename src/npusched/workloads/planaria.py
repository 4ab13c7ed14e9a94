"""Planaria's multi-tenant workload scenarios (MICRO 2020, Sec. VI-A and Table I).

Workloads (Table I; zoo names):

* **A** (heavier): ResNet-50, GoogLeNet, YOLOv3, SSD-ResNet34, GNMT.
* **B** (lighter): EfficientNet-B0, MobileNet-v1, SSD-MobileNet, Tiny YOLO.
* **C** (mixed): all nine.

"Tiny YOLO (2017)" is taken as the zoo's ``tiny-yolov3`` (the only Tiny YOLO in the zoo).

Requests arrive as a Poisson process - exponential gaps of mean ``1/rate`` seconds, drawn from
a seeded local generator by :func:`~npusched.workloads.generators.poisson_workload` - or, with
``arrivals="artifact"`` (the Planaria suite's default), as the authors' artifact draws them
(he-actlab/planaria.code, ``scheduler/generator.py``: each gap a Poisson-distributed whole
number of milliseconds, so a gap of 0 is common at high rates and the gaps are nearly regular
at low ones: variance = mean in ms). Each request picks a network uniformly from the scenario
and gets a priority uniform over 1..11 (Sec. VI-A, after [67]; the artifact draws 1..12).

QoS (Sec. VI-A: "QoS constraints presented by MLPerf for the server scenarios")
------------------------------------------------------------------------------
Base latency bounds are MLPerf Inference v0.5's server-scenario constraints (Reddi et al.,
"MLPerf Inference Benchmark", ISCA 2020, the server-scenario latency constraints): ResNet-50 15 ms, MobileNet-v1 10 ms,
SSD-MobileNet-v1 10 ms, SSD-ResNet34 100 ms, GNMT 250 ms. The other four networks are not
MLPerf benchmarks; each takes the bound of its MLPerf counterpart of the same task and weight
class, as the authors' artifact does for two of them (``scheduler/scheduler.ini``: GoogLeNet
15 ms, YOLOv3 100 ms): GoogLeNet 15 ms and EfficientNet-B0 10 ms (classification, heavy/light),
YOLOv3 100 ms and Tiny YOLO 10 ms (detection, heavy/light). QoS-S, QoS-M and QoS-H scale them
by 1, 1/4 and 1/16.

Benchmarks
----------
``benchmarks="full-size"`` (the default here) draws the zoo's full-size networks above;
``benchmarks="artifact"`` (the Planaria suite's default) draws the authors' own benchmark
definitions, ``planaria/<name>`` (:mod:`npusched.models.zoo.planaria`, from
he-actlab/planaria.code), with the same QoS bounds: Tiny YOLO is then the artifact's
``planaria/tiny-yolov2`` and EfficientNet-B0 (not in the artifact) stays the zoo's.

SLA (Sec. VI-A, after MLPerf): a run meets it when at least 99% of vision requests and 97% of
translation (GNMT) requests finish within their QoS bound (:data:`SLA_FRACTION`).
"""

from __future__ import annotations

from collections.abc import Mapping

from npusched.errors import ConfigError
from npusched.workloads.generators import ARRIVALS, RandomState, poisson_workload
from npusched.workloads.request import Request

__all__ = [
    "ARRIVALS",
    "ARTIFACT_BENCHMARKS",
    "BASE_QOS_S",
    "BENCHMARK_SETS",
    "QOS_LEVELS",
    "SLA_FRACTION",
    "WORKLOADS",
    "planaria_workload",
    "qos_table",
    "scenario_networks",
    "sla_fraction",
]

#: Table I scenarios: the networks requests are drawn from (zoo names).
WORKLOADS: dict[str, tuple[str, ...]] = {
    "A": ("resnet-50", "googlenet", "yolov3", "ssd-resnet34", "gnmt"),
    "B": ("efficientnet-b0", "mobilenet-v1", "ssd-mobilenet-v1", "tiny-yolov3"),
    "C": (
        "resnet-50",
        "googlenet",
        "yolov3",
        "ssd-resnet34",
        "gnmt",
        "efficientnet-b0",
        "mobilenet-v1",
        "ssd-mobilenet-v1",
        "tiny-yolov3",
    ),
}

#: QoS-S latency bounds in seconds (MLPerf Inference v0.5 server scenario; see module docstring).
BASE_QOS_S: dict[str, float] = {
    "resnet-50": 15e-3,
    "googlenet": 15e-3,
    "yolov3": 100e-3,
    "ssd-resnet34": 100e-3,
    "gnmt": 250e-3,
    "efficientnet-b0": 10e-3,
    "mobilenet-v1": 10e-3,
    "ssd-mobilenet-v1": 10e-3,
    "tiny-yolov3": 10e-3,
}

#: Full-size zoo name -> the authors' benchmark of the same DNN (he-actlab/planaria.code).
ARTIFACT_BENCHMARKS: dict[str, str] = {
    "resnet-50": "planaria/resnet-50",
    "googlenet": "planaria/googlenet",
    "yolov3": "planaria/yolov3",
    "ssd-resnet34": "planaria/ssd-resnet34",
    "gnmt": "planaria/gnmt",
    "mobilenet-v1": "planaria/mobilenet-v1",
    "ssd-mobilenet-v1": "planaria/ssd-mobilenet-v1",
    "tiny-yolov3": "planaria/tiny-yolov2",
}
BASE_QOS_S.update({a: BASE_QOS_S[f] for f, a in ARTIFACT_BENCHMARKS.items()})

#: The network sets a scenario can draw from (see the module docstring).
BENCHMARK_SETS = ("artifact", "full-size")

#: QoS level -> factor on the base bound (Sec. VI-A: 1x, 1/4x, 1/16x).
QOS_LEVELS: dict[str, float] = {"S": 1.0, "M": 1.0 / 4.0, "H": 1.0 / 16.0}

#: Fraction of a network's requests that must meet QoS for the SLA (MLPerf: 99% vision, 97%
#: translation); ``"*"`` is every other network. The form :func:`npusched.metrics.sla_met`
#: and :func:`npusched.metrics.throughput_at_sla` take as ``target``.
SLA_FRACTION: dict[str, float] = {"gnmt": 0.97, "planaria/gnmt": 0.97, "*": 0.99}

#: Planaria's priority range (inclusive).
PRIORITIES = (1, 11)


def sla_fraction(network: str) -> float:
    """The fraction of ``network``'s requests that must meet QoS (0.97 GNMT, 0.99 vision)."""
    return SLA_FRACTION.get(network, SLA_FRACTION["*"])


def _check(scenario: str, qos: str) -> tuple[str, str]:
    s, q = str(scenario).upper(), str(qos).upper()
    if s not in WORKLOADS:
        raise ConfigError(f"workload scenario {scenario!r}; allowed: {', '.join(WORKLOADS)}")
    if q not in QOS_LEVELS:
        raise ConfigError(f"QoS level {qos!r}; allowed: {', '.join(QOS_LEVELS)}")
    return s, q


def scenario_networks(scenario: str, benchmarks: str = "full-size") -> tuple[str, ...]:
    """The zoo names of ``scenario``'s networks in the benchmark set ``benchmarks``."""
    s, _ = _check(scenario, "S")
    if benchmarks not in BENCHMARK_SETS:
        raise ConfigError(f"benchmarks {benchmarks!r}; allowed: {', '.join(BENCHMARK_SETS)}")
    if benchmarks == "full-size":
        return WORKLOADS[s]
    return tuple(ARTIFACT_BENCHMARKS.get(n, n) for n in WORKLOADS[s])


def qos_table(scenario: str, qos: str, benchmarks: str = "full-size") -> dict[str, float]:
    """QoS bound in seconds per network of ``scenario`` (A/B/C) at level ``qos`` (S/M/H)."""
    s, q = _check(scenario, qos)
    return {m: BASE_QOS_S[m] * QOS_LEVELS[q] for m in scenario_networks(s, benchmarks)}


def planaria_workload(
    scenario: str,
    qos: str,
    rate_per_s: float,
    *,
    n_requests: int | None = None,
    duration_s: float | None = None,
    weights: Mapping[str, float] | None = None,
    random_state: RandomState = None,
    benchmarks: str = "full-size",
    arrivals: str = "exponential",
) -> list[Request]:
    """One multi-tenant workload instance of Table I's ``scenario`` at QoS level ``qos``.

    Args:
        scenario: ``"A"``, ``"B"`` or ``"C"``.
        qos: ``"S"``, ``"M"`` or ``"H"``.
        rate_per_s: Poisson arrival rate lambda, requests per second.
        n_requests: number of requests (give this or ``duration_s``).
        duration_s: arrival window in seconds.
        weights: optional network mix (uniform by default).
        random_state: seed or generator; the same seed gives the same workload.
        benchmarks: ``"full-size"`` (zoo networks) or ``"artifact"`` (``planaria/<name>``).
        arrivals: ``"exponential"`` (a Poisson process: exponential gaps of mean ``1 /
            rate_per_s`` seconds) or ``"artifact"`` (the authors' generator,
            he-actlab/planaria.code ``scheduler/generator.py``: the first request at 0, each
            next one a Poisson-distributed *whole number of milliseconds* after the previous,
            of mean ``1000 / rate_per_s`` ms, so requests that draw a gap of 0 arrive
            together). Both draw the networks and priorities alike; the artifact's gaps come
            from the same generator after them
            (:func:`~npusched.workloads.generators.poisson_workload`).

    Returns:
        Requests sorted by arrival, each with its network, priority (1..11) and ``slo_s``.
    """
    s, q = _check(scenario, qos)
    return poisson_workload(
        rate_per_s,
        models=list(scenario_networks(s, benchmarks)),
        n_requests=n_requests,
        duration_s=duration_s,
        weights=weights,
        priorities=PRIORITIES,
        qos=qos_table(s, q, benchmarks),
        random_state=random_state,
        arrivals=arrivals,
    )
