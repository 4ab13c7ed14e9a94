"""The parts of ``run_config`` around the engine (issue 25, twenty-first round): the workload's
arrival order, the distinct names drawn, the SLA counts, each against the plain computation
it replaces."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from npusched.metrics.core import sla_violation_rates, summarize
from npusched.workloads import poisson_table, prema_table
from npusched.workloads.generators import sample_seq_lens, stable_order


@settings(max_examples=300, deadline=None)
@given(
    x=st.lists(
        st.one_of(
            st.sampled_from([0.0, -0.0, 1.0, 2.5, float("nan"), float("inf"), -1.0]),
            st.floats(allow_nan=True, allow_infinity=True),
        ),
        max_size=60,
    ),
    sort=st.booleans(),
)
def test_stable_order_is_the_stable_argsort(x: list[float], sort: bool) -> None:
    """Sorted input (ties included), distinct values, ties, NaN and zeros of both signs: the
    stable ``argsort``'s indices and dtype."""
    a = np.array(sorted(x) if sort and not any(v != v for v in x) else x, dtype=np.float64)
    got = stable_order(a)
    want = np.argsort(a, kind="stable")
    assert got.dtype == want.dtype
    assert np.array_equal(got, want)


def test_stable_order_on_uniform_arrivals_takes_the_default_sort() -> None:
    """Distinct uniform draws (the PREMA generator's arrivals) and a Poisson stream's sorted
    arrivals give the stable order."""
    rng = np.random.default_rng(3)
    for a in (rng.uniform(0.0, 46.6, 5000), np.cumsum(rng.exponential(0.02, 1000))):
        assert np.array_equal(stable_order(a), np.argsort(a, kind="stable"))


def test_seq_lens_from_the_distinct_names_equal_the_requests_set() -> None:
    """``distinct`` names the networks once; the draws (recurrent networks included) are
    those from the requests' names."""
    nets = ["gnmt", "resnet-50", "gnmt", "bert-base", "resnet-50", "gnmt"]
    for given_ in (None, sorted(set(nets)), ["resnet-50", "gnmt", "bert-base"]):
        got = sample_seq_lens(nets, np.random.default_rng(7), distinct=given_)
        want = sample_seq_lens(nets, np.random.default_rng(7))
        assert got == want


def test_generated_tables_are_the_requests_of_the_generators() -> None:
    """The generators' tables are in arrival order with ids dense from 0, name every network
    drawn, and give lengths to the recurrent network only (its draws made from the distinct
    names)."""
    t = prema_table(500, ["gnmt", "resnet-50", "bert-base"], 2.0, random_state=4)
    arr = [r.arrival_s for r in t]
    assert arr == sorted(arr)
    assert [r.id for r in t] == list(range(500))
    assert {r.network for r in t} == {"gnmt", "resnet-50", "bert-base"}
    assert all((r.seq_in is None) == (r.network != "gnmt") for r in t)
    p = poisson_table(100.0, models=["resnet-50", "gnmt"], n_requests=300, random_state=5)
    assert [r.arrival_s for r in p] == sorted(r.arrival_s for r in p)


@settings(max_examples=100, deadline=None)
@given(
    lat=st.lists(st.floats(0.0, 50.0), min_size=1, max_size=40),
    data=st.data(),
)
def test_sla_rates_counted_by_row_equal_the_broadcast_mean(
    lat: list[float], data: st.DataObject
) -> None:
    """The rows counted one by one give the bits of the whole comparison's ``mean``."""
    iso = data.draw(st.lists(st.floats(0.01, 5.0), min_size=len(lat), max_size=len(lat)))
    ns = data.draw(st.lists(st.floats(0.5, 30.0), min_size=1, max_size=8))
    la, ia, na = np.array(lat), np.array(iso), np.array(ns)
    got = sla_violation_rates({"latency_s": la, "isolated_s": ia}, ns)
    want = (la[None, :] > na[:, None] * ia[None, :]).mean(axis=1)
    assert got.tobytes() == want.tobytes()


def test_summary_names_the_priorities_present_in_order() -> None:
    """Priorities outside PREMA's levels are named ``priority<p>`` in ascending order."""
    rng = np.random.default_rng(2)
    n = 50
    df = {
        "latency_s": rng.uniform(1.0, 2.0, n),
        "isolated_s": rng.uniform(0.1, 0.5, n),
        "priority": rng.choice(np.array([7, -2, 40]), n).astype(np.float64),
    }
    keys = [k for k in summarize(df) if k.startswith("p50_priority")]
    assert keys == [
        "p50_priority-2_latency_s",
        "p50_priority-2_norm",
        "p50_priority7_latency_s",
        "p50_priority7_norm",
        "p50_priority40_latency_s",
        "p50_priority40_norm",
    ]
