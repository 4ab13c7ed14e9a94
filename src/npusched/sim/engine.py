"""The discrete-event engine: one accelerator, a temporal policy, PREMA's preemption mechanisms.

Jobs progress at rates; events only at decisions
------------------------------------------------
A job holding the array is a position in its :class:`~npusched.hardware.profile.ExecPlan` plus a
``rate`` (work-seconds per second; 1.0 for the whole array). The engine never fires an event per
layer or tile: it schedules only *decision points*

* ``arrival`` - a request is dispatched;
* ``completion`` - the running job reaches the end of its plan;
* ``period`` - the policy's scheduling period expired (ticks at ``k * period_s``, only while the
  ready queue is non-empty);
* ``stop`` - a job being CHECKPOINTed reached its preemption point (the next tile or layer
  boundary, found by bisecting the plan's prefix sums);
* ``preempted`` - its checkpoint save finished and the array is free,

and finds where a job stands at any time as ``executed = executed_at_t0 + rate * (now - t0)``.

At each wake the engine pops every event at the current instant (times within
:data:`~npusched.sim.events.TIME_TOL_S` of each other), handles them in the order completion,
stop, save-done, arrival, period (ties by insertion order), calls the policy hooks
``on_complete`` / ``on_dispatch`` in that order, ``on_period`` if a tick fired, and then
``select`` once. While a CHECKPOINT preemption is in flight (the victim is still running to its
preemption point or saving), hooks are still called but ``select`` is not: the policy decides
again, with reason ``"preempted"``, when the save is done.

Mechanisms (PREMA Sec. IV-C), applied only by a preemptive policy when its decision names a ready
job other than the running one:

* ``DRAIN``: nothing happens; the candidate waits and the policy re-decides at the next wake.
* ``KILL``: the running job stops now; its executed work is lost (``wasted_s``) and it returns to
  the ready queue at position 0 of its plan; the candidate starts now.
* ``CHECKPOINT``: the running job continues to its next preemption point, then saves
  ``plan.checkpoint_bytes_at(position)`` bytes at ``profile.memory_bandwidth_bps`` (the array is
  busy) and returns to the ready queue keeping its progress; it pays the same time again to restore
  when it next starts. If the next preemption point is the end of the job, it simply completes.
  A CHECKPOINT requested while the victim is still restoring its own context stops it at once
  (its context is still in memory: no new save; the restore time spent is charged and it restores
  again on its next start). Positions are compared with a tolerance of
  :data:`~npusched.sim.events.TIME_TOL_S` seconds of work: a job that reached a step end up to
  rounding is at that step end (it stops there at once and saves the finished step's outputs),
  and a tile boundary a few ulps short of a step end is that step end (in the last tile, the
  job completes).
* A preempted job loses nothing but time: ``executed_s`` (the policy's ``Time_executed``) keeps
  the checkpointed progress and ``waited_s`` grows while it waits again; under KILL
  ``executed_s`` drops to 0 and ``wasted_s`` records the lost work.

The view a policy gets holds the engine's live ready list (dispatch order): read it during the
call, do not keep or mutate it. ``executed_s`` / ``waited_s`` of the jobs in it are computed
lazily from the shared clock, so they are current as of ``view.now`` at no cost to the loop.

One resource: the whole accelerator runs one job at a time. The fields that later resources
(partitioned arrays, several accelerators, DVFS) need - a per-job ``rate``, segment bookkeeping
that ends a job's execution at any time - are already in the arithmetic.

Times are float64 seconds. Every event is scheduled at or after the clock (a preemption point
reached up to rounding is taken as now), so the clock never moves backwards.
"""

from __future__ import annotations

import math
from bisect import insort
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from dataclasses import fields as dataclass_fields
from heapq import heappop, heappush
from operator import attrgetter
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from npusched.errors import ConfigError, SimulationError, UnknownNameError
from npusched.hardware.profile import ExecPlan, Profile
from npusched.sim.events import (
    COMPLETE,
    PERIOD,
    SAVE_DONE,
    STOP,
    TIME_TOL_S,
    EventQueue,
)
from npusched.sim.job import DONE, PREEMPTING, RUNNING, WAITING, Clock, Job
from npusched.sim.types import Mechanism, SchedulerView
from npusched.workloads.request import Request

