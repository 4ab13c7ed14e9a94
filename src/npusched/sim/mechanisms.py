"""The preemption mechanisms' rules, written once (twenty-first round): the start's restore, the close of an execution segment (the restore or switch charged, busy seconds, layer
executions, joules, the power piece and the timeline's segments), CHECKPOINT's stop point, the
stop with its save, KILL's bookkeeping and the save's end on the timeline.

Each is a function over plain values (floats, ints, the job's plan, the run's timeline and
power recorders) that returns what the caller stores: the engine's loop
(:class:`~npusched.sim.engine._Run`) passes a ``Job``'s attributes, its units, rate and
resource, and writes the results back to the ``Job``. The float operations are the ones the
engine's two loops did before they were written here (the column loop, ``sim/columns.py``, was
deleted in the twenty-eighth round), in the same order with the same operands, so every result
keeps its bits (``(te - ss) * units / cap`` unless ``cap`` is 1, ``(stop - done) / rate`` with
``rate`` 1.0 exact, ...).

This module is listed in ``npusched.native.COMPILED_MODULES``: compiled, every call is a native
call with unboxed floats and ints, and the results come back as a C struct (a fixed tuple of
floats and ints), not a tuple object.
"""

from __future__ import annotations

from typing import Any

from npusched.hardware.plan import ExecPlan
from npusched.sim.common import PowerColumns, Segment

__all__ = [
    "end_segment",
    "kill",
    "restore_end",
    "save",
    "save_segment",
    "stop_point",
]


def restore_end(now: float, rb: int, ckpt_cost: bool, bandwidth: float) -> float:
    """When a job starting at ``now`` (seconds) with ``rb`` checkpoint bytes to restore
    begins computing: after reading them at ``bandwidth`` (bytes per second, its profile's
    memory bandwidth) where checkpoints cost time (``ckpt_cost``), else at once (a power
    policy's switch follows; the caller adds it). The engine calls it only where there is
    something to restore and reads the bandwidth there (``_Run._bandwidth``, kept per request:
    a profile's attribute is a generic look-up, about 240 instructions)."""
    if rb and ckpt_cost:
        return now + rb / bandwidth
    return now


def end_segment(
    te: float,
    exec_end: float,
    ss: float,
    t0: float,
    a: float,
    done: float,
    rb: int,
    cs: float,
    plan: ExecPlan,
    rate: float,
    units: int,
    cap: int,
    tl: list[Segment] | None,
    pw: PowerColumns | None,
    jid: int,
    rname: str,
    f: Any,
) -> tuple[float, int, float, float, int, float]:
    """Close a job's execution segment at ``te`` with ``exec_end`` seconds of work done.

    The segment began at ``ss`` and computes from ``t0`` (after its restore or clock switch)
    with ``a`` seconds of work done; ``done`` is the job's work done as stored, ``rb`` its bytes
    to restore, ``cs`` its checkpoint seconds. It ran at ``rate`` on ``units`` of the ``cap``
    units of resource ``rname``; ``tl`` / ``pw`` are the run's timeline and power pieces (None:
    not recorded), ``jid`` and ``f`` the timeline's job id and clock (read only with ``tl``).

    Stopped while restoring (``te < t0``): no new work, the checkpoint stays in memory (``rb``
    kept), the time so far charged to ``cs`` if it was a restore. Else the restore (or switch)
    from ``ss`` to ``t0`` is charged and forgotten (``rb`` 0) and the work from ``a`` to
    ``exec_end`` is executed.

    Returns ``(cs, rb, exec_end, busy, steps, joules)``: the job's new checkpoint seconds,
    bytes to restore and work done, and what its resource adds (busy unit-seconds over the
    capacity, layer executions, joules; the joules also the job's)."""
    if te < t0:  # stopped while restoring: no new work, the checkpoint is still in memory
        if rb:
            cs += te - ss
        exec_end = done
        if tl is not None and te > ss:
            tl.append(Segment(jid, ss, te, "restore" if rb else "switch", rname, units, f))
    else:
        if t0 > ss:  # the restore (or the clock switch) is done: charge it
            if rb:
                cs += t0 - ss
            if tl is not None:
                tl.append(Segment(jid, ss, t0, "restore" if rb else "switch", rname, units, f))
        rb = 0
        if tl is not None and te > t0:
            tl.append(Segment(jid, t0, te, "run", rname, units, f))
    db = (te - ss) * units / cap if cap != 1 else te - ss
    steps = 0
    e = 0.0
    if exec_end > a:
        steps, e = plan.work_between(a, exec_end)  # bit-equal to the two calls, one bisection
        if pw is not None and te > t0:
            pw.add(t0, te, plan, a, exec_end, rate, rname)
    return cs, rb, exec_end, db, steps, e


