"""The fixtures of the runs the two engine loops were compared on (``tests/golden_loops.py``,
frozen at dbd9f47 where the column loop and the general loop agreed): one digest per case.
Each case is checked by the test that made the comparison (``golden_loops.frozen``); here, that
the fixture file and the cases are the same set."""

from __future__ import annotations

from golden_loops import cases, load


def test_every_case_has_a_fixture() -> None:
    assert sorted(load()) == sorted(cases())
