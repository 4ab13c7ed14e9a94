"""JSON Schema export of the input files (``npusched schema``).

The schemas come from the pydantic models that validate the files, so they never drift from
what the loaders accept:

* ``run``: a run config (``npusched run CONFIG``; :class:`~npusched.experiments.config.RunConfig`);
* ``experiment``: an experiment file (``npusched sweep FILE``;
  :class:`~npusched.experiments.sweep.ExperimentFile`);
* ``suite-<name>``: a reproduce suite's file (``npusched reproduce NAME --config FILE``;
  :data:`~npusched.experiments.suite_files.SUITE_MODELS`).
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel

from npusched.errors import ConfigError

__all__ = ["SCHEMA_NAMES", "json_schema", "schema_models"]


def schema_models() -> dict[str, type[BaseModel]]:
    """Every exported file kind, name -> pydantic model, in a stable order."""
    from npusched.experiments.config import RunConfig
    from npusched.experiments.suite_files import SUITE_MODELS
    from npusched.experiments.sweep import ExperimentFile

    models: dict[str, type[BaseModel]] = {"run": RunConfig, "experiment": ExperimentFile}
    for name, model in SUITE_MODELS.items():
        models[f"suite-{name}"] = model
    return models


SCHEMA_NAMES = ("run", "experiment", "suite-<name>")


def json_schema(name: str) -> dict[str, Any]:
    """The JSON Schema (draft 2020-12, as pydantic writes it) of the file kind ``name``.

    Raises:
        ConfigError: ``name`` is not an exported kind.
    """
    models = schema_models()
    if name not in models:
        raise ConfigError(f"schema: {name!r}: unknown file kind; allowed: {', '.join(models)}")
    schema = models[name].model_json_schema()
    schema.setdefault("$schema", "https://json-schema.org/draft/2020-12/schema")
    schema.setdefault("title", models[name].__name__)
    return schema


def _type_text(prop: dict[str, Any]) -> str:
    """A JSON Schema property's type, short: ``integer``, ``list[string]``, ``A | null``."""
    if "$ref" in prop:
        name = str(prop["$ref"]).rsplit("/", 1)[-1]
        return f"[{name}](#{name.lower()})"
    if "anyOf" in prop:
        return " | ".join(_type_text(p) for p in prop["anyOf"])
    if "oneOf" in prop:
        return " | ".join(_type_text(p) for p in prop["oneOf"])
    if "const" in prop:
        return json.dumps(prop["const"])
    if "enum" in prop:
        return " | ".join(json.dumps(v) for v in prop["enum"])
    t = prop.get("type")
    if t == "array":
        items = prop.get("items")
        return f"list[{_type_text(items)}]" if isinstance(items, dict) and items else "list"
    if t == "object":
        extra = prop.get("additionalProperties")
        if isinstance(extra, dict) and extra:
            return f"table of {_type_text(extra)}"
        return "table"
    bounds = []
    for key, sym in (("minimum", ">="), ("exclusiveMinimum", ">"), ("maximum", "<="),
                     ("exclusiveMaximum", "<")):  # fmt: skip
        if key in prop:
            bounds.append(f"{sym} {prop[key]}")
    text = str(t) if t else "any"
    return text + (f" ({', '.join(bounds)})" if bounds else "")


def _cell(text: str) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def _model_md(name: str, schema: dict[str, Any], level: str) -> list[str]:
    out = [f"{level} {name}", ""]
    desc = schema.get("description")
    if desc:
        out += [str(desc).strip(), ""]
    props = schema.get("properties", {})
    if not props:
        return out
    required = set(schema.get("required", []))
    out += ["| field | type | default | notes |", "|---|---|---|---|"]
    for field, prop in props.items():
        if field in required:
            default = "required"
        else:
            default = json.dumps(prop["default"]) if "default" in prop else "(its defaults)"
        note = _cell(prop.get("description", ""))
        out.append(f"| `{field}` | {_cell(_type_text(prop))} | `{_cell(default)}` | {note} |")
    out.append("")
    return out


def markdown_reference() -> str:
    """The configuration reference (``docs/reference/config.md``): every exported file kind's
    fields, types, defaults and descriptions, from the same JSON Schemas as ``npusched schema``.
    """
    lines = [
        "# Configuration reference",
        "",
        "Generated from the pydantic models that validate the files "
        "(`python -m npusched.experiments.schema > docs/reference/config.md`; a test keeps "
        "this page equal to that output). The same information as JSON Schema, for editors: "
        "`npusched schema run`, `npusched schema experiment`, `npusched schema suite-prema` "
        "(and the other suites).",
        "",
        "Every table rejects unknown keys. Types: `integer`, `number` (a float), `string`, "
        "`boolean`, `list[...]`, `table` (a TOML table / YAML mapping), `A | B` (either).",
        "",
    ]
    titles = {
        "run": "Run config (`npusched run CONFIG`)",
        "experiment": "Experiment file (`npusched sweep FILE`)",
    }
    for kind in schema_models():
        schema = json_schema(kind)
        title = titles.get(kind, f"Suite file `{kind[6:]}` (`npusched reproduce {kind[6:]} "
                                 "--config FILE`)")  # fmt: skip
        lines += [f"## {title}", ""]
        lines += _model_md(str(schema.get("title", kind)), schema, "###")
        for name, sub in schema.get("$defs", {}).items():
            lines += _model_md(name, sub, "####")
    return "\n".join(lines).rstrip() + "\n"


if __name__ == "__main__":  # pragma: no cover - regenerates docs/reference/config.md
    import sys

    sys.stdout.write(markdown_reference())
