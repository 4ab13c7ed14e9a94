"""The discrete-event engine: resources with capacity, jobs at rates, events only at decisions.

The core
--------
A **machine** (:mod:`npusched.sim.resources`) is a set of named resources, each with a capacity
in units: PREMA's NPU (1 unit), Planaria's array (16 subarrays), an SoC's GPU and DLA. A **job**
(:class:`~npusched.sim.job.Job`) carries one request or a batch of samples; while it holds an
allocation ``(resource, units)`` it runs on the **plan variant** that allocation selects (the
profile's axes: the resource's units axis and fixed axes, plus any the policy names, e.g. a
frequency) at a **rate** (1.0, or a contention / throttling factor). Its progress is a position
``(step, fraction)`` that carries over when the variant changes.

The engine never fires an event per layer or tile. It schedules only *decision points*, each a
small handler (``_Run.handlers``):

* ``arrival`` - a request is dispatched (or a dependent request released after its predecessor
  finished plus the transfer delay);
* ``completion`` - a job reaches the end of its plan;
* ``boundary`` - a job reaches an early exit at which samples leave, or a step its policy asked
  it to stop at (``Schedule.until_step``);
* ``stop`` - a job being preempted (or re-allocated) with CHECKPOINT reached its preemption
  point (the next tile or layer boundary, found by bisecting the plan's prefix sums);
* ``preempted`` - its checkpoint save finished and its units are free;
* ``timer`` - a time a policy asked to be woken at;
* ``period`` - the policy's scheduling period expired (ticks at ``k * period_s``, only while jobs
  wait; a policy that can tell which ticks change nothing, ``quiet_periods(view, first_s)``,
  gets a tick only at the first boundary where its decision can change, and the skipped ones
  credited at once before the next event, ``on_periods(view, first_s, count)``: the decisions
  are those of ticking every period, at a cost that grows with events, not simulated time; a
  policy whose ``ticks_every_period`` is true gets every tick; a temporal policy with a no-op
  ``on_period`` and ``quiet_before(view) -> seconds``, the time before which a tick cannot change
  its decision, is not woken for a tick that would be alone in its wake before that time: the
  same results, fewer ``events``),

and finds where a job stands at any time as ``executed = executed_at_t0 + rate * (now - t0)``.

At each wake the engine pops every event at the current instant (times within
:data:`~npusched.sim.events.TIME_TOL_S` of each other) in the order completion, boundary, stop,
save-done, arrival, timer, period (ties by insertion order), calls the policy hooks
``on_complete`` / ``on_dispatch``, ``on_period`` if a tick fired, and then ``select`` once (a
policy that declares a rank or remaining ready order, FCFS, HPF or SJF, is decided on the
engine's own heap of that order, as its ``select`` would decide, without a call).

Two policy kinds
----------------
* **Temporal** policies (the default; PREMA's family) hold the whole of a one-resource machine
  and answer :class:`~npusched.policies.contract.Decision` ``(run, mechanism)``. While a
  CHECKPOINT preemption is in flight, hooks are still called but ``select`` is not: the policy
  decides again, with reason ``"preempted"``, when the save is done.
* **Machine** policies (``kind = "machine"``) see a
  :class:`~npusched.policies.contract.MachineView` and answer a
  :class:`~npusched.policies.contract.Schedule`: allocations, preemptions, merges, stops at a
  step, timers, rates. Allocations never exceed a resource's capacity: a job whose units are
  still held by jobs being stopped starts as soon as they are released (state ``starting``).

Mechanisms (PREMA Sec. IV-C):

* ``DRAIN``: nothing happens; the candidate waits and the policy re-decides at the next wake.
* ``KILL``: the job stops now; its executed work is lost (``wasted_s``) and it returns to the
  ready queue at position 0 of its plan.
* ``CHECKPOINT``: the job continues to its next preemption point, then saves
  ``plan.checkpoint_bytes_at(position)`` bytes at ``profile.memory_bandwidth_bps`` (its units
  stay busy) and returns to the ready queue keeping its progress; it pays the same time again to
  restore when it next starts. If the next preemption point is the end of the job, it simply
  completes. A CHECKPOINT requested while the victim is still restoring its own context stops
  it at once (no new save; it restores again on its next start). Positions are compared with a
  tolerance of :data:`~npusched.sim.events.TIME_TOL_S` seconds of work.
* A **re-allocation** (a running job assigned other units or another resource) is a CHECKPOINT
  followed by a start on the new allocation (its restore included). A change of plan variant on
  the same units (e.g. another frequency) is done in place after ``switch_s`` seconds.

Energy and power: every closed execution segment adds the plan's energy over the work it did
(step energies spread uniformly over their steps) to its job, the job's samples and its
resource; ``record_power=True`` keeps the pieces from which :func:`power_timeline` builds the
exact piecewise-constant power of the machine (peak and average).

Times are float64 seconds. Every event is scheduled at or after the clock, so the clock never
moves backwards.
"""

from __future__ import annotations

import bisect
import contextlib
import functools
import heapq
import math
import operator
from array import array
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from dataclasses import fields as dataclass_fields
from itertools import repeat
from operator import attrgetter, countOf, itemgetter
from sys import getrefcount
from types import FunctionType, MappingProxyType, SimpleNamespace
from typing import TYPE_CHECKING, Any, Final, NamedTuple, cast
from weakref import getweakrefcount

import numpy as np
import numpy.typing as npt
from librt.vecs import vec
from mypy_extensions import i64

import npusched.sim.records as records
from npusched.errors import ConfigError, SimulationError, UnknownNameError
from npusched.hardware.profile import ExecPlan, Profile
from npusched.policies.contract import (
    NO_JOBS,
    NOTHING,
    RUN_END,
    Allocation,
    MachineView,
    MadeSchedule,
    Mechanism,
    PowerCapError,
    ReadyHook,
    ResourceView,
    Schedule,
    SchedulerView,
    ViewFields,
    declared_mechanisms,
    declared_order,
    dynamic_choice,
    empty_wake_rule,
    hook_is_no_op,
    job_cap_w,
    lone_wake_rule,
    made_schedule,
    quiet_wake_rule,
    ready_hooks,
)
from npusched.sim.common import (
    _MAX_IDLE_TICKS,
    _QUIET_MAX,
    NAN_OBJ,
    PowerColumns,
    PowerPiece,
    Segment,
    collector_paused,
    futile_preemption,
)
from npusched.sim.events import (
    ARRIVAL,
    BOUNDARY,
    COMPLETE,
    PERIOD,
    SAVE_DONE,
    STOP,
    TIME_TOL_S,
    TIMER,
    TYPED_HEAP,
    EventQueue,
    eheapify,
    epop,
    epush,
    ereplace,
)
from npusched.sim.heaps import fpop, fpush, heap_keys, ipop, ipush, kpop, kpush
from npusched.sim.job import (
    DONE,
    PREEMPTING,
    RUNNING,
    STARTING,
    WAITING,
    Clock,
    Job,
    RowRequests,
)
from npusched.sim.levels import SwitchLevels
from npusched.sim.mechanisms import end_segment, kill, restore_end, save, save_segment, stop_point
from npusched.sim.records import float_column, int_column, write_records
from npusched.sim.resources import Machine, Resource, single_npu
from npusched.workloads.request import SHAPE_FIELDS, Request, RequestTable, number_shapes

if TYPE_CHECKING:
    import pandas as pd

    from npusched.policies.temporal.levels import TokenTable
    from npusched.policies.temporal.rrb_core import Rotation

__all__ = [
    "PREEMPTION_POINTS",
    "TIME_TOL_S",
    "PowerPiece",
    "Segment",
    "SimResult",
    "Simulator",
    "power_timeline",
]

PREEMPTION_POINTS = ("tile", "layer")

_ORDER: Final = attrgetter("order")
_MAX_SAME_INSTANT: Final = 1_000_000
# ``heapq``'s and ``bisect``'s functions as ``Final`` names: compiled, a C static each, where a
# name imported with ``from heapq import`` is a look-up in the module's dictionary at every
# call (as the job states and event kinds, ``Final`` in ``sim/job.py`` and ``sim/events.py``)
heappop: Final = heapq.heappop
heappush: Final = heapq.heappush
heapreplace: Final = heapq.heapreplace
insort: Final = bisect.insort
# ``Final``: compiled, C statics (``_apply`` reads them at every decision; a module-dictionary
# look-up per read otherwise), as are the aliases of the contract's ``NOTHING`` and ``Schedule``
_KILL: Final = Mechanism.KILL
_CHECKPOINT: Final = Mechanism.CHECKPOINT
_DRAIN: Final = Mechanism.DRAIN
_NOTHING: Final = NOTHING
_SCHEDULE: Final = Schedule
#: ``NOTHING``'s empty fields, which a compiled core's schedule shares for the fields its
#: decision leaves out (``machine_core.NO_*``): ``_apply`` tests a field against them by
#: identity before its truth (a generic ``PyObject_IsTrue`` per field compiled).
_NO_PREEMPT: Final = NOTHING.preempt
_NO_UNTIL: Final = NOTHING.until_step
_NO_MERGE: Final = NOTHING.merge
_NO_TIMERS: Final = NOTHING.timers
_NO_RATES: Final = NOTHING.rates
#: The one nan object of the records (``common.NAN_OBJ``).
_NAN_OBJ: Final[Any] = NAN_OBJ

# A SchedulerView is built at every decision; filling a plain instance's __dict__ is 2-3x faster
# than the frozen dataclass __init__. Only valid while the view has exactly these fields and a
# __dict__; otherwise the engine uses the normal constructor.
_VIEW_FIELDS = ("now", "ready", "running", "reason", "profiles")
_FAST_VIEW: Final = (
    tuple(f.name for f in dataclass_fields(SchedulerView)) == _VIEW_FIELDS
    and "__slots__" not in vars(SchedulerView)
)

# The same for the machine policies' view.
_FAST_MACHINE_VIEW: Final = (
    tuple(f.name for f in dataclass_fields(MachineView))
    == ("now", "ready", "running", "preempting", "resources", "reason", "profiles")
    and "__slots__" not in vars(MachineView)
)

#: A request shape's ``(profile, base plan, isolated seconds, network, batch, seq_in,
#: seq_out)``: its plan and the fields of its key (``seq_in`` / ``seq_out`` ``None`` where the
#: key has none), which a job of that shape takes at dispatch (no request read for them).
_Plan = tuple[Profile, ExecPlan, float, str, int, Any, Any]


def _declared_reads(policy: Any, name: str) -> tuple[str, ...] | None:
    """The fields the policy's key ``name`` reads, as ``<name>_reads`` names them in the class
    that defines the key (``None`` where that class names none: a subclass that redefines the
    key does not inherit its parent's list)."""
    for klass in type(policy).__mro__:
        if name in klass.__dict__:
            reads = klass.__dict__.get(f"{name}_reads")
            return tuple(reads) if reads is not None else None
    return None


def _packed(vals: Iterable[Any], dtype: type, m: int) -> npt.NDArray[Any]:
    """``numpy.fromiter(vals, dtype, count=m)``: a list of Python floats or ints packed as C
    doubles or int64s in one call (``records.pack_list``: the same values, a fraction of
    ``fromiter``'s generic per-element path); other sequences, or values it refuses (a float
    for an int column, an int beyond int64), through ``fromiter`` as before. Read only."""
    if isinstance(vals, list) and (dtype is np.float64 or dtype is np.int64):
        got = records.pack_list(vals, dtype)
        if got is not None:
            return got
    return np.fromiter(vals, dtype=dtype, count=m)


class KeyRow(NamedTuple):
    """The fields a request shares with its job, which a ranked policy's ``queue_key`` and
    ``rank_key`` read (:class:`~npusched.policies.temporal.mechanism.RankedPolicy`): what the
    engine calls them with for a run given a
    :class:`~npusched.workloads.request.RequestTable` (no request object is made)."""

    id: int
    arrival_s: float
    network: str
    priority: int


_Variant = tuple[tuple[str, Any], ...]


@functools.cache
def _string_dtype() -> Any:
    """The dtype pandas gives a column of Python strings when it builds a frame, if that is
    its Arrow-backed ``str`` (pandas 3), else ``None``."""
    import pandas as pd

    dt = pd.DataFrame({"s": np.array(["a"], dtype=object)})["s"].dtype
    if isinstance(dt, pd.StringDtype) and dt.storage == "pyarrow":
        return dt
    return None


def _arrow_strings(v: npt.NDArray[Any]) -> Any:
    """``v`` (an object array of ``str``) as the pandas array a frame makes of it: Arrow
    ``large_string`` (missing values null, as pandas converts them) in the default string
    dtype; ``None`` where that dtype is not Arrow's or a value is not a string (pandas then
    converts it itself)."""
    dt = _string_dtype()
    if dt is None:
        return None
    import pyarrow as pa
    from pandas.arrays import ArrowStringArray

    try:
        arr = pa.array(v, type=pa.large_string(), from_pandas=True)
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        return None
    return ArrowStringArray(arr, dtype=dt)  # type: ignore[call-arg]


@dataclass
class SimResult:
    """What a simulation produced.

    Attributes:
        columns: one entry per request, rows ordered by request id: ``id``, ``arrival_s``,
            ``first_start_s``, ``finish_s`` (nan if unfinished), ``isolated_s``, ``estimated_s``,
            ``latency_s`` (finish - arrival), ``waiting_s`` (latency - isolated - checkpoint_s,
            so it includes re-executing work lost to KILL), ``preemptions``,
            ``checkpoint_bytes`` (bytes saved), ``checkpoint_s`` (save + restore seconds charged
            to the request), ``wasted_s`` (work lost to KILL), ``energy_j`` (joules of the
            request's share of its job's execution), ``priority``, ``batch``, ``slo_s`` (nan if
            none), ``network`` (object array of str), ``seq_in``, ``seq_out`` (-1 if none),
            ``resource`` (object array: the resource it finished on, "" if unfinished). Times
            in seconds.
        makespan_s: last finish minus first arrival (seconds; 0 if nothing finished).
        busy_s: unit-seconds of execution (incl. work later lost to KILL, checkpoint saves and
            restores, variant switches) divided by capacity, summed over resources: seconds
            the accelerator was busy on a one-resource machine.
        events: decision events handled.
        layer_executions: executed plan steps summed over jobs, counting re-executions (a
            step split by a preemption counts once per piece).
        timeline: :class:`Segment` entries if the simulator recorded them.
        policy: the policy's name.
        end_s: the clock when the run stopped (seconds).
        resources: per resource name: ``busy_s`` (as above), ``energy_j`` (execution energy
            plus idle power over the run), ``capacity``.
        energy_j: total joules over all resources.
        power_columns: the :class:`PowerColumns` the loop recorded (``record_power=True``),
            else ``None``; :attr:`power` reads them as :class:`PowerPiece` entries.
    """

    columns: dict[str, npt.NDArray[Any]]
    makespan_s: float
    busy_s: float
    events: int
    layer_executions: int
    timeline: list[Segment] | None = None
    policy: str = ""
    end_s: float = 0.0
    resources: dict[str, dict[str, float]] | None = None
    energy_j: float = 0.0
    power_columns: PowerColumns | None = None
    _power: list[PowerPiece] | None = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        self._power = None  # compiled, a field without ``__init__`` gets no default

    @property
    def power(self) -> list[PowerPiece] | None:
        """:class:`PowerPiece` entries if the simulator recorded them (see
        :func:`power_timeline`), made from :attr:`power_columns` on first read; ``None``
        otherwise."""
        got = self._power
        if got is None and self.power_columns is not None:
            got = self._power = self.power_columns.pieces()
        return got

    def __len__(self) -> int:
        return len(self.columns["id"])

    def to_frame(self) -> pd.DataFrame:
        """The per-request columns as a :class:`pandas.DataFrame` (one row per request). The
        text columns (``network``, ``resource``) are handed to pandas as the Arrow strings it
        would make of them (:func:`_arrow_strings`), the same frame without its per-value
        conversion."""
        import pandas as pd

        cols = self.columns
        text = {k: _arrow_strings(v) for k, v in cols.items() if v.dtype == object}
        if text and all(v is not None for v in text.values()):
            cols = {**cols, **text}
        return pd.DataFrame(cols)

    @property
    def n_finished(self) -> int:
        return int(np.count_nonzero(~np.isnan(self.columns["finish_s"])))

    def summary(
        self,
        *,
        sla_n: Sequence[float] | None = None,
        percentiles: Sequence[float] | None = None,
    ) -> dict[str, float]:
        """The metrics ``npusched run`` writes to ``summary.json``, for this result: those of
        :func:`npusched.metrics.summarize` over the finished requests (seconds, ratios),
        ``n_requests`` / ``n_finished`` / ``n_unfinished`` (counts), ``energy_j`` (joules),
        ``peak_power_w`` (watts; nan unless ``record_power=True``) and ``avg_power_w``
        (watts, ``energy_j`` over first arrival to end). ``sla_n`` and ``percentiles``
        default to :func:`~npusched.metrics.summarize`'s."""
        from npusched.metrics import core

        frame = self.to_frame()
        finished = frame[~np.isnan(frame["finish_s"].to_numpy(dtype=np.float64))]
        out = core.summarize(
            finished,
            busy_s=self.busy_s,
            makespan_s=self.makespan_s,
            sla_n=core.SLA_N if sla_n is None else sla_n,
            percentiles=core.PERCENTILES if percentiles is None else percentiles,
        )
        out["n_requests"] = float(len(frame))
        out["n_finished"] = float(len(finished))
        out["n_unfinished"] = float(len(frame) - len(finished))
        cols = self.columns
        start = float(np.min(cols["arrival_s"])) if len(cols["arrival_s"]) else 0.0
        span = self.end_s - start
        peak: Any = _NAN_OBJ  # the one nan object (see ``_NAN_OBJ``): summaries compare equal
        if self.power_columns is not None:
            _, watts = self.power_timeline()
            peak = float(watts.max()) if watts.size else 0.0
        out["energy_j"] = float(self.energy_j)
        out["peak_power_w"] = peak
        out["avg_power_w"] = float(self.energy_j) / span if span > 0 else _NAN_OBJ
        return out

    def power_timeline(
        self, resource: str | None = None
    ) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
        """``(times_s, watts)``: the machine's (or one resource's) dynamic power, piecewise
        constant, ``watts[i]`` holding on ``[times_s[i], times_s[i+1])``. Needs
        ``record_power=True``."""
        cols = self.power_columns
        if cols is None:
            raise ConfigError("power timeline not recorded; run with record_power=True")
        return power_timeline(cols if resource is None else cols.only(resource))


