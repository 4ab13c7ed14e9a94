"""The HaX-CoNN formulation (Eq. 1-11) as integer data shared by the CP-SAT and Z3 encodings.

Both encodings build the same model over integer *ticks* (:attr:`IntInstance.tick_s` seconds):

* ``x[n, g, a]`` - group ``g`` of task ``n`` runs on accelerator ``a`` (Eq. 1), exactly one per
  group; ``TR[n, g]`` - the accelerator changes after group ``g`` (Eq. 3);
* ``st[n, g]``, ``et[n, g]`` - start and end (Eq. 4-6); ``et = st + t(g, a) + extra[n, g]``;
  group ``g + 1`` starts after ``et[n, g]`` plus ``out[g, a] + in[g + 1, b]`` when ``a != b``
  (Eq. 2); a dependent task starts after its producers (Scenario 3);
* no two groups of different tasks overlap on one accelerator (Eq. 9 with epsilon = 0);
* contention (Eq. 7-8), linearised: for every pair of groups of different tasks,
  ``ov = max(0, min(et1, et2) - max(st1, st2))`` is their overlap (Eq. 8's ``I(i, j)``), and the
  group's extra time is ``sum over co-runners of ov * (1 - 1/s(d_self, d_other))`` where ``s`` is
  the PCCS slowdown for the pair's accelerators. The coefficient is fixed once both groups'
  accelerators are chosen, so each product is an overlap gated by two literals (no bilinear
  term). This is *exact* for the fluid execution in :func:`~npusched.policies.mapping.execute.execute`
  whenever at most one other group runs at a time (two accelerators): during an overlap of
  length ``ov`` the group does ``ov / s`` work, so it loses ``ov (1 - 1/s)``. With three or more
  accelerators it is the pairwise-additive approximation of Eq. 7 (sum over co-runners).
  Coefficients are integers in 1/:data:`COEF_SCALE`; ``extra`` is the sum rounded to a tick;
* objective: min max_n T_n (Eq. 11) or max sum_n 1/T_n (Eq. 10, as ``sum_n floor(Q / T_n)``).
* restricted space: ``sum_g TR[n, g] <= T`` per task (the paper's artifact, T = 1 or 2).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from npusched.errors import ConfigError
from npusched.policies.mapping.execute import Workload

IntArray = npt.NDArray[np.int64]

COEF_SCALE = 1000
INV_SCALE = 10**12
TARGET_HORIZON_TICKS = 2_000

__all__ = ["COEF_SCALE", "INV_SCALE", "IntInstance", "to_int_instance"]


@dataclass(frozen=True)
class IntInstance:
    """Integer data of one workload.

    Attributes:
        tick_s: seconds per tick.
        horizon: upper bound on any time, in ticks.
        t: per task, ``(G, A)`` execution ticks.
        trans: per task, ``(G - 1, A, A)`` transition ticks from ``a`` after ``g`` to ``b``.
        dep_trans: per task, per producer ``d`` in ``after``: ``(A, A)`` ticks from the
            producer's last accelerator to this task's first.
        coef: ``coef[(n, m)]`` is a ``(Gn, A, Gm, A)`` array: slowdown coefficient of group
            ``g`` of ``n`` on ``a`` beside group ``h`` of ``m`` on ``b``, in 1/COEF_SCALE.
        release: per task release tick.
        after: per task, producer indices.
        identical: pairs ``(n, n + 1)`` of interchangeable tasks (symmetry breaking).
    """

    tick_s: float
    horizon: int
    t: tuple[IntArray, ...]
    trans: tuple[IntArray, ...]
    dep_trans: tuple[dict[int, IntArray], ...]
    coef: dict[tuple[int, int], IntArray]
    release: tuple[int, ...]
    after: tuple[tuple[int, ...], ...]
    identical: tuple[tuple[int, int], ...]
    n_acc: int

    @property
    def n_tasks(self) -> int:
        return len(self.t)

    def groups(self, n: int) -> int:
        return int(self.t[n].shape[0])


def to_int_instance(
    workload: Workload, *, contention: bool = True, horizon_ticks: int = TARGET_HORIZON_TICKS
) -> IntInstance:
    """Scale ``workload`` to integer ticks: ``horizon_ticks`` span 2.5x the sum over groups of
    their slowest execution plus all transitions. Coarse ticks matter: the contention terms tie
    every group's end to its overlaps, and CP-SAT proves optimality far faster on small time
    domains; each group's time is rounded to a tick (0.05% of the horizon at the default)."""
    tasks = workload.tasks
    n_acc = workload.n_accelerators
    worst = 0.0
    for t in tasks:
        p = t.profile
        worst += float(p.time_s.max(axis=1).sum() * 2.5)
        worst += float((p.out_s.max(axis=1) + p.in_s.max(axis=1)).sum())
    worst += max(t.release_s for t in tasks)
    if worst <= 0:
        raise ConfigError("workload has zero total time")
    if horizon_ticks < 100:
        raise ConfigError(f"horizon_ticks={horizon_ticks}; allowed: >= 100")
    tick = worst / horizon_ticks
    horizon = horizon_ticks + 1

    def ticks(x: npt.ArrayLike) -> IntArray:
        return np.maximum(np.rint(np.asarray(x, dtype=np.float64) / tick), 0).astype(np.int64)

    t_list, tr_list, dep_list = [], [], []
    for t in tasks:
        p = t.profile
        t_list.append(np.maximum(ticks(p.time_s), 1))
        tr = p.out_s[:-1, :, None] + p.in_s[1:, None, :]
        tr = tr * (1 - np.eye(n_acc))[None]
        tr_list.append(ticks(tr))
        deps: dict[int, IntArray] = {}
        for d in t.after:
            q = tasks[d].profile
            m = (q.out_s[-1][:, None] + p.in_s[0][None, :]) * (1 - np.eye(n_acc))
            deps[d] = ticks(m)
        dep_list.append(deps)
    coef: dict[tuple[int, int], IntArray] = {}
    if contention:
        for n in range(len(tasks)):
            dn = workload.demand(n)
            for m in range(len(tasks)):
                if m == n:
                    continue
                dm = workload.demand(m)
                s = workload.contention.slowdown(dn[:, :, None, None], dm[None, None, :, :],
                                                 np.arange(n_acc)[None, :, None, None])
                c = np.rint((1.0 - 1.0 / s) * COEF_SCALE).astype(np.int64)
                c[:, np.arange(n_acc), :, np.arange(n_acc)] = 0  # same accelerator: no overlap
                coef[(n, m)] = c
    identical = []
    for n in range(len(tasks) - 1):
        a, b = tasks[n], tasks[n + 1]
        if (
            not a.after
            and not b.after
            and a.release_s == b.release_s
            and a.profile.n_groups == b.profile.n_groups
            and all(
                np.array_equal(getattr(a.profile, f), getattr(b.profile, f))
                for f in ("time_s", "out_s", "in_s", "mem_bps")
            )
        ):
            identical.append((n, n + 1))
    return IntInstance(
        tick_s=tick,
        horizon=horizon,
        t=tuple(t_list),
        trans=tuple(tr_list),
        dep_trans=tuple(dep_list),
        coef=coef,
        release=tuple(int(v) for v in ticks([t.release_s for t in tasks])),
        after=tuple(t.after for t in tasks),
        identical=tuple(identical),
        n_acc=n_acc,
    )
