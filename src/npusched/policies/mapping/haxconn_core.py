"""The compiled core of HaX-CoNN's machine policy (:mod:`npusched.policies.mapping.policy`).

:class:`HaxconnCore` holds the policy's per-wake decision (``select``: the groups that start on
their accelerators, the transition timers and the contention rates) and ``on_complete``: the
general loop calls them at every wake, so this module is listed in
``npusched.native.COMPILED_MODULES`` and runs as mypyc native code where the package is built
compiled. The public class (``HaxconnPolicy``) stays in the interpreted ``policy.py`` and
subclasses the core: its ``__init__`` keeps a Python signature, which ``Component``
(parameters, ``clone``) and the config checks read with ``inspect.signature`` (a native
class's ``__init__`` has none); planning (``_plan``: the solves, the schedules, the per-job
plans) stays there too, once per frame. The rule is documented in ``policy.py``; this module
only holds its code.

The constructor's parameters are declared ``Any`` (the core reads ``swaps`` and
``contention``): a native attribute annotated with their types would refuse a bad value with a
``TypeError`` before ``validate`` names it. The plans and the group profiles stay generic
objects (``policy._Plan`` and ``GroupProfile`` are interpreted dataclasses).
"""

from __future__ import annotations

from collections import deque
from operator import itemgetter
from typing import Any

from mypy_extensions import mypyc_attr

from npusched.errors import ConfigError
from npusched.hardware.contention import PccsContention
from npusched.policies.contract import Allocation, JobView, MachineView, Schedule
from npusched.policies.machine_core import NO_MECHANISM, NO_MERGE, NO_PREEMPT, make_schedule

_first = itemgetter(0)


