"""Reference: the per-layer SimPy model of ``temporal`` (one ``timeout`` per layer)."""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from npusched.bench.workload import _Shapes


def simpy_reference(shapes: _Shapes) -> npt.NDArray[np.float64]:
    """Finish times (seconds, rows in request-id order) of the layer-by-layer SimPy model.

    One process per request holds a ``PriorityResource`` (capacity 1, key ``(-priority,
    dispatch index)``: highest priority first, ties in dispatch order as HPF) across its layers,
    one ``timeout`` per layer; after a layer, if the best waiting request has strictly higher
    priority, it releases the resource and requests it again (the better request is served
    first): preemption at layer boundaries with free checkpoints.
    """
    import simpy

    env = simpy.Environment()
    npu = simpy.PriorityResource(env, capacity=1)
    waiting = npu.queue
    finish = np.full(shapes.n, np.nan)
    timeout = env.timeout

    def job(k: int, key: tuple[int, int], layers: list[float]) -> Any:
        neg_p = key[0]
        req = npu.request(priority=key)  # type: ignore[arg-type]  # any ordered key
        yield req
        last = len(layers) - 1
        for i, lat in enumerate(layers):
            yield timeout(lat)
            if i < last and waiting and waiting[0].priority[0] < neg_p:
                npu.release(req)
                req = npu.request(priority=key)  # type: ignore[arg-type]
                yield req
        npu.release(req)
        finish[shapes.row[k]] = env.now

    def source() -> Any:
        arrival, prio, layers = shapes.arrival, shapes.priority, shapes.layers
        for k in range(shapes.n):
            if arrival[k] > env.now:
                yield timeout(arrival[k] - env.now)
            env.process(job(k, (-prio[k], k), layers[k]))

    env.process(source())
    env.run()
    return finish
