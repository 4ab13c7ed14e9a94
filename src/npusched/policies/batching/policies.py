"""The batching schedulers as machine policies on the engine (:mod:`npusched.policies.contract`).

Thin classes: the decisions are the pure functions of :mod:`.fluidb` and :mod:`.adaptb`; these
classes only translate between them and the engine's views and :class:`Schedule`.

Set-up they expect (the paper's, Sec. IV): one model served on a one-resource machine; its
profile compiled from the network with its exit heads in the layer table
(:func:`npusched.models.exits.inline_heads`) for batch sizes ``1..b_max``, so the plan's ``exits``
are the intermediate exits; each request one sample whose ``Request.exit`` is the exit it leaves
at (:func:`npusched.models.exits.sample_exits`; the final exit is ``N_exits - 1``, past the plan's
intermediate exits, so the sample runs to the end).

How Algorithm 1 maps onto the engine:

* a batch is formed by merging waiting single-sample jobs (``Schedule.merge``) and started;
* the active batch runs with ``until_step`` at the next intermediate exit, so it stops there free
  of cost (the paper preempts after an exit's last layer, outputs already off-chip) and the
  policy wakes with the exit's samples gone (``B_rem``);
* preempting = leaving it waiting and starting a catch-up batch of ``B_incr`` fresh samples with
  ``until_step`` at the same exit; when it stops there the two merge (``B_merged``) and the loop of
  lines 9-17 repeats at that exit; otherwise the active batch resumes to the next exit.

``invocations_`` counts decision-function calls (Algorithm 1 line 12 for FluidB; one per dispatch
decision for AdaptB and SERIAL), ``preemptions_`` the preemptions.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from npusched.base import Component
from npusched.errors import ConfigError
from npusched.policies.batching.adaptb import adaptb_decide, adaptb_timeout
from npusched.policies.batching.core import (
    WHOLE,
    BatchingCore,
    FluidBCore,
    exit_lut_from_profile,
    n_samples,
    oldest_arrival,
)
from npusched.policies.batching.fluidb import B_MAX, initial_batch
from npusched.policies.batching.lazyb import LAZY_INVOCATION_S, lazy_decide
from npusched.policies.contract import (
    NOTHING,
    JobView,
    MachineView,
    Merge,
    Schedule,
)
from npusched.policies.machine import MachinePolicyBase, fast_schedule

#: The machine's first resource, whole: every batching policy's allocation (frozen, shared).
_WHOLE = WHOLE

__all__ = [
    "AdaptBPolicy",
    "FluidBPolicy",
    "LazyBatchingPolicy",
    "SerialPolicy",
    "exit_lut_from_profile",
]


class _MachineBase(BatchingCore, MachinePolicyBase, Component):
    """A batching machine policy: counts its invocations and preemptions per run (the
    per-decision pieces: :class:`~npusched.policies.batching.core.BatchingCore`, compiled)."""

    name = "batching"

    def reset(self) -> None:
        self.validate()
        self.reset_core()

    def _check_slo_and_b_max(self, owner: str) -> None:
        """``slo_s`` seconds > 0 and ``b_max`` an integer >= 1, else a one-line error."""
        slo = getattr(self, "slo_s", None)
        if not (isinstance(slo, int | float) and slo > 0):
            raise ConfigError(f"{owner}: slo_s={slo!r}; must be seconds > 0")
        b_max = getattr(self, "b_max", None)
        if not (isinstance(b_max, int) and b_max >= 1):
            raise ConfigError(f"{owner}: b_max={b_max!r}; must be an integer >= 1")


class FluidBPolicy(FluidBCore, _MachineBase):
    """FluidB, Algorithm 1 (see the module docstring; the decision:
    :class:`~npusched.policies.batching.core.FluidBCore`, compiled).

    Args:
        slo_s: the latency SLO ``T_SLO`` in seconds (> 0).
        b_max: maximum batch size (8).
        name: label in results.
    """

    def __init__(self, slo_s: float = 0.4, b_max: int = B_MAX, name: str = "FluidB") -> None:
        self.slo_s = slo_s
        self.b_max = b_max
        self.name = name

    def validate(self) -> None:
        self._check_slo_and_b_max("FluidB")

    def reset(self) -> None:
        super().reset()
        self.reset_fluidb()


class AdaptBPolicy(_MachineBase):
    """AdaptB ``<B_max, T_timeout>``, model-level and exit-unaware (see :mod:`.adaptb`); the
    NPU's FC- or R-batching comes from the profile's device.

    Args:
        slo_s: the p99 SLO in seconds (> 0).
        timeout: ``"S"``, ``"M"`` or ``"L"`` (5/45/95% of the SLO).
        b_max: maximum batch size (8).
        name: label in results.
    """

    def __init__(
        self, slo_s: float = 0.4, timeout: str = "S", b_max: int = B_MAX, name: str = "AdaptB"
    ) -> None:
        self.slo_s = slo_s
        self.timeout = timeout
        self.b_max = b_max
        self.name = name

    def validate(self) -> None:
        adaptb_timeout(float(self.slo_s), self.timeout)
        if not (isinstance(self.b_max, int) and self.b_max >= 1):
            raise ConfigError(f"AdaptB: b_max={self.b_max!r}; must be an integer >= 1")

    def select(self, view: MachineView) -> Schedule:
        if view.running or view.preempting:
            return NOTHING
        fresh = self._fresh(view)
        if not fresh:
            return NOTHING
        self.invocations_ += 1
        d = adaptb_decide(
            view.now,
            len(fresh),
            fresh[0].arrival_s,
            adaptb_timeout(float(self.slo_s), self.timeout),
            True,
            self.b_max,
        )
        if d.batch:
            return self._start(fresh[: d.batch])
        return fast_schedule(timers=(d.timer_at,)) if d.timer_at is not None else NOTHING


class SerialPolicy(_MachineBase):
    """SERIAL: one sample at a time, oldest first."""

    def __init__(self, name: str = "SERIAL") -> None:
        self.name = name

    def select(self, view: MachineView) -> Schedule:
        if view.running or view.preempting:
            return NOTHING
        fresh = self._fresh(view)
        if not fresh:
            return NOTHING
        self.invocations_ += 1
        return self._start(fresh[:1])


class LazyBatchingPolicy(_MachineBase):
    """LazyBatching as the Fluid Batching paper describes it (:mod:`.lazyb`): the active batch
    stops after every layer (``until_step``), the policy decides with batch x single-sample
    latency estimates, and a catch-up batch runs from the start to that layer and merges. Each
    per-layer decision first holds the NPU idle for ``invocation_s`` (a timer), and a batch that
    has been full is never preempted again.

    Args:
        slo_s: the latency SLO in seconds (> 0).
        b_max: maximum batch size (8).
        invocation_s: seconds the NPU stalls per per-layer invocation (>= 0; default
            :data:`~npusched.policies.batching.lazyb.LAZY_INVOCATION_S`, our choice).
        name: label in results.
    """

    def __init__(
        self,
        slo_s: float = 0.4,
        b_max: int = B_MAX,
        invocation_s: float = LAZY_INVOCATION_S,
        name: str = "LazyBatching",
    ) -> None:
        self.slo_s = slo_s
        self.b_max = b_max
        self.invocation_s = invocation_s
        self.name = name

    def validate(self) -> None:
        self._check_slo_and_b_max("LazyBatching")
        c = self.invocation_s
        if not (isinstance(c, int | float) and not isinstance(c, bool) and 0 <= c < float("inf")):
            raise ConfigError(f"LazyBatching: invocation_s={c!r}; must be seconds >= 0")

    def reset(self) -> None:
        super().reset()
        self.active_: int | None = None
        self.catch_: int | None = None
        self.layer_: int = 0  # layers the active batch has completed
        self.full_: bool = False  # the active batch has held b_max samples
        self.wake_: float | None = None  # end of the invocation under way
        self.single_: dict[str, np.ndarray[Any, np.dtype[np.float64]]] = {}

    def _single(self, view: MachineView, job: JobView) -> np.ndarray[Any, np.dtype[np.float64]]:
        t = self.single_.get(job.network)
        if t is None:
            t = self.single_[job.network] = np.diff(view.profiles[job.network].plan(1).cum_s)
        return t

    def select(self, view: MachineView) -> Schedule:
        if view.running or view.preempting:
            return NOTHING
        by_id = {j.id: j for j in view.ready}
        active = by_id.get(self.active_) if self.active_ is not None else None
        if self.catch_ is not None:
            catch = by_id.get(self.catch_)
            self.catch_ = None
            if active is not None:
                merge = (Merge(active, [catch]),) if catch is not None else ()
                if catch is not None:
                    n = n_samples(active) + n_samples(catch)
                    self.full_ = self.full_ or n >= self.b_max
                return self._resume(active, merge)
        if active is not None:
            if self.invocation_s > 0:  # the per-layer invocation holds the NPU
                if self.wake_ is None:
                    self.wake_ = view.now + float(self.invocation_s)
                    return fast_schedule(timers=(self.wake_,))
                if view.now < self.wake_:
                    return NOTHING
                self.wake_ = None
            return self._decide(view, active)
        self.active_ = None
        self.wake_ = None
        fresh = self._fresh(view)
        if not fresh:
            return NOTHING
        batch = fresh[: initial_batch(len(fresh), self.b_max)]
        self.active_, self.layer_ = batch[0].id, 0
        self.full_ = len(batch) >= self.b_max
        return self._start(batch, 1)

    def _resume(self, active: JobView, merge: Sequence[Merge] = ()) -> Schedule:
        steps = active.plan.steps
        nxt = self.layer_ + 1
        return fast_schedule(
            assign={active: _WHOLE},
            merge=tuple(merge),
            until_step={active: nxt} if nxt < steps else {},
        )

    def _decide(self, view: MachineView, active: JobView) -> Schedule:
        self.layer_ += 1
        layer = self.layer_ - 1  # the layer just completed (0-based)
        single = self._single(view, active)
        fresh = self._fresh(view, exclude=(active.id,))
        oldest = oldest_arrival(active)
        self.invocations_ += 1
        d = lazy_decide(
            single,
            layer,
            n_samples(active),
            len(fresh),
            float(self.slo_s),
            0.0,
            view.now - oldest,
            self.b_max,
            was_full=self.full_,
        )
        if d.preempt:
            self.preemptions_ += 1
            new = fresh[: d.b_incr]
            self.catch_ = new[0].id
            return self._start(new, self.layer_)
        return self._resume(active)
