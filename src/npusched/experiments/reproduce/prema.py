"""Reproduce PREMA (HPCA 2020) Sec. IV-D and VI: ``npusched reproduce prema``.

Methodology (Sec. III and VI, with the choices the paper leaves open stated here):

* **Device and networks**: the ``prema-npu`` systolic array (Table I) and the eight DNNs
  CNN-AN/GN/VN/MN (``alexnet``, ``googlenet``, ``vgg-16``, ``mobilenet-v1``) and
  RNN-SA/MT1/MT2/ASR (``rnn-sa``, ``rnn-mt1``, ``rnn-mt2``, ``rnn-asr``); recurrent lengths from
  the synthetic length models of :mod:`npusched.models.rnn_lengths` (profiled-set resampling, as
  Sec. VI describes).
* **Workloads** (:func:`npusched.workloads.prema_workload`): 8 tasks drawn uniformly from the 8
  DNNs, random priority low/medium/high (1/3/9), dispatch times uniform over a window. Each
  workload has one batch size (1, 4 or 16; a server is configured for a batch size) and the
  results average the three batch sizes with equal weight. The window is
  ``n_tasks x mean isolated latency / load`` at that batch size (mean over a fixed 512-request
  reference sample), i.e. ``load`` is the offered load while tasks arrive, so tasks overlap
  heavily. The paper gives no window; ``load = 1.5`` is calibrated on the *baseline only*: it
  puts NP-FCFS's SLA violation rate at N = 4 nearest the paper's 36% (10 workloads per batch
  size: load 1.0 -> 30%, 1.5 -> 38%, 2.0 -> 40%, 3.0 -> 47%). 25 workloads per (batch size,
  policy); the same workloads for every policy.
* **Policies**: NP-/P- FCFS, RRB, HPF, TOKEN, SJF, PREMA. ``P-X`` is the static CHECKPOINT
  configuration, ``P-X-dynamic`` uses Algorithm 3 (DRAIN vs CHECKPOINT), ``P-X-kill`` static
  KILL and ``P-X-dynamic-kill`` Algorithm 3 with KILL in CHECKPOINT's place (Fig. 15).
  There is no ``P-RRB-kill``: time slicing with static KILL restarts every task longer than the
  quantum whenever two models have work, so such tasks never finish (a livelock, not a result).
  ``*-oracle`` labels use the true isolated latency as the estimate (Sec. VI-D); every other
  policy sees PREMA's predictor (:mod:`npusched.policies.temporal.predictor`).
* **Metrics** (:mod:`npusched.metrics`): ANTT, STP, fairness (Eq. 1-2) per workload, averaged
  over workloads; "improvement over NP-FCFS" is the ratio of those averages (ANTT: FCFS / policy;
  STP and fairness: policy / FCFS); the geometric mean of per-workload ratios is also in the
  CSVs. SLA violation rate at ``N`` = fraction of all tasks with latency ``> N x isolated``.
  Fig. 14: per network, the 95th percentile of the NTT (latency / isolated) of high-priority
  tasks in the batch-1 workloads; "average" is the mean over networks, "max" the worst network.
* **Mechanism study** (Fig. 5/6, Sec. IV-D): 2-task workloads. A low-priority task (each of the
  8 DNNs x 3 batch sizes in turn) starts at t = 0; a high-priority task (random DNN, random batch
  size) arrives at a uniformly random point of the low task's isolated execution. NP-FCFS is the
  baseline; P-HPF preempts with CHECKPOINT, KILL or DRAIN. Preemption latency = checkpoint bytes /
  memory bandwidth (the save; 0 for KILL and DRAIN); wait time = first start - arrival of the
  high-priority task.

Outputs in the output directory: ``main_points.csv`` / ``main_records.csv`` / ``mech_points.csv``
(raw results, one row per finished point, appended as points finish: a killed run resumes and
skips points already present with the same configuration hash; ``--runs`` is not part of the
hash, so more runs extend earlier ones), ``fig*.csv`` and ``fig*.png`` per figure,
``predictor.csv``, ``summary.json`` and ``report.md``.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import math
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from npusched._io import atomic_write_text
from npusched.errors import ConfigError, SimulationError
from npusched.hardware.profile import Profile
from npusched.report.progress import progress_bar
from npusched.workloads.request import Request

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "PAPER",
    "PREMA_NETWORKS",
    "PolicySpec",
    "PremaSetup",
    "policy_specs",
    "reproduce",
]

#: The eight DNNs of PREMA Sec. III (zoo names) and the paper's short names.
PREMA_NETWORKS: tuple[str, ...] = (
    "alexnet",
    "googlenet",
    "vgg-16",
    "mobilenet-v1",
    "rnn-sa",
    "rnn-mt1",
    "rnn-mt2",
    "rnn-asr",
)
SHORT = {
    "alexnet": "CNN-AN",
    "googlenet": "CNN-GN",
    "vgg-16": "CNN-VN",
    "mobilenet-v1": "CNN-MN",
    "rnn-sa": "RNN-SA",
    "rnn-mt1": "RNN-MT1",
    "rnn-mt2": "RNN-MT2",
    "rnn-asr": "RNN-ASR",
}

#: The paper's headline numbers (Sec. IV-D, VI) that ``report.md`` sets ours against.
PAPER: dict[str, float] = {
    "antt_improvement_prema_dynamic": 7.8,
    "fairness_improvement_prema_dynamic": 19.6,
    "stp_improvement_prema_dynamic": 1.4,
    "np_prema_antt_vs_sjf": 0.92,
    "predictor_mape_percent": 1.6,
    "sla_violation_prema_n4_max": 0.10,
    "sla_violation_np_fcfs": 0.36,
    "p95_high_np_fcfs_avg": 21.0,
    "p95_high_np_fcfs_max": 85.0,
    "p95_high_p_sjf_max": 2.6,
    "p95_high_prema_avg": 1.4,
    "p95_high_prema_max": 1.6,
    "checkpoint_latency_us_avg": 12.0,
    "checkpoint_latency_us_max": 59.0,
    "ntt_improvement_kill": 3.08,
    "ntt_improvement_checkpoint": 3.06,
    "drain_wait_ms_avg": 5.3,
    "oracle_fraction": 0.99,
}

#: The paper's range of isolated task latencies (Sec. IV-D: "0.5 to 45 msecs among the eight
#: DNNs"), seconds.
PAPER_JOB_RANGE_S: tuple[float, float] = (0.5e-3, 45e-3)

#: Bumped when a change alters the results, so stale points are not reused (2: cumulative
#: tokens by default, 142 GB/s effective checkpoint bandwidth).
RESULTS_VERSION = 2
QUICK_RUNS = 3
DEFAULT_RUNS = 25
SLA_NS: tuple[int, ...] = tuple(range(2, 21))
FAMILIES = ("RRB", "HPF", "TOKEN", "SJF", "PREMA")


# --- configuration ----------------------------------------------------------------------------
@dataclass(frozen=True)
class PremaSetup:
    """Everything that determines the results except the number of runs.

    Attributes:
        networks: zoo names of the DNNs.
        device: device name.
        n_tasks: tasks per workload.
        batch_sizes: one set of workloads per batch size.
        load: offered load while tasks arrive (sets the dispatch window, see the module doc).
        seed: base seed of every workload.
        preemption_point: ``"tile"`` or ``"layer"`` (engine).
        job_range_s: ``(lo, hi)`` seconds: keep only tasks whose isolated latency lies in it
            (``None``: every task). :data:`PAPER_JOB_RANGE_S` is the paper's 0.5-45 ms
            (Sec. IV-D); see :meth:`_Context.workload` for how tasks are drawn under it.
    """

    networks: tuple[str, ...] = PREMA_NETWORKS
    device: str = "prema-npu"
    n_tasks: int = 8
    batch_sizes: tuple[int, ...] = (1, 4, 16)
    load: float = 1.5
    seed: int = 0
    preemption_point: str = "tile"
    job_range_s: tuple[float, float] | None = None

    def range_text(self) -> str:
        """The job-length range in words (``"all"`` or ``"0.5-45 ms"``)."""
        if self.job_range_s is None:
            return "all lengths"
        lo, hi = self.job_range_s
        return f"{lo * 1e3:g}-{hi * 1e3:g} ms"

    def in_range(self, isolated_s: float) -> bool:
        """Whether a task of ``isolated_s`` seconds belongs to this setup's workloads."""
        if self.job_range_s is None:
            return True
        lo, hi = self.job_range_s
        return lo <= isolated_s <= hi

    def config_hash(self) -> str:
        """A short hash of the setup and :data:`RESULTS_VERSION` (not of the run count)."""
        blob = json.dumps({**asdict(self), "version": RESULTS_VERSION}, sort_keys=True)
        return hashlib.sha256(blob.encode()).hexdigest()[:12]


@dataclass(frozen=True)
class PolicySpec:
    """One policy configuration of the study.

    Attributes:
        label: name in the results (``NP-PREMA``, ``P-SJF-dynamic``, ...).
        registry: registered policy name.
        mechanism: the ``mechanism`` parameter (``None`` for non-preemptive policies).
        estimator: ``"prema"`` or ``"oracle"``.
        tokens: the token rule of a token policy (``None``: the policy's default,
            ``"cumulative"``; see :mod:`npusched.policies.temporal.prema`).
    """

    label: str
    registry: str
    mechanism: str | None = None
    estimator: str = "prema"
    tokens: str | None = None

    def build(self) -> Any:
        """A fresh policy object."""
        import npusched.policies.temporal  # noqa: F401  (registers the built-ins)
        from npusched.policies.base import POLICIES

        params: dict[str, Any] = {} if self.mechanism is None else {"mechanism": self.mechanism}
        if self.tokens is not None:
            params["tokens"] = self.tokens
        return POLICIES.create(self.registry, **params)


def policy_specs() -> list[PolicySpec]:
    """Every policy configuration of the study, in report order: the ``policies`` of the
    packaged suite file (``npusched/data/experiments/suites/prema.toml``, where each entry and
    the missing ``P-RRB-kill`` are explained)."""
    from npusched.experiments.suite_files import PremaSuite, load_suite

    suite = load_suite("prema")
    assert isinstance(suite, PremaSuite)
    specs: list[PolicySpec] = suite.specs()
    return specs


#: The policies of the paper-job-range study (the headline figures only).
RANGE_LABELS: tuple[str, ...] = (
    "NP-FCFS",
    "NP-SJF",
    "NP-PREMA",
    "P-SJF-dynamic",
    "P-PREMA",
    "P-PREMA-kill",
    "P-PREMA-dynamic",
    "P-PREMA-dynamic-kill",
    "P-PREMA-dynamic-linear",
)


