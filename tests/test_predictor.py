"""PREMA's predictor: the RNN output-length regression (Fig. 9) and the latency estimator."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from npusched.errors import ConfigError, NpuschedError
from npusched.hardware import compile_profile, get_device
from npusched.models.ir import Layer, LayerKind, make_network
from npusched.models.rnn_lengths import PREMA_LENGTH_MODELS, PROFILE_SIZE
from npusched.models.seqlen import geomean_table, length_model_for, register_length_model
from npusched.policies.temporal.predictor import (
    make_estimator,
    mape,
    predict_seq_out,
    prediction_errors,
    regression_table,
)
from npusched.workloads.request import Request


def seq2seq(name: str, hidden: int = 256) -> object:
    """A small encoder-decoder LSTM named like a zoo network (so its length model applies)."""
    return make_network(
        name,
        [
            Layer("enc", LayerKind.LSTM, m=1, k=2 * hidden, n=4 * hidden, repeat="in"),
            Layer("dec", LayerKind.LSTM, m=1, k=2 * hidden, n=4 * hidden, repeat="out"),
            Layer("proj", LayerKind.FC, m=1, k=hidden, n=1000, repeat="out"),
        ],
        seq_len=(10, 10),
    )


@pytest.fixture(scope="module")
def device() -> object:
    return get_device("prema-npu")


def test_models_registered_for_the_four_rnns() -> None:
    for name in ("rnn-sa", "rnn-mt1", "rnn-mt2", "rnn-asr"):
        assert length_model_for(name) is PREMA_LENGTH_MODELS[name]


def test_a_second_length_model_for_a_network_is_an_error() -> None:
    with pytest.raises(NpuschedError, match="duplicate length model for 'rnn-sa'"):
        register_length_model("rnn-sa", PREMA_LENGTH_MODELS["rnn-mt1"])
    assert length_model_for("rnn-sa") is PREMA_LENGTH_MODELS["rnn-sa"]


def test_profile_is_fixed_1500_samples() -> None:
    m = PREMA_LENGTH_MODELS["rnn-mt1"]
    x, y = m.profile()
    assert len(x) == len(y) == PROFILE_SIZE == 1500
    x2, y2 = dataclasses.replace(m).profile()  # same params, same profile
    np.testing.assert_array_equal(x, x2)
    np.testing.assert_array_equal(y, y2)
    assert x.min() >= m.in_min and x.max() <= m.in_max and y.min() >= 1


def test_regression_table_is_the_geometric_mean_per_input_length() -> None:
    x = np.array([5, 5, 5, 7, 7, 9], dtype=np.int64)
    y = np.array([2, 8, 4, 3, 3, 10], dtype=np.int64)
    keys, gm = geomean_table(x[::-1], y[::-1])  # any order
    np.testing.assert_array_equal(keys, [5, 7, 9])
    np.testing.assert_allclose(gm, [4.0, 3.0, 10.0])  # (2*8*4)^(1/3) = 4
    assert gm[1] == 3.0 and gm[2] == 10.0  # equal outputs: exact
    # A length model's table against a per-length mask over its profile, every input length.
    m = PREMA_LENGTH_MODELS["rnn-asr"]
    keys, gm = m.table()
    px, py = m.profile()
    assert len(keys) > 100 and (np.diff(keys) > 0).all() and set(keys) == set(px.tolist())
    for k, g in zip(keys, gm, strict=True):
        assert g == pytest.approx(math.prod(py[px == k].tolist()) ** (1 / (px == k).sum()))


class _DoubleLengths:
    """A length model with only ``sample`` (no profiling table): output = 2 x input."""

    def sample(self, rng: np.random.Generator, size: int) -> tuple[np.ndarray, np.ndarray]:
        x = rng.integers(1, 4, size).astype(np.int64)
        return x, 2 * x


def test_regression_table_of_a_model_without_a_table(monkeypatch: pytest.MonkeyPatch) -> None:
    """The predictor profiles such a model itself (fixed seed) and builds the same table."""
    from npusched.models import seqlen

    monkeypatch.setitem(seqlen.LENGTH_MODELS, "toy-doubler", _DoubleLengths())
    regression_table.cache_clear()
    try:
        keys, gm = regression_table("toy-doubler")
        np.testing.assert_array_equal(keys, [1.0, 2.0, 3.0])
        np.testing.assert_array_equal(gm, [2.0, 4.0, 6.0])
        assert predict_seq_out("toy-doubler", 6) == 12.0  # beyond the table: proportional
    finally:
        regression_table.cache_clear()


def test_linear_sa_regression_is_exact() -> None:
    m = PREMA_LENGTH_MODELS["rnn-sa"]
    keys, gm = m.table()
    np.testing.assert_array_equal(gm, keys.astype(float))  # exact, no rounding error
    x, y = m.sample(np.random.default_rng(3), 200)
    np.testing.assert_array_equal(x, y)
    assert all(predict_seq_out("rnn-sa", int(v)) == float(v) for v in x[:20])


def test_nonlinear_models_are_noisy_and_correlated() -> None:
    for name in ("rnn-mt1", "rnn-mt2", "rnn-asr"):
        x, y = PREMA_LENGTH_MODELS[name].profile()
        assert np.corrcoef(x, y)[0, 1] > 0.8
        ratio = y / x
        assert ratio.std() > 0.05  # not a deterministic map
    x1, y1 = PREMA_LENGTH_MODELS["rnn-mt1"].profile()
    assert 1.0 < np.median(y1 / x1) < 1.25  # en->de ~1.1x


def test_sample_stays_inside_the_profiled_set() -> None:
    m = PREMA_LENGTH_MODELS["rnn-mt2"]
    px, py = m.profile()
    pairs = set(zip(px.tolist(), py.tolist(), strict=True))
    x, y = m.sample(np.random.default_rng(11), 500)
    assert set(zip(x.tolist(), y.tolist(), strict=True)) <= pairs
    x2, y2 = m.sample(np.random.default_rng(11), 500)
    np.testing.assert_array_equal(x, x2)  # seeded
    np.testing.assert_array_equal(y, y2)


def test_predict_off_table_interpolates_and_extrapolates() -> None:
    keys, gm = regression_table("rnn-mt1")
    assert predict_seq_out("rnn-mt1", int(keys[0])) == pytest.approx(gm[0])
    far = predict_seq_out("rnn-mt1", int(keys[-1]) * 2)
    assert far == pytest.approx(gm[-1] * 2)
    assert predict_seq_out("alexnet", 5) is None


def test_estimator_cnn_is_exact_and_rnn_uses_the_table(device: object) -> None:
    from npusched.models import get_network

    cnn = compile_profile(get_network("alexnet"), device, (1, 4))
    r = Request(0, 0.0, "alexnet", batch=4)
    assert make_estimator("prema")(r, cnn) == pytest.approx(cnn.isolated_latency(4))
    assert make_estimator("oracle")(r, cnn) == cnn.isolated_latency(4)

    prof = compile_profile(seq2seq("rnn-mt1"), device, (1,))
    m = PREMA_LENGTH_MODELS["rnn-mt1"]
    x, y = m.sample(np.random.default_rng(0), 300)
    reqs = [
        Request(i, 0.0, "rnn-mt1", seq_in=int(a), seq_out=int(b))
        for i, (a, b) in enumerate(zip(x, y, strict=True))
    ]
    est = make_estimator("prema")
    r0 = reqs[0]
    pred = predict_seq_out("rnn-mt1", r0.seq_in)
    lo, hi = (
        prof.isolated_latency(1, r0.seq_in, int(np.floor(pred))),
        prof.isolated_latency(1, r0.seq_in, int(np.floor(pred)) + 1),
    )
    assert min(lo, hi) <= est(r0, prof) <= max(lo, hi)
    errs = prediction_errors(reqs, {"rnn-mt1": prof})
    oracle = prediction_errors(reqs, {"rnn-mt1": prof}, kind="oracle")
    assert mape(oracle) == 0.0
    err = mape(errs)
    assert 0.5 < err < 15.0  # noisy decoder length, exact encoder part
    # the estimate ranks requests almost as the truth does (what scheduling needs)
    assert np.corrcoef(errs["estimated_s"], errs["isolated_s"])[0, 1] > 0.9


def test_linear_rnn_estimate_is_exact(device: object) -> None:
    prof = compile_profile(seq2seq("rnn-sa"), device, (1,))
    for s in (4, 17, 40):
        r = Request(0, 0.0, "rnn-sa", seq_in=s, seq_out=s)
        assert make_estimator("prema")(r, prof) == pytest.approx(make_estimator("oracle")(r, prof))


def test_unknown_estimator() -> None:
    with pytest.raises(ConfigError, match="allowed: prema, oracle"):
        make_estimator("magic")
