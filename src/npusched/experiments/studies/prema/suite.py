"""PREMA (HPCA 2020): the study's parameters, declared once.

* :class:`PremaWorkloads`: the keys that determine the workloads and simulations;
* :class:`PremaSetup` (those keys and a job-length range): what a reproduction's points depend
  on, its configuration hash; :meth:`PremaSetup.of` fills the keys not given from the packaged
  suite file;
* :class:`PremaSuite` (``suite = "prema"``, the suite file's schema): those keys and the run's
  (runs, policies, plots, the paper-range study, the sweep's loads). :meth:`PremaSuite.setup`
  and :meth:`PremaSuite.specs` derive the reproduction's setup and policies,
  :func:`~npusched.experiments.studies.prema.run.reproduce` takes any key as a keyword, and
  :func:`~npusched.experiments.studies.prema.as_sweep.prema_sweep` converts the suite to a
  sweep.

The values live in one place, the packaged file ``npusched/data/experiments/suites/prema.toml``.
"""

from __future__ import annotations

import functools
import hashlib
import json
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
from npusched.experiments.suite_io import load_suite_as

#: Bumped when a change alters the results, so stale points are not reused (2: cumulative
#: tokens by default, 142 GB/s effective checkpoint bandwidth; 3: linear tokens by default).
RESULTS_VERSION = 3

Load = Annotated[float, Field(gt=0, le=100, allow_inf_nan=False)]


# --- PREMA ------------------------------------------------------------------------------------
class PremaWorkloads(_Strict):
    """The keys that determine the PREMA study's workloads and simulations (see
    :mod:`npusched.experiments.studies.prema` for the method).

    Attributes:
        networks: zoo names of the DNN mix.
        device: the NPU (``prema-npu``, PREMA Table I).
        n_tasks: tasks per workload.
        batch_sizes: one set of workloads per batch size.
        load: offered load while tasks arrive (sets the dispatch window), in (0, 100].
        seed: base seed of every workload.
        preemption_point: where CHECKPOINT stops a task, ``tile`` or ``layer``.
    """

    networks: Names
    device: str
    n_tasks: PositiveInt
    batch_sizes: Annotated[list[BatchSize], Field(min_length=1)]
    load: Load
    seed: NonNegInt
    preemption_point: Literal["tile", "layer"]

    @field_validator("networks")
    @classmethod
    def _networks(cls, v: list[str]) -> list[str]:
        return _network_names(v)

    @field_validator("device")
    @classmethod
    def _known_device(cls, v: str) -> str:
        return _device(v)


@functools.cache
def _packaged_workloads() -> dict[str, Any]:
    """The :class:`PremaWorkloads` keys of the packaged suite file (its full run)."""
    suite = load_suite_as(PremaSuite, "prema")
    return {k: getattr(suite, k) for k in PremaWorkloads.model_fields}


class PremaSetup(PremaWorkloads):
    """Everything that determines a reproduction's results except the number of runs: the
    :class:`PremaWorkloads` keys (:meth:`of`: the packaged suite file's values with changes) and

    Attributes:
        job_range_s: ``(lo, hi)`` seconds: keep only tasks whose isolated latency lies in it
            (``None``: every task). The paper-range study sets the suite's ``paper_range_ms``
            here; see :meth:`~npusched.experiments.studies.prema.points._Context.draw` for how
            tasks are drawn under it.
    """

    job_range_s: tuple[PositiveFloat, PositiveFloat] | None = None

    @classmethod
    def of(cls, **changes: Any) -> PremaSetup:
        """The packaged suite file's setup with ``changes`` (validated): ``PremaSetup.of()``
        is the paper's, ``PremaSetup.of(seed=1, batch_sizes=(1,))`` a variant of it."""
        return cls(**{**_packaged_workloads(), **changes})

    def replace(self, **changes: Any) -> PremaSetup:
        """A copy with ``changes`` (validated)."""
        return type(self)(**{**self.model_dump(), **changes})

    def range_text(self) -> str:
        """The job-length range in words (``"all"`` or ``"0.5-45 ms"``)."""
        if self.job_range_s is None:
            return "all lengths"
        lo, hi = self.job_range_s
        return f"{lo * 1e3:g}-{hi * 1e3:g} ms"

    def in_range(self, isolated_s: float) -> bool:
        """Whether a task of ``isolated_s`` seconds belongs to this setup's workloads."""
        if self.job_range_s is None:
            return True
        lo, hi = self.job_range_s
        return lo <= isolated_s <= hi

    def config_hash(self) -> str:
        """A short hash of the setup and :data:`RESULTS_VERSION` (not of the run count)."""
        blob = json.dumps({**self.model_dump(), "version": RESULTS_VERSION}, sort_keys=True)
        return hashlib.sha256(blob.encode()).hexdigest()[:12]


