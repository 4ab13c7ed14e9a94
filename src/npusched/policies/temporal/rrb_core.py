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

:class:`Rotation` is the rule on job numbers, for the engine and the hooks: per model a heap of
job numbers (first-come order) and the pick after a pointer. The engine (the declared order
``"round-robin"``, ``_Run.rot``) holds one on dispatch indices; the hooks hold one of the jobs
dispatched and not completed, and ``next_job`` (a ready list the hooks did not count) builds
one of the list. :func:`quiet_threshold` is :meth:`PRRBCore.quiet_before`'s time (a tick at
``c < T`` keeps the slice, as the decision's own keep test,
``c - slice_start < quantum_s * (1 - 1e-9)``, says: the same by the subtraction's
monotonicity).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from heapq import heapify, heappop, heappush
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
    is monotone in ``c``). :meth:`PRRBCore.quiet_before`'s time."""
    s = slice_start
    q = quantum_s * (1 - 1e-9)
    t = s + q
    while t - s >= q:
        t = math.nextafter(t, -math.inf)
    while t - s < q:
        t = math.nextafter(t, math.inf)
    return t


class Rotation:
    """Round-robin's ready queue on job numbers: the one place the rotation is decided.

    Jobs are numbered ``k`` in first-come order (``(arrival_s, id)``) and models ``0, 1, ...``
    in order of first dispatch, which is the rotation order (a model that has not joined yet
    has no waiting job, so it is passed over as the policy's rotation, which does not hold it
    yet, would). Per model a heap of its jobs' numbers, so a model's first-come job is its
    heap's top; :meth:`pick` gives the next model's first job after a pointer.

    The engine and the policy's hooks use it. The engine numbers a run's requests in dispatch
    order (``model_of[k]``, from :meth:`NPRRBCore.rotation`), and its heaps hold the waiting
    jobs: it pushes a job entering the ready queue (:meth:`push`) and pops the one it starts
    (:meth:`pop`). The policy's hooks (a class that decides through them) number jobs as they
    are dispatched (:meth:`add`, :meth:`add_model`) and hold the *live* ones, dispatched and
    not completed (:meth:`remove`): where the ready list is the counted one, every live job but the running
    one waits, and the running one's model is left out of a preemption's pick, so the heaps'
    tops are the waiting ones the rule wants.
    """

    def __init__(self, model_of: list[int], n_models: int) -> None:
        self.model_of = model_of
        self.n_models = n_models
        self.heaps: list[list[int]] = [[] for _ in range(n_models)]
        #: Jobs held in all (waiting ones for the engine, live ones for the policy).
        self.n_wait = 0
        # Models numbered as their first job arrives (:meth:`hold_joins`, :meth:`arrive`):
        # each job's model in the given numbering, each model's number once it joined (-1
        # before), each model's jobs, and the models joined so far.
        self.join_base: list[int] = []
        self.join_at: list[int] = []
        self.join_members: list[list[int]] = []
        self.joined = 0

    def hold_joins(self) -> None:
        """Number the models in the order their first job *arrives* (:meth:`arrive`), not in
        the order of the numbering given: the engine with dependent requests, where a
        request held for its predecessor arrives after later ones (the policy's rotation, as
        its hooks keep it, takes a model in when its first request is dispatched)."""
        base = self.join_base = list(self.model_of)
        self.join_at = [-1] * self.n_models
        members: list[list[int]] = [[] for _ in range(self.n_models)]
        for k, m in enumerate(base):
            members[m].append(k)
        self.join_members = members
        self.joined = 0

    def arrive(self, k: int) -> None:
        """Job ``k`` arrives (:meth:`hold_joins`): its model joins the rotation if this is its
        first job, then ``k`` enters the ready queue (:meth:`push`)."""
        m = self.join_base[k]
        if self.join_at[m] < 0:
            j = self.join_at[m] = self.joined
            model_of = self.model_of
            for kk in self.join_members[m]:
                model_of[kk] = j
            self.joined = j + 1
        self.push(k)

    def push(self, k: int) -> None:
        """Job ``k`` enters the ready queue (dispatched, or back after a preemption)."""
        _heappush(self.heaps[self.model_of[k]], k)
        self.n_wait += 1

    def pop(self, k: int) -> None:
        """Job ``k``, the top of its model's heap (what :meth:`pick` returned), starts."""
        _heappop(self.heaps[self.model_of[k]])
        self.n_wait -= 1

    def pick(self, after: int, skip: int) -> int:
        """The first-come job of the next model after model ``after`` (cyclic; ``-1``: from
        the first model) that has one, leaving out model ``skip`` (``-1``: none); ``-1`` if
        none. With no other model waiting, ``after``'s own model comes last."""
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

    def add_model(self) -> int:
        """A model joins the end of the rotation order; its number."""
        self.heaps.append([])
        self.n_models += 1
        return self.n_models - 1

    def add(self, model: int) -> int:
        """A job of ``model`` is held under the next number (above every number given so
        far); its number."""
        k = len(self.model_of)
        self.model_of.append(model)
        _heappush(self.heaps[model], k)
        self.n_wait += 1
        return k

    def remove(self, k: int) -> None:
        """Job ``k`` leaves: its model's top where the job ran first-come, else anywhere in
        the heap (a job started out of the rule's order)."""
        h = self.heaps[self.model_of[k]]
        if h[0] == k:
            _heappop(h)
        else:
            h.remove(k)
            heapify(h)
        self.n_wait -= 1


