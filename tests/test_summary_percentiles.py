"""``summarize``'s grouped percentiles (one sort per column) against ``np.percentile`` per
group, bit for bit, and the cases where it defers to ``np.percentile``."""

from __future__ import annotations

import numpy as np
import pytest

from npusched.metrics.core import grouped_percentiles, summarize

QS = [(50.0, 95.0, 99.0), (0.0, 100.0), (33.3, 99.9, 12.5, 50.0, 87.5), (1.0,)]


def _reference(c: np.ndarray, keys: np.ndarray, levels: list[int], qs: tuple[float, ...]):
    q = np.asarray(qs, dtype=np.float64)
    rows = [np.percentile(c, q)]
    for p in levels:
        sub = c[keys == p]
        rows.append(np.percentile(sub, q) if sub.size else np.full(len(qs), np.nan))
    return np.asarray(rows, dtype=np.float64)


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("qs", QS)
def test_grouped_percentiles_equal_numpy_bit_for_bit(seed: int, qs: tuple[float, ...]) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 400))
    keys = rng.integers(1, 12, size=n).astype(np.int64)
    lat = rng.exponential(0.01, size=n)
    if seed % 3 == 0:
        lat = np.round(lat, 3) + 0.001  # ties
    if seed % 4 == 1:
        lat[rng.integers(0, n)] = np.inf
    norm = 1.0 + rng.exponential(2.0, size=n)
    levels = sorted(set(keys.tolist()) | {40, 0})  # levels with no rows
    got = grouped_percentiles((lat, norm), keys, levels, qs)
    assert got is not None
    for c, g in zip((lat, norm), got, strict=True):
        ref = _reference(c, keys, levels, qs)
        assert g.shape == ref.shape
        assert g.tobytes() == ref.tobytes()


def test_grouped_percentiles_defer_where_numpy_might_differ() -> None:
    keys = np.array([1, 1, 3], dtype=np.int64)
    ok = np.array([0.5, 0.25, 1.0])
    assert grouped_percentiles((np.array([0.5, np.nan, 1.0]),), keys, [1, 3], (50.0,)) is None
    assert grouped_percentiles((np.array([0.5, -0.0, 1.0]),), keys, [1, 3], (50.0,)) is None
    assert grouped_percentiles((ok,), keys, [1, 3], (101.0,)) is None
    assert grouped_percentiles((ok[:0],), keys[:0], [], (50.0,)) is None
    assert grouped_percentiles((ok,), keys, [1, 3], (50.0,)) is not None


def test_summary_with_a_nan_latency_takes_numpy_and_names_the_same_keys() -> None:
    rng = np.random.default_rng(7)
    n = 50
    cols = {
        "latency_s": rng.exponential(0.01, size=n) + 0.001,
        "isolated_s": np.full(n, 0.001),
        "priority": rng.integers(1, 4, size=n).astype(np.int64) * 3 - 2,
        "arrival_s": np.arange(n, dtype=np.float64),
        "finish_s": np.arange(n, dtype=np.float64) + 1.0,
        "slo_s": np.full(n, np.nan),
    }
    fast = summarize(cols)
    cols_nan = dict(cols, latency_s=cols["latency_s"].copy())
    cols_nan["latency_s"][3] = np.nan
    slow = summarize(cols_nan)
    assert list(fast) == list(slow)
    assert np.isnan(slow["p50_latency_s"])
