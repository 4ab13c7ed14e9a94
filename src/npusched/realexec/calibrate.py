"""The ``cpu-ort`` device: per-group latencies measured on the machine it runs on.

:func:`calibrate` runs every group session of every tenant network (``warmup`` untimed whole
inferences, then ``runs`` timed rounds, round-robin over the networks) and keeps the **median**
seconds of each group's
``session.run`` call (the Python call included: the executor pays it too). It also measures the
host's copy bandwidth (the median of ``np.copyto`` over a 4 MiB array), which prices a real
CHECKPOINT (the live tensors are copied out at the stop and back at the resume). The result is a
:class:`Calibration`, stored as JSON with the machine's description (:func:`machine_info`).

:meth:`Calibration.profile` turns it into the simulator's :class:`~npusched.hardware.Profile` of
the grouped network (one step per group): ``latency_s`` the medians, ``checkpoint_bytes`` the
live bytes after each group, ``memory_bandwidth_bps`` the measured copy bandwidth.
"""

from __future__ import annotations

import gc
import json
import os
import platform
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from npusched.errors import ConfigError
from npusched.hardware.base import LayerCosts
from npusched.hardware.profile import Profile
from npusched.models.ir import Network
from npusched.realexec.groups import GroupedModel, run_groups

DEVICE_NAME = "cpu-ort"
#: How a group's timed runs become its profile seconds.
STATISTICS = ("median", "mean")


def machine_info(threads: int, provider: str) -> dict[str, Any]:
    """The machine a calibration belongs to: OS, CPU, core count, ONNX Runtime version, threads,
    provider, load average at calibration time."""
    import onnxruntime as ort

    try:
        load = list(os.getloadavg())
    except OSError:  # pragma: no cover - not on every OS
        load = []
    cpu = platform.processor()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:  # pragma: no cover
        pass
    return {
        "platform": platform.platform(),
        "cpu": cpu,
        "cores": os.cpu_count(),
        "python": platform.python_version(),
        "onnxruntime": ort.__version__,
        "intra_op_threads": threads,
        "provider": provider,
        "loadavg": load,
    }


