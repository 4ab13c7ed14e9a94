"""Atomic file writes shared by every module that writes results (records, summaries, traces,
timelines, plots, reproduction reports).

A file is written to a hidden temporary file in the target's directory (same file system, so the
final rename is atomic), flushed to disk, then renamed onto the target; on any error the
temporary file is removed. A reader therefore sees either the old file or the complete new one,
never a half-written file, even if the process is killed.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

__all__ = ["atomic_path", "atomic_write_text", "temp_path"]


def temp_path(directory: Path, name: str) -> Path:
    """A fresh hidden temporary file name next to ``directory / name`` (unique per process and
    call, so concurrent writers never share one)."""
    return directory / f".{name}.{os.getpid()}.{uuid.uuid4().hex[:12]}.tmp"


@contextmanager
def atomic_path(path: str | os.PathLike[str]) -> Iterator[Path]:
    """Yield a temporary path to write ``path``'s new content to; when the block ends normally
    the file is synced and renamed onto ``path``, when it raises the file is removed.

    The parent directory must exist. Writers that pick the format from the file name (pandas,
    matplotlib) must be told the format explicitly: the temporary name ends in ``.tmp``.
    """
    p = Path(path)
    tmp = temp_path(p.parent, p.name)
    try:
        yield tmp
        fd = os.open(tmp, os.O_RDONLY)
        try:
            os.fsync(fd)  # the data is on disk before the rename makes it visible
        finally:
            os.close(fd)
        os.replace(tmp, p)
    finally:
        tmp.unlink(missing_ok=True)


def atomic_write_text(path: str | os.PathLike[str], text: str) -> Path:
    """Write ``text`` (UTF-8) to ``path`` atomically (see :func:`atomic_path`). Returns the path."""
    p = Path(path)
    with atomic_path(p) as tmp:
        tmp.write_text(text, encoding="utf-8")
    return p
