"""HaX-CoNN: our Xavier model against the artifact's measured multi-DNN latencies (issue 22)."""

from __future__ import annotations

import copy
import json
from importlib import resources

import pytest

from npusched.errors import ConfigError
from npusched.experiments.reproduce._fidelity import needs_cause
from npusched.experiments.studies.haxconn.measured import (
    FIT_CONTENTION_SCALE,
    FIT_GPU_TIME,
    FIT_MEMORY,
    METHODS,
    ModelFactors,
    cut_table,
    fit_scan,
    load_measured,
    measured_workload,
    parse_measured,
    predict,
    study,
    validate,
)
from npusched.experiments.studies.haxconn.report import measured_records

FIELDS = ("id", "figure", "label", "paper", "ours", "ratio", "direction", "cause", "spread")


def _doc() -> dict:
    text = resources.files("npusched.data.haxconn").joinpath(
        "artifact/multi_dnn_xavier.json").read_text(encoding="utf-8")
    return json.loads(text)


def test_loader_shape_and_source() -> None:
    m = load_measured()
    assert m.source["repository"].endswith("ismetdagli/HaX-CoNN")
    assert m.source["commit"].startswith("87f5f25")
    assert "output_expected/multi_dnn_expected.txt" in m.source["files"]
    assert [e.id for e in m.experiments] == [1, 2, 3, 4]
    e1, e2, e3, e4 = m.experiments
    assert e1.dnns == ("googlenet", "resnet101") and e4.dnns == ("vgg19", "resnet152")
    # the summary file's numbers (multi_dnn_expected.txt)
    assert dict(e2.measured_ms) == {"gpu_only": 18.1, "gpu_dla": 16.7, "herald": 16.9,
                                   "h2h": 17.1, "haxconn": 14.4}
    assert e1.schedules["haxconn"] == (("gpu", 80), ("dla", 3))
    assert e2.schedules["gpu_dla"] == (("dla", -1), ("gpu", -1))
    assert all(set(e.schedules) == set(METHODS) for e in m.experiments)
    # GPU only is summed in exps 1 and 3 (exp. 1 takes GoogleNet from the GPU & DLA run)
    assert e1.terms("gpu_only") == ("sum", (("gpu_dla", 0), ("gpu_only", 1)))
    assert e3.terms("gpu_only") == ("sum", (("gpu_only", 0), ("gpu_only", 1)))
    assert e4.terms("gpu_only") == ("max", (("gpu_only", 0), ("gpu_only", 1)))
    # TensorRT layer counts: GoogleNet's agrees with the artifact's per-group profile
    prof = json.loads(resources.files("npusched.data.haxconn").joinpath(
        "artifact/googlenet_xavier_profile.json").read_text(encoding="utf-8"))
    assert m.networks["googlenet"]["trt_layers"] == prof["last_layer"][-1] + 1 == 141
    assert round(e3.measured_gain_pct(), 1) == 23.8  # 10.4 / 8.4 - 1


@pytest.mark.parametrize(("path", "value", "field"), [
    (("experiments", 0, "haxconn_ms"), -1.0, "experiments[0].haxconn_ms"),
    (("experiments", 1, "schedules", "herald", 0), ["cpu", 3], "experiments[1].schedules.herald"),
    (("experiments", 0, "schedules", "h2h", 0), ["gpu", 53], "experiments[0].schedules.h2h"),
    (("experiments", 2, "dnns"), ["alexnet"], "experiments[2].dnns"),
    (("_source",), {}, "_source"),
])
def test_loader_bad_input_one_line(path: tuple, value: object, field: str) -> None:
    doc = copy.deepcopy(_doc())
    node = doc
    for k in path[:-1]:
        node = node[k]
    node[path[-1]] = value
    with pytest.raises(ConfigError) as err:
        parse_measured(doc)
    msg = str(err.value)
    assert "\n" not in msg and f"multi_dnn_xavier.json: {field}:" in msg and "allowed:" in msg


