"""Golden fixtures of the runs the two engine loops were compared on, frozen before the column
loop (``sim/columns.py``) was deleted (twenty-eighth round).

Until then the engine had two loops: the general loop and the column loop, which took the
temporal policies that declare their ready order (FCFS, HPF, SJF, PREMA, TOKEN, RRB) by
default, and many tests ran each workload on both (``Simulator(fast_path=False)`` forced the
general loop) and asserted the two results equal to the last bit. With one loop left, such a
test would compare the loop with itself; these fixtures keep what they checked as values: each
case below is a run one of those tests made, reduced to a digest (``golden_engine.digest``:
every column's bytes, the exact scalars, the power timeline; here also the timeline's segments
and the power pieces where they were recorded, and a livelock's message where the run raised
one). The digests live in ``tests/data/golden_loops.json``.

They were frozen from the two-loop code at commit dbd9f47, where both loops agreed: ``--write``
ran every case on the loop the engine chose (the column loop for all of them) and again with
every ``Simulator.run`` forced onto the general loop (``fast_path = False``), and wrote the
digests only because the two were equal for every case. Since the deletion ``fast_path`` has
no effect, so a rewrite compares one loop with itself: regenerate only when a result changes
on purpose, the cause named in the commit::

    PYTHONPATH=src python tests/golden_loops.py --write

The tests run the cases through :func:`frozen` (the run, checked against its digest, handed
back for the test's own checks) or check a run they made themselves with :func:`assert_frozen`.
"""

from __future__ import annotations

import functools
import hashlib
import json
import random
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from golden_engine import digest as engine_digest
from golden_engine import load_simulator

DATA = Path(__file__).resolve().parent / "data" / "golden_loops.json"

# --- the cases' workloads and simulators ----------------------------------------------------

#: The rank-order policies (``RankedPolicy`` with a ``queue_key``) and their mechanisms.
RANKED = ("NP-FCFS", "P-FCFS", "NP-HPF", "P-HPF")
MECHANISMS = ("checkpoint", "kill", "drain", "dynamic", "dynamic-kill")
#: The token schedulers (PREMA, TOKEN).
TOKEN_POLICIES = ("NP-PREMA", "P-PREMA", "NP-TOKEN", "P-TOKEN")
#: SJF (``ready_order = "remaining"``) with the mechanisms it takes, by index.
SJF_RUNS: tuple[tuple[str, dict[str, str]], ...] = (
    ("NP-SJF", {}),
    ("P-SJF", {"mechanism": "checkpoint"}),
    ("P-SJF", {"mechanism": "kill"}),
    ("P-SJF", {"mechanism": "dynamic"}),
    ("P-SJF", {"mechanism": "dynamic-kill"}),
)
RRB_MECHANISMS = ("checkpoint", "dynamic", "dynamic-kill")
RRB_LOADS = (0.9, 1.5)
RRB_SLICES = ((0.25e-3, 0.25e-3), (0.37e-3, 0.1e-3))
#: Every temporal family with the mechanisms it takes (``None``: none).
FAMILIES: dict[str, tuple[str | None, ...]] = {
    "NP-FCFS": (None,),
    "P-FCFS": ("checkpoint", "kill", "drain", "dynamic", "dynamic-kill"),
    "NP-HPF": (None,),
    "P-HPF": ("checkpoint", "kill", "drain", "dynamic", "dynamic-kill"),
    "NP-SJF": (None,),
    "P-SJF": ("checkpoint", "kill", "dynamic", "dynamic-kill"),
    "NP-PREMA": (None,),
    "P-PREMA": ("checkpoint", "kill", "dynamic", "dynamic-kill"),
    "NP-TOKEN": (None,),
    "P-TOKEN": ("checkpoint", "kill", "dynamic", "dynamic-kill"),
    "NP-RRB": (None,),
    "P-RRB": ("checkpoint", "dynamic", "dynamic-kill"),
}
#: The power runs' policies with their mechanisms (``tests/test_power_fast_path.py``).
POWER_POLICIES: dict[str, tuple[str | None, ...]] = {
    "P-PREMA": ("checkpoint", "kill", "dynamic", "dynamic-kill"),
    "NP-PREMA": (None,),
    "P-TOKEN": ("checkpoint", "kill", "dynamic", "dynamic-kill"),
    "P-HPF": ("checkpoint", "kill", "dynamic", "dynamic-kill"),
    "NP-FCFS": (None,),
    "P-SJF": ("checkpoint", "kill", "dynamic"),
    "NP-SJF": (None,),
    "P-RRB": ("checkpoint", "dynamic", "dynamic-kill"),
    "NP-RRB": (None,),
}
POWER_CASES = [(name, m) for name, ms in POWER_POLICIES.items() for m in ms]
POWER_NETS = ("squeezenet", "resnet-18", "mobilenet-v2")
#: The power runs with dependents and early exits.
POWER_DEPENDENT_CASES = (
    ("P-PREMA", "dynamic"),
    ("P-HPF", "checkpoint"),
    ("P-SJF", "kill"),
    ("P-RRB", "checkpoint"),
)
RECORD_POLICIES = ("P-HPF", "P-SJF", "P-PREMA", "P-RRB", "NP-FCFS")
RECORD_UNTIL = (None, 0.02, 0.08)
UNORDERED = ("P-PREMA", "NP-PREMA", "P-TOKEN", "NP-TOKEN", "P-RRB", "NP-RRB")
NATIVE_TOKEN = (
    ("P-PREMA", "dynamic"),
    ("P-PREMA", "kill"),
    ("P-TOKEN", "checkpoint"),
    ("P-TOKEN", "dynamic-kill"),
)


