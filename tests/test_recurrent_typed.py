"""Unrolled recurrent plans' typed look-up tables (fifteenth round): the lists equal the plan's
arrays, the cache that holds them stays within its bound, and a plan whose lists were freed
answers every look-up as before, bit for bit."""

from __future__ import annotations

from itertools import pairwise

import numpy as np
import pytest

from npusched.hardware import plan as plan_mod
from npusched.hardware.profile import ExecPlan


def _recurrent(n: int, seed: int) -> ExecPlan:
    """An unrolled recurrent plan of ``n`` steps over 3 layers (an int16 step -> layer map),
    with zero-length steps, several tiles a layer, energy and checkpoint bytes."""
    rng = np.random.default_rng(seed)
    layer = rng.integers(0, 3, n).astype(np.int16)
    lat = np.array([0.0, 1.5e-6, 3.25e-6])
    cum = np.zeros(n + 1)
    np.cumsum(lat[layer], out=cum[1:])
    return ExecPlan(
        layer,
        cum,
        latency_row=lat,
        tiles_row=np.array([1, 4, 3], dtype=np.int64),
        checkpoint_row=np.array([10, 70_000, 123_456], dtype=np.int64),
        energy_row=np.array([0.0, 1e-3, 2.5e-3]),
    )


def _answers(plan: ExecPlan) -> list[object]:
    cum = plan.cum_s.tolist()
    pts = sorted({*cum, *((x + y) / 2 for x, y in pairwise(cum)), 0.3e-6})
    out: list[object] = []
    for i, a in enumerate(pts):
        b = pts[min(i + 3, len(pts) - 1)] + 1e-7
        out += [
            plan.step_at(a),
            plan.position_at(a),
            plan.next_layer_boundary(a).hex(),
            plan.next_tile_boundary(a).hex(),
            plan.next_preemption_point(a, layer=True, tol_s=1e-12).hex(),
            plan.next_preemption_point(a, layer=False, tol_s=1e-12).hex(),
            plan.checkpoint_bytes_at(a),
            plan.work_between(a, b),
            plan.steps_between(a, b),
            plan.energy_between(a, b).hex(),
        ]
    out += [plan.executed_at(s, 0.5).hex() for s in range(plan.steps + 1)]
    return out


def test_typed_tables_equal_the_arrays() -> None:
    p = _recurrent(50, 0)
    p.work_between(1e-6, 2e-5)
    p.checkpoint_bytes_at(1e-5)
    assert p._cum_f == p.cum_s.tolist()
    assert p._ce_f is not None
    assert p._ce_f[1:] == np.cumsum(p.energy_j).tolist()
    assert p._ckpt_steps == p.checkpoint_bytes.tolist()


def test_freed_lists_answer_as_before(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(plan_mod, "RECURRENT_TYPED_CACHE_STEPS", 100)
    monkeypatch.setattr(plan_mod, "_recurrent_typed", type(plan_mod._recurrent_typed)())
    monkeypatch.setattr(plan_mod, "_recurrent_typed_steps", [0])
    plans = [_recurrent(60, s) for s in range(4)]
    first = [_answers(p) for p in plans]  # each plan's admission frees the one before it
    assert plan_mod._recurrent_typed_steps[0] <= 100
    assert plans[0]._cum_f is None and plans[0]._ce_f is None
    again = [_answers(p) for p in reversed(plans)]
    assert again[::-1] == first
    assert first == [_answers(_recurrent(60, s)) for s in range(4)]
    assert len(plan_mod._recurrent_typed) == 1
