"""Exponentials, logarithms and powers of arrays with the same bits on every machine.

NumPy computes ``np.exp``, ``np.log`` and ``np.power`` of float64 arrays with its own AVX-512
loops on a CPU that has AVX-512 and with the C library's scalar functions elsewhere; the two
differ in the last bit of some results. A profile, a workload or a PREMA estimate built from
such values would then differ between machines, and with it the schedule (issue 25's rule:
same configuration and seed, identical results on any backend). These functions apply the C
library's function (:mod:`math`) to each element, which is what NumPy computes on a machine
without AVX-512, so results equal those NumPy gives there. They are for set-up work (tables of
at most a few thousand values), not for a hot loop.
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

__all__ = ["exp", "log", "power"]

FloatArray = npt.NDArray[np.float64]


def _each(fn: object, a: npt.ArrayLike) -> FloatArray:
    x = np.asarray(a, dtype=np.float64)
    out = np.fromiter(map(fn, x.ravel().tolist()), dtype=np.float64, count=x.size)  # type: ignore[call-overload]
    return out.reshape(x.shape)


def exp(a: npt.ArrayLike) -> FloatArray:
    """``e ** a`` element-wise (``math.exp``)."""
    return _each(math.exp, a)


def log(a: npt.ArrayLike) -> FloatArray:
    """Natural logarithm element-wise (``math.log``); ``-inf`` at 0 and ``nan`` below it, as
    NumPy gives (``math.log`` itself raises there)."""
    x = np.asarray(a, dtype=np.float64)
    if x.size and not bool((x > 0).all()):
        out = np.full(x.shape, np.nan)
        out[x == 0] = -np.inf
        pos = x > 0
        out[pos] = _each(math.log, x[pos])
        return out
    return _each(math.log, x)


def power(a: npt.ArrayLike, p: float) -> FloatArray:
    """``a ** p`` element-wise (``math.pow``) for a scalar exponent ``p``; ``a`` must be >= 0
    (``nan`` below it where ``p`` is not an integer, as NumPy gives)."""
    x = np.asarray(a, dtype=np.float64)
    q = float(p)

    def one(v: float) -> float:
        try:
            return math.pow(v, q)
        except (ValueError, OverflowError):
            return float(np.power(v, q))

    return _each(one, x)
