"""Shared-memory contention: a PCCS-style piecewise slowdown model (HaX-CoNN Sec. 3.3, Eq. 7-8).

PCCS (Xu et al., MICRO'21) predicts the slowdown of a processor as a function of the memory
throughput it requests and the external throughput requested by the others, with a piecewise
model whose regions are set by the total demand against the memory's capacity. HaX-CoNN applies
it per layer group and per *contention interval* (a period with no start or end of any layer,
Eq. 8): inside one interval every running group slows down by the factor this model returns.

Our reading (the HaX-CoNN paper gives neither PCCS's equation nor its fitted constants): with the
requester's demand ``d`` and the external demand ``e`` as fractions of the SoC's bandwidth and
``u = d + e``, the slowdown (execution-time multiplier, >= 1) is::

    s(d, e) = 1 + d * ( a * e                                  # minor region: any co-runner
                      + b * clip(u - knee, 0, e)               # linear region above the knee
                      + c * clip(u - 1,    0, e) )             # saturated region beyond peak

Properties the scheduler relies on: ``s(d, 0) = 1`` (no contention alone), ``s(0, e) = 1``
(a group that requests no memory is not slowed), ``s`` is continuous, piecewise linear in ``e``
and non-decreasing in both arguments. The default constants are ours, chosen so a pair of
memory-heavy groups (``d = e = 0.6``) slows by 33%, a saturating pair (``0.8, 0.8``) by 72% and a
light pair (``0.3, 0.3``) by about 1%, the range the paper reports (contention costs up to 70%
of performance, Sec. 2; contention-unaware schedules mispredict by up to 75%, Sec. 5.2).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from npusched.base import Component
from npusched.errors import ParameterError

FloatArray = npt.NDArray[np.float64]

__all__ = ["PccsContention"]


class PccsContention(Component):
    """Piecewise slowdown ``s(d, e)`` of a layer group (see the module docstring).

    Args:
        knee: total normalised demand where the linear region starts (0 < knee < 1).
        minor_slope: ``a``, slowdown per unit of own x external demand below the knee.
        linear_slope: ``b``, extra slope between the knee and the peak bandwidth.
        saturated_slope: ``c``, extra slope beyond the peak bandwidth.
    """

    def __init__(
        self,
        *,
        knee: float = 0.6,
        minor_slope: float = 0.15,
        linear_slope: float = 0.6,
        saturated_slope: float = 0.5,
    ) -> None:
        self.knee = knee
        self.minor_slope = minor_slope
        self.linear_slope = linear_slope
        self.saturated_slope = saturated_slope

    def _check(self) -> None:
        if not 0.0 < self.knee < 1.0:
            raise ParameterError("PccsContention", "knee", self.knee, "0 < knee < 1")
        for name in ("minor_slope", "linear_slope", "saturated_slope"):
            if getattr(self, name) < 0:
                raise ParameterError("PccsContention", name, getattr(self, name), ">= 0")

    def slowdown_one(self, own: float, external: float, device: int = 0) -> float:
        """Scalar :meth:`slowdown` (the executor's inner loop; same formula, no NumPy).
        ``device`` (the accelerator index) is unused here; device-aware models read it."""
        d = max(own, 0.0)
        e = max(external, 0.0)
        u = d + e
        extra = (
            self.minor_slope * e
            + self.linear_slope * min(max(u - self.knee, 0.0), e)
            + self.saturated_slope * min(max(u - 1.0, 0.0), e)
        )
        return 1.0 + d * extra

    def slowdown(
        self, own: npt.ArrayLike, external: npt.ArrayLike, device: npt.ArrayLike | None = None
    ) -> FloatArray:
        """Execution-time multiplier (>= 1) for requested throughput ``own`` beside ``external``,
        both as fractions of the SoC's peak bandwidth (broadcasting NumPy arrays). ``device``
        (accelerator indices, broadcasting like ``own``) is unused by this model."""
        self._check()
        d = np.clip(np.asarray(own, dtype=np.float64), 0.0, None)
        e = np.clip(np.asarray(external, dtype=np.float64), 0.0, None)
        u = d + e
        extra = (
            self.minor_slope * e
            + self.linear_slope * np.clip(u - self.knee, 0.0, e)
            + self.saturated_slope * np.clip(u - 1.0, 0.0, e)
        )
        return np.asarray(1.0 + d * extra, dtype=np.float64)
