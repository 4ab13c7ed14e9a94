"""An execution plan's tables (``hardware/plan.py``): compiled, packed C doubles
(``librt.vecs.vec[float]``) that the look-ups search natively, for plans of a network's layers
and unrolled recurrent plans alike; pure, lists and ``array('d')``. Every look-up is a
step-by-step reference's (``bisect`` on a Python list, the same float operations) bit for bit;
a recurrent plan's ``cum_s`` is a view of its table (its steps stored once); plans pickle."""

from __future__ import annotations

import bisect
import math
import pickle
from itertools import pairwise
from typing import Any

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from npusched import native
from npusched.hardware import plan as plan_mod
from npusched.hardware.profile import ExecPlan, compile_profile

SETTINGS = settings(max_examples=120, deadline=None)


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


def _plan(rows: dict[str, Any]) -> ExecPlan:
    table, view = plan_mod.recurrent_prefix(rows["cum"])
    return ExecPlan(
        rows["layer"],
        view,
        latency_row=rows["lat"],
        tiles_row=rows["tiles"],
        checkpoint_row=rows["ck"],
        energy_row=rows["e"],
        cum_table=table,
    )


class _Ref:
    """The look-ups written step by step on Python lists (``bisect``, ``max`` / ``min``,
    negative indexes): what a plan's tables must answer, bit for bit."""

    def __init__(self, rows: dict[str, Any]) -> None:
        layer = rows["layer"].tolist()
        self.cum: list[float] = rows["cum"].tolist()
        ce = np.zeros(len(layer) + 1)
        np.cumsum(rows["e"][rows["layer"]], out=ce[1:])
        self.ce: list[float] = ce.tolist()
        lat, tiles = rows["lat"].tolist(), rows["tiles"].tolist()
        self.tile = [lat[j] / max(tiles[j], 1) for j in layer]
        self.ck = [int(rows["ck"][j]) for j in layer]
        self.steps = len(layer)
        self.te = float(rows["e"][rows["layer"]].sum())

    def step_at(self, x: float) -> int:
        return bisect.bisect_right(self.cum, x) - 1

    def position_at(self, x: float) -> tuple[int, float]:
        s = self.step_at(x)
        if s >= self.steps:
            return self.steps, 0.0
        if s < 0:
            return 0, 0.0
        lat = self.cum[s + 1] - self.cum[s]
        if lat <= 0.0:
            return s, 0.0
        return s, min((x - self.cum[s]) / lat, 1.0)

    def executed_at(self, s: int, f: float) -> float:
        if s >= self.steps:
            return self.cum[-1]
        return self.cum[s] + f * (self.cum[s + 1] - self.cum[s])

    def _energy_at(self, x: float) -> float:
        i = self.step_at(x)
        if i >= self.steps:
            return self.ce[-1]
        if i < 0:
            return 0.0
        lat = self.cum[i + 1] - self.cum[i]
        if lat <= 0.0:
            return self.ce[i]
        return self.ce[i] + (x - self.cum[i]) / lat * (self.ce[i + 1] - self.ce[i])

    def energy_between(self, a: float, b: float) -> float:
        if b <= a or self.te == 0.0:
            return 0.0
        if a <= 0.0 and b >= self.cum[-1]:
            return self.te
        return self._energy_at(b) - self._energy_at(a)

    def steps_between(self, a: float, b: float) -> int:
        if a <= 0.0 and b >= self.cum[-1]:
            return self.steps
        return max(0, bisect.bisect_left(self.cum, b) - bisect.bisect_right(self.cum, a) + 1)

    def next_layer_boundary(self, x: float) -> float:
        i = bisect.bisect_left(self.cum, x)
        return self.cum[i] if i < len(self.cum) else self.cum[-1]

    def next_tile_boundary(self, x: float) -> float:
        s = self.step_at(x)
        if s >= self.steps:
            return self.cum[-1]
        start, tile = self.cum[s], self.tile[s]
        if tile <= 0.0:
            return start
        k = math.ceil((x - start) / tile - 1e-9)
        return min(max(start + k * tile, x), self.cum[s + 1])

    def next_preemption_point(self, x: float, *, layer: bool, tol_s: float) -> float:
        cum = self.cum
        i = bisect.bisect_left(cum, x)
        if i and x - cum[i - 1] <= tol_s:
            return cum[i - 1]
        if layer:
            return cum[i] if i < len(cum) else x
        stop = self.next_tile_boundary(x)
        j = bisect.bisect_left(cum, stop)
        if j < len(cum) and cum[j] - stop <= tol_s:
            return cum[j]
        return stop

    def checkpoint_bytes_at(self, x: float) -> int:
        if x <= 0.0:
            return 0
        s = self.step_at(x)
        if s >= self.steps:
            return 0
        if x == self.cum[s] and s > 0:
            s -= 1
        return self.ck[s]


def _bits(x: Any) -> Any:
    """``x`` with its floats as hex (so ``-0.0`` and ``0.0`` differ)."""
    if isinstance(x, tuple):
        return tuple(_bits(v) for v in x)
    return x.hex() if isinstance(x, float) else x


def _points(cum: list[float]) -> list[float]:
    inside = [(x + y) / 2 for x, y in pairwise(cum) if y > x]
    near = [x + d for x in cum for d in (-3e-7, -1e-12, 1e-12, 3e-7)]
    return sorted({*cum, *inside, *near, -1e-6, 0.0, cum[-1] + 1e-6})


