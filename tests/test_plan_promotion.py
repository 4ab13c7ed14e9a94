"""Unrolled recurrent plans' typed lists for hot plans only (``ExecPlan._typed``): a recurrent
plan reads its ``array('d')`` until its generic look-ups reach ``steps /
STEPS_PER_GENERIC_LOOKUP``, then typed lists kept in a bounded first-in-first-out cache. The two
paths give the same bits, the promotion happens at that count, an engine run is the same with
and without promotions, and the cache stays within its bound."""

from __future__ import annotations

import math
from itertools import pairwise
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from npusched.hardware import plan as plan_mod
from npusched.hardware.profile import ExecPlan

SETTINGS = settings(max_examples=120, deadline=None)

#: A ``_lookups`` that never reaches the promotion count: the plan stays on its ``array('d')``.
GENERIC = -(10**9)


@st.composite
def recurrent_plans(draw: st.DrawFn) -> dict[str, Any]:
    """The rows of an unrolled recurrent plan: 1-80 steps indexing 1-4 layers through an int16
    map, on a 1 us grid (zero-length steps, so repeated prefix sums), with tiles, energy and
    checkpoint bytes per layer."""
    n = draw(st.integers(1, 80))
    layers = draw(st.integers(1, 4))
    layer = np.array([draw(st.integers(0, layers - 1)) for _ in range(n)], dtype=np.int16)
    lat = np.array([draw(st.integers(0, 7)) * 1e-6 for _ in range(layers)])
    cum = np.zeros(n + 1)
    np.cumsum(lat[layer], out=cum[1:])
    return {
        "layer": layer,
        "cum": cum,
        "lat": lat,
        "tiles": np.array([draw(st.integers(1, 5)) for _ in range(layers)], dtype=np.int64),
        "ck": np.array([draw(st.integers(0, 1 << 20)) for _ in range(layers)], dtype=np.int64),
        "e": np.array([draw(st.sampled_from([0.0, 1e-3, 2.5e-3, 0.1])) for _ in range(layers)]),
    }


def _plan(rows: dict[str, Any], lookups: int = 0) -> ExecPlan:
    p = ExecPlan(
        rows["layer"],
        rows["cum"],
        latency_row=rows["lat"],
        tiles_row=rows["tiles"],
        checkpoint_row=rows["ck"],
        energy_row=rows["e"],
    )
    p._lookups = lookups
    return p


def _typed(rows: dict[str, Any]) -> ExecPlan:
    """A plan promoted by its first look-up (its count set at the promotion count)."""
    p = _plan(rows, lookups=rows["layer"].size)
    p.step_at(0.0)
    assert p._cum_f is not None
    return p


def _bits(x: Any) -> Any:
    """``x`` with its floats as hex (so ``-0.0`` and ``0.0`` differ)."""
    if isinstance(x, tuple):
        return tuple(_bits(v) for v in x)
    return x.hex() if isinstance(x, float) else x


def _points(cum: list[float]) -> list[float]:
    inside = [(x + y) / 2 for x, y in pairwise(cum) if y > x]
    near = [x + d for x in cum for d in (-3e-7, -1e-12, 1e-12, 3e-7)]
    return sorted({*cum, *inside, *near, -1e-6, 0.0, cum[-1] + 1e-6})


def _lookups(p: ExecPlan, x: float, y: float, tol: float) -> list[Any]:
    out: list[Any] = [
        p.step_at(x),
        p.position_at(x),
        p.next_layer_boundary(x),
        p.next_tile_boundary(x),
        p.next_preemption_point(x, layer=False, tol_s=tol),
        p.next_preemption_point(x, layer=True, tol_s=tol),
        p.checkpoint_bytes_at(x),
    ]
    s, f = p.position_at(x)
    out.append(p.executed_at(s, f))
    if y > x:
        out += [p.work_between(x, y), p.energy_between(x, y), p.steps_between(x, y)]
    return out


@SETTINGS
@given(rows=recurrent_plans(), tol=st.sampled_from([0.0, 1e-9, 4e-7]), data=st.data())
def test_typed_and_generic_lookups_give_the_same_bits(
    rows: dict[str, Any], tol: float, data: st.DataObject
) -> None:
    """Every look-up on a promoted plan's typed lists is the generic one on its ``array('d')``,
    bit for bit (the same bisections and float operations), at step and tile bounds, inside
    steps, within the tolerance of a bound and past the ends."""
    typed, generic = _typed(rows), _plan(rows, lookups=GENERIC)
    pts = _points(rows["cum"].tolist())
    xs = data.draw(st.lists(st.sampled_from(pts), min_size=1, max_size=6))
    for x in xs:
        y = data.draw(st.sampled_from(pts))
        got, want = _lookups(typed, x, y, tol), _lookups(generic, x, y, tol)
        assert [_bits(v) for v in got] == [_bits(v) for v in want]
        assert [type(v) for v in got] == [type(v) for v in want]
    assert generic._cum_f is None and typed._cum_f is not None


