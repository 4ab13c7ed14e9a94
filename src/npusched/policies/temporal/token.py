"""TOKEN: PREMA's token-based candidate group, served first-come first-served (Sec. VI-A).

Tokens, threshold and candidates are exactly PREMA's (see
:mod:`~npusched.policies.temporal.prema`); only the final choice differs: the candidate that
arrived first (ties: the running task, then the lower id) instead of the shortest estimated job.
The predictor enters only through the token growth (waiting time over the estimated isolated
time).
"""

from __future__ import annotations

from collections.abc import Sequence

from npusched.policies.base import POLICIES
from npusched.policies.temporal.prema import PERIOD_S, TOKEN_LEVELS, TokenScheduler
from npusched.sim.types import JobView


def first_come(jobs: Sequence[JobView], running: JobView | None = None) -> JobView | None:
    """The earliest-arrived job (ties: ``running``, then the lower id)."""
    run_id = running.id if running is not None else -1
    return min(jobs, key=lambda j: (j.arrival_s, 0 if j.id == run_id else 1, j.id), default=None)


class NPToken(TokenScheduler):
    """Non-preemptive TOKEN."""

    name = "NP-TOKEN"
    preemptive = False

    def choose(self, candidates: Sequence[JobView], running: JobView | None) -> JobView | None:
        return first_come(candidates, running)


class PToken(NPToken):
    """Preemptive TOKEN; ``mechanism`` as for every ``P-`` policy."""

    name = "P-TOKEN"
    preemptive = True

    def __init__(
        self,
        mechanism: str = "checkpoint",
        period_s: float = PERIOD_S,
        token_levels: tuple[int, ...] = TOKEN_LEVELS,
        threshold: str = ">=",
        include_running: bool = True,
    ) -> None:
        super().__init__(period_s, token_levels, threshold, include_running)
        self.mechanism = mechanism


POLICIES.register("NP-TOKEN", NPToken)
POLICIES.register("P-TOKEN", PToken)
