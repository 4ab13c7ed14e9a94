"""A study's parameters as data for a command line: one :class:`StudyParam` per field of the
study's suite model (:data:`npusched.experiments.suite_files.SUITE_MODELS`), with its suite-file
key, kind, type, description (the model's ``Attributes:`` docstring) and the packaged file's
value. ``npusched reproduce NAME`` derives its options from these, so a field added to a model
is at once a suite-file key, a ``--set KEY=VALUE`` and a ``--KEY`` option.

Option values are read as ``--set`` reads them (:func:`~npusched.experiments.suite_files.
toml_value`: a TOML value, else a plain string); a list of scalars is a repeatable option
(``--networks vgg-16 --networks resnet-18``), a switch a ``--KEY/--no-KEY`` flag pair, any
other field one TOML value (``--setup '{load = 1.2}'``, merged key by key into the file's
table as ``--set setup.load=1.2`` is).
"""

from __future__ import annotations

import inspect
import re
import tomllib
import types
import typing
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel

__all__ = ["FLAG", "MULTI", "VALUE", "StudyParam", "option_overrides", "study_params"]

#: kinds of option: a switch, a repeatable scalar (a list field), one TOML value
FLAG, MULTI, VALUE = "flag", "multi", "value"
#: suite-file keys that are not parameters
_NOT_PARAMS = ("suite", "description")


@dataclass(frozen=True)
class StudyParam:
    """One parameter of a study.

    Attributes:
        key: the suite-file key (the model's field name).
        kind: :data:`FLAG`, :data:`MULTI` or :data:`VALUE`.
        type: the allowed values in words (``integer``, ``list of number``, ``one of a, b``).
        description: the field's description (from the model's ``Attributes:`` docstring).
        default: the value the packaged suite file gives it (the full run), as TOML text;
            ``""`` where the file leaves it to the model's default and there is none.
        literals: the single values a list field also accepts (``experiments = "all"``).
    """

    key: str
    kind: str
    type: str
    description: str
    default: str
    literals: tuple[Any, ...] = ()

    @property
    def option(self) -> str:
        """The option's name, ``--`` and the key with dashes (``cap_w`` -> ``--cap-w``)."""
        return "--" + self.key.replace("_", "-")


def _unwrap(tp: Any) -> Any:
    while typing.get_origin(tp) is typing.Annotated:
        tp = typing.get_args(tp)[0]
    return tp


def _branches(tp: Any) -> list[Any]:
    tp = _unwrap(tp)
    if typing.get_origin(tp) in (typing.Union, types.UnionType):
        return [b for arg in typing.get_args(tp) for b in _branches(arg)]
    return [tp]


def _scalar(tp: Any) -> bool:
    tp = _unwrap(tp)
    return tp in (str, int, float) or typing.get_origin(tp) is Literal


def _words(tp: Any) -> str:
    tp = _unwrap(tp)
    origin = typing.get_origin(tp)
    if origin is Literal:
        return "one of " + ", ".join(str(a) for a in typing.get_args(tp))
    if origin in (list, tuple):
        args = [a for a in typing.get_args(tp) if a is not Ellipsis]
        inner = {_words(a) for a in args}
        return ("list of " if origin is list else "pair of ") + " / ".join(sorted(inner))
    if origin in (typing.Union, types.UnionType):
        return " or ".join(_words(b) for b in _branches(tp))
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        return "table (" + ", ".join(tp.model_fields) + ")"
    return {bool: "true/false", int: "integer", float: "number", str: "text"}.get(tp, str(tp))


def _kind(tp: Any) -> tuple[str, tuple[Any, ...]]:
    branches = _branches(tp)
    if all(b is bool for b in branches):
        return FLAG, ()
    lists = [b for b in branches if typing.get_origin(b) is list]
    if lists and all(_scalar(a) for a in typing.get_args(lists[0])):
        lits = tuple(
            a
            for b in branches
            if typing.get_origin(b) is Literal
            for a in typing.get_args(b)
        )
        return MULTI, lits
    return VALUE, ()