class PremaPolicyEntry(_Strict):
    """One policy configuration of the PREMA study (``policies = [{...}, ...]``).

    Attributes:
        label: its name in the results (``P-PREMA-dynamic``); ``NP-FCFS`` is the baseline.
        policy: a registered temporal policy (``npusched`` policy names, e.g. ``P-PREMA``).
        mechanism: ``checkpoint``, ``kill``, ``dynamic``, ``dynamic-kill`` or ``drain``
            (preemptive only; ``drain`` is the mechanism study's, Fig. 5/6).
        predictor: the latency estimate the policy sees, ``prema`` or ``oracle``.
        tokens: PREMA's token rule, ``cumulative`` or ``linear`` (token policies only).
    """

    label: str
    policy: str
    mechanism: Literal["checkpoint", "kill", "dynamic", "dynamic-kill", "drain"] | None = None
    predictor: Literal["prema", "oracle"] = "prema"
    tokens: Literal["cumulative", "linear"] | None = None

    @field_validator("policy")
    @classmethod
    def _known(cls, v: str) -> str:
        import npusched.policies.temporal  # noqa: F401  (registers the built-ins)
        from npusched.policies.base import POLICIES

        _field_check(POLICIES.get, v)
        return v

    def __init__(self, *args: Any, **data: Any) -> None:
        """Fields by keyword, or positionally in their order: ``PolicySpec("P-HPF-kill",
        "P-HPF", "kill")``."""
        super().__init__(**dict(zip(type(self).model_fields, args, strict=False)), **data)

    def build(self) -> Any:
        """A fresh policy object."""
        import npusched.policies.temporal  # noqa: F401  (registers the built-ins)
        from npusched.policies.base import POLICIES

        params: dict[str, Any] = {} if self.mechanism is None else {"mechanism": self.mechanism}
        if self.tokens is not None:
            params["tokens"] = self.tokens
        return POLICIES.create(self.policy, **params)


#: The reproduction's name for a policy configuration (one declaration: the suite file's).
PolicySpec = PremaPolicyEntry


class _SuiteHead(_Strict):
    """The keys every suite file starts with."""

    suite: Literal["prema"]
    description: str = ""


# (the bases' fields come first, the last base's first: suite, description, the workload keys)
class PremaSuite(PremaWorkloads, _SuiteHead):
    """``suite = "prema"``: PREMA (HPCA 2020) Sec. IV-D and VI (see
    :mod:`npusched.experiments.studies.prema` for the method).

    Attributes:
        runs: workloads per (policy, batch size), and low-priority samples per (DNN, batch)
            in the mechanism study (Fig. 5/6); the quick run chooses its workloads from the
            full run's by stratified sampling.
        plots: draw the PNG figures.
        policies: the policy configurations, in report order (must include ``NP-FCFS``).
        paper_range: also run ``paper_range_policies`` with tasks limited to
            ``paper_range_ms`` (into ``OUT/paper-range``).
        paper_range_ms: ``[lo, hi]`` milliseconds of isolated latency (the paper's 0.5-45).
        paper_range_policies: labels (of ``policies``) of the paper-range study.
        sweep_loads: the loads of the suite as a sweep (:func:`suite_sweep_data`; the
            reproduction itself runs at ``load``).
    """

    runs: PositiveInt
    plots: Switch
    policies: Annotated[list[PremaPolicyEntry], Field(min_length=1)]
    paper_range: Switch
    paper_range_ms: tuple[PositiveFloat, PositiveFloat]
    paper_range_policies: list[str]
    sweep_loads: Annotated[list[Load], Field(min_length=1)]

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

    def setup(self) -> PremaSetup:
        """The reproduction's setup: these :class:`PremaWorkloads` keys, every job length."""
        return PremaSetup(**{k: getattr(self, k) for k in PremaWorkloads.model_fields})

    def specs(self) -> list[PremaPolicyEntry]:
        """The policy configurations, in report order."""
        return list(self.policies)


def _with_attributes(doc: str | None, base: type) -> str:
    """``doc`` with ``base``'s ``Attributes:`` entries first in its list (the keys a model
    inherits are documented where they are declared)."""
    head, _, own = (doc or "").partition("Attributes:\n")
    inherited = (base.__doc__ or "").partition("Attributes:\n")[2].rstrip()
    return f"{head}Attributes:\n{inherited}\n{own}"


PremaSuite.__doc__ = _with_attributes(PremaSuite.__doc__, PremaWorkloads)
