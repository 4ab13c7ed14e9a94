"""ExecPlan's look-ups on their cached tables: ``work_between`` is ``steps_between`` and
``energy_between`` bit for bit, and every look-up agrees with a step-by-step reference, for
layer plans (Python-list tables) and unrolled recurrent plans (``array('d')`` tables)."""

from __future__ import annotations

import bisect
import math
from itertools import pairwise

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from npusched import native
from npusched.hardware import plan as plan_mod
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


def _fresh(plan: ExecPlan, tiles: int) -> ExecPlan:
    """A plan of ``plan``'s rows with no table built yet, ``tiles`` tiles per step."""
    return ExecPlan(
        plan.layer,
        plan.cum_s,
        latency_row=plan._lat_row,
        tiles_row=np.full(len(plan._tiles_row), tiles, dtype=np.int64),
        checkpoint_row=plan._ckpt_row,
        energy_row=plan._energy_row,
    )


@SETTINGS
@given(
    plan=plans(),
    tiles=st.integers(1, 4),
    tol=st.sampled_from([0.0, 1e-9, 4e-7]),
    data=st.data(),
)
def test_lookups_on_built_tables_equal_the_first_call(
    plan: ExecPlan, tiles: int, tol: float, data: st.DataObject
) -> None:
    """A layer plan's look-ups read its typed lists once they are built (the first call builds
    them through the general path): every answer is the first call's, bit for bit, on layer
    and recurrent plans, at step bounds, inside steps and at tile bounds."""
    warm = _fresh(plan, tiles)
    pts = _points(plan)
    pts = sorted({*pts, *(x + tol / 2 for x in pts), *(x - tol / 2 for x in pts if x > 0)})
    for x in pts:  # build every table the look-ups read
        if x > 0.0:
            warm.work_between(0.0, x + 1e-6)
        warm.next_preemption_point(x, layer=False, tol_s=tol)
        warm.checkpoint_bytes_at(x)
    a = data.draw(st.sampled_from(pts))
    b = data.draw(st.sampled_from([p for p in pts if p > a] or [a + 1e-6]))
    for x, y in ((a, b), (0.0, b), (a, plan.total_s)):
        if y > x:
            got, want = warm.work_between(x, y), _fresh(plan, tiles).work_between(x, y)
            assert got == want and type(got[1]) is float
            assert got[1].hex() == want[1].hex()
    for layer in (False, True):
        got_p = warm.next_preemption_point(a, layer=layer, tol_s=tol)
        want_p = _fresh(plan, tiles).next_preemption_point(a, layer=layer, tol_s=tol)
        assert got_p.hex() == want_p.hex()
    assert warm.next_tile_boundary(a).hex() == _fresh(plan, tiles).next_tile_boundary(a).hex()
    assert warm.checkpoint_bytes_at(a) == _fresh(plan, tiles).checkpoint_bytes_at(a)


@SETTINGS
@given(
    a=st.lists(st.sampled_from([0.0, 1e-6, 2e-6, 2.5e-6, 7e-6, math.inf]), max_size=12),
    x=st.sampled_from([-1.0, -0.0, 0.0, 1e-6, 1.5e-6, 2.5e-6, 7e-6, 8e-6, math.inf, math.nan]),
)
def test_typed_searches_equal_bisect(a: list[float], x: float) -> None:
    """A plan table's searches (compiled: native C loops on a ``vec``) give ``bisect``'s index
    for every input: sorted tables with repeated values (zero-length steps), ends, -0.0 and
    nan."""
    a.sort()
    t = plan_mod.float_table(np.array(a, dtype=np.float64))
    assert plan_mod._right(t, x) == bisect.bisect_right(a, x)
    assert plan_mod._left(t, x) == bisect.bisect_left(a, x)
    for lo in range(len(a) + 1):  # searched from ``lo`` (``next_preemption_point``'s)
        assert plan_mod._right(t, x, lo) == bisect.bisect_right(a, x, lo)
        assert plan_mod._left(t, x, lo) == bisect.bisect_left(a, x, lo)


def test_typed_searches_run_where_the_plan_is_compiled() -> None:
    """The layer plans' look-ups take the typed searches exactly where the module is compiled
    (``bisect``'s C functions where it runs pure)."""
    compiled = "npusched.hardware.plan" in native.compiled()
    assert compiled is plan_mod._TYPED_SEARCH
