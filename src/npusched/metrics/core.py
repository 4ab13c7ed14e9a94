"""Metrics over per-request records (one row per finished request, ``SimResult.to_frame()``).

Columns used: ``latency_s`` (C_multi: finish - arrival, seconds), ``isolated_s`` (C_single:
uninterrupted latency, seconds), ``priority``, ``arrival_s``, ``finish_s``, ``slo_s`` (NaN when the
request has no SLO) and, if present, ``network``, ``waiting_s``, ``estimated_s``,
``preemptions``, ``checkpoint_bytes``, ``checkpoint_s``, ``wasted_s``.

Definitions (PREMA Sec. III after Eyerman & Eeckhout; Planaria Sec. VI-A):

* ``NTT_i = C_multi_i / C_single_i`` (normalised turnaround time, >= 1).
* ``ANTT = mean_i NTT_i`` (lower is better) and ``STP = sum_i 1 / NTT_i`` (higher is better), Eq. 1.
* Fairness, Eq. 2: ``PP_i = (C_single_i / C_multi_i) / (Priority_i / sum_j Priority_j)``, i.e. a
  task's progress *divided by* its priority share, and ``Fairness = min_{i,j} PP_i / PP_j =
  min PP / max PP`` in (0, 1]; 1 means every task progressed in proportion to its priority. The
  printed Eq. 2 lost its fraction bar in the text copy; Planaria (Sec. VI-A) writes the same
  formula inline as ``(T_isolated / T_multi) / (Priority_i / sum Priority_k)``, so the share
  divides.
* SLA violation rate at ``N`` (PREMA Sec. VI-C): the fraction of requests with
  ``latency_s > N x isolated_s``, for N = 2..20 by default.
* Percentiles use NumPy's default (linear interpolation between order statistics); ``*_norm``
  percentiles are percentiles of the per-request NTT.
* Throughput: requests / makespan; utilisation: busy time / makespan.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd

from npusched.errors import NpuschedError
from npusched.workloads.request import PRIORITY_LEVELS

FloatArray = npt.NDArray[np.float64]
#: Per-request records: a frame, or columns by name (equal-length arrays, e.g. a
#: ``SimResult``'s numeric columns), read the same way without building a frame.
Records = pd.DataFrame | Mapping[str, npt.NDArray[Any]]

#: PREMA's SLA targets: N x isolated latency for N = 2..20 (Sec. VI-C).
SLA_N: tuple[int, ...] = tuple(range(2, 21))
#: Latency percentiles reported by :func:`summarize`.
PERCENTILES: tuple[float, ...] = (50.0, 95.0, 99.0)

__all__ = [
    "PERCENTILES",
    "SLA_N",
    "antt",
    "fairness",
    "latency_percentiles",
    "makespan",
    "ntt",
    "priority_label",
    "progress_per_priority",
    "sla_met",
    "sla_violation_rates",
    "slo_attainment",
    "stp",
    "summarize",
    "throughput",
    "throughput_at_sla",
    "utilisation",
]


def _names(df: Records) -> Collection[Any]:
    """The column names of ``df``."""
    return df.columns if isinstance(df, pd.DataFrame) else df.keys()


def _nrows(df: Records) -> int:
    """The number of records in ``df``."""
    if isinstance(df, pd.DataFrame):
        return len(df)
    return len(next(iter(df.values()))) if df else 0


def _require(df: Records, *cols: str) -> None:
    names = _names(df)
    missing = [c for c in cols if c not in names]
    if missing:
        raise NpuschedError(
            f"records lack column(s) {', '.join(missing)}; have: {', '.join(map(str, names))}"
        )


def _col(df: Records, name: str) -> FloatArray:
    if isinstance(df, pd.DataFrame):
        return np.asarray(df[name].to_numpy(dtype=np.float64, na_value=np.nan), dtype=np.float64)
    return np.asarray(df[name], dtype=np.float64)


def ntt(df: Records) -> FloatArray:
    """Per-request normalised turnaround time ``latency_s / isolated_s`` (C_multi / C_single)."""
    _require(df, "latency_s", "isolated_s")
    return _col(df, "latency_s") / _col(df, "isolated_s")


def antt(df: Records) -> float:
    """Average NTT (PREMA Eq. 1); NaN for no requests."""
    x = ntt(df)
    return float(x.mean()) if x.size else float("nan")


def stp(df: Records) -> float:
    """System throughput ``sum_i C_single_i / C_multi_i`` (PREMA Eq. 1); 0 for no requests."""
    return float((1.0 / ntt(df)).sum())


def progress_per_priority(df: Records) -> FloatArray:
    """``PP_i = (C_single_i / C_multi_i) / (Priority_i / sum_j Priority_j)`` (PREMA Eq. 2)."""
    _require(df, "priority")
    prio = _col(df, "priority")
    share = prio / prio.sum()
    return (1.0 / ntt(df)) / share


def fairness(df: Records) -> float:
    """``min_{i,j} PP_i / PP_j = min PP / max PP`` (PREMA Eq. 2); NaN for no requests."""
    pp = progress_per_priority(df)
    return float(pp.min() / pp.max()) if pp.size else float("nan")


def sla_violation_rates(df: Records, ns: Iterable[float] = SLA_N) -> FloatArray:
    """Fraction of requests with ``latency_s > N x isolated_s`` for every N in ``ns`` (one
    broadcast: an ``(len(ns), n_requests)`` comparison).

    The fractions are the violations counted (``count_nonzero``) over the requests: the bits
    of the comparisons' ``mean`` (which sums the 0/1 values as float64, exactly, and divides
    by the count) at a fraction of its cost (no float per comparison). Each row of the
    comparison is counted on its own: ``count_nonzero`` of a whole 1-D boolean array counts
    its bytes in a vectorised loop, where along an axis it casts every 0/1 to an integer and
    adds them (the same counts)."""
    _require(df, "latency_s", "isolated_s")
    n = np.asarray(list(ns), dtype=np.float64)
    lat, iso = _col(df, "latency_s"), _col(df, "isolated_s")
    if lat.size == 0:
        return np.full(n.shape, np.nan)
    over = np.fromiter(
        map(np.count_nonzero, lat[None, :] > n[:, None] * iso[None, :]), np.int64, len(n)
    )
    return np.asarray(over / lat.size, dtype=np.float64)


def slo_attainment(df: Records) -> float:
    """Fraction of requests that have an SLO (``slo_s`` not NaN) and meet it
    (``latency_s <= slo_s``); NaN if no request has an SLO."""
    if "slo_s" not in _names(df):
        return float("nan")
    slo, lat = _col(df, "slo_s"), _col(df, "latency_s")
    has = ~np.isnan(slo)
    return float((lat[has] <= slo[has]).mean()) if has.any() else float("nan")


def sla_met(df: Records, target: float | Mapping[str, float] = 0.99) -> bool:
    """Whether ``df`` meets an MLPerf-style SLA: at least ``target`` of the requests with an SLO
    finish within it.

    ``target`` may be one fraction for all requests or a mapping network -> fraction (Planaria:
    0.99 for vision networks, 0.97 for GNMT), in which case every network with SLO requests must
    reach its own fraction (networks missing from the mapping use ``target.get("*", 0.99)``).
    The check is vectorised (``np.bincount`` over network codes).
    """
    _require(df, "latency_s", "slo_s")
    slo, lat = _col(df, "slo_s"), _col(df, "latency_s")
    has = ~np.isnan(slo)
    if not has.any():
        raise NpuschedError("no request has an SLO (slo_s); cannot check the SLA")
    met = has & (lat <= slo)
    if not isinstance(target, Mapping):
        return bool(met.sum() >= float(target) * has.sum())
    _require(df, "network")
    codes, names = pd.factorize(df["network"])
    total = np.bincount(codes, weights=has, minlength=len(names))
    ok = np.bincount(codes, weights=met, minlength=len(names))
    default = float(target.get("*", 0.99))
    need = np.array([float(target.get(str(n), default)) for n in names])
    check = total > 0
    return bool((ok[check] >= need[check] * total[check]).all())


def makespan(df: Records) -> float:
    """Seconds from the first arrival to the last finish (NaN for no requests)."""
    _require(df, "arrival_s", "finish_s")
    if _nrows(df) == 0:
        return float("nan")
    return float(_col(df, "finish_s").max() - _col(df, "arrival_s").min())


def throughput(df: Records, makespan_s: float | None = None) -> float:
    """Finished requests per second over ``makespan_s`` (default :func:`makespan`)."""
    span = makespan(df) if makespan_s is None else float(makespan_s)
    return float(_nrows(df) / span) if span > 0 else float("nan")


def utilisation(busy_s: float | None, makespan_s: float | None) -> float:
    """Busy seconds / makespan seconds (NaN if either is unknown or the makespan is 0)."""
    if busy_s is None or makespan_s is None or not makespan_s > 0:
        return float("nan")
    return float(busy_s) / float(makespan_s)


def priority_label(priorities: Iterable[int]) -> Callable[[int], str]:
    """Key fragment for a priority value: ``<level>_priority`` with PREMA's level names
    (``low``/``medium``/``high``) when every priority is one of 1/3/9, else ``priority<p>``."""
    names = {v: k for k, v in PRIORITY_LEVELS.items()}
    if set(priorities) <= set(names):
        return lambda p: f"{names[int(p)]}_priority"
    return lambda p: f"priority{int(p)}"


def latency_percentiles(
    df: Records, qs: Sequence[float] = PERCENTILES, *, normalized: bool = False
) -> FloatArray:
    """Percentiles ``qs`` (0-100) of ``latency_s`` (seconds), or of NTT if ``normalized``."""
    x = ntt(df) if normalized else _col(df, "latency_s")
    if x.size == 0:
        return np.full(len(qs), np.nan)
    return np.asarray(np.percentile(x, np.asarray(qs, dtype=np.float64)), dtype=np.float64)


def grouped_percentiles(
    cols: Sequence[FloatArray],
    keys: npt.NDArray[np.int64],
    levels: Sequence[int],
    qs: Sequence[float],
) -> list[FloatArray] | None:
    """``np.percentile`` (linear method) of each column in ``cols`` over all rows and over the
    rows of each key in ``levels``, the same bits, by NumPy's own steps without its wrapper.

    Returns one ``(1 + len(levels), len(qs))`` array per column (row 0: all rows; a level with
    no rows: NaN), or ``None`` where the shortcut does not give NumPy's result for certain (a
    NaN or a zero in a column, a percentile outside ``[0, 100]``, no rows): the caller then
    calls ``np.percentile``. NumPy's call costs about 100 µs whatever the group's size
    (argument checks, ``moveaxis``, copies, the generic method table), which a summary of a
    few thousand requests over many priorities paid a dozen times.

    Why the bits are NumPy's: per group the columns are stacked as rows and partitioned at the
    order statistics NumPy's ``_quantile`` reads (an ``O(n)`` partition per group, as NumPy's:
    no sort), and the values there are the same whichever partition puts them there (they are
    unique but for ``0.0`` / ``-0.0`` and NaN, refused above); the virtual index
    ``(n - 1) * q / 100``, the neighbours (both the last element at or past ``n - 1``), the
    weight (the index less the integer floor) and ``_lerp`` (``a + (b - a) * t``, or
    ``b - (b - a) * (1 - t)`` where ``t >= 0.5``) are the same element-wise float operations
    in the same order. ``tests/test_summary_percentiles.py`` checks it bit for bit.
    """
    n = len(keys)
    q_arr = np.asarray(qs, dtype=np.float64)
    if n == 0 or not bool(np.all((q_arr >= 0.0) & (q_arr <= 100.0))):
        return None
    for c in cols:
        if bool(np.isnan(c).any()) or bool((c == 0.0).any()):
            return None
    quantiles = np.true_divide(q_arr, 100)
    res = np.full((len(cols), 1 + len(levels), len(q_arr)), np.nan)
    for g, p in enumerate([None, *levels]):
        # the group's columns as the rows of a new array: one partition serves them all
        if p is None:
            arr = np.stack(cols)
        else:
            at = keys == p
            arr = np.stack([c[at] for c in cols])
        m = arr.shape[1]
        if m == 0:
            continue
        vi = (m - 1) * quantiles
        prev = np.floor(vi)
        nxt = prev + 1
        above = vi >= m - 1
        prev[above] = -1
        nxt[above] = -1
        prev_i = prev.astype(np.intp)
        nxt_i = nxt.astype(np.intp)
        arr.partition(np.unique(np.concatenate(([0, -1], prev_i, nxt_i))), axis=1)
        a = arr[:, prev_i]
        b = arr[:, nxt_i]
        gamma = vi - prev_i
        diff = b - a
        r = a + diff * gamma
        hi = b - diff * (1 - gamma)
        ge_half = np.broadcast_to(gamma >= 0.5, r.shape)
        r[ge_half] = hi[ge_half]
        res[:, g, :] = r
    return list(res)


def _qname(q: float) -> str:
    return f"p{q:g}".replace(".", "_")


def _nname(n: float) -> str:
    return f"n{n:g}".replace(".", "_")


def summarize(
    df: Records,
    busy_s: float | None = None,
    makespan_s: float | None = None,
    *,
    sla_n: Iterable[float] = SLA_N,
    percentiles: Sequence[float] = PERCENTILES,
) -> dict[str, float]:
    """A flat ``metric name -> value`` dict of everything in this module.

    Keys: ``n_requests``, ``antt``, ``stp``, ``fairness``, ``max_ntt``, ``mean_latency_s``,
    ``mean_waiting_s``, ``sla_violation_rate_n<N>`` per N, ``p<q>_latency_s`` and ``p<q>_norm``
    (NTT percentile) per q, the same per priority (``p95_high_priority_latency_s``,
    ``p95_high_priority_norm``; ``priority<p>`` instead of a level name outside PREMA's 1/3/9;
    PREMA levels are always all present, NaN when a level has no request), ``slo_attainment``,
    ``makespan_s``, ``throughput_rps``, ``busy_s``, ``utilisation``, ``preemptions``,
    ``checkpoint_bytes``, ``checkpoint_s``, ``wasted_s``, ``mean_abs_estimate_error`` (relative,
    when ``estimated_s`` is present). Values are floats; NaN marks "undefined".

    Args:
        df: per-request records.
        busy_s: seconds the accelerator was busy (for utilisation).
        makespan_s: the run's makespan in seconds (default: first arrival to last finish).
        sla_n: the N of the ``N x isolated`` SLA targets.
        percentiles: latency percentiles to report (0-100).
    """
    _require(df, "latency_s", "isolated_s", "priority")
    n_rows = _nrows(df)
    names = _names(df)
    out: dict[str, float] = {"n_requests": float(n_rows)}
    # NTT once (antt, stp and fairness each compute it; the same operations on it here)
    x = ntt(df)
    out["antt"] = float(x.mean()) if x.size else float("nan")
    out["stp"] = float((1.0 / x).sum())
    prio_f = _col(df, "priority")
    pp = (1.0 / x) / (prio_f / prio_f.sum())
    out["fairness"] = float(pp.min() / pp.max()) if pp.size else float("nan")
    out["max_ntt"] = float(x.max()) if x.size else float("nan")
    out["mean_latency_s"] = float(_col(df, "latency_s").mean()) if n_rows else float("nan")
    if "waiting_s" in names:
        out["mean_waiting_s"] = float(_col(df, "waiting_s").mean()) if n_rows else float("nan")

    ns = list(sla_n)
    for n, rate in zip(ns, sla_violation_rates(df, ns).tolist(), strict=True):
        out[f"sla_violation_rate_{_nname(n)}"] = float(rate)

    qs = list(percentiles)
    q_arr = np.asarray(qs, dtype=np.float64)
    lat_all = _col(df, "latency_s")

    def pct(lat: FloatArray, norm: FloatArray) -> tuple[list[float], list[float]]:
        """As :func:`latency_percentiles` of each, by one ``np.percentile`` over the two as
        rows (the same partition and interpolation per row, so the same bits)."""
        if lat.size == 0:
            return [float("nan")] * len(qs), [float("nan")] * len(qs)
        both = np.asarray(np.percentile(np.stack((lat, norm)), q_arr, axis=1), np.float64)
        return both[:, 0].tolist(), both[:, 1].tolist()

    def add_percentiles(lat: FloatArray, norm: FloatArray, infix: str) -> None:
        for q, v, w in zip(qs, *pct(lat, norm), strict=True):
            out[f"{_qname(q)}{infix}_latency_s"] = float(v)
            out[f"{_qname(q)}{infix}_norm"] = float(w)

    prio = np.asarray(df["priority"], dtype=np.int64)
    # the distinct priorities in ascending order, as Python ints (one sort of the integers:
    # no Python int and set entry per request)
    present = np.unique(prio).tolist()
    label = priority_label(present)
    levels = present
    if set(present) <= set(PRIORITY_LEVELS.values()):
        levels = sorted(PRIORITY_LEVELS.values())
    grouped = grouped_percentiles((lat_all, x), prio, levels, qs)
    if grouped is not None:
        # one sort per column for every group (the same bits as the calls below)
        g_lat, g_norm = grouped[0].tolist(), grouped[1].tolist()
        for i, infix in enumerate(["", *(f"_{label(p)}" for p in levels)]):
            for q, v, w in zip(qs, g_lat[i], g_norm[i], strict=True):
                out[f"{_qname(q)}{infix}_latency_s"] = float(v)
                out[f"{_qname(q)}{infix}_norm"] = float(w)
    else:
        # the per-priority rows as masks over two arrays, not as filtered copies of the frame
        add_percentiles(lat_all, x, "")
        for p in levels:
            at = prio == p
            add_percentiles(lat_all[at], x[at], f"_{label(p)}")

    out["slo_attainment"] = slo_attainment(df)
    span = makespan_s
    if span is None and {"arrival_s", "finish_s"} <= set(names):
        span = makespan(df)
    out["makespan_s"] = float("nan") if span is None else float(span)
    out["throughput_rps"] = float("nan") if span is None else throughput(df, span)
    out["busy_s"] = float("nan") if busy_s is None else float(busy_s)
    out["utilisation"] = utilisation(busy_s, span)
    for col in ("preemptions", "checkpoint_bytes", "checkpoint_s", "wasted_s"):
        if col in names:
            out[col] = float(_col(df, col).sum())
    if "estimated_s" in names and n_rows:
        est, iso = _col(df, "estimated_s"), _col(df, "isolated_s")
        out["mean_abs_estimate_error"] = float(np.mean(np.abs(est - iso) / iso))
    return out


def throughput_at_sla(
    simulate: Callable[[float], pd.DataFrame],
    target: float | Mapping[str, float] = 0.99,
    lo: float = 1.0,
    hi: float | None = None,
    tol: float = 0.01,
    *,
    max_rate: float = 1e12,
    history: list[tuple[float, bool]] | None = None,
) -> float:
    """The largest arrival rate (requests/s) at which the SLA holds (Planaria's throughput metric).

    ``simulate(rate)`` runs a Poisson workload at ``rate`` and returns its records (with
    ``latency_s``, ``slo_s`` and, for a per-network ``target``, ``network``); the SLA holds when
    :func:`sla_met` says so. The predicate is assumed monotone (true below the answer, false
    above). Without ``hi`` the search gallops up from ``lo`` (doubling) to bracket the answer,
    then bisects until ``hi - lo <= tol * lo``.

    Args:
        simulate: rate -> records.
        target: fraction of requests that must meet their SLO (or per network, see
            :func:`sla_met`).
        lo: a starting rate (> 0).
        hi: an upper bracket; if the SLA holds at ``hi``, ``hi`` is returned.
        tol: relative tolerance of the answer.
        max_rate: galloping stops (and returns) here.
        history: if given, each evaluated ``(rate, met)`` is appended to it.

    Returns:
        The largest rate found to meet the SLA (a lower bound within ``tol``), or 0.0 if the SLA
        fails even at ``lo``.
    """
    if not lo > 0 or (hi is not None and not hi > lo) or not tol > 0:
        raise NpuschedError(f"need 0 < lo < hi and tol > 0; got lo={lo}, hi={hi}, tol={tol}")

    def ok(rate: float) -> bool:
        met = sla_met(simulate(rate), target)
        if history is not None:
            history.append((rate, met))
        return met

    if not ok(lo):
        return 0.0
    if hi is None:
        hi = lo * 2.0
        while ok(hi):
            lo = hi
            if lo >= max_rate:
                return lo
            hi = min(lo * 2.0, max_rate)
    elif ok(hi):
        return float(hi)
    while hi - lo > tol * lo:
        mid = 0.5 * (lo + hi)
        if ok(mid):
            lo = mid
        else:
            hi = mid
    return float(lo)
