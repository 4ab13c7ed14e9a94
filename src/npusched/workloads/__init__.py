"""Workloads: the requests that arrive at the accelerator.

* :func:`prema_workload` - PREMA Sec. III: N tasks, uniform dispatch over a window.
* :func:`poisson_workload` - open-loop Poisson stream (MLPerf server, Planaria Sec. VI-A).
* :func:`prema_table` / :func:`poisson_table` / :func:`assemble_table` - the same requests as a
  :class:`RequestTable` (columns; what ``run_config`` passes to the simulator).
* :func:`load_trace` / :func:`save_trace` - replay requests from CSV or Parquet.
"""

from npusched.workloads.generators import (
    RandomState,
    apply_slo,
    assemble,
    assemble_table,
    poisson_table,
    poisson_workload,
    prema_table,
    prema_workload,
    resolve_priority,
    sample_seq_lens,
    stream_rng,
)
from npusched.workloads.request import PRIORITY_LEVELS, Request, RequestTable
from npusched.workloads.trace import load_trace, requests_frame, save_trace

__all__ = [
    "PRIORITY_LEVELS",
    "RandomState",
    "Request",
    "RequestTable",
    "apply_slo",
    "assemble",
    "assemble_table",
    "load_trace",
    "poisson_table",
    "poisson_workload",
    "prema_table",
    "prema_workload",
    "requests_frame",
    "resolve_priority",
    "sample_seq_lens",
    "save_trace",
    "stream_rng",
]
