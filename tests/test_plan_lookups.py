"""ExecPlan's look-ups on their cached tables: ``work_between`` is ``steps_between`` and
``energy_between`` bit for bit, and every look-up agrees with a step-by-step reference, for
layer plans (Python-list tables) and unrolled recurrent plans (``array('d')`` tables)."""

from __future__ import annotations

from itertools import pairwise

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from npusched.hardware.profile import ExecPlan

SETTINGS = settings(max_examples=150, deadline=None)


@st.composite
def plans(draw: st.DrawFn) -> ExecPlan:
    """A plan of 1-8 steps on a 1 us grid (zero-length steps included, so prefix sums repeat),
    with energy and checkpoint bytes per step; a layer plan or a recurrent one (steps index
    a shorter per-layer table through an int16 map)."""
    n = draw(st.integers(1, 8))
    lat = [draw(st.integers(0, 5)) * 1e-6 for _ in range(n)]
    energy = [draw(st.sampled_from([0.0, 1e-3, 2.5e-3])) for _ in range(n)]
    ckpt = [draw(st.integers(0, 4096)) for _ in range(n)]
    if not draw(st.booleans()):
        return ExecPlan.from_steps(lat, energy_j=energy, checkpoint_bytes=ckpt)
    layers = draw(st.integers(1, 3))
    layer = np.array([draw(st.integers(0, layers - 1)) for _ in range(n)], dtype=np.int16)
    rows = {
        "lat": np.array([draw(st.integers(0, 5)) * 1e-6 for _ in range(layers)]),
        "e": np.array([draw(st.sampled_from([0.0, 1e-3])) for _ in range(layers)]),
        "ck": np.array([draw(st.integers(0, 4096)) for _ in range(layers)], dtype=np.int64),
    }
    cum = np.zeros(n + 1)
    np.cumsum(rows["lat"][layer], out=cum[1:])
    return ExecPlan(
        layer,
        cum,
        latency_row=rows["lat"],
        tiles_row=np.ones(layers, dtype=np.int64),
        checkpoint_row=rows["ck"],
        energy_row=rows["e"],
    )


def _points(plan: ExecPlan) -> list[float]:
    """Step boundaries, points inside steps and the ends."""
    cum = plan.cum_s.tolist()
    inside = [(x + y) / 2 for x, y in pairwise(cum) if y > x]
    return sorted(set(cum + inside + [0.0, plan.total_s]))


@SETTINGS
@given(plan=plans(), data=st.data())
def test_work_between_is_steps_and_energy_between(plan: ExecPlan, data: st.DataObject) -> None:
    pts = _points(plan)
    a = data.draw(st.sampled_from(pts))
    b = data.draw(st.sampled_from([p for p in pts if p > a] or [a + 1e-6]))
    steps, energy = plan.work_between(a, b)
    assert steps == plan.steps_between(a, b)
    assert energy == plan.energy_between(a, b)
    assert type(steps) is int and type(energy) is float
    # Steps: one plus the step ends strictly inside (a, b), capped as the plan allows.
    cum = plan.cum_s
    if a <= 0.0 and b >= plan.total_s:
        assert steps == plan.steps
    else:
        assert steps == max(0, 1 + int(np.count_nonzero((cum > a) & (cum < b))))


@SETTINGS
@given(plan=plans(), data=st.data())
def test_checkpoint_bytes_at_reads_the_step_it_stopped_in(
    plan: ExecPlan, data: st.DataObject
) -> None:
    x = data.draw(st.sampled_from(_points(plan)))
    cum = plan.cum_s
    if x <= 0.0:
        expect = 0
    else:
        s = int(np.searchsorted(cum, x, side="right")) - 1
        if s >= plan.steps:
            expect = 0
        else:
            if x == cum[s] and s > 0:
                s -= 1
            expect = int(plan.checkpoint_bytes[s])
    assert plan.checkpoint_bytes_at(x) == expect
    assert plan.checkpoint_bytes_at(x) == expect  # from the cached table the second time
