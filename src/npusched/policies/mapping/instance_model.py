"""The data of a HaX-CoNN mapping instance (:class:`MapInstance`) and what every solver of it
shares: the artifact's chain of least gaps, the serial bound, the mappings within a transition
limit. :mod:`npusched.policies.mapping.instance` parses, evaluates and solves instances (and
re-exports these names); the solvers (:mod:`.instance_cpsat`, :mod:`.instance_z3`,
:mod:`.instance_bounds`) import this module, not that one, so the package has no import circle.
Times are milliseconds throughout."""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from npusched.hardware.artifact_contention import artifact_slowdown

FloatArray = npt.NDArray[np.float64]

SEMANTICS = ("artifact", "paper")
SOLVERS = ("cpsat", "z3")
OBJECTIVES = ("latency", "throughput")
DEVICES = ("gpu", "dla")
_ARRAYS = ("gpu_ms", "dla_ms", "transition_ms", "mem_gpu", "mem_dla")


@dataclass(frozen=True)
class DnnSpec:
    """One DNN of an instance: per-group times (ms), transition costs (ms), memory (%)."""

    name: str
    gpu_ms: tuple[float, ...]
    dla_ms: tuple[float, ...]
    transition_ms: tuple[float, ...]
    mem_gpu: tuple[float, ...]
    mem_dla: tuple[float, ...]

    @property
    def n_groups(self) -> int:
        return len(self.gpu_ms)

    def time_ms(self, device: int) -> FloatArray:
        """Standalone group times on ``device`` (0 = GPU, 1 = DLA), ms."""
        return np.asarray(self.gpu_ms if device == 0 else self.dla_ms, dtype=np.float64)


@dataclass(frozen=True)
class MapInstance:
    """A parsed instance file (see the module docstring)."""

    soc: str
    objective: str
    max_transitions: int
    dnns: tuple[DnnSpec, ...]

    def slowdown(self, n: int, device: int) -> FloatArray:
        """The SoC function's time multiplier of every group of DNN ``n`` on ``device``."""
        d = self.dnns[n]
        mem = d.mem_gpu if device == 0 else d.mem_dla
        return artifact_slowdown(self.soc, DEVICES[device], mem)



#: The artifact's departures from the paper that :func:`brute_force_artifact` and
#: :func:`evaluate` can switch off one at a time (to measure what each one moves): the constant
#: own-throughput slowdown, the preceding group timed on the new device, the unslowed last group.
ARTIFACT_QUIRKS = frozenset({"own_slowdown", "new_device", "last_unslowed"})


def _artifact_chain(
    inst: MapInstance, n: int, dev: tuple[int, ...], quirks: frozenset[str] = ARTIFACT_QUIRKS
) -> FloatArray:
    """``chain[g]`` (1 <= g < G): least gap from st[g-1] to st[g] under the artifact semantics;
    ``chain[G]``: the last group's time from its start to the DNN's end. Without a quirk in
    ``quirks``: no slowdown at all (``own_slowdown``), the preceding group timed on its own
    device (``new_device``), the last group slowed too (``last_unslowed``)."""
    d = inst.dnns[n]
    tr = np.asarray(d.transition_ms, dtype=np.float64)
    if "own_slowdown" in quirks:
        s = [inst.slowdown(n, 0), inst.slowdown(n, 1)]
    else:
        s = [np.ones(d.n_groups), np.ones(d.n_groups)]
    out = np.zeros(d.n_groups + 1)
    for g in range(1, d.n_groups):
        b = dev[g] if "new_device" in quirks else dev[g - 1]
        out[g] = d.time_ms(b)[g - 1] * s[b][g - 1] + (tr[g - 1] if dev[g] != dev[g - 1] else 0.0)
    last = dev[-1]
    out[-1] = d.time_ms(last)[-1] * (1.0 if "last_unslowed" in quirks else s[last][-1])
    return out


def serial_bound_ms(
    inst: MapInstance, semantics: str, fixed: tuple[tuple[int, ...], ...] | None = None
) -> float:
    """Makespan (ms) of the serial schedule: each DNN on one accelerator (or on its ``fixed``
    mapping), one DNN after the other. Nothing overlaps, so it is feasible under both
    semantics and bounds the optimum (under ``artifact`` the chain still charges slowed times,
    the last group unslowed; spacing by slowed times is feasible under ``paper`` too)."""
    total = 0.0
    for n, d in enumerate(inst.dnns):
        rows = [fixed[n]] if fixed is not None else [(0,) * d.n_groups, (1,) * d.n_groups]
        best = math.inf
        for row in rows:
            chain = _artifact_chain(inst, n, row)
            if semantics == "artifact" or fixed is not None:
                best = min(best, float(chain.sum()))
            else:
                best = min(best, float(d.time_ms(row[0]).sum()))
        total += best
    return total


def _assignments(n: int, max_transitions: int) -> list[tuple[int, ...]]:
    rows = []
    for row in itertools.product((0, 1), repeat=n):
        if sum(1 for x, y in itertools.pairwise(row) if x != y) <= max_transitions:
            rows.append(row)
    return rows
