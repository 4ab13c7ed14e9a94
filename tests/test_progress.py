"""The shared progress bar (npusched.report.progress)."""

from __future__ import annotations

import pytest

from npusched.report.progress import progress_bar


def test_disabled_or_empty_yields_none() -> None:
    with progress_bar(10, "x", enabled=False) as bar:
        assert bar is None
    with progress_bar(0, "x") as bar:
        assert bar is None


def test_counts_and_steps(capsys: pytest.CaptureFixture[str]) -> None:
    with progress_bar(4, "work", eta=True) as bar:
        assert bar is not None
        bar.step("first")
        task = bar._bar.tasks[0]
        assert task.completed == 1 and task.description == "first" and task.total == 4
        bar.set_completed(3)
        assert task.completed == 3
    captured = capsys.readouterr()
    assert captured.out == ""  # the bar writes to stderr only
