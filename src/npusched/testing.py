"""The conformance suite, for your own policies (as scikit-learn exports ``check_estimator``).

:func:`check_policy` runs a temporal policy, and :func:`check_machine_policy` a machine policy,
through the invariants every built-in policy passes in npusched's own tests: on random small
workloads it must never lose or duplicate a request, never put more work on a resource than it
holds, finish no request before ``arrival + isolated latency``, account checkpoints exactly,
be deterministic (the same simulator twice, and a fresh copy of the policy) and leave its
parameters and the requests unchanged. A failure raises ``AssertionError`` naming the workload.

The helpers below (hand-built profiles, the invariant checks) are the ones npusched's test
suite uses (``tests/simhelpers.py`` re-exports them). No test framework is needed::

    from npusched.testing import check_policy
    check_policy(MyPolicy())
"""

from __future__ import annotations

import copy
import itertools
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from npusched.errors import NpuschedError
from npusched.hardware.profile import Profile
from npusched.models.ir import ExitPoint, Layer, LayerKind, Network, make_network
from npusched.sim.events import TIME_TOL_S
from npusched.workloads.request import Request

__all__ = [
    "assert_same_result",
    "check_capacity",
    "check_checkpoints",
    "check_invariants",
    "check_machine_policy",
    "check_policy",
    "check_work_conserving",
    "make_network_stub",
    "make_profile",
    "random_workload",
    "variant_profile",
]

MS = 1e-3


def _close(a: float, b: float, tol: float) -> bool:
    """``a == b`` within ``tol`` seconds absolute or 1e-9 relative (pytest.approx's rule)."""
    return abs(a - b) <= max(tol, 1e-9 * abs(b))


def make_network_stub(name: str, n_layers: int) -> Network:
    """A network of ``n_layers`` vector layers named ``l0 .. l{n-1}`` (shapes are irrelevant)."""
    layers = [
        Layer(name=f"l{i}", kind=LayerKind.VECTOR, inputs=(f"l{i - 1}",) if i else ())
        for i in range(n_layers)
    ]
    return make_network(name, layers)


def make_profile(
    name: str,
    latencies_s: Sequence[float],
    *,
    tiles: Sequence[int] | int = 1,
    checkpoint_bytes: Sequence[int] | int = 0,
    bandwidth_bps: float = 1e9,
    frequency_hz: float = 1e9,
    energy_j: Sequence[float] | float = 0.0,
    batch_sizes: Sequence[int] = (1,),
) -> Profile:
    """A profile of network ``name`` from per-layer tables (the same for every batch size).

    Args:
        name: network / profile name.
        latencies_s: seconds per layer.
        tiles: tiles per layer (CHECKPOINT preemption points), scalar or per layer.
        checkpoint_bytes: bytes a CHECKPOINT inside each layer saves, scalar or per layer.
        bandwidth_bps: memory bandwidth in bytes/second (save/restore time = bytes / bandwidth).
        frequency_hz: clock used to derive ``cycles``.
        energy_j: joules per layer.
        batch_sizes: rows of the profile (all rows identical).
    """
    lat = np.asarray(latencies_s, dtype=np.float64)
    return Profile.from_tables(
        make_network_stub(name, len(lat)),
        device_name="hand-built",
        batch_sizes=tuple(batch_sizes),
        latency_s=lat,
        frequency_hz=frequency_hz,
        memory_bandwidth_bps=bandwidth_bps,
        tiles=tiles,
        checkpoint_bytes=checkpoint_bytes,
        energy_j=energy_j,
    )


def variant_profile(
    name: str,
    lat_1: Sequence[float],
    *,
    axis: str = "subarrays",
    values: tuple[Any, ...] = tuple(range(1, 17)),
    speed: Callable[[Any], float] = float,
    batch_sizes: tuple[int, ...] = (1,),
    tiles: int = 1,
    checkpoint_bytes: int = 0,
    energy_j: Sequence[float] | None = None,
    exits: tuple[ExitPoint, ...] = (),
) -> Profile:
    """A profile with a plan axis: layer ``i`` takes ``lat_1[i] * batch / speed(value)`` seconds
    on axis value ``value`` (rows in C order over (value, batch))."""
    lat = np.asarray(lat_1, dtype=np.float64)
    rows = [lat * b / speed(v) for v in values for b in batch_sizes]
    e = np.zeros(len(lat)) if energy_j is None else np.asarray(energy_j)
    energy = [e * b for _ in values for b in batch_sizes]
    net = make_network_stub(name, len(lat))
    if exits:
        net = make_network(name, list(net.layers), exits=exits)
    return Profile.from_tables(
        net,
        device_name="hand-built",
        batch_sizes=batch_sizes,
        latency_s=np.stack(rows),
        frequency_hz=1e9,
        memory_bandwidth_bps=1e9,
        tiles=tiles,
        checkpoint_bytes=checkpoint_bytes,
        energy_j=np.stack(energy),
        axes=((axis, values),),
    )


