"""Experiments: the run-config schema and the runner behind ``npusched run``."""

from npusched.experiments.config import RunConfig, load_config, parse_config
from npusched.experiments.runner import RunOutput, run_config, run_config_file

__all__ = ["RunConfig", "RunOutput", "load_config", "parse_config", "run_config", "run_config_file"]
