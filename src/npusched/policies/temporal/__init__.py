"""Temporal policies (whole-accelerator time sharing), registered in ``POLICIES`` on import.

Built-in modules (append new ones here, one import per module):

* ``fcfs``: NP-FCFS, P-FCFS
* ``hpf``: NP-HPF, P-HPF
* ``rrb``: NP-RRB, P-RRB; ``token``: NP-TOKEN, P-TOKEN; ``sjf``: NP-SJF, P-SJF;
  ``prema``: NP-PREMA, P-PREMA (PREMA Algorithm 2; ``mechanism`` selects Algorithm 3)
"""

from npusched.policies.temporal import fcfs, hpf, prema, rrb, sjf, token  # noqa: F401
from npusched.policies.temporal.fcfs import FCFS
from npusched.policies.temporal.hpf import HPF

__all__ = ["FCFS", "HPF"]
