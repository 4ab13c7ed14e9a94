"""PREMA reproduction: the ``comparisons`` contract, the stratified quick run, the one-factor
ablations and the default token rule (issue 24)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from npusched.experiments.studies.prema import ablations as pa
from npusched.experiments.studies.prema.comparisons import _record
from npusched.experiments.studies.prema.points import (
    DEFAULT_RUNS,
    PremaSetup,
    _Context,
    _select_runs,
    policy_specs,
)
from npusched.experiments.studies.prema.run import reproduce
from npusched.policies.base import POLICIES

TINY = PremaSetup.of(networks=("googlenet", "alexnet", "rnn-sa"), n_tasks=4, batch_sizes=(1,))
FIELDS = {"id", "figure", "label", "paper", "ours", "ratio", "direction", "cause", "spread"}


def test_record_follows_the_contract() -> None:
    r = _record("x/a", "Fig. 1", "gain (x)", 7.8, 9.9)
    assert set(r) == FIELDS
    assert r["ratio"] == pytest.approx(9.9 / 7.8) and r["direction"] == "same"
    assert r["cause"] == ""  # same direction, ratio within 0.5-2
    far = _record("x/b", "Fig. 1", "gain (x)", 19.6, 51.0, cause="measured")
    assert far["cause"] == "measured"
    lost = _record("x/c", "Fig. 1", "gain (x)", 1.4, 0.9, cause="measured")
    assert lost["direction"] == "opposite" and lost["cause"] == "measured"
    none = _record("x/d", "Fig. 1", "gain (x)", None, 1.0, cause="why")
    assert none["direction"] == "n/a" and none["ratio"] is None and none["cause"] == "why"
    missing = _record("x/e", "Fig. 1", "gain (x)", 4.8, math.inf, cause="unbounded")
    assert missing["ours"] is None and missing["cause"] == "unbounded"
    level = _record("x/f", "Fig. 5", "latency (us)", 12.0, 5.0, kind="value", cause="c")
    assert level["direction"] == "n/a" and level["cause"] == "c"  # a plain value; ratio 0.42
    close = _record("x/g", "Fig. 5", "latency (us)", 12.0, 10.0, kind="value", cause="c")
    assert close["direction"] == "n/a" and close["cause"] == ""  # ratio 0.83


def test_summary_carries_comparisons(tmp_path: Path) -> None:
    specs = [
        s
        for s in policy_specs()
        if s.label
        in {"NP-FCFS", "NP-TOKEN", "NP-SJF", "NP-PREMA", "P-SJF-dynamic", "P-PREMA-dynamic"}
    ]
    reproduce(tmp_path / "p", runs=2, setup=TINY, specs=specs, plots=False, paper_range=False)
    summary = json.loads((tmp_path / "p" / "summary.json").read_text())
    recs = summary["comparisons"]
    ids = [r["id"] for r in recs]
    assert len(ids) == len(set(ids))
    for want in (
        "fig12/antt_x",
        "fig12/fairness_x",
        "fig12/stp_x",
        "abstract/sla_satisfaction_x",
        "sec6e/floor_antt_x",
        "sec6e/floor_fairness_x",
        "sec6e/floor_stp_x",
        "fig15/antt_pct",
        "fig11/np_token_fairness_x",
    ):
        assert want in ids, want
    for r in recs:
        assert set(r) == FIELDS
        assert r["direction"] in ("same", "opposite", "n/a")
        within = r["ratio"] is not None and 0.5 <= r["ratio"] <= 2.0
        if r["direction"] == "opposite" or not within:
            assert r["cause"], r["id"]
        if r["direction"] == "same" and within:
            assert r["cause"] == "", r["id"]
        if r["ours"] is not None and r["paper"]:
            assert r["ratio"] == pytest.approx(r["ours"] / r["paper"])
    head = {r["id"]: r for r in recs}["fig12/antt_x"]
    lo, hi = head["spread"]
    assert lo <= head["ours"] <= hi
    assert summary["policies"]["P-PREMA-dynamic"]["antt_improvement"] == head["ours"]
    # NP-TOKEN's candidate group, probed under both token rules
    tok = summary["np_token"]
    assert set(tok) == {"linear", "cumulative"}
    for d in tok.values():
        assert d["workloads"] == 2 and 0 <= d["picks_all_candidates"] <= d["picks_with_choice"]
    assert "comparisons" in (tmp_path / "p" / "report.md").read_text().lower()


def test_quick_run_is_a_stratified_subset_of_the_full_run() -> None:
    ctx = _Context(TINY)
    full = _select_runs(ctx, 5, quick=False)
    assert full == {1: (0, 1, 2, 3, 4)}
    quick = _select_runs(ctx, 5, quick=True)
    assert len(quick[1]) == 5 and set(quick[1]) <= set(range(DEFAULT_RUNS))
    assert list(quick[1]) == sorted(set(quick[1]))
    assert _select_runs(_Context(TINY), 5, quick=True) == quick  # deterministic
    assert _select_runs(ctx, DEFAULT_RUNS, quick=True)[1] == tuple(range(DEFAULT_RUNS))


def test_priority_mix_variant_redraws_only_priorities() -> None:
    v = pa.Variant("priority mix", "low and high only", priorities=(1, 9))
    base = pa._VariantContext(TINY, pa.Variant("base", "base"))
    mixed = pa._VariantContext(TINY, v)
    a, b = base.workload(1, 0), mixed.workload(1, 0)
    assert {r.priority for r in b} <= {1, 9}
    assert [(r.network, r.arrival_s) for r in a] == [(r.network, r.arrival_s) for r in b]


def test_ablation_variant_runs_and_reports_every_group() -> None:
    row = pa.run_variant(pa.Variant("load", "3", setup={"load": 3.0}), 1, TINY)
    assert row["factor"] == "load" and row["workloads"] == 1
    for grp in ("prema_dynamic", "np_token", "np_prema"):
        assert {"antt_x", "fairness_x", "stp_x", "antt_x_of_means"} <= set(row[grp])
    assert set(row["fig15"]) == {"antt_pct", "stp_pct", "fairness_pct"}
    flat = pa.flat([row])[0]
    assert flat["factor"] == "load" and "fig15_antt_pct" in flat


@pytest.mark.parametrize("name", ["NP-PREMA", "P-PREMA", "NP-TOKEN", "P-TOKEN"])
def test_default_token_rule_is_linear(name: str) -> None:
    assert POLICIES.create(name).tokens == "linear"
    assert POLICIES.create(name, tokens="cumulative").tokens == "cumulative"
