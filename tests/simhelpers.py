"""Test helpers: profiles and workloads built by hand, without any cost model.

``make_profile`` builds a :class:`~npusched.hardware.profile.Profile` straight from per-layer
latencies, tile counts and checkpoint bytes; ``FakeDevice`` is a minimal
:class:`~npusched.hardware.base.Device` returning given per-layer costs (for code that compiles
profiles itself). ``profiles_strategy`` / ``requests_strategy`` are hypothesis strategies for
random small profiles and workloads.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence

import numpy as np
from hypothesis import strategies as st

from npusched.hardware.base import LayerCosts
from npusched.hardware.profile import Profile
from npusched.models.ir import Layer, LayerKind, Network, make_network
from npusched.sim.events import TIME_TOL_S
from npusched.workloads.request import Request


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


class FakeDevice:
    """A :class:`~npusched.hardware.base.Device` returning fixed per-layer costs by network name.

    ``tables[name] = (latencies_s, tiles, checkpoint_bytes)``; the latency scales linearly with
    the batch size.
    """

    def __init__(
        self,
        tables: Mapping[str, tuple[Sequence[float], Sequence[int], Sequence[int]]],
        *,
        frequency_hz: float = 1e9,
        memory_bandwidth_bps: float = 1e9,
        name: str = "fake",
    ) -> None:
        self.name = name
        self.tables = dict(tables)
        self._f = float(frequency_hz)
        self._bw = float(memory_bandwidth_bps)

    @property
    def frequency_hz(self) -> float:
        return self._f

    @property
    def memory_bandwidth_bps(self) -> float:
        return self._bw

    def layer_costs(self, network: Network, batch: int) -> LayerCosts:
        lat, tiles, ck = self.tables[network.name]
        lat_a = np.asarray(lat, dtype=np.float64) * batch
        n = len(lat_a)
        return LayerCosts(
            cycles=np.round(lat_a * self._f).astype(np.int64),
            latency_s=lat_a,
            tiles=np.asarray(tiles, dtype=np.int64),
            bytes_moved=np.zeros(n, dtype=np.int64),
            checkpoint_bytes=np.asarray(ck, dtype=np.int64) * batch,
            energy_j=np.zeros(n, dtype=np.float64),
        )

    def cache_key(self) -> tuple[object, ...]:
        return (self.name, id(self))


def req(id: int, arrival_s: float, network: str = "a", priority: int = 1, **kw: object) -> Request:
    """Shorthand for a :class:`Request`."""
    return Request(id=id, arrival_s=arrival_s, network=network, priority=priority, **kw)  # type: ignore[arg-type]


# --- hypothesis strategies ------------------------------------------------------------------
@st.composite
def profiles_strategy(
    draw: st.DrawFn, max_networks: int = 3, max_layers: int = 6
) -> dict[str, Profile]:
    """1..max_networks random small profiles named ``n0, n1, ...``.

    Latencies are multiples of 1 us (0 allowed for some layers) up to 1 ms, 1-4 tiles,
    checkpoint bytes up to 64 kB at 1 GB/s (save <= 64 us).
    """
    k = draw(st.integers(1, max_networks))
    out: dict[str, Profile] = {}
    for i in range(k):
        n = draw(st.integers(1, max_layers))
        lat = draw(st.lists(st.integers(0, 1000), min_size=n, max_size=n))
        if sum(lat) == 0:
            lat[0] = 1
        tiles = draw(st.lists(st.integers(1, 4), min_size=n, max_size=n))
        ck = draw(st.lists(st.integers(0, 64_000), min_size=n, max_size=n))
        out[f"n{i}"] = make_profile(
            f"n{i}", [x * 1e-6 for x in lat], tiles=tiles, checkpoint_bytes=ck, bandwidth_bps=1e9
        )
    return out


@st.composite
def workload_strategy(
    draw: st.DrawFn, max_networks: int = 3, max_requests: int = 12
) -> tuple[dict[str, Profile], list[Request]]:
    """Random profiles and requests (arrivals on a 10 us grid so ties happen; priorities 1/3/9)."""
    profiles = draw(profiles_strategy(max_networks=max_networks))
    names = sorted(profiles)
    m = draw(st.integers(1, max_requests))
    reqs = [
        Request(
            id=i,
            arrival_s=draw(st.integers(0, 300)) * 1e-5,
            network=draw(st.sampled_from(names)),
            priority=draw(st.sampled_from([1, 3, 9])),
        )
        for i in range(m)
    ]
    return profiles, reqs


def assert_same_result(r1: object, r2: object) -> None:
    """Two :class:`~npusched.sim.engine.SimResult` objects are identical (nan == nan)."""
    c1, c2 = r1.columns, r2.columns  # type: ignore[attr-defined]
    assert list(c1) == list(c2)
    for k in c1:
        np.testing.assert_array_equal(c1[k], c2[k], err_msg=k, strict=True)
    for attr in ("makespan_s", "busy_s", "events", "layer_executions", "timeline"):
        assert getattr(r1, attr) == getattr(r2, attr), attr


def check_invariants(
    res: object,
    requests: Sequence[Request],
    *,
    preemptive: bool = True,
    tol: float = 1e-9,
    work_conserving: bool = True,
    profiles: Mapping[str, Profile] | None = None,
    point: str = "tile",
    cost: bool = True,
) -> None:
    """Engine invariants every run must satisfy (needs ``record_timeline=True``).

    Every request finishes exactly once; the timeline never has two jobs on the array at once;
    ``finish >= arrival + isolated``; a job's run segments add up to its isolated latency plus
    the work KILL wasted; busy time equals executed work (incl. wasted) plus checkpoint time
    plus clock/voltage switches between jobs (power policies); a
    non-preemptive policy never preempts; with ``work_conserving`` the array is never idle
    while a dispatched request is unfinished. With ``profiles`` (and the run's preemption
    ``point`` and ``cost`` setting) the checkpoint records are checked exactly, see
    :func:`check_checkpoints`. ``tol`` is in seconds.
    """
    cols = res.columns  # type: ignore[attr-defined]
    tl = res.timeline  # type: ignore[attr-defined]
    assert tl is not None, "record_timeline=True is needed"
    assert sorted(cols["id"].tolist()) == sorted(r.id for r in requests)
    assert not np.isnan(cols["finish_s"]).any(), "unfinished requests"
    iso, wasted, ck = cols["isolated_s"], cols["wasted_s"], cols["checkpoint_s"]
    assert np.all(cols["finish_s"] >= cols["arrival_s"] + iso - tol)
    assert np.all(cols["first_start_s"] >= cols["arrival_s"] - tol)
    assert np.all(cols["waiting_s"] >= -tol)
    assert np.all(wasted >= 0.0) and np.all(ck >= 0.0)
    busy = res.busy_s  # type: ignore[attr-defined]
    # under a power policy the engine charges a clock/voltage switch when a job starts on an
    # array left at another level: a "switch" segment (or part of a "restore" one, then in
    # checkpoint_s)
    switch = sum(s[2] - s[1] for s in tl if s[3] == "switch")
    assert busy == pytest_approx(float(iso.sum() + wasted.sum() + ck.sum()) + switch, tol)
    # One job at a time, in time order.
    segs = sorted(tl, key=lambda s: (s[1], s[2]))
    for prev, cur in itertools.pairwise(segs):
        assert cur[1] >= prev[2] - tol, f"overlap: {prev} and {cur}"
    assert all(s[2] >= s[1] for s in segs)
    assert busy == pytest_approx(sum(s[2] - s[1] for s in segs), tol)
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
        assert cols["preemptions"].sum() == 0 and wasted.sum() == 0.0
    if work_conserving:
        check_work_conserving(res, tol=tol)
    if profiles is not None:
        check_checkpoints(res, profiles, point=point, cost=cost, tol=tol)


def check_work_conserving(res: object, *, tol: float = 1e-9) -> None:
    """The array (run, save or restore) is never idle while a dispatched request is unfinished:
    in every gap between the timeline's busy intervals, no request has arrived and not yet
    finished."""
    cols = res.columns  # type: ignore[attr-defined]
    arrival, finish = cols["arrival_s"], cols["finish_s"]
    gaps = []
    t = 0.0
    for _, s, e, *_ in sorted(res.timeline, key=lambda x: (x[1], x[2])):  # type: ignore[attr-defined]
        if s > t + tol:
            gaps.append((t, s))
        t = max(t, e)
    for g0, g1 in gaps:
        waiting = (arrival < g1 - tol) & (finish > g0 + tol)
        assert not waiting.any(), (
            f"idle from {g0} to {g1} s while requests {cols['id'][waiting].tolist()} wait"
        )


def check_checkpoints(
    res: object,
    profiles: Mapping[str, Profile],
    *,
    point: str = "tile",
    cost: bool = True,
    tol: float = 1e-9,
) -> None:
    """Exact CHECKPOINT accounting, from the timeline, for runs without KILL.

    Replaying each job's segments: every save starts where the job has done ``w`` seconds of
    work, ``w`` is a preemption point (a tile boundary with tiles evenly dividing their step,
    or a step end for ``point="layer"``), the save lasts ``checkpoint_bytes_at(w) /
    bandwidth``; a restore lasts as long as the save before it (or is cut short by another
    preemption, and then the whole restore follows later); the recorded ``checkpoint_bytes``
    is the sum of the saved bytes and ``checkpoint_s`` the sum of save and restore time.
    """
    cols = res.columns  # type: ignore[attr-defined]
    assert cols["wasted_s"].sum() == 0.0, "check_checkpoints needs a run without KILL"
    segs: dict[int, list[tuple[float, float, str]]] = {}
    for jid, s, e, kind, *_ in sorted(res.timeline, key=lambda x: (x[1], x[2])):  # type: ignore[attr-defined]
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
                assert e - s == pytest_approx(nbytes / bw, tol), (jid, s, nbytes)
                _assert_preemption_point(work, plan, point, tol)
                saved += nbytes
                last_save_s = e - s
                spent += e - s
            else:  # restore
                assert e - s <= last_save_s + tol, (jid, s, e)
                nxt = mine[i + 1][2] if i + 1 < len(mine) else None
                if nxt == "run":
                    assert e - s == pytest_approx(last_save_s, tol), (jid, s, e)
                spent += e - s
        if cost:
            assert cols["checkpoint_bytes"][k] == saved, jid
        assert cols["checkpoint_s"][k] == pytest_approx(spent, tol), jid


def _snap(work: float, plan: object) -> float:
    """``work`` moved onto a step end within ``TIME_TOL_S`` (1 ps) of it: a job that reached
    a step end up to rounding saves that finished step's outputs."""
    cum = plan.cum_s  # type: ignore[attr-defined]
    i = int(np.argmin(np.abs(cum - work)))
    return float(cum[i]) if abs(cum[i] - work) <= TIME_TOL_S else work


