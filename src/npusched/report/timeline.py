"""Look at a run: the accelerator's timeline as a Chrome trace / Perfetto JSON file, a Gantt chart
and a latency CDF.

Inputs are what a simulation produces: ``SimResult.timeline`` (segments ``(job_id, start_s,
end_s, kind)``, kind ``run`` / ``restore`` / ``save``; recorded with
``Simulator(..., record_timeline=True)``) and the per-request records
(``SimResult.to_frame()``; at least ``id``, ``arrival_s``, ``finish_s``, ``network``,
``priority``, ``batch``).

Chrome trace layout (:func:`chrome_trace`, the JSON "traceEvents" format read by
https://ui.perfetto.dev and ``chrome://tracing``):

* process 1, the accelerator:

  - thread 1 ``executing``: one complete event (``ph: "X"``) per segment, named
    ``network #id (p<priority>, b<batch>)`` (``save: ...`` / ``restore: ...`` for checkpoint
    traffic, so the viewer colours them apart), category = the segment kind, ``args`` = the
    request's record fields plus the segment's ``resource``, ``units`` and ``frequency_hz``
    (when the engine's segments carry them; ``null`` for a NaN frequency). Events on one thread
    never overlap: where segments run concurrently (a spatially shared array, several
    accelerators) the later ones go to further threads ``executing (lane k)`` (tid ``100 + k``),
    each segment to the lowest lane free at its start.
  - thread 2 ``arrivals``: one instant event (``ph: "i"``) per request at its arrival.
  - a counter ``requests in system`` (arrived, not finished) over time.

* process 2, requests (only if there are at most ``max_request_tracks`` requests): one thread
  per request (``tid = 1000000 + id``, ordered by arrival), holding a ``request`` slice from
  arrival to finish and, nested in it, the request's own run/save/restore segments, so the gaps
  are the time it waited.

Times in the file are microseconds (the format's unit) from simulation time 0, rounded to whole
nanoseconds (Perfetto's resolution). Rounding is done on integer nanosecond start and end times,
so events that touch in the simulation touch in the file, and a segment's ``dur`` is exactly
``end - start`` of those integers. The output only depends on its inputs: the same config and
seed give a byte-identical file.

The plots use matplotlib's Agg canvas (no pyplot, no global state).
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from npusched._io import atomic_path
from npusched.errors import ConfigError
from npusched.report.plots import figure, save_png
from npusched.workloads.request import PRIORITY_LEVELS

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "KINDS",
    "TIMELINE_FILES",
    "chrome_trace",
    "plot_latency_cdf",
    "plot_timeline",
    "write_chrome_trace",
    "write_timeline_outputs",
]

Segment = tuple[Any, ...]
"""A timeline entry ``(job_id, start_s, end_s, kind, ...)`` (:class:`npusched.sim.Segment`)."""

#: Segment kinds, in the order the engine documents them.
KINDS = ("run", "restore", "save", "switch")

#: Files :func:`write_timeline_outputs` writes (``npusched run --timeline``).
TIMELINE_FILES = ("timeline.json", "timeline.png", "latency_cdf.png")

_REQUIRED = ("id", "arrival_s", "finish_s", "network", "priority", "batch")
_ACCEL_PID, _REQ_PID = 1, 2
_EXEC_TID, _ARRIVAL_TID = 1, 2
# Request threads get tids that no accelerator thread uses: Perfetto keys threads by tid, and a
# tid shared by two processes would split their tracks.
_REQ_TID0 = 1_000_000
# Accelerator lanes beyond the first (concurrent segments): tid 100 + lane.
_LANE_TID0 = 100
# Chrome's reserved colour names (Perfetto colours by event name instead).
_CNAME = {"save": "terrible", "restore": "bad", "switch": "grey"}
_PRIORITY_NAMES = {v: k for k, v in PRIORITY_LEVELS.items()}
_DPI = 110  # the timeline PNGs' resolution (dots per inch)


# --- shared helpers ---------------------------------------------------------------------------
def _check_records(records: pd.DataFrame, need: Sequence[str] = _REQUIRED) -> None:
    missing = [c for c in need if c not in records.columns]
    if missing:
        raise ConfigError(
            f"records: missing column(s) {', '.join(missing)}; required: {', '.join(need)}"
        )


def _segments(
    timeline: Sequence[Segment],
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float64], npt.NDArray[np.float64], list[str]]:
    """Timeline columns ``(job_id, start_s, end_s, kind)``; checks kinds and times."""
    n = len(timeline)
    ids = np.fromiter((s[0] for s in timeline), dtype=np.int64, count=n)
    start = np.fromiter((s[1] for s in timeline), dtype=np.float64, count=n)
    end = np.fromiter((s[2] for s in timeline), dtype=np.float64, count=n)
    kinds = [s[3] for s in timeline]
    bad_kind = next((k for k in kinds if k not in KINDS), None)
    if bad_kind is not None:
        raise ConfigError(f"timeline: segment kind {bad_kind!r}; allowed: {', '.join(KINDS)}")
    bad = ~np.isfinite(start) | ~np.isfinite(end) | (end < start) | (start < 0.0)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ConfigError(
            f"timeline: segment {i} of job {ids[i]} spans [{start[i]!r}, {end[i]!r}] s; "
            "times must be finite, >= 0 and end >= start"
        )
    return ids, start, end, kinds


def _segment_args(seg: Segment) -> dict[str, Any] | None:
    """The segment's own fields beyond ``(job_id, start_s, end_s, kind)``: ``resource``,
    ``units`` and ``frequency_hz`` (``None`` for a NaN frequency), or ``None`` for a bare
    4-tuple."""
    if len(seg) <= 4:
        return None
    names = getattr(
        seg, "_fields", ("job_id", "start_s", "end_s", "kind", "resource", "units", "frequency_hz")
    )
    return {str(n): _py(v) for n, v in zip(names[4:], seg[4:], strict=False)}


def _lanes(order: Sequence[int], start: Sequence[int], end: Sequence[int]) -> list[int]:
    """Lane of each segment (by index): in time order (``order``), the lowest lane whose last
    segment ended at or before this one's start, so that segments in one lane never overlap."""
    import heapq

    lane = [0] * len(start)
    free: list[int] = []  # lanes whose last segment has ended, as a heap
    busy: list[tuple[int, int]] = []  # (end, lane) of running segments, as a heap
    n_lanes = 0
    for k in order:
        while busy and busy[0][0] <= start[k]:
            heapq.heappush(free, heapq.heappop(busy)[1])
        if free:
            lane[k] = heapq.heappop(free)
        else:
            lane[k] = n_lanes
            n_lanes += 1
        heapq.heappush(busy, (end[k], lane[k]))
    return lane


