"""Inference requests: what arrives at the accelerator."""

from __future__ import annotations

from dataclasses import dataclass

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
