"""HaX-CoNN: our Xavier model against the authors' MEASURED multi-DNN latencies (issue 22).

The artifact (``ismetdagli/HaX-CoNN`` at 87f5f25, ``output_expected/multi_dnn_expected.txt``)
publishes the latency measured on Xavier AGX of four DNN pairs under five methods (GPU only,
GPU & DLA, Herald, H2H, HaX-CoNN), and each method's schedule: per DNN the device it starts on
and the TensorRT layer index ``T`` from which it runs on the other device. That is 20 measured
latencies of known schedules (``data/haxconn/artifact/multi_dnn_xavier.json``, with its source
note). This module runs each of those schedules through our model and sets the prediction
beside the measurement:

* **Layer index to our layer groups (our choice).** ``T`` counts TensorRT layers (the Caffe
  parser's, ReLU/BatchNorm/Scale included); our zoo networks fuse those into the convolutions.
  The data file gives, per ``T``, how many Convolution / InnerProduct layers of the artifact's
  prototxt lie before it. The cut in our network is after the allowed transition point
  (:func:`~npusched.hardware.soc.transition_points`) whose count of CONV / FC layers is nearest
  (ties: the earlier point); :func:`cut_table` lists every cut and its miss in layers (at most 4
  convolutions, inside Inception-v4 blocks where TensorRT may cut and we do not).
* **Profiles.** Our Table 5-calibrated rooflines on Xavier at the finest grouping (every allowed
  transition point ends a group), so the cut falls on a group boundary without moving it.
* **The statistic.** The artifact synchronises the two ``trtexec`` processes at every
  iteration (a shared-memory flag), so one iteration is a round with a common release, as in
  our :func:`~npusched.policies.mapping.execute.execute`. A method's latency is the larger of
  the two DNNs' latencies, except where the data file's ``aggregate`` says the summary script
  did otherwise (GPU only in experiments 1 and 3: a sum; in experiment 1 GoogleNet's term comes
  from the GPU & DLA run). The prediction applies the same aggregation to our per-DNN latencies.

:func:`validate` gives the 20 pairs (predicted, measured, error, log ratio), the RMS of the log
ratio and, per experiment, the measured gain of HaX-CoNN over the best of the four baselines
against the predicted one. :func:`factor_table` changes one model factor at a time;
:func:`fit_scan` fits one constant to the 20 measurements.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import cache
from importlib import resources
from typing import Any

import numpy as np

from npusched.errors import ConfigError
from npusched.hardware.contention import PccsContention

__all__ = [
    "METHODS",
    "MeasuredExperiment",
    "ModelFactors",
    "apply_factors",
    "authors_baselines",
    "cut_table",
    "factor_table",
    "fit_scan",
    "load_measured",
    "measured_workload",
    "predict",
    "validate",
]

#: The five methods the artifact measures, in its summary's order, with their labels.
METHODS: dict[str, str] = {
    "gpu_only": "GPU only",
    "gpu_dla": "GPU & DLA",
    "herald": "Herald",
    "h2h": "H2H",
    "haxconn": "HaX-CoNN",
}
BASELINE_METHODS = ("gpu_only", "gpu_dla", "herald", "h2h")
DATA_FILE = "artifact/multi_dnn_xavier.json"
SOURCE = "ismetdagli/HaX-CoNN@87f5f25: output_expected/multi_dnn_expected.txt"


@dataclass(frozen=True)
class MeasuredExperiment:
    """One artifact experiment: two DNNs on Xavier, the five methods' measured latencies (ms),
    each method's schedule (per DNN ``(first device, T)``, ``T = -1``: no transition) and how the
    summary script aggregates each method's two per-DNN latencies (``op`` ``max`` or ``sum``
    over ``terms``: ``(method whose run gives the latency, DNN index)``)."""

    id: int
    dnns: tuple[str, str]
    measured_ms: Mapping[str, float]
    schedules: Mapping[str, tuple[tuple[str, int], ...]]
    aggregate: Mapping[str, tuple[str, tuple[tuple[str, int], ...]]]
    paper_improvement_pct: float

    def terms(self, method: str) -> tuple[str, tuple[tuple[str, int], ...]]:
        """``(op, terms)`` the summary script uses for ``method``'s latency."""
        return self.aggregate.get(method, ("max", ((method, 0), (method, 1))))

    def measured_gain_pct(self) -> float:
        """HaX-CoNN's measured gain over the best of the four baselines, % of HaX-CoNN's
        latency (the summary script's ``best / HaX-CoNN - 1``)."""
        best = min(self.measured_ms[m] for m in BASELINE_METHODS)
        return 100.0 * (best / self.measured_ms["haxconn"] - 1.0)