def create(name: str, mechanism: str | None = None, **params: Any) -> Any:
    """The registered policy ``name`` with ``mechanism`` where given."""
    from npusched.policies.base import POLICIES

    if mechanism is not None:
        params["mechanism"] = mechanism
    return POLICIES.create(name, **params)


def outcome(sim: Any, reqs: Any, until: float | None = None) -> Any:
    """``sim``'s run of ``reqs``, or ``("raised", message)`` where it raised a
    :class:`~npusched.errors.SimulationError` (a livelock)."""
    from npusched.errors import SimulationError

    try:
        return sim.run(reqs) if until is None else sim.run(reqs, until=until)
    except SimulationError as exc:
        return ("raised", str(exc))


@functools.cache
def load_workload(n: int, load: float | None = None, random_state: int = 5) -> tuple[Any, Any]:
    """The bench's synthetic profiles (``random_state=3``) and ``n`` requests of its workload."""
    from npusched.bench import bench_workload, synthetic_profiles

    profiles = synthetic_profiles(random_state=3)
    kw = {} if load is None else {"load": load}
    return profiles, bench_workload(n, profiles, random_state=random_state, **kw)


def _prema_estimator() -> Any:
    from npusched.policies.temporal.predictor import make_estimator

    return make_estimator("prema")


def ranked_load(name: str, mechanism: str) -> Any:
    """2,000 requests at load 0.9 with PREMA's noisy predictor, tile preemption."""
    from npusched.sim.engine import Simulator

    profiles, reqs = load_workload(2_000)
    sim = Simulator(
        profiles,
        create(name, mechanism),
        preemption_point="tile",
        estimator=_prema_estimator(),
    )
    return sim.run(reqs)


def ranked_power(name: str, mechanism: str) -> Any:
    """400 requests, power pieces recorded (every ``run_config`` run records them)."""
    from npusched.sim.engine import Simulator

    profiles, reqs = load_workload(400)
    sim = Simulator(
        profiles,
        create(name, mechanism),
        preemption_point="tile",
        estimator=_prema_estimator(),
        record_power=True,
    )
    return sim.run(reqs)


