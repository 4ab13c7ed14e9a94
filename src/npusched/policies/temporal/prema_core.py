"""The compiled core of Algorithm 2's general-loop hooks (:mod:`npusched.policies.temporal.prema`).

Where a token policy's ready order holds (``TokenScheduler.ready_hooks``: the built-in
Algorithm 2 on the token table), everything the general loop asks of it at a wake reads the
token table (:class:`~npusched.policies.temporal.levels.TokenTable`) and the run's job views by
dispatch index: the ready queue's changes (``enter`` / ``leave``), the decision (``select``,
``pick``), a completion, a period tick, skipped ticks credited at once and the number of quiet
ticks. :class:`TokenHooks` holds that per-run state and those steps. This module is listed in
``npusched.native.COMPILED_MODULES`` and runs as mypyc native code where the package is built
compiled; the public classes (``TokenScheduler`` and its subclasses, interpreted in
``prema.py``) keep their ``Component`` signatures, ``validate`` and ``clone``, and their methods
call these on the table path, so each step is written once.

:class:`TokenHooks` is a native class that nothing subclasses (the policy makes one per run). It
declares ``direct_hooks`` (:func:`npusched.policies.contract.direct_hooks`): where the policy's
``ready_hooks`` returned this object's own ``enter`` and ``leave`` (only where the policy keeps
the built-in Algorithm 2 methods), the engine calls its steps instead of the policy's methods,
with the wake's time, the running job and its typed job's fields instead of a view (no view is
built for them). The engine imports no policy module: it calls them as methods of an object.
It holds no reference to the policy (the policy holds it, as ``hooks_``; a cycle would leave the
run's jobs to the cyclic collector): the decision is given the policy.
"""

from __future__ import annotations

from dataclasses import fields as dataclass_fields
from typing import Any, Final

from npusched.policies.contract import KEEP, Decision, Mechanism
from npusched.policies.temporal.levels import TokenTable
from npusched.policies.temporal.mechanism import select_mechanism

_CHECKPOINT = Mechanism.CHECKPOINT

#: ``Decision`` is a frozen dataclass of ``(run, mechanism)`` with slots (as
#: ``contract.fast_decision`` checks): :func:`make_decision` sets the two slots through their
#: member descriptors.
_FAST: Final = tuple(f.name for f in dataclass_fields(Decision)) == ("run", "mechanism") and (
    getattr(Decision, "__slots__", None) == ("run", "mechanism")
)
_SET_RUN: Final[Any] = vars(Decision)["run"].__set__ if _FAST else None
_SET_MECHANISM: Final[Any] = vars(Decision)["mechanism"].__set__ if _FAST else None


def make_decision(run: Any, mechanism: Mechanism) -> Decision:
    """``Decision(run, mechanism)``, equal to ``contract.fast_decision``'s, from compiled code
    (``fast_decision`` is an interpreted function: a Python frame per decision)."""
    if not _FAST:  # pragma: no cover - only if Decision changes shape
        return Decision(run, mechanism)
    d = object.__new__(Decision)
    _SET_RUN(d, run)
    _SET_MECHANISM(d, mechanism)
    return d


