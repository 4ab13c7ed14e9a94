"""The token orders (PREMA, TOKEN), which the engine decides on the policy's token table
(Algorithm 2, ``policies/temporal/levels.py``): the same result to the last bit as the policy's
scan over the job views (``level_table = False``), and, for the runs that compared the column
loop with the general loop until the twenty-eighth round, the values frozen from them
(``tests/golden_loops.py``)."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import golden_loops
from npusched.errors import SimulationError
from npusched.policies.base import POLICIES
from npusched.policies.temporal.predictor import make_estimator
from npusched.policies.temporal.prema import TokenScheduler
from npusched.sim.engine import Simulator, _Run
from npusched.workloads.request import Request
from simhelpers import assert_same_result, make_profile
from test_ranked_fast_path import energy_workload

SETTINGS = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
#: Every registered token scheduler (PREMA and TOKEN, both variants).
TOKEN_POLICIES = tuple(
    name for name in POLICIES.names() if isinstance(POLICIES.create(name), TokenScheduler)
)
MECHANISMS = ("checkpoint", "kill", "dynamic", "dynamic-kill")


def _policy(name: str, **params: object) -> TokenScheduler:
    if not name.startswith("P-"):
        params.pop("mechanism", None)
    return POLICIES.create(name, **params)  # type: ignore[no-any-return]


def _both(profiles: dict, reqs: list[Request], name: str, params: dict, **kw: object) -> tuple:
    """The run on the engine's token table and the policy's scan over job views
    (``level_table = False``, the reference); a livelock's error message in place of a
    result (both must raise it)."""
    runs: list[object] = []
    for table in (True, False):
        pol = _policy(name, **params)
        pol.level_table = table
        sim = Simulator(profiles, pol, **kw)
        try:
            runs.append(sim.run(reqs))
        except SimulationError as e:
            if "livelock" not in str(e):
                raise
            runs.append(str(e))
    return runs[0], runs[1]


def _assert_identical(a: object, b: object) -> None:
    if isinstance(a, str) or isinstance(b, str):
        assert a == b  # the same livelock, at the same time
        return
    assert_same_result(a, b)
    for attr in ("energy_j", "end_s", "resources", "policy", "events", "layer_executions"):
        assert getattr(a, attr) == getattr(b, attr), attr


@SETTINGS
@given(
    wl=energy_workload(),
    name=st.sampled_from(TOKEN_POLICIES),
    mechanism=st.sampled_from(MECHANISMS),
    rule=st.sampled_from(["cumulative", "linear"]),
    threshold=st.sampled_from([">=", ">"]),
    include_running=st.booleans(),
    # 50 us periods put boundaries on the arrivals' 10 us grid (ties within the tolerance).
    period=st.sampled_from([5e-5, 1e-4, 2.5e-4, 3.3e-5]),
    point=st.sampled_from(["tile", "layer"]),
    cost=st.booleans(),
)
def test_token_table_equals_scan(
    wl: tuple,
    name: str,
    mechanism: str,
    rule: str,
    threshold: str,
    include_running: bool,
    period: float,
    point: str,
    cost: bool,
) -> None:
    """The engine's token table and the policy's scan give the same run to the last bit
    (until the twenty-eighth round the column loop was compared here too)."""
    # KILL with the running job outside the ready queue restarts it at every tick, for ever:
    # a livelock of the configuration, not a case to compare.
    assume(include_running or "kill" not in mechanism)
    profiles, reqs = wl
    params = {
        "mechanism": mechanism,
        "tokens": rule,
        "threshold": threshold,
        "include_running": include_running,
        "period_s": period,
    }
    table, scan = _both(
        profiles, reqs, name, params, preemption_point=point, checkpoint_cost=cost
    )
    _assert_identical(table, scan)


@pytest.mark.parametrize("name", golden_loops.TOKEN_POLICIES)
@pytest.mark.parametrize("rule", ["cumulative", "linear"])
def test_token_orders_at_load(name: str, rule: str) -> None:
    """1,500 requests at load 0.9 on the bench's synthetic profiles with a noisy predictor:
    long queues, thousands of ticks and preemptions: the run both loops gave at dbd9f47, and
    the policy's scan gives it too."""
    res = golden_loops.frozen(f"token-load/{name}/{rule}")
    if name.startswith("P-"):
        assert res.columns["preemptions"].sum() > 10
    profiles, reqs = golden_loops.load_workload(1_500)
    pol = _policy(name, mechanism="dynamic", tokens=rule)
    pol.level_table = False
    scan = Simulator(profiles, pol, preemption_point="tile", estimator=make_estimator("prema"))
    _assert_identical(res, scan.run(reqs))


def test_bench_prema_scenario() -> None:
    """The bench's ``prema`` scenario (PREMA's mix with RNNs, modelled checkpoints): the run
    both loops gave at dbd9f47."""
    golden_loops.frozen("bench-prema")


