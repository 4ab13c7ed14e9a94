"""Metrics over per-request records: ANTT, STP, fairness, SLA rates, percentiles, throughput at
SLA, utilisation (definitions in :mod:`npusched.metrics.core`), and records on disk."""

from npusched.metrics import core
from npusched.metrics.core import *  # noqa: F403  (the public names are core.__all__)
from npusched.metrics.records import read_records, write_records

__all__ = ["read_records", "write_records"]
__all__ += core.__all__
