"""Sequence-length models of recurrent networks: how long a request's input and output are.

A :class:`LengthModel` samples ``(seq_in, seq_out)`` pairs for requests of one network; workload
generators use it for every recurrent network that has one registered (otherwise the network's
default ``seq_len``). The PREMA predictor's regression table is built from the same model's
profiling samples.
"""

from __future__ import annotations

import math
from typing import Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from npusched import libm
from npusched.errors import NpuschedError

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]


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


def geomean_table(seq_in: npt.ArrayLike, seq_out: npt.ArrayLike) -> tuple[IntArray, FloatArray]:
    """PREMA's output-length regression table (Fig. 9) from profiled ``(seq_in, seq_out)`` pairs.

    Returns the distinct input lengths (sorted) and, for each, the geometric mean of the output
    lengths profiled at it (time steps; an output below 1 counts as 1). A group whose outputs are
    all equal gets that value exactly, so a linear network's table is its input lengths.
    """
    x = np.asarray(seq_in, dtype=np.int64)
    order = np.argsort(x, kind="stable")
    ys = np.maximum(np.asarray(seq_out, dtype=np.int64)[order], 1)
    keys, starts, counts = np.unique(x[order], return_index=True, return_counts=True)
    # np.mean per distinct input length (a few hundred at most, built once per model): a
    # bincount sum rounds differently, which would move PREMA's estimates by a few ulps.
    gm = np.array(
        [_geomean(ys[s : s + c]) for s, c in zip(starts, counts, strict=True)], dtype=np.float64
    )
    return keys, gm


def _geomean(values: IntArray) -> float:
    """Geometric mean of positive integers (exact when all values are equal)."""
    if values.min() == values.max():
        return float(values[0])
    return math.exp(float(np.mean(libm.log(values))))