# --- invariants ---------------------------------------------------------------------------
def assert_same_result(r1: Any, r2: Any) -> None:
    """Two :class:`~npusched.sim.engine.SimResult` objects are identical (nan == nan)."""
    c1, c2 = r1.columns, r2.columns
    assert list(c1) == list(c2)
    for k in c1:
        np.testing.assert_array_equal(c1[k], c2[k], err_msg=k, strict=True)
    for attr in ("makespan_s", "busy_s", "events", "layer_executions", "timeline"):
        assert getattr(r1, attr) == getattr(r2, attr), attr


def check_invariants(
    res: Any,
    requests: Sequence[Request],
    *,
    preemptive: bool = True,
    tol: float = 1e-9,
    work_conserving: bool = True,
    profiles: Mapping[str, Profile] | None = None,
    point: str = "tile",
    cost: bool = True,
) -> None:
    """Engine invariants every run of a temporal policy must satisfy (``record_timeline=True``).

    Every request finishes exactly once; the timeline never has two jobs on the array at once;
    ``finish >= arrival + isolated``; a job's run segments add up to its isolated latency plus
    the work KILL wasted; busy time equals executed work (incl. wasted) plus checkpoint time
    plus clock/voltage switches between jobs (power policies); a non-preemptive policy never
    preempts; with ``work_conserving`` the array is never idle while a dispatched request is
    unfinished. With ``profiles`` (and the run's preemption ``point`` and ``cost`` setting) the
    checkpoint records are checked exactly, see :func:`check_checkpoints`. ``tol`` in seconds.
    """
    cols = res.columns
    tl = res.timeline
    assert tl is not None, "record_timeline=True is needed"
    assert sorted(cols["id"].tolist()) == sorted(r.id for r in requests), "requests lost"
    assert not np.isnan(cols["finish_s"]).any(), "unfinished requests"
    iso, wasted, ck = cols["isolated_s"], cols["wasted_s"], cols["checkpoint_s"]
    assert np.all(cols["finish_s"] >= cols["arrival_s"] + iso - tol), "finish before isolated"
    assert np.all(cols["first_start_s"] >= cols["arrival_s"] - tol), "start before arrival"
    assert np.all(cols["waiting_s"] >= -tol)
    assert np.all(wasted >= 0.0) and np.all(ck >= 0.0)
    busy = res.busy_s
    # under a power policy the engine charges a clock/voltage switch when a job starts on an
    # array left at another level: a "switch" segment (or part of a "restore" one)
    switch = sum(s[2] - s[1] for s in tl if s[3] == "switch")
    assert _close(busy, float(iso.sum() + wasted.sum() + ck.sum()) + switch, tol), "busy time"
    segs = sorted(tl, key=lambda s: (s[1], s[2]))
    for prev, cur in itertools.pairwise(segs):
        assert cur[1] >= prev[2] - tol, f"overlap: {prev} and {cur}"
    assert all(s[2] >= s[1] for s in segs)
    assert _close(busy, sum(s[2] - s[1] for s in segs), tol), "busy time vs timeline"
    row = {int(i): k for k, i in enumerate(cols["id"])}
    ran = np.zeros(len(row))
    last_end = np.zeros(len(row))
    for jid, s, e, kind, *_ in segs:
        if kind == "run":
            ran[row[jid]] += e - s
        last_end[row[jid]] = max(last_end[row[jid]], e)
    np.testing.assert_allclose(ran, iso + wasted, atol=tol, rtol=0)
    has_work = iso > 0
    np.testing.assert_allclose(last_end[has_work], cols["finish_s"][has_work], atol=tol, rtol=0)
    if not preemptive:
        assert cols["preemptions"].sum() == 0 and wasted.sum() == 0.0, "non-preemptive preempts"
    if work_conserving:
        check_work_conserving(res, tol=tol)
    if profiles is not None:
        check_checkpoints(res, profiles, point=point, cost=cost, tol=tol)


