"""The contract's native classes (eighteenth round, ``policies/native_contract.py``): the
engine's job is a ``JobCore`` (the fields and properties a policy reads), the schedule a
compiled core made last is read by ``_apply`` from its native record, and the machine view's
fields are handed to the cores natively (``ViewFields``). The typed paths are taken by a type
or identity test; any other object (a user's job view, a policy's own ``Schedule``, a view the
policy made) is read through the public contract, with the same decisions: checked here by
running the machine families once as they are and once with every job, view and schedule
passed through objects of the policy's own (hypothesis over small workloads)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from npusched.bench.families import family_configs
from npusched.experiments.config import parse_config
from npusched.experiments.runner import run_config
from npusched.policies.contract import (
    NOTHING,
    JobCore,
    JobView,
    MachineView,
    MadeSchedule,
    Merge,
    Schedule,
    made_schedule,
)
from npusched.sim.job import Job
from simhelpers import assert_same_result

FAMILIES = ["Planaria", "HaX-CoNN", "FluidB"]


class JobProxy:
    """A job view of the policy's own: every read forwarded to the engine's job (not a
    ``JobCore``, so a core reads it through the ``JobView`` protocol)."""

    __slots__ = ("_job",)

    def __init__(self, job: Any) -> None:
        self._job = job

    def __getattr__(self, name: str) -> Any:
        return getattr(self._job, name)


def _run(family: str, n: int, seed: int, generic: bool, seen: list[str] | None = None) -> Any:
    """``family``'s run of ``family_configs(n)``; with ``generic``, the policy's ``select``
    and job hooks see :class:`JobProxy` objects in a ``MachineView`` of their own, and the
    engine gets a ``Schedule`` built with the constructor, of its own jobs."""
    import npusched.policies.machine as machine

    made = machine.get_any_policy

    def wrapped_policy(name: str, /, **params: Any) -> Any:
        policy = made(name, **params)
        if not generic:
            return policy
        proxies: dict[Any, JobProxy] = {}

        def px(job: Any) -> JobProxy:
            p = proxies.get(job)
            if p is None:
                p = proxies[job] = JobProxy(job)
            return p

        def real(j: Any) -> Any:
            return j._job if type(j) is JobProxy else j

        select = policy.select

        def generic_select(view: MachineView) -> Schedule:
            mine = MachineView(
                view.now,
                [px(j) for j in view.ready],
                [px(j) for j in view.running],
                [px(j) for j in view.preempting],
                view.resources,
                view.reason,
                view.profiles,
            )
            s = select(mine)
            if seen is not None:
                seen.append("nothing" if s is NOTHING else "schedule")
            if s is NOTHING:
                return s
            return Schedule(
                assign={real(j): a for j, a in s.assign.items()},
                preempt=[real(j) for j in s.preempt],
                mechanism=s.mechanism,
                until_step={real(j): k for j, k in s.until_step.items()},
                merge=[Merge(real(m.into), [real(j) for j in m.jobs]) for m in s.merge],
                timers=list(s.timers),
                rates={real(j): f for j, f in s.rates.items()},
            )

        policy.select = generic_select
        for hook in ("on_dispatch", "on_complete"):
            fn = getattr(policy, hook, None)
            if callable(fn):

                def hooked(job: Any, *rest: Any, _fn: Any = fn) -> Any:
                    return _fn(px(job), *rest)

                setattr(policy, hook, hooked)
        return policy

    saved = machine.get_any_policy
    machine.get_any_policy = wrapped_policy  # type: ignore[assignment]
    try:
        cfg = parse_config(dict(family_configs(n)[family], seed=seed), source=family)
        return run_config(cfg).result
    finally:
        machine.get_any_policy = saved  # type: ignore[assignment]


def test_the_engines_job_is_a_native_job_core() -> None:
    """The engine's job subclasses the contract's native base, and satisfies ``JobView``."""
    assert issubclass(Job, JobCore)
    assert not issubclass(JobProxy, JobCore)
    for name in ("id", "state", "allocation", "position", "executed_s", "waited_s", "stay"):
        assert hasattr(JobCore, name) or name in JobCore.__slots__, name
    assert JobView is not JobCore  # the protocol stays the public contract


@pytest.mark.parametrize("family", FAMILIES)
def test_generic_reads_decide_as_the_typed_ones(family: str) -> None:
    """Every job, view and schedule passed through objects of the policy's own (the generic
    paths of the cores and of ``_apply``): the same run, bit for bit."""
    seen: list[str] = []
    assert_same_result(_run(family, 400, 0, True, seen), _run(family, 400, 0, False))
    assert "schedule" in seen


@settings(
    max_examples=6,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(
    family=st.sampled_from(FAMILIES),
    n=st.integers(20, 300),
    seed=st.integers(0, 2**16),
)
def test_generic_and_typed_paths_agree_on_small_workloads(family: str, n: int, seed: int) -> None:
    assert_same_result(_run(family, n, seed, True), _run(family, n, seed, False))


def test_view_fields_and_schedule_record_dropped_after_a_run() -> None:
    """The record of this thread holds no view fields nor schedule once a run ends (nothing
    of a run outlives it)."""
    _run("Planaria", 100, 0, False)
    m = made_schedule()
    assert isinstance(m, MadeSchedule)
    assert m.sched is None and m.view_fields is None


def test_a_view_of_the_policys_own_is_read_through_its_attributes() -> None:
    """During a run the record's view fields belong to the engine's view only: a core given
    another view reads that view (checked by a view whose ``ready`` differs from the engine's
    at the same instant: the decision follows the view given)."""
    import npusched.policies.machine as machine

    made = machine.get_any_policy
    answers: list[tuple[int, int]] = []

    def wrapped_policy(name: str, /, **params: Any) -> Any:
        policy = made(name, **params)
        select = policy.select

        def empty_view_select(view: MachineView) -> Schedule:
            vf = made_schedule().view_fields
            assert vf is not None and vf.view is view and vf.ready is view.ready
            answers.append((len(view.ready), len(view.running)))
            return select(view)

        policy.select = empty_view_select
        return policy

    saved = machine.get_any_policy
    machine.get_any_policy = wrapped_policy  # type: ignore[assignment]
    try:
        cfg = parse_config(dict(family_configs(200)["Planaria"], seed=1), source="Planaria")
        run_config(cfg)
    finally:
        machine.get_any_policy = saved  # type: ignore[assignment]
    assert answers
