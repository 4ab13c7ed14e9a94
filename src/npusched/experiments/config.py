"""The run configuration (``npusched run CONFIG.toml|.yaml``): a strict pydantic schema.

A config has a top-level ``seed`` and the tables ``[hardware]``, ``[workload]``, ``[policy]``,
``[sim]`` and ``[metrics]``, and optionally ``[machine]`` and ``[power]``; ``[workload]`` is
selected by its ``kind`` (``prema``, ``poisson`` or ``trace``). ``[policy] name`` names a
temporal policy (``POLICIES``) or a machine policy (``MACHINE_POLICIES``, e.g. ``Planaria``). Every table forbids unknown keys. Device, network and policy names are checked
against their registries, and device / policy parameters against the constructors' keywords, when
the config is parsed, so a typo fails before any simulation starts.

Any problem raises a single-line :class:`~npusched.errors.ConfigError`:
``<file>: <field.path>: <problem>; allowed: ...``.

Parsing has no side effects: no files are written and nothing is simulated (building the device
and policy to check their parameters is pure).

Machines, plan axes and power are built from a parsed config by
:mod:`npusched.experiments.assemble` (:func:`machine_for`, :func:`axes_for`, :func:`power_for`,
re-exported here); the machine a device implies is the device's own word
(:func:`npusched.hardware.machines.machine_layout`).
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Callable, Hashable, Mapping, Sequence
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from npusched.errors import ConfigError, NpuschedError, ParameterError
from npusched.experiments.assemble import (
    _check_policy_machine,
    axes_for,
    machine_for,
    power_for,
)
from npusched.hardware.profile import MAX_BATCH
from npusched.workloads.generators import MAX_REQUESTS

__all__ = [
    "HardwareConfig",
    "MachineConfig",
    "MetricsConfig",
    "PoissonWorkloadConfig",
    "PolicyConfig",
    "PremaWorkloadConfig",
    "ResourceConfig",
    "RunConfig",
    "SimConfig",
    "TraceWorkloadConfig",
    "WorkloadConfig",
    "axes_for",
    "load_config",
    "machine_for",
    "parse_config",
    "power_for",
]

T = TypeVar("T")

PositiveFloat = Annotated[float, Field(gt=0, allow_inf_nan=False)]
NonNegFloat = Annotated[float, Field(ge=0, allow_inf_nan=False)]


def _not_bool(v: Any) -> Any:
    # lax pydantic would read `true` as 1 (seed = true, batch_sizes = [true])
    if isinstance(v, bool):
        raise ValueError(f"expected an integer, got {str(v).lower()}")
    return v


# counts are strict: "8" and 8.0 are refused, not coerced to 8
PositiveInt = Annotated[int, BeforeValidator(_not_bool), Field(gt=0, strict=True)]
BatchSize = Annotated[int, BeforeValidator(_not_bool), Field(gt=0, le=MAX_BATCH, strict=True)]
# switches are strict: "yes" and 1 are refused, only true/false
Switch = Annotated[bool, Field(strict=True)]
#: a workload's random stream prefix (``SeedSequence([*seed_stream, seed])``)
SeedStream = list[Annotated[int, Field(ge=0, strict=True)]]


def _priority(p: Any) -> Any:
    # the generator's check (one message naming both kinds of allowed value); the value is kept
    # as written, the generator resolves level names
    from npusched.workloads.generators import resolve_priority

    _field_check(resolve_priority, p)
    return p


Priority = Annotated[int | str, BeforeValidator(_priority)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=False)


def _field_check(check: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
    """``check(*args, **kwargs)``, re-raising an :class:`NpuschedError` as a ``ValueError`` (an
    unknown name is a ``KeyError``), which pydantic reports under the field's path."""
    try:
        return check(*args, **kwargs)
    except NpuschedError as e:
        raise ValueError(str(e)) from None


def _network_names(values: Sequence[str]) -> list[str]:
    """Canonical zoo names of ``values`` (unknown names list the allowed ones)."""
    from npusched.workloads.generators import canonical_names

    return _field_check(canonical_names, values)


