"""A sweep worker's start-up as ``npusched sweep`` has it (issue 25 item 6): CPU seconds from
the worker's fork to its first task, and wall seconds from a new one-worker pool to that task.

    PYTHONPATH=SRC python benchmarks/sweep_worker_start.py

This script stands for the ``npusched`` console script: it imports the CLI at the top, as that
script does, and a pool worker re-runs the driver's main script before its first task (the
fork server's start method), so it pays whatever of that script the fork server has not
preloaded. The ``sweep`` bench scenario runs in a ``python -c`` process, which has no main
script to re-run, so it does not see this part. Prints the first pool (which starts the
fork server) apart and then five pools; CPU seconds do not depend on the machine's other load.
"""

from __future__ import annotations

import time

import npusched.cli  # noqa: F401  (what the console script imports)


def main() -> None:
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    from npusched.experiments import backends

    cpu_of = getattr(backends, "worker_cpu_s", None) or _cpu
    out = []
    for _ in range(6):
        t = time.perf_counter()
        ctx = backends._pool_context(multiprocessing)
        workers = getattr(backends, "_Workers", None)  # the backend's own pool (twentieth round)
        if workers is not None:
            pool = workers(ctx)
            try:
                cpu = pool.call(pool.start(), cpu_of)
            finally:
                pool.close()
            pool.join()
        else:
            with ProcessPoolExecutor(max_workers=1, mp_context=ctx) as executor:
                cpu = executor.submit(cpu_of).result()
        out.append((time.perf_counter() - t, cpu))
    print(f"first pool: {out[0][0]:.3f} s wall (starts the fork server)")
    for wall, cpu in out[1:]:
        print(f"worker start: {wall:.4f} s wall, {cpu:.4f} s CPU before its first task")
    print(f"fewest CPU seconds: {min(c for _, c in out[1:]):.4f}")


def _cpu() -> float:
    """A worker's CPU seconds so far (for a source tree without ``backends.worker_cpu_s``)."""
    return time.process_time()


if __name__ == "__main__":
    main()