@dataclass(frozen=True)
class Measured:
    """The data file, checked: the experiments and, per artifact network, its zoo name,
    TensorRT layer count and the CONV / FC count before each cut index it uses."""

    experiments: tuple[MeasuredExperiment, ...]
    networks: Mapping[str, Mapping[str, Any]]
    source: Mapping[str, Any]


def _bad(field: str, what: str, allowed: str) -> ConfigError:
    return ConfigError(f"{DATA_FILE}: {field}: {what}; allowed: {allowed}")


def parse_measured(doc: Mapping[str, Any]) -> Measured:
    """Check the data file's document (see the module docstring); one-line errors naming the
    field."""
    if not isinstance(doc, Mapping):
        raise _bad("(top)", "not an object", "a JSON object")
    src = doc.get("_source")
    if not isinstance(src, Mapping) or not {"repository", "commit", "files"} <= set(src):
        raise _bad("_source", "missing or incomplete", "an object with repository, commit, files")
    nets = doc.get("networks")
    if not isinstance(nets, Mapping) or not nets:
        raise _bad("networks", "missing", "an object per artifact network")
    for name, n in nets.items():
        for key in ("zoo", "trt_layers", "conv_fc", "conv_fc_before"):
            if not isinstance(n, Mapping) or key not in n:
                raise _bad(f"networks.{name}.{key}", "missing", "zoo, trt_layers, conv_fc, conv_fc_before")
    exps = doc.get("experiments")
    if not isinstance(exps, list) or not exps:
        raise _bad("experiments", "missing or empty", "a list of experiments")
    out = []
    for i, e in enumerate(exps):
        where = f"experiments[{i}]"
        dnns = e.get("dnns") if isinstance(e, Mapping) else None
        if not isinstance(dnns, list) or len(dnns) != 2 or any(d not in nets for d in dnns):
            raise _bad(f"{where}.dnns", f"{dnns!r}", "two names from networks")
        ms = {}
        for m in METHODS:
            v = e.get(f"{m}_ms")
            if isinstance(v, bool) or not isinstance(v, int | float) or not (0 < v < math.inf):
                raise _bad(f"{where}.{m}_ms", f"{v!r}", "a latency in ms > 0")
            ms[m] = float(v)
        scheds: dict[str, tuple[tuple[str, int], ...]] = {}
        raw = e.get("schedules")
        for m in METHODS:
            s = raw.get(m) if isinstance(raw, Mapping) else None
            if not isinstance(s, list) or len(s) != 2:
                raise _bad(f"{where}.schedules.{m}", f"{s!r}", "two [device, T] pairs")
            row = []
            for d, (dev, t) in zip(dnns, s, strict=True):
                if dev not in ("gpu", "dla") or not isinstance(t, int):
                    raise _bad(f"{where}.schedules.{m}", f"{[dev, t]!r}", "[gpu|dla, integer T]")
                if t >= 0 and str(t) not in nets[d]["conv_fc_before"]:
                    raise _bad(f"{where}.schedules.{m}", f"T={t} of {d} not in networks.{d}.conv_fc_before",
                               "the cut indices listed there")
                row.append((str(dev), int(t)))
            scheds[m] = tuple(row)
        agg: dict[str, tuple[str, tuple[tuple[str, int], ...]]] = {}
        for m, a in (e.get("aggregate") or {}).items():
            if m not in METHODS or not isinstance(a, Mapping) or a.get("op") not in ("max", "sum"):
                raise _bad(f"{where}.aggregate.{m}", f"{a!r}", "{op: max|sum, terms: [[method, dnn]]}")
            terms = tuple((str(x), int(n)) for x, n in a["terms"])
            if any(x not in METHODS or n not in (0, 1) for x, n in terms):
                raise _bad(f"{where}.aggregate.{m}.terms", f"{a['terms']!r}", "[[method, 0|1], ...]")
            agg[m] = (str(a["op"]), terms)
        out.append(MeasuredExperiment(int(e["id"]), (str(dnns[0]), str(dnns[1])), ms, scheds, agg,
                                      float(e.get("paper_improvement_pct", math.nan))))
    return Measured(tuple(out), {k: dict(v) for k, v in nets.items()}, dict(src))


