"""A run leaves no cyclic garbage and runs with the cyclic collector off (issue 25: a full
collection landing inside a run cost more than the run; the families bench read it as a
regression of whichever family it landed in)."""

from __future__ import annotations

import gc

import pytest

from npusched.sim.engine import PowerPiece, Simulator, _Run
from npusched.workloads.request import Request


@pytest.mark.parametrize("fam", ["FCFS", "SJF", "RRB", "PREMA", "Planaria", "FluidB", "DFS"])
def test_run_config_leaves_no_cycles_from_the_engine(fam: str) -> None:
    from npusched.bench.families import family_configs
    from npusched.experiments.config import parse_config
    from npusched.experiments.runner import run_config

    cfg = parse_config(family_configs(60)[fam], source=fam)
    gc.collect()
    seen: list[bool] = []
    plain = Simulator.run

    def spy(self: Simulator, *a: object, **k: object) -> object:
        out = plain(self, *a, **k)  # type: ignore[arg-type]
        seen.append(gc.isenabled())
        return out

    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        Simulator.run = spy  # type: ignore[method-assign]
        out = run_config(cfg)
        assert len(out.result) > 0
        del out
        gc.collect()
        engine_types = (Simulator, _Run, Request, PowerPiece)
        leaked = [type(o).__name__ for o in gc.garbage if isinstance(o, engine_types)]
    finally:
        Simulator.run = plain  # type: ignore[method-assign]
        gc.set_debug(0)
        gc.garbage.clear()
    assert leaked == []
    # run_config holds the collector off around the whole run (the engine keeps a caller's
    # state: still off when it returns inside run_config); it is back on afterwards
    assert seen == [False] and gc.isenabled()


def test_collector_state_restored_on_error_and_when_off() -> None:
    from npusched.errors import NpuschedError
    from npusched.policies.temporal import FCFS

    sim = Simulator({}, FCFS())
    bad = [Request(id=0, network="no-such-net", batch=1, arrival_s=0.0)]
    assert gc.isenabled()
    with pytest.raises(NpuschedError):
        sim.run(bad)
    assert gc.isenabled()
    gc.disable()
    try:
        with pytest.raises(NpuschedError):
            sim.run(bad)
        assert not gc.isenabled()  # a caller's choice is kept
    finally:
        gc.enable()
