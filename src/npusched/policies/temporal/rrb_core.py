"""The compiled core of round-robin among models (:mod:`npusched.policies.temporal.rrb`).

:class:`NPRRBCore` and :class:`PRRBCore` hold P-RRB's per-run state and its hooks
(``on_dispatch``, ``on_complete``, ``select``, ``quiet_before``): the general loop calls them at
every wake, so they are listed in ``npusched.native.COMPILED_MODULES`` and run as mypyc native
methods where the package is built compiled. The public classes (``NPRRB``, ``PRRB``) stay in
the interpreted ``rrb.py`` and subclass these: their ``__init__`` keeps a Python signature,
which ``Component`` (parameters, ``clone``) and the config checks read with
``inspect.signature`` (a native class's ``__init__`` has none). The rule itself is documented
in ``rrb.py``; this module only holds its code.

The constructor parameters (``mechanism``, ``quantum_s``, ``period_s``) are declared ``Any``:
a native attribute annotated ``str`` or ``float`` would check or convert what the constructor
is given (an ``int`` stored as ``float``) before ``validate`` sees it.

:class:`Rotation` is the rule on dispatch indices, for the engine's column loop
(``sim/columns.py``, the declared order ``"round-robin"``): per model a heap of the waiting
jobs' dispatch indices and the pick after a pointer. :func:`quiet_threshold` is
:meth:`PRRBCore.quiet_before`'s time (the column loop tests ``c < T`` as the
decision's own keep test, ``c - slice_start < quantum_s * (1 - 1e-9)``: the same by the
subtraction's monotonicity).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from heapq import heappop, heappush
from itertools import count
from typing import Any, Final

from mypy_extensions import mypyc_attr

from npusched.policies.contract import (
    KEEP,
    Decision,
    JobState,
    JobView,
    Mechanism,
    SchedulerView,
    fast_decision,
)
from npusched.policies.temporal.mechanism import decide

_WAITING = JobState.WAITING
_DONE = JobState.DONE
_CHECKPOINT = Mechanism.CHECKPOINT
_heappush: Final = heappush
_heappop: Final = heappop


def quiet_threshold(slice_start: float, quantum_s: Any) -> float:
    """The smallest float ``T`` with ``T - slice_start >= quantum_s * (1 - 1e-9)``: a tick at
    ``c`` keeps a slice that began at ``slice_start`` exactly when ``c < T`` (the subtraction
    is monotone in ``c``). :meth:`PRRBCore.quiet_before`'s time, and the column loop's."""
    s = slice_start
    q = quantum_s * (1 - 1e-9)
    t = s + q
    while t - s >= q:
        t = math.nextafter(t, -math.inf)
    while t - s < q:
        t = math.nextafter(t, math.inf)
    return t


class Rotation:
    """Round-robin's ready queue on dispatch indices (the engine's column loop).

    The rule of ``rrb.py`` on a run's requests in dispatch order (``(arrival_s, id)``, index
    ``k``): ``model_of[k]`` numbers the models in order of first dispatch, which is the
    rotation order (a model that has not joined yet has no waiting job, so it is passed over
    as the policy's rotation, which does not hold it yet, would). Per model a heap of its
    waiting jobs' indices, so a model's first-come waiting job is its heap's top (the policy's
    heaps of ``(arrival_s, id)`` once finished and running jobs are stepped over). The loop
    pushes a job entering the ready queue (:meth:`push`), pops the one it starts
    (:meth:`pop`) and asks :meth:`pick` for the next model's first job after a pointer.
    """

    def __init__(self, model_of: list[int], n_models: int) -> None:
        self.model_of = model_of
        self.n_models = n_models
        self.heaps: list[list[int]] = [[] for _ in range(n_models)]
        #: Waiting jobs in all.
        self.n_wait = 0

    def push(self, k: int) -> None:
        """Job ``k`` enters the ready queue (dispatched, or back after a preemption)."""
        _heappush(self.heaps[self.model_of[k]], k)
        self.n_wait += 1

    def pop(self, k: int) -> None:
        """Job ``k``, the top of its model's heap (what :meth:`pick` returned), starts."""
        _heappop(self.heaps[self.model_of[k]])
        self.n_wait -= 1

    def pick(self, after: int, skip: int) -> int:
        """The first-come waiting job of the next model after model ``after`` (cyclic; ``-1``:
        from the first model) that has one, leaving out model ``skip`` (``-1``: none); ``-1``
        if none. With no other model waiting, ``after``'s own model comes last."""
        heaps = self.heaps
        m = self.n_models
        i = after
        for _ in range(m):
            i += 1
            if i >= m:
                i = 0
            h = heaps[i]
            if h and i != skip:
                return h[0]
        return -1

    def others_wait(self, k: int) -> bool:
        """Whether a model other than job ``k``'s has a waiting job."""
        return self.n_wait > len(self.heaps[self.model_of[k]])