if TYPE_CHECKING:
    import pandas as pd

    from npusched.policies.base import TemporalPolicy

__all__ = ["PREEMPTION_POINTS", "TIME_TOL_S", "SimResult", "Simulator"]

PREEMPTION_POINTS = ("tile", "layer")

_ORDER = attrgetter("order")
_MAX_IDLE_TICKS = 10_000
_KILL = Mechanism.KILL
_CHECKPOINT = Mechanism.CHECKPOINT
_DRAIN = Mechanism.DRAIN

# A SchedulerView is built at every decision; filling a plain instance's __dict__ is 2-3x faster
# than the frozen dataclass __init__. Only valid while the view has exactly these fields and a
# __dict__; otherwise the engine uses the normal constructor.
_VIEW_FIELDS = ("now", "ready", "running", "reason", "profiles")
_FAST_VIEW = (
    tuple(f.name for f in dataclass_fields(SchedulerView)) == _VIEW_FIELDS
    and "__slots__" not in SchedulerView.__dict__
)

_Plan = tuple[Profile, ExecPlan, float]

Segment = tuple[int, float, float, str]
"""A timeline entry ``(job_id, start_s, end_s, kind)``, kind ``run`` / ``restore`` / ``save``."""


@dataclass
class SimResult:
    """What a simulation produced.

    Attributes:
        columns: one entry per request, rows ordered by request id: ``id``, ``arrival_s``,
            ``first_start_s``, ``finish_s`` (nan if unfinished), ``isolated_s``, ``estimated_s``,
            ``latency_s`` (finish - arrival), ``waiting_s`` (latency - isolated - checkpoint_s,
            so it includes re-executing work lost to KILL), ``preemptions``,
            ``checkpoint_bytes`` (bytes saved), ``checkpoint_s`` (save + restore seconds charged
            to the request), ``wasted_s`` (work lost to KILL), ``priority``, ``batch``,
            ``slo_s`` (nan if none), ``network`` (object array of str), ``seq_in``, ``seq_out``
            (-1 if none). Times in seconds.
        makespan_s: last finish minus first arrival (seconds; 0 if nothing finished).
        busy_s: seconds the accelerator was busy (executing, incl. work later lost to KILL, and
            saving/restoring checkpoints).
        events: decision events handled (arrivals, completions, stops, saves, period ticks).
        layer_executions: executed plan steps summed over requests, counting re-executions (a
            step split by a preemption counts once per piece).
        timeline: ``(job_id, start_s, end_s, kind)`` segments if the simulator recorded them.
        policy: the policy's name.
        end_s: the clock when the run stopped (seconds).
    """

    columns: dict[str, npt.NDArray[Any]]
    makespan_s: float
    busy_s: float
    events: int
    layer_executions: int
    timeline: list[Segment] | None = None
    policy: str = ""
    end_s: float = 0.0

    def __len__(self) -> int:
        return len(self.columns["id"])

    def to_frame(self) -> pd.DataFrame:
        """The per-request columns as a :class:`pandas.DataFrame` (one row per request)."""
        import pandas as pd

        return pd.DataFrame(self.columns)

    @property
    def n_finished(self) -> int:
        return int(np.count_nonzero(~np.isnan(self.columns["finish_s"])))