# --- resumable CSV stores ---------------------------------------------------------------------
class _Store:
    """An append-only CSV of finished points with a fixed header.

    Every row is written with one ``write`` and flushed, so a killed run loses at most the row
    being written; :meth:`lines` drops a truncated last line (and rewrites the file without it)
    and rows whose column count does not match the header.
    """

    def __init__(self, path: Path, columns: Sequence[str]) -> None:
        self.path = path
        self.columns = list(columns)

    def lines(self) -> list[str]:
        """The header and the complete rows (``[]`` if there is no file). A truncated last line
        and rows whose column count does not match are dropped, and the file rewritten without
        them; a file with another header (an older layout) is moved aside to ``.csv.old``."""
        if not self.path.exists():
            return []
        lines = self.path.read_text().splitlines(keepends=True)
        if not lines or next(csv.reader([lines[0]])) != self.columns:
            os.replace(self.path, self.path.with_suffix(".csv.old"))
            return []
        good = lines[:1] + [
            line
            for line in lines[1:]
            # a line without its newline was truncated by a kill
            if line.endswith("\n") and len(next(csv.reader([line]), [])) == len(self.columns)
        ]
        if len(good) != len(lines):
            self.rewrite(good)
        return good

    def rewrite(self, lines: Sequence[str]) -> None:
        """Replace the file's content with ``lines`` (atomically)."""
        atomic_write_text(self.path, "".join(lines))

    def load(self) -> pd.DataFrame:
        """The complete rows (see :meth:`lines`) as a frame with the store's columns."""
        import pandas as pd
        good = self.lines()
        if not good:
            return pd.DataFrame(columns=self.columns)
        # a hash of digits only (e.g. "012345678901") must not be read as a number
        return pd.read_csv(io.StringIO("".join(good)), dtype={"config_hash": str})

    def append(self, rows: Sequence[Mapping[str, Any]]) -> None:
        if not rows:
            return
        new = not self.path.exists()
        buf = io.StringIO()
        w = csv.DictWriter(buf, fieldnames=self.columns, lineterminator="\n")
        if new:
            w.writeheader()
        for r in rows:
            w.writerow({c: _cell(r.get(c)) for c in self.columns})
        with self.path.open("a") as f:
            f.write(buf.getvalue())
            f.flush()
            os.fsync(f.fileno())


def _cell(v: Any) -> Any:
    if isinstance(v, float):
        return repr(v) if math.isfinite(v) else ("" if math.isnan(v) else repr(v))
    return "" if v is None else v


MAIN_KEY = ["label", "batch", "run"]
MAIN_METRICS = ["antt", "stp", "fairness", "makespan_s", "preemptions", "wasted_s", "ckpt_s"]
MAIN_COLUMNS = [
    *MAIN_KEY,
    *MAIN_METRICS,
    *(f"sla_n{n}" for n in SLA_NS),
    "p95_high_priority_norm",
    "config_hash",
]
RECORD_COLUMNS = [
    *MAIN_KEY,
    "id",
    "network",
    "priority",
    "arrival_s",
    "isolated_s",
    "estimated_s",
    "latency_s",
    "waiting_s",
    "preemptions",
    "seq_in",
    "seq_out",
    "config_hash",
]
MECHS = ("fcfs", "checkpoint", "kill", "drain")
MECH_KEY = ["run", "combo"]
MECH_COLUMNS = [
    *MECH_KEY,
    "low_net",
    "low_batch",
    "high_net",
    "high_batch",
    "point_frac",
    "low_isolated_s",
    "high_isolated_s",
    *(f"{m}_{k}" for m in MECHS for k in ("wait_s", "ntt_high", "stp", "preempt_s")),
    "config_hash",
]


# --- simulation helpers -----------------------------------------------------------------------
class _Context:
    """Profiles, workloads and windows shared by the points of one reproduction."""

    def __init__(self, setup: PremaSetup) -> None:
        from npusched.hardware import compile_profile, get_device
        from npusched.models import get_network

        self.setup = setup
        dev = get_device(setup.device)
        bs = tuple(sorted(set(setup.batch_sizes)))
        self.profiles: dict[str, Profile] = {
            n: compile_profile(get_network(n), dev, bs) for n in setup.networks
        }
        #: bytes/s of a checkpoint save (the profile's, i.e. the device's effective
        #: ``checkpoint_bandwidth_bps`` when it has one)
        self.bandwidth = next(iter(self.profiles.values())).memory_bandwidth_bps
        self._workloads: dict[tuple[int, int], list[Request]] = {}
        self._windows: dict[int, float] = {}

    def draw(self, n: int, window_s: float, batch: int, seed: Sequence[int]) -> list[Request]:
        """``n`` PREMA tasks at ``batch`` dispatched uniformly over ``window_s`` seconds.

        Without a job-length range this is :func:`~npusched.workloads.prema_workload`. With
        one, tasks are drawn the same way in rounds of ``4n`` and those whose isolated latency
        falls outside the range are rejected (a task's DNN, sequence lengths and priority are
        redrawn; its batch size is the workload's), until ``n`` remain; i.e. the task mix is
        the paper's uniform one conditioned on the range.
        """
        from npusched.workloads import assemble, prema_workload

        rng = np.random.default_rng(np.random.SeedSequence(list(seed)))
        s = self.setup
        if s.job_range_s is None:
            return prema_workload(n, s.networks, window_s, batch_sizes=(batch,), random_state=rng)
        kept: list[Request] = []
        for _ in range(1000):
            pool = prema_workload(
                4 * n, s.networks, window_s, batch_sizes=(batch,), random_state=rng
            )
            kept += [r for r in pool if s.in_range(self.isolated(r))][: n - len(kept)]
            if len(kept) == n:
                return assemble(
                    [r.arrival_s for r in kept],
                    [r.network for r in kept],
                    batch=[r.batch for r in kept],
                    priority=[r.priority for r in kept],
                    seq_in=[r.seq_in for r in kept],
                    seq_out=[r.seq_out for r in kept],
                )
        raise ConfigError(f"no task at batch {batch} has an isolated latency in {s.range_text()}")

    def mean_isolated(self, batch: int) -> float:
        """Mean isolated latency (s) of a task at ``batch`` over a fixed reference sample."""
        reqs = self.draw(512, 0.0, batch, [self.setup.seed, 99, batch])
        return float(np.mean([self.isolated(r) for r in reqs]))

    def window(self, batch: int) -> float:
        if batch not in self._windows:
            s = self.setup
            self._windows[batch] = s.n_tasks * self.mean_isolated(batch) / s.load
        return self._windows[batch]

    def isolated(self, r: Request) -> float:
        return self.profiles[r.network].isolated_latency(r.batch, r.seq_in, r.seq_out)

    def workload(self, batch: int, run: int) -> list[Request]:
        key = (batch, run)
        if key not in self._workloads:
            s = self.setup
            self._workloads[key] = self.draw(
                s.n_tasks, self.window(batch), batch, [s.seed, 1, batch, run]
            )
        return self._workloads[key]

    def simulate(self, policy: Any, requests: Sequence[Request], estimator: str) -> pd.DataFrame:
        from npusched.policies.temporal.predictor import make_estimator
        from npusched.sim.engine import Simulator

        sim = Simulator(
            self.profiles,
            policy,
            preemption_point=self.setup.preemption_point,
            estimator=make_estimator(estimator),
        )
        # a guard against policies that never finish (e.g. a livelock): far beyond any schedule
        horizon = max(r.arrival_s for r in requests) + 50.0 * sum(map(self.isolated, requests))
        df = sim.run(requests, until=horizon).to_frame()
        if df["finish_s"].isna().any():
            raise SimulationError(
                f"policy {getattr(policy, 'name', policy)!r} left requests unfinished after "
                f"{horizon:.3g} s of simulated time"
            )
        return df


