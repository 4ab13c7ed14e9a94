"""HaX-CoNN as a machine policy of the engine (:mod:`npusched.sim`): run a layer-group schedule
on an SoC machine (one one-unit resource per accelerator, ``npusched.sim.resources.soc``).

When jobs arrive, the policy plans every unplanned waiting job together with
:func:`~npusched.policies.mapping.haxconn.haxconn` (or runs a given schedule) and then drives
the engine with plain decisions:

* a job runs one layer group at a time: ``Allocation(resource=<accelerator>)`` with
  ``until_step`` = the first layer of its next group, so the engine stops it (free of cost) at
  every group boundary and the policy wakes with reason ``"stopped"``;
* each accelerator serves groups in the schedule's per-accelerator order (Eq. 9);
* an accelerator change waits the transition cost ``out + in`` (a timer), as in Eq. 2;
* contention: at every wake the policy sets each running job's rate to ``1 / s(d, e)`` of its
  current group (PCCS model, :mod:`npusched.hardware.contention`); a zero-delay timer after
  any start re-times the jobs that just started, so the engine's execution equals
  :func:`~npusched.policies.mapping.execute.execute` for the same schedule.

Profiles must come from :class:`~npusched.hardware.soc.SocDevice` (axis ``accelerator``) and the
jobs' networks are CNNs (one plan step per layer).
"""

from __future__ import annotations

import bisect
from collections import deque
from dataclasses import dataclass
from typing import Any

from npusched.base import Component
from npusched.errors import ConfigError
from npusched.hardware.contention import PccsContention
from npusched.hardware.soc import GroupProfile, generate_profile, get_soc
from npusched.models.zoo import get_network
from npusched.policies.contract import Allocation, JobView, MachineView, Schedule
from npusched.policies.machine import MachinePolicyBase
from npusched.policies.mapping.execute import Schedule as GroupSchedule
from npusched.policies.mapping.execute import Task, Workload
from npusched.policies.mapping.haxconn import haxconn

__all__ = ["HaxconnPolicy"]


@dataclass
class _Plan:
    profile: GroupProfile
    row: tuple[int, ...]
    starts: list[int]  # first layer of each group


class HaxconnPolicy(MachinePolicyBase, Component):
    """Machine policy executing HaX-CoNN schedules (see the module docstring).

    Args:
        soc: built-in SoC name; the machine's resources must be named like its accelerators.
        n_groups: layer groups per DNN for :func:`generate_profile`.
        goal: ``"latency"`` or ``"throughput"``.
        max_transitions: T of the restricted search space.
        schedule: a fixed group schedule (``assignment`` + ``order``) for the first batch of
            jobs, in ready-queue order, instead of solving (conformance tests, replays).
        contention: apply the contention model's rates.
    """

    name = "haxconn"
    preemptive = False  # jobs stop only at group boundaries (until_step), free of cost

    def __init__(
        self,
        *,
        soc: str = "orin",
        n_groups: int = 10,
        goal: str = "latency",
        max_transitions: int = 1,
        schedule: GroupSchedule | None = None,
        contention: bool = True,
    ) -> None:
        self.soc = soc
        self.n_groups = n_groups
        self.goal = goal
        self.max_transitions = max_transitions
        self.schedule = schedule
        self.contention = contention

    # --- hooks ---------------------------------------------------------------------------
    def reset(self) -> None:
        self.spec_ = get_soc(self.soc)
        self.model_ = PccsContention()
        self.plans_: dict[int, _Plan] = {}
        self.queues_: list[deque[tuple[int, int]]] = [deque() for _ in self.spec_.accelerators]
        self.ready_at_: dict[int, float] = {}
        self.used_fixed_ = False

    def on_complete(self, job: Any, now: float) -> None:
        self.plans_.pop(job.id, None)

    # --- planning --------------------------------------------------------------------------
    def _plan(self, jobs: list[JobView]) -> None:
        profiles = [generate_profile(get_network(j.network), self.spec_, n_groups=self.n_groups)
                    for j in jobs]
        w = Workload(self.spec_, tuple(Task(j.network, p) for j, p in zip(jobs, profiles, strict=True)))
        if self.schedule is not None and not self.used_fixed_:
            sched = self.schedule
            self.used_fixed_ = True
        else:
            sched = haxconn(w, self.goal, max_transitions=self.max_transitions).schedule
        if sched.order is None:
            from npusched.policies.mapping.execute import execute

            sched = execute(w, sched).schedule
        assert sched.order is not None
        for j, p, row in zip(jobs, profiles, sched.assignment, strict=True):
            self.plans_[j.id] = _Plan(p, row, [s for s, _ in p.bounds])
        for a, q in enumerate(sched.order):
            self.queues_[a].extend((jobs[n].id, g) for n, g in q)

    def _group(self, job: JobView) -> int:
        plan = self.plans_[job.id]
        step, _ = job.position
        return bisect.bisect_right(plan.starts, step) - 1

    # --- decisions ---------------------------------------------------------------------------
    def select(self, view: MachineView) -> Schedule:
        new = [j for j in view.ready if j.id not in self.plans_]
        if new:
            self._plan(new)
        accs = self.spec_.accelerators
        now = view.now
        free = {name: rv.free for name, rv in view.resources.items()}
        for name in accs:
            if name not in free:
                raise ConfigError(
                    f"haxconn policy: machine has no resource {name!r}; use "
                    f"npusched.sim.resources.soc({accs!r})"
                )
        assign: dict[JobView, Allocation] = {}
        until: dict[JobView, int] = {}
        timers: list[float] = []
        for job in view.ready:
            plan = self.plans_[job.id]
            g = self._group(job)
            a = plan.row[g]
            if not self.queues_[a] or self.queues_[a][0] != (job.id, g):
                continue
            if g > 0 and plan.row[g - 1] != a:  # transition (Eq. 2): wait out + in
                key = job.id
                if key not in self.ready_at_:
                    tr = float(plan.profile.out_s[g - 1, plan.row[g - 1]] + plan.profile.in_s[g, a])
                    self.ready_at_[key] = now + tr
                    timers.append(now + tr)
                    continue
                if self.ready_at_[key] > now + 1e-12:
                    continue
            if free[accs[a]] < 1:
                continue
            self.ready_at_.pop(job.id, None)
            self.queues_[a].popleft()
            free[accs[a]] -= 1
            assign[job] = Allocation.of(accs[a])
            if g + 1 < len(plan.row):
                until[job] = plan.starts[g + 1]
        rates: dict[JobView, float] = {}
        if self.contention:
            running = [j for j in view.running if j.id in self.plans_]
            demand = []
            for j in running:
                plan = self.plans_[j.id]
                g = self._group(j)
                demand.append(float(plan.profile.mem_bps[g, plan.row[g]]) / self.spec_.memory_bandwidth_bps)
            tot = sum(demand)
            for j, d in zip(running, demand, strict=True):
                s = self.model_.slowdown_one(d, tot - d) if len(running) > 1 else 1.0
                rates[j] = 1.0 / s
        if assign:
            timers.append(now)  # re-time rates once the new jobs run
        return Schedule(assign=assign, until_step=until, timers=timers, rates=rates)


def _register() -> None:
    from npusched.policies.machine import MACHINE_POLICIES

    MACHINE_POLICIES.register("HaX-CoNN", HaxconnPolicy)


_register()
