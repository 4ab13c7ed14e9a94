"""Timeline outputs: Chrome trace / Perfetto JSON, Gantt and latency-CDF PNGs, ``--timeline``."""

from __future__ import annotations

import json
import re
import struct
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from npusched.cli import main
from npusched.errors import ConfigError
from npusched.metrics import read_records
from npusched.policies.temporal import HPF
from npusched.report.timeline import (
    KINDS,
    TIMELINE_FILES,
    chrome_trace,
    plot_latency_cdf,
    plot_timeline,
    write_chrome_trace,
)
from npusched.sim.engine import SimResult, Simulator
from simhelpers import make_profile, req

MS = 1e-3
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"

# "a": 3 layers of 1, 2, 1 ms (the middle one has 4 tiles of 0.5 ms); "b": one 0.5 ms layer.
# 1 GB/s, so a 2,000-byte checkpoint takes 2 us to save and 2 us to restore.
A = make_profile(
    "a", [1 * MS, 2 * MS, 1 * MS], tiles=[1, 4, 1], checkpoint_bytes=[1000, 2000, 3000]
)
B = make_profile("b", [0.5 * MS], checkpoint_bytes=[500], batch_sizes=(1, 4))
PROFILES = {"a": A, "b": B}
NAME = re.compile(r"^(save: |restore: )?[\w.-]+ #\d+ \(p\d+, b\d+\)$")


def _simulate(reqs: list[Any], until: float | None = None) -> SimResult:
    sim = Simulator(PROFILES, HPF(preemptive=True, mechanism="checkpoint"), record_timeline=True)
    return sim.run(reqs, until=until)


