"""The discrete-event engine (see :mod:`npusched.sim.engine`) and the types policies see."""

from npusched.sim.engine import SimResult, Simulator
from npusched.sim.events import TIME_TOL_S, EventQueue
from npusched.sim.job import Job
from npusched.sim.types import KEEP, Decision, JobState, JobView, Mechanism, SchedulerView

__all__ = [
    "KEEP",
    "TIME_TOL_S",
    "Decision",
    "EventQueue",
    "Job",
    "JobState",
    "JobView",
    "Mechanism",
    "SchedulerView",
    "SimResult",
    "Simulator",
]