@cache
def load_measured() -> Measured:
    """The packaged ``multi_dnn_xavier.json``, checked (:func:`parse_measured`)."""
    text = resources.files("npusched.data.haxconn").joinpath(DATA_FILE).read_text(encoding="utf-8")
    return parse_measured(json.loads(text))


@dataclass(frozen=True)
class ModelFactors:
    """One model factor changed at a time (defaults: our model as Table 6 uses it).

    Attributes:
        contention: ``pccs`` (our PCCS-style model), ``none`` or ``artifact`` (the artifact's
            slowdown functions while groups overlap).
        contention_scale: every PCCS slope x this factor.
        dla_contention: the PCCS slowdown's excess (``s - 1``) of groups on the DLA x this
            factor (GPU groups unchanged): is contention device-asymmetric?
        memory: every requested memory throughput x this factor.
        transitions: every transition cost x this factor.
        gpu_time, dla_time: every group's time on that accelerator x this factor.
        second_first: in GPU only, the GPU serves DNN 2 first (our default serves DNN 1 first;
            it matters only where the summary script sums GPU only's two latencies).
    """

    contention: str = "pccs"
    contention_scale: float = 1.0
    dla_contention: float = 1.0
    memory: float = 1.0
    transitions: float = 1.0
    gpu_time: float = 1.0
    dla_time: float = 1.0
    second_first: bool = False


class _DeviceScaled(PccsContention):
    """A PCCS model whose excess slowdown on accelerators other than 0 is scaled by ``k``."""

    def __init__(self, base: PccsContention, k: float) -> None:
        super().__init__(knee=base.knee, minor_slope=base.minor_slope,
                         linear_slope=base.linear_slope, saturated_slope=base.saturated_slope)
        self.base, self.k = base, k

    def slowdown_one(self, own: float, external: float, device: int = 0) -> float:
        s = float(self.base.slowdown_one(own, external, device))
        return s if device == 0 else 1.0 + (s - 1.0) * self.k

    def slowdown(self, own: Any, external: Any, device: Any = None) -> Any:
        s = self.base.slowdown(own, external, device)
        if device is None:
            return s
        return np.where(np.asarray(device) == 0, s, 1.0 + (s - 1.0) * self.k)


def _contention_model(f: ModelFactors) -> PccsContention:
    if f.contention == "artifact":
        from npusched.hardware.artifact_contention import ArtifactContention

        return ArtifactContention("xavier")
    base = PccsContention()
    k = 0.0 if f.contention == "none" else f.contention_scale
    if f.contention not in ("pccs", "none"):
        raise ConfigError(f"contention={f.contention!r}; allowed: pccs, none, artifact")
    model = PccsContention(knee=base.knee, minor_slope=base.minor_slope * k,
                           linear_slope=base.linear_slope * k, saturated_slope=base.saturated_slope * k)
    return model if f.dla_contention == 1.0 else _DeviceScaled(model, f.dla_contention)


