"""Per-request records on disk (Parquet via pyarrow)."""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd

from npusched._io import atomic_path
from npusched.errors import NpuschedError

__all__ = ["read_records", "write_records"]


def write_records(df: pd.DataFrame, path: str | os.PathLike[str]) -> Path:
    """Write records to a Parquet file atomically (:func:`npusched._io.atomic_path`), so a reader
    never sees a half-written file. Returns the path."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    with atomic_path(p) as tmp:
        df.reset_index(drop=True).to_parquet(tmp, index=False, engine="pyarrow")
    return p


def read_records(path: str | os.PathLike[str]) -> pd.DataFrame:
    """Read records written by :func:`write_records`."""
    p = Path(path)
    if not p.is_file():
        raise NpuschedError(f"{p}: records file not found")
    try:
        return pd.read_parquet(p, engine="pyarrow")
    except (OSError, ValueError) as e:
        first = str(e).splitlines()[0] if str(e) else type(e).__name__
        raise NpuschedError(f"{p}: cannot read records: {first}") from None