def _mixed() -> SimResult:
    """40 requests of two networks and three priorities: several preemptions."""
    reqs = [
        req(i, i * 0.9 * MS, "ab"[i % 2], priority=[1, 3, 9][i % 3], batch=[1, 4][i % 4 // 3])
        for i in range(40)
    ]
    reqs = [r if r.network == "b" or r.batch == 1 else req(r.id, r.arrival_s, "a") for r in reqs]
    res = _simulate(reqs)
    assert res.columns["preemptions"].sum() > 0
    return res


def _load(path: Path) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return doc


def _accel(doc: dict[str, Any]) -> list[dict[str, Any]]:
    return [e for e in doc["traceEvents"] if e["ph"] == "X" and e["pid"] == 1 and e["tid"] == 1]


def _ns(us: float) -> int:
    return round(us * 1000)


def _png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == PNG_SIGNATURE and data[12:16] == b"IHDR"
    w, h = struct.unpack(">II", data[16:24])
    return int(w), int(h)


# --- Chrome trace --------------------------------------------------------------------------------
def test_golden_checkpoint_trace() -> None:
    # Job 0 is preempted at 1.2 ms by a priority-9 job: it runs to the tile boundary at 1.5 ms,
    # saves 2 us, job 1 runs 0.5 ms, job 0 restores 2 us and runs its remaining 2.5 ms.
    res = _simulate([req(0, 0.0, "a", 1), req(1, 1.2 * MS, "b", 9)])
    assert res.timeline is not None
    doc = chrome_trace(res.timeline, res.to_frame(), device="npu")
    got = [(e["name"], e["cat"], e["ts"], e["dur"]) for e in _accel(doc)]
    assert got == [
        ("a #0 (p1, b1)", "run", 0, 1500),
        ("save: a #0 (p1, b1)", "save", 1500, 2),
        ("b #1 (p9, b1)", "run", 1502, 500),
        ("restore: a #0 (p1, b1)", "restore", 2002, 2),
        ("a #0 (p1, b1)", "run", 2004, 2500),
    ]
    ev = _accel(doc)[2]
    assert ev["args"]["id"] == 1 and ev["args"]["priority"] == 9 and ev["args"]["network"] == "b"
    assert ev["args"]["ntt"] == pytest.approx(0.802 / 0.5)
    assert ev["args"]["slo_s"] is None  # NaN becomes null
    assert _accel(doc)[1]["cname"] == "terrible"
    names = {e["args"]["name"] for e in doc["traceEvents"] if e["name"] == "process_name"}
    assert names == {"accelerator: npu", "requests"}
    arrivals = [(e["ts"], e["args"]["id"]) for e in doc["traceEvents"] if e.get("cat") == "arrival"]
    assert arrivals == [(0, 0), (1200, 1)]
    counter = [(e["ts"], e["args"]["requests"]) for e in doc["traceEvents"] if e["ph"] == "C"]
    assert counter == [(0, 1), (1200, 2), (2002, 1), (4504, 0)]
    # per-request track of job 0: its lifetime with its four segments nested inside
    own = [e for e in doc["traceEvents"] if e["pid"] == 2 and e["tid"] == 1_000_000]
    own = [(e["name"], e["ts"], e["dur"]) for e in own if e["ph"] == "X"]
    assert own == [
        ("a #0 (p1, b1)", 0, 4504),
        ("run", 0, 1500),
        ("save", 1500, 2),
        ("restore", 2002, 2),
        ("run", 2004, 2500),
    ]
    assert doc["otherData"]["busy_us"] == 4504 and doc["otherData"]["n_requests"] == 2


def test_trace_invariants_roundtrip(tmp_path: Path) -> None:
    res = _mixed()
    assert res.timeline is not None
    records = res.to_frame()
    path = write_chrome_trace(res.timeline, records, tmp_path / "t.json", metadata={"seed": 7})
    doc = _load(path)
    assert doc["otherData"]["seed"] == 7 and doc["displayTimeUnit"] == "ms"
    # the streamed file holds exactly the document chrome_trace builds
    assert doc == json.loads(json.dumps(chrome_trace(res.timeline, records, metadata={"seed": 7})))
    acc = _accel(doc)
    assert len(acc) == len(res.timeline)
    # durations sum to the accelerator's busy time (each segment rounded to 1 ns)
    busy_us = sum(e["dur"] for e in acc)
    assert busy_us == pytest.approx(res.busy_s * 1e6, abs=1e-3 * len(acc))
    # no two events overlap on the accelerator track (exact, in integer nanoseconds)
    start = np.array([_ns(e["ts"]) for e in acc])
    end = start + np.array([_ns(e["dur"]) for e in acc])
    assert (np.diff(start) >= 0).all() and (end[:-1] <= start[1:]).all()
    assert all(e["dur"] >= 0 for e in acc)
    # every request executes, arrives and has its own track; names and categories as documented
    ids = set(records["id"].tolist())
    assert {e["args"]["id"] for e in acc} == ids
    assert sorted(
        e["args"]["id"] for e in doc["traceEvents"] if e.get("cat") == "arrival"
    ) == sorted(ids)
    threads = [e for e in doc["traceEvents"] if e["name"] == "thread_name" and e["pid"] == 2]
    assert len(threads) == len(ids)
    assert all(NAME.match(e["name"]) for e in acc)
    assert {e["cat"] for e in acc} <= set(KINDS)
    kinds = [s[3] for s in res.timeline]
    for k in KINDS:
        assert sum(e["cat"] == k for e in acc) == kinds.count(k)
    assert kinds.count("save") > 0 and kinds.count("restore") > 0
    # run time per request: its isolated latency (CHECKPOINT loses no work)
    run_us: dict[int, float] = {}
    for e in acc:
        if e["cat"] == "run":
            run_us[e["args"]["id"]] = run_us.get(e["args"]["id"], 0.0) + e["dur"]
    iso = dict(zip(records["id"], records["isolated_s"], strict=True))
    for i, us in run_us.items():
        assert us == pytest.approx(iso[i] * 1e6, abs=1e-2)
    # per-request tracks: segments nest inside the request's lifetime slice
    for tid in {e["tid"] for e in doc["traceEvents"] if e["pid"] == 2 and e["ph"] == "X"}:
        evs = [
            e for e in doc["traceEvents"] if e["pid"] == 2 and e["tid"] == tid and e["ph"] == "X"
        ]
        life, segs = evs[0], evs[1:]
        assert life["cat"] == "request" and segs
        assert all(
            life["ts"] <= s["ts"] and s["ts"] + s["dur"] <= life["ts"] + life["dur"] + 1e-6
            for s in segs
        )
    # the in-system counter never goes negative and ends at 0 (everything finished)
    counter = [e["args"]["requests"] for e in doc["traceEvents"] if e["ph"] == "C"]
    assert min(counter) >= 0 and counter[-1] == 0 and max(counter) <= len(ids)
    # deterministic bytes
    again = write_chrome_trace(res.timeline, records, tmp_path / "u.json", metadata={"seed": 7})
    assert path.read_bytes() == again.read_bytes()


def test_trace_unfinished_requests_and_track_limit() -> None:
    reqs = [req(0, 0.0, "a"), req(1, 0.1 * MS, "b"), req(2, 0.2 * MS, "a")]
    res = _simulate(reqs, until=2 * MS)
    assert res.timeline is not None
    records = res.to_frame()
    assert np.isnan(records["finish_s"]).sum() >= 1
    doc = chrome_trace(res.timeline, records, max_request_tracks=10)
    life = {e["args"]["id"]: e for e in doc["traceEvents"] if e.get("cat") == "request"}
    assert set(life) == {0, 1, 2}
    unfinished = records.loc[records["finish_s"].isna(), "id"].tolist()
    for i in unfinished:
        assert life[i]["args"]["finished"] is False and life[i]["args"]["finish_s"] is None
    counter = [e["args"]["requests"] for e in doc["traceEvents"] if e["ph"] == "C"]
    assert counter[-1] == len(unfinished)
    # above the limit: no per-request process, the accelerator track is unchanged
    small = chrome_trace(res.timeline, records, max_request_tracks=2)
    assert not [e for e in small["traceEvents"] if e["pid"] == 2]
    assert _accel(small) == _accel(doc)


def test_trace_rejects_bad_input() -> None:
    res = _simulate([req(0, 0.0, "b")])
    assert res.timeline is not None
    records = res.to_frame()
    with pytest.raises(ConfigError, match=r"missing column.*network"):
        chrome_trace(res.timeline, records.drop(columns=["network"]))
    with pytest.raises(ConfigError, match="job id 5"):
        chrome_trace([(5, 0.0, 1.0, "run")], records)
    with pytest.raises(ConfigError, match=r"kind 'pause'.*allowed: run, restore, save"):
        chrome_trace([(0, 0.0, 1.0, "pause")], records)
    with pytest.raises(ConfigError, match="end >= start"):
        chrome_trace([(0, 1.0, 0.5, "run")], records)
    with pytest.raises(ConfigError, match="duplicate"):
        chrome_trace(res.timeline, pd.concat([records, records]))


# --- plots ---------------------------------------------------------------------------------------
def test_plots_are_png(tmp_path: Path) -> None:
    res = _mixed()
    assert res.timeline is not None
    records = res.to_frame()
    gantt = plot_timeline(res.timeline, records, tmp_path / "g.png", title="mixed")
    w, h = _png_size(gantt)
    assert w > 800 and h > 400
    # above max_jobs the chart keeps the first requests by arrival and is shorter
    sub = plot_timeline(res.timeline, records, tmp_path / "s.png", max_jobs=8, group_by="network")
    assert _png_size(sub)[1] < h
    cdf = plot_latency_cdf(records, tmp_path / "c.png", title="mixed")
    assert _png_size(cdf)[0] > 400
    assert not list(tmp_path.glob(".*.tmp"))  # temporary files were renamed
    with pytest.raises(ConfigError, match="group_by='priority'; allowed: arrival, network"):
        plot_timeline(res.timeline, records, tmp_path / "x.png", group_by="priority")
    with pytest.raises(ConfigError, match="max_jobs=0"):
        plot_timeline(res.timeline, records, tmp_path / "x.png", max_jobs=0)
    with pytest.raises(ConfigError, match=r"missing column.*latency_s"):
        plot_latency_cdf(records.drop(columns=["latency_s"]), tmp_path / "x.png")


def test_cdf_without_finished_requests(tmp_path: Path) -> None:
    res = _simulate([req(0, 0.0, "a")], until=1 * MS)
    assert _png_size(plot_latency_cdf(res.to_frame(), tmp_path / "c.png"))[0] > 0


# --- CLI -----------------------------------------------------------------------------------------
CONFIG = """name = "tl"
seed = 0
[workload]
kind = "prema"
n_tasks = 10
models = ["alexnet", "rnn-sa", "mobilenet-v1"]
window_s = 0.005
[policy]
name = "P-HPF"
params = { mechanism = "checkpoint" }
"""


def test_cli_timeline_end_to_end(tmp_path: Path) -> None:
    cfg = tmp_path / "c.toml"
    cfg.write_text(CONFIG)
    out = tmp_path / "out"
    assert main(["run", str(cfg), "--out", str(out), "--quiet", "--timeline"]) == 0
    assert sorted(p.name for p in out.iterdir()) == sorted(
        ["records.parquet", "summary.json", *TIMELINE_FILES]
    )
    for name in ("timeline.png", "latency_cdf.png"):
        assert (out / name).read_bytes()[:8] == PNG_SIGNATURE
    doc = _load(out / "timeline.json")
    rec = read_records(out / "records.parquet")
    acc = _accel(doc)
    assert {e["args"]["id"] for e in acc} == set(rec["id"].tolist())
    # busy time = isolated work + checkpoint save/restore + work lost to KILL, from the records
    busy_s = (rec["isolated_s"] + rec["checkpoint_s"] + rec["wasted_s"]).sum()
    assert sum(e["dur"] for e in acc) == pytest.approx(busy_s * 1e6, abs=1e-3 * len(acc))
    assert any(e["cat"] == "save" for e in acc)
    assert doc["otherData"]["policy"] == "P-HPF" and doc["otherData"]["seed"] == 0
    first = (out / "timeline.json").read_bytes()

    # same config and seed: byte-identical trace
    assert main(["run", str(cfg), "--out", str(out), "--quiet", "--timeline"]) == 0
    assert (out / "timeline.json").read_bytes() == first

    # without --timeline: only records and summary; stale timeline files are removed
    assert main(["run", str(cfg), "--out", str(out), "--quiet", "--seed", "1"]) == 0
    assert sorted(p.name for p in out.iterdir()) == ["records.parquet", "summary.json"]
