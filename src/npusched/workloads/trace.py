"""Trace replay: requests from a CSV or Parquet file, and back.

Trace format (one row per request; the file type is chosen by the suffix, ``.csv`` or
``.parquet``/``.pq``):

============  ========  ===============================================================
column        required  meaning
============  ========  ===============================================================
``arrival_s`` yes       dispatch time in seconds, finite and >= 0
``network``   yes       zoo network name or alias (stored canonical)
``batch``     no        batch size, integer >= 1 (default 1)
``priority``  no        integer >= 1 (default 1; PREMA levels are 1/3/9)
``slo_s``     no        latency target in seconds, > 0; empty means no SLO
``seq_in``    no        input sequence length of a recurrent network, integer >= 1
``seq_out``   no        output sequence length of a recurrent network, integer >= 1
``id``        no        unique integer >= 0; breaks ties between equal arrival times
============  ========  ===============================================================

Empty cells (or ``nan``) mean "not given". Recurrent networks with no ``seq_in``/``seq_out`` get
the network's default lengths; CNN rows must leave them empty. Request ids are never changed
silently: without an ``id`` column a request's id is its row number from 0, so the rows must be
in arrival order; with one, the ids must be ``0..n-1`` in ``(arrival_s, id)`` order (rows may
come in any order and are sorted). Anything else is refused, naming the first row out of order.
A trace written by :func:`save_trace` reads back unchanged.

Any bad row raises :class:`~npusched.errors.ConfigError` naming the file, the 1-based data row, the
column and the problem.
"""

from __future__ import annotations

import csv
import itertools
import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from npusched._io import atomic_path
from npusched.errors import ConfigError, UnknownNameError
from npusched.workloads.generators import assemble
from npusched.workloads.request import Request

if TYPE_CHECKING:
    import pandas as pd

REQUIRED = ("arrival_s", "network")
OPTIONAL = ("batch", "priority", "slo_s", "seq_in", "seq_out", "id")
COLUMNS = ("id", *REQUIRED, *OPTIONAL[:-1])
_MISSING = {"", "nan", "none", "null", "na", "<na>"}

__all__ = ["COLUMNS", "load_trace", "requests_frame", "save_trace"]


def _kind(path: Path) -> str:
    suffix = path.suffix.lower()
    if suffix == ".csv":
        return "csv"
    if suffix in (".parquet", ".pq"):
        return "parquet"
    raise ConfigError(f"{path}: unknown trace format {suffix!r}; allowed: .csv, .parquet")


def _check_csv_head(path: Path) -> None:
    """Reject a repeated column name and a first row longer than the header: pandas would
    rename the column (``network.1``) or turn the first column into the index, and the errors
    that follow would point at the wrong column. Later long rows are pandas' own error."""
    try:
        with path.open(newline="", encoding="utf-8-sig", errors="replace") as f:
            head = list(itertools.islice(csv.reader(f), 2))
    except (OSError, csv.Error):
        return  # pandas reports it
    if not head:
        return
    names = [h.strip() for h in head[0]]
    dup = next((c for i, c in enumerate(names) if c in names[:i]), None)
    if dup is not None:
        raise ConfigError(f"{path}: column {dup!r} appears twice in the header")
    if len(head) > 1 and len(head[1]) > len(names):
        raise ConfigError(
            f"{path}: row 1 has {len(head[1])} fields but the header names {len(names)} columns"
        )


def _read(path: Path) -> pd.DataFrame:
    import pandas as pd

    if path.is_dir():
        raise ConfigError(f"{path}: is a directory, not a trace file (.csv or .parquet)")
    kind = _kind(path)
    if not path.is_file():
        raise ConfigError(f"{path}: trace file not found")
    if kind == "csv":
        _check_csv_head(path)
    try:
        if kind == "csv":
            # Everything as text first so that a stray "abc" in a numeric column is reported by
            # row instead of silently turning the column into strings.
            return pd.read_csv(path, dtype=str, keep_default_na=False, skipinitialspace=True)
        return pd.read_parquet(path)
    except (ValueError, OSError, pd.errors.ParserError, pd.errors.EmptyDataError) as e:
        first = str(e).splitlines()[0] if str(e) else type(e).__name__
        raise ConfigError(f"{path}: cannot read trace: {first}") from None


