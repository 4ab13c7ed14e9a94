"""Planaria's decision as the compiled core makes it (fifteenth round) against the forms it
replaced: the small-queue counts without builtin calls (``_round9`` for ``round``, plain sums
for ``sum``), each job's fixed terms kept per job (``_JobRec``), and the
process-wide memo of configuration tables (``_SHARED_TABLES``). Run compiled and with
``NPUSCHED_PURE=1``, these check both builds."""

from __future__ import annotations

import copy
import math
import random
from typing import Any

import numpy as np

from npusched.hardware import compile_profile
from npusched.hardware.fission import FissionArray
from npusched.models import get_network
from npusched.policies.spatial import PlanariaPolicy
from npusched.policies.spatial import planaria_core as core
from npusched.policies.spatial.planaria_core import (
    _counts_from_estimates,
    _round9,
    _unfit_counts,
)
from npusched.sim.engine import Simulator
from npusched.sim.resources import fission_array
from npusched.workloads.planaria import WORKLOADS, planaria_workload

FA = FissionArray()


def _bits(x: float) -> str:
    return float.hex(x)


def test_round9_is_round_over_1e9_bit_for_bit() -> None:
    """``_round9(y)`` is ``round(y) / 1e9`` (ties to even, the sign of zero included) on
    ties, near-ties, negatives, zeros and random values of the range the counts use."""
    rng = random.Random(0)
    ys: list[float] = [0.0, -0.0, 0.5, -0.5, 1.5, 2.5, -1.5, -2.5, 1e9, -1e9, 0.49999999999]
    ys += [k + 0.5 for k in range(-20, 20)]
    ys += [math.nextafter(k + 0.5, math.inf) for k in range(-5, 5)]
    ys += [math.nextafter(k + 0.5, -math.inf) for k in range(-5, 5)]
    ys += [rng.uniform(-1e9, 1e9) for _ in range(2000)]
    ys += [(rng.random() * 1e9) for _ in range(2000)]
    for y in ys:
        assert _bits(_round9(y)) == _bits(round(y) / 1e9), y


def _counts_reference(
    priority: list[float], slack_s: list[float], est: list[int], at_est: list[float], size: int
) -> list[int]:
    """``_counts_from_estimates`` as it was written before (builtin ``sum`` and ``round``,
    key tuples compared as tuples)."""
    n = len(priority)
    total_est = sum(est)
    if total_est > size:
        return _unfit_counts(priority, slack_s, est, size)
    scores = [priority[i] / max(at_est[i], 1e-9) for i in range(n)]
    remaining_array = size - total_est
    total = sum(scores)
    shares = [sc / total * remaining_array for sc in scores]
    base = [math.floor(sh + 1e-12) for sh in shares]
    left = remaining_array - sum(base)
    if left > 0:
        keyed = sorted(
            (-(round((shares[i] - base[i]) * 1e9) / 1e9), -scores[i], i) for i in range(n)
        )
        for _, _, i in keyed[:left]:
            base[i] += 1
    return [est[i] + base[i] for i in range(n)]


def test_small_queue_counts_equal_the_builtin_form() -> None:
    """The counts on random queues of 2..7 tasks (equal scores and remainders included: the
    pair's scalar path and key comparison) equal the builtin form's."""
    rng = random.Random(1)
    for trial in range(3000):
        n = 2 if trial % 2 else rng.randint(2, 7)  # the pair (its scalar path) half the time
        size = rng.choice([8, 16, 16, 32])
        est = [rng.randint(1, 4) for _ in range(n)]
        if trial % 3 == 0:  # ties: equal priorities and remaining times
            p = float(rng.randint(1, 3))
            a = rng.choice([1e-3, 2e-3])
            prio, at = [p] * n, [a] * n
        else:
            prio = [float(rng.randint(1, 11)) for _ in range(n)]
            at = [rng.choice([0.0, 1e-12, rng.uniform(1e-4, 1e-1)]) for _ in range(n)]
        slack = [rng.choice([math.inf, -1.0, rng.uniform(0.0, 0.1)]) for _ in range(n)]
        got = _counts_from_estimates(prio, slack, est, at, size)
        assert got == _counts_reference(prio, slack, est, at, size), (prio, est, at, size)


def _profiles(names: tuple[str, ...] | list[str]) -> dict[str, Any]:
    return {n: compile_profile(get_network(n), FA) for n in names}


def _same(a: Any, b: Any) -> None:
    """Two results with the same columns, bit for bit, and the same events and end."""
    assert set(a.columns) == set(b.columns)
    for name, col in a.columns.items():
        other = b.columns[name]
        assert col.dtype == other.dtype and col.tobytes() == other.tobytes(), name
    assert (a.events, a.makespan_s, a.energy_j) == (b.events, b.makespan_s, b.energy_j)


def _run(profs: dict[str, Any], reqs: Any) -> tuple[PlanariaPolicy, Any]:
    pol = PlanariaPolicy()
    return pol, Simulator(profs, pol, machine=fission_array()).run(reqs)


def test_shared_tables_are_the_tables_a_fresh_build_gives() -> None:
    """A second policy on the same profiles takes the memo's tables (the same objects); a
    run with the memo cleared builds equal tables and gives the same result."""
    profs = _profiles(WORKLOADS["B"])
    reqs = planaria_workload("B", "H", 3000.0, n_requests=120, random_state=5)
    core._SHARED_TABLES.clear()
    p1, r1 = _run(profs, reqs)
    p2, r2 = _run(profs, reqs)
    assert p1.tables_ and set(p1.tables_) == set(p2.tables_)
    for key, tab in p1.tables_.items():
        assert p2.tables_[key] is tab
    core._SHARED_TABLES.clear()
    p3, r3 = _run(profs, reqs)
    for key, tab in p1.tables_.items():
        fresh = p3.tables_[key]
        assert fresh is not tab
        assert np.array_equal(fresh.cum_t, tab.cum_t) and fresh.steps == tab.steps
        assert fresh.rows == tab.rows and fresh.total_l == tab.total_l
        assert fresh.at_start_l == tab.at_start_l
    for r in (r2, r3):
        _same(r, r1)


def test_shared_tables_are_kept_per_profile_object() -> None:
    """Other profile objects (copies: equal tables) get tables of their own: the memo's
    entries are checked by the profile's identity."""
    names = WORKLOADS["B"]
    reqs = planaria_workload("B", "H", 3000.0, n_requests=40, random_state=6)
    profs = _profiles(names)
    core._SHARED_TABLES.clear()
    p1, r1 = _run(profs, reqs)
    p2, r2 = _run({n: copy.copy(p) for n, p in profs.items()}, reqs)
    for key, tab in p1.tables_.items():
        assert p2.tables_[key] is not tab
    _same(r1, r2)
