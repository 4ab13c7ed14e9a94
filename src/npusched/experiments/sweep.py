"""Experiment files and sweeps (``npusched sweep FILE --out DIR``).

An experiment file (TOML or YAML) declares a grid of run configs:

* ``name`` (free text), ``description`` (free text);
* ``seeds``: a list of workload seeds (``[0, 1, 2]``) or a range ``{start = 0, count = 10}``;
* ``[base]``: a run config as ``npusched run`` reads it (:mod:`npusched.experiments.config`),
  without ``seed``: every point starts from it;
* ``[grid]``: dotted field path -> list of values, e.g. ``"workload.rate_per_s" = [100, 200]``
  or ``policy = [{name = "NP-FCFS"}, {name = "P-PREMA"}]``. A value replaces the field at that
  path (a table replaces the whole table). A *named axis* (e.g. ``system``) changes several
  fields together: each of its values is a table with a ``label``
  (its name in the results and in ``--filter``) and field paths -> values, e.g.
  ``system = [{label = "Planaria", hardware = {device = "planaria"}, policy = {name =
  "Planaria"}}, ...]``. The grid is the cartesian product of its axes, in file order; every
  combination runs once per seed;
* ``grids`` (instead of ``[grid]``): a list of such grids, each expanded the same way and their
  points run one after the other, for axes that are coupled (a serving setup's rates and SLO,
  say, differ from another's). Every grid names the same axes in the same order;
* ``[report]`` (optional): ``x`` (the axis plotted on the x axis; default the first grid axis
  whose values are all numbers), ``metrics`` (summary keys to tabulate and plot) and
  ``baseline`` (the series label that normalised bars divide by; default the first series) and
  ``series_per_plot`` (at most this many series in a figure, default 12; more are split over
  several figures).

Every combination is validated as a full run config when the file is loaded, so a typo in any
point fails before anything runs, with one line naming the file, the grid point and the field.

A *point* is one combination and one seed. Its id is a hash of its complete run config (seed
included), so editing the base or the grid changes exactly the ids of the points it changes.
Results (see :mod:`npusched.experiments.store`) are written per finished point; a rerun skips
every point whose file exists.
"""

from __future__ import annotations

import copy
import hashlib
import itertools
import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    model_validator,
)

from npusched.errors import ConfigError
from npusched.experiments.config import (
    RunConfig,
    _not_bool,
    parse_config,
    read_config_data,
)

__all__ = [
    "Experiment",
    "ExperimentFile",
    "Point",
    "ReportHints",
    "SeedRange",
    "expand",
    "load_experiment",
    "parse_experiment",
    "parse_filters",
    "select_points",
]

#: Top-level run-config fields a grid path may start with.
GRID_ROOTS = (
    "name", "hardware", "workload", "policy", "sim", "metrics", "machine", "power", "exits"
)

