"""SCALE-Sim topology CSVs as networks: ``npusched models import FILE.csv``.

SCALE-Sim 3 describes a workload as one CSV row per layer, in one of two layouts, told apart by
the header:

* **convolution** (the default): ``Layer name, IFMAP Height, IFMAP Width, Filter Height,
  Filter Width, Channels, Num Filter, Strides,`` (the stride applies to both axes);
* **GEMM** (``Layer, M, N, K,``; SCALE-Sim's ``mnk`` inputs): SCALE-Sim maps each row onto the
  convolution ``IFMAP M x K, filter 1 x K, 1 channel, N filters, stride 1``, i.e. the GEMM
  ``(M x K) . (K x N)``.

Read as SCALE-Sim 3's ``topology_utils`` reads it:

* **Sparsity column**: the cell after the last dimension (the 9th of a convolution row, the 5th
  of a GEMM row), when it is an ``N:M`` ratio (``2:4``), is the layer's N:M structured weight
  sparsity, kept in ``Layer.attrs["sparsity"]`` as ``(N, M)``. It does not change the cost:
  SCALE-Sim applies it only with ``SparsitySupport = true`` in its config (default off), and
  the systolic-array cost model has no sparse mapping, so cycles are the dense ones (as
  SCALE-Sim's default). A plain number there (the column stride older npusched versions read)
  is an error naming the column: SCALE-Sim 3 has no column-stride column.
* **Trailing cells**: anything else after the last dimension (a comment such as ``#dw`` in
  SCALE-Sim's ``mobilnet_paper.csv``, empty cells, spreadsheet leftovers) is ignored, as
  SCALE-Sim ignores what follows the last field.
* **Depthwise layers**: a convolution row whose name contains ``DP`` (case-sensitive) is
  depthwise in SCALE-Sim: it runs ``Channels`` separate one-channel layers, each with the row's
  ``Num Filter`` filters, named ``<name>Channel_<i>``. The importer emits exactly those layers
  (so per-layer cycles line up with SCALE-Sim's ``COMPUTE_REPORT.csv`` rows).

Each row becomes one ``conv`` layer (``fc`` for GEMM rows) in SCALE-Sim's own GEMM view, so that
the cost model sees exactly the operands SCALE-Sim simulates:

* output size without padding, SCALE-Sim's rule: ``Ho = ceil((H - R + stride) / stride)``,
  ``Wo = ceil((W - S + stride_w) / stride_w)``;
* ``M = Ho * Wo`` (streamed), ``K = R * S * C`` (array rows), ``N = filters`` (array columns);
* inputs ``H * W * C``, outputs ``M * N`` and weights ``K * N`` elements per sample.

**Agreement with SCALE-Sim** (compute-only cycles, ``SystolicArray(acc_depth=None,
memory_stalls=False)`` against SCALE-Sim's ``COMPUTE_REPORT.csv`` "Total Cycles" on a
weight-stationary array of the same size): SCALE-Sim charges ``F * (M + 2*SH + SW - 2) - 1``
cycles for ``F = ceil(K/SH) * ceil(N/SW)`` folds, Algorithm 1 ``F * (M + SH + 2*SW)``, so ours is
``2F + 1`` cycles more on a square array. The relative difference ``(2F + 1) / (F (M + 382) - 1)``
on 128x128 falls with ``F`` and ``M``; its worst case, one fold with ``M = 1``, is
``3 / 382 = 0.79%``. So every layer of *any* topology is within 0.79% (ResNet-50: at most 0.52%).
Memory stalls and SCALE-Sim's prefetch cycles are not compared.
"""

from __future__ import annotations

import csv
import math
import os
from pathlib import Path

from npusched.errors import ConfigError
from npusched.models.ir import Layer, LayerKind, Network, make_network

__all__ = ["from_scalesim", "scalesim_output_size"]

#: Header words (lower case, spaces removed) that mark a GEMM (``mnk``) topology.
_GEMM_HEADER = ("m", "n", "k")


def scalesim_output_size(size: int, kernel: int, stride: int) -> int:
    """SCALE-Sim's output size along one axis: ``ceil((size - kernel + stride) / stride)``
    (no padding)."""
    return math.ceil((size - kernel + stride) / stride)


def _cells(row: list[str]) -> list[str]:
    """A row's cells, stripped, without the empty cell SCALE-Sim's trailing comma leaves."""
    cells = [c.strip() for c in row]
    while cells and cells[-1] == "":
        cells.pop()
    return cells