class Simulator:
    """Simulates requests on one accelerator under a temporal policy.

    Args:
        profiles: compiled profiles by ``Request.network``.
        policy: a :class:`~npusched.policies.base.TemporalPolicy`; reset before every run.
        preemption_point: where CHECKPOINT stops the victim: ``"tile"`` (end of the current
            tile, PREMA's GEMM_OP granularity) or ``"layer"`` (end of the current plan step).
        checkpoint_cost: model checkpoint save and restore time as bytes / memory bandwidth
            (``False``: preemption is free, bytes are still recorded).
        estimator: ``job.estimated_s`` in seconds from ``(request, profile)``; default the true
            isolated latency (an oracle predictor).
        record_timeline: keep ``(job_id, start_s, end_s, kind)`` segments in the result.

    The simulator holds no run state: ``run`` may be called repeatedly (each run resets the
    policy) and gives identical results for identical inputs.
    """

    def __init__(
        self,
        profiles: Mapping[str, Profile],
        policy: TemporalPolicy,
        *,
        preemption_point: str = "tile",
        checkpoint_cost: bool = True,
        estimator: Callable[[Request, Profile], float] | None = None,
        record_timeline: bool = False,
    ) -> None:
        if not callable(getattr(policy, "select", None)):
            raise ConfigError(
                f"policy must be a TemporalPolicy object (e.g. POLICIES.create('NP-FCFS')), "
                f"got {type(policy).__name__}"
            )
        if preemption_point not in PREEMPTION_POINTS:
            raise ConfigError(
                f"preemption_point={preemption_point!r}; allowed: {', '.join(PREEMPTION_POINTS)}"
            )
        self.profiles = profiles
        self.policy = policy
        self.preemption_point = preemption_point
        self.checkpoint_cost = bool(checkpoint_cost)
        self.estimator = estimator
        self.record_timeline = bool(record_timeline)

    def run(
        self,
        requests: Sequence[Request],
        *,
        until: float | None = None,
        progress: Callable[[int], None] | None = None,
    ) -> SimResult:
        """Simulate ``requests`` (any order; dispatched by ``(arrival_s, id)``).

        Args:
            requests: the workload; ids must be unique.
            until: stop after the last event at or before this time (seconds); unfinished
                requests get ``finish_s = nan`` and partial records.
            progress: called with the number of finished requests about every 1% and once at
                the end (never twice with the same count).

        Returns:
            A :class:`SimResult`.

        Raises:
            SimulationError: an invalid policy decision, a policy that leaves the accelerator
                idle with jobs waiting forever, duplicate request ids, or an arrival time that
                is not finite and >= 0.
            UnknownNameError: a request's network has no profile.
        """
        if until is not None and not until >= 0.0:
            raise ConfigError(f"until must be a time >= 0 seconds, got {until}")
        return _Run(self, requests, until, progress).execute()


