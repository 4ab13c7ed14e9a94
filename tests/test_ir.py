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


def test_builder_options_no_zoo_network_uses() -> None:
    """Public NetBuilder options outside the zoo's paths, against hand-computed shapes."""
    b = NetBuilder("opts", (4, 15, 15), seq_len=(3, 1))
    x = b.input()
    dil = b.conv(x, 8, 3, 1, 2, dilation=2, name="dil")  # effective 5x5: (15 + 4 - 5) + 1 = 15
    assert dil.shape == (8, 15, 15)
    same = b.conv(x, 8, 3, 2, "same", name="same")  # ceil(15 / 2)
    valid = b.conv(x, 8, 3, 1, "valid", name="valid")
    assert (same.shape, valid.shape) == ((8, 8, 8), (8, 13, 13))
    dw = b.dwconv(x, 3, 2, multiplier=2, name="dw")  # (15 + 2 - 3) // 2 + 1 = 8
    assert dw.shape == (8, 8, 8)
    relu = b.act(dw, "relu", name="relu")
    b.exit("early", rate=0.25)
    v = b.global_pool(relu, name="gap")
    g = b.recurrent(v, 16, cell="gru", repeat="in", name="gru")
    b.fc(g, 10, name="fc")
    net = b.build()
    ly = {layer.name: layer for layer in net.layers}
    assert (ly["dil"].m, ly["dil"].k, ly["dil"].n) == (225, 36, 8)
    assert (ly["dw"].kind, ly["dw"].groups, ly["dw"].k, ly["dw"].n) == (LayerKind.DWCONV, 4, 9, 2)
    assert ly["dw"].macs == 64 * 9 * 2 * 4
    assert (ly["relu"].kind, ly["relu"].attrs["fn"]) == (LayerKind.ACT, "relu")
    (ex,) = net.exits
    assert (ex.name, net.layers[ex.after].name, ex.rate) == ("early", "relu", 0.25)
    gru = ly["gru"]  # 3 gates over [x, h] = 8 + 16 features
    assert (gru.kind, gru.k, gru.n, gru.output_elems) == (LayerKind.RNN, 24, 48, 16)
    assert gru.params == 24 * 48 + 48
    assert net.total_macs(5, 1) == net.total_macs(1, 1) + 4 * gru.macs
