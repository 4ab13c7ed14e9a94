"""Metric formulas on hand-computed examples, the SLA search, records I/O."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from npusched.errors import NpuschedError
from npusched.metrics import (
    antt,
    fairness,
    latency_percentiles,
    ntt,
    progress_per_priority,
    read_records,
    sla_met,
    sla_violation_rates,
    slo_attainment,
    stp,
    summarize,
    throughput,
    throughput_at_sla,
    write_records,
)


def _frame(
    latency: list[float],
    isolated: list[float],
    priority: list[int],
    arrival: list[float] | None = None,
    slo: list[float] | None = None,
    network: list[str] | None = None,
) -> pd.DataFrame:
    n = len(latency)
    arr = np.zeros(n) if arrival is None else np.asarray(arrival, dtype=float)
    return pd.DataFrame(
        {
            "id": np.arange(n),
            "arrival_s": arr,
            "finish_s": arr + np.asarray(latency, dtype=float),
            "latency_s": np.asarray(latency, dtype=float),
            "isolated_s": np.asarray(isolated, dtype=float),
            "priority": np.asarray(priority, dtype=np.int64),
            "slo_s": np.full(n, np.nan) if slo is None else np.asarray(slo, dtype=float),
            "network": ["resnet-50"] * n if network is None else network,
        }
    )


# Three requests: isolated 1/2/4 s, latencies 2/3/12 s, priorities low/medium/high (1/3/9).
#   NTT = 2, 1.5, 3;  ANTT = 6.5/3;  STP = 1/2 + 2/3 + 1/3 = 1.5
#   shares = 1/13, 3/13, 9/13;  PP = 0.5*13, (2/3)*13/3, (1/3)*13/9 = 6.5, 2.888.., 0.481..
#   fairness = min PP / max PP = (13/27) / 6.5 = 2/27
EX = _frame([2.0, 3.0, 12.0], [1.0, 2.0, 4.0], [1, 3, 9], arrival=[0.0, 1.0, 2.0])


def test_ntt_antt_stp() -> None:
    assert ntt(EX).tolist() == [2.0, 1.5, 3.0]
    assert antt(EX) == pytest.approx(6.5 / 3)
    assert stp(EX) == pytest.approx(1.5)


def test_fairness_divides_by_priority_share() -> None:
    assert progress_per_priority(EX) == pytest.approx([6.5, 26 / 9, 13 / 27])
    assert fairness(EX) == pytest.approx(2 / 27)


def test_fairness_is_one_when_progress_is_proportional_to_priority() -> None:
    # progress 1/NTT = 0.1 * priority -> every PP equal
    prio = [1, 3, 9]
    df = _frame([10.0 / p for p in prio], [1.0, 1.0, 1.0], prio)
    assert fairness(df) == pytest.approx(1.0)
    # equal progress with unequal priorities is *not* fair: ratio of the shares
    df = _frame([2.0, 2.0, 2.0], [1.0, 1.0, 1.0], prio)
    assert fairness(df) == pytest.approx(1 / 9)


@settings(max_examples=50, deadline=None)
@given(
    st.lists(
        st.tuples(st.floats(1e-4, 10.0), st.floats(1.0, 50.0), st.integers(1, 11)),
        min_size=1,
        max_size=30,
    )
)
def test_metric_invariants(rows: list[tuple[float, float, int]]) -> None:
    iso = [r[0] for r in rows]
    lat = [r[0] * r[1] for r in rows]
    df = _frame(lat, iso, [r[2] for r in rows])
    assert antt(df) >= 1.0 - 1e-12
    assert 0.0 < stp(df) <= len(rows) + 1e-9
    assert 0.0 < fairness(df) <= 1.0 + 1e-12
    rates = sla_violation_rates(df)
    assert (np.diff(rates) <= 0).all()  # looser SLA, fewer violations
    # scaling all priorities leaves fairness unchanged
    scaled = df.assign(priority=df["priority"] * 3)
    assert fairness(scaled) == pytest.approx(fairness(df))


def test_sla_violation_rates() -> None:
    # NTT 2, 1.5, 3: violated (strictly above N x isolated) at N=2 only by the NTT-3 request
    rates = sla_violation_rates(EX, [1, 1.5, 2, 3, 4])
    assert rates.tolist() == pytest.approx([1.0, 2 / 3, 1 / 3, 0.0, 0.0])
    assert sla_violation_rates(EX).shape == (19,)  # N = 2..20


def test_percentiles_linear_interpolation() -> None:
    # latencies 2, 3, 12: p50 = 3; p95 at rank 1.9 = 3 + 0.9*9 = 11.1; p99 = 3 + 0.98*9
    p = latency_percentiles(EX, [50, 95, 99])
    assert p.tolist() == pytest.approx([3.0, 11.1, 11.82])
    # NTT 2, 1.5, 3 -> sorted 1.5, 2, 3; p95 = 2 + 0.9 = 2.9
    assert latency_percentiles(EX, [95], normalized=True)[0] == pytest.approx(2.9)


def test_summarize_keys_and_values() -> None:
    s = summarize(EX, busy_s=7.0, makespan_s=14.0, sla_n=[2, 3])
    assert s["n_requests"] == 3
    assert s["antt"] == pytest.approx(6.5 / 3)
    assert s["stp"] == pytest.approx(1.5)
    assert s["fairness"] == pytest.approx(2 / 27)
    assert s["sla_violation_rate_n2"] == pytest.approx(1 / 3)
    assert s["sla_violation_rate_n3"] == 0.0
    assert s["p95_latency_s"] == pytest.approx(11.1)
    assert s["p50_norm"] == pytest.approx(2.0)
    # one request per PREMA level: its own latency / NTT
    assert s["p95_high_priority_latency_s"] == 12.0
    assert s["p95_high_priority_norm"] == 3.0
    assert s["p99_low_priority_norm"] == 2.0
    assert s["throughput_rps"] == pytest.approx(3 / 14)
    assert s["utilisation"] == pytest.approx(0.5)
    assert s["max_ntt"] == 3.0
    assert math.isnan(s["slo_attainment"])
    # default makespan: first arrival (0) to last finish (14)
    assert summarize(EX)["makespan_s"] == 14.0
    assert throughput(EX) == pytest.approx(3 / 14)
    assert math.isnan(summarize(EX)["utilisation"])


def test_summarize_missing_levels_and_integer_priorities() -> None:
    s = summarize(_frame([2.0], [1.0], [3]))
    assert s["p95_medium_priority_norm"] == 2.0
    assert math.isnan(s["p95_high_priority_norm"])  # PREMA levels always reported
    s = summarize(_frame([2.0, 4.0], [1.0, 1.0], [1, 11]))
    assert s["p95_priority11_norm"] == 4.0 and s["p95_priority1_norm"] == 2.0


def test_summarize_empty_and_missing_columns() -> None:
    s = summarize(EX.iloc[:0])
    assert s["n_requests"] == 0 and math.isnan(s["antt"]) and s["stp"] == 0.0
    with pytest.raises(NpuschedError, match="isolated_s"):
        summarize(EX.drop(columns="isolated_s"))


def test_slo_attainment_and_sla_met() -> None:
    df = _frame(
        [1.0, 2.0, 3.0, 4.0],
        [1.0] * 4,
        [1] * 4,
        slo=[1.5, 1.5, np.nan, 5.0],
        network=["a", "a", "a", "b"],
    )
    assert slo_attainment(df) == pytest.approx(2 / 3)
    assert sla_met(df, 0.6) and not sla_met(df, 0.7)
    # per network: "a" meets 1/2, "b" meets 1/1
    assert sla_met(df, {"a": 0.5, "b": 0.99})
    assert not sla_met(df, {"a": 0.51, "b": 0.99})
    assert sla_met(df, {"*": 0.4})
    with pytest.raises(NpuschedError, match="no request has an SLO"):
        sla_met(EX)


def _mm1(service_rate: float, slo_s: float, n: int = 20_000):  # type: ignore[no-untyped-def]
    """Synthetic simulate(rate): M/M/1 sojourn times at evenly spaced quantiles.

    The sojourn time is Exp(mu - lambda), so the fraction meeting ``slo_s`` is
    ``1 - exp(-(mu - lambda) slo_s)``; the SLA at target p holds up to
    ``lambda* = mu + ln(1 - p) / slo_s``.
    """
    u = (np.arange(n) + 0.5) / n
    calls: list[float] = []

    def simulate(rate: float) -> pd.DataFrame:
        calls.append(rate)
        # at or above saturation the queue grows without bound
        lat = np.full(n, np.inf) if rate >= service_rate else -np.log1p(-u) / (service_rate - rate)
        return pd.DataFrame({"latency_s": lat, "slo_s": np.full(n, slo_s)})

    return simulate, calls


def test_throughput_at_sla_mm1_closed_form() -> None:
    mu, slo, target = 1000.0, 0.02, 0.99
    expected = mu + math.log(1 - target) / slo  # 769.74 req/s
    simulate, calls = _mm1(mu, slo)
    history: list[tuple[float, bool]] = []
    got = throughput_at_sla(simulate, target, lo=10.0, tol=1e-3, history=history)
    assert got == pytest.approx(expected, rel=2e-3)
    assert got <= expected + 1.0  # a lower bound (up to quantile-grid resolution)
    assert len(calls) == len(history) < 30
    # bracketed search gives the same answer
    got2 = throughput_at_sla(simulate, target, lo=10.0, hi=2000.0, tol=1e-3)
    assert got2 == pytest.approx(expected, rel=2e-3)
    # a laxer target allows more load
    assert throughput_at_sla(simulate, 0.9, lo=10.0, tol=1e-3) > got


def test_throughput_at_sla_edges() -> None:
    simulate, _ = _mm1(1000.0, 0.02)
    assert throughput_at_sla(simulate, 0.99, lo=900.0) == 0.0  # fails at lo
    assert throughput_at_sla(simulate, 0.99, lo=1.0, hi=5.0) == 5.0  # holds at hi
    with pytest.raises(NpuschedError):
        throughput_at_sla(simulate, 0.99, lo=0.0)


def test_records_round_trip(tmp_path: Path) -> None:
    path = write_records(EX, tmp_path / "sub" / "records.parquet")
    back = read_records(path)
    pd.testing.assert_frame_equal(back, EX)
    assert [p.name for p in path.parent.iterdir()] == ["records.parquet"]
    with pytest.raises(NpuschedError, match="not found"):
        read_records(tmp_path / "nope.parquet")


def test_failed_records_write_keeps_the_old_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write_records(EX, tmp_path / "records.parquet")
    before = path.read_bytes()

    def half_written(self: pd.DataFrame, target: Path, **kwargs: object) -> None:
        Path(target).write_bytes(b"PAR1 truncated")
        raise OSError("disk full")

    monkeypatch.setattr(pd.DataFrame, "to_parquet", half_written)
    with pytest.raises(OSError, match="disk full"):
        write_records(EX.iloc[:1], path)
    # the old file is untouched and the half-written temporary file is gone
    assert path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["records.parquet"]


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # inf - inf inside the interpolation
@settings(max_examples=200, deadline=None)
@given(
    lat=st.lists(
        st.one_of(st.floats(1e-6, 10.0), st.just(math.nan), st.just(math.inf)),
        min_size=1,
        max_size=40,
    ),
    prio=st.lists(st.sampled_from([1, 3, 9, 4]), min_size=40, max_size=40),
    qs=st.lists(st.floats(0.0, 100.0), max_size=5),
)
def test_summary_percentiles_and_ntt_metrics_equal_the_functions_bits(
    lat: list[float], prio: list[int], qs: list[float]
) -> None:
    """``summarize`` computes NTT once and the latency and NTT percentiles of a group by one
    ``np.percentile`` over both as rows: every value has the bits of the per-metric functions
    (``antt``, ``stp``, ``fairness``, ``latency_percentiles`` per array), NaN and inf included."""
    n = len(lat)
    iso = [0.5 + (i % 7) * 0.25 for i in range(n)]
    df = _frame(lat, iso, prio[:n])
    got = summarize(df, percentiles=qs)

    def bits(v: float) -> bytes:
        return np.float64(v).tobytes()

    assert bits(got["antt"]) == bits(antt(df))
    assert bits(got["stp"]) == bits(stp(df))
    assert bits(got["fairness"]) == bits(fairness(df))
    lat_a, x = np.asarray(lat), ntt(df)
    pr = np.asarray(prio[:n])
    groups = [("", np.ones(n, bool))]
    if set(pr.tolist()) <= {1, 3, 9}:
        groups += [(f"_{k}_priority", pr == v) for k, v in (("low", 1), ("medium", 3), ("high", 9))]
    for infix, at in groups:
        for q in qs:
            key = f"p{q:g}".replace(".", "_")
            if at.any():
                want_l = np.percentile(lat_a[at], q)
                want_n = np.percentile(x[at], q)
            else:
                want_l = want_n = math.nan
            assert bits(got[f"{key}{infix}_latency_s"]) == bits(want_l)
            assert bits(got[f"{key}{infix}_norm"]) == bits(want_n)
