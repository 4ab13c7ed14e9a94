"""Contention-aware mapping of concurrent DNNs' layer groups onto an SoC's accelerators
(HaX-CoNN, PPoPP'24): exact schedule execution, the optimal CP-SAT / Z3 formulation, baselines.
"""

from npusched.policies.mapping.execute import (
    ContentionInterval,
    ExecutionResult,
    Schedule,
    Task,
    Workload,
    execute,
)

__all__ = [
    "ContentionInterval",
    "ExecutionResult",
    "Schedule",
    "Task",
    "Workload",
    "execute",
]
