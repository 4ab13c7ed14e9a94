"""What ``run_config`` does around ``Simulator.run`` (issue 25, the seventh round): the metrics
read the result's columns without a frame, the collector is held off and restored, requests are
built a column at a time, PREMA's estimate memo lives on the profile."""

from __future__ import annotations

import gc
import math

import numpy as np
import pandas as pd
import pytest

from npusched.bench.families import family_configs
from npusched.experiments.config import parse_config
from npusched.experiments.runner import run_config
from npusched.metrics import summarize


def _same(a: dict[str, float], b: dict[str, float]) -> bool:
    """Equal keys and values to the last bit (NaN equal to NaN)."""
    if a.keys() != b.keys():
        return False
    return all(
        (math.isnan(x) and math.isnan(y)) or np.float64(x).tobytes() == np.float64(y).tobytes()
        for x, y in ((a[k], b[k]) for k in a)
    )


@pytest.mark.parametrize(("fam", "until"), [("HPF", None), ("PREMA", 0.02), ("Planaria", None)])
def test_summarize_of_columns_equals_summarize_of_the_frame(fam: str, until: float | None) -> None:
    """``summarize`` over a mapping of columns gives the frame's summary to the last bit (a
    run cut short by ``until`` included: only its finished rows are summarised)."""
    d = family_configs(120)[fam]
    if until is not None:
        d = dict(d, sim={**d.get("sim", {}), "until_s": until})
    out = run_config(parse_config(d, source=fam))
    cols = out.result.columns
    done = ~np.isnan(cols["finish_s"])
    if until is not None:
        assert 0 < done.sum() < len(done)
    numeric = {k: v[done] for k, v in cols.items() if v.dtype != object}
    kw = {"busy_s": out.result.busy_s, "makespan_s": out.result.makespan_s}
    by_cols = summarize(numeric, **kw)
    by_frame = summarize(pd.DataFrame(numeric), **kw)
    assert _same(by_cols, by_frame)
    # and run_config's own summary holds the same values
    assert _same(
        {k: out.summary[k] for k in by_cols if k != "n_requests"},
        {k: v for k, v in by_cols.items() if k != "n_requests"},
    )
    assert out.summary["n_finished"] == float(done.sum())
    assert out.summary["n_unfinished"] == float((~done).sum())


def test_summarize_of_no_columns_and_of_empty_columns() -> None:
    """No finished request: the counts are 0 and the means NaN, as for an empty frame."""
    empty = {
        k: np.zeros(0) for k in ("latency_s", "isolated_s", "priority", "arrival_s", "finish_s")
    }
    got = summarize(empty)
    want = summarize(pd.DataFrame(empty))
    assert _same(got, want) and got["n_requests"] == 0.0


@pytest.mark.parametrize("enabled", [True, False])
def test_run_config_holds_the_collector_off_and_restores_it(enabled: bool) -> None:
    """The collector is off while the run builds its requests (and on again afterwards, or
    left off where the caller had turned it off), also when the run fails."""
    import npusched.experiments.runner as runner

    seen: list[bool] = []
    real = runner.build_requests

    def spy(*a: object, **k: object) -> object:
        seen.append(gc.isenabled())
        return real(*a, **k)  # type: ignore[arg-type]

    cfg = parse_config(family_configs(20)["FCFS"], source="FCFS")
    was = gc.isenabled()
    (gc.enable if enabled else gc.disable)()
    try:
        runner.build_requests = spy  # type: ignore[assignment]
        run_config(cfg)
        assert seen == [False] and gc.isenabled() is enabled
        bad = cfg.model_copy(update={"workload": cfg.workload.model_copy(update={"n_tasks": 0})})
        with pytest.raises(Exception, match="no requests"):
            run_config(bad)
        assert gc.isenabled() is enabled
    finally:
        runner.build_requests = real  # type: ignore[assignment]
        (gc.enable if was else gc.disable)()


def test_requests_from_columns_rejects_columns_of_different_lengths() -> None:
    from npusched.workloads.request import requests_from_columns

    with pytest.raises(ValueError, match="column lengths differ"):
        requests_from_columns([0.0, 1.0], ["a"], [1, 1], [1, 1], [None] * 2, [None] * 2, [None] * 2)
    assert requests_from_columns([], [], [], [], [], [], []) == []


def test_prema_estimate_memo_is_per_profile_and_pure() -> None:
    """The memo lives on the profile (not shared between profiles) and gives the value the
    predictor computes without it."""
    from npusched.hardware import compile_profile, get_device
    from npusched.models import get_network
    from npusched.policies.temporal import predictor
    from npusched.workloads import prema_workload

    dev = get_device("prema-npu")
    reqs = prema_workload(60, ["rnn-sa", "alexnet"], 1.0, random_state=5)
    profs = {n: compile_profile(get_network(n), dev, (1, 4, 16)) for n in ("rnn-sa", "alexnet")}
    for r in reqs:
        p = profs[r.network]
        got = predictor.prema_estimate(r, p)
        assert got == predictor._prema_estimate(r.batch, r.seq_in, p)
        assert predictor.prema_estimate(r, p) is got  # memoised
        assert p.__dict__[predictor._MEMO][(r.batch, r.seq_in)] == got
    other = compile_profile(get_network("alexnet"), get_device("prema-npu"), (1, 4, 16))
    if other is not profs["alexnet"]:
        assert predictor._MEMO not in other.__dict__


def _parquet(df: pd.DataFrame) -> bytes:
    import io

    bio = io.BytesIO()
    df.to_parquet(bio, index=False, engine="pyarrow")
    return bio.getvalue()


def test_records_frame_equals_pandas_own_and_is_made_on_first_access() -> None:
    """``to_frame`` hands the text columns to pandas as Arrow strings: the same frame, dtypes
    and parquet bytes as ``pd.DataFrame(columns)``, a missing value and a non-string value
    included (the latter left to pandas). ``run_config`` makes the frame only when
    ``records`` is read, once."""
    from npusched.sim import engine

    out = run_config(parse_config(family_configs(120)["HPF"], source="HPF"))
    assert out.__dict__.get("_records") is None
    rec = out.records
    assert out.records is rec
    assert out.summary["n_requests"] == float(len(rec))
    res = out.result
    for value in ("npu", None, 7):
        res.columns["resource"][3] = value
        got, want = res.to_frame(), pd.DataFrame(res.columns)
        assert got.equals(want)
        assert list(map(repr, got.dtypes)) == list(map(repr, want.dtypes))
        if value != 7:  # pyarrow cannot write a mixed object column
            assert _parquet(got) == _parquet(want)
    assert engine._arrow_strings(np.array(["a", 1], dtype=object)) is None
