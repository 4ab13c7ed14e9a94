"""The DFS study's least-squares fit, :mod:`npusched.experiments.studies.dfs.fit` (this module
keeps the import path the report names)."""

from npusched.experiments.studies.dfs.fit import *  # noqa: F403
from npusched.experiments.studies.dfs.fit import __all__ as __all__