def check_work_conserving(res: Any, *, tol: float = 1e-9) -> None:
    """The array (run, save or restore) is never idle while a dispatched request is unfinished."""
    cols = res.columns
    arrival, finish = cols["arrival_s"], cols["finish_s"]
    gaps = []
    t = 0.0
    for _, s, e, *_ in sorted(res.timeline, key=lambda x: (x[1], x[2])):
        if s > t + tol:
            gaps.append((t, s))
        t = max(t, e)
    for g0, g1 in gaps:
        waiting = (arrival < g1 - tol) & (finish > g0 + tol)
        assert not waiting.any(), (
            f"idle from {g0} to {g1} s while requests {cols['id'][waiting].tolist()} wait"
        )


def check_checkpoints(
    res: Any,
    profiles: Mapping[str, Profile],
    *,
    point: str = "tile",
    cost: bool = True,
    tol: float = 1e-9,
) -> None:
    """Exact CHECKPOINT accounting, from the timeline, for runs without KILL.

    Replaying each job's segments: every save starts where the job has done ``w`` seconds of
    work, ``w`` is a preemption point (a tile boundary, or a step end for ``point="layer"``),
    the save lasts ``checkpoint_bytes_at(w) / bandwidth``; a restore lasts as long as the save
    before it (or is cut short by another preemption); the recorded ``checkpoint_bytes`` is the
    sum of the saved bytes and ``checkpoint_s`` the sum of save and restore time.
    """
    cols = res.columns
    assert cols["wasted_s"].sum() == 0.0, "check_checkpoints needs a run without KILL"
    segs: dict[int, list[tuple[float, float, str]]] = {}
    for jid, s, e, kind, *_ in sorted(res.timeline, key=lambda x: (x[1], x[2])):
        segs.setdefault(int(jid), []).append((s, e, kind))
    for k, jid in enumerate(cols["id"].tolist()):
        prof = profiles[cols["network"][k]]
        plan = prof.plan(int(cols["batch"][k]))
        bw = prof.memory_bandwidth_bps
        work = 0.0
        saved = 0
        last_save_s = 0.0
        spent = 0.0
        mine = segs.get(jid, [])
        for i, (s, e, kind) in enumerate(mine):
            if kind == "run":
                work += e - s
            elif kind == "save":
                nbytes = plan.checkpoint_bytes_at(_snap(work, plan))
                assert nbytes > 0 and cost
                assert _close(e - s, nbytes / bw, tol), (jid, s, nbytes)
                _assert_preemption_point(work, plan, point, tol)
                saved += nbytes
                last_save_s = e - s
                spent += e - s
            else:  # restore
                assert e - s <= last_save_s + tol, (jid, s, e)
                nxt = mine[i + 1][2] if i + 1 < len(mine) else None
                if nxt == "run":
                    assert _close(e - s, last_save_s, tol), (jid, s, e)
                spent += e - s
        if cost:
            assert cols["checkpoint_bytes"][k] == saved, jid
        assert _close(float(cols["checkpoint_s"][k]), spent, tol), jid


def _snap(work: float, plan: Any) -> float:
    """``work`` moved onto a step end within ``TIME_TOL_S`` (1 ps) of it."""
    cum = plan.cum_s
    i = int(np.argmin(np.abs(cum - work)))
    return float(cum[i]) if abs(cum[i] - work) <= TIME_TOL_S else work


def _assert_preemption_point(work: float, plan: Any, point: str, tol: float) -> None:
    cum = plan.cum_s
    if np.min(np.abs(cum - work)) <= tol:
        return  # a step end is a preemption point for both granularities
    assert point == "tile", f"layer-granular stop inside a step at {work} s of work"
    s = int(np.searchsorted(cum, work, side="right")) - 1
    tile = float(plan.latency_s[s]) / max(int(plan.tiles[s]), 1)
    k = (work - float(cum[s])) / tile
    assert abs(k - round(k)) * tile <= tol, f"stop at {work} s is not a tile boundary"


def check_capacity(res: Any, caps: Mapping[str, int]) -> None:
    """Summed units held on each resource never exceed its capacity (timeline sweep)."""
    tl = res.timeline
    for name, cap in caps.items():
        ev = sorted(
            [(s.start_s, s.units) for s in tl if s.resource == name]
            + [(s.end_s, -s.units) for s in tl if s.resource == name],
            key=lambda x: (x[0], x[1]),
        )
        level = 0
        for t, d in ev:
            level += d
            assert level <= cap, f"{name}: {level} units held at {t} s; capacity {cap}"