class HardwareConfig(_Strict):
    """``[hardware]``: the accelerator.

    Attributes:
        device: registered device name (e.g. ``prema-npu``, PREMA Table I).
        params: keyword overrides for the device constructor (e.g. ``rows = 64``).
        axes: plan-axis values to compile, e.g. ``{ subarrays = [1, 2, 4, 8, 16] }`` (default:
            see the module docstring).
    """

    device: str = "prema-npu"
    params: dict[str, Any] = Field(default_factory=dict)
    axes: dict[str, Annotated[list[Any], Field(min_length=1)]] | None = None

    @field_validator("device")
    @classmethod
    def _known_device(cls, v: str) -> str:
        from npusched.hardware import DEVICES

        _field_check(DEVICES.get, v)
        return v


class PremaWorkloadConfig(_Strict):
    """``kind = "prema"``: PREMA Sec. III, ``n_tasks`` tasks dispatched uniformly in a window."""

    kind: Literal["prema"]
    n_tasks: Annotated[PositiveInt, Field(le=MAX_REQUESTS)] = 8
    models: Annotated[list[str], Field(min_length=1)]
    window_s: NonNegFloat
    batch_sizes: Annotated[list[BatchSize], Field(min_length=1)] = [1, 4, 16]
    priorities: Annotated[list[Priority], Field(min_length=1)] = [
        "low",
        "medium",
        "high",
    ]
    #: ``[lo, hi]`` milliseconds: keep only tasks whose isolated latency lies in it (PREMA's
    #: tasks run 0.5-45 ms, Sec. IV-D: ``job_range_ms = [0.5, 45]``); tasks outside it are
    #: redrawn, so the mix is the uniform one conditioned on the range.
    job_range_ms: tuple[NonNegFloat, NonNegFloat] | None = None
    #: The workload's random stream: ``numpy.random.SeedSequence([*seed_stream, seed])`` with
    #: the run's ``seed`` last, instead of the seed alone. ``npusched reproduce prema`` draws
    #: the workload of (batch size b, run r) from ``[base seed, 1, b, r]``; its suite as a
    #: sweep sets ``seed_stream = [base seed, 1, b]`` and seeds ``r``, so both draw the same.
    seed_stream: SeedStream | None = None

    @field_validator("models")
    @classmethod
    def _models(cls, v: list[str]) -> list[str]:
        return _network_names(v)

    @field_validator("job_range_ms")
    @classmethod
    def _job_range(
        cls, v: tuple[float, float] | None
    ) -> tuple[float, float] | None:
        if v is not None and not v[0] < v[1]:
            raise ValueError(f"must be [lo, hi] milliseconds with lo < hi, got {list(v)}")
        return v


class PoissonWorkloadConfig(_Strict):
    """``kind = "poisson"``: exponential inter-arrival gaps at ``rate_per_s``.

    Give exactly one of ``duration_s`` and ``n_requests``. ``qos`` is a network -> SLO seconds
    table or a scalar multiple of each request's isolated latency.
    """

    kind: Literal["poisson"]
    rate_per_s: PositiveFloat
    models: Annotated[list[str], Field(min_length=1)]
    duration_s: PositiveFloat | None = None
    n_requests: Annotated[PositiveInt, Field(le=MAX_REQUESTS)] | None = None
    weights: list[NonNegFloat] | dict[str, NonNegFloat] | None = None
    priorities: tuple[PositiveInt, PositiveInt] = (1, 11)
    qos: PositiveFloat | dict[str, PositiveFloat] | None = None
    batch_sizes: Annotated[list[BatchSize], Field(min_length=1)] = [1]
    #: ``"exponential"`` gaps, or ``"artifact"``: the Planaria authors' Poisson-distributed
    #: whole-millisecond gaps (:func:`~npusched.workloads.generators.poisson_workload`; the
    #: Planaria suite's, so its sweep draws the reproduction's requests).
    arrivals: Literal["exponential", "artifact"] = "exponential"
    #: The workload's random stream, as for ``kind = "prema"``: ``SeedSequence([*seed_stream,
    #: seed])``. ``npusched reproduce planaria`` draws instance i of (scenario s, QoS q) from
    #: ``[base seed, s, q, i]``; its suite as a sweep sets ``seed_stream = [base seed, s, q]``
    #: and seeds ``i``, so both draw the same requests. ``npusched reproduce fluid`` draws a
    #: serving point (rate, seed ``i``) from ``[rate in milli-samples/s, i]``, each sample's exit
    #: (``[exits.NETWORK]``) from that stream's part 1; its sweep sets ``seed_stream = [rate x
    #: 1000]``.
    seed_stream: SeedStream | None = None

    @field_validator("models")
    @classmethod
    def _models(cls, v: list[str]) -> list[str]:
        return _network_names(v)

    @field_validator("qos")
    @classmethod
    def _qos_names(cls, v: float | dict[str, float] | None) -> float | dict[str, float] | None:
        if isinstance(v, dict):
            names = _network_names(list(v))
            return dict(zip(names, v.values(), strict=True))
        return v

    @model_validator(mode="after")
    def _check(self) -> PoissonWorkloadConfig:
        # the generator's own checks, so the config and the Python API agree
        from npusched.workloads.generators import check_poisson_args

        _field_check(
            check_poisson_args,
            self.models,
            duration_s=self.duration_s,
            n_requests=self.n_requests,
            weights=self.weights,
            priorities=self.priorities,
            qos=self.qos,
            batch_sizes=self.batch_sizes,
        )
        return self


