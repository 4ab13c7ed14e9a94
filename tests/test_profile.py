"""Compiled profiles: caching, prefix sums, execution plans and their boundaries, the CLI."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from npusched.cli import main
from npusched.errors import HardwareConfigError
from npusched.hardware import LayerCosts, compile_profile, get_device
from npusched.hardware.profile import clear_profile_cache
from npusched.hardware.systolic import SystolicArray
from npusched.models import NetBuilder, Network, get_network

BATCHES = tuple(range(1, 17))


def toy_rnn() -> Network:
    b = NetBuilder("toy-seq2seq", (64,))
    x = b.input()
    e = b.recurrent(x, 128, repeat="in", name="enc")
    d = b.recurrent(e, 128, repeat="out", name="dec")
    b.fc(d, 1000, name="proj")
    b.seq_len = (6, 4)
    return b.build()


class PerBatchOnly:
    """A device without ``layer_costs_grid``: the profile falls back to one call per batch."""

    def __init__(self) -> None:
        self.inner = SystolicArray()
        self.name = "per-batch"
        self.frequency_hz = self.inner.frequency_hz
        self.memory_bandwidth_bps = self.inner.memory_bandwidth_bps

    def layer_costs(self, network: Network, batch: int) -> LayerCosts:
        return self.inner.layer_costs(network, batch)

    def cache_key(self) -> tuple[object, ...]:
        return ("per-batch", self.inner.cache_key())


def test_profile_cached_and_shapes() -> None:
    net = get_network("resnet-50")
    dev = get_device("prema-npu")
    prof = compile_profile(net, dev, BATCHES)
    assert compile_profile(net, dev, reversed(BATCHES)) is prof
    assert compile_profile(net, get_device("prema-npu"), [*BATCHES, 3]) is prof  # equal params
    assert compile_profile(net, get_device("prema-npu", rows=64), BATCHES) is not prof
    assert compile_profile(net, dev, (1, 2)) is not prof
    assert prof.batch_sizes == BATCHES
    assert prof.latency_s.shape == (16, len(net.layers))
    assert prof.cum_s.shape == (16, len(net.layers) + 1)
    assert prof.device_name == "prema-npu" and prof.frequency_hz == 700e6
    for arr in (prof.latency_s, prof.cum_s, prof.cycles, prof.checkpoint_bytes):
        assert not arr.flags.writeable
    fresh = compile_profile(net, dev, BATCHES, cache=False)
    assert fresh is not prof and compile_profile(net, dev, BATCHES) is prof
    np.testing.assert_array_equal(fresh.cycles, prof.cycles)
    clear_profile_cache()
    assert compile_profile(net, dev, BATCHES) is not prof


def test_prefix_sums_consistent() -> None:
    prof = compile_profile(get_network("googlenet"), get_device("prema-npu"), BATCHES)
    assert (prof.cum_s[:, 0] == 0).all()
    np.testing.assert_allclose(np.diff(prof.cum_s, axis=1), prof.latency_s, rtol=1e-12)
    np.testing.assert_allclose(prof.cum_s[:, -1], prof.latency_s.sum(axis=1), rtol=1e-12)
    np.testing.assert_allclose(prof.latency_s, prof.cycles / prof.frequency_hz, rtol=1e-12)
    iso = np.array([prof.isolated_latency(b) for b in BATCHES])
    np.testing.assert_allclose(iso, prof.cum_s[:, -1])
    assert (np.diff(iso) > 0).all()  # more samples, more time
    assert prof.energy(4) == pytest.approx(float(prof.energy_j[3].sum()))


def test_grid_path_matches_per_batch_fallback() -> None:
    net = get_network("resnet-18")
    fast = compile_profile(net, SystolicArray(), (1, 3, 8))
    slow = compile_profile(net, PerBatchOnly(), (1, 3, 8))
    for name in ("cycles", "latency_s", "cum_s", "tiles", "bytes_moved", "checkpoint_bytes"):
        np.testing.assert_array_equal(getattr(fast, name), getattr(slow, name))


def test_missing_batch_and_bad_batches() -> None:
    prof = compile_profile(get_network("alexnet"), get_device("prema-npu"), (1, 4))
    with pytest.raises(HardwareConfigError, match="no batch size 2"):
        prof.plan(2)
    with pytest.raises(HardwareConfigError, match="positive"):
        compile_profile(get_network("alexnet"), get_device("prema-npu"), (0, 1))
    with pytest.raises(HardwareConfigError, match="positive"):
        compile_profile(get_network("alexnet"), get_device("prema-npu"), ())


def test_recurrent_plan_unrolls_steps() -> None:
    net = toy_rnn()
    prof = compile_profile(net, get_device("prema-npu"), (1, 4))
    plan = prof.plan(4, seq_in=6, seq_out=9)
    assert plan.steps == 6 + 9 + 1
    assert plan is prof.plan(4, 6, 9)
    lat = prof.latency_s[prof.row(4)]
    assert plan.total_s == pytest.approx(6 * lat[0] + 9 * lat[1] + lat[2])
    assert prof.isolated_latency(4) == pytest.approx(6 * lat[0] + 4 * lat[1] + lat[2])
    np.testing.assert_allclose(np.diff(plan.cum_s), plan.latency_s)


@settings(max_examples=200, deadline=None)
@given(frac=st.floats(0.0, 1.0), batch=st.sampled_from([1, 4, 16]))
def test_plan_boundaries(frac: float, batch: int) -> None:
    prof = compile_profile(get_network("resnet-50"), get_device("prema-npu"), (1, 4, 16))
    plan = prof.plan(batch)
    executed = frac * plan.total_s
    s = plan.step_at(executed)
    tile = plan.next_tile_boundary(executed)
    layer = plan.next_layer_boundary(executed)
    assert executed - 1e-15 <= tile <= layer + 1e-15
    assert layer <= plan.total_s
    if s < plan.steps:
        # the next tile boundary lies within the running step
        assert plan.cum_s[s] - 1e-15 <= tile <= plan.cum_s[s + 1] + 1e-15
        # and is at most one tile away
        assert tile - executed <= plan.latency_s[s] / plan.tiles[s] * (1 + 1e-9)
        ck = plan.checkpoint_bytes_at(executed)
        assert 0 <= ck <= 8 * 2**20
        if executed > plan.cum_s[s]:
            assert ck == plan.checkpoint_bytes[s] > 0
    else:
        assert tile == layer == plan.total_s
        assert plan.checkpoint_bytes_at(executed) == 0


def test_plan_boundaries_at_exact_points() -> None:
    prof = compile_profile(get_network("resnet-50"), get_device("prema-npu"), (4,))
    plan = prof.plan(4)
    end0 = float(plan.cum_s[1])
    assert plan.next_layer_boundary(end0) == end0
    assert plan.next_tile_boundary(end0) == end0
    assert plan.checkpoint_bytes_at(end0) == plan.checkpoint_bytes[0]
    assert plan.checkpoint_bytes_at(0.0) == 0
    t0 = float(plan.latency_s[0]) / int(plan.tiles[0])
    assert plan.next_tile_boundary(0.5 * t0) == pytest.approx(t0)
    assert plan.next_layer_boundary(0.5 * t0) == end0


def test_compiling_all_batches_is_vectorised() -> None:
    """One grid call costs every (batch, layer): results equal per-batch calls (no timing)."""
    net = get_network("resnet-50")
    dev = SystolicArray()
    prof = compile_profile(net, dev, BATCHES)
    for b in (1, 7, 16):
        np.testing.assert_array_equal(prof.cycles[prof.row(b)], dev.layer_costs(net, b).cycles)


def test_cli_profile_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["profile", "resnet-50", "--batch", "1", "--batch", "4", "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["network"] == "resnet-50" and doc["device"] == "prema-npu"
    assert doc["device_params"]["rows"] == 128
    assert [t["batch"] for t in doc["totals"]] == [1, 4]
    prof = compile_profile(get_network("resnet-50"), get_device("prema-npu"), (1, 4))
    assert doc["totals"][0]["isolated_ms"] == pytest.approx(prof.isolated_latency(1) * 1e3, 1e-4)
    assert doc["totals"][1]["cycles"] == int(prof.cycles[1].sum())
    assert len(doc["layers"]) == 2 * len(prof.network.layers)
    assert doc["layers"][0]["layer"] == "conv1" and doc["layers"][0]["batch"] == 1


def test_cli_profile_table_csv_and_errors(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "200")  # tables fit $COLUMNS; another test's value may linger
    assert main(["profile", "alexnet", "--batch", "2", "--no-layers"]) == 0
    out = capsys.readouterr().out
    assert "alexnet" in out and "isolated_ms" in out
    assert main(["profile", "alexnet", "--format", "csv"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("batch,idx,layer,kind,cycles")
    assert len(lines) == 1 + len(get_network("alexnet").layers)
    assert main(["profile", "alexnet", "--batch", "0"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("npusched: error:") and err.count("\n") == 1


def test_the_device_key_is_made_once_per_run() -> None:
    """``compile_profiles`` makes the device's cache key (which validates every parameter)
    once for all the run's networks and hands it to ``compile_profile``: on a warm cache no
    other key is made, and the profiles are the ones ``compile_profile`` returns without it
    (the same cached objects)."""
    from npusched.experiments.runner import compile_profiles
    from npusched.workloads import Request

    dev = get_device("planaria")
    calls = []
    real = type(dev).cache_key

    def counted(self: object) -> tuple[object, ...]:
        calls.append(1)
        return real(self)  # type: ignore[arg-type]

    reqs = [Request(i, 0.0, m) for i, m in enumerate(["resnet-50", "googlenet", "mobilenet-v1"])]
    compile_profiles(reqs, dev)  # compiled (each compile makes keys of its own)
    type(dev).cache_key = counted  # type: ignore[method-assign]
    try:
        got = compile_profiles(reqs, dev)
    finally:
        type(dev).cache_key = real  # type: ignore[method-assign]
    assert len(calls) == 1
    for name, prof in got.items():
        assert prof is compile_profile(get_network(name), dev, [1])