def _py(v: Any) -> Any:
    """A JSON-safe Python scalar (NaN and inf become ``None``)."""
    if isinstance(v, np.generic):
        v = v.item()
    if isinstance(v, float):
        # 12 significant digits: nanoseconds for times up to 1000 s, and a shorter file
        return float(f"{v:.12g}") if math.isfinite(v) else None
    return v


def _row_index(records: pd.DataFrame) -> dict[int, int]:
    ids = records["id"].to_numpy(dtype=np.int64)
    if len(np.unique(ids)) != len(ids):
        raise ConfigError("records: column 'id' has duplicate request ids")
    return {int(i): k for k, i in enumerate(ids.tolist())}


def _json_column(v: npt.NDArray[Any]) -> list[Any]:
    """A column as JSON-safe Python values (:func:`_py`)."""
    if v.dtype.kind in "iub":
        out: list[Any] = v.tolist()
        return out
    return [_py(x) for x in v.tolist()]


def _dump(obj: Any) -> str:
    return json.dumps(obj, separators=(",", ":"), allow_nan=False)


def _label(network: object, rid: int, priority: object, batch: object) -> str:
    return f"{network} #{rid} (p{priority}, b{batch})"


def _ns(t_s: npt.NDArray[np.float64]) -> npt.NDArray[np.int64]:
    return np.rint(t_s * 1e9).astype(np.int64)


def _us(ns: int) -> float | int:
    """Integer nanoseconds as microseconds (an int when whole, for a compact file)."""
    q, r = divmod(ns, 1000)
    return q if r == 0 else ns / 1000


# --- Chrome trace ------------------------------------------------------------------------------
def chrome_trace(
    timeline: Sequence[Segment],
    records: pd.DataFrame,
    *,
    device: str = "accelerator",
    metadata: Mapping[str, Any] | None = None,
    max_request_tracks: int = 1000,
) -> dict[str, Any]:
    """The run as a Chrome trace / Perfetto JSON document (see the module docstring).

    Args:
        timeline: ``(job_id, start_s, end_s, kind)`` segments (seconds); job ids are request ids.
        records: per-request records, one row per request.
        device: accelerator name shown as the process name.
        metadata: JSON-serialisable run facts stored under ``otherData`` (policy, seed, ...).
        max_request_tracks: per-request tracks are written only for at most this many requests
            (a viewer slows down with many thousands of threads); 0 disables them.

    Returns:
        ``{"traceEvents": [...], "displayTimeUnit": "ms", "otherData": {...}}``; event times
        ``ts`` / ``dur`` in microseconds.

    Raises:
        ConfigError: a missing records column, duplicate ids, a segment of an unknown request,
            an unknown segment kind or an invalid segment time.
    """
    tr = _Trace(
        timeline,
        records,
        device=device,
        metadata=metadata,
        max_request_tracks=max_request_tracks,
    )
    return {"traceEvents": list(tr.events()), "displayTimeUnit": "ms", "otherData": tr.other}