@pytest.mark.parametrize("rule", ["cumulative", "linear"])
def test_livelock_raises_instead_of_spinning(rule: str) -> None:
    """Regression (hypothesis found it; it spun for ever): with ``include_running=False`` the
    waiting job is always a candidate and preempts the running one at every tick (threshold
    ``">"`` ticks every period); a 50,040 B checkpoint takes 50 us to restore, as long as the
    period, so each job is stopped while still restoring and neither ever computes again. The
    engine's guard raises after 10,000 preemptions in a row without progress."""
    profiles = {"n0": make_profile("n0", [67e-6, 0.0], tiles=[4, 1], checkpoint_bytes=[50040, 0])}
    reqs = [Request(id=i, arrival_s=0.0, network="n0", priority=1) for i in (0, 1)]
    pol = _policy(
        "P-PREMA",
        mechanism="checkpoint",
        tokens=rule,
        threshold=">",
        include_running=False,
        period_s=5e-5,
    )
    sim = Simulator(profiles, pol, preemption_point="tile")
    with pytest.raises(SimulationError, match=r"'P-PREMA' preempted 10000 times .* livelock"):
        sim.run(reqs)


def test_kill_without_the_running_job_raises_livelock() -> None:
    """KILL with ``include_running=False``: each tick kills the running job (its work lost) and
    starts the other; nothing ever finishes. The same guard raises."""
    profiles = {"n0": make_profile("n0", [1e-3])}
    reqs = [Request(id=i, arrival_s=0.0, network="n0", priority=1) for i in (0, 1)]
    pol = _policy("P-TOKEN", mechanism="kill", threshold=">", include_running=False)
    sim = Simulator(profiles, pol)
    with pytest.raises(SimulationError, match="livelock"):
        sim.run(reqs)


def _general(
    profiles: dict, reqs: list[Request], name: str, params: dict, table: bool, **kw: object
) -> object:
    pol = _policy(name, **params)
    pol.level_table = table
    try:
        return Simulator(profiles, pol, **kw).run(reqs)
    except SimulationError as e:
        if "livelock" not in str(e):
            raise
        return str(e)


@SETTINGS
@given(
    wl=energy_workload(),
    name=st.sampled_from(TOKEN_POLICIES),
    mechanism=st.sampled_from(MECHANISMS),
    rule=st.sampled_from(["cumulative", "linear"]),
    threshold=st.sampled_from([">=", ">"]),
    period=st.sampled_from([5e-5, 1e-4, 2.5e-4, 3.3e-5]),
    skip=st.booleans(),
    deps=st.lists(st.integers(0, 13), max_size=6),
)
def test_general_loop_table_equals_scan(
    wl: tuple,
    name: str,
    mechanism: str,
    rule: str,
    threshold: str,
    period: float,
    skip: bool,
    deps: list[int],
) -> None:
    """A tick at every boundary or skipped ticks, dependent requests: the policy's token table
    gives the scan's result to the bit."""
    profiles, reqs = wl
    # Some requests wait for an earlier one (dispatched when it finishes).
    reqs = [
        Request(r.id, r.arrival_s, r.network, priority=r.priority, depends_on=r.id - 1)
        if r.id in deps and r.id > 0
        else r
        for r in reqs
    ]
    params = {"mechanism": mechanism, "tokens": rule, "threshold": threshold, "period_s": period}
    kw = {"skip_periods": skip, "preemption_point": "tile"}
    table = _general(profiles, reqs, name, params, True, **kw)
    scan = _general(profiles, reqs, name, params, False, **kw)
    _assert_identical(table, scan)


@pytest.mark.parametrize("name", ["P-PREMA", "NP-PREMA", "P-TOKEN"])
def test_general_loop_table_under_a_power_policy(name: str) -> None:
    """PREMA under DFS: with the token table it gives the scan's result. The table is the
    engine's own (made by the policy's ``token_table``, since the twenty-sixth round), the
    scan the policy's ``select``."""
    from npusched.hardware import compile_profile
    from npusched.hardware.power import AB9
    from npusched.models import get_network
    from npusched.policies.power import DFS
    from npusched.sim.resources import Machine, Resource

    dev = AB9(stc_efficiency=0.02)
    nets = ("squeezenet", "resnet-18")
    profs = {n: compile_profile(get_network(n), dev) for n in nets}
    reqs = [
        Request(id=i, arrival_s=i * 2.5e-3, network=nets[i % 2], priority=(1, 3, 9)[i % 3])
        for i in range(24)
    ]
    runs = []
    for table in (True, False):
        pol = _policy(name, mechanism="dynamic")
        pol.level_table = table
        sim = Simulator(
            profs,
            pol,
            machine=Machine((Resource("npu", idle_power_w=dev.idle_power_w),)),
            power=DFS(cap_w=30.0, idle_power_w=dev.idle_power_w),
            power_cap_w=30.0,
            record_power=True,
        )
        run = _Run(sim, reqs, None, None)  # type: ignore[arg-type]
        runs.append(run.execute())
        assert (run.tokens is not None) == table  # the engine held the policy's table
    _assert_identical(runs[0], runs[1])
    assert runs[0].events > 0
