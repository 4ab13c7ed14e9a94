"""Layer-wise DFS vs DVFS (ETRI J. 2022): the study's parameters (:class:`DfsSuite`,
``suite = "dfs"``; one steady-state frame per network and power policy, not a grid)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, field_validator

from npusched.experiments.config import (
    PositiveFloat,
    Switch,
    _network_names,
)
from npusched.experiments.studies._fields import Names, _Strict


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
        from npusched.experiments.studies.dfs.paper import PAPER_TABLE6

        names = _network_names(v)
        bad = [n for n in names if n not in PAPER_TABLE6]
        if bad:  # Table 6 and the report compare every network with the paper's
            raise ValueError(f"{bad[0]!r} is not a benchmark of the paper; allowed: "
                             + ", ".join(PAPER_TABLE6))
        return names
