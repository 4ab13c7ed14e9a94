"""The power pieces as the loops record them (:class:`PowerColumns`, thirteenth round):
``SimResult.power`` is the same pieces, and every power result read from the columns is the
bits of the same result read from the piece list, on both loops and on overlapping pieces."""

from __future__ import annotations

import pytest

from npusched.bench.families import family_configs
from npusched.experiments.config import parse_config
from npusched.experiments.runner import power_summary, run_config
from npusched.metrics.power import peak_piece_power_w, piece_power_timeline
from npusched.sim.common import PowerColumns, PowerPiece
from npusched.sim.engine import power_timeline


@pytest.mark.parametrize("family", ["FCFS", "HPF", "PREMA", "Planaria", "DFS"])
def test_columns_and_pieces_give_the_same_bits(family: str) -> None:
    res = run_config(parse_config(family_configs(200)[family], source=family)).result
    cols = res.power_columns
    assert isinstance(cols, PowerColumns) and len(cols) > 0
    pieces = res.power
    assert pieces is not None and pieces is res.power  # made once, on first read
    assert all(type(p) is PowerPiece for p in pieces)
    assert pieces == cols.pieces() and len(pieces) == len(cols)
    assert [p.start_s for p in pieces] == list(cols.start_s)
    assert [p.plan for p in pieces] == cols.plan
    for g, w in zip(piece_power_timeline(cols), piece_power_timeline(pieces), strict=True):
        assert g.tobytes() == w.tobytes()
    assert peak_piece_power_w(cols).hex() == peak_piece_power_w(list(pieces)).hex()
    assert power_summary(res)["peak_power_w"].hex() == peak_piece_power_w(pieces).hex()
    for r in {p.resource for p in pieces}:
        mine = [p for p in pieces if p.resource == r]
        assert cols.only(r).pieces() == mine
        for g, w in zip(res.power_timeline(r), power_timeline(mine), strict=True):
            assert g.tobytes() == w.tobytes()



@pytest.mark.parametrize("family", ["HPF", "HaX-CoNN"])
def test_columns_are_read_as_columns(family: str) -> None:
    """The power metrics recognise the loop's columns (``vec`` floats, not lists) and read
    them as the pieces: whether every plan draws nothing (HaX-CoNN's profiles: 0 W, which
    skips the power table) is the same answer from the columns and from the piece list."""
    import numpy as np

    from npusched.metrics.power import _columns, _draws_nothing, _is_columns

    res = run_config(parse_config(family_configs(200)[family], source=family)).result
    cols = res.power_columns
    assert cols is not None and _is_columns(cols) and not _is_columns(res.power)
    assert _draws_nothing(cols) is _draws_nothing(list(res.power)) is (family == "HaX-CoNN")
    got, want = _columns(cols), _columns(list(res.power))
    assert got is not None and want is not None
    for g, w in zip(got[:5], want[:5], strict=True):
        assert np.asarray(g).tobytes() == np.asarray(w).tobytes()
    assert list(got.plans) == list(want.plans)
