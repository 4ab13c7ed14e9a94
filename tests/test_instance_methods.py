"""A method or hook set on one policy instance is the one the engine calls
(``policies.contract.keeps_method``, ``hook_is_no_op``, ``declared_order``): the shortcuts the
engine and the machine policies take for a method they know (a declared ready order, a hook
left a no-op, Planaria's and HaX-CoNN's decisions made without a view) hold only where the
instance keeps its class's method, as they already did for a subclass that overrides it."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import numpy as np

from npusched.bench import bench_workload, synthetic_profiles
from npusched.hardware import compile_profile
from npusched.hardware.fission import FissionArray
from npusched.hardware.soc import SocDevice, get_soc
from npusched.models import get_network
from npusched.policies.base import POLICIES
from npusched.policies.contract import (
    MachineView,
    Schedule,
    declared_order,
    hook_is_no_op,
    is_no_op,
    keeps_method,
    no_op_hook,
)
from npusched.policies.mapping.policy import HaxconnPolicy
from npusched.policies.spatial import PlanariaPolicy
from npusched.sim.engine import Simulator
from npusched.sim.resources import fission_array
from npusched.sim.resources import soc as soc_machine
from npusched.workloads.planaria import WORKLOADS, planaria_workload
from npusched.workloads.request import Request

sys.path.insert(0, str(Path(__file__).resolve().parent))

from golden_engine import digest


class _Base:
    def f(self) -> int:
        return 1

    @no_op_hook
    def on_dispatch(self, job: object, now: float) -> None:
        pass


class _Over(_Base):
    def f(self) -> int:
        return 2


def test_predicates() -> None:
    base = _Base()
    assert keeps_method(base, "f", _Base.f)
    assert not keeps_method(_Over(), "f", _Base.f)  # a subclass's own
    assert hook_is_no_op(base, "on_dispatch") and is_no_op(_Base, "on_dispatch")
    base.f = lambda: 3  # type: ignore[method-assign]
    base.on_dispatch = lambda job, now: None  # type: ignore[method-assign]
    assert not keeps_method(base, "f", _Base.f)  # the instance's own
    assert not hook_is_no_op(base, "on_dispatch")
    assert is_no_op(_Base, "on_dispatch")  # (the class alone says nothing of the instance)
    assert keeps_method(object(), "missing", None)  # no attribute, no ``__dict__``


def _temporal_run(policy: Any, n: int = 300) -> Any:
    profiles = synthetic_profiles()
    reqs = bench_workload(n, profiles, load=0.9, random_state=3)
    return Simulator(profiles, policy, record_power=True).run(reqs)


def test_instance_select_is_called_not_the_declared_order() -> None:
    """A ``P-HPF`` given a ``select`` of its own: no declared order (the engine keeps no heap
    for it), and the instance's ``select`` decides every wake."""
    plain = POLICIES.create("P-HPF")
    assert declared_order(plain) == "rank"
    pol = POLICIES.create("P-HPF")
    calls = [0]
    cls_select = type(pol).select

    def select(view: Any) -> Any:
        calls[0] += 1
        return cls_select(pol, view)

    pol.select = select  # type: ignore[method-assign]
    assert declared_order(pol) is None
    got = _temporal_run(pol)
    assert calls[0] > 0
    assert digest(got) == digest(_temporal_run(plain))


def test_instance_hook_is_called() -> None:
    """A hook set on the instance of a class that leaves it a no-op is called (the engine
    skips a hook only where the instance keeps the class's no-op), once per dispatched
    request."""
    pol = POLICIES.create("NP-FCFS")
    seen: list[int] = []
    pol.on_dispatch = lambda job, now: seen.append(job.request.id)  # type: ignore[method-assign]
    got = _temporal_run(pol)
    assert sorted(seen) == sorted(got.to_frame()["id"].tolist())
    assert digest(got) == digest(_temporal_run(POLICIES.create("NP-FCFS")))


class _Counted:
    """Counts the engine's calls of ``select``; the decision is the class's."""

    def __init__(self, policy: Any) -> None:
        self.calls = 0
        self.cls_select = type(policy).select
        self.policy = policy

    def __call__(self, view: MachineView) -> Schedule:
        self.calls += 1
        return self.cls_select(self.policy, view)  # type: ignore[no-any-return]


def _planaria_run(policy: PlanariaPolicy) -> dict[str, Any]:
    fa = FissionArray()
    profs = {m: compile_profile(get_network(m), fa) for m in WORKLOADS["C"]}
    reqs = planaria_workload("C", "S", 80.0, n_requests=120, random_state=5)
    sim = Simulator(profs, policy, machine=fission_array(), record_power=True)
    return digest(sim.run(reqs))


def _haxconn_run(policy: HaxconnPolicy) -> dict[str, Any]:
    dev = SocDevice(soc="xavier")
    nets = ("googlenet", "resnet-18", "resnet-50")
    profiles = {m: compile_profile(get_network(m), dev, (1,)) for m in nets}
    sim = Simulator(
        profiles,
        policy,
        machine=soc_machine(get_soc("xavier").accelerators),
        record_power=True,
    )
    rng = np.random.default_rng(1)
    t = np.cumsum(rng.exponential(1.0 / 40.0, 30))
    frames = (("googlenet", "resnet-50"), ("resnet-18",))
    reqs: list[Request] = []
    for i in range(30):
        for m in frames[int(rng.integers(len(frames)))]:
            reqs.append(Request(len(reqs), float(t[i]), m))
    return digest(sim.run(reqs))


def _machine_case(cls: type, run: Any) -> None:
    """A subclass that overrides ``select`` and an instance given one are decided alike: every
    wake through ``select`` (no quiet, empty or lone wake made in its place), the same calls
    and the plain run's result."""

    class Sub(cls):  # type: ignore[misc,valid-type]
        calls = 0

        def select(self, view: MachineView) -> Schedule:
            type(self).calls += 1
            return super().select(view)  # type: ignore[no-any-return]

    plain = run(cls())
    sub = Sub()
    assert run(sub) == plain
    inst = cls()
    wrapper = _Counted(inst)
    inst.select = wrapper
    assert run(inst) == plain
    assert wrapper.calls == Sub.calls > 0
    assert not keeps_method(inst, "select", cls.select)


def test_planaria_instance_select_decides_every_wake() -> None:
    _machine_case(PlanariaPolicy, _planaria_run)


def test_haxconn_instance_select_decides_every_wake() -> None:
    _machine_case(HaxconnPolicy, _haxconn_run)