def superseded_system() -> tuple[dict[str, Any], list[Any]]:
    """A preemption leaves the victim's old completion (``a``'s first, at ``t_a``) superseded;
    an arrival 1 ulp after it is handled in the wake that completion opens."""
    from npusched.testing import make_profile
    from npusched.workloads.request import Request

    profiles = {
        "a": make_profile("a", [1e-3, 1e-3], tiles=4, energy_j=[1e-3, 2e-3]),
        "b": make_profile("b", [0.25e-3]),
    }
    t_a = profiles["a"].plan(1).total_s
    reqs = [
        Request(id=0, arrival_s=0.0, network="a", priority=1),
        Request(id=1, arrival_s=0.5e-3, network="b", priority=9),
        Request(id=2, arrival_s=float(np.nextafter(t_a, 1.0)), network="b", priority=9),
    ]
    return profiles, reqs


def superseded(mechanism: str) -> Any:
    from npusched.sim.engine import Simulator

    profiles, reqs = superseded_system()
    return Simulator(profiles, create("P-HPF", mechanism), preemption_point="tile").run(reqs)


def sjf_load(i: int) -> Any:
    """SJF run ``i`` of :data:`SJF_RUNS`: 1,500 requests at load 0.9, PREMA's predictor."""
    from npusched.sim.engine import Simulator

    name, params = SJF_RUNS[i]
    profiles, reqs = load_workload(1_500)
    sim = Simulator(
        profiles,
        create(name, **params),
        preemption_point="tile",
        estimator=_prema_estimator(),
    )
    return sim.run(reqs)


def token_policy(name: str, **params: Any) -> Any:
    """A token scheduler (the non-preemptive ones take no ``mechanism``)."""
    if not name.startswith("P-"):
        params.pop("mechanism", None)
    return create(name, **params)


def token_load(name: str, rule: str) -> Any:
    """1,500 requests at load 0.9, PREMA's predictor: long queues, thousands of ticks."""
    from npusched.sim.engine import Simulator

    profiles, reqs = load_workload(1_500)
    sim = Simulator(
        profiles,
        token_policy(name, mechanism="dynamic", tokens=rule),
        preemption_point="tile",
        estimator=_prema_estimator(),
    )
    return outcome(sim, reqs)


def bench_prema() -> Any:
    """The bench's ``prema`` scenario as ``engine_setup`` makes it (PREMA's mix, its RNNs,
    modelled checkpoints; P-PREMA's linear token rule)."""
    from npusched.bench import engine_setup

    sim, reqs = engine_setup("prema", requests=1_500, seed=1)
    return sim.run(reqs)


def rrb_load(mechanism: str, load: float, quantum_s: float, period_s: float) -> Any:
    """P-RRB on the bench workload (400 requests), tile preemption, checkpoint cost, PREMA's
    predictor, power and timeline recorded."""
    from npusched.policies.temporal.rrb import PRRB

    profiles, reqs = load_workload(400, load, random_state=11)
    pol = PRRB(mechanism=mechanism, quantum_s=quantum_s, period_s=period_s)
    return load_simulator(profiles, pol, record_timeline=True).run(reqs)


@functools.cache
def power_setup(volt: str) -> tuple[Any, dict[str, Any]]:
    """The AB9 (DFS: one voltage; DVFS: a voltage per level) and its profiles of the nets."""
    from npusched.hardware import compile_profile
    from npusched.hardware.power import AB9
    from npusched.models import get_network

    dev = AB9(stc_efficiency=0.02, voltage_v="dvfs") if volt == "dvfs" else AB9(stc_efficiency=0.02)
    return dev, {n: compile_profile(get_network(n), dev) for n in POWER_NETS}