class TraceWorkloadConfig(_Strict):
    """``kind = "trace"``: replay a CSV/Parquet trace (see :mod:`npusched.workloads.trace`).

    ``path`` is relative to the config file. ``qos`` (optional) sets the SLO of rows without
    ``slo_s`` to that multiple of their isolated latency.
    """

    kind: Literal["trace"]
    path: str
    qos: PositiveFloat | None = None
    ignore_extra_columns: Switch = False


WorkloadConfig = Annotated[
    PremaWorkloadConfig | PoissonWorkloadConfig | TraceWorkloadConfig, Field(discriminator="kind")
]
_WORKLOADS: dict[str, type[BaseModel]] = {
    "prema": PremaWorkloadConfig,
    "poisson": PoissonWorkloadConfig,
    "trace": TraceWorkloadConfig,
}


class PolicyConfig(_Strict):
    """``[policy]``: a registered temporal policy (``NP-FCFS``, ``P-HPF``, ``P-PREMA``, ...) or
    machine policy (``Planaria``)."""

    name: str = "NP-FCFS"
    params: dict[str, Any] = Field(default_factory=dict)

    @field_validator("name")
    @classmethod
    def _known_policy(cls, v: str) -> str:
        from npusched.policies.machine import policy_factory

        import_builtin_policies()
        _field_check(policy_factory, v)
        return v


class ResourceConfig(_Strict):
    """One entry of ``[machine] resources`` (:class:`npusched.sim.resources.Resource`).

    Attributes:
        name: unique within the machine.
        kind: free text (``npu``, ``fission-array``, ``gpu``).
        capacity: units (>= 1).
        units_axis: the device plan axis the allocated unit count selects (``subarrays``).
        fixed: plan axes every job on this resource runs with.
        idle_power_w: watts drawn while idle (default: the device's ``idle_power_w``, else 0).
    """

    name: Annotated[str, Field(min_length=1)]
    kind: str = "npu"
    capacity: PositiveInt = 1
    units_axis: str | None = None
    fixed: dict[str, Any] = Field(default_factory=dict)
    idle_power_w: NonNegFloat | None = None


class MachineConfig(_Strict):
    """``[machine]``: the resources the policy shares (default: implied by the device)."""

    resources: Annotated[list[ResourceConfig], Field(min_length=1)]

    @field_validator("resources")
    @classmethod
    def _unique(cls, v: list[ResourceConfig]) -> list[ResourceConfig]:
        names = [r.name for r in v]
        dup = next((n for n in names if names.count(n) > 1), None)
        if dup is not None:
            raise ValueError(f"resource name {dup!r} appears twice")
        return v


class SimConfig(_Strict):
    """``[sim]``: engine options.

    Attributes:
        preemption_point: where CHECKPOINT stops a job, ``tile`` or ``layer``.
        checkpoint_cost: charge checkpoint save/restore time (bytes / memory bandwidth).
        predictor: the latency estimate policies see, ``oracle`` (exact) or ``prema``
            (PREMA Algorithm 1 with the RNN output-length regression).
        until_s: stop the simulation at this time (seconds); unfinished requests are dropped from
            the metrics and counted in ``n_unfinished``.
    """

    preemption_point: Literal["tile", "layer"] = "tile"
    checkpoint_cost: Switch = True
    predictor: Literal["oracle", "prema"] = "oracle"
    until_s: PositiveFloat | None = None


class MetricsConfig(_Strict):
    """``[metrics]``: which SLA multiples and latency percentiles to report."""

    sla_n: Annotated[list[PositiveFloat], Field(min_length=1)] = [float(n) for n in range(2, 21)]
    percentiles: Annotated[list[Annotated[float, Field(gt=0, le=100)]], Field(min_length=1)] = [
        50.0,
        95.0,
        99.0,
    ]


