"""The machine's total power over a run: computing jobs plus every idle unit's idle power.

:meth:`npusched.sim.engine.SimResult.power_timeline` sums the plans' power of the jobs computing
(each plan's power includes its units' share of the idle power, see
:mod:`npusched.policies.power`). The machine also draws the idle power of every unit no job
computes on (unallocated, or held by a job restoring, saving or switching):
``idle_power_w * (capacity - computing units) / capacity`` per resource.
:func:`machine_power_timeline` adds that term, giving the power a cap must bound.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from itertools import chain, pairwise
from operator import attrgetter, itemgetter
from struct import pack
from typing import TYPE_CHECKING, Any, NamedTuple, TypeAlias, cast

import numpy as np
import numpy.typing as npt

from npusched.errors import ConfigError

if TYPE_CHECKING:
    from npusched.sim.common import PowerColumns

#: The pieces as the loops record them (:class:`~npusched.sim.common.PowerColumns`), or any
#: sequence of :class:`~npusched.sim.engine.PowerPiece`-like entries.
Pieces: TypeAlias = "Sequence[Any] | PowerColumns"

__all__ = [
    "machine_power_timeline",
    "peak_machine_power_w",
    "peak_piece_power_w",
    "piece_power_timeline",
]

_ZERO = np.zeros(1)

_NAMES = ("start_s", "end_s", "exec0_s", "exec1_s", "rate")
_FIELDS = attrgetter(*_NAMES)


def _fields_of(piece: Any) -> Callable[[Any], tuple[float, ...]]:
    """A getter of :data:`_NAMES` for pieces like ``piece``: by position for a named tuple
    (a C-level tuple index, about 2x faster than five attribute look-ups), else by name."""
    names = getattr(type(piece), "_fields", None)
    if isinstance(piece, tuple) and names is not None and all(k in names for k in _NAMES):
        return itemgetter(*(names.index(k) for k in _NAMES))
    return _FIELDS


def piece_power_timeline(
    pieces: Pieces,
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """The exact summed power of ``pieces`` (:class:`~npusched.sim.engine.PowerPiece` entries,
    or the loop's :class:`~npusched.sim.common.PowerColumns`: ``start_s``/``end_s`` in seconds of the run, ``exec0_s``/``exec1_s`` in seconds of the
    plan's work, ``rate``, ``plan``) as breakpoints ``times_s`` (seconds) and the watts that
    hold from each breakpoint to the next (the last entry is 0 W after everything ends).

    Each piece contributes its plan's per-step power (energy / latency, scaled by the piece's
    rate) between the times its step boundaries are reached.

    **One job at a time** (the pieces follow one another in time, as on a temporal run), the
    level from a bound to the next is exactly the watts of the step that bound opens, and 0 W
    between pieces (:func:`_blocks_in_order`). Until the fourteenth round of issue 25 this
    case also took the running sum of every +/- change since the run began, whose rounding
    drifts: on a 2,000-request run of the bench's workload the reported peak differed from the
    highest step's watts by about 500 units in the last place, and by a different amount per
    policy although every policy ran the same steps. The bounds are processed in blocks of
    about :data:`_BLOCK_BOUNDS`, so each block's arrays stay in the processor's cache.

    **Pieces that overlap** (machine policies running jobs side by side): the level at each
    distinct bound time is the sum of the watts of the step each piece computing at that time
    holds, added in the pieces' order from 0 W (:func:`_summed_levels`): a function of the
    time alone, so a level does not depend on what came before it. Until the twenty-second
    round this case took the running sum of every +/- change since the run began, in sorted
    order, whose rounding drifts (a lone piece's level after ``+a, +b, -a`` is ``(a + b) -
    a``, not always ``b``): on the bench's Planaria run 120,924 of 122,340 levels differed from
    the sum of the steps computing by up to 5.7e-13 W (about 10 units in the last place of the
    peak), and the level where one job computes was not that job's watts. Where pieces follow
    one another the two definitions are the same bits (at most one piece computes at a time,
    and ``0.0 + w`` is ``w``), so the one-job-at-a-time paths below are kept unchanged.

    Everything is array operations over all pieces at once, the pieces' first and last steps
    included (one ``searchsorted`` over every plan's prefix sums finds each piece's first and
    last step, see :func:`_table`).
    """
    tab = _table(pieces)
    if tab is None:
        return np.zeros(1), np.zeros(1)
    got = _blocks_in_order(tab, peak=False)
    if got is not None:
        times, level = got
    else:
        times, level = _summed_levels(tab)
    mag = np.abs(level)
    level[mag < 1e-9 * max(1.0, float(mag.max()))] = 0.0
    return times, level


def peak_piece_power_w(pieces: Pieces) -> float:
    """The highest watts of :func:`piece_power_timeline` (``float(watts.max())``, the same
    bits), without building the timeline where the pieces follow one another in time: from
    one entry per piece (:func:`_peak_in_order`), else the kept levels reduced block by block
    to their highest and lowest; where pieces overlap, from the levels of the few stretches
    whose bound could hold the peak (:func:`_summed_peak`)."""
    if _draws_nothing(pieces):
        # every step of every plan draws 0 W (plans without an energy model, HaX-CoNN's):
        # the peak is 0 W whichever pieces cover steps (the table below, for nothing)
        return 0.0
    cols = _columns(pieces)
    if cols is None:
        return 0.0
    computed = (cols.end > cols.start) & (cols.ex1 > cols.ex0)
    whole = bool(computed.all())  # (the usual case: the columns taken, not gathered)
    start = cols.start if whole else cols.start[computed]
    end = cols.end if whole else cols.end[computed]
    if not (start[1:] >= end[:-1]).all():  # pieces overlap in time
        keep = np.arange(len(computed)) if whole else np.flatnonzero(computed)
        got_peak = _summed_peak(cols, keep)
        if got_peak is not None:
            return got_peak
    tab = _table_of(cols, computed, whole)
    if tab is None:
        return 0.0
    if not tab.pw_all.any():
        # every step draws 0 W (plans without an energy model): every level is 0 W, kept
        # as +0.0 by the near-zero rule, whatever the layout
        return 0.0
    peak = _peak_in_order(tab)
    if peak is not None:
        return peak
    got = _blocks_in_order(tab, peak=True)
    if got is not None:
        hi, lo = got
        # the timeline zeroes levels under 1e-9 of the largest magnitude; the highest level
        # is the peak unless it is itself zeroed (then the full timeline decides)
        if hi >= 1e-9 * max(1.0, float(max(hi, -lo))):
            return float(hi)
        _, level = _blocks_in_order(tab, peak=False)
    else:
        _, level = _summed_levels(tab)
    mag = np.abs(level)
    level[mag < 1e-9 * max(1.0, float(mag.max()))] = 0.0
    return float(level.max())


def _is_columns(pieces: Pieces) -> bool:
    """Whether ``pieces`` is the loop's :class:`~npusched.sim.common.PowerColumns` (read by
    its columns; not imported here: ``metrics`` sits below ``sim``), not a sequence of
    pieces."""
    return getattr(pieces, "exec1_s", None) is not None


def _draws_nothing(pieces: Pieces) -> bool:
    """Whether every step of every plan of ``pieces`` draws 0 W: each plan's ``power_w`` as
    :func:`_table` computes it (energy / latency where the step takes time, else 0) has no
    entry that is not zero. Checked once per plan (the plans through one ``dict``; ``False``,
    the table deciding, where plans compare by value or are unhashable)."""
    plans = cast("Any", pieces).plan if _is_columns(pieces) else None
    try:
        if plans is None:
            plans = list(map(attrgetter("plan"), cast("Sequence[Any]", pieces)))
        if not plans or _draws(plans[0]):  # the usual answer, from the first piece's plan
            return False
        uplans = list(dict.fromkeys(plans))
    except (TypeError, AttributeError):
        return False
    if not all(type(p).__eq__ is _OBJECT_EQ for p in uplans):
        return False
    return not any(map(_draws, uplans))


def _draws(plan: Any) -> bool:
    """Whether some step of ``plan`` draws power (its ``power_w`` as :func:`_table` computes
    it has an entry that is not zero)."""
    lat = np.asarray(plan.latency_s, dtype=np.float64)
    pw = np.zeros_like(lat)
    np.divide(np.asarray(plan.energy_j, dtype=np.float64), lat, out=pw, where=lat > 0.0)
    return bool(pw.any())


#: Bounds per block of :func:`_blocks_in_order` (32,768: a block's arrays take 0.25-0.5 MiB).
_BLOCK_BOUNDS = 1 << 15


class _Table(NamedTuple):
    """The pieces that cover steps, as arrays (one entry per piece; seconds, watts)."""

    start: npt.NDArray[np.float64]
    end: npt.NDArray[np.float64]
    ex0: npt.NDArray[np.float64]
    ex1: npt.NDArray[np.float64]
    rate: npt.NDArray[np.float64]
    s0: npt.NDArray[np.int64]  # first step covered
    m: npt.NDArray[np.int64]  # steps covered
    c_off: npt.NDArray[np.int64]  # offset of the piece's plan in cum_all and pw_all
    cum_all: npt.NDArray[np.float64]  # every plan's prefix sums, one after another
    pw_all: npt.NDArray[np.float64]  # every plan's watts per step and a 0 W entry after
    offsets: npt.NDArray[np.int64]  # each plan's offset in cum_all, in cum_all's order
    both: npt.NDArray[np.complex128]  # cum_all + 1j * pw_all (one gather reads both)
    any_ex0: bool  # some piece starts inside its plan (else ``- exec0`` is skipped)
    unit: bool  # every rate is 1 (``/ rate`` and ``* rate`` are skipped)


class _Columns(NamedTuple):
    """The pieces' fields as arrays (seconds) and their plans, one entry per piece."""

    start: npt.NDArray[np.float64]
    end: npt.NDArray[np.float64]
    ex0: npt.NDArray[np.float64]
    ex1: npt.NDArray[np.float64]
    rate: npt.NDArray[np.float64]
    plans: Sequence[Any]


