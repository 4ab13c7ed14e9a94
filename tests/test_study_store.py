"""The one store of the reproduction studies (:func:`npusched.experiments.store.run_points`):
rows round-trip exactly, a run resumes what a lost, truncated or killed point file misses, and
a store of another configuration is refused; then, for DFS, Fluid, Planaria and HaX-CoNN, a
resumed run writes the outputs of an uninterrupted one (PREMA's are in
``test_reproduce_prema.py``)."""

from __future__ import annotations

import math
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from npusched.errors import ConfigError
from npusched.experiments.store import (
    StudyPoint,
    decode_row,
    encode_row,
    point_key,
    read_rows,
    run_points,
    write_study_point,
)

SRC = Path(__file__).resolve().parent.parent / "src"


def _outputs(d: Path) -> dict[str, bytes]:
    """Every CSV, JSON and Markdown output under ``d`` (the store's point files aside)."""
    return {
        str(f.relative_to(d)): f.read_bytes()
        for f in sorted(d.rglob("*"))
        if f.suffix in {".csv", ".json", ".md"}
    }


def _points(d: Path) -> list[Path]:
    return sorted((d / "points").glob("*.parquet"))


def _lose(d: Path, delete: int = 1, truncate: int = 1) -> dict[Path, int]:
    """Delete the first ``delete`` point files, truncate the next ``truncate`` and remove the
    outputs (so the rerun must write them again); returns the other points' mtimes."""
    pts = _points(d)
    assert len(pts) > delete + truncate
    for f in pts[:delete]:
        f.unlink()
    for f in pts[delete : delete + truncate]:
        f.write_bytes(f.read_bytes()[:40])
    for f in d.rglob("*"):
        if (f.is_file() and f.suffix in {".csv", ".md"}) or f.name == "summary.json":
            f.unlink()
    return {f: f.stat().st_mtime_ns for f in pts[delete + truncate :]}


