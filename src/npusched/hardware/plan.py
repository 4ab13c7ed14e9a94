"""The execution plan of one inference (:class:`ExecPlan`): where a job stands after some
seconds of work, what it computed and what a preemption saves.

Its look-ups run at every event of the engine's loops, so this module is compiled with the
loops (``npusched.native.COMPILED_MODULES``); :mod:`npusched.hardware.profile` builds plans
and re-exports :class:`ExecPlan`.
"""

from __future__ import annotations

import bisect
import math
from array import array
from types import FunctionType
from typing import Any, Final

import numpy as np
from librt.vecs import vec
from mypy_extensions import i32, i64

from npusched.hardware.base import FloatArray, IntArray

__all__ = [
    "ExecPlan",
    "float_table",
    "recurrent_prefix",
    "tile_seconds",
]

# ``bisect``'s functions as ``Final`` names: compiled, a name imported with ``from bisect
# import`` is a look-up in the module's dictionary at every call; a ``Final`` one is a C static.
bisect_left: Final = bisect.bisect_left
bisect_right: Final = bisect.bisect_right


def _bisect_right_f(a: vec[float], x: float, lo: i64 = 0) -> i64:
    """``bisect.bisect_right(a, x, lo)`` on a plan's table (the same comparisons, ``x <
    a[mid]``, so the same index for every ``x``, nan included). Compiled, a native call on an
    unboxed ``x`` whose comparisons are C double comparisons on the ``vec``'s packed doubles,
    where ``bisect_right`` through a ``Final`` name is a generic call that boxes ``x`` and
    compares boxed floats (about 860 instructions per call in a warm HPF run, a third of it
    the call and the boxing); the positions are ``i64`` (native arithmetic compiled, where a
    tagged ``int``'s shift is a call)."""
    hi: i64 = len(a)
    while lo < hi:
        mid = (lo + hi) >> 1
        if x < a[mid]:
            hi = mid
        else:
            lo = mid + 1
    return lo


def _bisect_left_f(a: vec[float], x: float, lo: i64 = 0) -> i64:
    """``bisect.bisect_left(a, x, lo)`` on a plan's table (the same comparisons, ``a[mid] <
    x``); see :func:`_bisect_right_f`."""
    hi: i64 = len(a)
    while lo < hi:
        mid = (lo + hi) >> 1
        if a[mid] < x:
            lo = mid + 1
        else:
            hi = mid
    return lo


#: Whether the typed searches above are compiled (C functions, not Python ``function``
#: objects): every plan's look-ups use them then, on its ``vec`` tables, and ``bisect``'s C
#: functions on its lists / ``array('d')`` when this module runs pure (an interpreted binary
#: search costs about twice a C ``bisect`` call). Both give the same index for every input,
#: so the choice changes no result.
_TYPED_SEARCH: Final = not isinstance(_bisect_right_f, FunctionType)

# A plan's tables (prefix sums of seconds and of energy, the step map): compiled, packed C
# doubles / ``i32`` (``librt.vecs.vec``, mypyc's native array: 8 bytes a float, indexed on
# unboxed values, a typed search on it is a C loop); pure, where ``bisect``'s C functions
# cannot read a ``vec``, a list for a plan of a network's layers and an ``array('d')`` for an
# unrolled recurrent plan (8 bytes a step). Both hold the same doubles.


def float_table(a: Any, compact: bool = False) -> vec[float]:
    """``a`` (a 1-D float64 array or a list of floats) as a plan's float table: a
    ``vec[float]`` compiled (one copy of the buffer); pure, a list, or an ``array('d')`` where
    ``compact``."""
    if _TYPED_SEARCH:
        return vec[float](a)
    arr = np.ascontiguousarray(a, dtype=np.float64)
    t: Any = array("d", arr.tobytes()) if compact else arr.tolist()
    return t


def _int_table(a: Any) -> vec[i32]:
    """``a`` (1-D integers) as a plan's step map: ``vec[i32]`` compiled, a list pure."""
    arr = np.ascontiguousarray(a, dtype=np.int32)
    if _TYPED_SEARCH:
        return vec[i32](arr)
    t: Any = arr.tolist()
    return t


def _right(a: vec[float], x: float, lo: i64 = 0) -> i64:
    """``bisect.bisect_right(a, x, lo)`` on a plan's table: the typed search compiled,
    ``bisect``'s C function pure (the same index)."""
    if _TYPED_SEARCH:
        return _bisect_right_f(a, x, lo)
    r: int = bisect_right(a, x, lo)
    return r


