"""The machine view's free units handed natively and allocations found by identity (nineteenth
round): ``ViewFields.free`` holds, at every decision, every resource's free units in the order
of the view's ``resources`` (the numbers its resource views hold), HaX-CoNN reads a resource's
free units there and makes the same decisions as where it reads the views, and the engine's
start at assignment (``_Run._assign_one``) gives the same run whether a policy hands out its
shared allocations or a new (equal) allocation at every decision."""

from __future__ import annotations

from typing import Any

import pytest

from npusched.bench.families import family_configs
from npusched.experiments.config import parse_config
from npusched.experiments.runner import run_config
from npusched.policies.contract import Allocation, made_schedule
from simhelpers import assert_same_result

FAMILIES = ["Planaria", "HaX-CoNN", "FluidB"]


def _run(family: str, n: int, seed: int, wrap: Any) -> Any:
    """``family``'s run of ``family_configs(n)`` with the policy's ``select`` replaced on the
    instance by ``wrap(policy, select)``."""
    import npusched.policies.machine as machine

    made = machine.get_any_policy

    def wrapped_policy(name: str, /, **params: Any) -> Any:
        policy = made(name, **params)
        policy.select = wrap(policy, policy.select)
        return policy

    saved = machine.get_any_policy
    machine.get_any_policy = wrapped_policy  # type: ignore[assignment]
    try:
        cfg = parse_config(dict(family_configs(n)[family], seed=seed), source=family)
        return run_config(cfg).result
    finally:
        machine.get_any_policy = saved  # type: ignore[assignment]


@pytest.mark.parametrize("family", FAMILIES)
def test_view_fields_free_units_are_the_views(family: str) -> None:
    """At every decision the native free units are the resource views' ``free``, in the
    view's order, and the run equals the one nobody watches."""
    seen: list[int] = []

    def wrap(policy: Any, select: Any) -> Any:
        def watched(view: Any) -> Any:
            vf = made_schedule().view_fields
            assert vf is not None and vf.view is view
            assert vf.free == [r.free for r in view.resources.values()]
            seen.append(len(vf.free))
            return select(view)

        return watched

    plain = _run(family, 1000, 0, lambda policy, select: select)
    assert_same_result(_run(family, 1000, 0, wrap), plain)
    assert len(seen) > 50


def test_haxconn_free_units_read_by_name_decide_the_same() -> None:
    """HaX-CoNN whose engine record is hidden (every read through the view: its resources by
    name) makes the decisions it makes on the native free units."""

    def wrap(policy: Any, select: Any) -> Any:
        def hidden(view: Any) -> Any:
            m = made_schedule()
            vf = m.view_fields
            m.view_fields = None
            try:
                return select(view)
            finally:
                m.view_fields = vf

        return hidden

    plain = _run("HaX-CoNN", 1000, 0, lambda policy, select: select)
    assert_same_result(_run("HaX-CoNN", 1000, 0, wrap), plain)


@pytest.mark.parametrize("family", FAMILIES)
def test_new_allocations_per_decision_run_the_same(family: str) -> None:
    """A decision whose allocations are new objects (equal to the policy's shared ones) gives
    the run of the shared ones: the engine's identity scan of the allocations it saw keeps
    at most a few and finds the others by value."""

    def wrap(policy: Any, select: Any) -> Any:
        def fresh(view: Any) -> Any:
            sched = select(view)
            if not sched.assign:
                return sched
            assign = {j: Allocation(a.resource, a.units, a.variant) for j, a in sched.assign.items()}
            return type(sched)(
                assign,
                sched.preempt,
                sched.mechanism,
                sched.until_step,
                sched.merge,
                sched.timers,
                sched.rates,
            )

        return fresh

    plain = _run(family, 400, 0, lambda policy, select: select)
    assert_same_result(_run(family, 400, 0, wrap), plain)
