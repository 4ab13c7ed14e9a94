"""The preemption mechanisms written once (:mod:`npusched.sim.mechanisms`): each function against
a direct reference (the general loop's methods as they were written out before, on a job's
attributes), bit for bit, over restore bytes, stops while restoring or switching, rates, units
and capacities; and runs that call them, the engine's own decisions on a declared order against
the policy's ``select``, giving the same result with the timeline and the power pieces
recorded. (Until the twenty-eighth round the column loop's call site for them, ``columns._close``
and ``columns._bandwidth``, was checked here too; ``sim/columns.py`` is deleted.)"""

from __future__ import annotations

import math
import struct
from types import SimpleNamespace
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from npusched.hardware.profile import ExecPlan
from npusched.policies.base import POLICIES
from npusched.sim import mechanisms
from npusched.sim.common import NAN_OBJ, PowerColumns, Segment
from npusched.sim.engine import Simulator
from npusched.sim.events import TIME_TOL_S
from npusched.workloads.request import Request
from simhelpers import assert_same_run, by_select, make_profile

SETTINGS = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _bits(v: Any) -> Any:
    """``v`` with every float as its IEEE bits (so ``-0.0`` and ``0.0``, or two nans, differ
    where their bits do)."""
    if isinstance(v, float):
        return ("f", struct.pack("<d", v))
    if isinstance(v, tuple):
        return tuple(_bits(x) for x in v)
    if isinstance(v, list):
        return [_bits(x) for x in v]
    return v


@st.composite
def plans(draw: st.DrawFn) -> ExecPlan:
    """A layer plan of 1-6 steps on a 1 us grid, with energy and checkpoint bytes per step."""
    n = draw(st.integers(1, 6))
    lat = [draw(st.integers(0, 5)) * 1e-6 for _ in range(n)]
    if not any(lat):
        lat[0] = 1e-6
    energy = [draw(st.sampled_from([0.0, 1e-3, 2.5e-3])) for _ in range(n)]
    ckpt = [draw(st.integers(0, 4096)) for _ in range(n)]
    return ExecPlan.from_steps(lat, energy_j=energy, checkpoint_bytes=ckpt)


@st.composite
def segments(draw: st.DrawFn) -> dict[str, Any]:
    """A job's open segment: started at ``ss``, computing from ``t0`` (after a restore or
    switch of 0-3 us, or none), closed at ``te`` before ``t0`` (stopped while restoring), at it,
    or after it; work done ``a`` at its start, on ``units`` of ``cap`` units at ``rate``."""
    plan = draw(plans())
    total = plan.total_s
    a = draw(st.sampled_from([0.0, total / 3, total / 2]))
    rate = draw(st.sampled_from([1.0, 0.5, 0.75, 2.0]))
    ss = draw(st.integers(0, 100)) * 1e-6
    t0 = ss + draw(st.integers(0, 3)) * 1e-6
    where = draw(st.sampled_from(["restoring", "at_t0", "after"]))
    if where == "restoring":
        te = ss + (t0 - ss) * draw(st.sampled_from([0.0, 0.5]))
        exec_end = a
    elif where == "at_t0":
        te = t0
        exec_end = a
    else:
        exec_end = a + (total - a) * draw(st.sampled_from([0.25, 0.5, 1.0]))
        te = t0 + (exec_end - a) / rate
    cap = draw(st.integers(1, 4))
    return {
        "te": te,
        "exec_end": exec_end,
        "ss": ss,
        "t0": t0,
        "a": a,
        "done": a,
        "rb": draw(st.sampled_from([0, 1, 4096, 10**6])),
        "cs": draw(st.sampled_from([0.0, 1e-6, 3.3e-5])),
        "plan": plan,
        "rate": rate,
        "units": draw(st.integers(1, cap)),
        "cap": cap,
        "tl": [] if draw(st.booleans()) else None,
        "pw": PowerColumns() if draw(st.booleans()) else None,
        "jid": draw(st.integers(0, 9)),
        "rname": "npu",
        "f": draw(st.sampled_from([NAN_OBJ, 7e8])),
    }


