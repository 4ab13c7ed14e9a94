"""Reference: the SimPy model of ``concurrent`` (a ``Container`` of units, one process per request, one ``timeout`` per layer)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from npusched.bench.workload import BOUNDARY_TOL_S, CONCURRENT_JOBS
from npusched.hardware.profile import Profile
from npusched.workloads.request import Request


def concurrent_simpy_reference(
    requests: Sequence[Request], profiles: Mapping[str, Profile]
) -> npt.NDArray[np.float64]:
    """Finish times (rows in request-id order) of ``concurrent`` in SimPy.

    The array is a ``Container`` of 16 units. One process per request waits to be admitted
    (among the :data:`CONCURRENT_JOBS` earliest unfinished), takes its share, and runs one
    ``timeout`` per layer on the latencies of its current share; at each layer end it compares
    its share with what it should hold now and, if they differ, gives its units back and takes
    the new share (as the engine re-allocates at the next layer boundary with free checkpoints).
    A job that acquired units re-checks its share before its first layer (the engine decides
    after the completion that freed them). Like the engine, a job decides after every event of
    the same instant (within :data:`BOUNDARY_TOL_S`): jobs of one network started together on
    equal shares reach layer ends exactly when another finishes, so a layer end that coincides
    with another event waits for it (one ``timeout`` of zero or a few ulps).
    """
    import simpy

    env = simpy.Environment()
    array_units = simpy.Container(env, capacity=16, init=16)
    order = sorted(range(len(requests)), key=lambda i: (requests[i].arrival_s, requests[i].id))
    by_id = sorted(range(len(requests)), key=lambda i: requests[i].id)
    row_of = [0] * len(requests)
    for row, i in enumerate(by_id):
        row_of[i] = row
    lat: dict[tuple[str, int], list[float]] = {}
    for name, prof in profiles.items():
        for u in (8, 16):
            lat[name, u] = prof.plan(1, subarrays=u).latency_s.tolist()
    finish = np.full(len(requests), np.nan)
    unfinished: list[int] = []  # dispatch order
    admitted: dict[int, Any] = {}  # request index -> its admission event
    timeout = env.timeout

    def share(i: int) -> int:
        k = len(unfinished) if len(unfinished) < CONCURRENT_JOBS else CONCURRENT_JOBS
        return 16 // k

    def admit() -> None:
        for i in unfinished[:CONCURRENT_JOBS]:
            ev = admitted[i]
            if not ev.triggered:
                ev.succeed()

    peek = env.peek
    tol = BOUNDARY_TOL_S

    def job(i: int) -> Any:
        r = requests[i]
        yield admitted[i]
        u = share(i)
        while True:  # take a share; re-check it before the first layer
            yield array_units.get(u)
            nxt = peek()
            if nxt - env.now <= tol:  # let this instant's other events (a completion) go first
                yield timeout(nxt - env.now)
            d = share(i)
            if d == u:
                break
            array_units.put(u)  # a put is carried out when made; nothing to wait for
            u = d
        layers = lat[r.network, u]
        n = len(layers)
        step = 0
        while step < n:
            yield timeout(layers[step])
            step += 1
            if step < n:
                nxt = peek()
                if nxt - env.now <= tol:  # decide after this instant's other events
                    yield timeout(nxt - env.now)
                d = share(i)
                while d != u:
                    array_units.put(u)
                    u = d
                    yield array_units.get(u)
                    d = share(i)
                layers = lat[r.network, u]
        array_units.put(u)  # done at once, with the bookkeeping below (one instant)
        finish[row_of[i]] = env.now
        unfinished.remove(i)
        admit()

    def source() -> Any:
        for i in order:
            t = requests[i].arrival_s
            if t > env.now:
                yield timeout(t - env.now)
            admitted[i] = env.event()
            unfinished.append(i)
            env.process(job(i))
            admit()

    env.process(source())
    env.run()
    return finish