def _columns(pieces: Pieces) -> _Columns | None:
    """``pieces``' fields as :class:`_Columns` (``None`` if there are none)."""
    n = len(pieces)
    if n == 0:
        return None
    plans: Sequence[Any]
    if _is_columns(pieces):
        cols: Any = pieces
        # the loop's columns: packed C doubles (``vec[float]``), read through their buffers
        # (read-only views of the same float64 values, no copy)
        start_a, end_a, ex0_a, ex1_a, rate_a = (
            np.frombuffer(col, np.float64)
            for col in (cols.start_s, cols.end_s, cols.exec0_s, cols.exec1_s, cols.rate)
        )
        plans = cols.plan
    else:
        # one pass over the pieces (each read once, while it is in the cache: a run's pieces
        # lie scattered over the heap, and a pass per field costs a cache miss per value)
        seq = cast("Sequence[Any]", pieces)
        cols = (
            np.fromiter(chain.from_iterable(map(_fields_of(seq[0]), seq)), np.float64, 5 * n)
            .reshape(n, 5)
            .T
        )
        plans = list(map(attrgetter("plan"), seq))
        start_a, end_a, ex0_a, ex1_a, rate_a = cols
    return _Columns(start_a, end_a, ex0_a, ex1_a, rate_a, plans)


