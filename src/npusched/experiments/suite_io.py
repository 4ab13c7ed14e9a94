"""Reading suite files, generic over the schema (no study imported here).

Each study's ``suite.py`` declares its pydantic model; this module loads a packaged or user
TOML file into a GIVEN model (:func:`parse_suite_as`, :func:`load_suite_as`), with the one-line
errors ``<file>: <field.path>: <problem>; allowed: ...``, and reads ``--set KEY=VALUE``
(:func:`set_overrides`). The registry of suites (name -> model) and the conversions to sweeps
live above, in :mod:`npusched.experiments.suite_files`, which re-exports these names.
"""

from __future__ import annotations

import copy
import os
import tomllib
import typing
from collections.abc import Callable, Mapping, Sequence
from importlib.resources import files
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from npusched.errors import ConfigError
from npusched.experiments.config import read_config_data

__all__ = [
    "load_suite_as",
    "packaged_suite_file",
    "parse_suite_as",
    "set_overrides",
    "toml_value",
]

M = TypeVar("M", bound=BaseModel)


def packaged_suite_file(name: str) -> Path:
    """The packaged file of suite ``name`` (``npusched/data/experiments/suites/<name>.toml``);
    the name is not checked here (:func:`npusched.experiments.suite_files.packaged_suite` does)."""
    return Path(str(files("npusched") / "data" / "experiments" / "suites" / f"{name}.toml"))


