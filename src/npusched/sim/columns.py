"""The engine's loop over per-job columns, for temporal policies that declare their ready
order (:func:`~npusched.policies.contract.declared_order`): FCFS and HPF (``"rank"``), SJF
(``"remaining"``), PREMA and TOKEN (``"tokens-remaining"`` / ``"tokens-arrival"``), NP-RRB and
P-RRB (``"round-robin"``).

No per-job objects: per request, in dispatch order, flat lists (work done, bytes to restore,
preemptions, checkpoint bytes and seconds, work lost to KILL; for the token rule priority,
estimate, tokens and time in the ready queue); first start, finish and energy go straight into
the run's result columns. One job holds the resource; its segment is four floats (``seg_start``,
``t0`` after its restore, ``ex0`` work done at the segment's start, ``limit`` where it stops).
The mechanisms (start with restore, end of segment with energy and power piece, CHECKPOINT to
the next preemption point with its save, KILL, DRAIN, Algorithm 3 through
:func:`~npusched.policies.contract.dynamic_choice`, the livelock guard) are written once for
the ready orders, here; since the twenty-first round their rules (the start's restore, the
segment's close, CHECKPOINT's stop point, the save, KILL's bookkeeping, the save's timeline
segment) are the functions of :mod:`npusched.sim.mechanisms`, which the general loop calls too:
this loop passes its columns' items and its constants (all the resource's units, rate 1),
the close, the save and KILL from one function (:func:`_close`, twenty-second round). The
one exception is the completion of a job that ran its whole plan in one segment, written out
in the loop (its steps and joules read once per plan).

The engine owns the ready queue, ordered by the key the policy declares:

- ``"rank"``: a heap of ints, ``rank * n + k`` for job ``k`` of ``n`` (:func:`heap_keys`), the
  order of ``(queue_key(request), dispatch order)``; a preemptive policy displaces the running
  job when ``better(rank_key(best), rank_key(running))``.
- ``"remaining"``: a heap of ``(remaining estimate, k)`` made when a job enters the queue (a
  waiting job's work does not change); a preemptive policy displaces the running job when the
  best key is below the running job's remaining estimate now (ties keep it).
- the token orders: Algorithm 2 in the policy's token table (``pol.token_table``,
  :mod:`npusched.policies.temporal.levels`, the one the general loop uses too), indexed by
  dispatch order: the loop tells it of a job entering (``enqueue``) and leaving (``dequeue``)
  the ready queue, credits period boundaries (``credit_tick``; ``credit_periods`` for the
  skipped ones), asks it for the pick and for the next tick that can change a decision
  (``quiet``). Under the linear rule with ``>=`` (the default) the waiting jobs are held by
  token level, so a decision costs O(levels log n) (see ``docs/engine.md``).
- ``"round-robin"``: the policy's rotation (``pol.rotation``, a
  :class:`~npusched.policies.temporal.rrb_core.Rotation`: per model a heap of its waiting
  jobs' dispatch indices, the models in order of first dispatch); the loop holds the pointer
  and the slice (its job and start) and applies ``PRRBCore.select``'s test: the running job
  keeps the array while ``now - slice_start < quantum_s * (1 - 1e-9)``, else the next other
  model's first job displaces it. With a period (P-RRB) it ticks as the general loop does for
  a policy with ``quiet_before``: one tick at the next boundary while jobs wait, the lone ticks
  that keep the running job passed over in one step, and a CHECKPOINT's stop carried out at
  the decision when there is no ``until``.

The result is the general loop's (``skip_periods=True`` for the token orders) to the last bit:
the same wakes (events within :data:`~npusched.sim.events.TIME_TOL_S` handled together in the
event queue's order; a completion a preemption superseded and a re-planned tick still open a
wake), so every column, ``events``, ``busy_s``, energy, ``layer_executions`` and the power pieces
are equal (``tests/test_ranked_fast_path.py``, ``tests/test_token_fast_path.py``,
``tests/test_rrb_fast_path.py``, ``tests/test_golden_engine.py``).

When it applies (:func:`applies`): ``"rank"`` (with a ``queue_key``) or ``"remaining"`` with no
period and the no-op hooks; a token order with ``Simulator(skip_periods=True)`` and a no-op
``on_dispatch``; ``"round-robin"`` with a period exactly where the policy has a
``quiet_before`` (its hooks are the declaration's). Whatever the run holds: power pieces, the
timeline, ``until``, a power policy's clock / voltage switches (by the general loop's rule in
:mod:`npusched.sim.levels`), dependent requests and early exits are handled here. Anything else
runs the general loop; ``Simulator(fast_path=False)`` forces it.

Dependent requests (``depends_on`` / ``transfer_s``, since the eighteenth round): a held request
arrives when its predecessor finishes, at ``max(arrival_s, finish + transfer_s)``, from a heap
of released arrivals made only where a run has dependents, in the general loop's event order
(after the machine event and before a tick of the same time; among themselves in the order
they were released); round-robin then numbers the models in the order they first arrive.
Early exits (a request's ``exit`` on a plan with exits): the running job's event is its exit
(``_EXIT``, the general loop's BOUNDARY) where the exit is still ahead, its work up to the exit
(the prefix sum), the completion's records; a CHECKPOINT whose next preemption point lies past
the exit (but before the end) stops the job at the exit, as the general loop's ``_checkpoint``
does, and it leaves at once when it starts again.
"""

from __future__ import annotations

import heapq
import math
import operator
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final

import npusched.sim.records as records
from npusched.errors import SimulationError
from npusched.hardware.plan import ExecPlan
from npusched.policies.contract import (
    Mechanism,
    declared_mechanisms,
    declared_order,
    dynamic_choice,
    hook_is_no_op,
)
from npusched.sim.common import (
    _MAX_IDLE_TICKS,
    _QUIET_MAX,
    NAN_OBJ,
    PowerColumns,
    Segment,
    futile_preemption,
)
from npusched.sim.events import TIME_TOL_S
from npusched.sim.heaps import TYPED_HEAPS, fpop, fpush, heap_keys, ipop, ipush, kpop, kpush
from npusched.sim.levels import SwitchLevels
from npusched.sim.mechanisms import end_segment, kill, restore_end, save, save_segment, stop_point
from npusched.sim.records import doubles, write_records

if TYPE_CHECKING:
    from npusched.policies.temporal.levels import TokenTable
    from npusched.policies.temporal.rrb_core import Rotation
    from npusched.sim.engine import SimResult, _Plan, _Run

__all__ = ["applies", "column_order", "execute_columns"]

