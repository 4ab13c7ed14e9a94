"""The policy contract: what a policy sees (views) and what it answers (decisions).

Policies own these types; the engine (:mod:`npusched.sim`) imports them, never the reverse, so a
policy module never imports the simulator.

Two kinds of policy share one engine:

* A **temporal** policy (PREMA's family: FCFS, RRB, HPF, TOKEN, SJF, PREMA) decides which ready job
  holds the whole of a single-resource machine. It sees a :class:`SchedulerView` (``running`` is
  one job or ``None``) and answers a :class:`Decision` ``(run, mechanism)``.
* A **machine** policy (spatial fission, heterogeneous mapping, batching) sees a
  :class:`MachineView` (every resource, every running and waiting job) and answers a
  :class:`Schedule`: allocations ``{job: Allocation}``, jobs to preempt and the mechanism,
  batches to merge, timers to set. It declares itself with ``kind = "machine"``.

Both are seen by the engine through the same hooks (``reset``, ``on_dispatch``, ``on_complete``,
``on_period``, ``select``). A temporal policy that keeps per-job state by dispatch index may also
declare ``ready_hooks`` (:func:`ready_hooks`: told of each job entering and leaving the ready
queue; PREMA's token table).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from dataclasses import fields as dataclass_fields
from enum import StrEnum
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from npusched.errors import ConfigError

# The contract's native classes (``native_contract``, compiled), re-exported here, the one
# module of ``policies`` the simulator imports: the engine's job as policies read it natively
# (``JobCore``) and the clock it reads; the record of the schedule a compiled core made last
# (``MadeSchedule``, ``made_schedule``) and the machine view's native fields (``ViewFields``,
# ``NO_JOBS``), which the engine reads and writes.
from npusched.policies.native_contract import NO_JOBS as NO_JOBS
from npusched.policies.native_contract import Clock as Clock
from npusched.policies.native_contract import JobCore as JobCore
from npusched.policies.native_contract import MadeSchedule as MadeSchedule
from npusched.policies.native_contract import ViewFields as ViewFields
from npusched.policies.native_contract import made_schedule as made_schedule
from npusched.policies.native_contract import set_states
from npusched.workloads.request import Request

if TYPE_CHECKING:
    from npusched.hardware.profile import ExecPlan, Profile


class Mechanism(StrEnum):
    """Preemption mechanisms (PREMA Sec. IV-C), executed by the engine with modelled costs.

    * ``CHECKPOINT``: the running job stops at the end of its current tile (or layer, with
      layer-granularity preemption); its live output activations are saved at memory bandwidth
      and restored, at the same cost, when it resumes.
    * ``KILL``: the running job stops at once; all its progress is lost (restarts at layer 0).
    * ``DRAIN``: no preemption; the candidate waits until the running job finishes.
    """

    CHECKPOINT = "checkpoint"
    KILL = "kill"
    DRAIN = "drain"


class JobState(StrEnum):
    WAITING = "waiting"  # in the ready queue (never started, or preempted)
    STARTING = "starting"  # allocated, waiting for its units to be released by other jobs
    RUNNING = "running"
    PREEMPTING = "preempting"  # stopping at a preemption point / saving its context
    DONE = "done"


#: The native job's properties compare its state with these (``native_contract`` cannot
#: import this module).
set_states(JobState.WAITING, JobState.RUNNING, JobState.PREEMPTING)


@dataclass(frozen=True, slots=True)
class Allocation:
    """Where a job runs: ``units`` of resource ``resource``, on plan variant ``variant``.

    ``resource=None`` names the machine's first resource and ``units=None`` its whole capacity.
    ``variant`` holds extra plan axes chosen by the policy (e.g. ``{"frequency_hz": 5e8}``);
    axes implied by the resource (its units axis, its fixed axes such as the accelerator) are
    added by the engine.
    """

    resource: str | None = None
    units: int | None = None
    variant: tuple[tuple[str, Any], ...] = ()

    @staticmethod
    def of(resource: str | None = None, units: int | None = None, **variant: Any) -> Allocation:
        """An allocation with plan axes as keywords (sorted, so equal choices compare equal)."""
        return Allocation(resource, units, tuple(sorted(variant.items())))


class JobView(Protocol):
    """What a policy may read of a job (the engine's ``Job`` satisfies it; do not mutate)."""

    @property
    def id(self) -> int: ...
    @property
    def request(self) -> Request:
        """The job's first request (for a batch: the sample that formed it)."""
        ...

    @property
    def samples(self) -> Sequence[Request]:
        """Every request (sample) the job carries now; a batch loses samples at exits."""
        ...

    @property
    def network(self) -> str: ...
    @property
    def priority(self) -> int: ...
    @property
    def arrival_s(self) -> float: ...
    @property
    def isolated_s(self) -> float:
        """Uninterrupted latency in seconds on the job's current plan variant."""
        ...

    @property
    def estimated_s(self) -> float:
        """The predictor's estimate of the isolated latency (Time_estimated), seconds."""
        ...

    @property
    def executed_s(self) -> float:
        """Work completed (seconds of the current plan), as of the view's ``now``."""
        ...

    @property
    def waited_s(self) -> float:
        """Total time spent in the ready queue so far (seconds), as of the view's ``now``."""
        ...

    @property
    def position(self) -> tuple[int, float]:
        """``(step, fraction of that step done)``: the plan-independent progress."""
        ...

    @property
    def state(self) -> JobState: ...
    @property
    def preemptions(self) -> int: ...
    @property
    def plan(self) -> ExecPlan: ...
    @property
    def allocation(self) -> Allocation | None:
        """The allocation the job runs on (``None`` while waiting)."""
        ...

    @property
    def rate(self) -> float:
        """Speed factor of the current segment (1.0 = the plan variant's own speed)."""
        ...


@dataclass(frozen=True)
class SchedulerView:
    """The read-only state a temporal policy decides on.

    Attributes:
        now: simulated time in seconds.
        ready: waiting jobs in dispatch order (ties by id).
        running: the job on the accelerator, if any (``None`` while idle or switching).
        reason: why the scheduler woke: ``"arrival"``, ``"completion"``, ``"period"``,
            ``"preempted"`` (a preemption finished, the array is free).
        profiles: profiles by network name.
    """

    now: float
    ready: Sequence[JobView]
    running: JobView | None
    reason: str
    profiles: Mapping[str, Profile]


@dataclass(frozen=True, slots=True)
class ResourceView:
    """A resource of the machine as a policy sees it (units free as of the view)."""

    name: str
    kind: str
    capacity: int
    free: int


@dataclass(frozen=True)
class MachineView:
    """The read-only state a machine policy decides on.

    Attributes:
        now: simulated time in seconds.
        ready: waiting jobs in dispatch order (ties by id).
        running: jobs holding units (running, or starting once their units are released), in
            the order they were allocated.
        preempting: jobs being stopped (running to a preemption point or saving a checkpoint);
            they still hold their units.
        resources: every resource by name, in machine order.
        reason: why the policy woke: ``"arrival"``, ``"completion"``, ``"period"``,
            ``"preempted"``, ``"exit"``, ``"timer"``, ``"merged"``, ``"stopped"``.
        profiles: profiles by network name.
    """

    now: float
    ready: Sequence[JobView]
    running: Sequence[JobView]
    preempting: Sequence[JobView]
    resources: Mapping[str, ResourceView]
    reason: str
    profiles: Mapping[str, Profile]


@dataclass(frozen=True, slots=True)
class Decision:
    """A temporal policy's answer.

    ``run`` is the job that should hold the accelerator now (``None``: leave it as it is / idle).
    If ``run`` differs from the running job, ``mechanism`` says how to preempt it; the engine
    ignores it on a non-preemptive policy (it behaves as DRAIN).
    """

    run: JobView | None
    mechanism: Mechanism = Mechanism.CHECKPOINT


KEEP = Decision(None, Mechanism.DRAIN)

#: ``Decision`` is a frozen dataclass of ``(run, mechanism)`` with slots: :func:`fast_decision`
#: sets its two slots through their descriptors (else it calls the constructor).
_FAST_DECISION = tuple(f.name for f in dataclass_fields(Decision)) == ("run", "mechanism") and (
    getattr(Decision, "__slots__", None) == ("run", "mechanism")
)


def _decision_maker() -> Callable[[JobView | None, Mechanism], Decision]:
    if not _FAST_DECISION:  # pragma: no cover - only if Decision changes shape

        def fast_decision(run: JobView | None, mechanism: Mechanism) -> Decision:
            return Decision(run, mechanism)

    else:
        new = object.__new__
        cls = Decision
        set_run = vars(Decision)["run"].__set__
        set_mechanism = vars(Decision)["mechanism"].__set__

        def fast_decision(run: JobView | None, mechanism: Mechanism) -> Decision:
            d = new(cls)
            set_run(d, run)
            set_mechanism(d, mechanism)
            return d

    fast_decision.__doc__ = """``Decision(run, mechanism)`` built without the frozen
    dataclass's ``__init__`` (its frame and two ``object.__setattr__`` calls): the two slots
    are set through their member descriptors, read from the closure (a temporal policy's hot
    path, one per decision). Equal to the constructor's."""
    return fast_decision


fast_decision = _decision_maker()


@dataclass(frozen=True)
class Merge:
    """Merge ``jobs`` into ``into`` (a batch): every job must stand at the same plan position and
    be waiting; ``into`` keeps its id and place in the queue and carries all their samples."""

    into: JobView
    jobs: Sequence[JobView]


@dataclass(frozen=True)
class Schedule:
    """A machine policy's answer. Everything not named stays as it is.

    Attributes:
        assign: ``{job: allocation}``. A waiting job starts on it (at once if the units are
            free, else as soon as jobs stopping on that resource release them, in assignment
            order); a running job with a different allocation is re-allocated: it stops at its
            next preemption point, pays the checkpoint save and restore, and continues on the
            new allocation's plan variant from the same ``(step, fraction)``.
        preempt: running jobs to take off their units with ``mechanism``.
        mechanism: CHECKPOINT or KILL (DRAIN means: do not preempt).
        until_step: ``{job: step}``: the job stops (free of cost) when it reaches the start of
            that step, returns to the ready queue and the policy wakes with reason ``"stopped"``
            (e.g. new samples run to the current exit before merging).
        merge: batches to merge (see :class:`Merge`), applied before ``assign``.
        timers: absolute times (seconds) at which to wake the policy (reason ``"timer"``).
        rates: ``{job: factor}``: a running job's speed factor from now on (contention,
            throttling), applied after ``assign``, so a job this decision starts at once runs
            at its factor from its start; the engine re-times its events, its position stays
            exact.
    """

    assign: Mapping[JobView, Allocation] = field(default_factory=dict)
    preempt: Sequence[JobView] = ()
    mechanism: Mechanism = Mechanism.CHECKPOINT
    until_step: Mapping[JobView, int] = field(default_factory=dict)
    merge: Sequence[Merge] = ()
    timers: Sequence[float] = ()
    rates: Mapping[JobView, float] = field(default_factory=dict)


NOTHING = Schedule()
"""A machine policy's "change nothing"."""

RUN_END: list[Callable[[], None]] = []
"""Called (in order, no arguments) by the engine when a run ends: what a policy's compiled core
keeps from one decision to the next for reuse drops its references there, so that nothing of a
run outlives it (``machine_core.make_schedule``'s last schedule)."""


# --- the power cap rule the engine applies (the power policies' side of the contract) --------


class PowerCapError(ConfigError):
    """The power limit is below the lowest level's power of some step, or below the idle power."""


def split_cap(
    cap_w: float,
    idle_power_w: float,
    units: Mapping[Hashable, int],
    total_units: int,
) -> dict[Hashable, float]:
    """Per-job dynamic-power budgets (W) when jobs share one chip's cap (the rule of
    :mod:`npusched.policies.power.policy`).

    The idle power is drawn once; the dynamic budget ``cap_w - idle_power_w`` is split in
    proportion to each job's allocated units out of ``total_units``. The budgets of the
    allocated jobs sum to at most the dynamic budget.

    Args:
        cap_w: the chip's power limit (W).
        idle_power_w: static + constant power (W).
        units: allocated units per job (each >= 0; their sum <= ``total_units``).
        total_units: the resource's capacity in units (> 0).

    Returns:
        Dynamic-power budget per job (W).

    Raises:
        PowerCapError: if the cap is below the idle power or the allocation oversubscribes.
    """
    if total_units <= 0:
        raise PowerCapError(f"split_cap: total_units must be > 0, got {total_units}")
    if any(u < 0 for u in units.values()) or sum(units.values()) > total_units:
        raise PowerCapError(
            f"split_cap: allocations {dict(units)} exceed the {total_units} units available"
        )
    budget = cap_w - idle_power_w
    if budget < 0:
        raise PowerCapError(f"power cap {cap_w:g} W is below the idle power {idle_power_w:g} W")
    return {job: budget * u / total_units for job, u in units.items()}


def job_cap_w(cap_w: float, idle_power_w: float, units: int, capacity: int) -> float:
    """The power cap (W) of one job holding ``units`` of a resource of ``capacity`` units whose
    idle power is ``idle_power_w`` (W), when the machine's cap is ``cap_w`` (W): the job's idle
    share plus its :func:`split_cap` share of the dynamic budget. The engine compares it with
    the plan's power, which includes the job's idle share.

    Raises:
        PowerCapError: if the cap is below the idle power, or ``units`` is not in
            ``0..capacity``.
    """
    dyn = split_cap(cap_w, idle_power_w, {0: units}, capacity)[0]
    return float(dyn + idle_power_w * units / capacity)


# --- a waiting job's stay (the token rule's boundary-alone tokens) -----------------------------


def wait_stay(job: JobView, now: float) -> tuple[float, float]:
    """``(waited_s, since_s)`` of a waiting job: the ready-queue seconds it had before its
    current stay in the queue and the time (seconds) that stay began, so that its ready-queue
    time at any instant ``b`` of the stay is ``waited_s + (b - since_s)`` whichever wake asks.
    The engine's jobs give it as ``stay``; any other view (a test double, the real-execution
    executor) is read as ``(job.waited_s, now)``: its waiting as of ``now``."""
    stay: tuple[float, float] | None = getattr(job, "stay", None)
    return stay if stay is not None else (job.waited_s, now)


# --- the ready queue's hooks (a policy that keeps its own per-job state) -------------------------

#: ``hook(k, job, now)``: job ``job``, the ``k``-th of the run's requests in dispatch order,
#: enters (or leaves) the ready queue at ``now`` (seconds).
ReadyHook = Callable[[int, Any, float], None]


def ready_hooks(policy: object, requests: Sequence[Request]) -> tuple[ReadyHook, ReadyHook] | None:
    """The hooks a temporal policy declares for one run of the engine's general loop: its
    ``ready_hooks(requests)`` (called once, after ``reset``, with the run's requests in
    dispatch order), ``(enter, leave)`` or ``None``. The engine calls ``enter(k, job, now)``
    when a job enters the ready queue (its dispatch, or its return after a preemption: the end
    of a CHECKPOINT's save, a KILL) and ``leave(k, job, now)`` when it leaves it to start, so
    the policy can keep per-job state in arrays by dispatch index ``k`` (PREMA's token table)
    instead of scanning the queue at each decision. A policy without the method: ``None``."""
    fn = getattr(policy, "ready_hooks", None)
    if not callable(fn):
        return None
    hooks: tuple[ReadyHook, ReadyHook] | None = fn(requests)
    return hooks


def direct_hooks(enter: object) -> Any:
    """The object whose bound method ``enter`` is (the first hook ``ready_hooks`` gave) where it
    declares ``direct_hooks = True``, else ``None``. Such an object (Algorithm 2 on the token
    table: ``policies.temporal.prema_core.TokenHooks``, compiled) is given only where the
    policy keeps the methods it stands for, and the policy's own ``select``, ``pick``,
    ``on_period``, ``on_periods`` and ``quiet_periods`` then call its steps
    (``select_with``, ``on_period``, ...) instead of scanning the view. The engine's general
    loop does not use it since the twenty-sixth round: where the built-in rule holds, it keeps
    the token table itself (the policy's ``general_table``) and calls the table's steps."""
    own = getattr(enter, "__self__", None)
    return own if getattr(own, "direct_hooks", False) is True else None


# --- wakes a machine policy declares quiet -------------------------------------------------------


def quiet_wake_rule(policy: object) -> Callable[[str], bool] | None:
    """A machine policy's ``quiet_wake(reason)``, or ``None`` where it has none.

    A policy declares with it the wakes whose decision it knows to be ``NOTHING`` before a
    view is built: ``quiet_wake(reason)`` is true only where ``select`` at that wake would
    return ``NOTHING`` and change no state of its own. The general loop then neither builds the
    view nor calls ``select``, and carries out ``NOTHING`` (the starts waiting for units, as
    far as they can). Planaria's re-allocations (``policies.spatial.planaria_core``): most
    ends of a save change no target."""
    fn = getattr(policy, "quiet_wake", None)
    return fn if callable(fn) else None


def empty_wake_rule(policy: object) -> Callable[[str], bool] | None:
    """A machine policy's ``empty_wake(reason)``, or ``None`` where it has none.

    The general loop calls it only at a wake where no job is in the machine (none waits,
    holds units or waits for units): ``empty_wake(reason)`` is true only where the policy has
    then made ``select``'s decision on that view itself, without the view: ``NOTHING``, with
    the state of its own that ``select`` would leave. The general loop then neither builds
    the view nor calls ``select`` (``NOTHING`` has nothing to carry out: no start waits).
    Planaria's completion of the last job (twenty-second round)."""
    fn = getattr(policy, "empty_wake", None)
    return fn if callable(fn) else None


def lone_wake_rule(
    policy: object,
) -> Callable[[str, Any], Schedule | Allocation | None] | None:
    """A machine policy's ``lone_wake(reason, job)``, or ``None`` where it has none.

    The general loop calls it only at a wake where the one job in the machine is ``job``
    (waiting or holding units; no start waits for units): ``lone_wake(reason, job)`` returns the
    :class:`Schedule` ``select`` would return on that view, or an :class:`Allocation` where
    that schedule only assigns it to ``job`` (``Schedule(assign={job: allocation})``, every
    other field as in ``NOTHING``), having left the state of its own that ``select`` would
    leave; or ``None`` where it does not make the decision (then ``select`` runs). The general
    loop carries the decision out as ``select``'s, without building the view. Planaria's arrival on an idle array and its last job's growth
    (twenty-second round)."""
    fn = getattr(policy, "lone_wake", None)
    return fn if callable(fn) else None


# --- hooks the engine may skip -------------------------------------------------------------------

_F = TypeVar("_F")


def no_op_hook(fn: _F) -> _F:
    """Mark a hook that does nothing (the shared base's ``on_dispatch``, ``on_complete``,
    ``on_period``): the engine does not call a hook that a policy class leaves as such."""
    fn.__npusched_no_op__ = True  # type: ignore[attr-defined]
    return fn


def is_no_op(cls: type, hook: str) -> bool:
    """Whether ``cls`` leaves ``hook`` as a :func:`no_op_hook` (or has no such attribute)."""
    fn = getattr(cls, hook, None)
    return fn is None or bool(getattr(fn, "__npusched_no_op__", False))


def set_on_instance(policy: object, name: str) -> bool:
    """Whether ``policy`` holds an attribute ``name`` of its own (in its ``__dict__``), which
    ``policy.name`` then reads in place of its class's: a method or hook set on one instance."""
    d = getattr(policy, "__dict__", None)
    return d is not None and name in d


def keeps_method(policy: object, name: str, method: object) -> bool:
    """Whether ``policy.name`` is ``method`` as its class stores it: the class's attribute is
    ``method`` (compared as stored, by identity) and the instance sets none of its own.

    The one test behind every shortcut the engine or a policy takes for a method it knows
    (a declared ready order, a hook left a no-op, a machine policy's decision made without
    its view): a subclass that overrides the method, or an instance given one, decides its
    own way, and the engine then calls it."""
    from inspect import getattr_static

    return getattr_static(type(policy), name, None) is method and not set_on_instance(
        policy, name
    )


def hook_is_no_op(policy: object, hook: str) -> bool:
    """Whether the engine may skip ``policy``'s ``hook``: its class leaves it a no-op
    (:func:`is_no_op`) and the instance sets none of its own."""
    return is_no_op(type(policy), hook) and not set_on_instance(policy, hook)


# --- Algorithm 3 on numbers (PREMA Sec. IV-C), the one copy every path calls ----------------


def dynamic_choice(
    cur_est: float, cur_exec: float, cand_est: float, cand_exec: float, preempt: Mechanism
) -> Mechanism:
    """PREMA's Algorithm 3 on numbers (estimated and executed seconds of the running job and of
    the candidate): ``DRAIN`` when the candidate's remaining time over the running job's
    estimate exceeds the running job's remaining time over the candidate's estimate, else
    ``preempt``. :func:`npusched.policies.temporal.mechanism.dynamic_mechanism` applies it to
    job views; the engine's loops call it without building views."""
    cur_rem = cur_est - cur_exec
    if cur_rem < 0.0:
        cur_rem = 0.0
    cand_rem = cand_est - cand_exec
    if cand_rem < 0.0:
        cand_rem = 0.0
    deg_current = cand_rem / cur_est if cur_est > 0 else float("inf")
    deg_candidate = cur_rem / cand_est if cand_est > 0 else float("inf")
    return Mechanism.DRAIN if deg_current > deg_candidate else preempt


def declared_mechanisms(policy: Any, order: str) -> tuple[Mechanism | None, Mechanism]:
    """How a policy with a declared ready order displaces the running job, as both engine
    loops read it once per run: its static mechanism (``None`` where Algorithm 3 decides,
    :func:`dynamic_choice`) and Algorithm 3's preemption (KILL under ``"dynamic-kill"``, else
    CHECKPOINT). A rank order's policy (``RankedPolicy``) gives its ``mechanism_`` and
    ``mode_`` (set by ``reset``); any other its ``mechanism`` (``"checkpoint"`` where it has
    none), ``"checkpoint"`` and ``"kill"`` static, the dynamic modes not."""
    if order == "rank":
        mode: str = policy.mode_
        static: Mechanism | None = policy.mechanism_
    else:
        mode = getattr(policy, "mechanism", "checkpoint")
        static = {"checkpoint": Mechanism.CHECKPOINT, "kill": Mechanism.KILL}.get(mode)
    return static, Mechanism.KILL if mode == "dynamic-kill" else Mechanism.CHECKPOINT


# --- ready-queue orders a temporal policy may declare ----------------------------------------

#: The orders the engine can keep a temporal policy's ready queue in (``ready_order``):
#: ``"rank"`` (a rank fixed at dispatch: ``queue_key`` / ``rank_key`` / ``better``; FCFS, HPF),
#: ``"remaining"`` (shortest estimated remaining time; SJF), ``"tokens-remaining"`` and
#: ``"tokens-arrival"`` (PREMA's Algorithm 2 choosing the shortest estimated remaining job, or
#: the first come, among the candidates; PREMA, TOKEN), ``"round-robin"`` (the first-come job
#: of the next model after a pointer in the order of first dispatch; NP-RRB, P-RRB: the policy
#: gives the engine its ``rotation`` and, with a period, its ``quantum_s`` and
#: ``quiet_before`` rule).
READY_ORDERS: tuple[str, ...] = (
    "rank",
    "remaining",
    "tokens-remaining",
    "tokens-arrival",
    "round-robin",
)


def declared_order(policy: object) -> str | None:
    """The ready-queue order ``policy`` declares, or ``None``.

    A policy class declares ``ready_order`` (one of :data:`READY_ORDERS`) and, in
    ``ready_order_methods``, the methods whose behaviour the order stands for (default
    ``("select",)``). The declaration holds for the class that makes it and for subclasses
    that keep every one of those methods as the declaring class has them (compared as stored,
    so static and class methods compare by identity; :func:`keeps_method`); a subclass that
    overrides one, or an instance given one of its own, decides its own way, and the engine
    then calls its methods (the general loop)."""
    from inspect import getattr_static

    cls = type(policy)
    owner = next((c for c in cls.__mro__ if "ready_order" in c.__dict__), None)
    if owner is None:
        return None
    order = owner.__dict__["ready_order"]
    if order not in READY_ORDERS:
        return None
    for m in getattr(owner, "ready_order_methods", ("select",)):
        if not keeps_method(policy, m, getattr_static(owner, m, None)):
            return None
    return str(order)
