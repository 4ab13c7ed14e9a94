"""Sequence-length models of recurrent networks: how long a request's input and output are.

A :class:`LengthModel` samples ``(seq_in, seq_out)`` pairs for requests of one network; workload
generators use it for every recurrent network that has one registered (otherwise the network's
default ``seq_len``). The PREMA predictor's regression table is built from the same model's
profiling samples.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from npusched.errors import NpuschedError

IntArray = npt.NDArray[np.int64]


@runtime_checkable
class LengthModel(Protocol):
    """Samples input and (actual) output sequence lengths."""

    def sample(self, rng: np.random.Generator, size: int) -> tuple[IntArray, IntArray]:
        """``size`` pairs ``(seq_in, seq_out)`` drawn with ``rng``."""
        ...


LENGTH_MODELS: dict[str, LengthModel] = {}


def register_length_model(network: str, model: LengthModel) -> None:
    """Attach a length model to a zoo network name (duplicates are an error)."""
    if network in LENGTH_MODELS:
        raise NpuschedError(f"duplicate length model for {network!r}")
    LENGTH_MODELS[network] = model


def length_model_for(network: str) -> LengthModel | None:
    """The registered length model of ``network`` (canonical zoo name), if any."""
    return LENGTH_MODELS.get(network)