# ``Final``: compiled, the machine-event kinds are C constants and the mechanisms static
# references (a module global that is not ``Final`` is a dictionary look-up at every use).
_CHECKPOINT: Final = Mechanism.CHECKPOINT
_KILL: Final = Mechanism.KILL
_DRAIN: Final = Mechanism.DRAIN
_NONE: Final = 0
_COMPLETE: Final = 1
_STOP: Final = 2
_SAVE_DONE: Final = 3
#: The running job's event is its early exit (the general loop's BOUNDARY, which leaves the
#: livelock guard's count as it is, where a completion resets it).
_EXIT: Final = 4
_TOKEN_ORDERS: Final = ("tokens-remaining", "tokens-arrival")
# ``heapq``'s functions as ``Final`` names: compiled, a name imported with ``from heapq import``
# is a look-up in the module's dictionary at every call; a ``Final`` one is a C static.
heappush: Final = heapq.heappush
heappop: Final = heapq.heappop


def applies(run: _Run) -> bool:
    """Whether ``run`` may take :func:`execute_columns` (:func:`column_order` names the order)."""
    return column_order(run) is not None


def column_order(run: _Run) -> str | None:
    """The ready order ``run`` takes :func:`execute_columns` with, or ``None`` where it may not
    (see the module docstring; the engine asks once and hands the order over, since
    :func:`~npusched.policies.contract.declared_order` inspects the policy's class): the policy
    declares its ready order (:func:`~npusched.policies.contract.declared_order`): ``"rank"``
    (with a ``queue_key``) or ``"remaining"`` with no period and every hook a no-op, or a token
    order (PREMA, TOKEN and subclasses keeping Algorithm 2) with ``skip_periods`` and a no-op
    ``on_dispatch``, or ``"round-robin"`` (NP-RRB, P-RRB) with a period exactly where there is
    a ``quiet_before``. Any run of such a policy (dependent requests and early exits
    included, since the eighteenth round)."""
    sim = run.sim
    policy = run.policy
    cls = type(policy)
    if not (getattr(sim, "fast_path", True) and run.temporal):
        return None
    order = declared_order(policy)
    if order is None:
        return None
    if order in _TOKEN_ORDERS:
        if not (sim.skip_periods and hook_is_no_op(policy, "on_dispatch")):
            return None
    elif order == "round-robin":
        # The declaration covers the hooks, ``preemptive`` and the ticks' rules
        # (``ready_order_methods``): P-RRB ticks with a period and passes over the ticks its
        # ``quiet_before`` calls quiet; NP-RRB has neither.
        if (getattr(policy, "period_s", None) is None) == callable(
            getattr(policy, "quiet_before", None)
        ):
            return None
    elif order == "rank" or order == "remaining":
        if order == "rank" and not callable(getattr(cls, "queue_key", None)):
            return None
        if getattr(policy, "period_s", None) is not None:
            return None
        for hook in ("on_dispatch", "on_complete", "on_period"):
            if not hook_is_no_op(policy, hook):
                return None
    else:
        return None
    return order


def _srpt_rem(est: list[float], exe: list[float], k: int) -> float:
    """SJF's key of job ``k`` (``shortest_remaining``'s, float operations: the remaining
    estimate clamped at 0)."""
    r = est[k] - exe[k]
    return 0.0 if r < 0.0 else r


def _srpt_key(est: list[float], exe: list[float], k: int) -> tuple[float, int]:
    """SJF's ready entry of job ``k`` (``shortest_remaining``'s key and ties: the remaining
    estimate clamped at 0, then dispatch order = arrival, id; :func:`_srpt_rem` written out:
    interpreted, a call per push costs)."""
    r = est[k] - exe[k]
    return (0.0 if r < 0.0 else r, k)


class _Columns:
    """The per-request lists and the run's fixed values that :func:`_close` reads and writes
    (by dispatch order), one object: compiled, a module-level function taking it is a native
    call with unboxed float arguments and typed attribute reads, where a function nested in
    :func:`execute_columns` was a closure object called generically (its captured lists then
    also lived in an environment object that every use in the loop went through).

    The per-request lists are added to as ``a[k] = a[k] + x``, not ``a[k] += x``: compiled, an
    augmented assignment to a list item is a generic ``PyNumber_InPlaceAdd`` on boxed values,
    the written-out form a C add of the typed item (the same operation: floats and ints have
    no in-place add)."""

    __slots__ = (
        "arr_energy",
        "cap",
        "cbytes",
        "ckpt_cost",
        "csec",
        "energy",
        "exe",
        "f0",
        "npre",
        "pw",
        "rbytes",
        "rid",
        "rname",
        "rows",
        "tl",
        "touched",
        "units",
        "wasted",
    )

    def __init__(
        self,
        exe: list[float],
        rbytes: list[int],
        csec: list[float],
        energy: list[float],
        arr_energy: Any,
        rows: Any,
        rid: list[int],
        tl: list[Segment] | None,
        pw: PowerColumns | None,
        rname: str,
        units: int,
        cap: int,
        f0: Any,
        npre: list[int],
        cbytes: list[int],
        touched: list[int],
        ckpt_cost: bool,
        wasted: list[float],
    ) -> None:
        self.npre = npre
        self.cbytes = cbytes
        self.touched = touched
        self.ckpt_cost = ckpt_cost
        self.wasted = wasted
        self.exe = exe
        self.rbytes = rbytes
        self.csec = csec
        self.energy = energy
        self.arr_energy = arr_energy
        self.rows = rows
        self.rid = rid
        self.tl = tl
        self.pw = pw
        self.rname = rname
        self.units = units
        self.cap = cap
        self.f0 = f0


#: What :func:`_close` does after the segment's close: nothing more (a completion, an early
#: exit), CHECKPOINT's save begun (the stop), or KILL's bookkeeping.
_CLOSE: Final = 0
_SAVE: Final = 1
_WASTE: Final = 2


