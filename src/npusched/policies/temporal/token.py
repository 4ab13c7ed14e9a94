"""TOKEN: PREMA's token-based candidate group, served first-come first-served (Sec. VI-A).

Tokens, threshold and candidates are exactly PREMA's (see
:mod:`~npusched.policies.temporal.prema`); only the final choice differs: the candidate that
arrived first (ties: the running task, then the lower id) instead of the shortest estimated job.
The predictor enters only through the token growth (waiting time over the estimated isolated
time).
"""

from __future__ import annotations

from collections.abc import Sequence

from npusched.policies.contract import JobView
from npusched.policies.temporal.prema import (
    ALGORITHM_2_METHODS,
    PreemptiveTokenScheduler,
    TokenScheduler,
)


def first_come(jobs: Sequence[JobView], running: JobView | None = None) -> JobView | None:
    """The earliest-arrived job (ties: ``running``, then the lower id)."""
    run_id = running.id if running is not None else -1
    return min(jobs, key=lambda j: (j.arrival_s, 0 if j.id == run_id else 1, j.id), default=None)


class NPToken(TokenScheduler):
    """Non-preemptive TOKEN."""

    name = "NP-TOKEN"
    preemptive = False
    #: Algorithm 2, the first-come candidate first (see :attr:`NPPrema.ready_order`).
    ready_order = "tokens-arrival"
    ready_order_methods = ("choose", *ALGORITHM_2_METHODS)

    def choose(self, candidates: Sequence[JobView], running: JobView | None) -> JobView | None:
        return first_come(candidates, running)


class PToken(PreemptiveTokenScheduler, NPToken):
    """Preemptive TOKEN; parameters: see :class:`PreemptiveTokenScheduler`."""

    name = "P-TOKEN"
