"""Which term of ``npusched validate``'s prediction misses: an offline replay of a validate
output folder through the simulator, adding one measured term at a time.

For every point it predicts the LoadGen arrival instants that were really issued, with the
policy of the point, on profiles built from the folder's ``calibration.json`` and:

* ``calibrated``: the calibrated group seconds alone;
* ``+dispatch``: plus the executor's mean gap between groups measured in that run
  (``terms.dispatch_overhead_s_mean``), added to every group;
* ``+dispatch+admit``: plus the admission delay measured in that run (the median from issue to
  first start of the requests that found the worker idle), by which every arrival is delayed;
* ``speed+dispatch+admit``: the group seconds scaled by the run's median ``exec_s`` over the
  calibrated isolated seconds (the machine's speed during the point), plus both terms;
* ``request+dispatch+admit``: every request's own executed seconds (its calibrated groups
  scaled by its ``exec_s`` over its calibrated isolated seconds), plus both terms.

Prints per point: the median and p90 per-request latency error and the ANTT and p99 errors (%).

    python benchmarks/validate_terms.py VALIDATE_OUT_DIR
"""

from __future__ import annotations

import argparse
import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from npusched.hardware.profile import Profile
from npusched.models.ir import Layer, LayerKind, Network, make_network
from npusched.realexec.validate import (
    _requests_of,
    admission_s,
    point_metrics,
    predict,
    request_errors,
)


def _chain(name: str, n: int) -> Network:
    layers = [
        Layer(
            name=f"g{i}",
            kind=LayerKind.VECTOR,
            output_elems=1,
            bytes_per_elem=4,
            params=0,
            inputs=(f"g{i - 1}",) if i else (),
        )
        for i in range(n)
    ]
    return make_network(name, layers, input_shape=(3, 8, 8))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folder", type=Path)
    args = ap.parse_args()
    root: Path = args.folder
    cal = json.loads((root / "calibration.json").read_text())
    summ = json.loads((root / "summary.json").read_text())
    base = {n: np.array(v["latency_s"]["1"], dtype=np.float64) for n, v in cal["networks"].items()}
    live = {n: np.array(v["live_bytes"], dtype=np.int64) for n, v in cal["networks"].items()}
    nets = {n: _chain(n, len(b)) for n, b in base.items()}

    def run(pol: str, m: pd.DataFrame, scale: Any = 1.0, d: float = 0.0, w: float = 0.0) -> Any:
        est = dict(zip(m["id"].astype(int), m["estimated_s"].astype(float), strict=True))
        profs, reqs = {}, []
        for r in _requests_of(m):
            key = f"{r.network}#{r.id}"
            s = scale[r.id] if isinstance(scale, dict) else scale
            profs[key] = Profile.from_tables(
                nets[r.network],
                device_name="cpu-ort",
                batch_sizes=(1,),
                latency_s=(base[r.network] * s + d)[None, :],
                frequency_hz=1e9,
                memory_bandwidth_bps=cal["copy_bandwidth_bps"],
                checkpoint_bytes=live[r.network],
            )
            reqs.append(replace(r, network=key))
        p = predict(profs, pol, reqs, estimator=lambda r, _p: est[r.id], admit_s=w)
        p = p.set_index("id").loc[m["id"]].reset_index()
        p["isolated_s"] = m["isolated_s"].to_numpy()
        p["network"] = m["network"].to_numpy()
        return p

    for pt in summ["points"]:
        pol, load = pt["policy"], pt["load"]
        m = pd.read_parquet(root / f"load{load:g}" / pol / "measured.parquet")
        iso = m["network"].map({n: float(b.sum()) for n, b in base.items()}).to_numpy()
        ratio = m["exec_s"].to_numpy() / iso
        d = float(pt["terms"]["dispatch_overhead_s_mean"])
        w = admission_s(m)
        sp = float(np.median(ratio))
        mm = point_metrics(m)
        row: dict[str, Any] = {
            "policy": pol,
            "load": load,
            "dispatch_ms": round(d * 1e3, 3),
            "admit_ms": round(w * 1e3, 3),
            "speed": round(sp, 3),
        }
        for lab, kw in (
            ("calibrated", {}),
            ("+dispatch", {"d": d}),
            ("+dispatch+admit", {"d": d, "w": w}),
            ("speed+dispatch+admit", {"scale": sp, "d": d, "w": w}),
            (
                "request+dispatch+admit",
                {"scale": dict(zip(m["id"].astype(int), ratio, strict=True)), "d": d, "w": w},
            ),
        ):
            p = run(pol, m, **kw)
            e, pm = request_errors(m, p), point_metrics(p)
            row[lab] = [
                round(e["median_abs_pct"], 1),
                round(e["p90_abs_pct"], 1),
                round(abs(pm["antt"] - mm["antt"]) / mm["antt"] * 100, 1),
                round(abs(pm["p99_s"] - mm["p99_s"]) / mm["p99_s"] * 100, 1),
            ]
        print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
