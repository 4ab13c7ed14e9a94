"""Inference requests: what arrives at the accelerator."""

from __future__ import annotations

from dataclasses import dataclass
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


def _trusted_maker() -> Any:
    """A positional constructor of :class:`Request` that skips the frozen dataclass's
    ``__init__`` (eleven ``object.__setattr__`` look-ups per request): the slots are set
    through their descriptors, the last three fields to their defaults. For columns already
    converted to the fields' types (:func:`requests_from_columns`); about 2x faster."""
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
    s_id, s_arr, s_net, s_b, s_p, s_slo, s_in, s_out = s[:8]
    rest = list(zip(s[8:], defaults, strict=True))
    new = object.__new__

    def make(i: int, a: float, net: str, b: int, p: int, slo: Any, si: Any, so: Any) -> Request:
        r = new(Request)
        s_id(r, i)
        s_arr(r, a)
        s_net(r, net)
        s_b(r, b)
        s_p(r, p)
        s_slo(r, slo)
        s_in(r, si)
        s_out(r, so)
        for setter, value in rest:
            setter(r, value)
        return r

    return make


_make = _trusted_maker()


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
    at their defaults: equal to ``Request(i, arrival_s[i], ...)`` for every ``i``."""
    return list(
        map(
            _make,
            range(len(arrival_s)),
            arrival_s,
            network,
            batch,
            priority,
            slo_s,
            seq_in,
            seq_out,
        )
    )
