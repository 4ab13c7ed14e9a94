"""The results store of a sweep directory, and the sweep driver.

Layout of ``DIR`` (``npusched sweep FILE --out DIR``):

* ``experiment.json``: the experiment's name, axes, seeds, report hints and source file;
* ``experiment.<toml|yaml>``: a copy of the experiment file as it was run;
* ``points/<point_id>.parquet``: one row per finished point (:func:`run_point`'s row), each
  written atomically (:mod:`npusched._io`) by the driver the moment the point finishes;
* ``results.parquet``: every finished point of the experiment in one table, sorted by point
  index, rewritten (atomically) at the end of every sweep and by :func:`consolidate`.

Parquet (pyarrow) rather than SQLite: one immutable file per point needs no locking between
the driver and a concurrent ``npusched report``, a killed writer can never corrupt it (the
rename is atomic), and the consolidated table is what pandas and every dataframe tool read.

A point file exists only once its point has finished, so ``kill -9`` loses at most the points
that were running, and a rerun skips every point whose file exists (a point id is a hash of its
complete config, so a changed point is never mistaken for a done one).

A reproduction study keeps its points in the same store, through one function:
:func:`run_points` computes (or, after a kill, resumes) a study's list of :class:`StudyPoint`
(a key and a function computing its row) and returns every row as read back from the store,
so a fresh run and a resumed one hand their outputs the same values. Underneath,
:func:`open_store` prepares ``DIR`` (checked, ``points/`` created, a killed writer's temporary
and unreadable files removed) and refuses a directory whose ``store.json`` names another
configuration; :func:`point_key` names a point by a hash of what determines it,
:func:`write_study_point` writes it (a value that is not a scalar as JSON text, named in the
row's ``__json__`` column) and :func:`read_rows` reads finished points back as Python values.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from npusched._io import atomic_path, atomic_write_text
from npusched.errors import ConfigError, NpuschedError
from npusched.experiments.backends import (
    POINTS_DIR,
    PointTask,
    check_backend_options,
    run_tasks,
    write_point,
)
from npusched.experiments.sweep import Experiment, Point, select_points
from npusched.report.progress import progress_bar

__all__ = [
    "StudyPoint",
    "SweepSummary",
    "consolidate",
    "done_ids",
    "load_results",
    "open_store",
    "open_study_store",
    "point_key",
    "read_rows",
    "run_points",
    "run_sweep",
    "write_point",
    "write_study_point",
]

RESULTS = "results.parquet"
META = "experiment.json"
#: The configuration a study's store belongs to (:func:`open_store`).
STORE_META = "store.json"
#: The column of a study point's row naming the columns stored as JSON text (:func:`encode_row`).
JSON_COLUMNS = "__json__"
#: The layout of a study point's row (:func:`encode_row`); part of every study store's
#: ``store.json``, so a store written in another layout is refused, not misread.
STORE_FORMAT = 2


@dataclass
class SweepSummary:
    """What one ``npusched sweep`` call did."""

    out_dir: Path
    selected: int
    skipped: int
    ran: int
    wall_s: float
    results: Path


def done_ids(out_dir: Path) -> set[str]:
    """Ids of the points with a finished file in ``out_dir``."""
    d = out_dir / POINTS_DIR
    if not d.is_dir():
        return set()
    return {p.stem for p in d.glob("*.parquet") if not p.name.startswith(".")}


def _warn(msg: str) -> None:
    print(f"npusched: warning: {msg}", file=sys.stderr)


def _read_parquet(path: Path, what: str) -> pd.DataFrame | None:
    """``path`` as a frame, or ``None`` with one warning line if it is unreadable (truncated,
    corrupt: a disk filled up or a copy was cut short; our own writes are atomic)."""
    try:
        return pd.read_parquet(path)
    except (OSError, ValueError) as e:  # pyarrow.ArrowInvalid is a ValueError
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        _warn(f"{path}: unreadable ({first}); {what}")
        return None


def _read_points(files: Sequence[Path]) -> pd.DataFrame:
    """The rows of point files; an unreadable one is skipped with a warning (a sweep rerun
    recomputes it, see :func:`drop_corrupt_points`)."""
    frames = [_read_parquet(f, "skipped (a sweep rerun recomputes it)") for f in files]
    kept = [f for f in frames if f is not None]
    return pd.concat(kept, ignore_index=True) if kept else pd.DataFrame()


def _read_results(d: Path) -> pd.DataFrame:
    """``results.parquet``, or an empty frame if missing or unreadable (then the callers
    rebuild it from the point files)."""
    if not (d / RESULTS).is_file():
        return pd.DataFrame()
    df = _read_parquet(d / RESULTS, "rebuilt from the point files")
    return pd.DataFrame() if df is None else df


def drop_corrupt_points(out_dir: Path) -> list[str]:
    """Remove point files that are not in ``results.parquet`` and cannot be read (so the sweep
    recomputes them), with one warning line each. Returns their point ids.

    Only the Parquet footer is read (cheap), and only for points the results table lacks."""
    import pyarrow.parquet as pq

    have = _read_results(out_dir)
    known = set(have["point_id"]) if "point_id" in have.columns else set()
    bad = []
    for pid in sorted(done_ids(out_dir) - known):
        f = out_dir / POINTS_DIR / f"{pid}.parquet"
        try:
            pq.read_metadata(f)
        except (OSError, ValueError) as e:
            first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
            _warn(f"{f}: unreadable ({first}); recomputing point {pid}")
            f.unlink(missing_ok=True)
            bad.append(pid)
    return bad


#: Columns every row has, in the order of the table: first ...
_HEAD = ("point_id", "index", "combo", "seed")
#: ... and last; the grid axes follow the head (in file order, as in the first point's row) and
#: the metrics, sorted by name, come between. Summary keys differ between points (a metric per
#: priority level that occurs), so a point without a metric has NaN there.
_TAIL = ("latencies_s", "config_json", "wall_s")


def _sorted(df: pd.DataFrame, axes: Sequence[str] = ()) -> pd.DataFrame:
    """Rows by point index, columns in a fixed order (whatever order the points finished in)."""
    if df.empty:
        return df
    df = df.sort_values(["index", "point_id"], kind="stable").reset_index(drop=True)
    first = [c for c in axes if c in df.columns]
    fixed = set(_HEAD) | set(_TAIL) | set(first)
    metrics = sorted(c for c in df.columns if c not in fixed)
    order = [c for c in _HEAD if c in df.columns] + first + metrics
    order += [c for c in _TAIL if c in df.columns]
    return df[order]


def load_results(out_dir: str | os.PathLike[str]) -> pd.DataFrame:
    """Every finished point in ``out_dir``, sorted by point index: ``results.parquet`` plus
    any point file it does not hold yet (the points of an interrupted sweep)."""
    d = Path(out_dir)
    have = _read_results(d)
    known = set(have["point_id"]) if "point_id" in have.columns else set()
    wanted = done_ids(d)
    try:  # only the points of the experiment as last run (an edited file leaves old points)
        meta = json.loads((d / META).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        meta = {}
    ids, axes = meta.get("point_ids"), meta.get("axes", [])
    if ids is not None:
        wanted &= set(ids)
        if not have.empty:
            have = have[have["point_id"].isin(set(ids))]
    extra = [d / POINTS_DIR / f"{i}.parquet" for i in sorted(wanted - known)]
    parts = [x for x in (have, _read_points(extra)) if not x.empty]
    return _sorted(pd.concat(parts, ignore_index=True), axes) if parts else pd.DataFrame()


def consolidate(
    out_dir: str | os.PathLike[str],
    ids: set[str] | None = None,
    new_rows: Sequence[dict[str, Any]] = (),
    axes: Sequence[str] = (),
) -> Path:
    """Write ``results.parquet``: the finished points (only those in ``ids`` if given).

    It is built incrementally: the previous ``results.parquet``, the rows just run
    (``new_rows``, already written as point files) and only the point files neither holds, so a
    rerun of a large sweep does not re-read every point file."""
    d = Path(out_dir)
    have = _read_results(d)
    known = set(have["point_id"]) if "point_id" in have.columns else set()
    fresh = pd.DataFrame(list(new_rows))
    known |= set(fresh["point_id"]) if not fresh.empty else set()
    extra = _read_points([d / POINTS_DIR / f"{i}.parquet" for i in sorted(done_ids(d) - known)])
    parts = [x for x in (have, fresh, extra) if not x.empty]
    df = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()
    if ids is not None and not df.empty:
        df = df[df["point_id"].isin(ids)]
    if not df.empty:
        df = _sorted(df.drop_duplicates("point_id", keep="last"), axes)
    path = d / RESULTS
    with atomic_path(path) as tmp:
        df.to_parquet(tmp, index=False, engine="pyarrow")
    return path


def point_key(*parts: Any) -> str:
    """A point id: 16 hex digits of a hash of ``parts`` (JSON values: what determines the
    point, e.g. the configuration hash, the policy and the workload's indices)."""
    import hashlib

    blob = json.dumps(list(parts), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def open_store(out_dir: str | os.PathLike[str], meta: Mapping[str, Any]) -> Path:
    """Prepare ``out_dir`` as the point store of a run whose configuration is ``meta`` (JSON
    values, e.g. the study's name and configuration hash) and return it.

    Checked before anything is written (:func:`npusched.experiments.runner.check_out_dir`);
    then ``points/`` is created, the temporary files of a killed writer and unreadable point
    files are removed (their points run again), and ``store.json`` is written. A directory
    whose ``store.json`` holds another configuration is refused (its points would be mixed
    with this run's in the outputs derived from the store)."""
    d = Path(out_dir)
    _points_dir(d)
    drop_corrupt_points(d)
    want = json.loads(json.dumps(dict(meta), sort_keys=True))
    path = d / STORE_META
    if path.exists():
        try:
            prev = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            prev = None
        if isinstance(prev, dict) and prev != want:
            diff = sorted(k for k in set(prev) | set(want) if prev.get(k) != want.get(k))
            k = diff[0]
            raise ConfigError(
                f"{d}: holds points of another configuration ({k} {prev.get(k)!r}; this one "
                f"is {want.get(k)!r}); use another --out or delete the directory"
            )
    atomic_write_text(path, json.dumps(want, indent=2, sort_keys=True) + "\n")
    return d


def _json_default(v: Any) -> Any:
    import numpy as np

    if isinstance(v, np.generic):
        return v.item()
    if isinstance(v, np.ndarray):
        return v.tolist()
    raise TypeError(f"a point's row holds {type(v).__name__!r}, which is not a JSON value")


def _scalar(v: Any) -> bool:
    import numpy as np

    return v is None or isinstance(v, bool | int | float | str | np.bool_ | np.number)


def encode_row(row: Mapping[str, Any]) -> dict[str, Any]:
    """``row`` as a study point's stored row: scalars (None, bools, ints, floats with NaN and
    infinities, strings) as they are; any other value (lists, mappings, tuples, arrays) as
    JSON text (floats by ``repr``: exact; NaN and infinities as ``NaN`` / ``Infinity``), its
    column named in the ``__json__`` column (:data:`JSON_COLUMNS`).

    JSON has no tuples and string keys only: a nested value is read back with lists for tuples
    and mapping keys as strings (:func:`decode_row`), which is why :func:`run_points` hands
    every caller the rows as read back."""
    out: dict[str, Any] = {}
    nested: list[str] = []
    for k, v in row.items():
        if k == JSON_COLUMNS:
            raise ValueError(f"a point's row may not have a column named {JSON_COLUMNS!r}")
        if _scalar(v):
            out[k] = v.item() if hasattr(v, "item") else v
        else:
            out[k] = json.dumps(v, default=_json_default, separators=(",", ":"))
            nested.append(k)
    out[JSON_COLUMNS] = json.dumps(nested)
    return out


def decode_row(row: Mapping[str, Any]) -> dict[str, Any]:
    """A stored study row (:func:`encode_row`) back as Python values, without ``point_id``."""
    nested = set(json.loads(row[JSON_COLUMNS])) if JSON_COLUMNS in row else set()
    return {
        k: json.loads(v) if k in nested else v
        for k, v in row.items()
        if k not in (JSON_COLUMNS, "point_id")
    }


def write_study_point(out_dir: Path, point_id: str, row: Mapping[str, Any]) -> Path:
    """Write a study point's ``row`` (:func:`encode_row`) atomically as
    ``points/<point_id>.parquet``."""
    return write_point(out_dir, {"point_id": point_id, **encode_row(row)})


def read_rows(out_dir: str | os.PathLike[str], ids: Sequence[str]) -> list[dict[str, Any]]:
    """The rows of the finished study points ``ids`` (in that order; each must exist) as
    Python values (:func:`decode_row`): ints, floats (NaN kept), strings, and the nested
    values written as JSON text."""
    import pyarrow.parquet as pq

    d = Path(out_dir) / POINTS_DIR
    return [decode_row(pq.read_table(d / f"{i}.parquet").to_pylist()[0]) for i in ids]


def open_study_store(out_dir: str | os.PathLike[str], meta: Mapping[str, Any]) -> Path:
    """:func:`open_store` for a study's ``meta`` in this store's row layout
    (:data:`STORE_FORMAT`); :func:`run_points` calls it, and a study may call it first to
    refuse a directory of another configuration before any work."""
    return open_store(out_dir, {**meta, "store_format": STORE_FORMAT})


@dataclass(frozen=True)
class StudyPoint:
    """One point of a reproduction study: ``key`` its id in the store (:func:`point_key` of
    what determines it), ``compute`` returns its row (a mapping of column -> value, see
    :func:`encode_row`), ``label`` names it on the progress bar."""

    key: str
    compute: Callable[[], Mapping[str, Any]]
    label: str = ""


def run_points(
    out_dir: str | os.PathLike[str],
    meta: Mapping[str, Any],
    points: Sequence[StudyPoint],
    *,
    progress: bool = False,
    desc: str = "points",
) -> list[dict[str, Any]]:
    """Compute (or resume) a study's ``points`` in the store ``out_dir`` and return their rows,
    in the order of ``points``, as read back from the store.

    The store is opened with ``meta`` (JSON values naming the study and the configuration
    its points belong to; :func:`open_store` refuses a directory holding another's). Every
    point whose file exists is skipped; the others run in order, each written atomically the
    moment it finishes, so ``kill -9`` loses only the point running and a rerun computes only
    the missing ones. Returning the stored rows, not the computed ones, makes a resumed run's
    outputs byte-identical to an uninterrupted one's.

    Args:
        out_dir: the study's output directory (created if needed).
        meta: the configuration (e.g. ``{"study": "dfs", "config_hash": ...}``).
        points: the points; keys must be unique.
        progress: a progress bar (done / total of this run's points) on stderr.
        desc: the progress bar's label.
    """
    keys = [p.key for p in points]
    if len(set(keys)) != len(keys):
        dup = next(k for k in keys if keys.count(k) > 1)
        raise ValueError(f"run_points: point key {dup!r} occurs twice")
    d = open_study_store(out_dir, meta)
    done = done_ids(d)
    todo = [p for p in points if p.key not in done]
    with progress_bar(len(todo), f"[bold]{desc}[/]", enabled=progress) as bar:
        for p in todo:
            write_study_point(d, p.key, p.compute())
            if bar is not None:
                bar.step(p.label)
    return read_rows(d, keys)


def plan_sweep(
    exp: Experiment,
    out_dir: str | os.PathLike[str],
    filters: Sequence[tuple[str, str]] = (),
    max_points: int | None = None,
) -> tuple[str, list[dict[str, Any]]]:
    """What ``npusched sweep --dry-run`` lists: a title and one row per selected point (its
    index, id, axis values, seed and whether ``out_dir``'s store already holds it); runs
    nothing and writes nothing."""
    done = done_ids(Path(out_dir))
    pts = select_points(exp, list(filters), max_points)
    rows = [
        {"point": p.index, "id": p.point_id, **p.params, "seed": p.seed, "done": p.point_id in done}
        for p in pts
    ]
    return f"{exp.name}: {len(pts)} of {len(exp.points)} points", rows


def _task(
    exp: Experiment, p: Point, out_dir: Path | None = None, plugins: tuple[str, ...] = ()
) -> PointTask:
    where = ", ".join(f"{k}={v}" for k, v in p.params.items())
    label = f"{exp.source} [point {where + ', ' if where else ''}seed={p.seed}]"
    return PointTask(
        p.point_id,
        p.index,
        p.combo,
        p.seed,
        dict(p.params),
        p.config,
        str(exp.base_dir),
        label,
        None if out_dir is None else str(out_dir.resolve()),
        plugins,
    )


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # exists, owned by someone else
        return True
    return True


def remove_stale_temp_files(out_dir: Path) -> int:
    """Remove the temporary files a killed writer left in ``points/`` (their names carry the
    writer's pid, :func:`npusched._io.temp_path`; files of a live process are kept). Returns
    how many were removed."""
    n = 0
    for f in (out_dir / POINTS_DIR).glob(".*.tmp"):
        parts = f.name.split(".")
        try:
            pid = int(parts[-3])
        except (IndexError, ValueError):
            continue
        if not _alive(pid):
            f.unlink(missing_ok=True)
            n += 1
    return n


def _points_dir(out_dir: Path) -> None:
    """Check ``out_dir`` (:func:`~npusched.experiments.runner.check_out_dir`), create its
    points folder and remove temporary files of dead writers: what a sweep and a study store
    both do before reading their points."""
    from npusched.experiments.runner import check_out_dir

    check_out_dir(out_dir)
    try:
        (out_dir / POINTS_DIR).mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise ConfigError(f"{out_dir}: cannot create the output directory: {e.strerror}") from None
    remove_stale_temp_files(out_dir)


def _prepare_dir(exp: Experiment, out_dir: Path) -> None:
    _points_dir(out_dir)
    old = out_dir / META
    if old.exists():
        try:
            prev = json.loads(old.read_text(encoding="utf-8")).get("name")
        except (OSError, ValueError):
            prev = None
        if prev is not None and prev != exp.name:
            raise ConfigError(
                f"{out_dir}: holds experiment {prev!r}, not {exp.name!r}; choose another --out"
            )
    atomic_write_text(old, json.dumps(exp.meta(), indent=2, sort_keys=True) + "\n")
    src = Path(exp.source)
    if src.is_file():
        with atomic_path(out_dir / f"experiment{src.suffix.lower()}") as tmp:
            shutil.copyfile(src, tmp)


def run_sweep(
    exp: Experiment,
    out_dir: str | os.PathLike[str],
    *,
    backend: str = "process",
    workers: int | None = None,
    address: str | None = None,
    filters: Sequence[tuple[str, str]] = (),
    max_points: int | None = None,
    progress: bool = True,
    local_processes: bool = True,
    plugins: Sequence[str | os.PathLike[str]] = (),
) -> SweepSummary:
    """Run the selected points of ``exp`` that ``out_dir`` does not hold yet, writing each as it
    finishes, then consolidate ``results.parquet`` (all finished points of the experiment).

    Args:
        exp: a loaded experiment (:func:`npusched.experiments.sweep.load_experiment`).
        out_dir: the sweep directory (created if missing; a rerun resumes).
        backend: ``inprocess``, ``process`` or ``dask`` (:mod:`npusched.experiments.backends`).
        workers: processes of the pool / local Dask cluster (default: all cores).
        address: a Dask scheduler's address (``dask`` backend only).
        filters: ``(axis, value)`` pairs (:func:`npusched.experiments.sweep.parse_filters`).
        max_points: run at most this many of the selected points (in expansion order).
        progress: draw a progress bar (done/total, points/s, ETA) on stderr.
        local_processes: ``False`` runs a local Dask cluster's workers as threads
            (:func:`npusched.experiments.backends.run_tasks`).
        plugins: ``--plugin`` files every worker loads before running a point.

    Options are checked before anything is created; if the sweep fails with bad input before
    any point finished, a directory this call created is removed again.
    """
    d = Path(out_dir)
    check_backend_options(backend, workers, address)
    selected = select_points(exp, filters, max_points)
    from npusched.experiments.runner import check_out_dir

    check_out_dir(d)
    created = not d.exists()
    try:
        _prepare_dir(exp, d)
        summary = _run_selected(
            exp,
            d,
            selected,
            backend,
            workers,
            address,
            progress,
            local_processes,
            tuple(str(Path(p).resolve()) for p in plugins),
        )
    except NpuschedError:
        if created and not done_ids(d):
            shutil.rmtree(d, ignore_errors=True)  # bad input: leave nothing behind
        raise
    return summary


def _run_selected(
    exp: Experiment,
    d: Path,
    selected: Sequence[Point],
    backend: str,
    workers: int | None,
    address: str | None,
    progress: bool,
    local_processes: bool,
    plugins: tuple[str, ...],
) -> SweepSummary:
    drop_corrupt_points(d)
    done = done_ids(d)
    todo = [p for p in selected if p.point_id not in done]
    t0 = time.perf_counter()
    skipped = len(selected) - len(todo)
    label = "sweep" + (f" (+{skipped} done)" if skipped else "")
    # the bar counts the points this run does, so its rate and ETA are this run's
    with progress_bar(len(todo), label, enabled=progress, eta=True, rate_unit="points") as bar:
        new_rows: list[dict[str, Any]] = []

        def on_done(row: dict[str, Any]) -> None:
            if not (d / POINTS_DIR / f"{row['point_id']}.parquet").exists():
                write_point(d, row)  # a remote worker could not write it
            new_rows.append(row)
            if bar is not None:
                bar.step()

        try:
            run_tasks(
                # workers on this machine write their own point files (the driver would be a
                # bottleneck); a remote Dask cluster returns rows for the driver to write
                [_task(exp, p, d if address is None else None, plugins) for p in todo],
                on_done,
                backend=backend,
                workers=workers,
                address=address,
                local_processes=local_processes,
            )
        finally:
            results = consolidate(d, {p.point_id for p in exp.points}, new_rows, exp.axes)
    return SweepSummary(d, len(selected), skipped, len(todo), time.perf_counter() - t0, results)