@pytest.mark.parametrize("steps", [1, 15, 16, 17, 100, 575, 4000])
def test_promotion_at_steps_per_generic_lookup(steps: int) -> None:
    """A recurrent plan of S steps reads its ``array('d')`` for its first ``ceil(S / K) - 1``
    look-ups and holds typed lists from the ``ceil(S / K)``-th on (K =
    ``STEPS_PER_GENERIC_LOOKUP``); every answer is the generic plan's."""
    k = plan_mod.STEPS_PER_GENERIC_LOOKUP
    assert isinstance(k, int) and k > 0
    rng = np.random.default_rng(steps)
    layer = rng.integers(0, 3, steps).astype(np.int16)
    lat = np.array([1e-6, 2.5e-6, 0.0])
    cum = np.zeros(steps + 1)
    np.cumsum(lat[layer], out=cum[1:])
    rows = {
        "layer": layer,
        "cum": cum,
        "lat": lat,
        "tiles": np.array([1, 3, 2], dtype=np.int64),
        "ck": np.array([10, 20, 30], dtype=np.int64),
        "e": np.array([1e-3, 2e-3, 0.0]),
    }
    p, ref = _plan(rows), _plan(rows, lookups=GENERIC)
    at = max(1, math.ceil(steps / k))
    for i in range(1, at + 3):
        x = float(cum[-1]) * i / (at + 3)
        got = p.work_between(0.0, x + 1e-7) if x > 0.0 else p.step_at(x)
        want = ref.work_between(0.0, x + 1e-7) if x > 0.0 else ref.step_at(x)
        assert _bits(got) == _bits(want)
        assert (p._cum_f is not None) == (i >= at), (i, at)
    assert p.checkpoint_bytes_at(float(cum[-1]) / 2) == ref.checkpoint_bytes_at(float(cum[-1]) / 2)


def test_layer_plans_are_typed_from_their_first_lookup() -> None:
    """A plan of a network's layers lists its tables at its first look-up, as before (it
    never counts look-ups nor enters the recurrent cache)."""
    p = ExecPlan.from_steps([1e-6, 2e-6, 3e-6], energy_j=[1.0, 2.0, 3.0])
    before = len(plan_mod._recurrent_typed)
    assert p.position_at(4e-6)[0] == 2
    assert p._cum_f is not None and p._lookups == 0
    assert len(plan_mod._recurrent_typed) == before


def test_the_typed_cache_stays_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    """Promoted plans beyond ``RECURRENT_TYPED_CACHE_STEPS`` steps drop their lists, oldest
    first, and count again from zero; their look-ups stay the generic ones."""
    monkeypatch.setattr(plan_mod, "RECURRENT_TYPED_CACHE_STEPS", 250)
    monkeypatch.setattr(plan_mod, "_recurrent_typed", type(plan_mod._recurrent_typed)())
    monkeypatch.setattr(plan_mod, "_recurrent_typed_steps", [0])
    rng = np.random.default_rng(7)
    plans = []
    for n in (100, 60, 90, 120, 30, 80):
        layer = rng.integers(0, 2, n).astype(np.int16)
        lat = np.array([1e-6, 3e-6])
        cum = np.zeros(n + 1)
        np.cumsum(lat[layer], out=cum[1:])
        rows = {
            "layer": layer,
            "cum": cum,
            "lat": lat,
            "tiles": np.array([2, 1], dtype=np.int64),
            "ck": np.array([5, 7], dtype=np.int64),
            "e": np.array([1e-3, 4e-3]),
        }
        p = _typed(rows)
        p.work_between(0.0, float(cum[-1]) / 3)  # the energy list too
        p.next_preemption_point(float(cum[-1]) / 5, layer=False, tol_s=1e-9)
        plans.append((p, rows))
        kept = list(plan_mod._recurrent_typed)
        assert sum(q.steps for q in kept) <= 250 or len(kept) == 1
        assert plan_mod._recurrent_typed_steps[0] == sum(q.steps for q in kept)
    kept_ids = {id(q) for q in plan_mod._recurrent_typed}
    # 100, 60, 90 (250); 120 drops 100 and 60; 30 (240); 80 drops 90: 120 + 30 + 80 kept
    assert kept_ids == {id(p) for p, _ in plans[-3:]}
    for p, _ in plans:
        if id(p) in kept_ids:
            assert p._cum_f is not None and p._ce_f is not None and p._tile_steps is not None
        else:
            assert p._cum_f is None and p._ce_f is None
            assert p._tile_steps is None and p._ckpt_steps is None and p._lookups == 0
    for p, rows in plans:  # (these look-ups count, and may promote the plans again)
        ref = _plan(rows, lookups=GENERIC)
        x = float(rows["cum"][-1]) / 3
        assert _bits(tuple(_lookups(p, x, 2 * x, 1e-9))) == _bits(
            tuple(_lookups(ref, x, 2 * x, 1e-9))
        )


def _evict_all() -> None:
    """Every promoted plan evicted, as the cache evicts (its lists dropped, its count reset):
    emptying the cache alone would leave plans of earlier runs typed and uncounted."""
    for p in list(plan_mod._recurrent_typed):
        p._cum_f = None
        p._ce_f = None
        p._tile_steps = None
        p._ckpt_steps = None
        p._lookups = 0
    plan_mod._recurrent_typed.clear()
    plan_mod._recurrent_typed_steps[0] = 0


def test_an_engine_run_is_the_same_with_typed_lists_churning(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Planaria's recurrent plans promoted (the usual cache) and promoted and evicted at every
    promotion (a cache of no steps keeps only the newest plan): the same results to the bit."""
    from npusched.bench.families import family_configs
    from npusched.experiments.config import parse_config
    from npusched.experiments.runner import run_config

    def run() -> Any:
        cfg = parse_config(dict(family_configs(1500)["Planaria"], seed=3), source="t")
        r = run_config(cfg).result
        cols = {
            k: v.tolist() if v.dtype == object else (v.dtype.str, v.tobytes())
            for k, v in r.columns.items()
        }
        return r.events, r.layer_executions, r.energy_j.hex(), r.busy_s.hex(), cols

    _evict_all()  # plans promoted by earlier runs in this process start over
    usual = run()
    promoted = [p for p in plan_mod._recurrent_typed if p.layer.dtype != np.int64]
    assert promoted, "no recurrent plan was promoted"
    monkeypatch.setattr(plan_mod, "RECURRENT_TYPED_CACHE_STEPS", 0)
    churn = run()
    assert churn == usual
