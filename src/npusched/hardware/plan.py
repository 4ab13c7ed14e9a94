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
from collections import OrderedDict
from types import FunctionType
from typing import Any, Final

import numpy as np
from mypy_extensions import i64

from npusched.hardware.base import FloatArray, IntArray

__all__ = [
    "RECURRENT_ENERGY_CACHE_STEPS",
    "RECURRENT_TYPED_CACHE_STEPS",
    "STEPS_PER_GENERIC_LOOKUP",
    "ExecPlan",
]

# ``bisect``'s functions as ``Final`` names: compiled, a name imported with ``from bisect
# import`` is a look-up in the module's dictionary at every call; a ``Final`` one is a C static.
bisect_left: Final = bisect.bisect_left
bisect_right: Final = bisect.bisect_right


def _bisect_right_f(a: list[float], x: float, lo: i64 = 0) -> int:
    """``bisect.bisect_right(a, x, lo)`` on a list of floats (the same comparisons, ``x <
    a[mid]``, so the same index for every ``x``, nan included). Compiled, a native call on an
    unboxed ``x`` whose comparisons are C double comparisons, where ``bisect_right`` through a
    ``Final`` name is a generic call that boxes ``x`` and compares boxed floats (about 860
    instructions per call in a warm HPF run, a third of it the call and the boxing); the
    positions are ``i64`` (native arithmetic compiled, where a tagged ``int``'s shift is a
    call)."""
    hi: i64 = len(a)
    while lo < hi:
        mid = (lo + hi) >> 1
        if x < a[mid]:
            hi = mid
        else:
            lo = mid + 1
    return lo


