"""Writing a reproduction suite's outputs: Markdown tables, CSV tables (of row dicts or of a
data frame), JSON-safe values, and a stand-in for the plots module when no figures are wanted.
Shared by the studies (:mod:`npusched.experiments.studies`); the CLI's ``--format csv``
(:func:`npusched.report.tables.render`) writes its CSV with :func:`csv_text` too."""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from npusched._io import atomic_write_text

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["NoPlots", "csv_text", "json_safe", "md_table", "write_csv"]


class NoPlots:
    """Stands in for :mod:`npusched.report.plots` when no figures are wanted: every drawing
    function does nothing."""

    def __getattr__(self, name: str) -> Callable[..., None]:
        return lambda *args, **kwargs: None


def md_table(df: pd.DataFrame, floatfmt: str = "{:.3g}") -> str:
    """``df`` as a Markdown table; floats formatted with ``floatfmt``, ``n/a`` if not finite."""
    if df.empty:
        return "_(no data)_\n"
    cols = list(df.columns)
    lines = ["| " + " | ".join(str(c) for c in cols) + " |", "|" + "---|" * len(cols)]
    for row in df.itertuples(index=False):
        cells = []
        for v in row:
            if isinstance(v, float | np.floating):
                cells.append("n/a" if not math.isfinite(float(v)) else floatfmt.format(float(v)))
            else:
                cells.append(str(v))
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def csv_text(rows: Sequence[Mapping[str, Any]]) -> str:
    """``rows`` (dicts sharing the first row's keys) as CSV text, ``\n`` line ends; ``""`` for
    no rows."""
    if not rows:
        return ""
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=list(rows[0].keys()), lineterminator="\n")
    w.writeheader()
    for r in rows:
        w.writerow(dict(r))
    return buf.getvalue()


def write_csv(path: Path, df: pd.DataFrame) -> None:
    """``df`` as CSV without its index, written atomically."""
    atomic_write_text(path, df.to_csv(index=False))


def json_safe(obj: Any) -> Any:
    """JSON-safe copy: NaN/inf -> None, numpy scalars -> Python, tuples -> lists, keys -> str."""
    if isinstance(obj, dict):
        return {str(k): json_safe(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [json_safe(v) for v in obj]
    if isinstance(obj, np.integer):
        return int(obj)
    if isinstance(obj, float | np.floating):
        x = float(obj)
        return x if math.isfinite(x) else None
    return obj
