"""``[exits.NETWORK]`` in a run config: early exits attached to a zoo network, and each request
of it given an exit drawn from the rates (Fluid Batching's serving setting from the CLI)."""

from __future__ import annotations

import tomllib

import numpy as np
import pytest

from npusched.errors import ConfigError
from npusched.experiments.config import parse_config
from npusched.experiments.runner import run_config

CONFIG = """
name = "fluidb-exits"
seed = 3
[hardware]
device = "zc706-npu"
[workload]
kind = "poisson"
rate_per_s = 10.0
models = ["resnet-50"]
n_requests = 60
qos = { "resnet-50" = 0.4 }
[policy]
name = "FluidB"
[exits.resnet-50]
n_exits = 4
"""


def test_exits_from_the_config_run_and_samples_leave_early() -> None:
    out = run_config(parse_config(tomllib.loads(CONFIG)))
    rec = out.records
    exits = np.array([r.exit for r in sorted(out.requests, key=lambda r: r.id)])
    assert set(exits.tolist()) <= {0, 1, 2, 3} and len(set(exits.tolist())) > 1
    # a sample's isolated latency is up to its exit: earlier exits are shorter
    iso = rec.sort_values("id")["isolated_s"].to_numpy()
    means = [iso[exits == k].mean() for k in sorted(set(exits.tolist()))]
    assert means == sorted(means)
    assert np.all(rec["finish_s"] >= rec["arrival_s"] + rec["isolated_s"] - 1e-12)
    again = run_config(parse_config(tomllib.loads(CONFIG)))
    np.testing.assert_array_equal(rec["finish_s"], again.records["finish_s"])


def test_rates_given_explicitly_and_bad_ones_are_one_line() -> None:
    data = tomllib.loads(CONFIG)
    data["exits"]["resnet-50"]["rates"] = [0.0, 0.0, 0.0, 1.0]
    out = run_config(parse_config(data))
    assert all(r.exit == 3 for r in out.requests)
    data["exits"]["resnet-50"]["rates"] = [0.5, 0.5]
    with pytest.raises(ConfigError, match=r"exits\.resnet-50") as e:
        parse_config(data, "x.toml")
    assert "\n" not in str(e.value)
    data["exits"] = {"vgg-16": {"n_exits": 3}}  # no paper rates for VGG-16: say so
    with pytest.raises(ConfigError, match=r"exits\.vgg-16"):
        run_config(parse_config(data))
