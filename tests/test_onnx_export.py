"""``npusched models export``: runnable ONNX graphs from the zoo IR that import back with the
same MACs and parameters, run in ONNX Runtime, and fail with one line for unexportable layers."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from npusched.cli import main
from npusched.errors import ModelError
from npusched.models.onnx_export import export_onnx, to_onnx
from npusched.models.onnx_import import from_onnx
from npusched.models.zoo import get_network

onnx = pytest.importorskip("onnx")

#: Twelve zoo CNNs; the six largest (25-100 MB of weights) only with ``-m slow``.
FAST = [
    "squeezenet",
    "squeezenet-1.1",
    "mobilenet-v1",
    "mobilenet-v2",
    "efficientnet-b0",
    "mobilenet-v3-large",
]
SLOW = ["resnet-18", "googlenet", "densenet-121", "inception-v3", "resnext-50", "resnet-50"]


def _round_trip(name: str, tmp_path: Path) -> None:
    net = get_network(name)
    path = export_onnx(net, tmp_path / f"{name}.onnx")
    back = from_onnx(path)
    assert back.macs == net.macs
    assert back.params == net.params


@pytest.mark.parametrize("name", FAST)
def test_round_trip_same_macs_and_params(name: str, tmp_path: Path) -> None:
    _round_trip(name, tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize("name", SLOW)
def test_round_trip_large(name: str, tmp_path: Path) -> None:
    _round_trip(name, tmp_path)


def test_export_runs_in_onnxruntime_and_is_seeded() -> None:
    ort = pytest.importorskip("onnxruntime")
    net = get_network("mobilenet-v2")
    a = to_onnx(net, batch=2, input_size=64, seed=3)
    b = to_onnx(net, batch=2, input_size=64, seed=3)
    assert a.SerializeToString() == b.SerializeToString()
    sess = ort.InferenceSession(a.SerializeToString(), providers=["CPUExecutionProvider"])
    x = np.random.default_rng(0).random((2, 3, 64, 64), dtype=np.float32)
    (y,) = sess.run(None, {"input": x})
    assert y.shape == (2, 1000) and np.isfinite(y).all()


def test_reduced_input_scales_macs_with_pixels(tmp_path: Path) -> None:
    net = get_network("squeezenet-1.1")
    back = from_onnx(export_onnx(net, tmp_path / "s.onnx", input_size=112))
    assert back.params == net.params
    assert 0.2 < back.macs / net.macs < 0.3  # a quarter of the pixels (border effects aside)


def test_unexportable_layer_kind_is_one_line() -> None:
    with pytest.raises(ModelError, match=r"layer 'yolo.*' of kind vector \(op 'yolo'\)"):
        to_onnx(get_network("tiny-yolov3"))


def test_cli_export(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "m.onnx"
    assert main(["models", "export", "squeezenet-1.1", "--out", str(out), "--batch", "2"]) == 0
    assert out.is_file()
    assert main(["models", "export", "gnmt", "--out", str(tmp_path / "g.onnx")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("npusched: error: gnmt: layer ")
    assert "not exportable" in err[0]
