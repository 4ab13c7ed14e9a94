"""DFS / DVFS hosted by the engine (``Simulator(power=..., power_cap_w=...)``): the derived plan
matches the pure per-step schedule, the machine's power never exceeds the cap, and every temporal
policy runs capped."""

from __future__ import annotations

import numpy as np
import pytest

from npusched.hardware import compile_profile
from npusched.hardware.power import AB9
from npusched.models import get_network
from npusched.policies import POLICIES
from npusched.policies.power import DFS, DVFS
from npusched.sim.engine import Simulator
from npusched.sim.resources import Machine, Resource
from npusched.workloads.request import Request

EFF = 0.02


def _machine(dev: AB9) -> Machine:
    return Machine((Resource("npu", idle_power_w=dev.idle_power_w),))


@pytest.mark.parametrize("policy_cls", [DFS, DVFS])
def test_engine_frames_match_the_step_schedule(policy_cls: type) -> None:
    dev = AB9(stc_efficiency=EFF, voltage_v="dvfs" if policy_cls is DVFS else 1.0)
    net = get_network("squeezenet")
    prof = compile_profile(net, dev)
    pol = policy_cls(cap_w=33.0, idle_power_w=dev.idle_power_w)
    frames = 3
    reqs = [Request(id=i, arrival_s=0.0, network="squeezenet") for i in range(frames)]
    sim = Simulator(
        {"squeezenet": prof},
        POLICIES.create("NP-FCFS"),
        machine=_machine(dev),
        power=pol,
        power_cap_w=33.0,
        record_power=True,
    )
    res = sim.run(reqs)
    # the pure schedule of one frame: the first frame starts free; every later one pays the
    # switch from the previous frame's last step (the engine charges it between jobs), i.e. the
    # cyclic schedule
    tab = dev.power_table(net, 1, voltages_v=pol.level_voltages())
    s = pol.schedule(tab, cyclic=False)
    sc = pol.schedule(tab, cyclic=True)
    assert sc.total_time_s > s.total_time_s  # the wrap-around switch is not free
    want_t = s.total_time_s + (frames - 1) * sc.total_time_s
    assert res.makespan_s == pytest.approx(want_t, rel=1e-9)
    want_e = s.total_energy_j + (frames - 1) * sc.total_energy_j
    assert res.energy_j == pytest.approx(want_e, rel=1e-9)
    _, watts = res.power_timeline()
    assert watts.max() <= 33.0 + 1e-9
    # a step with a switch folded in averages the idle power over its switch, so the engine's
    # timeline peaks at or below the schedule's step peak
    assert s.power_w.min() - 1e-9 <= watts.max() <= s.peak_power_w + 1e-9


@pytest.mark.parametrize("name", ["NP-FCFS", "P-RRB", "NP-HPF", "P-HPF", "NP-SJF", "P-PREMA"])
def test_every_temporal_policy_runs_under_the_cap(name: str) -> None:
    """A capped conformance check: every request finishes, no request beats its capped isolated
    latency, and the machine's power never exceeds the cap, for each temporal policy."""
    dev = AB9(stc_efficiency=EFF)
    nets = ("squeezenet", "resnet-18")
    profs = {n: compile_profile(get_network(n), dev) for n in nets}
    rng = np.random.default_rng(0)
    reqs = [
        Request(
            id=i,
            arrival_s=float(t),
            network=nets[i % 2],
            priority=int(rng.choice([1, 3, 9])),
        )
        for i, t in enumerate(np.sort(rng.uniform(0.0, 0.05, 8)))
    ]
    cap = 30.0
    pol = DFS(cap_w=cap, idle_power_w=dev.idle_power_w)
    sim = Simulator(
        profs,
        POLICIES.create(name),
        machine=_machine(dev),
        power=pol,
        power_cap_w=cap,
        record_power=True,
    )
    res = sim.run(reqs)
    finish = np.asarray(res.columns["finish_s"], dtype=np.float64)
    assert not np.isnan(finish).any()
    _, watts = res.power_timeline()
    assert watts.max() <= cap + 1e-9
    for r in reqs:  # latency >= the capped isolated latency
        by_f = {
            f: profs[r.network].plan(1, frequency_hz=f)
            for f in dict(profs[r.network].axes)["frequency_hz"]
        }
        iso = pol.derive(by_f, cap).total_s
        assert finish[r.id] - r.arrival_s >= iso - 1e-9
    assert res.energy_j > 0
