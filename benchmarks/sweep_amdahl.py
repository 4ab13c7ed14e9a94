"""What a 2-worker sweep cannot share, estimated from CPU seconds (issue 25 item 6): the
``sweep`` bench scenario's points, each timed in CPU seconds in this process, scheduled the
way the pool hands them out (greedy: each chunk to the first free worker, in dispatch order)
with a worker's start-up and first-point cold cost added, for two chunkings: fixed chunks of
``len // (8 workers)`` points (before the tenth round) and the guided ``chunk_sizes``.

    PYTHONPATH=SRC python benchmarks/sweep_amdahl.py [REQUESTS] [START_S]

CPU seconds depend little on the machine's other load, so this estimates the ratio on an
idle 2-core machine where wall clocks cannot be read. It is a model: it assumes a point takes
as long beside a second worker as alone (no shared-cache or memory-bandwidth slowdown), that
the driver's CPU per point (``--driver-ms``, default 0.9 ms, the bench's
``driver_cpu_ms_per_point_2``) takes the workers' cores, and ``START_S`` (default 0.03 s: CPU
0.011 s plus the fork server's round trip) as a worker's start. Prints the estimate and
Amdahl's serial fraction ``2 / ratio - 1`` for each chunking.
"""

from __future__ import annotations

import heapq
import sys
import time


def _schedule(costs: list[list[float]], workers: int, start: float, cold: float) -> float:
    """Makespan of ``costs`` (per chunk, the seconds of its points) handed out in order, each
    to the first worker that is free; every worker starts at ``start`` and pays ``cold`` on its
    first point."""
    free = [(start, w, True) for w in range(workers)]
    heapq.heapify(free)
    end = 0.0
    for chunk in costs:
        t, w, fresh = heapq.heappop(free)
        t += sum(chunk) + (cold if fresh else 0.0)
        end = max(end, t)
        heapq.heappush(free, (t, w, False))
    return end


def main() -> None:
    import npusched.experiments.worker_preload  # noqa: F401  (what the fork server preloads)
    from npusched.bench.sweep import sweep_tasks
    from npusched.experiments.backends import run_point

    requests = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    start = float(sys.argv[2]) if len(sys.argv) > 2 else 0.03
    driver = 0.9e-3
    tasks = sweep_tasks(requests)
    c = time.process_time()
    run_point(tasks[0])
    first = time.process_time() - c
    cpu = []
    for t in tasks:  # warm: every point once more
        c = time.process_time()
        run_point(t)
        cpu.append(time.process_time() - c)
    cold = max(first - cpu[0], 0.0)
    total = sum(cpu)
    print(
        f"{len(tasks)} points of {requests} requests: {total:.3f} CPU s in all, median "
        f"{sorted(cpu)[len(cpu) // 2]:.4f} s, first point cold +{cold:.4f} s"
    )
    n = len(tasks)

    def fixed(n: int, workers: int) -> list[int]:
        k = max(1, min(16, n // (8 * workers)))
        return [min(k, n - i) for i in range(0, n, k)]

    try:
        from npusched.experiments.backends import chunk_sizes
    except ImportError:  # a tree before the tenth round
        chunk_sizes = None
    for name, sizes_of in (("fixed", fixed), ("guided", chunk_sizes)):
        if sizes_of is None:
            continue
        t = {}
        for w in (1, 2):
            costs, i = [], 0
            for k in sizes_of(n, w):
                costs.append(cpu[i : i + k])
                i += k
            # the driver's CPU shares the workers' cores only when they are all busy
            t[w] = _schedule(costs, w, start, cold) + (driver * n / 2 if w == 2 else 0.0)
        r = t[1] / t[2]
        print(
            f"{name:6s} chunks: 1 worker {t[1]:.3f} s, 2 workers {t[2]:.3f} s, ratio {r:.3f}, "
            f"serial fraction {2 / r - 1:.3f}"
        )


if __name__ == "__main__":
    main()
