"""The ``comparisons`` records of a suite's ``summary.json`` (the reproduction contract of
``DESIGN.md``): one record per value of the paper a suite compares.

``kind`` says how a value's direction is judged: ``"gain"`` (an x-fold ratio against the paper's
baseline: an effect is > 1 or < 1), ``"change"`` (a relative change, e.g. -0.14: an effect is
> 0 or < 0) or ``"value"`` (an absolute number, e.g. a latency in seconds: ``n/a``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Literal

__all__ = ["comparison", "needs_cause"]

Kind = Literal["gain", "change", "value"]


def _sign(x: float, kind: Kind) -> int:
    ref = 1.0 if kind == "gain" else 0.0
    return 0 if x == ref else (1 if x > ref else -1)


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
) -> dict[str, Any]:
    """One record: ``id``, ``figure``, ``label``, ``paper``, ``ours``, ``ratio`` (ours / paper),
    ``direction`` (``same`` / ``opposite`` / ``n/a``), ``cause`` (kept only where the record needs
    one, see :func:`needs_cause`) and ``spread`` (``[low, high]`` or ``None``)."""
    ok = (
        paper is not None
        and ours is not None
        and math.isfinite(paper)
        and math.isfinite(ours)
    )
    ratio = float(ours) / float(paper) if ok and paper != 0 else None  # type: ignore[arg-type]
    if kind == "value" or not ok:
        direction = "n/a"
    else:
        same = _sign(float(ours), kind) == _sign(float(paper), kind)  # type: ignore[arg-type]
        direction = "same" if same else "opposite"
    rec: dict[str, Any] = {
        "id": id,
        "figure": figure,
        "label": label,
        "paper": None if paper is None else float(paper),
        "ours": None if ours is None or not math.isfinite(ours) else float(ours),
        "ratio": ratio,
        "direction": direction,
        "cause": "",
        "spread": None if spread is None else [float(spread[0]), float(spread[1])],
    }
    if needs_cause(rec):
        rec["cause"] = cause or "not measured"
    return rec


def needs_cause(rec: dict[str, Any]) -> bool:
    """A record needs a ``cause`` unless its direction is ``same`` (or ``n/a`` for an absolute
    value) and its ratio lies within 0.5-2."""
    if rec["ours"] is None:
        return True
    if rec["direction"] == "opposite":
        return True
    r = rec["ratio"]
    return r is not None and not (0.5 <= r <= 2.0)
