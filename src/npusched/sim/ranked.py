"""The engine's fast path for ranked temporal policies (FCFS, HPF, SJF): one loop, no per-job
objects.

A :class:`~npusched.policies.temporal.mechanism.RankedPolicy` decides from a rank fixed at
dispatch: the ready queue's best job is ``min(ready, key=(queue_key(request), dispatch order))``
and a preemptive variant displaces the running job when ``better(rank_key(best),
rank_key(running))``. The general loop (:meth:`npusched.sim.engine._Run.execute`) still builds a
:class:`~npusched.policies.contract.SchedulerView`, scans the ready list and calls ``select`` at
every wake; for these policies that is all bookkeeping. :func:`execute_ranked` runs the same
system with the ready queue as a ``heapq`` of ints ordered as ``(queue_key, order)``
(:func:`_heap_keys`) and per-request state in flat lists indexed by dispatch order, and gives
the same result as the general loop: the same wakes (events within
:data:`~npusched.sim.events.TIME_TOL_S` handled together, completion before stop before
save-done before arrival; a completion a preemption superseded still opens a wake at its time,
as the general loop's stale event does), the same handlers written out (segment closing with
energy, CHECKPOINT to the next preemption point with its save and restore, KILL, DRAIN,
Algorithm 3's dynamic choice through
:func:`~npusched.policies.contract.dynamic_choice`), the same float operations in
the same order, so every column, ``events``, ``busy_s``, energy and ``layer_executions`` are
equal (``tests/test_ranked_fast_path.py`` checks it on random workloads for every ranked
policy, mechanism, preemption point and checkpoint cost).

SJF declares its order instead (``ready_order = "remaining"``, :func:`_remaining_first`): its
ready entries are ``(remaining estimate, order)`` tuples made when a job enters the queue, and
the running job's remaining estimate is read at each decision.

When it applies (:func:`applies`): a temporal policy whose class keeps ``RankedPolicy.select``
and the no-op hooks, declares ``queue_key``, and has no period (or declares ``ready_order =
"remaining"`` and keeps the declaring class's ``select``); no power policy, no timeline
recording (power pieces are recorded), no ``until``, no dependent requests and no plans with
early exits. Anything else runs the general loop; ``Simulator(fast_path=False)`` forces it.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Sequence
from heapq import heapify, heappop, heappush
from itertools import repeat
from operator import add, attrgetter, itemgetter, mul
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from npusched.errors import SimulationError
from npusched.policies.contract import Mechanism, declared_order, dynamic_choice, is_no_op
from npusched.sim.events import TIME_TOL_S

if TYPE_CHECKING:
    from npusched.sim.engine import SimResult, _Run

__all__ = ["applies", "execute_ranked", "plain_run", "write_records"]

_CHECKPOINT = Mechanism.CHECKPOINT
_KILL = Mechanism.KILL
_DRAIN = Mechanism.DRAIN
# Machine-event kinds of the one job that holds (or is leaving) the resource.
_NONE, _COMPLETE, _STOP, _SAVE_DONE = 0, 1, 2, 3
_ARRIVAL_S = attrgetter("arrival_s")
_ISOLATED_S = itemgetter(2)  # of a request's ``(profile, plan, isolated seconds)``


def applies(run: _Run) -> bool:
    """Whether ``run`` may take :func:`execute_ranked` (see the module docstring): the policy
    declares ``"rank"`` (with a ``queue_key``) or ``"remaining"``
    (:func:`~npusched.policies.contract.declared_order`), has no period, leaves every hook a
    no-op, and the run is plain."""
    sim = run.sim
    policy = run.policy
    cls = type(policy)
    if not (getattr(sim, "fast_path", True) and run.temporal):
        return False
    order = declared_order(policy)
    if order == "rank":
        if not callable(getattr(cls, "queue_key", None)):
            return False
    elif order != "remaining":
        return False
    if getattr(policy, "period_s", None) is not None:
        return False
    for hook in ("on_dispatch", "on_complete", "on_period"):
        if not is_no_op(cls, hook):
            return False
    return plain_run(run)


def _remaining_first(policy: Any) -> bool:
    """Whether ``policy`` declares the shortest-estimated-remaining order (``ready_order =
    "remaining"``: SJF) and chooses as the class that declared it: the ready queue is then a
    heap of ``(estimated - executed, dispatch order)``, keyed when a job enters it (a waiting
    job's work does not change), and a preemptive one displaces the running job when the best
    waiting job's key is below the running job's remaining estimate now (ties keep the
    running job)."""
    return declared_order(policy) == "remaining"


def plain_run(run: _Run) -> bool:
    """What a fast path needs of ``run`` besides its policy: no power policy, no timeline
    recording, no ``until``, no dependent requests and no plans with early exits (power
    recording is kept by the fast paths)."""
    sim = run.sim
    if sim.power is not None or run.timeline is not None:
        return False
    if run.until != math.inf or run.dependents:
        return False
    return not any(entry[1].exits for entry in run.shape_plans)


def _heap_keys(qkey: list[Any]) -> list[int]:
    """Each request's ready-queue entry as one int, ordered as ``(queue_key, dispatch order)``.

    An entry is ``r * n + k`` for request ``k`` of ``n`` (so ``entry % n`` is ``k``), ``r`` its
    queue key where every key is an int (FCFS, HPF; computed in NumPy when the entries fit in
    int64), else the key's dense rank among the distinct keys (keys are totally ordered, as a
    heap of them already needs). Ints compare faster than tuples and cost no tuple per push;
    the heap holds the same order, so it makes the same comparisons with the same outcomes and
    pops the same jobs."""
    n = len(qkey)
    if not n:
        return []
    a = np.array(qkey)
    if a.dtype.kind in "ib":  # ints within int64 (bools are 0 / 1, ordered alike)
        a = a.astype(np.int64)
        big = max(abs(int(a.min())), abs(int(a.max())))
        if (big + 1) * n < 2**63:
            return cast(list[int], (a * n + np.arange(n, dtype=np.int64)).tolist())
    if set(map(type, qkey)) <= {int}:  # larger ints
        return list(map(add, map(mul, qkey, repeat(n)), range(n)))
    by_key = sorted(range(n), key=qkey.__getitem__)
    dense = [0] * n
    r = 0
    for j in range(1, n):
        if qkey[by_key[j]] != qkey[by_key[j - 1]]:
            r += 1
        dense[by_key[j]] = r
    return [q * n + k for k, q in enumerate(dense)]


def execute_ranked(run: _Run) -> SimResult:
    """Run ``run`` (for which :func:`applies` holds) to the end; the general loop's result."""
    sim = run.sim
    policy = run.policy
    policy.reset()
    preemptive = bool(policy.preemptive)
    # SJF (``ready_order = "remaining"``): ready entries are ``(remaining estimate, k)`` tuples
    # made when a job enters the queue; the others' are ints (``_heap_keys``).
    srpt = _remaining_first(policy)
    mode: str
    static_mech: Mechanism | None
    if srpt:
        mode = str(getattr(policy, "mechanism", "checkpoint"))
        static_mech = {"checkpoint": _CHECKPOINT, "kill": _KILL}.get(mode)
        better: Callable[[Any, Any], bool] = operator.lt
        cmp = 4 if preemptive else 0
    else:
        mode = policy.mode_
        static_mech = policy.mechanism_
        queue_key: Callable[[Any], Any] = policy.queue_key
        rank_key: Callable[[Any], Any] = policy.rank_key
        better = policy.better
        # ``better`` as a comparison written out where it is ``operator.gt`` (HPF) or
        # ``operator.lt`` (FCFS): ``a > b`` is exactly ``operator.gt(a, b)``, without the call.
        cmp = (
            0
            if not preemptive
            else 1
            if better is operator.gt
            else 2
            if better is operator.lt
            else 3
        )
    from npusched.sim.engine import PowerPiece

    dyn_preempt = _KILL if mode == "dynamic-kill" else _CHECKPOINT  # Algorithm 3's preemption

    arrivals = run.arrivals
    held = run.held
    n = len(arrivals)
    req_plans = run.req_plans
    estimator = sim.estimator
    res = run.res[0]
    # The power pieces (``record_power``): the general loop's ``_end_segment`` appends one per
    # closed segment that computed (rate 1, no power policy on this path).
    pw = run.power
    rname = res.name
    units = res.capacity
    cap = res.capacity
    ckpt_cost = run.ckpt_cost
    layer_point = run.layer_point
    tol = TIME_TOL_S
    inf = math.inf
    clock = run.clock
    progress = run.progress
    chunk = max(1, -(-n // 100))

    # Per request, by dispatch order: work done (seconds of its plan), bytes to restore,
    # preemptions, checkpoint bytes and seconds, work lost to KILL (lists: written for the
    # preempted few), and first start, finish and energy (written for every request: doubles
    # in memory, through a ``memoryview``, which stores faster than an ``array`` and, unlike a
    # list, keeps no float object alive to be gathered at the end).
    exe = [0.0] * n
    rbytes = [0] * n
    npre = [0] * n
    cbytes = [0] * n
    csec = [0.0] * n
    wasted = [0.0] * n
    nan_bytes = np.full(n, math.nan).tobytes()  # every request starts and finishes (no ``until``)
    first = memoryview(bytearray(nan_bytes)).cast("d")
    finish = memoryview(bytearray(nan_bytes)).cast("d")
    energy = memoryview(bytearray(8 * n)).cast("d")
    # Requests ever preempted (KILL or CHECKPOINT), in order of their first preemption: the only
    # ones whose preemption, checkpoint and waste records are not zero.
    touched: list[int] = []
    # The ready queue: a heap of ``hkey[k]`` (``(queue_key, k)`` as one int; ``entry % n``
    # is ``k``, see ``_heap_keys``).
    ready: list[Any] = []  # ints, or (remaining, k) tuples for SJF

    # The job holding the resource (``run_k``) or saving its context (``pre_k``), and its
    # segment: started at ``seg_start``, computing from ``t0`` (after a restore) with ``ex0``
    # seconds of work done; ``limit`` is where it stops (its plan's end, or a CHECKPOINT's
    # preemption point). One machine event is pending: ``mkind`` at ``tm``.
    run_k = -1
    pre_k = -1
    seg_start = 0.0
    t0 = 0.0
    ex0 = 0.0
    limit = 0.0
    plan: Any = None
    run_rank: Any = None
    mkind = _NONE
    tm = inf
    busy = 0.0
    res_energy = 0.0
    layer_exec = 0
    n_finished = 0
    reported = run.reported

    ai = 0
    while ai < n and held[ai]:  # pragma: no cover - no dependents on this path
        ai += 1
    # Arrival times with a sentinel, queue keys and estimates, in dispatch order (the
    # estimator is called once per request in dispatch order, as the general loop does).
    arr_t = list(map(_ARRIVAL_S, arrivals))
    arr_t.append(inf)
    next_arr = arr_t[ai]
    # Estimates (Algorithm 3 and SJF read them; without an estimator they are the isolated
    # latencies, which ``write_records`` takes from the run's column).
    est_of: list[float] | None = None
    if estimator is None:
        if static_mech is None or srpt:
            est_of = list(map(_ISOLATED_S, req_plans))
    else:
        est_of = [float(estimator(r, e[0])) for r, e in zip(arrivals, req_plans, strict=True)]

    def srpt_key(k: int) -> tuple[float, int]:
        """SJF's ready entry of job ``k`` (``shortest_remaining``'s key, float operations and
        ties: remaining estimate clamped at 0, then dispatch order = arrival, id)."""
        r = est_of[k] - exe[k]  # type: ignore[index]
        return (0.0 if r < 0.0 else r, k)

    hkey: list[Any]
    if srpt:
        # SJF's key of a job entering the queue with no work done: max(estimate - 0.0, 0.0)
        # (``shortest_remaining``'s float operations); re-entries are keyed by ``srpt_key``.
        assert est_of is not None
        hkey = [srpt_key(k) for k in range(n)]
        rank: list[Any] = hkey  # unused: the running job's key is its remaining estimate now
    else:
        qkey = list(map(queue_key, arrivals))
        rank = list(map(rank_key, arrivals)) if preemptive else qkey
        hkey = _heap_keys(qkey)
        del qkey
    now = 0.0
    # Events are counted at the end: one per arrival and completion, two per CHECKPOINT stop
    # (the stop and its save-done; every stop is saved before the run ends).
    stops = 0
    last_t = 0.0
    n_done_before = 0

    # Times of completion events a preemption superseded: the general loop pops them (they
    # change nothing but open a wake, whose clock is theirs if a real event falls within
    # TIME_TOL_S of it), so they are kept here too; ``ts`` is the earliest (inf if none).
    stale: list[float] = []
    ts = inf
    one_unit = cap == 1
    while True:
        t = tm if tm < next_arr else next_arr
        if ts < t:
            # Superseded completions come first: each opens a wake with nothing to handle (the
            # later ones within its TIME_TOL_S go with it) until one is close enough to the
            # next real event ``t`` to share its wake.
            while True:
                if ts > now:
                    now = ts
                horizon = now + tol
                while stale and stale[0] <= horizon:
                    heappop(stale)
                ts = stale[0] if stale else inf
                if t <= horizon or ts >= t:
                    break
            if t > horizon:  # ``t`` opens its own wake
                if t == inf:
                    break
                if t > now:
                    now = t
                horizon = now + tol
                if ts <= horizon:
                    while stale and stale[0] <= horizon:
                        heappop(stale)
                    ts = stale[0] if stale else inf
        else:
            if t == inf:
                break
            if t > now:
                now = t
            horizon = now + tol
            if ts <= horizon:
                while stale and stale[0] <= horizon:
                    heappop(stale)
                ts = stale[0] if stale else inf
        if tm > horizon:
            # Arrivals only (the common wake, written out).
            while next_arr <= horizon:
                heappush(ready, hkey[ai])
                ai += 1
                next_arr = arr_t[ai]
            last_t = now
            if pre_k >= 0:
                continue  # a preemption in flight: the policy decides when it is saved
        else:
            completed = False
            preempted = False
            while tm <= horizon:
                if mkind == _SAVE_DONE:  # the victim waits again, keeping its progress
                    heappush(ready, srpt_key(pre_k) if srpt else hkey[pre_k])
                    pre_k = -1
                    mkind = _NONE
                    tm = inf
                    preempted = True
                    continue
                if mkind == _COMPLETE and ex0 <= 0.0 and t0 == seg_start:
                    # A run from the start, uninterrupted: the whole plan (the segment's
                    # arithmetic below, with energy_between / steps_between of the whole plan; a
                    # finished job's progress and restore bytes are never read again).
                    busy += now - seg_start if one_unit else (now - seg_start) * units / cap
                    if limit > 0.0:
                        layer_exec += plan.steps
                        e = plan.total_energy_j
                        if e:
                            res_energy += e
                            energy[run_k] += e
                        if pw is not None and now > t0:
                            pw.append(PowerPiece(t0, now, plan, ex0, limit, 1.0, rname))
                else:
                    # The segment of the job completing or stopping at ``limit`` ends now: the
                    # general loop's ``_end_segment(job, now, limit)`` (one unit, rate 1).
                    k = run_k if mkind == _COMPLETE else pre_k
                    exec_end = limit
                    if now < t0:  # stopped while restoring: no new work, the checkpoint is
                        if rbytes[k]:  # still in memory
                            csec[k] += now - seg_start
                        exec_end = exe[k]
                    else:
                        if t0 > seg_start and rbytes[k]:
                            csec[k] += t0 - seg_start
                        rbytes[k] = 0
                    busy += (now - seg_start) * units / cap if cap != 1 else now - seg_start
                    if exec_end > ex0:
                        # ``steps_between`` and ``energy_between`` of it, from one bisection.
                        steps, e = plan.work_between(ex0, exec_end)
                        layer_exec += steps
                        if e:
                            res_energy += e
                            energy[k] += e
                        if pw is not None and now > t0:
                            pw.append(PowerPiece(t0, now, plan, ex0, exec_end, 1.0, rname))
                    exe[k] = exec_end
                if mkind == _COMPLETE:
                    finish[run_k] = now
                    n_finished += 1
                    run_k = -1
                    mkind = _NONE
                    tm = inf
                    completed = True
                else:  # _STOP
                    k = pre_k
                    if not npre[k]:
                        touched.append(k)
                    npre[k] += 1
                    save_s = 0.0
                    if now >= t0:  # restored: the checkpoint is taken where it stopped
                        nbytes = plan.checkpoint_bytes_at(exe[k])
                        cbytes[k] += nbytes
                        rbytes[k] = nbytes
                        if ckpt_cost:
                            save_s = nbytes / req_plans[k][0].memory_bandwidth_bps
                    csec[k] += save_s
                    busy += save_s * units / cap
                    mkind = _SAVE_DONE
                    tm = now + save_s
                    stops += 1
            arrived = next_arr <= horizon
            while next_arr <= horizon:
                heappush(ready, hkey[ai])
                ai += 1
                next_arr = arr_t[ai]
            last_t = now
            if completed:
                if progress is not None:
                    if n_finished // chunk != n_done_before // chunk or n_finished == n:
                        progress(n_finished)
                        reported = n_finished
                    n_done_before = n_finished
            elif not (preempted or arrived):
                continue  # only a stop: the preemption is in flight
            if pre_k >= 0 or not ready:
                continue
        if run_k >= 0:
            best = ready[0][1] if srpt else ready[0] % n
            if cmp == 1:
                if not rank[best] > run_rank:
                    continue  # the running job keeps the resource
            elif cmp == 2:
                if not rank[best] < run_rank:
                    continue
            elif cmp == 4:  # SJF: the running job's remaining estimate as of now
                k = run_k
                if now > t0:
                    e_now = exe[k] + (now - t0)
                    if e_now > limit:
                        e_now = limit
                else:
                    e_now = exe[k]
                r = est_of[k] - e_now  # type: ignore[index]
                if r < 0.0:
                    r = 0.0
                if not ready[0][0] < r:
                    continue
            elif not cmp or not better(rank[best], run_rank):
                continue
            # A preemptive policy displaces it.
            k = run_k
            if now > t0:  # work done as of now (``Job.executed_s``; rate 1, exactly as the
                e_now = exe[k] + (now - t0)  # general loop's ``exec + rate * dt``)
                if e_now > limit:
                    e_now = limit
            else:
                e_now = exe[k]
            mech = static_mech
            if mech is None:
                assert est_of is not None
                mech = dynamic_choice(est_of[k], e_now, est_of[best], exe[best], dyn_preempt)
            if mech is _CHECKPOINT:
                if now < t0:  # still restoring: stop at once, where it already stands
                    stop = exe[k]
                    t_stop = now
                else:
                    stop = plan.next_preemption_point(e_now, layer=layer_point, tol_s=tol)
                    if stop >= limit:  # the next preemption point is the end: it just finishes
                        continue
                    t_stop = t0 + (stop - exe[k])  # rate 1, as the general loop's ``/ rate``
                    if t_stop < now:
                        t_stop = now
                heappush(stale, tm)  # the general loop keeps the old completion event
                if tm < ts:
                    ts = tm
                limit = stop
                run_k = -1
                pre_k = k
                mkind = _STOP
                tm = t_stop
                continue
            if mech is _KILL:
                # Its segment ends now at ``e_now`` (the completion branch's arithmetic).
                exec_end = e_now
                if now < t0:
                    if rbytes[k]:
                        csec[k] += now - seg_start
                    exec_end = exe[k]
                else:
                    if t0 > seg_start and rbytes[k]:
                        csec[k] += t0 - seg_start
                    rbytes[k] = 0
                busy += (now - seg_start) * units / cap if cap != 1 else now - seg_start
                if exec_end > ex0:
                    steps, e = plan.work_between(ex0, exec_end)
                    layer_exec += steps
                    if e:
                        res_energy += e
                        energy[k] += e
                    if pw is not None and now > t0:
                        pw.append(PowerPiece(t0, now, plan, ex0, exec_end, 1.0, rname))
                exe[k] = exec_end
                wasted[k] += exe[k]
                exe[k] = 0.0
                rbytes[k] = 0
                if not npre[k]:
                    touched.append(k)
                npre[k] += 1
                run_k = -1
                heappush(stale, tm)  # the general loop keeps the old completion event
                if tm < ts:
                    ts = tm
                heappush(ready, hkey[k])
            elif mech is _DRAIN:
                continue
            else:  # pragma: no cover - a Mechanism
                raise SimulationError(
                    f"policy {policy.name!r} returned mechanism {mech!r}; "
                    f"allowed: {', '.join(m.value for m in Mechanism)}"
                )
            # Start the best waiting job (restoring its checkpoint first, if any).
            if (ready[0][1] if srpt else ready[0] % n) == best:
                heappop(ready)
            else:  # pragma: no cover - a victim ranked above the job that displaced it
                ready.remove(next(e for e in ready if (e[1] if srpt else e % n) == best))
                heapify(ready)
        else:
            # Start the best waiting job (restoring its checkpoint first, if any).
            best = heappop(ready)[1] if srpt else heappop(ready) % n
        k = best
        if not npre[k]:  # never stopped before: its first start
            first[k] = now
        prof, plan, iso = req_plans[k]
        rb = rbytes[k]
        t0 = now + rb / prof.memory_bandwidth_bps if rb and ckpt_cost else now
        seg_start = now
        ex0 = exe[k]
        limit = iso
        run_k = k
        run_rank = rank[k]
        mkind = _COMPLETE
        tm = t0 + (iso - ex0)

    write_records(
        run,
        est_of,
        npre,
        cbytes,
        csec,
        wasted,
        first=first,
        finish=finish,
        energy=energy,
        touched=touched,
    )
    clock.now = now
    run.events = ai + n_finished + 2 * stops
    run.layer_exec = layer_exec
    run.n_finished = n_finished
    run.reported = reported
    res.busy = busy
    res.energy = res_energy
    return run._result(last_t)


def write_records(
    run: _Run,
    est: list[float] | None,
    npre: list[int],
    cbytes: list[int],
    csec: list[float],
    wasted: list[float],
    *,
    first: Sequence[float] | None = None,
    finish: Sequence[float] | None = None,
    energy: Sequence[float] | None = None,
    touched: list[int] | None = None,
) -> None:
    """Store a fast path's per-request lists (by dispatch order) as ``run``'s result columns
    (by result row; every request finished: ``until`` is not set).

    ``est`` None: the estimates are the isolated latencies (no estimator; plans without exits),
    copied from ``run.col_iso``. ``first`` / ``finish`` / ``energy`` replace the run's columns
    when given (a path that wrote those by row passes None). ``touched``: the only requests
    whose ``npre`` / ``cbytes`` / ``csec`` / ``wasted`` may be nonzero (the rest are written as
    the zeros they are). Lists become arrays through ``numpy.fromiter``, a ``memoryview`` of
    doubles without a copy (the same values)."""
    by_row = np.asarray(run.arrival_rows, dtype=np.int64)
    n = len(by_row)
    f8, i8 = np.float64, np.int64
    counts: list[tuple[str, Sequence[Any], Any]] = [
        ("col_preempt", npre, i8),
        ("col_cbytes", cbytes, i8),
        ("col_cs", csec, f8),
        ("col_wasted", wasted, f8),
    ]
    dense: list[tuple[str, Sequence[Any] | None, Any]] = [
        ("col_first", first, f8),
        ("col_finish", finish, f8),
        ("col_energy", energy, f8),
    ]
    if touched is None:
        dense.extend(counts)
    else:
        rows_t = by_row[np.asarray(touched, dtype=np.int64)]
        for name, per_k, dtype in counts:
            sp: Any = np.zeros(n, dtype=dtype)
            sp[rows_t] = np.fromiter(
                map(per_k.__getitem__, touched), dtype=dtype, count=len(rows_t)
            )
            setattr(run, name, sp)
    if est is None:
        run.col_est = cast(Any, run.col_iso.copy())  # no estimator, no exits: the isolated latency
    else:
        dense.append(("col_est", est, f8))
    for name, vals, dtype in dense:
        if vals is not None:
            col: Any = np.empty(n, dtype=dtype)
            if isinstance(vals, memoryview):
                col[by_row] = np.frombuffer(vals, dtype=dtype)
            else:
                col[by_row] = np.fromiter(vals, dtype=dtype, count=n)
            setattr(run, name, col)
    col_res = np.empty(n, dtype=object)
    col_res[:] = run.res[0].name
    run.col_res = col_res