def _ref_end_segment(s: dict[str, Any]) -> tuple[Any, ...]:
    """The general loop's ``_end_segment`` and ``_charge_restore`` as written before this
    module (twentieth round), on a job's attributes; returns what the function returns."""
    job = SimpleNamespace(
        _seg_start=s["ss"],
        _t0=s["t0"],
        _exec=s["done"],
        _restore_bytes=s["rb"],
        checkpoint_s=s["cs"],
        _seg_exec0=s["a"],
        units=s["units"],
        rate=s["rate"],
    )
    tl, pw, te, exec_end = s["tl"], s["pw"], s["te"], s["exec_end"]
    res = SimpleNamespace(busy=0.0, capacity=s["cap"], name=s["rname"])

    def seg(a: float, b: float, kind: str) -> Segment:
        return Segment(s["jid"], a, b, kind, res.name, job.units, s["f"])

    ss = job._seg_start
    t0 = job._t0
    if te < t0:
        if job._restore_bytes:
            job.checkpoint_s += te - ss
        exec_end = job._exec
        if tl is not None and te > ss:
            tl.append(seg(ss, te, "restore" if job._restore_bytes else "switch"))
    else:
        if t0 > ss:
            if job._restore_bytes:
                job.checkpoint_s += t0 - ss
                kind = "restore"
            else:
                kind = "switch"
            job._restore_bytes = 0
            if tl is not None:
                tl.append(seg(ss, t0, kind))
        job._restore_bytes = 0
        if tl is not None and te > t0:
            tl.append(seg(t0, te, "run"))
    res.busy += (te - ss) * job.units / res.capacity if res.capacity != 1 else te - ss
    a = job._seg_exec0
    steps, e = 0, 0.0
    if exec_end > a:
        steps, e = s["plan"].work_between(a, exec_end)
        if pw is not None and te > t0:
            pw.add(t0, te, s["plan"], a, exec_end, job.rate, res.name)
    job._exec = exec_end
    return (job.checkpoint_s, job._restore_bytes, job._exec, res.busy, steps, e)


def _fresh(s: dict[str, Any]) -> dict[str, Any]:
    """``s`` with its own empty recorders (the reference and the function each fill theirs)."""
    out = dict(s)
    out["tl"] = [] if s["tl"] is not None else None
    out["pw"] = PowerColumns() if s["pw"] is not None else None
    return out


def _args(s: dict[str, Any]) -> tuple[Any, ...]:
    return (
        s["te"],
        s["exec_end"],
        s["ss"],
        s["t0"],
        s["a"],
        s["done"],
        s["rb"],
        s["cs"],
        s["plan"],
        s["rate"],
        s["units"],
        s["cap"],
        s["tl"],
        s["pw"],
        s["jid"],
        s["rname"],
        s["f"],
    )


def _same_recorders(x: dict[str, Any], y: dict[str, Any]) -> None:
    assert _bits(x["tl"]) == _bits(y["tl"])
    if x["pw"] is not None:
        assert _bits(x["pw"].pieces()) == _bits(y["pw"].pieces())
    else:
        assert y["pw"] is None


@SETTINGS
@given(s=segments())
def test_end_segment_is_the_general_loops_close(s: dict[str, Any]) -> None:
    """The close of a segment: the restore or switch charged (or, stopped while restoring, the
    time so far and the checkpoint kept), busy seconds, layer executions, joules, the power
    piece and the timeline's segments, bit for bit."""
    ref, got = _fresh(s), _fresh(s)
    want = _ref_end_segment(ref)
    assert _bits(mechanisms.end_segment(*_args(got))) == _bits(want)
    _same_recorders(ref, got)
    cs, rb, ex, busy, steps, e = want
    if s["te"] < s["t0"]:  # stopped while restoring: nothing computed, the checkpoint kept
        assert (rb, ex, steps, e) == (s["rb"], s["done"], 0, 0.0)
    else:
        assert rb == 0
    assert cs >= s["cs"] and busy >= 0.0


@SETTINGS
@given(s=segments(), ckpt_cost=st.booleans(), bw=st.sampled_from([1e9, 3.7e10]))
def test_save_is_the_general_loops_save(s: dict[str, Any], ckpt_cost: bool, bw: float) -> None:
    """The CHECKPOINT victim's save after its segment's close: restored, the plan's checkpoint
    bytes at its position saved, their seconds charged and busy; stopped while restoring,
    nothing saved and the bytes to restore kept (the general loop's ``_stop`` as written
    before)."""
    cs, rb, ex, _, _, _ = mechanisms.end_segment(*_args(_fresh(s)))
    cb = 123
    save_s = 0.0
    want_rb, want_cs, want_cb = rb, cs, cb
    if s["te"] >= s["t0"]:
        nbytes = s["plan"].checkpoint_bytes_at(ex)
        want_cb += nbytes
        want_rb = nbytes
        if ckpt_cost:
            save_s = nbytes / bw
    want_cs += save_s
    want = (want_rb, want_cs, want_cb, save_s, save_s * s["units"] / s["cap"])
    got = mechanisms.save(
        s["te"], s["t0"], ex, rb, cs, cb, s["plan"], s["units"], s["cap"], ckpt_cost, bw
    )
    assert _bits(got) == _bits(want)
    if s["te"] < s["t0"]:
        assert got[0] == s["rb"] and got[3] == 0.0


@given(wasted=st.sampled_from([0.0, 2e-6, 0.1]), ex=st.sampled_from([0.0, 1e-6, 3.3e-5]))
def test_kill_loses_the_work(wasted: float, ex: float) -> None:
    """KILL's bookkeeping: the work done is added to the waste and reset, nothing to
    restore."""
    assert _bits(mechanisms.kill(wasted, ex)) == _bits((wasted + ex, 0.0, 0))