def copy_bandwidth_bps(n_bytes: int = 4 << 20, runs: int = 21) -> float:
    """Median host copy bandwidth in bytes per second (``np.copyto`` of ``n_bytes``)."""
    a = np.ones(n_bytes // 4, np.float32)
    b = np.empty_like(a)
    ts = []
    for _ in range(runs):
        t0 = time.perf_counter()
        np.copyto(b, a)
        ts.append(time.perf_counter() - t0)
    return float(n_bytes / max(float(np.median(ts)), 1e-9))


@dataclass
class Calibration:
    """Measured per-group seconds: ``latency_s[network][batch]`` is a list over groups;
    ``live_bytes[network]`` the bytes alive after each group; ``spread_s`` the per-group
    interquartile range."""

    machine: dict[str, Any]
    copy_bandwidth_bps: float
    latency_s: dict[str, dict[int, list[float]]]
    spread_s: dict[str, dict[int, list[float]]]
    live_bytes: dict[str, list[int]]
    groups: dict[str, list[list[str]]]
    warmup: int = 3
    runs: int = 15
    statistic: str = "median"
    warmup_s: float = 0.0
    #: per network and batch: ``[median CPU seconds of a whole inference]`` (calling thread)
    cpu_s: dict[str, dict[int, list[float]]] = field(default_factory=dict)
    networks: dict[str, Network] = field(default_factory=dict, repr=False)
    #: the executor's own seconds per group (mean gap between one group's end and the next
    #: group's start while requests queue: policy, bookkeeping, the Python call), measured by
    #: :func:`measure_overheads`; added to every group's seconds in :meth:`profile`
    dispatch_s: float = 0.0
    #: seconds from a request's issue instant to its first group's start on an idle worker
    #: (the cross-thread hand-off), measured by :func:`measure_overheads`; the simulator admits
    #: each request this much after its issue instant (:func:`npusched.realexec.validate.predict`)
    admit_s: float = 0.0

    def isolated_s(self, network: str, batch: int = 1) -> float:
        """Calibrated isolated latency (seconds): the sum of the group medians."""
        return float(sum(self.latency_s[network][batch]))

    def profile(self, grouped: GroupedModel) -> Profile:
        """The simulator's profile of ``grouped`` on ``cpu-ort`` (one step per group): each
        group's calibrated seconds plus the executor's dispatch seconds (:attr:`dispatch_s`)."""
        name = grouped.name
        if name not in self.latency_s:
            raise ConfigError(f"calibration has no network {name!r}; has {sorted(self.latency_s)}")
        batches = tuple(sorted(self.latency_s[name]))
        lat = np.array([self.latency_s[name][b] for b in batches], dtype=np.float64)
        lat = lat + self.dispatch_s
        return Profile.from_tables(
            grouped.grouped_network(),
            device_name=DEVICE_NAME,
            batch_sizes=batches,
            latency_s=lat,
            frequency_hz=1e9,
            memory_bandwidth_bps=self.copy_bandwidth_bps,
            checkpoint_bytes=np.array(self.live_bytes[name], dtype=np.int64),
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "device": DEVICE_NAME,
            "machine": self.machine,
            "copy_bandwidth_bps": self.copy_bandwidth_bps,
            "warmup": self.warmup,
            "statistic": self.statistic,
            "warmup_s": self.warmup_s,
            "runs": self.runs,
            "dispatch_s": self.dispatch_s,
            "admit_s": self.admit_s,
            "networks": {
                n: {
                    "groups": self.groups[n],
                    "live_bytes": self.live_bytes[n],
                    "latency_s": {str(b): v for b, v in self.latency_s[n].items()},
                    "iqr_s": {str(b): v for b, v in self.spread_s[n].items()},
                    "cpu_s": {str(b): v for b, v in self.cpu_s.get(n, {}).items()},
                }
                for n in self.latency_s
            },
        }

    def save(self, path: str | Path) -> Path:
        p = Path(path)
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(json.dumps(self.to_json(), indent=1))
        return p

    @classmethod
    def load(cls, path: str | Path) -> Calibration:
        p = Path(path)
        try:
            d = json.loads(p.read_text())
            nets = d["networks"]
            return cls(
                machine=d["machine"],
                copy_bandwidth_bps=float(d["copy_bandwidth_bps"]),
                latency_s={
                    n: {int(b): list(v) for b, v in x["latency_s"].items()} for n, x in nets.items()
                },
                spread_s={
                    n: {int(b): list(v) for b, v in x["iqr_s"].items()} for n, x in nets.items()
                },
                live_bytes={n: list(x["live_bytes"]) for n, x in nets.items()},
                groups={n: x["groups"] for n, x in nets.items()},
                warmup=int(d.get("warmup", 0)),
                runs=int(d.get("runs", 0)),
                statistic=str(d.get("statistic", "median")),
                warmup_s=float(d.get("warmup_s", 0.0)),
                cpu_s={
                    n: {int(b): list(v) for b, v in x.get("cpu_s", {}).items()}
                    for n, x in nets.items()
                },
                dispatch_s=float(d.get("dispatch_s", 0.0)),
                admit_s=float(d.get("admit_s", 0.0)),
            )
        except (OSError, ValueError, KeyError, TypeError) as e:
            raise ConfigError(f"{p}: not a cpu-ort calibration ({type(e).__name__}: {e})") from None


def calibrate(
    models: Mapping[tuple[str, int], GroupedModel],
    sessions: Mapping[tuple[str, int], Sequence[Any]],
    *,
    warmup: int = 3,
    runs: int = 15,
    statistic: str = "median",
    warmup_s: float = 0.0,
    threads: int = 1,
    provider: str = "cpu",
    progress: Any = None,
) -> Calibration:
    """Measure every ``(network, batch)`` model's groups: ``warmup`` untimed whole inferences
    of each and round-robin ones for ``warmup_s`` more seconds (so a shared machine's scheduler
    treats the process as the busy one it will be during a run), then ``runs`` timed rounds; a round runs one inference of every model in turn
    (round-robin, so every network is timed under the same background load, which on a shared
    machine changes from second to second). A group's profile seconds are the median
    (``statistic="median"``, the default) or the mean (``"mean"``) of its ``runs`` timings;
    its IQR and the CPU seconds of the calling thread (median) are kept too.
    ``progress(k)`` is called after each round."""
    if statistic not in STATISTICS:
        raise ConfigError(f"statistic: {statistic!r}; allowed: {', '.join(STATISTICS)}")
    lat: dict[str, dict[int, list[float]]] = {}
    iqr: dict[str, dict[int, list[float]]] = {}
    cpu: dict[str, dict[int, list[float]]] = {}
    live: dict[str, list[int]] = {}
    groups: dict[str, list[list[str]]] = {}
    inputs = {key: gm.sample_input() for key, gm in models.items()}
    for key, gm in models.items():
        for _ in range(warmup):
            run_groups(sessions[key], gm, inputs[key])
    end = time.perf_counter() + warmup_s
    while time.perf_counter() < end:  # run continuously: the steady state a busy executor is in
        for key, gm in models.items():
            run_groups(sessions[key], gm, inputs[key])
    rows: dict[tuple[str, int], list[list[float]]] = {key: [] for key in models}
    cpu_rows: dict[tuple[str, int], list[list[float]]] = {key: [] for key in models}
    enabled = gc.isenabled()
    gc.collect()
    gc.disable()  # as in the executor's timed runs
    try:
        for k in range(runs):
            for key, gm in models.items():
                c0 = time.thread_time()
                rows[key].append(run_groups(sessions[key], gm, inputs[key])[1])
                cpu_rows[key].append([(time.thread_time() - c0) / len(gm.groups)])
            if progress is not None:
                progress(k + 1)
    finally:
        if enabled:
            gc.enable()
    for (name, batch), gm in models.items():
        r = np.array(rows[(name, batch)])
        stat = np.median(r, axis=0) if statistic == "median" else r.mean(axis=0)
        lat.setdefault(name, {})[batch] = [float(v) for v in stat]
        q1, q3 = np.percentile(r, [25, 75], axis=0)
        iqr.setdefault(name, {})[batch] = [float(v) for v in q3 - q1]
        cpu.setdefault(name, {})[batch] = [
            float(np.median(np.array(cpu_rows[(name, batch)])) * len(gm.groups))
        ]
        live[name] = [g.live_bytes for g in gm.groups]
        groups[name] = [list(g.layers) for g in gm.groups]
    return Calibration(
        machine=machine_info(threads, provider),
        copy_bandwidth_bps=copy_bandwidth_bps(),
        latency_s=lat,
        spread_s=iqr,
        live_bytes=live,
        groups=groups,
        warmup=warmup,
        runs=runs,
        statistic=statistic,
        warmup_s=warmup_s,
        cpu_s=cpu,
    )


def measure_overheads(
    models: Mapping[str, GroupedModel],
    sessions: Mapping[str, Sequence[Any]],
    profiles: Mapping[str, Profile],
    *,
    per_network: int = 6,
    idle_gap_s: float = 0.002,
    cpus: frozenset[int] | None = None,
) -> tuple[float, float]:
    """The executor's own seconds, measured by running it (an in-situ pilot, NP-FCFS):

    * ``dispatch_s``: ``per_network`` requests of every network (round-robin) queued at once;
      the mean gap between one group's end and the next group's start (within a request and
      between requests: policy call, bookkeeping, the next ``session.run`` call) — per group,
      so ``groups x dispatch_s`` is a request's share;
    * ``admit_s``: as many requests again, each pushed from another thread ``idle_gap_s``
      after the previous one finished (the worker blocks waiting, as between LoadGen's
      queries); the median from the push instant to the first group's start.

    ``cpus``: the CPUs of the pushing thread (LoadGen's, :mod:`npusched.realexec.affinity`).

    Returns ``(dispatch_s, admit_s)`` in seconds."""
    import threading

    from npusched.policies.base import POLICIES
    from npusched.realexec.affinity import pinned
    from npusched.realexec.executor import QueueSource, RealExecutor, ReplaySource
    from npusched.workloads.request import Request

    names = list(models)
    n = per_network * len(names)
    burst = [Request(i, 0.0, names[i % len(names)]) for i in range(n)]
    ex = RealExecutor(models, sessions, profiles, POLICIES.create("NP-FCFS"))
    res = ex.run(ReplaySource(burst))
    dispatch = float(np.mean(res.overhead_s)) if res.overhead_s else 0.0

    finished = threading.Event()

    class _Pilot(QueueSource):
        """Pushes one request at a time from its own thread, each after the previous ended."""

        def start(self, t0: float) -> None:
            super().start(t0)
            thread.start()

        def completed(self, job: Any) -> None:
            finished.set()

    src = _Pilot()

    def feed() -> None:
        with pinned(cpus):
            for i in range(n):
                time.sleep(idle_gap_s)
                finished.clear()
                src.push(Request(i, time.perf_counter() - src.t0, names[i % len(names)]))
                finished.wait(10.0)
        src.done.set()

    thread = threading.Thread(target=feed, name="admit-pilot", daemon=True)
    ex2 = RealExecutor(models, sessions, profiles, POLICIES.create("NP-FCFS"))
    res2 = ex2.run(src)
    thread.join()
    df = res2.records
    admit = float(np.median(df["first_start_s"].to_numpy() - df["arrival_s"].to_numpy()))
    return dispatch, admit


class CpuOrtDevice:
    """The ``cpu-ort`` device (registered in ``DEVICES``): the costs of a grouped network
    (:meth:`GroupedModel.grouped_network`) read from a calibration file.

    Args:
        calibration: path of a calibration JSON written by ``npusched validate`` (or
            :meth:`Calibration.save`).
    """

    name = DEVICE_NAME

    def __init__(self, calibration: str = "") -> None:
        self.calibration = calibration
        self._cal: Calibration | None = None

    def _load(self) -> Calibration:
        if self._cal is None:
            if not self.calibration:
                raise ConfigError(
                    "cpu-ort: calibration: no file given; run `npusched validate` to measure one"
                )
            self._cal = Calibration.load(self.calibration)
        return self._cal

    @property
    def frequency_hz(self) -> float:
        return 1e9

    @property
    def memory_bandwidth_bps(self) -> float:
        return self._load().copy_bandwidth_bps

    def layer_costs(self, network: Network, batch: int) -> LayerCosts:
        cal = self._load()
        if network.name not in cal.latency_s or batch not in cal.latency_s[network.name]:
            raise ConfigError(
                f"cpu-ort: calibration {self.calibration} has no {network.name!r} at batch {batch}"
            )
        lat = np.array(cal.latency_s[network.name][batch], dtype=np.float64)
        if len(lat) != len(network.layers):
            raise ConfigError(
                f"cpu-ort: {network.name!r} has {len(network.layers)} layers, the calibration "
                f"{len(lat)} groups (use GroupedModel.grouped_network())"
            )
        n = len(lat)
        return LayerCosts(
            cycles=np.round(lat * 1e9).astype(np.int64),
            latency_s=lat,
            tiles=np.ones(n, np.int64),
            bytes_moved=np.zeros(n, np.int64),
            checkpoint_bytes=np.array(cal.live_bytes[network.name], dtype=np.int64),
            energy_j=np.zeros(n),
        )

    def cache_key(self) -> tuple[object, ...]:
        return (DEVICE_NAME, str(self.calibration))
