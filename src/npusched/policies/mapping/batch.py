"""Many schedules executed at once: :func:`execute` vectorised over a batch with NumPy.

:func:`execute_batch` runs ``B`` schedules of one :class:`~npusched.policies.mapping.execute.Workload`
side by side: every array carries a leading batch axis and each loop iteration advances every
schedule by one event of :func:`~npusched.policies.mapping.execute.execute` (a dispatch round, one
contention interval, the ends in it). The floating-point operations are the scalar executor's, in
the same order, so the finish times are *bitwise* equal to it (a test holds it to that); only
priority dispatch is supported (``Schedule.priority``; no explicit per-accelerator ``order``),
which is how every search in this package executes candidates.

Cost: ``O(events x B x (N + A))`` NumPy work, about two events per layer group; two DNNs of ten
groups each evaluate in a few microseconds per schedule instead of ~0.4 ms.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from npusched.errors import ConfigError, SimulationError
from npusched.policies.mapping.execute import Workload

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

__all__ = ["BatchData", "execute_batch", "objective_batch"]


class BatchData:
    """The workload's per-group arrays, padded to the longest task (built once, reused).

    Attributes:
        n_groups: ``(N,)`` groups per task.
        times: ``(N, Gmax, A)`` seconds; demand: same shape, fraction of the SoC bandwidth.
        trans: ``(N, Gmax, A, A)`` seconds from group ``g`` on ``a`` to group ``g + 1`` on ``b``.
        dep: ``dep[m]`` = list of ``(producer d, (A, A) seconds)``.
        release: ``(N,)`` seconds.
    """

    def __init__(self, workload: Workload) -> None:
        tasks = workload.tasks
        n, a = len(tasks), workload.n_accelerators
        self.workload = workload
        self.n_groups = np.array([t.profile.n_groups for t in tasks], dtype=np.int64)
        gmax = int(self.n_groups.max())
        self.times = np.ones((n, gmax, a))
        self.demand = np.zeros((n, gmax, a))
        self.trans = np.zeros((n, gmax, a, a))
        off = 1.0 - np.eye(a)
        for i, t in enumerate(tasks):
            p, g = t.profile, t.profile.n_groups
            self.times[i, :g] = p.time_s
            self.demand[i, :g] = workload.demand(i)
            if g > 1:
                # the scalar executor's float(out + in), and exactly 0.0 on the same accelerator
                tr = p.out_s[:-1, :, None] + p.in_s[1:, None, :]
                self.trans[i, : g - 1] = np.where(off[None] > 0, tr, 0.0)
        self.dep: list[list[tuple[int, FloatArray]]] = []
        for t in tasks:
            lst = []
            for d in t.after:
                q = tasks[d].profile
                m = q.out_s[-1][:, None] + t.profile.in_s[0][None, :]
                lst.append((d, np.where(off > 0, m, 0.0)))
            self.dep.append(lst)
        self.release = np.array([t.release_s for t in tasks], dtype=np.float64)


def execute_batch(
    workload: Workload | BatchData,
    assignment: npt.ArrayLike,
    priority: npt.ArrayLike | None = None,
    *,
    contention: bool = True,
    transitions: bool = True,
    contested_out: npt.NDArray[np.bool_] | None = None,
) -> FloatArray:
    """Finish time (seconds) of every task under each of ``B`` schedules.

    Args:
        workload: the workload (or its precomputed :class:`BatchData`).
        assignment: ``(B, N, Gmax)`` accelerator indices (entries past a task's last group are
            ignored).
        priority: ``(B, N)`` task orders, first = highest priority (``Schedule.priority``);
            None = task index order.
        contention, transitions: as :func:`~npusched.policies.mapping.execute.execute`.
        contested_out: optional ``(B,)`` bool array, set to ``ExecutionResult.contested`` of
            each schedule (the dispatch once chose among several ready tasks, so another
            priority order could give another result).

    Returns:
        ``(B, N)`` finish times, bitwise equal to ``execute(...).finish_s`` of each schedule.

    Raises:
        ConfigError: shapes or indices do not fit the workload.
    """
    data = workload if isinstance(workload, BatchData) else BatchData(workload)
    w = data.workload
    model = w.contention
    model._check()
    n_tasks, n_acc = len(w.tasks), w.n_accelerators
    gmax = int(data.n_groups.max())
    asg = np.asarray(assignment, dtype=np.int64)
    if asg.ndim != 3 or asg.shape[1] != n_tasks or asg.shape[2] < gmax:
        raise ConfigError(f"assignment shape {asg.shape}; expected (B, {n_tasks}, >= {gmax})")
    asg = asg[:, :, :gmax]
    valid = np.arange(gmax)[None, :] < data.n_groups[:, None]
    if np.any(((asg < 0) | (asg >= n_acc)) & valid[None]):
        raise ConfigError(f"assignment: accelerator index out of 0..{n_acc - 1}")
    asg = np.where(valid[None], asg, 0)
    bsz = asg.shape[0]
    rank = np.empty((bsz, n_tasks), dtype=np.int64)
    if priority is None:
        rank[:] = np.arange(n_tasks)
    else:
        pr = np.asarray(priority, dtype=np.int64)
        if pr.shape != (bsz, n_tasks):
            raise ConfigError(f"priority shape {pr.shape}; expected ({bsz}, {n_tasks})")
        np.put_along_axis(rank, pr, np.broadcast_to(np.arange(n_tasks), pr.shape), axis=1)

    rows = np.arange(bsz)
    if contested_out is not None:
        if contested_out.shape != (bsz,):
            raise ConfigError(f"contested_out shape {contested_out.shape}; expected ({bsz},)")
        contested_out[:] = False
    eps = 1e-15
    big_rank = n_tasks + 1
    ready = np.full((bsz, n_tasks), np.inf)
    for n, t in enumerate(w.tasks):
        if not t.after:
            ready[:, n] = t.release_s
    nxt = np.zeros((bsz, n_tasks), dtype=np.int64)
    finish = np.full((bsz, n_tasks), np.nan)
    run_task = np.full((bsz, n_acc), -1, dtype=np.int64)
    run_group = np.zeros((bsz, n_acc), dtype=np.int64)
    rem = np.zeros((bsz, n_acc))
    now = np.zeros(bsz)
    g_of = data.n_groups[None, :]
    total = int(data.n_groups.sum())
    done = np.zeros(bsz, dtype=np.int64)
    a_idx = np.arange(n_acc)

    while True:
        active = done < total
        if not active.any():
            break
        # dispatch onto idle accelerators: the ready task of highest priority
        left = nxt < g_of
        nacc = np.take_along_axis(asg, np.minimum(nxt, gmax - 1)[:, :, None], axis=2)[:, :, 0]
        for a in range(n_acc):
            cand = left & (nacc == a) & (ready <= (now + eps)[:, None]) & (run_task[:, a] < 0)[:, None]
            if contested_out is not None:
                contested_out |= cand.sum(axis=1) > 1
            key = np.where(cand, rank, big_rank)
            choice = np.argmin(key, axis=1)
            go = cand[rows, choice]
            if go.any():
                b = rows[go]
                c = choice[go]
                g = nxt[b, c]
                run_task[b, a] = c
                run_group[b, a] = g
                rem[b, a] = data.times[c, g, a]
                ready[b, c] = np.inf
        # rates in this interval
        running = run_task >= 0
        tsk = np.maximum(run_task, 0)
        own = np.where(running, data.demand[tsk, run_group, a_idx[None, :]], 0.0)
        if contention:
            tot = own[:, 0].copy()
            for a in range(1, n_acc):
                tot = tot + own[:, a]
            ext = tot[:, None] - own
            slow = model.slowdown(own, ext, a_idx[None, :])
            multi = running.sum(axis=1) > 1
            slow = np.where(running & multi[:, None], slow, 1.0)
        else:
            slow = np.ones((bsz, n_acc))
        t_done = now + np.min(np.where(running, rem * slow, np.inf), axis=1)
        t_ready = np.min(np.where(ready > (now + eps)[:, None], ready, np.inf), axis=1)
        t_next = np.minimum(t_done, t_ready)
        stuck = active & ~np.isfinite(t_next)
        if stuck.any():
            raise SimulationError("schedule deadlocks")
        t_next = np.where(active, t_next, now)
        dt = t_next - now
        rem = np.where(running, rem - dt[:, None] / slow, rem)
        cur_t = data.times[tsk, run_group, a_idx[None, :]]
        fin = (
            running
            & active[:, None]
            & (t_next >= t_done)[:, None]
            & (rem <= 1e-12 * np.maximum(1.0, cur_t))
        )
        now = t_next
        if not fin.any():
            continue
        producers_done = np.zeros((bsz, n_tasks), dtype=bool)
        for a in range(n_acc):
            f = fin[:, a]
            if not f.any():
                continue
            b = rows[f]
            c = run_task[b, a]
            g = run_group[b, a]
            run_task[b, a] = -1
            done[b] += 1
            nxt[b, c] = g + 1
            more = g + 1 < data.n_groups[c]
            if more.any():
                bm, cm, gm = b[more], c[more], g[more]
                tr = data.trans[cm, gm, a, asg[bm, cm, gm + 1]] if transitions else 0.0
                ready[bm, cm] = now[bm] + tr
            last = ~more
            if last.any():
                finish[b[last], c[last]] = now[b[last]]
                producers_done[b[last], c[last]] = True
        if producers_done.any():
            for m, deps in enumerate(data.dep):
                if not deps:
                    continue
                ds = [d for d, _ in deps]
                trig = producers_done[:, ds].any(axis=1) & (nxt[:, m] == 0)
                trig &= np.all(nxt[:, ds] >= data.n_groups[ds][None, :], axis=1)
                if not trig.any():
                    continue
                b = rows[trig]
                r = np.full(b.shape, data.release[m])
                for d, mat in deps:
                    last_g = int(data.n_groups[d]) - 1
                    tr = mat[asg[b, d, last_g], asg[b, m, 0]] if transitions else 0.0
                    r = np.maximum(r, finish[b, d] + tr)
                ready[b, m] = r
    return finish


def objective_batch(workload: Workload | BatchData, finish: FloatArray, goal: str) -> FloatArray:
    """Per schedule, the value to *minimise* for ``goal`` (as ``ExecutionResult.objective``):
    ``"latency"`` -> max_n T_n in seconds, ``"throughput"`` -> -sum_n 1/T_n in 1/s."""
    data = workload if isinstance(workload, BatchData) else BatchData(workload)
    lat = finish - data.release[None, :]
    if goal == "latency":
        return np.asarray(lat.max(axis=1), dtype=np.float64)
    if goal == "throughput":
        return np.asarray(-np.sum(1.0 / lat, axis=1), dtype=np.float64)
    raise ConfigError(f"goal={goal!r}; allowed: latency, throughput")
