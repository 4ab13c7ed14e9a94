"""``npusched reproduce prema`` end to end on a tiny configuration, and resuming a killed run."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from npusched.experiments.studies.prema.points import (
    MAIN_COLUMNS,
    PolicySpec,
    PremaSetup,
    policy_specs,
)
from npusched.experiments.studies.prema.run import reproduce

#: A small but complete setup: two CNNs and a recurrent network, one batch size, 4 tasks.
TINY = PremaSetup.of(networks=("googlenet", "alexnet", "rnn-sa"), n_tasks=4, batch_sizes=(1,))
TINY_SPECS = [
    s
    for s in policy_specs()
    if s.label
    in {
        "NP-FCFS",
        "NP-SJF",
        "NP-PREMA",
        "P-HPF",
        "P-HPF-dynamic",
        "P-PREMA",
        "P-PREMA-dynamic",
        "P-PREMA-kill",
        "P-PREMA-dynamic-oracle",
    }
]


def test_policy_specs_cover_the_study() -> None:
    labels = [s.label for s in policy_specs()]
    assert len(labels) == len(set(labels))
    for lb in ("NP-FCFS", "NP-RRB", "NP-HPF", "NP-TOKEN", "NP-SJF", "NP-PREMA"):
        assert lb in labels
    for f in ("RRB", "HPF", "TOKEN", "SJF", "PREMA"):
        for suf in ("", "-dynamic", "-kill", "-dynamic-kill"):
            assert (f"P-{f}{suf}" in labels) != (f == "RRB" and suf == "-kill")
    for spec in policy_specs():  # every spec builds a policy with the right preemptiveness
        pol = spec.build()
        assert pol.preemptive == spec.label.startswith("P-")


def test_hash_covers_every_setup_field() -> None:
    """Every field of the setup changes the hash (stale points are never reused); equal setups
    hash alike. That the run count is not hashed is checked by the resume test."""
    assert TINY.config_hash() == PremaSetup(**TINY.model_dump()).config_hash()
    changed = {
        "networks": ("alexnet", "rnn-sa"),
        "device": "prema-npu-dfs",
        "n_tasks": 5,
        "batch_sizes": (4,),
        "load": 3.0,
        "seed": 1,
        "preemption_point": "layer",
        "job_range_s": (0.5e-3, 45e-3),
    }
    assert set(changed) == set(PremaSetup.model_fields)  # a new field needs a case
    hashes = {k: TINY.replace(**{k: v}).config_hash() for k, v in changed.items()}
    assert TINY.config_hash() not in hashes.values()
    assert len(set(hashes.values())) == len(changed)


def test_reproduce_tiny_end_to_end(tmp_path: Path) -> None:
    out = tmp_path / "prema"
    summary = reproduce(out, runs=2, setup=TINY, specs=TINY_SPECS)
    for name in (
        "summary.json",
        "report.md",
        "policies.csv",
        "fig11_nonpreemptive.png",
        "fig12_preemptive.png",
        "fig13_sla.png",
        "fig14_tail_high_priority.png",
        "fig15_checkpoint_vs_kill.png",
        "fig5a_preemption_latency.png",
        "fig6b_ntt.png",
        "predictor.csv",
    ):
        assert (out / name).stat().st_size > 0, name
    on_disk = json.loads((out / "summary.json").read_text())
    assert on_disk["runs"] == 2
    pol = on_disk["policies"]
    for lb in ("NP-FCFS", "P-PREMA-dynamic", "NP-SJF"):
        for key in ("antt", "stp", "fairness", "sla_violation_rate_n4", "p95_high_priority_norm"):
            assert key in pol[lb]
    assert pol["NP-FCFS"]["antt_improvement"] == pytest.approx(1.0)
    assert pol["NP-FCFS"]["antt"] >= 1.0
    assert 0 < pol["P-PREMA-dynamic"]["fairness"] <= 1.0
    assert on_disk["predictor_mape_percent"] == summary["predictor_mape_percent"]
    assert on_disk["predictor_mape_percent"] >= 0.0
    main = pd.read_csv(out / "main_points.csv")
    assert len(main) == 2 * len(TINY_SPECS)  # 1 batch size x 2 runs per policy
    assert list(main.columns) == MAIN_COLUMNS
    mech = pd.read_csv(out / "mech_points.csv")
    assert len(mech) == 2 * 3  # 2 runs x (3 DNNs x 1 batch size)
    # the paper's mechanism facts that hold by construction
    assert (mech["kill_preempt_s"] == 0).all() and (mech["drain_preempt_s"] == 0).all()
    assert (mech["checkpoint_preempt_s"] >= 0).all()
    assert (mech["drain_wait_s"] >= mech["kill_wait_s"] - 1e-12).all()
    report = (out / "report.md").read_text()
    assert "ours vs. the paper" in report and "7.8" in report


def _outputs(d: Path) -> dict[str, bytes]:
    """Every CSV, JSON and Markdown output under ``d`` (the store's point files aside)."""
    return {
        str(f.relative_to(d)): f.read_bytes()
        for f in sorted(d.rglob("*"))
        if f.suffix in {".csv", ".json", ".md"}
    }


def test_resume_after_partial_run(tmp_path: Path) -> None:
    """A run that lost points (never finished, a half-written file, a killed writer's temporary
    file) resumes into outputs byte-identical to an uninterrupted run's, redoing only those."""
    out = tmp_path / "prema"
    specs = TINY_SPECS[:3]
    full = reproduce(out, runs=2, setup=TINY, specs=specs, plots=False, paper_range=False)
    before = _outputs(out)
    points = sorted((out / "points").glob("*.parquet"))
    assert len(points) == 2 * len(specs) + 2 * 3  # main points + Fig. 5/6 samples
    lost, cut = points[:2], points[2]
    for f in lost:
        f.unlink()
    cut.write_bytes(cut.read_bytes()[:40])  # truncated (a disk filled up)
    (out / "points" / f".{points[3].name}.999999999.0123456789ab.tmp").write_bytes(b"x")
    kept = {f: f.stat().st_mtime_ns for f in points[3:]}
    again = reproduce(out, runs=2, setup=TINY, specs=specs, plots=False, paper_range=False)
    assert again["policies"] == full["policies"]  # recomputed points are bit-identical
    assert _outputs(out) == before
    assert all(f.stat().st_mtime_ns == t for f, t in kept.items())  # nothing else redone
    assert not list((out / "points").glob(".*.tmp"))
    # more runs extend the earlier ones instead of starting again
    more = reproduce(out, runs=3, setup=TINY, specs=specs, plots=False, paper_range=False)
    assert more["runs"] == 3 and more["config_hash"] == full["config_hash"]
    assert len(pd.read_csv(out / "main_points.csv")) == 3 * len(specs)
    assert all(f.stat().st_mtime_ns == t for f, t in kept.items())


def test_killed_run_resumes_with_nothing_lost(tmp_path: Path) -> None:
    """``kill -9`` in the middle of a run, then a rerun: every output equals an uninterrupted
    run's byte for byte, and the points finished before the kill are not computed again."""
    import os
    import signal
    import subprocess
    import sys
    import time

    specs = [s.label for s in TINY_SPECS]
    code = (
        "import sys\n"
        "from npusched.experiments.studies.prema.points import PremaSetup, policy_specs\n"
        "from npusched.experiments.studies.prema.run import reproduce\n"
        f"setup = PremaSetup.of(networks={TINY.networks!r}, n_tasks=4, batch_sizes=(1,))\n"
        f"specs = [s for s in policy_specs() if s.label in {set(specs)!r}]\n"
        "reproduce(sys.argv[1], runs=2, setup=setup, specs=specs, plots=False,"
        " paper_range=False)\n"
    )
    killed = tmp_path / "killed"
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent / "src")}
    proc = subprocess.Popen([sys.executable, "-c", code, str(killed)], env=env)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        if len(list((killed / "points").glob("*.parquet"))) >= 8:
            break
        time.sleep(0.02)
    assert proc.poll() is None, "the run ended before it could be killed"
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    survived = {f: f.stat().st_mtime_ns for f in (killed / "points").glob("*.parquet")}
    assert 8 <= len(survived) < 2 * len(specs) + 2 * 3
    assert not (killed / "summary.json").exists()
    reproduce(killed, runs=2, setup=TINY, specs=TINY_SPECS, plots=False, paper_range=False)
    fresh = tmp_path / "fresh"
    reproduce(fresh, runs=2, setup=TINY, specs=TINY_SPECS, plots=False, paper_range=False)
    assert _outputs(killed) == _outputs(fresh)
    assert all(f.stat().st_mtime_ns == t for f, t in survived.items())


