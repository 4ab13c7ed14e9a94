"""BERT's sequence length as a per-request run-time parameter (``Request.seq_in``), like the
RNNs' lengths: one profile over the network's sizes, a trace column, ``npusched run``."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from npusched.errors import HardwareConfigError, NpuschedError
from npusched.hardware import compile_profile, get_device
from npusched.hardware.profile import compile_sized_profile
from npusched.models import get_network
from npusched.policies.base import POLICIES
from npusched.sim import Simulator
from npusched.workloads.request import Request

DEV = get_device("prema-npu")


def test_sized_profile_rows_are_the_size_variants() -> None:
    prof = compile_sized_profile("bert-base", DEV, (1, 4), (128, 256, 384))
    assert prof.axes[0] == ("size", (128, 256, 384))
    for n in (128, 256, 384):
        alone = compile_profile(get_network(f"bert-base@{n}"), DEV, (1, 4))
        for b in (1, 4):
            assert prof.isolated_latency(b, seq_in=n) == alone.isolated_latency(b)
    assert prof.isolated_latency(1, seq_in=128) < prof.isolated_latency(1, seq_in=384)
    with pytest.raises(HardwareConfigError, match="no size variants"):
        compile_sized_profile("resnet-50", DEV, (1,), (1,))
    with pytest.raises(HardwareConfigError, match="outside"):
        compile_sized_profile("bert-base", DEV, (1,), (100_000,))


def test_requests_of_different_lengths_in_one_run() -> None:
    import npusched.policies.temporal  # noqa: F401

    prof = compile_sized_profile("bert-base", DEV, (1,), (128, 384))
    reqs = [Request(0, 0.0, "bert-base", seq_in=384), Request(1, 0.0, "bert-base", seq_in=128)]
    res = Simulator({"bert-base": prof}, POLICIES.create("NP-FCFS")).run(reqs)
    iso = res.columns["isolated_s"]
    assert iso[0] == prof.isolated_latency(1, seq_in=384)
    assert iso[1] == prof.isolated_latency(1, seq_in=128)
    assert res.columns["finish_s"][1] == pytest.approx(iso[0] + iso[1])


def test_trace_with_bert_lengths_runs(tmp_path: Path) -> None:
    from npusched.experiments.config import parse_config
    from npusched.experiments.runner import run_config

    trace = tmp_path / "t.csv"
    pd.DataFrame(
        {
            "arrival_s": [0.0, 0.001, 0.002, 0.003],
            "network": ["bert-base", "bert-base", "resnet-50", "bert-base"],
            "seq_in": [128, 384, None, 256],
        }
    ).to_csv(trace, index=False)
    cfg = parse_config(
        {
            "hardware": {"device": "prema-npu"},
            "workload": {"kind": "trace", "path": str(trace)},
            "policy": {"name": "P-PREMA"},
        }
    )
    out = run_config(cfg)
    rec = out.records.sort_values("id")
    bert = rec[rec.network == "bert-base"]["isolated_s"].to_numpy()
    assert bert[0] < bert[2] < bert[1]  # 128 < 256 < 384 tokens
    assert np.all(np.isfinite(rec["finish_s"]))
    bad = tmp_path / "bad.csv"
    pd.DataFrame({"arrival_s": [0.0], "network": ["resnet-50"], "seq_in": [8]}).to_csv(
        bad, index=False
    )
    with pytest.raises(NpuschedError, match="non-recurrent"):
        run_config(
            parse_config(
                {
                    "hardware": {"device": "prema-npu"},
                    "workload": {"kind": "trace", "path": str(bad)},
                }
            )
        )