def _table(pieces: Pieces) -> _Table | None:
    """``pieces`` as a :class:`_Table` (``None`` if none covers a step)."""
    got = _columns(pieces)
    return None if got is None else _table_of(got)


def _table_of(
    columns: _Columns,
    computed: npt.NDArray[np.bool_] | None = None,
    every_kept: bool | None = None,
) -> _Table | None:
    """:func:`_table` of the pieces' :class:`_Columns` (``computed``: which pieces compute,
    and ``every_kept`` whether all do, where the caller has them)."""
    start_a, end_a, ex0_a, ex1_a, rate_a, plans = columns
    n = len(start_a)
    if computed is None or every_kept is None:
        computed = (end_a > start_a) & (ex1_a > ex0_a)
        # every piece computed (the usual case): the columns are taken whole, not gathered
        every_kept = bool(computed.all())
    keep = np.arange(n) if every_kept else np.flatnonzero(computed)
    if not keep.size:
        return None
    # ``grp`` numbers each kept piece's plan, ``uplans`` the plans in that numbering
    grp, uplans = _plans_numbered(plans if every_kept else [plans[i] for i in keep.tolist()])
    cum_parts = [p.cum_s for p in uplans]
    lens = np.fromiter(map(len, cum_parts), dtype=np.int64, count=len(cum_parts))
    offs = np.cumsum(lens) - lens  # each plan's offset in cum_all (its steps + 1 entries)
    cum_all = np.concatenate(cum_parts)
    ex0 = ex0_a if every_kept else ex0_a[keep]
    ex1 = ex1_a if every_kept else ex1_a[keep]
    # Each piece's first and last step in its own plan's prefix sums, all at once: the plans'
    # entries as complex numbers (plan number, prefix sum), which NumPy orders
    # lexicographically, so one ``searchsorted`` over them is, for a piece, the search of its
    # own plan (exact: no arithmetic on the values) offset by the plans before it. Most pieces
    # start at 0 or end at their plan's total: those two searches are made once per plan.
    keys = np.empty(len(cum_all), dtype=np.complex128)
    keys.real = np.repeat(np.arange(len(lens), dtype=np.float64), lens)
    keys.imag = cum_all
    ends = cum_all[offs + lens - 1]
    c_off = offs[grp]
    every = np.arange(len(lens))
    s0 = (_search(keys, every, 0.0, "right") - offs - 1)[grp]
    s1 = (_search(keys, every, ends, "left") - offs)[grp]
    odd = np.flatnonzero(ex0 != 0.0)
    if odd.size:
        s0[odd] = _find(keys, cum_parts, offs, grp[odd], ex0[odd], "right") - c_off[odd] - 1
    odd = np.flatnonzero(ex1 != ends[grp])
    if odd.size:
        s1[odd] = _find(keys, cum_parts, offs, grp[odd], ex1[odd], "left") - c_off[odd]
    steps = (lens - 1)[grp]
    # the steps' watts by the bound that opens them (a plan's last bound opens none: 0 W),
    # as each plan's ``power_w`` (energy / latency, 0 where a step takes no time) in one
    # division over every plan
    lat_parts: list[npt.NDArray[np.float64]] = []
    e_parts: list[npt.NDArray[np.float64]] = []
    for p in uplans:
        lat_parts += (p.latency_s, _ZERO)
        e_parts += (p.energy_j, _ZERO)
    lat_all = np.concatenate(lat_parts)
    pw_all = np.zeros_like(lat_all)
    np.divide(np.concatenate(e_parts), lat_all, out=pw_all, where=lat_all > 0.0)
    offsets = offs
    both = np.empty(len(cum_all), dtype=np.complex128)
    both.real = cum_all
    both.imag = pw_all
    s0 = np.maximum(s0, 0)
    s1 = np.minimum(np.maximum(s1, s0 + 1), steps)
    ok = s1 > s0
    if not ok.all():
        keep, s0, s1, c_off = keep[ok], s0[ok], s1[ok], c_off[ok]
        ex0, ex1 = ex0[ok], ex1[ok]
        every_kept = False
        if not keep.size:
            return None
    if every_kept:
        rate = rate_a
    else:
        start_a, end_a, rate = start_a[keep], end_a[keep], rate_a[keep]
    return _Table(
        start_a,
        end_a,
        ex0,
        ex1,
        rate,
        s0,
        s1 - s0,
        c_off,
        cum_all,
        pw_all,
        offsets,
        both,
        bool(ex0.any()),
        bool((rate == 1.0).all()),
    )


_OBJECT_EQ = object.__eq__


def _plans_numbered(plans: Sequence[Any]) -> tuple[npt.NDArray[np.int64], list[Any]]:
    """Each piece's plan number (the plans numbered in the order they first appear) and the
    plans in that order.

    The plans are the keys of one ``dict`` (their identity hashes: a C-level look-up per
    piece, and each piece's number a small cached ``int``), where an ``id`` per piece sorted
    by a stable ``argsort`` made a large ``int`` per piece and a sort (about 1.5x the
    instructions). Plans that compare by value (a type with its own ``__eq__``), or that are
    unhashable, are numbered by identity instead (:func:`_plans_numbered_by_id`): two equal
    plans must not share a number. Which number a plan gets changes no value of the table:
    every search and every watt is of the piece's own plan's entries."""
    n = len(plans)
    try:
        number = dict.fromkeys(plans)
    except TypeError:
        return _plans_numbered_by_id(plans)
    uplans = list(number)
    if not all(type(p).__eq__ is _OBJECT_EQ for p in uplans):
        return _plans_numbered_by_id(plans)
    if len(uplans) <= 1:  # (``itemgetter`` of one key returns the value, not a tuple)
        return np.zeros(n, dtype=np.int64), uplans
    number = dict(zip(uplans, range(len(uplans)), strict=True))
    # the numbers as C int64s in one call (``struct``), as the float columns are packed
    return np.frombuffer(pack(f"{n}q", *itemgetter(*plans)(number)), np.int64), uplans