@SETTINGS
@given(
    plan=plans(),
    data=st.data(),
    rate=st.sampled_from([1.0, 0.5, 2.0]),
    layer=st.booleans(),
    restoring=st.booleans(),
)
def test_stop_point_is_the_general_loops_checkpoint(
    plan: ExecPlan, data: st.DataObject, rate: float, layer: bool, restoring: bool
) -> None:
    """CHECKPOINT's stop point: at once while restoring, else the next preemption point (the
    limit if that comes first, no stop if it is the end), reached at the rate, not before
    now; the general loop's ``_checkpoint`` as written before."""
    total = plan.total_s
    done = data.draw(st.sampled_from([0.0, total / 4]))
    t0 = 1e-5
    now = t0 - 1e-6 if restoring else t0 + data.draw(st.integers(0, 8)) * 1e-6
    limit = data.draw(st.sampled_from([total, total / 2, done]))
    executed = done
    if now > t0:
        executed = done + rate * (now - t0)
        if not executed < limit:
            executed = limit
    # the reference
    if now < t0:
        want: tuple[Any, ...] = (True, done, now)
    else:
        stop = plan.next_preemption_point(executed, layer=layer, tol_s=TIME_TOL_S)
        if stop >= total:
            want = (False,)
        else:
            if stop > limit:
                stop = limit
            t_stop = t0 + (stop - done) / rate
            if t_stop < now:
                t_stop = now
            want = (True, stop, t_stop)
    got = mechanisms.stop_point(
        now, t0, done, executed, limit, total, rate, plan, layer, TIME_TOL_S
    )
    assert _bits(got[: len(want)]) == _bits(want)
    if got[0]:
        assert got[1] <= limit or now < t0
        assert got[2] >= now


@given(
    rb=st.sampled_from([0, 1, 4096, 10**7]),
    ckpt_cost=st.booleans(),
    now=st.sampled_from([0.0, 1e-6, 0.3]),
    bw=st.sampled_from([1e9, 3.7e10]),
)
def test_restore_end(rb: int, ckpt_cost: bool, now: float, bw: float) -> None:
    """A start computes after reading its checkpoint (where checkpoints cost time), else at
    once."""
    want = now + rb / bw if rb and ckpt_cost else now
    assert _bits(mechanisms.restore_end(now, rb, ckpt_cost, bw)) == _bits(want)


def test_save_segment() -> None:
    """The save's segment is recorded only where the save took time."""
    tl: list[Segment] = []
    mechanisms.save_segment(tl, 3, 1e-6, 1e-6, "npu", 2, NAN_OBJ)
    assert tl == []
    mechanisms.save_segment(tl, 3, 1e-6, 4e-6, "npu", 2, 7e8)
    assert tl == [Segment(3, 1e-6, 4e-6, "save", "npu", 2, 7e8)]


def _profiles() -> dict[str, Any]:
    return {
        "a": make_profile(
            "a",
            [40e-6, 25e-6, 60e-6],
            tiles=[2, 1, 3],
            checkpoint_bytes=[8_000, 64_000, 0],
            energy_j=[1e-4, 0.0, 3e-4],
        ),
        "b": make_profile(
            "b", [5e-6, 7e-6], tiles=[1, 2], checkpoint_bytes=[100, 2_000], energy_j=[0, 2e-5]
        ),
    }


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    mechanism=st.sampled_from(["checkpoint", "kill", "dynamic"]),
    name=st.sampled_from(["P-HPF", "P-SJF", "P-PREMA", "P-RRB"]),
    arrivals=st.lists(st.integers(0, 30), min_size=2, max_size=10),
)
def test_declared_orders_close_segments_as_select(
    mechanism: str, name: str, arrivals: list[int]
) -> None:
    """A preemptive run with restores, saves and kills gives the same result, timeline and
    power pieces from the engine's own decisions on the declared order and from the policy's
    ``select`` (``by_select``), every request finished. (Until the twenty-eighth round: the
    column loop against the general loop, both calling the mechanisms.)"""
    if name == "P-RRB" and mechanism == "kill":  # (round-robin refuses KILL: its validate)
        mechanism = "dynamic-kill"
    reqs = [
        Request(id=i, arrival_s=t * 5e-6, network="ab"[i % 2], priority=(1, 3, 9)[i % 3])
        for i, t in enumerate(arrivals)
    ]
    runs = []
    for reference in (False, True):
        pol = POLICIES.create(name, mechanism=mechanism)
        sim = Simulator(
            _profiles(),
            by_select(pol) if reference else pol,
            record_timeline=True,
            record_power=True,
        )
        runs.append(sim.run(reqs))
    got, ref = runs
    assert_same_run(got, ref)
    assert all(not math.isnan(x) for x in got.to_frame()["finish_s"])
