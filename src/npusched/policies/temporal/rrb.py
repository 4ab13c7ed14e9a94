"""RRB: round-robin among the DNN models (PREMA Sec. VI-A baseline).

Rotation rule, exactly:

* The rotation order is the order in which the models (network names) were first dispatched in
  the run; a model joins the end of the order on its first request.
* The *pointer* is the model that last received the array.
* When the array must be (re)assigned, the next model after the pointer in the cyclic order that
  has a waiting request wins; within that model, requests are served first-come first-served
  (earliest arrival, then lower id; a preempted request keeps its original arrival so it
  resumes before later ones of its model). If no other model has work, the pointer's own model
  is served again.

``NP-RRB`` applies the rule whenever the array is idle. ``P-RRB`` time-slices: it also applies the
rule when the running request has held the array for at least ``quantum_s`` (checked at every
scheduling period, ``period_s``) and another model has a waiting request, preempting the running
one with ``mechanism``. Arrivals never preempt under RRB. The default quantum equals PREMA's
scheduling period (0.25 ms, Table II), the only time quota the paper defines.

The pointer moves when a request actually gets the array: at once under KILL, and after a
CHECKPOINT when the victim's save is done (the idle rule then picks the model after the
victim's, normally the one the preemption was for). A static ``"kill"`` mechanism is rejected:
each slice would restart its request from scratch, so requests longer than the quantum of two
models would never finish. ``"dynamic-kill"`` is allowed: Algorithm 3 kills only for a
candidate estimated shorter than the victim, so kills cannot cycle.
"""

from __future__ import annotations

from collections.abc import Sequence

from npusched.base import Component
from npusched.errors import ParameterError
from npusched.policies.base import TemporalPolicyBase
from npusched.policies.contract import KEEP, Decision, JobView, Mechanism, SchedulerView
from npusched.policies.temporal.mechanism import MECHANISM_MODES, check_mode, check_seconds, decide
from npusched.policies.temporal.prema import PERIOD_S


class NPRRB(TemporalPolicyBase, Component):
    """Non-preemptive round-robin among models."""

    name = "NP-RRB"
    preemptive = False

    def __init__(self) -> None:
        pass

    def reset(self) -> None:
        self.validate()
        self.order_: list[str] = []
        self.pointer_: str | None = None
        self.slice_start_: float = 0.0
        self.slice_job_: int | None = None

    def _ensure(self) -> None:
        if not hasattr(self, "order_"):
            self.reset()

    def on_dispatch(self, job: JobView, now: float) -> None:
        self._ensure()
        if job.network not in self.order_:
            self.order_.append(job.network)

    def next_job(self, ready: Sequence[JobView], after: str | None) -> JobView | None:
        """The first-come request of the next model after ``after`` that has one waiting."""
        self._ensure()
        if not ready:
            return None
        for job in ready:  # models never seen dispatching (defensive) join the rotation
            if job.network not in self.order_:
                self.order_.append(job.network)
        n = len(self.order_)
        start = self.order_.index(after) + 1 if after in self.order_ else 0
        for k in range(n):
            model = self.order_[(start + k) % n]
            jobs = [j for j in ready if j.network == model]
            if jobs:
                return min(jobs, key=lambda j: (j.arrival_s, j.id))
        return None  # pragma: no cover - ready is non-empty

    def _grant(self, job: JobView | None, now: float) -> None:
        if job is not None:
            self.pointer_ = job.network
            if job.id != self.slice_job_:
                self.slice_job_, self.slice_start_ = job.id, now

    def select(self, view: SchedulerView) -> Decision:
        self._ensure()
        if view.running is not None:
            return KEEP
        job = self.next_job(view.ready, self.pointer_)
        self._grant(job, view.now)
        return decide(view, job, preemptive=False, mode="checkpoint")


class PRRB(NPRRB):
    """Preemptive (time-sliced) round-robin among models.

    Args:
        mechanism: ``"checkpoint"``, ``"kill"``, ``"dynamic"`` (Algorithm 3) or
            ``"dynamic-kill"``.
        quantum_s: seconds a request may hold the array before another model's request
            displaces it.
        period_s: seconds between periodic wake-ups (the quantum is checked at them).
    """

    name = "P-RRB"
    preemptive = True

    def __init__(
        self, mechanism: str = "checkpoint", quantum_s: float = PERIOD_S, period_s: float = PERIOD_S
    ) -> None:
        self.mechanism = mechanism
        self.quantum_s = quantum_s
        self.period_s = period_s

    def validate(self) -> None:
        check_seconds(self.name, "quantum_s", self.quantum_s)
        check_seconds(self.name, "period_s", self.period_s)
        if check_mode(self.mechanism, self.name) == "kill":
            # Every slice would restart its request from scratch: requests longer than the
            # quantum of two models would take turns being killed forever.
            raise ParameterError(
                self.name,
                "mechanism",
                self.mechanism,
                ", ".join(m for m in MECHANISM_MODES if m != "kill")
                + " (kill never finishes requests longer than quantum_s: each slice restarts them)",
            )

    def select(self, view: SchedulerView) -> Decision:
        self._ensure()
        running = view.running
        if running is None:
            return NPRRB.select(self, view)
        if running.id != self.slice_job_:  # started without our decision (defensive)
            self.slice_job_, self.slice_start_ = running.id, view.now
            self.pointer_ = running.network
        if view.now - self.slice_start_ < self.quantum_s * (1 - 1e-9):
            return KEEP
        others = [j for j in view.ready if j.network != running.network]
        job = self.next_job(others, running.network)
        decision = decide(view, job, preemptive=True, mode=self.mechanism)
        if decision.run is not None and decision.mechanism == Mechanism.KILL:
            self._grant(job, view.now)  # KILL starts the candidate at once
        # After a CHECKPOINT the array is reassigned when the save is done, by the idle rule
        # above; the pointer must still name the victim's model then, or the model after it
        # would be skipped (and with two models the victim would resume at once).
        return decision