def apply_factors(w: Any, f: ModelFactors) -> Any:
    """Workload ``w`` (any SoC) with ``f`` applied: accelerator 0's group times x ``gpu_time``,
    the others' x ``dla_time``, memory demand x ``memory``, transitions x ``transitions`` and
    the contention model ``f`` names (how :func:`fit_scan`'s constants carry to Table 6/8)."""
    from npusched.policies.mapping.execute import Workload

    scale = np.array([f.gpu_time] + [f.dla_time] * (w.n_accelerators - 1))[None, :]
    tasks = tuple(replace(t, profile=replace(
        t.profile, time_s=t.profile.time_s * scale, mem_bps=t.profile.mem_bps * f.memory,
        out_s=t.profile.out_s * f.transitions, in_s=t.profile.in_s * f.transitions))
        for t in w.tasks)
    return Workload(w.soc, tasks, _contention_model(f))


@cache
def _profile(zoo: str, f_time: tuple[float, float], memory: float, transitions: float) -> Any:
    from npusched.hardware.soc import generate_profile, get_soc
    from npusched.models.zoo import get_network

    p = generate_profile(get_network(zoo), get_soc("xavier"), n_groups=None)
    scale = np.array(f_time)[None, :]
    return replace(p, time_s=p.time_s * scale, mem_bps=p.mem_bps * memory,
                   out_s=p.out_s * transitions, in_s=p.in_s * transitions)


def _cut_group(name: str, t: int) -> tuple[int, int, int]:
    """``(groups on the first device, CONV/FC count of our cut, the artifact's count)`` for a
    cut at TensorRT layer ``t`` of artifact network ``name`` (``t < 0``: no cut)."""
    from npusched.hardware.soc import group_layers
    from npusched.models.zoo import get_network

    info = load_measured().networks[name]
    net = get_network(str(info["zoo"]))
    bounds = group_layers(net)
    if t < 0:
        return len(bounds), -1, -1
    want = int(info["conv_fc_before"][str(t)])
    is_cf = np.cumsum([layer.kind.name in ("CONV", "FC") for layer in net.layers])
    counts = [int(is_cf[e]) for _, e in bounds[:-1]]  # count through each group's last layer
    j = int(np.argmin([abs(c - want) for c in counts]))
    return j + 1, counts[j], want


def cut_table() -> list[dict[str, Any]]:
    """Every cut the measured schedules use, mapped to our groups (see the module docstring):
    the artifact's ``T``, its CONV/FC count before ``T``, ours at the cut, and the layer we cut
    after."""
    from npusched.hardware.soc import group_layers
    from npusched.models.zoo import get_network

    m = load_measured()
    rows, seen = [], set()
    for e in m.experiments:
        for sched in e.schedules.values():
            for name, (_, t) in zip(e.dnns, sched, strict=True):
                if t < 0 or (name, t) in seen:
                    continue
                seen.add((name, t))
                g, ours, art = _cut_group(name, t)
                net = get_network(str(m.networks[name]["zoo"]))
                last = group_layers(net)[g - 1][1]
                rows.append({"network": name, "T": t, "artifact conv/fc before T": art,
                             "ours conv/fc at cut": ours, "miss": ours - art,
                             "cut after (ours)": net.layers[last].name})
    return sorted(rows, key=lambda r: (r["network"], r["T"]))


def measured_workload(e: MeasuredExperiment, method: str, factors: ModelFactors = ModelFactors()) -> tuple[Any, Any]:
    """``(Workload, Schedule)`` of ``method``'s measured schedule in experiment ``e`` on our
    Xavier model with ``factors``."""
    from npusched.hardware.soc import get_soc
    from npusched.policies.mapping.execute import Schedule, Task, Workload

    m = load_measured()
    spec = get_soc("xavier")
    tasks, rows = [], []
    for name, (dev, t) in zip(e.dnns, e.schedules[method], strict=True):
        prof = _profile(str(m.networks[name]["zoo"]), (factors.gpu_time, factors.dla_time),
                        factors.memory, factors.transitions)
        first = spec.index(dev.upper())
        k, _, _ = _cut_group(name, t)
        rows.append([first] * k + [1 - first] * (prof.n_groups - k))
        tasks.append(Task(name, prof))
    prio = {"priority": (1, 0)} if factors.second_first and method == "gpu_only" else {}
    return Workload(spec, tuple(tasks), _contention_model(factors)), Schedule.of(rows, **prio)


