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
  current group (PCCS model, :mod:`npusched.hardware.contention`), the jobs it starts in the
  same decision included (the engine applies rates after it starts them), so the engine's
  execution equals
  :func:`~npusched.policies.mapping.execute.execute` for the same schedule.

**Schedule swaps** (D-HaX-CoNN in an engine run): with ``swaps``, every batch of jobs that
arrives together is one *frame* of a DNN set and runs the schedule in force when it arrives;
the policy asks the engine for a timer at every swap time and, when it fires, installs that
swap's schedule for the frames that arrive from then on (a frame already running keeps its
schedule, as a swap between inferences does on the board). A swap's ``after`` gives the DNN
dependencies inside a frame (Scenario 4): a consumer's first group waits until its producers
ended plus the hand-over transition (a timer), as in
:func:`~npusched.policies.mapping.execute.execute`.

Profiles must come from :class:`~npusched.hardware.soc.SocDevice` (axis ``accelerator``) and the
jobs' networks are CNNs (one plan step per layer).
"""

from __future__ import annotations

import bisect
import itertools
from collections import deque
from dataclasses import dataclass
from operator import itemgetter
from typing import Any

from npusched.base import Component
from npusched.errors import ConfigError
from npusched.hardware.contention import PccsContention
from npusched.hardware.soc import GroupProfile, generate_profile, get_soc
from npusched.models.zoo import get_network
from npusched.policies.contract import Allocation, JobView
from npusched.policies.machine import MachinePolicyBase
from npusched.policies.mapping.execute import Schedule as GroupSchedule
from npusched.policies.mapping.execute import Task, Workload
from npusched.policies.mapping.haxconn import haxconn
from npusched.policies.mapping.haxconn_core import HaxconnCore

__all__ = ["HaxconnPolicy", "Swap"]


_first = itemgetter(0)


@dataclass
class _Plan:
    profile: GroupProfile
    row: tuple[int, ...]
    starts: list[int]  # first layer of each group
    deps: tuple[int, ...] = ()  # job ids of producers in the same frame
    #: per group: requested memory throughput on its accelerator as a fraction of the SoC's
    #: bandwidth (``mem_bps[g, row[g]] / memory_bandwidth_bps``)
    demand: list[float] | None = None
    #: per group: the transition wait before it (``out_s[g-1, row[g-1]] + in_s[g, row[g]]``,
    #: seconds; 0.0 where the accelerator does not change, and for group 0)
    wait: list[float] | None = None


#: Process-wide memo of the planning inputs and solves, shared by every policy instance (a
#: sweep's points or a bench's repeats re-create the policy): per (network, SoC, ``n_groups``)
#: the group profile, and per (goal, ``max_transitions``, profiles) the solved schedule. The
#: restricted search is exhaustive (its result does not depend on the machine's speed), so a
#: memoised schedule is the one a fresh solve returns. Keys hold ``id`` of objects the entry
#: keeps alive, so an id is never reused while its entry exists. Cleared when it holds
#: :data:`_SHARED_MAX` entries.
_SHARED: dict[tuple[object, ...], tuple[object, ...]] = {}
_SHARED_MAX = 256


def _shared(key: tuple[object, ...], keep: tuple[object, ...], make: Any) -> Any:
    """``make()`` memoised under ``key`` in :data:`_SHARED` (``keep``: the objects whose ids
    ``key`` holds, kept alive with the value)."""
    hit = _SHARED.get(key)
    if hit is not None:
        return hit[0]
    if len(_SHARED) >= _SHARED_MAX:
        _SHARED.clear()
    value = make()
    _SHARED[key] = (value, keep)
    return value


@dataclass(frozen=True)
class Swap:
    """A schedule that takes effect at a simulated time.

    Attributes:
        time_s: seconds (simulated) from which arriving frames use ``schedule``.
        schedule: a group schedule for one frame's DNNs, in the frame's request order.
        after: per DNN of the frame, the indices of DNNs whose output it consumes.
    """

    time_s: float
    schedule: GroupSchedule
    after: tuple[tuple[int, ...], ...] = ()


class HaxconnPolicy(HaxconnCore, MachinePolicyBase, Component):
    """Machine policy executing HaX-CoNN schedules (see the module docstring; the per-wake
    decision: :class:`~npusched.policies.mapping.haxconn_core.HaxconnCore`, compiled).

    Args:
        soc: built-in SoC name; the machine's resources must be named like its accelerators.
        n_groups: layer groups per DNN for :func:`generate_profile`.
        goal: ``"latency"`` or ``"throughput"``.
        max_transitions: T of the restricted search space.
        schedule: a fixed group schedule (``assignment`` + ``order``) for the first batch of
            jobs, in ready-queue order, instead of solving (conformance tests, replays).
        contention: apply the contention model's rates.
        swaps: schedule swaps in time order (see the module docstring); the first must be at
            or before the first arrival. Takes precedence over ``schedule``.
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
        swaps: tuple[Swap, ...] | None = None,
    ) -> None:
        self.soc = soc
        self.n_groups = n_groups
        self.goal = goal
        self.max_transitions = max_transitions
        self.schedule = schedule
        self.contention = contention
        self.swaps = swaps

    # --- hooks ---------------------------------------------------------------------------
    def reset(self) -> None:
        self.spec_ = get_soc(self.soc)
        self.acc_index_ = {a: i for i, a in enumerate(self.spec_.accelerators)}
        self.allocs_ = [Allocation.of(a) for a in self.spec_.accelerators]
        #: The group each job last started (a job stops only at the end of its group, so a
        #: waiting job's group is the next one, a running job's this one).
        self.group_: dict[int, int] = {}
        self.checked_ = False
        self.model_ = PccsContention()
        self.plans_: dict[int, _Plan] = {}
        self.profiles_: dict[str, GroupProfile] = {}
        self.queues_: list[deque[tuple[int, int]]] = [deque() for _ in self.spec_.accelerators]
        self.ready_at_: dict[int, float] = {}
        self.used_fixed_ = False
        swaps = tuple(self.swaps) if self.swaps is not None else ()
        if any(b.time_s < a.time_s for a, b in itertools.pairwise(swaps)):
            raise ConfigError("haxconn policy: swaps must be in time order")
        self.pending_: deque[Swap] = deque(swaps)
        self.current_: Swap | None = None
        self.timers_sent_ = False
        self.ended_: dict[int, tuple[float, int, GroupProfile]] = {}  # id -> (end, acc, profile)
        # memo: one solve (and one ordering) per distinct workload, i.e. per tuple of networks
        # of a frame (and per swap schedule for D-HaX-CoNN): frames repeat their networks
        self.memo_: dict[tuple[object, ...], GroupSchedule] = {}
        self.solves_ = 0
        #: per (profile id, row): the per-group demand and wait lists of :class:`_Plan`
        self.rows_: dict[tuple[int, tuple[int, ...]], tuple[list[int], list[float], list[float]]]
        self.rows_ = {}
        #: slowdown per (own demand, external demand): the contention model is a pure function
        self.slow_: dict[tuple[float, float], float] = {}

    # --- planning --------------------------------------------------------------------------
    def _plan(self, jobs: list[JobView]) -> None:
        for j in jobs:  # one profile per network for the whole run (frames repeat networks)
            if j.network not in self.profiles_:
                net, spec, k = get_network(j.network), self.spec_, self.n_groups
                self.profiles_[j.network] = _shared(
                    ("profile", id(net), id(spec), k),
                    (net, spec),
                    lambda: generate_profile(net, spec, n_groups=k),  # noqa: B023
                )
        profiles = [self.profiles_[j.network] for j in jobs]
        nets = tuple(j.network for j in jobs)
        after: tuple[tuple[int, ...], ...] = ()
        if self.swaps is not None:
            if self.current_ is None:
                raise ConfigError("haxconn policy: a frame arrived before the first swap")
            sched = self.current_.schedule
            after = self.current_.after
            if len(sched.assignment) != len(jobs) or any(
                len(r) != p.n_groups for r, p in zip(sched.assignment, profiles, strict=True)
            ):
                raise ConfigError(
                    f"haxconn policy: frame of {len(jobs)} jobs does not fit the swap at "
                    f"{self.current_.time_s} s ({len(sched.assignment)} DNNs)"
                )
        elif self.schedule is not None and not self.used_fixed_:
            sched = self.schedule
            self.used_fixed_ = True
        else:
            key = ("solve", nets)
            if key not in self.memo_:
                self.solves_ += 1
                self.memo_[key] = _shared(
                    ("solve", self.goal, self.max_transitions, nets, *map(id, profiles)),
                    tuple(profiles),
                    lambda: haxconn(
                        self._workload(nets, profiles),
                        self.goal,
                        max_transitions=self.max_transitions,
                    ).schedule,
                )
            sched = self.memo_[key]
        if sched.order is None:
            from npusched.policies.mapping.execute import execute

            okey = ("order", nets, sched.assignment)
            if okey not in self.memo_:
                self.memo_[okey] = execute(self._workload(nets, profiles), sched).schedule
            sched = self.memo_[okey]
        assert sched.order is not None
        for n, (j, p, row) in enumerate(zip(jobs, profiles, sched.assignment, strict=True)):
            deps = tuple(jobs[d].id for d in after[n]) if after else ()
            starts, demand, wait = self._rows(p, tuple(row))
            self.plans_[j.id] = _Plan(p, row, starts, deps, demand, wait)
        for a, q in enumerate(sched.order):
            self.queues_[a].extend((jobs[n].id, g) for n, g in q)

    def _rows(
        self, p: GroupProfile, row: tuple[int, ...]
    ) -> tuple[list[int], list[float], list[float]]:
        """The first layer of each group, and :class:`_Plan`'s ``demand`` and ``wait`` lists
        of profile ``p`` run on ``row`` (built once per pair; the same float operations as a
        look-up per wake)."""
        key = (id(p), row)
        hit = self.rows_.get(key)
        if hit is None:
            bw = self.spec_.memory_bandwidth_bps
            demand = [float(p.mem_bps[g, a]) / bw for g, a in enumerate(row)]
            wait = [0.0] + [
                float(p.out_s[g - 1, row[g - 1]] + p.in_s[g, row[g]]) if row[g - 1] != row[g]
                else 0.0
                for g in range(1, len(row))
            ]
            hit = self.rows_[key] = ([s for s, _ in p.bounds], demand, wait)
        return hit

    def _workload(self, nets: tuple[str, ...], profiles: list[GroupProfile]) -> Workload:
        return Workload(self.spec_, tuple(Task(n, p) for n, p in zip(nets, profiles, strict=True)))

    def _group(self, job: JobView) -> int:
        plan = self.plans_[job.id]
        step, _ = job.position
        return bisect.bisect_right(plan.starts, step) - 1