def _plans_numbered_by_id(plans: Sequence[Any]) -> tuple[npt.NDArray[np.int64], list[Any]]:
    """:func:`_plans_numbered` by each plan's ``id`` (in the order of the ids; a stable sort
    keeps each plan's pieces in order, its first piece first)."""
    pid = np.fromiter(map(id, plans), dtype=np.int64, count=len(plans))
    by_plan = np.argsort(pid, kind="stable")
    pid_sorted = pid[by_plan]
    opens = np.r_[True, pid_sorted[1:] != pid_sorted[:-1]]
    grp = np.empty(len(plans), dtype=np.int64)
    grp[by_plan] = np.cumsum(opens) - 1
    return grp, [plans[i] for i in by_plan[opens].tolist()]


def _search(
    keys: npt.NDArray[np.complex128], plan: npt.NDArray[Any], x: Any, side: Any
) -> npt.NDArray[np.int64]:
    """``searchsorted`` of each value of ``x`` in the entries of plan ``plan[i]`` among
    ``keys`` (complex: plan number, prefix sum), as an index into ``keys``."""
    at = np.empty(len(plan), dtype=np.complex128)
    at.real = plan
    at.imag = x
    return np.searchsorted(keys, at, side=side)


#: Above this many searches per plan, :func:`_find` searches each plan's own prefix sums
#: (float comparisons, about half the cost of the complex ones per search).
_PER_PLAN = 64


def _find(
    keys: npt.NDArray[np.complex128],
    cum_parts: list[npt.NDArray[np.float64]],
    offs: npt.NDArray[np.int64],
    plan: npt.NDArray[np.int64],
    x: npt.NDArray[np.float64],
    side: Any,
) -> npt.NDArray[np.int64]:
    """:func:`_search` of ``x`` (value ``i`` in plan ``plan[i]``), or, with many values per
    plan (round-robin's slices), one float ``searchsorted`` per plan over its own prefix sums
    plus its offset ``offs``: the same indices."""
    if len(x) <= _PER_PLAN * len(cum_parts):
        return _search(keys, plan, x, side)
    out = np.empty(len(x), dtype=np.int64)
    by = np.argsort(plan, kind="stable")
    cuts = np.searchsorted(plan[by], np.arange(len(cum_parts) + 1)).tolist()
    for u, cum in enumerate(cum_parts):
        sel = by[cuts[u] : cuts[u + 1]]
        if sel.size:
            out[sel] = np.searchsorted(cum, x[sel], side=side) + offs[u]
    return out


def _bounds(
    tab: _Table, lo: int, hi: int
) -> tuple[
    npt.NDArray[np.float64],
    npt.NDArray[np.float64],
    npt.NDArray[np.int64],
    npt.NDArray[np.int64],
    npt.NDArray[np.int64],
]:
    """Pieces ``lo:hi``'s bounds as times ``t``, the watts ``rise`` of the step each bound
    opens, and each piece's first and last bound and step count (indices local to the block).

    Bounds: piece i's ``cum[s0 : s1 + 1]``, clipped to its work, as times
    ``start + (clip(cum, exec0, exec1) - exec0) / rate``. Only the first and the last bound
    can be clipped: ``s0`` is the last step start at or before ``exec0`` and ``s1`` the first
    step end at or after ``exec1``, so the bounds between lie strictly inside the work and are
    taken as they are (the same float operations, in place; ``- 0.0`` and ``/ 1.0``, which
    change no bit, are skipped where every piece has them). The first bound is computed as
    the reference does, the last is the piece's end. Watts: piece i's ``power_w[s0:s1] *
    rate``, by the bound that opens each step (a piece's last bound opens none: 0 W)."""
    start, end = tab.start[lo:hi], tab.end[lo:hi]
    ex0, ex1, rate = tab.ex0[lo:hi], tab.ex1[lo:hi], tab.rate[lo:hi]
    s0, m, c_off = tab.s0[lo:hi], tab.m[lo:hi], tab.c_off[lo:hi]
    nb = m + 1  # bounds per piece
    b_first = np.cumsum(nb) - nb
    b_last = b_first + m
    at = _runs(c_off + s0, nb)  # each bound's entry in cum_all and pw_all
    # ``take``, not ``cum_all[at]``: the same values; NumPy's take is a tighter loop than the
    # indexing's iterator (about 13 instructions an entry against 17). The prefix sum and the
    # watts of a bound are gathered together as one 16-byte entry of ``both`` (one take, then
    # two strided copies, where two takes cost about twice the one)
    got = tab.both.take(at)
    t = got.real.copy()
    if tab.any_ex0:
        t -= np.repeat(ex0, nb)
    if not tab.unit:
        t /= np.repeat(rate, nb)
    t += np.repeat(start, nb)
    t[b_first] = start + (np.clip(tab.cum_all[c_off + s0], ex0, ex1) - ex0) / rate
    t[b_last] = end
    rise = got.imag.copy()
    rise[b_last] = 0.0
    if not tab.unit:
        rise *= np.repeat(rate, nb)
    return t, rise, b_first, b_last, m