def _left(a: vec[float], x: float, lo: i64 = 0) -> i64:
    """``bisect.bisect_left(a, x, lo)`` on a plan's table (see :func:`_right`)."""
    if _TYPED_SEARCH:
        return _bisect_left_f(a, x, lo)
    r: int = bisect_left(a, x, lo)
    return r


def _energy_in_step_f(i: i64, x: float, steps: i64, cum: vec[float], ce: vec[float]) -> float:
    """Cumulative joules after ``x`` seconds of work, ``x`` in step ``i`` (``bisect_right(cum,
    x) - 1``; linear within the step): ``ce`` holds the prefix sums of energy (compiled, on
    unboxed floats, the positions ``i64``)."""
    if i >= steps:
        return ce[steps]
    if i < 0:
        return 0.0
    lat = cum[i + 1] - cum[i]
    if lat <= 0.0:
        return ce[i]
    return ce[i] + (x - cum[i]) / lat * (ce[i + 1] - ce[i])


class ExecPlan:
    """The executed step sequence of one inference (a CNN's layers, or an RNN unrolled) on one
    plan variant (batch size, subarray count, frequency, accelerator).

    A plan stores only what differs per request shape: ``layer`` (the layer of each step) and
    ``cum_s`` (prefix sums of seconds). Per-step latency, tiles, checkpoint bytes and energy are
    the profile's per-layer rows indexed by ``layer``, so the 1e6 requests of an RNN mix with
    thousands of distinct sequence lengths cost a few bytes per step, and every job of one
    shape shares one plan. The look-ups read the plan's tables (:func:`float_table`): the
    prefix sums (an unrolled recurrent plan's ``cum_s`` is a read-only view of them), and,
    built on first use, the prefix sums of energy and the step map.

    Attributes:
        layer: index into the per-layer rows of each step (length S; int64, or int16 / int32
            for an unrolled recurrent plan).
        cum_s: prefix sums of seconds, length S + 1, ``cum_s[0] = 0``, ``cum_s[-1] = total_s``.
        steps: the number of steps S.
        exits: step boundaries (number of steps done) at which a sample may leave the job
            (early exits); the plan's end is always an exit and is not listed.
        frequency_hz: per-step clock in Hz when a power policy chose it, else ``None``.
        total_s: seconds of uninterrupted execution.
        total_energy_j: joules of a whole uninterrupted run.

    Per-step arrays (computed on access): ``latency_s``, ``tiles``, ``checkpoint_bytes``,
    ``energy_j``, ``power_w`` (energy / latency, 0 for zero-length steps).
    """

    __slots__ = (
        "_ce",
        "_ckpt_layer",
        "_ckpt_row",
        "_cum",
        "_energy_row",
        "_lat_row",
        "_layer_v",
        "_tile_s_row",
        "_tiles_row",
        "cum_s",
        "exits",
        "frequency_hz",
        "layer",
        "steps",
        "total_energy_j",
        "total_s",
    )

    def __init__(
        self,
        layer: IntArray,
        cum_s: FloatArray,
        *,
        latency_row: FloatArray,
        tiles_row: IntArray,
        checkpoint_row: IntArray,
        energy_row: FloatArray,
        exits: tuple[int, ...] = (),
        frequency_hz: FloatArray | None = None,
        cum_table: vec[float] | None = None,
    ) -> None:
        self.layer = layer
        self.cum_s = cum_s
        self._lat_row = latency_row
        self._tiles_row = tiles_row
        self._ckpt_row = checkpoint_row
        self._energy_row = energy_row
        # The prefix sums as the look-ups' table (``cum_table``: the one ``cum_s`` views).
        self._cum: vec[float] = (
            cum_table if cum_table is not None else float_table(cum_s, layer.dtype != np.int64)
        )
        # Built on first use: prefix sums of energy, the step map, per-layer seconds per tile
        # and checkpoint bytes.
        self._ce: vec[float] | None = None
        self._layer_v: vec[i32] | None = None
        self._tile_s_row: list[float] | None = None
        self._ckpt_layer: list[int] | None = None
        self.steps = len(layer)
        self.total_s = float(cum_s[-1])
        self.total_energy_j = float(energy_row[layer].sum()) if len(layer) else 0.0
        self.exits = exits
        self.frequency_hz = frequency_hz

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled as its arrays (the tables are rebuilt; a ``vec`` does not pickle)."""
        return (
            _rebuild_plan,
            (
                self.layer,
                np.array(self.cum_s),
                self._lat_row,
                self._tiles_row,
                self._ckpt_row,
                self._energy_row,
                self.exits,
                self.frequency_hz,
            ),
        )

    @classmethod
    def from_steps(
        cls,
        latency_s: Any,
        *,
        tiles: Any = 1,
        checkpoint_bytes: Any = 0,
        energy_j: Any = 0.0,
        exits: tuple[int, ...] = (),
        frequency_hz: Any = None,
    ) -> ExecPlan:
        """A plan from per-step arrays (each broadcast to the steps): e.g. one a power policy
        derives by choosing a frequency per step."""
        lat = _ro(np.asarray(latency_s, dtype=np.float64).reshape(-1), np.float64)
        n = len(lat)

        def col(v: Any, dtype: type) -> Any:
            return _ro(np.broadcast_to(np.asarray(v, dtype=dtype), (n,)), dtype)

        cum = np.zeros(n + 1)
        np.cumsum(lat, out=cum[1:])
        cum.flags.writeable = False
        freq = None if frequency_hz is None else col(frequency_hz, np.float64)
        return cls(
            _ro(np.arange(n, dtype=np.int64), np.int64),
            cum,
            latency_row=lat,
            tiles_row=col(tiles, np.int64),
            checkpoint_row=col(checkpoint_bytes, np.int64),
            energy_row=col(energy_j, np.float64),
            exits=exits,
            frequency_hz=freq,
        )

    # --- per-step arrays (views of the per-layer rows; computed on access) -------------------
    @property
    def latency_s(self) -> FloatArray:
        """Seconds per step."""
        return self._lat_row[self.layer]

    @property
    def tiles(self) -> IntArray:
        """Tiles (CHECKPOINT preemption points) per step."""
        return self._tiles_row[self.layer]

    @property
    def checkpoint_bytes(self) -> IntArray:
        """Bytes a CHECKPOINT inside each step saves."""
        return self._ckpt_row[self.layer]

    @property
    def energy_j(self) -> FloatArray:
        """Joules per step."""
        return self._energy_row[self.layer]

    @property
    def power_w(self) -> FloatArray:
        """Average watts of each step (energy / latency; 0 where a step takes no time)."""
        lat = self.latency_s
        e = self.energy_j
        out = np.zeros_like(lat)
        np.divide(e, lat, out=out, where=lat > 0.0)
        return out

    # --- tables built on first use ------------------------------------------------------------
    def _energy_prefix(self) -> vec[float]:
        """Prefix sums of energy (joules, length S + 1), built on first use and kept."""
        ce = self._ce
        if ce is None:
            arr = np.zeros(self.steps + 1)
            np.cumsum(self.energy_j, out=arr[1:])
            ce = self._ce = float_table(arr, self.layer.dtype != np.int64)
        return ce

    def _step_map(self) -> vec[i32]:
        """The layer of each step as a table (``layer``), built on first use."""
        lv = self._layer_v
        if lv is None:
            lv = self._layer_v = _int_table(self.layer)
        return lv

    def _tile_row(self) -> list[float]:
        """Seconds per tile of each layer (a step's length over its tiles, at least one)."""
        row = self._tile_s_row
        if row is None:
            row = self._tile_s_row = tile_seconds(self._lat_row, self._tiles_row)
        return row

    # --- look-ups ---------------------------------------------------------------------------
    def step_at(self, executed_s: float) -> int:
        """Index of the step running after ``executed_s`` seconds of work (S when done)."""
        return _right(self._cum, executed_s) - 1

    def position_at(self, executed_s: float) -> tuple[int, float]:
        """``(step, fraction of it done)`` after ``executed_s`` seconds of work; ``(S, 0.0)``
        when done. A zero-length step is never "in progress" (fraction 0 at its start)."""
        cum = self._cum
        t = _right(cum, executed_s) - 1
        if t >= self.steps:
            return self.steps, 0.0
        if t < 0:
            return 0, 0.0
        lat = cum[t + 1] - cum[t]
        if lat <= 0.0:
            return t, 0.0
        g = (executed_s - cum[t]) / lat
        return t, (g if g < 1.0 else 1.0)

    def executed_at(self, step: int, fraction: float) -> float:
        """Seconds of work at ``(step, fraction)`` on this plan (the inverse of
        :meth:`position_at`)."""
        cum = self._cum
        if step >= self.steps:
            return cum[self.steps]
        return cum[step] + fraction * (cum[step + 1] - cum[step])

    def energy_between(self, a: float, b: float) -> float:
        """Joules of the work interval ``[a, b]`` (seconds of work), step energies spread
        uniformly over their steps."""
        if b <= a or self.total_energy_j == 0.0:
            return 0.0
        if a <= 0.0 and b >= self.total_s:
            return self.total_energy_j
        cum = self._cum
        ce = self._ce
        if ce is None:
            ce = self._energy_prefix()
        steps = self.steps
        e_b = _energy_in_step_f(_right(cum, b) - 1, b, steps, cum, ce)
        return e_b - _energy_in_step_f(_right(cum, a) - 1, a, steps, cum, ce)

    def steps_between(self, a: float, b: float) -> int:
        """Steps executed (whole or in part) over the work interval ``[a, b)``, ``b > a``
        (seconds of work): one plus the step ends strictly inside it."""
        if a <= 0.0 and b >= self.total_s:
            return self.steps
        cum = self._cum
        m = _left(cum, b) - _right(cum, a) + 1
        return m if m > 0 else 0

    def work_between(self, a: float, b: float) -> tuple[int, float]:
        """``(steps_between(a, b), energy_between(a, b))`` for ``b > a`` (seconds of work), equal
        to the two calls bit for bit, with one bisection of the prefix sums per end.

        ``bisect_left(cum, b)`` is ``bisect_right(cum, b)`` less the entries equal to ``b``
        (zero-length steps repeat a prefix sum), found by stepping back over them; each end's
        cumulative energy is read from the same bisection."""
        te = self.total_energy_j
        if a <= 0.0 and b >= self.total_s:
            return self.steps, (te if te != 0.0 else 0.0)
        cum = self._cum
        ia = _right(cum, a)
        # ``b >= a``: every ``cum[:ia]`` is at most ``b`` too, so its index is searched from
        # ``ia`` (the same index)
        ib = _right(cum, b, ia if b >= a else 0)
        jb = ib
        while jb and cum[jb - 1] == b:
            jb -= 1
        n = jb - ia + 1
        if n < 0:
            n = 0
        if te == 0.0:
            return n, 0.0
        ce = self._ce
        if ce is None:
            ce = self._energy_prefix()
        steps = self.steps
        e_b = _energy_in_step_f(ib - 1, b, steps, cum, ce)
        return n, e_b - _energy_in_step_f(ia - 1, a, steps, cum, ce)

    def next_layer_boundary(self, executed_s: float) -> float:
        """The smallest step boundary (in seconds of work) >= ``executed_s``."""
        cum = self._cum
        j = _left(cum, executed_s)
        return cum[j] if j <= self.steps else cum[self.steps]

    def next_tile_boundary(self, executed_s: float) -> float:
        """The smallest tile boundary >= ``executed_s``, tiles evenly dividing their step.

        Tiles of a layer are taken as equal in length (inner tiles dominate; see the device).
        A position within a billionth of a tile past a boundary counts as at that boundary
        (floating-point slack) and returns ``executed_s`` itself, never an earlier time."""
        return self._next_tile(self._cum, executed_s)

    def _next_tile(self, cum: vec[float], executed_s: float, lo: i64 = 0) -> float:
        """:meth:`next_tile_boundary` (``max`` and ``min`` written out as Python's, which keep
        the first of equal values). ``lo``: an index with every ``cum[:lo]`` below
        ``executed_s`` (a ``bisect_left`` of it), where ``bisect_right``'s answer is at least
        ``lo``: it is ``lo`` itself when ``executed_s < cum[lo]``, else it is searched from
        ``lo + 1`` (the same index as a search of the whole table; every value below: the
        length)."""
        steps = self.steps
        if lo > steps:
            s = steps
        elif executed_s < cum[lo]:
            s = lo - 1
        else:
            s = _right(cum, executed_s, lo + 1) - 1
        if s >= steps:
            return cum[steps]
        start = cum[s]
        row = self._tile_s_row
        if row is None:
            row = self._tile_row()
        lv = self._layer_v
        if lv is None:
            lv = self._step_map()
        tile = row[lv[s]]
        if tile <= 0.0:
            return start
        k = math.ceil((executed_s - start) / tile - 1e-9)
        x = start + k * tile
        if executed_s > x:
            x = executed_s
        end = cum[s + 1]
        return end if end < x else x

    def next_preemption_point(self, executed_s: float, *, layer: bool, tol_s: float) -> float:
        """Where a job that has done ``executed_s`` seconds of work can stop (seconds of work).

        The next step end (``layer``) or tile boundary at or after ``executed_s``, with
        positions compared within ``tol_s`` seconds: a position reached as ``start + rate * t``
        can miss a step end by a few ulps. A job up to ``tol_s`` past a step end is at that
        step end (it has finished that step and not started the next), and a tile boundary
        ``start + k * tile`` up to ``tol_s`` short of a step end is that step end (so a stop in
        the last tile is the job's end). Never earlier than ``executed_s`` minus ``tol_s``.
        """
        cum = self._cum
        steps = self.steps
        i = _left(cum, executed_s)
        if i and executed_s - cum[i - 1] <= tol_s:
            return cum[i - 1]
        if layer:
            return cum[i] if i <= steps else executed_s
        stop = self._next_tile(cum, executed_s, i)
        # ``bisect_left(cum, stop)``: every ``cum[:i]`` is below ``executed_s``, so where
        # ``stop >= executed_s`` the index is at least ``i``, and ``i`` itself when ``cum[i] >=
        # stop`` (a boundary inside step ``i``: the common case).
        if stop >= executed_s:
            j = i if i > steps or cum[i] >= stop else _left(cum, stop, i + 1)
        else:
            j = _left(cum, stop)
        if j <= steps and cum[j] - stop <= tol_s:
            return cum[j]
        return stop

    def checkpoint_bytes_at(self, executed_s: float) -> int:
        """Bytes a CHECKPOINT saves when the job stops after ``executed_s`` seconds of work."""
        if executed_s <= 0.0:
            return 0
        cum = self._cum
        s = _right(cum, executed_s) - 1
        if s >= self.steps:
            return 0
        if executed_s == cum[s] and s > 0:
            s -= 1  # stopped exactly at a layer end: the finished layer's outputs are live
        ck = self._ckpt_layer
        if ck is None:
            listed: list[int] = self._ckpt_row.tolist()
            ck = self._ckpt_layer = listed
        lv = self._layer_v
        if lv is None:
            lv = self._step_map()
        return ck[lv[s]]

    def __repr__(self) -> str:
        return f"ExecPlan(steps={self.steps}, total_s={self.total_s:.6g})"


def tile_seconds(latency_row: Any, tiles_row: Any) -> list[float]:
    """Seconds per tile of each layer of a profile row: the layer's seconds over its tiles
    (at least one); a plan's ``_tile_s_row``, which a profile shares between its plans."""
    lat: list[float] = np.asarray(latency_row).tolist()
    tiles: list[int] = np.asarray(tiles_row).tolist()
    return [x / max(t, 1) for x, t in zip(lat, tiles, strict=True)]


def _rebuild_plan(
    layer: Any,
    cum_s: Any,
    lat: Any,
    tiles: Any,
    ckpt: Any,
    energy: Any,
    exits: tuple[int, ...],
    freq: Any,
) -> ExecPlan:
    """An unpickled :class:`ExecPlan` (its tables built anew from the same doubles)."""
    cum_s.flags.writeable = False
    return ExecPlan(
        layer,
        cum_s,
        latency_row=lat,
        tiles_row=tiles,
        checkpoint_row=ckpt,
        energy_row=energy,
        exits=exits,
        frequency_hz=freq,
    )


def recurrent_prefix(cum: Any) -> tuple[vec[float], FloatArray]:
    """An unrolled recurrent plan's prefix sums ``cum`` (float64, length S + 1) as its table
    and a read-only NumPy view of that table (``cum_s``): the steps are stored once."""
    table = float_table(cum, compact=True)
    buf: Any = table  # a ``vec[float]`` or an ``array('d')``: both export their buffer
    view = np.frombuffer(buf, dtype=np.float64)
    view.flags.writeable = False
    return table, view


def _ro(a: Any, dtype: type) -> Any:
    arr: Any = np.array(a, dtype=dtype, order="C", copy=True)
    arr.flags.writeable = False
    return arr
