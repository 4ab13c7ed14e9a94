"""Check that a suite's outputs are unchanged by a refactor, file by file (issue 29).

Usage::

    npusched reproduce prema --quick --out /tmp/before/prema     # on the old commit
    npusched reproduce prema --quick --out /tmp/after/prema      # on the new commit
    python benchmarks/check_suite_outputs.py /tmp/before /tmp/after

Every file under BEFORE must exist under AFTER and vice versa. CSV, JSON, Markdown, TOML and
text files must be byte-identical except for provenance lines (the start/end timestamps,
the commit and the version; matched by ``PROVENANCE``), which are dropped before comparing.
Images (PNG, SVG, PDF) are compared byte for byte too; ``--skip-images`` leaves them out
(matplotlib writes no timestamp into a PNG, so they are normally identical). ``--ignore GLOB``
(repeatable; matched against each path relative to BEFORE / AFTER, e.g.
``'*/points/*'``) leaves files out on both sides, e.g. a store's point files when a change
moves a suite onto the shared store. Exit 0 when
everything matches, 1 with one line per difference otherwise.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Sequence
from fnmatch import fnmatch
from pathlib import Path

#: lines that carry provenance (when and from which commit), not results
PROVENANCE = re.compile(
    r'^\s*("?(started|finished|commit|version|generated|created)"?\s*[:=]|'
    r"[-*|]?\s*\**(started|finished|commit|version|generated)\**\s*[:|])",
    re.IGNORECASE,
)
TEXT = {".csv", ".json", ".md", ".toml", ".txt", ".html", ".yaml", ".yml"}
IMAGES = {".png", ".svg", ".pdf"}


def _lines(p: Path) -> list[bytes]:
    return [
        ln
        for ln in p.read_bytes().splitlines()
        if not PROVENANCE.match(ln.decode("utf-8", "replace"))
    ]


def compare(
    before: Path, after: Path, *, skip_images: bool = False, ignore: Sequence[str] = ()
) -> list[str]:
    """One line per difference between the trees ``before`` and ``after`` (paths matching a
    glob of ``ignore`` left out)."""

    def files(root: Path) -> set[Path]:
        return {
            p.relative_to(root)
            for p in root.rglob("*")
            if p.is_file()
            and not (skip_images and p.suffix.lower() in IMAGES)
            and p.suffix != ".log"
            and not any(fnmatch(p.relative_to(root).as_posix(), g) for g in ignore)
        }

    a, b = files(before), files(after)
    out = [f"only before: {p}" for p in sorted(a - b)]
    out += [f"only after: {p}" for p in sorted(b - a)]
    for rel in sorted(a & b):
        x, y = before / rel, after / rel
        if rel.suffix.lower() in TEXT:
            lx, ly = _lines(x), _lines(y)
            if lx != ly:
                n = next(
                    (i for i, (u, v) in enumerate(zip(lx, ly, strict=False)) if u != v),
                    min(len(lx), len(ly)),
                )
                out.append(f"differs: {rel} (first at kept line {n + 1})")
        elif x.read_bytes() != y.read_bytes():
            out.append(f"differs: {rel} (binary)")
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("before", type=Path)
    ap.add_argument("after", type=Path)
    ap.add_argument("--skip-images", action="store_true")
    ap.add_argument("--ignore", action="append", default=[], metavar="GLOB")
    args = ap.parse_args(argv)
    diffs = compare(args.before, args.after, skip_images=args.skip_images, ignore=args.ignore)
    n = sum(1 for p in args.before.rglob("*") if p.is_file())
    for d in diffs:
        print(d)
    print(f"{n} files before, {len(diffs)} difference(s)")
    return 1 if diffs else 0


if __name__ == "__main__":
    sys.exit(main())