def _close(
    c: _Columns,
    k: int,
    te: float,
    exec_end: float,
    seg_start: float,
    t0: float,
    a: float,
    plan: ExecPlan,
    then: int,
    bandwidth: float,
) -> tuple[float, int, float, bool, float, float]:
    """Job ``k``'s segment (all the resource's units, rate 1), begun at ``seg_start`` and
    computing from ``t0`` with ``a`` seconds of work done (its work-done column, ``exe[k]``,
    which changes only when its segment closes: the caller's copy from the start, not read
    again), closed at ``te`` with ``exec_end`` done
    (:func:`~npusched.sim.mechanisms.end_segment`); ``then`` :data:`_SAVE`: the
    CHECKPOINT victim's save begins (:func:`~npusched.sim.mechanisms.save`, at ``bandwidth``
    bytes/s), :data:`_WASTE`: its work is lost (:func:`~npusched.sim.mechanisms.kill`);
    either counts a preemption. Each of the job's columns is read once and written once, only
    where it changed (compiled, each write boxes a new object), the mechanisms' results passed
    from one to the next.

    Returns what the resource adds (busy seconds, layer executions, joules), whether the
    segment did work (the livelock guard), and the save's seconds and busy seconds (0.0
    unless saved); the caller adds them to the loop's state, which stays in the loop's fast
    locals, the busy time in the general loop's order (the segment's, then the save's). (The
    callers that read only the first three unpack all six into the loop's typed locals: an
    ``_`` target is an object, each float boxed for nothing.)"""
    tl = c.tl
    rbytes = c.rbytes
    csec = c.csec
    units = c.units
    cap = c.cap
    rb0 = rbytes[k]
    cs0 = csec[k]
    cs, rb, ex, db, steps, e = end_segment(
        te,
        exec_end,
        seg_start,
        t0,
        a,
        a,
        rb0,
        cs0,
        plan,
        1.0,
        units,
        cap,
        tl,
        c.pw,
        c.rid[k] if tl is not None else -1,
        c.rname,
        c.f0,
    )
    worked = ex > a
    save_s = 0.0
    sb = 0.0
    if then:
        if then == _SAVE:
            cbytes = c.cbytes
            cb0 = cbytes[k]
            rb, cs, cb, save_s, sb = save(
                te, t0, ex, rb, cs, cb0, plan, units, cap, c.ckpt_cost, bandwidth
            )
            if cb != cb0:
                cbytes[k] = cb
        else:
            wasted = c.wasted
            wasted[k], ex, rb = kill(wasted[k], ex)
        npre = c.npre
        m = npre[k]
        if not m:
            c.touched.append(k)
        npre[k] = m + 1
    # (written only where they changed: compiled, each write boxes a new object)
    if cs != cs0:
        csec[k] = cs
    if rb != rb0:
        rbytes[k] = rb
    c.exe[k] = ex
    if e:
        if c.arr_energy is None:
            c.energy[k] = c.energy[k] + e
        else:
            c.arr_energy[c.rows[k]] += e
    return db, steps, e, worked, save_s, sb


def _bandwidth(bandwidth: list[float], req_plans: list[_Plan], k: int) -> float:
    """Job ``k``'s profile's memory bandwidth (bytes/s) at its stop: read from the profile at
    its first (``bandwidth[k]`` 0.0: not read yet) and kept there, where its restores read it
    too (a job restores only after a stop)."""
    b = bandwidth[k]
    if not b:
        b = req_plans[k][0].memory_bandwidth_bps
        bandwidth[k] = b
    return b


def _exit_work(run: _Run) -> list[float] | None:
    """Per request in dispatch order, the work (seconds, the prefix sum as the general loop's
    ``_next_boundary`` reads it) at which its samples leave at their early exit, ``inf`` where
    it has none (no exit, an exit index its plan does not have, or a plan without exits: the
    general loop then arms no boundary); None where no request has one."""
    exit_row = run.exit_row
    if exit_row is None:
        return None
    inf = math.inf
    rows = run.arrival_rows
    out = [inf] * len(rows)
    found = False
    for k, entry in enumerate(run.req_plans):
        ex = exit_row[rows[k]]
        if ex is None:
            continue
        plan = entry[1]
        exits = plan.exits
        if exits and 0 <= ex < len(exits):
            out[k] = float(plan._cum_list()[exits[ex]])
            found = True
    return out if found else None


def _dependents(run: _Run) -> dict[int, list[int]]:
    """The run's dependent requests by dispatch order: for a request ``k``, those held until
    it finishes (``_Run.dependents``, by request id and input index, read once)."""
    ids: list[int] = run.disp("id")
    k_of = {rid: k for k, rid in enumerate(ids)}
    order_of = run.order_of.tolist()
    return {k_of[d]: [order_of[i] for i in lst] for d, lst in run.dependents.items()}


