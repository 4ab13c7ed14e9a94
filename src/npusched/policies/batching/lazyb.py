"""LazyBatching (Choi et al., HPCA 2021) as the Fluid Batching paper describes it (Sec. II-A, IV).

The paper's account, which we implement (not the original's full node-level graph scheduler):

* **Layer-level preemption, exit-unaware**: the preemption logic is invoked at every layer
  boundary of the active batch (hence many more scheduler invocations than FluidB's per-exit).
* **Coarse latency estimate**: the latency of a batch of ``B`` is ``B x`` the single-sample
  latency, so the overhead of a preemption at layer ``l`` is
  ``B_incr * T1_{0:l} + (B_act + B_incr) * T1_{l+1:L-1}`` with ``T1`` the per-layer
  single-sample latency table (the form of Eq. 4 with LazyBatching's estimator).
* **SLO-aware**: preempt iff that overhead is below the oldest active sample's slack (Eq. 3).
* **No preemption once the batch has been full**: when ``B_act`` reached ``B_max`` (at formation
  or by a merge), preemption is no longer considered for that batch, even after samples exit and
  it shrinks (the paper's second overhead source, Sec. IV: "when the maximum batch size is
  reached, preemption is no longer considered, despite the fact that samples may exit early").
* **Per-layer invocation cost**: every per-layer invocation of the preemption logic stalls the
  NPU for ``invocation_s`` seconds (the paper's first overhead source: "it invokes the preemption
  logic on every layer. As such, the associated latency is not fully amortised"). The paper gives
  no number; :data:`LAZY_INVOCATION_S` is our choice (see its docstring).
* ``B_incr = min(N_Q, B_max - B_act)``; the new samples run from the start to layer ``l`` and
  merge, without nested preemption (as FluidB). Layer ``l`` is 0-based over the backbone; an
  exit head is part of the layer it follows.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from npusched.policies.batching.fluidb import B_MAX, batch_increment, slack

__all__ = ["LAZY_INVOCATION_S", "LazyDecision", "fold_heads", "lazy_decide", "lazy_overhead"]

#: Seconds the NPU stalls per per-layer invocation of LazyBatching's preemption logic (default of
#: ``LazyBatchingPolicy.invocation_s``). Neither the Fluid Batching paper nor LazyBatching's gives
#: a number; ours is a choice: one host round trip on the boards' ARM cores (interrupt from the
#: NPU at the layer boundary, the scheduler's estimate over the queue, the next layer's command
#: written back), taken as 50 us. ``npusched reproduce fluid`` reports Table II's sensitivity to
#: it (0, 50 and 200 us).
LAZY_INVOCATION_S = 50e-6


def fold_heads(
    layer_s: npt.NDArray[np.float64],
    exit_after: Sequence[int],
    head_s: Sequence[float],
) -> npt.NDArray[np.float64]:
    """Per-layer seconds with each exit head's seconds added to the layer it follows: LazyBatching's
    single-sample layer table of an early-exit network (heads are not preemption points)."""
    out = np.array(layer_s, dtype=np.float64, copy=True)
    np.add.at(out, np.asarray(exit_after, dtype=np.int64), np.asarray(head_s, dtype=np.float64))
    return out


def lazy_overhead(
    single_layer_s: npt.NDArray[np.float64], layer_idx: int, b_incr: int, b_merged: int
) -> float:
    """LazyBatching's overhead estimate in seconds (see the module docstring)."""
    t = np.asarray(single_layer_s, dtype=np.float64)
    head = float(t[: layer_idx + 1].sum())
    tail = float(t[layer_idx + 1 :].sum())
    return b_incr * head + b_merged * tail


@dataclass(frozen=True)
class LazyDecision:
    """``preempt`` with ``b_incr`` new samples; the estimates in seconds (``nan`` if skipped)."""

    preempt: bool
    b_incr: int
    t_overhead: float
    t_slack: float
    reason: str


def lazy_decide(
    single_layer_s: npt.NDArray[np.float64],
    layer_idx: int,
    b_act: int,
    n_queue: int,
    t_slo: float,
    t_wait_oldest: float,
    t_exec_so_far: float,
    b_max: int = B_MAX,
    was_full: bool = False,
) -> LazyDecision:
    """LazyBatching's decision after layer ``layer_idx`` of an active batch of ``b_act``
    (``was_full``: the batch has held ``b_max`` samples at some point, so it is never
    preempted again)."""
    nan = float("nan")
    if b_act <= 0:
        return LazyDecision(False, 0, nan, nan, "no-batch")
    if layer_idx >= len(single_layer_s) - 1:
        return LazyDecision(False, 0, nan, nan, "last-layer")
    if was_full or b_act >= b_max:
        return LazyDecision(False, 0, nan, nan, "full")
    b_incr = batch_increment(n_queue, b_act, b_max)
    if b_incr == 0:
        return LazyDecision(False, 0, nan, nan, "empty-queue")
    t_ov = lazy_overhead(single_layer_s, layer_idx, b_incr, b_act + b_incr)
    t_sl = slack(t_slo, t_wait_oldest, t_exec_so_far)
    if t_ov < t_sl:
        return LazyDecision(True, b_incr, t_ov, t_sl, "preempt")
    return LazyDecision(False, 0, t_ov, t_sl, "slo")
