"""Power policies: layer-wise DFS and DVFS under a power limit (ETRI Journal 2022, shared paper 004).

* :mod:`~npusched.policies.power.schedule` - the decision logic as pure functions over
  per-(level, step) power/latency tables.
* :mod:`~npusched.policies.power.policy` - ``DFS`` / ``DVFS`` components, the
  :data:`POWER_POLICIES` registry and :func:`split_cap` / :func:`job_cap_w` for jobs sharing a cap.
"""

from npusched.policies.power.policy import (
    DFS,
    DVFS,
    POWER_POLICIES,
    GroupedSteps,
    PowerPolicy,
    PowerPolicyBase,
    get_power_policy,
    job_cap_w,
    power_policy_from_config,
    shared_cap_levels,
    split_cap,
)
from npusched.policies.power.schedule import (
    PowerCapError,
    StepSchedule,
    highest_feasible_levels,
    schedule_steps,
    switch_costs,
)

__all__ = [
    "DFS",
    "DVFS",
    "POWER_POLICIES",
    "GroupedSteps",
    "PowerCapError",
    "PowerPolicy",
    "PowerPolicyBase",
    "StepSchedule",
    "get_power_policy",
    "highest_feasible_levels",
    "job_cap_w",
    "power_policy_from_config",
    "schedule_steps",
    "shared_cap_levels",
    "split_cap",
    "switch_costs",
]
