"""Spatial multi-tenancy policies: the accelerator's subarrays split among co-running tasks.

:mod:`npusched.policies.spatial.planaria` holds Planaria's Algorithm 1 as pure functions over
plain task records; the policy class on the engine contract wraps them.
"""

from npusched.policies.spatial.planaria import (
    PlanariaPolicy,
    SpatialTask,
    allocate_fit_tasks,
    allocate_unfit_tasks,
    estimate_resources,
    predict_remaining,
    schedule_tasks_spatially,
)

__all__ = [
    "PlanariaPolicy",
    "SpatialTask",
    "allocate_fit_tasks",
    "allocate_unfit_tasks",
    "estimate_resources",
    "predict_remaining",
    "schedule_tasks_spatially",
]