# --- random workloads ------------------------------------------------------------------------
def random_workload(
    rng: np.random.Generator, *, max_networks: int = 3, max_requests: int = 12
) -> tuple[dict[str, Profile], list[Request]]:
    """Random small profiles ``n0, n1, ...`` (1-6 layers of 0-1,000 us, 1-4 tiles, checkpoints
    up to 64 kB at 1 GB/s) and up to ``max_requests`` requests (arrivals on a 10 us grid so
    ties happen; priorities 1/3/9)."""
    profiles: dict[str, Profile] = {}
    for i in range(int(rng.integers(1, max_networks + 1))):
        n = int(rng.integers(1, 7))
        lat = rng.integers(0, 1001, size=n)
        if lat.sum() == 0:
            lat[0] = 1
        profiles[f"n{i}"] = make_profile(
            f"n{i}",
            (lat * 1e-6).tolist(),
            tiles=rng.integers(1, 5, size=n).tolist(),
            checkpoint_bytes=rng.integers(0, 64_001, size=n).tolist(),
        )
    names = sorted(profiles)
    reqs = [
        Request(
            id=i,
            arrival_s=int(rng.integers(0, 301)) * 1e-5,
            network=names[int(rng.integers(len(names)))],
            priority=int(rng.choice([1, 3, 9])),
            slo_s=None if rng.random() < 0.5 else int(rng.integers(1, 60)) * 0.1 * MS,
        )
        for i in range(int(rng.integers(1, max_requests + 1)))
    ]
    return profiles, reqs


def _params(policy: Any) -> Any:
    get = getattr(policy, "get_params", None)
    if get is not None:
        return copy.deepcopy(get())
    return copy.deepcopy({k: v for k, v in vars(policy).items() if not k.endswith("_")})


def _fresh(policy: Any) -> Any:
    if hasattr(policy, "get_params") and hasattr(policy, "set_params"):
        from npusched.base import clone

        return clone(policy)
    return copy.deepcopy(policy)


def _check_protocol(policy: Any, kind: str) -> None:
    assert getattr(policy, "kind", "temporal") == kind, f"policy kind must be {kind!r}"
    assert isinstance(getattr(policy, "name", None), str) and policy.name, "name: a non-empty str"
    assert isinstance(getattr(policy, "preemptive", False), bool), "preemptive: a bool"
    period = getattr(policy, "period_s", None)
    assert period is None or period > 0, "period_s: None or > 0 seconds"
    for hook in ("reset", "on_dispatch", "on_complete", "on_period", "select"):
        assert callable(getattr(policy, hook, None)), f"missing hook {hook}()"


def check_policy(
    policy: Any,
    *,
    n_workloads: int = 20,
    random_state: int = 0,
    work_conserving: bool = True,
) -> None:
    """Run a temporal policy through the conformance suite (see the module docstring).

    Args:
        policy: the policy object (it is reset before every run; a fresh copy is made with
            ``clone`` if it has ``get_params``, else ``copy.deepcopy``).
        n_workloads: random workloads to run (each under a random preemption point and
            checkpoint-cost setting).
        random_state: seed of the workloads.
        work_conserving: also require that the array never idles while a request waits.

    Raises:
        AssertionError: an invariant failed, or the engine refused a decision (an invalid job,
            requests left waiting forever); the message names the workload number.
    """
    from npusched.sim.engine import Simulator

    _check_protocol(policy, "temporal")
    rng = np.random.default_rng(random_state)
    for w in range(n_workloads):
        profiles, reqs = random_workload(rng)
        point = "tile" if rng.random() < 0.5 else "layer"
        cost = bool(rng.random() < 0.5)
        before, frozen = _params(policy), copy.deepcopy(reqs)
        try:
            sim = Simulator(
                profiles, policy, preemption_point=point, checkpoint_cost=cost, record_timeline=True
            )
            res = sim.run(reqs)
            killed = float(res.columns["wasted_s"].sum()) > 0.0
            check_invariants(
                res,
                reqs,
                preemptive=bool(getattr(policy, "preemptive", False)),
                profiles=None if killed else profiles,
                point=point,
                cost=cost,
                work_conserving=work_conserving,
            )
            _check_rerun(policy, before, reqs, frozen, res, sim, profiles,
                         preemption_point=point, checkpoint_cost=cost)
        except (AssertionError, NpuschedError) as e:
            what = "" if isinstance(e, AssertionError) else "the engine refused the run: "
            raise AssertionError(
                f"{policy.name}: workload {w} (random_state={random_state}, point={point}, "
                f"checkpoint_cost={cost}): {what}{e}"
            ) from e



