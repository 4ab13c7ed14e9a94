"""The contract's native classes (eighteenth round): the engine's job as both sides read it.

:class:`JobCore` holds what a policy may read of the engine's job (the fields of
:class:`~npusched.policies.contract.JobView` that the engine keeps as attributes, and the
properties computed from them: ``executed_s``, ``waited_s``, ``position``, ``stay``) and the
simulator's :class:`Clock` they are computed against. The engine's job
(:class:`npusched.sim.job.Job`) subclasses it and adds its own bookkeeping. The module is
compiled (``npusched.native.COMPILED_MODULES``, one mypyc group with the engine and the
policies' cores), so a compiled policy core that finds a job to be a ``JobCore``
(``isinstance``, which a user's own job object is not) reads its fields as native attributes
and calls its properties directly, where the ``JobView`` protocol is a generic attribute read
per field (a dictionary look-up on the type, then the slot's descriptor). Other job objects
(test doubles, the real-execution executor's) are read through the protocol as before.

It lives under ``policies`` because ``npusched.policies`` may not import ``npusched.sim``;
:mod:`npusched.policies.contract` re-exports it, the one module of ``policies`` the simulator
imports. The protocols stay in the interpreted ``contract`` (a ``runtime_checkable``
protocol cannot be compiled), and this module imports nothing from it (``contract`` imports
this one): the job's state and allocation are typed as objects here (the contract's
``JobState`` and ``Allocation``), which policies compare by identity or read on.
"""

from __future__ import annotations

from typing import Any, Final

from npusched.hardware.plan import ExecPlan


class Clock:
    """The simulator's current time in seconds, shared by reference with every live job."""

    __slots__ = ("now",)

    def __init__(self) -> None:
        self.now = 0.0


#: ``JobState.WAITING``, ``RUNNING`` and ``PREEMPTING``, compared by identity in the properties
#: below (set by :mod:`npusched.policies.contract` when it defines ``JobState``: this module
#: cannot import it). ``Final``: compiled, a C static (a module-dictionary look-up otherwise).
_STATES: Final[list[Any]] = []


def set_states(waiting: Any, running: Any, preempting: Any) -> None:
    """The contract's ``JobState.WAITING``, ``RUNNING`` and ``PREEMPTING`` (called once by
    :mod:`npusched.policies.contract`)."""
    _STATES[:] = [waiting, running, preempting]


class JobCore:
    """The engine's job as a policy may read it (see the module's docstring); never made
    alone (the engine makes :class:`npusched.sim.job.Job`, which sets every field).

    Times are seconds; ``executed_s`` is seconds of work on the current plan, not wall time.
    """

    __slots__ = (
        "_clock",
        "_exec",
        "_limit",
        "_t0",
        "_wait_since",
        "_waited",
        "allocation",
        "arrival_s",
        "estimated_s",
        "id",
        "isolated_s",
        "network",
        "plan",
        "preemptions",
        "priority",
        "rate",
        "slo_s",
        "state",
        "units",
    )

    id: int
    network: str
    priority: int
    arrival_s: float
    #: The first request's SLO (``request.slo_s``), kept as the request has it.
    slo_s: Any
    plan: ExecPlan
    #: ``plan.total_s``: seconds of the current plan variant, uninterrupted.
    isolated_s: float
    estimated_s: float
    #: The contract's ``JobState`` (compared by identity).
    state: Any
    preemptions: int
    #: Speed factor of the current segment (1.0: the plan variant's own speed).
    rate: float
    #: The contract's ``Allocation`` the job runs on, or ``None`` while waiting.
    allocation: Any
    #: The units the job holds on its resource (its allocation's ``units``, resolved: ``None``
    #: is the resource's capacity; 0 while it holds none).
    units: int
    _clock: Clock
    _exec: float
    _t0: float
    # Set when the job first starts (the engine sets it before a running read needs it).
    _limit: float
    _waited: float
    _wait_since: float

    @property
    def executed_s(self) -> float:
        """Seconds of work completed as of the simulator clock (excludes restore time)."""
        st = self.state
        if st is _STATES[1] or st is _STATES[2]:
            dt = self._clock.now - self._t0
            if dt > 0.0:
                e = self._exec + self.rate * dt
                lim = self._limit
                return e if e < lim else lim
        return self._exec

    @property
    def waited_s(self) -> float:
        """Seconds spent in the ready queue so far (as of the simulator clock)."""
        if self.state is _STATES[0]:
            return self._waited + (self._clock.now - self._wait_since)
        return self._waited

    @property
    def stay(self) -> tuple[float, float]:
        """``(seconds waited before the current stay in the ready queue, when it began)``
        (seconds; meaningful while waiting): :func:`~npusched.policies.contract.wait_stay`."""
        return (self._waited, self._wait_since)

    @property
    def remaining_s(self) -> float:
        """Seconds of work left on the current plan at its own speed."""
        return self.isolated_s - self.executed_s

    @property
    def position(self) -> tuple[int, float]:
        """``(step, fraction of the step done)`` as of the simulator clock."""
        return self.plan.position_at(self.executed_s)