def _clamp_tiny_negative(x: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """``x`` with values in ``(-TIME_TOL_S, 0)`` set to 0 (NaN stays NaN)."""
    return np.where((x < 0.0) & (x > -TIME_TOL_S), 0.0, x)


class _Run:
    """State of one simulation run (the :class:`Simulator` itself stays stateless).

    The hot paths (arrival, start, completion) are written for speed: plain attributes, local
    variables, no per-step work; the rarer preemption paths are separate methods.
    """

    def __init__(
        self,
        sim: Simulator,
        requests: Sequence[Request],
        until: float | None,
        progress: Callable[[int], None] | None,
    ) -> None:
        self.sim = sim
        self.policy = sim.policy
        self.until = math.inf if until is None else float(until)
        self.progress = progress
        self.ckpt_cost = sim.checkpoint_cost
        self.layer_point = sim.preemption_point == "layer"
        self.clock = Clock()
        self.queue = EventQueue()
        self.ready: list[Job] = []
        self.running: Job | None = None
        self.preempting: Job | None = None
        self.busy = 0.0
        self.layer_exec = 0
        self.events = 0
        self.n_finished = 0
        self.reported = 0  # the finished count last passed to ``progress``
        self.timeline: list[Segment] | None = [] if sim.record_timeline else None
        self.tick_pending = False
        self._prepare(requests)

    # --- set-up -----------------------------------------------------------------------------
    def _prepare(self, requests: Sequence[Request]) -> None:
        profiles = self.sim.profiles
        n = len(requests)
        ids = np.fromiter((r.id for r in requests), dtype=np.int64, count=n)
        by_id = np.argsort(ids, kind="stable")
        sorted_ids = ids[by_id]
        dup_mask = sorted_ids[1:] == sorted_ids[:-1]
        if dup_mask.any():
            dup = int(sorted_ids[1:][dup_mask][0])
            raise SimulationError(f"request ids must be unique; id {dup} appears twice")
        row_of = np.empty(n, dtype=np.int64)
        row_of[by_id] = np.arange(n)
        self.by_id = [requests[i] for i in by_id.tolist()]
        arrivals = np.fromiter((r.arrival_s for r in requests), dtype=np.float64, count=n)
        bad_mask = ~np.isfinite(arrivals) | (arrivals < 0.0)
        if bad_mask.any():
            bad = int(np.flatnonzero(bad_mask)[0])
            raise SimulationError(
                f"request {requests[bad].id}: arrival_s={arrivals[bad]!r}; must be finite and >= 0"
            )
        # Dispatch order: by arrival time, ties by id.
        order = np.lexsort((ids, arrivals)).tolist()
        self.arrivals = [requests[i] for i in order]
        self.arrival_rows: list[int] = row_of[order].tolist()

        # (profile, plan, isolated seconds) per distinct request shape, and per request.
        plans: dict[tuple[str, int, int | None, int | None], _Plan] = {}
        iso = [0.0] * n
        req_plans: list[_Plan] = []
        append = req_plans.append
        rows = self.arrival_rows
        for k, r in enumerate(self.arrivals):
            key = (r.network, r.batch, r.seq_in, r.seq_out)
            entry = plans.get(key)
            if entry is None:
                prof = profiles.get(r.network)
                if prof is None:
                    raise UnknownNameError("profile (request network)", r.network, profiles)
                plan = prof.plan(r.batch, r.seq_in, r.seq_out)
                entry = plans[key] = (prof, plan, plan.total_s)
            append(entry)
            iso[rows[k]] = entry[2]
        self.req_plans = req_plans
        nan = math.nan
        self.col_iso = iso
        self.col_est = [nan] * n
        self.col_first = [nan] * n
        self.col_finish = [nan] * n
        self.col_preempt = [0] * n
        self.col_cbytes = [0] * n
        self.col_cs = [0.0] * n
        self.col_wasted = [0.0] * n

    # --- job mechanics ------------------------------------------------------------------------
    def _start(self, job: Job) -> None:
        """Give the array to ``job`` now (restoring its checkpoint first, if any)."""
        now = self.clock.now
        self.ready.remove(job)
        if job.first_start_s != job.first_start_s:  # nan: first start
            job.first_start_s = now
        job._waited += now - job._wait_since
        rb = job._restore_bytes
        t0 = now
        if rb and self.ckpt_cost:
            t0 = now + rb / job.profile.memory_bandwidth_bps
        job._seg_start = now
        job._t0 = t0
        ex = job._exec
        job._seg_exec0 = ex
        iso = job.isolated_s
        job._limit = iso
        job.state = RUNNING
        epoch = job._epoch = job._epoch + 1
        self.running = job
        q = self.queue
        heappush(q.heap, (t0 + (iso - ex) / job.rate, COMPLETE, q.next_seq(), job, epoch))

    def _charge_restore(self, job: Job, ss: float, t0: float) -> None:
        """``job``'s segment began by restoring its checkpoint from ``ss`` to ``t0`` (seconds),
        all of it done: charge the time and forget the saved context."""
        job.checkpoint_s += t0 - ss
        job._restore_bytes = 0
        if self.timeline is not None:
            self.timeline.append((job.id, ss, t0, "restore"))

    def _end_segment(self, job: Job, te: float, exec_end: float) -> None:
        """Close ``job``'s execution segment at time ``te`` with ``exec_end`` work done."""
        ss = job._seg_start
        t0 = job._t0
        tl = self.timeline
        if te < t0:  # stopped while restoring: no new work, the checkpoint is still in memory
            job.checkpoint_s += te - ss
            exec_end = job._exec
            if tl is not None and te > ss:
                tl.append((job.id, ss, te, "restore"))
        else:
            if t0 > ss:
                self._charge_restore(job, ss, t0)
            job._restore_bytes = 0
            if tl is not None and te > t0:
                tl.append((job.id, t0, te, "run"))
        self.busy += te - ss
        a = job._seg_exec0
        if exec_end > a:
            self.layer_exec += job.plan.steps_between(a, exec_end)
        job._exec = exec_end

    def _record(self, job: Job, finish: float) -> None:
        row = job.row
        self.col_first[row] = job.first_start_s
        self.col_finish[row] = finish
        self.col_preempt[row] = job.preemptions
        self.col_cbytes[row] = job.checkpoint_bytes
        self.col_cs[row] = job.checkpoint_s
        self.col_wasted[row] = job.wasted_s

    def _kill(self, job: Job) -> None:
        """KILL: stop ``job`` now and throw its progress away."""
        now = self.clock.now
        self._end_segment(job, now, job.executed_s)
        job.wasted_s += job._exec
        job._exec = 0.0
        job._restore_bytes = 0
        job.preemptions += 1
        job._epoch += 1
        self._requeue(job, now)
        self.running = None

    def _requeue(self, job: Job, now: float) -> None:
        job.state = WAITING
        job._wait_since = now
        ready = self.ready
        if not ready or ready[-1].order < job.order:
            ready.append(job)
        else:
            insort(ready, job, key=_ORDER)

    def _checkpoint(self, job: Job) -> None:
        """CHECKPOINT: let ``job`` run to its next preemption point, then save its context."""
        now = self.clock.now
        if now < job._t0:  # still restoring: stop at once, where it already stands
            stop = job._exec
            t_stop = now
        else:
            stop = job.plan.next_preemption_point(
                job.executed_s, layer=self.layer_point, tol_s=TIME_TOL_S
            )
            if stop >= job.isolated_s:  # the next preemption point is the end: it just finishes
                return
            t_stop = job._t0 + (stop - job._exec) / job.rate
            if t_stop < now:
                t_stop = now
        job.state = PREEMPTING
        job._limit = stop
        job._epoch += 1
        self.running = None
        self.preempting = job
        q = self.queue
        heappush(q.heap, (t_stop, STOP, q.next_seq(), job, job._epoch))

    def _stop(self, job: Job) -> None:
        """The CHECKPOINT victim reached its preemption point: start saving its context."""
        now = self.clock.now
        restored = now >= job._t0
        self._end_segment(job, now, job._limit)
        job.preemptions += 1
        save_s = 0.0
        if restored:
            nbytes = job.plan.checkpoint_bytes_at(job._exec)
            job.checkpoint_bytes += nbytes
            job._restore_bytes = nbytes
            if self.ckpt_cost:
                save_s = nbytes / job.profile.memory_bandwidth_bps
        job.checkpoint_s += save_s
        self.busy += save_s
        job._save_start = now
        q = self.queue
        heappush(q.heap, (now + save_s, SAVE_DONE, q.next_seq(), job, job._epoch))

    def _save_done(self, job: Job) -> None:
        now = self.clock.now
        if self.timeline is not None and now > job._save_start:
            self.timeline.append((job.id, job._save_start, now, "save"))
        self.preempting = None
        self._requeue(job, now)

    def _invalid(self, cand: object) -> SimulationError:
        pol = getattr(self.policy, "name", type(self.policy).__name__)
        if isinstance(cand, Job):
            what = f"job {cand.id} in state {cand.state.value!r}"
        else:
            what = f"{type(cand).__name__} {cand!r}"
        return SimulationError(
            f"policy {pol!r} selected {what} at t={self.clock.now!r} s; it must be a job in "
            f"the ready queue"
        )

    # --- the loop -----------------------------------------------------------------------------
    def execute(self) -> SimResult:
        sim = self.sim
        policy = self.policy
        policy.reset()
        preemptive = bool(policy.preemptive)
        period = policy.period_s
        if period is not None and not (period > 0.0 and math.isfinite(period)):
            raise SimulationError(
                f"policy {policy.name!r}: period_s={period!r}; must be a positive number or None"
            )
        profiles = sim.profiles
        estimator = sim.estimator
        clock = self.clock
        q = self.queue
        heap = q.heap
        seq = q.next_seq
        ready = self.ready
        arrivals = self.arrivals
        arrival_rows = self.arrival_rows
        req_plans = self.req_plans
        col_est = self.col_est
        col_first = self.col_first
        col_finish = self.col_finish
        col_preempt = self.col_preempt
        col_cbytes = self.col_cbytes
        col_cs = self.col_cs
        col_wasted = self.col_wasted
        timeline = self.timeline
        n = len(arrivals)
        until = self.until
        inf = math.inf
        tol = TIME_TOL_S
        ai = 0
        next_arr = arrivals[0].arrival_s if n else inf
        now = 0.0
        events = 0
        n_finished = 0
        progress = self.progress
        chunk = max(1, -(-n // 100))  # about 100 progress calls
        on_dispatch = policy.on_dispatch
        on_complete = policy.on_complete
        # Hooks left as the base class's no-ops are not called at all.
        from npusched.policies.base import TemporalPolicyBase as _Base

        call_dispatch = getattr(type(policy), "on_dispatch", None) is not _Base.on_dispatch
        call_complete = getattr(type(policy), "on_complete", None) is not _Base.on_complete
        select = policy.select
        new_view = object.__new__
        view_cls = SchedulerView
        fast_view = _FAST_VIEW
        completed: list[Job] = []
        arrived: list[Job] = []
        idle_ticks = 0

        while True:
            th = heap[0][0] if heap else inf
            t = th if th < next_arr else next_arr
            if t == inf or t > until:
                break
            if t > now:
                now = t
                clock.now = t
                q.now = t
            horizon = now + tol
            woke = False
            freed = False  # a save finished (reason "preempted")
            ticked = False
            while heap and heap[0][0] <= horizon:
                _, kind, _, job, epoch = heappop(heap)
                if kind == COMPLETE:
                    if epoch != job._epoch:
                        continue  # superseded by a preemption
                    # Inlined completion: close the segment, record, free the array.
                    ss = job._seg_start
                    t0 = job._t0
                    if t0 > ss:  # rare: the segment began with a restore
                        self._charge_restore(job, ss, t0)
                    if timeline is not None and now > t0:
                        timeline.append((job.id, t0, now, "run"))
                    self.busy += now - ss
                    iso = job.isolated_s
                    a = job._seg_exec0
                    plan = job.plan  # a run from the start executed every step: no look-up
                    self.layer_exec += plan.steps if a <= 0.0 else plan.steps_between(a, iso)
                    job._exec = iso
                    job.state = DONE
                    job._epoch = epoch + 1
                    self.running = None
                    row = job.row
                    col_first[row] = job.first_start_s
                    col_finish[row] = now
                    if job.preemptions:
                        col_preempt[row] = job.preemptions
                        col_cbytes[row] = job.checkpoint_bytes
                        col_wasted[row] = job.wasted_s
                    col_cs[row] = job.checkpoint_s
                    n_finished += 1
                    completed.append(job)
                elif kind == STOP:
                    if epoch != job._epoch:  # pragma: no cover - stops are never superseded
                        continue
                    self._stop(job)
                elif kind == SAVE_DONE:
                    self._save_done(job)
                    freed = True
                else:  # PERIOD
                    self.tick_pending = False
                    if not ready:
                        continue  # nobody waits: the tick is skipped
                    ticked = True
                events += 1
                woke = True
            while next_arr <= horizon:
                r = arrivals[ai]
                prof, plan, iso = req_plans[ai]
                est = iso if estimator is None else float(estimator(r, prof))
                row = arrival_rows[ai]
                col_est[row] = est
                job = Job(r, prof, plan, iso, est, ai, row, clock)
                ready.append(job)
                arrived.append(job)
                events += 1
                ai += 1
                next_arr = arrivals[ai].arrival_s if ai < n else inf
            if not woke and not arrived:
                continue

            if completed:
                if call_complete:
                    for job in completed:
                        on_complete(job, now)
                if progress is not None and (
                    n_finished // chunk != (n_finished - len(completed)) // chunk or n_finished == n
                ):
                    progress(n_finished)
                    self.reported = n_finished
                completed.clear()
                reason = "preempted" if freed else "completion"
            elif freed:
                reason = "preempted"
            elif arrived:
                reason = "arrival"
            elif ticked:
                reason = "period"
            else:
                reason = ""  # only a stop: the preemption is still in flight
            if arrived:
                if call_dispatch:
                    for job in arrived:
                        on_dispatch(job, now)
                arrived.clear()

            running = self.running
            if ticked:
                policy.on_period(SchedulerView(now, ready, running, "period", profiles))
            if reason and self.preempting is None:
                if fast_view:
                    view = new_view(view_cls)
                    d = view.__dict__
                    d["now"] = now
                    d["ready"] = ready
                    d["running"] = running
                    d["reason"] = reason
                    d["profiles"] = profiles
                else:  # pragma: no cover - only if SchedulerView changes shape
                    view = view_cls(now, ready, running, reason, profiles)
                decision = select(view)
                cand = decision.run
                if cand is not None and cand is not running:
                    if (
                        type(cand) is not Job
                        or cand.state is not WAITING
                        or cand._clock is not clock
                    ):
                        raise self._invalid(cand)
                    if running is None:
                        self._start(cand)
                    elif preemptive:
                        mech = decision.mechanism
                        if mech == _CHECKPOINT:
                            self._checkpoint(running)
                        elif mech == _KILL:
                            self._kill(running)
                            self._start(cand)
                        elif mech != _DRAIN:
                            raise SimulationError(
                                f"policy {policy.name!r} returned mechanism {mech!r}; allowed: "
                                f"{', '.join(m.value for m in Mechanism)}"
                            )
            if ready and period is not None and not self.tick_pending:
                k = math.floor(now / period) + 1.0
                t_tick = k * period
                if t_tick <= now:
                    t_tick += period
                if self.running is None and self.preempting is None and not heap and ai >= n:
                    # Only ticks are left; a policy may idle for a while, not forever.
                    idle_ticks = idle_ticks + 1 if reason == "period" else 0
                    if idle_ticks > _MAX_IDLE_TICKS:
                        raise SimulationError(
                            f"policy {policy.name!r} left the accelerator idle for "
                            f"{_MAX_IDLE_TICKS} periods with {len(ready)} jobs waiting and "
                            f"nothing else to happen (t={now!r} s)"
                        )
                heappush(heap, (t_tick, PERIOD, seq(), None, 0))
                self.tick_pending = True

        self.events = events
        self.n_finished = n_finished
        return self._result(now)

    # --- results ------------------------------------------------------------------------------
    def _result(self, now: float) -> SimResult:
        n = len(self.arrivals)
        if self.n_finished < n and self.until == math.inf:
            raise SimulationError(
                f"policy {self.policy.name!r} left {n - self.n_finished} of {n} requests "
                f"unfinished with the accelerator idle at t={now!r} s"
            )
        # Partial records of jobs still in flight (only with ``until``).
        alive = list(self.ready)
        for j in (self.running, self.preempting):
            if j is not None:
                alive.append(j)
        for j in alive:
            self._record(j, math.nan)
        if self.progress is not None and self.n_finished != self.reported:
            self.progress(self.n_finished)  # a stop by ``until`` between two reports

        reqs = self.by_id
        arrival = np.fromiter(map(attrgetter("arrival_s"), reqs), dtype=np.float64, count=n)
        finish = np.asarray(self.col_finish, dtype=np.float64)
        iso = np.asarray(self.col_iso, dtype=np.float64)
        cs = np.asarray(self.col_cs, dtype=np.float64)
        latency = finish - arrival
        network = np.empty(n, dtype=object)
        network[:] = list(map(attrgetter("network"), reqs))
        cols: dict[str, npt.NDArray[Any]] = {
            "id": np.fromiter(map(attrgetter("id"), reqs), dtype=np.int64, count=n),
            "arrival_s": arrival,
            "first_start_s": np.asarray(self.col_first, dtype=np.float64),
            "finish_s": finish,
            "isolated_s": iso,
            "estimated_s": np.asarray(self.col_est, dtype=np.float64),
            "latency_s": latency,
            # Float rounding can leave -1e-19 s where a job never waited: clamp within the
            # engine's time tolerance (larger negatives would be a bug and stay visible).
            "waiting_s": _clamp_tiny_negative(latency - iso - cs),
            "preemptions": np.asarray(self.col_preempt, dtype=np.int64),
            "checkpoint_bytes": np.asarray(self.col_cbytes, dtype=np.int64),
            "checkpoint_s": cs,
            "wasted_s": np.asarray(self.col_wasted, dtype=np.float64),
            "priority": np.fromiter(map(attrgetter("priority"), reqs), dtype=np.int64, count=n),
            "batch": np.fromiter(map(attrgetter("batch"), reqs), dtype=np.int64, count=n),
            "slo_s": np.fromiter(
                (math.nan if r.slo_s is None else r.slo_s for r in reqs), dtype=np.float64, count=n
            ),
            "network": network,
            "seq_in": np.fromiter(
                (-1 if r.seq_in is None else r.seq_in for r in reqs), dtype=np.int64, count=n
            ),
            "seq_out": np.fromiter(
                (-1 if r.seq_out is None else r.seq_out for r in reqs), dtype=np.int64, count=n
            ),
        }
        done = ~np.isnan(finish)
        makespan = float(finish[done].max() - arrival.min()) if done.any() else 0.0
        return SimResult(
            columns=cols,
            makespan_s=makespan,
            busy_s=float(self.busy),
            events=self.events,
            layer_executions=self.layer_exec,
            timeline=self.timeline,
            policy=str(getattr(self.policy, "name", type(self.policy).__name__)),
            end_s=now,
        )
