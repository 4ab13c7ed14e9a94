"""HaX-CoNN (PPoPP'24): the study's parameters (:class:`HaxconnSuite`, ``suite = "haxconn"``;
solver experiments, not a grid of runs)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, field_validator

from npusched.experiments.config import PositiveFloat, PositiveInt, _network_names
from npusched.experiments.studies._fields import Names, NonNegInt, _Strict

__all__ = ["HaxconnSuite"]


# --- HaX-CoNN ---------------------------------------------------------------------------------
class HaxconnSuite(_Strict):
    """``suite = "haxconn"``: HaX-CoNN (PPoPP'24) Sec. 5 (see
    :mod:`npusched.experiments.studies.haxconn`). Not a grid of runs: solver experiments.

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
