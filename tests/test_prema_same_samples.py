"""The PREMA suite's two routes draw the same samples (issue 29): ``npusched reproduce prema``
and the suite as a sweep (``npusched sweep prema.toml``), run on one small grid, give the same
result for every (policy, batch size, run) point, request by request."""

from __future__ import annotations

import tomllib
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from npusched.experiments.reproduce.suites import run_suite_model
from npusched.experiments.store import run_sweep
from npusched.experiments.suite_files import packaged_suite, parse_suite, suite_sweep_data
from npusched.experiments.sweep import parse_experiment

LABELS = ("NP-FCFS", "NP-SJF-oracle", "P-PREMA-dynamic", "P-HPF-kill")


def _suite(seed: int) -> object:
    data = tomllib.loads(packaged_suite("prema").read_text())
    data.pop("quick")
    data.update(
        networks=["alexnet", "googlenet", "rnn-sa"],
        n_tasks=4,
        batch_sizes=[1, 4],
        runs=2,
        seed=seed,
        plots=False,
        paper_range=False,
        paper_range_policies=[],
        sweep_loads=[1.5, 3.0],
        policies=[p for p in data["policies"] if p["label"] in LABELS],
    )
    return parse_suite(data, "tiny.toml")


@pytest.mark.parametrize("seed", [0, 7])
def test_sweep_and_reproduce_draw_the_same_samples(tmp_path: Path, seed: int) -> None:
    suite = _suite(seed)
    run_suite_model(suite, tmp_path / "reproduce", quick=False, progress=False)
    main = pd.read_csv(tmp_path / "reproduce" / "main_points.csv")
    rec = pd.read_csv(tmp_path / "reproduce" / "main_records.csv")

    exp = parse_experiment(suite_sweep_data(suite), "tiny.yaml")  # type: ignore[arg-type]
    run_sweep(exp, tmp_path / "sweep", backend="inprocess", progress=False)
    df = pd.read_parquet(tmp_path / "sweep" / "results.parquet")
    at_load = df[df["load"] == 1.5]
    assert len(at_load) == len(main) == len(LABELS) * 2 * 2  # policies x batch sizes x runs
    for row in main.itertuples(index=False):
        pt = at_load[
            (at_load["policy"] == row.label)
            & (at_load["batch"] == row.batch)
            & (at_load["seed"] == row.run)
        ]
        assert len(pt) == 1, (row.label, row.batch, row.run)
        got = pt.iloc[0]
        where = f"{row.label} batch {row.batch} run {row.run}"
        assert got["antt"] == pytest.approx(row.antt, rel=1e-12), where
        assert got["stp"] == pytest.approx(row.stp, rel=1e-12), where
        assert got["fairness"] == pytest.approx(row.fairness, rel=1e-12), where
        assert got["sla_violation_rate_n4"] == pytest.approx(row.sla_n4, abs=0.0), where
        mine = rec[
            (rec["label"] == row.label) & (rec["batch"] == row.batch) & (rec["run"] == row.run)
        ]
        lat = mine.sort_values("id")["latency_s"].to_numpy(float)
        np.testing.assert_allclose(np.asarray(got["latencies_s"], float), lat, rtol=1e-12)
    # the other load is another window over the same tasks: same networks, other arrivals
    high = df[df["load"] == 3.0]
    assert len(high) == len(at_load)