def power_simulator(volt: str, policy: Any, cap: float, **kw: Any) -> Any:
    """``policy`` on the AB9 under DFS or DVFS with a power cap of ``cap`` W."""
    from npusched.policies.power import DFS, DVFS
    from npusched.sim.engine import Simulator
    from npusched.sim.resources import Machine, Resource

    dev, profs = power_setup(volt)
    power = (DFS if volt == "dfs" else DVFS)(cap_w=cap, idle_power_w=dev.idle_power_w)
    return Simulator(
        profs,
        policy,
        machine=Machine((Resource("npu", idle_power_w=dev.idle_power_w),)),
        power=power,
        power_cap_w=cap,
        **kw,
    )


def power_requests() -> list[Any]:
    """150 requests of three models arriving faster than they run."""
    from npusched.workloads.request import Request

    rng = random.Random(1)
    t = 0.0
    reqs = []
    for i in range(150):
        t += rng.expovariate(1 / 2.5e-3)
        reqs.append(
            Request(
                id=i, arrival_s=t, network=POWER_NETS[rng.randrange(3)], priority=(1, 3, 9)[i % 3]
            )
        )
    return reqs


def power_load(volt: str, name: str, mechanism: str | None) -> Any:
    """Switches at most starts, preemptions and restores; power and timeline recorded."""
    params = {"quantum_s": 2.5e-3, "period_s": 1e-3} if name == "P-RRB" else {}
    sim = power_simulator(
        volt, create(name, mechanism, **params), 33.0, record_power=True, record_timeline=True
    )
    return outcome(sim, power_requests())


def exit_profile(
    name: str,
    lat: list[float],
    exits: tuple[int, ...],
    *,
    tiles: list[int],
    ckpt: list[int],
    energy: list[float],
) -> Any:
    """A hand-built profile whose network has early exits after the given layers."""
    import dataclasses

    from npusched.hardware.profile import Profile
    from npusched.models.ir import ExitPoint
    from npusched.testing import make_network_stub

    net = make_network_stub(name, len(lat))
    net = dataclasses.replace(
        net, exits=tuple(ExitPoint(name=f"x{i}", after=a) for i, a in enumerate(exits))
    )
    return Profile.from_tables(
        net,
        device_name="hand-built",
        batch_sizes=(1,),
        latency_s=np.asarray(lat, dtype=np.float64),
        frequency_hz=1e9,
        memory_bandwidth_bps=1e9,
        tiles=tiles,
        checkpoint_bytes=ckpt,
        energy_j=energy,
    )


def dependents(name: str) -> Any:
    """A request leaving at its exit, one depending on it (a transfer), one of priority 9."""
    from npusched.sim.engine import Simulator
    from npusched.workloads.request import Request

    prof = exit_profile("e", [1e-3] * 4, (1,), tiles=[2] * 4, ckpt=[64] * 4, energy=[1e-3] * 4)
    reqs = [
        Request(0, 0.0, "e", exit=0),
        Request(1, 0.0, "e", depends_on=0, transfer_s=0.5e-3),
        Request(2, 1e-4, "e", priority=9),
    ]
    return outcome(Simulator({"e": prof}, create(name)), reqs)


def pending_exit() -> Any:
    """A CHECKPOINT victim whose exit comes before its next preemption point."""
    from npusched.sim.engine import Simulator
    from npusched.workloads.request import Request

    prof = exit_profile("e", [1e-3] * 4, (2,), tiles=[1] * 4, ckpt=[1000] * 4, energy=[1e-3] * 4)
    hi = exit_profile("h", [0.1e-3], (), tiles=[1], ckpt=[0], energy=[1e-4])
    reqs = [
        Request(0, 0.0, "e", priority=1, exit=0),
        Request(1, 1.5e-3, "h", priority=9),
        Request(2, 2.5e-3, "e", priority=1, depends_on=1, transfer_s=0.0),
    ]
    sim = Simulator(
        {"e": prof, "h": hi},
        create("P-HPF", "checkpoint"),
        preemption_point="layer",
        record_timeline=True,
    )
    return outcome(sim, reqs)