@mypyc_attr(allow_interpreted_subclasses=True)
class NPRRBCore:
    """Non-preemptive round-robin's state and hooks (the rule: ``rrb.NPRRB``)."""

    #: Set by :meth:`reset` (per instance): the hooks reset a policy used before any reset.
    _reset_done: bool = False
    inline_count_: bool
    order_: list[str]
    place_: dict[str, int]
    rot_: dict[int, tuple[str, ...]]
    quiet_memo_: tuple[float, float, float] | None
    pointer_: str | None
    slice_start_: float
    slice_job_: int | None
    queues_: dict[str, list[tuple[float, int, int, JobView]]]
    live_: int
    live_of_: dict[str, int]
    _seq: count[int]

    def validate(self) -> None:
        """No parameters (``PRRB`` checks its own)."""
        return None

    def reset(self) -> None:
        self.validate()
        self._reset_done = True
        #: ``_counted`` is this class's own: the decisions test it inline.
        self.inline_count_ = type(self)._counted is NPRRBCore._counted
        self.order_ = []
        #: Each model's place in ``order_``.
        self.place_ = {}
        #: The models that had a live job in rotation order from each place on
        #: (``_rotation``), cleared when a model joins or its live count leaves zero.
        self.rot_ = {}
        #: ``quiet_before``'s threshold for a slice start: ``(slice_start_, quantum_s, T)``.
        self.quiet_memo_ = None
        self.pointer_ = None
        self.slice_start_ = 0.0
        self.slice_job_ = None
        # Per model, a heap of ``(arrival_s, id, seq, job)`` of its dispatched jobs not yet
        # seen finished; the number of dispatched jobs not completed, in all and per model.
        self.queues_ = {}
        self.live_ = 0
        self.live_of_ = {}
        self._seq = count()

    def _ensure(self) -> None:
        if not self._reset_done:
            self.reset()

    def _join(self, net: str) -> None:
        """``net`` joins the end of the rotation order."""
        self.place_[net] = len(self.order_)
        self.order_.append(net)
        self.rot_.clear()

    def on_dispatch(self, job: JobView, now: float) -> None:
        if not self._reset_done:
            self.reset()
        net = job.network
        if net not in self.place_:
            self._join(net)
        q = self.queues_.get(net)
        if q is None:
            q = self.queues_[net] = []
            self.live_of_[net] = 0
        heappush(q, (job.arrival_s, job.id, next(self._seq), job))
        self.live_ += 1
        v = self.live_of_[net] = self.live_of_[net] + 1
        if v <= 1:  # the model has a live job again: the live rotations change
            self.rot_.clear()

    def on_complete(self, job: JobView, now: float) -> None:
        if not self._reset_done:
            self.reset()
        net = job.network
        if net in self.live_of_:
            self.live_ -= 1
            self.live_of_[net] -= 1

    def _counted(self, view: SchedulerView) -> bool:
        """Whether ``view.ready`` holds every dispatched job not completed and not running
        (by count): then the per-model heaps know the ready queue."""
        return len(view.ready) == self.live_ - (view.running is not None)

    def _first_waiting(self, model: str) -> JobView | None:
        """The model's waiting job of the earliest ``(arrival_s, id)``: the top of its heap
        once finished jobs are dropped, stepping over the running or stopping one."""
        q = self.queues_.get(model)
        if not q:
            return None
        top = q[0][3]
        st = top.state
        if st is _WAITING or st == _WAITING:  # the common case: the top waits
            return top
        found = None
        held: list[tuple[float, int, int, JobView]] = []
        while q:
            e = q[0]
            st = e[3].state
            if st == _WAITING:
                found = e[3]
                break
            heappop(q)
            if st != _DONE:
                held.append(e)
        for e in held:
            heappush(q, e)
        return found

    def _rotation(self, start: int) -> tuple[str, ...]:
        """The models with a live job (``live_of_`` above zero), in rotation order from place
        ``start`` on (cyclic); kept per start until a model joins or a live count leaves zero.
        A model whose live jobs all completed since stays in it: it has no waiting job, so
        :meth:`_first_waiting` finds none (dropping its finished jobs, as it would later)."""
        rot = self.rot_.get(start)
        if rot is None:
            order = self.order_
            live = self.live_of_
            n = len(order)
            rot = self.rot_[start] = tuple(
                m for m in (order[(start + k) % n] for k in range(n)) if live.get(m, 0) > 0
            )
        return rot

    def _next_counted(self, after: str | None, skip: str | None = None) -> JobView | None:
        """:meth:`next_job` over the ready queue the heaps know, leaving out model ``skip``."""
        start = 0 if after is None else self.place_.get(after, -1) + 1
        first = self._first_waiting
        for model in self._rotation(start):
            if model == skip:
                continue
            job = first(model)
            if job is not None:
                return job
        return None

    def next_job(self, ready: Sequence[JobView], after: str | None) -> JobView | None:
        """The first-come request of the next model after ``after`` that has one waiting."""
        self._ensure()
        if not ready:
            return None
        for job in ready:  # models never seen dispatching (defensive) join the rotation
            if job.network not in self.place_:
                self._join(job.network)
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
        if not self._reset_done:
            self.reset()
        if view.running is not None:
            return KEEP
        if (
            len(view.ready) == self.live_  # ``_counted``, with nothing running
            if self.inline_count_
            else self._counted(view)
        ):
            job = self._next_counted(self.pointer_)
        else:
            job = self.next_job(view.ready, self.pointer_)
        if job is None:
            return KEEP
        self._grant(job, view.now)
        # ``decide(view, job, preemptive=False, mode="checkpoint")`` with nothing running
        return fast_decision(job, _CHECKPOINT)

    def rotation(self, networks: Sequence[str]) -> Rotation:
        """The column loop's :class:`Rotation` for a run's requests in dispatch order, given
        by their models (``networks``)."""
        place: dict[str, int] = {}
        model_of = [place.setdefault(net, len(place)) for net in networks]
        return Rotation(model_of, len(place))