class _Trace:
    """The trace's events, generated lazily (a long run has millions of them)."""

    def __init__(
        self,
        timeline: Sequence[Segment],
        records: pd.DataFrame,
        *,
        device: str = "accelerator",
        metadata: Mapping[str, Any] | None = None,
        max_request_tracks: int = 1000,
    ) -> None:
        _check_records(records)
        row_of = _row_index(records)
        ids, start, end, kinds = _segments(timeline)
        unknown = next((i for i in ids.tolist() if i not in row_of), None)
        if unknown is not None:
            raise ConfigError(f"timeline: job id {unknown} has no row in the records")
        self.device = device
        self.max_request_tracks = max_request_tracks
        self.n = len(records)
        self.cols = [str(c) for c in records.columns]
        self.values = [_json_column(records[c].to_numpy()) for c in records.columns]
        if "latency_s" in records.columns and "isolated_s" in records.columns:
            lat = records["latency_s"].to_numpy(dtype=np.float64)
            iso = records["isolated_s"].to_numpy(dtype=np.float64)
            with np.errstate(divide="ignore", invalid="ignore"):
                self.cols.append("ntt")
                self.values.append(_json_column(lat / iso))
        self._args_text: dict[int, str] = {}
        self.rid: list[int] = records["id"].to_numpy(dtype=np.int64).tolist()
        net, prio, batch = (records[c].tolist() for c in ("network", "priority", "batch"))
        self.labels = [_label(net[k], self.rid[k], prio[k], batch[k]) for k in range(self.n)]
        self.kinds = kinds
        s_ns, e_ns = _ns(start), _ns(end)
        arr_ns = _ns(records["arrival_s"].to_numpy(dtype=np.float64))
        fin_s = records["finish_s"].to_numpy(dtype=np.float64)
        end_of_run = int(max(e_ns.max(initial=0), arr_ns.max(initial=0)))
        self.finished = np.isfinite(fin_s)
        fin_ns = np.where(self.finished, _ns(np.where(self.finished, fin_s, 0.0)), end_of_run)
        # Accelerator track in time order (the engine appends segments in time order already;
        # the stable sort keeps that and makes hand-built inputs valid too).
        self.order: list[int] = np.lexsort((e_ns, s_ns)).tolist()
        self.seg_row = [row_of[i] for i in ids.tolist()]
        self.seg_args: list[dict[str, Any] | None] = [_segment_args(seg) for seg in timeline]
        self.s_l, self.e_l = s_ns.tolist(), e_ns.tolist()
        self.lane = _lanes(self.order, self.s_l, self.e_l)
        self.by_arrival: list[int] = np.lexsort((np.asarray(self.rid), arr_ns)).tolist()
        self.arr_ns, self.fin_ns = arr_ns, fin_ns
        self.other: dict[str, Any] = {
            "device": device,
            "n_requests": self.n,
            "n_segments": len(timeline),
            "busy_us": _us(int((e_ns - s_ns).sum())),
            "time_unit": "ts and dur are microseconds from simulation time 0",
        }
        for key, v in (metadata or {}).items():
            self.other[str(key)] = _py(v)

    def args(self, row: int) -> dict[str, Any]:
        """The record fields of ``row`` (NaN as ``None``), plus ``ntt``."""
        return {c: v[row] for c, v in zip(self.cols, self.values, strict=True)}

    def args_text(self, row: int) -> str:
        """``args(row)`` as JSON text, made once per request (its segments share it)."""
        text = self._args_text.get(row)
        if text is None:
            text = self._args_text[row] = _dump(self.args(row))
        return text

    def events(self) -> Iterator[dict[str, Any]]:
        """The trace events as dicts."""
        for ev, row in self.raw_events():
            if row >= 0:
                ev["args"] = {**self.args(row), **ev.get("args", {})}
            yield ev

    def raw_events(self) -> Iterator[tuple[dict[str, Any], int]]:
        """``(event, row)``: events whose ``args`` are the record fields of ``row`` come without
        them (``row >= 0``), so a writer can reuse one JSON text per request."""
        yield _meta("process_name", _ACCEL_PID, None, {"name": f"accelerator: {self.device}"}), -1
        yield _meta("process_sort_index", _ACCEL_PID, None, {"sort_index": 0}), -1
        yield _meta("thread_name", _ACCEL_PID, _EXEC_TID, {"name": "executing"}), -1
        yield _meta("thread_sort_index", _ACCEL_PID, _EXEC_TID, {"sort_index": 0}), -1
        yield _meta("thread_name", _ACCEL_PID, _ARRIVAL_TID, {"name": "arrivals"}), -1
        yield _meta("thread_sort_index", _ACCEL_PID, _ARRIVAL_TID, {"sort_index": 1}), -1
        for lane in range(1, max(self.lane, default=0) + 1):
            tid = _LANE_TID0 + lane
            yield _meta("thread_name", _ACCEL_PID, tid, {"name": f"executing (lane {lane})"}), -1
            yield _meta("thread_sort_index", _ACCEL_PID, tid, {"sort_index": 1 + lane}), -1
        kinds, labels, s_l, e_l, rid = self.kinds, self.labels, self.s_l, self.e_l, self.rid
        for k in self.order:
            row = self.seg_row[k]
            kind = kinds[k]
            lane = self.lane[k]
            ev: dict[str, Any] = {
                "name": labels[row] if kind == "run" else f"{kind}: {labels[row]}",
                "cat": kind,
                "ph": "X",
                "ts": _us(s_l[k]),
                "dur": _us(e_l[k] - s_l[k]),
                "pid": _ACCEL_PID,
                "tid": _EXEC_TID if lane == 0 else _LANE_TID0 + lane,
            }
            if kind in _CNAME:
                ev["cname"] = _CNAME[kind]
            extra = self.seg_args[k]
            if extra is not None:
                ev["args"] = extra
            yield ev, row

        arr_l, fin_l = self.arr_ns.tolist(), self.fin_ns.tolist()
        for row in self.by_arrival:
            yield (
                {
                    "name": f"arrive: {labels[row]}",
                    "cat": "arrival",
                    "ph": "i",
                    "s": "t",
                    "ts": _us(arr_l[row]),
                    "pid": _ACCEL_PID,
                    "tid": _ARRIVAL_TID,
                    "args": {"id": rid[row]},
                },
                -1,
            )
        for ev in _in_system_counter(self.arr_ns, self.fin_ns[self.finished]):
            yield ev, -1

        if not 0 < self.n <= self.max_request_tracks:
            return
        yield _meta("process_name", _REQ_PID, None, {"name": "requests"}), -1
        yield _meta("process_sort_index", _REQ_PID, None, {"sort_index": 1}), -1
        segs_of: dict[int, list[int]] = {}
        for k in self.order:
            segs_of.setdefault(self.seg_row[k], []).append(k)
        for rank, row in enumerate(self.by_arrival):
            tid = _REQ_TID0 + rid[row]
            yield _meta("thread_name", _REQ_PID, tid, {"name": labels[row]}), -1
            yield _meta("thread_sort_index", _REQ_PID, tid, {"sort_index": rank}), -1
            a = arr_l[row]
            yield (
                {
                    "name": labels[row],
                    "cat": "request",
                    "ph": "X",
                    "ts": _us(a),
                    "dur": _us(max(fin_l[row] - a, 0)),
                    "pid": _REQ_PID,
                    "tid": tid,
                    "args": {**self.args(row), "finished": bool(self.finished[row])},
                },
                -1,
            )
            for k in segs_of.get(row, ()):
                ev = {
                    "name": kinds[k],
                    "cat": kinds[k],
                    "ph": "X",
                    "ts": _us(s_l[k]),
                    "dur": _us(e_l[k] - s_l[k]),
                    "pid": _REQ_PID,
                    "tid": tid,
                }
                if kinds[k] in _CNAME:
                    ev["cname"] = _CNAME[kinds[k]]
                extra = self.seg_args[k]
                if extra is not None:
                    ev["args"] = extra
                yield ev, -1


