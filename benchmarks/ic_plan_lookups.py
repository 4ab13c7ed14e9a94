"""Instruction counts of an execution plan's look-ups on its tables (``hardware/plan.py``):
compiled, ``vec[float]`` tables searched natively, for every plan since the thirtieth round.

    for n in 200 1200; do PYTHONHASHSEED=0 PYTHONPATH=T/src valgrind --tool=cachegrind \\
        --cache-sim=no --cachegrind-out-file=/dev/null \\
        python benchmarks/ic_plan_lookups.py lookups $n 1200; done

``MODE N STEPS`` on a recurrent plan of ``STEPS`` steps over 20 layers: ``lookups`` runs ``N``
rounds of ``work_between``, ``next_preemption_point``, ``checkpoint_bytes_at``,
``position_at`` and ``executed_at`` (the difference of ``N = 1200`` and ``N = 200`` over 1,000
is one round); ``mk`` makes ``N`` plans and looks each up four times (the difference of 25 and
5 plans, over 20, is one plan made with its tables). Until the thirtieth round the modes were
``generic`` / ``typed`` (a recurrent plan kept on its ``array('d')`` / promoted to typed
lists) and ``mk`` / ``build``; a checkout of that code runs its own copy of this script.
"""

from __future__ import annotations

import sys

import numpy as np

from npusched.hardware.profile import ExecPlan

mode, n, steps = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rng = np.random.default_rng(0)
layer = rng.integers(0, 20, steps).astype(np.int16)
lat = rng.uniform(1e-6, 5e-6, 20)
cum = np.zeros(steps + 1)
np.cumsum(lat[layer], out=cum[1:])
tiles = rng.integers(1, 9, 20)
ckpt = rng.integers(1, 1 << 22, 20)
energy = rng.uniform(0, 1e-3, 20)


def make() -> ExecPlan:
    return ExecPlan(
        layer, cum, latency_row=lat, tiles_row=tiles, checkpoint_row=ckpt, energy_row=energy
    )


def first(p: ExecPlan) -> None:
    p.step_at(0.0)
    p.work_between(0.0, 1e-6)
    p.next_preemption_point(1e-6, layer=False, tol_s=1e-9)
    p.checkpoint_bytes_at(1e-6)


xs = rng.uniform(0, cum[-1], 64).tolist()
if mode == "mk":
    plans = [make() for _ in range(n)]
    for p in plans:
        first(p)
else:
    p = make()
    first(p)
    for i in range(n):
        x = xs[i & 63]
        p.work_between(x * 0.5, x)
        p.next_preemption_point(x, layer=False, tol_s=1e-9)
        p.checkpoint_bytes_at(x)
        s, f = p.position_at(x)
        p.executed_at(s, f)
