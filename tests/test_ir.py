"""The model IR: Layer/Network invariants, expansion of recurrent segments, columns."""

from __future__ import annotations

import numpy as np
import pytest

from npusched.errors import ModelError
from npusched.models import Layer, LayerKind, NetBuilder, get_network, make_network


def test_layer_rejects_bad_dims() -> None:
    with pytest.raises(ModelError, match="positive GEMM dims"):
        Layer("x", LayerKind.CONV, m=0, k=3, n=4)
    with pytest.raises(ModelError, match="groups"):
        Layer("x", LayerKind.POOL, groups=0)


def test_network_requires_topological_order() -> None:
    a = Layer("a", LayerKind.FC, 1, 4, 4, inputs=("b",))
    b = Layer("b", LayerKind.FC, 1, 4, 4)
    with pytest.raises(ModelError, match="topological"):
        make_network("bad", [a, b])


def test_columns_match_layers() -> None:
    net = get_network("resnet-50")
    cols = net.columns
    assert cols["macs"].sum() == net.macs
    assert len(cols["m"]) == len(net.layers)
    with pytest.raises(ValueError):
        cols["m"][0] = 1  # read-only


def test_recurrent_expand_step_major() -> None:
    b = NetBuilder("toy-rnn", (8,))
    x = b.input()
    e1 = b.recurrent(x, 16, repeat="in", name="enc1")
    e2 = b.recurrent(e1, 16, repeat="in", name="enc2")
    d = b.recurrent(e2, 16, repeat="out", name="dec")
    b.fc(d, 10, name="proj")
    b.seq_len = (3, 2)
    net = b.build()
    order = net.expand(3, 2)
    assert order.tolist() == [0, 1, 0, 1, 0, 1, 2, 2, 3]
    steps = net.step_counts(3, 2)
    assert steps.tolist() == [3, 3, 2, 1]
    assert net.total_macs(3, 2) == int(np.dot(net.columns["macs"], steps))
    assert net.total_macs(5, 7) > net.total_macs(3, 2)
