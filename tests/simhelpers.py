"""Test helpers: profiles and workloads built by hand, without any cost model.

``make_profile`` builds a :class:`~npusched.hardware.profile.Profile` straight from per-layer
latencies, tile counts and checkpoint bytes; ``FakeDevice`` is a minimal
:class:`~npusched.hardware.base.Device` returning given per-layer costs (for code that compiles
profiles itself). ``profiles_strategy`` / ``requests_strategy`` are hypothesis strategies for
random small profiles and workloads.
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
from hypothesis import strategies as st

from npusched.hardware.base import LayerCosts
from npusched.hardware.profile import Profile
from npusched.models.ir import Network
from npusched.policies.contract import JobView, MachineView, Schedule

# the invariant checks and hand-built profiles are the conformance suite's, exported for plugin
# authors by npusched.testing; the tests use that same code
from npusched.testing import (  # noqa: F401  (re-exported for the tests)
    assert_same_result,
    check_checkpoints,
    check_invariants,
    check_work_conserving,
    make_network_stub,
    make_profile,
)
from npusched.workloads.request import Request


def power_pieces(res: Any) -> list[tuple[Any, ...]]:
    """A result's power pieces with each plan as its total seconds (plans compare by identity)."""
    return [(*p[:2], p.plan.total_s, *p[3:]) for p in res.power or ()]


def assert_same_run(a: Any, b: Any) -> None:
    """Two runs' results are equal to the last bit: every column, the run's totals and counts,
    the timeline and the power pieces."""
    assert_same_result(a, b)
    for attr in ("energy_j", "end_s", "resources", "policy", "events", "layer_executions"):
        assert getattr(a, attr) == getattr(b, attr), attr
    assert a.timeline == b.timeline
    assert power_pieces(a) == power_pieces(b)


def assert_same_outcome(a: Any, b: Any) -> None:
    """:func:`assert_same_run`, or the same error where either run raised (an outcome is a
    result or ``("raised", message)``, as ``golden_loops.outcome`` gives)."""
    if isinstance(a, tuple) or isinstance(b, tuple):
        assert a == b
        return
    assert_same_run(a, b)


def by_select(policy: Any) -> Any:
    """``policy`` deciding through its own ``select`` at every wake: the reference for the
    engine's own decisions on a declared ready order (``declared_order``: the rank and
    remaining orders' heap, round-robin's rotation, Algorithm 2's token table), which make
    no view and call no ``select``. A token scheduler gets ``level_table = False`` (its
    ``select`` scans the job views); any other policy a subclass of its class that redefines
    ``select`` as the class's own, so it declares no order and the engine calls its hooks and
    ``select``. Both must give the declared order's result to the last bit."""
    from npusched.policies.contract import declared_order
    from npusched.policies.temporal.prema import TokenScheduler

    if isinstance(policy, TokenScheduler):
        policy.level_table = False
        return policy
    base = type(policy)

    class BySelect(base):  # type: ignore[misc,valid-type]
        def select(self, view: Any) -> Any:
            return super().select(view)

    BySelect.__name__ = BySelect.__qualname__ = base.__name__
    policy.__class__ = BySelect
    assert declared_order(policy) is None
    return policy


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


def pytest_approx(x: float, tol: float) -> object:
    import pytest

    return pytest.approx(x, abs=tol, rel=1e-9)


class Scripted:
    """A machine policy that runs ``script(view) -> Schedule`` at every wake."""

    kind = "machine"
    name = "scripted"
    preemptive = True
    period_s = None

    def __init__(self, script: Callable[[MachineView], Schedule]) -> None:
        self.script = script
        self.log: list[tuple[float, str]] = []

    def reset(self) -> None:
        self.log = []

    def on_dispatch(self, job: JobView, now: float) -> None:
        return None

    def on_complete(self, job: JobView, now: float) -> None:
        return None

    def on_period(self, view: MachineView) -> None:
        return None

    def select(self, view: MachineView) -> Schedule:
        self.log.append((view.now, view.reason))
        return self.script(view)


def source_module(module: ModuleType) -> ModuleType:
    """``module`` itself where it runs from its Python source; where it is a compiled
    extension (mypyc, see ``setup.py``), a fresh copy loaded from its ``.py`` source under a
    private name. A test that replaces a method to watch the loop uses the copy: a compiled
    class calls its own methods directly, so a patched class attribute is never reached. The
    source is the same, so the copy runs the same code, interpreted."""
    path = module.__file__ or ""
    if path.endswith(".py"):
        return module
    src = Path(path).with_name(module.__name__.rsplit(".", 1)[-1] + ".py")
    spec = importlib.util.spec_from_file_location(module.__name__ + "_source", src)
    assert spec is not None and spec.loader is not None
    copy = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = copy  # dataclasses resolve their module by name
    spec.loader.exec_module(copy)
    return copy


@contextmanager
def source_engine() -> Iterator[ModuleType]:
    """The engine's module to watch the loop with (:func:`source_module`): where the engine
    is compiled, its interpreted source."""
    from npusched.sim import engine

    yield source_module(engine)