def predict(e: MeasuredExperiment, method: str, factors: ModelFactors = ModelFactors()) -> float:
    """Our latency (ms) of ``method`` in ``e``: the measured schedule executed under ``factors``,
    the two per-DNN latencies aggregated as the artifact's summary script does."""
    from npusched.policies.mapping.execute import execute

    op, terms = e.terms(method)
    lat: dict[str, Any] = {}
    vals = []
    for run, n in terms:
        if run not in lat:
            w, s = measured_workload(e, run, factors)
            lat[run] = execute(w, s).latency_s
        vals.append(float(lat[run][n]) * 1e3)
    return sum(vals) if op == "sum" else max(vals)


def _table6_exp(e: MeasuredExperiment) -> int | None:
    """The Table 6 row (Xavier) with the same two DNNs (the artifact numbers them otherwise)."""
    from npusched.experiments.studies.haxconn.paper import TABLE6

    nets = load_measured().networks
    zoo = {str(nets[d]["zoo"]) for d in e.dnns}
    return next((x.exp for x in TABLE6 if x.soc == "xavier" and set(x.nets) == zoo), None)


def _gain(ms: Mapping[str, float]) -> float:
    return 100.0 * (min(ms[m] for m in BASELINE_METHODS) / ms["haxconn"] - 1.0)


def validate(factors: ModelFactors = ModelFactors()) -> dict[str, Any]:
    """The 20 (experiment, method) pairs predicted against measured, under ``factors``.

    Returns ``{"pairs": [...], "experiments": [...], "rms_log_ratio", "mean_abs_error_pct",
    "gain_mean_measured_pct", "gain_mean_predicted_pct"}``; each pair row has the predicted and
    measured ms, the error (% of measured) and ``ln(predicted / measured)``; each experiment row
    the measured and predicted gain of HaX-CoNN over the best of the four baselines (% of
    HaX-CoNN's latency, the artifact's definition) and which baseline is best in each."""
    m = load_measured()
    pairs: list[dict[str, Any]] = []
    exps: list[dict[str, Any]] = []
    for e in m.experiments:
        pred = {meth: predict(e, meth, factors) for meth in METHODS}
        for meth, label in METHODS.items():
            p, y = pred[meth], e.measured_ms[meth]
            pairs.append({"exp": e.id, "dnns": " + ".join(e.dnns), "method": label,
                          "measured ms": y, "predicted ms": round(p, 3),
                          "error %": round(100 * (p / y - 1), 1),
                          "log ratio": round(math.log(p / y), 4)})
        best_m = min(BASELINE_METHODS, key=lambda x: e.measured_ms[x])
        best_p = min(BASELINE_METHODS, key=lambda x: pred[x])
        exps.append({"exp": e.id, "dnns": " + ".join(e.dnns),
                     "measured gain %": round(_gain(e.measured_ms), 1),
                     "predicted gain %": round(_gain(pred), 1),
                     "best baseline, measured": METHODS[best_m],
                     "best baseline, predicted": METHODS[best_p],
                     "Table 6 exp.": _table6_exp(e),
                     "paper gain % (the artifact's note)": e.paper_improvement_pct})
    logs = [r["log ratio"] for r in pairs]
    return {
        "pairs": pairs,
        "experiments": exps,
        "rms_log_ratio": round(math.sqrt(sum(x * x for x in logs) / len(logs)), 4),
        "mean_log_ratio": round(sum(logs) / len(logs), 4),
        "mean_abs_error_pct": round(sum(abs(r["error %"]) for r in pairs) / len(pairs), 1),
        "gain_mean_measured_pct": round(sum(r["measured gain %"] for r in exps) / len(exps), 2),
        "gain_mean_predicted_pct": round(sum(r["predicted gain %"] for r in exps) / len(exps), 2),
    }