@mypyc_attr(allow_interpreted_subclasses=True)
class NPRRBCore:
    """Non-preemptive round-robin's state and hooks (the rule: ``rrb.NPRRB``).

    The hooks hold the dispatched jobs not completed in a :class:`Rotation` (``rot_``) and
    ask its :meth:`~Rotation.pick`, as the engine does: the rule is decided there only.
    Numbers follow dispatch, which is first-come order in the engine (by arrival, ties by
    id); a job dispatched after a live job of its model that it comes before (a request held
    back for its predecessor) renumbers that model's live jobs in first-come order
    (:meth:`_renumber`).
    """

    #: Set by :meth:`reset` (per instance): the hooks reset a policy used before any reset.
    _reset_done: bool = False
    inline_count_: bool
    order_: list[str]
    place_: dict[str, int]
    rot_: Rotation
    #: Per live job id: its number in ``rot_``; per number: the job.
    num_: dict[int, int]
    jobs_: dict[int, JobView]
    last_arrival_: list[float]
    last_id_: list[int]
    quiet_memo_: tuple[float, float, float] | None
    pointer_: str | None
    slice_start_: float
    slice_job_: int | None

    def validate(self) -> None:
        """No parameters (``PRRB`` checks its own)."""
        return None

    def reset(self) -> None:
        self.validate()
        self._reset_done = True
        #: ``_counted`` is this class's own: the decisions test it inline.
        self.inline_count_ = type(self)._counted is NPRRBCore._counted
        self.order_ = []
        #: Each model's place in ``order_`` (its number in ``rot_``).
        self.place_ = {}
        self.rot_ = Rotation([], 0)
        self.num_ = {}
        self.jobs_ = {}
        #: Per model: the first-come key ``(arrival_s, id)`` of its last job numbered, at or
        #: above every live one of the model.
        self.last_arrival_ = []
        self.last_id_ = []
        #: ``quiet_before``'s threshold for a slice start: ``(slice_start_, quantum_s, T)``.
        self.quiet_memo_ = None
        self.pointer_ = None
        self.slice_start_ = 0.0
        self.slice_job_ = None

    def _ensure(self) -> None:
        if not self._reset_done:
            self.reset()

    def _join(self, net: str) -> int:
        """``net`` joins the end of the rotation order; its place."""
        place = self.place_[net] = len(self.order_)
        self.order_.append(net)
        self.rot_.add_model()
        self.last_arrival_.append(-math.inf)
        self.last_id_.append(0)
        return place

    def on_dispatch(self, job: JobView, now: float) -> None:
        if not self._reset_done:
            self.reset()
        net = job.network
        m = self.place_.get(net, -1)
        if m < 0:
            m = self._join(net)
        a = job.arrival_s
        i = job.id
        k = self.rot_.add(m)
        self.num_[i] = k
        self.jobs_[k] = job
        la = self.last_arrival_[m]
        if a > la or (a == la and i > self.last_id_[m]):
            self.last_arrival_[m] = a
            self.last_id_[m] = i
        else:
            self._renumber(m)

    def _renumber(self, m: int) -> None:
        """Number model ``m``'s live jobs again in first-come order, above every number given
        (one of them was dispatched after a live job of the model that it comes before). Only
        the order within a model matters: :meth:`Rotation.pick` compares a model's numbers
        with each other, never with another model's."""
        rot = self.rot_
        h = rot.heaps[m]
        jobs_ = self.jobs_
        live = sorted((jobs_.pop(k) for k in h), key=lambda j: (j.arrival_s, j.id))
        rot.n_wait -= len(h)
        h.clear()
        num = self.num_
        for job in live:
            k = rot.add(m)
            num[job.id] = k
            jobs_[k] = job
        last = live[-1]
        self.last_arrival_[m] = last.arrival_s
        self.last_id_[m] = last.id

    def on_complete(self, job: JobView, now: float) -> None:
        if not self._reset_done:
            self.reset()
        k = self.num_.pop(job.id, -1)
        if k >= 0:
            del self.jobs_[k]
            self.rot_.remove(k)

    def _counted(self, view: SchedulerView) -> bool:
        """Whether ``view.ready`` holds every dispatched job not completed and not running
        (by count): then ``rot_`` knows the ready queue."""
        return len(view.ready) == self.rot_.n_wait - (view.running is not None)

    def _next_counted(self, after: str | None, skip: str | None = None) -> JobView | None:
        """:meth:`next_job` over the ready queue ``rot_`` knows, leaving out model ``skip``
        (the running one's, which holds the only live job that does not wait)."""
        place = self.place_
        k = self.rot_.pick(
            -1 if after is None else place.get(after, -1),
            -1 if skip is None else place.get(skip, -1),
        )
        if k < 0:
            return None
        return self.jobs_[k]

    def next_job(self, ready: Sequence[JobView], after: str | None) -> JobView | None:
        """The first-come request of the next model after ``after`` that has one waiting.

        The defensive path, for a ready list the policy did not count (a view built by hand,
        a subclass that decides its own way): ``ready`` numbered in first-come order in a
        :class:`Rotation` of its own, asked as the counted path asks ``rot_``."""
        self._ensure()
        if not ready:
            return None
        place = self.place_
        for job in ready:  # models never seen dispatching (defensive) join the rotation
            if job.network not in place:
                self._join(job.network)
        jobs = sorted(ready, key=lambda j: (j.arrival_s, j.id))
        rot = Rotation([place[j.network] for j in jobs], len(self.order_))
        for k in range(len(jobs)):
            rot.push(k)
        k = rot.pick(-1 if after is None else place.get(after, -1), -1)
        return jobs[k] if k >= 0 else None

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
            len(view.ready) == self.rot_.n_wait  # ``_counted``, with nothing running
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
        """The engine's :class:`Rotation` for a run's requests in dispatch order, given by
        their models (``networks``)."""
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
            len(view.ready) == self.rot_.n_wait - 1  # ``_counted``, with a running job
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
        running job or one this policy did not start (every tick may decide). Read-only.
        """
        if not self._reset_done:
            self.reset()
        running = view.running
        if running is None or running.id != self.slice_job_:
            return -math.inf
        rot = self.rot_
        live = rot.n_wait
        if (
            len(view.ready) == live - 1  # ``_counted``, with a running job
            if self.inline_count_
            else self._counted(view)
        ):
            # The ready queue is every live job but the running one: another model waits
            # exactly when another model has a live job (what ``_next_counted`` would find).
            m = self.place_.get(running.network, -1)
            if (live if m < 0 else live - len(rot.heaps[m])) <= 0:
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