def _lookups(p: Any, x: float, y: float, tol: float) -> list[Any]:
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
        out += [p.energy_between(x, y), p.steps_between(x, y)]
    return out


@SETTINGS
@given(rows=recurrent_plans(), tol=st.sampled_from([0.0, 1e-9, 4e-7]), data=st.data())
def test_recurrent_lookups_are_the_step_by_step_ones(
    rows: dict[str, Any], tol: float, data: st.DataObject
) -> None:
    """Every look-up on a recurrent plan's tables is the reference's on Python lists, bit for
    bit and of the same type, at step and tile bounds, inside steps, within the tolerance of a
    bound and past the ends; ``work_between`` is ``steps_between`` and ``energy_between``."""
    p, ref = _plan(rows), _Ref(rows)
    pts = _points(rows["cum"].tolist())
    xs = data.draw(st.lists(st.sampled_from(pts), min_size=1, max_size=6))
    for x in xs:
        y = data.draw(st.sampled_from(pts))
        got, want = _lookups(p, x, y, tol), _lookups(ref, x, y, tol)
        assert [_bits(v) for v in got] == [_bits(v) for v in want]
        assert [type(v) for v in got] == [type(v) for v in want]
        if y > x:
            assert _bits(p.work_between(x, y)) == _bits(
                (ref.steps_between(x, y), ref.energy_between(x, y))
            )


def test_tables_are_vecs_where_the_plan_is_compiled() -> None:
    """Compiled, a plan's tables are ``vec``s (packed doubles and ``i32``); pure, a list for a
    layer plan and an ``array('d')`` for a recurrent one. Either way they hold ``cum_s``."""
    from array import array

    layer_plan = ExecPlan.from_steps([1e-6, 2e-6, 3e-6], energy_j=[1.0, 2.0, 3.0])
    rows = {
        "layer": np.array([0, 1, 0, 1], dtype=np.int16),
        "cum": np.array([0.0, 1e-6, 3e-6, 4e-6, 6e-6]),
        "lat": np.array([1e-6, 2e-6]),
        "tiles": np.array([1, 2], dtype=np.int64),
        "ck": np.array([8, 16], dtype=np.int64),
        "e": np.array([1e-3, 2e-3]),
    }
    rec = _plan(rows)
    for p in (layer_plan, rec):
        p.work_between(1e-6, 2.5e-6)
        p.checkpoint_bytes_at(2e-6)
    compiled = "npusched.hardware.plan" in native.compiled()
    assert compiled is plan_mod._TYPED_SEARCH
    if compiled:
        from librt.vecs import vec

        for p in (layer_plan, rec):
            assert type(p._cum) is vec[float] and type(p._ce) is vec[float]
    else:
        assert type(layer_plan._cum) is list and type(rec._cum) is array
    for p in (layer_plan, rec):
        assert [p._cum[i] for i in range(p.steps + 1)] == p.cum_s.tolist()
        assert [p._layer_v[i] for i in range(p.steps)] == p.layer.tolist()


def _rnn_profile() -> Any:
    from npusched.hardware import get_device
    from npusched.models.zoo.registry import get_network

    return compile_profile(get_network("rnn-mt1"), get_device("prema-npu"))


def test_a_recurrent_plans_steps_are_stored_once() -> None:
    """An unrolled recurrent plan's ``cum_s`` is a read-only NumPy view of its table: one copy
    of its prefix sums (8 bytes a step), shared with the look-ups."""
    p = _rnn_profile().plan(1, 40, 30)
    assert p.layer.dtype != np.int64 and p.steps > 100
    assert not p.cum_s.flags.writeable and not p.cum_s.flags.owndata
    table: Any = p._cum
    assert np.shares_memory(p.cum_s, np.frombuffer(table, dtype=np.float64))
    half = p.total_s / 2
    assert p.position_at(half)[0] == int(np.searchsorted(p.cum_s, half, "right")) - 1


def test_plans_pickle_with_the_same_lookups() -> None:
    """A plan pickles (its tables are built anew from its arrays) and answers as before."""
    rnn = _rnn_profile().plan(1, 12, 9)
    for p in (rnn, ExecPlan.from_steps([1e-6, 0.0, 2e-6], energy_j=[1.0, 0.0, 2.0])):
        q = pickle.loads(pickle.dumps(p))
        assert np.array_equal(q.cum_s, p.cum_s) and np.array_equal(q.layer, p.layer)
        for x in (0.0, p.total_s / 3, p.total_s * 0.71, p.total_s):
            assert _bits(tuple(_lookups(q, x, x + p.total_s / 4, 1e-9))) == _bits(
                tuple(_lookups(p, x, x + p.total_s / 4, 1e-9))
            )


def test_typed_searches_on_a_table_equal_bisect() -> None:
    """The typed searches on a table give ``bisect``'s index, searched from any ``lo``."""
    a = [0.0, 0.0, 1e-6, 2e-6, 2e-6, 2e-6, 5e-6, math.inf]
    t = plan_mod.float_table(np.array(a))
    for x in (-1.0, -0.0, 0.0, 1e-6, 1.5e-6, 2e-6, 7e-6, math.inf, math.nan):
        for lo in range(len(a) + 1):
            assert plan_mod._right(t, x, lo) == bisect.bisect_right(a, x, lo)
            assert plan_mod._left(t, x, lo) == bisect.bisect_left(a, x, lo)