class ExitsConfig(_Strict):
    """``[exits.NETWORK]``: early exits attached to a network (Fluid Batching Sec. II):
    ``n_exits - 1`` intermediate exits equidistant in MACs plus the final one, each sample
    leaving at an exit drawn from ``rates`` (default: the paper's rates where it has them,
    ResNet-50 and Inception-v3)."""

    n_exits: PositiveInt = 4
    rates: Annotated[list[NonNegFloat], Field(min_length=1)] | None = None

    @model_validator(mode="after")
    def _check(self) -> ExitsConfig:
        if self.rates is not None:
            from npusched.models.exits import parse_rates

            _field_check(parse_rates, self.rates, self.n_exits)
        return self


class RunConfig(_Strict):
    """A complete run: ``seed`` plus the five tables. ``name`` is free text for reports."""

    name: str | None = None
    seed: Annotated[int, BeforeValidator(_not_bool), Field(ge=0, strict=True)] = 0
    hardware: HardwareConfig = Field(default_factory=HardwareConfig)
    workload: WorkloadConfig
    policy: PolicyConfig = Field(default_factory=PolicyConfig)
    sim: SimConfig = Field(default_factory=SimConfig)
    metrics: MetricsConfig = Field(default_factory=MetricsConfig)
    machine: MachineConfig | None = None
    power: dict[str, Any] | None = None
    exits: dict[str, ExitsConfig] | None = None

    @field_validator("exits")
    @classmethod
    def _exit_names(cls, v: dict[str, ExitsConfig] | None) -> dict[str, ExitsConfig] | None:
        if v is None:
            return v
        return dict(zip(_network_names(list(v)), v.values(), strict=True))


def import_builtin_policies() -> None:
    """Register the built-in policies of every kind (:mod:`npusched.policies.catalog`)."""
    from npusched.policies.registry import REGISTRY

    REGISTRY.load_builtins()


# --- error formatting --------------------------------------------------------------------------
def _fields_at(loc: Sequence[str | int], data: Any) -> list[str] | None:
    """Field names of the model at ``loc`` (for "allowed:" in unknown-key errors)."""
    model: type[BaseModel] = RunConfig
    node = data
    for part in loc:
        if isinstance(part, int):
            return None
        node = node.get(part) if isinstance(node, Mapping) else None
        if part == "workload" and model is RunConfig:
            kind = node.get("kind") if isinstance(node, Mapping) else None
            sub: type[BaseModel] | None = _WORKLOADS.get(str(kind))
        else:
            ann = model.model_fields.get(str(part))
            t = ann.annotation if ann is not None else None
            sub = t if isinstance(t, type) and issubclass(t, BaseModel) else None
        if sub is None:
            return None
        model = sub
    return list(model.model_fields)


def _clean_loc(loc: Sequence[str | int]) -> list[str | int]:
    out = list(loc)
    # discriminated unions put the tag in the location: workload.prema.n_tasks
    if len(out) >= 2 and out[0] == "workload" and out[1] in _WORKLOADS:
        del out[1]
    # pydantic names union branches ("float", "constrained-float", "dict[str,...]", ...)
    return [
        p
        for p in out
        if not (
            isinstance(p, str) and ("[" in p or p in _TYPE_TAGS or p.startswith("constrained-"))
        )
    ]


_TYPE_TAGS = {"float", "int", "str", "bool", "list", "dict", "tuple", "none", "literal"}


def _dotted(loc: Sequence[str | int]) -> str:
    s = ""
    for p in loc:
        s += f"[{p}]" if isinstance(p, int) else (f".{p}" if s else str(p))
    return s or "(top level)"


