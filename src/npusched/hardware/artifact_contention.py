"""The HaX-CoNN artifact's slowdown functions (``ismetdagli/HaX-CoNN``, ``z3_solver_multi_dnn.py``).

The artifact does not evaluate PCCS at solve time: it ships one piecewise function per
accelerator that maps a layer group's *own* memory throughput ``m`` (percent of the SoC's peak,
0-100) to a time multiplier ``s(m) >= 1``. Each piece has the form
``s = 100 / (100 - scale * (m + shift))`` and applies below its breakpoint. The numbers live in
``data/haxconn/artifact/slowdown.json`` with their source note.

The artifact publishes functions for Xavier AGX only; for Orin we use Xavier's (our choice,
named in every table through :func:`slowdown_source`), because the artifact gives none.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources

import numpy as np
import numpy.typing as npt

from npusched.errors import ConfigError
from npusched.hardware.contention import PccsContention

FloatArray = npt.NDArray[np.float64]

__all__ = ["DEVICES", "SOCS", "ArtifactContention", "artifact_slowdown", "slowdown_pieces", "slowdown_source"]

DEVICES = ("gpu", "dla")
SOCS = ("xavier", "orin")
_FALLBACK = {"orin": "xavier"}


@cache
def _table() -> dict[str, dict[str, list[dict[str, float | None]]]]:
    text = (
        resources.files("npusched.data.haxconn")
        .joinpath("artifact/slowdown.json")
        .read_text(encoding="utf-8")
    )
    data = json.loads(text)
    return {k: v for k, v in data.items() if not k.startswith("_")}


def slowdown_source(soc: str) -> str:
    """Where the slowdown function used for ``soc`` comes from (one line for tables)."""
    if soc in _table():
        return f"artifact ({soc})"
    if soc in _FALLBACK:
        return f"artifact ({_FALLBACK[soc]}; none published for {soc}: our choice)"
    raise ConfigError(f"soc={soc!r}; allowed: {', '.join(SOCS)}")


def slowdown_pieces(soc: str, device: str) -> list[dict[str, float | None]]:
    """The pieces ``{"below", "scale", "shift"}`` of ``device``'s function on ``soc``."""
    table = _table()
    key = soc if soc in table else _FALLBACK.get(soc)
    if key is None:
        raise ConfigError(f"soc={soc!r}; allowed: {', '.join(SOCS)}")
    if device not in table[key]:
        raise ConfigError(f"device={device!r}; allowed: {', '.join(DEVICES)}")
    return table[key][device]


def artifact_slowdown(soc: str, device: str, mem_pct: npt.ArrayLike) -> FloatArray:
    """Time multiplier (>= 1, dimensionless) of groups requesting ``mem_pct`` percent (0-100) of
    the SoC's memory throughput on ``device`` ("gpu" or "dla"), by the artifact's function."""
    m = np.asarray(mem_pct, dtype=np.float64)
    pieces = slowdown_pieces(soc, device)
    out = np.empty_like(m)
    done = np.zeros(m.shape, dtype=bool)
    for p in pieces:
        below = p["below"]
        sel = ~done if below is None else (~done & (m < float(below)))
        scale, shift = float(p["scale"] or 0.0), float(p["shift"] or 0.0)
        out[sel] = 100.0 / (100.0 - scale * (m[sel] + shift))
        done |= sel
    return out


class ArtifactContention(PccsContention):
    """The artifact's slowdown functions as an engine contention model (paper semantics).

    A group on accelerator ``device`` (0 = GPU, 1 = DLA/DSA) requesting ``own`` (fraction of the
    SoC's peak memory throughput) is slowed by ``s = artifact_slowdown(soc, device, 100 own)``
    while any group of another DNN runs beside it (``external > 0``), and not at all when it runs
    alone: the paper's Eq. 7-8 reading (contention only inside contention intervals), not the
    artifact solver's quirk 1. ``s`` depends on the group's own throughput only, as in the
    artifact. SoCs without published functions use Xavier's (our choice, :func:`slowdown_source`).
    Own throughputs are clipped to 0-95% so the artifact's middle GPU piece stays finite.
    """

    def __init__(self, soc: str = "xavier") -> None:
        super().__init__()
        self.soc = soc if soc in SOCS else "xavier"

    def slowdown_one(self, own: float, external: float, device: int = 0) -> float:
        if external <= 0.0 or own <= 0.0:
            return 1.0
        m = min(own, 0.95) * 100.0
        for p in slowdown_pieces(self.soc, DEVICES[min(device, 1)]):
            below = p["below"]
            if below is None or m < float(below):
                scale, shift = float(p["scale"] or 0.0), float(p["shift"] or 0.0)
                return 100.0 / (100.0 - scale * (m + shift))
        raise AssertionError("the last piece has no breakpoint")  # pragma: no cover

    def slowdown(
        self, own: npt.ArrayLike, external: npt.ArrayLike, device: npt.ArrayLike | None = None
    ) -> FloatArray:
        d = np.clip(np.asarray(own, dtype=np.float64), 0.0, 0.95)
        e = np.asarray(external, dtype=np.float64)
        dev = np.zeros(d.shape, dtype=np.int64) if device is None else np.asarray(device)
        d, e, dev = np.broadcast_arrays(d, e, dev)
        out = np.ones(d.shape, dtype=np.float64)
        for k, name in enumerate(DEVICES):
            sel = (np.minimum(dev, 1) == k) & (e > 0.0) & (d > 0.0)
            if sel.any():
                out[sel] = artifact_slowdown(self.soc, name, 100.0 * d[sel])
        return out
