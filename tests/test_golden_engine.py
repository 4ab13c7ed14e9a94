"""The engine's results equal the golden fixtures frozen before issue 25's engine work
(``tests/golden_engine.py``): every column's bytes, the exact scalars, the power timeline and
the ``run_config`` summaries, for one run per policy family through ``run_config`` (power
recorded), the fast-path workloads at load, SJF and RRB, and every bench scenario."""

from __future__ import annotations

import pytest

from golden_engine import cases, load

GOLDEN = load()
CASES = cases()


def test_every_case_has_a_fixture() -> None:
    assert sorted(GOLDEN) == sorted(CASES)


@pytest.mark.parametrize("case", sorted(CASES))
def test_result_equals_the_golden_fixture(case: str) -> None:
    got = CASES[case]()
    want = GOLDEN[case]
    assert got.keys() == want.keys()
    for key in want:
        assert got[key] == want[key], f"{case}: {key}"
