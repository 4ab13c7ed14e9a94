"""A terminal progress bar (rich, on stderr) shared by the runner and the reproduction suites."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["ProgressBar", "progress_bar"]


class ProgressBar:
    """One task of a running :class:`rich.progress.Progress` bar.

    ``set_completed(n)`` suits a callback that reports a running count (the simulator's
    ``progress``); ``step(description)`` advances by one unit of a loop and relabels it.
    """

    def __init__(self, bar: Any, task: Any) -> None:
        self._bar = bar
        self._task = task

    def set_completed(self, n: int) -> None:
        """Show ``n`` units done."""
        self._bar.update(self._task, completed=n)

    def step(self, description: str = "") -> None:
        """Advance by one unit and show ``description`` next to the label."""
        self._bar.update(self._task, advance=1, description=description)
        task = next((t for t in getattr(self._bar, "tasks", ()) if t.id == self._task), None)
        speed = None if task is None else task.speed
        if speed is not None:
            self._bar.update(self._task, rate=f"{speed:.1f}")


@contextmanager
def progress_bar(
    total: int,
    label: str,
    *,
    enabled: bool = True,
    transient: bool = False,
    eta: bool = False,
    delay_s: float = 0.0,
    rate_unit: str | None = None,
) -> Iterator[ProgressBar | None]:
    """A progress bar on stderr over ``total`` units, or ``None`` when disabled or empty.

    Args:
        total: units of work (requests, sweep points).
        label: text in front of the bar (rich markup allowed); the current description, if
            :meth:`ProgressBar.step` gives one, follows it.
        enabled: ``False`` yields ``None`` (no terminal output at all).
        transient: erase the bar when the block ends.
        eta: also show the estimated time remaining.
        delay_s: show the bar only once the block has run this many seconds (a timer thread
            starts it), so short runs print nothing and long ones always show progress.
        rate_unit: also show the rate, ``<n> <rate_unit>/s`` (e.g. ``points``).
    """
    if not enabled or total <= 0:
        yield None
        return
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        ProgressColumn,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    columns: list[ProgressColumn] = [
        TextColumn(f"{label} {{task.description}}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
    ]
    if rate_unit is not None:
        columns.append(TextColumn(f"{{task.fields[rate]}} {rate_unit}/s"))
    if eta:
        columns.append(TimeRemainingColumn())
    if delay_s <= 0.0:
        with Progress(*columns, console=Console(file=sys.stderr), transient=transient) as bar:
            yield ProgressBar(bar, bar.add_task("", total=total, rate="-"))
        return
    import threading

    bar = Progress(*columns, console=Console(file=sys.stderr), transient=transient)
    task = bar.add_task("", total=total, rate="-")
    lock = threading.Lock()
    state = {"started": False, "done": False}

    def start() -> None:
        with lock:
            if not state["done"]:
                bar.start()
                state["started"] = True

    timer = threading.Timer(delay_s, start)
    timer.daemon = True
    timer.start()
    try:
        yield ProgressBar(bar, task)
    finally:
        timer.cancel()
        with lock:
            state["done"] = True
            if state["started"]:
                bar.stop()
