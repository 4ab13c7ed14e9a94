"""``npusched reproduce dfs``: the layer-wise DFS vs DVFS study, whose method and parts are in
:mod:`npusched.experiments.studies.dfs` (this module keeps the public import path)."""

from npusched.experiments.studies.dfs.paper import (
    NETWORKS,
    PAPER,
    PAPER_TABLE6,
    POLICIES,
    QUICK_NETWORKS,
)
from npusched.experiments.studies.dfs.points import (
    SENSITIVITY_DYNAMIC_W,
    SENSITIVITY_IDLE_W,
    FrameJob,
    FrameResult,
    calibrate_efficiency,
    engine_frame,
    run_frame,
    schedule_frame,
    sensitivity,
    windowed_peak_power,
)
from npusched.experiments.studies.dfs.run import reproduce

__all__ = [
    "NETWORKS", "PAPER", "PAPER_TABLE6", "POLICIES", "QUICK_NETWORKS", "SENSITIVITY_DYNAMIC_W",
    "SENSITIVITY_IDLE_W", "FrameJob", "FrameResult", "calibrate_efficiency", "engine_frame",
    "reproduce", "run_frame", "schedule_frame", "sensitivity", "windowed_peak_power",
]
