"""Metrics over per-request records: ANTT, STP, fairness, SLA rates, percentiles, throughput at
SLA, utilisation (definitions in :mod:`npusched.metrics.core`)."""

from npusched.metrics.core import (
    PERCENTILES,
    SLA_N,
    antt,
    fairness,
    latency_percentiles,
    makespan,
    ntt,
    priority_label,
    progress_per_priority,
    sla_met,
    sla_violation_rates,
    slo_attainment,
    stp,
    summarize,
    throughput,
    throughput_at_sla,
    utilisation,
)
from npusched.metrics.records import read_records, write_records

__all__ = [
    "PERCENTILES",
    "SLA_N",
    "antt",
    "fairness",
    "latency_percentiles",
    "makespan",
    "ntt",
    "priority_label",
    "progress_per_priority",
    "read_records",
    "sla_met",
    "sla_violation_rates",
    "slo_attainment",
    "stp",
    "summarize",
    "throughput",
    "throughput_at_sla",
    "utilisation",
    "write_records",
]
