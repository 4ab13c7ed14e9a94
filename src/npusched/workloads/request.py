"""Inference requests: what arrives at the accelerator."""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import repeat
from typing import Any

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