def _meta(name: str, pid: int, tid: int | None, args: dict[str, Any]) -> dict[str, Any]:
    return {"name": name, "ph": "M", "pid": pid, "tid": 0 if tid is None else tid, "args": args}


def _in_system_counter(
    arr_ns: npt.NDArray[np.int64], fin_ns: npt.NDArray[np.int64]
) -> list[dict[str, Any]]:
    """Counter events: requests arrived and not finished, one value per distinct change time."""
    if len(arr_ns) == 0:
        return []
    t = np.concatenate([arr_ns, fin_ns])
    d = np.concatenate([np.ones(len(arr_ns), np.int64), -np.ones(len(fin_ns), np.int64)])
    order = np.argsort(t, kind="stable")
    t, level = t[order], np.cumsum(d[order])
    last = np.ones(len(t), dtype=bool)  # the level after all changes at one instant
    last[:-1] = t[1:] != t[:-1]
    return [
        {
            "name": "requests in system",
            "ph": "C",
            "ts": _us(ts),
            "pid": _ACCEL_PID,
            "tid": 0,
            "args": {"requests": n},
        }
        for ts, n in zip(t[last].tolist(), level[last].tolist(), strict=True)
    ]


def write_chrome_trace(
    timeline: Sequence[Segment],
    records: pd.DataFrame,
    path: str | os.PathLike[str],
    **kwargs: Any,
) -> Path:
    """Write :func:`chrome_trace` to ``path`` as compact JSON, atomically (temporary file, then
    rename), one event per line and without holding the whole text in memory. Keyword
    arguments go to :func:`chrome_trace`. Returns the path.

    Open the file in https://ui.perfetto.dev ("Open trace file") or ``chrome://tracing``.
    """
    tr = _Trace(timeline, records, **kwargs)
    out = Path(path)
    with atomic_path(out) as tmp, open(tmp, "w", encoding="utf-8") as f:
        f.write('{"traceEvents":[')
        sep = "\n"
        for ev, row in tr.raw_events():
            f.write(sep)
            extra = ev.pop("args", None) if row >= 0 else None
            text = _dump(ev)
            if row >= 0:
                args = tr.args_text(row)
                if extra:
                    more = _dump(extra)[1:]
                    args = f"{args[:-1]},{more}" if args != "{}" else "{" + more
                text = f'{text[:-1]},"args":{args}}}'
            f.write(text)
            sep = ",\n"
        f.write(f'\n],"displayTimeUnit":"ms","otherData":{_dump(tr.other)}}}\n')
    return out


