"""Adaptive batching (AdaptB) and SERIAL, the baselines of Fluid Batching (Sec. II-A, IV).

AdaptB is ``<B_max, T_timeout>``: it dispatches a batch of ``B_max`` samples as soon as that many
are queued, otherwise an incomplete batch once ``T_timeout`` is exceeded. Batching is model-level
and exit-unaware: a dispatched batch runs to the end of the network; samples that exit early
leave it (their results are returned there) and no new sample joins it. FC-AdaptB and R-AdaptB
differ only in the NPU's batching strategy (``GemmNPU(strategy="fc" | "r")``).

Choices where the paper is silent:

* The timeout runs from the arrival of the oldest queued sample.
* A batch is dispatched only when the NPU is idle; if it is busy when ``B_max`` samples are
  queued or the timeout expires, the batch (up to ``B_max`` oldest samples) starts when it frees.
* SERIAL dispatches the oldest queued sample alone whenever the NPU is idle.
"""

from __future__ import annotations

from dataclasses import dataclass

from npusched.errors import ConfigError
from npusched.policies.batching.fluidb import B_MAX

__all__ = [
    "TIMEOUT_FRACTIONS",
    "AdaptBDecision",
    "adaptb_decide",
    "adaptb_timeout",
    "serial_decide",
]

#: T_timeout as a fraction of the p99 latency SLO (Sec. IV "Baselines": S/M/L = 5/45/95%).
TIMEOUT_FRACTIONS: dict[str, float] = {"S": 0.05, "M": 0.45, "L": 0.95}


def adaptb_timeout(t_slo: float, size: str) -> float:
    """``T_timeout`` in seconds for window ``size`` (``"S"``, ``"M"`` or ``"L"``)."""
    frac = TIMEOUT_FRACTIONS.get(str(size).upper())
    if frac is None:
        raise ConfigError(f"AdaptB timeout {size!r}; allowed: {', '.join(TIMEOUT_FRACTIONS)}")
    return frac * float(t_slo)


@dataclass(frozen=True)
class AdaptBDecision:
    """``batch`` samples to dispatch now (0: wait); ``timer_at``: absolute time (seconds) to be
    woken for the timeout, or ``None``."""

    batch: int
    timer_at: float | None


def adaptb_decide(
    now: float,
    n_queue: int,
    oldest_arrival: float | None,
    timeout_s: float,
    npu_idle: bool,
    b_max: int = B_MAX,
) -> AdaptBDecision:
    """AdaptB at time ``now`` (seconds) with ``n_queue`` samples queued, the oldest arrived at
    ``oldest_arrival``."""
    if n_queue <= 0 or oldest_arrival is None:
        return AdaptBDecision(0, None)
    deadline = float(oldest_arrival) + float(timeout_s)
    ready = n_queue >= b_max or now >= deadline - 1e-12
    if ready and npu_idle:
        return AdaptBDecision(min(n_queue, b_max), None)
    return AdaptBDecision(0, None if ready else deadline)


def serial_decide(n_queue: int, npu_idle: bool) -> int:
    """SERIAL: one sample whenever the NPU is idle (0: nothing to do)."""
    return 1 if n_queue > 0 and npu_idle else 0