def _merge(base: Mapping[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    """``base`` with ``over``'s keys; a table in both merges key by key."""
    out = copy.deepcopy(dict(base))
    for k, v in over.items():
        if isinstance(v, Mapping) and isinstance(out.get(k), Mapping):
            out[k] = _merge(out[k], v)
        else:
            out[k] = copy.deepcopy(v)
    return out


def _model_at(model: type[BaseModel], loc: Sequence[Any]) -> type[BaseModel] | None:
    """The pydantic model a location inside ``model`` names (for "allowed:" lists)."""
    cur: type[BaseModel] = model
    for part in loc:
        if isinstance(part, int):
            continue
        field = cur.model_fields.get(str(part))
        if field is None:
            return None
        nxt = _model_in(field.annotation)
        if nxt is None:
            return None
        cur = nxt
    return cur


def _model_in(tp: Any) -> type[BaseModel] | None:
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        return tp
    for arg in typing.get_args(tp):
        found = _model_in(arg)
        if found is not None:
            return found
    return None


def _clean_loc(loc: Sequence[Any]) -> list[Any]:
    return [
        p
        for p in loc
        if not (
            isinstance(p, str)
            and (
                "[" in p
                or p.startswith(("constrained-", "function-", "literal"))
                or p in {"float", "int", "str", "bool", "tuple", "list"}
            )
        )
    ]


def _dotted(loc: Sequence[Any]) -> str:
    s = ""
    for p in loc:
        s += f"[{p}]" if isinstance(p, int) else (f".{p}" if s else str(p))
    return s or "(top level)"


def _format(
    source: str, exc: ValidationError, model: type[BaseModel], prefix: Callable[[str], str]
) -> str:
    """One line for the most specific error of the first field that failed."""
    errors = exc.errors(include_url=False)
    first = _clean_loc(errors[0]["loc"])[:1]
    same = [e for e in errors if _clean_loc(e["loc"])[:1] == first]
    err = max(same, key=lambda e: len(_clean_loc(e["loc"])))
    loc = _clean_loc(err["loc"])
    where = prefix(_dotted(loc))
    if where.startswith("--"):  # a command-line option: the file is not at fault
        source = "reproduce"
    kind = err["type"]
    ctx = err.get("ctx") or {}
    if kind == "extra_forbidden":
        sub = _model_at(model, loc[:-1])
        tail = f"; allowed: {', '.join(sub.model_fields)}" if sub is not None else ""
        return f"{source}: {where}: unknown key{tail}"
    if kind == "missing":
        return f"{source}: {where}: missing required key"
    lits = [e for e in same if e["type"] == "literal_error"]
    if lits and len(lits) < len(same):
        # a union with a literal branch ("all", "calibrate"): name both kinds of value
        other = next(e for e in same if e["type"] != "literal_error")
        lit_ctx = lits[0].get("ctx") or {}
        expected = str(lit_ctx.get("expected", "")).replace("'", "").replace(" or ", ", ")
        msg = str(other["msg"])
        return (
            f"{source}: {prefix(_dotted(_clean_loc(other['loc'])))}: "
            f"{msg[:1].lower() + msg[1:]}, or {expected} (got {other.get('input')!r})"
        )
    if kind == "literal_error":
        expected = str(ctx.get("expected", "")).replace("'", "").replace(" or ", ", ")
        return f"{source}: {where}: invalid value {err.get('input')!r}; allowed: {expected}"
    if kind == "value_error":
        inner = ctx.get("error")
        text = str(inner) if inner is not None else str(err["msg"])
        field, sep, rest = text.partition(": ")
        if not loc and sep and field in model.model_fields:
            # a check across fields names the field it is about first
            where, text = prefix(field), rest
        return f"{source}: {where}: {text}".replace("\n", " ")
    msg = str(err["msg"])
    return f"{source}: {where}: {msg[:1].lower() + msg[1:]} (got {err.get('input')!r})".replace(
        "\n", " "
    )


def parse_suite_as(
    model: type[M],
    data: Mapping[str, Any],
    source: str = "<suite>",
    *,
    quick: bool = False,
    overrides: Mapping[str, tuple[str, Any]] | None = None,
) -> M:
    """Validate a suite file given as a mapping against ``model`` and return its full or quick
    parameters (the file's ``suite`` key is checked by the model, or by the caller).

    Args:
        model: the suite's schema.
        data: the file's content.
        source: the file, for error messages.
        quick: return the parameters with ``[quick]`` applied.
        overrides: field -> ``(option, value)`` from the command line (``runs`` ->
            ``("--runs", 5)``), applied last; a bad value is reported against the option.
    """
    if not isinstance(data, Mapping):
        raise ConfigError(f"{source}: (top level): expected a table of keys")
    body = {k: v for k, v in data.items() if k != "quick"}
    quick_over = data.get("quick", {})
    if not isinstance(quick_over, Mapping):
        raise ConfigError(f"{source}: quick: expected a table of the parameters --quick changes")
    if "suite" in quick_over:
        raise ConfigError(f"{source}: quick.suite: the suite cannot change in quick mode")

    def validate(d: Mapping[str, Any], quick_keys: Mapping[str, Any]) -> M:
        cli = overrides or {}

        def prefix(where: str) -> str:
            head = where.split(".")[0].split("[")[0]
            if head in cli:
                return cli[head][0]
            return f"quick.{where}" if head in quick_keys else where

        try:
            return model.model_validate(dict(d))
        except ValidationError as e:
            raise ConfigError(_format(source, e, model, prefix)) from None

    cli_values = {k: v for k, (_, v) in (overrides or {}).items()}
    if not quick:
        return validate(_merge(body, cli_values), {})
    validate(body, {})  # the full parameters must be valid too
    return validate(_merge(_merge(body, quick_over), cli_values), quick_over)


def load_suite_as(
    model: type[M],
    name: str,
    path: str | os.PathLike[str] | None = None,
    *,
    quick: bool = False,
    overrides: Mapping[str, tuple[str, Any]] | None = None,
) -> M:
    """The parameters of suite ``name`` as ``model`` from ``path`` (default: its packaged
    file); a file of another suite is refused."""
    p = Path(path) if path is not None else packaged_suite_file(name)
    data = read_config_data(p)
    if isinstance(data, Mapping) and data.get("suite") != name:
        kind = data.get("suite")
        what = "missing" if kind is None else f"this file is the {kind!r} suite, not {name!r}"
        raise ConfigError(f"{p}: suite: {what}; allowed: {name}")
    return parse_suite_as(model, data, str(p), quick=quick, overrides=overrides)


def toml_value(text: str) -> Any:
    """A command-line value as ``--set`` reads it: a TOML value (``5``, ``1.5``, ``true``,
    ``["a", "b"]``, ``{load = 1.2}``), else the plain string (``planaria``)."""
    try:
        return tomllib.loads(f"v = {text.strip()}")["v"]
    except tomllib.TOMLDecodeError:
        return text.strip()


def set_overrides(values: Sequence[str] | None) -> dict[str, tuple[str, Any]]:
    """``--set KEY=VALUE`` options as :func:`parse_suite` ``overrides``.

    ``KEY`` is a suite-file key, dotted for a key inside a table (``setup.load=1.2``);
    ``VALUE`` is read as a TOML value (``5``, ``1.5``, ``true``, ``["a", "b"]``, ``"x"``) and
    taken as a plain string if it is not one (``device=planaria``). Several ``--set`` for keys
    of one table merge. A bad value is reported against ``--set KEY``."""
    out: dict[str, tuple[str, Any]] = {}
    for raw in values or ():
        key, eq, text = raw.partition("=")
        key = key.strip()
        parts = key.split(".")
        if not eq or not key or any(not p.strip() for p in parts):
            raise ConfigError(
                f"--set {raw!r}: expected KEY=VALUE; allowed: a suite-file key (dotted inside a "
                "table, e.g. setup.load=1.2) and a TOML value"
            )
        value: Any = toml_value(text)
        for part in reversed(parts[1:]):
            value = {part.strip(): value}
        head = parts[0].strip()
        if head in out and isinstance(out[head][1], dict) and isinstance(value, dict):
            value = _merge(out[head][1], value)
        elif head in out:
            raise ConfigError(f"--set {key}: given twice")
        out[head] = (f"--set {key}" if len(parts) == 1 else f"--set {head}", value)
    return out
