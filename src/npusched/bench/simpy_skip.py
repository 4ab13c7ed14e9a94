"""Reference: the event-skipping SimPy model of ``temporal`` in its best simple form: one process per request holding a ``PriorityResource``, one ``timeout`` to its completion, interrupted only by a better arrival."""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from npusched.bench.workload import _Shapes, _stop_point


def simpy_skip_reference(shapes: _Shapes) -> npt.NDArray[np.float64]:
    """Finish times (seconds, rows in request-id order) of SimPy with the engine's event skipping.

    The running job waits one ``timeout`` for its completion. A request of strictly higher
    priority arriving while it runs (and is not already stopping) interrupts it; it then finds
    its next layer end by bisecting the plan's prefix sums, runs to it (one ``timeout``),
    releases the ``PriorityResource`` (key as in :func:`simpy_reference`) and requests it again
    with its progress kept. A stop point at the job's end just lets it finish, as in the engine.
    """
    import simpy

    env = simpy.Environment()
    npu = simpy.PriorityResource(env, capacity=1)
    finish = np.full(shapes.n, np.nan)
    timeout = env.timeout
    interrupt_cls = simpy.Interrupt
    # The job holding the resource: [process, -priority, stopping]; process None when free.
    holder: list[Any] = [None, 0, False]

    def job(k: int, key: tuple[int, int], cum: list[float]) -> Any:
        total = cum[-1]
        done = 0.0  # seconds of work executed
        me = env.active_process
        while True:
            req = npu.request(priority=key)  # type: ignore[arg-type]  # any ordered key
            yield req
            holder[0], holder[1], holder[2] = me, key[0], False
            start = env.now
            try:
                yield timeout(total - done)
                break  # completed
            except interrupt_cls:
                done += env.now - start
                stop = _stop_point(cum, done)
                holder[2] = True  # no further interrupts: it stops or finishes
                if stop >= total:  # the next layer end is the end: it just finishes
                    yield timeout(total - done)
                    break
                if stop > done:
                    yield timeout(stop - done)
                done = stop
                holder[0] = None
                npu.release(req)
        holder[0] = None
        npu.release(req)
        finish[shapes.row[k]] = env.now

    def source() -> Any:
        arrival, prio, cum = shapes.arrival, shapes.priority, shapes.cum
        for k in range(shapes.n):
            if arrival[k] > env.now:
                yield timeout(arrival[k] - env.now)
            env.process(job(k, (-prio[k], k), cum[k]))
            running = holder[0]
            if running is not None and not holder[2] and -prio[k] < holder[1]:
                running.interrupt()

    env.process(source())
    env.run()
    return finish
