"""CPU placement of the real run: the worker on cores of its own, LoadGen's threads elsewhere.

On Linux a thread's CPU set is its own (``os.sched_setaffinity(0, ...)`` sets the calling
thread's) and a new thread inherits its creator's, including ONNX Runtime's intra-op pool threads
(made when a session is created) and LoadGen's internal threads (made by ``StartTest``).
:func:`plan_cpus` picks ``threads`` CPUs for the worker, one per physical core (never two SMT
siblings), and gives every other allowed CPU that is not a sibling of a worker CPU to the rest
(LoadGen); :func:`pinned` applies a set to the calling thread for a block and restores it.

Where the platform has no affinity call, or too few CPUs to separate the two, the plan is
``None`` and nothing is pinned.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass


@dataclass(frozen=True)
class CpuPlan:
    """``worker``: the CPUs of the executor (and calibration) thread and its ONNX Runtime pool;
    ``others``: the CPUs of LoadGen's threads (no SMT sibling of a worker CPU)."""

    worker: frozenset[int]
    others: frozenset[int]


def _siblings(cpu: int) -> set[int]:
    """The SMT siblings of ``cpu`` (itself included), from sysfs; ``{cpu}`` if unknown."""
    path = f"/sys/devices/system/cpu/cpu{cpu}/topology/thread_siblings_list"
    try:
        with open(path, encoding="ascii") as f:
            text = f.read().strip()
    except OSError:
        return {cpu}
    out: set[int] = set()
    for part in text.split(","):
        if "-" in part:
            a, b = part.split("-")
            out.update(range(int(a), int(b) + 1))
        elif part:
            out.add(int(part))
    return out | {cpu}


def allowed_cpus() -> set[int] | None:
    """The calling thread's CPU set, or ``None`` where the platform has no affinity call."""
    get = getattr(os, "sched_getaffinity", None)
    return set(get(0)) if get is not None else None


def plan_cpus(threads: int = 1) -> CpuPlan | None:
    """Worker CPUs (``threads`` of them, distinct physical cores, the highest-numbered first:
    CPU 0 takes most interrupts) and LoadGen's CPUs (the rest, minus the worker's siblings);
    ``None`` if that leaves LoadGen nothing or the platform cannot pin."""
    allowed = allowed_cpus()
    if not allowed or not hasattr(os, "sched_setaffinity"):
        return None
    worker: set[int] = set()
    taken: set[int] = set()
    for cpu in sorted(allowed, reverse=True):
        if len(worker) == threads:
            break
        if cpu in taken:
            continue
        worker.add(cpu)
        taken |= _siblings(cpu)
    others = allowed - taken
    if len(worker) < threads or not others:
        return None
    return CpuPlan(frozenset(worker), frozenset(others))


@contextmanager
def pinned(cpus: frozenset[int] | set[int] | None) -> Iterator[None]:
    """Run the block with the calling thread on ``cpus`` (nothing if ``None``); the previous
    set is restored after."""
    if not cpus or not hasattr(os, "sched_setaffinity"):
        yield
        return
    before = os.sched_getaffinity(0)
    os.sched_setaffinity(0, cpus)
    try:
        yield
    finally:
        os.sched_setaffinity(0, before)
