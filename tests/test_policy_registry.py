"""The one policy registry (issue 29): every policy has a kind, names are unique across kinds,
the built-ins are filled in one place, and the old per-kind names keep working."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import npusched
from npusched.errors import ConfigError, NpuschedError, UnknownNameError
from npusched.policies.catalog import BUILTINS
from npusched.policies.registry import KINDS, MACHINE_POLICIES, POLICIES, POWER_POLICIES, REGISTRY

SRC = Path(npusched.__file__).parent


def test_every_builtin_has_a_kind_and_one_name() -> None:
    names = REGISTRY.names()
    assert len(names) == len(set(names))
    assert {k for k, _, _ in BUILTINS} == set(KINDS)
    assert [n for k, n, _ in BUILTINS if k == "temporal"] == POLICIES.names()[:12]
    assert REGISTRY.kind_of("P-PREMA") == "temporal"
    assert REGISTRY.kind_of("planaria") == "machine"  # case-insensitive fallback
    assert REGISTRY.kind_of("DFS") == "power"
    assert REGISTRY.names("power") == POWER_POLICIES.names() == ["DFS", "DVFS"]
    assert MACHINE_POLICIES.names() == REGISTRY.names("machine")


def test_public_names_are_views_of_the_one_registry() -> None:
    assert npusched.POLICIES is POLICIES and npusched.MACHINE_POLICIES is MACHINE_POLICIES
    from npusched.policies.base import POLICIES as base_policies
    from npusched.policies.machine import MACHINE_POLICIES as m
    from npusched.policies.power import POWER_POLICIES as p

    assert base_policies is POLICIES and m is MACHINE_POLICIES and p is POWER_POLICIES
    assert "P-PREMA" in POLICIES and "P-PREMA" not in MACHINE_POLICIES
    assert POWER_POLICIES.create("DFS", cap_w=30.0).name == "DFS"


def test_a_name_is_unique_across_kinds() -> None:
    with pytest.raises(NpuschedError, match="registered as machine and temporal"):
        POLICIES.register("Planaria", object)
    with pytest.raises(NpuschedError, match="duplicate machine policy name 'FluidB'"):
        MACHINE_POLICIES.register("FluidB", object)
    with pytest.raises(UnknownNameError, match="unknown power policy 'FluidB'"):
        POWER_POLICIES.get("FluidB")
    with pytest.raises(ConfigError, match="policy kind 'x': unknown"):
        REGISTRY.register("x", "X", object)  # type: ignore[arg-type]


def test_registered_scope_and_errors() -> None:
    class Mine(npusched.policies.TemporalPolicyBase):  # type: ignore[misc,name-defined]
        name = "MINE"

    with npusched.registered(policies={"MINE": Mine}):
        assert REGISTRY.kind_of("MINE") == "temporal"
        assert "MINE" in POLICIES.names()
    assert "MINE" not in REGISTRY.names()
    with pytest.raises(UnknownNameError, match="unknown policy 'MINE'"):
        POLICIES.get("MINE")


def test_implementations_do_not_register_themselves() -> None:
    """Only the catalog fills the registry: no policy module imports it to register."""
    for f in (SRC / "policies").rglob("*.py"):
        if f.name in ("registry.py", "catalog.py", "base.py", "machine.py"):
            continue
        tree = ast.parse(f.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and node.attr == "register":
                assert not (
                    isinstance(node.value, ast.Name) and node.value.id.endswith("POLICIES")
                ), f"{f}: registers a policy itself"


def test_keyword_names_read_once_per_factory_as_the_signature_gives_them() -> None:
    """``unknown_keyword`` reads a factory's keyword names once (``_keywords``, kept per
    factory) and answers as a fresh read of the signature does: the first keyword not taken
    with the names taken, none for ``**kwargs``, an unhashable factory read every time."""
    import inspect

    from npusched.registry import _keywords, unknown_keyword

    class Kw:
        def __init__(self, a: int, *, b: int = 0) -> None: ...

    def anything(x: int, **kwargs: object) -> None: ...

    class Unhashable:
        __hash__ = None  # type: ignore[assignment]

        def __call__(self, c: int, d: int = 0) -> None: ...

    def fresh(f: object, keys: list[str]) -> tuple[str, list[str]] | None:
        ps = inspect.signature(f).parameters.values()  # type: ignore[arg-type]
        if any(p.kind is p.VAR_KEYWORD for p in ps):
            return None
        names = [p.name for p in ps if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
        bad = next((k for k in keys if k not in names), None)
        return None if bad is None else (bad, names)

    cases: list[tuple[object, list[str]]] = [
        (Kw, ["a"]), (Kw, ["b", "z"]), (Kw, []), (anything, ["q"]),
        (Unhashable(), ["c"]), (Unhashable(), ["e"]),
    ]
    for f, keys in cases * 2:
        assert unknown_keyword(f, keys) == fresh(f, keys)  # type: ignore[arg-type]
    assert unknown_keyword(Kw, ["z"]) == ("z", ["a", "b"])
    hits = _keywords.cache_info().hits
    assert unknown_keyword(Kw, ["a"]) is None
    assert _keywords.cache_info().hits == hits + 1  # kept: the signature is not read again
