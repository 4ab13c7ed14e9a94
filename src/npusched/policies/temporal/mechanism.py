"""Preemption-mechanism selection (PREMA Sec. IV-C and Algorithm 3).

Once a policy has picked a candidate to displace the running job, the *mechanism* says how:
CHECKPOINT (save the live activations, resume later), KILL (discard the progress) or DRAIN (let
the running job finish first). PREMA's Algorithm 3 chooses between DRAIN and CHECKPOINT from the
predictor's estimates; the static modes always answer the same.

Modes accepted by every ``P-`` policy's ``mechanism`` parameter:

* ``"checkpoint"`` - always CHECKPOINT (the paper's "static" configuration).
* ``"kill"`` - always KILL (the sensitivity study, Fig. 15).
* ``"dynamic"`` - Algorithm 3: DRAIN or CHECKPOINT.
* ``"dynamic-kill"`` - Algorithm 3 with KILL in CHECKPOINT's place (DRAIN or KILL), for Fig. 15's
  "dynamic" KILL bars.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from npusched.base import Component
from npusched.errors import ParameterError
from npusched.policies.base import TemporalPolicyBase
from npusched.policies.contract import (
    KEEP,
    Decision,
    JobView,
    Mechanism,
    SchedulerView,
    fast_decision,
)
from npusched.policies.contract import dynamic_choice as dynamic_choice  # Algorithm 3, numbers

MECHANISM_MODES: tuple[str, ...] = ("checkpoint", "kill", "dynamic", "dynamic-kill")

_CHECKPOINT = Mechanism.CHECKPOINT


def check_mode(mode: str, owner: str = "policy") -> str:
    """``mode`` if it is one of :data:`MECHANISM_MODES`, else a :class:`ParameterError`."""
    if mode not in MECHANISM_MODES:
        raise ParameterError(owner, "mechanism", mode, ", ".join(MECHANISM_MODES))
    return mode


def check_seconds(policy: str, param: str, value: object) -> None:
    """A :class:`ParameterError` unless ``value`` is a finite number of seconds > 0."""
    ok = isinstance(value, int | float) and not isinstance(value, bool)
    if not ok or not 0.0 < float(value) < float("inf"):  # type: ignore[arg-type]
        raise ParameterError(policy, param, value, "a finite number of seconds > 0")


STATIC_MECHANISMS: tuple[str, ...] = tuple(m.value for m in Mechanism)
#: Modes of a :class:`RankedPolicy`: a static mechanism or Algorithm 3.
RANKED_MODES: tuple[str, ...] = (*STATIC_MECHANISMS, "dynamic", "dynamic-kill")


def ranked_mode(policy: str, value: object) -> tuple[str, Mechanism | None]:
    """Validate the ``mechanism`` parameter (any case) of ``policy``: the mode and, for a static
    one (``"checkpoint"``, ``"kill"``, ``"drain"``), its :class:`Mechanism` (``None`` for
    ``"dynamic"`` / ``"dynamic-kill"``, decided per preemption by Algorithm 3)."""
    mode = str(value).lower()
    if mode not in RANKED_MODES:
        raise ParameterError(policy, "mechanism", value, ", ".join(RANKED_MODES))
    return mode, Mechanism(mode) if mode in STATIC_MECHANISMS else None


def remaining_s(job: JobView) -> float:
    """Estimated remaining work of ``job`` in seconds: ``Time_estimated - Time_executed``.

    Clamped at 0: a job that has run past its estimate (an under-predicted RNN) is treated as
    about to finish, which is the predictor's best knowledge.
    """
    return max(job.estimated_s - job.executed_s, 0.0)


def degradations(current: JobView, candidate: JobView) -> tuple[float, float]:
    """Algorithm 3 lines 1-4: ``(Degradation_current, Degradation_candidate)``.

    ``Degradation_current = candidate.remaining / current.estimated`` is the slowdown the running
    job suffers if the candidate preempts it; ``Degradation_candidate = current.remaining /
    candidate.estimated`` is the slowdown the candidate suffers if it waits for a drain.
    A zero estimate (degenerate job) counts as an infinite degradation.
    """
    cur_rem, cand_rem = remaining_s(current), remaining_s(candidate)
    deg_current = cand_rem / current.estimated_s if current.estimated_s > 0 else float("inf")
    deg_candidate = cur_rem / candidate.estimated_s if candidate.estimated_s > 0 else float("inf")
    return deg_current, deg_candidate


def dynamic_mechanism(
    current: JobView, candidate: JobView, preempt: Mechanism = Mechanism.CHECKPOINT
) -> Mechanism:
    """Algorithm 3 as printed: DRAIN if ``Degradation_current > Degradation_candidate``, else
    ``preempt`` (CHECKPOINT in the paper)."""
    deg_current, deg_candidate = degradations(current, candidate)
    return Mechanism.DRAIN if deg_current > deg_candidate else preempt


def select_mechanism(mode: str, current: JobView, candidate: JobView) -> Mechanism:
    """The mechanism ``mode`` prescribes for ``candidate`` displacing ``current``."""
    if mode == "checkpoint":
        return Mechanism.CHECKPOINT
    if mode == "kill":
        return Mechanism.KILL
    if mode == "dynamic":
        return dynamic_mechanism(current, candidate, Mechanism.CHECKPOINT)
    if mode == "dynamic-kill":
        return dynamic_mechanism(current, candidate, Mechanism.KILL)
    check_mode(mode)
    raise AssertionError("unreachable")  # pragma: no cover


def decide(
    view: SchedulerView, candidate: JobView | None, *, preemptive: bool, mode: str
) -> Decision:
    """Turn a policy's choice into a :class:`Decision`.

    * No candidate, or the candidate is already running: keep the array as it is.
    * The array is idle: run the candidate.
    * Another job runs: a non-preemptive policy keeps it (the candidate is reconsidered at the
      next wake-up); a preemptive one displaces it with the mechanism ``mode`` prescribes. A
      DRAIN answer is returned as ``Decision(candidate, DRAIN)``: the running job finishes first.
    """
    running = view.running
    if candidate is None or (running is not None and candidate.id == running.id):
        return KEEP
    if running is None:
        return fast_decision(candidate, _CHECKPOINT)
    if not preemptive:
        return KEEP
    return fast_decision(candidate, select_mechanism(mode, running, candidate))


class RankedPolicy(TemporalPolicyBase, Component):
    """A policy that runs the best ready job, with a static mechanism (FCFS, HPF).

    Subclasses set ``family`` (the name is ``NP-<family>`` / ``P-<family>``), define their own
    ``__init__(preemptive, mechanism)`` (parameters are read from its signature) and set three
    class attributes: ``pick_best(ready)`` returns the ready job that should hold the array,
    ``rank_key(job)`` a comparable rank and ``better(rank_a, rank_b)`` whether a job ranked
    ``rank_a`` should displace one ranked ``rank_b``. C-level callables (``operator``,
    ``functools.partial``) keep :meth:`select`, which runs at every decision, as fast as
    inlined code. The array, when idle, goes to ``pick_best(ready)``; when busy, the
    preemptive variant displaces the running job with ``mechanism`` if the best ready job is
    ``better``, and the non-preemptive one keeps it. ``mechanism`` is a static mechanism
    (``"checkpoint"``, ``"kill"``, ``"drain"``) or ``"dynamic"`` / ``"dynamic-kill"``
    (Algorithm 3, as for every ``P-`` policy).

    A subclass may also define ``queue_key(request)``: a key of fields a request shares with
    its job (``id``, ``priority``, ``arrival_s``, ``network``) such that ``min(ready,
    key=(queue_key, dispatch order))`` is ``pick_best(ready)``, with ``rank_key`` reading only
    such fields too. The engine then keeps the ready queue as a heap and decides on it without
    a view or a call of :meth:`select`, with the same result as calling :meth:`select`.
    A class that defines ``queue_key`` (``rank_key``) may also name the fields it reads in
    ``queue_key_reads`` (``rank_key_reads``), a tuple, in the same class: the engine then calls
    it once per distinct value of those fields, on an object holding only them.
    """

    family: str = ""
    period_s: float | None = None
    #: The engine keeps the ready queue by ``queue_key`` while ``select`` is this class's
    #: (:func:`~npusched.policies.contract.declared_order`).
    ready_order = "rank"
    preemptive: bool
    mechanism: str
    pick_best: Callable[[Sequence[JobView]], JobView]
    rank_key: Callable[[JobView], Any]
    better: Callable[[Any, Any], bool]
    queue_key: Callable[[Any], Any] | None = None

    @property
    def name(self) -> str:  # type: ignore[override]
        return f"{'P' if self.preemptive else 'NP'}-{self.family}"

    def validate(self) -> None:
        ranked_mode(self.name, self.mechanism)

    def reset(self) -> None:
        self.mode_, self.mechanism_ = ranked_mode(self.name, self.mechanism)

    def select(self, view: SchedulerView) -> Decision:
        ready = view.ready
        if not ready:
            return KEEP
        best = self.pick_best(ready)
        running = view.running
        if running is None:
            return fast_decision(best, _CHECKPOINT)
        if self.preemptive and self.better(self.rank_key(best), self.rank_key(running)):
            mech = self.mechanism_
            return fast_decision(
                best, select_mechanism(self.mode_, running, best) if mech is None else mech
            )
        return KEEP


R = TypeVar("R", bound=RankedPolicy)


def variants(cls: type[R]) -> dict[str, Callable[..., RankedPolicy]]:
    """``NP-<family>`` and ``P-<family>`` of a ranked policy class, each a factory taking only
    ``mechanism`` (registered by :mod:`npusched.policies.catalog`)."""

    def non_preemptive(mechanism: str = "checkpoint") -> RankedPolicy:
        return cls(preemptive=False, mechanism=mechanism)  # type: ignore[call-arg]

    def preemptive(mechanism: str = "checkpoint") -> RankedPolicy:
        return cls(preemptive=True, mechanism=mechanism)  # type: ignore[call-arg]

    return {f"NP-{cls.family}": non_preemptive, f"P-{cls.family}": preemptive}
