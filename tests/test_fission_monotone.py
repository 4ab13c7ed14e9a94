"""The fission compiler's latency ``T(n)`` never increases with the subarray count ``n``: each
layer runs on the best configuration of at most ``n`` subarrays."""

from __future__ import annotations

import numpy as np
import pytest

from npusched.hardware.fission import FissionArray
from npusched.models.zoo import get_network, list_networks
from npusched.workloads.planaria import WORKLOADS, scenario_networks

PLANARIA_NETS = sorted(set(WORKLOADS["C"]) | set(scenario_networks("C", "artifact")))


def _layer_cycles(name: str, fa: FissionArray) -> np.ndarray:
    net = get_network(name)
    return np.stack([fa.layer_costs(net, 1, subarrays=n).cycles for n in range(1, 17)])


def _check(name: str) -> None:
    fa = FissionArray()
    cyc = _layer_cycles(name, fa)  # (16, L)
    assert (np.diff(cyc, axis=0) <= 0).all(), name  # every layer, so the sum too
    # and the count itself still counts: the whole array beats one subarray
    assert cyc[-1].sum() < cyc[0].sum()


@pytest.mark.parametrize("name", PLANARIA_NETS)
def test_t_of_n_non_increasing_planaria_networks(name: str) -> None:
    _check(name)


@pytest.mark.slow
@pytest.mark.parametrize("name", [n for n in list_networks() if n not in PLANARIA_NETS])
def test_t_of_n_non_increasing_whole_zoo(name: str) -> None:
    _check(name)


def test_odd_count_no_slower_than_the_even_count_below() -> None:
    # the case: ResNet-50 was 1.39 ms on 15 subarrays against 1.15 ms on 14
    fa = FissionArray()
    net = get_network("resnet-50")
    t = {n: fa.layer_costs(net, 1, subarrays=n).latency_s.sum() for n in (6, 7, 14, 15)}
    assert t[15] <= t[14] and t[7] <= t[6]
    # 14 composes (7, 1, 2) grids; 15 only (15, 1, 1), which no longer decides alone
    assert fa.fission_table(net, subarrays=15).candidates[:-1] == (
        "15x1x1/stream",
        "15x1x1/channel",
        "15x1x1/group",
    )


def test_reallocation_saves_one_tile() -> None:
    # Sec. IV-D: "only a single tile of intermediate results needs to be stored off-chip"
    net = get_network("planaria/resnet-50")
    for n in (4, 16):
        costs = FissionArray().layer_costs(net, 1, subarrays=n)
        out = np.array([ly.output_elems * ly.bytes_per_elem for ly in net.layers])
        tile = -(-out // costs.tiles)
        assert (costs.checkpoint_bytes == np.minimum(tile, 8 * 2**20 * n // 16)).all()
        mean = FissionArray(checkpoint="mean").layer_costs(net, 1, subarrays=n)
        multi = costs.tiles > 1
        assert (costs.checkpoint_bytes[multi] < mean.checkpoint_bytes[multi]).all()
    # a hand case: conv2_1_b (64 -> 64, 3x3, 56x56 output, 16-bit) on 16 subarrays
    i = net.index("conv2_1_b")
    costs = FissionArray().layer_costs(net, 1, subarrays=16)
    assert costs.checkpoint_bytes[i] == -(-(64 * 56 * 56 * 2) // int(costs.tiles[i]))