def _bisect_left_f(a: list[float], x: float, lo: i64 = 0) -> int:
    """``bisect.bisect_left(a, x, lo)`` on a list of floats (the same comparisons, ``a[mid] <
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
#: objects): a layer plan's look-ups use them then, and ``bisect``'s C functions when this
#: module runs pure (an interpreted binary search costs about twice a C ``bisect`` call).
#: Both give the same index for every input, so the choice changes no result.
_TYPED_SEARCH: Final = not isinstance(_bisect_right_f, FunctionType)

#: A plan's look-up table: ``array('d')`` for unrolled recurrent plans (8 bytes per step, bisect
#: works on it directly; a Python list of floats costs 32 and dominated the memory of
#: million-request RNN runs), a list for the few short plans of a network's layers.
Seq = Any


def _energy_in_step_f(i: i64, x: float, steps: i64, cum: list[float], ce: list[float]) -> float:
    """:func:`_energy_in_step` on a layer plan's lists (the same float operations; compiled,
    on unboxed floats, the positions ``i64``)."""
    if i >= steps:
        return ce[-1]
    if i < 0:
        return 0.0
    lat = cum[i + 1] - cum[i]
    if lat <= 0.0:
        return ce[i]
    return ce[i] + (x - cum[i]) / lat * (ce[i + 1] - ce[i])


def _energy_in_step(i: int, x: float, steps: int, cum: Seq, ce: Seq) -> float:
    """Cumulative joules after ``x`` seconds of work, ``x`` in step ``i`` (``bisect_right(cum,
    x) - 1``; linear within the step): ``ce`` holds the prefix sums of energy."""
    if i >= steps:
        return ce[-1]
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
    thousands of distinct sequence lengths cost 10 bytes per step (an int16 layer index and the
    prefix sum, stored once for NumPy and for bisection), and every job of one shape shares one
    plan.

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
        "_ce_f",
        "_ckpt_row",
        "_ckpt_steps",
        "_cum",
        "_cum_energy",
        "_cum_f",
        "_energy_row",
        "_lat_row",
        "_lookups",
        "_tile_s_row",
        "_tile_steps",
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
    ) -> None:
        self.layer = layer
        self.cum_s = cum_s
        self._lat_row = latency_row
        self._tiles_row = tiles_row
        self._ckpt_row = checkpoint_row
        self._energy_row = energy_row
        self._tile_s_row: list[float] | None = None
        self._cum: Seq | None = None
        self._cum_energy: Seq | None = None
        self._ckpt_steps: list[int] | None = None
        # The tables as typed lists: a layer plan's set with ``_cum`` / ``_cum_energy``, an
        # unrolled recurrent plan's once it is promoted (:meth:`_typed`), else ``None``;
        # compiled, the look-ups index them on unboxed floats.
        self._cum_f: list[float] | None = None
        self._ce_f: list[float] | None = None
        self._tile_steps: list[float] | None = None
        # Generic look-ups of an unrolled recurrent plan since it last had typed lists
        # (:meth:`_typed`: it gets them once they have cost about what building them costs).
        self._lookups = 0
        self.steps = len(layer)
        self.total_s = float(cum_s[-1])
        self.total_energy_j = float(energy_row[layer].sum()) if len(layer) else 0.0
        self.exits = exits
        self.frequency_hz = frequency_hz

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

    # --- look-ups (tables built on first use: bisecting one is several times faster than
    # ``numpy.searchsorted`` on a scalar, and most plans are never looked up) -------------------
    def _cum_list(self) -> Seq:
        """The prefix sums as a bisectable table: a plan of a network's layers (``int64``
        ``layer``: tens to hundreds of steps, shared by every job of its shape) gets a Python
        list, whose bisection and indexing box no floats (a third faster than ``array('d')``);
        an unrolled recurrent plan comes with its ``array('d')`` (8 bytes a step)."""
        cum = self._cum
        if cum is None:
            if self.layer.dtype == np.int64:
                cum_f: list[float] = self.cum_s.tolist()
                cum = self._cum = self._cum_f = cum_f
            else:
                cum = self._cum = array("d", self.cum_s.tobytes())
        return cum

    def _typed(self) -> list[float] | None:
        """The prefix sums as a typed list (``_cum_f``) for a look-up that found none, or
        ``None``: the look-up then reads the ``array('d')`` (generic calls compiled).

        A layer plan gets its list on its first look-up (:meth:`_cum_list`). An unrolled
        recurrent plan counts its generic look-ups and gets typed lists (prefix sums here;
        prefix sums of energy, per-step tiles and checkpoint bytes when a look-up first needs
        them) at the look-up that brings their cost to about what building the lists costs:
        ``steps / STEPS_PER_GENERIC_LOOKUP`` look-ups (:data:`STEPS_PER_GENERIC_LOOKUP`). A plan
        looked up once or twice (most of an RNN mix's thousands of shapes) never pays O(steps)
        for lists, and a plan that earns them has spent at most about as much on generic
        look-ups as the lists cost, so neither kind costs more than about twice its cheapest
        course. Promoted plans share a bounded cache (:data:`RECURRENT_TYPED_CACHE_STEPS`); one
        that left it counts again from zero. Both paths compute the same floats."""
        if self._cum is None:
            self._cum_list()
            cum_f = self._cum_f
            if cum_f is not None:  # a layer plan
                return cum_f
        n = self._lookups + 1
        self._lookups = n
        if n * STEPS_PER_GENERIC_LOOKUP < self.steps:
            return None
        listed: list[float] = self.cum_s.tolist()
        cum_f = self._cum_f = listed
        _admit_recurrent(self)
        return cum_f

    def _typed_ce(self) -> list[float]:
        """The prefix sums of energy as a typed list (``_ce_f``) for a plan with ``_cum_f``:
        a layer plan's own, or a promoted recurrent plan's from the values of
        :func:`_recurrent_energy_prefix` (the same doubles, listed)."""
        ce = self._energy_prefix()
        ce_f = self._ce_f
        if ce_f is None:
            listed: list[float] = ce.tolist()
            ce_f = self._ce_f = listed
        return ce_f

    def step_at(self, executed_s: float) -> int:
        """Index of the step running after ``executed_s`` seconds of work (S when done)."""
        cum_f = self._cum_f
        if cum_f is None:
            cum_f = self._typed()
        if cum_f is not None:
            return bisect_right(cum_f, executed_s) - 1
        return bisect_right(self._cum_list(), executed_s) - 1

    def position_at(self, executed_s: float) -> tuple[int, float]:
        """``(step, fraction of it done)`` after ``executed_s`` seconds of work; ``(S, 0.0)``
        when done. A zero-length step is never "in progress" (fraction 0 at its start)."""
        cum_f = self._cum_f
        if cum_f is None:
            cum_f = self._typed()
        if cum_f is not None:  # the same steps on the typed list (its native search compiled)
            t = (
                _bisect_right_f(cum_f, executed_s)
                if _TYPED_SEARCH
                else bisect_right(cum_f, executed_s)
            ) - 1
            if t >= self.steps:
                return self.steps, 0.0
            if t < 0:
                return 0, 0.0
            lat_f = cum_f[t + 1] - cum_f[t]
            if lat_f <= 0.0:
                return t, 0.0
            g = (executed_s - cum_f[t]) / lat_f
            return t, (g if g < 1.0 else 1.0)
        cum = self._cum_list()
        s = bisect_right(cum, executed_s) - 1
        if s >= self.steps:
            return self.steps, 0.0
        if s < 0:
            return 0, 0.0
        lat = cum[s + 1] - cum[s]
        if lat <= 0.0:
            return s, 0.0
        f = (executed_s - cum[s]) / lat
        return s, (f if f < 1.0 else 1.0)

    def executed_at(self, step: int, fraction: float) -> float:
        """Seconds of work at ``(step, fraction)`` on this plan (the inverse of
        :meth:`position_at`)."""
        cum_f = self._cum_f
        if cum_f is None:
            cum_f = self._typed()
        if cum_f is not None:  # the same operations on the typed list
            if step >= self.steps:
                return cum_f[-1]
            return cum_f[step] + fraction * (cum_f[step + 1] - cum_f[step])
        cum = self._cum_list()
        if step >= self.steps:
            return cum[-1]
        return cum[step] + fraction * (cum[step + 1] - cum[step])

    def _energy_prefix(self) -> Seq:
        """Prefix sums of energy (joules, length S + 1), built on first use."""
        ce: Any = self._cum_energy
        if ce is not None:
            return ce
        if self.layer.dtype == np.int64:
            # Plans shared by many jobs (a CNN's layers) keep the prefix sums of energy (a list,
            # as ``_cum_list``).
            arr = np.zeros(self.steps + 1)
            np.cumsum(self.energy_j, out=arr[1:])
            ce_f: list[float] = arr.tolist()
            ce = self._cum_energy = self._ce_f = ce_f
            return ce
        return _recurrent_energy_prefix(self)

    def energy_between(self, a: float, b: float) -> float:
        """Joules of the work interval ``[a, b]`` (seconds of work), step energies spread
        uniformly over their steps."""
        if b <= a or self.total_energy_j == 0.0:
            return 0.0
        if a <= 0.0 and b >= self.total_s:
            return self.total_energy_j
        cum_f = self._cum_f
        if cum_f is None:
            cum_f = self._typed()
        if cum_f is not None:  # the same steps on the typed lists
            ce_f = self._ce_f
            if ce_f is None:
                ce_f = self._typed_ce()
            steps = self.steps
            e_b = _energy_in_step_f(bisect_right(cum_f, b) - 1, b, steps, cum_f, ce_f)
            return e_b - _energy_in_step_f(bisect_right(cum_f, a) - 1, a, steps, cum_f, ce_f)
        cum = self._cum
        if cum is None:
            cum = self._cum_list()
        ce = self._cum_energy
        if ce is None:
            ce = (
                self._energy_prefix()
                if self.layer.dtype == np.int64
                else _recurrent_energy_prefix(self)
            )
        return float(self._energy_at(b, cum, ce) - self._energy_at(a, cum, ce))

    def _energy_at(self, x: float, cum: Seq, ce: Seq) -> float:
        """Cumulative joules after ``x`` seconds of work (linear within a step); ``ce`` holds
        the prefix sums of energy at least up to the step holding ``x``."""
        return _energy_in_step(bisect_right(cum, x) - 1, x, self.steps, cum, ce)

    def steps_between(self, a: float, b: float) -> int:
        """Steps executed (whole or in part) over the work interval ``[a, b)``, ``b > a``
        (seconds of work): one plus the step ends strictly inside it."""
        if a <= 0.0 and b >= self.total_s:
            return self.steps
        cum_f = self._cum_f
        if cum_f is None:
            cum_f = self._typed()
        if cum_f is not None:
            m = bisect_left(cum_f, b) - bisect_right(cum_f, a) + 1
            return m if m > 0 else 0
        cum = self._cum
        if cum is None:
            cum = self._cum_list()
        n = bisect_left(cum, b) - bisect_right(cum, a) + 1
        return n if n > 0 else 0

    def work_between(self, a: float, b: float) -> tuple[int, float]:
        """``(steps_between(a, b), energy_between(a, b))`` for ``b > a`` (seconds of work), equal
        to the two calls bit for bit, with one bisection of the prefix sums per end.

        ``bisect_left(cum, b)`` is ``bisect_right(cum, b)`` less the entries equal to ``b``
        (zero-length steps repeat a prefix sum), found by stepping back over them; each end's
        cumulative energy is :meth:`_energy_at`'s, from the same bisection."""
        te = self.total_energy_j
        if a <= 0.0 and b >= self.total_s:
            return self.steps, (te if te != 0.0 else 0.0)
        cum_f = self._cum_f
        if cum_f is None:
            cum_f = self._typed()
        if cum_f is not None:  # the same steps on the typed lists
            ia = _bisect_right_f(cum_f, a) if _TYPED_SEARCH else bisect_right(cum_f, a)
            # ``b >= a``: every ``cum_f[:ia]`` is at most ``b`` too, so its index is searched
            # from ``ia`` (the same index)
            lo = ia if b >= a else 0
            ib = _bisect_right_f(cum_f, b, lo) if _TYPED_SEARCH else bisect_right(cum_f, b, lo)
            jb = ib
            while jb and cum_f[jb - 1] == b:
                jb -= 1
            n = jb - ia + 1
            if n < 0:
                n = 0
            if te == 0.0:
                return n, 0.0
            ce_f = self._ce_f
            if ce_f is None:
                ce_f = self._typed_ce()
            steps = self.steps
            e_b = _energy_in_step_f(ib - 1, b, steps, cum_f, ce_f)
            return n, e_b - _energy_in_step_f(ia - 1, a, steps, cum_f, ce_f)
        cum = self._cum
        if cum is None:
            cum = self._cum_list()
        ia = bisect_right(cum, a)
        ib = bisect_right(cum, b)
        jb = ib
        while jb and cum[jb - 1] == b:
            jb -= 1
        n = jb - ia + 1
        if n < 0:
            n = 0
        if te == 0.0:
            return n, 0.0
        ce = self._cum_energy
        if ce is None:
            ce = (
                self._energy_prefix()
                if self.layer.dtype == np.int64
                else _recurrent_energy_prefix(self)
            )
        # _energy_at(b), then _energy_at(a), from the bisections above.
        steps = self.steps
        eb = _energy_in_step(ib - 1, b, steps, cum, ce)
        return n, float(eb - _energy_in_step(ia - 1, a, steps, cum, ce))

    def next_layer_boundary(self, executed_s: float) -> float:
        """The smallest step boundary (in seconds of work) >= ``executed_s``."""
        cum_f = self._cum_f
        if cum_f is None:
            cum_f = self._typed()
        if cum_f is not None:
            j = bisect_left(cum_f, executed_s)
            return cum_f[j] if j < len(cum_f) else cum_f[-1]
        cum = self._cum_list()
        i = bisect_left(cum, executed_s)
        return cum[i] if i < len(cum) else cum[-1]

    def _tile_s(self, step: int) -> float:
        row = self._tile_s_row
        if row is None:
            lat = self._lat_row.tolist()
            tiles = self._tiles_row.tolist()
            row = self._tile_s_row = [x / max(t, 1) for x, t in zip(lat, tiles, strict=True)]
        return row[int(self.layer[step])]

    def next_tile_boundary(self, executed_s: float) -> float:
        """The smallest tile boundary >= ``executed_s``, tiles evenly dividing their step.

        Tiles of a layer are taken as equal in length (inner tiles dominate; see the device).
        A position within a billionth of a tile past a boundary counts as at that boundary
        (floating-point slack) and returns ``executed_s`` itself, never an earlier time."""
        cum_f = self._cum_f
        if cum_f is None:
            cum_f = self._typed()
        if cum_f is not None:
            return self._next_tile_f(cum_f, executed_s)
        cum = self._cum
        if cum is None:
            cum = self._cum_list()
        s = bisect_right(cum, executed_s) - 1
        if s >= self.steps:
            return cum[-1]
        start = cum[s]
        tile = self._tile_s(s)
        if tile <= 0.0:
            return start
        k = math.ceil((executed_s - start) / tile - 1e-9)
        return min(max(start + k * tile, executed_s), cum[s + 1])

    def _next_tile_f(self, cum: list[float], executed_s: float, lo: int = 0) -> float:
        """:meth:`next_tile_boundary` on a layer plan's typed lists (the same float
        operations; ``max`` and ``min`` written out as Python's, which keep the first of
        equal values). ``lo``: an index with every ``cum[:lo]`` below ``executed_s`` (a
        ``bisect_left`` of it), where ``bisect_right``'s answer is at least ``lo``: it is
        ``lo`` itself when ``executed_s < cum[lo]``, else it is searched from ``lo + 1``
        (the same index as a search of the whole list; every value below: the length)."""
        if lo >= len(cum):
            s = len(cum) - 1
        elif executed_s < cum[lo]:
            s = lo - 1
        else:
            s = (
                _bisect_right_f(cum, executed_s, lo + 1)
                if _TYPED_SEARCH
                else bisect_right(cum, executed_s, lo + 1)
            ) - 1
        if s >= self.steps:
            return cum[-1]
        start = cum[s]
        row = self._tile_steps
        if row is None:
            if self._tile_s_row is None:
                self._tile_s(0)
            per_layer = self._tile_s_row
            assert per_layer is not None
            # Indexed by NumPy (the same doubles), annotated: a chained assignment of the
            # untyped ``tolist()`` would leave ``row`` untyped, and ``k * tile`` below a
            # generic multiplication compiled.
            tile_steps: list[float] = np.asarray(per_layer)[self.layer].tolist()
            row = self._tile_steps = tile_steps
        tile = row[s]
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
        cum_f = self._cum_f
        if cum_f is None:
            cum_f = self._typed()
        if cum_f is not None:  # the same steps on the typed lists
            i = (
                _bisect_left_f(cum_f, executed_s)
                if _TYPED_SEARCH
                else bisect_left(cum_f, executed_s)
            )
            if i and executed_s - cum_f[i - 1] <= tol_s:
                return cum_f[i - 1]
            if layer:
                return cum_f[i] if i < len(cum_f) else executed_s
            stop = self._next_tile_f(cum_f, executed_s, i)
            # ``bisect_left(cum_f, stop)``: every ``cum_f[:i]`` is below ``executed_s``, so
            # where ``stop >= executed_s`` the index is at least ``i``, and ``i`` itself when
            # ``cum_f[i] >= stop`` (a boundary inside step ``i``: the common case).
            if stop >= executed_s:
                if i >= len(cum_f) or cum_f[i] >= stop:
                    j = i
                elif _TYPED_SEARCH:
                    j = _bisect_left_f(cum_f, stop, i + 1)
                else:
                    j = bisect_left(cum_f, stop, i + 1)
            else:
                j = _bisect_left_f(cum_f, stop) if _TYPED_SEARCH else bisect_left(cum_f, stop)
            if j < len(cum_f) and cum_f[j] - stop <= tol_s:
                return cum_f[j]
            return stop
        cum = self._cum
        if cum is None:
            cum = self._cum_list()
        i = bisect_left(cum, executed_s)
        if i and executed_s - cum[i - 1] <= tol_s:
            return cum[i - 1]
        if layer:
            return cum[i] if i < len(cum) else executed_s
        stop = self.next_tile_boundary(executed_s)
        j = bisect_left(cum, stop)
        if j < len(cum) and cum[j] - stop <= tol_s:
            return cum[j]
        return stop

    def checkpoint_bytes_at(self, executed_s: float) -> int:
        """Bytes a CHECKPOINT saves when the job stops after ``executed_s`` seconds of work."""
        if executed_s <= 0.0:
            return 0
        cum_f = self._cum_f
        if cum_f is None:
            cum_f = self._typed()
        if cum_f is not None:  # the same steps on the typed lists
            s = (
                _bisect_right_f(cum_f, executed_s)
                if _TYPED_SEARCH
                else bisect_right(cum_f, executed_s)
            ) - 1
            if s >= self.steps:
                return 0
            if executed_s == cum_f[s] and s > 0:
                s -= 1
            ck_f = self._ckpt_steps
            if ck_f is None:
                ck_f = self._ckpt_steps = self._ckpt_row[self.layer].tolist()
            return ck_f[s]
        cum = self._cum
        if cum is None:
            cum = self._cum_list()
        s = bisect_right(cum, executed_s) - 1
        if s >= self.steps:
            return 0
        if executed_s == cum[s] and s > 0:
            s -= 1  # stopped exactly at a layer end: the finished layer's outputs are live
        ck = self._ckpt_steps
        if ck is None:
            if self.layer.dtype != np.int64:  # unrolled recurrent: no per-step table
                return int(self._ckpt_row.item(self.layer.item(s)))
            ck = self._ckpt_steps = self._ckpt_row[self.layer].tolist()  # a layer plan's
        return ck[s]

    def __repr__(self) -> str:
        return f"ExecPlan(steps={self.steps}, total_s={self.total_s:.6g})"


#: Steps of unrolled recurrent plans whose prefix sums of energy are kept (8 bytes a step, so
#: 32 MiB): every recurrent shape of a small mix stays cached, while an RNN mix of a million
#: requests (thousands of length pairs, about 9 M steps) keeps the recently used ones.
RECURRENT_ENERGY_CACHE_STEPS = 4_000_000
_recurrent_energy: OrderedDict[ExecPlan, Seq] = OrderedDict()
_recurrent_energy_steps = [0]


#: Steps of a plan whose typed lists cost about what one look-up on its ``array('d')`` costs more
#: than the same look-up on the lists (compiled: building the lists is a few list passes per
#: step, a generic look-up thousands of instructions more than a typed one; measured in
#: docs/engine.md, "Hot recurrent plans typed (sixteenth round)"). An unrolled recurrent plan
#: gets typed lists at its ``steps / STEPS_PER_GENERIC_LOOKUP``-th look-up
#: (:meth:`ExecPlan._typed`).
STEPS_PER_GENERIC_LOOKUP: Final = 5

#: Steps of unrolled recurrent plans that hold typed lists (:meth:`ExecPlan._typed`: the prefix
#: sums, and where read the prefix sums of energy, per-step tiles and checkpoint bytes, up to
#: about 100-130 bytes a step, so about 30 MiB: a bound of 1,000,000 steps took P-PREMA at 1e6
#: requests from 940 to about 1,100 MiB, past the 1 GiB the bench holds it to, where this one
#: keeps the lists within what the run's columns leave of it). Plans enter when promoted and leave first in, first
#: out (a promoted plan's look-ups touch no cache); one that left reads its ``array('d')`` again
#: and earns its lists anew. Only the plans of jobs in flight are looked up, so a
#: million-request RNN mix keeps the lists of its hot shapes while the others' are freed.
RECURRENT_TYPED_CACHE_STEPS = 250_000
_recurrent_typed: OrderedDict[ExecPlan, None] = OrderedDict()
_recurrent_typed_steps = [0]


def _admit_recurrent(plan: ExecPlan) -> None:
    """Count ``plan``'s new typed lists in the cache, freeing the oldest plans' beyond
    :data:`RECURRENT_TYPED_CACHE_STEPS` (the values do not depend on whether they were kept)."""
    _recurrent_typed[plan] = None
    _recurrent_typed_steps[0] += plan.steps
    while _recurrent_typed_steps[0] > RECURRENT_TYPED_CACHE_STEPS and len(_recurrent_typed) > 1:
        old, _ = _recurrent_typed.popitem(last=False)
        _recurrent_typed_steps[0] -= old.steps
        old._cum_f = None
        old._ce_f = None
        old._tile_steps = None
        old._ckpt_steps = None
        old._lookups = 0


def _recurrent_energy_prefix(plan: ExecPlan) -> Seq:
    """The prefix sums of energy of an unrolled recurrent plan, from a least-recently-used cache
    bounded by :data:`RECURRENT_ENERGY_CACHE_STEPS` (a plan per length pair would otherwise keep
    its own for the whole run; the values do not depend on whether they were cached)."""
    ce = _recurrent_energy.get(plan)
    if ce is not None:
        _recurrent_energy.move_to_end(plan)
        return ce
    arr = np.zeros(plan.steps + 1)
    np.cumsum(plan.energy_j, out=arr[1:])
    ce = array("d", arr.tobytes())
    _recurrent_energy[plan] = ce
    _recurrent_energy_steps[0] += plan.steps
    while _recurrent_energy_steps[0] > RECURRENT_ENERGY_CACHE_STEPS and len(_recurrent_energy) > 1:
        old, _ = _recurrent_energy.popitem(last=False)
        _recurrent_energy_steps[0] -= old.steps
    return ce


def _ro(a: Any, dtype: type) -> Any:
    arr: Any = np.array(a, dtype=dtype, order="C", copy=True)
    arr.flags.writeable = False
    return arr