def _check_rerun(
    policy: Any,
    before: Any,
    reqs: Any,
    frozen: Any,
    res: Any,
    sim: Any,
    profiles: Any,
    **sim_kwargs: Any,
) -> None:
    """The checks after a conformance run: the policy's parameters and the requests are
    unchanged, the same simulator gives the same result again, and a fresh simulator with a
    fresh copy of the policy (timeline recorded) gives it too."""
    from npusched.sim import Simulator

    assert _params(policy) == before, "a run mutated the policy's parameters"
    assert reqs == frozen, "a run mutated the requests"
    assert_same_result(res, sim.run(reqs))
    other = Simulator(profiles, _fresh(policy), record_timeline=True, **sim_kwargs).run(reqs)
    assert_same_result(res, other)

def check_machine_policy(
    policy: Any,
    *,
    machine: Any = None,
    profiles: Mapping[str, Profile] | None = None,
    n_workloads: int = 20,
    random_state: int = 0,
) -> None:
    """Run a machine policy through the conformance suite (see the module docstring).

    By default it runs on a 16-unit fission array (``fission_array(16)``) with hand-built
    profiles whose ``subarrays`` axis speeds layers up (Planaria's setting); give ``machine``
    and ``profiles`` for another setting (the requests then pick networks from ``profiles``).

    Checked: every request finishes exactly once, no resource holds more units than its
    capacity, ``finish >= arrival + isolated`` (isolated on the fastest variant), starts not
    before arrival, determinism (twice, and a fresh copy), parameters and requests unchanged.

    Raises:
        AssertionError: an invariant failed, or the engine refused a decision (an invalid job,
            requests left waiting forever); the message names the workload number.
    """
    from npusched.sim.engine import Simulator
    from npusched.sim.resources import fission_array

    _check_protocol(policy, "machine")
    if machine is None:
        machine = fission_array(16)
    if profiles is None:
        profiles = {
            "p": variant_profile("p", [4 * MS, 8 * MS, 2 * MS], tiles=4, checkpoint_bytes=2000),
            "q": variant_profile("q", [6 * MS], tiles=3, checkpoint_bytes=500),
            "r": variant_profile(
                "r", [1 * MS, 3 * MS], tiles=2, checkpoint_bytes=100, speed=lambda u: u**0.5
            ),
        }
    caps = {r.name: r.capacity for r in machine.resources}
    names = sorted(profiles)
    rng = np.random.default_rng(random_state)
    for w in range(n_workloads):
        reqs = [
            Request(
                id=i,
                arrival_s=int(rng.integers(0, 41)) * 0.5 * MS,
                network=names[int(rng.integers(len(names)))],
                priority=int(rng.integers(1, 12)),
                slo_s=None if rng.random() < 0.3 else int(rng.integers(1, 61)) * MS,
            )
            for i in range(int(rng.integers(1, 13)))
        ]
        point = "tile" if rng.random() < 0.5 else "layer"
        cost = bool(rng.random() < 0.5)
        before, frozen = _params(policy), copy.deepcopy(reqs)
        try:
            sim = Simulator(
                profiles,
                policy,
                machine=machine,
                record_timeline=True,
                checkpoint_cost=cost,
                preemption_point=point,
            )
            res = sim.run(reqs)
            cols = res.columns
            ids = cols["id"].tolist()
            assert sorted(ids) == sorted(r.id for r in reqs) and len(set(ids)) == len(ids), (
                "requests lost or duplicated"
            )
            fin = cols["finish_s"]
            assert np.all(np.isfinite(fin)), "a request never finished"
            assert np.all(fin >= cols["arrival_s"] + cols["isolated_s"] - 1e-12), (
                "finish before arrival + isolated"
            )
            assert np.all(cols["first_start_s"] >= cols["arrival_s"] - 1e-12)
            assert np.all(cols["checkpoint_s"] >= 0.0) and np.all(cols["wasted_s"] >= 0.0)
            check_capacity(res, caps)
            _check_rerun(policy, before, reqs, frozen, res, sim, profiles, machine=machine,
                         preemption_point=point, checkpoint_cost=cost)
        except (AssertionError, NpuschedError) as e:
            what = "" if isinstance(e, AssertionError) else "the engine refused the run: "
            raise AssertionError(
                f"{policy.name}: workload {w} (random_state={random_state}, point={point}, "
                f"checkpoint_cost={cost}): {what}{e}"
            ) from e