def _format_error(source: str, exc: ValidationError, data: Any) -> str:
    errors = exc.errors(include_url=False)
    first = _clean_loc(errors[0]["loc"])

    def specificity(e: Any) -> tuple[int, bool]:
        # A union reports one error per branch: prefer the deepest location (the branch the
        # value was meant for), then a constraint over a type mismatch.
        return len(_clean_loc(e["loc"])), not str(e["type"]).endswith(("_type", "_parsing"))

    same_field = [e for e in errors if _clean_loc(e["loc"])[: len(first)] == first]
    err = max(same_field, key=specificity)  # max keeps the first of equals
    kind = err["type"]
    loc = _clean_loc(err["loc"])
    ctx = err.get("ctx") or {}
    where = _dotted(loc)
    got = err.get("input")
    if kind == "extra_forbidden":
        keys = _fields_at(loc[:-1], data)
        tail = f"; allowed: {', '.join(keys)}" if keys else ""
        msg = f"{where}: unknown key{tail}"
    elif kind == "missing":
        msg = f"{where}: missing required key"
    elif kind in ("union_tag_invalid", "union_tag_not_found"):
        what = f"unknown kind {ctx.get('tag')!r}" if kind == "union_tag_invalid" else "missing"
        msg = f"{_dotted([*loc, 'kind'])}: {what}; allowed: {', '.join(_WORKLOADS)}"
    elif kind == "literal_error":
        expected = str(ctx.get("expected", "")).replace("'", "").replace(" or ", ", ")
        msg = f"{where}: invalid value {got!r}; allowed: {expected}"
    elif kind == "value_error":
        inner = ctx.get("error")
        msg = f"{where}: {inner if inner is not None else err['msg']}"
    else:
        text = str(err["msg"])
        text = text[:1].lower() + text[1:]
        msg = f"{where}: {text} (got {got!r})"
    return f"{source}: {msg}".replace("\n", " ")


# --- parsing -----------------------------------------------------------------------------------
def _check_params(
    source: str, field: str, factory: Callable[..., Any], params: Mapping[str, Any]
) -> None:
    """Reject keywords the factory does not take (before calling it)."""
    from npusched.registry import unknown_keyword

    bad = unknown_keyword(factory, params)
    if bad is not None:
        key, allowed = bad
        raise ConfigError(
            f"{source}: {field}.{key}: unknown parameter; allowed: {', '.join(allowed) or '(none)'}"
        )
    _check_param_types(source, field, factory, params)


#: The largest integer constructor parameter a config may give (sizes, counts, bytes): a
#: larger value is a typo, and would overflow the cost models' int64 arithmetic. Lower bounds
#: are each component's own (its ``ParameterError`` names them).
INT_PARAM_MAX = 2**31 - 1


def _check_param_types(
    source: str, field: str, factory: Callable[..., Any], params: Mapping[str, Any]
) -> None:
    """Values of parameters annotated ``int`` must be integers up to :data:`INT_PARAM_MAX`
    (``rows = 64.0`` or ``1e30`` is refused, not truncated or overflowed); those annotated
    ``float`` must be finite numbers."""
    import inspect
    import math

    try:
        sig = inspect.signature(factory).parameters
    except (TypeError, ValueError):  # pragma: no cover - no signature
        return
    hi = INT_PARAM_MAX
    for key, value in params.items():
        p = sig.get(key)
        ann = str(p.annotation) if p is not None else ""
        kinds = {a.strip() for a in ann.replace("None", "").split("|") if a.strip()}
        if value is None or isinstance(value, str):
            continue
        if kinds == {"int"}:
            if isinstance(value, bool) or not isinstance(value, int) or value > hi:
                raise ConfigError(
                    f"{source}: {field}.{key}: {value!r} not allowed; allowed: an integer "
                    f"<= {hi:,}"
                )
        elif (
            kinds == {"float"}
            and isinstance(value, int | float)
            and not isinstance(value, bool)
            and not math.isfinite(float(value))
        ):
            raise ConfigError(
                f"{source}: {field}.{key}: {value!r} not allowed; allowed: a finite number"
            )


def _build(source: str, field: str, build: Callable[[], Any]) -> Any:
    try:
        return build()
    except ParameterError as e:  # points at the parameter itself: <field>.<param>
        raise ConfigError(
            f"{source}: {field}.{e.param}: {e.value!r} not allowed; allowed: {e.allowed}"
        ) from None
    except (NpuschedError, TypeError, ValueError) as e:
        text = str(e).splitlines()[0] if str(e) else type(e).__name__
        raise ConfigError(f"{source}: {field}: {text}") from None