def _main_point(
    ctx: _Context, spec: PolicySpec, batch: int, run: int, chash: str
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    from npusched.metrics import antt, fairness, sla_violation_rates, stp

    df = ctx.simulate(spec.build(), ctx.workload(batch, run), spec.estimator)
    ntt = df["latency_s"].to_numpy(float) / df["isolated_s"].to_numpy(float)
    high = ntt[df["priority"].to_numpy() == 9]
    row: dict[str, Any] = {
        "label": spec.label,
        "batch": batch,
        "run": run,
        "antt": antt(df),
        "stp": stp(df),
        "fairness": fairness(df),
        "makespan_s": float(df["finish_s"].max() - df["arrival_s"].min()),
        "preemptions": int(df["preemptions"].sum()),
        "wasted_s": float(df["wasted_s"].sum()),
        "ckpt_s": float(df["checkpoint_s"].sum()),
        "p95_high_priority_norm": float(np.percentile(high, 95)) if high.size else math.nan,
        "config_hash": chash,
    }
    for n, v in zip(SLA_NS, sla_violation_rates(df, SLA_NS).tolist(), strict=True):
        row[f"sla_n{n}"] = float(v)
    # one record per request in RECORD_COLUMNS order; to_dict gives Python ints and floats
    recs = df.assign(label=spec.label, batch=batch, run=run, config_hash=chash)[RECORD_COLUMNS]
    return row, recs.to_dict("records")  # type: ignore[return-value]  # keys are str


def _mech_point(ctx: _Context, run: int, combo: int, chash: str) -> dict[str, Any]:
    from npusched.metrics import stp
    from npusched.workloads import assemble, sample_seq_lens

    s = ctx.setup
    nets, batches = s.networks, tuple(sorted(set(s.batch_sizes)))
    low_net, low_batch = nets[combo // len(batches)], batches[combo % len(batches)]
    rng = np.random.default_rng(np.random.SeedSequence([s.seed, 5, run, combo]))
    high_net = nets[int(rng.integers(len(nets)))]
    high_batch = batches[int(rng.integers(len(batches)))]
    seq_in, seq_out = sample_seq_lens([low_net, high_net], rng)
    low = Request(0, 0.0, low_net, low_batch, 1, None, seq_in[0], seq_out[0])
    low_iso = ctx.isolated(low)
    if s.job_range_s is not None:
        # under a job-length range: redraw the lengths of the low task (a recurrent one can
        # fit) and the whole high task until both fit; a low (DNN, batch) that never fits
        # is skipped (a row without measurements)
        for _ in range(200):
            if s.in_range(low_iso):
                break
            si, so = sample_seq_lens([low_net], rng)
            low = Request(0, 0.0, low_net, low_batch, 1, None, si[0], so[0])
            low_iso = ctx.isolated(low)
        for _ in range(1000):
            hreq = Request(1, 0.0, high_net, high_batch, 9, None, seq_in[1], seq_out[1])
            if s.in_range(ctx.isolated(hreq)):
                break
            high_net = nets[int(rng.integers(len(nets)))]
            high_batch = batches[int(rng.integers(len(batches)))]
            seq_in[1:], seq_out[1:] = sample_seq_lens([high_net], rng)
        seq_in[0], seq_out[0] = low.seq_in, low.seq_out
        if not s.in_range(low_iso):
            return {
                "run": run,
                "combo": combo,
                "low_net": low_net,
                "low_batch": low_batch,
                "low_isolated_s": low_iso,
                "config_hash": chash,
            }
    frac = float(rng.uniform(0.0, 1.0))
    reqs = assemble(
        [0.0, frac * low_iso],
        [low_net, high_net],
        batch=[low_batch, high_batch],
        priority=[1, 9],
        seq_in=seq_in,
        seq_out=seq_out,
    )
    high_iso = ctx.isolated(reqs[1])
    row: dict[str, Any] = {
        "run": run,
        "combo": combo,
        "low_net": low_net,
        "low_batch": low_batch,
        "high_net": high_net,
        "high_batch": high_batch,
        "point_frac": frac,
        "low_isolated_s": low_iso,
        "high_isolated_s": high_iso,
        "config_hash": chash,
    }
    for mech in MECHS:
        spec = (
            PolicySpec("NP-FCFS", "NP-FCFS")
            if mech == "fcfs"
            else PolicySpec(f"P-HPF-{mech}", "P-HPF", mech)
        )
        df = ctx.simulate(spec.build(), reqs, "oracle")
        hi = df[df["id"] == 1].iloc[0]
        lo = df[df["id"] == 0].iloc[0]
        row[f"{mech}_wait_s"] = float(hi["first_start_s"] - hi["arrival_s"])
        row[f"{mech}_ntt_high"] = float(hi["latency_s"] / hi["isolated_s"])
        row[f"{mech}_stp"] = stp(df)
        row[f"{mech}_preempt_s"] = (
            float(lo["checkpoint_bytes"]) / ctx.bandwidth if mech == "checkpoint" else 0.0
        )
    return row


# --- driver -----------------------------------------------------------------------------------
def _done_keys(df: pd.DataFrame, key: Sequence[str], chash: str) -> set[tuple[Any, ...]]:
    if df.empty:
        return set()
    sub = df[df["config_hash"].astype(str) == chash]
    return {tuple(r) for r in sub[list(key)].itertuples(index=False, name=None)}


def _drop_orphan_records(store: _Store, done: set[tuple[Any, ...]], chash: str) -> None:
    """Remove records of points without a row in ``main_points.csv`` (a run killed after writing
    a point's records but before its row): the point is computed again, and the resumed
    ``main_records.csv`` then equals an uninterrupted run's instead of holding both copies."""
    lines = store.lines()
    if not lines:
        return
    i_label, i_batch, i_run = (RECORD_COLUMNS.index(k) for k in MAIN_KEY)
    i_hash = RECORD_COLUMNS.index("config_hash")
    keep = lines[:1]
    for line in lines[1:]:
        row = next(csv.reader([line]))
        key = (row[i_label], int(row[i_batch]), int(row[i_run]))
        if row[i_hash] != chash or key in done:
            keep.append(line)
    if len(keep) != len(lines):
        store.rewrite(keep)


@dataclass
class _Results:
    main: pd.DataFrame
    records: pd.DataFrame
    mech: pd.DataFrame
    runs: int
    setup: PremaSetup
    #: Dispatch window (seconds) per batch size.
    windows_s: dict[int, float] = field(default_factory=dict)
    #: The policy labels of the study, in report order.
    labels: tuple[str, ...] = ()


def reproduce(
    out: str | Path,
    *,
    quick: bool = False,
    runs: int | None = None,
    seed: int = 0,
    progress: bool = False,
    setup: PremaSetup | None = None,
    specs: Sequence[PolicySpec] | None = None,
    plots: bool = True,
    load: float | None = None,
    paper_range: bool = True,
    paper_range_s: tuple[float, float] = PAPER_JOB_RANGE_S,
    range_labels: Sequence[str] = RANGE_LABELS,
) -> dict[str, Any]:
    """Run (or resume) the PREMA reproduction into ``out`` and write its tables and plots.

    Args:
        out: output directory (created if needed).
        quick: :data:`QUICK_RUNS` workloads per point instead of :data:`DEFAULT_RUNS`.
        runs: workloads per (policy, batch size), and low-priority samples per (DNN, batch
            size) in the mechanism study; overrides ``quick``.
        seed: base seed.
        progress: show a Rich progress bar over points.
        setup: the study's fixed parameters (default :class:`PremaSetup` with ``seed``).
        specs: policy configurations (default :func:`policy_specs`; must include ``NP-FCFS``).
        plots: also draw the PNG figures (the CSV tables and reports are always written).
        load: offered load while tasks arrive (default :attr:`PremaSetup.load`, 1.5); sets the
            dispatch window. Ignored when ``setup`` is given.
        paper_range: also run the headline policies (:data:`RANGE_LABELS`) with tasks limited
            to the paper's 0.5-45 ms (:data:`PAPER_JOB_RANGE_S`) into ``out/paper-range`` and
            report their figures beside the main ones (only if ``setup`` has no range itself).
        paper_range_s: ``(lo, hi)`` seconds of that study (default the paper's 0.5-45 ms).
        range_labels: the policy labels of that study (default :data:`RANGE_LABELS`).

    Returns:
        The ``summary.json`` content.
    """
    n_runs = runs if runs is not None else (QUICK_RUNS if quick else DEFAULT_RUNS)
    if n_runs < 1:
        raise ConfigError(f"--runs must be >= 1, got {n_runs}")
    if seed < 0:
        raise ConfigError(f"--seed must be >= 0, got {seed}")
    if load is not None and not (0.0 < load <= 100.0):
        raise ConfigError(f"--load must be in (0, 100], got {load}")
    if setup is None:
        setup = PremaSetup(seed=seed) if load is None else PremaSetup(seed=seed, load=load)
    specs = list(specs or policy_specs())
    if "NP-FCFS" not in {s.label for s in specs}:
        raise ConfigError("the PREMA study needs NP-FCFS (the baseline) among its policies")
    out = _check_out(out)
    res = _run_study(out, setup, specs, n_runs, progress, "reproduce prema")
    ranged = None
    if paper_range and setup.job_range_s is None:
        rsetup = replace(setup, job_range_s=(paper_range_s[0], paper_range_s[1]))
        rspecs = [sp for sp in specs if sp.label in set(range_labels)]
        rout = _check_out(out / RANGE_DIR)
        ranged = _run_study(rout, rsetup, rspecs, n_runs, progress, "paper job range")
    return write_outputs(out, res, specs, plots=plots, ranged=ranged)


#: Subdirectory of the output directory holding the paper-job-range study's raw points.
RANGE_DIR = "paper-range"


def _check_out(out: str | Path) -> Path:
    """The output directory, created and checked writable before any work starts."""
    if str(out).strip() == "":
        raise ConfigError("--out: empty path; name an output directory (e.g. out/prema)")
    path = Path(out)
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as e:  # e.g. --out names an existing file, or a read-only parent
        raise ConfigError(f"{path}: cannot use as the output directory: {e.strerror}") from None
    probe = path / ".npusched-write-test"
    try:
        probe.write_text("")
        probe.unlink()
    except OSError as e:
        raise ConfigError(f"{path}: output directory is not writable: {e.strerror}") from None
    return path


def _check_stores(stores: Sequence[_Store], chash: str) -> None:
    """Refuse a directory whose raw points belong to another configuration (seed, load, ...):
    the raw CSVs would mix both (the derived outputs use only this configuration's rows)."""
    for store in stores:
        df = store.load()
        if df.empty:
            continue
        other = sorted(set(df["config_hash"].astype(str)) - {chash})
        if other:
            raise ConfigError(
                f"{store.path}: holds points of another configuration (hash {other[0]}; this one "
                f"is {chash}); use another --out or delete the directory"
            )


def _run_study(
    out: Path,
    setup: PremaSetup,
    specs: Sequence[PolicySpec],
    n_runs: int,
    progress: bool,
    desc: str,
) -> _Results:
    """Compute (or resume) every point of ``setup`` into ``out`` and load the results."""
    chash = setup.config_hash()
    main_store = _Store(out / "main_points.csv", MAIN_COLUMNS)
    rec_store = _Store(out / "main_records.csv", RECORD_COLUMNS)
    mech_store = _Store(out / "mech_points.csv", MECH_COLUMNS)
    _check_stores((main_store, rec_store, mech_store), chash)
    done_main = _done_keys(main_store.load(), MAIN_KEY, chash)
    done_mech = _done_keys(mech_store.load(), MECH_KEY, chash)
    _drop_orphan_records(rec_store, done_main, chash)

    batches = tuple(sorted(set(setup.batch_sizes)))
    n_combos = len(setup.networks) * len(batches)
    todo_mech = [(r, c) for r in range(n_runs) for c in range(n_combos) if (r, c) not in done_mech]
    todo_main = [
        (spec, b, r)
        for b in batches
        for r in range(n_runs)
        for spec in specs
        if (spec.label, b, r) not in done_main
    ]
    ctx = _Context(setup)
    total = len(todo_mech) + len(todo_main)
    with progress_bar(total, f"[bold]{desc}[/]", enabled=progress) as bar:
        step: Callable[[str], None] = (lambda _desc: None) if bar is None else bar.step
        for r, c in todo_mech:
            mech_store.append([_mech_point(ctx, r, c, chash)])
            step(f"Fig. 5/6 sample {r}.{c}")
        for spec, b, r in todo_main:
            row, recs = _main_point(ctx, spec, b, r, chash)
            rec_store.append(recs)  # records first: a point counts as done once its row exists
            main_store.append([row])
            step(f"{spec.label} b{b} run {r}")

    res = _load_results(out, setup, n_runs, chash, [s.label for s in specs])
    res.windows_s = {int(b): ctx.window(b) for b in batches}
    res.labels = tuple(s.label for s in specs)
    return res


def _load_results(
    out: Path, setup: PremaSetup, n_runs: int, chash: str, labels: Iterable[str]
) -> _Results:
    keep = set(labels)
    main = _Store(out / "main_points.csv", MAIN_COLUMNS).load()
    main = main[(main["config_hash"].astype(str) == chash) & (main["run"] < n_runs)]
    main = main[main["label"].isin(keep)].drop_duplicates(MAIN_KEY, keep="last")
    rec = _Store(out / "main_records.csv", RECORD_COLUMNS).load()
    rec = rec[(rec["config_hash"].astype(str) == chash) & (rec["run"] < n_runs)]
    rec = rec.drop_duplicates([*MAIN_KEY, "id"], keep="last")
    rec = rec.merge(main[MAIN_KEY], on=MAIN_KEY, how="inner")
    mech = _Store(out / "mech_points.csv", MECH_COLUMNS).load()
    mech = mech[(mech["config_hash"].astype(str) == chash) & (mech["run"] < n_runs)]
    mech = mech.drop_duplicates(MECH_KEY, keep="last")
    # a canonical row order, so that the aggregates' float sums do not depend on the order the
    # points were computed in (one run, a resumed one, or --runs raised later)
    main = main.sort_values(MAIN_KEY, kind="stable")
    rec = rec.sort_values([*MAIN_KEY, "id"], kind="stable")
    mech = mech.sort_values(MECH_KEY, kind="stable")
    return _Results(
        main.reset_index(drop=True),
        rec.reset_index(drop=True),
        mech.reset_index(drop=True),
        n_runs,
        setup,
    )


# --- aggregation --------------------------------------------------------------------------------
def _f(v: Any) -> float:
    """``float(v)``, NaN for missing or non-numeric cells."""
    try:
        return float(v)
    except (TypeError, ValueError):
        return math.nan


def _i(v: Any) -> int:
    """``int(v)`` of a pandas cell (typed ``Any`` so that mypy accepts any cell)."""
    return int(v)


#: The metrics compared with a reference policy (NP-FCFS, or an oracle twin).
RATED = ("antt", "stp", "fairness")


def _gain(metric: str, value: Any, reference: Any) -> Any:
    """How many times better ``value`` is than ``reference`` (scalars or Series): ANTT is
    lower-is-better (``reference / value``), STP and fairness higher-is-better
    (``value / reference``)."""
    return reference / value if metric == "antt" else value / reference


def _policy_table(res: _Results, labels: Sequence[str]) -> pd.DataFrame:
    """Per label: mean ANTT/STP/fairness/SLA over all (batch, run) points and the improvements
    over NP-FCFS (ratio of means and geometric mean of per-workload ratios)."""
    import pandas as pd
    main = res.main
    cols = ["antt", "stp", "fairness", *(f"sla_n{n}" for n in SLA_NS)]
    means = main.groupby("label")[cols].mean()
    base = main[main["label"] == "NP-FCFS"].set_index(["batch", "run"])
    rows = []
    for label in labels:
        if label not in means.index:
            continue
        m = means.loc[label]
        sub = main[main["label"] == label].set_index(["batch", "run"])
        j = sub.merge(base, left_index=True, right_index=True, suffixes=("", "_fcfs"))
        row: dict[str, Any] = {"policy": label, "points": len(sub)}
        row.update({c: _f(m[c]) for c in ("antt", "stp", "fairness")})
        if "NP-FCFS" in means.index:
            b = means.loc["NP-FCFS"]
            for k in RATED:
                row[f"{k}_improvement"] = _f(_gain(k, m[k], b[k]))
            for k in RATED:
                row[f"{k}_improvement_gmean"] = _gmean(_gain(k, j[k], j[f"{k}_fcfs"]))
        for n in SLA_NS:
            row[f"sla_n{n}"] = _f(m[f"sla_n{n}"])
        rows.append(row)
    return pd.DataFrame(rows)


def _per_batch(res: _Results, labels: Sequence[str]) -> pd.DataFrame:
    """Improvements over NP-FCFS per batch size (ratio of means within a batch size)."""
    import pandas as pd
    main = res.main
    means = main.groupby(["label", "batch"])[["antt", "stp", "fairness"]].mean()
    rows = []
    for label in labels:
        for b in sorted(set(res.setup.batch_sizes)):
            if (label, b) not in means.index or ("NP-FCFS", b) not in means.index:
                continue
            m: Any = means.loc[(label, b)]
            f: Any = means.loc[("NP-FCFS", b)]
            row: dict[str, Any] = {"policy": label, "batch": b}
            for k in ("antt", "fairness", "stp"):
                row[f"{k}_improvement"] = _f(_gain(k, m[k], f[k]))
            rows.append(row)
    return pd.DataFrame(rows)


def _gmean(x: pd.Series) -> float:
    v = x.to_numpy(dtype=np.float64)
    v = v[np.isfinite(v) & (v > 0)]
    return float(np.exp(np.log(v).mean())) if v.size else math.nan


def _p95_high(res: _Results, labels: Sequence[str]) -> pd.DataFrame:
    """Fig. 14: p95 NTT of high-priority tasks per network, smallest batch size (1)."""
    import pandas as pd
    rec = res.records
    b0 = min(res.setup.batch_sizes)
    rec = rec[(rec["batch"] == b0) & (rec["priority"] == 9)]
    rows = []
    for label in labels:
        sub = rec[rec["label"] == label]
        if sub.empty:
            continue
        row: dict[str, Any] = {"policy": label}
        vals = []
        for net in res.setup.networks:
            x = sub[sub["network"] == net]
            ntt = (x["latency_s"] / x["isolated_s"]).to_numpy(float)
            v = float(np.percentile(ntt, 95)) if ntt.size else math.nan
            row[SHORT.get(net, net)] = v
            vals.append(v)
        arr = np.asarray(vals)
        row["average"] = float(np.nanmean(arr)) if np.isfinite(arr).any() else math.nan
        row["max"] = float(np.nanmax(arr)) if np.isfinite(arr).any() else math.nan
        rows.append(row)
    return pd.DataFrame(rows)


def _predictor_table(res: _Results) -> tuple[pd.DataFrame, dict[str, Any]]:
    """Predictor error per network over the distinct requests of the main workloads."""
    import pandas as pd

    from npusched.policies.temporal.predictor import mape

    def mape_or_nan(x: pd.DataFrame) -> float:
        return mape(x) if len(x) else math.nan

    rec = res.records
    base = rec[rec["label"] == "NP-FCFS"]
    # the signed relative error, as in predictor.prediction_errors
    base = base.assign(error=(base["estimated_s"] - base["isolated_s"]) / base["isolated_s"])
    rows = []
    for net in res.setup.networks:
        x = base[base["network"] == net]
        rows.append(
            {
                "network": SHORT.get(net, net),
                "requests": len(x),
                "mape_percent": mape_or_nan(x),
                "max_ape_percent": float((x["error"].abs() * 100.0).max()) if len(x) else math.nan,
            }
        )
    rnn = base[base["network"].str.startswith("rnn")]
    corr = (
        float(np.corrcoef(base["estimated_s"], base["isolated_s"])[0, 1])
        if len(base) > 1
        else math.nan
    )
    info: dict[str, Any] = {
        "mape_percent": mape_or_nan(base),
        "mape_rnn_percent": mape_or_nan(rnn),
        "correlation": corr,
        "requests": len(base),
    }
    return pd.DataFrame(rows), info


def _oracle_table(table: pd.DataFrame) -> pd.DataFrame:
    """Sec. VI-D: predictor-driven policies as a fraction of their oracle twins."""
    import pandas as pd
    t = table.set_index("policy")
    rows = []
    for oracle in [p for p in t.index if p.endswith("-oracle")]:
        pred = oracle.removesuffix("-oracle")
        if pred not in t.index:
            continue
        a, o = t.loc[pred], t.loc[oracle]
        rows.append(
            {
                "policy": pred,
                "stp_fraction": float(_gain("stp", a["stp"], o["stp"])),
                "antt_fraction": float(_gain("antt", a["antt"], o["antt"])),
                "sla_n4_fraction": float((1 - a["sla_n4"]) / (1 - o["sla_n4"]))
                if o["sla_n4"] < 1
                else math.nan,
                "fairness_fraction": float(_gain("fairness", a["fairness"], o["fairness"])),
            }
        )
    return pd.DataFrame(rows)


def _mech_tables(res: _Results) -> tuple[dict[str, pd.DataFrame], pd.DataFrame]:
    """Fig. 5/6 tables by name (none without samples) and the samples with each mechanism's
    STP and NTT relative to NP-FCFS (``<kind>_stp_norm``, ``<kind>_ntt_impr``)."""
    m = res.mech.copy()
    if not m.empty:  # rows of combos skipped under a job-length range carry no measurements
        m = m.dropna(subset=["fcfs_stp"]).reset_index(drop=True)
    if m.empty:
        return {}, m
    kinds = ("checkpoint", "kill", "drain")
    for k in kinds:
        m[f"{k}_stp_norm"] = m[f"{k}_stp"] / m["fcfs_stp"]
        m[f"{k}_ntt_impr"] = m["fcfs_ntt_high"] / m[f"{k}_ntt_high"]

    def means(*pairs: tuple[str, str]) -> dict[str, tuple[str, str]]:
        """Aggregations ``<kind><out> = mean(<kind><in>)`` per (out, in) suffix pair and kind."""
        agg = {"samples": ("run", "size")}
        agg.update({f"{k}{o}": (f"{k}{i}", "mean") for o, i in pairs for k in kinds})
        return agg

    agg5 = means(("_latency_us", "_preempt_s"), ("_wait_ms", "_wait_s"))
    agg6 = means(("_stp", "_stp_norm"), ("_ntt", "_ntt_impr"))
    out = {}
    for name, key, agg in (
        ("fig5_by_network", "low_net", agg5),
        ("fig5_by_batch", "low_batch", agg5),
        ("fig6_by_network", "high_net", agg6),
        ("fig6_by_batch", "high_batch", agg6),
    ):
        t = m.groupby(key).agg(**agg).reset_index()
        for c in t.columns:
            if c.endswith("_us"):
                t[c] = t[c] * 1e6
            elif c.endswith("_ms"):
                t[c] = t[c] * 1e3
        if key.endswith("_net"):
            order = {n: i for i, n in enumerate(res.setup.networks)}
            t = t.sort_values(key, key=lambda s: s.map(order))
            t[key] = t[key].map(lambda n: SHORT.get(n, n))
        out[name] = t.reset_index(drop=True)
    return out, m


class _NoPlots:
    """Stands in for :mod:`npusched.report.plots` when no figures are wanted."""

    def __getattr__(self, name: str) -> Callable[..., None]:
        return lambda *args, **kwargs: None


# --- writing ------------------------------------------------------------------------------------
def _md_table(df: pd.DataFrame, floatfmt: str = "{:.3g}") -> str:
    if df.empty:
        return "_(no data)_\n"
    cols = list(df.columns)
    lines = ["| " + " | ".join(str(c) for c in cols) + " |", "|" + "---|" * len(cols)]
    for row in df.itertuples(index=False):
        cells = []
        for v in row:
            if isinstance(v, float | np.floating):
                cells.append("n/a" if not math.isfinite(float(v)) else floatfmt.format(float(v)))
            else:
                cells.append(str(v))
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def _write_csv(path: Path, df: pd.DataFrame) -> None:
    atomic_write_text(path, df.to_csv(index=False))


def _clean(obj: Any) -> Any:
    """JSON-safe copy: NaN/inf -> None, numpy scalars -> Python."""
    if isinstance(obj, dict):
        return {str(k): _clean(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_clean(v) for v in obj]
    if isinstance(obj, np.integer):
        return int(obj)
    if isinstance(obj, float | np.floating):
        x = float(obj)
        return x if math.isfinite(x) else None
    return obj


def write_outputs(
    out: Path,
    res: _Results,
    specs: Sequence[PolicySpec],
    *,
    plots: bool = True,
    ranged: _Results | None = None,
) -> dict[str, Any]:
    """Tables (CSV), plots (PNG, if ``plots``), ``summary.json``, ``report.md`` and
    ``fidelity.md``; ``ranged`` is the paper-job-range study, summarised beside the main one."""
    import pandas as pd

    from npusched.report import plots as png

    draw = png if plots else _NoPlots()

    labels = [s.label for s in specs]
    table = _policy_table(res, labels)
    _write_csv(out / "policies.csv", table)
    t = table.set_index("policy") if not table.empty else table
    present = [lb for lb in labels if not table.empty and lb in t.index]

    def imp(label: str, metric: str) -> float:
        return _f(t.loc[label, f"{metric}_improvement"]) if label in present else math.nan

    # Fig. 11 / 12 / 15 -----------------------------------------------------------------------
    metrics = ("antt", "fairness", "stp")

    def improvement_figure(
        name: str,
        groups: list[str],
        series: Mapping[str, str],
        title: str,
        xs: list[str],
        note: str | None = None,
    ) -> None:
        """``<name>.csv``: the rows of the policies ``fmt.format(group)`` for every series
        format and group; ``<name>.png``: per metric, each series' improvement vs NP-FCFS with
        the groups on the x axis (labelled ``xs``)."""
        wanted = [fmt.format(g) for fmt in series.values() for g in groups]
        _write_csv(out / f"{name}.csv", table[table["policy"].isin(wanted)])
        if groups:
            draw.panels(
                out / f"{name}.png",
                xs,
                {
                    f"{m.upper()} improvement vs NP-FCFS": {
                        s: [imp(fmt.format(g), m) for g in groups] for s, fmt in series.items()
                    }
                    for m in metrics
                },
                title=title,
                note=note,
            )

    np_labels = [
        lb for lb in present if lb.startswith("NP-") and not lb.endswith(("-oracle", "-linear"))
    ]
    improvement_figure(
        "fig11_nonpreemptive",
        np_labels,
        {"NP": "{}"},
        "Fig. 11: non-preemptive NPU (normalised to NP-FCFS)",
        [lb.removeprefix("NP-") for lb in np_labels],
    )
    fams = [f for f in FAMILIES if f"P-{f}" in present]
    improvement_figure(
        "fig12_preemptive",
        fams,
        {"static CHECKPOINT": "P-{}", "dynamic (Alg. 3)": "P-{}-dynamic"},
        "Fig. 12: preemptive NPU, static vs dynamic mechanism",
        fams,
    )
    improvement_figure(
        "fig15_checkpoint_vs_kill",
        fams,
        {
            "CHECKPOINT": "P-{}",
            "KILL": "P-{}-kill",
            "dyn. CHECKPOINT": "P-{}-dynamic",
            "dyn. KILL": "P-{}-dynamic-kill",
        },
        "Fig. 15: CHECKPOINT vs KILL",
        fams,
        note="n/a: not run. Static P-RRB + KILL is left out: time slicing with KILL restarts "
        "every task longer than the quantum, so such tasks never finish (a livelock).",
    )

    # Fig. 13: SLA violation rate vs N ------------------------------------------------------------
    fig13 = table[["policy", *(f"sla_n{n}" for n in SLA_NS)]] if present else pd.DataFrame()
    _write_csv(out / "fig13_sla.csv", fig13)
    sla_show = [
        lb
        for lb in (
            "NP-FCFS",
            "NP-HPF",
            "NP-SJF",
            "NP-PREMA",
            "P-HPF-dynamic",
            "P-SJF-dynamic",
            "P-PREMA-dynamic",
        )
        if lb in present
    ]
    if sla_show:
        draw.lines(
            out / "fig13_sla.png",
            list(SLA_NS),
            {lb: [_f(t.loc[lb, f"sla_n{n}"]) for n in SLA_NS] for lb in sla_show},
            xlabel="SLA target N (latency <= N x isolated)",
            ylabel="SLA violation rate",
            title="Fig. 13: SLA violations (all tasks)",
            percent=True,
        )

    # Fig. 14: tail latency of high-priority tasks ------------------------------------------------
    tail_labels = [
        lb
        for lb in (
            "NP-FCFS",
            "NP-HPF",
            "P-HPF",
            "P-HPF-dynamic",
            "P-SJF",
            "P-SJF-dynamic",
            "P-PREMA",
            "P-PREMA-dynamic",
        )
        if lb in present
    ]
    fig14 = _p95_high(res, labels)
    _write_csv(out / "fig14_tail_high_priority.csv", fig14)
    if not fig14.empty:
        f14 = fig14.set_index("policy")
        shown = [lb for lb in tail_labels if lb in f14.index]
        cats = [SHORT.get(n, n) for n in res.setup.networks] + ["average"]
        draw.grouped_bars(
            out / "fig14_tail_high_priority.png",
            cats,
            {lb: [_f(f14.loc[lb, c]) for c in cats] for lb in shown},
            ylabel="p95 latency / isolated (high priority)",
            title="Fig. 14: 95th-percentile latency of high-priority tasks, batch 1",
            log=True,
            reference=1.0,
            note="n/a: no high-priority batch-1 task of that DNN in these workloads.",
        )

    per_batch = _per_batch(
        res,
        [
            lb
            for lb in ("NP-SJF", "NP-PREMA", "P-SJF-dynamic", "P-PREMA", "P-PREMA-dynamic")
            if lb in present
        ],
    )
    _write_csv(out / "per_batch.csv", per_batch)

    # Predictor -----------------------------------------------------------------------------------
    pred_t, pred_info = _predictor_table(res)
    _write_csv(out / "predictor.csv", pred_t)
    oracle_t = _oracle_table(table) if present else pd.DataFrame()
    _write_csv(out / "predictor_vs_oracle.csv", oracle_t)

    # Fig. 5/6 --------------------------------------------------------------------------------------
    mt, m = _mech_tables(res)
    mech_info: dict[str, Any] = {}
    if mt:
        for name, frame in mt.items():
            _write_csv(out / f"{name}.csv", frame)
        panels = {  # file: (column suffix, y label, title)
            "fig5a_preemption_latency": (
                "_latency_us",
                "preemption latency (us)",
                "Fig. 5a: preemption latency by preempted task",
            ),
            "fig5b_wait_time": (
                "_wait_ms",
                "preempting task wait (ms)",
                "Fig. 5b: preempting task's wait time by preempted task",
            ),
            "fig6a_stp": ("_stp", "STP normalised to NP-FCFS", "Fig. 6a: STP by preempting task"),
            "fig6b_ntt": (
                "_ntt",
                "NTT improvement vs NP-FCFS",
                "Fig. 6b: preempting task's NTT improvement",
            ),
        }
        for fname, (col, ylabel, title) in panels.items():
            fig6 = fname.startswith("fig6")  # by preempting task, normalised: reference line at 1
            frame = mt["fig6_by_network"] if fig6 else mt["fig5_by_network"]
            draw.grouped_bars(
                out / f"{fname}.png",
                frame["high_net" if fig6 else "low_net"].tolist(),
                {k.upper(): frame[f"{k}{col}"].tolist() for k in ("checkpoint", "kill", "drain")},
                ylabel=ylabel,
                title=title,
                reference=1.0 if fig6 else None,
            )
        mech_info = _mech_info(m)

    # summary.json ----------------------------------------------------------------------------------
    policies = _policies_summary(t, present, fig14)
    headline = _headline(policies, pred_info, mech_info, oracle_t)
    range_summary = _range_summary(ranged, specs) if ranged is not None else None
    summary = _clean(
        {
            "paper": "PREMA (HPCA 2020)",
            "runs": res.runs,
            "setup": asdict(res.setup),
            "config_hash": res.setup.config_hash(),
            "dispatch_window_s": res.windows_s,
            "policies": policies,
            "predictor": {
                **pred_info,
                "per_network": {r["network"]: r["mape_percent"] for r in pred_t.to_dict("records")},
                "vs_oracle": oracle_t.to_dict("records") if not oracle_t.empty else [],
            },
            "predictor_mape_percent": pred_info.get("mape_percent"),
            "mechanisms": mech_info,
            "headline": headline,
            "checkpoint_vs_kill": _checkpoint_vs_kill(res, policies),
            "checkpoint_vs_kill_prema": _checkpoint_vs_kill(res, policies, ("PREMA",)),
            "checkpoint_vs_kill_prema_linear": _checkpoint_vs_kill(
                res, policies, ("PREMA",), "-linear"
            ),
            "job_span_ms": _job_span_ms(res),
            "paper_job_range": range_summary,
        }
    )
    summary["fidelity"] = _fidelity(summary)
    atomic_write_text(out / "summary.json", json.dumps(summary, indent=2, sort_keys=True) + "\n")
    atomic_write_text(
        out / "report.md", _report_md(res, table, per_batch, fig14, pred_t, oracle_t, mt, summary)
    )
    atomic_write_text(out / "fidelity.md", _fidelity_md(summary))
    return summary


def _mech_info(m: pd.DataFrame) -> dict[str, Any]:
    """The mechanism study's summary (``summary.json``'s ``mechanisms``) from its samples."""
    if m.empty:
        return {}
    return {
        "samples": len(m),
        "checkpoint_latency_us_avg": float(m["checkpoint_preempt_s"].mean() * 1e6),
        "checkpoint_latency_us_max": float(m["checkpoint_preempt_s"].max() * 1e6),
        "checkpoint_wait_ms_avg": float(m["checkpoint_wait_s"].mean() * 1e3),
        "kill_wait_ms_avg": float(m["kill_wait_s"].mean() * 1e3),
        "drain_wait_ms_avg": float(m["drain_wait_s"].mean() * 1e3),
        "ntt_improvement_checkpoint": float(m["checkpoint_ntt_impr"].mean()),
        "ntt_improvement_kill": float(m["kill_ntt_impr"].mean()),
        "ntt_improvement_drain": float(m["drain_ntt_impr"].mean()),
        "stp_norm_checkpoint": float(m["checkpoint_stp_norm"].mean()),
        "stp_norm_kill": float(m["kill_stp_norm"].mean()),
        "stp_norm_drain": float(m["drain_stp_norm"].mean()),
        "checkpoint_share_of_low_isolated_max": float(
            (m["checkpoint_preempt_s"] / m["low_isolated_s"]).max()
        ),
    }


def _policies_summary(
    t: pd.DataFrame, present: Sequence[str], fig14: pd.DataFrame
) -> dict[str, Any]:
    """``summary.json``'s ``policies``: per label, the means and improvements over NP-FCFS."""
    import pandas as pd
    f14i = fig14.set_index("policy") if not fig14.empty else pd.DataFrame()
    policies: dict[str, Any] = {}
    for lb in present:
        row = t.loc[lb]
        policies[lb] = {
            "antt": _f(row["antt"]),
            "stp": _f(row["stp"]),
            "fairness": _f(row["fairness"]),
            "antt_improvement": _f(row["antt_improvement"]),
            "stp_improvement": _f(row["stp_improvement"]),
            "fairness_improvement": _f(row["fairness_improvement"]),
            "sla_violation_rate_n4": _f(row["sla_n4"]),
            "p95_high_priority_norm": _f(f14i.loc[lb, "average"]) if lb in f14i.index else math.nan,
            "p95_high_priority_norm_max": _f(f14i.loc[lb, "max"]) if lb in f14i.index else math.nan,
            "points": _i(row["points"]),
        }
    return policies


def _checkpoint_vs_kill(
    res: _Results,
    policies: Mapping[str, Any],
    families: Sequence[str] = FAMILIES,
    suffix_all: str = "",
) -> dict[str, Any]:
    """Fig. 15: how much better CHECKPOINT is than KILL, in percent, averaged over the policy
    pairs (``P-X`` vs ``P-X-kill``, ``P-X-dynamic`` vs ``P-X-dynamic-kill``) that ran:
    ANTT ``kill / checkpoint - 1``, STP and fairness ``checkpoint / kill - 1`` (the paper: 87% /
    24% / 77%). Each pair's row also has what explains the gap: preemptions per workload and
    the KILL run's re-executed (wasted) work as a share of its makespan."""
    import pandas as pd
    main = res.main
    per: list[dict[str, Any]] = []
    for f in families:
        for suffix in ("", "-dynamic"):
            ck, kl = f"P-{f}{suffix}{suffix_all}", f"P-{f}{suffix}-kill{suffix_all}"
            if ck not in policies or kl not in policies:
                continue
            a, b = policies[ck], policies[kl]
            km = main[main["label"] == kl]
            cm = main[main["label"] == ck]
            per.append(
                {
                    "pair": f"{ck} vs {kl}",
                    "antt_pct": 100.0 * (b["antt"] / a["antt"] - 1.0),
                    "stp_pct": 100.0 * (a["stp"] / b["stp"] - 1.0),
                    "fairness_pct": 100.0 * (a["fairness"] / b["fairness"] - 1.0),
                    "preemptions_checkpoint": float(cm["preemptions"].mean()),
                    "preemptions_kill": float(km["preemptions"].mean()),
                    "kill_wasted_share_pct": float(
                        100.0 * (km["wasted_s"] / km["makespan_s"]).mean()
                    ),
                }
            )
    if not per:
        return {}
    df = pd.DataFrame(per)
    return {
        "antt_pct": float(df["antt_pct"].mean()),
        "stp_pct": float(df["stp_pct"].mean()),
        "fairness_pct": float(df["fairness_pct"].mean()),
        "pairs": per,
    }


def _job_span_ms(res: _Results) -> list[float]:
    """``[min, max]`` isolated latency (ms) of the tasks in the main workloads."""
    rec = res.records
    iso = rec[rec["label"] == "NP-FCFS"]["isolated_s"]
    return [float(iso.min() * 1e3), float(iso.max() * 1e3)] if len(iso) else []


def _range_summary(ranged: _Results, specs: Sequence[PolicySpec]) -> dict[str, Any]:
    """The paper-job-range study's headline: setup, windows, policies, mechanisms."""
    import pandas as pd
    labels = [s.label for s in specs if s.label in ranged.labels]
    table = _policy_table(ranged, labels)
    t = table.set_index("policy") if not table.empty else table
    present = [lb for lb in labels if not table.empty and lb in t.index]
    policies = _policies_summary(t, present, _p95_high(ranged, labels))
    _, m = _mech_tables(ranged)
    mech = _mech_info(m)
    return {
        "setup": asdict(ranged.setup),
        "config_hash": ranged.setup.config_hash(),
        "dispatch_window_s": ranged.windows_s,
        "job_span_ms": _job_span_ms(ranged),
        "policies": policies,
        "mechanisms": mech,
        "headline": _headline(policies, {}, mech, pd.DataFrame()),
        "checkpoint_vs_kill_prema": _checkpoint_vs_kill(ranged, policies, ("PREMA",)),
    }


def _x(v: Any, unit: str = "x", digits: int = 3) -> str:
    """A number for the fidelity table (``n/a`` for missing)."""
    if v is None or (isinstance(v, float) and not math.isfinite(v)):
        return "n/a"
    if unit == "%":
        return f"{100.0 * v:.1f}%"
    return f"{v:.{digits}g}{unit}"


def _fidelity(summary: Mapping[str, Any]) -> list[dict[str, str]]:
    """The fidelity table: per figure the paper's value, ours (cumulative tokens, every job
    length), ours with linear tokens, and ours with the paper's job range (cumulative)."""
    pol = summary.get("policies", {})
    mech = summary.get("mechanisms", {})
    rng = summary.get("paper_job_range") or {}
    rpol = rng.get("policies", {})
    rmech = rng.get("mechanisms", {})

    def g(p: Mapping[str, Any], label: str, key: str) -> Any:
        return p.get(label, {}).get(key)

    def ratio(p: Mapping[str, Any], a: str, b: str) -> Any:
        x, y = g(p, a, "antt"), g(p, b, "antt")
        return x / y if x is not None and y is not None else None

    def pair(a: Any, b: Any, unit: str, fmt_b: str = "({})") -> str:
        return f"{_x(a, unit)} {fmt_b.format(_x(b, unit))}"

    def ckvk(d: Mapping[str, Any] | None) -> str:
        if not d:
            return "n/a"
        return " / ".join(f"{d[k]:.3g}%" for k in ("antt_pct", "stp_pct", "fairness_pct"))

    same = "(not a token policy: as ours)"
    rows = [
        (
            "ANTT gain, P-PREMA (dynamic) vs NP-FCFS (Fig. 12)",
            "7.8x",
            _x(g(pol, "P-PREMA-dynamic", "antt_improvement")),
            _x(g(pol, "P-PREMA-dynamic-linear", "antt_improvement")),
            _x(g(rpol, "P-PREMA-dynamic", "antt_improvement")),
        ),
        (
            "fairness gain, P-PREMA (dynamic) vs NP-FCFS",
            "19.6x",
            _x(g(pol, "P-PREMA-dynamic", "fairness_improvement")),
            _x(g(pol, "P-PREMA-dynamic-linear", "fairness_improvement")),
            _x(g(rpol, "P-PREMA-dynamic", "fairness_improvement")),
        ),
        (
            "STP gain, P-PREMA (dynamic) vs NP-FCFS",
            "1.4x",
            _x(g(pol, "P-PREMA-dynamic", "stp_improvement")),
            _x(g(pol, "P-PREMA-dynamic-linear", "stp_improvement")),
            _x(g(rpol, "P-PREMA-dynamic", "stp_improvement")),
        ),
        (
            "NP-PREMA reaches this share of NP-SJF's ANTT (NP-SJF ANTT / NP-PREMA ANTT)",
            "92%",
            _x(ratio(pol, "NP-SJF", "NP-PREMA"), "%"),
            _x(ratio(pol, "NP-SJF", "NP-PREMA-linear"), "%"),
            _x(ratio(rpol, "NP-SJF", "NP-PREMA"), "%"),
        ),
        (
            "SLA violation rate at N=4: P-PREMA (dynamic) / NP-FCFS (Fig. 13)",
            "< 10% / 36%",
            pair(
                g(pol, "P-PREMA-dynamic", "sla_violation_rate_n4"),
                g(pol, "NP-FCFS", "sla_violation_rate_n4"),
                "%",
                "/ {}",
            ),
            pair(
                g(pol, "P-PREMA-dynamic-linear", "sla_violation_rate_n4"),
                g(pol, "NP-FCFS", "sla_violation_rate_n4"),
                "%",
                "/ {}",
            ),
            pair(
                g(rpol, "P-PREMA-dynamic", "sla_violation_rate_n4"),
                g(rpol, "NP-FCFS", "sla_violation_rate_n4"),
                "%",
                "/ {}",
            ),
        ),
        (
            "NP-FCFS high-priority p95 / isolated, mean (worst DNN) (Fig. 14)",
            "21x (85x)",
            pair(
                g(pol, "NP-FCFS", "p95_high_priority_norm"),
                g(pol, "NP-FCFS", "p95_high_priority_norm_max"),
                "x",
            ),
            same,
            pair(
                g(rpol, "NP-FCFS", "p95_high_priority_norm"),
                g(rpol, "NP-FCFS", "p95_high_priority_norm_max"),
                "x",
            ),
        ),
        (
            "P-PREMA (dynamic) high-priority p95 / isolated, mean (worst DNN)",
            "1.4x (1.6x)",
            pair(
                g(pol, "P-PREMA-dynamic", "p95_high_priority_norm"),
                g(pol, "P-PREMA-dynamic", "p95_high_priority_norm_max"),
                "x",
            ),
            pair(
                g(pol, "P-PREMA-dynamic-linear", "p95_high_priority_norm"),
                g(pol, "P-PREMA-dynamic-linear", "p95_high_priority_norm_max"),
                "x",
            ),
            pair(
                g(rpol, "P-PREMA-dynamic", "p95_high_priority_norm"),
                g(rpol, "P-PREMA-dynamic", "p95_high_priority_norm_max"),
                "x",
            ),
        ),
        (
            "CHECKPOINT better than KILL: ANTT / STP / fairness, all policy pairs (Fig. 15)",
            "87% / 24% / 77%",
            ckvk(summary.get("checkpoint_vs_kill")),
            "n/a (PREMA pairs only: next row)",
            "n/a (PREMA pairs only: next row)",
        ),
        (
            "CHECKPOINT better than KILL: ANTT / STP / fairness, PREMA pairs only",
            "n/a",
            ckvk(summary.get("checkpoint_vs_kill_prema")),
            ckvk(summary.get("checkpoint_vs_kill_prema_linear")),
            ckvk(rng.get("checkpoint_vs_kill_prema")),
        ),
        (
            "CHECKPOINT latency, mean (max) (Fig. 5a)",
            "12 us (59 us)",
            pair(
                mech.get("checkpoint_latency_us_avg"), mech.get("checkpoint_latency_us_max"), " us"
            ),
            same,
            pair(
                rmech.get("checkpoint_latency_us_avg"),
                rmech.get("checkpoint_latency_us_max"),
                " us",
            ),
        ),
        (
            "preempting task's wait under DRAIN, mean (Fig. 5b)",
            "5.3 ms",
            _x(mech.get("drain_wait_ms_avg"), " ms"),
            same,
            _x(rmech.get("drain_wait_ms_avg"), " ms"),
        ),
        (
            "preempting task's NTT gain, KILL / CHECKPOINT (Fig. 6b)",
            "3.08x / 3.06x",
            pair(
                mech.get("ntt_improvement_kill"),
                mech.get("ntt_improvement_checkpoint"),
                "x",
                "/ {}",
            ),
            same,
            pair(
                rmech.get("ntt_improvement_kill"),
                rmech.get("ntt_improvement_checkpoint"),
                "x",
                "/ {}",
            ),
        ),
    ]
    keys = ("figure", "paper", "ours", "ours_linear_tokens", "ours_paper_job_range")
    return [dict(zip(keys, r, strict=True)) for r in rows]


def _fidelity_md(summary: Mapping[str, Any]) -> str:
    """The fidelity table in Markdown with the load, seed, runs and job ranges it uses."""
    setup = summary.get("setup", {})
    span = summary.get("job_span_ms") or []
    rng = summary.get("paper_job_range") or {}
    rspan = rng.get("job_span_ms") or []
    span_txt = f"{span[0]:.2g}-{span[1]:.3g} ms" if len(span) == 2 else "n/a"
    rspan_txt = f"{rspan[0]:.2g}-{rspan[1]:.3g} ms" if len(rspan) == 2 else "not run"
    lines = [
        f"Every column: offered load {setup.get('load', math.nan):g} while tasks arrive, seed "
        f"{setup.get('seed')}, {summary.get('runs')} workloads per (policy, batch size), batch "
        f"sizes {', '.join(map(str, setup.get('batch_sizes', ())))}. **ours**: cumulative tokens "
        f"(the default), every task length (isolated latencies {span_txt}). **linear tokens**: "
        f"the same workloads, PREMA with the linear token rule. **paper job range**: cumulative "
        f"tokens, tasks limited to the paper's 0.5-45 ms (isolated latencies {rspan_txt}; "
        f"its own dispatch windows at the same load).",
        "",
        "| figure | paper | ours | ours, linear tokens | ours, paper job range |",
        "|---|---|---|---|---|",
    ]
    for r in summary.get("fidelity", []):
        lines.append(
            f"| {r['figure']} | {r['paper']} | {r['ours']} | {r['ours_linear_tokens']} | "
            f"{r['ours_paper_job_range']} |"
        )
    return "\n".join(lines) + "\n"


def _metric(policies: Mapping[str, Mapping[str, float]], label: str, key: str) -> float:
    """``policies[label][key]`` of ``summary.json``'s policies, NaN for a policy not run."""
    return float(policies[label][key]) if label in policies else math.nan


def _headline(
    policies: Mapping[str, Mapping[str, float]],
    pred: Mapping[str, Any],
    mech: Mapping[str, Any],
    oracle: pd.DataFrame,
) -> dict[str, Any]:
    import pandas as pd
    g = partial(_metric, policies)
    orc = oracle.set_index("policy") if not oracle.empty else pd.DataFrame()
    ours: dict[str, float] = {
        "antt_improvement_prema_dynamic": g("P-PREMA-dynamic", "antt_improvement"),
        "fairness_improvement_prema_dynamic": g("P-PREMA-dynamic", "fairness_improvement"),
        "stp_improvement_prema_dynamic": g("P-PREMA-dynamic", "stp_improvement"),
        "np_prema_antt_vs_sjf": g("NP-SJF", "antt") / g("NP-PREMA", "antt"),
        "predictor_mape_percent": float(pred.get("mape_percent", math.nan)),
        "sla_violation_prema_n4_max": g("P-PREMA-dynamic", "sla_violation_rate_n4"),
        "sla_violation_np_fcfs": g("NP-FCFS", "sla_violation_rate_n4"),
        "p95_high_np_fcfs_avg": g("NP-FCFS", "p95_high_priority_norm"),
        "p95_high_np_fcfs_max": g("NP-FCFS", "p95_high_priority_norm_max"),
        "p95_high_p_sjf_max": g("P-SJF-dynamic", "p95_high_priority_norm_max"),
        "p95_high_prema_avg": g("P-PREMA-dynamic", "p95_high_priority_norm"),
        "p95_high_prema_max": g("P-PREMA-dynamic", "p95_high_priority_norm_max"),
        "checkpoint_latency_us_avg": float(mech.get("checkpoint_latency_us_avg", math.nan)),
        "checkpoint_latency_us_max": float(mech.get("checkpoint_latency_us_max", math.nan)),
        "ntt_improvement_kill": float(mech.get("ntt_improvement_kill", math.nan)),
        "ntt_improvement_checkpoint": float(mech.get("ntt_improvement_checkpoint", math.nan)),
        "drain_wait_ms_avg": float(mech.get("drain_wait_ms_avg", math.nan)),
        "oracle_fraction": _f(orc.loc["P-PREMA-dynamic", "antt_fraction"])
        if "P-PREMA-dynamic" in orc.index
        else math.nan,
    }
    return {k: {"ours": ours[k], "paper": PAPER[k]} for k in PAPER}


HEADLINE_TEXT = {
    "antt_improvement_prema_dynamic": "ANTT improvement, P-PREMA (dynamic) vs NP-FCFS (x)",
    "fairness_improvement_prema_dynamic": "fairness improvement, P-PREMA (dynamic) vs NP-FCFS (x)",
    "stp_improvement_prema_dynamic": "STP improvement, P-PREMA (dynamic) vs NP-FCFS (x)",
    "np_prema_antt_vs_sjf": "NP-PREMA reaches this share of NP-SJF's ANTT (NP-SJF ANTT / NP-PREMA "
    "ANTT; 1 = as good as SJF)",
    "predictor_mape_percent": "predictor error, MAPE over all requests (%)",
    "sla_violation_prema_n4_max": "SLA violation rate at N=4, P-PREMA (dynamic)",
    "sla_violation_np_fcfs": "SLA violation rate at N=4, NP-FCFS",
    "p95_high_np_fcfs_avg": "p95 high-priority latency / isolated, NP-FCFS, mean over DNNs",
    "p95_high_np_fcfs_max": "p95 high-priority latency / isolated, NP-FCFS, worst DNN",
    "p95_high_p_sjf_max": "p95 high-priority latency / isolated, P-SJF (dynamic), worst DNN",
    "p95_high_prema_avg": "p95 high-priority latency / isolated, P-PREMA (dynamic), mean",
    "p95_high_prema_max": "p95 high-priority latency / isolated, P-PREMA (dynamic), worst",
    "checkpoint_latency_us_avg": "CHECKPOINT preemption latency, mean (us)",
    "checkpoint_latency_us_max": "CHECKPOINT preemption latency, max (us)",
    "ntt_improvement_kill": "preempting task's NTT improvement with KILL (x)",
    "ntt_improvement_checkpoint": "preempting task's NTT improvement with CHECKPOINT (x)",
    "drain_wait_ms_avg": "preempting task's wait under DRAIN, mean (ms)",
    "oracle_fraction": "P-PREMA (dynamic) ANTT as a fraction of the oracle's",
}


def _orderings(
    policies: Mapping[str, Mapping[str, float]], mech: Mapping[str, Any]
) -> list[tuple[str, bool | None]]:
    """The qualitative claims of the paper, checked on our numbers (None: not measurable)."""

    g = partial(_metric, policies)

    def chk(cond: float | bool) -> bool | None:
        if isinstance(cond, float) and math.isnan(cond):
            return None
        return bool(cond)

    dyn_pairs = [f for f in FAMILIES if f"P-{f}" in policies and f"P-{f}-dynamic" in policies]
    worse_dynamic = [
        f"P-{f}" for f in dyn_pairs if g(f"P-{f}-dynamic", "antt") > g(f"P-{f}", "antt") * 1.005
    ]
    kill_pairs = [f for f in FAMILIES if f"P-{f}" in policies and f"P-{f}-kill" in policies]
    kill_better = [f"P-{f}" for f in kill_pairs if g(f"P-{f}", "stp") <= g(f"P-{f}-kill", "stp")]
    nps = [
        lb for lb in policies if lb.startswith("NP-") and not lb.endswith(("-oracle", "-linear"))
    ]
    best_np = min(nps, key=lambda lb: g(lb, "antt")) if nps else ""
    out: list[tuple[str, bool | None]] = [
        (
            "NP-SJF has the best ANTT of the non-preemptive policies (Fig. 11)",
            chk(best_np == "NP-SJF"),
        ),
        (
            "NP-PREMA improves ANTT over NP-FCFS, NP-RRB, NP-HPF and NP-TOKEN (Fig. 11)",
            chk(
                all(
                    g("NP-PREMA", "antt") < g(lb, "antt")
                    for lb in ("NP-FCFS", "NP-RRB", "NP-HPF", "NP-TOKEN")
                    if lb in policies
                )
            ),
        ),
        (
            "NP-HPF and NP-TOKEN are fairer than NP-FCFS (Fig. 11)",
            chk(
                g("NP-HPF", "fairness") > g("NP-FCFS", "fairness")
                and g("NP-TOKEN", "fairness") > g("NP-FCFS", "fairness")
            ),
        ),
        (
            "P-PREMA (dynamic) improves ANTT, fairness and STP over NP-FCFS (Fig. 12)",
            chk(
                g("P-PREMA-dynamic", "antt_improvement") > 1
                and g("P-PREMA-dynamic", "fairness_improvement") > 1
                and g("P-PREMA-dynamic", "stp_improvement") > 1
            ),
        ),
        (
            "Dynamic mechanism (Alg. 3) is at least as good as static CHECKPOINT in ANTT for every "
            "preemptive policy (Fig. 12)" + _exceptions(worse_dynamic),
            chk(not worse_dynamic) if dyn_pairs else None,
        ),
        (
            "P-PREMA (dynamic) is fairer than P-SJF (dynamic) (Sec. VI-B)",
            chk(g("P-PREMA-dynamic", "fairness") > g("P-SJF-dynamic", "fairness")),
        ),
        (
            "P-SJF (dynamic) violates fewer SLAs at N=4 than P-PREMA (dynamic) (Sec. VI-C)",
            chk(
                g("P-SJF-dynamic", "sla_violation_rate_n4")
                <= g("P-PREMA-dynamic", "sla_violation_rate_n4")
            ),
        ),
        (
            "P-PREMA (dynamic) violates far fewer SLAs at N=4 than NP-FCFS (Fig. 13)",
            chk(
                g("P-PREMA-dynamic", "sla_violation_rate_n4")
                < 0.5 * g("NP-FCFS", "sla_violation_rate_n4")
            ),
        ),
        (
            "High-priority p95 tail: P-PREMA (dynamic) < P-SJF (dynamic) < NP-FCFS (Fig. 14)",
            chk(
                g("P-PREMA-dynamic", "p95_high_priority_norm")
                < g("P-SJF-dynamic", "p95_high_priority_norm")
                < g("NP-FCFS", "p95_high_priority_norm")
            ),
        ),
        (
            "CHECKPOINT beats KILL in STP for every preemptive policy (Fig. 15)"
            + _exceptions(kill_better),
            chk(not kill_better) if kill_pairs else None,
        ),
        (
            "KILL and CHECKPOINT give nearly the same NTT to the preempting task (Fig. 6, within 5%)",
            chk(
                abs(
                    mech.get("ntt_improvement_kill", math.nan)
                    / mech.get("ntt_improvement_checkpoint", math.nan)
                    - 1
                )
                < 0.05
            )
            if mech
            else None,
        ),
        (
            "CHECKPOINT preemption latency is a small share of the preempted task's run time "
            "(< 2.6%)",
            chk(mech.get("checkpoint_share_of_low_isolated_max", math.nan) < 0.026)
            if mech
            else None,
        ),
    ]
    return out


def _differences(res: _Results, summary: Mapping[str, Any]) -> list[str]:
    """Why our numbers differ from the paper's, for the causes that do not depend on a run."""
    import pandas as pd
    rec = res.records
    iso = rec[rec["label"] == "NP-FCFS"].groupby("network")["isolated_s"].agg(["min", "max"])
    span = (
        f"{iso['min'].min() * 1e3:.2g}-{iso['max'].max() * 1e3:.3g} ms" if not iso.empty else "n/a"
    )
    top = iso["max"].sort_values(ascending=False).head(2)
    longest = (
        ", ".join(f"{SHORT.get(str(n), str(n))} (up to {v * 1e3:.0f} ms)" for n, v in top.items())
        if not top.empty
        else "n/a"
    )
    pol = summary.get("policies", {})
    rng = summary.get("paper_job_range") or {}

    def v(p: Mapping[str, Any], label: str, key: str) -> str:
        x = p.get(label, {}).get(key)
        return "n/a" if x is None else f"{x:.3g}"

    tokens = (
        f"- **Token rule.** Cumulative tokens (the default; the literal Algorithm 2 line 7): ANTT "
        f"gain {v(pol, 'P-PREMA-dynamic', 'antt_improvement')}x, fairness gain "
        f"{v(pol, 'P-PREMA-dynamic', 'fairness_improvement')}x; linear tokens: "
        f"{v(pol, 'P-PREMA-dynamic-linear', 'antt_improvement')}x and "
        f"{v(pol, 'P-PREMA-dynamic-linear', 'fairness_improvement')}x (paper 7.8x and 19.6x). "
        "Quadratic token growth lets long-waiting short tasks into the candidate group sooner, "
        "which moves PREMA towards SJF (better ANTT) and away from equal slowdowns (lower "
        "fairness); neither reading reaches both of the paper's factors."
    )
    ranged = (
        f" Under the paper's range (0.5-45 ms, same load): NP-FCFS high-priority p95 "
        f"{v(rng.get('policies', {}), 'NP-FCFS', 'p95_high_priority_norm')}x (worst "
        f"{v(rng.get('policies', {}), 'NP-FCFS', 'p95_high_priority_norm_max')}x) and DRAIN "
        f"wait {_fmt((rng.get('mechanisms') or {}).get('drain_wait_ms_avg'))} ms, against the "
        "paper's 21x (85x) and 5.3 ms: the wider length spread is what inflates those figures."
        if rng
        else ""
    )
    ck = summary.get("checkpoint_vs_kill") or {}
    pairs = pd.DataFrame(ck.get("pairs", []))
    if not pairs.empty:
        per_waste = float((pairs["antt_pct"] / pairs["kill_wasted_share_pct"]).median())
        fig15 = (
            f"- **Fig. 15 (CHECKPOINT vs KILL: {ck['antt_pct']:.3g}% / {ck['stp_pct']:.3g}% / "
            f"{ck['fairness_pct']:.3g}% better in ANTT / STP / fairness; paper 87% / 24% / 77%).**"
            " KILL costs exactly the work it throws away, and the Fig. 15 table shows the ANTT gap"
            " tracking it: KILL re-executes "
            f"{pairs['kill_wasted_share_pct'].min():.3g}-{pairs['kill_wasted_share_pct'].max():.3g}"
            f"% of the makespan ({pairs['preemptions_kill'].min():.2g}-"
            f"{pairs['preemptions_kill'].max():.2g} preemptions per 8-task workload), and the ANTT "
            f"gap is a median {per_waste:.2g}% per percent re-executed. The paper's 87% would need "
            f"about {87.0 / per_waste:.0f}% of the makespan re-executed, i.e. many more or much "
            "later kills than Algorithm 2 makes on these workloads (the paper gives neither its "
            "kill counts nor its wasted work). More crowding does not close the gap: it shrinks "
            "as the load grows (waiting dominates the makespan). The preempting task's own NTT is "
            "the same under both (Fig. 6b above), as in the paper."
        )
    else:
        fig15 = ""
    mech = summary.get("mechanisms") or {}
    return [
        "## Why our numbers differ",
        "",
        tokens,
        *([fig15] if fig15 else []),
        f"- **Job lengths.** Isolated latencies in our workloads span {span} (the paper: 0.5-45 "
        f"ms); the longest tasks are {longest}. RNN-ASR's listener unrolls up to 160 steps in the "
        "synthetic length model, and the Algorithm 1 cost model charges every one-row recurrent "
        "GEMM tile the full array fill and drain; MobileNet-v1's depthwise layers map one channel "
        "per column. Short high-priority tasks stuck behind these (NP-FCFS, DRAIN) suffer larger "
        "normalised waits, so the normalised tails are longer than the paper's." + ranged,
        "- **Contention.** The paper does not give its dispatch window. Ours is calibrated on the "
        "baseline only (NP-FCFS's SLA violation rate at N=4 near the paper's 36%); with "
        "cumulative tokens PREMA's ANTT and fairness gains grow with the load (`--load`), so "
        "they are not expected to match exactly. The fairness gain stays far below 19.6x at "
        "every load we tried (fairness is the min/max of 8 tasks' slowdowns, very noisy per "
        "workload).",
        "- **Predictor.** CNN estimates are exact here (the per-layer estimate is the cost model "
        "itself); all the error comes from the synthetic RNN output-length models, which stand in "
        "for the paper's unpublished translation and speech profiles.",
        "- **Algorithm 3.** Under SJF the candidate is always shorter than the running job's "
        "remaining time, so Degradation_current < 1 < Degradation_candidate and Algorithm 3 "
        "never drains: P-SJF and P-SJF-dynamic are identical. Under HPF, RRB and TOKEN the "
        "candidate is not chosen for being short, and Algorithm 3 drains whenever it is at least "
        "as long as the running job's remaining work, letting long jobs finish while shorter "
        "tasks queued behind the candidate wait; whether that helps ANTT depends on the policy "
        "(see the ordering check above for the policies where it did not).",
        "- **Checkpoint size.** A checkpoint holds the output activations of the current layer "
        "derived so far (PREMA Sec. IV-B: weights never change and inputs are already in "
        "memory), capped at the 8 MiB UBUF/ACCQ, saved at the effective 142 GB/s that the "
        "paper's 59 us for 8 MiB implies. Mean "
        f"{_fmt(mech.get('checkpoint_latency_us_avg'))} us, max "
        f"{_fmt(mech.get('checkpoint_latency_us_max'))} us (paper 12 us, 59 us): the max is the "
        "full buffer; the mean is lower because many layers' outputs are far smaller than 8 "
        "MiB, and a preemption in the middle of a layer saves only the outputs so far. "
        "Negligible either way, as the paper argues.",
        "- **Sample sizes.** Fig. 14 uses only the high-priority batch-1 tasks (counts above), so "
        "its per-DNN p95 values are close to maxima.",
        "",
    ]


def _high_counts(res: _Results) -> str:
    rec = res.records
    b0 = min(res.setup.batch_sizes)
    sub = rec[(rec["label"] == "NP-FCFS") & (rec["batch"] == b0) & (rec["priority"] == 9)]
    counts = sub["network"].value_counts()
    return ", ".join(f"{SHORT.get(n, n)} {int(counts.get(n, 0))}" for n in res.setup.networks)


def _exceptions(labels: Sequence[str]) -> str:
    return f" [exceptions: {', '.join(labels)}]" if labels else ""


def _ckvk_md(summary: Mapping[str, Any]) -> list[str]:
    """Report section: Fig. 15's CHECKPOINT-vs-KILL comparison per policy pair."""
    import pandas as pd
    ck = summary.get("checkpoint_vs_kill") or {}
    if not ck:
        return []
    pairs = pd.DataFrame(ck["pairs"])
    return [
        "## Fig. 15: CHECKPOINT vs KILL",
        "",
        f"CHECKPOINT is better than KILL by {ck['antt_pct']:.3g}% in ANTT, {ck['stp_pct']:.3g}% "
        f"in STP and {ck['fairness_pct']:.3g}% in fairness, averaged over the policy pairs "
        "below (the paper: 87% / 24% / 77%). Static P-RRB-kill is not run (time slicing with "
        "KILL restarts every task longer than the quantum: a livelock). `kill_wasted_share_pct`"
        " is the KILL run's re-executed work as a share of its makespan.",
        "",
        _md_table(pairs),
    ]


def _report_md(
    res: _Results,
    table: pd.DataFrame,
    per_batch: pd.DataFrame,
    fig14: pd.DataFrame,
    pred_t: pd.DataFrame,
    oracle_t: pd.DataFrame,
    mt: Mapping[str, pd.DataFrame],
    summary: Mapping[str, Any],
) -> str:
    s = res.setup
    head = summary["headline"]
    lines = [
        "# PREMA (HPCA 2020) reproduction",
        "",
        f"{res.runs} workloads of {s.n_tasks} tasks per (policy, batch size) for batch sizes "
        f"{', '.join(map(str, s.batch_sizes))}; device `{s.device}`; offered load {s.load:g} "
        f"while tasks arrive (dispatch windows: "
        + ", ".join(f"batch {b}: {w * 1e3:.1f} ms" for b, w in summary["dispatch_window_s"].items())
        + f"); seed {s.seed}; configuration hash `{summary['config_hash']}`.",
        "",
        "## Fidelity: the paper's figures and ours",
        "",
        _fidelity_md(summary),
        "## Headline numbers: ours vs. the paper",
        "",
        "| quantity | ours | paper |",
        "|---|---|---|",
    ]
    for k, text in HEADLINE_TEXT.items():
        o, p = head[k]["ours"], head[k]["paper"]
        lines.append(f"| {text} | {'n/a' if o is None else f'{o:.3g}'} | {p:g} |")
    lines += ["", "## Do the paper's orderings hold?", ""]
    for text, ok in _orderings(summary["policies"], summary["mechanisms"]):
        mark = "n/a" if ok is None else ("yes" if ok else "**no**")
        lines.append(f"- {text}: {mark}")
    cols = [
        "policy",
        "antt",
        "stp",
        "fairness",
        "antt_improvement",
        "stp_improvement",
        "fairness_improvement",
        "sla_n4",
    ]
    show = table[cols] if not table.empty else table
    lines += [
        "",
        "## All policies (means over workloads and batch sizes; improvements vs NP-FCFS)",
        "",
        _md_table(show),
        "## Sensitivity to the batch size (improvements vs NP-FCFS at the same batch size)",
        "",
        _md_table(per_batch),
        "## Fig. 14: p95 latency / isolated of high-priority tasks (batch 1)",
        "",
        "High-priority batch-1 tasks per DNN (the p95 of a handful of tasks is close to their "
        "maximum): " + _high_counts(res) + ".",
        "",
        _md_table(fig14),
        "## Predictor (Sec. V-B, VI-A, VI-D)",
        "",
        f"MAPE of the estimated vs. actual isolated latency over "
        f"{summary['predictor'].get('requests', 0)} requests: "
        f"{_fmt(summary['predictor'].get('mape_percent'))}% (recurrent networks only: "
        f"{_fmt(summary['predictor'].get('mape_rnn_percent'))}%; CNNs are exact because the "
        f"per-layer estimate is the cost model itself); Pearson correlation "
        f"{_fmt(summary['predictor'].get('correlation'))}.",
        "",
        _md_table(pred_t),
        "Predictor-driven policies as a fraction of their oracle twins:",
        "",
        _md_table(oracle_t),
    ]
    lines += _ckvk_md(summary)
    if mt:
        lines += [
            "## Fig. 5/6: preemption mechanisms (2-task workloads, P-HPF)",
            "",
            *map(_md_table, mt.values()),
        ]
    lines += _differences(res, summary)
    lines += [
        "## Files",
        "",
        "`policies.csv`, `per_batch.csv`, `fig5_*.csv`, `fig6_*.csv`, `fig11_nonpreemptive.csv`, "
        "`fig12_preemptive.csv`, `fig13_sla.csv`, `fig14_tail_high_priority.csv`, "
        "`fig15_checkpoint_vs_kill.csv`, `predictor.csv`, `predictor_vs_oracle.csv` and the "
        "matching PNGs; raw points in `main_points.csv`, `main_records.csv`, `mech_points.csv`.",
        "",
    ]
    return "\n".join(lines)


def _fmt(v: Any) -> str:
    return "n/a" if v is None or (isinstance(v, float) and not math.isfinite(v)) else f"{v:.3g}"
