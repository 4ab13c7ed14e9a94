"""``workload.job_range_ms`` of a PREMA workload in ``npusched run``: PREMA's 0.5-45 ms tasks."""

from __future__ import annotations

import tomllib
from pathlib import Path

import numpy as np
import pytest

from npusched.errors import ConfigError
from npusched.experiments.config import parse_config
from npusched.experiments.runner import run_config

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "prema_small.toml"


def config(**workload: object) -> dict:
    data = tomllib.loads(EXAMPLE.read_text())
    data["workload"].update(workload)
    return data


def test_every_task_lies_in_the_range_and_runs_are_deterministic() -> None:
    cfg = parse_config(config(n_tasks=12, job_range_ms=[0.5, 45.0]))
    out = run_config(cfg)
    iso = out.records["isolated_s"].to_numpy()
    assert len(iso) == 12
    assert np.all((iso >= 0.5e-3) & (iso <= 45e-3))
    assert out.records["id"].tolist() == list(range(12))
    again = run_config(cfg)
    np.testing.assert_array_equal(out.records["finish_s"], again.records["finish_s"])
    # Without the range the same seed draws tasks outside it (RNN-ASR, batch 16).
    wide = run_config(parse_config(config(n_tasks=40)))
    assert wide.records["isolated_s"].max() > 45e-3


@pytest.mark.parametrize(
    ("value", "match"),
    [([45.0, 0.5], "lo < hi"), ([1.0], "job_range_ms"), ("fast", "job_range_ms")],
)
def test_bad_range_is_one_line(value: object, match: str) -> None:
    with pytest.raises(ConfigError, match=match) as e:
        parse_config(config(job_range_ms=value), "x.toml")
    assert "\n" not in str(e.value)


def test_empty_range_says_so() -> None:
    cfg = parse_config(config(models=["alexnet"], batch_sizes=[1], job_range_ms=[1000, 2000]))
    with pytest.raises(ConfigError, match="no task of alexnet"):
        run_config(cfg)