@functools.cache
def exit_power_setup(volt: str) -> tuple[Any, dict[str, Any]]:
    """The AB9 and its profiles of two nets with three early exits each."""
    from npusched.hardware import compile_profile
    from npusched.hardware.power import AB9
    from npusched.models import get_network
    from npusched.models.exits import attach_exits

    dev = AB9(stc_efficiency=0.02, voltage_v="dvfs") if volt == "dvfs" else AB9(stc_efficiency=0.02)
    nets = ("squeezenet", "resnet-18")
    return dev, {n: compile_profile(attach_exits(get_network(n), 3, "30,30,40"), dev) for n in nets}


def power_dependents(volt: str, name: str, mechanism: str) -> Any:
    """60 requests under DFS / DVFS, some depending on an earlier one, some leaving at an exit."""
    from npusched.policies.power import DFS, DVFS
    from npusched.sim.engine import Simulator
    from npusched.sim.resources import Machine, Resource
    from npusched.workloads.request import Request

    dev, profs = exit_power_setup(volt)
    rng = np.random.default_rng(7)
    nets = sorted(profs)
    n = 60
    arr = np.sort(rng.uniform(0.0, 0.2, n))
    reqs = [
        Request(
            id=i,
            arrival_s=float(arr[i]),
            network=nets[int(rng.integers(len(nets)))],
            priority=int(rng.choice([1, 3, 9])),
            depends_on=int(rng.integers(i)) if i and rng.random() < 0.3 else None,
            transfer_s=float(rng.choice([0.0, 1e-3])),
            exit=int(rng.integers(0, 4)) if rng.random() < 0.6 else None,
        )
        for i in range(n)
    ]
    params: dict[str, Any] = {}
    if name == "P-RRB":
        params.update(quantum_s=2e-3, period_s=1e-3)
    cap = 33.0
    power = (DFS if volt == "dfs" else DVFS)(cap_w=cap, idle_power_w=dev.idle_power_w)
    sim = Simulator(
        profs,
        create(name, mechanism, **params),
        machine=Machine((Resource("npu", idle_power_w=dev.idle_power_w),)),
        power=power,
        power_cap_w=cap,
        record_power=True,
        record_timeline=True,
    )
    return outcome(sim, reqs)


def dependent_workload(n: int) -> list[Any]:
    """The bench workload with every third request held until the one before it finishes."""
    from npusched.bench import bench_workload, synthetic_profiles
    from npusched.workloads.request import Request

    profiles = synthetic_profiles(random_state=0)
    reqs = bench_workload(n, profiles, random_state=2)
    return [
        Request(
            id=r.id,
            arrival_s=r.arrival_s,
            network=r.network,
            priority=r.priority,
            depends_on=r.id - 1 if r.id % 3 == 2 else None,
            transfer_s=1e-4 if r.id % 3 == 2 else 0.0,
        )
        for r in reqs
    ]


def records_policy(name: str, mechanism: str) -> Any:
    """``name`` with CHECKPOINT or a KILL (round-robin's is ``dynamic-kill``: it refuses KILL)."""
    pol = create(name)
    if pol.preemptive:
        kill = "dynamic-kill" if name == "P-RRB" else "kill"
        pol = create(name, kill if mechanism == "kill" else mechanism)
    return pol


def records(name: str, mechanism: str, until: float | None) -> Any:
    """120 requests with dependents (some never released before ``until``), power recorded."""
    from npusched.bench import synthetic_profiles
    from npusched.sim.engine import Simulator

    profiles = synthetic_profiles(random_state=0)
    sim = Simulator(profiles, records_policy(name, mechanism), record_power=True)
    return outcome(sim, dependent_workload(120), until)


