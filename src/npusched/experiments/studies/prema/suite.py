"""PREMA (HPCA 2020): the study's parameters (:class:`PremaSuite`, ``suite = "prema"``) and
its points as a sweep (:func:`prema_sweep`: policy x load x batch size x seed)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field, field_validator, model_validator

from npusched.experiments.config import (
    BatchSize,
    PositiveFloat,
    PositiveInt,
    Switch,
    _field_check,
    _network_names,
)
from npusched.experiments.studies._fields import Names, NonNegInt, _device, _Strict, _unique


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
    :mod:`npusched.experiments.studies.prema` for the method).

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
        """The :class:`~npusched.experiments.studies.prema.points.PremaSetup` of these parameters."""
        from npusched.experiments.studies.prema.points import PremaSetup

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
        """The :class:`~npusched.experiments.studies.prema.points.PolicySpec` list."""
        from npusched.experiments.studies.prema.points import PolicySpec

        return [
            PolicySpec(p.label, p.policy, p.mechanism, p.predictor, p.tokens)
            for p in self.policies
        ]

    def run(self, out: Path, *, quick: bool, progress: bool) -> dict[str, Any]:
        """``npusched reproduce prema`` with these parameters."""
        from npusched.experiments.studies.prema.run import reproduce

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



def prema_sweep(s: PremaSuite) -> dict[str, Any]:
    """``s`` as a sweep: policy x load (``sweep_loads``) x batch size x ``runs`` seeds. Seed
    ``i`` of batch size ``b`` draws the reproduction's workload (b, run i) (``seed_stream =
    [seed, 1, b]``), in the reproduction's dispatch window at each load; so a point at the
    reproduction's ``load`` gives the reproduction's result for that (policy, b, run)."""
    from npusched.experiments.studies.prema.points import _Context

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
                    # the reproduction's stream of (b, run): seed i of the sweep is run i
                    "workload.seed_stream": [s.seed, 1, b],
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
        "seeds": {"start": 0, "count": s.runs},
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
