"""The ``reproduce <paper>`` suites as experiment files (``npusched reproduce NAME --config``).

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
writes the converted experiment file. The sweep seeds each point's workload from the run
config's ``seed`` (:func:`npusched.experiments.runner.build_requests`), so its draws are not the
reproduction's (which seeds per (batch, run) and reuses one workload for every policy): the grid
and the distributions are the same, the samples differ.
"""

from __future__ import annotations

import copy
import os
import tomllib
import typing
from collections.abc import Callable, Mapping, Sequence
from importlib.resources import files
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from npusched._io import atomic_write_text
from npusched.errors import ConfigError
from npusched.experiments.config import (
    BatchSize,
    PositiveFloat,
    PositiveInt,
    Switch,
    _field_check,
    _network_names,
    _not_bool,
    read_config_data,
)

__all__ = [
    "SUITE_MODELS",
    "DfsSuite",
    "FluidSuite",
    "HaxconnSuite",
    "PlanariaSuite",
    "PremaSuite",
    "export_suite",
    "load_suite",
    "packaged_suite",
    "parse_suite",
    "set_overrides",
    "suite_sweep_data",
    "write_sweep_file",
]

NonNegInt = Annotated[int, BeforeValidator(_not_bool), Field(ge=0, strict=True)]
Names = Annotated[list[str], Field(min_length=1)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


def _unique(values: Sequence[Any], what: str) -> None:
    dup = next((v for v in values if list(values).count(v) > 1), None)
    if dup is not None:
        raise ValueError(f"{what} {dup!r} appears twice")


def _device(name: str) -> str:
    from npusched.hardware import DEVICES

    _field_check(DEVICES.get, name)
    return name


# --- PREMA ------------------------------------------------------------------------------------
class PremaPolicyEntry(_Strict):
    """One policy configuration of the PREMA study (``policies = [{...}, ...]``).

    Attributes:
        label: its name in the results (``P-PREMA-dynamic``); ``NP-FCFS`` is the baseline.
        policy: a registered temporal policy (``npusched`` policy names, e.g. ``P-PREMA``).
        mechanism: ``checkpoint``, ``kill``, ``dynamic`` or ``dynamic-kill`` (preemptive only).
        predictor: the latency estimate the policy sees, ``prema`` or ``oracle``.
        tokens: PREMA's token rule, ``cumulative`` or ``linear`` (token policies only).
    """

    label: str
    policy: str
    mechanism: Literal["checkpoint", "kill", "dynamic", "dynamic-kill"] | None = None
    predictor: Literal["prema", "oracle"] = "prema"
    tokens: Literal["cumulative", "linear"] | None = None

    @field_validator("policy")
    @classmethod
    def _known(cls, v: str) -> str:
        import npusched.policies.temporal  # noqa: F401  (registers the built-ins)
        from npusched.policies.base import POLICIES

        _field_check(POLICIES.get, v)
        return v


class PremaSuite(_Strict):
    """``suite = "prema"``: PREMA (HPCA 2020) Sec. IV-D and VI (see
    :mod:`npusched.experiments.reproduce.prema` for the method).

    Attributes:
        networks: zoo names of the DNN mix.
        device: the NPU (``prema-npu``, PREMA Table I).
        n_tasks: tasks per workload.
        batch_sizes: one set of workloads per batch size.
        load: offered load while tasks arrive (sets the dispatch window), in (0, 100].
        seed: base seed of every workload.
        preemption_point: where CHECKPOINT stops a task, ``tile`` or ``layer``.
        runs: workloads per (policy, batch size), and low-priority samples per (DNN, batch)
            in the mechanism study (Fig. 5/6).
        plots: draw the PNG figures.
        policies: the policy configurations, in report order (must include ``NP-FCFS``).
        paper_range: also run ``paper_range_policies`` with tasks limited to
            ``paper_range_ms`` (into ``OUT/paper-range``).
        paper_range_ms: ``[lo, hi]`` milliseconds of isolated latency (the paper's 0.5-45).
        paper_range_policies: labels (of ``policies``) of the paper-range study.
        sweep_loads: the loads of the suite as a sweep (:func:`suite_sweep_data`; the
            reproduction itself runs at ``load``).
    """

    suite: Literal["prema"]
    description: str = ""
    networks: Names
    device: str
    n_tasks: PositiveInt
    batch_sizes: Annotated[list[BatchSize], Field(min_length=1)]
    load: Annotated[float, Field(gt=0, le=100, allow_inf_nan=False)]
    seed: NonNegInt
    preemption_point: Literal["tile", "layer"]
    runs: PositiveInt
    plots: Switch
    policies: Annotated[list[PremaPolicyEntry], Field(min_length=1)]
    paper_range: Switch
    paper_range_ms: tuple[PositiveFloat, PositiveFloat]
    paper_range_policies: list[str]
    sweep_loads: Annotated[
        list[Annotated[float, Field(gt=0, le=100, allow_inf_nan=False)]], Field(min_length=1)
    ]

    @field_validator("networks")
    @classmethod
    def _networks(cls, v: list[str]) -> list[str]:
        return _network_names(v)

    @field_validator("device")
    @classmethod
    def _known_device(cls, v: str) -> str:
        return _device(v)

    @model_validator(mode="after")
    def _check(self) -> PremaSuite:
        labels = [p.label for p in self.policies]
        _unique(labels, "policies: label")
        if "NP-FCFS" not in labels:
            raise ValueError("policies: NP-FCFS (the baseline) must be among the labels")
        bad = [x for x in self.paper_range_policies if x not in labels]
        if bad:
            raise ValueError(
                f"paper_range_policies: {bad[0]!r} is not a label of policies; allowed: "
                + ", ".join(labels)
            )
        lo, hi = self.paper_range_ms
        if not lo < hi:
            raise ValueError(f"paper_range_ms: must be [lo, hi] with lo < hi, got {[lo, hi]}")
        return self

    def setup(self) -> Any:
        """The :class:`~npusched.experiments.reproduce.prema.PremaSetup` of these parameters."""
        from npusched.experiments.reproduce.prema import PremaSetup

        return PremaSetup(
            networks=tuple(self.networks),
            device=self.device,
            n_tasks=self.n_tasks,
            batch_sizes=tuple(self.batch_sizes),
            load=float(self.load),
            seed=self.seed,
            preemption_point=self.preemption_point,
        )

    def specs(self) -> list[Any]:
        """The :class:`~npusched.experiments.reproduce.prema.PolicySpec` list."""
        from npusched.experiments.reproduce.prema import PolicySpec

        return [
            PolicySpec(p.label, p.policy, p.mechanism, p.predictor, p.tokens)
            for p in self.policies
        ]

    def run(self, out: Path, *, quick: bool, progress: bool) -> dict[str, Any]:
        """``npusched reproduce prema`` with these parameters."""
        from npusched.experiments.reproduce.prema import reproduce

        lo, hi = self.paper_range_ms
        return reproduce(
            out,
            quick=quick,
            runs=self.runs,
            progress=progress,
            setup=self.setup(),
            specs=self.specs(),
            plots=self.plots,
            paper_range=self.paper_range,
            paper_range_s=(lo / 1000.0, hi / 1000.0),
            range_labels=tuple(self.paper_range_policies),
        )


# --- Planaria ---------------------------------------------------------------------------------
class PlanariaSetupEntry(_Strict):
    """``[setup]``: the multi-tenant study (Fig. 12-16), as
    :class:`~npusched.experiments.reproduce.planaria.MultiTenantSetup` documents it (requests
    per instance, instances per point, base seed, the throughput search's relative tolerance and
    starting rate in requests/s, the fixed rate as a load on the monolithic array, Fig. 16's
    node limit)."""

    n_requests: PositiveInt
    instances: PositiveInt
    seed: NonNegInt
    rate_tol: Annotated[float, Field(gt=0, lt=1)]
    min_rate: PositiveFloat
    load: PositiveFloat
    max_nodes: PositiveInt
    throughput_instances: PositiveInt = 5
    fig16_load: PositiveFloat = 0.5


class PlanariaSuite(_Strict):
    """``suite = "planaria"``: Planaria (MICRO 2020) Sec. VI (see
    :mod:`npusched.experiments.reproduce.planaria`).

    Attributes:
        networks: the DNNs of Fig. 17 (each alone on 16 subarrays vs the 128x128 array).
        benchmarks: ``"artifact"`` (the authors' ``planaria/<name>`` definitions) or
            ``"full-size"`` (the zoo's networks).
        plots: draw the PNG figures.
        multi_tenant: also run Fig. 12-16 against PREMA (slow).
        scenarios: Table I workloads (``A``, ``B``, ``C``) of the multi-tenant grid.
        qos_levels: QoS levels (``S``, ``M``, ``H``) of the multi-tenant grid.
        setup: the multi-tenant study's sizes and seeds.
    """

    suite: Literal["planaria"]
    description: str = ""
    networks: Names
    benchmarks: Literal["artifact", "full-size"] = "artifact"
    plots: Switch
    multi_tenant: Switch
    scenarios: Annotated[list[Literal["A", "B", "C"]], Field(min_length=1)]
    qos_levels: Annotated[list[Literal["S", "M", "H"]], Field(min_length=1)]
    setup: PlanariaSetupEntry

    @field_validator("networks")
    @classmethod
    def _networks(cls, v: list[str]) -> list[str]:
        return _network_names(v)

    def mt_setup(self) -> Any:
        """The :class:`~npusched.experiments.reproduce.planaria.MultiTenantSetup`."""
        from npusched.experiments.reproduce.planaria import MultiTenantSetup

        return MultiTenantSetup(**self.setup.model_dump(), benchmarks=self.benchmarks)

    def run(self, out: Path, *, quick: bool, progress: bool) -> dict[str, Any]:
        """``npusched reproduce planaria`` with these parameters."""
        from npusched.experiments.reproduce.planaria import reproduce

        return reproduce(
            out,
            quick=quick,
            plots=self.plots,
            progress=progress,
            networks=tuple(self.networks),
            multi_tenant=self.multi_tenant,
            setup=self.mt_setup(),
            scenarios=tuple(self.scenarios),
            qos_levels=tuple(self.qos_levels),
        )


# --- DFS --------------------------------------------------------------------------------------
class DfsSuite(_Strict):
    """``suite = "dfs"``: layer-wise DFS vs DVFS (ETRI J. 2022) Sec. 4 (see
    :mod:`npusched.experiments.reproduce.dfs`). Not a grid of runs: one frame per (network,
    power policy).

    Attributes:
        networks: the benchmarks evaluated.
        calibration_networks: the networks the AB9's STC efficiency is calibrated over (to the
            paper's 1.99 ms mean layer time).
        cap_w: the power limit, watts.
        efficiency: the AB9 ``stc_efficiency`` in (0, 1], ``"fit"`` (the least-squares fit's)
            or ``"calibrate"`` (to the paper's 1.99 ms mean layer time).
        fit: refit the idle power, dynamic power and efficiency (else the stored fit).
        time_scale: ``"global"`` or ``"per-network"`` (each network its Table 6 frame time).
        fuse: decide per GEMM step with vector layers fused into it (else per zoo operator).
        plots: draw the PNG figures.
        sensitivity: also run the power-model sensitivity grid.
        sensitivity_idle_w: its idle powers (static + constant), watts.
        sensitivity_dynamic_w: its full-array dynamic powers at 1 GHz, watts.
    """

    suite: Literal["dfs"]
    description: str = ""
    networks: Names
    calibration_networks: Names
    cap_w: PositiveFloat
    efficiency: Annotated[float, Field(gt=0, le=1)] | Literal["calibrate", "fit"]
    fit: Switch = True
    time_scale: Literal["global", "per-network"] = "global"
    fuse: Switch
    plots: Switch
    sensitivity: Switch
    sensitivity_idle_w: Annotated[list[PositiveFloat], Field(min_length=1)]
    sensitivity_dynamic_w: Annotated[list[PositiveFloat], Field(min_length=1)]

    @field_validator("networks", "calibration_networks")
    @classmethod
    def _nets(cls, v: list[str]) -> list[str]:
        from npusched.experiments.reproduce.dfs import PAPER_TABLE6

        names = _network_names(v)
        bad = [n for n in names if n not in PAPER_TABLE6]
        if bad:  # Table 6 and the report compare every network with the paper's
            raise ValueError(f"{bad[0]!r} is not a benchmark of the paper; allowed: "
                             + ", ".join(PAPER_TABLE6))
        return names

    def run(self, out: Path, *, quick: bool, progress: bool) -> dict[str, Any]:
        """``npusched reproduce dfs`` with these parameters (``progress`` is unused)."""
        from npusched.experiments.reproduce.dfs import reproduce

        return reproduce(
            out,
            quick=quick,
            cap_w=float(self.cap_w),
            efficiency=None
            if self.efficiency == "fit"
            else ("calibrate" if self.efficiency == "calibrate" else float(self.efficiency)),
            fit=self.fit,
            time_scale=self.time_scale,
            plots=self.plots,
            fuse=self.fuse,
            networks=tuple(self.networks),
            calibration_networks=tuple(self.calibration_networks),
            sensitivity_grid=self.sensitivity,
            sensitivity_idle_w=tuple(self.sensitivity_idle_w),
            sensitivity_dynamic_w=tuple(self.sensitivity_dynamic_w),
        )


# --- Fluid Batching ---------------------------------------------------------------------------
def _board(v: str) -> str:
    from npusched.hardware.gemm_npu import BOARDS

    if v not in BOARDS:
        raise ValueError(f"unknown board {v!r}; allowed: {', '.join(BOARDS)}")
    return v


Board = Annotated[str, BeforeValidator(_board)]


def _serving_model(v: str) -> str:
    """A model the serving experiments can run: one with the paper's exit rates (its 4 exits)
    and a Table I design."""
    from npusched.hardware.gemm_dse import PAPER_TABLE1
    from npusched.models.exits import PAPER_EXIT_RATES

    name = _network_names([v])[0]
    allowed = [m for m in dict.fromkeys(m for m, _ in PAPER_TABLE1) if m in PAPER_EXIT_RATES]
    if name not in allowed:
        raise ValueError(f"{v!r} has no exit rates and Table I design; allowed: "
                         + ", ".join(allowed))
    return name


ServingModel = Annotated[str, BeforeValidator(_serving_model)]


class FluidServingEntry(_Strict):
    """One Fig. 7/8 experiment: model, board, p99 SLO (seconds), Poisson rates (samples/s)."""

    model: ServingModel
    board: Board
    slo_s: PositiveFloat
    rates: Annotated[list[PositiveFloat], Field(min_length=1)]


class FluidFig9Entry(_Strict):
    """One Fig. 9 panel: model, board, arrival rate (samples/s), the SLOs swept (seconds)."""

    model: ServingModel
    board: Board
    rate: PositiveFloat
    slos: Annotated[list[PositiveFloat], Field(min_length=1)]


class FluidSuite(_Strict):
    """``suite = "fluid"``: Fluid Batching (Kouris et al.) DSE, Fig. 10 and the serving
    experiments (see :mod:`npusched.experiments.reproduce.fluid`). Table II's points are the
    paper's rows (``PAPER["table2"]``), not parameters.

    Attributes:
        pairs: ``[model, board]`` pairs of the DSE and Fig. 10 (Table I's designs).
        b_max: largest batch size.
        min_dsp_fraction: the DSE keeps designs using at least this fraction of the DSPs.
        tp_max: the DSE's largest ``T_P``.
        serving: run the serving experiments (Fig. 7-9, Table II) on the engine.
        seeds: seeds per serving point.
        n_samples: samples per serving point.
        designs: NPU per serving policy, ``table1`` (Table I's) or ``dse`` (its own DSE).
        serving_setups: Fig. 7/8's experiments.
        fig9: Fig. 9's panels.
    """

    suite: Literal["fluid"]
    description: str = ""
    pairs: Annotated[list[tuple[str, Board]], Field(min_length=1)]
    b_max: PositiveInt
    min_dsp_fraction: Annotated[float, Field(gt=0, le=1)]
    tp_max: PositiveInt
    serving: Switch
    seeds: PositiveInt
    n_samples: PositiveInt
    designs: Literal["table1", "dse"]
    serving_setups: Annotated[list[FluidServingEntry], Field(min_length=1)]
    fig9: Annotated[list[FluidFig9Entry], Field(min_length=1)]

    @field_validator("pairs")
    @classmethod
    def _pairs(cls, v: list[tuple[str, str]]) -> list[tuple[str, str]]:
        from npusched.hardware.gemm_dse import PAPER_TABLE1

        bad = [p for p in v if tuple(p) not in PAPER_TABLE1]
        if bad:  # the DSE table sets every pair beside Table I's design
            raise ValueError(
                f"{list(bad[0])} has no Table I design; allowed: "
                + ", ".join(f"[{m}, {b}]" for m, b in PAPER_TABLE1)
            )
        return v

    def run(self, out: Path, *, quick: bool, progress: bool) -> dict[str, Any]:
        """``npusched reproduce fluid`` with these parameters."""
        from npusched.experiments.reproduce.fluid import ServingSetup, reproduce

        return reproduce(
            out,
            quick=quick,
            b_max=self.b_max,
            progress=progress,
            serving=self.serving,
            seeds=self.seeds,
            n_samples=self.n_samples,
            designs=self.designs,
            pairs=[(m, b) for m, b in self.pairs],
            min_dsp_fraction=float(self.min_dsp_fraction),
            tp_max=self.tp_max,
            serving_setups=[
                ServingSetup(s.model, s.board, float(s.slo_s), tuple(s.rates))
                for s in self.serving_setups
            ],
            fig9_setups=[(f.model, f.board, float(f.rate), tuple(f.slos)) for f in self.fig9],
        )


# --- HaX-CoNN ---------------------------------------------------------------------------------
class HaxconnSuite(_Strict):
    """``suite = "haxconn"``: HaX-CoNN (PPoPP'24) Sec. 5 (see
    :mod:`npusched.experiments.reproduce.haxconn`). Not a grid of runs: solver experiments.

    Attributes:
        parts: outputs to produce (``table6``, ``table8``, ``fig5``, ``fig7``, ``solver``,
            ``gap``: the measured causes of the gap to the paper's Table 6).
        experiments: Table 6 experiment numbers (1-10), or ``"all"``.
        table6_free_time_limit_s: CP-SAT limit of Table 6's free-space search, seconds.
        table8_networks: Table 8's DNNs (every pair of them runs).
        fig5_networks: Fig. 5's DNNs (two instances of each).
        fig7_experiments: Table 6 experiments D-HaX-CoNN switches between (Fig. 7).
        fig7_time_limit_s: D-HaX-CoNN's CP-SAT budget per change, seconds of its
            deterministic clock (see ``engine_dynamic``).
        fig7_phase_s: how long each DNN set of Fig. 7 runs before the next change, seconds.
        solver_groups: layer groups per DNN of the solver benchmark.
        solver_time_limit_s: limit per solve, seconds.
        solver_repeats: solves per point (the median is reported).
        z3_max_groups: the largest group count Z3 runs at.
    """

    suite: Literal["haxconn"]
    description: str = ""
    parts: Annotated[
        list[Literal["table6", "table8", "fig5", "fig7", "solver", "gap"]], Field(min_length=1)
    ]
    experiments: Annotated[list[Annotated[int, Field(ge=1, le=10)]], Field(min_length=1)] | Literal[
        "all"
    ]
    table6_free_time_limit_s: PositiveFloat
    table8_networks: Names
    fig5_networks: Names
    fig7_experiments: Annotated[list[Annotated[int, Field(ge=1, le=10)]], Field(min_length=1)]
    fig7_time_limit_s: PositiveFloat
    fig7_phase_s: PositiveFloat = 10.0
    solver_groups: Annotated[list[PositiveInt], Field(min_length=1)]
    solver_time_limit_s: PositiveFloat
    solver_repeats: PositiveInt
    z3_max_groups: NonNegInt

    @field_validator("table8_networks", "fig5_networks")
    @classmethod
    def _nets(cls, v: list[str]) -> list[str]:
        return _network_names(v)

    def run(self, out: Path, *, quick: bool, progress: bool) -> dict[str, Any]:
        """``npusched reproduce haxconn`` with these parameters."""
        from npusched.experiments.reproduce.haxconn import reproduce

        return reproduce(
            out,
            quick=quick,
            parts=tuple(self.parts),
            experiments=None if self.experiments == "all" else list(self.experiments),
            table6_free_time_limit_s=float(self.table6_free_time_limit_s),
            table8_networks=tuple(self.table8_networks),
            fig5_networks=tuple(self.fig5_networks),
            fig7_experiments=tuple(self.fig7_experiments),
            fig7_time_limit_s=float(self.fig7_time_limit_s),
            fig7_phase_s=float(self.fig7_phase_s),
            solver_groups=tuple(self.solver_groups),
            solver_time_limit_s=float(self.solver_time_limit_s),
            solver_repeats=self.solver_repeats,
            z3_max_groups=self.z3_max_groups,
            progress=progress,
        )


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
            and ("[" in p or p.startswith(("constrained-", "function-", "literal")) or p
                 in {"float", "int", "str", "bool", "tuple", "list"})
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
    model = SUITE_MODELS[str(kind)]
    body = {k: v for k, v in data.items() if k != "quick"}
    quick_over = data.get("quick", {})
    if not isinstance(quick_over, Mapping):
        raise ConfigError(f"{source}: quick: expected a table of the parameters --quick changes")
    if "suite" in quick_over:
        raise ConfigError(f"{source}: quick.suite: the suite cannot change in quick mode")

    def validate(d: Mapping[str, Any], quick_keys: Mapping[str, Any]) -> Suite:
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
        return _prema_sweep(suite)
    if isinstance(suite, PlanariaSuite):
        return _planaria_sweep(suite)
    if isinstance(suite, FluidSuite):
        return _fluid_sweep(suite)
    raise ConfigError(
        f"suite {suite.suite!r} is not a grid of simulation runs; allowed: {', '.join(SWEEPABLE)}"
    )


def _prema_sweep(s: PremaSuite) -> dict[str, Any]:
    from npusched.experiments.reproduce.prema import _Context

    ctx = _Context(s.setup())
    batches = sorted(set(s.batch_sizes))
    policies = []
    for p in s.policies:
        params: dict[str, Any] = {}
        if p.mechanism is not None:
            params["mechanism"] = p.mechanism
        if p.tokens is not None:
            params["tokens"] = p.tokens
        policies.append(
            {"label": p.label, "policy": {"name": p.policy, "params": params},
             "sim.predictor": p.predictor}
        )
    # the reproduction's dispatch window (_Context.window), at each load of the sweep
    mean_iso = {b: ctx.mean_isolated(b) for b in batches}
    grids = [
        {
            "policy": policies,
            "load": [{"label": float(load)}],
            "batch": [
                {
                    "label": b,
                    "workload.batch_sizes": [b],
                    "workload.window_s": s.n_tasks * mean_iso[b] / float(load),
                }
            ],
        }
        for load in s.sweep_loads
        for b in batches
    ]
    return {
        "name": "prema-suite",
        "description": (
            f"PREMA suite as a sweep: {len(s.policies)} policies x loads "
            f"{[float(x) for x in s.sweep_loads]} x batch sizes {batches} x {s.runs} seeds, "
            f"{s.n_tasks} tasks per workload."
        ),
        "seeds": {"start": s.seed, "count": s.runs},
        "base": {
            "hardware": {"device": s.device},
            "workload": {
                "kind": "prema",
                "n_tasks": s.n_tasks,
                "models": list(s.networks),
                "window_s": ctx.window(batches[0]),
                "batch_sizes": [batches[0]],
            },
            "sim": {"preemption_point": s.preemption_point},
        },
        "grids": grids,
        "report": {
            "x": "load",
            "metrics": ["antt", "stp", "fairness", "sla_violation_rate_n4",
                        "p95_high_priority_norm"],
            "baseline": "NP-FCFS",
        },
    }


def _planaria_sweep(s: PlanariaSuite) -> dict[str, Any]:
    from npusched.experiments.reproduce.planaria import reference_rate
    from npusched.workloads.planaria import PRIORITIES, qos_table, scenario_networks

    st = s.setup
    # a sweep runs the zoo's layer tables as they are: the per-channel depthwise mapping
    workloads = [
        {
            "label": f"{w}/{q}",
            "workload": {
                "kind": "poisson",
                "models": list(scenario_networks(w, s.benchmarks)),
                "rate_per_s": reference_rate(
                    w, st.load, benchmarks=s.benchmarks, depthwise="per-channel"
                ),
                "n_requests": st.n_requests,
                "priorities": list(PRIORITIES),
                "qos": qos_table(w, q, s.benchmarks),
            },
        }
        for w in s.scenarios
        for q in s.qos_levels
    ]
    return {
        "name": "planaria-suite",
        "description": (
            "Planaria suite as a sweep: P-PREMA on the 128x128 array vs Planaria on 16 fission "
            f"subarrays, Table I workloads at load {st.load:g}, {st.instances} instance"
            f"{'' if st.instances == 1 else 's'}."
        ),
        "seeds": {"start": st.seed, "count": st.instances},
        "base": {"workload": workloads[0]["workload"]},
        "grid": {
            "system": [
                {"label": "PREMA", "hardware": {"device": "prema-npu"},
                 "policy": {"name": "P-PREMA", "params": {"mechanism": "checkpoint"}},
                 "sim.predictor": "prema"},
                {"label": "Planaria", "hardware": {"device": "planaria"},
                 "policy": {"name": "Planaria"}},
            ],
            "workload": workloads,
        },
        "report": {
            "metrics": ["slo_attainment", "fairness", "antt", "p99_latency_s", "energy_j"],
            "baseline": "PREMA",
        },
    }


def _fluid_policy(name: str, slo_s: float, b_max: int) -> dict[str, Any]:
    """A Fig. 7-9 policy name as a named-axis value: the policy and the NPU batching it runs
    on (:func:`npusched.experiments.reproduce.fluid_serving.policy_for`)."""
    if name == "SERIAL":
        pol: dict[str, Any] = {"name": "SERIAL"}
        strategy, stackable = "serial", False
    elif name == "FluidB":
        pol = {"name": "FluidB", "params": {"slo_s": slo_s, "b_max": b_max}}
        strategy, stackable = "fluid", True
    elif name == "LazyBatching":
        pol = {"name": "LazyBatching", "params": {"slo_s": slo_s, "b_max": b_max}}
        strategy, stackable = "r", False
    else:
        kind, _, size = name.split("-")
        params = {"slo_s": slo_s, "timeout": size, "b_max": b_max, "name": name}
        pol = {"name": "AdaptB", "params": params}
        strategy, stackable = kind.lower(), False
    return {
        "label": name,
        "policy": pol,
        "hardware.params.strategy": strategy,
        "hardware.params.stackable": stackable,
    }


def _fluid_sweep(s: FluidSuite) -> dict[str, Any]:
    from npusched.experiments.reproduce.fluid_serving import POLICY_NAMES
    from npusched.hardware.gemm_dse import PAPER_TABLE1
    from npusched.hardware.gemm_npu import BOARDS

    grids = []
    for st in s.serving_setups:
        if (st.model, st.board) not in PAPER_TABLE1:
            raise ConfigError(
                f"fluid suite as a sweep: serving setup {st.model}/{st.board} has no Table I "
                f"design; allowed: {', '.join(f'{m}/{b}' for m, b in PAPER_TABLE1)}"
            )
        d, b = PAPER_TABLE1[(st.model, st.board)], BOARDS[st.board]
        setup = {
            "label": f"{st.model}/{st.board}",
            "hardware": {
                "device": "gemm-npu",
                "params": {
                    "tr": d.tr,
                    "tp": d.tp,
                    "tc": d.tc,
                    "frequency_hz": b.frequency_hz,
                    "memory_bandwidth_bps": b.bandwidth_bps,
                },
            },
            "workload.models": [st.model],
            "workload.qos": {st.model: st.slo_s},
            "exits": {st.model: {"n_exits": 4}},
        }
        for name in POLICY_NAMES:
            pol = _fluid_policy(name, float(st.slo_s), s.b_max)
            if s.designs == "dse":  # each policy on its own DSE design (the grid's device)
                from npusched.experiments.reproduce.fluid_serving import _model

                dd = _model(st.model, st.board).design(
                    pol["hardware.params.strategy"], pol["hardware.params.stackable"], "dse"
                )
                pol.update({"hardware.params.tr": dd.tr, "hardware.params.tp": dd.tp,
                            "hardware.params.tc": dd.tc})
            grids.append(
                {
                    "setup": [setup],
                    "policy": [pol],
                    "workload.rate_per_s": list(st.rates),
                }
            )
    first = s.serving_setups[0]
    return {
        "name": "fluid-suite",
        "description": (
            "Fluid Batching Fig. 7/8 as a sweep: SERIAL, FC-/R-AdaptB, LazyBatching and FluidB "
            f"on {'their own DSE designs' if s.designs == 'dse' else 'Table I designs'}, "
            f"{s.n_samples} samples per point, {s.seeds} seeds."
        ),
        "seeds": {"start": 0, "count": s.seeds},
        "base": {
            "workload": {
                "kind": "poisson",
                "models": [first.model],
                "rate_per_s": float(first.rates[0]),
                "n_requests": s.n_samples,
            },
            "sim": {"preemption_point": "layer"},
        },
        "grids": grids,
        "report": {
            "x": "workload.rate_per_s",
            "metrics": ["mean_latency_s", "p99_latency_s", "slo_attainment", "throughput_rps"],
            "baseline": "LazyBatching",
        },
    }


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
        try:
            value: Any = tomllib.loads(f"v = {text.strip()}")["v"]
        except tomllib.TOMLDecodeError:
            value = text.strip()
        for part in reversed(parts[1:]):
            value = {part.strip(): value}
        head = parts[0].strip()
        if head in out and isinstance(out[head][1], dict) and isinstance(value, dict):
            value = _merge(out[head][1], value)
        elif head in out:
            raise ConfigError(f"--set {key}: given twice")
        out[head] = (f"--set {key}" if len(parts) == 1 else f"--set {head}", value)
    return out


def run_suite(
    name: str,
    out: str | os.PathLike[str],
    *,
    config: str | os.PathLike[str] | None = None,
    quick: bool = False,
    progress: bool = True,
    overrides: Mapping[str, tuple[str, Any]] | None = None,
) -> dict[str, Any]:
    """``npusched reproduce NAME [--config FILE]``: load the parameters (checked before anything
    runs) and run the suite into ``out``."""
    suite = load_suite(name, config, quick=quick, overrides=overrides)
    return suite.run(Path(out), quick=quick, progress=progress)
