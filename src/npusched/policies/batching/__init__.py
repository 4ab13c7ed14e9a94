"""Batching policies (Fluid Batching, Kouris et al.): decision logic as pure functions.

* :mod:`.fluidb` - FluidB, the exit-aware preemptive scheduler (Algorithm 1, Eq. 3-4).
* :mod:`.adaptb` - adaptive batching (AdaptB) with S/M/L timeouts, and SERIAL.
* :mod:`.lazyb` - LazyBatching as the Fluid Batching paper describes it.
* :mod:`.policies` - FluidB, AdaptB, SERIAL and LazyBatching as machine policies on the engine.

The thin policy classes on the engine's contract call these functions; they hold no state.
"""

from npusched.policies.batching.adaptb import (
    TIMEOUT_FRACTIONS,
    AdaptBDecision,
    adaptb_decide,
    adaptb_timeout,
    serial_decide,
)
from npusched.policies.batching.fluidb import (
    B_MAX,
    Backfill,
    ExitLUT,
    batch_increment,
    catch_up_time,
    exits_at,
    fluidb_decide,
    initial_batch,
    merge_after_catch_up,
    overhead,
    slack,
)
from npusched.policies.batching.lazyb import (
    LazyDecision,
    fold_heads,
    lazy_decide,
    lazy_overhead,
)
from npusched.policies.batching.policies import (
    AdaptBPolicy,
    FluidBPolicy,
    LazyBatchingPolicy,
    SerialPolicy,
    exit_lut_from_profile,
)

__all__ = [
    "B_MAX",
    "TIMEOUT_FRACTIONS",
    "AdaptBDecision",
    "AdaptBPolicy",
    "Backfill",
    "ExitLUT",
    "FluidBPolicy",
    "LazyBatchingPolicy",
    "LazyDecision",
    "SerialPolicy",
    "adaptb_decide",
    "adaptb_timeout",
    "batch_increment",
    "catch_up_time",
    "exit_lut_from_profile",
    "exits_at",
    "fluidb_decide",
    "fold_heads",
    "initial_batch",
    "lazy_decide",
    "lazy_overhead",
    "merge_after_catch_up",
    "overhead",
    "serial_decide",
    "slack",
]