@mypyc_attr(allow_interpreted_subclasses=True)
class PRRBCore(NPRRBCore):
    """Preemptive round-robin's hooks (the rule: ``rrb.PRRB``)."""

    mechanism: Any
    quantum_s: Any
    period_s: Any

    def select(self, view: SchedulerView) -> Decision:
        if not self._reset_done:
            self.reset()
        running = view.running
        if running is None:
            return NPRRBCore.select(self, view)
        if running.id != self.slice_job_:  # started without our decision (defensive)
            self.slice_job_, self.slice_start_ = running.id, view.now
            self.pointer_ = running.network
        if view.now - self.slice_start_ < self.quantum_s * (1 - 1e-9):
            return KEEP
        if (
            len(view.ready) == self.live_ - 1  # ``_counted``, with a running job
            if self.inline_count_
            else self._counted(view)
        ):
            net = running.network
            job = self._next_counted(net, skip=net)
        else:
            others = [j for j in view.ready if j.network != running.network]
            job = self.next_job(others, running.network)
        if self.mechanism == "checkpoint":  # ``decide``'s answer, written out
            if job is None or job.id == running.id:
                return KEEP
            return fast_decision(job, _CHECKPOINT)
        decision = decide(view, job, preemptive=True, mode=self.mechanism)
        if decision.run is not None and decision.mechanism == Mechanism.KILL:
            self._grant(job, view.now)  # KILL starts the candidate at once
        # After a CHECKPOINT the array is reassigned when the save is done, by the idle rule
        # above; the pointer must still name the victim's model then, or the model after it
        # would be skipped (and with two models the victim would resume at once).
        return decision

    def quiet_before(self, view: SchedulerView) -> float:
        """The time (seconds) before which a period tick cannot change the decision, as long as
        no other event happens: :meth:`select` at a tick at ``c`` keeps the running job when
        ``c - slice_start_ < quantum_s * (1 - 1e-9)`` or when no other model has a waiting job.

        Returns the smallest float ``T`` with ``T - slice_start_ >= quantum_s * (1 - 1e-9)``
        (the subtraction is monotone, so ``c < T`` is exactly the keep test), ``inf`` when no
        other model waits (only an event can change that), ``-inf`` when the machine has no
        running job or one this policy did not start (every tick may decide). Read-only: the
        heaps' lazy drops are the ones :meth:`select` would make.
        """
        if not self._reset_done:
            self.reset()
        running = view.running
        if running is None or running.id != self.slice_job_:
            return -math.inf
        live = self.live_
        if (
            len(view.ready) == live - 1  # ``_counted``, with a running job
            if self.inline_count_
            else self._counted(view)
        ):
            # The ready queue is every live job but the running one: another model waits
            # exactly when another model has a live job (what ``_next_counted`` would find).
            if live - self.live_of_.get(running.network, 0) <= 0:
                return math.inf
        else:
            others = [j for j in view.ready if j.network != running.network]
            if self.next_job(others, running.network) is None:
                return math.inf
        s = self.slice_start_
        memo = self.quiet_memo_  # one search per slice (a slice has several wakes)
        if memo is not None and memo[0] == s and memo[1] == self.quantum_s:
            return memo[2]
        t = quiet_threshold(s, self.quantum_s)
        self.quiet_memo_ = (s, self.quantum_s, t)
        return t
