"""Where a report's numbers come from: package version, git commit, date, command, quick or full.

``npusched reproduce all`` writes ``provenance.json`` into its output directory
(:func:`write_provenance`); ``npusched report`` reads it (:func:`read_provenance`) and adds the
time the report itself was written. A directory without the file gets the report's own
process (its command line, version and commit) and mode ``unknown``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from npusched import __version__
from npusched._io import atomic_write_text

__all__ = ["FILE", "current", "git_commit", "read_provenance", "write_provenance"]

FILE = "provenance.json"


def git_commit() -> str | None:
    """The git commit of the source tree npusched runs from (``-dirty`` when it has
    uncommitted changes), or ``None`` outside a git checkout (an installed wheel)."""
    here = Path(__file__).resolve().parent
    if "site-packages" in here.parts or "dist-packages" in here.parts:
        return None  # an installed copy: a surrounding checkout is not where it came from
    try:
        out = subprocess.run(
            ["git", "-C", str(here), "describe", "--always", "--dirty", "--abbrev=12"],
            capture_output=True,
            text=True,
            timeout=5,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    text = out.stdout.strip()
    return text if out.returncode == 0 and text else None


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def current(quick: bool | None = None) -> dict[str, Any]:
    """Provenance of this process: version, commit, UTC date, command line, mode."""
    argv = [Path(sys.argv[0]).name, *sys.argv[1:]] if sys.argv and sys.argv[0] else []
    return {
        "version": __version__,
        "commit": git_commit(),
        "date": _now(),
        "command": " ".join(argv),
        "mode": "unknown" if quick is None else ("quick" if quick else "full"),
        "python": sys.version.split()[0],
    }


def write_provenance(directory: str | Path, *, quick: bool, started: str | None = None) -> Path:
    """Write ``provenance.json`` into ``directory``: :func:`current` plus ``started`` (the
    UTC time the run began) and ``finished`` (now)."""
    rec = current(quick)
    rec["started"] = started or rec["date"]
    rec["finished"] = rec["date"]
    return atomic_write_text(Path(directory) / FILE, json.dumps(rec, indent=2) + "\n")


def read_provenance(directory: str | Path) -> dict[str, Any]:
    """``provenance.json`` of ``directory`` if there is a readable one, else :func:`current`;
    ``report_date`` and ``report_command`` always describe the process writing the report."""
    now = current()
    rec: dict[str, Any] = dict(now)
    p = Path(directory) / FILE
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
        if isinstance(data, dict):
            rec.update({k: v for k, v in data.items() if v is not None})
            rec["from_file"] = str(p)
    except (OSError, ValueError):
        pass
    rec["report_date"] = now["date"]
    rec["report_command"] = now["command"]
    return rec
