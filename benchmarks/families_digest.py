"""Before/after check of the engine's results: a digest of every ``families`` config (issue 25)
through ``run_config`` and of the ``haxconn`` scenario, written as JSON for ``cmp``.

    PYTHONPATH=A/src python benchmarks/families_digest.py a.json
    PYTHONPATH=B/src python benchmarks/families_digest.py b.json
    cmp a.json b.json

Each family's config at 600 requests (machine families at their bench share), loads 0.9 and 1.5,
seeds 0 and 1, and seed 0 again with the timeline recorded (every 1/500th segment kept); each
reduced by ``tests/golden_engine.py``'s ``digest`` (every column's bytes hashed, exact scalars,
the power timeline, the summary). The sixth round's machine-path changes left all 61 equal.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from golden_engine import digest
from npusched.bench.families import family_configs
from npusched.bench.haxconn import haxconn_setup
from npusched.experiments.config import parse_config
from npusched.experiments.runner import run_config


def main(out_path: str) -> None:
    out = {}
    for load in (0.9, 1.5):
        for fam, d in family_configs(600, load=load).items():
            for seed, timeline in ((0, False), (0, True), (1, False)):
                cfg = parse_config(dict(d, seed=seed), source=fam)
                o = run_config(cfg, timeline=timeline)
                dg = digest(o.result, o.summary)
                tl = o.result.timeline
                if timeline and tl is not None:
                    dg["timeline"] = [repr(s) for s in tl][:: max(1, len(tl) // 500)]
                    dg["timeline_segments"] = len(tl)
                out[f"{fam}/{load}/{seed}/{timeline}"] = dg
    sim, reqs = haxconn_setup(requests=400, seed=0)
    out["haxconn"] = digest(sim.run(reqs))
    Path(out_path).write_text(json.dumps(out, indent=1, sort_keys=True, default=str))
    print(f"{len(out)} digests -> {out_path}")


if __name__ == "__main__":
    main(sys.argv[1])