def stop_point(
    now: float,
    t0: float,
    done: float,
    executed: float,
    limit: float,
    iso: float,
    rate: float,
    plan: ExecPlan,
    layer: bool,
    tol: float,
) -> tuple[bool, float, float]:
    """CHECKPOINT's stop: where (work, seconds) a job asked to stop at ``now`` stops.

    Still restoring (``now < t0``): at once, where it stands (``done``). Else at the plan's
    next preemption point after ``executed`` (its work as of now), or at ``limit`` (an early
    exit or a stop step) if that comes first, reached at ``rate`` from ``(t0, done)`` and not
    before ``now``. Returns ``(stops, work, time)``; ``stops`` False: the next preemption
    point is the job's end (``iso``), it just finishes."""
    if now < t0:  # still restoring: stop at once, where it already stands
        return True, done, now
    stop_w = plan.next_preemption_point(executed, layer=layer, tol_s=tol)
    if stop_w >= iso:  # the next preemption point is the end: it just finishes
        return False, stop_w, now
    if stop_w > limit:  # an exit or stop step comes first: stop there
        stop_w = limit
    t_stop = t0 + (stop_w - done) / rate
    if t_stop < now:
        t_stop = now
    return True, stop_w, t_stop


def save(
    te: float,
    t0: float,
    ex: float,
    rb: int,
    cs: float,
    cb: int,
    plan: ExecPlan,
    units: int,
    cap: int,
    ckpt_cost: bool,
    bandwidth: float,
) -> tuple[int, float, int, float, float]:
    """The CHECKPOINT victim's save, once its segment is closed at ``te`` (:func:`end_segment`,
    which returned its work done ``ex``, bytes to restore ``rb`` and checkpoint seconds
    ``cs``). Where it had computed past its restore (``te >= t0``) it saves the plan's
    checkpoint bytes at ``ex`` (added to its checkpoint bytes ``cb``; they are its bytes to
    restore), at ``bandwidth`` (bytes/s) where checkpoints cost time; stopped while restoring,
    the checkpoint is still in memory and nothing is saved.

    Returns ``(rb, cs, cb, save_s, busy)``: its bytes to restore, checkpoint seconds (the
    save's charged) and bytes, and the save's seconds and busy unit-seconds over the capacity
    (``units`` of ``cap``), which the resource adds after the segment's."""
    save_s = 0.0
    if te >= t0:
        nbytes = plan.checkpoint_bytes_at(ex)
        cb += nbytes
        rb = nbytes
        if ckpt_cost:
            save_s = nbytes / bandwidth
    cs += save_s
    return rb, cs, cb, save_s, save_s * units / cap


def kill(wasted: float, ex: float) -> tuple[float, float, int]:
    """KILL's bookkeeping once the victim's segment is closed (:func:`end_segment`, at its
    work as of now, ``ex``): that work is lost. Returns ``(wasted, exec, rb)``: the work lost
    so far with ``ex`` added, its work done and bytes to restore (both none); the caller counts
    the preemption (and the livelock guard's)."""
    return wasted + ex, 0.0, 0


def save_segment(
    tl: list[Segment], jid: int, save_start: float, now: float, rname: str, units: int, f: Any
) -> None:
    """The save's end at ``now``: its ``save`` segment on the timeline ``tl`` (if it took
    time)."""
    if now > save_start:
        tl.append(Segment(jid, save_start, now, "save", rname, units, f))