#: The factors :func:`factor_table` changes, one at a time: (label, factors).
FACTORS: tuple[tuple[str, ModelFactors], ...] = (
    ("ours (default)", ModelFactors()),
    ("no contention", ModelFactors(contention="none")),
    ("contention slopes x2", ModelFactors(contention_scale=2.0)),
    ("contention slopes x4", ModelFactors(contention_scale=4.0)),
    ("the artifact's slowdown functions", ModelFactors(contention="artifact")),
    ("contention on DLA groups off (GPU groups as ours)", ModelFactors(dla_contention=0.0)),
    ("memory demand x0.6", ModelFactors(memory=0.6)),
    ("memory demand x1.25", ModelFactors(memory=1.25)),
    ("transition costs x0", ModelFactors(transitions=0.0)),
    ("transition costs x2.4 (Table 2 / ours)", ModelFactors(transitions=2.4)),
    ("GPU times x1.1", ModelFactors(gpu_time=1.1)),
    ("DLA times x0.9", ModelFactors(dla_time=0.9)),
    ("GPU only: DNN 2 served first", ModelFactors(second_first=True)),
)


def _by_method(v: Mapping[str, Any]) -> dict[str, float]:
    """RMS log ratio per method label."""
    out = {}
    for label in METHODS.values():
        xs = [r["log ratio"] for r in v["pairs"] if r["method"] == label]
        out[label] = round(math.sqrt(sum(x * x for x in xs) / len(xs)), 3)
    return out


def factor_table(factors: Sequence[tuple[str, ModelFactors]] = FACTORS) -> list[dict[str, Any]]:
    """One row per factor: the RMS log ratio over the 20 pairs and per method, the mean log
    ratio (bias) and the mean predicted gain against the measured one."""
    rows = []
    for label, f in factors:
        v = validate(f)
        rows.append({"model": label, "RMS log ratio": v["rms_log_ratio"],
                     "mean log ratio": v["mean_log_ratio"],
                     **{f"RMS {k}": x for k, x in _by_method(v).items()},
                     "gain mean, predicted %": v["gain_mean_predicted_pct"],
                     "gain mean, measured %": v["gain_mean_measured_pct"]})
    return rows


def fit_scan(make: Callable[[float], ModelFactors], values: Sequence[float]) -> list[dict[str, Any]]:
    """The RMS log ratio over the 20 pairs at each value of one constant (``make(value)`` gives
    the factors): the fit is the value with the smallest RMS; the scan is its sensitivity."""
    rows = []
    for x in values:
        v = validate(make(x))
        rows.append({"value": x, "RMS log ratio": v["rms_log_ratio"],
                     "mean log ratio": v["mean_log_ratio"],
                     "gain mean, predicted %": v["gain_mean_predicted_pct"]})
    return rows


#: Fitted to the 20 measured latencies (``benchmarks/haxconn_measured_fit.py``: the smallest
#: RMS of ln(predicted / measured) on a 0.025 grid). Contention slopes: 1.275 (RMS 0.1269; 1.0,
#: today's default: 0.1291; the RMS stays within 0.003 of the minimum from 1.0 to 1.5 and
#: passes 0.15 below 0.25 and above 2.5), not clearly better, so not the default. Memory demand:
#: 1.075 (RMS 0.1272; flat the same way). GPU group times: 1.125 (RMS 0.1054, 18% below today's;
#: 1.05-1.2 all below 0.115): clearly better on the measurements, but a scale on Table 5's
#: standalone GPU times that the measurements cannot tell from the cost of two processes sharing
#: the GPU, so it stays a reported fit, not the default (docs/papers/haxconn.md).
FIT_CONTENTION_SCALE = 1.275
FIT_MEMORY = 1.075
FIT_GPU_TIME = 1.125

