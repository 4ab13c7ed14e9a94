"""Atomic file writes shared by every module that writes results (records, summaries, traces,
timelines, plots, reproduction reports).

A file is written to a hidden temporary file in the target's directory (same file system, so the
final rename is atomic), flushed to disk, then renamed onto the target; on any error the
temporary file is removed. A reader therefore sees either the old file or the complete new one,
never a half-written file, even if the process is killed.

:func:`check_out_dir` and :func:`check_out_file` check, before any work, that an output
directory or file can be written (every command's ``--out``).
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from npusched.errors import ConfigError

__all__ = ["atomic_path", "atomic_write_text", "check_out_dir", "check_out_file", "temp_path"]


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


def check_out_dir(out_dir: str | os.PathLike[str], *, option: str = "--out") -> None:
    """Fail before simulating if ``out_dir`` cannot become the output directory: it is a file,
    sits below a file, or its nearest existing ancestor is not writable (probed by creating
    and removing a temporary directory there: permission bits do not tell for root or for
    ``/proc``). Leaves nothing behind. ``option`` names the option in the message."""
    if str(out_dir).strip() == "":
        raise ConfigError(f"{option}: empty path; name an output directory (e.g. out/run)")
    d = Path(out_dir)
    if d.exists() and not d.is_dir():
        raise ConfigError(f"{d}: {option} must be a directory, but a file of that name exists")
    parent = d
    while not parent.exists() and parent != parent.parent:
        parent = parent.parent
    if not parent.is_dir():
        raise ConfigError(
            f"{d}: {option}: cannot create the output directory: {parent} is not a directory"
        )
    _probe_writable(parent, d, option)


def _probe_writable(parent: Path, target: Path, option: str) -> None:
    import tempfile

    try:
        os.rmdir(tempfile.mkdtemp(prefix=".npusched-probe-", dir=parent))
    except OSError as e:
        raise ConfigError(
            f"{target}: {option}: cannot write there: {parent}: {e.strerror or e}"
        ) from None


def check_out_file(path: str | os.PathLike[str], *, option: str = "--out") -> None:
    """Fail before any work if ``path`` cannot be written as a file: it is a directory, its
    directory does not exist, or that directory is not writable. Leaves nothing behind."""
    if str(path).strip() == "":
        raise ConfigError(f"{option}: empty path; name an output file")
    p = Path(path)
    if p.is_dir():
        raise ConfigError(f"{p}: {option} must be a file, but it is a directory")
    if not p.parent.is_dir():
        raise ConfigError(f"{p}: {option}: the directory {p.parent} does not exist")
    _probe_writable(p.parent, p, option)