def unordered_simulator(policy: Any) -> Any:
    """``tests/test_general_unordered_ready.py``'s simulator: power recorded, PREMA's
    predictor, tile preemption."""
    from npusched.sim.engine import Simulator

    return Simulator(
        load_workload(1_200, 1.5)[0],
        policy,
        record_power=True,
        estimator=_prema_estimator(),
        preemption_point="tile",
    )


def unordered_until(stop: float | None) -> float | None:
    reqs = load_workload(1_200, 1.5)[1]
    return None if stop is None else stop * max(r.arrival_s for r in reqs)


def unordered(name: str, stop: float | None) -> Any:
    """1,200 requests at load 1.5 (queues thousands long), stopped at ``stop`` of the last
    arrival where given."""
    reqs = load_workload(1_200, 1.5)[1]
    return outcome(unordered_simulator(create(name)), reqs, unordered_until(stop))


def token_finished(load: float, name: str) -> Any:
    """400 requests of the bench workload at ``load``, the policy's defaults."""
    from npusched.sim.engine import Simulator

    profiles, reqs = load_workload(400, load)
    return Simulator(profiles, create(name)).run(reqs)


def native_token(name: str, mechanism: str, power: str) -> Any:
    """The families' DFS config (300 requests at load 1.2) with a token policy under DFS or
    DVFS, through ``run_config`` with the timeline (``tests/test_native.py``)."""
    from npusched.bench.families import family_configs
    from npusched.experiments.config import parse_config
    from npusched.experiments.runner import run_config

    dfs = family_configs(300, load=1.2)["DFS"]
    d = dict(
        dfs,
        policy={"name": name, "params": {"mechanism": mechanism}},
        power={"name": power, "cap_w": 33},
    )
    if power == "DVFS":
        d["hardware"] = dict(d["hardware"], params=dict(d["hardware"]["params"], voltage_v="dvfs"))
    return run_config(parse_config(dict(d, seed=3), source=name), timeline=True)


def families_table(fam: str) -> Any:
    """The families' config of ``fam`` (1,000 requests, a request table) through ``run_config``."""
    from npusched.bench.families import family_configs
    from npusched.experiments.config import parse_config
    from npusched.experiments.runner import run_config

    cfg = parse_config(dict(family_configs(1_000)[fam], seed=0), source=f"families:{fam}")
    return run_config(cfg)


# --- digests --------------------------------------------------------------------------------


def _hash_text(items: Any) -> str:
    return hashlib.sha256("\x1f".join(map(repr, items)).encode()).hexdigest()[:20]


def digest(out: Any) -> dict[str, Any]:
    """A run's outcome (a result, a ``run_config`` output, or ``("raised", message)``) as exact,
    comparable JSON: :func:`golden_engine.digest`, and the timeline's segments and the power
    pieces (each plan as its total seconds) where recorded, hashed from their ``repr`` (a
    float's ``repr`` is exact)."""
    if isinstance(out, tuple):
        return {"raised": out[1]}
    res, summary = (out.result, out.summary) if hasattr(out, "result") else (out, None)
    got = engine_digest(res, summary)
    if res.timeline is not None:
        got["timeline"] = {"n": len(res.timeline), "segments": _hash_text(res.timeline)}
    if res.power is not None:
        pieces = [(*p[:2], p.plan.total_s, *p[3:]) for p in res.power]
        got["pieces"] = {"n": len(pieces), "hash": _hash_text(pieces)}
    return got


