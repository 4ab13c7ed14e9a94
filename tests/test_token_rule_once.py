"""Algorithm 2's token rule is read through the policy's own methods on every path: a subclass
with a quadratic token rule gets its rule honoured by the engine, with and without period
skipping (issue 24 item 2)."""

from __future__ import annotations

import math
from typing import Any

import pytest

from npusched.policies.contract import JobView, declared_order
from npusched.policies.temporal.prema import PPrema
from npusched.sim.engine import Simulator
from simhelpers import make_profile, req

MS = 1e-3
US = 1e-6


class QuadPrema(PPrema):
    """P-PREMA whose tokens grow with the square of the slowdown: ``priority x (1 + s^2)``,
    ``s`` the (linear rule's) slowdown credited at the latest period boundary."""

    name = "P-PREMA-quad"

    def tokens_of(self, job: JobView) -> float:
        g = self._state().get(job.id, 0.0)
        return job.priority * (1.0 + g * g)


def _system() -> tuple[dict[str, Any], list[Any]]:
    """test_prema_policies' hand-computed scenario: "a" = layers of 1, 2, 1 ms (the middle one
    4 tiles), checkpoint bytes 1000/2000/3000 at 1 GB/s; "b" = one 0.5 ms layer. J0 = a,
    priority 3, at 0; J1 = b, priority 1, at 0.1 ms; J2 = a, priority 9, at 3.204 ms."""
    profiles = {
        "a": make_profile(
            "a", [1 * MS, 2 * MS, 1 * MS], tiles=[1, 4, 1], checkpoint_bytes=[1000, 2000, 3000]
        ),
        "b": make_profile("b", [0.5 * MS], checkpoint_bytes=[500]),
    }
    reqs = [req(0, 0.0, "a", 3), req(1, 0.1 * MS, "b", 1), req(2, 3.204 * MS, "a", 9)]
    return profiles, reqs


def test_own_rule_detected() -> None:
    assert QuadPrema().own_rule() and QuadPrema().ticks_every_period
    assert not PPrema().own_rule() and not PPrema().ticks_every_period


@pytest.mark.parametrize("skip_periods", [True, False])
def test_quadratic_token_subclass_on_every_path(skip_periods: bool) -> None:
    """Times in ms, period 0.25 ms, CHECKPOINT. J1 waits from 0.1; its slowdown at the ticks
    0.25, 0.5, 0.75, 1.0 is 0.3, 0.8, 1.3, 1.8, so its quadratic tokens are 1.09, 1.64, 2.69 and
    4.24 at 1.0 (the linear rule's 2.8 would wait for 1.25's 3.3): threshold 3, candidates J0
    (3 tokens, 3 ms left) and J1 (0.5 ms): CHECKPOINT J0 at its 1st layer's end (work 1.0),
    save 1,000 B to 1.001; J1 runs 1.001 -> 1.501; J0 restores 1 us and runs from 1.502.
    At 3.204 J2 (9 tokens) is the only candidate (J0: 3 x (1 + (0.501/4)^2) = 3.05): J0 stops
    at its tile end (work 3.0) at 3.502, saves 2,000 B to 3.504; J2 runs to 7.504; J0 restores
    2 us to 7.506 and finishes its last 1 ms at 8.506. (The built-in linear rule gives 8.508,
    2.002, 7.506: see test_prema_policies.)"""
    profiles, reqs = _system()
    # no declared order: the engine keeps no token table for it, the policy's rule decides
    assert declared_order(QuadPrema()) is None
    sim = Simulator(profiles, QuadPrema(), skip_periods=skip_periods)
    cols = sim.run(reqs).columns
    assert cols["finish_s"].tolist() == pytest.approx(
        [8.506 * MS, 1.501 * MS, 7.504 * MS], abs=1e-12
    )
    assert cols["preemptions"].tolist() == [2, 0, 0]
    assert cols["checkpoint_bytes"].tolist() == [3000, 0, 0]


@pytest.mark.parametrize("skip_periods", [True, False])
def test_builtin_rule_unchanged_on_the_same_system(skip_periods: bool) -> None:
    profiles, reqs = _system()
    sim = Simulator(profiles, PPrema(), skip_periods=skip_periods)
    cols = sim.run(reqs).columns
    assert cols["finish_s"].tolist() == pytest.approx(
        [8.508 * MS, 2.002 * MS, 7.506 * MS], abs=1e-12
    )


class QuadValuePrema(PPrema):
    """The same quadratic rule given through the formula itself (``token_value``), which
    ``tokens_of``, ``token_list`` and the token table all call."""

    name = "P-PREMA-quad-value"

    @staticmethod
    def token_value(priority: float, gain: float) -> float:
        return priority * (1.0 + gain * gain) if gain > 0.0 else float(priority)


@pytest.mark.parametrize("skip_periods", [True, False])
def test_token_value_override_on_every_path(skip_periods: bool) -> None:
    """The schedule of test_quadratic_token_subclass_on_every_path, the rule overridden one
    level down (the formula, not ``tokens_of``)."""
    assert QuadValuePrema().own_rule()
    profiles, reqs = _system()
    assert declared_order(QuadValuePrema()) is None
    sim = Simulator(profiles, QuadValuePrema(), skip_periods=skip_periods)
    cols = sim.run(reqs).columns
    assert cols["finish_s"].tolist() == pytest.approx(
        [8.506 * MS, 1.501 * MS, 7.504 * MS], abs=1e-12
    )


def test_token_loop_calls_the_policys_formulas() -> None:
    """The engine writes no token formula of its own: the token table
    (``policies/temporal/levels.py``) holds the formulas once, and ``TokenScheduler``'s
    methods are those functions (``token_value`` through ``float(priority)``)."""
    from npusched.policies.temporal import levels, prema

    ts = prema.TokenScheduler
    assert ts.slowdown_of is levels.slowdown_of
    assert ts._boundaries_to_gain is levels.boundaries_to_gain
    assert ts._periods_to_gain is levels.periods_to_gain
    assert ts.never_periods == levels.NEVER_PERIODS
    for prio, gain in [(1, 0.0), (3, 0.25), (9, 1e-17), (3, -0.5), (1, math.inf)]:
        assert ts.token_value(prio, gain) == (prio * (1.0 + gain) if gain > 0.0 else float(prio))
        assert ts.token_value(prio, gain) == levels.token_value(float(prio), gain)
    for waited, est in [(0.0, 1e-3), (2e-4, 1e-3), (2e-4, 0.0), (-1.0, 1e-3)]:
        assert ts.slowdown_of(waited, est) == (
            0.0 if waited <= 0.0 else waited / est if est > 0 else math.inf
        )
        assert ts.waiting_gain(waited, 1e-3, 2e-3, est) == levels.waiting_gain(
            waited, 1e-3, 2e-3, est
        )
