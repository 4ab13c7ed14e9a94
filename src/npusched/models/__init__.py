"""DNN model IR, zoo and importers."""

from npusched.models.builder import NetBuilder, Tensor
from npusched.models.ir import GEMM_KINDS, ExitPoint, Layer, LayerKind, Network, make_network
from npusched.models.zoo import get_network, list_networks, reference


def from_onnx(path: str, name: str | None = None) -> Network:
    """Import an ONNX model file as a :class:`Network` (needs the ``onnx`` extra)."""
    from npusched.models.onnx_import import from_onnx as _from_onnx

    return _from_onnx(path, name=name)


__all__ = [
    "GEMM_KINDS",
    "ExitPoint",
    "Layer",
    "LayerKind",
    "NetBuilder",
    "Network",
    "Tensor",
    "from_onnx",
    "get_network",
    "list_networks",
    "make_network",
    "reference",
]

# Sequence-length models of PREMA's recurrent networks register on import.
from npusched.models import rnn_lengths as _rnn_lengths  # noqa: E402,F401
