"""PREMA (HPCA 2020): the public names of :mod:`npusched.experiments.studies.prema` at their
former import path."""

from npusched.experiments.studies.prema.paper import PAPER, PREMA_NETWORKS
from npusched.experiments.studies.prema.points import PolicySpec, PremaSetup, policy_specs
from npusched.experiments.studies.prema.run import reproduce

__all__ = ["PAPER", "PREMA_NETWORKS", "PolicySpec", "PremaSetup", "policy_specs", "reproduce"]
