"""Algorithm 2's token table: the ready queue's token state, held by the policy and written once.

:func:`token_table` makes it for a token scheduler (PREMA, TOKEN) whose ready order holds
(:func:`~npusched.policies.contract.declared_order`): per job, by its index in dispatch order
``k``, its tokens (``tok``, as :meth:`~.prema.TokenScheduler.token_value` of the gain ``gain``),
its ready-queue seconds before its current stay (``waited``) and that stay's start (``since``),
and the structures that answer Algorithm 2 without a scan of the queue. Both engine loops use
it: the column loop (``sim/columns.py``) calls its functions directly, the general loop through
the policy (:meth:`~.prema.TokenScheduler.ready_hooks` hears of a job entering and leaving the
ready queue; ``on_period``, ``on_periods``, ``quiet_periods`` and ``pick`` then read the table).

Under the linear rule with threshold ``>=`` and every priority at or above the lowest level
(``lazy``, the default) a waiting job's tokens at the period boundary ``b`` are
``priority x (1 + (waited + (b - since)) / estimate)`` (``waiting_gain``: the boundary's and
the stay's alone), so the boundary at which they reach a level is known in advance:

- ``promo``: a heap of ``(boundary index, stay, job)``, the boundary a little before (2e-9
  relative) the job can reach its next level; a credited boundary evaluates only the jobs due;
- ``cnt_x[i]``: waiting jobs whose tokens reached level ``i``; the threshold is the highest level
  with one (or the running job's);
- ``cheap[i]``: the jobs whose tokens pass level ``i``'s candidate cut, in ``choose``'s order;
  the pick is the best of the heads at and above the threshold against the running job;
- ``qheap[i]``: the jobs still below level ``i`` by the exact boundary index at which their gain
  reaches ``quiet_periods``' need for it (``_boundaries_to_gain``, once per stay); the next tick
  that can change a decision is the least valid top at and above the threshold.

A decision then costs O(levels log n). Otherwise (the cumulative rule, threshold ``>``, a
priority below the lowest level) the waiting jobs are a list scanned as
:class:`~.prema.TokenScheduler` does, with, under the cumulative rule and ``>=``, the jobs that
reached the top level in a heap in ``choose``'s order (``sat``). Every float operation is the
scan's (:class:`~.prema.TokenScheduler` over job views), in the same order, so every path gives
the same bits (``tests/test_token_fast_path.py`` compares the column loop, the general loop with
this table and the general loop with the scan). Times are seconds; ``p`` and ``period`` are the
token rule's period in seconds.
"""

from __future__ import annotations

import math
from bisect import bisect_right
from collections.abc import Callable, Sequence
from heapq import heappop, heappush
from typing import Any

from npusched.policies.contract import declared_order

__all__ = ["TokenTable", "token_table"]


class TokenTable:
    """The functions and per-job lists of one run's token table (see the module docstring).

    Functions (``k``: a job's index in dispatch order; ``now``, ``first_s``: seconds;
    ``run_k``: the running job's index, -1 for none; ``run_exec``: its work done, seconds):

    - ``enqueue(k, now)``: job ``k`` enters the ready queue (its stay begins at ``now``);
    - ``dequeue(k, now)``: it leaves it and starts (its waiting grows by the stay);
    - ``credit_tick(now, run_k)``: Algorithm 2 lines 6-7 at a period tick (``on_period``);
    - ``credit_periods(now, first_s, count, run_k)``: ``count`` skipped boundaries from
      ``first_s`` at once (``on_periods``);
    - ``pick(now, run_k, run_exec) -> k``: lines 9-10, the chosen job (-1 for none);
    - ``quiet(now, first_s, run_k) -> int``: ``quiet_periods``, the boundaries from ``first_s``
      that cannot change the decision.
    """

    __slots__ = (
        "credit_periods",
        "credit_tick",
        "dequeue",
        "enqueue",
        "est",
        "exe",
        "gain",
        "lazy",
        "pick",
        "quiet",
        "since",
        "tok",
        "waited",
    )

    enqueue: Callable[[int, float], None]
    dequeue: Callable[[int, float], None]
    credit_tick: Callable[[float, int], None]
    credit_periods: Callable[[float, float, int, int], None]
    pick: Callable[[float, int, float], int]
    quiet: Callable[[float, float, int], int]
    #: Per job: estimated isolated seconds, work done when it entered the queue (seconds),
    #: token gain (in units of its priority), tokens, ready-queue seconds before its stay and
    #: the stay's start (seconds).
    est: list[float]
    exe: list[float]
    gain: list[float]
    tok: list[float]
    waited: list[float]
    since: list[float]
    #: Whether the waiting jobs are held by token level (see the module docstring).
    lazy: bool