def check_components(cfg: RunConfig, source: str = "<config>") -> None:
    """Build the device, the policy, the machine, the plan axes and the power policy once to
    check their parameters (no side effects)."""
    from npusched.hardware import DEVICES
    from npusched.policies.machine import policy_factory

    import_builtin_policies()
    dev_factory = DEVICES.get(cfg.hardware.device)
    _check_params(source, "hardware.params", dev_factory, cfg.hardware.params)
    device = _build(source, "hardware.params", lambda: dev_factory(**cfg.hardware.params))
    _build(source, "hardware.params", device.cache_key)
    pol_factory = policy_factory(cfg.policy.name)
    _check_params(source, "policy.params", pol_factory, cfg.policy.params)
    # Each policy checks its own parameter values (TemporalPolicy.validate).
    policy = _build(source, "policy.params", lambda: pol_factory(**cfg.policy.params))
    validate = getattr(policy, "validate", None)
    if validate is not None:
        _build(source, "policy.params", validate)
    _check_unused_params(source, cfg.policy.name, pol_factory, policy, cfg.policy.params)
    machine = machine_for(cfg, device, source)
    _check_policy_machine(cfg, policy, machine, source, device)
    power = power_for(cfg, device, source)
    axes_for(cfg, device, source, machine=machine, power=power)


#: Policy parameters that only a preemptive policy uses (a non-preemptive one never preempts).
PREEMPTIVE_ONLY_PARAMS = ("mechanism",)


def _check_unused_params(
    source: str, name: str, factory: Callable[..., Any], policy: Any, params: Mapping[str, Any]
) -> None:
    """Refuse a parameter the policy takes but never uses (``mechanism`` on a non-preemptive
    policy such as NP-FCFS), naming the parameters that do matter for it."""
    import inspect

    if getattr(policy, "preemptive", True):
        return
    unused = [k for k in params if k in PREEMPTIVE_ONLY_PARAMS]
    if not unused:
        return
    try:
        names = list(inspect.signature(factory).parameters)
    except (TypeError, ValueError):  # pragma: no cover - builtins without a signature
        names = []
    used = [n for n in names if n not in PREEMPTIVE_ONLY_PARAMS]
    raise ConfigError(
        f"{source}: policy.params.{unused[0]}: {name} is non-preemptive and never uses it; "
        f"allowed: {', '.join(used) or '(none)'}"
    )


def parse_config(data: Mapping[str, Any], source: str = "<config>") -> RunConfig:
    """Validate a config given as a mapping (``source`` names it in error messages)."""
    if not isinstance(data, Mapping):
        raise ConfigError(
            f"{source}: (top level): expected a table of keys, got {type(data).__name__}"
        )
    try:
        cfg = RunConfig.model_validate(dict(data))
    except ValidationError as e:
        raise ConfigError(_format_error(source, e, data)) from None
    check_components(cfg, source)
    return cfg


def read_config_data(path: str | os.PathLike[str]) -> dict[str, Any]:
    """The raw mapping in a ``.toml``, ``.yaml`` or ``.yml`` file (syntax errors -> ConfigError)."""
    p = Path(path)
    suffix = p.suffix.lower()
    if suffix not in (".toml", ".yaml", ".yml"):
        raise ConfigError(f"{p}: unknown config format {suffix!r}; allowed: .toml, .yaml, .yml")
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"{p}: config file not found") from None
    except (OSError, UnicodeDecodeError) as e:
        raise ConfigError(f"{p}: cannot read config: {e}") from None
    if suffix == ".toml":
        try:
            return tomllib.loads(text)
        except tomllib.TOMLDecodeError as e:
            raise ConfigError(f"{p}: TOML syntax error: {e}".replace("\n", " ")) from None
    import yaml

    class _Loader(yaml.SafeLoader):
        """Safe loader that rejects a key given twice in one mapping (TOML does too) instead of
        silently keeping the last value."""

    def _mapping(loader: yaml.SafeLoader, node: yaml.MappingNode) -> dict[Any, Any]:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue  # "<<": merged keys may be overridden
            key = loader.construct_object(key_node, deep=True)
            if not isinstance(key, Hashable):
                continue  # construct_mapping reports it
            if key in seen:
                line = key_node.start_mark.line + 1
                raise ConfigError(f"{p}: YAML key {key!r} given twice (line {line})")
            seen.add(key)
        return loader.construct_mapping(node, deep=True)

    _Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _mapping)
    try:
        data = yaml.load(text, Loader=_Loader)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark is not None else ""
        problem = getattr(e, "problem", None) or str(e).splitlines()[0]
        raise ConfigError(f"{p}: YAML syntax error{where}: {problem}") from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(
            f"{p}: (top level): expected a mapping of keys, got {type(data).__name__}"
        )
    return data


def load_config(path: str | os.PathLike[str]) -> RunConfig:
    """Read and validate a run config from a TOML or YAML file."""
    return parse_config(read_config_data(path), source=str(path))
