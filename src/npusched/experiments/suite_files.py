"""The ``reproduce <paper>`` suites as experiment files (``npusched reproduce NAME --config``).

The PREMA, DFS, Fluid Batching, Planaria and HaX-CoNN parameter models live with their
study (:mod:`npusched.experiments.studies`). This module holds the
shared part: loading, the one-line errors, ``--set`` and the conversion to sweeps.

Each suite's parameters (networks, policies, loads and rates, batch sizes, seeds, solver limits,
quick and full sizes) live in a TOML file shipped with the package,
``npusched/data/experiments/suites/<name>.toml``. ``npusched reproduce NAME`` loads it;
``npusched reproduce NAME --config FILE`` runs an edited copy, which ``npusched reproduce NAME
--export FILE`` (or ``npusched suites export NAME``) writes out.

A suite file is flat: ``suite = "<name>"`` (which schema applies), an optional
``description``, the suite's parameters at the top level (the full run), and a ``[quick]`` table
of the parameters ``--quick`` changes (a table inside it, e.g. ``[quick.setup]``, changes only
the keys it gives). Both the full and the quick parameters are validated when the file is loaded,
with pydantic models that forbid unknown keys; a bad value gives one line
``<file>: <field.path>: <problem>; allowed: ...`` (``quick.<field>`` for a value given in
``[quick]``).

Suites that are grids of simulation runs also convert to the sweep format
(:mod:`npusched.experiments.sweep`), so ``npusched sweep`` can run them on any backend into the
resumable store: :func:`suite_sweep_data` gives the experiment mapping (PREMA: policy x batch
size x seed; Planaria: system x (workload, QoS) x instance at the fixed rate of Fig. 13-15).
``npusched sweep SUITE.toml`` accepts a suite file directly, and ``npusched suites sweep-file``
writes the converted experiment file. PREMA's sweep draws the reproduction's samples: seed ``i``
of batch size ``b`` is the reproduction's workload (b, run i) (``workload.seed_stream``, see
:func:`~npusched.experiments.studies.prema.as_sweep.prema_sweep`), the same for every policy, so
a point at the reproduction's load gives the reproduction's result. Planaria's likewise: seed
``i`` of (scenario, QoS) is the reproduction's instance ``i`` at Fig. 13-15's fixed rate, for
both systems (:func:`~npusched.experiments.studies.planaria.as_sweep.planaria_sweep`). (The
quick reproduction runs a stratified subset of the full run's workloads; the quick sweep runs
the first ones.)

The generic reading (a file into a given model, the one-line errors, ``--set``) is
:mod:`npusched.experiments.suite_io`, which imports no study; its names are re-exported here.
Running a suite model is :func:`npusched.experiments.reproduce.suites.run_suite_model` (each
study's ``run.run_suite``), above the studies.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from npusched._io import atomic_write_text
from npusched.errors import ConfigError
from npusched.experiments.config import (
    read_config_data,
)
from npusched.experiments.studies.dfs.suite import DfsSuite
from npusched.experiments.studies.fluid.suite import (
    FluidFig9Entry,
    FluidServingEntry,
    FluidSuite,
    fluid_sweep,
)
from npusched.experiments.studies.haxconn.suite import HaxconnSuite
from npusched.experiments.studies.planaria.as_sweep import planaria_sweep
from npusched.experiments.studies.planaria.suite import PlanariaSuite
from npusched.experiments.studies.prema.as_sweep import prema_sweep
from npusched.experiments.studies.prema.suite import PremaPolicyEntry, PremaSuite
from npusched.experiments.suite_io import (
    packaged_suite_file,
    parse_suite_as,
    set_overrides,
    toml_value,
)

__all__ = [
    "SUITE_MODELS",
    "DfsSuite",
    "FluidFig9Entry",
    "FluidServingEntry",
    "FluidSuite",
    "HaxconnSuite",
    "PlanariaSuite",
    "PremaPolicyEntry",
    "PremaSuite",
    "export_suite",
    "load_suite",
    "packaged_suite",
    "parse_suite",
    "set_overrides",
    "suite_sweep_data",
    "toml_value",
    "write_sweep_file",
]


Suite = PremaSuite | PlanariaSuite | DfsSuite | FluidSuite | HaxconnSuite

#: Suite name -> its schema (the file's ``suite`` key selects one).
SUITE_MODELS: dict[str, type[Suite]] = {
    "prema": PremaSuite,
    "planaria": PlanariaSuite,
    "dfs": DfsSuite,
    "fluid": FluidSuite,
    "haxconn": HaxconnSuite,
}


# --- loading ----------------------------------------------------------------------------------
def packaged_suite(name: str) -> Path:
    """The packaged file of suite ``name`` (``npusched/data/experiments/suites/<name>.toml``)."""
    if name not in SUITE_MODELS:
        raise ConfigError(f"suite {name!r}: unknown; allowed: {', '.join(SUITE_MODELS)}")
    return packaged_suite_file(name)


def parse_suite(
    data: Mapping[str, Any],
    source: str = "<suite>",
    *,
    quick: bool = False,
    name: str | None = None,
    overrides: Mapping[str, tuple[str, Any]] | None = None,
) -> Suite:
    """Validate a suite file given as a mapping and return its full or quick parameters.

    Args:
        data: the file's content.
        source: the file, for error messages.
        quick: return the parameters with ``[quick]`` applied.
        name: the suite the caller runs (``reproduce prema --config F`` needs ``suite =
            "prema"``); ``None`` accepts any suite.
        overrides: field -> ``(option, value)`` from the command line (``runs`` ->
            ``("--runs", 5)``), applied last; a bad value is reported against the option.
    """
    if not isinstance(data, Mapping):
        raise ConfigError(f"{source}: (top level): expected a table of keys")
    kind = data.get("suite")
    if kind not in SUITE_MODELS:
        what = "missing" if kind is None else f"unknown suite {kind!r}"
        raise ConfigError(f"{source}: suite: {what}; allowed: {', '.join(SUITE_MODELS)}")
    if name is not None and kind != name:
        raise ConfigError(
            f"{source}: suite: this file is the {kind!r} suite, not {name!r}; allowed: {name}"
        )
    return parse_suite_as(
        SUITE_MODELS[str(kind)], data, source, quick=quick, overrides=overrides
    )


def load_suite(
    name: str | None = None,
    path: str | os.PathLike[str] | None = None,
    *,
    quick: bool = False,
    overrides: Mapping[str, tuple[str, Any]] | None = None,
) -> Suite:
    """The parameters of suite ``name`` from ``path`` (default: its packaged file)."""
    if path is None:
        if name is None:
            raise ConfigError("load_suite: give a suite name or a file")
        path = packaged_suite(name)
    p = Path(path)
    return parse_suite(read_config_data(p), str(p), quick=quick, name=name, overrides=overrides)


def export_suite(name: str, dest: str | os.PathLike[str]) -> Path:
    """Write suite ``name``'s packaged file (comments included) to ``dest`` for editing.

    ``dest`` may be a directory (the file keeps its name); an existing file is not replaced.
    """
    src = packaged_suite(name)
    out = Path(dest)
    if out.is_dir():
        out = out / src.name
    if out.exists():
        raise ConfigError(f"{out}: exists; remove it or name another file")
    if out.suffix.lower() != ".toml":
        raise ConfigError(f"{out}: suite files are TOML; allowed: a name ending in .toml")
    try:
        atomic_write_text(out, src.read_text(encoding="utf-8"))
    except OSError as e:
        raise ConfigError(f"{out}: cannot write: {e.strerror}") from None
    return out


# --- suites as sweeps -------------------------------------------------------------------------
#: Suites whose runs form a grid the sweep format expresses.
SWEEPABLE = ("prema", "planaria", "fluid")


def suite_sweep_data(suite: Suite) -> dict[str, Any]:
    """The experiment-file mapping (:mod:`npusched.experiments.sweep`) of a grid suite.

    * PREMA: ``policy`` (each configuration's policy, mechanism, token rule and predictor) x
      ``load`` (``sweep_loads``) x ``batch`` (its batch size and the dispatch window the load
      gives it, one grid per load and batch size since the window couples them) x ``runs``
      seeds from ``seed``; the mechanism study and the paper-range study are not in it.
    * Planaria: ``system`` (P-PREMA with the PREMA predictor on the 128x128 array; Planaria on
      the 16-subarray fission array) x ``workload`` (Table I scenario / QoS level at the fixed
      rate of Fig. 13-15, ``setup.load`` on the monolithic array) x ``setup.instances`` seeds.
    * Fluid Batching: Fig. 7/8's serving grid, one grid per (serving setup, policy) since the
      SLO couples the policy's parameters to the setup (``grids``): ``setup`` x ``policy`` x
      ``workload.rate_per_s`` x ``seeds`` seeds, ``n_samples`` requests each, on Table I's
      design for the (model, board) with the NPU batching each policy runs on and the model's
      4 exits at the paper's rates; with ``designs = "dse"`` each policy's axis value also sets
      its own DSE design (``hardware.params.tr/tp/tc``). Fig. 9 and Table II are not in it.
    """
    if isinstance(suite, PremaSuite):
        return prema_sweep(suite)
    if isinstance(suite, PlanariaSuite):
        return planaria_sweep(suite)
    if isinstance(suite, FluidSuite):
        return fluid_sweep(suite)
    raise ConfigError(
        f"suite {suite.suite!r} is not a grid of simulation runs; allowed: {', '.join(SWEEPABLE)}"
    )


def write_sweep_file(suite: Suite, dest: str | os.PathLike[str]) -> Path:
    """Write :func:`suite_sweep_data` of ``suite`` as a YAML experiment file."""
    import yaml

    out = Path(dest)
    if out.suffix.lower() not in (".yaml", ".yml"):
        raise ConfigError(f"{out}: the sweep file is written as YAML; allowed: .yaml, .yml")
    data = suite_sweep_data(suite)
    head = (
        f"# Generated by `npusched suites sweep-file` from the {suite.suite!r} suite.\n"
        f"# Run with `npusched sweep {out.name} --out DIR`.\n"
    )
    try:
        atomic_write_text(out, head + yaml.safe_dump(data, sort_keys=False))
    except OSError as e:
        raise ConfigError(f"{out}: cannot write: {e.strerror}") from None
    return out
