"""The discrete-event engine (see :mod:`npusched.sim.engine`): machines, jobs, events.

The types a policy sees and answers (views, decisions) live in
:mod:`npusched.policies.contract`; the engine imports them, policies never import the engine.
"""

from npusched.sim.engine import PowerPiece, Segment, SimResult, Simulator, power_timeline
from npusched.sim.events import TIME_TOL_S, EventQueue
from npusched.sim.job import Job
from npusched.sim.resources import Machine, Resource, fission_array, single_npu, soc

__all__ = [
    "TIME_TOL_S",
    "EventQueue",
    "Job",
    "Machine",
    "PowerPiece",
    "Resource",
    "Segment",
    "SimResult",
    "Simulator",
    "fission_array",
    "power_timeline",
    "single_npu",
    "soc",
]
