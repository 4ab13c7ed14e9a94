"""Fluid Batching (Kouris et al.): the paper's numbers as data (Sec. I/IV, Table I/II) and the
rate ranges of its utilisation gains."""

from __future__ import annotations

from typing import Any

from npusched.hardware.gemm_dse import PAPER_TABLE1

__all__ = ["PAPER", "PAPER_TABLE1", "UTILISATION_GAIN_RANGES"]

#: The paper's headline figures, for the report (Sec. I/IV, Table I/II).
PAPER: dict[str, Any] = {
    "table1": {f"{m}/{b}": [d.tr, d.tp, d.tc] for (m, b), d in PAPER_TABLE1.items()},
    "table1_resources_pct": {
        "resnet-50/zc706": [99.56, 99.96],
        "resnet-50/zcu104": [99.53, 99.99],
        "inception-v3/zc706": [100.0, 99.94],
        "inception-v3/zcu104": [100.0, 99.99],
    },
    "avg_latency_gain_vs_sota": 1.97,
    "tail_slo_satisfaction_gain_vs_sota": 6.7,
    "table2_avg_latency_gain_vs_lazybatching_resnet50": [1.43, 2.5],
    "scheduler_invocations_lazy_over_fluidb_resnet50": 16.6,
    "table2": [
        # model, board, rate (samples/s), SLO (s), Lazy avg (s), Lazy viol, FluidB avg, FluidB viol
        ["resnet-50", "zc706", 15, 0.200, 0.173, 0.2353, 0.121, 0.1033],
        ["resnet-50", "zcu104", 40, 0.100, 0.143, 0.3548, 0.057, 0.0838],
        ["inception-v3", "zc706", 15, 0.400, 0.287, 0.1594, 0.213, 0.0793],
        ["inception-v3", "zcu104", 40, 0.200, 0.216, 0.1420, 0.097, 0.0621],
    ],
}


#: The paper's rate ranges of its utilisation gains (Sec. IV): 5-18 samples/s on ZC706 (+20.4%)
#: and 25-35 samples/s on ZCU104 (+13.5%), FluidB over SERIAL.
UTILISATION_GAIN_RANGES: dict[str, tuple[float, float, float]] = {
    "resnet-50": (5.0, 18.0, 0.204),
    "inception-v3": (25.0, 35.0, 0.135),
}