class TokenHooks:
    """One run's token table and job views, and Algorithm 2's steps on them.

    ``jobs[k]`` is the view of the run's ``k``-th request in dispatch order once it entered
    the ready queue (``None`` before), ``index`` each view's ``k`` by ``id``, ``gain`` the
    policy's scan-path gains (``TokenScheduler.gain_``; empty on the table path, kept so that a
    completion does what ``on_complete`` does). The policy is given to each decision and read
    for ``preemptive`` and ``mechanism``, as ``TokenScheduler.select`` reads them.

    Job views are typed ``Any``: the engine's jobs and any other view with the fields of
    :class:`~npusched.policies.contract.JobView` (``stay`` where it has one, as
    :func:`~npusched.policies.contract.wait_stay` reads it).
    """

    #: The engine calls these steps directly (``contract.direct_hooks``).
    direct_hooks: bool
    table: TokenTable
    jobs: list[Any]
    index: dict[int, int]
    gain: dict[int, float]

    def __init__(
        self,
        table: TokenTable,
        jobs: list[Any],
        index: dict[int, int],
        gain: dict[int, float],
    ) -> None:
        self.direct_hooks = True
        self.table = table
        self.jobs = jobs
        self.index = index
        self.gain = gain

    # --- the ready queue's changes (the engine's ``enter`` / ``leave`` hooks) ------------------
    def enter(self, k: int, job: Any, now: float) -> None:
        """Job ``job`` (index ``k``) enters the ready queue at ``now``: its estimate (first
        entry), work done and ready-queue seconds before this stay go to the table."""
        # ``wait_stay(job, now)[0]``: the engine's jobs give ``stay``
        stay = getattr(job, "stay", None)
        waited = stay[0] if stay is not None else job.waited_s
        self.enter_with(k, job, job.estimated_s, job.executed_s, waited, now)

    def enter_with(
        self, k: int, job: Any, estimated_s: float, executed_s: float, waited_s: float, now: float
    ) -> None:
        """:meth:`enter` given the job's ``estimated_s``, ``executed_s`` and ready-queue
        seconds before this stay (the compiled engine reads them from its typed job)."""
        tbl = self.table
        jobs = self.jobs
        if jobs[k] is not job:
            jobs[k] = job
            self.index[id(job)] = k
            tbl.est[k] = estimated_s
        tbl.exe[k] = executed_s
        tbl.waited[k] = waited_s
        tbl.enqueue(k, now)

    def leave(self, k: int, job: Any, now: float) -> None:
        """Job ``job`` (index ``k``) leaves the ready queue at ``now`` to start."""
        self.table.dequeue(k, now)

    # --- Algorithm 2 on the table -------------------------------------------------------------
    def run_k(self, running: Any) -> int:
        """The table's index of the running job (-1 for none)."""
        return -1 if running is None else self.index[id(running)]

    def pick(self, now: float, running: Any) -> Any:
        """The job Algorithm 2 returns at ``now`` with ``running`` on the array (``None`` if
        nothing is dispatched): ``TokenScheduler.pick`` on the table."""
        return self.pick_with(now, running, 0.0 if running is None else running.executed_s)

    def pick_with(self, now: float, running: Any, run_exec: float) -> Any:
        """:meth:`pick` given the running job's ``executed_s`` (0 for none)."""
        k = self.table.pick(now, self.run_k(running), run_exec)
        return None if k < 0 else self.jobs[k]

    def select(self, pol: Any, now: float, running: Any) -> Decision:
        """``TokenScheduler.select`` on the table: Algorithm 2's job turned into a decision
        as :func:`~npusched.policies.temporal.mechanism.decide` turns it (keep the array when
        the pick runs already or a non-preemptive policy has a job running; run it on an idle
        array; else displace the running job with the mechanism ``mechanism`` prescribes)."""
        return self.select_with(
            pol, now, running, 0.0 if running is None else running.executed_s
        )

    def select_with(self, pol: Any, now: float, running: Any, run_exec: float) -> Decision:
        """:meth:`select` given the running job's ``executed_s`` (0 for none; read only where
        Algorithm 2 runs)."""
        preemptive = bool(pol.preemptive)
        if running is not None and not preemptive:
            return KEEP  # no need to run Algorithm 2: the array is not reassigned
        cand = self.pick_with(now, running, run_exec)
        if cand is None or (running is not None and cand.id == running.id):
            return KEEP
        if running is None:
            return make_decision(cand, _CHECKPOINT)
        mode = getattr(pol, "mechanism", "checkpoint")
        return make_decision(cand, select_mechanism(mode, running, cand))

    def on_complete(self, job: Any) -> None:
        """``TokenScheduler.on_complete``: the job's scan-path gain is dropped."""
        self.gain.pop(job.id, None)

    def on_period(self, now: float, running: Any) -> None:
        """A period tick at ``now`` (``TokenScheduler.on_period``)."""
        self.table.credit_tick(now, self.run_k(running))

    def on_periods(self, now: float, first_s: float, count: int, running: Any) -> None:
        """``count`` skipped boundaries from ``first_s`` credited at ``now``
        (``TokenScheduler.on_periods``)."""
        self.table.credit_periods(now, first_s, count, self.run_k(running))

    def quiet(self, now: float, first_s: float, running: Any) -> int:
        """The boundaries from ``first_s`` on that cannot change the decision
        (``TokenScheduler.quiet_periods``: the table path, whose policy has no rule of its
        own)."""
        return self.table.quiet(now, first_s, self.run_k(running))
