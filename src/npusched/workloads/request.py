"""Inference requests: what arrives at the accelerator."""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import repeat
from typing import Any

import numpy as np
import numpy.typing as npt

# PREMA's three user-defined priority levels; the values are also the initial tokens (Table II)
# and the weights of the fairness metric (Eq. 2).
PRIORITY_LEVELS: dict[str, int] = {"low": 1, "medium": 3, "high": 9}


@dataclass(frozen=True, slots=True)
class Request:
    """One inference request (a batch of ``batch`` samples of one network).

    Attributes:
        id: unique, dense from 0 in arrival order.
        arrival_s: dispatch time in seconds.
        network: zoo / profile name.
        batch: batch size (samples).
        priority: user-defined priority, larger = more important (PREMA: 1/3/9; Planaria 1-11).
        slo_s: latency target in seconds (``None``: no SLO).
        seq_in: input sequence length (recurrent networks), ``None`` for CNNs.
        seq_out: actual output sequence length (recurrent networks; the predictor does not see it).
        exit: index of the early exit (into the plan's ``exits``) at which this sample leaves;
            ``None`` runs to the end.
        depends_on: id of a request that must finish first (pipelines); ``None`` if none.
        transfer_s: seconds between the finish of ``depends_on`` and this request's dispatch
            (the hand-over of its input); the request is dispatched at
            ``max(arrival_s, finish of depends_on + transfer_s)``.
    """

    id: int
    arrival_s: float
    network: str
    batch: int = 1
    priority: int = 1
    slo_s: float | None = None
    seq_in: int | None = None
    seq_out: int | None = None
    exit: int | None = None
    depends_on: int | None = None
    transfer_s: float = 0.0


def _slot_setters() -> tuple[list[Any], list[tuple[Any, Any]]]:
    """The slot setters of :class:`Request`'s first eight fields (in order), and the setter
    and default of each other field: the trusted constructor of :func:`requests_from_columns`
    sets the slots through their descriptors, skipping the frozen dataclass's ``__init__``
    (eleven ``object.__setattr__`` look-ups per request)."""
    from dataclasses import fields

    names = [f.name for f in fields(Request)]
    assert names[:8] == [
        "id",
        "arrival_s",
        "network",
        "batch",
        "priority",
        "slo_s",
        "seq_in",
        "seq_out",
    ]
    defaults = [f.default for f in fields(Request)][8:]
    s = [Request.__dict__[k].__set__ for k in names]
    return s[:8], list(zip(s[8:], defaults, strict=True))


_SETTERS, _DEFAULTS = _slot_setters()


def requests_from_columns(
    arrival_s: list[float],
    network: list[str],
    batch: list[int],
    priority: list[int],
    slo_s: list[float | None],
    seq_in: list[int | None],
    seq_out: list[int | None],
) -> list[Request]:
    """Requests ``0..n-1`` from columns of plain Python values already of the fields' types
    (``float``, ``str``, ``int``, ``None``; nothing is converted or checked), the other fields
    at their defaults: equal to ``Request(i, arrival_s[i], ...)`` for every ``i``.

    Built a column at a time: the requests are made empty, then each slot is set for all of
    them by one ``map`` of its descriptor's setter (C calls only; no Python frame per request
    or per field, about 0.6x the time of a positional constructor per request)."""
    n = len(arrival_s)
    cols: tuple[Sequence[Any], ...] = (
        range(n),
        arrival_s,
        network,
        batch,
        priority,
        slo_s,
        seq_in,
        seq_out,
    )
    if any(len(c) != n for c in cols):
        raise ValueError("requests_from_columns: column lengths differ")
    out = list(map(object.__new__, repeat(Request, n)))
    for setter, col in zip(_SETTERS, cols, strict=True):
        deque(map(setter, out, col), maxlen=0)
    for setter, value in _DEFAULTS:
        deque(map(setter, out, repeat(value, n)), maxlen=0)
    return out


