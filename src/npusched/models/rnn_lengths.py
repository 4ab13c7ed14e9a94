"""Synthetic, seeded sequence-length models of PREMA's four recurrent networks (Sec. V-B, Fig. 9).

The paper profiles 1500 real inputs per recurrent network (WMT-2016 sentences through Google
Translate for the translation models, LibriSpeech through a speech API for ASR) and plots the
time-unrolled output length against the input length. Those profiles are not public, so each
network here gets a synthetic generator with the same *shape* of relationship:

========== ============================ ===========================================================
network    input length (encoder steps) output length (decoder steps) given the input ``x``
========== ============================ ===========================================================
rnn-sa     words, 4..64                 linear and exact: ``y = x`` (sentiment analysis, Fig. 8b)
rnn-mt1    words, 3..60 (English)       en->de: ``y = round(1.1 x * LogNormal(0, 0.12))``
rnn-mt2    words, 3..60 (English)       en->ko: ``y = round(0.95 x**0.9 * LogNormal(0, 0.18))``
rnn-asr    listener steps, 12..160      speller steps: ``y = round(2.0 x**0.7 * LogNormal(0, 0.20))``
========== ============================ ===========================================================

Input lengths follow a discretised log-normal (sentence / utterance lengths are right-skewed),
clipped to the range above: median 16 words for text, 55 listener steps (80 ms of audio each)
for speech. Every output is at least 1.

Following the paper's methodology literally:

* :meth:`SyntheticLengthModel.profile` is the fixed *profiling set*: 1500 pairs drawn once with a
  fixed seed (``profile_seed``), the stand-in for the paper's characterisation data (Fig. 9).
* :meth:`SyntheticLengthModel.table` is the predictor's regression model (a look-up table indexed
  by input length returning the geometric mean of the profiled output lengths; the PREMA
  predictor interpolates between its entries).
* :meth:`SyntheticLengthModel.sample` draws *evaluation* requests as Sec. VI does: the input
  length is a random profiled input (drawn in proportion to how often it was profiled, i.e. a
  random profiling sample) and the actual output length is a random output among those profiled
  for that input length. So evaluation requests never leave the profiled set, and the predictor's
  error is the spread of Fig. 9's boxes, nothing else.

:meth:`SyntheticLengthModel.generate` exposes the underlying generator (fresh draws, not limited
to the profiled set) for studies of out-of-profile inputs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from npusched import libm
from npusched.errors import ModelError
from npusched.models.seqlen import (
    FloatArray,
    IntArray,
    geomean_table,
    length_model_for,
    register_length_model,
)

#: Samples in each network's profiling set (the paper profiles 1500 inputs per network).
PROFILE_SIZE = 1500
#: Seed of the profiling sets (fixed, so the regression tables are part of the model definition).
PROFILE_SEED = 20200222


@dataclass(frozen=True)
class SyntheticLengthModel:
    """Input/output sequence lengths of one recurrent network (all lengths in time steps).

    The output length given the input ``x`` is ``round(scale * x**exponent * LogNormal(0,
    sigma))``, at least 1; ``sigma = 0`` and ``scale = exponent = 1`` is the exact linear case.

    Attributes:
        network: zoo name the model belongs to.
        in_min, in_max: inclusive range of input lengths.
        in_median: median of the (log-normal, clipped) input length distribution.
        in_sigma: log-space spread of the input length distribution.
        scale, exponent, sigma: the output-length relation (see above).
        profile_size: samples in the profiling set.
        profile_seed: seed of the profiling set.
        description: what the lengths mean.
    """

    network: str
    in_min: int
    in_max: int
    in_median: float
    in_sigma: float
    scale: float = 1.0
    exponent: float = 1.0
    sigma: float = 0.0
    profile_size: int = PROFILE_SIZE
    profile_seed: int = PROFILE_SEED
    description: str = ""

    def __post_init__(self) -> None:
        if not 1 <= self.in_min <= self.in_max:
            raise ModelError(
                f"length model {self.network!r}: need 1 <= in_min <= in_max, "
                f"got {self.in_min}..{self.in_max}"
            )
        if self.profile_size < 1:
            raise ModelError(f"length model {self.network!r}: profile_size must be >= 1")

    @property
    def linear(self) -> bool:
        """True when the output length equals the input length exactly."""
        return self.sigma == 0.0 and self.scale == 1.0 and self.exponent == 1.0

    # --- the underlying generator ---------------------------------------------------------
    def generate(self, rng: np.random.Generator, size: int) -> tuple[IntArray, IntArray]:
        """``size`` fresh ``(seq_in, seq_out)`` pairs from the generator (not the profiled set)."""
        x = np.rint(rng.lognormal(math.log(self.in_median), self.in_sigma, size))
        x = np.clip(x, self.in_min, self.in_max).astype(np.int64)
        if self.linear:
            return x, x.copy()
        noise = rng.lognormal(0.0, self.sigma, size) if self.sigma > 0 else np.ones(size)
        y = np.rint(self.scale * libm.power(x, self.exponent) * noise)
        return x, np.maximum(y, 1).astype(np.int64)

    # --- the profiling set and the regression table ---------------------------------------
    @cached_property
    def _profile(self) -> tuple[IntArray, IntArray]:
        x, y = self.generate(np.random.default_rng(self.profile_seed), self.profile_size)
        x.flags.writeable = False
        y.flags.writeable = False
        return x, y

    def profile(self) -> tuple[IntArray, IntArray]:
        """The fixed profiling set ``(seq_in, seq_out)`` (``profile_size`` pairs, read-only)."""
        return self._profile

    @cached_property
    def _groups(self) -> tuple[IntArray, IntArray, IntArray, IntArray]:
        """Profiled outputs sorted by input: ``(keys, starts, counts, outputs)``."""
        x, y = self._profile
        order = np.argsort(x, kind="stable")
        xs, ys = x[order], y[order]
        keys, starts, counts = np.unique(xs, return_index=True, return_counts=True)
        return keys, starts.astype(np.int64), counts.astype(np.int64), ys

    @cached_property
    def _table(self) -> tuple[IntArray, FloatArray]:
        keys, gm = geomean_table(*self._profile)
        keys.flags.writeable = False
        gm.flags.writeable = False
        return keys, gm

    def table(self) -> tuple[IntArray, FloatArray]:
        """The regression look-up table: profiled input lengths (sorted, unique) and the
        geometric mean of the profiled output lengths at each."""
        return self._table

    # --- evaluation sampling (the LengthModel protocol) -----------------------------------
    def sample(self, rng: np.random.Generator, size: int) -> tuple[IntArray, IntArray]:
        """``size`` evaluation pairs drawn as PREMA Sec. VI does (see the module docstring)."""
        x, _ = self._profile
        keys, starts, counts, ys = self._groups
        seq_in = x[rng.integers(0, len(x), size)]
        slot = np.searchsorted(keys, seq_in)
        pick = np.minimum((rng.random(size) * counts[slot]).astype(np.int64), counts[slot] - 1)
        seq_out = ys[starts[slot] + pick]
        return seq_in.astype(np.int64), seq_out.astype(np.int64)


#: PREMA's four recurrent networks (Sec. III), one row each as in the module docstring's table:
#: ``(network, in_min, in_max, in_median, in_sigma, scale, exponent, sigma)``. Row ``i`` draws
#: its profiling set with seed ``PROFILE_SEED + i``.
_PREMA_ROWS: tuple[tuple[str, int, int, float, float, float, float, float], ...] = (
    ("rnn-sa", 4, 64, 16.0, 0.50, 1.00, 1.0, 0.00),
    ("rnn-mt1", 3, 60, 16.0, 0.55, 1.10, 1.0, 0.12),
    ("rnn-mt2", 3, 60, 16.0, 0.55, 0.95, 0.9, 0.18),
    ("rnn-asr", 12, 160, 55.0, 0.50, 2.00, 0.7, 0.20),
)
_PREMA_DESCRIPTIONS = {
    "rnn-sa": "sentiment analysis: output length equals the input length (words)",
    "rnn-mt1": "English-to-German translation: ~1.1x the input words, noisy",
    "rnn-mt2": "English-to-Korean translation: sub-linear in the input words, noisier",
    "rnn-asr": "speech recognition: listener steps (80 ms of audio) in, characters out "
    "(sub-linear, noisy)",
}

#: The length models of PREMA's recurrent networks, by zoo name.
PREMA_LENGTH_MODELS: dict[str, SyntheticLengthModel] = {
    row[0]: SyntheticLengthModel(
        *row, profile_seed=PROFILE_SEED + i, description=_PREMA_DESCRIPTIONS[row[0]]
    )
    for i, row in enumerate(_PREMA_ROWS)
}


def register_prema_length_models() -> None:
    """Register :data:`PREMA_LENGTH_MODELS` (idempotent: already-registered names are kept)."""
    for name, model in PREMA_LENGTH_MODELS.items():
        if length_model_for(name) is None:
            register_length_model(name, model)


register_prema_length_models()