def test_needs_the_baseline(tmp_path: Path) -> None:
    from npusched.errors import ConfigError

    with pytest.raises(ConfigError, match="NP-FCFS"):
        reproduce(tmp_path, runs=1, setup=TINY, specs=[PolicySpec("NP-SJF", "NP-SJF")])
    with pytest.raises(ConfigError, match="runs"):
        reproduce(tmp_path, runs=0, setup=TINY)


@pytest.mark.slow
def test_reproduce_quick_cli(tmp_path: Path) -> None:
    from npusched.cli import main

    assert main(["reproduce", "prema", "--quick", "--out", str(tmp_path / "q")]) == 0

    summary = json.loads((tmp_path / "q" / "summary.json").read_text())
    assert summary["runs"] == 8  # stratified: 8 workloads per batch size (the [quick] runs)
    assert "P-PREMA-dynamic" in summary["policies"]


def test_keywords_are_the_suite_files_keys(tmp_path: Path) -> None:
    """``reproduce``'s parameters are the suite file's keys, checked by its schema before any
    work: a bad value is one line naming the keyword, an unknown one lists the keys."""
    from npusched.errors import ConfigError

    with pytest.raises(ConfigError, match=r"^reproduce: --runs: input should be greater than 0"):
        reproduce(tmp_path / "a", runs=0)
    with pytest.raises(ConfigError, match=r"--bogus: unknown key; allowed: suite, .*sweep_loads"):
        reproduce(tmp_path / "a", bogus=1)
    assert not (tmp_path / "a").exists()