class _Checker:
    def __init__(self, path: Path, df: pd.DataFrame) -> None:
        self.path, self.df = path, df

    def fail(self, mask: np.ndarray, column: str, problem: str) -> None:
        bad = np.flatnonzero(mask)
        if bad.size:
            row = int(bad[0])
            value = self.df[column].iloc[row]
            if isinstance(value, np.generic):  # show 3, not np.int64(3)
                value = value.item()
            raise ConfigError(
                f"{self.path}: row {row + 1}: column {column!r}: {problem} (got {value!r})"
            )

    def missing(self, column: str) -> np.ndarray:
        raw = self.df[column]
        text = raw.astype(str).str.strip().str.lower()
        return np.asarray(raw.isna() | text.isin(_MISSING), dtype=bool)

    def number(self, column: str, *, required: bool) -> tuple[np.ndarray, np.ndarray]:
        """(values as float64 with NaN where missing, missing mask)."""
        import pandas as pd

        miss = self.missing(column)
        if required:
            self.fail(miss, column, "missing value")
        raw = self.df[column]
        if raw.dtype == bool:
            self.fail(np.ones(len(raw), bool), column, "not a number")
        if pd.api.types.is_datetime64_any_dtype(raw) or pd.api.types.is_timedelta64_dtype(raw):
            # to_numeric would give nanoseconds since 1970, silently
            self.fail(~miss, column, "a date/time, not a number of seconds")
        num = pd.to_numeric(raw.where(~miss), errors="coerce").to_numpy(dtype=np.float64)
        self.fail(~miss & np.isnan(num), column, "not a number")
        self.fail(~miss & ~np.isfinite(num), column, "not a finite number")
        return num, miss

    def integer(self, column: str, lowest: int) -> tuple[np.ndarray, np.ndarray]:
        num, miss = self.number(column, required=False)
        self.fail(~miss & (num != np.floor(num)), column, "not an integer")
        self.fail(~miss & (num < lowest), column, f"must be >= {lowest}")
        return num, miss


