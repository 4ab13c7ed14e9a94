"""The built-in policies: the one place that fills :data:`~npusched.policies.registry.REGISTRY`.

Each row is ``(kind, name, factory)``, registered in this order when this module is imported
(the package ``npusched.policies`` imports it first thing). A new built-in policy is one import
and one row here (its module does not register itself). The order is the order ``names()``
lists them in.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from npusched.policies.batching.policies import (
    AdaptBPolicy,
    FluidBPolicy,
    LazyBatchingPolicy,
    SerialPolicy,
)
from npusched.policies.mapping.policy import HaxconnPolicy
from npusched.policies.power.policy import DFS, DVFS
from npusched.policies.registry import REGISTRY, PolicyKind
from npusched.policies.spatial.planaria import PlanariaPolicy
from npusched.policies.temporal.fcfs import FCFS
from npusched.policies.temporal.hpf import HPF
from npusched.policies.temporal.mechanism import variants
from npusched.policies.temporal.prema import NPPrema, PPrema
from npusched.policies.temporal.rrb import NPRRB, PRRB
from npusched.policies.temporal.sjf import NPSJF, PSJF
from npusched.policies.temporal.token import NPToken, PToken

__all__ = ["BUILTINS"]

_TEMPORAL: dict[str, Callable[..., Any]] = {
    **variants(FCFS),  # NP-FCFS, P-FCFS (PREMA Sec. III-B)
    **variants(HPF),  # NP-HPF, P-HPF (PREMA Sec. III-B, IV-D)
    "NP-SJF": NPSJF,
    "P-SJF": PSJF,
    "NP-PREMA": NPPrema,  # PREMA Algorithm 2
    "P-PREMA": PPrema,
    "NP-RRB": NPRRB,
    "P-RRB": PRRB,
    "NP-TOKEN": NPToken,
    "P-TOKEN": PToken,
}
_MACHINE: dict[str, Callable[..., Any]] = {
    "FluidB": FluidBPolicy,  # Fluid Batching (Kouris et al.)
    "AdaptB": AdaptBPolicy,
    "SERIAL": SerialPolicy,
    "LazyBatching": LazyBatchingPolicy,
    "HaX-CoNN": HaxconnPolicy,  # HaX-CoNN (PPoPP'24) on an SoC
    "Planaria": PlanariaPolicy,  # Planaria (MICRO'20) on a fission array
}
_POWER: dict[str, Callable[..., Any]] = {"DFS": DFS, "DVFS": DVFS}

#: ``(kind, name, factory)`` of every built-in policy, in registration order.
_BY_KIND: tuple[tuple[PolicyKind, dict[str, Callable[..., Any]]], ...] = (
    ("temporal", _TEMPORAL),
    ("machine", _MACHINE),
    ("power", _POWER),
)
BUILTINS: tuple[tuple[PolicyKind, str, Callable[..., Any]], ...] = tuple(
    (kind, name, factory) for kind, table in _BY_KIND for name, factory in table.items()
)

for _kind, _name, _factory in BUILTINS:
    REGISTRY.register(_kind, _name, _factory)