# --- plots -------------------------------------------------------------------------------------
def _network_colours(networks: Sequence[str]) -> dict[str, Any]:
    from matplotlib import colormaps

    names = sorted(set(networks))
    if len(names) <= 10:
        cmap, n = colormaps["tab10"], 10
    elif len(names) <= 20:
        cmap, n = colormaps["tab20"], 20
    else:
        cmap, n = colormaps["turbo"], len(names)
    # Skip tab10's red (index 3): red is reserved for checkpoint saves.
    slots = [i for i in range(n) if not (n == 10 and i == 3)] + ([3] if n == 10 else [])
    return {name: cmap(slots[i] / (n - 1) if n > 20 else slots[i]) for i, name in enumerate(names)}


def _time_unit(span_s: float) -> tuple[float, str]:
    if span_s < 2e-3:
        return 1e6, "µs"
    if span_s < 20.0:
        return 1e3, "ms"
    return 1.0, "s"


_SAVE_STYLE: dict[str, Any] = {"facecolor": "#d62728", "edgecolor": "#7f0000", "hatch": "////"}
_RESTORE_STYLE: dict[str, Any] = {
    "facecolor": "#ffd92f",
    "edgecolor": "#6b5a00",
    "hatch": "\\\\\\\\",
}


def plot_timeline(
    timeline: Sequence[Segment],
    records: pd.DataFrame,
    path: str | os.PathLike[str],
    *,
    max_jobs: int = 100,
    group_by: str = "arrival",
    title: str = "",
) -> Path:
    """A Gantt chart of the run: one row per request, plus the accelerator on top.

    Each request row shows its time in the system (a thin line from arrival, ``|``, to finish,
    ``◆``), its execution segments as bars coloured by network, and checkpoint saves (red,
    hatched) and restores (yellow, hatched). Saves and restores too short to see at the plot's
    scale are marked with a triangle; runs shorter than 0.15% of the time axis are drawn that
    wide so every request shows its colour. The top strip is the accelerator: every segment in the
    shown time window, whichever request it belongs to.

    With more than ``max_jobs`` requests only the first ``max_jobs`` by arrival are drawn (the
    title says so) and the time axis covers their arrival-to-finish window.

    Args:
        timeline: ``(job_id, start_s, end_s, kind)`` segments (seconds).
        records: per-request records.
        path: output PNG file.
        max_jobs: most request rows to draw (>= 1).
        group_by: ``"arrival"`` (rows in arrival order) or ``"network"`` (rows grouped by
            network, each group in arrival order).
        title: first title line (the run's name, policy, ...).

    Returns:
        ``path``.

    Raises:
        ConfigError: bad ``max_jobs`` / ``group_by``, or invalid records / timeline.
    """
    if group_by not in ("arrival", "network"):
        raise ConfigError(f"group_by={group_by!r}; allowed: arrival, network")
    if max_jobs < 1:
        raise ConfigError(f"max_jobs={max_jobs}; must be >= 1")
    _check_records(records)
    row_of = _row_index(records)
    ids, start, end, kinds = _segments(timeline)

    rid = records["id"].to_numpy(dtype=np.int64)
    arr = records["arrival_s"].to_numpy(dtype=np.float64)
    fin = records["finish_s"].to_numpy(dtype=np.float64)
    nets = [str(x) for x in records["network"].tolist()]
    prio = records["priority"].tolist()
    batch = records["batch"].tolist()
    colours = _network_colours(nets)
    n_total = len(records)

    shown = np.lexsort((rid, arr))[:max_jobs]
    if group_by == "network":
        shown = shown[np.lexsort((np.arange(len(shown)), [nets[r] for r in shown.tolist()]))]
    n_rows = len(shown)
    end_of_run = float(max(end.max(initial=0.0), arr.max(initial=0.0)))
    fin_shown = np.where(np.isfinite(fin[shown]), fin[shown], end_of_run)
    lo = float(arr[shown].min()) if n_rows else 0.0
    hi = float(fin_shown.max()) if n_rows else 1.0
    if hi <= lo:
        hi = lo + 1e-6
    scale, unit = _time_unit(hi - lo)
    pad = 0.01 * (hi - lo) * scale

    height = float(np.clip(1.9 + 0.17 * n_rows, 3.2, 15.0))
    fig = figure(11.0, height, dpi=_DPI)
    top_h = 0.55
    axes = fig.subplots(
        2, 1, sharex=True, gridspec_kw={"height_ratios": [top_h, max(height - 1.9, 1.0)]}
    )
    ax_acc, ax = axes[0], axes[1]

    # accelerator strip: every segment overlapping the window
    in_win = (end >= lo) & (start <= hi)
    _draw_segments(
        ax_acc,
        [
            (int(i), float(s), float(e), k)
            for i, s, e, k, w in zip(ids, start, end, kinds, in_win, strict=True)
            if w
        ],
        lambda _i: 0.0,
        {int(i): nets[row_of[int(i)]] for i in np.unique(ids[in_win]).tolist()},
        colours,
        scale,
        hi - lo,
        height_frac=0.8,
    )
    ax_acc.set_yticks([0.0], ["accelerator"])
    ax_acc.set_ylim(-0.6, 0.6)
    ax_acc.grid(axis="x", alpha=0.3)
    ax_acc.tick_params(axis="y", length=0)

    # request rows
    many = n_rows > 40
    y_of = {int(rid[r]): float(y) for y, r in enumerate(shown.tolist())}
    keep = np.isin(ids, np.fromiter(y_of, dtype=np.int64, count=len(y_of)))
    _draw_segments(
        ax,
        [
            (int(i), float(s), float(e), k)
            for i, s, e, k, w in zip(ids, start, end, kinds, keep, strict=True)
            if w
        ],
        lambda i: y_of[i],
        {i: nets[row_of[i]] for i in y_of},
        colours,
        scale,
        hi - lo,
        height_frac=0.62,
        min_run_frac=0.0015,
        marker_size=9.0 if many else 16.0,
    )
    ys = np.arange(n_rows, dtype=np.float64)
    ax.hlines(ys, arr[shown] * scale, fin_shown * scale, color="0.55", linewidth=0.8, zorder=1)
    ax.scatter(
        arr[shown] * scale,
        ys,
        marker="|",
        s=40 if many else 70,
        color="black",
        linewidths=1.0,
        zorder=4,
    )
    done = np.isfinite(fin[shown])
    ax.scatter(
        fin[shown][done] * scale,
        ys[done],
        marker="D",
        s=8 if many else 14,
        color="black",
        zorder=4,
        linewidths=0,
    )
    if n_rows <= 45:
        labels = [f"#{rid[r]} {nets[r]} p{prio[r]} b{batch[r]}" for r in shown.tolist()]
        ax.set_yticks(ys, labels, fontsize=7 if n_rows > 20 else 8)
    else:
        step = math.ceil(n_rows / 40)
        ax.set_yticks(ys[::step], [f"#{rid[r]}" for r in shown[::step].tolist()], fontsize=7)
        ax.set_ylabel("request id")
    if group_by == "network":
        row_nets = [nets[r] for r in shown.tolist()]
        for y in range(1, n_rows):
            if row_nets[y] != row_nets[y - 1]:
                ax.axhline(y - 0.5, color="0.75", linewidth=0.7, zorder=0)
    ax.set_ylim(n_rows - 0.4, -0.6)
    ax.set_xlim(lo * scale - pad, hi * scale + pad)
    ax.set_xlabel(f"time ({unit})")
    ax.grid(axis="x", alpha=0.3)
    ax.tick_params(axis="y", length=0)

    handles = _legend_handles(sorted({nets[r] for r in shown.tolist()}), colours)
    fig.legend(
        handles=handles,
        loc="outside right upper",
        fontsize=7,
        frameon=False,
        title="network / event",
        title_fontsize=7,
    )
    sub = (
        f"first {n_rows} of {n_total} requests by arrival"
        if n_rows < n_total
        else f"{n_total} requests"
    )
    if group_by == "network":
        sub += ", grouped by network"
    fig.suptitle(f"{title} — {sub}" if title else sub, fontsize=10)
    return save_png(fig, path)