def _assert_preemption_point(work: float, plan: object, point: str, tol: float) -> None:
    cum = plan.cum_s  # type: ignore[attr-defined]
    if np.min(np.abs(cum - work)) <= tol:
        return  # a step end is a preemption point for both granularities
    assert point == "tile", f"layer-granular stop inside a step at {work} s of work"
    s = int(np.searchsorted(cum, work, side="right")) - 1
    tile = float(plan.latency_s[s]) / max(int(plan.tiles[s]), 1)  # type: ignore[attr-defined]
    k = (work - float(cum[s])) / tile
    assert abs(k - round(k)) * tile <= tol, f"stop at {work} s is not a tile boundary"


def pytest_approx(x: float, tol: float) -> object:
    import pytest

    return pytest.approx(x, abs=tol, rel=1e-9)


def jobs_made(sim: object, reqs: Sequence[Request]) -> int:
    """How many :class:`~npusched.sim.job.Job` objects ``sim.run(reqs)`` creates (none on a
    fast path, one per request on the general loop)."""
    from npusched.sim import job as job_mod

    made = [0]
    orig = job_mod.Job.__init__

    def spy(self: object, *a: object, **k: object) -> None:
        made[0] += 1
        orig(self, *a, **k)  # type: ignore[arg-type]

    job_mod.Job.__init__ = spy  # type: ignore[method-assign]
    try:
        sim.run(reqs)  # type: ignore[attr-defined]
    finally:
        job_mod.Job.__init__ = orig  # type: ignore[method-assign]
    return made[0]
