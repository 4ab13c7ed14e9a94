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

from npusched.base import Component
from npusched.errors import ConfigError
from npusched.hardware.contention import PccsContention
from npusched.hardware.soc import get_soc
from npusched.policies.contract import Allocation, JobView
from npusched.policies.machine import MachinePolicyBase
from npusched.policies.mapping.execute import Schedule as GroupSchedule
from npusched.policies.mapping.haxconn_core import HaxconnCore

__all__ = ["HaxconnPolicy", "Swap"]


_first = itemgetter(0)


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
        self.checked_ = False
        self.own_select_ = False  # (set with the resource check, at the first decision)
        self.cap_ = []
        self.made_ = None
        self.assign_ = None
        self.model_ = PccsContention()
        self.plans_ = {}
        self.plan_of_ = {}
        self.accs_ = []
        self.free_ = []
        self.free_dec_ = []
        self.res_pos_ = []
        self.dec_ = 0
        self.profiles_ = {}
        self.queues_ = [[] for _ in self.spec_.accelerators]
        self.qgroups_ = [[] for _ in self.spec_.accelerators]
        self.qhead_ = [0 for _ in self.spec_.accelerators]
        self.used_fixed_ = False
        swaps = tuple(self.swaps) if self.swaps is not None else ()
        if any(b.time_s < a.time_s for a, b in itertools.pairwise(swaps)):
            raise ConfigError("haxconn policy: swaps must be in time order")
        self.pending_ = deque(swaps)
        self.current_ = None
        self.timers_sent_ = False
        self.ended_ = {}  # id -> (end, acc, profile)
        # memo: one solve (and one ordering) per distinct workload, i.e. per tuple of networks
        # of a frame (and per swap schedule for D-HaX-CoNN): frames repeat their networks
        self.memo_ = {}
        self.solves_ = 0
        #: per tuple of a solved frame's networks: its planning apart from the jobs' ids
        self.frames_ = {}
        #: per (profile id, row): the per-group demand and wait lists of a job's plan
        self.rows_ = {}
        #: slowdown per (own demand, external demand): the contention model is a pure function
        self.slow_ = {}
        #: the two rates per pair of demands of two jobs running at once
        self.rates2_ = {}

    def _group(self, job: JobView) -> int:
        plan = self.plans_[job.id]
        step, _ = job.position
        return bisect.bisect_right(plan.starts, step) - 1
