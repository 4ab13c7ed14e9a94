"""The ``comparisons`` records of a suite's ``summary.json`` (the reproduction contract of
``DESIGN.md``): one record per value of the paper a suite compares. Every study builds its
records with :func:`comparison`, so the rules below are defined once.

``kind`` says how a value's direction is judged: ``"gain"`` (an x-fold ratio against the paper's
baseline: an effect is > 1 or < 1), ``"change"`` (a relative change, e.g. -0.14: an effect is
> 0 or < 0) or ``"value"`` (a plain number with no baseline, e.g. a latency in seconds, a
violation rate, a node count).

``direction``:

* ``n/a`` for a plain value (it has no effect to point anywhere), and where the paper's or our
  number is missing or not finite;
* for a gain or a change, measured from its reference (1 or 0): ``same`` when both point the
  same way or both sit at the reference (no effect in either), ``opposite`` when they point
  opposite ways, ``n/a`` when exactly one sits at the reference (no effect on one side; its
  cause says why).

``cause`` is empty only when the direction is ``same`` (or ``n/a`` for a plain value) and
``ours / paper`` lies within 0.5-2; otherwise it is the caller's measured reason, or a default
that says what is missing.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Literal

__all__ = ["comparison", "needs_cause"]

Kind = Literal["gain", "change", "value"]

#: a number this close to its reference is no effect
_AT_REF = 1e-9


def _finite(x: float | None) -> float | None:
    if x is None or isinstance(x, bool):
        return None
    f = float(x)
    return f if math.isfinite(f) else None


def _direction(ours: float | None, paper: float | None, kind: Kind) -> str:
    if kind == "value" or ours is None or paper is None:
        return "n/a"
    ref = 1.0 if kind == "gain" else 0.0
    a, b = ours - ref, paper - ref
    at_a, at_b = abs(a) < _AT_REF, abs(b) < _AT_REF
    if at_a and at_b:
        return "same"
    if at_a or at_b:
        return "n/a"
    return "same" if (a > 0) == (b > 0) else "opposite"


def comparison(
    id: str,
    figure: str,
    label: str,
    paper: float | None,
    ours: float | None,
    *,
    kind: Kind = "value",
    cause: str = "",
    spread: Sequence[float] | None = None,
    digits: int | None = None,
) -> dict[str, Any]:
    """One record: ``id``, ``figure``, ``label``, ``paper``, ``ours`` (None where not finite),
    ``ratio`` (ours / paper, None where either is missing or the paper's is 0), ``direction``
    (``same`` / ``opposite`` / ``n/a``), ``cause`` (kept only where the record needs one, see
    :func:`needs_cause`) and ``spread`` (``[low, high]`` or ``None``). ``digits``: round the
    ratio to that many decimals (None: as computed)."""
    p, o = _finite(paper), _finite(ours)
    ratio = o / p if o is not None and p is not None and p != 0.0 else None
    if ratio is not None and digits is not None:
        ratio = round(ratio, digits)
    rec: dict[str, Any] = {
        "id": id,
        "figure": figure,
        "label": label,
        "paper": None if paper is None else float(paper),
        "ours": o,
        "ratio": ratio,
        "direction": _direction(o, p, kind),
        "cause": "",
        "spread": None if spread is None else [float(spread[0]), float(spread[1])],
    }
    if needs_cause(rec, kind):
        rec["cause"] = cause or _default_cause(rec, ours)
    return rec


def _default_cause(rec: dict[str, Any], ours: float | None) -> str:
    if ours is not None and rec["ours"] is None:
        return f"ours is {ours}: not a finite number"
    if rec["ours"] is None:
        return "not measured"
    if rec["paper"] is None:
        return "the paper gives no number"
    if rec["paper"] == 0.0:
        return "the paper's value is 0: no ratio"
    return "not measured"


def needs_cause(rec: dict[str, Any], kind: Kind = "value") -> bool:
    """A record needs a ``cause`` unless its direction is ``same`` (or ``n/a`` for a plain
    ``value``) and its ratio lies within 0.5-2 (a missing ratio is not within it)."""
    if rec["ours"] is None or rec["direction"] == "opposite":
        return True
    if rec["direction"] == "n/a" and kind != "value":
        return True
    r = rec["ratio"]
    return r is None or not (0.5 <= r <= 2.0)
