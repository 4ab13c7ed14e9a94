"""``ExitLUT.span`` sums short ranges in Python: the same bits as NumPy's sum of the slice (the
sum it replaced), for every range, batch size and table shape, zeros and negative zeros
included."""

from __future__ import annotations

import math

import numpy as np
import pytest

from npusched.errors import ConfigError
from npusched.policies.batching.fluidb import ExitLUT


def _numpy_span(lut: ExitLUT, first: int, last: int, b: int) -> float:
    if b == 0 or last < first:
        return 0.0
    return float(lut.table[:, b - 1][first : last + 1].sum())


@pytest.mark.parametrize("n_exits", [1, 2, 3, 5, 7, 8, 9, 12, 17])
def test_span_equals_numpys_sum_bit_for_bit(n_exits: int) -> None:
    rng = np.random.default_rng(n_exits)
    for trial in range(40):
        scale = 10.0 ** rng.uniform(-7, 0, size=(n_exits, 8))
        table = rng.random((n_exits, 8)) * scale
        if trial % 5 == 0:
            table[rng.random((n_exits, 8)) < 0.3] = 0.0
        if trial % 5 == 1:
            table[rng.random((n_exits, 8)) < 0.3] = -0.0
        lut = ExitLUT(table)
        for b in range(0, 9):
            for first in range(-2, n_exits + 1):
                for last in range(-2, n_exits + 1):
                    got = lut.span(first, last, b)
                    want = _numpy_span(lut, first, last, b)
                    assert got == want and math.copysign(1.0, got) == math.copysign(1.0, want), (
                        first,
                        last,
                        b,
                    )
                    assert type(got) is float


def test_span_refuses_a_batch_outside_the_table() -> None:
    lut = ExitLUT(np.ones((3, 4)))
    with pytest.raises(ConfigError, match=r"batch size 5 outside the LUT's 1\.\.4"):
        lut.span(0, 1, 5)
    with pytest.raises(ConfigError, match=r"batch size -1 outside"):
        lut.span(0, 1, -1)