def power_timeline(
    pieces: Sequence[PowerPiece] | PowerColumns,
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """The exact summed power of ``pieces`` as breakpoints ``times_s`` and the watts that hold
    from each breakpoint to the next (the last entry is 0 W after everything ends): see
    :func:`npusched.metrics.power.piece_power_timeline`, which computes it (imported here
    lazily: the metrics package imports pandas)."""
    from npusched.metrics.power import piece_power_timeline

    return piece_power_timeline(pieces)


class Simulator:
    """Simulates requests on a machine under a policy.

    Args:
        profiles: compiled profiles by ``Request.network``.
        policy: a temporal policy (:class:`~npusched.policies.base.TemporalPolicy`) or a
            machine policy (``kind = "machine"``); reset before every run.
        machine: the resources (default: one NPU of one unit). A temporal policy needs a
            machine of exactly one resource and its jobs hold all of it.
        preemption_point: where CHECKPOINT stops the victim: ``"tile"`` (end of the current
            tile, PREMA's GEMM_OP granularity) or ``"layer"`` (end of the current plan step).
        checkpoint_cost: model checkpoint save and restore time as bytes / memory bandwidth
            (``False``: preemption is free, bytes are still recorded).
        estimator: ``job.estimated_s`` in seconds from ``(request, profile)``; default the true
            isolated latency (an oracle predictor). One with a true ``shape_only`` attribute
            reads only the request's network, batch, seq_in and seq_out (PREMA's predictor and
            the oracle are marked): the engine calls it once per request shape.
        record_timeline: keep :class:`Segment` entries in the result.
        record_power: keep :class:`PowerPiece` entries (for :func:`power_timeline`).
        switch_s: seconds a job pauses when its plan variant changes on the same units (e.g. a
            frequency switch: 20 us, the DFS paper's interrupt + PLL switch).
        power: a power policy (``derive(plans, cap_w, *, idle_share) -> ExecPlan``, plus
            ``switch_cost(prev, nxt)`` and ``level_voltages(freqs)``) that chooses a frequency
            per step under ``power_cap_w``; the profiles need a ``frequency_hz`` axis. The
            engine charges ``switch_cost`` when a job starts on units left at another clock or
            voltage (see ``_Run._level_switch``).
        power_cap_w: the machine's power cap in watts, shared by
            :func:`npusched.policies.power.job_cap_w`: a job on ``u`` of a resource's ``U``
            units gets ``cap * u / U``, its plan's power including its units' share of the
            resource's ``idle_power_w``, so the running jobs plus the idle units never draw
            more than the cap.
        skip_periods: let a periodic policy that can tell which period ticks change nothing
            (``quiet_periods``) and credit skipped ticks at once (``on_periods``) skip them; the
            decisions are those of ticking every period (``False``: tick every period).
        fast_path: no effect (kept so that code passing it still runs). Until the
            twenty-eighth round it chose between two engine loops that gave the same results,
            the column loop (``sim/columns.py``, deleted) and the general loop (``False``);
            there is one loop now.

    The simulator holds no run state: ``run`` may be called repeatedly (each run resets the
    policy) and gives identical results for identical inputs.
    """

    def __init__(
        self,
        profiles: Mapping[str, Profile],
        policy: Any,
        *,
        machine: Machine | None = None,
        preemption_point: str = "tile",
        checkpoint_cost: bool = True,
        estimator: Callable[[Request, Profile], float] | None = None,
        record_timeline: bool = False,
        record_power: bool = False,
        switch_s: float = 20e-6,
        power: Any = None,
        power_cap_w: float | None = None,
        skip_periods: bool = True,
        fast_path: bool = True,
    ) -> None:
        if not callable(getattr(policy, "select", None)):
            raise ConfigError(
                f"policy must be a TemporalPolicy or machine policy object (e.g. POLICIES.create('NP-FCFS')), "
                f"got {type(policy).__name__}"
            )
        if preemption_point not in PREEMPTION_POINTS:
            raise ConfigError(
                f"preemption_point={preemption_point!r}; allowed: {', '.join(PREEMPTION_POINTS)}"
            )
        machine = single_npu() if machine is None else machine
        if not isinstance(machine, Machine):
            raise ConfigError(f"machine must be a Machine, got {type(machine).__name__}")
        kind = getattr(policy, "kind", "temporal")
        if kind not in ("temporal", "machine"):
            raise ConfigError(f"policy kind={kind!r}; allowed: temporal, machine")
        if kind == "temporal" and len(machine.resources) != 1:
            raise ConfigError(
                f"a temporal policy ({getattr(policy, 'name', type(policy).__name__)}) runs on a "
                f"one-resource machine; this machine has {len(machine.resources)} "
                f"({', '.join(machine.names)})"
            )
        if not (switch_s >= 0.0 and math.isfinite(switch_s)):
            raise ConfigError(f"switch_s={switch_s!r}; must be a finite number of seconds >= 0")
        if power is not None and not callable(getattr(power, "derive", None)):
            raise ConfigError(f"power must be a power policy, got {type(power).__name__}")
        if power is not None and not (power_cap_w is not None and power_cap_w > 0.0):
            raise ConfigError(f"power_cap_w={power_cap_w!r}; a power policy needs a cap > 0 W")
        self.profiles = profiles
        self.policy = policy
        self.machine = machine
        self.preemption_point = preemption_point
        self.checkpoint_cost = bool(checkpoint_cost)
        self.estimator = estimator
        self.record_timeline = bool(record_timeline)
        self.record_power = bool(record_power)
        self.switch_s = float(switch_s)
        self.power = power
        self.power_cap_w = power_cap_w
        self.skip_periods = bool(skip_periods)
        self.fast_path = bool(fast_path)  # (read by nothing: one loop, see the docstring)

    def run(
        self,
        requests: Sequence[Request],
        *,
        until: float | None = None,
        progress: Callable[[int], None] | None = None,
    ) -> SimResult:
        """Simulate ``requests`` (any order; dispatched by ``(arrival_s, id)``).

        Args:
            requests: the workload; ids must be unique. A list of requests, or a
                :class:`~npusched.workloads.request.RequestTable` (the workload's columns,
                e.g. :func:`~npusched.workloads.prema_table`: read as they are, the requests
                made only where the general loop or a policy needs them); the same result.
            until: stop after the last event at or before this time (seconds); unfinished
                requests get ``finish_s = nan`` and partial records.
            progress: called with the number of finished requests about every 1% and once at
                the end (never twice with the same count).

        Returns:
            A :class:`SimResult`.

        Raises:
            SimulationError: an invalid policy decision (a job not in the ready queue, an
                allocation beyond a resource's capacity, an unknown mechanism), a policy that
                leaves the machine idle with jobs waiting forever, duplicate request ids, a
                dependency on an unknown request, or an arrival time that is not finite and
                >= 0.
            UnknownNameError: a request's network has no profile.
        """
        if until is not None and not until >= 0.0:
            raise ConfigError(f"until must be a time >= 0 seconds, got {until}")
        # The run makes no reference cycles (a test checks): the collector is held off.
        with collector_paused():
            run = _Run(self, requests, until, progress)
            try:
                return run.execute()
            finally:
                # The handlers (bound methods of ``run``) are its one reference cycle: broken,
                # the run's state (every request and power piece) is freed when the run
                # returns, not by a later full pass of the collector.
                run.handlers.clear()
                for release in RUN_END:  # what policies' cores keep for reuse (a schedule)
                    release()


#: Most entries of ``_Run.resolved_by_id`` before it is cleared.
_RESOLVED_BY_ID_MAX: Final = 1024
#: Most plan variants ``_Run._plan_for`` keeps plans for by shape number (``_var_seen``; a
#: variant past them is looked up in ``plan_cache`` by its key each time).
_VARIANTS_SEEN_MAX: Final = 64
#: Most allocations ``_Run._assign_one`` keeps for its identity scan (``_alloc_seen``): the
#: built-in machine policies use one per resource, Planaria one per unit count (16 on its
#: array; twenty-second round).
_ALLOC_SEEN_MAX: Final = 16
#: Process-wide memo of ``_Run._plan_core``'s plans without a power policy (twenty-first
#: round): per ``(id(profile), batch, seq_in, seq_out, variant, None)`` the plan and its profile.
#: Each run looked its plans up anew (``prof.plan`` with the variant as keywords, about 10,000
#: instructions a look-up compiled, the first time each run meets a shape on a variant); a
#: profile is immutable and returns its cached plan for the same arguments, so a memoised plan
#: is the one the look-up returns. The key holds the profile's ``id`` and the entry keeps the
#: profile alive (an id is never reused while its entry exists; the entry is checked by
#: identity). Cleared when it holds :data:`_SHARED_PLANS_MAX` entries.
_SHARED_PLANS: Final[dict[tuple[Any, ...], tuple[ExecPlan, Any]]] = {}
_SHARED_PLANS_MAX: Final = 4096
#: Process-wide memo of ``_Run._base_plan``'s fastest plans of a profile with axes (twenty-third
#: round): per ``(id(profile), batch, seq_in, seq_out)`` the plan and its profile, checked and
#: cleared as :data:`_SHARED_PLANS` (each run scanned every variant of each of its request
#: shapes with a keyword look-up, ``prof.plan(..., **variant)``, about 300 instructions per
#: event of a warm Planaria run compiled).
_SHARED_BASE: Final[dict[tuple[Any, ...], tuple[ExecPlan, Any]]] = {}
_INF: Final = math.inf
#: ``sys.getrefcount`` and ``weakref.getweakrefcount`` for the machine view's check at every
#: decision (``_Run._machine_view``): compiled, a ``Final`` alias is a C static, where an
#: imported name is a look-up in the module's dictionary at each call.
_GETREFCOUNT: Final = getrefcount
_GETWEAKREFCOUNT: Final = getweakrefcount
#: What the machine view's native fields hold as lists between decisions (read only).
_NO_VIEW_JOBS: Final[list[Any]] = NO_JOBS
#: ``_apply``'s list of late starts while it has none (never appended to: read only).
_NO_JOBS: Final[list[Job]] = []
#: ``_h_boundary``'s leaving and staying rows of a plan without exits (none leave; read only).
_NO_ROWS: Final[list[int]] = []


#: The event heap's size above which ``execute`` moves its superseded completions out
#: (``_Run._compact_heap``; then again at twice the size it left).
_COMPACT_MIN: Final = 8


def _before(t: float, kind: int, seq: int, top: tuple[Any, ...]) -> bool:
    """Whether the event ``(t, kind, seq)`` kept apart from the heap (the machine event slot's,
    the scheduled tick's) comes before the heap's ``top`` event, compared as the heap compares
    them (sequence numbers are unique)."""
    x = top[0]
    if type(x) is float:
        th: float = x
        if t != th:
            return t < th
    elif t != x:
        return bool(t < x)
    k: int = top[1]
    if kind != k:
        return kind < k
    s: int = top[2]
    return seq < s


def _next_boundary(now: float, period: float) -> int:
    """Index ``k`` of the first period boundary ``k * period`` after ``now``. A boundary within
    :data:`TIME_TOL_S` of ``now`` is ``now`` itself (handled, or not due, at this instant):
    without the tolerance, ``floor(now / period)`` rounding down at a boundary scheduled a
    second tick 1 ulp after the first, and a token policy credited that period twice."""
    k = math.floor(now / period) + 1
    while k * period <= now + TIME_TOL_S:
        k += 1
    return k


#: Compiled (a module function is then a builtin, not a ``FunctionType``): the wake's loop
#: calls the completion, stop and save handlers directly (see ``execute``).
_DIRECT_HANDLERS: Final = not isinstance(_next_boundary, FunctionType)


#: The loop's record columns (``_Run.rec_*``, ``vec``s) and their result dtypes, in the order
#: ``_Run._write_records`` copies them.
_RECORDS: Final = (
    ("rec_est", np.float64),
    ("rec_preempt", np.int64),
    ("rec_cbytes", np.int64),
    ("rec_cs", np.float64),
    ("rec_wasted", np.float64),
    ("rec_first", np.float64),
    ("rec_finish", np.float64),
    ("rec_energy", np.float64),
)


def _clamp_tiny_negative(x: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """``x`` with values in ``(-TIME_TOL_S, 0)`` set to 0 (NaN stays NaN)."""
    return np.where((x < 0.0) & (x > -TIME_TOL_S), 0.0, x)


class _Res:
    """A resource's run state."""

    __slots__ = ("busy", "capacity", "energy", "free", "jobs", "name", "spec")

    def __init__(self, spec: Resource) -> None:
        self.spec = spec
        self.name = spec.name
        self.capacity = spec.capacity
        self.free = spec.capacity
        self.jobs: list[Job] = []  # holding units: running, preempting (in allocation order)
        self.busy = 0.0  # unit-seconds
        self.energy = 0.0


#: A start on a resource, kept until the job releases its units (``_Run._level_switch``): the
#: job, its ``wasted_s`` and work done when it started and the units' level before it.
_Holder = tuple[Job, float, float, Any]


class _ShapeTable(dict[tuple[Any, ...], int]):
    """Request shapes ``(network, batch[, seq_in, seq_out])`` numbered in order of first
    look-up; a new shape's ``(profile, base plan, isolated seconds)`` is made at its first
    look-up and kept in :attr:`plans` by number."""

    def __init__(self, run: _Run, profiles: Mapping[str, Profile]) -> None:
        super().__init__()
        self.run = run
        self.profiles = profiles
        self.plans: list[_Plan] = []

    def __missing__(self, key: tuple[Any, ...]) -> int:
        prof = self.profiles.get(key[0])
        if prof is None:
            raise UnknownNameError("profile (request network)", key[0], self.profiles)
        seq_in, seq_out = (key[2], key[3]) if len(key) == 4 else (None, None)
        plan = self.run._base_plan(prof, key[1], seq_in, seq_out)
        code = self[key] = len(self.plans)
        self.plans.append((prof, plan, plan.total_s, key[0], key[1], seq_in, seq_out))
        return code


def _as_list(col: Sequence[Any]) -> list[Any]:
    """``col`` as a list (itself where it is one: a table's columns are)."""
    return col if type(col) is list else list(col)


class _Run:
    """State of one simulation run (the :class:`Simulator` itself stays stateless).

    The hot paths (arrival, start, completion) are written for speed: plain attributes, local
    variables, no per-step work; the rarer paths are separate methods.
    """

    #: Clock / voltage levels per resource under a power policy (created on first use), and
    #: per resource the starts whose jobs may still hold units (``_level_switch``).
    _levels: SwitchLevels | None = None
    _holders: list[list[_Holder]] | None = None
    #: The simulator's power policy (``sim.power``, read by ``_start``).
    power_policy: Any = None

    def __init__(
        self,
        sim: Simulator,
        requests: Sequence[Request],
        until: float | None,
        progress: Callable[[int], None] | None,
    ) -> None:
        self.sim = sim
        self.policy = sim.policy
        self.temporal = getattr(sim.policy, "kind", "temporal") == "temporal"
        self.until = math.inf if until is None else float(until)
        self.progress = progress
        self.ckpt_cost = sim.checkpoint_cost
        self.layer_point = sim.preemption_point == "layer"
        self.clock = Clock()
        self.queue = EventQueue()
        self.ready: list[Job] = []
        #: Each waiting job's place in ``ready`` by dispatch order, where the list is kept in
        #: no particular order (``None``: it is kept in dispatch order). The general loop keeps
        #: it so where the ready queue is read only through the engine's token table (no view
        #: at all) or through a declared round-robin order's own methods (they read its
        #: length, or sort it): a job leaves it in one step (the last job takes its place)
        #: instead of by a scan, which made those runs' cost per event grow with the queue.
        self.ready_pos: list[int] | None = None
        #: A declared order's waiting jobs (FCFS, HPF, SJF: ``execute``): a heap of their
        #: entries (``sim/heaps.py``, native calls compiled): ``rank * n + k`` for the rank order (``heap_keys``;
        #: ``ipush`` / ``ipop``), the dispatch index ``k`` ordered as ``(skey[k], k)`` for the
        #: remaining order (``srpt``; ``kpush`` / ``kpop``); ``None`` where the policy decides
        #: through ``select``.
        self.rank_heap: list[Any] | None = None
        #: The heap's entries are the remaining order's (SJF).
        self.srpt = False
        #: The remaining order's key by dispatch index: a waiting job's remaining estimate,
        #: clamped at 0, as it entered the queue (its work does not change while it waits).
        self.skey: list[float] = []
        #: Each request's heap entry, by dispatch order (the rank order).
        self.rank_entry: list[int] = []
        #: A ``shape_only`` estimator's seconds by dispatch order (``estimates``: one call per
        #: request shape, no request made for it), set by the general loop; ``None``: the
        #: estimator is called with each request as it is dispatched.
        self.est_k: list[float] | None = None
        #: Each dispatched job by dispatch order (with ``rank_heap``: the heap's entries'
        #: jobs).
        self.job_of: list[Job | None] = []
        # The policy's ready-queue hooks (``contract.ready_hooks``; the general loop sets them).
        self.on_enter: ReadyHook | None = None
        self.on_leave: ReadyHook | None = None
        #: A token order's Algorithm 2 table, the engine's own for the run (``execute``: the
        #: policy's ``token_table``), indexed by dispatch order:
        #: its steps are called natively, without views or the policy's hooks.
        self.tokens: TokenTable | None = None
        #: A declared round-robin order's rotation, the engine's own for the run (``execute``:
        #: the policy's ``rotation`` of the run's models): the
        #: waiting jobs by model, by dispatch index.
        self.rot: Rotation | None = None
        self.res = [_Res(r) for r in sim.machine.resources]
        #: The machine's one resource (``None`` with several): the machine view's short path.
        self.res1: _Res | None = self.res[0] if len(self.res) == 1 else None
        self.pending: list[tuple[Job, int, int, _Variant, Allocation]] = []
        #: Jobs with a re-allocation in flight (``_next_alloc`` set).
        self.n_moving = 0
        #: The machine view's resource views per free units (shared, read-only): keyed by
        #: every resource's free units in one integer (``_machine_view``).
        self._res_views: dict[int, Mapping[str, ResourceView]] = {}
        #: The last machine view's key of ``_res_views`` and its resource views.
        self._res_key = -1
        self._res_last: Mapping[str, ResourceView] | None = None
        #: ``_res_views``' free units as lists in machine order, by the same key (the view
        #: fields' ``free``, which the compiled cores read natively).
        self._res_free: dict[int, list[int]] = {}
        #: Jobs in state PREEMPTING (holding units while they stop and save): while there are
        #: none, the machine view's running jobs are the resources' holders as they stand.
        self.n_preempting = 0
        # The machine view, kept and refilled at every decision while nothing but the engine
        # refers to it (see ``_machine_view``): its attribute dict, and the references the two
        # counts of ``_view_refs`` see when only the engine holds them.
        #: This thread's record of the schedule ``make_schedule`` made last (the run's
        #: decisions are made in this thread): ``_apply`` reads its typed fields.
        self._made: MadeSchedule = made_schedule()
        self._view: MachineView = object.__new__(MachineView)
        self._view_dict: dict[str, Any] = self._view.__dict__
        #: The kept view's fields as native attributes, for the compiled policy cores (written
        #: with the view; it refers to the view, counted in ``_view_refs0`` as the engine's).
        self._vf = ViewFields()
        self._vf.view = self._view
        self._view_refs0 = self._view_refs()
        # What the kept view holds of the fields that often stay the same object from one
        # decision to the next (the ready list, the resource views, the reason, the profiles):
        # a refill writes only those that changed (``None``: not written yet).
        self._held_ready: object = None
        self._held_resources: object = None
        self._held_reason: object = None
        self._held_profiles: object = None
        # The kept view's ``running`` and ``preempting`` lists: refilled in place while nothing
        # but the view's dict and these two attributes refers to them (``_held_lists_refs``;
        # the references counted here, with a scratch dict in the view's place).
        self._held_running: list[Job] | None = []
        self._held_preempting: list[Job] | None = []
        scratch = {"running": self._held_running, "preempting": self._held_preempting}
        self._running_refs0 = self._running_refs()
        self._preempting_refs0 = self._preempting_refs()
        scratch.clear()  # (read after the counts: compiled, a local dies at its last use)
        self._held_running = self._held_preempting = None
        self.running: Job | None = None  # temporal: the job holding the resource
        self.preempting: Job | None = None  # temporal: the job being stopped
        self.layer_exec = 0
        self.events = 0
        self.n_finished = 0
        self.reported = 0  # the finished count last passed to ``progress``
        self.timeline: list[Segment] | None = [] if sim.record_timeline else None
        self.power: PowerColumns | None = PowerColumns() if sim.record_power else None
        self.tick_pending = False
        # Period skipping (policies with ``quiet_periods`` / ``on_periods``): boundaries are
        # ``k * period``; ``skip_k0`` is the first skipped boundary index (None: none skipped),
        # ``sched_k`` the index of the scheduled tick, ``tick_epoch`` invalidates older ticks.
        self.skip_k0: int | None = None
        self.sched_k = -1
        self.tick_epoch = 0
        #: The scheduled tick (``_plan_tick``) kept apart from the event heap: its time
        #: (``inf``: none) and sequence number (its place among events of the same time and
        #: kind); a tick it replaces goes to ``stale_t`` (a heap of times: a superseded tick
        #: still opens a wake at its time, where the period catch-up credits, and does nothing
        #: else), so the event heap does not grow with the re-plans (twenty-seventh round).
        self.tick_t = math.inf
        self.tick_seq = 0
        self.stale_t: list[Any] = []
        #: The times of superseded completions and boundaries (``COMPLETE`` / ``BOUNDARY``
        #: events whose job's epoch moved on: a preemption, a rate change), moved out of the
        #: event heap when it grows (``_compact_heap``): each still opens a wake at its time,
        #: and does nothing else.
        self.stale_c: list[Any] = []
        #: The machine event slot (twenty-eighth round): one machine event (``COMPLETE``,
        #: ``BOUNDARY``, ``STOP``, ``SAVE_DONE``) kept apart from the event heap as fields, its
        #: time (``inf``: empty), kind, sequence number, job and epoch: a temporal run has one
        #: such event live at a time (the running or saving job's), so it is never a tuple
        #: pushed and popped. ``_push_event`` fills it where it is empty or holds a superseded
        #: completion or boundary (whose time goes to ``stale_c``, keeping its wake); else the
        #: event goes to the heap. The loop pops the slot or the heap's top, whichever comes
        #: first as the heap would order them (time, kind, sequence), so the events are handled
        #: in the same order as with every event in the heap.
        self.ev_t = math.inf
        self.ev_kind = 0
        self.ev_seq = 0
        self.ev_job: Job | None = None
        self.ev_epoch = 0
        self.idle_periods = 0
        self.futile = 0  # preemptions in a row that made no progress (_MAX_FUTILE_PREEMPTIONS)
        self.completed: list[Job] = []
        self.released: list[Job] = []
        self.res_name_of: dict[int, str] = {}
        self.plan_cache: dict[tuple[Any, ...], ExecPlan] = {}
        # A valid allocation's (resource index, units, variant), by allocation.
        self.resolved: dict[Allocation, tuple[int, int, _Variant]] = {}
        #: ``resolved`` by the allocation object's id (a policy that reuses its allocations
        #: skips the dataclass hash), bounded by :data:`_RESOLVED_BY_ID_MAX`.
        self.resolved_by_id: dict[int, tuple[Allocation, tuple[int, int, _Variant]]] = {}
        #: Allocations ``_assign_one`` found in ``resolved_by_id`` and their resolutions, the
        #: first :data:`_ALLOC_SEEN_MAX` (an allocation's resolution never changes: it is
        #: immutable, and ``resolved`` keeps it too).
        self._alloc_seen: list[object] = []
        self._alloc_hit: list[tuple[int, int, _Variant]] = []
        #: ``_plan_for``'s plans without a power policy: the variants seen (the first
        #: :data:`_VARIANTS_SEEN_MAX`, scanned by identity), per variant its plans by the
        #: job's request shape number (``Job._shape``, numbered in ``_shape_of`` by
        #: ``(id(profile), batch, seq_in, seq_out)``).
        self._var_seen: list[object] = []
        self._var_plans: list[list[ExecPlan | None]] = []
        self._shape_of: dict[tuple[Any, ...], int] = {}
        # Handlers by event kind; each returns the wake reason it contributes ("" for none).
        self.handlers: dict[int, Callable[[Job, int], str]] = {
            COMPLETE: self._h_complete,
            BOUNDARY: self._h_boundary,
            STOP: self._h_stop,
            SAVE_DONE: self._h_save_done,
            ARRIVAL: self._h_release,
            TIMER: self._h_timer,
        }
        # Set-up allocates a few objects per request and no reference cycles (it runs inside
        # ``Simulator.run``'s collector pause).
        self._prepare(requests)

    # --- set-up -----------------------------------------------------------------------------
    def _prepare(self, requests: Sequence[Request]) -> None:
        profiles = self.sim.profiles
        n = len(requests)
        # One path for both inputs: the requests' fields read as columns. A RequestTable
        # (``run_config``'s workloads) gives its own lists and no request object is made
        # unless a policy or estimator needs one (:attr:`arrivals`); a list of requests is
        # read field by field (one C-level pass each; a list is made only where one is kept).
        table = requests if isinstance(requests, RequestTable) else None
        field: Callable[[str], Iterable[Any]]
        if table is not None:
            field = table.column

            def kept(name: str) -> Sequence[Any]:
                return table.column(name)

            def all_none(name: str) -> bool:
                return table.column(name).count(None) == n
        else:

            def field(name: str) -> Iterable[Any]:
                return map(attrgetter(name), requests)

            def kept(name: str) -> Sequence[Any]:
                return list(field(name))

            def all_none(name: str) -> bool:
                return countOf(field(name), None) == n

        col = {f: kept(f) for f in ("priority", "slo_s")}
        id_col = field("id")
        ids = (
            # a table's ids are a ``range`` (no value converted one at a time)
            np.arange(id_col.start, id_col.stop, id_col.step, dtype=np.int64)
            if isinstance(id_col, range)
            else np.fromiter(id_col, dtype=np.int64, count=n)
        )
        # ids in increasing order (the generators' tables, most traces): the sorts below are
        # the identity, so they are not made
        ids_up = bool((ids[1:] > ids[:-1]).all())
        if ids_up:
            by_id = row_of = np.arange(n)
        else:
            by_id = np.argsort(ids, kind="stable")
            sorted_ids = ids[by_id]
            dup_mask = sorted_ids[1:] == sorted_ids[:-1]
            if dup_mask.any():
                dup = int(sorted_ids[1:][dup_mask][0])
                raise SimulationError(f"request ids must be unique; id {dup} appears twice")
            row_of = np.empty(n, dtype=np.int64)
            row_of[by_id] = np.arange(n)
        arr_col = field("arrival_s")
        # a table's list of floats packed as C doubles in one call (the same values)
        arrivals = _packed(arr_col, np.float64, n)
        bad_mask = ~np.isfinite(arrivals) | (arrivals < 0.0)
        if bad_mask.any():
            bad = int(np.flatnonzero(bad_mask)[0])
            raise SimulationError(
                f"request {int(ids[bad])}: arrival_s={arrivals[bad]!r}; must be finite and >= 0"
            )
        # Dependent requests are held back until their predecessor finishes.
        self.dependents: dict[int, list[int]] = {}
        held = np.zeros(n, dtype=bool)
        if not all_none("depends_on"):
            known = set(ids.tolist())
            deps = zip(field("id"), field("depends_on"), field("transfer_s"), strict=True)
            for i, (rid, d, transfer) in enumerate(deps):
                if d is None:
                    continue
                if d not in known or d == rid:
                    raise SimulationError(
                        f"request {rid}: depends_on={d!r} is not another request of the workload"
                    )
                if not (transfer >= 0.0 and math.isfinite(transfer)):
                    raise SimulationError(
                        f"request {rid}: transfer_s={transfer!r}; must be finite and >= 0"
                    )
                self.dependents.setdefault(d, []).append(i)
                held[i] = True
        # Dispatch order: by arrival time, ties by id (increasing ids with arrivals that never
        # decrease: the order they come in, no sort made).
        if ids_up and bool((arrivals[1:] >= arrivals[:-1]).all()):
            order_a = np.arange(n)
        else:
            order_a = np.lexsort((ids, arrivals))
        self.order_of = np.empty(n, dtype=np.int64)
        self.order_of[order_a] = np.arange(n)
        in_order = bool(n) and bool((order_a == np.arange(n)).all())
        # The requests in dispatch order (``arrivals``): a list of requests is kept as it is
        # (generators emit arrivals in order: then a copy); a table's requests are made only
        # if something asks for them (the cached ``arrivals``).
        self._disp_order: list[int] | None = None if in_order else order_a.tolist()
        self._table = table
        #: ``arrivals`` once made (a list input: here; a table: on first use).
        self._arrivals: list[Request] | None = None
        if table is None:
            self._arrivals = (
                list(requests) if in_order else [requests[i] for i in order_a.tolist()]
            )
        self.arrival_rows: Sequence[int] = array("q", row_of[order_a].tobytes())
        self.held = bytearray(held[order_a].tobytes())  # 1 byte a request: held back or not
        self.by_input = requests
        # The arrival times in dispatch order (what the loop compares its clock with: made by
        # ``execute``).
        self._order_a = order_a
        self.arr_disp: list[float] = []
        # The fields a job takes at dispatch that neither its shape (``req_plans``) nor its
        # arrival time gives, by input index, for either input (no request read for them: a
        # list's fields are read once per field here, not once per job): its priority and
        # SLO, and its id where the ids are not the input's indices ``0..n-1`` (a table's
        # are). Lists: an item read compiled is a native list read, where a generic
        # sequence's costs a ``PyObject_GetItem`` and a boxed index.
        self._pri_in: list[Any] = _as_list(col["priority"])
        self._slo_in: list[Any] = _as_list(col["slo_s"])
        ids_are_rows = ids_up and (n == 0 or (int(ids[0]) == 0 and int(ids[-1]) == n - 1))
        self._ids_in: list[int] | None = None if ids_are_rows else ids.tolist()
        # The requests by result row, made where a policy reads ``job.request`` / ``samples``:
        # a table's on first read (``RequestTable[i]``, equal to its list's), a list's its own.
        src_seq = requests

        def make(row: int) -> Request:
            return src_seq[row if ids_up else int(by_id[row])]

        def arrival_by_row() -> list[float]:
            return arrivals[by_id].tolist()

        self.row_requests = RowRequests(make, arrival_by_row)
        # Per-sample exits and batches by result row (a batch's samples leave at their exits;
        # ``None`` where no request has an exit).
        self.exit_row: list[Any] | None = None
        self.batch_row: list[int] = []

        # (profile, plan, isolated seconds) per distinct request shape ``(network, batch, seq_in,
        # seq_out)``, numbered in order of first appearance (the plan made then), and each
        # request's shape number (``workloads.request.number_shapes``: one pass of look-ups, the
        # shape tuples made one at a time, where a list of 1e6 of them would cost 70 MB). Without
        # sequence lengths the key is ``(network, batch)``.
        variant0 = self.res[0].spec.variant(self.res[0].capacity) if self.temporal else {}
        self.variant0: _Variant = tuple(sorted(variant0.items()))
        # The shapes numbered in order of first appearance (a table's own numbering, made once
        # per table or by the generator from its draws' codes; else one look-up per request),
        # then a plan per distinct shape, made in that order.
        distinct, code_in = (
            table.shapes()
            if table is not None
            else number_shapes(*(kept(f) for f in SHAPE_FIELDS))
        )
        shapes = _ShapeTable(self, profiles)
        for key in distinct:
            shapes[key]
        shape_plans = self.shape_plans = shapes.plans  # distinct, in order of first appearance
        code_disp = code_in[order_a]
        self.req_plans: list[_Plan] = list(map(shape_plans.__getitem__, code_disp.tolist()))
        # For :meth:`estimates`: each request's shape in dispatch order, and the first request
        # of each shape (input index).
        self._code_disp = code_disp
        self._code_in = code_in
        iso_in = np.asarray([p[2] for p in shape_plans], dtype=np.float64)[code_in]
        if not all_none("exit"):
            ex_in = kept("exit")
            rows_in = by_id.tolist()
            self.exit_row = [ex_in[i] for i in rows_in]
            batch_in = kept("batch")
            self.batch_row = [batch_in[i] for i in rows_in]
            for i, ex in enumerate(ex_in):
                if ex is None:
                    continue
                p = shape_plans[code_in[i]][1]
                if 0 <= ex < len(p.exits):
                    # A sample that leaves at an exit: its latency alone is up to that exit.
                    iso_in[i] = float(p.cum_s[p.exits[ex]])
        self.col_iso = iso_in[by_id]
        # What the result's per-request columns need (see ``_result``): the fields read per
        # request, and the shape fields per shape with each request's shape by result row.
        shape_keys = list(shapes)
        per_shape = {
            f: [k[j] if j < len(k) else None for k in shape_keys]
            for j, f in enumerate(("network", "batch", "seq_in", "seq_out"))
        }
        self.static = (
            {"priority": col["priority"], "slo_s": col["slo_s"]},
            per_shape,
            code_in[by_id],
            by_id,
            ids,
            arrivals,
        )
        # Per-request records by result row: the loop writes them (``_record``,
        # ``_add_energy``, ``_dispatch``'s estimate) and hands them to the records' writer
        # (``_write_records``). Each is a ``vec`` (``librt.vecs``, mypyc's native array: packed
        # C doubles or int64s, 8 bytes a request), written unboxed compiled at any run length
        # and read by NumPy through its buffer without a conversion per value (thirty-first
        # round; until then lists of boxed floats up to 2**18 requests, packed by ``struct``
        # after the loop, and ``array`` columns written through ``memoryview``s beyond). A
        # count or a time that stays zero is not written (the zero filled in here is the value
        # it would write).
        self.rec_est: vec[float] = float_column(n, math.nan)
        self.rec_first: vec[float] = float_column(n, math.nan)
        self.rec_finish: vec[float] = float_column(n, math.nan)
        self.rec_preempt: vec[i64] = int_column(n)
        self.rec_cbytes: vec[i64] = int_column(n)
        self.rec_cs: vec[float] = float_column(n, 0.0)
        self.rec_wasted: vec[float] = float_column(n, 0.0)
        self.rec_energy: vec[float] = float_column(n, 0.0)
        #: The result's columns by row (NumPy arrays), which the writer makes from the
        #: records (``_write_records``) and ``_result`` takes; ``None`` until then.
        self.col_est: Any = None
        self.col_first: Any = None
        self.col_finish: Any = None
        self.col_preempt: Any = None
        self.col_cbytes: Any = None
        self.col_cs: Any = None
        self.col_wasted: Any = None
        self.col_energy: Any = None
        #: Each row's resource name (``_record``; a list typed as one, written natively
        #: compiled), the records' ``col_res`` until the writer makes it an array.
        self.res_names: list[str] = [""] * n
        self.col_res: list[str] | npt.NDArray[Any] = self.res_names
        #: The general loop's per-job reads by dispatch index (``execute`` fills them): each
        #: request's result row (``arrival_rows`` as a list, read natively compiled) and its
        #: profile's memory bandwidth once read (``_bandwidth``).
        self.rows_k: list[int] = []
        self.bw_k: list[float] = []

    @property
    def arrivals(self) -> list[Request]:
        """The requests in dispatch order. A list input sets it in ``__init__``; for a
        :class:`~npusched.workloads.request.RequestTable` they are made on first use and kept
        (the general loop, a policy key that reads more than the key rows, an estimator that
        reads more than the shape). A plain attribute and a property, not a
        ``cached_property``: the class compiles to a native class, which has no ``__dict__``."""
        got = self._arrivals
        if got is None:
            reqs = self._table.requests() if self._table is not None else []
            order = self._disp_order
            got = list(reqs) if order is None else list(map(reqs.__getitem__, order))
            self._arrivals = got
        return got

    def disp(self, name: str) -> list[Any]:
        """Request field ``name`` of every request, in dispatch order (a new list)."""
        order = self._disp_order
        if name == "priority" or name == "slo_s":
            # the input's own columns (the same objects as the requests' fields)
            own = self._pri_in if name == "priority" else self._slo_in
            return list(own) if order is None else list(map(own.__getitem__, order))
        if name == "network":  # its shape's (a shape's key holds its requests' network)
            return [p[3] for p in self.req_plans]
        if self._arrivals is not None or self._table is None:
            return list(map(attrgetter(name), self.arrivals))
        col = self._table.column(name)
        return list(col) if order is None else list(map(col.__getitem__, order))

    def keys_of(self, policy: Any, name: str) -> list[Any]:
        """The policy's key ``name`` (``queue_key`` / ``rank_key``) of every request, in
        dispatch order. Where the class that defines the key also names the fields it reads
        (``<name>_reads``, ``RankedPolicy``), it is called once per distinct value of those
        fields, on an object holding only them; else with the requests where they exist, else
        with :class:`KeyRow` rows (the fields a request shares with its job, which is all such
        a key may read), or with the requests after all where the key reads another field."""
        key: Callable[[Any], Any] = getattr(policy, name)
        reads = _declared_reads(policy, name)
        if reads is not None:
            cols = [self.disp(f) for f in reads]
            if not cols:
                n = len(self.arrival_rows)
                return [key(SimpleNamespace())] * n if n else []
            # one field (HPF): its values are the keys (no tuple per request)
            values = cols[0] if len(cols) == 1 else list(zip(*cols, strict=True))
            # the distinct values by ``set`` (about a third of ``dict.fromkeys``'s cost per
            # request); the key is a function of the fields it declares, so the order of its
            # calls changes no key
            per_value: dict[Any, Any] = {}
            for value in set(values):
                fields = zip(reads, (value,) if len(cols) == 1 else value, strict=True)
                per_value[value] = key(SimpleNamespace(**dict(fields)))
            if len(per_value) == 1:  # one value: its key for every request
                return [per_value[values[0]]] * len(values)
            if len(cols) == 1 and all(k is v for v, k in per_value.items()):
                # each key is its value itself (HPF's ``rank_key``, the priority): the values,
                # the same objects (``disp`` made the list for this call)
                return values
            # the look-ups in C (``itemgetter``, a tuple; the same key objects), about a
            # third of a ``map`` over the dictionary's ``__getitem__`` per request
            return list(itemgetter(*values)(per_value))
        if self._arrivals is not None or self._table is None:
            return list(map(key, self.arrivals))
        rows = zip(*(self.disp(f) for f in KeyRow._fields), strict=True)
        try:
            return list(map(key, map(tuple.__new__, repeat(KeyRow), rows)))
        except AttributeError:
            return list(map(key, self.arrivals))

    def estimates(self) -> list[float]:
        """The estimator's seconds for every request, in dispatch order, each a ``float``:
        called once per request shape where the estimator is marked ``shape_only`` (it reads
        only the request's network, batch, seq_in and seq_out; with the first request of
        each shape), else once per request in dispatch order."""
        estimator = self.sim.estimator
        assert estimator is not None
        code_disp, code_in = self._code_disp, self._code_in
        self._code_disp = self._code_in = None  # type: ignore[assignment]
        if not getattr(estimator, "shape_only", False):
            return [
                float(estimator(r, e[0]))
                for r, e in zip(self.arrivals, self.req_plans, strict=True)
            ]
        # Shapes are numbered in order of first appearance: a shape's first request is where
        # the running maximum of the codes steps up.
        first = np.flatnonzero(np.diff(np.maximum.accumulate(code_in), prepend=-1)).tolist()
        reqs = self.by_input
        per_shape = [
            float(estimator(reqs[i], p[0])) for i, p in zip(first, self.shape_plans, strict=True)
        ]
        # Each request's estimate is its shape's float object, not a float of its own (1e6
        # requests: 32 MB of equal floats fewer; the same values).
        get = per_shape.__getitem__
        return list(map(get, code_disp.tolist()))

    def _base_plan(
        self, prof: Profile, batch: int, seq_in: int | None, seq_out: int | None
    ) -> ExecPlan:
        """The plan a request's isolated latency is measured on: for a temporal policy, the
        variant of the whole resource; otherwise the fastest variant the profile offers (the
        bound every finish time must respect)."""
        if self.temporal:
            res0 = self.res[0]
            return self._plan_core(prof, batch, seq_in, seq_out, self.variant0, res0.capacity, 0)
        if not prof.axes:
            return prof.plan(batch, seq_in, seq_out)
        # the fastest variant's plan memoised process-wide (twenty-third round): a profile is
        # immutable and returns its cached plan for the same arguments, so the scan below
        # returns the same plan for the same profile and shape in every run
        key = (id(prof), batch, seq_in, seq_out)
        shared = _SHARED_BASE.get(key)
        if shared is not None and shared[1] is prof:
            return shared[0]
        best: ExecPlan | None = None
        for v in prof.variants():
            p = prof.plan(batch, seq_in, seq_out, **v)
            if best is None or p.total_s < best.total_s:
                best = p
        assert best is not None
        if len(_SHARED_BASE) >= _SHARED_PLANS_MAX:
            _SHARED_BASE.clear()
        _SHARED_BASE[key] = (best, prof)
        return best

    # --- plans --------------------------------------------------------------------------------
    def _variant_for(self, ri: int, units: int, alloc: Allocation) -> _Variant:
        v = self.res[ri].spec.variant(units)
        v.update(alloc.variant)
        return tuple(sorted(v.items()))

    def _plan_for(self, job: Job, variant: _Variant, units: int, ri: int) -> ExecPlan:
        """The plan ``job`` runs on with ``variant`` (its batch, its sequence lengths), through
        the power policy if there is one.

        Without a power policy the plan is a function of the job's request shape and the
        variant alone (``_plan_core``'s key less the cap, ``None``): it is found by the
        variant's identity among the few variants a run resolves (each allocation's variant
        is made once, ``_resolve``) and the job's shape number (numbered once per job and
        batch size), the object ``_plan_core`` returned for them the first time. Compiled,
        ``_plan_core``'s key was a fresh 6-tuple hashed with the variant's nested tuples and
        compared at every start on new units (about 1,900 instructions a call, Planaria's
        re-allocations)."""
        if self.sim.power is not None:
            return self._plan_core(
                job.profile, job._batch, job.seq_in, job.seq_out, variant, units, ri
            )
        code = job._shape
        if code < 0:
            key = (id(job.profile), job._batch, job.seq_in, job.seq_out)
            got = self._shape_of.get(key)
            if got is None:
                got = self._shape_of[key] = len(self._shape_of)
            code = job._shape = got
        seen = self._var_seen
        plans: list[ExecPlan | None] | None = None
        for i in range(len(seen)):
            if seen[i] is variant:
                plans = self._var_plans[i]
                break
        if plans is not None and code < len(plans):
            hit = plans[code]
            if hit is not None:
                return hit
        plan = self._plan_core(
            job.profile, job._batch, job.seq_in, job.seq_out, variant, units, ri
        )
        if plans is None:
            if len(seen) >= _VARIANTS_SEEN_MAX:
                return plan
            seen.append(variant)  # (kept alive here: identities stay unique)
            plans = []
            self._var_plans.append(plans)
        while len(plans) <= code:
            plans.append(None)
        plans[code] = plan
        return plan

    def _plan_core(
        self,
        prof: Profile,
        batch: int,
        seq_in: int | None,
        seq_out: int | None,
        variant: _Variant,
        units: int,
        ri: int,
    ) -> ExecPlan:
        power = self.sim.power
        cap: float | None = None
        if power is not None:
            assert self.sim.power_cap_w is not None
            res = self.res[ri]
            try:
                cap = job_cap_w(self.sim.power_cap_w, res.spec.idle_power_w, units, res.capacity)
            except PowerCapError as exc:
                raise SimulationError(f"resource {res.name!r}: {exc}") from None
        key = (id(prof), batch, seq_in, seq_out, variant, cap)
        plan = self.plan_cache.get(key)
        if plan is not None:
            return plan
        if power is None:
            shared = _SHARED_PLANS.get(key)
            if shared is not None and shared[1] is prof:
                plan = self.plan_cache[key] = shared[0]
                return plan
        try:
            if power is None:
                plan = prof.plan(batch, seq_in, seq_out, **dict(variant))
            else:
                freqs = dict(prof.axes).get("frequency_hz")
                if freqs is None:
                    raise SimulationError(
                        f"power policy {getattr(power, 'name', '')!r}: profile of "
                        f"{prof.network.name} on {prof.device_name} has no frequency_hz axis"
                    )
                base = {k: v for k, v in variant if k != "frequency_hz"}
                by_f = {f: prof.plan(batch, seq_in, seq_out, **base, frequency_hz=f) for f in freqs}
                plan = power.derive(by_f, cap, idle_share=units / self.res[ri].capacity)
        except SimulationError:
            raise
        except Exception as exc:
            raise SimulationError(
                f"{prof.network.name} (batch {batch}) has no plan for "
                f"{dict(variant) or 'the default variant'}: {exc}"
            ) from None
        self.plan_cache[key] = plan
        if power is None:
            if len(_SHARED_PLANS) >= _SHARED_PLANS_MAX:
                _SHARED_PLANS.clear()
            _SHARED_PLANS[key] = (plan, prof)
        return plan

    # --- clock / voltage levels between jobs (power policies) ----------------------------------
    def _level_switch(self, job: Job, ri: int, res: _Res) -> float:
        """Seconds ``job``, starting now on ``res`` (index ``ri``), waits for the units' clock and
        voltage to change to those of the step it starts at, charged like a restore (after it):
        the rule of :mod:`npusched.sim.levels` (written once),
        with the jobs that hold units read here. Each start is kept (``_holders``) until its job
        has released its units (or starts again), then reported to the rule, which sets the
        level the free units stand at (the job's last executed step, or the level before it
        started if it stopped before computing anything) and counts the aborted starts in a row
        (a livelock past ``MAX_ABORTED_SWITCHES``, e.g. a 0.25 ms round-robin quantum against
        DVFS's 2.15 ms voltage change). The switch draws the units' share of the resource's
        idle power, added to the job's energy now. With a checkpoint to restore, the switch
        follows the restore and both count as the job's ``checkpoint_s`` (one ``restore``
        segment)."""
        st = self._levels
        if st is None:
            st = self._levels = SwitchLevels(self.sim.power, len(self.res))
            self._holders = [[] for _ in self.res]
        holders = self._holders
        assert holders is not None
        held = holders[ri]
        if held:
            keep: list[_Holder] = []
            for entry in held:
                prev, wasted0, exec0, before = entry
                if prev is not job and prev._res == ri and prev.state is not DONE:
                    keep.append(entry)  # still holds units here
                else:
                    st.release(
                        ri,
                        prev.plan,
                        prev.state is DONE,
                        prev._exec,
                        prev.wasted_s,
                        exec0,
                        wasted0,
                        before,
                    )
            held = holders[ri] = keep
        st.check(ri, self._pname(), res.name)
        ex = job._exec
        held.append((job, job.wasted_s, ex, st.free_level[ri]))
        sw = st.start(ri, job.plan, ex, res.spec.idle_power_w, job.units, res.capacity)
        if sw > 0.0:
            e = st.energy
            if e:
                self._add_energy(job, res, e)
        return sw

    def _switch_plan(self, job: Job, plan: ExecPlan) -> None:
        """Move ``job`` (not computing) to ``plan`` keeping its ``(step, fraction)``."""
        old = job.plan
        if plan is old:
            return
        if job._exec > 0.0:
            s, f = old.position_at(job._exec)
            job._exec = plan.executed_at(s, f)
        job.plan = plan
        job.isolated_s = plan.total_s

    # --- job mechanics ------------------------------------------------------------------------
    def _start(
        self,
        job: Job,
        ri: int,
        units: int,
        variant: _Variant,
        alloc: Allocation,
        arm: bool = True,
    ) -> None:
        """Give ``units`` of resource ``ri`` to ``job`` now (restoring its checkpoint first,
        if any). With ``arm=False`` its next event is left to the caller (``_arm``)."""
        now = self.clock.now
        res = self.res[ri]
        if units > res.free:
            raise SimulationError(
                f"policy {self._pname()!r}: job {job.id} needs {units} unit(s) of "
                f"{res.name!r} but only {res.free} of {res.capacity} are free at t={now!r} s"
            )
        if job.state is WAITING:
            if self.rank_heap is None:  # (with the heap, the decision pops the job's entry)
                ready = self.ready
                pos = self.ready_pos
                if pos is not None:  # (no order kept: the last job takes its place)
                    last = ready.pop()
                    if last is not job:
                        i = pos[job.order]
                        ready[i] = last
                        pos[last.order] = i
                elif ready[0] is job:
                    del ready[0]
                else:
                    ready.remove(job)
            tokens = self.tokens
            if tokens is not None:
                tokens.dequeue(job.order, now)
            elif self.on_leave is not None:
                self.on_leave(job.order, job, now)
        # Time spent waiting for units (state STARTING) counts as waiting too.
        job._waited += now - job._wait_since
        res.free -= units
        res.jobs.append(job)
        if variant is not job.variant and variant != job.variant:
            self._switch_plan(job, self._plan_for(job, variant, units, ri))
        job.variant = variant
        job.allocation = alloc
        job._res = ri
        job.units = units
        job.rate = 1.0
        if job.first_start_s != job.first_start_s:  # nan: first start
            job.first_start_s = now
        rb = job._restore_bytes
        t0 = restore_end(now, rb, self.ckpt_cost, self._bandwidth(job)) if rb else now
        if self.power_policy is not None:
            t0 += self._level_switch(job, ri, res)
        job._seg_start = now
        job._t0 = t0
        ex = job._seg_exec0 = job._exec
        job.state = RUNNING
        if not arm:
            return
        plan = job.plan
        if job._until < 0 and not plan.exits:  # the common case: run to the end
            iso = job._limit = job.isolated_s
            epoch = job._epoch = job._epoch + 1
            # ``(iso - ex) / job.rate`` with the rate just set to 1.0 (dividing by 1.0 is exact)
            self._push_event(t0 + (iso - ex), COMPLETE, job, epoch)
        else:
            self._arm(job)

    def _arm(self, job: Job) -> None:
        """(Re-)schedule ``job``'s next event: the end of its plan, or an earlier exit or stop
        step, reached at its rate from ``(t0, exec)``."""
        plan = job.plan
        lim = job.isolated_s
        kind = COMPLETE
        until = job._until
        if plan.exits:
            b = self._next_boundary(job)
            if b < lim:
                lim = b
                kind = BOUNDARY
        elif until >= 0:  # _next_boundary without exits: the stop step's prefix sum
            i = until if until < plan.steps else plan.steps
            ex = job._exec
            b = plan._cum[i]
            if b < ex:
                b = ex
            if b < lim:
                lim = b
                kind = BOUNDARY
        job._limit = lim
        epoch = job._epoch = job._epoch + 1
        t = job._t0 + (lim - job._exec) / job.rate
        if t < self.clock.now:
            t = self.clock.now
        self._push_event(t, kind, job, epoch)

    def _push_event(self, t: float, kind: int, job: Job, epoch: int) -> None:
        """Schedule ``job``'s machine event ``kind`` at ``t``: into the slot (``ev_t``...)
        where it is empty or holds a superseded completion or boundary (its time kept in
        ``stale_c``: it still opens its wake), else into the event heap. Its sequence number
        is drawn either way, so the events keep their order."""
        q = self.queue
        seq = q.next_seq()
        old = self.ev_job
        if old is not None:
            ok = self.ev_kind
            if (ok == COMPLETE or ok == BOUNDARY) and self.ev_epoch != old._epoch:  # noqa: SIM109
                fpush(self.stale_c, self.ev_t)
                old = None
        if old is None:
            self.ev_t = t
            self.ev_kind = kind
            self.ev_seq = seq
            self.ev_job = job
            self.ev_epoch = epoch
            return
        ev = (t, kind, seq, job, epoch)
        if TYPED_HEAP:
            epush(q.heap, ev)
        else:
            heappush(q.heap, ev)

    def _next_boundary(self, job: Job) -> float:
        """Seconds of work at which ``job`` next reaches an exit of one of its samples or its
        stop step (``inf`` if none before the end)."""
        plan = job.plan
        cum = plan._cum  # the prefix sums (equal to ``cum_s``)
        ex = job._exec
        best = math.inf
        exits = plan.exits
        exit_row = self.exit_row
        if exits and exit_row is not None:
            for row in job._rows:
                k = exit_row[row]
                if k is not None and 0 <= k < len(exits):
                    w = cum[exits[k]]
                    if w >= ex - TIME_TOL_S and w < best:
                        best = w
        until = job._until
        if until >= 0:
            w = cum[until if until < plan.steps else plan.steps]
            if w < best:
                best = w if w >= ex else ex  # max(w, ex)
        return best

    def _seg_freq(self, job: Job) -> Any:
        """The clock of ``job``'s variant for its timeline segments (``Any``: the one nan
        object where it has none, not a float unboxed and boxed anew: compiled, every segment
        would hold its own nan, and ``==`` between timelines, which holds for the same nan
        object, would fail)."""
        f: Any = _NAN_OBJ
        for k, v in job.variant:
            if k == "frequency_hz":
                f = float(v)
        return f

    def _end_segment(self, job: Job, te: float, exec_end: float) -> None:
        """Close ``job``'s execution segment at time ``te`` with ``exec_end`` work done
        (:func:`~npusched.sim.mechanisms.end_segment`, the rule written once)."""
        tl = self.timeline
        res = self.res[job._res]
        cs, rb, ex, db, steps, e = end_segment(
            te,
            exec_end,
            job._seg_start,
            job._t0,
            job._seg_exec0,
            job._exec,
            job._restore_bytes,
            job.checkpoint_s,
            job.plan,
            job.rate,
            job.units,
            res.capacity,
            tl,
            self.power,
            job.id,
            res.name,
            self._seg_freq(job) if tl is not None else _NAN_OBJ,
        )
        job.checkpoint_s = cs
        job._restore_bytes = rb
        job._exec = ex
        res.busy += db
        if steps:
            self.layer_exec += steps
        if e:
            self._add_energy(job, res, e)

    def _bandwidth(self, job: Job) -> float:
        """``job``'s profile's memory bandwidth (bytes/s) at its stops and restores: read from
        the profile at the first (``bw_k``, by dispatch index, 0.0: not read yet) and kept (a
        generic attribute read of the profile per stop and per restore, where P-RRB stops a
        job at every slice)."""
        bw = self.bw_k
        k = job.order
        b = bw[k]
        if not b:
            b = job.profile.memory_bandwidth_bps
            bw[k] = b
        return b

    def _add_energy(self, job: Job, res: _Res, e: float) -> None:
        job.energy_j += e
        res.energy += e
        joules = self.rec_energy
        rows = job._rows
        n = len(rows)
        if n == 1:
            row = rows[0]
            joules[row] = joules[row] + e
        else:
            part = e / n
            for row in rows:
                joules[row] = joules[row] + part

    def _release(self, job: Job) -> None:
        """``job`` gives its units back."""
        ri = job._res
        res = self.res[ri]
        res.free += job.units
        res.jobs.remove(job)
        job.allocation = None
        job.units = 0
        job._res = -1
        if self.running is job:
            self.running = None

    def _record(
        self, job: Job, finish: float, rows: tuple[int, ...] | None = None, resource: str = ""
    ) -> None:
        """Write ``job``'s record into the result rows of its samples (or of ``rows``): the run's
        ``vec`` columns by row (``rec_*``, unboxed compiled), which ``_write_records`` hands to
        the one writer of the records (``records.write_records``)."""
        col_res = self.res_names
        first = self.rec_first
        fin = self.rec_finish
        npre = job.preemptions
        nbytes = job.checkpoint_bytes
        csec = job.checkpoint_s
        lost = job.wasted_s
        rs = job._rows if rows is None else rows
        for row in rs:  # (a count or time still zero: the zero written already)
            if first[row] != first[row]:  # nan: a sample merged in keeps its own
                first[row] = job.first_start_s
            fin[row] = finish
            if npre != 0:
                self.rec_preempt[row] = npre
            if nbytes != 0:
                self.rec_cbytes[row] = nbytes
            if csec != 0.0:
                self.rec_cs[row] = csec
            if lost != 0.0:
                self.rec_wasted[row] = lost
            col_res[row] = resource

    def _finish_samples(self, job: Job, rows: tuple[int, ...]) -> None:
        now = self.clock.now
        self._record(job, now, rows, self.res[job._res].name)
        self.n_finished += len(rows)
        if self.dependents:
            get = self.row_requests.get
            for row in rows:
                self._release_dependents(get(row).id, now)

    def _release_dependents(self, rid: int, now: float) -> None:
        deps = self.dependents.get(rid)
        if not deps:
            return
        q = self.queue
        for i in deps:
            r = self.by_input[i]
            t = max(r.arrival_s, now + r.transfer_s)
            heappush(q.heap, (t, ARRIVAL, q.next_seq(), i, 0))

    def _kill(self, job: Job) -> None:
        """KILL: stop ``job`` now and throw its progress away."""
        now = self.clock.now
        self._end_segment(job, now, job.executed_s)
        self._futile_preemption()
        job.wasted_s, job._exec, job._restore_bytes = kill(job.wasted_s, job._exec)
        job.preemptions += 1
        job._epoch += 1
        self._release(job)
        self._requeue(job, now)

    def _futile_preemption(self) -> None:
        """Count a preemption that made no progress; raise past ``_MAX_FUTILE_PREEMPTIONS``
        in a row (a livelock; ``common.futile_preemption``)."""
        self.futile = futile_preemption(self.futile, self.policy, self.clock.now)

    def _requeue(self, job: Job, now: float) -> None:
        job.state = WAITING
        job._wait_since = now
        rh = self.rank_heap
        if rh is not None:  # the declared order's heap holds the waiting jobs (no list)
            self._push_ready(rh, job)
        else:
            ready = self.ready
            pos = self.ready_pos
            if pos is not None:  # (no order kept)
                pos[job.order] = len(ready)
                ready.append(job)
            elif not ready or ready[-1].order < job.order:
                ready.append(job)
            else:
                insort(ready, job, key=_ORDER)
        tokens = self.tokens
        if tokens is not None:  # its work done and waiting before this stay, then the stay
            k = job.order
            tokens.exe[k] = job._exec
            tokens.waited[k] = job._waited
            tokens.enqueue(k, now)
        elif self.rot is not None:
            self.rot.push(job.order)
        elif self.on_enter is not None:
            self.on_enter(job.order, job, now)

    def _displacement(self, running: Job, best: Job, static: Any, dyn_preempt: Any) -> Any:
        """The mechanism by which waiting job ``best`` displaces ``running`` under a declared
        order (the general loop's own decisions): the policy's static one, else Algorithm 3 on
        numbers (:func:`~npusched.policies.contract.dynamic_choice`, as ``select_mechanism``
        decides it), ``dyn_preempt`` its preemption."""
        if static is not None:
            return static
        return dynamic_choice(
            running.estimated_s, running.executed_s, best.estimated_s, best.executed_s, dyn_preempt
        )

    def _waiting(self) -> list[Job]:
        """The waiting jobs in dispatch order: the ready list (sorted where it is kept in no
        order, ``ready_pos``), or with the declared order's heap (``rank_heap``, which holds
        them in its place) its jobs, sorted (a view for an ``on_period`` hook, the partial
        records of ``until``)."""
        rh = self.rank_heap
        if rh is None:
            if self.ready_pos is not None:  # (kept in no order)
                return sorted(self.ready, key=_ORDER)
            return self.ready
        job_of = self.job_of
        ks = list(rh) if self.srpt else [e % max(1, len(job_of)) for e in rh]
        ks.sort()
        out: list[Job] = []
        for k in ks:
            j = job_of[k]
            if j is not None and j.state is WAITING:
                out.append(j)
        return out

    def _push_ready(self, rh: list[Any], job: Job) -> None:
        """Push ``job``'s entry on the declared order's heap (``rank_heap``) as it enters the
        ready queue: its rank entry, or its dispatch index keyed by ``max(estimated -
        executed, 0)`` (SJF: a waiting job's work does not change; ``shortest_remaining``'s
        key, its ties by dispatch order)."""
        k = job.order
        if self.srpt:
            r = job.estimated_s - job._exec
            self.skey[k] = 0.0 if r < 0.0 else r
            kpush(rh, self.skey, k)
        else:
            ipush(rh, self.rank_entry[k])

    def _pop_ready(self, rh: list[Any]) -> None:
        """Pop the top entry of the declared order's heap (``rank_heap``; :meth:`_push_ready`'s
        entries)."""
        if self.srpt:
            kpop(rh, self.skey)
        else:
            ipop(rh)

    def _checkpoint(self, job: Job, fuse: bool = False) -> bool:
        """CHECKPOINT: let ``job`` run to its next preemption point, then save its context.
        Returns ``False`` if that point is the job's end (it just finishes).

        With ``fuse`` the stop is carried out now, as :meth:`_h_stop` would at its time (only
        the save's end is an event): for a caller whose run has nothing else that runs, reads
        or records anything before that time (one job on the machine, no power policy, no
        ``until``; see ``execute``)."""
        now = self.clock.now
        t0 = job._t0
        executed = job._exec  # (read only once restored)
        if now >= t0:
            if job.state is RUNNING:  # ``job.executed_s``, inline (``now >= t0`` here)
                dt = now - t0
                if dt > 0.0:
                    executed += job.rate * dt
                    if not executed < job._limit:
                        executed = job._limit
            else:
                executed = job.executed_s
        stops, stop_w, t_stop = stop_point(
            now,
            t0,
            job._exec,
            executed,
            job._limit,
            job.isolated_s,
            job.rate,
            job.plan,
            self.layer_point,
            TIME_TOL_S,
        )
        if not stops:  # the next preemption point is the end: it just finishes
            return False
        job.state = PREEMPTING
        self.n_preempting += 1
        job._limit = stop_w
        job._epoch += 1
        if self.running is job:
            self.running = None
            self.preempting = job
        if fuse:
            self._stop(job, t_stop)
            return True
        self._push_event(t_stop, STOP, job, job._epoch)
        return True

    # --- handlers -----------------------------------------------------------------------------
    def _h_complete(self, job: Job, epoch: int) -> str:
        if epoch != job._epoch:
            return ""  # superseded by a preemption or a rate change
        now = self.clock.now
        iso = job.isolated_s
        self._end_segment(job, now, iso)
        self.futile = 0
        job.state = DONE
        job._epoch = epoch + 1
        self._finish_samples(job, job._rows)
        self._release(job)
        self.completed.append(job)
        return "completion"

    def _h_boundary(self, job: Job, epoch: int) -> str:
        """``job`` reached an exit of some of its samples and/or its stop step."""
        if epoch != job._epoch:
            return ""
        now = self.clock.now
        lim = job._limit
        self._end_segment(job, now, lim)
        plan = job.plan
        # ``plan.position_at(lim)[0]`` (only the step is needed)
        step = plan.step_at(lim)
        if step >= plan.steps:
            step = plan.steps
        elif step < 0:
            step = 0
        exits = plan.exits
        exit_row = self.exit_row
        reason = ""
        if exits and exit_row is not None:  # without exits no sample leaves (and no lists)
            leave_rows: list[int] = []
            stay_rows: list[int] = []
            for row in job._rows:
                k = exit_row[row]
                if k is not None and 0 <= k < len(exits) and exits[k] <= step:
                    leave_rows.append(row)
                else:
                    stay_rows.append(row)
        else:
            leave_rows = stay_rows = _NO_ROWS
        if leave_rows:
            self._finish_samples(job, tuple(leave_rows))
            reason = "exit"
            if not stay_rows:  # every sample left: the job is done
                job.state = DONE
                job._epoch += 1
                self._release(job)
                self.completed.append(job)
                return "completion"
            batch_row = self.batch_row
            job._set_rows(tuple(stay_rows), sum([batch_row[row] for row in stay_rows]))
            self._switch_plan(job, self._plan_for(job, job.variant, job.units, job._res))
        if 0 <= job._until <= step:  # the policy's stop step: back to the ready queue
            job._until = -1
            job._epoch += 1
            self._release(job)
            self._requeue(job, now)
            if self.pending:
                self._drain_pending()
            return reason or "stopped"
        # The batch carries on from here (on its new batch size's plan).
        job._seg_start = now
        job._t0 = now
        job._seg_exec0 = job._exec
        self._arm(job)
        return reason

    def _h_stop(self, job: Job, epoch: int) -> str:
        """The CHECKPOINT victim reached its preemption point: start saving its context."""
        if epoch != job._epoch:  # pragma: no cover - stops are never superseded
            return ""
        self._stop(job, self.clock.now)
        return ""

    def _stop(self, job: Job, now: float) -> None:
        """The CHECKPOINT victim stops at its preemption point at ``now`` (seconds): close its
        segment and start saving its context (the save's end is an event)."""
        t0 = job._t0
        before = job._exec
        self._end_segment(job, now, job._limit)
        if job._exec > before:
            self.futile = 0
        else:
            self._futile_preemption()
        job.preemptions += 1
        job._restore_bytes, job.checkpoint_s, job.checkpoint_bytes, save_s, busy = save(
            now,
            t0,
            job._exec,
            job._restore_bytes,
            job.checkpoint_s,
            job.checkpoint_bytes,
            job.plan,
            job.units,
            self.res[job._res].capacity,
            self.ckpt_cost,
            self._bandwidth(job),
        )
        self.res[job._res].busy += busy
        job._save_start = now
        self._push_event(now + save_s, SAVE_DONE, job, job._epoch)

    def _h_save_done(self, job: Job, epoch: int) -> str:
        now = self.clock.now
        tl = self.timeline
        if tl is not None:
            ri = job._res
            save_segment(
                tl,
                job.id,
                job._save_start,
                now,
                self.res[ri].name if ri >= 0 else "",
                job.units,
                self._seg_freq(job),
            )
        self._release(job)
        self.n_preempting -= 1
        if self.preempting is job:
            self.preempting = None
        nxt = job._next_alloc
        if nxt is not None:  # a re-allocation: start again on the new units
            job._next_alloc = None
            self.n_moving -= 1
            job.state = STARTING
            job._wait_since = now
            ri, units, variant, alloc = nxt
            if self.res[ri].free >= units:
                # ``_drain_pending`` with the job first in the queue: it starts now (the
                # others follow below), without the entry and the queue's copy
                self._start(job, ri, units, variant, alloc)
            else:
                self.pending.insert(0, (job, ri, units, variant, alloc))
        else:
            self._requeue(job, now)
        if self.pending:
            self._drain_pending()
        return "preempted"

    def _h_release(self, job: Any, epoch: int) -> str:
        """A dependent request is dispatched (``job`` is its index in the input sequence)."""
        self._dispatch(int(self.order_of[int(job)]))
        return "arrival"

    def _h_timer(self, job: Any, epoch: int) -> str:
        return "timer"

    # --- arrivals -----------------------------------------------------------------------------
    def _dispatch(self, k: int) -> Job:
        """Create the job of the ``k``-th request in dispatch order and queue it."""
        prof, plan, iso, net, batch, s_in, s_out = self.req_plans[k]
        row = self.rows_k[k]
        src = self.row_requests
        order = self._disp_order
        i = k if order is None else order[k]  # its input index
        ids = self._ids_in
        rid = i if ids is None else ids[i]
        pri = self._pri_in[i]
        slo = self._slo_in[i]
        arr = self.arr_disp[k]
        got = self._arrivals
        # the request itself where one is made (a list input's own; a table's where a policy
        # or an estimator asked for them), else made only if something reads it
        r: Request | None = None if got is None else got[k]
        estimator = self.sim.estimator
        if estimator is None:
            est = iso
        else:
            est_k = self.est_k
            if est_k is not None:  # a ``shape_only`` estimator's, by shape (``estimates``)
                est = est_k[k]
            else:
                if r is None:
                    r = src.get(row)
                est = float(estimator(r, prof))
        self.rec_est[row] = est
        job = Job(
            src,
            r,
            rid,
            net,
            pri,
            arr,
            batch,
            slo,
            s_in,
            s_out,
            prof,
            plan,
            iso,
            est,
            k,
            row,
            self.clock,
        )
        if self.temporal:
            job.variant = self.variant0
        rh = self.rank_heap
        if rh is not None:  # the declared order's heap holds the waiting jobs (no list)
            self.job_of[k] = job
            self._push_ready(rh, job)
        else:
            ready = self.ready
            pos = self.ready_pos
            if pos is not None:  # (no order kept)
                pos[k] = len(ready)
                ready.append(job)
            elif not ready or ready[-1].order < k:  # dispatch order: the common case appends
                ready.append(job)
            else:
                insort(ready, job, key=_ORDER)
        tokens = self.tokens
        if tokens is not None:  # its estimate, work done and waiting, then its first stay
            self.job_of[k] = job
            tokens.est[k] = est
            tokens.exe[k] = job._exec
            tokens.waited[k] = job._waited
            tokens.enqueue(k, self.clock.now)
        elif self.rot is not None:  # (its model joins the rotation at its first dispatch)
            self.job_of[k] = job
            self.rot.arrive(k)
        elif self.on_enter is not None:
            self.on_enter(k, job, self.clock.now)
        self.released.append(job)
        return job

    # --- machine policies ---------------------------------------------------------------------
    def _pname(self) -> str:
        return str(getattr(self.policy, "name", type(self.policy).__name__))

    def _drain_pending(self) -> None:
        """Start the jobs waiting for units, in assignment order, as far as units allow."""
        if not self.pending:
            return
        keep = []
        for entry in self.pending:
            job, ri, units, variant, alloc = entry
            if self.res[ri].free >= units:
                self._start(job, ri, units, variant, alloc)
            else:
                keep.append(entry)
        self.pending = keep

    def _machine_view(self, reason: str) -> MachineView:
        """The machine policy's view: the lists are fresh per decision (a policy may keep
        them), the resource views are shared while no resource's free units change."""
        # Views updated, not rebuilt: the last decision's view is refilled in place unless the
        # policy kept a reference to it or to its dict (or a weak reference): then that one
        # stays as it was and a new view takes its place. A view nobody else can reach cannot
        # be seen to change, so every decision still sees a view of its own (a frozen one).
        # The fields that are the same objects as in the kept view's last fill are not written
        # again (a dictionary write costs more than the identity test); a new view is written
        # whole, in the fields' order (the order a first fill of the kept view writes too).
        vf = self._vf
        vf.running = vf.preempting = _NO_VIEW_JOBS  # (the lists' references counted below)
        if self._view_refs() != self._view_refs0 or _GETWEAKREFCOUNT(self._view):
            self._view = object.__new__(MachineView)
            self._view_dict = self._view.__dict__
            vf.view = self._view
            self._held_ready = self._held_resources = None
            self._held_reason = self._held_profiles = None
            self._held_running = self._held_preempting = None
        # The kept view's lists, emptied and refilled where nothing else refers to them (a
        # policy that kept one, or an iterator over it, gets a new list next time and its own
        # stays as it was), else new lists: either way the view's lists hold this decision's
        # jobs only. (Counted before any local refers to them.)
        running: list[Job]
        preempting: list[Job]
        if self._held_running is not None and self._running_refs() == self._running_refs0:
            running = self._held_running
            running.clear()
        else:
            running = []
        if (
            self._held_preempting is not None
            and not self.n_preempting
            and not self._held_preempting
        ):
            # No job is being stopped: the kept list stays empty, as it was, so whoever holds
            # it sees no change (no references counted; twentieth round)
            preempting = self._held_preempting
        elif (
            self._held_preempting is not None
            and self._preempting_refs() == self._preempting_refs0
        ):
            preempting = self._held_preempting
            if preempting:
                preempting.clear()
        else:
            preempting = []
        res_l = self.res
        res = self.res1
        if res is not None:
            if self.n_preempting:
                for j in res.jobs:
                    if j.state is PREEMPTING:
                        preempting.append(j)
                    else:
                        running.append(j)
            else:  # every holder runs: the holders, in allocation order
                running.extend(res.jobs)
            key = res.free
        else:
            if self.n_preempting:
                for r in res_l:
                    for j in r.jobs:
                        if j.state is PREEMPTING:
                            preempting.append(j)
                        else:
                            running.append(j)
            else:  # (the few holders appended one by one: ``extend`` is a generic call)
                for r in res_l:
                    for j in r.jobs:
                        running.append(j)
            # every resource's free units in one integer, in mixed radix by capacity + 1 (free
            # units never exceed the capacity): distinct free units, distinct keys
            key = 0
            for r in res_l:
                key = key * (r.capacity + 1) + r.free
        if self.pending:
            for e in self.pending:
                running.append(e[0])
        # the last decision's resource views where the free units are as they were (an
        # integer comparison, no dictionary look-up), else the views of these free units
        if key == self._res_key and self._res_last is not None:
            resources = self._res_last
        else:
            cache = self._res_views
            got = cache.get(key)
            if got is None:
                got = cache[key] = MappingProxyType(  # shared: read-only
                    {r.name: ResourceView(r.name, r.spec.kind, r.capacity, r.free) for r in res_l}
                )
                # the same free units natively, in machine order (``ViewFields.free``)
                self._res_free[key] = [r.free for r in res_l]
            resources = got
            self._res_key = key
            self._res_last = got
            vf.free = self._res_free[key]
        # the same fields, natively, for the compiled policy cores (``ViewFields``)
        now = self.clock.now
        ready = self.ready
        profiles = self.sim.profiles
        vf.now = now
        vf.ready = ready
        vf.running = running
        vf.preempting = preempting
        vf.resources = resources
        vf.reason = reason
        vf.profiles = profiles
        self._made.view_fields = vf
        if not _FAST_MACHINE_VIEW:  # pragma: no cover - only if MachineView changes shape
            vf.view = MachineView(
                self.clock.now,
                self.ready,
                running,
                preempting,
                resources,
                reason,
                self.sim.profiles,
            )
            return vf.view
        d = self._view_dict
        d["now"] = now
        if ready is not self._held_ready:
            d["ready"] = self._held_ready = ready
        if running is not self._held_running:
            d["running"] = self._held_running = running
        if preempting is not self._held_preempting:
            d["preempting"] = self._held_preempting = preempting
        if resources is not self._held_resources:
            d["resources"] = self._held_resources = resources
        if reason is not self._held_reason:
            d["reason"] = self._held_reason = reason
        if profiles is not self._held_profiles:
            d["profiles"] = self._held_profiles = profiles
        return self._view

    def _held_any(self) -> bool:
        """Whether a job holds units of any resource (running or being stopped; compiled,
        ``any`` of a generator is a native loop)."""
        return any(r.jobs for r in self.res)

    def _lone_job(self) -> Job | None:
        """The one job in the machine where there is exactly one (waiting, or holding units)
        and no start waits for units (the caller checks ``pending``), else ``None``."""
        one: Job | None = None
        ready = self.ready
        if ready:
            if len(ready) > 1:
                return None
            one = ready[0]
        for r in self.res:
            for j in r.jobs:
                if one is not None:
                    return None
                one = j
        return one

    def _view_refs(self) -> int:
        """The references to the kept machine view and to its attribute dict, as counted from
        here (the same code counts them at the start, when only the engine holds them)."""
        return _GETREFCOUNT(self._view) + _GETREFCOUNT(self._view_dict)

    def _running_refs(self) -> int:
        """The references to the kept view's ``running`` list, as counted from here (the same
        code counts them at the start, held by a dict and the attribute alone)."""
        return _GETREFCOUNT(self._held_running)

    def _preempting_refs(self) -> int:
        """As :meth:`_running_refs`, for the kept view's ``preempting`` list."""
        return _GETREFCOUNT(self._held_preempting)

    def _invalid(self, cand: object, what_ok: str = "a job in the ready queue") -> SimulationError:
        if isinstance(cand, Job):
            what = f"job {cand.id} in state {cand.state.value!r}"
        else:
            what = f"{type(cand).__name__} {cand!r}"
        return SimulationError(
            f"policy {self._pname()!r} selected {what} at t={self.clock.now!r} s; it must be "
            f"{what_ok}"
        )

    def _own(self, job: object) -> Job:
        if type(job) is not Job or job._clock is not self.clock:
            raise self._invalid(job, "a job of this run")
        return job

    def _apply(self, sched: Schedule) -> None:
        """Carry out a machine policy's :class:`Schedule`."""
        if sched is _NOTHING:  # no change: only the starts waiting for units, as far as they can
            if self.pending:
                self._drain_pending()
            return
        if not isinstance(sched, _SCHEDULE):
            raise SimulationError(
                f"policy {self._pname()!r} returned {type(sched).__name__}; a machine policy "
                f"returns a Schedule"
            )
        now = self.clock.now
        made = self._made
        if sched is made.sched:
            # the schedule a compiled core made (``make_schedule``): its fields as the record
            # holds them, native attributes where compiled (no ``__dict__`` and its look-ups)
            merge = made.merge
            mech = made.mechanism
            preempt = made.preempt
            until_step = made.until_step
            assign = made.assign
            rates = made.rates
            timers = made.timers
        elif type(sched) is _SCHEDULE:  # a frozen dataclass without slots: its fields in __dict__
            fd = sched.__dict__
            merge = fd["merge"]
            mech = fd["mechanism"]
            preempt = fd["preempt"]
            until_step = fd["until_step"]
            assign = fd["assign"]
            rates = fd["rates"]
            timers = fd["timers"]
        else:
            merge = sched.merge
            mech = sched.mechanism
            preempt = sched.preempt
            until_step = sched.until_step
            assign = sched.assign
            rates = sched.rates
            timers = sched.timers
        if merge is not _NO_MERGE and merge:
            for m in merge:
                self._merge(self._own(m.into), [self._own(j) for j in m.jobs])
        if mech is not _CHECKPOINT and mech not in (_KILL, _DRAIN):
            raise SimulationError(
                f"policy {self._pname()!r} returned mechanism {mech!r}; allowed: "
                f"{', '.join(m.value for m in Mechanism)}"
            )
        if preempt is not _NO_PREEMPT and preempt:
            for j in preempt:
                job = self._own(j)
                if job.state is STARTING:
                    self.pending = [e for e in self.pending if e[0] is not job]
                    self._requeue(job, now)
                elif job.state is RUNNING:
                    if mech == _KILL:
                        self._kill(job)
                    elif mech == _CHECKPOINT and not self._checkpoint(job):
                        job._leaving = True  # its next preemption point is its end: it completes
                elif job.state is not PREEMPTING:
                    raise self._invalid(job, "a running job")
        if until_step is not _NO_UNTIL and until_step:
            # a plain dict (every built-in policy's) is iterated natively where compiled (no
            # ``items()`` call and iterator object); any other mapping through ``items()``
            if type(until_step) is dict:
                until_d: dict[Any, Any] = until_step
                for uj, step in until_d.items():
                    self._until_step(uj, step)
            else:
                for uj, step in until_step.items():
                    self._until_step(uj, step)
        # Starts at assignment (see ``_assign``): only when every assigned job waits and no
        # start is pending, so that no other event is pushed before the drain would push them.
        deferred: list[Job] | None = None
        if assign:
            if not self.pending:
                deferred = []
                if len(assign) > 1:
                    for aj in assign:
                        if type(aj) is not Job or aj.state is not WAITING:
                            deferred = None
                            break
            by_id = self.resolved_by_id
            if type(assign) is dict:
                assign_d: dict[Any, Any] = assign
                for aj, alloc in assign_d.items():
                    self._assign_one(aj, alloc, deferred, by_id)
            else:
                for aj, alloc in assign.items():
                    self._assign_one(aj, alloc, deferred, by_id)
        # Only assignments and merges can raise the units needed, and only with a job moving to
        # other units or a start waiting: otherwise every job needs at most what it holds.
        if (self.n_moving or self.pending) and (assign or merge):
            self._check_capacity()
        if self.pending:
            self._drain_pending()
        # A job started at assignment gets its event where the drain would have pushed it,
        # unless the rates pass below re-times it: then it gets one event, at its rate, where
        # that pass would have pushed it (the same events in the same order, none superseded).
        late: list[Job] = _NO_JOBS  # a list of its own once a job is late
        # a plain dict of rates (every built-in policy's) is read natively where compiled
        rates_d: dict[Any, Any] | None = rates if type(rates) is dict else None
        if deferred:
            for dj in deferred:
                if rates_d is not None:
                    f = rates_d.get(dj) if rates_d else None
                elif not rates:
                    f = None
                else:
                    f = rates.get(dj)
                if f is None:
                    is_late = False
                elif type(f) is float:  # compared as a C double where compiled
                    fr: float = f
                    is_late = fr != 1.0 and 0.0 < fr < _INF
                else:
                    is_late = bool(f != 1.0 and 0.0 < f < _INF)
                if is_late:
                    if late is _NO_JOBS:
                        late = []
                    late.append(dj)
                else:
                    self._arm(dj)
        # Rates after the starts: a job this decision starts at once runs at its rate at once.
        if rates_d is not None:  # (a typed dict's truth is its size, read natively)
            if rates_d:
                for rj, factor in rates_d.items():
                    self._rate_one(rj, factor, late)
        elif rates:
            for rj, factor in rates.items():
                self._rate_one(rj, factor, late)
        if timers is not _NO_TIMERS and timers:
            q = self.queue
            for t in timers:
                if not (t >= now - TIME_TOL_S and math.isfinite(t)):
                    raise SimulationError(
                        f"policy {self._pname()!r}: timer at t={t!r} s is not a finite time "
                        f">= now"
                    )
                heappush(q.heap, (max(t, now), TIMER, q.next_seq(), None, 0))

    def _apply_lone(self, job: Job, alloc: Allocation) -> None:
        """``_apply`` of ``Schedule(assign={job: alloc})`` (every other field as in
        ``NOTHING``), ``lone_wake``'s short form: its steps for that schedule (no merge,
        preemption, stop step, rate or timer; the one entry assigned, started at assignment
        where it waits with no start pending and its units free, the capacity checked where a
        job moves or a start waits, the starts waiting drained, then the job started at
        assignment armed at its own speed)."""
        deferred: list[Job] | None = [] if not self.pending else None
        self._assign_one(job, alloc, deferred, self.resolved_by_id)
        if self.n_moving or self.pending:
            self._check_capacity()
        if self.pending:
            self._drain_pending()
        if deferred:
            for dj in deferred:
                self._arm(dj)

    def _rate_one(self, rj: object, factor: Any, late: list[Job]) -> None:
        """``_apply``'s ``rates`` entry: ``rj`` runs at ``factor`` times its speed (``late``:
        the jobs this decision started, not yet armed)."""
        if type(rj) is not Job or rj._clock is not self.clock:
            raise self._invalid(rj, "a job of this run")
        if type(factor) is float:  # compared and stored as a C double where compiled
            fv: float = factor
            if not (0.0 < fv < _INF):  # a positive finite number (nan fails both)
                raise SimulationError(
                    f"policy {self._pname()!r}: rate {factor!r} for job {rj.id}; must be > 0"
                )
            if late and rj in late:
                rj.rate = fv
                self._arm(rj)
            elif fv != rj.rate and rj.state is RUNNING:
                self._set_rate(rj, fv)
            return
        if not (0.0 < factor < _INF):  # a positive finite number (nan fails both)
            raise SimulationError(
                f"policy {self._pname()!r}: rate {factor!r} for job {rj.id}; must be > 0"
            )
        if late and rj in late:  # started now (t0 >= now): as _set_rate, nothing to close
            rj.rate = float(factor)
            self._arm(rj)
        elif factor != rj.rate and rj.state is RUNNING:
            self._set_rate(rj, float(factor))

    def _until_step(self, uj: object, step: object) -> None:
        """``_apply``'s ``until_step`` entry: ``uj`` stops at step ``step``."""
        if type(uj) is not Job or uj._clock is not self.clock:
            raise self._invalid(uj, "a job of this run")
        if uj.state is DONE or not (isinstance(step, int) and step >= 0):
            raise self._invalid(uj, "an unfinished job and a step index >= 0")
        uj._until = step
        if uj.state is RUNNING:
            self._retime(uj)

    def _assign_one(
        self,
        aj: object,
        alloc: Any,
        deferred: list[Job] | None,
        by_id: dict[int, tuple[Allocation, tuple[int, int, _Variant]]],
    ) -> None:
        """``_apply``'s ``assign`` entry: ``aj`` to ``alloc``.

        An allocation resolved before is found by identity first, whatever the job's state:
        among the few allocations seen last (``_alloc_seen``: a list scanned by identity, no
        ``id`` boxed and hashed; the machine policies hand out one shared allocation per
        resource, Planaria one per unit count), else by id (the hit unpacked where it is read,
        ``ri`` -1 for none: compiled, an optional tuple is a boxed object, a new tuple per hit
        where the fields are C values). A waiting job whose units are free is started here
        (``_assign``'s start at assignment, inline); a running job's re-allocation takes the
        resolution found here (twenty-second round: ``_resolve`` boxed the allocation's id
        and looked it up per re-allocation)."""
        if type(aj) is not Job or aj._clock is not self.clock:
            raise self._invalid(aj, "a job of this run")
        seen = self._alloc_seen
        ri = -1
        units = 0
        variant: _Variant = ()
        for i in range(len(seen)):
            if seen[i] is alloc:
                ri, units, variant = self._alloc_hit[i]
                break
        if ri < 0:
            got = by_id.get(id(alloc))
            if got is not None and got[0] is alloc:
                hit = got[1]
                ri, units, variant = hit
                if len(seen) < _ALLOC_SEEN_MAX:
                    seen.append(alloc)  # (kept alive here: identities stay unique)
                    self._alloc_hit.append(hit)
        if ri < 0:
            self._assign(aj, alloc, deferred)
            return
        if (
            deferred is not None
            and aj.state is WAITING
            and not self.pending
            and self.res[ri].free >= units
        ):
            self._start(aj, ri, units, variant, alloc, arm=False)
            deferred.append(aj)
            return
        self._assign_at(aj, alloc, deferred, ri, units, variant)

    def _resolve(self, job: Job, alloc: Allocation) -> tuple[int, int, _Variant]:
        by_id = self.resolved_by_id
        got = by_id.get(id(alloc))
        if got is not None and got[0] is alloc:  # the same (immutable) object: no hashing
            return got[1]
        try:
            hit = self.resolved.get(alloc)
        except TypeError:  # an unhashable axis value: resolved (and checked) every time
            hit = None
        if hit is not None:
            if len(by_id) >= _RESOLVED_BY_ID_MAX:  # policies that build allocations per decision
                by_id.clear()
            by_id[id(alloc)] = (alloc, hit)  # the entry keeps ``alloc`` alive: ids stay unique
            return hit
        out = self._resolve_new(job, alloc)
        with contextlib.suppress(TypeError):  # unhashable: not cached
            self.resolved[alloc] = out
        return out

    def _resolve_new(self, job: Job, alloc: Allocation) -> tuple[int, int, _Variant]:
        if not isinstance(alloc, Allocation):
            raise SimulationError(
                f"policy {self._pname()!r}: allocation of job {job.id} is "
                f"{type(alloc).__name__}; expected an Allocation"
            )
        try:
            ri = self.sim.machine.index(alloc.resource)
        except ConfigError as exc:
            raise SimulationError(f"policy {self._pname()!r}: {exc}") from None
        cap = self.res[ri].capacity
        units = cap if alloc.units is None else alloc.units
        if not (isinstance(units, int) and 1 <= units <= cap):
            raise SimulationError(
                f"policy {self._pname()!r}: job {job.id} allocated {units!r} unit(s) of "
                f"{self.res[ri].name!r}; allowed: 1..{cap}"
            )
        return ri, units, self._variant_for(ri, units, alloc)

    def _assign(self, job: Job, alloc: Allocation, deferred: list[Job] | None = None) -> None:
        ri, units, variant = self._resolve(job, alloc)
        self._assign_at(job, alloc, deferred, ri, units, variant)

    def _assign_at(
        self,
        job: Job,
        alloc: Allocation,
        deferred: list[Job] | None,
        ri: int,
        units: int,
        variant: _Variant,
    ) -> None:
        """``_assign`` with ``alloc`` resolved to ``(ri, units, variant)``."""
        st = job.state
        if st is WAITING:
            if deferred is not None:
                if not self.pending and self.res[ri].free >= units:
                    # Nothing waits before it and its units are free: started now, as the
                    # drain after the decision's assignments would start it (in assignment
                    # order); ``_apply`` arms it (``deferred``).
                    self._start(job, ri, units, variant, alloc, arm=False)
                    deferred.append(job)
                    return
                # It waits: the drain starts the later ones after it, so the ones started
                # at assignment get their events now, at 1.0, where the drain pushed them.
                for dj in deferred:
                    self._arm(dj)
                deferred.clear()
            job.state = STARTING
            self.ready.remove(job)
            self.pending.append((job, ri, units, variant, alloc))
        elif st is STARTING:
            self.pending = [
                (job, ri, units, variant, alloc) if e[0] is job else e for e in self.pending
            ]
        elif st is RUNNING:
            # ``(ri, units, variant) == (job._res, job.units, job.variant)`` without the two
            # tuples: the items compared in turn, each as a tuple compares them (identity
            # first, then ``==``)
            jv = job.variant
            if ri == job._res and units == job.units and (variant is jv or variant == jv):
                return
            if ri == job._res and units == job.units:
                self._switch_in_place(job, variant, alloc)
            else:
                if not self._checkpoint(job):  # it finishes before it could move
                    job._leaving = True
                else:
                    self.n_moving += job._next_alloc is None
                    job._next_alloc = (ri, units, variant, alloc)
        elif st is PREEMPTING:
            self.n_moving += job._next_alloc is None
            job._next_alloc = (ri, units, variant, alloc)
        else:
            raise self._invalid(job, "an unfinished job")

    def _check_capacity(self) -> None:
        """The allocations a decision leads to (jobs keeping their units, re-allocations,
        pending starts) fit each resource's capacity. Jobs being stopped keep their units until
        they release them; pending starts wait for that, so the units held at any instant never
        exceed the capacity either (``_start`` checks it). One resource: the units summed in
        one integer (twenty-second round; the list of sums and its boxed items otherwise)."""
        res1 = self.res1
        if res1 is not None:
            tot = 0
            for j in res1.jobs:
                nxt = j._next_alloc
                if nxt is not None:
                    tot += nxt[1]  # (its resource is the one: ``nxt[0]`` is 0)
                elif j.state is RUNNING and not j._leaving:
                    tot += j.units
            for e in self.pending:
                tot += e[2]
            if tot > res1.capacity:
                raise SimulationError(
                    f"policy {self._pname()!r} allocated {tot} unit(s) of {res1.name!r} "
                    f"(capacity {res1.capacity}) at t={self.clock.now!r} s"
                )
            return
        need = [0] * len(self.res)
        for r_i, res in enumerate(self.res):
            for j in res.jobs:
                nxt = j._next_alloc
                if nxt is not None:
                    need[nxt[0]] += nxt[1]
                elif j.state is RUNNING and not j._leaving:
                    need[r_i] += j.units
        for _, ri, units, _, _ in self.pending:
            need[ri] += units
        for r_i, res in enumerate(self.res):
            if need[r_i] > res.capacity:
                raise SimulationError(
                    f"policy {self._pname()!r} allocated {need[r_i]} unit(s) of {res.name!r} "
                    f"(capacity {res.capacity}) at t={self.clock.now!r} s"
                )

    def _retime(self, job: Job) -> None:
        """Re-arm a running job after its stop step changed (its segment stays open)."""
        now = self.clock.now
        if now > job._t0:
            self._end_segment(job, now, job.executed_s)
            job._seg_start = now
            job._t0 = now
            job._seg_exec0 = job._exec
        self._arm(job)

    def _set_rate(self, job: Job, factor: float) -> None:
        """A running job's speed changes now: close its segment, re-time its next event."""
        now = self.clock.now
        if now > job._t0:
            self._end_segment(job, now, job.executed_s)
            job._seg_start = now
            job._t0 = now
            job._seg_exec0 = job._exec
        job.rate = factor
        self._arm(job)

    def _switch_in_place(self, job: Job, variant: _Variant, alloc: Allocation) -> None:
        """Move a running job to another plan variant on the same units: it pauses
        ``switch_s`` seconds, then continues from the same ``(step, fraction)``."""
        now = self.clock.now
        if now >= job._t0:
            self._end_segment(job, now, job.executed_s)
            job._seg_start = now
        self._switch_plan(job, self._plan_for(job, variant, job.units, job._res))
        job.variant = variant
        job.allocation = alloc
        job._t0 = max(job._t0, now) + self.sim.switch_s
        job._seg_exec0 = job._exec
        self._arm(job)

    def _merge(self, into: Job, jobs: Sequence[Job]) -> None:
        """Merge waiting ``jobs`` into waiting ``into``: one batch at their common position."""
        if into.state is not WAITING or any(j.state is not WAITING or j is into for j in jobs):
            raise self._invalid(into, "waiting jobs (merge)")
        pos = into.position
        for j in jobs:
            if j.profile is not into.profile:
                raise SimulationError(
                    f"policy {self._pname()!r}: cannot merge job {j.id} ({j.network}) into "
                    f"job {into.id} ({into.network})"
                )
            p = j.position
            if p[0] != pos[0] or abs(p[1] - pos[1]) > 1e-9:
                raise SimulationError(
                    f"policy {self._pname()!r}: cannot merge job {j.id} at {p} into job "
                    f"{into.id} at {pos}; merged jobs must stand at the same position"
                )
        for j in jobs:
            self.ready.remove(j)
            if j.first_start_s == j.first_start_s:  # it ran (e.g. a catch-up to this step)
                first = self.rec_first
                for row in j._rows:
                    if first[row] != first[row]:
                        first[row] = j.first_start_s
            j.state = DONE  # absorbed: its samples are recorded with ``into``
            j._epoch += 1
            into._set_rows(into._rows + j._rows, into._batch + j._batch)
            into.preemptions = max(into.preemptions, j.preemptions)
            into._waited = max(into._waited, j._waited)
            if into.first_start_s != into.first_start_s:
                into.first_start_s = j.first_start_s
        # The merged batch runs on its new batch size's plan from the same position.
        new = self._plan_for(into, into.variant, max(into.units, 1), max(into._res, 0))
        into.plan = new
        into.isolated_s = new.total_s
        into._exec = new.executed_at(*pos)

    # --- period skipping ----------------------------------------------------------------------
    def _catch_up_periods(self, t: float, period: float) -> float:
        """Before the events at ``t``: credit the period boundaries skipped since the last wake
        that lie before ``t`` (one ``on_periods`` call), and turn a skipped boundary at ``t``
        itself (within the time tolerance) into a real tick handled with ``t``'s events, as if
        never skipped. Returns the wake's time: that boundary if it is a hair before ``t`` (the
        wake starts at the earliest of its events, as it would have with every tick)."""
        k0 = self.skip_k0
        assert k0 is not None
        tol = TIME_TOL_S
        last = min(self.sched_k - 1, math.floor((t - tol) / period))
        while last >= k0 and last * period >= t - tol:
            last -= 1
        while last + 1 < self.sched_k and (last + 1) * period < t - tol:
            last += 1
        count = last - k0 + 1
        if count > 0:
            tokens = self.tokens
            if tokens is not None:
                running = self.running
                tokens.credit_periods(
                    t, k0 * period, count, -1 if running is None else running.order
                )
            else:
                view = SchedulerView(t, self.ready, self.running, "period", self.sim.profiles)
                self.policy.on_periods(view, k0 * period, count)
        nxt = last + 1
        if nxt < self.sched_k and nxt * period <= t + tol:
            q = self.queue
            b = nxt * period
            tick = (b, PERIOD, q.next_seq(), None, self.tick_epoch)
            if TYPED_HEAP:  # (the typed push: native comparisons, the same heap order)
                epush(q.heap, tick)
            else:
                heappush(q.heap, tick)
            if b < t:
                t = b
                self.clock.now = b
            nxt += 1
        # The rest stay skipped until the next wake re-plans (a wake may change nothing).
        self.skip_k0 = nxt if nxt < self.sched_k else None
        return t

    def _compact_heap(self) -> None:
        """Move the superseded completions and boundaries out of the event heap into
        ``stale_c`` (their times) and make a heap of the rest: the events still pop in the
        same order (each has its own sequence number), and a superseded one, which did
        nothing but open a wake at its time, still opens it (``execute`` reads ``stale_c``).
        P-RRB supersedes its running job's completion at every slice; those entries stayed in
        the heap until their time, deepening every push and pop."""
        heap = self.queue.heap
        stale = self.stale_c
        live: list[Any] = []
        for ev in heap:
            kind: int = ev[1]
            if kind == COMPLETE or kind == BOUNDARY:  # noqa: SIM109 - two native compares
                job: Job = ev[3]
                epoch: int = ev[4]
                if epoch != job._epoch:
                    fpush(stale, ev[0])
                    continue
            live.append(ev)
        heap[:] = live
        if TYPED_HEAP:
            eheapify(heap)
        else:
            heapq.heapify(heap)

    def _plan_tick(
        self, now: float, period: float, reason: str, busy: bool, no_arrivals: bool
    ) -> None:
        """After a wake with jobs waiting: schedule the next period tick at the first boundary
        after ``now`` at which the policy's decision can change (``quiet_periods``); the ones
        before it are credited later by :meth:`_catch_up_periods`."""
        k0 = _next_boundary(now, period)
        tokens = self.tokens
        if self.preempting is not None:
            n = _QUIET_MAX  # no decision until the save is done (an event)
        elif tokens is not None:
            running = self.running
            run_k = -1 if running is None else running.order
            n = max(0, min(tokens.quiet(now, k0 * period, run_k), _QUIET_MAX))
        else:
            view = SchedulerView(now, self.ready, self.running, "period", self.sim.profiles)
            n = max(0, min(int(self.policy.quiet_periods(view, k0 * period)), _QUIET_MAX))
        if (
            not busy
            and no_arrivals
            and not self.stale_c  # (superseded completions are events other than ticks)
            and self.ev_job is None
            and not any(e[1] != PERIOD for e in self.queue.heap)
        ):
            # Only ticks are left; a policy may idle for a while, not forever.
            self.idle_periods = self.idle_periods + 1 if reason == "period" else 0
            if self.idle_periods > _MAX_IDLE_TICKS:
                raise SimulationError(
                    f"policy {self._pname()!r} left the machine idle for "
                    f"{_MAX_IDLE_TICKS} periods with {len(self.ready)} jobs waiting and "
                    f"nothing else to happen (t={now!r} s)"
                )
            n = 0
        k = k0 + n
        if k != self.sched_k or not self.tick_pending:
            self.tick_epoch += 1
            self.sched_k = k
            if self.tick_t < math.inf:  # the tick it replaces: superseded (its wake stays)
                fpush(self.stale_t, self.tick_t)
            self.tick_t = k * period
            self.tick_seq = self.queue.next_seq()
            self.tick_pending = True
        self.skip_k0 = k0 if n > 0 else None

    # --- the loop -----------------------------------------------------------------------------
    def execute(self) -> SimResult:
        sim = self.sim
        policy = self.policy
        self.power_policy = sim.power
        policy.reset()
        temporal = self.temporal
        self.tokens = None
        if sim.estimator is not None and getattr(sim.estimator, "shape_only", False):
            self.est_k = self.estimates()
        torder = declared_order(policy) if temporal else None
        make_table = getattr(policy, "general_table", None)
        if (torder == "tokens-remaining" or torder == "tokens-arrival") and callable(make_table):
            # Algorithm 2 on the token table (the built-in rule): the engine's own table where
            # the policy gives one (``general_table``), made from the run's columns (no
            # request made for it), its steps called natively by
            # dispatch index; the decision made here (below).
            nt = len(self.order_of)
            self.tokens = make_table(
                self.disp("priority"), self.disp("arrival_s"), self.disp("id"), [0.0] * nt, [0.0] * nt
            )
            if self.tokens is not None:
                self.job_of = [None] * nt
        if self.tokens is None and temporal and callable(getattr(policy, "ready_hooks", None)):
            # a policy that keeps per-job state hears of the ready queue's changes (its hooks
            # are given the requests: made here for a table input, and only for such a policy)
            self.on_enter, self.on_leave = ready_hooks(policy, self.arrivals) or (None, None)
        tokens = self.tokens
        preemptive = bool(getattr(policy, "preemptive", True))
        period = getattr(policy, "period_s", None)
        if period is not None and not (period > 0.0 and math.isfinite(period)):
            raise SimulationError(
                f"policy {self._pname()!r}: period_s={period!r}; must be a positive number or None"
            )
        profiles = sim.profiles
        clock = self.clock
        q = self.queue
        heap = q.heap
        seq = q.next_seq
        ready = self.ready
        # typed (``tolist`` is ``Any``): compiled, the next arrival is a C double, compared
        # with the event times unboxed (an ``Any`` one was boxed at every comparison)
        arrivals: list[float] = self.static[5][self._order_a].tolist()
        self.arr_disp = arrivals
        self.rows_k = list(self.arrival_rows)
        self.bw_k = [0.0] * len(arrivals)
        held = self.held
        # (whether any request is held back: a byte read from the ``bytearray`` is a generic
        # item read compiled, so the dispatch loop reads it only where one can be set)
        holding = 1 in held
        handlers = self.handlers
        direct = _DIRECT_HANDLERS
        n = len(arrivals)
        until = self.until
        inf = math.inf
        tol = TIME_TOL_S
        ai = 0
        while holding and ai < n and held[ai]:
            ai += 1
        next_arr = arrivals[ai] if ai < n else inf
        now = 0.0
        events = 0
        progress = self.progress
        chunk = max(1, -(-n // 100))  # about 100 progress calls
        on_dispatch = policy.on_dispatch
        on_complete = policy.on_complete
        # Hooks left as the shared base's no-ops are not called at all.
        call_dispatch = not hook_is_no_op(policy, "on_dispatch")
        call_complete = not hook_is_no_op(policy, "on_complete")
        call_period = not hook_is_no_op(policy, "on_period")
        select = policy.select
        new_view = object.__new__
        view_cls = SchedulerView
        fast_view = _FAST_VIEW
        completed = self.completed
        arrived = self.released
        res0 = self.res[0]
        units0 = res0.capacity
        variant0 = self.variant0
        alloc0 = Allocation(res0.name, units0)
        idle_ticks = 0
        busy = False  # machine policies: a job holds or waits for units (read by the tick)
        stuck = 0
        last_t = 0.0
        skipping = (
            temporal
            and period is not None
            and sim.skip_periods
            and callable(getattr(policy, "quiet_periods", None))
            and callable(getattr(policy, "on_periods", None))
            and not getattr(policy, "ticks_every_period", False)
        )
        period_f = float(period) if period is not None else 0.0
        n_done_before = 0
        # Ticks that cannot change the decision (a policy's ``quiet_before``, P-RRB): a tick
        # alone in its wake before ``quiet`` is passed over, not woken for (see below).
        quiet_fn = getattr(policy, "quiet_before", None)
        if not (
            temporal
            and period is not None
            and not skipping
            and callable(quiet_fn)
            and hook_is_no_op(policy, "on_period")
        ):
            quiet_fn = None
        quiet = -inf
        # A CHECKPOINT's stop carried out at the decision, not woken for (``_checkpoint``'s
        # ``fuse``): for a policy that declares its quiet ticks (P-RRB: its hooks read no
        # job's progress), with no power policy and no ``until``. Nothing runs on the one
        # resource until the save is done and no decision is made before then, so the stop's
        # wake changes nothing but ``events``.
        fuse_stop = quiet_fn is not None and sim.power is None and until == inf
        # A declared round-robin order (NP-RRB; P-RRB with its period and ``quiet_before``):
        # the engine keeps the rotation (``Rotation``: the waiting jobs by model, by dispatch
        # index), the pointer (the model of the last grant), the slice (its job and start)
        # and makes ``NPRRBCore.select`` / ``PRRBCore.select``'s decision and reads
        # ``quiet_before``'s time without a view or a call. The
        # class's own ``on_dispatch`` / ``on_complete`` keep the policy's rotation for its
        # ``select``, which is not called: they are not called either.
        rot: Rotation | None = None
        model_of: list[int] = []
        rr_ptr = -1
        slice_k = -1
        slice_start = 0.0
        quantum_q = 0.0
        quiet_slice = False
        if (
            torder == "round-robin"
            and callable(getattr(policy, "rotation", None))
            and (period is None) != callable(getattr(policy, "quiet_before", None))
        ):
            rot = self.rot = policy.rotation(self.disp("network"))
            rot.hold_joins()  # models numbered as their first job is dispatched
            model_of = rot.model_of
            self.job_of = [None] * len(model_of)
            call_dispatch = call_complete = False
            if preemptive:
                quantum_q = policy.quantum_s * (1 - 1e-9)
        # A machine policy's wakes it declares quiet (``quiet_wake``: Planaria's ends of a save
        # that change no target): ``NOTHING`` carried out without a view or a decision.
        quiet_wake = None if temporal else quiet_wake_rule(policy)
        # A machine policy's decision on a machine with no job, made without a view
        # (``empty_wake``: Planaria's completion of the last job; twenty-second round).
        empty_wake = None if temporal else empty_wake_rule(policy)
        # ... and on a machine with one job (``lone_wake``: Planaria's arrival on an idle
        # array, its last job's growth), a schedule made without a view
        lone_wake = None if temporal else lone_wake_rule(policy)
        # A declared rank or remaining order (FCFS, HPF, SJF): the engine keeps the waiting jobs
        # in a heap by the declared key (``sim/heaps.py``'s entries) and makes the class's
        # ``select`` decision on it, without a view or a call. The best waiting job is the
        # heap's top: ``pick_best``'s job (``queue_key``, then dispatch order), or
        # ``shortest_remaining``'s (the remaining estimate, then dispatch order). A preemptive policy lets it displace the running job where
        # ``better(rank_key(top), rank_key(running))``, or where its remaining estimate is
        # below the running job's as of now (ties keep the running job), by its mechanism
        # (Algorithm 3 on numbers, ``dynamic_choice``, for the dynamic ones).
        rank_heap: list[Any] | None = None
        rank: list[Any] = []
        better: Any = None
        cmp = 0
        static_mech: Any = None
        dyn_preempt: Any = _CHECKPOINT
        if tokens is not None or rot is not None:
            static_mech, dyn_preempt = declared_mechanisms(policy, str(torder))
        job_of = self.job_of
        n_k = 1
        srpt = False
        order = (
            declared_order(policy)
            if temporal and tokens is None and quiet_fn is None and not skipping
            else None
        )
        if (order == "rank" and callable(getattr(type(policy), "queue_key", None))) or (
            order == "remaining"
        ):
            pol: Any = policy
            if order == "rank":
                self.rank_entry = heap_keys(self.keys_of(policy, "queue_key"))
                if preemptive:
                    rank = self.keys_of(policy, "rank_key")
                    better = pol.better
                    # ``better`` written out where it is ``operator.gt`` (HPF) or ``lt``
                    # (FCFS): a comparison, not a call
                    cmp = 1 if better is operator.gt else 2 if better is operator.lt else 3
            else:
                srpt = self.srpt = True
                self.skey = [0.0] * len(arrivals)
            static_mech, dyn_preempt = declared_mechanisms(pol, order)
            n_k = max(1, len(arrivals))
            rank_heap = self.rank_heap = []
            job_of = self.job_of = [None] * len(arrivals)
        # The waiting jobs, for the loop's tests of whether any waits: the ready list, or the
        # declared order's heap, which holds them in its place (one entry per waiting job).
        waiting: list[Any] = rank_heap if rank_heap is not None else ready
        # The ready list kept in no order (``ready_pos``): for the built-in Algorithm 2 on its
        # table (no view is made; ``_waiting`` sorts it where a list is read) and for a
        # declared round-robin order (its own methods, which ``declared_order`` holds the
        # policy to, read the list's length or sort it: ``Rotation`` decides on job numbers).
        if rank_heap is None and (tokens is not None or torder == "round-robin"):
            self.ready_pos = [0] * len(arrivals)

        stale_c = self.stale_c
        compact_at = _COMPACT_MIN
        while True:
            if len(heap) > compact_at:
                self._compact_heap()
                compact_at = max(_COMPACT_MIN, 2 * len(heap))
            if heap:
                top = heap[0]
                th = top[0]
                if (
                    (th - slice_start < quantum_q if quiet_slice else th < quiet)
                    and top[1] == PERIOD
                    and (not stale_c or th < cast(float, stale_c[0]))
                    and th < self.ev_t  # (the slot's kinds come before a tick's)
                ):
                    # The pending tick at ``c`` would wake alone (nothing else within the time
                    # tolerance after it), find the same jobs waiting and the same job running,
                    # and keep it (the policy says so before ``quiet``); the next tick would go
                    # to the next boundary. Pass over every such tick in one step: the run's
                    # state is what those wakes leave (clock, last wake), less their ``events``.
                    # The next event after the tick is the earlier of the root's children.
                    c = th
                    hn = len(heap)
                    tn = heap[1][0] if hn > 1 else inf
                    if hn > 2 and heap[2][0] < tn:
                        tn = heap[2][0]
                    if next_arr < tn:
                        tn = next_arr
                    if stale_c and cast(float, stale_c[0]) < tn:
                        tn = cast(float, stale_c[0])
                    if self.ev_t < tn:
                        tn = self.ev_t
                    if c + tol < tn and c <= until:
                        while True:
                            # ``_next_boundary(c, period_f) * period_f``, inline
                            k = int(c / period_f) + 1  # (``floor``: ``c`` >= 0)
                            while k * period_f <= c + tol:
                                k += 1
                            nc = k * period_f
                            if (
                                (nc - slice_start < quantum_q if quiet_slice else nc < quiet)
                                and nc + tol < tn
                                and nc <= until
                            ):
                                c = nc
                            else:
                                break
                        now = c
                        clock.now = c
                        q.now = c
                        last_t = c
                        stuck = 0
                        if TYPED_HEAP:
                            ereplace(heap, (nc, PERIOD, seq(), None, 0))
                        else:
                            heapreplace(heap, (nc, PERIOD, seq(), None, 0))
                        th = heap[0][0]
            else:
                th = inf
            if self.ev_t < th:  # the slot's event
                th = self.ev_t
            if stale_c and cast(float, stale_c[0]) < th:  # a superseded completion's wake
                th = cast(float, stale_c[0])
            if skipping:  # the scheduled tick and the superseded ones (``tick_t``, ``stale_t``)
                if self.tick_t < th:
                    th = self.tick_t
                stale = self.stale_t
                if stale and cast(float, stale[0]) < th:
                    th = cast(float, stale[0])
            t = th if th < next_arr else next_arr
            if t == inf or t > until:
                break
            if t > now:
                if skipping and self.skip_k0 is not None:
                    clock.now = t
                    t = self._catch_up_periods(t, period_f)
                now = t
                clock.now = t
                q.now = t
                stuck = 0
            else:
                stuck += 1
                if stuck > _MAX_SAME_INSTANT:
                    raise SimulationError(
                        f"policy {self._pname()!r} made {_MAX_SAME_INSTANT} decisions at "
                        f"t={now!r} s without time advancing (re-allocating in a cycle?)"
                    )
            horizon = now + tol
            woke = False
            reasons = 0  # bit set: 1 preempted, 2 exit/stopped (``special``), 4 timer
            special = ""
            ticked = False
            while True:
                while stale_c and cast(float, stale_c[0]) <= horizon:
                    fpop(stale_c)  # a superseded completion: its wake is open, nothing more
                if skipping:
                    stale = self.stale_t
                    while stale and cast(float, stale[0]) <= horizon:
                        fpop(stale)  # a superseded tick: its wake is open, nothing more
                    tt = self.tick_t
                    if (
                        tt <= horizon
                        and tt < self.ev_t  # (the slot's kinds come before a tick's)
                        and (not heap or _before(tt, PERIOD, self.tick_seq, heap[0]))
                    ):
                        # the scheduled tick, in its place among the events (time, kind,
                        # sequence), as the heap would pop it
                        self.tick_t = inf
                        self.tick_pending = False
                        if not waiting:
                            continue  # nobody waits: the tick is skipped
                        ticked = True
                        events += 1
                        woke = True
                        continue
                kind: int
                epoch: int
                et = self.ev_t
                if et <= horizon and (
                    not heap or _before(et, self.ev_kind, self.ev_seq, heap[0])
                ):
                    # the slot's event, in its place among the heap's (time, kind, sequence)
                    kind = self.ev_kind
                    job = cast(Any, self.ev_job)  # (a ``Job``, as the heap's entries hold)
                    epoch = self.ev_epoch
                    self.ev_t = inf
                    self.ev_job = None
                elif not heap or heap[0][0] > horizon:
                    break
                # compiled, ``events.epop`` (``heapq``'s algorithm on the same tuples, the
                # comparisons typed); the fields read by index, not unpacked (an unpacking of
                # an untyped object is a generic iteration compiled)
                elif TYPED_HEAP:
                    ev = epop(heap)
                    kind = ev[1]
                    job = ev[3]
                    epoch = ev[4]
                else:
                    _, kind, _, job, epoch = heappop(heap)
                if kind == PERIOD:
                    if epoch != self.tick_epoch:  # pragma: no cover - superseded: ``stale_t``
                        continue
                    self.tick_pending = False
                    if not waiting:
                        continue  # nobody waits: the tick is skipped
                    ticked = True
                else:
                    # compiled, every kind's handler called directly (native calls: no
                    # look-up in the table, bound method or argument parsing); interpreted,
                    # every kind by the table (a bound method's look-up costs about what the
                    # comparisons would)
                    if not direct:
                        r = handlers[kind](job, epoch)
                    elif kind == COMPLETE:
                        r = self._h_complete(job, epoch)
                    elif kind == BOUNDARY:
                        r = self._h_boundary(job, epoch)
                    elif kind == STOP:
                        r = self._h_stop(job, epoch)
                    elif kind == SAVE_DONE:
                        r = self._h_save_done(job, epoch)
                    elif kind == TIMER:
                        r = "timer"  # (``_h_timer``)
                    else:
                        r = self._h_release(job, epoch)
                    if not r:
                        if kind in (COMPLETE, BOUNDARY):
                            continue  # superseded
                    elif r == "preempted":
                        reasons |= 1
                    elif r == "timer":
                        reasons |= 4
                    elif r != "completion" and r != "arrival":
                        reasons |= 2
                        special = r
                events += 1
                woke = True
            while next_arr <= horizon:
                self._dispatch(ai)  # (a native call compiled; a bound method's is generic)
                events += 1
                ai += 1
                while holding and ai < n and held[ai]:
                    ai += 1
                next_arr = arrivals[ai] if ai < n else inf
            if not woke and not arrived:
                continue  # only stale or skipped events: the run's clock stays at last_t
            last_t = now

            if completed:
                if job_of:  # (a finished job is not read through it again: let it go)
                    for job in completed:
                        job_of[job.order] = None
                if tokens is not None:
                    # (a finished job's table entries are never read again: let them go)
                    for job in completed:
                        tokens.finished(job.order)
                elif call_complete:
                    for job in completed:
                        on_complete(job, now)
                n_fin = self.n_finished
                if progress is not None and (
                    n_fin // chunk != n_done_before // chunk or n_fin == n
                ):
                    progress(n_fin)
                    self.reported = n_fin
                n_done_before = n_fin
                completed.clear()
                reason = "preempted" if reasons & 1 else "completion"
            elif reasons & 1:
                reason = "preempted"
            elif reasons & 2:
                reason = special
            elif arrived:
                reason = "arrival"
            elif reasons & 4:
                reason = "timer"
            elif ticked:
                reason = "period"
            else:
                reason = ""  # only a stop: the preemption is still in flight
            if arrived:
                if call_dispatch:
                    for job in arrived:
                        on_dispatch(job, now)
                arrived.clear()

            if temporal:
                running = self.running
                if ticked and call_period:
                    if tokens is not None:  # Algorithm 2 lines 6-7 on the table
                        tokens.credit_tick(now, -1 if running is None else running.order)
                    else:
                        policy.on_period(
                            SchedulerView(now, self._waiting(), running, "period", profiles)
                        )
                if reason and self.preempting is None and rank_heap is not None:
                    best: Job | None = None
                    top_r = 0.0
                    skey = self.skey
                    while rank_heap:
                        if srpt:
                            kt = cast(int, rank_heap[0])
                            tj = job_of[kt]
                            top_r = skey[kt]
                        else:
                            tj = job_of[cast(int, rank_heap[0]) % n_k]
                        if tj is not None and tj.state is WAITING:
                            best = tj
                            break
                        self._pop_ready(rank_heap)  # (none: every start pops its job's entry)
                    displace = False
                    if best is not None and running is not None and preemptive:
                        if srpt:  # its remaining estimate as of now (``remaining_s``)
                            rem = running.estimated_s - running.executed_s
                            displace = top_r < (0.0 if rem < 0.0 else rem)
                        elif cmp == 1:
                            displace = bool(rank[best.order] > rank[running.order])
                        elif cmp == 2:
                            displace = bool(rank[best.order] < rank[running.order])
                        else:
                            displace = bool(better(rank[best.order], rank[running.order]))
                    if best is None:
                        pass  # nobody waits: ``KEEP``
                    elif running is None:
                        self._pop_ready(rank_heap)
                        self._start(best, 0, units0, variant0, alloc0)
                        self.running = best
                    elif displace:
                        mech = self._displacement(running, best, static_mech, dyn_preempt)
                        if mech is _CHECKPOINT:
                            self._checkpoint(running, fuse_stop)
                        elif mech is _KILL:
                            self._pop_ready(rank_heap)
                            self._kill(running)
                            self._start(best, 0, units0, variant0, alloc0)
                            self.running = best
                        # (``DRAIN``: the running job finishes first)
                elif reason and self.preempting is None and tokens is not None:
                    # Algorithm 2 on the table (``TokenScheduler.select``'s decision, made
                    # here): a non-preemptive policy keeps a running job
                    # without asking the table; else the table's pick (lines 9-10) runs on an
                    # idle array, and displaces the running job by the policy's mechanism
                    # (Algorithm 3 on numbers for the dynamic ones) where it is another job.
                    if running is None:
                        kp = tokens.pick(now, -1, 0.0)
                        if kp >= 0:
                            best = job_of[kp]
                            if best is not None:
                                self._start(best, 0, units0, variant0, alloc0)
                                self.running = best
                    elif preemptive:
                        kp = tokens.pick(now, running.order, running.executed_s)
                        best = job_of[kp] if kp >= 0 else None
                        if best is not None and best is not running:
                            mech = self._displacement(running, best, static_mech, dyn_preempt)
                            if mech is _CHECKPOINT:
                                self._checkpoint(running, fuse_stop)
                            elif mech is _KILL:
                                self._kill(running)
                                self._start(best, 0, units0, variant0, alloc0)
                                self.running = best
                            # (``DRAIN``: the running job finishes first)
                elif reason and self.preempting is None and rot is not None:
                    # Round-robin on the rotation (``NPRRBCore.select`` / ``PRRBCore.select``'s
                    # decision, made here): an idle array goes to
                    # the first-come job of the next model after the pointer; a running job
                    # keeps it while its slice lasts (``now - slice_start < quantum_s * (1 -
                    # 1e-9)``), then the next other model's first job displaces it by the
                    # policy's mechanism. A start is a grant: the pointer moves to its model,
                    # and a new job's slice begins (a CHECKPOINT grants at the save's end).
                    kr = -1
                    if running is None:
                        kr = rot.pick(rr_ptr, -1)
                    elif preemptive and not now - slice_start < quantum_q:
                        mr = model_of[running.order]
                        kr = rot.pick(mr, mr)
                    best = job_of[kr] if kr >= 0 else None
                    if best is not None and best is not running:
                        grant = running is None
                        if running is None:
                            rot.pop(kr)
                        else:
                            mech = self._displacement(running, best, static_mech, dyn_preempt)
                            if mech is _CHECKPOINT:
                                self._checkpoint(running, fuse_stop)
                            elif mech is _KILL:
                                rot.pop(kr)  # (before the victim waits again)
                                self._kill(running)
                                grant = True
                            # (``DRAIN``: the running job finishes first)
                        if grant:
                            self._start(best, 0, units0, variant0, alloc0)
                            self.running = best
                            rr_ptr = model_of[kr]
                            if kr != slice_k:
                                slice_k = kr
                                slice_start = now
                elif reason and self.preempting is None:
                    if fast_view:
                        view = new_view(view_cls)
                        d = view.__dict__
                        d["now"] = now
                        d["ready"] = ready
                        d["running"] = running
                        d["reason"] = reason
                        d["profiles"] = profiles
                        decision = select(view)
                    else:  # pragma: no cover - only if SchedulerView changes shape
                        decision = select(view_cls(now, ready, running, reason, profiles))
                    cand = decision.run
                    if cand is not None and cand is not running:
                        if (
                            type(cand) is not Job
                            or cand.state is not WAITING
                            or cand._clock is not clock
                        ):
                            raise self._invalid(cand)
                        if running is None:
                            self._start(cand, 0, units0, variant0, alloc0)
                            self.running = cand
                        elif preemptive:
                            mech = decision.mechanism
                            if mech == _CHECKPOINT:
                                self._checkpoint(running, fuse_stop)
                            elif mech == _KILL:
                                self._kill(running)
                                self._start(cand, 0, units0, variant0, alloc0)
                                self.running = cand
                            elif mech != _DRAIN:
                                raise SimulationError(
                                    f"policy {policy.name!r} returned mechanism {mech!r}; "
                                    f"allowed: {', '.join(m.value for m in Mechanism)}"
                                )
            else:
                if ticked and call_period:
                    policy.on_period(self._machine_view("period"))
                if reason:
                    if quiet_wake is not None and quiet_wake(reason):
                        if self.pending:  # ``_apply(NOTHING)``
                            self._drain_pending()
                    elif (
                        empty_wake is not None
                        and not ready
                        and not self.pending
                        and not self._held_any()
                        and empty_wake(reason)
                    ):
                        pass  # ``NOTHING`` with no start waiting: nothing to carry out
                    else:
                        lone: Any = None
                        one = None
                        if lone_wake is not None and not self.pending:
                            one = self._lone_job()
                            if one is not None:
                                lone = lone_wake(reason, one)
                        if lone is None:
                            self._apply(select(self._machine_view(reason)))
                        elif one is not None and type(lone) is Allocation:
                            self._apply_lone(one, lone)  # ``Schedule(assign={one: lone})``
                        else:
                            self._apply(lone)
                # ``busy`` is read only by the period tick below (``skipping`` is temporal),
                # and only with a period
                if period is not None:
                    busy = any(r.jobs for r in self.res) or bool(self.pending)
            if skipping:
                if ready:  # (``skipping`` is temporal)
                    busy = self.running is not None or self.preempting is not None
                    self._plan_tick(now, period_f, reason, busy, ai >= n)
                else:
                    self.skip_k0 = None  # ticks while nobody waits change nothing
            elif waiting and period is not None and not self.tick_pending:
                # ``_next_boundary(now, period) * period``, inline, on the period as a float
                # (``int`` is ``floor`` for the clock's non-negative times; native compiled)
                k = int(now / period_f) + 1
                while k * period_f <= now + tol:
                    k += 1
                t_tick = k * period_f
                if (
                    not heap
                    and self.ev_job is None
                    and not stale_c
                    and ai >= n
                    and not (
                        self.running is not None or self.preempting is not None
                        if temporal
                        else busy
                    )
                ):
                    # Only ticks are left; a policy may idle for a while, not forever.
                    idle_ticks = idle_ticks + 1 if reason == "period" else 0
                    if idle_ticks > _MAX_IDLE_TICKS:
                        raise SimulationError(
                            f"policy {self._pname()!r} left the machine idle for "
                            f"{_MAX_IDLE_TICKS} periods with {len(waiting)} jobs waiting and "
                            f"nothing else to happen (t={now!r} s)"
                        )
                if TYPED_HEAP:  # (the typed push: native comparisons, the same heap order)
                    epush(heap, (t_tick, PERIOD, seq(), None, 0))
                else:
                    heappush(heap, (t_tick, PERIOD, seq(), None, 0))
                self.tick_pending = True
            if quiet_fn is not None and rot is not None:  # ``PRRBCore.quiet_before``'s time
                running = self.running
                quiet_slice = False
                if not ready:
                    quiet = -inf
                elif self.preempting is not None:
                    quiet = inf  # no decision until the save is done (an event)
                elif running is not None:
                    if running.order != slice_k:  # pragma: no cover - every start is a grant
                        quiet = -inf
                    elif not rot.others_wait(running.order):
                        quiet = inf  # no other model waits: only an event changes that
                    else:
                        quiet_slice = True  # the slice's threshold, tested as the decision's
                else:
                    quiet = -inf
            elif quiet_fn is not None:
                running = self.running
                if not ready:
                    quiet = -inf
                elif self.preempting is not None:
                    quiet = inf  # no decision until the save is done (an event)
                elif running is not None:
                    if fast_view:  # as the decision's view above, without the constructor
                        view = new_view(view_cls)
                        d = view.__dict__
                        d["now"] = now
                        d["ready"] = ready
                        d["running"] = running
                        d["reason"] = "period"
                        d["profiles"] = profiles
                    else:  # pragma: no cover - only if SchedulerView changes shape
                        view = view_cls(now, ready, running, "period", profiles)
                    quiet = quiet_fn(view)
                else:
                    quiet = -inf

        self.events = events
        # The clock of the last event handled (a far-off tick nobody needed, popped with the
        # queue empty, does not stretch the run).
        self._write_records()
        return self._result(last_t)

    # --- results ------------------------------------------------------------------------------
    def _write_records(self) -> None:
        """Hand the run's records to the one writer of the records
        (:func:`~npusched.sim.records.write_records`): the ``vec`` columns (``rec_*``) by
        result row as ``_record`` and ``_add_energy`` wrote them, after the partial records of
        the jobs still in flight (only with ``until``: their first start, preemptions,
        checkpoint and waste so far, no finish, no resource), each copied into an array and
        let go."""
        alive: list[Job] = list(self._waiting())
        for res in self.res:
            alive.extend(res.jobs)
        alive.extend(e[0] for e in self.pending)
        for j in alive:
            self._record(j, math.nan)
        # each record column copied into an array through its buffer (one block) and let go
        # (an empty ``vec`` of its type in its place) before the next: a peak of one column
        # (8 MB at 1e6 requests), not of all eight
        col: dict[str, npt.NDArray[Any]] = {}
        for name, dtype in _RECORDS:
            v: Any = getattr(self, name)
            col[name] = np.array(v, dtype=dtype)
            setattr(self, name, v[:0])
        write_records(
            self,
            None,
            col["rec_est"],
            col["rec_preempt"],
            col["rec_cbytes"],
            col["rec_cs"],
            col["rec_wasted"],
            first=col["rec_first"],
            finish=col["rec_finish"],
            energy=col["rec_energy"],
            resource=self.res_names,
        )
        self.res_names = []

    def _result(self, now: float) -> SimResult:
        n = len(self.arrival_rows)
        if self.n_finished < n and self.until == math.inf:
            raise SimulationError(
                f"policy {self._pname()!r} left {n - self.n_finished} of {n} requests "
                f"unfinished with the machine idle at t={now!r} s"
            )
        if self.progress is not None and self.n_finished != self.reported:
            self.progress(self.n_finished)  # a stop by ``until`` between two reports

        col, per_shape, shape_by_row, by_id, ids, arrival_in = self.static
        # Only the records are needed from here: let the per-request inputs go first.
        self.req_plans = []
        self.by_input = []
        self._code_disp = self._code_in = None  # type: ignore[assignment]

        def take(name: str, dtype: type) -> npt.NDArray[Any]:
            # The run's list becomes an array and is let go (1e6 requests: a peak of one copy).
            a: npt.NDArray[Any] = np.asarray(getattr(self, name), dtype=dtype)
            setattr(self, name, [])
            return a

        arrival = arrival_in[by_id]
        finish = take("col_finish", np.float64)
        iso = self.col_iso
        cs = take("col_cs", np.float64)
        latency = finish - arrival

        def column(name: str, dtype: type, unset: float) -> npt.NDArray[Any]:
            """Request field ``name`` by result row, ``unset`` where it is None."""
            v: Sequence[Any]
            if name in per_shape:  # one value per request shape
                v = per_shape[name]
                m = len(v)
                by = shape_by_row
            else:
                v = col.pop(name)  # let each list go once it is an array
                m = n
                by = by_id
            nones = v.count(None)
            if nones == m:
                return np.full(n, unset, dtype=dtype)
            vals = [unset if x is None else x for x in v] if nones else v
            return _packed(vals, dtype, m)[by]

        network = np.empty(len(per_shape["network"]), dtype=object)
        network[:] = per_shape["network"]
        resource: npt.NDArray[Any] = np.asarray(self.col_res, dtype=object)
        self.col_res = []
        cols: dict[str, npt.NDArray[Any]] = {
            "id": ids[by_id],
            "arrival_s": arrival,
            "first_start_s": take("col_first", np.float64),
            "finish_s": finish,
            "isolated_s": iso,
            "estimated_s": take("col_est", np.float64),
            "latency_s": latency,
            # Float rounding can leave -1e-19 s where a job never waited: clamp within the
            # engine's time tolerance (larger negatives would be a bug and stay visible).
            "waiting_s": _clamp_tiny_negative(latency - iso - cs),
            "preemptions": take("col_preempt", np.int64),
            "checkpoint_bytes": take("col_cbytes", np.int64),
            "checkpoint_s": cs,
            "wasted_s": take("col_wasted", np.float64),
            "energy_j": take("col_energy", np.float64),
            "priority": column("priority", np.int64, -1),
            "batch": column("batch", np.int64, -1),
            "slo_s": column("slo_s", np.float64, math.nan),
            "network": network[shape_by_row],
            "seq_in": column("seq_in", np.int64, -1),
            "seq_out": column("seq_out", np.int64, -1),
            "resource": resource,
        }
        done = ~np.isnan(finish)
        start = float(arrival.min()) if n else 0.0
        makespan = float(finish[done].max() - start) if done.any() else 0.0
        per_res: dict[str, dict[str, float]] = {}
        for res in self.res:
            idle = (
                res.spec.idle_power_w
                * max(now - start, 0.0)
                * (1.0 - res.busy / max(now - start, 1e-300))
            )
            per_res[res.name] = {
                "busy_s": float(res.busy),
                "energy_j": float(res.energy + max(idle, 0.0)),
                "capacity": float(res.capacity),
            }
        return SimResult(
            columns=cols,
            makespan_s=makespan,
            busy_s=float(sum(r.busy for r in self.res)),
            events=self.events,
            layer_executions=self.layer_exec,
            timeline=self.timeline,
            policy=self._pname(),
            end_s=now,
            resources=per_res,
            energy_j=float(sum(v["energy_j"] for v in per_res.values())),
            power_columns=self.power,
        )