def cases() -> dict[str, Callable[[], Any]]:
    """Case id -> the function making its run's outcome."""
    out: dict[str, Callable[[], Any]] = {}
    for n in RANKED:
        for m in MECHANISMS:
            out[f"ranked-load/{n}/{m}"] = functools.partial(ranked_load, n, m)
    for n in ("P-HPF", "P-FCFS", "P-PREMA", "P-TOKEN"):
        for m in ("checkpoint", "kill", "dynamic"):
            out[f"ranked-power/{n}/{m}"] = functools.partial(ranked_power, n, m)
    for m in ("kill", "checkpoint"):
        out[f"superseded/{m}"] = functools.partial(superseded, m)
    for i in range(len(SJF_RUNS)):
        out[f"sjf-load/{i}"] = functools.partial(sjf_load, i)
    for n in TOKEN_POLICIES:
        for r in ("cumulative", "linear"):
            out[f"token-load/{n}/{r}"] = functools.partial(token_load, n, r)
    out["bench-prema"] = bench_prema
    for m in RRB_MECHANISMS:
        for load in RRB_LOADS:
            for q, p in RRB_SLICES:
                out[f"rrb-load/{m}/{load}/{q}/{p}"] = functools.partial(rrb_load, m, load, q, p)
    for volt in ("dfs", "dvfs"):
        for n, m in POWER_CASES:
            out[f"power-load/{volt}/{n}/{m}"] = functools.partial(power_load, volt, n, m)
    for n in FAMILIES:
        out[f"dependents/{n}"] = functools.partial(dependents, n)
    out["pending-exit"] = pending_exit
    for volt in ("dfs", "dvfs"):
        for n, m in POWER_DEPENDENT_CASES:
            out[f"power-dependents/{volt}/{n}/{m}"] = functools.partial(
                power_dependents, volt, n, m
            )
    for n in RECORD_POLICIES:
        for m in ("checkpoint", "kill"):
            for u in RECORD_UNTIL:
                out[f"records/{n}/{m}/{u}"] = functools.partial(records, n, m, u)
    for n in UNORDERED:
        for stop in (None, 0.6):
            out[f"unordered/{n}/{stop}"] = functools.partial(unordered, n, stop)
    for load in (0.9, 1.5):
        for n in ("P-PREMA", "P-TOKEN"):
            out[f"token-finished/{load}/{n}"] = functools.partial(token_finished, load, n)
    for n, m in NATIVE_TOKEN:
        for power in ("DFS", "DVFS"):
            out[f"native-token/{n}/{m}/{power}"] = functools.partial(native_token, n, m, power)
    for fam in ("FCFS", "HPF", "SJF"):
        out[f"families-table/{fam}"] = functools.partial(families_table, fam)
    return out


@functools.cache
def load() -> dict[str, Any]:
    return json.loads(DATA.read_text())  # type: ignore[no-any-return]


def assert_frozen(case: str, out: Any) -> None:
    """``out`` (a run's outcome) has the frozen digest of ``case``, key by key."""
    want = load()[case]
    got = json.loads(json.dumps(digest(out)))
    assert got.keys() == want.keys(), case
    for key in want:
        assert got[key] == want[key], f"{case}: {key}"


def frozen(case: str) -> Any:
    """The outcome of ``case``'s run, checked against its frozen digest."""
    out = cases()[case]()
    assert_frozen(case, out)
    return out


@contextmanager
def general_loop() -> Iterator[None]:
    """Every ``Simulator.run`` in the block forced onto the general loop (``fast_path =
    False``; at dbd9f47 the one way to run the general loop where the column loop applied)."""
    import npusched.sim.engine as engine

    plain = engine.Simulator.run

    def run(self: Any, *a: Any, **k: Any) -> Any:
        self.fast_path = False
        return plain(self, *a, **k)

    engine.Simulator.run = run  # type: ignore[method-assign]
    try:
        yield
    finally:
        engine.Simulator.run = plain  # type: ignore[method-assign]


def main(argv: list[str]) -> int:
    if argv != ["--write"]:
        print(__doc__)
        return 2
    data = {}
    for k, f in cases().items():
        first = json.loads(json.dumps(digest(f())))
        with general_loop():
            second = json.loads(json.dumps(digest(f())))
        if first != second:
            print(f"{k}: the loop the engine chose and the general loop differ", file=sys.stderr)
            return 1
        data[k] = first
        print(k, first.get("events", first.get("raised")), file=sys.stderr)
    DATA.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
