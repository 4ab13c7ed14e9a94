"""Temporal policies (whole-accelerator time sharing), registered in ``POLICIES`` on import.

Built-in modules (append new ones here, one import per module):

* ``fcfs``: NP-FCFS, P-FCFS
* ``hpf``: NP-HPF, P-HPF
"""

from npusched.policies.temporal import fcfs, hpf  # noqa: F401
from npusched.policies.temporal.fcfs import FCFS
from npusched.policies.temporal.hpf import HPF

__all__ = ["FCFS", "HPF"]
