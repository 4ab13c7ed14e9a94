"""Planaria (MICRO 2020) Sec. VI: the study lives in :mod:`npusched.experiments.studies.planaria`
(issue 29); this module keeps the public import path."""

from npusched.experiments.studies.planaria.figures import MULTI_TENANT_FIGURES, comparisons
from npusched.experiments.studies.planaria.paper import (
    DEPTHWISE_BOUND,
    PAPER,
    PAPER_ABSTRACT_SLA_GAIN,
    PAPER_MULTI_TENANT,
)
from npusched.experiments.studies.planaria.points import (
    Simulate,
    capacity_qps,
    fixed_rate_point,
    isolated_comparison,
    isolated_over_qos,
    layer_speedups,
    nodes_for_sla,
    paper_network,
    planaria_simulate,
    prema_simulate,
    reference_rate,
    throughput_qps,
    workload_instance,
)
from npusched.experiments.studies.planaria.run import reproduce
from npusched.experiments.studies.planaria.suite import MultiTenantSetup

__all__ = [
    "DEPTHWISE_BOUND",
    "MULTI_TENANT_FIGURES",
    "PAPER",
    "PAPER_ABSTRACT_SLA_GAIN",
    "PAPER_MULTI_TENANT",
    "MultiTenantSetup",
    "Simulate",
    "capacity_qps",
    "comparisons",
    "fixed_rate_point",
    "isolated_comparison",
    "isolated_over_qos",
    "layer_speedups",
    "nodes_for_sla",
    "paper_network",
    "planaria_simulate",
    "prema_simulate",
    "reference_rate",
    "reproduce",
    "throughput_qps",
    "workload_instance",
]