def _draw_segments(
    ax: Any,
    segs: Sequence[Segment],
    y_of: Any,
    net_of: Mapping[int, str],
    colours: Mapping[str, Any],
    scale: float,
    span_s: float,
    *,
    height_frac: float,
    min_run_frac: float = 0.0,
    marker_size: float = 16.0,
) -> None:
    """Bars for ``segs`` on ``ax``: runs by network colour, saves/restores hatched; saves and
    restores narrower than 0.4% of the span also get a marker so they stay visible; runs are drawn
    at least ``min_run_frac`` of the span wide."""
    h = height_frac
    by_style: dict[tuple[str, str], tuple[list[tuple[float, float]], list[float]]] = {}
    tiny: dict[str, tuple[list[float], list[float]]] = {
        "save": ([], []),
        "restore": ([], []),
        "switch": ([], []),
    }
    for i, s, e, kind, *_ in segs:
        y = y_of(i)
        key = (kind, net_of[i] if kind == "run" else "")
        xr, yl = by_style.setdefault(key, ([], []))
        # Runs shorter than a pixel or two are widened so that every request shows its colour.
        w = max(e - s, min_run_frac * span_s) if kind == "run" else e - s
        xr.append((s * scale, w * scale))
        yl.append(y)
        if kind != "run" and (e - s) < 0.004 * span_s:
            tiny[kind][0].append(0.5 * (s + e) * scale)
            tiny[kind][1].append(y - h / 2)
    for (kind, net), (xr, yl) in sorted(by_style.items()):
        if kind == "run":
            style: dict[str, Any] = {"facecolor": colours[net], "edgecolor": "none"}
        else:
            style = dict(_SAVE_STYLE if kind == "save" else _RESTORE_STYLE, linewidth=0.4)
        # one bar collection per style (broken_barh wants one y per call: group by y)
        yarr = np.asarray(yl)
        for y in np.unique(yarr).tolist():
            ranges = [r for r, yy in zip(xr, yl, strict=True) if yy == y]
            ax.broken_barh(ranges, (y - h / 2, h), zorder=3 if kind == "run" else 3.5, **style)
    for kind, (xs, ys) in tiny.items():
        if xs:
            ax.scatter(
                xs,
                ys,
                marker="v",
                s=marker_size,
                color=_SAVE_STYLE["facecolor"] if kind == "save" else _RESTORE_STYLE["facecolor"],
                edgecolors="black",
                linewidths=0.3,
                zorder=5,
            )


