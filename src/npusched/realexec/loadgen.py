"""MLPerf LoadGen drives the real executor: npusched's executor is the system under test.

LoadGen (``mlcommons-loadgen``) issues queries from its own thread; each query's sample index
names a tenant (``index % len(tenants)`` over a query-sample library of ``len(tenants) *
copies`` samples), which gives the request its network, priority and SLO. The issue callback
stamps the request with the real instant (seconds from the executor's start) and hands it to the
executor's :class:`~npusched.realexec.executor.QueueSource`; a finished request answers its
query with ``QuerySamplesComplete``. LoadGen's own logs (``mlperf_log_summary.txt``,
``mlperf_log_detail.txt``, ...) are written to ``log_dir``.

Scenarios: ``server`` (Poisson arrivals at ``qps``) and ``singlestream`` (the next query when the
previous one finished). Seeds: LoadGen's three RNG seeds are set from ``seed``.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from npusched.errors import ConfigError, SimulationError
from npusched.realexec.affinity import pinned
from npusched.realexec.executor import QueueSource, RealExecutor, RealJob, RealResult
from npusched.workloads.request import Request

SCENARIOS = ("server", "singlestream")


@dataclass(frozen=True)
class TenantSpec:
    """What a query of this tenant is: ``network`` (profile key), ``priority``, ``slo_s``."""

    network: str
    priority: int = 1
    slo_s: float | None = None


class LoadGenSource(QueueSource):
    """A :class:`QueueSource` fed by LoadGen's issue callback (see the module docstring)."""

    def __init__(self, tenants: Sequence[TenantSpec]) -> None:
        super().__init__()
        import mlperf_loadgen as lg

        self.lg = lg
        self.tenants = list(tenants)
        self.query_of: dict[int, int] = {}
        self.lock = threading.Lock()
        self.next_id = 0
        self.thread: threading.Thread | None = None

    def start(self, t0: float) -> None:
        """Start LoadGen once the executor's clock runs (so no query predates it)."""
        self.t0 = t0
        if self.thread is not None:
            self.thread.start()

    def issue(self, samples: Sequence[Any]) -> None:
        now = time.perf_counter() - self.t0
        with self.lock:
            for s in samples:
                t = self.tenants[s.index % len(self.tenants)]
                rid = self.next_id
                self.next_id += 1
                self.query_of[rid] = s.id
                self.push(Request(rid, now, t.network, priority=t.priority, slo_s=t.slo_s))

    def completed(self, job: RealJob) -> None:
        with self.lock:
            qid = self.query_of.pop(job.id)
        self.lg.QuerySamplesComplete([self.lg.QuerySampleResponse(qid, 0, 0)])

    def abandon(self) -> None:
        """Answer every open query (and every later one) until LoadGen ends: after the executor
        failed, so LoadGen's thread finishes instead of waiting for answers forever."""
        while not self.done.is_set():
            self.poll(0.0)
            with self.lock:
                open_ = list(self.query_of.values())
                self.query_of.clear()
            if open_:
                self.lg.QuerySamplesComplete([self.lg.QuerySampleResponse(q, 0, 0) for q in open_])
            self.done.wait(0.01)


def run_loadgen(
    executor: RealExecutor,
    tenants: Sequence[TenantSpec],
    *,
    scenario: str = "server",
    qps: float = 100.0,
    n_queries: int = 100,
    expected_latency_s: float = 0.01,
    seed: int = 0,
    log_dir: str | Path | None = None,
    copies: int = 8,
    progress: Callable[[int], None] | None = None,
    cpus: frozenset[int] | None = None,
) -> RealResult:
    """Run ``n_queries`` LoadGen queries (``scenario`` at ``qps`` queries per second) through
    ``executor``; returns its :class:`RealResult` (whose ``arrival_s`` are LoadGen's issue
    instants). ``log_dir``: LoadGen's log folder (default: a temporary one, discarded).
    ``cpus``: the CPUs of LoadGen's threads (:mod:`npusched.realexec.affinity`; they inherit
    the set of the thread that starts the test), default those of the caller."""
    import tempfile

    import mlperf_loadgen as lg

    if scenario not in SCENARIOS:
        raise ConfigError(f"scenario: {scenario!r} is unknown; allowed: {', '.join(SCENARIOS)}")
    if not tenants:
        raise ConfigError("tenants: none given; allowed: one or more networks")
    source = LoadGenSource(tenants)
    settings = lg.TestSettings()
    settings.mode = lg.TestMode.PerformanceOnly
    if scenario == "server":
        settings.scenario = lg.TestScenario.Server
        settings.server_target_qps = float(qps)
        settings.server_target_latency_ns = int(10e9)
    else:
        settings.scenario = lg.TestScenario.SingleStream
        settings.single_stream_expected_latency_ns = max(int(expected_latency_s * 1e9), 1)
    settings.min_query_count = int(n_queries)
    settings.max_query_count = int(n_queries)
    settings.min_duration_ms = 0
    settings.max_duration_ms = 3_600_000
    settings.qsl_rng_seed = int(seed) + 1
    settings.sample_index_rng_seed = int(seed) + 2
    settings.schedule_rng_seed = int(seed) + 3
    tmp = None
    if log_dir is None:
        tmp = tempfile.TemporaryDirectory()
        log_dir = tmp.name
    Path(log_dir).mkdir(parents=True, exist_ok=True)
    log = lg.LogSettings()
    log.log_output.outdir = str(log_dir)
    log.log_output.copy_summary_to_stdout = False
    log.enable_trace = False
    n_samples = len(tenants) * copies
    sut = lg.ConstructSUT(source.issue, lambda: None)
    qsl = lg.ConstructQSL(n_samples, n_samples, lambda s: None, lambda s: None)
    failure: list[BaseException] = []

    def drive() -> None:
        try:
            with pinned(cpus):
                lg.StartTestWithLogSettings(sut, qsl, settings, log)
        except BaseException as e:  # pragma: no cover - surfaced below
            failure.append(e)
        finally:
            source.done.set()

    thread = threading.Thread(target=drive, name="loadgen", daemon=True)
    source.thread = thread
    try:
        try:
            result = executor.run(source, progress=progress)
        except BaseException:
            if thread.is_alive():
                source.abandon()
                thread.join()
            raise
        thread.join()
    finally:
        lg.DestroyQSL(qsl)
        lg.DestroySUT(sut)
        if tmp is not None:
            tmp.cleanup()
    if failure:
        raise SimulationError(f"LoadGen failed: {failure[0]}")
    if len(result.records) != n_queries:
        raise SimulationError(
            f"LoadGen issued {len(result.records)} queries, {n_queries} were asked for"
        )
    return result
