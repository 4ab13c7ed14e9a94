"""Check that a refactor left a suite's outputs unchanged where the suite itself is repeatable.

Some suites (``reproduce haxconn``) write wall-clock solver times and time-limited anytime
results, so two runs of the same commit differ. This check takes a second run of the old commit
as the measure of that noise:

    npusched reproduce haxconn --quick --out /tmp/before/haxconn    # old commit
    npusched reproduce haxconn --quick --out /tmp/before2/haxconn   # old commit again
    npusched reproduce haxconn --quick --out /tmp/after/haxconn     # new commit
    python benchmarks/check_noisy_outputs.py /tmp/before /tmp/before2 /tmp/after

For every file: the same set of files must exist in BEFORE and AFTER. A text file's lines that
are equal in BEFORE and BEFORE2 must be equal in AFTER; in a CSV, a row that differs between the
two old runs must still be equal in AFTER on every column that did not differ. JSON files are
compared leaf by leaf the same way. Images are compared byte for byte when the two old runs
agree on them. Exit 0 when everything the old runs repeat is repeated, 1 with one line per
difference otherwise; the noise (columns, keys, files) is printed too.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from check_suite_outputs import IMAGES, _lines


def _leaves(v: Any, path: str = "") -> dict[str, Any]:
    if isinstance(v, dict):
        out: dict[str, Any] = {}
        for k, x in v.items():
            out.update(_leaves(x, f"{path}/{k}"))
        return out
    if isinstance(v, list):
        out = {}
        for i, x in enumerate(v):
            out.update(_leaves(x, f"{path}[{i}]"))
        return out
    return {path: v}


def _csv_rows(p: Path) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(p.read_text(encoding="utf-8"))))


def compare(before: Path, before2: Path, after: Path) -> tuple[list[str], list[str]]:
    """``(differences, noise)``: one line each."""
    def files(root: Path) -> set[Path]:
        return {p.relative_to(root) for p in root.rglob("*") if p.is_file() and p.suffix != ".log"}

    a, c = files(before), files(after)
    diffs = [f"only before: {p}" for p in sorted(a - c)] + [f"only after: {p}" for p in sorted(c - a)]
    noise: list[str] = []
    for rel in sorted(a & c):
        x, x2, y = before / rel, before2 / rel, after / rel
        suf = rel.suffix.lower()
        if suf == ".csv":
            rx, r2, ry = _csv_rows(x), _csv_rows(x2), _csv_rows(y)
            if len(rx) != len(ry) or (rx and list(rx[0]) != list(ry[0])):
                diffs.append(f"differs: {rel} (shape or columns)")
                continue
            noisy = sorted({k for u, v in zip(rx, r2, strict=False) for k in u if u[k] != v.get(k)})
            if noisy:
                noise.append(f"noise: {rel} columns {noisy}")
            bad = [(i, k) for i, (u, v) in enumerate(zip(rx, ry, strict=True)) for k in u
                   if k not in noisy and u[k] != v[k]]
            if bad:
                diffs.append(f"differs: {rel} (row {bad[0][0] + 1}, column {bad[0][1]!r})")
        elif suf == ".json":
            lx, l2, ly = (_leaves(json.loads(p.read_text(encoding="utf-8"))) for p in (x, x2, y))
            noisy_k = {k for k in lx if lx[k] != l2.get(k)}
            if noisy_k:
                noise.append(f"noise: {rel} {len(noisy_k)} leaves, e.g. {sorted(noisy_k)[:3]}")
            if set(lx) != set(ly):
                diffs.append(f"differs: {rel} (keys)")
                continue
            bad_k = sorted(k for k in lx if k not in noisy_k and lx[k] != ly[k])
            if bad_k:
                diffs.append(f"differs: {rel} ({bad_k[0]})")
        elif suf in IMAGES:
            same_old = x.read_bytes() == x2.read_bytes()
            if not same_old:
                noise.append(f"noise: {rel} (image)")
            elif x.read_bytes() != y.read_bytes():
                diffs.append(f"differs: {rel} (binary)")
        else:
            lx, l2, ly = _lines(x), _lines(x2), _lines(y)
            if len(lx) != len(ly):
                diffs.append(f"differs: {rel} (line count)")
                continue
            noisy_l = {i for i, (u, v) in enumerate(zip(lx, l2, strict=False)) if u != v}
            if noisy_l:
                noise.append(f"noise: {rel} {len(noisy_l)} lines")
            bad_l = [i for i, (u, v) in enumerate(zip(lx, ly, strict=True)) if i not in noisy_l and u != v]
            if bad_l:
                diffs.append(f"differs: {rel} (line {bad_l[0] + 1})")
    return diffs, noise


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("before", type=Path)
    ap.add_argument("before2", type=Path)
    ap.add_argument("after", type=Path)
    args = ap.parse_args(argv)
    diffs, noise = compare(args.before, args.before2, args.after)
    for line in noise + diffs:
        print(line)
    n = sum(1 for p in args.before.rglob("*") if p.is_file())
    print(f"{n} files before, {len(noise)} with run-to-run noise, {len(diffs)} difference(s)")
    return 1 if diffs else 0


if __name__ == "__main__":
    sys.exit(main())