def load_trace(
    path: str | os.PathLike[str], *, ignore_extra_columns: bool = False
) -> list[Request]:
    """Read a request trace (format in the module docstring).

    Args:
        path: ``.csv`` or ``.parquet`` file.
        ignore_extra_columns: accept (and drop) columns not in the format, e.g. to replay a
            records file; by default an unknown column is an error (it is usually a typo).

    Returns:
        Requests ordered by arrival, ids dense from 0.
    """
    import pandas as pd

    from npusched.models.zoo import canonical_name, get_network, list_networks

    p = Path(path)
    df = _read(p).reset_index(drop=True)
    df.columns = [str(c).strip() for c in df.columns]
    for col in REQUIRED:
        if col not in df.columns:
            raise ConfigError(
                f"{p}: missing required column {col!r}; columns: {', '.join(df.columns)}"
            )
    extra = [c for c in df.columns if c not in REQUIRED + OPTIONAL]
    if extra and not ignore_extra_columns:
        raise ConfigError(
            f"{p}: unknown column {extra[0]!r}; allowed: {', '.join(REQUIRED + OPTIONAL)}"
        )
    n = len(df)
    chk = _Checker(p, df)

    arrival, _ = chk.number("arrival_s", required=True)
    chk.fail(arrival < 0, "arrival_s", "negative arrival time")

    chk.fail(chk.missing("network"), "network", "missing value")
    raw_names = df["network"].astype(str).str.strip()
    canon: dict[str, str] = {}
    for name in pd.unique(raw_names):
        try:
            canon[name] = canonical_name(name)
        except UnknownNameError:
            chk.fail(
                (raw_names == name).to_numpy(),
                "network",
                f"unknown network; allowed: {', '.join(list_networks())}",
            )
    networks = [canon[x] for x in raw_names.tolist()]

    def ints(col: str, lowest: int, default: int | None) -> list[int | None]:
        if col not in df.columns:
            return [default] * n
        vals, miss = chk.integer(col, lowest)
        return [default if m else int(v) for v, m in zip(vals.tolist(), miss.tolist(), strict=True)]

    if "batch" in df.columns:  # the largest batch a profile can be compiled for
        from npusched.models.ir import MAX_BATCH

        big, _ = chk.number("batch", required=False)
        chk.fail(big > MAX_BATCH, "batch", f"must be <= {MAX_BATCH}")
    batch = ints("batch", 1, 1)
    priority = ints("priority", 1, 1)
    seq_in = ints("seq_in", 1, None)
    seq_out = ints("seq_out", 1, None)

    slo: list[float | None] = [None] * n
    if "slo_s" in df.columns:
        vals, miss = chk.number("slo_s", required=False)
        chk.fail(~miss & (vals <= 0), "slo_s", "must be > 0 seconds")
        slo = [None if m else float(v) for v, m in zip(vals.tolist(), miss.tolist(), strict=True)]

    # Sequence lengths only make sense for recurrent networks (and seq_in for a network with
    # size variants such as BERT: its sequence length); fill the recurrent defaults.
    from npusched.models.zoo import size_range

    recurrent = {name: get_network(name) for name in set(networks)}
    sized = {name: size_range(name) for name in set(networks)}
    is_cnn = np.array([not recurrent[x].is_recurrent for x in networks], dtype=bool)
    for col, values in (("seq_in", seq_in), ("seq_out", seq_out)):
        has = np.array([v is not None for v in values], dtype=bool)
        ok = np.array([col == "seq_in" and sized[x] is not None for x in networks], dtype=bool)
        chk.fail(has & is_cnn & ~ok, col, "sequence length given for a non-recurrent network")
        if col == "seq_in":
            out_of = np.zeros(n, dtype=bool)
            for i, (v, x) in enumerate(zip(values, networks, strict=True)):
                rng = sized[x]
                out_of[i] = v is not None and rng is not None and not rng[0] <= v <= rng[1]
            chk.fail(out_of, col, "outside the network's size range")
    for i, name in enumerate(networks):
        net = recurrent[name]
        if net.is_recurrent and net.seq_len is not None:
            d_in, d_out = net.seq_len
            seq_in[i] = d_in if seq_in[i] is None else seq_in[i]
            seq_out[i] = d_out if seq_out[i] is None else seq_out[i]

    if "id" in df.columns:
        ids, miss = chk.integer("id", 0)
        chk.fail(miss, "id", "missing value (give every row an id or none)")
        dup = pd.Series(ids).duplicated().to_numpy()
        chk.fail(dup, "id", "duplicate id")
        # Order by (arrival, id): sort by id first, then stably by arrival.
        by_id = np.argsort(ids, kind="stable")
        pick = by_id[np.argsort(arrival[by_id], kind="stable")]
        # the file's ids are kept: the request at position k in that order must have id k
        wrong = np.zeros(n, dtype=bool)
        wrong[pick] = ids[pick] != np.arange(n)
        chk.fail(
            wrong,
            "id",
            "ids must be 0..n-1 in arrival order (ties by id), so that they stay the file's "
            "ids; renumber them or drop the id column",
        )
    else:
        pick = np.argsort(arrival, kind="stable")
        # a request's id is its row number: the rows must already be in arrival order
        chk.fail(
            np.concatenate(([False], arrival[1:] < arrival[:-1])),
            "arrival_s",
            "earlier than the previous row; without an id column the rows must be sorted by "
            "arrival_s (ids are the row numbers from 0)",
        )
    sel = pick.tolist()
    return assemble(
        arrival[pick],
        [networks[i] for i in sel],
        batch=[batch[i] for i in sel],
        priority=[priority[i] for i in sel],
        slo_s=[slo[i] for i in sel],
        seq_in=[seq_in[i] for i in sel],
        seq_out=[seq_out[i] for i in sel],
    )


def requests_frame(requests: Sequence[Request]) -> pd.DataFrame:
    """The trace columns of ``requests`` as a DataFrame (nullable ints, NaN for no SLO)."""
    import pandas as pd

    return pd.DataFrame(
        {
            "id": pd.array([r.id for r in requests], dtype="int64"),
            "arrival_s": np.array([r.arrival_s for r in requests], dtype=np.float64),
            "network": pd.array([r.network for r in requests], dtype=object),
            "batch": pd.array([r.batch for r in requests], dtype="int64"),
            "priority": pd.array([r.priority for r in requests], dtype="int64"),
            "slo_s": np.array(
                [np.nan if r.slo_s is None else r.slo_s for r in requests], dtype=np.float64
            ),
            "seq_in": pd.array([r.seq_in for r in requests], dtype="Int64"),
            "seq_out": pd.array([r.seq_out for r in requests], dtype="Int64"),
        }
    )


def save_trace(requests: Sequence[Request], path: str | os.PathLike[str]) -> Path:
    """Write ``requests`` as a trace (``.csv`` or ``.parquet`` by suffix), atomically.

    Floats are written at full precision, so :func:`load_trace` reads back equal requests.
    """
    p = Path(path)
    kind = _kind(p)
    df = requests_frame(requests)
    p.parent.mkdir(parents=True, exist_ok=True)
    with atomic_path(p) as tmp:
        if kind == "csv":
            df.to_csv(tmp, index=False, na_rep="")
        else:
            df.to_parquet(tmp, index=False, engine="pyarrow")
    return p
