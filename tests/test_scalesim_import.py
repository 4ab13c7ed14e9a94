"""SCALE-Sim 3 topology import: depthwise ``DP`` layers, the N:M sparsity column, trailing
comment cells, and ``npusched profile TOPOLOGY.csv --compute-only`` against SCALE-Sim's own
compute reports (tests/data/scalesim/README.md says how each was made)."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from npusched.cli import app, main
from npusched.errors import ConfigError
from npusched.models.scalesim import from_scalesim

runner = CliRunner()


def _report(path: Path) -> list[int]:
    """SCALE-Sim's per-layer "Total Cycles" (compute cycles) of a COMPUTE_REPORT.csv."""
    with path.open() as f:
        return [int(r[2]) for r in list(csv.reader(f))[1:] if r]


def _compute_only(topology: Path) -> dict[str, object]:
    res = runner.invoke(app, ["profile", str(topology), "--compute-only", "--format", "json"])
    assert res.exit_code == 0, res.output
    doc: dict[str, object] = json.loads(res.stdout)
    return doc


@pytest.mark.parametrize(
    "name",
    ["depthwise_mix", "gemm_sparse", "mobilnet_paper", "resnet50"],
)
def test_compute_only_within_1pct_of_scalesim_every_layer(data_dir: Path, name: str) -> None:
    """Every layer's compute cycles within 1% of SCALE-Sim 3.0.0's on a 128x128 WS array, layer
    for layer (a depthwise row is one report row per channel), and the total is their sum."""
    doc = _compute_only(data_dir / "scalesim" / f"{name}.csv")
    ref = _report(data_dir / "scalesim" / f"{name}_ws128_COMPUTE_REPORT.csv")
    layers = doc["layers"]
    assert isinstance(layers, list) and len(layers) == len(ref)
    ours = [int(row["compute_cycles"]) for row in layers]
    worst = max(abs(o - r) / r for o, r in zip(ours, ref, strict=True))
    assert worst < 0.01, worst
    assert all(o >= r for o, r in zip(ours, ref, strict=True))  # ours is 2F + 1 cycles more
    assert doc["total_compute_cycles"] == sum(ours)


def test_depthwise_dp_layers_expand_per_channel(data_dir: Path) -> None:
    """A name with ``DP`` runs ``Channels`` one-channel layers of ``Num Filter`` filters each
    (SCALE-Sim 3's convention); ``dw`` in lower case is an ordinary layer."""
    net = from_scalesim(data_dir / "scalesim" / "depthwise_mix.csv")
    names = [ly.name for ly in net.layers]
    assert names == [
        "Conv1",
        *(f"Conv2_DPChannel_{i}" for i in range(8)),
        "Conv3_pw",
        "Conv4_dw",
        "Conv5",
    ]
    dp = net.layers[1]
    assert (dp.m, dp.k, dp.n) == (26 * 26, 3 * 3 * 1, 8)
    assert dp.attrs["depthwise_of"] == "Conv2_DP"
    assert "depthwise_of" not in net.layers[10].attrs


def test_sparsity_column_and_trailing_comments(data_dir: Path, tmp_path: Path) -> None:
    net = from_scalesim(data_dir / "scalesim" / "depthwise_mix.csv")
    assert net.layers[-1].attrs["sparsity"] == (2, 4)
    assert "sparsity" not in net.layers[0].attrs
    gemm = from_scalesim(data_dir / "scalesim" / "gemm_sparse.csv")
    assert [ly.attrs["sparsity"] for ly in gemm.layers] == [(3, 4), (1, 4)]
    assert [(ly.m, ly.k, ly.n) for ly in gemm.layers] == [(3, 16, 5), (1, 16, 5)]
    # SCALE-Sim's mobilnet_paper.csv ends its depthwise rows with a "#dw" comment cell
    p = tmp_path / "mb.csv"
    p.write_text(
        "Layer name, IFMAP Height, IFMAP Width, Filter Height, Filter Width, Channels, "
        "Num Filter, Strides,\nConv2_dw, 112, 112, 3, 3, 1, 1, 1,#dw\n"
        "Conv1,224,224,7,7,3,64,2,,,110,110,12100\n"
    )
    net = from_scalesim(p)
    assert [(ly.name, ly.m) for ly in net.layers] == [("Conv2_dw", 110 * 110), ("Conv1", 110**2)]


@pytest.mark.parametrize(
    ("cell", "message"),
    [
        ("2", "column 9 (Sparsity): SCALE-Sim 3 reads an N:M sparsity ratio here, got the number"),
        ("5:4", "column 9 (Sparsity): not an N:M ratio with 1 <= N <= M (got '5:4')"),
        ("a:4", "column 9 (Sparsity): not an N:M ratio"),
    ],
)
def test_bad_sparsity_cell_is_one_line_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], cell: str, message: str
) -> None:
    p = tmp_path / "t.csv"
    p.write_text(
        "Layer name, IFMAP Height, IFMAP Width, Filter Height, Filter Width, Channels, "
        f"Num Filter, Strides, Sparsity,\nL, 8, 8, 3, 3, 4, 4, 1, {cell},\n"
    )
    with pytest.raises(ConfigError, match="line 2: "):
        from_scalesim(p)
    assert main(["profile", str(p), "--compute-only"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("npusched: error: ") and message in err and "\n" not in err


def test_compute_only_refuses_batch_and_other_devices(
    data_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    topo = str(data_dir / "scalesim" / "gemm_sparse.csv")
    assert main(["profile", topo, "--compute-only", "--batch", "4"]) == 2
    err = capsys.readouterr().err
    assert "--compute-only" in err and "allowed: 1" in err
    assert main(["profile", topo, "--compute-only", "--device", "planaria"]) == 2
    assert "not a systolic array" in capsys.readouterr().err
    res = runner.invoke(app, ["profile", topo, "--compute-only", "--format", "csv"])
    assert res.exit_code == 0 and res.stdout.splitlines()[0] == "name,compute_cycles"
