"""Conformance: the engine running HaX-CoNN's machine policy executes a schedule exactly as
:func:`npusched.policies.mapping.execute` does (groups, transitions, order, contention)."""

from __future__ import annotations

import numpy as np
import pytest

from npusched.hardware import compile_profile
from npusched.hardware.soc import SocDevice, generate_profile, get_soc
from npusched.models.zoo import get_network
from npusched.policies.mapping import Schedule, Task, Workload, execute
from npusched.policies.mapping.policy import HaxconnPolicy
from npusched.sim.engine import Simulator
from npusched.sim.resources import soc as soc_machine
from npusched.workloads.request import Request


def _run(soc: str, nets: tuple[str, ...], policy: HaxconnPolicy) -> np.ndarray:
    dev = SocDevice(soc=soc)
    profiles = {n: compile_profile(get_network(n), dev, (1,)) for n in set(nets)}
    spec = get_soc(soc)
    sim = Simulator(profiles, policy, machine=soc_machine(spec.accelerators), checkpoint_cost=False)
    res = sim.run([Request(i, 0.0, n) for i, n in enumerate(nets)])
    df = res.to_frame().sort_values("id")
    return df["finish_s"].to_numpy()


def _workload(soc: str, nets: tuple[str, ...], groups: int = 10) -> Workload:
    spec = get_soc(soc)
    return Workload(spec, tuple(Task(n, generate_profile(get_network(n), spec, n_groups=groups)) for n in nets))


@pytest.mark.parametrize(
    ("soc", "nets", "rows"),
    [
        ("xavier", ("vgg-19", "resnet-152"), [[0] * 4 + [1] * 6, [1] * 5 + [0] * 5]),
        ("orin", ("googlenet", "resnet-50"), [[0, 1] * 5, [1, 0] * 5]),
        ("orin", ("resnet-18", "resnet-18"), [[0] * 10, [0] * 10]),
    ],
)
def test_engine_executes_schedule_exactly(soc: str, nets: tuple[str, ...], rows: list[list[int]]) -> None:
    w = _workload(soc, nets)
    ref = execute(w, Schedule.of(rows))
    got = _run(soc, nets, HaxconnPolicy(soc=soc, schedule=ref.schedule))
    np.testing.assert_allclose(got, ref.finish_s, rtol=1e-9, atol=1e-12)
    off = execute(w, Schedule.of(rows), contention=False)
    got_off = _run(soc, nets, HaxconnPolicy(soc=soc, schedule=off.schedule, contention=False))
    np.testing.assert_allclose(got_off, off.finish_s, rtol=1e-9, atol=1e-12)


def test_engine_policy_solves_and_matches() -> None:
    nets = ("vgg-19", "resnet-152")
    pol = HaxconnPolicy(soc="xavier", max_transitions=1)
    got = _run("xavier", nets, pol)
    from npusched.policies.mapping.haxconn import haxconn

    h = haxconn(_workload("xavier", nets), "latency", max_transitions=1)
    np.testing.assert_allclose(got, h.realised.finish_s, rtol=1e-9)
    assert got.max() <= execute(_workload("xavier", nets), Schedule.of([[0] * 10, [0] * 10])).makespan_s


def test_engine_policy_solves_once_per_distinct_workload() -> None:
    """The memo: frames that repeat their networks reuse the first frame's schedule (one
    solve per distinct tuple of networks), and each frame runs exactly as the first did."""
    nets = ("googlenet", "resnet-50")
    other = ("resnet-18", "resnet-18")
    dev = SocDevice(soc="xavier")
    profiles = {n: compile_profile(get_network(n), dev, (1,)) for n in set(nets + other)}
    pol = HaxconnPolicy(soc="xavier", max_transitions=1)
    sim = Simulator(profiles, pol, machine=soc_machine(get_soc("xavier").accelerators),
                    checkpoint_cost=False)
    frames = [nets] * 6 + [other] * 3 + [nets] * 3
    period = 0.05  # s: a frame ends long before the next arrives
    reqs = [Request(2 * f + i, f * period, n) for f, fr in enumerate(frames) for i, n in enumerate(fr)]
    df = sim.run(reqs).to_frame().sort_values("id")
    lat = (df["finish_s"] - df["arrival_s"]).to_numpy().reshape(len(frames), 2)
    assert pol.solves_ == 2
    first = {fr: lat[frames.index(fr)] for fr in (nets, other)}
    for fr, row in zip(frames, lat, strict=True):
        np.testing.assert_allclose(row, first[fr], rtol=1e-9, atol=1e-12)
    from npusched.policies.mapping.haxconn import haxconn

    h = haxconn(_workload("xavier", nets), "latency", max_transitions=1)
    np.testing.assert_allclose(first[nets], h.realised.finish_s, rtol=1e-9)


