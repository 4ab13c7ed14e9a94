"""The per-request result columns, written once (twenty-third round).

The engine's loop keeps what a request's row of the result holds (its estimate, first start,
finish, preemptions, checkpoint bytes and seconds, work lost to KILL, joules and resource) in
its own storage while it runs, and hands it to :func:`write_records` once the loop is over; the
writer
makes the run's result columns (``col_est``, ``col_first``, ``col_finish``, ``col_preempt``,
``col_cbytes``, ``col_cs``, ``col_wasted``, ``col_energy``, ``col_res``), which
:meth:`~npusched.sim.engine._Run._result` turns into the :class:`~npusched.sim.engine.SimResult`.

The loop (:class:`~npusched.sim.engine._Run`) hands its columns by result row, written through
``_record`` (a finished job's rows; the partial records of the jobs in flight at ``until``) and
``_add_energy`` (a batch's joules shared among its samples) (``by_row`` None): ``vec`` columns
(:func:`float_column`, :func:`int_column`: ``librt.vecs``, packed C doubles and int64s written
unboxed by the compiled loop), which ``_Run._write_records`` copies into arrays through their
buffers (one ``memcpy`` a column, one column at a time) and the writer keeps; it makes the
resource column from the names written per row. The writer also takes ``vec``s, lists (packed in one ``struct`` call each) and values by dispatch order
(``by_row`` the run's ``arrival_rows``, each value's result row), with only the ``touched``
requests' counts nonzero, as the column loop (``sim/columns.py``, deleted in the twenty-eighth
round) handed them; the engine no longer does (``tests/test_records.py`` checks those forms).

The values are stored, never computed: a column holds the bits the loop wrote. This module is
listed in ``npusched.native.COMPILED_MODULES`` (it was part of the compiled ``sim/columns.py``
until the twenty-third round).
"""

from __future__ import annotations

import math
import struct
from collections.abc import Sequence
from typing import Any, Final, TypeAlias

import numpy as np
import numpy.typing as npt
from librt.vecs import vec
from mypy_extensions import i64

__all__ = ["Values", "doubles", "float_column", "int_column", "write_records"]

#: A record column as the writer takes it: the loop's ``vec`` (read through its buffer), a
#: list, a ``memoryview`` or an ``array`` of doubles or int64s (typed ``Any``: compiled, a
#: union with ``vec`` would be checked item by item at the call).
Values: TypeAlias = Any


def float_column(n: int, fill: float) -> vec[float]:
    """A record column of ``n`` doubles, each ``fill``: a ``vec[float]`` (8 bytes a value;
    compiled, an item is read and written unboxed), made from a NumPy buffer in one copy
    (``vec``'s constructor reads a ``memoryview`` as a block, an array value by value)."""
    block: Any = np.full(n, fill, dtype=np.float64)
    return vec[float](memoryview(block))


def int_column(n: int) -> vec[i64]:
    """A record column of ``n`` int64 zeros: a ``vec[i64]`` (see :func:`float_column`)."""
    block: Any = np.zeros(n, dtype=np.int64)
    return vec[i64](memoryview(block))


def doubles(vals: list[float]) -> memoryview:
    """``vals`` as C doubles (the same float64 values): one ``struct.pack`` call, several times
    cheaper per value than ``numpy.fromiter`` over the list (:func:`write_records` reads a
    ``memoryview`` with ``numpy.frombuffer``, without a copy)."""
    return memoryview(struct.pack(f"{len(vals)}d", *vals))


def _packed_list(vals: list[Any], dtype: Any) -> bytes:
    """A list of floats (``dtype`` float64) or ints (int64) as C doubles or int64s in one
    ``struct.pack`` call (see :func:`doubles`; the values ``numpy.fromiter`` would give)."""
    return struct.pack(f"{len(vals)}{'d' if dtype is np.float64 else 'q'}", *vals)


#: The record columns the engine writes only where the value is not zero (the counts and the
#: times lost) or sums from +0.0 (the energy): a list of them that holds no true value was never
#: written, and is its zeros (no ``-0.0`` can be in it).
_ZERO_UNTIL_WRITTEN: Final = frozenset(
    ("col_preempt", "col_cbytes", "col_cs", "col_wasted", "col_energy")
)


def pack_list(vals: list[Any], dtype: Any) -> npt.NDArray[Any] | None:
    """A list of Python floats (``dtype`` float64) or ints (int64) as a read-only array of C
    doubles or int64s, packed in one ``struct.pack`` call (:func:`doubles`: the values
    ``numpy.fromiter`` gives, a fraction of its time, and about half of ``array``'s); ``None``
    where ``struct`` refuses a value (a float for int64, an int beyond int64, ``None``)."""
    try:
        return np.frombuffer(_packed_list(vals, dtype), dtype=dtype)
    except (struct.error, TypeError, OverflowError):
        return None