def _blocks_in_order(tab: _Table, *, peak: bool) -> Any:
    """The timeline of pieces that follow one another in time, over blocks of about
    :data:`_BLOCK_BOUNDS` bounds (whole pieces): one job computes at a time, so the level from
    a bound to the next is exactly the watts of the step that bound opens (``rise``; 0 W after
    a piece's last bound), with no running sum. ``None`` where the pieces overlap or a piece's
    bounds step back in time: the caller then sums the pieces computing (:func:`_summed_levels`).

    Returns the breakpoints and levels, or with ``peak`` the highest and lowest kept level.
    A level is kept where the next bound has another time (a step of no duration holds no
    level); a block's last bound is kept only once the next block shows it a different time."""
    if not (tab.start[1:] >= tab.end[:-1]).all():
        return None  # pieces overlap in time
    edges = _block_edges(tab.m + 1)
    times_parts: list[npt.NDArray[np.float64]] = []
    level_parts: list[npt.NDArray[np.float64]] = []
    hi = -math.inf
    lo = math.inf
    pending = math.nan  # the previous block's last kept level (peak), not yet known kept
    prev_last = math.nan
    for a, b in pairwise(edges):
        t, rise, _, _, _ = _bounds(tab, a, b)
        if not (t[1:] >= t[:-1]).all():
            return None
        if prev_last == prev_last:
            if not t[0] >= prev_last:
                return None
            if t[0] == prev_last:  # the previous block's last bound is not kept
                if peak:
                    pending = math.nan
                else:
                    times_parts[-1] = times_parts[-1][:-1]
                    level_parts[-1] = level_parts[-1][:-1]
        last = np.r_[t[1:] != t[:-1], True]
        kept = rise[last]
        if peak:
            if pending == pending:
                hi, lo = max(hi, pending), min(lo, pending)
            pending = float(kept[-1])
            if len(kept) > 1:
                hi = max(hi, float(kept[:-1].max()))
                lo = min(lo, float(kept[:-1].min()))
        else:
            times_parts.append(t[last])
            level_parts.append(kept)
        prev_last = float(t[-1])
    if peak:
        return max(hi, pending), min(lo, pending)
    return np.concatenate(times_parts), np.concatenate(level_parts)


#: The largest table (entries of every plan's watts) the peak's range maxima are taken from by
#: a sparse table (``log2`` levels of it); above, the covered steps are gathered instead.
_SPARSE_MAX = 1 << 14


def _peak_in_order(tab: _Table) -> float | None:
    """:func:`peak_piece_power_w` where the pieces follow one another in time (the highest
    kept level of ``_blocks_in_order(tab, peak=True)``, the same bits) from one entry per
    piece, without the bounds of its interior steps; or ``None`` (the caller then asks
    :func:`_blocks_in_order`).

    The levels are the steps' watts times the piece's rate (and 0 W between pieces and after
    the last), so the peak is the highest over the pieces of the highest watts of the steps
    each piece holds for some time, times its rate (``rate > 0``: rounding is monotonic, so
    the highest product is the product of the highest). Where every plan's smallest step is
    far above the rounding error of a bound's three operations (:func:`_interior_apart`), a
    piece's interior steps all last, and only its first and last step can last no time: the
    first two and last two bounds of each piece are computed and compared (arrays of one entry
    per piece). The interior steps' highest watts is a range maximum over the plans' watts (a
    sparse table of them, or the steps gathered where the plans are many). Returns ``None``
    where pieces overlap, bounds step back, the steps are too close, or some watts are
    negative or the peak is under 1e-9 W (the near-zero rule could then zero a level)."""
    start, end = tab.start, tab.end
    if not (start[1:] >= end[:-1]).all() or not _interior_apart(tab):
        return None
    pw = tab.pw_all
    if pw.size and float(pw.min()) < 0.0:
        return None
    ex0, ex1, rate, s0, m, c_off = tab.ex0, tab.ex1, tab.rate, tab.s0, tab.m, tab.c_off
    cum_all = tab.cum_all
    first = c_off + s0

    def interior(j: npt.NDArray[np.int64]) -> npt.NDArray[np.float64]:
        # the interior bounds' float operations of :func:`_bounds`, in its order
        t = cum_all[first + j]
        if tab.any_ex0:
            t = t - ex0
        if not tab.unit:
            t = t / rate
        return t + start

    t_f = start + (np.clip(cum_all[first], ex0, ex1) - ex0) / rate
    one = m == 1
    t_f1 = np.where(one, end, interior(np.minimum(m, 1)))  # the bound after the first
    t_l1 = np.where(one, t_f, interior(m - 1))  # the bound before the last
    # the bounds never step back (the pairs the proof does not cover)
    if not ((t_f1 >= t_f).all() and (end >= t_l1).all() and (t_f[1:] >= end[:-1]).all()):
        return None
    # the first step lasts unless its closing bound has its opening bound's time; the last
    # (for pieces of two steps or more) unless the piece's end has the bound before's
    best = np.where(t_f1 != t_f, pw[first], -math.inf)
    last_ok = ~one & (end != t_l1)
    best = np.maximum(best, np.where(last_ok, pw[first + m - 1], -math.inf))
    inner = np.flatnonzero(m >= 3)
    if inner.size:
        best[inner] = np.maximum(best[inner], _range_max(pw, first[inner] + 1, m[inner] - 2))
    if not tab.unit:
        best = best * rate
    # 0 W holds after the last piece (and between pieces that do not touch)
    hi = max(float(best.max()), 0.0)
    # the timeline zeroes levels under 1e-9 of the largest magnitude (here the peak itself):
    # a peak that small is left to the timeline
    return hi if hi >= 1e-9 else None


