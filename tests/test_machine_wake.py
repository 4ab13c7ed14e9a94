"""The machine policies' wake after the seventeenth round (``_Run._machine_view``): the kept
view's ``running`` / ``preempting`` lists are emptied and refilled where nothing else refers
to them, and the resource views are keyed by one integer of every resource's free units. A
list a policy keeps never changes, and at every decision the refilled view holds what a new
view holds, over small workloads of the three machine families."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from npusched.bench.families import family_configs
from npusched.experiments.config import parse_config
from npusched.experiments.runner import run_config
from simhelpers import assert_same_result

FAMILIES = ["Planaria", "HaX-CoNN", "FluidB"]


def _run(family: str, n: int, seed: int, watch: Any) -> Any:
    """``family``'s run of ``family_configs(n)`` with ``watch(view)`` called before each
    decision (the policy's ``select`` wrapped on the instance)."""
    import npusched.policies.machine as machine

    made = machine.get_any_policy

    def watched_policy(name: str, /, **params: Any) -> Any:
        policy = made(name, **params)
        select = policy.select

        def watched(view: Any) -> Any:
            watch(view)
            return select(view)

        policy.select = watched
        return policy

    saved = machine.get_any_policy
    machine.get_any_policy = watched_policy  # type: ignore[assignment]
    try:
        cfg = parse_config(dict(family_configs(n)[family], seed=seed), source=family)
        return run_config(cfg).result
    finally:
        machine.get_any_policy = saved  # type: ignore[assignment]


def _snapshot(out: list[Any]) -> Any:
    def take(view: Any) -> None:
        out.append(
            (
                list(vars(view)),
                view.now,
                view.reason,
                [j.id for j in view.ready],
                [j.id for j in view.running],
                [j.id for j in view.preempting],
                [(k, r.kind, r.capacity, r.free) for k, r in view.resources.items()],
                sorted(view.profiles),
            )
        )

    return take


@pytest.mark.parametrize("family", FAMILIES)
def test_lists_kept_by_the_policy_stay_as_they_were(family: str) -> None:
    """A policy that keeps the view's ``running`` and ``preempting`` lists (not the view) gets
    new lists at the next decision: the kept ones hold their decision's jobs, each list kept is
    a list of its own, and the run is the same as where the policy keeps nothing. (An empty
    ``preempting`` list is handed again while no job is being stopped: it stays empty, so
    whoever kept it sees it as it was; each non-empty one is a list of its own.)"""
    kept: list[tuple[list[Any], list[int], list[Any], list[int]]] = []

    def keep(view: Any) -> None:
        r, p = view.running, view.preempting
        kept.append((r, [j.id for j in r], p, [j.id for j in p]))

    plain = _run(family, 1000, 0, lambda view: None)
    assert_same_result(_run(family, 1000, 0, keep), plain)
    assert len(kept) > 50
    for r, r_ids, p, p_ids in kept:
        assert [j.id for j in r] == r_ids and [j.id for j in p] == p_ids
    assert len({id(r) for r, _, _, _ in kept}) == len(kept)
    with_jobs = [p for _, _, p, _ in kept if p]
    assert len({id(p) for p in with_jobs}) == len(with_jobs)
    assert not any(p for _, _, p, p_ids in kept if not p_ids)


@pytest.mark.parametrize("family", FAMILIES)
def test_unkept_lists_are_refilled(family: str) -> None:
    """Where the policy keeps nothing, the view's lists are the same two list objects from one
    decision to the next (refilled in place), and never a resource's own list."""
    ids: set[tuple[int, int]] = set()
    n = [0]

    def look(view: Any) -> None:
        ids.add((id(view.running), id(view.preempting)))
        n[0] += 1

    _run(family, 1000, 0, look)
    assert n[0] > 50
    assert len(ids) <= 2  # the first view's lists, and at most one set after a new view


@settings(
    max_examples=6,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(
    family=st.sampled_from(FAMILIES),
    n=st.integers(min_value=20, max_value=400),
    seed=st.integers(min_value=0, max_value=2**16),
)
def test_refilled_view_equals_a_new_view_at_every_decision(family: str, n: int, seed: int) -> None:
    """At every decision the refilled view (lists refilled, fields written where they changed,
    resource views by the integer key) holds what a new view holds (the run whose policy keeps
    every view gets a new view and new lists each time), with the fields in their order."""
    refilled: list[Any] = []
    fresh: list[Any] = []
    views: list[Any] = []
    take_fresh = _snapshot(fresh)

    def keep(view: Any) -> None:
        views.append(view)
        take_fresh(view)

    a = _run(family, n, seed, _snapshot(refilled))
    b = _run(family, n, seed, keep)
    assert_same_result(a, b)
    assert refilled == fresh
    assert len({id(v) for v in views}) == len(views)