def _legend_handles(networks: Sequence[str], colours: Mapping[str, Any]) -> list[Any]:
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    handles: list[Any] = [Patch(facecolor=colours[n], label=n) for n in networks]
    handles += [
        Patch(**_SAVE_STYLE, label="checkpoint save"),
        Patch(**_RESTORE_STYLE, label="checkpoint restore"),
        Line2D([], [], marker="v", linestyle="none", color="0.4", label="save/restore (short)"),
        Line2D([], [], color="0.55", linewidth=0.8, label="in system"),
        Line2D([], [], marker="|", linestyle="none", color="black", markersize=8, label="arrival"),
        Line2D([], [], marker="D", linestyle="none", color="black", markersize=4, label="finish"),
    ]
    return handles


def plot_latency_cdf(
    records: pd.DataFrame,
    path: str | os.PathLike[str],
    *,
    title: str = "",
) -> Path:
    """CDF of the normalised turnaround time (NTT = latency / isolated latency, >= 1) of the
    finished requests, one curve per priority level and one for all requests (log x axis).

    Args:
        records: per-request records (``latency_s``, ``isolated_s``, ``priority``, ``finish_s``).
        path: output PNG file.
        title: first title line.

    Returns:
        ``path``.
    """
    _check_records(records, ("latency_s", "isolated_s", "priority", "finish_s"))
    lat = records["latency_s"].to_numpy(dtype=np.float64)
    iso = records["isolated_s"].to_numpy(dtype=np.float64)
    prio = records["priority"].to_numpy(dtype=np.int64)
    ok = np.isfinite(records["finish_s"].to_numpy(dtype=np.float64)) & (iso > 0)
    ntt = lat[ok] / iso[ok]
    prio = prio[ok]

    fig = figure(6.4, 4.0, dpi=_DPI)
    ax = fig.add_subplot()
    if len(ntt) == 0:
        ax.text(0.5, 0.5, "no finished requests", ha="center", va="center", transform=ax.transAxes)
    else:
        levels = sorted(set(prio.tolist()), reverse=True)
        from matplotlib import colormaps

        cmap = colormaps["viridis"]
        for k, p in enumerate(levels):
            v = np.sort(ntt[prio == p])
            # PREMA's level names only when the run uses PREMA's levels (not on a 1-11 scale)
            name = _PRIORITY_NAMES.get(p) if set(levels) <= set(_PRIORITY_NAMES) else None
            lbl = f"priority {p}" + (f" ({name})" if name else "")
            colour = cmap(0.85 * k / max(len(levels) - 1, 1))
            _step_cdf(ax, v, f"{lbl}, n={len(v)}", color=colour, linewidth=1.6)
        if len(levels) > 1:
            _step_cdf(
                ax, np.sort(ntt), f"all, n={len(ntt)}", color="black", linewidth=1.0, linestyle="--"
            )
        ax.set_xscale("log")
        from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

        # plain numbers (1, 2, 5, 10) rather than powers of ten; 1-2-5 steps on short ranges
        subs = (1.0, 2.0, 5.0) if float(ntt.max()) < 100.0 * float(ntt.min()) else (1.0,)
        ax.xaxis.set_major_locator(LogLocator(subs=subs))
        ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _pos: f"{x:g}"))
        ax.xaxis.set_minor_locator(LogLocator(subs="auto"))
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.set_xlim(left=min(0.95, float(ntt.min()) * 0.95))
        if len(levels) <= 4:
            ax.legend(fontsize=8, loc="lower right")
        else:  # many levels (e.g. Planaria's 1-11): beside the plot, not over the curves
            fig.set_figwidth(8.2)
            ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    ax.set_ylim(0.0, 1.02)
    ax.set_xlabel("NTT = latency / isolated latency (log scale)")
    ax.set_ylabel("fraction of requests")
    ax.grid(alpha=0.3, which="both")
    n_unf = int(np.count_nonzero(~ok))
    sub = f"latency CDF, ANTT {ntt.mean():.3g}" if len(ntt) else "latency CDF"
    if n_unf:
        sub += f" ({n_unf} unfinished not shown)"
    fig.suptitle(f"{title} — {sub}" if title else sub, fontsize=10)
    return save_png(fig, path)


