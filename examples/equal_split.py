"""A machine policy in a few lines: split Planaria's 16 subarrays equally among the admitted jobs.

Run: ``python examples/equal_split.py``. Each job runs on the plan variant of its allocation
(the ``subarrays`` axis of the ``planaria`` device) and keeps its ``(step, fraction)`` whenever
the policy re-splits the array (a CHECKPOINT of one tile, then a restore on the new units).
"""

from __future__ import annotations

from npusched.hardware import compile_profile, get_device
from npusched.models import get_network
from npusched.policies.contract import NOTHING, Allocation, MachineView, Schedule
from npusched.policies.machine import MachinePolicyBase
from npusched.sim import Simulator, fission_array
from npusched.workloads import poisson_workload


class EqualSplit(MachinePolicyBase):
    """Admit at most four jobs (lowest id first) and give each an equal share of the array."""

    name = "equal-split"

    def select(self, view: MachineView) -> Schedule:
        jobs = sorted([*view.preempting, *view.running, *view.ready][:4], key=lambda j: j.id)
        if not jobs:
            return NOTHING
        share, extra = divmod(view.resources["array"].capacity, len(jobs))
        return Schedule(
            assign={j: Allocation("array", share + (i < extra)) for i, j in enumerate(jobs)}
        )


def main(n: int = 200) -> None:
    device = get_device("planaria")
    nets = ("resnet-50", "mobilenet-v1", "googlenet")
    profiles = {n_: compile_profile(get_network(n_), device, (1,)) for n_ in nets}
    requests = poisson_workload(400.0, models=nets, n_requests=n, random_state=0)
    res = Simulator(profiles, EqualSplit(), machine=fission_array(16)).run(requests)
    lat = res.columns["latency_s"] / res.columns["isolated_s"]
    print(f"{res.n_finished} requests, mean normalised turnaround {lat.mean():.2f}, "
          f"energy {res.energy_j * 1e3:.1f} mJ, array busy {res.busy_s * 1e3:.1f} ms")


if __name__ == "__main__":
    main()
