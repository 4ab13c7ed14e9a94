"""Reference: the bare event loop of ``temporal`` (arrivals from a sorted list, a ``heapq`` ready queue, no policy interface): the practical limit of a Python event loop."""

from __future__ import annotations

import math
from bisect import bisect_left
from heapq import heappop, heappush

import numpy as np
import numpy.typing as npt

from npusched.bench.workload import BOUNDARY_TOL_S, _Shapes


def bare_loop_reference(shapes: _Shapes) -> tuple[npt.NDArray[np.float64], int]:
    """Finish times (seconds, rows in request-id order) and event count of a bare event loop.

    Arrivals come from the dispatch-ordered list; the ready queue is a ``heapq`` of
    ``(-priority, dispatch index)``; the running job has one pending event (its completion, or
    its stop at the layer end found by bisecting prefix sums when a better request arrived).
    Events are counted as the engine counts them: one per arrival and completion, two per
    preemption (the stop and the end of its free save).
    """
    n = shapes.n
    arrival, layers_cum, row = shapes.arrival, shapes.cum, shapes.row
    neg_p = [-p for p in shapes.priority]
    executed = [0.0] * n
    finish = [math.nan] * n
    ready: list[tuple[int, int]] = []
    inf = math.inf
    tol = BOUNDARY_TOL_S
    run = -1  # dispatch index of the running job, -1 when idle
    t_start = 0.0  # start of the running segment (seconds)
    ex0 = 0.0  # work done by the running job when its segment started (seconds)
    t_event = inf  # its completion, or its stop if ``stop >= 0``
    stop = -1.0
    stops = 0
    ai = 0
    t_arr = arrival[0] if n else inf
    while ai < n or run >= 0:
        if t_arr < t_event:  # an arrival (events at the same instant go first, as in the engine)
            now = t_arr
            k = ai
            ai += 1
            t_arr = arrival[ai] if ai < n else inf
            if run < 0:
                run, t_start, ex0 = k, now, 0.0
                t_event = now + layers_cum[k][-1]
            else:
                heappush(ready, (neg_p[k], k))
                if stop < 0.0 and neg_p[k] < neg_p[run]:
                    cum = layers_cum[run]
                    ex = ex0 + (now - t_start)
                    i = bisect_left(cum, ex)
                    if i and ex - cum[i - 1] <= tol:
                        s = cum[i - 1]
                    else:
                        s = cum[i] if i < len(cum) else ex
                    if s < cum[-1]:  # a stop at the end is the completion
                        stop = s
                        t_event = max(t_start + (s - ex0), now)
            continue
        now = t_event
        if stop >= 0.0:  # the preempted job stops at its layer end and waits again
            executed[run] = stop
            heappush(ready, (neg_p[run], run))
            stop = -1.0
            stops += 1
        else:
            finish[row[run]] = now
        if ready:
            run = heappop(ready)[1]
            ex0 = executed[run]
            t_start = now
            t_event = now + (layers_cum[run][-1] - ex0)
        else:
            run = -1
            t_event = inf
    return np.asarray(finish, dtype=np.float64), 2 * n + 2 * stops