@mypyc_attr(allow_interpreted_subclasses=True)
class HaxconnCore:
    """HaX-CoNN's per-run state and per-wake decision (the rule: ``policy.HaxconnPolicy``)."""

    swaps: Any
    contention: Any
    spec_: Any
    acc_index_: dict[str, int]
    allocs_: list[Allocation]
    #: The group each job last started (a job stops only at the end of its group, so a waiting
    #: job's group is the next one, a running job's this one).
    group_: dict[int, int]
    checked_: bool
    model_: PccsContention
    plans_: dict[int, Any]
    queues_: list[deque[tuple[int, int]]]
    ready_at_: dict[int, float]
    pending_: deque[Any]
    current_: Any
    timers_sent_: bool
    ended_: dict[int, tuple[float, int, Any]]  # id -> (end, acc, profile)
    #: slowdown per (own demand, external demand): the contention model is a pure function
    slow_: dict[tuple[float, float], float]

    def _plan(self, jobs: list[JobView]) -> None:
        """Plan ``jobs`` (the public class's: the solves and the per-job plans)."""
        raise NotImplementedError

    def on_complete(self, job: Any, now: float) -> None:
        self.group_.pop(job.id, None)
        plan = self.plans_.pop(job.id, None)
        if plan is not None and self.swaps is not None:
            self.ended_[job.id] = (now, plan.row[-1], plan.profile)

    def select(self, view: MachineView) -> Schedule:
        timers: list[float] = []
        if self.swaps is not None:
            if not self.timers_sent_:  # one engine timer per swap
                timers.extend(s.time_s for s in self.pending_ if s.time_s > view.now)
                self.timers_sent_ = True
            while self.pending_ and self.pending_[0].time_s <= view.now:
                self.current_ = self.pending_.popleft()
        ready = view.ready
        plans = self.plans_
        # (plain loops here and below: on the hot path, with one or two jobs, a comprehension's
        # own frame costs more than its items)
        for j in ready:
            if j.id not in plans:
                self._plan([j for j in ready if j.id not in plans])
                break
        accs = self.spec_.accelerators
        now = view.now
        resources = view.resources
        if not self.checked_:
            for name in accs:
                if name not in resources:
                    raise ConfigError(
                        f"haxconn policy: machine has no resource {name!r}; use "
                        f"npusched.sim.resources.soc({accs!r})"
                    )
            self.checked_ = True
        free: list[int] | None = None  # by accelerator index, read on the first start
        group = self.group_
        queues = self.queues_
        ready_at = self.ready_at_
        allocs = self.allocs_
        assign: dict[JobView, Allocation] = {}
        until: dict[JobView, int] = {}
        # Passes over the ready queue until one starts nothing: a start moves its
        # accelerator's queue on, and the job now at its head may begin its transition wait
        # at this instant (the decision the engine would otherwise make right after the start).
        while True:
            started = len(assign)
            left = 0  # jobs of this pass left waiting: the next pass may start one
            for job in ready:
                if job in assign:
                    continue
                left += 1  # (taken back below when it starts)
                jid = job.id
                plan = plans[jid]
                g = group.get(jid, -1) + 1  # as _group(job), without the look-up
                row = plan.row
                a = row[g]
                qa = queues[a]
                if not qa:
                    continue
                head = qa[0]
                if head[0] != jid or head[1] != g:
                    continue
                if g == 0:
                    if plan.deps:  # a consumer (Scenario 4): producers, then the hand-over
                        if any(d not in self.ended_ for d in plan.deps):
                            continue
                        if jid not in ready_at:
                            r = 0.0
                            for dep in plan.deps:
                                end, last, prof = self.ended_[dep]
                                tr = (
                                    0.0
                                    if last == a
                                    else float(prof.out_s[-1, last] + plan.profile.in_s[0, a])
                                )
                                r = max(r, end + tr)
                            ready_at[jid] = r
                            if r > now + 1e-12:
                                timers.append(r)
                                continue
                        if ready_at[jid] > now + 1e-12:
                            continue
                elif row[g - 1] != a:  # transition (Eq. 2): wait out + in
                    t_ready = ready_at.get(jid)
                    if t_ready is None:
                        assert plan.wait is not None
                        t_ready = ready_at[jid] = now + plan.wait[g]
                        timers.append(t_ready)
                        continue
                    if t_ready > now + 1e-12:
                        continue
                if free is None:
                    free = []
                    for name in accs:
                        free.append(resources[name].free)
                if free[a] < 1:
                    continue
                ready_at.pop(jid, None)
                qa.popleft()
                free[a] -= 1
                assign[job] = allocs[a]
                group[jid] = g
                if g + 1 < len(row):
                    until[job] = plan.starts[g + 1]
                left -= 1
            # Another pass only when this one started a job and left one waiting: a pass over
            # jobs all started (or already assigned) starts nothing.
            if len(assign) == started or not left:
                break
        rates: dict[JobView, float] = {}
        if self.contention:
            # Every job running once this decision is carried out (the engine applies rates
            # after it starts the assigned jobs), in machine order as the engine lists them.
            acc_index = self.acc_index_
            running = []
            for j in view.running:
                if j.id in plans:
                    running.append(j)
            if assign and len(assign) == 1 and len(running) < 2:
                ((aj, aal),) = assign.items()
                if not running:
                    running = [aj]  # one job: nothing to order
                else:  # two: the stable sort of the general case below, written out
                    rj = running[0]
                    ral = rj.allocation
                    ir = acc_index.get(ral.resource or "", -1) if ral else -1
                    running = [rj, aj] if ir <= acc_index[aal.resource or ""] else [aj, rj]
            elif assign:
                entries = []
                for j in running:
                    al = j.allocation
                    entries.append((acc_index.get(al.resource or "", -1) if al else -1, j))
                for j, al in assign.items():
                    entries.append((acc_index[al.resource or ""], j))
                entries.sort(key=_first)
                running = []
                for e in entries:
                    running.append(e[1])
            if len(running) == 2:  # the general case below, written out for two jobs
                j0, j1 = running
                d0 = plans[j0.id].demand[group[j0.id]]
                d1 = plans[j1.id].demand[group[j1.id]]
                tot = 0 + d0 + d1  # as ``sum``: from the integer 0, left to right
                memo = self.slow_
                k = (d0, tot - d0)
                slow = memo.get(k)
                if slow is None:
                    slow = memo[k] = self.model_.slowdown_one(d0, tot - d0)
                rates[j0] = 1.0 / slow
                k = (d1, tot - d1)
                slow = memo.get(k)
                if slow is None:
                    slow = memo[k] = self.model_.slowdown_one(d1, tot - d1)
                rates[j1] = 1.0 / slow
            elif len(running) > 1:
                demand = []
                for j in running:
                    demand.append(plans[j.id].demand[group[j.id]])
                tot = sum(demand)
                memo = self.slow_
                for j, d in zip(running, demand, strict=True):
                    k = (d, tot - d)
                    slow = memo.get(k)
                    if slow is None:
                        slow = memo[k] = self.model_.slowdown_one(d, tot - d)
                    rates[j] = 1.0 / slow
            else:
                for j in running:
                    rates[j] = 1.0
        return make_schedule(assign, NO_PREEMPT, NO_MECHANISM, until, NO_MERGE, timers, rates)
