"""The loop's two ways of keeping each request's records: lists written to the run's columns
after the loop (runs of up to ``records.LIST_RECORDS_MAX`` requests, every record by result
row), or the run's ``array`` columns written by row during it (longer runs, for memory). Both
must give the same run to the last bit. (Until the twenty-eighth round the column loop's way,
first start, finish and joules by dispatch order, was checked here too.)"""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from npusched.sim import records
from simhelpers import assert_same_run
from test_power_fast_path import CASES, SETTINGS, _outcome, _policy, _requests, _sim


def _run(volt: str, name: str, mechanism: str | None, cap: float, reqs: list, until: Any) -> Any:
    sim = _sim(volt, _policy(name, mechanism), cap)
    return _outcome(sim, reqs, until)


@SETTINGS
@given(
    reqs=_requests(),
    case=st.sampled_from(CASES),
    volt=st.sampled_from(["dfs", "dvfs"]),
    cap=st.sampled_from([30.0, 45.0]),
    until=st.sampled_from([None, 5e-3]),
)
def test_records_by_row_equal_records_by_list(
    reqs: list, case: tuple[str, str | None], volt: str, cap: float, until: Any
) -> None:
    name, mechanism = case
    by_list = _run(volt, name, mechanism, cap, reqs, until)
    saved = records.LIST_RECORDS_MAX
    records.LIST_RECORDS_MAX = 0  # every run writes the columns by row
    try:
        by_row = _run(volt, name, mechanism, cap, reqs, until)
    finally:
        records.LIST_RECORDS_MAX = saved
    if isinstance(by_list, tuple):
        assert by_row == by_list
    else:
        assert_same_run(by_list, by_row)