def _descriptions(model: type[BaseModel]) -> dict[str, str]:
    """``name: text`` entries of the ``Attributes:`` sections of ``model``'s docstring (its
    continuation lines joined; entries naming two fields, ``a, b: ...``, give both)."""
    doc = inspect.cleandoc(model.__doc__ or "")
    out: dict[str, str] = {}
    inside, cur = False, None
    for line in doc.splitlines():
        if line.strip() == "Attributes:":
            inside, cur = True, None
            continue
        if not inside:
            continue
        if line and not line.startswith(" "):
            inside = False
            continue
        m = re.match(r"^ {4}([a-z_][a-z0-9_, ]*):\s*(.*)$", line)
        if m:
            cur = [k.strip() for k in m.group(1).split(",")]
            for k in cur:
                out[k] = m.group(2).strip()
        elif cur and line.startswith("        "):
            for k in cur:
                out[k] += " " + line.strip()
    def plain(v: str) -> str:  # reST roles and literals as Markdown code
        return re.sub(r"``([^`]+)``", r"`\1`", re.sub(r":[a-z]+:`~?", "`", v))

    return {k: plain(v) for k, v in out.items()}


def _toml_text(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, str):
        return v
    if isinstance(v, int | float):
        return f"{v:g}" if isinstance(v, float) else str(v)
    if isinstance(v, list | tuple):
        return "[" + ", ".join(_toml_text(x) for x in v) + "]"
    if isinstance(v, Mapping):
        return "{" + ", ".join(f"{k} = {_toml_text(x)}" for k, x in v.items()) + "}"
    return str(v)


def study_params(name: str) -> list[StudyParam]:
    """The parameters of study ``name`` (its suite model's fields, in declaration order, but
    ``suite`` and ``description``), with the packaged suite file's values as defaults."""
    from npusched.experiments.suite_files import SUITE_MODELS, packaged_suite

    model = SUITE_MODELS[name]
    with open(packaged_suite(name), "rb") as fh:
        data = tomllib.load(fh)
    docs = _descriptions(model)
    out = []
    for key, field in model.model_fields.items():
        if key in _NOT_PARAMS:
            continue
        kind, lits = _kind(field.annotation)
        if key in data:
            default = _toml_text(data[key])
        elif not field.is_required():
            default = _toml_text(field.default)
        else:
            default = ""
        out.append(
            StudyParam(
                key=key,
                kind=kind,
                type=_words(field.annotation),
                description=docs.get(key, ""),
                default=default,
                literals=lits,
            )
        )
    return out


def option_overrides(
    params: Sequence[StudyParam], given: Mapping[str, Any], names: Mapping[str, str]
) -> dict[str, tuple[str, Any]]:
    """The options given on a command line as suite-file overrides (``key -> (option,
    value)``, :func:`~npusched.experiments.suite_files.parse_suite`'s ``overrides``).

    Args:
        params: the study's parameters.
        given: key -> the option's raw value (``None`` or ``[]``: not given): a bool for a
            flag, a list of strings for a repeatable option, a string otherwise.
        names: key -> the option name to report a bad value against (default
            :attr:`StudyParam.option`).
    """
    from npusched.experiments.suite_files import toml_value

    out: dict[str, tuple[str, Any]] = {}
    for p in params:
        raw = given.get(p.key)
        if raw is None or (p.kind == MULTI and not raw):
            continue
        opt = names.get(p.key, p.option)
        if p.kind == FLAG:
            value: Any = bool(raw)
        elif p.kind == MULTI:
            items = [toml_value(str(x)) for x in raw]
            value = items[0] if len(items) == 1 and items[0] in p.literals else items
        else:
            value = toml_value(str(raw))
        out[p.key] = (opt, value)
    return out