def test_cuts_map_by_conv_count() -> None:
    rows = cut_table()
    assert len(rows) == 21
    assert max(abs(r["miss"]) for r in rows) <= 4  # inside Inception-v4 blocks
    assert all(r["miss"] == 0 for r in rows if r["network"] in ("googlenet", "alexnet", "vgg19"))
    g80 = next(r for r in rows if r["network"] == "googlenet" and r["T"] == 80)
    assert g80["cut after (ours)"] == "inception_4c_concat"


def test_hand_checked_predictions() -> None:
    """Without contention a schedule's latency is Table 5's standalone times (ms)."""
    m = load_measured()
    e1, e2, e3, e4 = m.experiments
    free = ModelFactors(contention="none")
    assert predict(e2, "gpu_only", free) == pytest.approx(8.31 + 7.7)  # nothing on the DLA
    assert predict(e4, "gpu_dla", free) == pytest.approx(19.05)  # VGG-19 on the DLA
    # exp. 3 sums GPU only's two latencies: AlexNet first, then ResNet-101 behind it
    assert predict(e3, "gpu_only", free) == pytest.approx(2.26 + (2.26 + 5.34))
    assert predict(e3, "gpu_only", ModelFactors(contention="none", second_first=True)) == \
        pytest.approx(5.34 + (5.34 + 2.26))
    # exp. 1: GoogLeNet from the GPU & DLA run (alone on the GPU) + ResNet-101 behind it
    assert predict(e1, "gpu_only", free) == pytest.approx(1.98 + (1.98 + 5.34))
    # contention only lengthens; the schedule's devices follow the data
    _, s = measured_workload(e1, "haxconn")
    assert s.transitions() == (1, 1) and s.assignment[0][0] == 0 and s.assignment[1][0] == 1
    for meth in METHODS:
        assert predict(e4, meth) >= predict(e4, meth, free) - 1e-9


def test_validation_golden() -> None:
    v = validate()
    assert len(v["pairs"]) == 20 and len(v["experiments"]) == 4
    assert v["rms_log_ratio"] == pytest.approx(0.1291, abs=1e-4)
    assert v["gain_mean_measured_pct"] == pytest.approx(14.57, abs=0.01)
    assert v["gain_mean_predicted_pct"] == pytest.approx(13.15, abs=0.01)
    (p,) = [r for r in v["pairs"] if r["exp"] == 4 and r["method"] == "GPU & DLA"]
    assert p["measured ms"] == 19.8 and p["predicted ms"] == pytest.approx(19.628, abs=1e-3)


def test_fitted_constants_are_local_minima() -> None:
    for make, x in ((lambda k: ModelFactors(contention_scale=k), FIT_CONTENTION_SCALE),
                    (lambda k: ModelFactors(memory=k), FIT_MEMORY),
                    (lambda k: ModelFactors(gpu_time=k), FIT_GPU_TIME)):
        lo, mid, hi = (r["RMS log ratio"] for r in fit_scan(make, (x - 0.025, x, x + 0.025)))
        assert mid <= lo and mid <= hi
    assert validate(ModelFactors(gpu_time=FIT_GPU_TIME))["rms_log_ratio"] < 0.11


def test_measured_records_shape() -> None:
    recs = measured_records(study())
    assert len(recs) == 20 + 4 + 2
    assert len({r["id"] for r in recs}) == len(recs)
    m = load_measured()
    for r in recs:
        assert tuple(r) == FIELDS and r["figure"].startswith("artifact: ")
        assert "synthetic" in r["label"]
        if needs_cause(r, "value" if r["id"].endswith("_ms") else "change"):
            assert r["cause"], r["id"]
    (hx,) = [r for r in recs if r["id"] == "measured/exp2/haxconn/latency_ms"]
    assert hx["paper"] == m.experiments[1].measured_ms["haxconn"] == 14.4
    (g,) = [r for r in recs if r["id"] == "measured/exp2/gain_pct"]
    assert g["direction"] == "opposite" and "no contention" in g["cause"]
