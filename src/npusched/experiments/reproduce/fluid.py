"""``npusched reproduce fluid``: the Fluid Batching study, whose method and parts are in
:mod:`npusched.experiments.studies.fluid` (this module keeps the public import path)."""

from npusched.experiments.studies.fluid.figures import PENDING
from npusched.experiments.studies.fluid.paper import PAPER, PAPER_TABLE1
from npusched.experiments.studies.fluid.points import (
    FIG9_SETUPS,
    FIG10_CONFIGS,
    SERVING_SETUPS,
    ServingSetup,
    invocation_estimate,
)
from npusched.experiments.studies.fluid.run import reproduce

__all__ = [
    "FIG9_SETUPS", "FIG10_CONFIGS", "PAPER", "PAPER_TABLE1", "PENDING", "SERVING_SETUPS",
    "ServingSetup", "invocation_estimate", "reproduce",
]