# --- the store ----------------------------------------------------------------------------------
ROW: dict[str, Any] = {
    "i": 3,
    "big": 2**62,
    "f": 0.1 + 0.2,
    "nan": float("nan"),
    "inf": -math.inf,
    "none": None,
    "flag": True,
    "s": "a,b\n\"c\"",
    "np_f": np.float64(1 / 3),
    "np_i": np.int64(-7),
    "nested": {"a": [1, 2.5, float("nan"), math.inf, None], "b": {"c": "d"}, "e": []},
    "records": [{"id": 0, "x": 1.0}, {"id": 1, "x": 2, "y": "z"}],
    "arr": np.arange(3, dtype=float),
    "tup": (1, "two"),
}


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return (math.isnan(a) and math.isnan(b)) or (a == b and type(a) is type(b))
    if isinstance(a, dict) and isinstance(b, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and a == b


def test_rows_round_trip_exactly(tmp_path: Path) -> None:
    (tmp_path / "points").mkdir()
    write_study_point(tmp_path, "p0", ROW)
    (got,) = read_rows(tmp_path, ["p0"])
    want = {
        **ROW,
        "np_f": 1 / 3,
        "np_i": -7,
        "arr": [0.0, 1.0, 2.0],
        "tup": [1, "two"],  # JSON has no tuples
    }
    assert list(got) == list(want)
    for k in want:
        assert _same(got[k], want[k]), k
    assert type(got["i"]) is int and type(got["flag"]) is bool and got["none"] is None
    # a stored row decodes to itself again
    assert _same(decode_row(encode_row(got)), got)


def test_encode_rejects_what_json_cannot_hold() -> None:
    with pytest.raises(TypeError, match="not a JSON value"):
        encode_row({"x": [object()]})
    with pytest.raises(ValueError, match="__json__"):
        encode_row({"__json__": 1})


def _counting(calls: list[str]) -> Callable[[str], StudyPoint]:
    def point(name: str) -> StudyPoint:
        def compute() -> dict[str, Any]:
            calls.append(name)
            return {"name": name, "values": [len(name), 0.5], "x": float(len(calls))}

        return StudyPoint(point_key("t", name), compute, name)

    return point


def test_run_points_resumes_only_the_missing(tmp_path: Path) -> None:
    calls: list[str] = []
    mk = _counting(calls)
    pts = [mk(n) for n in ("a", "bb", "ccc", "dddd")]
    first = run_points(tmp_path, {"study": "t"}, pts)
    assert calls == ["a", "bb", "ccc", "dddd"]
    assert [r["name"] for r in first] == ["a", "bb", "ccc", "dddd"]
    assert first[1] == {"name": "bb", "values": [2, 0.5], "x": 2.0}
    files = _points(tmp_path)
    (tmp_path / "points" / f"{pts[1].key}.parquet").unlink()
    cut = tmp_path / "points" / f"{pts[2].key}.parquet"
    cut.write_bytes(cut.read_bytes()[:40])
    (tmp_path / "points" / f".{pts[0].key}.parquet.999999999.0123456789ab.tmp").write_bytes(b"x")
    calls.clear()
    again = run_points(tmp_path, {"study": "t"}, pts)
    assert calls == ["bb", "ccc"]
    assert again[0] == first[0] and again[3] == first[3]  # the stored rows, not recomputed
    assert not list((tmp_path / "points").glob(".*.tmp"))
    assert len(_points(tmp_path)) == len(files)


def test_run_points_refuses_another_configuration(tmp_path: Path) -> None:
    pts = [_counting([])("a")]
    run_points(tmp_path, {"study": "t", "config_hash": "1"}, pts)
    with pytest.raises(ConfigError, match=r"another configuration \(config_hash '1'; this one is '2'\)"):
        run_points(tmp_path, {"study": "t", "config_hash": "2"}, pts)
    with pytest.raises(ValueError, match="occurs twice"):
        run_points(tmp_path, {"study": "t", "config_hash": "1"}, pts * 2)


# --- the studies --------------------------------------------------------------------------------
def test_dfs_resumes_to_the_same_outputs(tmp_path: Path) -> None:
    from npusched.experiments.studies.dfs import fit as dfs_fit
    from npusched.experiments.studies.dfs.run import reproduce

    kw: dict[str, Any] = {"quick": True, "plots": False, "networks": ("squeezenet", "resnet-18")}
    out = tmp_path / "dfs"
    first = reproduce(out, **kw)
    before = _outputs(out)
    assert len(_points(out)) == 3  # the fit's residuals + one per network
    kept = _lose(out, delete=1, truncate=1)
    assert reproduce(out, **kw) == first
    assert _outputs(out) == before
    assert all(f.stat().st_mtime_ns == t for f, t in kept.items())
    # every point stored: nothing is computed, the outputs are the same (the fit's targets
    # were once filled only as a side effect of computing a residual)
    dfs_fit.TARGETS.clear()
    (out / "report.md").unlink()
    reproduce(out, **kw)
    assert _outputs(out) == before
    with pytest.raises(ConfigError, match="another configuration"):
        reproduce(out, **{**kw, "cap_w": 30.0})


@pytest.mark.slow
def test_dfs_killed_run_resumes_with_nothing_lost(tmp_path: Path) -> None:
    """``kill -9`` in the middle of ``npusched reproduce dfs --quick``, then a rerun: every
    output equals an uninterrupted run's byte for byte, and the points finished before the kill
    are not computed again."""
    killed = tmp_path / "killed"
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    cmd = [sys.executable, "-m", "npusched.cli", "reproduce", "dfs", "--quick", "-q", "--set",
           "plots=false", "--out", str(killed)]
    proc = subprocess.Popen(cmd, env=env)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        if len(_points(killed)) >= 3:
            break
        time.sleep(0.01)
    assert proc.poll() is None, "the run ended before it could be killed"
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    survived = {f: f.stat().st_mtime_ns for f in _points(killed)}
    assert 3 <= len(survived) < 9  # the fit's residuals + 8 networks
    assert not (killed / "summary.json").exists()
    subprocess.run(cmd, env=env, check=True)
    fresh = tmp_path / "fresh"
    subprocess.run([*cmd[:-1], str(fresh)], env=env, check=True)
    assert _outputs(killed) == _outputs(fresh)
    assert all(f.stat().st_mtime_ns == t for f, t in survived.items())


@pytest.mark.slow
def test_fluid_resumes_to_the_same_outputs(tmp_path: Path) -> None:
    from npusched.experiments.studies.fluid.points import ServingSetup
    from npusched.experiments.studies.fluid.run import reproduce

    kw: dict[str, Any] = {
        "quick": True,
        "pairs": [("resnet-50", "zc706")],
        "serving_setups": [ServingSetup("resnet-50", "zc706", 0.4, (10,))],
        "fig9_setups": [("resnet-50", "zc706", 10.0, (0.4,))],
        "n_samples": 60,
        "ablations": False,
    }
    out = tmp_path / "fluid"
    first = reproduce(out, **kw)
    before = _outputs(out)
    kept = _lose(out, delete=2, truncate=1)
    assert reproduce(out, **kw) == first
    assert _outputs(out) == before
    assert all(f.stat().st_mtime_ns == t for f, t in kept.items())


@pytest.mark.slow
def test_planaria_resumes_to_the_same_outputs(tmp_path: Path) -> None:
    from npusched.experiments.studies.planaria.run import reproduce
    from npusched.experiments.studies.planaria.suite import MultiTenantSetup

    st = MultiTenantSetup.of(n_requests=20, instances=2, rate_tol=0.2, throughput_instances=2)
    kw: dict[str, Any] = {
        "plots": False,
        "networks": ["tiny-yolov3"],
        "multi_tenant": True,
        "setup": st,
        "scenarios": ["A"],
        "qos_levels": ["S", "M", "H"],
    }
    out = tmp_path / "planaria"
    first = reproduce(out, **kw)
    before = _outputs(out)
    assert len(_points(out)) == 3
    kept = _lose(out, delete=1, truncate=1)
    assert reproduce(out, **kw) == first
    assert _outputs(out) == before
    assert all(f.stat().st_mtime_ns == t for f, t in kept.items())
    fig17 = (out / "fig17.csv").stat().st_mtime_ns
    with pytest.raises(ConfigError, match="another configuration"):
        reproduce(out, **{**kw, "setup": MultiTenantSetup.of(n_requests=21, instances=2)})
    assert (out / "fig17.csv").stat().st_mtime_ns == fig17  # refused before any work


def test_haxconn_resumes_to_the_same_outputs(tmp_path: Path) -> None:
    """Lost Fig. 5 points are recomputed into the same outputs (deterministic: Table 6's
    free-space search is time-limited, so a recomputed Table 6 point may differ in its
    solver-timing columns); the Gantt chart of a stored Table 6 point is drawn again."""
    from npusched.experiments.studies.haxconn.run import reproduce

    kw: dict[str, Any] = {
        "quick": True,
        "parts": ("table6", "fig5"),
        "experiments": (1,),
        "fig5_networks": ("resnet-18", "googlenet"),
    }
    out = tmp_path / "haxconn"
    reproduce(out, **kw)
    before = _outputs(out)
    fig5 = [point_key("haxconn", _hash(out), "fig5", n) for n in kw["fig5_networks"]]
    (out / "points" / f"{fig5[0]}.parquet").unlink()
    cut = out / "points" / f"{fig5[1]}.parquet"
    cut.write_bytes(cut.read_bytes()[:40])
    other = {f: f.stat().st_mtime_ns for f in _points(out) if f.stem not in fig5}
    assert len(other) == 1  # Table 6's experiment 1
    for f in out.glob("*.csv"):
        f.unlink()
    (out / "summary.json").unlink()
    reproduce(out, **kw)
    assert _outputs(out) == before
    assert all(f.stat().st_mtime_ns == t for f, t in other.items())
    (out / "gantt_exp1.png").unlink()
    reproduce(out, **kw)
    assert (out / "gantt_exp1.png").is_file()


def _hash(out: Path) -> str:
    import json

    h: str = json.loads((out / "store.json").read_text())["config_hash"]
    return h
