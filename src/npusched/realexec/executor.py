"""The real executor: registry policies schedule real ONNX Runtime inference.

One **worker** per compute resource (a temporal policy holds a one-resource machine, so one
worker, ``cpu0``): it owns every tenant network's group sessions, each set to a fixed intra-op
thread count, and runs **one group at a time**. The scheduler loop (the calling thread) is the
engine's counterpart on a real clock (``time.perf_counter`` from the start of the run):

* **Decision instants.** The policy's hooks run at real arrival instants (when the worker is
  idle it blocks on the arrival source and wakes at once) and at every group completion (a
  request that arrives while a group runs is admitted, with its true arrival time, when that
  group ends: the group boundary is also the earliest point a preemption could take effect,
  which is where the simulator's layer-granularity CHECKPOINT stops the victim too).
* **The contract.** The unchanged registry policy objects see a
  :class:`~npusched.policies.contract.SchedulerView` of :class:`RealJob` views and answer a
  :class:`~npusched.policies.contract.Decision`; ``on_dispatch`` / ``on_complete`` /
  ``on_period`` (or ``on_periods`` for the period boundaries that passed since the last wake, as
  the engine's skipped ticks) are called as the engine calls them.
* **Mechanisms for real.** ``CHECKPOINT``: the victim is at a group boundary; its live tensors
  are copied out (the save, timed) and copied back when it resumes (the restore, timed).
  ``KILL``: its tensors are dropped and it restarts at group 0 (the lost work is ``wasted_s``).
  ``DRAIN``: the running job goes on. A non-preemptive policy's answer is always DRAIN.
* **Invariants** (checked on every run, :class:`~npusched.errors.SimulationError` if broken):
  every request finishes exactly once; the worker never runs two groups at once (its recorded
  group intervals never overlap); each request's latency is at least the seconds its own groups
  ran (its isolated time as it really ran).

Times are seconds from the start of the run.
"""

from __future__ import annotations

import gc
import itertools
import math
import queue
import threading
import time
from bisect import insort
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from npusched.errors import SimulationError
from npusched.hardware.profile import ExecPlan, Profile
from npusched.policies.contract import Allocation, JobState, Mechanism, SchedulerView
from npusched.realexec.groups import GroupedModel
from npusched.workloads.request import Request

RESOURCE = "cpu0"


class RealJob:
    """A request on the real executor, read by policies through the ``JobView`` protocol.

    ``executed_s`` is in the calibrated plan's seconds (the prefix sum of the groups done), so
    SJF / PREMA see the same remaining-time estimates as in the simulator.
    """

    __slots__ = (
        "_ex",
        "_plan",
        "arrival_s",
        "checkpoint_bytes",
        "checkpoint_s",
        "estimated_s",
        "exec_s",
        "finish_s",
        "first_start_s",
        "id",
        "isolated_s",
        "live",
        "network",
        "preemptions",
        "priority",
        "request",
        "saved",
        "state",
        "step",
        "wait_since",
        "waited_acc",
        "wasted_s",
    )

    def __init__(
        self, ex: RealExecutor, request: Request, plan: ExecPlan, estimated_s: float
    ) -> None:
        self._ex = ex
        self._plan = plan
        self.request = request
        self.id = request.id
        self.network = request.network
        self.priority = request.priority
        self.arrival_s = request.arrival_s
        self.isolated_s = plan.total_s
        self.estimated_s = estimated_s
        self.state = JobState.WAITING
        self.preemptions = 0
        self.step = 0
        self.live: dict[str, Any] = {}
        self.saved = False
        self.wait_since = request.arrival_s
        self.waited_acc = 0.0
        self.exec_s = 0.0
        self.wasted_s = 0.0
        self.checkpoint_bytes = 0
        self.checkpoint_s = 0.0
        self.first_start_s = math.nan
        self.finish_s = math.nan

    # --- JobView ---------------------------------------------------------------------------
    @property
    def samples(self) -> Sequence[Request]:
        return (self.request,)

    @property
    def executed_s(self) -> float:
        return float(self._plan.cum_s[self.step])

    @property
    def waited_s(self) -> float:
        if self.state == JobState.WAITING:
            return self.waited_acc + max(self._ex.now - self.wait_since, 0.0)
        return self.waited_acc

    @property
    def position(self) -> tuple[int, float]:
        return (self.step, 0.0)

    @property
    def plan(self) -> ExecPlan:
        return self._plan

    @property
    def allocation(self) -> Allocation | None:
        return Allocation(RESOURCE, 1) if self.state == JobState.RUNNING else None

    @property
    def rate(self) -> float:
        return 1.0

    def __repr__(self) -> str:
        return f"RealJob(id={self.id}, {self.network}, step={self.step})"