def _step_cdf(ax: Any, v: npt.NDArray[np.float64], label: str, **style: Any) -> None:
    y = np.arange(1, len(v) + 1, dtype=np.float64) / len(v)
    # start the curve at 0 just left of the smallest value
    ax.step(
        np.concatenate([[v[0]], v]), np.concatenate([[0.0], y]), where="post", label=label, **style
    )


# --- all outputs of a run ---------------------------------------------------------------------
def write_timeline_outputs(
    timeline: Sequence[Segment],
    records: pd.DataFrame,
    out_dir: str | os.PathLike[str],
    *,
    device: str = "accelerator",
    title: str = "",
    metadata: Mapping[str, Any] | None = None,
    max_jobs: int = 100,
) -> list[Path]:
    """Write :data:`TIMELINE_FILES` into ``out_dir`` (each atomically): ``timeline.json``
    (:func:`write_chrome_trace`), ``timeline.png`` (:func:`plot_timeline`) and
    ``latency_cdf.png`` (:func:`plot_latency_cdf`). Returns their paths."""
    d = Path(out_dir)
    trace_path, gantt_path, cdf_path = (d / name for name in TIMELINE_FILES)
    return [
        write_chrome_trace(timeline, records, trace_path, device=device, metadata=metadata),
        plot_timeline(timeline, records, gantt_path, max_jobs=max_jobs, title=title),
        plot_latency_cdf(records, cdf_path, title=title),
    ]
