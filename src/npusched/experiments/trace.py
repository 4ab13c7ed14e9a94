"""``npusched trace CONFIG --out trace.json``: one run's timeline as Chrome trace / Perfetto JSON.

The run is the one ``npusched run CONFIG`` simulates, recorded with its timeline; the file is
:func:`npusched.report.timeline.write_chrome_trace`'s (jobs on the accelerator track, their
save/restore/switch segments, each segment's resource, units and frequency in its ``args``,
arrivals, the requests-in-system counter and one track per request), written atomically.

It lives in ``experiments`` (it runs a simulation through :mod:`npusched.experiments.runner`);
``report`` only renders: no arrow runs from ``report`` up to the runner.
"""

from __future__ import annotations

import os
from pathlib import Path

from npusched.errors import ConfigError

__all__ = ["trace_config_file"]


def trace_config_file(
    config: str | os.PathLike[str],
    out: str | os.PathLike[str],
    *,
    seed: int | None = None,
) -> tuple[Path, int]:
    """Simulate ``config`` (seed overridden by ``seed``) and write its Chrome trace to ``out``.

    Returns:
        The trace's path and the number of timeline segments in it.
    """
    from npusched._io import check_out_file
    from npusched.experiments.config import load_config
    from npusched.experiments.runner import run_config
    from npusched.report.timeline import write_chrome_trace

    p = Path(config)
    cfg = load_config(p)
    if seed is not None:
        if seed < 0:
            raise ConfigError(f"--seed must be >= 0, got {seed}")
        cfg = cfg.model_copy(update={"seed": int(seed)})
    o = Path(out)
    if o.is_dir():
        raise ConfigError(f"{o}: --out must be a file (e.g. trace.json), but it is a directory")
    if not o.parent.is_dir():
        raise ConfigError(f"{o}: --out's directory {o.parent} does not exist")
    check_out_file(o)  # an unwritable directory (e.g. /proc) fails before the simulation
    res = run_config(cfg, base_dir=p.parent, source=str(p), timeline=True)
    timeline = res.result.timeline or []
    meta = {
        "config": cfg.name,
        "policy": cfg.policy.name,
        "seed": cfg.seed,
        "workload": cfg.workload.kind,
    }
    path = write_chrome_trace(timeline, res.records, o, device=cfg.hardware.device, metadata=meta)
    return path, len(timeline)