#: The fields a :class:`RequestTable` holds as columns (the others are at their defaults).
TABLE_FIELDS = ("id", "arrival_s", "network", "batch", "priority", "slo_s", "seq_in", "seq_out")
#: The fields a :class:`RequestTable` leaves at their defaults, with those defaults.
TABLE_DEFAULTS: dict[str, Any] = {"exit": None, "depends_on": None, "transfer_s": 0.0}
#: The fields a request's shape is made of (its plan: network, batch, sequence lengths).
SHAPE_FIELDS = ("network", "batch", "seq_in", "seq_out")

#: A table's request shapes: the distinct keys in order of first appearance, and each
#: request's key number (see :meth:`RequestTable.shapes`).
Shapes = tuple[list[tuple[Any, ...]], npt.NDArray[np.intp]]


class _Numbering(dict[Any, int]):
    """Keys numbered in order of first look-up (a look-up of a known key is the dictionary's
    own, in C)."""

    def __missing__(self, key: Any) -> int:
        code = self[key] = len(self)
        return code


def number_shapes(
    network: Sequence[str],
    batch: Sequence[int],
    seq_in: Sequence[int | None],
    seq_out: Sequence[int | None],
) -> Shapes:
    """The requests' shapes ``(network, batch)`` (``(network, batch, seq_in, seq_out)`` where
    some request has a sequence length) numbered in order of first appearance: the distinct
    keys and each request's number, from one pass of dictionary look-ups."""
    n = len(network)
    no_seq = seq_in.count(None) == n and seq_out.count(None) == n
    keys = (
        zip(network, batch, strict=True)
        if no_seq
        else zip(network, batch, seq_in, seq_out, strict=True)
    )
    num = _Numbering()
    codes = np.fromiter(map(num.__getitem__, keys), dtype=np.intp, count=n)
    codes.flags.writeable = False  # kept by the table and shared with every run of it
    return list(num), codes