def _sparsity(p: Path, line: int, col: int, cell: str) -> tuple[int, int] | None:
    """The ``(N, M)`` of an ``N:M`` sparsity cell; ``None`` for a trailing comment or an empty
    cell (ignored, as SCALE-Sim ignores them); a plain number or a malformed ratio is an error."""
    text = cell.strip()
    if ":" in text:
        parts = text.split(":")
        try:
            n, m = (int(x) for x in parts)
        except ValueError:
            n, m = 0, 0
        if len(parts) != 2 or not 1 <= n <= m:
            raise ConfigError(
                f"{p}: line {line}: column {col} (Sparsity): not an N:M ratio with "
                f"1 <= N <= M (got {cell!r}); allowed: e.g. 1:1, 2:4"
            )
        return (n, m)
    try:
        float(text)
    except ValueError:
        return None  # a comment or an empty cell: SCALE-Sim ignores it
    raise ConfigError(
        f"{p}: line {line}: column {col} (Sparsity): SCALE-Sim 3 reads an N:M sparsity ratio "
        f"here, got the number {cell!r} (there is no column-stride column: the stride applies "
        "to both axes); allowed: an N:M ratio such as 2:4, or nothing"
    )


def from_scalesim(path: str | os.PathLike[str], name: str | None = None) -> Network:
    """Read a SCALE-Sim topology CSV (convolution or GEMM layout, see the module docstring).

    Args:
        path: the CSV file.
        name: network name (default: the file's stem).

    Raises:
        ConfigError: unreadable file, no layers, a row with too few or non-integer fields, a
            filter larger than its input (SCALE-Sim refuses these too), or a sparsity cell that
            is a number or a malformed ``N:M``; names the 1-based line and the column.
    """
    p = Path(path)
    try:
        with p.open(newline="", encoding="utf-8-sig") as f:
            rows = list(csv.reader(f))
    except OSError as e:
        raise ConfigError(f"{p}: cannot read the topology: {e.strerror}") from None
    except (csv.Error, UnicodeDecodeError) as e:
        raise ConfigError(f"{p}: not a CSV topology: {e}") from None
    lines = [(i + 1, _cells(r)) for i, r in enumerate(rows) if _cells(r)]
    if not lines:
        raise ConfigError(f"{p}: empty topology (no header, no layers)")
    header = [h.lower().replace(" ", "") for h in lines[0][1]]
    gemm = tuple(header[1:4]) == _GEMM_HEADER
    columns = (
        ["M", "N", "K"]
        if gemm
        else [
            "IFMAP Height",
            "IFMAP Width",
            "Filter Height",
            "Filter Width",
            "Channels",
            "Num Filter",
            "Strides",
        ]
    )
    layers: list[Layer] = []
    seen: set[str] = set()
    sparsity_col = len(columns) + 2  # 1-based column of the N:M cell
    for line, cells in lines[1:]:
        if len(cells) < 1 + len(columns):
            raise ConfigError(
                f"{p}: line {line}: {len(cells) - 1} numbers, expected {len(columns)} "
                f"({', '.join(columns)})"
            )
        values: list[int] = []
        for col, cell in zip(columns, cells[1 : 1 + len(columns)], strict=True):
            try:
                v = int(cell)
            except ValueError:
                raise ConfigError(
                    f"{p}: line {line}: column {col!r}: not an integer (got {cell!r})"
                ) from None
            if v < 1:
                raise ConfigError(f"{p}: line {line}: column {col!r}: must be >= 1 (got {v})")
            values.append(v)
        extra = cells[1 + len(columns)] if len(cells) > 1 + len(columns) else ""
        sparsity = _sparsity(p, line, sparsity_col, extra)
        base = cells[0] or f"layer{len(layers)}"
        if gemm:
            m, n, k = values[:3]
            h, w, r, s, c, filters, sh, sw = m, k, 1, k, 1, n, 1, 1
        else:
            h, w, r, s, c, filters, sh = values[:7]
            sw = sh
        if r > h or s > w:
            raise ConfigError(f"{p}: line {line}: filter {r}x{s} larger than the input {h}x{w}")
        depthwise = not gemm and "DP" in base
        names = [f"{base}Channel_{i}" for i in range(c)] if depthwise else [base]
        cin = 1 if depthwise else c
        ho, wo = scalesim_output_size(h, r, sh), scalesim_output_size(w, s, sw)
        m_rows, k_red = ho * wo, r * s * cin
        attrs: dict[str, object] = {
            "scalesim": {"ifmap": (h, w), "filter": (r, s), "stride": (sh, sw)}
        }
        if sparsity is not None:
            attrs["sparsity"] = sparsity
        if depthwise:
            attrs["depthwise_of"] = base
        for lname in names:
            if lname in seen:
                lname = f"{lname}_{line}"
            seen.add(lname)
            layers.append(
                Layer(
                    lname,
                    LayerKind.FC if gemm else LayerKind.CONV,
                    m=m_rows,
                    k=k_red,
                    n=filters,
                    input_elems=h * w * cin,
                    output_elems=m_rows * filters,
                    weight_elems=k_red * filters,
                    params=k_red * filters,
                    attrs=attrs,
                )
            )
    if not layers:
        raise ConfigError(f"{p}: no layers after the header")
    return make_network(
        name or p.stem, layers, meta={"source": "scalesim", "layout": "gemm" if gemm else "conv"}
    )