def token_table(
    pol: Any,
    priorities: Sequence[int],
    arrivals_s: Sequence[float],
    ids: Sequence[int],
    est: list[float],
    exe: list[float],
) -> TokenTable:
    """The token table of ``pol`` (a token scheduler whose ready order holds) for a run of
    ``len(priorities)`` requests in dispatch order: their priorities, arrival times (seconds)
    and ids (lists are kept, not copied); ``est`` their estimates (seconds) and ``exe`` their
    work done (seconds), lists the caller owns and keeps current (a job's entries are read when it enters the queue, and the
    running job's estimate at each pick). The policy's own formulas are bound
    (``token_value``, ``slowdown_of``, ``waiting_gain``, ``_boundaries_to_gain``,
    ``_periods_to_gain``, ``round_down``)."""
    n = len(priorities)
    floor = math.floor
    period = float(pol.period_s)
    p = float(pol.token_period_s)  # the policy's own ``p``
    levels: tuple[float, ...] = tuple(pol.token_levels)
    cumulative = pol.tokens == "cumulative"
    strict = pol.threshold == ">"
    incl_run = bool(pol.include_running)
    preemptive = bool(pol.preemptive)
    sjf = declared_order(pol) == "tokens-remaining"
    never: int = pol.never_periods  # ``quiet_periods``' "never"
    # (lists are kept, not copied: the caller hands them over)
    prio = priorities if isinstance(priorities, list) else list(priorities)
    arr_s = arrivals_s if isinstance(arrivals_s, list) else list(arrivals_s)
    rid = ids if isinstance(ids, list) else list(ids)
    fprio = [float(x) for x in prio]
    top_level = levels[-1]
    # Algorithm 2's formulas, the policy's own (written once, in TokenScheduler).
    to_gain: Callable[..., int] = pol._periods_to_gain
    token_value: Callable[[float, float], float] = pol.token_value
    slowdown_of: Callable[[float, float], float] = pol.slowdown_of
    waiting_gain: Callable[[float, float, float, float], float] = pol.waiting_gain
    b_gain: Callable[..., int] = pol._boundaries_to_gain
    round_down_to_level: Callable[[float, tuple[float, ...]], float] = pol.round_down
    gain = [0.0] * n
    tok = fprio.copy()
    waited = [0.0] * n
    since = [0.0] * n
    # The ready queue in two parts (not ``lazy``): ``sat`` holds the jobs whose tokens reached
    # the top level (cumulative rule and threshold ">=" only; tokens never fall, so such a job
    # is a candidate at every decision and its exact tokens no longer matter: they are not
    # updated), as a heap in the order ``choose`` ranks waiting jobs (``sat_key``); ``low`` the
    # others.
    low: list[int] = []
    sat: list[tuple[Any, ...]] = []
    top_cut = top_level - 1e-12 * max(top_level, 1.0)  # the candidate cut of threshold 9
    saturating = cumulative and not strict  # under ">" a job at 9 tokens is not a candidate

    nlev = len(levels)
    lazy = not cumulative and not strict and min(fprio, default=top_level) >= levels[0]
    cand_cut = [lv - 1e-12 * max(lv, 1.0) for lv in levels]  # ``candidates``' cut at lv
    lvl_c = [-1] * n  # highest level whose candidate cut its tokens pass
    lvl_x = [-1] * n  # highest level its tokens reach
    cnt_x = [0] * nlev
    cheap: list[list[tuple[Any, ...]]] = [[] for _ in levels]
    qheap: list[list[tuple[int, int, int]]] = [[] for _ in levels]
    promo: list[tuple[int, int, int]] = []
    ver = [0] * n  # bumped at each enqueue: entries of an earlier stay are stale
    waiting = [False] * n
    # The running job whose linear credit was made in its current stay (it depends only on its
    # waiting before it started: made once per stay, the same value every time).
    cred_k = -1

    def set_gain(k: int, g: float) -> None:
        """Store job ``k``'s gain and its tokens (``TokenScheduler.token_value``)."""
        gain[k] = g
        tok[k] = token_value(prio[k], g)

    slowdown = slowdown_of  # ``TokenScheduler.slowdown_of(waited_s, estimated_s)``

    def sat_key(k: int) -> tuple[Any, ...]:
        """Job ``k``'s entry in ``sat``: the waiting-job part of ``choose``'s key."""
        if sjf:  # shortest_remaining: (remaining, arrival, id)
            rem = est[k] - exe[k]
            return (rem if rem > 0.0 else 0.0, arr_s[k], rid[k], k)
        return (arr_s[k], rid[k], k)  # first_come: (arrival, id)

    def promo_at(k: int, nx: int) -> int:
        """A boundary index at or before the first at which waiting job ``k`` can reach level
        ``nx`` (tokens at boundary ``b``: ``priority x (1 + (waited + b - since) / est)``)."""
        e = est[k]
        if e <= 0.0:
            return -1
        b = since[k] - waited[k] + (levels[nx] * (1.0 - 2e-9) / fprio[k] - 1.0) * e
        return math.floor(b / period) - 1

    def enqueue(k: int, now: float) -> None:
        """Job ``k`` joins the ready queue at ``now``."""
        since[k] = now
        if not lazy:
            if saturating and tok[k] >= top_level:
                heappush(sat, sat_key(k))
            else:
                low.append(k)
            return
        waiting[k] = True
        ver[k] += 1
        v = ver[k]
        t = tok[k]
        if t != t:  # NaN tokens reach no level
            c = x = -1
        else:
            c = bisect_right(cand_cut, t) - 1
            x = bisect_right(levels, t) - 1
        lvl_c[k] = c
        lvl_x[k] = x
        cnt_x[x] += 1
        # Its ``cheap`` entry (``choose``'s key of a waiting job, without the running flag, its
        # stay ``ver`` and index) and ``promo_at`` written out (two calls fewer per enqueue).
        if sjf:  # shortest_remaining: (remaining, arrival, id)
            rem = est[k] - exe[k]
            heappush(cheap[c], (rem if rem > 0.0 else 0.0, arr_s[k], rid[k], v, k))
        else:  # first_come: (arrival, id)
            heappush(cheap[c], (arr_s[k], rid[k], v, k))
        if x + 1 < nlev:
            w = waited[k]
            e = est[k]
            if e <= 0.0:
                nb = -1
            else:
                b = now - w + (levels[x + 1] * (1.0 - 2e-9) / fprio[k] - 1.0) * e
                nb = floor(b / period) - 1
            heappush(promo, (nb, v, k))
            top = t * (1.0 + 1e-12)
            s0 = now
            for i in range(x + 1, nlev):
                lv = levels[i]
                if lv > top:
                    # The boundary index at which its gain reaches ``quiet_periods``' need
                    # for this level: a function of the stay alone (``_boundaries_to_gain``
                    # from index 0), the same whichever wake asks.
                    need = lv * (1.0 - 1e-9) / fprio[k] - 1.0
                    heappush(qheap[i], (b_gain(need, w, s0, 0, p, e) - 1, v, k))

    def dequeue(k: int, now: float) -> None:
        """Job ``k`` leaves the ready queue at ``now`` (it starts)."""
        nonlocal cred_k
        if lazy:
            waiting[k] = False
            cnt_x[lvl_x[k]] -= 1
        elif saturating and tok[k] >= top_level:
            heappop(sat)  # ``k`` is its best job
        else:
            low.remove(k)
        waited[k] += now - since[k]
        cred_k = -1  # a new stay: its credit is made again

    def lazy_credit(kb: int) -> None:
        """Credit the boundary of index ``kb`` (at ``kb x period``): the jobs due in ``promo``
        get their tokens there (``waiting_gain``: the boundary's alone) and move up their
        levels."""
        b = kb * period
        while promo and promo[0][0] <= kb:
            _, v, k = heappop(promo)
            if not waiting[k] or ver[k] != v:
                continue
            g = waiting_gain(waited[k], since[k], b, est[k])
            gain[k] = g  # ``set_gain`` and the levels written out
            t = tok[k] = token_value(prio[k], g)
            if t != t:
                c = x = -1
            else:
                c = bisect_right(cand_cut, t) - 1
                x = bisect_right(levels, t) - 1
            if c != lvl_c[k]:
                lvl_c[k] = c
                if sjf:  # ``choose``'s key of a waiting job: (remaining, arrival, id)
                    rem = est[k] - exe[k]
                    heappush(cheap[c], (rem if rem > 0.0 else 0.0, arr_s[k], rid[k], v, k))
                else:  # (arrival, id)
                    heappush(cheap[c], (arr_s[k], rid[k], v, k))
            if x != lvl_x[k]:
                cnt_x[lvl_x[k]] -= 1
                cnt_x[x] += 1
                lvl_x[k] = x
            if x + 1 < nlev:
                nb = promo_at(k, x + 1)
                heappush(promo, (nb if nb > kb else kb + 1, v, k))

    def lazy_pick(now: float, run_k: int, run_exec: float) -> int:
        """``pick`` over the level structure: the best of the heads of ``cheap`` at and above
        the threshold, and the running job if it is a candidate."""
        # The threshold's level index: the highest level with a waiting job, or the running
        # job's if it is included and higher (written out here and in ``lazy_quiet``).
        t_i = nlev - 1
        while t_i >= 0 and cnt_x[t_i] == 0:
            t_i -= 1
        run_in = run_k >= 0 and incl_run
        if run_in:
            tr = tok[run_k]
            if tr == tr:  # NaN tokens reach no level
                xr = bisect_right(levels, tr) - 1
                if xr > t_i:
                    t_i = xr
        if t_i < 0:
            return -1
        # The valid heads are distinct jobs (``lvl_c`` names one level per job), so their keys
        # (ending in the unique id) never tie: whole entries compare as their keys do, and no
        # key slice is made.
        be: tuple[Any, ...] | None = None
        for i in range(t_i, nlev):
            h = cheap[i]
            while h:
                e = h[0]
                k = e[-1]
                if waiting[k] and ver[k] == e[-2] and lvl_c[k] == i:
                    if be is None or e < be:
                        be = e
                    break
                heappop(h)
        if run_in and tok[run_k] >= cand_cut[t_i]:
            if be is None:
                return run_k
            if sjf:  # (remaining, running first, arrival, id)
                rem = est[run_k] - run_exec
                if rem < 0.0:
                    rem = 0.0
                if rem <= be[0]:
                    return run_k
            elif arr_s[run_k] <= be[0]:  # (arrival, running first, id)
                return run_k
        return -1 if be is None else be[-1]

    run_quiet: list[Any] = [-1, -1, 0.0, 0.0, never]  # (job, threshold, gain, waited, answer)

    def lazy_quiet(now: float, first_s: float, run_k: int) -> int:
        """``quiet_periods`` over the level structure: the soonest crossing of a level at or
        above the threshold is the top of that level's ``qheap`` (exact boundary indices,
        computed once per stay), against the running job's part."""
        if run_k < 0:
            return 0
        if not preemptive:
            return never
        t_i = nlev - 1  # the threshold's level index, as in ``lazy_pick``
        while t_i >= 0 and cnt_x[t_i] == 0:
            t_i -= 1
        if incl_run:
            tr = tok[run_k]
            if tr == tr:  # NaN tokens reach no level
                xr = bisect_right(levels, tr) - 1
                if xr > t_i:
                    t_i = xr
        thr = levels[t_i]
        best = never
        if incl_run:
            # The running job's part depends only on its gain, its waiting before it started
            # and the threshold: kept (``run_quiet``) while those stay as they were.
            g = gain[run_k]
            w = waited[run_k]
            rq = run_quiet
            if rq[0] == run_k and rq[1] == t_i and rq[2] == g and rq[3] == w:
                best = rq[4]
            else:
                top = tok[run_k] * (1.0 + 1e-12)
                if top < top_level:
                    for lv in levels:
                        if lv <= top or lv < thr:
                            continue
                        need = lv * (1.0 - 1e-9) / fprio[run_k] - 1.0
                        best = to_gain(g, need, w, p, est[run_k], False, False)
                        break
                rq[:] = (run_k, t_i, g, w, best)
        n0 = round(first_s / period)  # the first boundary's index
        qmin = never + n0  # the soonest waiting job's crossing (a boundary index)
        for i in range(t_i, nlev):
            h = qheap[i]
            lv = levels[i]
            while h:
                _, v, k = h[0]
                if waiting[k] and ver[k] == v and tok[k] * (1.0 + 1e-12) < lv:
                    break
                heappop(h)
            if h and h[0][0] < qmin:
                qmin = h[0][0]
        # ``quiet_periods``: the least ``k >= 1`` over the jobs (a waiting job's is its
        # crossing index less ``n0``, plus one, at least 1), less one, at least 0.
        kq = qmin - n0 + 1
        if kq < 1:
            kq = 1
        if kq < best:
            best = kq
        return best - 1 if best > 1 else 0

    def saturate() -> None:
        """Move the jobs of ``low`` whose tokens reached the top level to ``sat``."""
        for k in low:
            if tok[k] >= top_level:
                heappush(sat, sat_key(k))
        low[:] = [k for k in low if tok[k] < top_level]

    def lazy_periods(now: float, first_s: float, count: int, run_k: int) -> None:
        """``TokenScheduler.on_periods`` over the level structure: the last of the ``count``
        boundaries from ``first_s`` is credited (``lazy_credit``, only if a job is due), and
        the running job's credit is made once per stay."""
        nonlocal cred_k
        if promo:
            kb = round(first_s / period) + count - 1
            if promo[0][0] <= kb:
                lazy_credit(kb)
        if run_k != cred_k:
            cred_k = run_k
            if run_k >= 0:
                set_gain(run_k, slowdown(waited[run_k], est[run_k]))

    def lazy_tick(now: float, run_k: int) -> None:
        """``TokenScheduler.on_period`` over the level structure (see ``lazy_periods``)."""
        nonlocal cred_k
        if promo:
            kb = round(now / period)
            if promo[0][0] <= kb:
                lazy_credit(kb)
        if run_k != cred_k:
            cred_k = run_k
            if run_k >= 0:
                set_gain(run_k, slowdown(waited[run_k], est[run_k]))

    def credit_periods(now: float, first_s: float, count: int, run_k: int) -> None:
        """``TokenScheduler.on_periods``: ``count`` boundaries from ``first_s`` at once (jobs
        at the top level under ``sat`` are left as they are)."""
        nonlocal cred_k
        if not cumulative:
            r = -1 if run_k == cred_k else run_k
            cred_k = run_k
            last = (round(first_s / period) + count - 1) * period
            for k in low:
                set_gain(k, waiting_gain(waited[k], since[k], last, est[k]))
            if r >= 0:
                set_gain(r, slowdown(waited[r], est[r]))
            return
        span = count * (now - first_s) - p * count * (count - 1) / 2.0
        up = False
        for k in low:
            total = count * (waited[k] + (now - since[k])) - span
            if total > 0.0:
                g = gain[k] = gain[k] + slowdown_of(total, est[k])
                t = tok[k] = token_value(prio[k], g)
                if t >= top_level:
                    up = True
        if up and saturating:
            saturate()
        if run_k >= 0 and incl_run and (tok[run_k] < top_level or not saturating):
            w = waited[run_k]
            if w > 0.0:
                set_gain(run_k, gain[run_k] + count * slowdown_of(w, est[run_k]))

    def credit_tick(now: float, run_k: int) -> None:
        """``TokenScheduler.on_period`` (Algorithm 2 lines 6-7) at a tick."""
        nonlocal cred_k
        if not cumulative:
            r = -1 if run_k == cred_k else run_k
            cred_k = run_k
            b = round(now / period) * period  # the boundary the tick stands for
            for k in low:
                set_gain(k, waiting_gain(waited[k], since[k], b, est[k]))
            if r >= 0:
                set_gain(r, slowdown(waited[r], est[r]))
            return
        for k in low:
            set_gain(k, gain[k] + slowdown(waited[k] + (now - since[k]), est[k]))
        if saturating:
            saturate()
        if run_k >= 0 and incl_run and (tok[run_k] < top_level or not saturating):
            set_gain(run_k, gain[run_k] + slowdown(waited[run_k], est[run_k]))

    def pick(now: float, run_k: int, run_exec: float) -> int:
        """Algorithm 2 lines 9-10 (``TokenScheduler.pick``): the chosen job, -1 if none."""
        run_in = run_k >= 0 and incl_run
        if not strict and (sat or (run_in and tok[run_k] >= top_level)):
            # The threshold is the top level: the candidates are ``sat`` and the jobs within
            # the float margin below it (``eps`` of the threshold 9).
            cands = [k for k in low if tok[k] >= top_cut]
            if sat:  # the best of them by ``choose``'s order
                cands.append(sat[0][-1])
            if run_in and tok[run_k] >= top_cut:
                cands.append(run_k)
        else:
            jobs = [*low, *[e[-1] for e in sat]]
            if run_in:
                jobs.append(run_k)
            if not jobs:
                return -1
            thr = round_down_to_level(max([tok[k] for k in jobs]), levels)
            eps = 1e-12 * max(thr, 1.0)
            cands = []
            if strict:
                cut = thr + eps
                cands = [k for k in jobs if tok[k] > cut]
            if not cands:
                cut = thr - eps
                cands = [k for k in jobs if tok[k] >= cut]
        best = cands[0]
        if len(cands) == 1:
            return best
        if sjf:  # shortest_remaining: (remaining, not running, arrival, id)
            brem = est[best] - (run_exec if best == run_k else exe[best])
            if brem < 0.0:
                brem = 0.0
            for k in cands[1:]:
                rem = est[k] - (run_exec if k == run_k else exe[k])
                if rem < 0.0:
                    rem = 0.0
                if rem < brem or (
                    rem == brem
                    and (0 if k == run_k else 1, arr_s[k], rid[k])
                    < (0 if best == run_k else 1, arr_s[best], rid[best])
                ):
                    best, brem = k, rem
            return best
        bkey = (arr_s[best], 0 if best == run_k else 1, rid[best])  # first_come
        for k in cands[1:]:
            key = (arr_s[k], 0 if k == run_k else 1, rid[k])
            if key < bkey:
                best, bkey = k, key
        return best

    def g_below(g: float, k: int, w: float, e: float) -> float:
        """A waiting job's cumulative gain after ``k`` boundaries, as ``_periods_to_gain``
        evaluates it."""
        return g + (k * w + p * k * (k - 1) / 2.0) / e

    def quiet(now: float, first_s: float, run_k: int) -> int:
        """``TokenScheduler.quiet_periods``: boundaries that cannot change the decision."""
        if run_k >= 0 and not preemptive:
            return never
        if run_k < 0 or strict:
            return 0
        run_low = incl_run and tok[run_k] < top_level
        if sat or (incl_run and not run_low):
            # The threshold is the top level: only a job below it reaching it can matter.
            below = [*low, run_k] if run_low else low
            thr: float = top_level
        else:
            below = [*low, run_k] if incl_run else low
            thr = round_down_to_level(max([tok[k] for k in below]), levels)
        best = never
        ahead = first_s - now
        n0 = round(first_s / period)
        for k in below:
            top = tok[k] * (1.0 + 1e-12)
            if top >= top_level:
                continue  # no level above its tokens
            for lv in levels:
                if lv <= top or lv < thr:
                    continue
                need = lv * (1.0 - 1e-9) / fprio[k] - 1.0
                if k != run_k:
                    w = waited[k] + (now - since[k]) + ahead
                    if cumulative and best < never and est[k] > 0.0:
                        # ``_periods_to_gain`` returns the least k whose gain (this very
                        # float expression, non-decreasing in k) reaches ``need``: if
                        # ``best - 1`` boundaries fall short, this job cannot come sooner.
                        b1 = best - 1
                        if g_below(gain[k], b1, w, est[k]) < need:
                            break
                    if cumulative:
                        kk = to_gain(gain[k], need, w, p, est[k], True, True)
                    else:
                        kk = b_gain(need, waited[k], since[k], n0, p, est[k])
                else:
                    kk = to_gain(gain[k], need, waited[k], p, est[k], False, cumulative)
                if kk < best:
                    best = kk
                break  # the next level up is reached first
        return best - 1 if best > 1 else 0

    table = TokenTable()
    table.enqueue = enqueue
    table.dequeue = dequeue
    if lazy:
        table.credit_tick = lazy_tick
        table.credit_periods = lazy_periods
        table.pick = lazy_pick
        table.quiet = lazy_quiet
    else:
        table.credit_tick = credit_tick
        table.credit_periods = credit_periods
        table.pick = pick
        table.quiet = quiet
    table.est = est
    table.exe = exe
    table.gain = gain
    table.tok = tok
    table.waited = waited
    table.since = since
    table.lazy = lazy
    return table
