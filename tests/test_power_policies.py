"""DFS / DVFS power policies: cap never exceeded, highest feasible level, exact switch costs."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from npusched.base import clone
from npusched.errors import ConfigError, ParameterError, UnknownNameError
from npusched.hardware.power import AB9, DFS_VOLTAGES_V, DVFS_VOLTAGES_V, FREQUENCIES_HZ
from npusched.models import get_network
from npusched.policies.power import (
    DFS,
    DVFS,
    POWER_POLICIES,
    PowerCapError,
    PowerPolicy,
    get_power_policy,
    highest_feasible_levels,
    schedule_steps,
    split_cap,
    switch_costs,
)

PAPER_NETS = (
    "vgg-16", "yolov2", "yolov3", "yolov4", "resnet-18", "resnet-34", "resnet-50", "squeezenet",
)  # fmt: skip


def _brute_levels(power: np.ndarray, cap: float) -> list[int]:
    out = []
    for j in range(power.shape[1]):
        best = -1
        for i in range(power.shape[0]):
            if power[i, j] <= cap:
                best = i
        out.append(best)
    return out


def _brute_switches(
    f: np.ndarray, v: np.ndarray, fs: float, vs: float, cyclic: bool
) -> tuple[float, int, int]:
    total, nf, nv = 0.0, 0, 0
    for i in range(len(f)):
        if i == 0 and not cyclic:
            continue
        pf, pv = (f[-1], v[-1]) if i == 0 else (f[i - 1], v[i - 1])
        if v[i] != pv:
            total += vs
            nv += 1
        elif f[i] != pf:
            total += fs
            nf += 1
    return total, nf, nv


@pytest.mark.parametrize("net_name", PAPER_NETS)
@pytest.mark.parametrize("cap", [27.0, 33.0, 45.0])
@pytest.mark.parametrize("fuse", [False, True])
def test_peak_never_above_cap_on_every_paper_network(net_name: str, cap: float, fuse: bool) -> None:
    from npusched.hardware.power import fused_steps

    dev = AB9(stc_efficiency=0.02)
    net = get_network(net_name)
    levels = {}
    for pol in (DFS(cap_w=cap), DVFS(cap_w=cap)):
        tab = dev.power_table(net, 1, voltages_v=pol.level_voltages())
        if fuse:
            tab = tab.grouped(fused_steps(net))
        s = pol.schedule(tab)
        assert s.peak_power_w <= cap
        assert (s.power_w <= cap).all()
        assert s.level.tolist() == _brute_levels(np.asarray(tab.power_w), cap)
        levels[pol.name] = s
    # DFS always at 1.00 V, never changes voltage; DVFS runs at an equal or higher clock (Fig. 4)
    assert (levels["DFS"].voltage_v == 1.0).all() and levels["DFS"].voltage_switches == 0
    assert (levels["DVFS"].frequency_hz >= levels["DFS"].frequency_hz).all()


@settings(max_examples=60, deadline=None)
@given(
    data=st.data(),
    n_levels=st.integers(1, 8),
    n_steps=st.integers(1, 30),
    cyclic=st.booleans(),
)
def test_random_tables_highest_feasible_and_exact_switch_costs(
    data: st.DataObject, n_levels: int, n_steps: int, cyclic: bool
) -> None:
    power = data.draw(arrays(np.float64, (n_levels, n_steps), elements=st.floats(1.0, 100.0)))
    lat = data.draw(arrays(np.float64, (n_levels, n_steps), elements=st.floats(1e-6, 1e-2)))
    freqs = np.sort(
        data.draw(
            st.lists(st.integers(1, 10**4), min_size=n_levels, max_size=n_levels, unique=True)
        )
    ).astype(np.float64)
    volts = np.asarray(
        data.draw(st.lists(st.sampled_from([0.9, 0.95, 1.0]), min_size=n_levels, max_size=n_levels))
    )
    cap = data.draw(st.floats(1.0, 100.0))
    idle = data.draw(st.floats(0.0, 1.0))
    brute = _brute_levels(power, cap)
    if min(brute) < 0:
        with pytest.raises(PowerCapError):
            schedule_steps(lat, power, freqs, volts, cap, idle_power_w=idle)
        return
    s = schedule_steps(
        lat, power, freqs, volts, cap, idle_power_w=idle, freq_switch_s=2e-5,
        volt_switch_s=2.15e-3, cyclic=cyclic,
    )  # fmt: skip
    assert s.level.tolist() == brute
    assert s.peak_power_w <= cap
    total, nf, nv = _brute_switches(s.frequency_hz, s.voltage_v, 2e-5, 2.15e-3, cyclic)
    assert s.switch_s.sum() == pytest.approx(total, abs=1e-15)
    assert (s.frequency_switches, s.voltage_switches) == (nf, nv)
    cols = np.arange(n_steps)
    assert s.total_time_s == pytest.approx(lat[s.level, cols].sum() + total)
    assert s.total_energy_j == pytest.approx(
        (lat[s.level, cols] * power[s.level, cols]).sum() + total * idle
    )


def test_switch_costs_by_hand() -> None:
    f = np.array([1e9, 5e8, 5e8, 5.5e8, 1e9])
    v = np.array([1.0, 0.95, 0.95, 1.0, 1.0])
    cost, fsw, vsw = switch_costs(f, v, freq_switch_s=20e-6, volt_switch_s=2.15e-3, cyclic=True)
    # step 0 follows step 4 (same f, V): free; 1: V change; 2: none; 3: V change; 4: f only
    np.testing.assert_allclose(cost, [0.0, 2.15e-3, 0.0, 2.15e-3, 20e-6])
    assert fsw.tolist() == [False, False, False, False, True]
    assert vsw.tolist() == [False, True, False, True, False]
    cost, _, _ = switch_costs(
        f, v, freq_switch_s=20e-6, volt_switch_s=2.15e-3, cyclic=False, initial=(1e8, 0.95)
    )
    assert cost[0] == 2.15e-3
    cost, _, _ = switch_costs(f[:3], v[:3], freq_switch_s=1.0, volt_switch_s=2.0, cyclic=True)
    assert cost.tolist() == [2.0, 2.0, 0.0]


def test_highest_feasible_levels_and_errors() -> None:
    p = np.array([[10.0, 20.0, 5.0], [30.0, 25.0, 6.0], [31.0, 40.0, 7.0]])
    assert highest_feasible_levels(p, 30.0).tolist() == [1, 1, 2]
    assert highest_feasible_levels(p, 25.0).tolist() == [0, 1, 2]  # cap inclusive (Eq. 4)
    with pytest.raises(PowerCapError, match="step 1"):
        highest_feasible_levels(p, 15.0)
    with pytest.raises(ConfigError):
        highest_feasible_levels(np.zeros(3), 1.0)
    with pytest.raises(ConfigError, match="ascending"):
        schedule_steps(p, p, np.array([3.0, 2.0, 1.0]), np.ones(3), 30.0, idle_power_w=1.0)
    with pytest.raises(PowerCapError, match="idle"):
        schedule_steps(p, p, np.arange(3.0), np.ones(3), 30.0, idle_power_w=31.0)


def test_dvfs_voltage_change_costs_more_than_dfs_on_ab9() -> None:
    """With a layer capped at or below 500 MHz next to a 1 GHz layer, DVFS pays 2.15 ms per
    voltage change and DFS 20 us per clock change (Sec. 3.2, 4.2)."""
    dev = AB9(stc_efficiency=0.02)
    net = get_network("squeezenet")
    dfs, dvfs = DFS(), DVFS()
    a = dfs.schedule(dev.power_table(net, 1, voltages_v=dfs.level_voltages()))
    b = dvfs.schedule(dev.power_table(net, 1, voltages_v=dvfs.level_voltages()))
    assert b.voltage_switches > 0
    assert a.switch_s.sum() == pytest.approx(20e-6 * a.frequency_switches)
    assert b.switch_s.sum() == pytest.approx(
        2.15e-3 * b.voltage_switches + 20e-6 * b.frequency_switches
    )
    assert a.total_time_s < b.total_time_s


def test_registry_parameters_and_protocol() -> None:
    assert set(POWER_POLICIES.names()) >= {"DFS", "DVFS"}
    p = get_power_policy("DFS", cap_w=33)
    assert isinstance(p, DFS) and isinstance(p, PowerPolicy) and p.cap_w == 33
    assert get_power_policy("dvfs").name == "DVFS"  # names fold case as every registry
    assert DFS().level_voltages() == DFS_VOLTAGES_V
    assert DVFS().level_voltages() == DVFS_VOLTAGES_V
    assert DVFS(threshold_hz=300e6).level_voltages()[9] == 1.0  # 350 MHz
    q = clone(p).set_params(cap_w=40.0)
    assert p.cap_w == 33 and q.cap_w == 40.0
    with pytest.raises(UnknownNameError):
        get_power_policy("RAPL")
    with pytest.raises(ConfigError):
        get_power_policy("DFS", limit=33)
    tab = AB9().power_table(get_network("resnet-18"), 1, voltages_v=DVFS_VOLTAGES_V)
    with pytest.raises(ParameterError):
        DFS(cap_w=-1).schedule(tab)
    with pytest.raises(ParameterError):
        DVFS(volt_switch_s=float("nan")).schedule(tab)
    with pytest.raises(PowerCapError, match="voltages"):
        DFS().schedule(tab)  # a DVFS table handed to DFS


def test_split_cap_proportional_and_within_budget() -> None:
    shares = split_cap(33.0, 12.0, {"a": 4, "b": 12}, 16)
    assert shares == {"a": pytest.approx(21.0 * 4 / 16), "b": pytest.approx(21.0 * 12 / 16)}
    assert sum(split_cap(33.0, 12.0, {"a": 3, "b": 5}, 16).values()) <= 21.0
    with pytest.raises(PowerCapError):
        split_cap(33.0, 12.0, {"a": 10, "b": 10}, 16)
    with pytest.raises(PowerCapError):
        split_cap(10.0, 12.0, {"a": 1}, 16)
    with pytest.raises(PowerCapError):
        split_cap(33.0, 12.0, {"a": 1}, 0)


def test_levels_are_table5() -> None:
    tab = AB9().power_table(get_network("resnet-18"), 1)
    assert tuple(tab.frequency_hz) == FREQUENCIES_HZ


@settings(max_examples=40, deadline=None)
@given(
    layers=st.lists(
        st.tuples(st.integers(1, 5000), st.integers(1, 5000), st.integers(1, 1024)),
        min_size=1,
        max_size=8,
    ),
    cap=st.floats(20.0, 80.0),
    eff=st.sampled_from([0.01, 0.1, 1.0]),
)
def test_random_ab9_layers_and_limits_never_exceed_cap(
    layers: list[tuple[int, int, int]], cap: float, eff: float
) -> None:
    from npusched.models.ir import Layer, LayerKind, Network

    net = Network(
        "rand",
        tuple(
            Layer(
                f"l{i}",
                LayerKind.CONV,
                m=m,
                k=k,
                n=n,
                input_elems=m * 4,
                output_elems=m * n,
                weight_elems=k * n,
            )
            for i, (m, k, n) in enumerate(layers)
        ),
    )
    dev = AB9(stc_efficiency=eff)
    for pol in (DFS(cap_w=cap), DVFS(cap_w=cap)):
        tab = dev.power_table(net, 1, voltages_v=pol.level_voltages())
        brute = _brute_levels(np.asarray(tab.power_w), cap)
        if min(brute) < 0:
            with pytest.raises(PowerCapError):
                pol.schedule(tab)
            continue
        s = pol.schedule(tab)
        assert s.level.tolist() == brute
        assert s.peak_power_w <= cap


@settings(max_examples=50, deadline=None)
@given(
    data=st.data(),
    n_jobs=st.integers(1, 5),
    total=st.integers(1, 16),
    cap=st.floats(25.0, 60.0),
)
def test_shared_cap_levels_sum_within_cap(
    data: st.DataObject, n_jobs: int, total: int, cap: float
) -> None:
    from npusched.policies.power import shared_cap_levels

    idle = 24.0
    units = {}
    left = total
    for j in range(n_jobs):
        u = data.draw(st.integers(0, left))
        units[j] = u
        left -= u
    dyn = {
        j: np.sort(data.draw(st.lists(st.floats(0.0, 40.0), min_size=20, max_size=20)))
        for j in units
    }
    shares = split_cap(cap, idle, units, total)
    if any(dyn[j][0] > shares[j] for j in units):
        with pytest.raises(PowerCapError):
            shared_cap_levels(dyn, units, total, cap, idle)
        return
    lv = shared_cap_levels(dyn, units, total, cap, idle)
    assert idle + sum(dyn[j][lv[j]] for j in units) <= cap + 1e-9
    for j in units:  # highest feasible for its share (brute force)
        assert lv[j] == max(i for i in range(20) if dyn[j][i] <= shares[j])


def test_shared_cap_single_job_is_plain_dfs() -> None:
    from npusched.policies.power import shared_cap_levels

    dev = AB9(stc_efficiency=0.02)
    tab = dev.power_table(get_network("squeezenet"), 1)
    s = DFS().schedule(tab)
    for step in range(tab.n_layers):
        lv = shared_cap_levels(
            {"a": tab.power_w[:, step] - tab.idle_power_w}, {"a": 16}, 16, 33.0, tab.idle_power_w
        )
        assert lv["a"] == s.level[step]


def test_power_policy_from_config() -> None:
    from npusched.policies.power import power_policy_from_config

    pol = power_policy_from_config({"name": "DFS", "cap_w": 33})
    assert isinstance(pol, DFS) and pol.cap_w == 33
    assert isinstance(power_policy_from_config({"name": "DVFS"}), DVFS)
    with pytest.raises(ConfigError, match=r"power\.name.*DFS"):
        power_policy_from_config({"cap_w": 33})
    with pytest.raises(ConfigError, match="power: unknown power policy 'RAPL'"):
        power_policy_from_config({"name": "RAPL"})
    with pytest.raises(ConfigError, match="limit"):
        power_policy_from_config({"name": "DFS", "limit": 33})
    with pytest.raises(ConfigError, match="cap_w"):
        power_policy_from_config({"name": "DFS", "cap_w": -3}, where="run.power")


def test_engine_hooks_step_levels_and_switch_cost() -> None:
    dev = AB9(stc_efficiency=0.02)
    net = get_network("yolov2")
    for pol in (DFS(), DVFS()):
        tab = dev.power_table(net, 1, voltages_v=pol.level_voltages())
        s = pol.schedule(tab)
        np.testing.assert_array_equal(pol.step_levels(tab), s.level)
        # charging switch_cost step by step (frames back to back) gives the schedule's costs
        prev = (s.frequency_hz[-1], s.voltage_v[-1])
        for i in range(len(s.level)):
            nxt = (s.frequency_hz[i], s.voltage_v[i])
            assert pol.switch_cost(prev, nxt) == s.switch_s[i]
            prev = nxt
        # a job's share of a shared cap gives lower or equal levels
        assert (pol.step_levels(tab, cap_w=30.0) <= s.level).all()
    assert DVFS().switch_cost(None, (1e9, 1.0)) == 0.0
    assert DVFS().switch_cost((5e8, 0.95), (1e9, 1.0)) == 2.15e-3
    assert DVFS().switch_cost((8e8, 1.0), (1e9, 1.0)) == 20e-6
    assert DFS().switch_cost((1e9, 1.0), (1e9, 1.0)) == 0.0


def test_switch_cost_rechecks_a_parameter_changed_after_a_passing_check() -> None:
    """The engine asks ``switch_cost`` at every start, so the parameters are checked again only
    when one changed: a value made invalid after a passing check (or one of another type, a
    bool for a number) still raises."""
    pol = DFS(cap_w=30.0)
    a, b = (1e9, 0.8), (1.2e9, 0.9)
    first = pol.switch_cost(a, b)
    assert pol.switch_cost(a, b) == first
    pol.volt_switch_s = -1.0
    with pytest.raises(ParameterError):
        pol.switch_cost(a, b)
    pol.volt_switch_s = 2e-6
    assert pol.switch_cost(a, b) == 2e-6
    pol.cap_w = True  # type: ignore[assignment]
    with pytest.raises(ParameterError):
        pol.switch_cost(a, b)
