"""Per-request records on disk (Parquet via pyarrow)."""

from __future__ import annotations

import os
import uuid
from pathlib import Path

import pandas as pd

from npusched.errors import NpuschedError

__all__ = ["read_records", "temp_path", "write_records"]


def temp_path(directory: Path, name: str) -> Path:
    """A fresh hidden temporary file name next to ``directory / name`` (same file system, so a
    rename onto the target is atomic; created with normal permissions when written)."""
    return directory / f".{name}.{os.getpid()}.{uuid.uuid4().hex[:12]}.tmp"


def write_records(df: pd.DataFrame, path: str | os.PathLike[str]) -> Path:
    """Write records to a Parquet file atomically (a temporary file in the same directory, then
    a rename), so a reader never sees a half-written file. Returns the path."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    tmp = temp_path(p.parent, p.name)
    try:
        df.reset_index(drop=True).to_parquet(tmp, index=False, engine="pyarrow")
        os.replace(tmp, p)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
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