class ArrivalSource:
    """Where requests come from: :meth:`poll` returns the requests that have arrived by ``now``
    (their ``arrival_s`` set to the real arrival instant), :meth:`wait` blocks until one may
    have arrived, :attr:`exhausted` says no more will come."""

    @property
    def exhausted(self) -> bool:
        """No request will come any more."""
        return False

    def start(self, t0: float) -> None:
        """The run's clock starts at ``perf_counter() == t0``."""

    def poll(self, now: float) -> list[Request]:  # pragma: no cover - interface
        raise NotImplementedError

    def wait(self, now: float) -> None:  # pragma: no cover - interface
        raise NotImplementedError

    def completed(self, job: RealJob) -> None:
        """A request finished (the LoadGen source answers its query here)."""


class ReplaySource(ArrivalSource):
    """Requests replayed at their ``arrival_s`` (seconds from the start of the run)."""

    def __init__(self, requests: Sequence[Request]) -> None:
        self.requests = sorted(requests, key=lambda r: (r.arrival_s, r.id))
        self.i = 0

    @property
    def exhausted(self) -> bool:
        return self.i >= len(self.requests)

    def poll(self, now: float) -> list[Request]:
        out = []
        while self.i < len(self.requests) and self.requests[self.i].arrival_s <= now:
            out.append(self.requests[self.i])
            self.i += 1
        return out

    def wait(self, now: float) -> None:
        if self.i < len(self.requests):
            time.sleep(max(self.requests[self.i].arrival_s - now, 0.0))


class QueueSource(ArrivalSource):
    """Requests pushed by another thread (LoadGen's issue callback) with :meth:`push`."""

    def __init__(self) -> None:
        self.q: queue.Queue[Request] = queue.Queue()
        self.done = threading.Event()
        self.t0 = time.perf_counter()

    def start(self, t0: float) -> None:
        self.t0 = t0

    @property
    def exhausted(self) -> bool:
        return self.done.is_set() and self.q.empty()

    def push(self, request: Request) -> None:
        self.q.put(request)

    def poll(self, now: float) -> list[Request]:
        out = []
        while True:
            try:
                out.append(self.q.get_nowait())
            except queue.Empty:
                return out

    def wait(self, now: float) -> None:
        try:
            r = self.q.get(timeout=0.05)
        except queue.Empty:
            return
        self.q.put(r)  # re-queued; poll takes it (order by arrival_s is restored there)


@dataclass
class RealResult:
    """A real run: ``records`` (one row per request, the simulator's columns plus ``exec_s``,
    the seconds its groups really ran), ``segments`` ``(job id, group, start_s, end_s)``,
    ``overhead_s`` the scheduler's own seconds between a group's end and the next group's start
    when the worker went straight on (Python dispatch: policy and bookkeeping), ``save_s`` the
    seconds of each CHECKPOINT save, the policy name, and ``cpu_s`` the CPU seconds of the
    calling thread in each segment (ONNX Runtime with one intra-op thread computes there):
    wall over CPU seconds is the share of the core other processes took."""

    records: pd.DataFrame
    segments: list[tuple[int, int, float, float]]
    overhead_s: list[float] = field(default_factory=list)
    save_s: list[float] = field(default_factory=list)
    policy: str = ""
    cpu_s: list[float] = field(default_factory=list)