def execute_columns(run: _Run, declared: str | None = None) -> SimResult:
    """Run ``run`` (for which :func:`applies` holds) to the end; the general loop's result.
    ``declared``: its :func:`column_order` where the caller has it (else asked here)."""
    sim = run.sim
    policy = run.policy
    policy.reset()  # validates the parameters, as the general loop's reset does
    pol: Any = policy
    preemptive = bool(pol.preemptive)
    order = declared if declared is not None else declared_order(policy)
    token = order in _TOKEN_ORDERS
    rr = order == "round-robin"  # NP-RRB, P-RRB: the rotation held here (``Rotation``)
    srpt = order == "remaining"  # SJF: ready entries ``(remaining estimate, k)``
    # How a waiting job displaces the running one (``"rank"`` / ``"remaining"``): ``cmp`` 1 is
    # ``better`` = ``operator.gt`` written out (HPF), 2 ``operator.lt`` (FCFS), 3 any other
    # ``better``, 4 SJF's remaining estimate; 0 never (non-preemptive).
    cmp = 0
    better: Callable[[Any, Any], bool] = operator.lt
    if order == "rank":
        better = pol.better
        if preemptive:
            cmp = 1 if better is operator.gt else 2 if better is operator.lt else 3
    elif srpt and preemptive:
        cmp = 4
    # the static mechanism (None: Algorithm 3) and Algorithm 3's preemption
    static_mech, dyn_preempt = declared_mechanisms(pol, order or "")

    n = len(run.arrival_rows)
    req_plans = run.req_plans
    estimator = sim.estimator
    res = run.res[0]
    # The power pieces (``record_power``), one per closed segment that computed, as the general
    # loop's ``_end_segment`` adds them (rate 1: one job at a time, a power policy's levels are
    # in its derived plans), as columns.
    pw = run.power
    # The timeline (``record_timeline``): the general loop's ``Segment`` entries (run, restore,
    # save) in the same order; every job holds all the resource's units at its variant's clock.
    tl = run.timeline
    # ``Any``, not ``float``: compiled, a ``float`` local is unboxed and every ``Segment`` would
    # get its own boxed nan; the timelines compare equal (``nan`` fields by identity) only if
    # every segment holds the one object, as the pure module and the general loop do.
    # (``common.NAN_OBJ``: the one object, which the general loop's segments hold too.)
    f0: Any = NAN_OBJ
    for key, val in run.variant0:
        if key == "frequency_hz":
            f0 = val if type(val) is float else float(val)
    rname = res.name
    units = res.capacity
    cap = res.capacity
    one_unit = cap == 1
    ckpt_cost = run.ckpt_cost
    layer_point = run.layer_point
    tol = TIME_TOL_S
    inf = math.inf
    floor = math.floor
    quiet_max = _QUIET_MAX
    # Per request, by dispatch order: its first start, its finish and its joules, written to
    # the run's columns (by result row) once, after the loop (``records.write_records``, the one
    # writer of both loops' records). Compiled, a
    # list of floats is written natively, where the run's ``array('d')`` columns took a generic
    # ``PyObject_SetItem`` with a boxed float (and ``+=`` a generic read and add too): about
    # 1,300 instructions per request in a warm HPF run. Each row is one request's, so every
    # row gets the same values, its joules summed in the same order from the same 0.0.
    # A written list item is a float object (32 bytes a request, where ``array('d')`` holds 8,
    # and pymalloc keeps the freed ones' pages): runs of more than ``LIST_RECORDS_MAX``
    # requests write the run's columns by row as before, so P-PREMA at 1e6 requests stays in
    # its 1 GiB (with the lists it read about 1,065 MiB against 945).
    by_list = n <= records.LIST_RECORDS_MAX
    col_first = [math.nan] * n if by_list else []
    col_finish = [math.nan] * n if by_list else []
    col_energy = [0.0] * n if by_list else []
    rows = run.arrival_rows
    arr_first = run.col_first
    arr_finish = run.col_finish
    arr_energy = run.col_energy
    progress = run.progress
    chunk = max(1, -(-n // 100))
    until = run.until  # the general loop's stop: no event after it is handled
    # ``t > t_end`` is ``t == inf or t > until`` in one comparison (the largest finite float
    # when ``until`` is not finite below infinity: only ``inf`` exceeds it).
    t_end = until if until < inf else sys.float_info.max

    # Per request, by dispatch order: its estimate (called once per request in dispatch order,
    # as the general loop does; None where nothing reads it: no estimator, a static mechanism
    # and a rank order, the isolated latencies then taken from the run's column), work done,
    # bytes to restore, preemptions, checkpoint bytes and seconds, work lost to KILL.
    # Early exits (``has_exits``; ``exit_w`` per request the work at its exit, ``inf`` none)
    # and dependent requests (``has_deps``): the general loop's BOUNDARY events and released
    # arrivals, taken here only where a run has them.
    exit_got = _exit_work(run)
    has_exits = exit_got is not None
    exit_w: list[float] = exit_got if exit_got is not None else []
    has_deps = bool(run.dependents)
    est: list[float] = []
    est_rec: list[float] | None = est
    if estimator is not None:
        est = run.estimates()
        est_rec = est
    elif token or srpt or static_mech is None or has_deps or has_exits:
        # (with exits the estimate is the whole plan's isolated latency, not ``col_iso``'s)
        est = [e[2] for e in req_plans]
        est_rec = est
    else:
        est_rec = None
    exe = [0.0] * n
    rbytes = [0] * n
    npre = [0] * n
    cbytes = [0] * n
    csec = [0.0] * n
    wasted = [0.0] * n
    # Requests ever preempted, in order of their first preemption: the only ones whose
    # preemption, checkpoint and waste records are not zero.
    touched: list[int] = []
    # The engine-owned ready queue of a rank or remaining order: a heap of ``hkey[k]`` (an int,
    # ``entry % n`` is ``k``; SJF a ``(remaining, k)`` tuple) and each job's rank. Compiled
    # (``typed``), the heaps are this module's (``ipush`` ...), and SJF's holds the index
    # ``k`` alone, ordered as ``(skey[k], k)``: no tuple per entry.
    typed = TYPED_HEAPS
    ready: list[Any] = []
    hkey: list[Any] = []
    skey: list[float] = []
    rank: list[Any] = []
    run_rank: Any = None

    if srpt:
        if typed:
            skey = [_srpt_rem(est, exe, k) for k in range(n)]
        else:
            hkey = [_srpt_key(est, exe, k) for k in range(n)]
    elif not (token or rr):
        qkey = run.keys_of(pol, "queue_key")
        rank = run.keys_of(pol, "rank_key") if preemptive else qkey
        hkey = heap_keys(qkey)
        del qkey

    # The token orders: Algorithm 2's table, the policy's (``TokenScheduler.token_table``:
    # tokens, stays, the per-level structures; written once, used by both loops).
    period = 0.0
    # ``list[float]``: compiled, the next arrival is an unboxed float compared natively (as
    # ``Any`` every ``next_arr <= horizon`` was a generic comparison with a boxed float).
    arr_t: list[float] = run.disp("arrival_s")
    rid: list[int] = []
    if token or tl is not None:
        rid = run.disp("id")  # Algorithm 2's ties, the timeline's request ids
    arr_t.append(inf)  # arrival times with a sentinel
    if token:
        period = float(pol.period_s)
        # The token table: a native class compiled, its methods direct C calls on unboxed
        # floats (typed here; imported for the type only: the engine knows no policy module).
        # The rank orders never assign nor read it.
        table: TokenTable = pol.token_table(
            run.disp("priority"), arr_t, rid, est, exe
        )  # (sentinel unread)
    # Round-robin: the rotation of models (``pol.rotation``: per model a heap of its waiting
    # jobs), the pointer (the model that last got the array, -1 none yet), the slice (its job
    # and start); with a period (P-RRB) ticks at every boundary while jobs wait, passed over
    # while ``quiet_before`` says they keep the running job, and a CHECKPOINT's stop carried
    # out at the decision (``fuse``, as the general loop's ``_checkpoint``). ``quiet`` is
    # ``quiet_before``'s time where it is infinite; ``quiet_slice``: it is the slice's
    # threshold ``T``, the smallest float with ``T - slice_start >= quantum_q``, and since the
    # subtraction is monotone ``c < T`` is tested as ``c - slice_start < quantum_q`` (the
    # decision's own keep test; ``T`` itself is never needed).
    ticks = False
    quiet_on = False
    fuse = False
    quiet = -inf
    quiet_slice = False
    quantum_q = 0.0
    rr_ptr = -1
    slice_k = -1
    slice_start = 0.0
    # Per request, its profile's memory bandwidth (its saves and restores): a profile's
    # attribute is a generic look-up. Read per request before the loop under round-robin
    # (several stops per request), else at a job's first stop (:func:`_bandwidth`, 0.0 until
    # then) instead of at each stop and each restore.
    bandwidth: list[float] = [0.0] * n if preemptive and not rr else []
    if rr:
        rot: Rotation = pol.rotation(run.disp("network"))
        model_of = rot.model_of
        rr_period = getattr(pol, "period_s", None)
        if rr_period is not None:
            if not (rr_period > 0.0 and math.isfinite(rr_period)):
                raise SimulationError(
                    f"policy {run._pname()!r}: period_s={rr_period!r}; must be a positive "
                    "number or None"
                )
            period = float(rr_period)
            ticks = True
            quiet_on = True
            # (not under a power policy: the general loop's ``fuse_stop`` is off there)
            fuse = until == inf and sim.power is None
        if preemptive:
            quantum_q = pol.quantum_s * (1 - 1e-9)
            bandwidth = [e[0].memory_bandwidth_bps for e in req_plans]
    nwait = 0  # jobs in the ready queue
    # The job holding the array (``run_k``) or saving its context (``pre_k``) and its segment,
    # (and, rank orders, the running job's rank); one machine event ``mkind`` at ``tm``; completion events a
    # preemption superseded (``stale``, earliest ``ts``): they change nothing but wake the loop.
    run_k = -1
    pre_k = -1
    killed = -1
    seg_start = 0.0
    save_t = 0.0  # when the victim's save began (the timeline's "save" segment)
    t0 = 0.0
    ex0 = 0.0
    iso = 0.0  # the running job's plan end (its isolated latency)
    limit = 0.0
    # typed, so that its look-ups are native calls compiled (every request's plan is an
    # ``ExecPlan``); the loop reads it only while a job runs, so never with no requests
    plan: ExecPlan
    if n:
        plan = req_plans[0][1]
    plan_steps = 0
    plan_energy = 0.0
    mkind = _NONE
    tm = inf
    stale: list[float] = []
    ts = inf
    # Superseded ticks from ``quiet_periods``' "never" (about 2**40 periods ahead) are kept
    # aside, unsorted: no run reaches them (if one does, they join ``stale`` first).
    far: list[float] = []
    far_min = inf
    far_s = (1 << 39) * period
    busy = 0.0
    res_energy = 0.0
    layer_exec = 0
    n_finished = 0
    reported = run.reported
    # Period ticks: ``live`` holds the times of those of the current epoch (a heap); re-planning
    # moves them to ``stale`` (a tick of an older epoch only wakes the loop, as a superseded
    # completion does). ``sched_k`` is the scheduled boundary's index, ``skip_k0`` the first
    # skipped one (None: none skipped).
    live: list[float] = []
    sched_k = -1
    tick_pending = False
    skip_k0: int | None = None
    idle_periods = 0
    futile = 0  # preemptions in a row without progress (the engine's livelock guard)
    # A power policy's clock / voltage levels (``sim.levels``' rule, which the general loop's
    # ``_level_switch`` applies too): with one job at a time the only start whose job may still
    # hold the units is the last one (``lv_k``, with its plan, the work done and lost when it
    # started, the level the units stood at before, and its isolated seconds: the work done
    # once it completed, ``lv_done``). ``lvs`` is typed for native calls; read only if ``lv_on``.
    lv_on = sim.power is not None
    lvs: SwitchLevels
    if lv_on:
        lvs = SwitchLevels(sim.power, 1)
    lv_k = -1
    lv_done = False
    lv_plan: ExecPlan  # (read only once ``lv_k`` is set)
    if n:
        lv_plan = plan
    lv_x0 = 0.0
    lv_w0 = 0.0
    lv_iso = 0.0
    lv_before: Any = None
    idle_w: float = res.spec.idle_power_w if lv_on else 0.0
    pname = run._pname() if lv_on else ""

    cols = _Columns(
        exe,
        rbytes,
        csec,
        col_energy,
        None if by_list else arr_energy,
        rows,
        rid,
        tl,
        pw,
        rname,
        units,
        cap,
        f0,
        npre,
        cbytes,
        touched,
        bool(ckpt_cost),
        wasted,
    )
    # Dependent requests (``has_deps``): ``hold`` marks, by dispatch order (a sentinel 0 at
    # ``n``), those held until their predecessor finishes; the others arrive in dispatch order
    # as without dependents, the released ones from ``rel``, a heap of ``(time, seq, k)`` (the
    # general loop's ARRIVAL events: after the machine event and before a tick of the same
    # time, among themselves in the order they were released), ``tr`` its earliest time (inf:
    # none); ``ts`` is the earlier of it and the superseded events' (both only open a wake
    # where nothing else does), so a run without dependents tests ``tr`` only where a machine
    # event or a tick is due. ``rel_in``: a release arrived in this wake (a decision follows).
    # ``got``: the requests that arrived (the others have no estimate, as in the general loop).
    hold: list[int] = []
    got = bytearray(0)
    dep_of: dict[int, list[int]] = {}
    dep_tr: list[float] = []
    rel: list[tuple[float, int, int]] = []
    rseq = 0
    tr = inf
    rel_in = False
    if has_deps:
        hold = list(run.held)
        hold.append(0)
        got = bytearray(n)
        dep_of = _dependents(run)
        dep_tr = [0.0 if x is None else float(x) for x in run.disp("transfer_s")]
        if rr:
            # Round-robin numbers the models in order of first dispatch, which a released
            # request changes: with dependents a model gets its number when its first request
            # arrives (``Rotation.arrive``).
            rot.hold_joins()
    ai = 0
    if has_deps:
        while hold[ai]:
            ai += 1
    next_arr = arr_t[ai]
    now = 0.0
    events = 0
    last_t = 0.0
    n_done_before = 0
    while True:
        if quiet_on and live:
            c = live[0]
            if (c - slice_start < quantum_q if quiet_slice else c < quiet) and c < tm and c < ts:
                # The general loop's pass-over: the pending tick at ``c`` would wake alone
                # (nothing else within the time tolerance after it), find the same jobs waiting
                # and the same job running, and keep it (``quiet_before`` says so before
                # ``quiet``). Every such tick is passed over in one step: the state is what
                # their wakes leave (clock, last wake), less their ``events``.
                tn = tm if tm < ts else ts
                if next_arr < tn:
                    tn = next_arr
                if c + tol < tn and c <= until:
                    while True:
                        kb = math.floor(c / period) + 1  # ``_next_boundary(c, period)``
                        while kb * period <= c + tol:
                            kb += 1
                        nc = kb * period
                        if (
                            (nc - slice_start < quantum_q if quiet_slice else nc < quiet)
                            and nc + tol < tn
                            and nc <= until
                        ):
                            c = nc
                        else:
                            break
                    now = c
                    last_t = c
                    live[0] = nc
        t = tm if tm < next_arr else next_arr
        if live and live[0] < t:
            t = live[0]
        if t == inf and not nwait and tr == inf:
            break  # only superseded events are left: they would wake the loop to do nothing
        if far_min <= t and far_min <= ts:  # a run this long: the far ticks join the heap
            for b in far:
                if typed:
                    fpush(stale, b)
                else:
                    heappush(stale, b)
            far.clear()
            far_min = inf
            ts = stale[0] if stale[0] < tr else tr
        if ts < t:
            t = ts
        if t > t_end:  # ``t == inf or t > until``
            break
        if t > now:
            if skip_k0 is not None:
                # ``_Run._catch_up_periods``: credit the boundaries skipped before ``t``; one
                # at ``t`` itself becomes a real tick of this wake.
                k0 = skip_k0
                t_lo = t - tol
                last = floor(t_lo / period)
                if last > sched_k - 1:
                    last = sched_k - 1
                while last >= k0 and last * period >= t_lo:
                    last -= 1
                while last + 1 < sched_k and (last + 1) * period < t_lo:
                    last += 1
                count = last - k0 + 1
                if count > 0:
                    table.credit_periods(t, k0 * period, count, run_k)
                nxt = last + 1
                if nxt < sched_k and nxt * period <= t + tol:
                    b = nxt * period
                    heappush(live, b)
                    if b < t:
                        t = b
                    nxt += 1
                skip_k0 = nxt if nxt < sched_k else None
            now = t
        horizon = now + tol
        if ts <= horizon:
            while stale and stale[0] <= horizon:
                if typed:
                    fpop(stale)
                else:
                    heappop(stale)
            ts = stale[0] if stale else inf
            if tr < ts:
                ts = tr
        woke = False
        ticked = False
        completed = False
        preempted = False
        # The machine event, the released arrivals and the ticks due, in the event queue's
        # order (time, then kind: the machine event, then a released arrival, then a tick of
        # the same time). A wake of arrivals only skips it. (``while True``: the chain's last
        # branch ends it; a condition in the ``while`` would repeat the chain's tests.)
        while True:
            if tm <= horizon and tm <= tr and not (live and live[0] < tm):
                if mkind == _COMPLETE:
                    if ex0 <= 0.0 and t0 == seg_start:
                        # A run from the start, uninterrupted: the whole plan at once.
                        busy += now - seg_start if one_unit else (now - seg_start) * units / cap
                        layer_exec += plan_steps
                        if plan_energy:
                            res_energy += plan_energy
                            if by_list:
                                col_energy[run_k] = col_energy[run_k] + plan_energy
                            else:
                                arr_energy[rows[run_k]] += plan_energy
                        if pw is not None and limit > ex0 and now > t0:
                            pw.add(t0, now, plan, ex0, limit, 1.0, rname)
                        if tl is not None and now > t0:
                            tl.append(Segment(rid[run_k], t0, now, "run", rname, units, f0))
                    else:
                        db, steps, e, worked, save_s, sb = _close(
                            cols, run_k, now, limit, seg_start, t0, ex0, plan, _CLOSE, 0.0
                        )
                        busy += db
                        layer_exec += steps
                        if e:
                            res_energy += e
                    if by_list:
                        col_finish[run_k] = now
                    else:
                        arr_finish[rows[run_k]] = now
                    if token:
                        table.finished(run_k)
                    futile = 0
                    lv_done = True
                    n_finished += 1
                    if has_deps:  # its dependents are released (``_release_dependents``)
                        got_deps = dep_of.get(run_k)
                        if got_deps is not None:
                            for j in got_deps:
                                a_j = arr_t[j]
                                t_j = now + dep_tr[j]
                                heappush(rel, (t_j if t_j > a_j else a_j, rseq, j))
                                rseq += 1
                            tr = rel[0][0]
                            if tr < ts:
                                ts = tr
                    run_k = -1
                    mkind = _NONE
                    tm = inf
                    completed = True
                elif mkind == _STOP:
                    k = pre_k
                    bw = _bandwidth(bandwidth, req_plans, k)
                    db, steps, e, worked, save_s, sb = _close(
                        cols, k, now, limit, seg_start, t0, ex0, plan, _SAVE, bw
                    )
                    busy += db
                    layer_exec += steps
                    if e:
                        res_energy += e
                    futile = 0 if worked else futile_preemption(futile, policy, now)
                    busy += sb
                    mkind = _SAVE_DONE
                    save_t = now
                    tm = now + save_s
                elif mkind == _EXIT:  # it leaves at its early exit (``_h_boundary``)
                    db, steps, e, worked, save_s, sb = _close(
                        cols, run_k, now, limit, seg_start, t0, ex0, plan, _CLOSE, 0.0
                    )
                    busy += db
                    layer_exec += steps
                    if e:
                        res_energy += e
                    if by_list:
                        col_finish[run_k] = now
                    else:
                        arr_finish[rows[run_k]] = now
                    if token:
                        table.finished(run_k)
                    # (the livelock guard's count stays: ``_h_boundary`` does not reset it)
                    lv_done = True
                    n_finished += 1
                    if has_deps:
                        got_deps = dep_of.get(run_k)
                        if got_deps is not None:
                            for j in got_deps:
                                a_j = arr_t[j]
                                t_j = now + dep_tr[j]
                                heappush(rel, (t_j if t_j > a_j else a_j, rseq, j))
                                rseq += 1
                            tr = rel[0][0]
                            if tr < ts:
                                ts = tr
                    run_k = -1
                    mkind = _NONE
                    tm = inf
                    completed = True
                else:  # _SAVE_DONE: the victim waits again, keeping its progress
                    k = pre_k
                    pre_k = -1
                    if tl is not None:
                        save_segment(tl, rid[k], save_t, now, rname, units, f0)
                    if token:
                        table.enqueue(k, now)
                        nwait += 1
                    elif rr:
                        rot.push(k)
                        nwait += 1
                    elif not typed:
                        heappush(ready, _srpt_key(est, exe, k) if srpt else hkey[k])
                    elif srpt:
                        skey[k] = _srpt_rem(est, exe, k)
                        kpush(ready, skey, k)
                    else:
                        ipush(ready, hkey[k])
                    mkind = _NONE
                    tm = inf
                    preempted = True
            elif live and live[0] <= horizon and (tr > horizon or live[0] < tr):
                heappop(live)
                tick_pending = False
                if not nwait:
                    continue  # nobody waits: the tick is skipped
                ticked = True
            elif tr <= horizon:  # a released dependent arrives (``_h_release``)
                k = heappop(rel)[2]
                tr = rel[0][0] if rel else inf
                ts = stale[0] if stale else inf  # (``ts`` is the earlier of both)
                if tr < ts:
                    ts = tr
                got[k] = 1
                rel_in = True
                if token:
                    table.enqueue(k, now)
                    nwait += 1
                elif rr:
                    rot.arrive(k)  # (its model joins the rotation at its first arrival)
                    nwait += 1
                elif not typed:
                    heappush(ready, hkey[k])
                elif srpt:
                    kpush(ready, skey, k)
                else:
                    ipush(ready, hkey[k])
            else:
                break
            events += 1
            woke = True
        arrived = next_arr <= horizon
        if has_deps:  # the arrivals not held, in dispatch order
            if rel_in:
                arrived = True
                rel_in = False
            while next_arr <= horizon:
                k = ai
                got[k] = 1
                if token:
                    table.enqueue(k, now)
                    nwait += 1
                elif rr:
                    rot.arrive(k)  # (its model joins the rotation at its first arrival)
                    nwait += 1
                elif not typed:
                    heappush(ready, hkey[k])
                elif srpt:
                    kpush(ready, skey, k)
                else:
                    ipush(ready, hkey[k])
                events += 1
                ai += 1
                while hold[ai]:
                    ai += 1
                next_arr = arr_t[ai]
        elif token:
            while next_arr <= horizon:
                table.enqueue(ai, now)
                nwait += 1
                events += 1
                ai += 1
                next_arr = arr_t[ai]
        elif rr:
            while next_arr <= horizon:
                rot.push(ai)
                nwait += 1
                events += 1
                ai += 1
                next_arr = arr_t[ai]
        elif not typed:
            while next_arr <= horizon:
                heappush(ready, hkey[ai])
                events += 1
                ai += 1
                next_arr = arr_t[ai]
        elif srpt:
            while next_arr <= horizon:
                kpush(ready, skey, ai)
                events += 1
                ai += 1
                next_arr = arr_t[ai]
        else:
            while next_arr <= horizon:
                ipush(ready, hkey[ai])
                events += 1
                ai += 1
                next_arr = arr_t[ai]
        if not woke and not arrived:
            continue  # only stale events: the run's clock stays at last_t
        last_t = now
        if completed:
            if progress is not None and (
                n_finished // chunk != n_done_before // chunk or n_finished == n
            ):
                progress(n_finished)
                reported = n_finished
            n_done_before = n_finished
            decide = True
        else:
            decide = preempted or arrived or ticked
        if ticked and token:
            table.credit_tick(now, run_k)
        if decide and pre_k < 0 and (run_k < 0 or preemptive):
            if token:
                if run_k < 0:
                    cand = table.pick(now, -1, 0.0)
                elif now > t0:  # work done as of now: exe + (now - t0), at most the limit
                    r = exe[run_k] + (now - t0)
                    cand = table.pick(now, run_k, r if r < limit else limit)
                else:
                    cand = table.pick(now, run_k, exe[run_k])
            elif rr:  # ``NPRRBCore.select`` / ``PRRBCore.select``
                if run_k < 0:
                    cand = rot.pick(rr_ptr, -1)
                elif now - slice_start < quantum_q:
                    cand = -1  # the slice goes on
                else:  # the next other model's first job
                    m = model_of[run_k]
                    cand = rot.pick(m, m)
            elif not ready:
                cand = -1
            else:  # the declared order's best waiting job, against the running one
                top = ready[0]
                if not srpt:
                    itop: int = top
                    cand = itop % n
                else:
                    cand = top if typed else top[1]
                if run_k >= 0:
                    if cmp == 1:
                        if not rank[cand] > run_rank:
                            cand = -1
                    elif cmp == 2:
                        if not rank[cand] < run_rank:
                            cand = -1
                    elif cmp == 4:  # SJF: the running job's remaining estimate as of now
                        if now > t0:  # work done as of now: exe + (now - t0), at most the limit
                            r = exe[run_k] + (now - t0)
                            r = est[run_k] - (r if r < limit else limit)
                        else:
                            r = est[run_k] - exe[run_k]
                        top_r: float = skey[cand] if typed else top[0]
                        if not top_r < (0.0 if r < 0.0 else r):
                            cand = -1
                    elif not better(rank[cand], run_rank):
                        cand = -1
            if cand >= 0 and cand != run_k:
                start = run_k < 0
                if not start:  # a preemptive policy displaces the running job
                    k = run_k
                    # (its work done as of now: ``ex0`` (``exe[k]``: a running job's column
                    # changes only when its segment closes) + (now - t0), at most the limit)
                    if now > t0:
                        e_now = ex0 + (now - t0)
                        if e_now > limit:
                            e_now = limit
                    else:
                        e_now = ex0
                    mech = static_mech
                    if mech is None:  # Algorithm 3
                        mech = dynamic_choice(est[k], e_now, est[cand], exe[cand], dyn_preempt)
                    if mech is _CHECKPOINT:
                        # (``limit`` is the job's end, or its exit where that comes first: it
                        # then stops there, and leaves at once when it starts again)
                        # (its end ``iso``, read at its start)
                        stops, stop_w, t_stop = stop_point(
                            now,
                            t0,
                            ex0,
                            e_now,
                            limit,
                            iso,
                            1.0,
                            plan,
                            layer_point,
                            tol,
                        )
                        if stops:
                            if typed:  # the general loop keeps the old event
                                fpush(stale, tm)
                            else:
                                heappush(stale, tm)
                            if tm < ts:
                                ts = tm
                            limit = stop_w
                            run_k = -1
                            pre_k = k
                            if fuse:  # the stop carried out now, its save's end the event
                                db, steps, e, worked, save_s, sb = _close(
                                    cols,
                                    k,
                                    t_stop,
                                    limit,
                                    seg_start,
                                    t0,
                                    ex0,
                                    plan,
                                    _SAVE,
                                    bandwidth[k],
                                )
                                busy += db
                                layer_exec += steps
                                if e:
                                    res_energy += e
                                futile = 0 if worked else futile_preemption(futile, policy, now)
                                busy += sb
                                mkind = _SAVE_DONE
                                save_t = t_stop
                                tm = t_stop + save_s
                            else:
                                mkind = _STOP
                                tm = t_stop
                        # else: the next preemption point is the end: it just finishes
                    elif mech is _KILL:
                        db, steps, e, worked, save_s, sb = _close(
                            cols, k, now, e_now, seg_start, t0, ex0, plan, _WASTE, 0.0
                        )
                        busy += db
                        layer_exec += steps
                        if e:
                            res_energy += e
                        futile = futile_preemption(futile, policy, now)
                        run_k = -1
                        if typed:
                            fpush(stale, tm)
                        else:
                            heappush(stale, tm)
                        if tm < ts:
                            ts = tm
                        killed = k  # waits again once ``cand`` has left the queue
                        start = True
                    elif mech is not _DRAIN:  # pragma: no cover - a Mechanism
                        raise SimulationError(
                            f"policy {policy.name!r} returned mechanism {mech!r}; "
                            f"allowed: {', '.join(m.value for m in Mechanism)}"
                        )
                if start:  # give the array to ``cand`` (restoring its checkpoint first)
                    k = cand
                    if token:
                        table.dequeue(k, now)
                        if killed >= 0:
                            table.enqueue(killed, now)
                            killed = -1
                        else:
                            nwait -= 1
                    elif rr:  # the grant: the pointer moves, a new job's slice begins
                        rot.pop(k)
                        if killed >= 0:
                            rot.push(killed)
                            killed = -1
                        else:
                            nwait -= 1
                        rr_ptr = model_of[k]
                        if k != slice_k:
                            slice_k = k
                            slice_start = now
                    elif not typed:
                        heappop(ready)  # ``k`` is its top
                        if killed >= 0:  # waits again, with no work done
                            heappush(ready, hkey[killed])
                            killed = -1
                        run_rank = rank[k] if rank else None
                    elif srpt:
                        kpop(ready, skey)
                        if killed >= 0:  # its key with no work done (``exe`` is 0 again)
                            skey[killed] = _srpt_rem(est, exe, killed)
                            kpush(ready, skey, killed)
                            killed = -1
                    else:
                        ipop(ready)
                        if killed >= 0:
                            ipush(ready, hkey[killed])
                            killed = -1
                        run_rank = rank[k] if rank else None
                    if not npre[k]:  # never stopped before: its first start
                        if by_list:
                            col_first[k] = now
                        else:
                            arr_first[rows[k]] = now
                    _, plan, iso = req_plans[k]
                    plan_steps = plan.steps if iso > 0.0 else 0
                    plan_energy = plan.total_energy_j if iso > 0.0 else 0.0
                    rb = rbytes[k]
                    # (restore first; no call where there is nothing to restore, most starts;
                    # bytes to restore come from a stop, which read the job's bandwidth)
                    t0 = restore_end(now, rb, ckpt_cost, bandwidth[k]) if rb else now
                    seg_start = now
                    ex0 = exe[k]
                    if lv_on:  # the switch to the step it starts at, after the restore
                        if lv_k >= 0:  # the last start's job has released the units
                            lvs.release(
                                0,
                                lv_plan,
                                lv_done,
                                lv_iso if lv_done else exe[lv_k],
                                wasted[lv_k],
                                lv_x0,
                                lv_w0,
                                lv_before,
                            )
                        lvs.check(0, pname, rname)
                        lv_before = lvs.free_level[0]
                        lv_k = k
                        lv_plan = plan
                        lv_done = False
                        lv_x0 = ex0
                        lv_w0 = wasted[k]
                        lv_iso = iso
                        sw = lvs.start(0, plan, ex0, idle_w, units, cap)
                        if sw > 0.0:
                            e = lvs.energy
                            if e:
                                res_energy += e
                                if by_list:
                                    col_energy[k] = col_energy[k] + e
                                else:
                                    arr_energy[rows[k]] += e
                        t0 += sw
                    limit = iso
                    run_k = k
                    mkind = _COMPLETE
                    tm = t0 + (iso - ex0)
                    if has_exits:  # ``_arm``: its exit first, if still ahead
                        w = exit_w[k]
                        if w < iso and w >= ex0 - tol:
                            limit = w
                            mkind = _EXIT
                            tm = t0 + (w - ex0)
                            if tm < now:
                                tm = now
                            if lv_on:
                                lv_iso = w
        if rr:
            if ticks and nwait and not tick_pending:
                # the general loop's tick at ``_next_boundary(now, period)``
                kb = math.floor(now / period) + 1
                while kb * period <= horizon:
                    kb += 1
                live.append(kb * period)  # (empty: no tick pending)
                tick_pending = True
            if quiet_on:  # ``quiet_before``, as the general loop reads it after a wake
                quiet_slice = False
                if not nwait:
                    quiet = -inf
                elif pre_k >= 0:
                    quiet = inf  # no decision until the save is done (an event)
                elif run_k >= 0:
                    if run_k != slice_k:  # pragma: no cover - every start is a grant
                        quiet = -inf
                    elif not rot.others_wait(run_k):
                        quiet = inf
                    else:
                        quiet_slice = True  # the slice's threshold (above)
                else:
                    quiet = -inf
            continue
        if not token:
            continue  # rank orders have no period
        if not nwait:
            skip_k0 = None  # ticks while nobody waits change nothing
            continue
        # ``_Run._plan_tick``: the next tick at the first boundary that can change a decision.
        k0 = floor(now / period) + 1  # ``_next_boundary`` (``horizon`` is ``now + tol``)
        while k0 * period <= horizon:
            k0 += 1
        if pre_k >= 0:
            nq = quiet_max
        else:
            nq = table.quiet(now, k0 * period, run_k)
            if nq > quiet_max:
                nq = quiet_max
            elif nq < 0:
                nq = 0
        if run_k < 0 and pre_k < 0 and ai >= n and tm == inf and not stale:
            # Only ticks are left; a policy may idle for a while, not forever.
            by_tick = ticked and not (completed or preempted or arrived)  # reason "period"
            idle_periods = idle_periods + 1 if by_tick else 0
            if idle_periods > _MAX_IDLE_TICKS:  # pragma: no cover - Algorithm 2 always picks
                raise SimulationError(
                    f"policy {policy.name!r} left the machine idle for {_MAX_IDLE_TICKS} "
                    f"periods with {nwait} jobs waiting and nothing else to happen "
                    f"(t={now!r} s)"
                )
            nq = 0
        kq = k0 + nq
        if kq != sched_k or not tick_pending:
            for b in live:  # re-planned: the ticks of the old epoch only wake the loop
                if b < far_s:
                    if typed:
                        fpush(stale, b)
                    else:
                        heappush(stale, b)
                    if b < ts:
                        ts = b
                else:
                    far.append(b)
                    if b < far_min:
                        far_min = b
            live = [kq * period]
            sched_k = kq
            tick_pending = True
        skip_k0 = k0 if nq > 0 else None

    if has_deps:  # (``est_rec`` is set with dependents) those never released did not arrive
        if est_rec is not None:
            for k in range(n):
                if not got[k]:
                    est_rec[k] = math.nan
    elif ai < n and est_rec is not None:  # stopped by ``until``: the rest never arrived
        est_rec[ai:] = [math.nan] * (n - ai)
    first_b = doubles(col_first) if by_list else None
    finish_b = doubles(col_finish) if by_list else None
    energy_b = doubles(col_energy) if by_list else None
    write_records(
        run,
        run.arrival_rows,
        est_rec,
        npre,
        cbytes,
        csec,
        wasted,
        first=first_b,
        finish=finish_b,
        energy=energy_b,
        touched=touched,
        dispatched=ai,
    )
    run.clock.now = now
    run.events = events
    run.layer_exec = layer_exec
    run.n_finished = n_finished
    run.reported = reported
    res.busy = busy
    res.energy = res_energy
    return run._result(last_t)