def write_records(
    run: Any,
    by_row: Sequence[int] | None,
    est: Values | None,
    npre: Values,
    cbytes: Values,
    csec: Values,
    wasted: Values,
    *,
    first: Values | None = None,
    finish: Values | None = None,
    energy: Values | None = None,
    resource: Sequence[str] | npt.NDArray[Any] | None = None,
    touched: list[int] | None = None,
    dispatched: int | None = None,
) -> None:
    """Store a loop's per-request values as ``run``'s result columns (by result row).

    ``run``: the :class:`~npusched.sim.engine._Run` (typed ``Any``: compiled, a ``_Run``
    argument is checked to be the compiled engine's class, and the tests that watch the loop
    run the engine's interpreted source; its few attributes are read once per run).

    ``by_row``: each value's result row where the values come by dispatch order
    (``run.arrival_rows``); None: the values are by result row already (the engine's lists, or
    its ``array`` columns, kept without a copy). ``est`` None: the estimates are the isolated
    latencies (no estimator; plans without exits), copied from ``run.col_iso``. ``first`` /
    ``finish`` / ``energy`` replace the run's columns when given (None: the run's column as it
    stands, written by row during the loop). ``resource``: each value's resource name (None: the
    run's one resource, or none where the request did not finish). ``touched``: the only
    requests whose ``npre`` / ``cbytes`` / ``csec`` / ``wasted`` may be nonzero (the rest are
    written as the zeros they are). Lists become arrays through one ``struct.pack`` call, a
    ``memoryview`` of doubles without a copy (the same values). ``dispatched``: how many
    requests arrived before the run stopped (``until``; None: all): the estimates of the others
    are not known (nan), and a request that did not finish names no resource."""
    n = len(run.arrival_rows)
    rows_of: Any = None if by_row is None else np.asarray(by_row, dtype=np.int64)
    f8, i8 = np.float64, np.int64
    counts: list[tuple[str, Sequence[Any], Any]] = [
        ("col_preempt", npre, i8),
        ("col_cbytes", cbytes, i8),
        ("col_cs", csec, f8),
        ("col_wasted", wasted, f8),
    ]
    dense: list[tuple[str, Sequence[Any] | None, Any]] = [
        ("col_first", first, f8),
        ("col_finish", finish, f8),
        ("col_energy", energy, f8),
    ]
    if touched is None:
        dense.extend(counts)
    else:
        rows_t = np.asarray(touched, dtype=np.int64)
        if rows_of is not None:
            rows_t = rows_of[rows_t]
        for name, per_k, dtype in counts:
            sp: Any = np.zeros(n, dtype=dtype)
            sp[rows_t] = np.fromiter(
                map(per_k.__getitem__, touched), dtype=dtype, count=len(rows_t)
            )
            setattr(run, name, sp)
    if est is None:
        iso: Any = run.col_iso.copy()  # no estimator, no exits: the isolated latency
        if dispatched is not None and dispatched < n:
            never = np.arange(dispatched, n)
            iso[never if rows_of is None else rows_of[never]] = math.nan
        run.col_est = iso
    else:
        dense.append(("col_est", est, f8))
    for name, vals, dtype in dense:
        if vals is not None:
            col: Any
            if rows_of is None:
                if isinstance(vals, list) and name in _ZERO_UNTIL_WRITTEN and not any(vals):
                    # never written (a count or a sum, written only where it is not zero, or
                    # summed from the +0.0 it was made of): the zeros it holds
                    col = np.zeros(n, dtype=dtype)
                elif isinstance(vals, list):  # by row already: packed in one call
                    col = np.empty(n, dtype=dtype)
                    col[:] = np.frombuffer(_packed_list(vals, dtype), dtype=dtype)
                else:
                    # an array (the loop's records, each copied from its ``vec`` and let go by
                    # ``_Run._write_records``: a peak of one column) or an ``array`` is kept
                    # as it is (its buffer); a ``vec``'s read-only buffer is copied in one block
                    col = np.asarray(vals, dtype=dtype)
                    if not col.flags.writeable:
                        col = col.copy()
            else:
                col = np.empty(n, dtype=dtype)
                if isinstance(vals, memoryview):
                    col[rows_of] = np.frombuffer(vals, dtype=dtype)
                elif isinstance(vals, list):
                    # packed as C doubles / int64s in one call (the same values)
                    col[rows_of] = np.frombuffer(_packed_list(vals, dtype), dtype=dtype)
                else:  # a ``vec`` or an ``array`` (its buffer)
                    col[rows_of] = np.asarray(vals, dtype=dtype)
            setattr(run, name, col)
    col_res = np.empty(n, dtype=object)
    if resource is not None:
        if rows_of is None:
            col_res[:] = resource
        else:
            col_res[rows_of] = resource
    else:
        col_res[:] = run.res[0].name
        if dispatched is not None and (run.until != math.inf or run.dependents):
            # (a dependent request whose predecessor never finished never ran either)
            col_res[np.isnan(np.asarray(run.col_finish, dtype=np.float64))] = ""
    run.col_res = col_res
