"""SCALE-Sim topology CSVs as networks: ``npusched models import FILE.csv``.

SCALE-Sim (v2/v3) describes a workload as one CSV row per layer, in one of two layouts, told
apart by the header:

* **convolution** (the default): ``Layer name, IFMAP Height, IFMAP Width, Filter Height,
  Filter Width, Channels, Num Filter, Strides,`` (an optional ninth number is a separate column
  stride, as SCALE-Sim v3 accepts);
* **GEMM** (``Layer, M, N, K,``; SCALE-Sim's ``mnk`` inputs): SCALE-Sim maps each row onto the
  convolution ``IFMAP M x K, filter 1 x K, 1 channel, N filters, stride 1``, i.e. the GEMM
  ``(M x K) . (K x N)``.

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


def from_scalesim(path: str | os.PathLike[str], name: str | None = None) -> Network:
    """Read a SCALE-Sim topology CSV (convolution or GEMM layout, see the module docstring).

    Args:
        path: the CSV file.
        name: network name (default: the file's stem).

    Raises:
        ConfigError: unreadable file, no layers, a row with too few or non-integer fields, or
            a filter larger than its input (SCALE-Sim refuses these too); names the 1-based
            line and the column.
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
    for line, cells in lines[1:]:
        if len(cells) < 1 + len(columns):
            raise ConfigError(
                f"{p}: line {line}: {len(cells) - 1} numbers, expected {len(columns)} "
                f"({', '.join(columns)})"
            )
        values: list[int] = []
        for col, cell in zip(
            [*columns, "column stride"], cells[1 : 2 + len(columns)], strict=False
        ):
            try:
                v = int(cell)
            except ValueError:
                raise ConfigError(
                    f"{p}: line {line}: column {col!r}: not an integer (got {cell!r})"
                ) from None
            if v < 1:
                raise ConfigError(f"{p}: line {line}: column {col!r}: must be >= 1 (got {v})")
            values.append(v)
        lname = cells[0] or f"layer{len(layers)}"
        if lname in seen:
            lname = f"{lname}_{line}"
        seen.add(lname)
        if gemm:
            m, n, k = values[:3]
            h, w, r, s, c, filters, sh, sw = m, k, 1, k, 1, n, 1, 1
        else:
            h, w, r, s, c, filters, sh = values[:7]
            sw = values[7] if len(values) > 7 else sh
        if r > h or s > w:
            raise ConfigError(f"{p}: line {line}: filter {r}x{s} larger than the input {h}x{w}")
        ho, wo = scalesim_output_size(h, r, sh), scalesim_output_size(w, s, sw)
        m_rows, k_red = ho * wo, r * s * c
        layers.append(
            Layer(
                lname,
                LayerKind.FC if gemm else LayerKind.CONV,
                m=m_rows,
                k=k_red,
                n=filters,
                input_elems=h * w * c,
                output_elems=m_rows * filters,
                weight_elems=k_red * filters,
                params=k_red * filters,
                attrs={"scalesim": {"ifmap": (h, w), "filter": (r, s), "stride": (sh, sw)}},
            )
        )
    if not layers:
        raise ConfigError(f"{p}: no layers after the header")
    return make_network(
        name or p.stem, layers, meta={"source": "scalesim", "layout": "gemm" if gemm else "conv"}
    )