#: The factors whose predicted gains each experiment's record quotes (label, factors).
CAUSE_FACTORS: tuple[tuple[str, ModelFactors], ...] = (
    ("no contention", ModelFactors(contention="none")),
    ("memory demand x0.6", ModelFactors(memory=0.6)),
    ("the artifact's slowdown functions", ModelFactors(contention="artifact")),
    ("contention on DLA groups off", ModelFactors(dla_contention=0.0)),
    (f"contention slopes x{FIT_CONTENTION_SCALE} (fitted)", ModelFactors(contention_scale=FIT_CONTENTION_SCALE)),
    (f"GPU times x{FIT_GPU_TIME} (fitted)", ModelFactors(gpu_time=FIT_GPU_TIME)),
    ("GPU only: DNN 2 served first", ModelFactors(second_first=True)),
)


def study() -> dict[str, Any]:
    """What the suite writes: the default model's :func:`validate`, the :func:`factor_table`,
    and per :data:`CAUSE_FACTORS` entry its RMS and its predicted gain per experiment."""
    v = validate()
    factors = {}
    for label, f in CAUSE_FACTORS:
        vf = validate(f)
        factors[label] = {"rms_log_ratio": vf["rms_log_ratio"],
                          "gains": {r["exp"]: r["predicted gain %"] for r in vf["experiments"]},
                          "gain_mean_predicted_pct": vf["gain_mean_predicted_pct"]}
    src = load_measured().source
    return {"validation": v, "factor_table": factor_table(), "factors": factors,
            "source": f"{src['repository']} @ {str(src['commit'])[:7]}: {', '.join(src['files'][:2])}"}


def authors_baselines() -> list[dict[str, Any]]:
    """Table 6's gain on the four measured pairs, baselines one way and the other (one factor):
    our HaX-CoNN optimum (Table 6's model: 10 groups, the artifact's DNN order) over the best of
    our four Table 6 baselines (:func:`~npusched.experiments.studies.haxconn.points.table6_baselines`)
    and over the best of the authors' four measured baseline *schedules* run through our model
    (GPU only as the round's makespan, not the summary script's sums). Gains in % as the
    artifact's summary script defines them (best / HaX-CoNN - 1) and as Table 6's column does
    ((best - HaX-CoNN) / best)."""
    from npusched.experiments.studies.haxconn.points import _workload, table6_baselines
    from npusched.policies.mapping.execute import execute
    from npusched.policies.mapping.haxconn import haxconn

    m = load_measured()
    rows = []
    for e in m.experiments:
        nets = tuple(str(m.networks[d]["zoo"]) for d in e.dnns)
        w = _workload("xavier", nets, 10)
        h = haxconn(w, "latency", max_transitions=1)
        hx = h.realised.makespan_s * 1e3
        ours = {k: r.realised.makespan_s * 1e3 for k, r in table6_baselines(w, h).items()}
        theirs = {METHODS[k]: execute(*measured_workload(e, k)).makespan_s * 1e3
                  for k in BASELINE_METHODS}
        bo, bt = min(ours, key=ours.__getitem__), min(theirs, key=theirs.__getitem__)
        rows.append({
            "exp": e.id, "Table 6 exp.": _table6_exp(e), "dnns": " + ".join(e.dnns),
            "HaX-CoNN ours ms": round(hx, 2),
            "best of our baselines": f"{bo} {ours[bo]:.2f}",
            "best of the authors' schedules": f"{bt} {theirs[bt]:.2f}",
            **{f"authors' {k} ms": round(v, 2) for k, v in theirs.items()},
            **{f"our {k} ms": round(v, 2) for k, v in ours.items()},
            "gain over ours, (b-h)/b %": round(100 * (ours[bo] - hx) / ours[bo], 1),
            "gain over theirs, (b-h)/b %": round(100 * (theirs[bt] - hx) / theirs[bt], 1),
            "gain over ours, b/h-1 %": round(100 * (ours[bo] / hx - 1), 1),
            "gain over theirs, b/h-1 %": round(100 * (theirs[bt] / hx - 1), 1),
            "measured gain, b/h-1 %": round(e.measured_gain_pct(), 1),
        })
    return rows
