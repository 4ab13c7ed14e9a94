"""PREMA (HPCA 2020): the points of the study as functions of a setup: the setup and policy
configurations, the workloads (one per (batch size, run), shared by every policy), one main point
(a policy on a workload) and one mechanism point (Fig. 5/6's 2-task workload), the quick run's
stratified workload choice and the NP-TOKEN probe; and the raw points' columns."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from npusched.errors import ConfigError, SimulationError
from npusched.experiments.studies.prema.suite import PolicySpec, PremaSetup, PremaSuite
from npusched.experiments.suite_io import load_suite_as
from npusched.hardware.profile import Profile
from npusched.workloads.request import Request

if TYPE_CHECKING:
    import pandas as pd


#: The full run's workloads per batch size, the pool the quick run's are chosen from
#: (:func:`_select_runs`): the packaged suite file's ``runs`` (a test holds them together).
DEFAULT_RUNS = 25
#: Workloads per batch size of each one-factor ablation of the full run.
ABLATION_RUNS = 10
SLA_NS: tuple[int, ...] = tuple(range(2, 21))


# --- configuration ----------------------------------------------------------------------------
def policy_specs() -> list[PolicySpec]:
    """Every policy configuration of the study, in report order: the ``policies`` of the
    packaged suite file (``npusched/data/experiments/suites/prema.toml``, where each entry and
    the missing ``P-RRB-kill`` are explained)."""
    specs: list[PolicySpec] = load_suite_as(PremaSuite, "prema").specs()
    return specs


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

    df = ctx.simulate(spec.build(), ctx.workload(batch, run), spec.predictor)
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
    #: The workload indices per batch size (``0 .. runs-1``; a stratified subset if quick).
    selected: dict[int, tuple[int, ...]] = field(default_factory=dict)
    #: :func:`_np_token_probe` of the study (empty if it has no NP-TOKEN).
    np_token: dict[str, Any] = field(default_factory=dict)


def _select_runs(ctx: _Context, n: int, quick: bool) -> dict[int, tuple[int, ...]]:
    """The workload indices of each batch size: ``0 .. n-1``, or with ``quick`` (and ``n <
    DEFAULT_RUNS``) ``n`` of the full run's ``0 .. DEFAULT_RUNS-1`` by stratified sampling.

    The strata are NP-FCFS's fairness on each of the full run's workloads (cheap: one
    simulation per workload; the gains over NP-FCFS depend most on how unfair the baseline
    is): the workloads sorted by it, and the one at the middle of each of ``n`` equal slices
    taken. Measured on seed 0, 8 per batch size this way give P-PREMA (dynamic) gains within
    10% of the full run's 25 (12.8x / 28.8x / 1.60x against 13.8x / 31.6x / 1.64x ANTT /
    fairness / STP), where the first 3 gave 9.0x / 25.8x / 1.69x and the first 8 12.3x /
    31.8x / 1.73x.
    """
    from npusched.metrics import fairness

    batches = sorted(set(ctx.setup.batch_sizes))
    if not quick or n >= DEFAULT_RUNS:
        return {b: tuple(range(n)) for b in batches}
    fcfs = PolicySpec("NP-FCFS", "NP-FCFS")
    out: dict[int, tuple[int, ...]] = {}
    for b in batches:
        key = [
            (fairness(ctx.simulate(fcfs.build(), ctx.workload(b, r), "prema")), r)
            for r in range(DEFAULT_RUNS)
        ]
        order = [r for _, r in sorted(key)]
        out[b] = tuple(sorted(order[int((i + 0.5) * DEFAULT_RUNS / n)] for i in range(n)))
    return out


def _np_token_probe(ctx: _Context, selected: Mapping[int, Sequence[int]]) -> dict[str, Any]:
    """What NP-TOKEN's candidate group holds when it picks, per token rule, over the study's
    workloads: picks with more than one task waiting, those where every waiting task is a
    candidate, those where NP-FCFS's choice (the earliest arrival) is a candidate, and the
    workloads where NP-TOKEN finishes every task when NP-FCFS does."""
    from npusched.policies.temporal.predictor import make_estimator
    from npusched.policies.temporal.prema import TOKEN_RULES
    from npusched.policies.temporal.token import NPToken, first_come
    from npusched.sim.engine import Simulator

    class Probe(NPToken):
        picks_: list[tuple[bool, bool]]

        def pick(self, view: Any) -> Any:
            jobs = self.queue(view)
            if len(jobs) > 1:
                cands = self.candidates(jobs)
                self.picks_.append((len(cands) == len(jobs), first_come(jobs) in cands))
            return super().pick(view)

    out: dict[str, Any] = {}
    for rule in TOKEN_RULES:
        picks: list[tuple[bool, bool]] = []
        same = n = 0
        for b, runs in selected.items():
            for r in runs:
                reqs = ctx.workload(b, r)
                probe = Probe(tokens=rule)
                probe.picks_ = []
                est = make_estimator("prema")
                # the probe's own ``pick`` declares no ready order (``declared_order``), so the
                # engine calls its ``select`` and every pick goes through pick()
                sim = Simulator(
                    ctx.profiles,
                    probe,
                    preemption_point=ctx.setup.preemption_point,
                    estimator=est,
                )
                df = sim.run(reqs)
                fcfs = ctx.simulate(PolicySpec("NP-FCFS", "NP-FCFS").build(), reqs, "prema")
                a = df.to_frame().sort_values("id")["finish_s"].to_numpy(float)
                c = fcfs.sort_values("id")["finish_s"].to_numpy(float)
                same += bool(np.allclose(a, c, rtol=1e-12, atol=0.0))
                n += 1
                picks += probe.picks_
        out[rule] = {
            "workloads": n,
            "identical_to_fcfs": same,
            "picks_with_choice": len(picks),
            "picks_all_candidates": sum(p[0] for p in picks),
            "picks_fcfs_choice_is_candidate": sum(p[1] for p in picks),
        }
    return out
