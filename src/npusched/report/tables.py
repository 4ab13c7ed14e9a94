"""Render tabular results as a Rich table, JSON or CSV (the CLI's ``--format``)."""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Mapping, Sequence
from typing import Any, TextIO

from npusched.errors import NpuschedError

FORMATS = ("table", "json", "csv")


def _fmt(v: Any, separators: bool | None = None) -> str:
    """A cell as text. Integers get thousands separators if ``separators`` (default: from
    10,000 up); :func:`render` decides per column, so one column never mixes both styles."""
    if isinstance(v, float):
        if math.isnan(v):  # an undefined metric (int(nan) below would raise)
            return "-"
        if v != 0 and (abs(v) >= 1e6 or abs(v) < 1e-3):
            return f"{v:.4g}"
        return f"{v:.4f}".rstrip("0").rstrip(".") if v != int(v) else f"{v:.1f}"
    if isinstance(v, int) and not isinstance(v, bool):
        if separators is None:
            separators = abs(v) >= 10_000
        return f"{v:,}" if separators else str(v)
    return str(v)


def _separated_columns(rows: Sequence[Mapping[str, Any]], cols: Sequence[str]) -> dict[str, bool]:
    """Per column: whether its integers get thousands separators (any of them >= 10,000)."""
    return {
        c: any(
            isinstance(r[c], int) and not isinstance(r[c], bool) and abs(r[c]) >= 10_000
            for r in rows
        )
        for c in cols
    }


def render(
    rows: Sequence[Mapping[str, Any]],
    fmt: str = "table",
    *,
    title: str | None = None,
    out: TextIO | None = None,
) -> None:
    """Print ``rows`` (dicts sharing keys) to ``out`` (stdout) in ``fmt``."""
    out = out or sys.stdout
    if fmt not in FORMATS:
        raise NpuschedError(f"--format {fmt!r} not allowed; allowed: {', '.join(FORMATS)}")
    cols: list[str] = list(rows[0].keys()) if rows else []
    if fmt == "json":
        json.dump([dict(r) for r in rows], out, indent=2, default=_json_default)
        out.write("\n")
    elif fmt == "csv":
        from npusched.report.suite_output import csv_text

        out.write(csv_text(rows) if rows else "\n")
    else:
        from rich.console import Console
        from rich.table import Table

        table = Table(title=title, show_lines=False)
        for c in cols:
            table.add_column(c, justify="right" if rows and _is_num(rows[0][c]) else "left")
        sep = _separated_columns(rows, cols)
        for r in rows:
            table.add_row(*(_fmt(r[c], sep[c]) for c in cols))
        Console(file=out, width=console_width(out)).print(table)


def plural(n: int, word: str) -> str:
    """``"1 instance"``, ``"3 instances"`` (English ``-s`` plurals only), with separators."""
    return f"{n:,} {word}{'' if n == 1 else 's'}"


def console_width(out: TextIO | None = None) -> int | None:
    """Width for a Rich console writing to ``out``: ``None`` (Rich's own choice: the
    terminal's width, or ``$COLUMNS``) on a terminal or when ``COLUMNS`` is set, else 200 so
    that piped tables are not wrapped."""
    import os

    stream = out or sys.stdout
    isatty = getattr(stream, "isatty", None)
    if os.environ.get("COLUMNS") or (isatty is not None and isatty()):
        return None
    return 200


def _is_num(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


def _json_default(o: Any) -> Any:
    import numpy as np

    if isinstance(o, np.integer):
        return int(o)
    if isinstance(o, np.floating):
        return float(o)
    if isinstance(o, np.ndarray):
        return o.tolist()
    return str(o)
