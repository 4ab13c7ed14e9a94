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


def test_delayed_bar_appears_only_for_long_blocks() -> None:
    """Defect 3 (issue 15): a run of any size shows progress once it lasts ``delay_s``; a
    short one prints nothing (the bar is never started)."""
    import time

    with progress_bar(5, "short", delay_s=30.0) as bar:
        assert bar is not None
        bar.set_completed(1)
        assert not bar._bar.live.is_started  # not shown yet
    assert not bar._bar.live.is_started
    with progress_bar(5, "long", delay_s=0.05) as bar:
        assert bar is not None
        deadline = time.monotonic() + 5.0
        while not bar._bar.live.is_started and time.monotonic() < deadline:
            time.sleep(0.01)
        assert bar._bar.live.is_started  # a long block shows its bar
    assert not bar._bar.live.is_started  # stopped on exit
