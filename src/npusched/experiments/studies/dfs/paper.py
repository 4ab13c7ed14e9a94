"""Layer-wise DFS vs DVFS (ETRI J. 2022): the paper's numbers as data (Sec. 3.2, Sec. 4.1-4.2,
Table 6, the abstract) and its benchmarks."""

from __future__ import annotations

#: The eight benchmarks of Sec. 4.1 (zoo names), in Fig. 4's panel order.
NETWORKS: tuple[str, ...] = (
    "vgg-16",
    "yolov2",
    "yolov3",
    "yolov4",
    "resnet-18",
    "resnet-34",
    "resnet-50",
    "squeezenet",
)
#: Quick runs every network too (frames are cheap); it skips the fit and the sensitivity grid.
QUICK_NETWORKS: tuple[str, ...] = NETWORKS
POLICIES: tuple[str, ...] = ("DFS", "DVFS")

#: Table 6: voltage changes per frame and the average frame time (ms) under DVFS.
PAPER_TABLE6: dict[str, tuple[int, float]] = {
    "vgg-16": (2, 90.9),
    "yolov2": (4, 54.9),
    "yolov3": (4, 105.3),
    "yolov4": (32, 294.1),
    "resnet-18": (10, 59.9),
    "resnet-34": (4, 50.3),
    "resnet-50": (26, 263.2),
    "squeezenet": (10, 50.0),
}
#: Headline numbers of Sec. 4.2 and the abstract (DFS relative to DVFS).
PAPER: dict[str, float] = {
    "fps_gain_mean": 0.33,
    "fps_gain_squeezenet": 0.65,
    "energy_change_mean": -0.14,
    "energy_change_squeezenet": -0.33,
    "avg_power_change_mean": 0.06,
    "avg_power_change_squeezenet": 0.08,
    "dfs_peak_power_max_w": 33.0,
    "mean_layer_time_s": 1.99e-3,
    "dfs_overhead_mean": 0.01,
}