def test_solves_and_profiles_are_shared_across_policy_instances(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A second policy instance in the same process (a sweep's next point, a bench repeat)
    reuses the first one's group profiles and solve: ``haxconn()`` is not called again, the
    per-run count of distinct workloads (``solves_``) is unchanged, and the run is identical."""
    # the memo and the planning that reads it live in the policy's core module
    import npusched.policies.mapping.haxconn_core as pm

    monkeypatch.setattr(pm, "_SHARED", {})
    calls: list[int] = []
    real = pm.haxconn

    def counting(*a: object, **k: object) -> object:
        calls.append(1)
        return real(*a, **k)  # type: ignore[arg-type]

    monkeypatch.setattr(pm, "haxconn", counting)
    nets = ("googlenet", "resnet-50")
    first_pol = HaxconnPolicy(soc="xavier", max_transitions=1)
    first = _run("xavier", nets, first_pol)
    second_pol = HaxconnPolicy(soc="xavier", max_transitions=1)
    second = _run("xavier", nets, second_pol)
    assert calls == [1]
    assert first_pol.solves_ == second_pol.solves_ == 1
    assert first.tobytes() == second.tobytes()
    # another goal or T is another solve
    _run("xavier", nets, HaxconnPolicy(soc="xavier", max_transitions=2))
    assert calls == [1, 1]


def test_plans_keep_the_rows_as_python_integers() -> None:
    """Each job's plan keeps its accelerators twice: the search's row (NumPy integers, as the
    solve gives them) and ``acc``, the same values as Python integers that ``select`` indexes
    with; the kept demand / wait / start lists equal the ones built again from the profile."""
    from npusched.policies.mapping.haxconn_core import HaxconnCore, rows_of

    seen: list[tuple[object, ...]] = []

    class Keeping(HaxconnPolicy):
        def select(self, view):  # type: ignore[no-untyped-def]
            out = super().select(view)
            for p in self.plans_.values():
                seen.append((p.row, p.acc, p.starts, p.demand, p.wait, p.profile))
            return out

    nets = ("vgg-19", "resnet-152")
    pol = Keeping(soc="xavier", max_transitions=1)
    ref = _run("xavier", nets, HaxconnPolicy(soc="xavier", max_transitions=1))
    np.testing.assert_array_equal(_run("xavier", nets, pol), ref)
    assert seen
    fresh = HaxconnCore.__new__(Keeping)
    fresh.rows_ = {}
    fresh.spec_ = get_soc("xavier")
    for row, acc, starts, demand, wait, prof in seen:
        assert acc == [int(a) for a in row] and all(type(a) is int for a in acc)
        assert (starts, demand, wait) == rows_of(fresh, prof, tuple(row))


def test_plans_by_job_object_follow_the_ids() -> None:
    """``select`` finds a job's plan by the job object (``plan_of_``: no ``job.id`` read per
    decision): at every decision each entry is the plan kept under the job's id and carries
    that id; a completed job's entry is dropped, so none is left after the run; the
    decisions are those of the plans by id (the same finish times as a fresh policy's)."""
    checked: list[int] = []

    class Checking(HaxconnPolicy):
        def select(self, view):  # type: ignore[no-untyped-def]
            out = super().select(view)
            for job, plan in self.plan_of_.items():
                assert self.plans_[job.id] is plan  # type: ignore[attr-defined]
                assert plan.jid == job.id  # type: ignore[attr-defined]
                checked.append(plan.jid)
            for job in view.ready:
                assert job in self.plan_of_
            return out

    nets = ("vgg-19", "resnet-152", "googlenet")
    pol = Checking(soc="xavier", max_transitions=1)
    got = _run("xavier", nets, pol)
    assert sorted(set(checked)) == [0, 1, 2]
    assert pol.plan_of_ == {} and pol.plans_ == {}
    np.testing.assert_array_equal(got, _run("xavier", nets, HaxconnPolicy(soc="xavier", max_transitions=1)))


def _frames_run(policy: HaxconnPolicy) -> np.ndarray:
    """A run of repeated frames (the same networks again, and a frame of one network), as the
    ``families`` scenario's HaX-CoNN runs: finish times by request id."""
    soc, frames = "xavier", [("vgg-19", "resnet-152"), ("googlenet",)] * 3
    nets = sorted({n for f in frames for n in f})
    dev = SocDevice(soc=soc)
    profiles = {n: compile_profile(get_network(n), dev, (1,)) for n in nets}
    spec = get_soc(soc)
    sim = Simulator(profiles, policy, machine=soc_machine(spec.accelerators), checkpoint_cost=False)
    reqs, t = [], 0.0
    for f in frames:
        for n in f:
            reqs.append(Request(len(reqs), t, n))
        t += 0.05
    df = sim.run(reqs).to_frame().sort_values("id")
    return df["finish_s"].to_numpy()


def _decision(out: object) -> tuple[object, ...]:
    """A decision by job ids (comparable across runs)."""
    from npusched.policies.contract import NOTHING

    if out is NOTHING:
        return ("NOTHING",)
    return (
        sorted((j.id, a) for j, a in out.assign.items()),  # type: ignore[attr-defined]
        sorted((j.id, s) for j, s in out.until_step.items()),  # type: ignore[attr-defined]
        list(out.timers),  # type: ignore[attr-defined]
        [(j.id, r) for j, r in out.rates.items()],  # type: ignore[attr-defined]
    )


def test_frames_kept_equal_frames_planned_again() -> None:
    """A solved frame's planning apart from its jobs' ids is kept per tuple of networks
    (``frames_``): every kept frame equals the one made again from the schedule, and a run that
    forgets them before every frame makes the same decisions and finish times."""
    from npusched.policies.mapping.haxconn_core import _Frame

    decisions: dict[str, list[tuple[object, ...]]] = {"kept": [], "forgot": []}

    class Recording(HaxconnPolicy):
        key = "kept"

        def select(self, view):  # type: ignore[no-untyped-def]
            out = super().select(view)
            decisions[self.key].append(_decision(out))
            return out

    class Forgetting(Recording):
        key = "forgot"

        def _plan(self, jobs):  # type: ignore[no-untyped-def]
            self.frames_.clear()
            super()._plan(jobs)

    kept = Recording(soc="xavier", max_transitions=1)
    got = _frames_run(kept)
    forgot = Forgetting(soc="xavier", max_transitions=1)
    assert got.tobytes() == _frames_run(forgot).tobytes()
    assert decisions["kept"] == decisions["forgot"] and len(decisions["kept"]) > 6
    assert set(kept.frames_) == {("vgg-19", "resnet-152"), ("googlenet",)}
    assert forgot.frames_ and len(forgot.frames_) == 1
    for nets, frame in kept.frames_.items():
        again = _Frame(kept._schedule_of([None] * len(nets), nets), kept, kept._profiles_of(nets))  # type: ignore[list-item]
        assert frame.profiles == again.profiles
        assert [tuple(r) for r in frame.rows] == [tuple(r) for r in again.rows]
        assert frame.starts == again.starts and frame.demand == again.demand
        assert frame.wait == again.wait and frame.acc == again.acc
        assert frame.order_n == again.order_n and frame.order_g == again.order_g
        assert all(type(a) is int for acc in frame.acc for a in acc)
        assert all(type(x) is int for q in (*frame.order_n, *frame.order_g) for x in q)
        # the two lists per accelerator are the schedule's (job index, group) pairs, in order
        order = kept._schedule_of([None] * len(nets), nets).order  # type: ignore[list-item]
        assert order is not None
        assert [list(zip(n, g, strict=True)) for n, g in zip(frame.order_n, frame.order_g,
                                                             strict=True)] == [
            [(int(n), int(g)) for n, g in q] for q in order
        ]


def test_short_decisions_carry_out_as_full_ones() -> None:
    """A decision that starts nothing and writes no timer or rate is ``NOTHING``, and the job a
    decision starts alone carries no rate (1.0, the rate every job starts at): the run equals
    one whose decisions are written out in full (empty fields, the rate 1.0 given)."""
    from npusched.policies.contract import NOTHING
    from npusched.policies.machine_core import make_schedule

    counts = {"nothing": 0, "no_rate": 0}

    class Full(HaxconnPolicy):
        def select(self, view):  # type: ignore[no-untyped-def]
            out = super().select(view)
            if out is NOTHING:
                counts["nothing"] += 1
                return make_schedule({}, (), out.mechanism, {}, (), [], {})
            if len(out.assign) == 1 and not out.rates and not view.running:
                counts["no_rate"] += 1
                ((aj, _),) = out.assign.items()
                return make_schedule(
                    out.assign, (), out.mechanism, out.until_step, (), out.timers, {aj: 1.0}
                )
            return out

    full = Full(soc="xavier", max_transitions=1)
    got = _frames_run(full)
    assert counts["nothing"] > 0 and counts["no_rate"] > 0
    assert got.tobytes() == _frames_run(HaxconnPolicy(soc="xavier", max_transitions=1)).tobytes()


def test_queues_plans_and_rates_kept_per_decision() -> None:
    """The per-accelerator queues (plans by identity, groups beside them), the plans' pending
    ready times and the rates kept per pair of demands, checked after every decision of a run
    of repeated frames against what they stand for: every group a planned job has not started
    yet is queued once, on its own accelerator, in group order; a ready time is pending only
    for a job whose next group waits for a transition; each pair of rates is the contention
    model's for its two demands."""
    from npusched.policies.mapping.haxconn_core import _NO_READY

    seen = {"ready": 0, "decisions": 0}

    class Checking(HaxconnPolicy):
        def select(self, view):  # type: ignore[no-untyped-def]
            out = super().select(view)
            seen["decisions"] += 1
            pending: dict[int, list[int]] = {}
            for a, (q, qg) in enumerate(zip(self.queues_, self.qgroups_, strict=True)):
                assert len(q) == len(qg)
                h = self.qhead_[a]
                assert 0 <= h <= len(q)
                for plan, g in zip(q[h:], qg[h:], strict=True):
                    assert type(g) is int
                    assert self.plans_[plan.jid] is plan  # a planned job's own plan
                    assert plan.acc[g] == a and g > plan.grp
                    pending.setdefault(plan.jid, []).append(g)
            for jid, plan in self.plans_.items():
                # every group not started yet, once each (in order per accelerator)
                assert sorted(pending.get(jid, [])) == list(range(plan.grp + 1, len(plan.acc)))
                if plan.ready != _NO_READY:
                    seen["ready"] += 1
                    g = plan.grp + 1
                    assert g < len(plan.acc) and plan.ready >= 0.0
                    assert (g == 0 and plan.deps) or (g > 0 and plan.acc[g - 1] != plan.acc[g])
            return out

    policy = Checking(soc="xavier", max_transitions=1)
    got = _frames_run(policy)
    assert got.tobytes() == _frames_run(HaxconnPolicy(soc="xavier", max_transitions=1)).tobytes()
    assert seen["decisions"] > 6 and seen["ready"] > 0
    assert policy.rates2_
    for (d0, d1), (r0, r1) in policy.rates2_.items():
        tot = 0 + d0 + d1
        assert r0 == 1.0 / policy.model_.slowdown_one(d0, tot - d0)
        assert r1 == 1.0 / policy.model_.slowdown_one(d1, tot - d1)
        assert type(r0) is float and type(r1) is float
