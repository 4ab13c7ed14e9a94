"""The general loop's jobs make their requests when read (``Job.request`` / ``Job.samples``,
``sim/job.py``): a job of a :class:`~npusched.workloads.request.RequestTable` keeps the fields the
loop needs, read from the table's columns, and its request is made on first read. Checked here:
what a policy reads of a job (its request, its samples, the fields kept beside them) equals the
eagerly made requests field for field and type for type; a policy that reads them sees the same
run; the machine families' runs through ``run_config`` make no request object at all."""

from __future__ import annotations

from dataclasses import astuple
from pathlib import Path
from typing import Any

import pytest

from golden_engine import digest
from npusched.bench.families import family_configs
from npusched.experiments.config import parse_config
from npusched.experiments.runner import build_requests, run_config
from npusched.policies.machine import get_any_policy
from npusched.workloads.request import Request, RequestTable

FAMILIES = ("FluidB", "Planaria", "HaX-CoNN")


def _cfg(fam: str, seed: int, n: int = 400) -> Any:
    return parse_config(dict(family_configs(n)[fam], seed=seed), source=f"families:{fam}")


def _typed(r: Request) -> tuple[Any, ...]:
    """A request's fields with their types (the same bits need the same types)."""
    return tuple((type(v), v) for v in astuple(r))


def _check_job(job: Any, eager: list[Request]) -> int:
    """Every request-derived read of ``job`` against the eager requests; the samples checked."""
    # the fields kept beside the request, read before it is made
    shape = job.request_shape
    slo = job.slo_s
    n = job.n_samples
    oldest = job.oldest_arrival_s
    r = job.request
    assert job.request is r  # made once, kept
    want = eager[job.id]
    assert _typed(r) == _typed(want)
    assert (job.id, job.network, job.priority) == (want.id, want.network, want.priority)
    assert type(job.arrival_s) is type(want.arrival_s) and job.arrival_s == want.arrival_s
    assert slo == want.slo_s and type(slo) is type(want.slo_s)
    assert (job.seq_in, job.seq_out) == (want.seq_in, want.seq_out)
    samples = job.samples
    assert job.samples is samples
    assert len(samples) == n
    for s in samples:
        assert _typed(s) == _typed(eager[s.id])
    assert oldest == min(s.arrival_s for s in samples)
    assert job.batch == sum(s.batch for s in samples)
    if samples[0].id == job.id:
        assert samples[0] is r
        assert shape == (want.batch, want.seq_in, want.seq_out)
    return len(samples)


@pytest.mark.parametrize("fam", FAMILIES)
@pytest.mark.parametrize("seed", [0, 1])
def test_a_policy_reading_the_requests_sees_the_eager_ones(
    fam: str, seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A policy that reads every job's request and samples at every decision gets requests
    equal (field for field, type for type) to the table's eager list, and the run's result is
    the same bits as without those reads."""
    cfg = _cfg(fam, seed)
    plain = run_config(cfg).result
    table = build_requests(cfg, Path("."))  # the same draws: a table of its own
    assert isinstance(table, RequestTable)
    eager = table.requests()
    cls = type(get_any_policy(cfg.policy.name, **cfg.policy.params))
    original = cls.select
    seen = {"jobs": 0, "samples": 0}

    def select(self: Any, view: Any) -> Any:
        for job in (*view.running, *view.preempting, *view.ready):
            seen["samples"] += _check_job(job, eager)
            seen["jobs"] += 1
        return original(self, view)

    monkeypatch.setattr(cls, "select", select)
    reading = run_config(cfg).result
    assert seen["jobs"] > 0
    assert digest(reading) == digest(plain)
    if fam == "FluidB":
        assert seen["samples"] > seen["jobs"]  # batches of several samples were read


@pytest.mark.parametrize("fam", FAMILIES)
def test_machine_families_make_no_request_object(
    fam: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Through ``run_config`` the machine families' jobs keep what they read (the SLO, the
    shape, the samples' count and oldest arrival) and make no request."""

    def refuse(*args: Any, **kw: Any) -> Any:
        raise AssertionError("a request was made")

    cfg = _cfg(fam, 0)
    monkeypatch.setattr(RequestTable, "requests", refuse)
    monkeypatch.setattr(RequestTable, "__getitem__", refuse)
    assert run_config(cfg).result.events > 0


def test_a_list_of_requests_keeps_its_objects(monkeypatch: pytest.MonkeyPatch) -> None:
    """A list input (ids out of order): a job's request is the input's own object, and the run
    is the table's."""
    from npusched.experiments import runner

    cfg = _cfg("Planaria", 0, 200)
    plain = run_config(cfg).result
    reqs = list(reversed(build_requests(cfg, Path(".")).requests()))
    by_id = {r.id: r for r in reqs}
    monkeypatch.setattr(runner, "build_requests", lambda cfg, base: reqs)
    cls = type(get_any_policy(cfg.policy.name, **cfg.policy.params))
    original = cls.select
    seen: list[int] = []

    def select(self: Any, view: Any) -> Any:
        for job in view.ready:
            assert job.request is by_id[job.id]
            assert job.samples == (job.request,) and job.samples[0] is job.request
            seen.append(job.id)
        return original(self, view)

    monkeypatch.setattr(cls, "select", select)
    assert digest(run_config(cfg).result) == digest(plain)
    assert seen
