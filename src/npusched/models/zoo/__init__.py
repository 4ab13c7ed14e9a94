"""The model zoo: builders that emit each network's layer table from its architecture.

Every built-in network registers with :func:`register` (:mod:`.registry`), giving its reference
MACs and parameter counts and where those figures come from; ``tests/test_zoo.py`` holds every
network to them (5%).
"""

from __future__ import annotations

# Built-in networks register on import (one module per family).
from npusched.models.zoo import (  # noqa: F401
    classic,
    densenet,
    detection,
    inception,
    mlperf,
    mobile,
    planaria,
    resnet,
    rnn,
    transformer,
)
from npusched.models.zoo.registry import (
    _ENTRIES,
    Reference,
    ZooEntry,
    canonical_name,
    entry,
    get_network,
    list_networks,
    reference,
    register,
    size_range,
    unregister,
)

__all__ = [
    "_ENTRIES",
    "Reference",
    "ZooEntry",
    "canonical_name",
    "entry",
    "get_network",
    "list_networks",
    "reference",
    "register",
    "size_range",
    "unregister",
]
