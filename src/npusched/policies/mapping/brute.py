"""Exhaustive search over transition points (the reference the solvers are tested against).

Every task's assignment with at most ``max_transitions`` accelerator changes is enumerated, the
combinations crossed with every task priority order, and each executed exactly
(:func:`~npusched.policies.mapping.execute.execute`). Exponential: for tests and small cases.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator

from npusched.errors import ConfigError
from npusched.policies.mapping.execute import ExecutionResult, Schedule, Workload, execute

__all__ = ["assignments", "brute_force"]


def assignments(n_groups: int, n_acc: int, max_transitions: int | None) -> Iterator[tuple[int, ...]]:
    """All accelerator rows of ``n_groups`` groups with at most ``max_transitions`` changes
    (None = any row), each once."""
    limit = n_groups - 1 if max_transitions is None else min(max_transitions, n_groups - 1)
    for k in range(limit + 1):
        for cuts in itertools.combinations(range(n_groups - 1), k):
            bounds = [0, *(c + 1 for c in cuts), n_groups]
            for accs in itertools.product(range(n_acc), repeat=k + 1):
                if any(accs[i] == accs[i + 1] for i in range(k)):
                    continue
                row: list[int] = []
                for seg, a in enumerate(accs):
                    row.extend([a] * (bounds[seg + 1] - bounds[seg]))
                yield tuple(row)


def brute_force(
    workload: Workload,
    goal: str = "latency",
    *,
    max_transitions: int | None = 1,
    max_evaluations: int = 200_000,
    on_improve: Callable[[Schedule, ExecutionResult], None] | None = None,
) -> tuple[Schedule, ExecutionResult, int]:
    """The best schedule over all transition points and task priorities.

    Returns ``(schedule, its execution, number of schedules executed)``; ``on_improve`` is
    called with every improving schedule as the search finds it (anytime use).

    Raises:
        ConfigError: the space has more than ``max_evaluations`` schedules.
    """
    n_acc = workload.n_accelerators
    rows = [
        list(assignments(t.profile.n_groups, n_acc, max_transitions)) for t in workload.tasks
    ]
    perms = list(itertools.permutations(range(len(workload.tasks))))
    size = len(perms)
    for r in rows:
        size *= len(r)
    if size > max_evaluations:
        raise ConfigError(f"brute force over {size} schedules; allowed: <= {max_evaluations}")
    best: tuple[float, Schedule, ExecutionResult] | None = None
    count = 0
    for combo in itertools.product(*rows):
        seen: set[tuple[tuple[tuple[int, int], ...], ...]] = set()
        for prio in perms:
            res = execute(workload, Schedule(tuple(combo), priority=prio))
            count += 1
            assert res.schedule.order is not None
            if res.schedule.order in seen:
                continue
            seen.add(res.schedule.order)
            val = res.objective(goal)
            if best is None or val < best[0] - 1e-15:
                best = (val, res.schedule, res)
                if on_improve is not None:
                    on_improve(res.schedule, res)
            if not res.contested:
                break  # no dispatch choice arose: every priority gives this result
    assert best is not None
    return best[1], best[2], count