def _range_max(
    values: npt.NDArray[np.float64], lo: npt.NDArray[np.int64], count: npt.NDArray[np.int64]
) -> npt.NDArray[np.float64]:
    """``[values[l : l + c].max() for l, c in zip(lo, count)]`` (every count >= 1): from a
    sparse table of ``values`` (the maxima of every run of ``2**k`` entries) where it is small,
    else by gathering every run and reducing it."""
    n = len(values)
    if n <= _SPARSE_MAX:
        k = np.zeros(len(count), dtype=np.int64)
        # k = floor(log2(count)) in integers: the runs of 2**k entries that cover the range
        top = int(count.max())
        levels = top.bit_length()
        # level ``j``'s maxima in row ``j`` of one table (its entries past ``n - 2**j`` are
        # never read: a range of level ``j`` starts at most ``2**j`` entries before its end)
        table = np.empty((levels, n))
        table[0] = values
        span = 1
        for j in range(1, levels):
            prev = table[j - 1]
            np.maximum(prev[: n - span], prev[span:n], out=table[j, : n - span])
            k += count >= 2 * span
            span *= 2
        # every range's two runs gathered from the flat table at once (no pass per level)
        flat = table.reshape(-1)
        at = k * n + lo
        return np.maximum(flat.take(at), flat.take(at + count - np.left_shift(1, k)))
    idx = _runs(lo, count)
    return np.maximum.reduceat(values[idx], np.cumsum(count) - count)


def _block_edges(nb: npt.NDArray[np.int64]) -> list[int]:
    """Piece indices that cut pieces with ``nb`` bounds each into blocks of about
    :data:`_BLOCK_BOUNDS` bounds (whole pieces; ``[0, ..., len(nb)]``)."""
    total = np.cumsum(nb)
    cuts = np.searchsorted(total, np.arange(_BLOCK_BOUNDS, int(total[-1]), _BLOCK_BOUNDS))
    return [0, *sorted(set((cuts + 1).tolist()) - {0, len(nb)}), len(nb)]


#: Interior bounds count as apart when every step exceeds this many times the largest
#: rounding error of ``start + (cum - exec0) / rate`` (a safety factor over the bound).
_APART = 16.0


def _interior_apart(tab: _Table) -> bool:
    """Whether consecutive interior bounds of every piece are strictly increasing, proved from
    the plans' smallest step: each of the three roundings of ``start + (cum - exec0) / rate``
    errs by at most half an ulp of a value of magnitude at most ``X / r_min + S`` (``X`` the
    largest prefix sum or ``exec0``, ``S`` the largest start), so two bounds whose prefix sums
    differ by ``g`` differ by at least ``g / r_max - 3 eps (X / r_min + S)``."""
    cum = tab.cum_all
    gaps = np.diff(cum)
    # a plan's entries start at its offset (its first prefix sum, 0): no gap across plans
    gaps[tab.offsets[1:] - 1] = np.inf
    g = float(gaps.min()) if gaps.size else math.inf
    x = max(float(np.abs(cum).max()), float(np.abs(tab.ex0).max()))
    r_min, r_max = float(tab.rate.min()), float(tab.rate.max())
    if not (r_min > 0.0 and math.isfinite(x) and math.isfinite(r_max)):
        return False
    s = float(np.abs(tab.start).max())
    eps = np.finfo(np.float64).eps
    return bool(g / r_max > _APART * eps * (x / r_min + s))


