"""Fluid Batching (Kouris et al.): the study's parameters (:class:`FluidSuite`,
``suite = "fluid"``) and its serving grid as a sweep (:func:`fluid_sweep`)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BeforeValidator, Field, field_validator

from npusched.errors import ConfigError
from npusched.experiments.config import (
    PositiveFloat,
    PositiveInt,
    Switch,
    _network_names,
)
from npusched.experiments.studies._fields import _Strict


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


def _fluid_policy(name: str, slo_s: float, b_max: int) -> dict[str, Any]:
    """A Fig. 7-9 policy name as a named-axis value: the policy and the NPU batching it runs
    on (:func:`npusched.experiments.studies.fluid.serving.policy_for`)."""
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


def fluid_sweep(s: FluidSuite) -> dict[str, Any]:
    from npusched.experiments.studies.fluid.serving import POLICY_NAMES, seed_stream
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
                from npusched.experiments.studies.fluid.serving import _model

                dd = _model(st.model, st.board).design(
                    pol["hardware.params.strategy"], pol["hardware.params.stackable"], "dse"
                )
                pol.update({"hardware.params.tr": dd.tr, "hardware.params.tp": dd.tp,
                            "hardware.params.tc": dd.tc})
            for rate in st.rates:  # the reproduction's stream of each rate (same samples)
                grids.append(
                    {
                        "setup": [setup],
                        "policy": [pol],
                        "workload.rate_per_s": [rate],
                        "workload.seed_stream": [seed_stream(float(rate))],
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