class RealExecutor:
    """Runs requests for real under a temporal policy (see the module docstring).

    Args:
        models: the grouped model of each network (by ``Request.network``).
        sessions: each network's group sessions (:meth:`GroupedModel.sessions`).
        profiles: the calibrated profiles (:meth:`Calibration.profile`) by network.
        policy: a registry temporal policy object (reset before every run).
        estimator: ``estimated_s`` from ``(request, profile)``; default the calibrated isolated
            time (as the simulator's default).
        gc_off: Python's cyclic garbage collector is off while a run is timed (collected once
            before): a collection pass would stop the worker between groups at instants the
            simulator cannot know.
    """

    def __init__(
        self,
        models: Mapping[str, GroupedModel],
        sessions: Mapping[str, Sequence[Any]],
        profiles: Mapping[str, Profile],
        policy: Any,
        *,
        estimator: Callable[[Request, Profile], float] | None = None,
        gc_off: bool = True,
    ) -> None:
        if getattr(policy, "kind", "temporal") != "temporal":
            raise SimulationError("the real executor runs temporal policies (one worker)")
        self.models = models
        self.sessions = sessions
        self.profiles = profiles
        self.policy = policy
        self.estimator = estimator
        self.gc_off = gc_off
        self.now = 0.0
        self._inputs = {n: m.sample_input() for n, m in models.items()}

    def run(
        self,
        source: ArrivalSource,
        *,
        progress: Callable[[int], None] | None = None,
    ) -> RealResult:
        """Serve every request ``source`` delivers until it is exhausted and all finished."""
        enabled = gc.isenabled()
        if self.gc_off:
            gc.collect()
            gc.disable()
        try:
            return self._run(source, progress)
        finally:
            if enabled:
                gc.enable()

    def _run(self, source: ArrivalSource, progress: Callable[[int], None] | None) -> RealResult:
        policy = self.policy
        policy.reset()
        period = getattr(policy, "period_s", None)
        has_periods = callable(getattr(policy, "on_periods", None))
        preemptive = bool(getattr(policy, "preemptive", False))
        ready: list[tuple[float, int, RealJob]] = []
        jobs: dict[int, RealJob] = {}
        done: list[RealJob] = []
        segments: list[tuple[int, int, float, float]] = []
        overhead: list[float] = []
        saves: list[float] = []
        cpu: list[float] = []
        running: RealJob | None = None
        last_tick = 0
        t0 = time.perf_counter()
        source.start(t0)

        def clock() -> float:
            return time.perf_counter() - t0

        last_group_end: float | None = None
        reason = "arrival"
        while True:
            now = self.now = clock()
            new = sorted(source.poll(now), key=lambda r: (r.arrival_s, r.id))
            for r in new:
                if r.id in jobs:
                    raise SimulationError(f"request id {r.id} delivered twice")
                prof = self.profiles[r.network]
                plan = prof.plan(r.batch)
                est = self.estimator(r, prof) if self.estimator is not None else plan.total_s
                job = RealJob(self, r, plan, est)
                jobs[r.id] = job
                insort(ready, (job.arrival_s, job.id, job), key=lambda e: (e[0], e[1]))
                policy.on_dispatch(job, now)
            if new:
                reason = "arrival"
            if running is None and not ready:
                last_tick = int(now // period) if period else 0
                last_group_end = None
                if source.exhausted:
                    break
                source.wait(now)
                continue
            view = SchedulerView(now, [e[2] for e in ready], running, reason, self.profiles)
            if period:
                k = int(now // period)
                if not ready:  # the engine ticks only while jobs wait
                    last_tick = k
                if k > last_tick:
                    count = k - last_tick
                    if has_periods:
                        policy.on_periods(view, (last_tick + 1) * period, count)
                    else:
                        for _ in range(count):
                            policy.on_period(view)
                    last_tick = k
            dec = policy.select(view)
            target = dec.run
            if target is not None and target is not running:
                if running is not None:
                    mech = Mechanism(dec.mechanism) if preemptive else Mechanism.DRAIN
                    if mech == Mechanism.DRAIN:
                        target = None
                    else:
                        victim = running
                        victim.preemptions += 1
                        if mech == Mechanism.CHECKPOINT:
                            ts = time.perf_counter()
                            victim.live = {t: a.copy() for t, a in victim.live.items()}
                            dt = time.perf_counter() - ts
                            saves.append(dt)
                            victim.checkpoint_s += dt
                            victim.checkpoint_bytes += sum(a.nbytes for a in victim.live.values())
                            victim.saved = True
                        else:  # KILL
                            victim.live = {}
                            victim.wasted_s += float(victim.plan.cum_s[victim.step])
                            victim.step = 0
                            victim.saved = False
                        victim.state = JobState.WAITING
                        victim.wait_since = clock()
                        insort(
                            ready, (victim.arrival_s, victim.id, victim), key=lambda e: (e[0], e[1])
                        )
                        running = None
                        last_group_end = None
                if target is not None:
                    idx = next((i for i, e in enumerate(ready) if e[2] is target), -1)
                    if idx < 0:
                        raise SimulationError(
                            f"{getattr(policy, 'name', policy)}: chose job {target.id}, which is "
                            "not in the ready queue"
                        )
                    job = ready.pop(idx)[2]
                    now = clock()
                    job.waited_acc += max(now - job.wait_since, 0.0)
                    if job.saved:  # restore the checkpointed tensors
                        ts = time.perf_counter()
                        job.live = {t: a.copy() for t, a in job.live.items()}
                        dt = time.perf_counter() - ts
                        job.checkpoint_s += dt
                        job.saved = False
                    job.state = JobState.RUNNING
                    if math.isnan(job.first_start_s):
                        job.first_start_s = now
                    running = job
            if running is None:
                # the policy leaves the worker idle with jobs waiting: wake at the next arrival
                if source.exhausted:
                    raise SimulationError(
                        f"{getattr(policy, 'name', policy)} left {len(ready)} request(s) waiting"
                    )
                source.wait(clock())
                reason = "arrival"
                continue
            # --- one group on the worker --------------------------------------------------
            job = running
            model = self.models[job.network]
            g = model.groups[job.step]
            live = job.live if job.step else {"input": self._inputs[job.network]}
            feed = {t: live[t] for t in g.inputs}
            start = clock()
            if last_group_end is not None:
                overhead.append(start - last_group_end)
            c0 = time.thread_time()
            res = self.sessions[job.network][job.step].run(list(g.outputs), feed)
            end = clock()
            cpu.append(time.thread_time() - c0)
            last_group_end = end
            segments.append((job.id, job.step, start, end))
            job.exec_s += end - start
            live = {**live, **dict(zip(g.outputs, res, strict=True))}
            job.live = {t: live[t] for t in g.live_after}
            job.step += 1
            reason = "completion"
            if job.step == len(model.groups):
                job.finish_s = end
                job.state = JobState.DONE
                job.live = {}
                running = None
                done.append(job)
                policy.on_complete(job, end)
                source.completed(job)
                if progress is not None:
                    progress(len(done))
        result = RealResult(
            _records(done), segments, overhead, saves, getattr(policy, "name", ""), cpu
        )
        check_invariants(result, n_delivered=len(jobs))
        return result


def _records(done: Sequence[RealJob]) -> pd.DataFrame:
    rows = sorted(done, key=lambda j: j.id)
    nan = float("nan")
    cols: dict[str, Any] = {
        "id": np.array([j.id for j in rows], dtype=np.int64),
        "arrival_s": np.array([j.arrival_s for j in rows]),
        "first_start_s": np.array([j.first_start_s for j in rows]),
        "finish_s": np.array([j.finish_s for j in rows]),
        "isolated_s": np.array([j.isolated_s for j in rows]),
        "estimated_s": np.array([j.estimated_s for j in rows]),
    }
    cols["latency_s"] = cols["finish_s"] - cols["arrival_s"]
    cols["checkpoint_s"] = np.array([j.checkpoint_s for j in rows])
    cols["waiting_s"] = cols["latency_s"] - cols["isolated_s"] - cols["checkpoint_s"]
    cols["preemptions"] = np.array([j.preemptions for j in rows], dtype=np.int64)
    cols["checkpoint_bytes"] = np.array([j.checkpoint_bytes for j in rows], dtype=np.int64)
    cols["wasted_s"] = np.array([j.wasted_s for j in rows])
    cols["energy_j"] = np.zeros(len(rows))
    cols["priority"] = np.array([j.priority for j in rows], dtype=np.int64)
    cols["batch"] = np.array([j.request.batch for j in rows], dtype=np.int64)
    cols["slo_s"] = np.array(
        [nan if j.request.slo_s is None else j.request.slo_s for j in rows], dtype=np.float64
    )
    cols["network"] = np.array([j.network for j in rows], dtype=object)
    cols["seq_in"] = np.full(len(rows), -1, dtype=np.int64)
    cols["seq_out"] = np.full(len(rows), -1, dtype=np.int64)
    cols["resource"] = np.array([RESOURCE] * len(rows), dtype=object)
    cols["exec_s"] = np.array([j.exec_s for j in rows])
    return pd.DataFrame(cols)


def check_invariants(result: RealResult, *, n_delivered: int) -> None:
    """Raise :class:`SimulationError` unless: every delivered request finished exactly once,
    the worker's group intervals never overlap, and every latency is at least the seconds the
    request's own groups ran."""
    df = result.records
    ids = df["id"].to_numpy()
    if len(ids) != n_delivered or len(set(ids.tolist())) != len(ids):
        raise SimulationError(
            f"{n_delivered} requests delivered, {len(ids)} finished ({len(set(ids.tolist()))} "
            "distinct): a request was lost or duplicated"
        )
    seg = sorted(result.segments, key=lambda s: s[2])
    for a, b in itertools.pairwise(seg):
        if b[2] < a[3]:
            raise SimulationError(
                f"worker {RESOURCE} ran two groups at once: job {a[0]} group {a[1]} until "
                f"{a[3]:.6f} s, job {b[0]} group {b[1]} from {b[2]:.6f} s"
            )
    short = df["latency_s"].to_numpy() < df["exec_s"].to_numpy() - 1e-9
    if short.any():
        i = int(np.flatnonzero(short)[0])
        raise SimulationError(
            f"request {int(ids[i])}: latency {df['latency_s'].iloc[i]:.6f} s is below its own "
            f"execution time {df['exec_s'].iloc[i]:.6f} s"
        )
