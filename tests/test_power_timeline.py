"""``power_timeline`` in one pass of array operations equals the piece-at-a-time sum it
replaced (kept here as the reference) to the last bit, on random pieces of random plans."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from npusched.hardware.profile import ExecPlan
from npusched.sim.engine import PowerPiece, power_timeline


def reference(pieces: list[PowerPiece]) -> tuple[np.ndarray, np.ndarray]:
    """The implementation before issue 25 (one piece at a time)."""
    ts, dp = [], []
    for p in pieces:
        if p.end_s <= p.start_s or p.exec1_s <= p.exec0_s:
            continue
        cum = p.plan.cum_s
        s0 = int(np.searchsorted(cum, p.exec0_s, side="right")) - 1
        s1 = int(np.searchsorted(cum, p.exec1_s, side="left"))
        s0 = max(s0, 0)
        s1 = min(max(s1, s0 + 1), p.plan.steps)
        bounds = np.clip(cum[s0 : s1 + 1], p.exec0_s, p.exec1_s)
        t = p.start_s + (bounds - p.exec0_s) / p.rate
        t[-1] = p.end_s
        watts = p.plan.power_w[s0:s1] * p.rate
        ts.append(t[:-1])
        dp.append(watts)
        ts.append(t[1:])
        dp.append(-watts)
    if not ts:
        return np.zeros(1), np.zeros(1)
    times = np.concatenate(ts)
    delta = np.concatenate(dp)
    order = np.argsort(times, kind="stable")
    times = times[order]
    level = np.cumsum(delta[order])
    last = np.r_[times[1:] != times[:-1], True]
    times = times[last]
    level = level[last]
    level[np.abs(level) < 1e-9 * max(1.0, float(np.max(np.abs(level))))] = 0.0
    return times, level


@st.composite
def pieces(draw: st.DrawFn) -> list[PowerPiece]:
    plans = []
    for _ in range(draw(st.integers(1, 3))):
        n = draw(st.integers(1, 8))
        lat = draw(st.lists(st.integers(0, 50), min_size=n, max_size=n))
        if not sum(lat):
            lat[0] = 1
        e = draw(st.lists(st.floats(0.0, 2.0), min_size=n, max_size=n))
        plans.append(ExecPlan.from_steps([x * 1e-4 for x in lat], energy_j=e))
    out = []
    for _ in range(draw(st.integers(0, 12))):
        plan = draw(st.sampled_from(plans))
        total = plan.total_s
        a = draw(st.integers(-2, 22)) * total / 20
        b = draw(st.integers(-2, 22)) * total / 20
        t0 = draw(st.integers(0, 40)) * 1e-4
        rate = draw(st.sampled_from([1.0, 0.5, 0.37, 1.3]))
        span = draw(st.integers(-1, 30)) * 1e-4
        out.append(PowerPiece(t0, t0 + span, plan, a, b, rate, "npu"))
    return out


@settings(max_examples=300, deadline=None)
@given(ps=pieces())
def test_power_timeline_equals_the_piece_at_a_time_sum(ps: list[PowerPiece]) -> None:
    got, want = power_timeline(ps), reference(ps)
    for g, w in zip(got, want, strict=True):
        assert g.tobytes() == w.tobytes()
