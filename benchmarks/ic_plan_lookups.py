"""Instruction counts behind ``hardware/plan.py``'s ``STEPS_PER_GENERIC_LOOKUP``: what a
recurrent plan's look-ups cost on its ``array('d')`` and on typed lists, and what promoting a
plan (building the lists) costs per step.

    for n in 200 1200; do PYTHONHASHSEED=0 PYTHONPATH=T/src valgrind --tool=cachegrind \\
        --cache-sim=no --cachegrind-out-file=/dev/null \\
        python benchmarks/ic_plan_lookups.py generic $n 575; done

``MODE N STEPS`` on a recurrent plan of ``STEPS`` steps over 20 layers: ``generic`` / ``typed``
run ``N`` rounds of ``work_between``, ``next_preemption_point``, ``checkpoint_bytes_at``,
``position_at`` and ``executed_at`` on a plan kept generic / promoted (the difference of
``N = 1200`` and ``N = 200`` over 1,000 is one round); ``mk`` / ``build`` make ``N`` plans and
look each up four times, kept generic / promoted at the first look-up (the difference of
``build`` and ``mk`` at 25 and 5 plans, over 20, is one promotion with its lists).
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


def make(lookups: int) -> ExecPlan:
    p = ExecPlan(
        layer, cum, latency_row=lat, tiles_row=tiles, checkpoint_row=ckpt, energy_row=energy
    )
    p._lookups = lookups  # at ``steps``: promoted at the next look-up; very negative: never
    return p


def first(p: ExecPlan) -> None:
    p.step_at(0.0)
    p.work_between(0.0, 1e-6)
    p.next_preemption_point(1e-6, layer=False, tol_s=1e-9)
    p.checkpoint_bytes_at(1e-6)


xs = rng.uniform(0, cum[-1], 64).tolist()
if mode in ("mk", "build"):
    plans = [make(steps if mode == "build" else -(10**9)) for _ in range(n)]
    for p in plans:
        first(p)
else:
    p = make(-(10**9) if mode == "generic" else steps)
    first(p)
    for i in range(n):
        x = xs[i & 63]
        p.work_between(x * 0.5, x)
        p.next_preemption_point(x, layer=False, tol_s=1e-9)
        p.checkpoint_bytes_at(x)
        s, f = p.position_at(x)
        p.executed_at(s, f)