_Seed = Annotated[int, BeforeValidator(_not_bool), Field(ge=0, strict=True)]
_Count = Annotated[int, BeforeValidator(_not_bool), Field(gt=0, strict=True)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class SeedRange(_Strict):
    """``seeds = {start = 0, count = 10}``: seeds ``start, ..., start + count - 1``."""

    start: _Seed = 0
    count: _Count


class ReportHints(_Strict):
    """``[report]``: how ``npusched report`` draws this experiment.

    Attributes:
        x: the grid axis on the x axis of the metric curves (a numeric axis).
        metrics: summary keys to tabulate and plot.
        baseline: series label the normalised bars divide by.
        series_per_plot: at most this many series in one figure; more are split over several
            figures (the table keeps them all; each bar chart repeats the baseline).
    """

    x: str | None = None
    metrics: Annotated[list[str], Field(min_length=1)] = [
        "antt",
        "stp",
        "fairness",
        "p99_latency_s",
        "sla_violation_rate_n10",
    ]
    baseline: str | None = None
    series_per_plot: Annotated[int, Field(ge=1)] = 12


class ExperimentFile(_Strict):
    """The schema of an experiment file (see the module docstring)."""

    name: str | None = None
    description: str = ""
    seeds: Annotated[list[_Seed], Field(min_length=1)] | SeedRange = [0]
    base: dict[str, Any] = Field(default_factory=dict)
    grid: dict[str, Annotated[list[Any], Field(min_length=1)]] = Field(default_factory=dict)
    grids: (
        Annotated[list[dict[str, Annotated[list[Any], Field(min_length=1)]]], Field(min_length=1)]
        | None
    ) = None
    report: ReportHints = Field(default_factory=ReportHints)

    @model_validator(mode="after")
    def _one_grid(self) -> ExperimentFile:
        if self.grids is not None:
            if self.grid:
                raise ValueError("give grid or grids, not both")
            keys = list(self.grids[0])
            bad = next((i for i, g in enumerate(self.grids) if list(g) != keys), None)
            if bad is not None:
                raise ValueError(
                    f"grids[{bad}] has axes {list(self.grids[bad])}; every grid needs the axes "
                    f"of grids[0], in its order: {keys}"
                )
        return self

    def grid_list(self) -> list[dict[str, list[Any]]]:
        """The grids (``[grid]`` alone, or ``grids``)."""
        return list(self.grids) if self.grids is not None else [self.grid]

    def seed_list(self) -> list[int]:
        """The seeds, in order."""
        if isinstance(self.seeds, SeedRange):
            return list(range(self.seeds.start, self.seeds.start + self.seeds.count))
        return list(self.seeds)


def value_label(v: Any) -> str | float | int | bool:
    """A short label of a grid value: scalars as they are; a table by its ``name`` or ``kind``
    plus its other keys (``P-PREMA(mechanism=drain)``)."""
    if isinstance(v, bool | int | float | str):
        return v
    if isinstance(v, Mapping):
        head = v.get("name", v.get("kind"))
        rest = {k: w for k, w in v.items() if k not in ("name", "kind")}
        if "params" in rest and isinstance(rest["params"], Mapping):
            rest = {**{k: w for k, w in rest.items() if k != "params"}, **rest["params"]}
        inner = ",".join(f"{k}={_short(w)}" for k, w in rest.items())
        if head is None:
            return inner or "{}"
        return f"{head}({inner})" if inner else str(head)
    return json.dumps(v, sort_keys=True)


def _axis_label(axis: Sequence[Any], v: Any) -> Any:
    """:func:`value_label`, as a float on an axis that mixes integers and floats (one column
    type per axis in the results table)."""
    nums = [w for w in axis if isinstance(w, int | float) and not isinstance(w, bool)]
    if len(nums) == len(axis) and any(isinstance(w, float) for w in nums):
        return float(v)
    return value_label(v)


def _named_label(axis: Sequence[Mapping[str, Any]], v: Mapping[str, Any]) -> Any:
    """The label of a named axis' value (numbers stay numbers, as :func:`_axis_label`)."""
    return _axis_label([w["label"] for w in axis], v["label"])


def _short(v: Any) -> str:
    if isinstance(v, list | tuple):
        return "[" + ",".join(_short(w) for w in v) + "]"
    return str(value_label(v))


@dataclass(frozen=True)
class Point:
    """One run of the sweep: a grid combination and a seed.

    Attributes:
        index: position in expansion order (combination-major, then seed).
        combo: index of the grid combination.
        seed: the workload seed.
        params: grid path -> label of its value (:func:`value_label`).
        config: the complete run config (JSON-compatible, ``seed`` included).
        point_id: 16 hex digits of SHA-256 of ``config`` as canonical JSON.
    """

    index: int
    combo: int
    seed: int
    params: dict[str, Any]
    config: dict[str, Any]
    point_id: str


@dataclass
class Experiment:
    """A loaded experiment: its file, its settings and its expanded points."""

    source: str
    spec: ExperimentFile
    name: str
    points: list[Point]
    base_dir: Path
    axes: list[str] = field(default_factory=list)

    def meta(self) -> dict[str, Any]:
        """What ``experiment.json`` records (the report reads it)."""
        return {
            "name": self.name,
            "description": self.spec.description,
            "source": self.source,
            "axes": self.axes,
            "seeds": self.spec.seed_list(),
            "n_points": len(self.points),
            "report": self.spec.report.model_dump(),
            "point_ids": [p.point_id for p in self.points],
        }


def _is_path(key: str) -> bool:
    parts = key.split(".")
    return parts[0] in GRID_ROOTS and all(parts)


def _is_named_axis(key: str, values: Sequence[Any]) -> bool:
    """A named axis: a plain name whose values are tables with a ``label`` (no run-config table
    has a ``label`` field, so ``policy = [{label = ..., policy = {...}, ...}]`` is one too)."""
    return key.isidentifier() and all(isinstance(v, Mapping) and "label" in v for v in values)


def _set_path(
    data: dict[str, Any], path: str, value: Any, source: str, axis: str | None = None
) -> None:
    parts = path.split(".")
    where = f"grid.{path}" if axis is None else f"grid.{axis}: {path}"
    if not _is_path(path):
        raise ConfigError(
            f"{source}: {where}: unknown field path; allowed: a dotted path starting with "
            f"{', '.join(GRID_ROOTS)} (e.g. workload.rate_per_s), or a named axis whose values "
            "are tables with a label"
        )
    node = data
    for p in parts[:-1]:
        nxt = node.get(p)
        if nxt is None:
            nxt = node[p] = {}
        if not isinstance(nxt, dict):
            raise ConfigError(f"{source}: {where}: {p} is not a table in the base config")
        node = nxt
    node[parts[-1]] = copy.deepcopy(value)


def _canonical(cfg: RunConfig) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(cfg.model_dump_json())
    return data


def point_id(config: Mapping[str, Any]) -> str:
    """16 hex digits identifying a complete run config (seed included)."""
    text = json.dumps(config, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def expand(spec: ExperimentFile, source: str = "<experiment>") -> list[Point]:
    """Every point of ``spec``: each grid combination (validated as a run config) x each seed."""
    if "seed" in spec.base:
        raise ConfigError(f"{source}: base.seed: set seeds at the top level (seeds = [0, 1])")
    seeds = spec.seed_list()
    points: list[Point] = []
    combo = 0
    for grid in spec.grid_list():
        combo = _expand_grid(spec, grid, seeds, source, points, combo)
    return points


def _expand_grid(
    spec: ExperimentFile,
    grid: Mapping[str, Sequence[Any]],
    seeds: Sequence[int],
    source: str,
    points: list[Point],
    combo: int,
) -> int:
    """Append the points of one grid to ``points``; returns the next combination index."""
    bad = next((k for k in grid if k == "seed" or k.startswith("seed.")), None)
    if bad is not None:
        raise ConfigError(f"{source}: grid.{bad}: set seeds at the top level (seeds = [0, 1])")
    keys = list(grid)
    named = {k for k in keys if _is_named_axis(k, grid[k])}
    for k in named:
        labels = [str(v["label"]) for v in grid[k]]
        dup = next((x for x in labels if labels.count(x) > 1), None)
        if dup is not None:
            raise ConfigError(f"{source}: grid.{k}: label {dup!r} appears twice")
    for values in itertools.product(*(grid[k] for k in keys)):
        data = copy.deepcopy(spec.base)
        for k, v in zip(keys, values, strict=True):
            if k in named:
                for path, w in v.items():
                    if path != "label":
                        _set_path(data, path, w, source, axis=k)
            else:
                _set_path(data, k, v, source)
        where = ", ".join(
            f"{k}={v['label'] if k in named else _short(v)}"
            for k, v in zip(keys, values, strict=True)
        )
        cfg = parse_config({**data, "seed": 0}, source=f"{source} [point {where or 'base'}]")
        params = {
            k: _named_label(grid[k], v) if k in named else _axis_label(grid[k], v)
            for k, v in zip(keys, values, strict=True)
        }
        canon = _canonical(cfg)
        for seed in seeds:
            full = {**canon, "seed": seed}
            points.append(Point(len(points), combo, seed, params, full, point_id(full)))
        combo += 1
    return combo


def parse_experiment(
    data: Mapping[str, Any], source: str = "<experiment>", base_dir: str | os.PathLike[str] = "."
) -> Experiment:
    """Validate an experiment given as a mapping and expand it."""
    if not isinstance(data, Mapping):
        raise ConfigError(f"{source}: (top level): expected a table of keys")
    try:
        spec = ExperimentFile.model_validate(dict(data))
    except ValidationError as e:
        raise ConfigError(_format_experiment_error(source, e)) from None
    points = expand(spec, source)
    name = spec.name or Path(source).stem
    exp = Experiment(source, spec, name, points, Path(base_dir), list(spec.grid_list()[0]))
    _check_report(exp)
    return exp


def _check_report(exp: Experiment) -> None:
    x = exp.spec.report.x
    if x is not None and x not in exp.axes:
        allowed = ", ".join(exp.axes) or "(no grid axes)"
        raise ConfigError(f"{exp.source}: report.x: {x!r} is not a grid axis; allowed: {allowed}")


def _format_experiment_error(source: str, e: ValidationError) -> str:
    errors = e.errors(include_url=False)

    def clean(loc: Any) -> list[Any]:
        return [p for p in loc if not (isinstance(p, str) and ("[" in p or p in _TAGS))]

    first = clean(errors[0]["loc"])[:1]
    # a union (seeds: list or range) reports one error per branch: the deepest one is the
    # branch the value was meant for
    err = max(
        (x for x in errors if clean(x["loc"])[:1] == first), key=lambda x: len(clean(x["loc"]))
    )
    loc = clean(err["loc"])
    where = ".".join(str(p) for p in loc) or "(top level)"
    if err["type"] == "extra_forbidden":
        model: type[BaseModel] = ExperimentFile
        if loc[:1] == ["report"]:
            model = ReportHints
        elif loc[:1] == ["seeds"]:
            model = SeedRange
        return f"{source}: {where}: unknown key; allowed: {', '.join(model.model_fields)}"
    if err["type"] == "missing":
        return f"{source}: {where}: missing required key"
    msg = str(err["msg"])
    return f"{source}: {where}: {msg[:1].lower() + msg[1:]} (got {err.get('input')!r})"


_TAGS = {"list[int]", "SeedRange", "function-after", "constrained-int", "int"}


def load_experiment(path: str | os.PathLike[str]) -> Experiment:
    """Read, validate and expand an experiment file (TOML or YAML). A ``reproduce`` suite file
    (a top-level ``suite`` key) whose runs form a grid is converted with
    :func:`npusched.experiments.suite_files.suite_sweep_data` (its full parameters)."""
    p = Path(path)
    data = read_config_data(p)
    if "suite" in data:
        from npusched.experiments.suite_files import parse_suite, suite_sweep_data

        suite = parse_suite(data, str(p))
        data = suite_sweep_data(suite)
        return parse_experiment(data, source=f"{p} (as a sweep)", base_dir=p.parent)
    return parse_experiment(data, source=str(p), base_dir=p.parent)


# --- selecting part of a grid ---------------------------------------------------------------
def parse_filters(exprs: Sequence[str], exp: Experiment) -> list[tuple[str, str]]:
    """``KEY=VALUE`` filters (``KEY`` a grid axis or ``seed``) as ``(key, value)`` pairs."""
    out: list[tuple[str, str]] = []
    allowed = [*exp.axes, "seed"]
    for e in exprs:
        key, sep, value = e.partition("=")
        key = key.strip()
        if not sep:
            raise ConfigError(
                f"--filter {e!r}: expected KEY=VALUE; allowed keys: {', '.join(allowed)}"
            )
        if key not in allowed:
            raise ConfigError(f"--filter {e!r}: unknown key {key!r}; allowed: {', '.join(allowed)}")
        out.append((key, value.strip()))
    return out


def _matches(p: Point, key: str, value: str) -> bool:
    v = p.seed if key == "seed" else p.params[key]
    if isinstance(v, bool):
        return str(v).lower() == value.lower()
    if isinstance(v, int | float):
        try:
            return float(v) == float(value)
        except ValueError:
            return False
    return str(v) == value


def select_points(
    exp: Experiment,
    filters: Sequence[tuple[str, str]] = (),
    max_points: int | None = None,
) -> list[Point]:
    """The points matching every filter (values of one key are OR-ed: ``seed=0 seed=1``), the
    first ``max_points`` of them in expansion order."""
    by_key: dict[str, list[str]] = {}
    for k, v in filters:
        by_key.setdefault(k, []).append(v)
    pts = [
        p for p in exp.points if all(any(_matches(p, k, v) for v in vs) for k, vs in by_key.items())
    ]
    if max_points is not None:
        if max_points < 1:
            raise ConfigError(f"--max-points must be >= 1, got {max_points}")
        pts = pts[:max_points]
    return pts
