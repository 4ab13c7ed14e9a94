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