def number_coded_shapes(
    code: npt.NDArray[np.int64], names: Sequence[str], batch: npt.NDArray[np.int64]
) -> Shapes | None:
    """:func:`number_shapes` of requests without sequence lengths whose networks are
    ``names[code[i]]`` and batches ``batch[i]`` (ints >= 0), from the integers alone (a
    generator's draws): the same keys in the same order and the same numbers, with no key
    made per request. ``None`` where the pairs span too large a range of integers."""
    n = len(code)
    if n == 0:
        return number_shapes([], [], [], [])
    width = int(batch.max()) + 1
    span = len(names) * width
    if int(batch.min()) < 0 or span > 1 << 20:
        return None
    pair = code * width + batch
    # each pair's first request: the smallest index of the requests with that pair
    first = np.full(span, n, dtype=np.intp)
    np.minimum.at(first, pair, np.arange(n, dtype=np.intp))
    seen = np.flatnonzero(first < n)
    in_order = seen[np.argsort(first[seen], kind="stable")]
    number = np.empty(span, dtype=np.intp)
    number[in_order] = np.arange(len(in_order), dtype=np.intp)
    codes = number[pair]
    codes.flags.writeable = False
    keys: list[tuple[Any, ...]] = [
        (names[p // width], p % width) for p in in_order.tolist()
    ]
    return keys, codes


class RequestTable(Sequence[Request]):
    """Requests ``0..n-1`` held as columns of plain Python values (one list per field of
    :data:`TABLE_FIELDS`; ``exit``, ``depends_on`` and ``transfer_s`` at their defaults): a
    read-only sequence of :class:`Request` whose items are made on access
    (``table[i] == Request(i, arrival_s[i], ...)``) and whose columns the simulator reads
    directly (:meth:`column`), so a run of the workload's generators through
    :func:`npusched.experiments.runner.run_config` makes no request object.

    The columns are taken as they are (not copied, converted or checked: the values must
    already be of the fields' types, as :func:`requests_from_columns` requires) and must not
    be changed afterwards. :meth:`requests` makes the list of requests (once; it is kept).
    ``shapes``: the :meth:`shapes` of these columns where the maker knows them (the
    generators, from the draws' integer codes); not checked."""

    __slots__ = ("_cols", "_list", "_n", "_shapes")

    def __init__(
        self,
        arrival_s: list[float],
        network: list[str],
        batch: list[int],
        priority: list[int],
        slo_s: list[float | None],
        seq_in: list[int | None],
        seq_out: list[int | None],
        *,
        shapes: Shapes | None = None,
    ) -> None:
        n = len(arrival_s)
        cols: dict[str, Sequence[Any]] = {
            "id": range(n),
            "arrival_s": arrival_s,
            "network": network,
            "batch": batch,
            "priority": priority,
            "slo_s": slo_s,
            "seq_in": seq_in,
            "seq_out": seq_out,
        }
        if any(len(c) != n for c in cols.values()):
            raise ValueError("RequestTable: column lengths differ")
        self._cols = cols
        self._n = n
        self._list: list[Request] | None = None
        self._shapes = shapes

    def shapes(self) -> Shapes:
        """The requests' shapes numbered in order of first appearance (:func:`number_shapes`:
        the distinct keys ``(network, batch)``, or ``(network, batch, seq_in, seq_out)`` where
        some request has a sequence length, and each request's number), made once and kept.
        The simulator makes one plan per shape, and the runner compiles the profiles of the
        shapes, from these."""
        got = self._shapes
        if got is None:
            c = self._cols
            got = self._shapes = number_shapes(*(c[k] for k in SHAPE_FIELDS))
        return got

    def column(self, name: str) -> Sequence[Any]:
        """Field ``name`` of every request, in id order (the table's own list: read only; a
        field at its default for every request gives a ``repeat`` of it)."""
        col = self._cols.get(name)
        if col is not None:
            return col
        if name in TABLE_DEFAULTS:
            return _Repeat(TABLE_DEFAULTS[name], self._n)
        raise KeyError(name)

    def replaced(self, **columns: list[Any]) -> RequestTable:
        """A new table with the given columns (fields of :data:`TABLE_FIELDS` but ``id``)
        replaced, every other column cut to their length (requests ``0..m-1``)."""
        m = len(next(iter(columns.values()))) if columns else self._n
        c = self._cols
        new = [columns[k] if k in columns else list(c[k][:m]) for k in TABLE_FIELDS[1:]]
        # the shapes carry over where their columns do, whole
        same = m == self._n and not any(k in columns for k in SHAPE_FIELDS)
        return RequestTable(*new, shapes=self._shapes if same else None)

    def requests(self) -> list[Request]:
        """The requests as a list (made on the first call by :func:`requests_from_columns`,
        then kept)."""
        if self._list is None:
            c = self._cols
            self._list = requests_from_columns(
                *(c[k] for k in TABLE_FIELDS[1:])  # type: ignore[arg-type]
            )
        return self._list

    def __len__(self) -> int:
        return self._n

    def __getitem__(self, i: Any) -> Any:
        if self._list is not None or isinstance(i, slice):
            return self.requests()[i]
        if i < 0:
            i += self._n
        if not 0 <= i < self._n:
            raise IndexError("RequestTable index out of range")
        # one request as :func:`requests_from_columns` makes them (its slots set through their
        # descriptors: about a third of the frozen dataclass's ``__init__``); the general loop
        # makes a job's request this way where a policy reads it
        c = self._cols
        r = object.__new__(Request)
        for setter, k in zip(_SETTERS, TABLE_FIELDS, strict=True):
            setter(r, c[k][i])
        for setter, value in _DEFAULTS:
            setter(r, value)
        return r

    def __iter__(self) -> Any:
        return iter(self.requests())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, RequestTable | list | tuple):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"RequestTable({self._n} requests)"


class _Repeat(Sequence[Any]):
    """``n`` times ``value`` as a sequence (a defaulted column of a :class:`RequestTable`)."""

    __slots__ = ("n", "value")

    def __init__(self, value: Any, n: int) -> None:
        self.value = value
        self.n = n

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            return [self.value] * len(range(*i.indices(self.n)))
        if not -self.n <= i < self.n:
            raise IndexError("index out of range")
        return self.value

    def __iter__(self) -> Any:
        return repeat(self.value, self.n)

    def count(self, value: Any) -> int:
        return self.n if value == self.value or value is self.value else 0