def _runs(first: npt.NDArray[np.int64], count: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    """``concatenate([arange(f, f + c) for f, c in zip(first, count)])`` (every count >= 1)
    as one running sum of +1 steps that jumps at each run's start."""
    step = np.ones(int(count.sum()), dtype=np.int64)
    starts = np.cumsum(count) - count
    step[0] = first[0]
    step[starts[1:]] = first[1:] - (first[:-1] + count[:-1] - 1)
    return np.cumsum(step)


def _summed_levels(
    tab: _Table, extra: npt.NDArray[np.float64] | None = None
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """The timeline of pieces that may overlap: the distinct bound times (and ``extra``
    times) in order, and at each the sum of the watts of the step each piece computing then
    holds, added in the pieces' order from 0 W (before the near-zero rule).

    Piece ``i`` computes on ``[start, end)``: from its bound ``j`` to its bound ``j + 1`` it
    draws ``rise[j]`` (its step's watts times its rate), so at time ``tau`` it draws the
    ``rise`` of its last bound at or before ``tau`` (nothing at or after its last bound, its
    end). Bounds come from :func:`_bounds` (the first is the start, the last the end); where
    rounding puts an interior bound before the one before it or past the end (a step of a few
    units in the last place), the piece's bounds are taken as their running maximum capped
    at the end: that step holds for no time.

    Each step adds its watts to the distinct times from its opening bound's up to (not
    including) its closing bound's: one ``(time, watts)`` pair per piece and distinct time it
    computes at, laid out piece by piece, summed per time by ``numpy.bincount`` (which adds in
    the input's order, so each level is its pieces' watts added in the pieces' order).
    Where pieces follow one another at most one piece computes at a time and each level is
    that piece's watts, as :func:`_blocks_in_order` gives it."""
    t, rise, b_first, b_last, _ = _bounds(tab, 0, len(tab.start))
    if len(t) > 1:
        back = np.flatnonzero(~(t[1:] >= t[:-1]))
        if back.size:
            piece = np.searchsorted(b_first, back, side="right") - 1
            inside = back != b_last[piece]  # a pair across two pieces may step back
            for i in np.unique(piece[inside]).tolist():
                a, b = int(b_first[i]), int(b_last[i]) + 1
                np.minimum(np.maximum.accumulate(t[a:b]), t[b - 1], out=t[a:b])
    every = t if extra is None else np.concatenate([t, extra])
    order = np.argsort(every, kind="stable")
    ordered = every.take(order)
    opens = np.empty(len(ordered), dtype=bool)
    opens[0] = True
    np.not_equal(ordered[1:], ordered[:-1], out=opens[1:])
    times = ordered[opens]
    at = np.empty(len(every), dtype=np.int64)  # each bound's index among the distinct times
    at[order] = np.cumsum(opens) - 1
    steps = np.ones(len(t), dtype=bool)
    steps[b_last] = False
    j = np.flatnonzero(steps)  # the bounds that open a step
    lo = at[j]
    span = at[j + 1] - lo
    held = span > 0
    if not held.any():
        return times, np.zeros(len(times))
    lo, span = lo[held], span[held]
    level = np.bincount(
        _runs(lo, span), weights=np.repeat(rise[j[held]], span), minlength=len(times)
    )
    return times, cast("npt.NDArray[np.float64]", level)


def _summed_peak(cols: _Columns, keep: npt.NDArray[np.int64]) -> float | None:
    """:func:`peak_piece_power_w` where pieces overlap (pieces ``keep`` of ``cols``, those
    that compute): the highest level of :func:`_summed_levels` (the same bits), computed only
    over the stretches of time whose level could be the highest; ``None`` where a step draws
    negative watts or the peak is under 1e-9 W (the near-zero rule could then change it: the
    caller builds the timeline).

    The pieces' starts and ends cut the run into stretches with one set of pieces computing.
    In a stretch no level exceeds the sum over those pieces of their plan's highest watts
    times their rate (float addition and multiplication by a positive rate are monotonic),
    taken as a running sum over the starts and ends and padded by a bound on its rounding.
    The levels of the stretch with the highest such bound are computed first; then those of
    every stretch whose bound reaches the highest level found, from the pieces computing in
    them (the other pieces draw nothing there, so each level is the same sum in the same
    order as over all pieces; see :func:`_stretches_peak`). On the bench's Planaria run that
    is 64 of 4,538 stretches and 1,920 of 122,340 bounds, and the table of bounds is built for
    those 64 pieces only."""
    if not keep.size:
        return 0.0
    plans = cols.plans
    whole = len(keep) == len(plans)  # every piece computes (the usual case): no gathers
    kept_plans = plans if whole else [plans[i] for i in keep.tolist()]
    grp, uplans = _plans_numbered(kept_plans)
    top_low = np.array([_watts_range(p) for p in uplans])
    if not top_low.size or not (top_low[:, 1] >= 0.0).all():  # (a NaN fails too)
        return None
    top = top_low[:, 0]
    if not top.any():
        return 0.0  # every level is a sum of zeros
    if whole:
        start, end, rate = cols.start, cols.end, cols.rate
    else:
        start, end, rate = cols.start[keep], cols.end[keep], cols.rate[keep]
    most = top[grp] * rate
    n = len(start)
    at_t = np.concatenate([start, end])
    order = np.argsort(at_t, kind="stable")
    cut_t = at_t.take(order)
    bound = np.cumsum(np.concatenate([most, -most]).take(order))
    last = np.empty(2 * n, dtype=bool)
    np.not_equal(cut_t[1:], cut_t[:-1], out=last[:-1])
    last[-1] = True
    cuts = cut_t[last]  # stretch k: [cuts[k], cuts[k + 1]); nothing computes after the last
    bound = bound[last][:-1]
    # the running sum's rounding: each of its 2n additions errs by at most an ulp of a
    # partial sum, and every partial sum is at most the sum of ``most``
    bound = bound + 4.0 * (2 * n + 1) * float(np.finfo(np.float64).eps) * float(most.sum())
    first = int(np.argmax(bound))
    best = _stretches_peak(cols, keep, start, end, cuts, np.array([first]))
    every = np.flatnonzero(bound >= best)
    if len(every) > 1:
        best = max(best, _stretches_peak(cols, keep, start, end, cuts, every))
    best = max(best, 0.0)  # 0 W after the last piece
    return best if best >= 1e-9 else None


def _watts_range(plan: Any) -> tuple[float, float]:
    """The highest and lowest watts of ``plan``'s steps (its ``power_w`` as :func:`_table`
    computes it), memoised per plan object (a plan is immutable; the entry keeps the plan
    alive, so its ``id`` is not reused while the entry exists, and is checked by identity).
    ``(nan, nan)`` for a plan with no steps (then no bound is known)."""
    key = id(plan)
    hit = _WATTS_RANGE.get(key)
    if hit is not None and hit[0] is plan:
        return hit[1]
    lat = np.asarray(plan.latency_s, dtype=np.float64)
    if lat.size:
        pw = np.zeros_like(lat)
        np.divide(np.asarray(plan.energy_j, dtype=np.float64), lat, out=pw, where=lat > 0.0)
        got = (float(pw.max()), float(pw.min()))
    else:
        got = (math.nan, math.nan)
    if len(_WATTS_RANGE) >= _WATTS_RANGE_MAX:
        _WATTS_RANGE.clear()
    _WATTS_RANGE[key] = (plan, got)
    return got


#: :func:`_watts_range`'s memo: per plan ``id``, the plan and its highest and lowest watts.
_WATTS_RANGE: dict[int, tuple[Any, tuple[float, float]]] = {}
_WATTS_RANGE_MAX = 4096


def _stretches_peak(
    cols: _Columns,
    keep: npt.NDArray[np.int64],
    start: npt.NDArray[np.float64],
    end: npt.NDArray[np.float64],
    cuts: npt.NDArray[np.float64],
    which: npt.NDArray[np.int64],
) -> float:
    """The highest level of :func:`_summed_levels` at the times in stretches ``which``
    (``[cuts[k], cuts[k + 1])``, in order), from pieces ``keep`` of ``cols`` (their starts
    ``start`` and ends ``end``) computing in them.

    Each level there is its time's sum over the pieces computing then, in the pieces' order,
    so the pieces that compute in none of the stretches change none of them. The stretches'
    starts are added as times (each is a start or an end of some piece, so a time of the
    whole timeline; a piece ending there is not among those computing in the stretch). Any
    other time of the subset's timeline in a stretch is a bound of a piece computing there,
    and its level a level of the whole timeline."""
    lo_t = cuts[which]
    hi_t = cuts[which + 1]
    # a piece computes in some stretch if it starts before the stretch's end and ends after
    # its start; the first stretch ending after the piece's start is the one to test
    k = np.searchsorted(hi_t, start, side="right")
    inside = k < len(lo_t)
    inside[inside] = lo_t[k[inside]] < end[inside]
    sel = keep[inside]
    plans = cols.plans
    sub = _table_of(
        _Columns(
            cols.start[sel],
            cols.end[sel],
            cols.ex0[sel],
            cols.ex1[sel],
            cols.rate[sel],
            [plans[i] for i in sel.tolist()],
        )
    )
    if sub is None:
        return 0.0
    times, level = _summed_levels(sub, lo_t)
    k = np.searchsorted(lo_t, times, side="right") - 1
    kept = (k >= 0) & (times < hi_t[np.maximum(k, 0)])
    return float(level[kept].max()) if kept.any() else 0.0


_SEG_START = attrgetter("start_s")
_SEG_END = attrgetter("end_s")
_SEG_UNITS = attrgetter("units")


def machine_power_timeline(
    result: Any, machine: Any
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """``(times_s, watts)``: the machine's total power, piecewise constant (``watts[i]`` holds
    on ``[times_s[i], times_s[i+1])``), from time 0 to the run's end, then 0.

    Args:
        result: a :class:`~npusched.sim.engine.SimResult` run with ``record_power=True`` and
            ``record_timeline=True`` (the ``run`` segments tell which units compute).
        machine: the :class:`~npusched.sim.resources.Machine` it ran on (capacities and idle
            powers).

    Raises:
        ConfigError: if the power or the timeline was not recorded.
    """
    # a result's recorded columns, or any ``power`` list of pieces
    pieces = getattr(result, "power_columns", None)
    if pieces is None:
        pieces = result.power
    if pieces is None or result.timeline is None:
        raise ConfigError("machine power needs record_power=True and record_timeline=True")
    tp, wp = piece_power_timeline(pieces)
    end = float(result.end_s)
    # The ``run`` segments as columns (one pass over the timeline), then per resource their
    # bounds and idle-power deltas as arrays: resource by resource, each in timeline order with a
    # segment's start before its end (the order the stable sort and the running sum below see,
    # so the sums are the loop's bits).
    tl = result.timeline
    parts_t: list[npt.NDArray[np.float64]] = []
    parts_d: list[npt.NDArray[np.float64]] = []
    idle_total = 0.0
    cols: Any = None
    for res in machine.resources:
        idle = float(res.idle_power_w)
        idle_total += idle
        if idle == 0.0 or not tl:
            continue
        if cols is None:  # the ``run`` segments' fields as columns, once
            runs = [s for s in tl if s.kind == "run" and s.end_s > s.start_s]
            n_runs = len(runs)
            cols = (
                np.fromiter(map(_SEG_START, runs), np.float64, n_runs),
                np.fromiter(map(_SEG_END, runs), np.float64, n_runs),
                np.fromiter(map(_SEG_UNITS, runs), np.float64, n_runs),
                np.array([s.resource for s in runs], dtype=object),
            )
        seg_start, seg_end, units, where = cols
        mine = where == res.name
        if not mine.any():
            continue
        per_unit = idle / res.capacity
        # ``per_unit * units`` in doubles, as the loop over segments computed it
        d = per_unit * units[mine]
        parts_t.append(np.column_stack([seg_start[mine], seg_end[mine]]).ravel())
        parts_d.append(np.column_stack([-d, d]).ravel())
    starts = np.concatenate(parts_t) if parts_t else np.empty(0)
    grid = np.unique(np.concatenate([tp, starts, [0.0, end]]))
    grid = grid[(grid >= 0.0) & (grid <= end)]
    # jobs' power at each breakpoint (right-continuous)
    k = np.searchsorted(tp, grid, side="right") - 1
    jobs = np.where(k >= 0, wp[np.maximum(k, 0)], 0.0)
    # idle power of the units not computing
    if starts.size:
        order = np.argsort(starts, kind="stable")
        t = starts[order]
        cum = np.cumsum(np.concatenate(parts_d)[order])
        j = np.searchsorted(t, grid, side="right") - 1
        idle_now = idle_total + np.where(j >= 0, cum[np.maximum(j, 0)], 0.0)
    else:
        idle_now = np.full(grid.shape, idle_total)
    watts = jobs + idle_now
    watts[-1] = 0.0  # after the end
    return grid, watts


def peak_machine_power_w(result: Any, machine: Any) -> float:
    """The highest total power of :func:`machine_power_timeline` (W)."""
    _, w = machine_power_timeline(result, machine)
    return float(w.max()) if w.size else 0.0
