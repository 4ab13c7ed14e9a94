"""The one ``comparisons`` record of every study (DESIGN.md's reproduction contract, issue 29):
its direction and cause rules, and that every study builds its records with it."""

from __future__ import annotations

import ast
import math
from pathlib import Path

import pytest

from npusched.experiments.reproduce._fidelity import comparison

FIELDS = ["id", "figure", "label", "paper", "ours", "ratio", "direction", "cause", "spread"]
STUDIES = Path(__file__).parents[1] / "src" / "npusched" / "experiments" / "studies"


def _rec(paper: float | None, ours: float | None, kind: str, cause: str = "why") -> dict:
    return comparison("a/b", "Fig. 1", "x", paper, ours, kind=kind, cause=cause)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("paper", "ours", "kind", "direction", "cause"),
    [
        (7.8, 9.9, "gain", "same", ""),  # both gains, ratio 1.27
        (7.8, 20.0, "gain", "same", "why"),  # ratio 2.56: outside 0.5-2
        (1.4, 0.9, "gain", "opposite", "why"),  # a gain against a loss
        (1.0, 1.0, "gain", "same", ""),  # no effect in either
        (1.5, 1.0, "gain", "n/a", "why"),  # no effect on our side only
        (-0.14, -0.10, "change", "same", ""),
        (-0.14, 0.10, "change", "opposite", "why"),
        (0.0, 0.3, "change", "n/a", "why"),  # the paper's 0: no ratio, no direction
        (12.0, 10.0, "value", "n/a", ""),  # a plain value within 0.5-2
        (12.0, 5.0, "value", "n/a", "why"),  # a plain value at 0.42
        (-3.0, 3.0, "value", "n/a", "why"),  # a plain value: no direction, ratio -1
        (None, 2.0, "gain", "n/a", "why"),  # the paper gives no number
        (None, 2.0, "value", "n/a", "why"),
        (4.8, math.inf, "gain", "n/a", "why"),  # ours not finite: ours None
    ],
)
def test_rules(paper: float | None, ours: float | None, kind: str, direction: str, cause: str) -> None:
    r = _rec(paper, ours, kind)
    assert list(r) == FIELDS
    assert (r["direction"], r["cause"]) == (direction, cause)


def test_fields_and_defaults() -> None:
    r = comparison("a/b", "Fig. 1", "x", 2.0, 3.0, kind="gain", spread=(2.5, 3.5), digits=2)
    assert r["ratio"] == 1.5 and r["spread"] == [2.5, 3.5] and r["paper"] == 2.0
    assert comparison("a", "f", "l", 3.0, 1.0, kind="gain", digits=3)["ratio"] == 0.333
    # a cause is never left empty where one is needed; the default says what is missing
    assert _rec(None, 2.0, "gain", cause="")["cause"] == "the paper gives no number"
    assert _rec(4.8, None, "gain", cause="")["cause"] == "not measured"
    assert _rec(4.8, math.inf, "gain", cause="")["cause"] == "ours is inf: not a finite number"
    assert _rec(0.0, 0.3, "change", cause="")["cause"] == "the paper's value is 0: no ratio"
    assert comparison("a", "f", "l", 2.0, 3.0, kind="gain", cause="kept only if needed")["cause"] == ""


def test_every_study_uses_the_shared_record() -> None:
    """No study writes a record dict of its own: no module under ``studies/`` builds a dict
    literal with the contract's ``direction`` and ``ratio`` keys, and each study that writes
    ``comparisons`` imports :func:`comparison`."""
    users = set()
    for path in sorted(STUDIES.rglob("*.py")):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.Dict):
                keys = {k.value for k in node.keys if isinstance(k, ast.Constant)}
                assert not {"direction", "ratio"} <= keys, f"{path}:{node.lineno}"
            if isinstance(node, ast.ImportFrom) and node.module == (
                "npusched.experiments.reproduce._fidelity"
            ):
                users.add(path.parent.name)
    assert users == {"prema", "planaria", "dfs", "fluid", "haxconn"}
