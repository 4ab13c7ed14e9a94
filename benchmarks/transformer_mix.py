"""What PREMA's scheduler does with transformers beside CNNs: ``examples/transformer_mix.toml``
under NP-FCFS and P-PREMA over many seeds.

Run ``python benchmarks/transformer_mix.py`` (``--seeds 25`` by default, ``--json`` for
machine-readable output). Prints each network's isolated latency on ``prema-npu`` at the
config's batch sizes, then per policy the mean over seeds of ANTT, STP, fairness and the
high-priority p95 normalised turnaround (over the seeds that have a high-priority request),
P-PREMA's gains over NP-FCFS (ratio of the means; ANTT and p95 lower is better, STP and
fairness higher), and the mean normalised turnaround and preemptions of the transformer and
CNN requests. :func:`compare` returns the figures.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from npusched.experiments.config import PolicyConfig, load_config
from npusched.experiments.runner import run_config
from npusched.hardware import compile_profile, get_device
from npusched.models.zoo import get_network

CONFIG = Path(__file__).resolve().parent.parent / "examples" / "transformer_mix.toml"
POLICIES: dict[str, dict[str, Any]] = {"NP-FCFS": {}, "P-PREMA": {"mechanism": "dynamic"}}
METRICS = ("antt", "stp", "fairness", "p95_high_priority_norm")
TRANSFORMERS = frozenset({"bert-base", "bert-base@128", "vit-b16", "deit-s", "swin-t"})


def isolated_latencies(config: Path = CONFIG) -> dict[str, dict[int, float]]:
    """Seconds of uninterrupted execution of each configured network at each batch size."""
    cfg = load_config(config)
    dev = get_device(cfg.hardware.device, **cfg.hardware.params)
    batches = tuple(cfg.workload.batch_sizes)  # type: ignore[union-attr]
    out: dict[str, dict[int, float]] = {}
    for name in cfg.workload.models:  # type: ignore[union-attr]
        prof = compile_profile(get_network(name), dev, batches)
        out[name] = {b: prof.isolated_latency(b) for b in batches}
    return out


def compare(seeds: int = 25, config: Path = CONFIG) -> dict[str, Any]:
    """Per policy, the mean of each metric over seeds ``0..seeds-1``, and P-PREMA's gains."""
    base = load_config(config)
    means: dict[str, dict[str, float]] = {}
    family: dict[str, dict[str, dict[str, float]]] = {}
    for policy, params in POLICIES.items():
        runs, records = [], []
        for seed in range(seeds):
            cfg = base.model_copy(
                update={"seed": seed, "policy": PolicyConfig(name=policy, params=params)}
            )
            out = run_config(cfg, base_dir=config.parent)
            runs.append(out.summary)
            records.append(out.records)
        # nanmean: a seed without a high-priority request has no high-priority p95
        means[policy] = {m: float(np.nanmean([r[m] for r in runs])) for m in METRICS}
        rec = pd.concat(records, ignore_index=True)
        rec["family"] = np.where(rec["network"].isin(TRANSFORMERS), "transformer", "cnn")
        rec["ntt"] = rec["latency_s"] / rec["isolated_s"]
        family[policy] = {
            fam: {
                "requests": float(len(g)),
                "mean_ntt": float(g["ntt"].mean()),
                "preemptions_per_request": float(g["preemptions"].mean()),
            }
            for fam, g in rec.groupby("family")
        }
    fc, pp = means["NP-FCFS"], means["P-PREMA"]
    gains = {
        "antt": fc["antt"] / pp["antt"],
        "stp": pp["stp"] / fc["stp"],
        "fairness": pp["fairness"] / fc["fairness"],
        "p95_high_priority_norm": fc["p95_high_priority_norm"] / pp["p95_high_priority_norm"],
    }
    return {"seeds": seeds, "means": means, "p_prema_gain": gains, "by_family": family}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=25)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    iso = isolated_latencies()
    res = compare(args.seeds)
    if args.json:
        print(json.dumps({"isolated_s": iso, **res}, indent=2))
        return
    print("isolated latency (ms) at batch", ", ".join(str(b) for b in next(iter(iso.values()))))
    for name, row in iso.items():
        print(f"  {name:16s}", "  ".join(f"{v * 1e3:8.2f}" for v in row.values()))
    print(f"mean over {res['seeds']} seeds:", "  ".join(f"{m:>22s}" for m in METRICS))
    for policy, row in res["means"].items():
        print(f"  {policy:16s}", "  ".join(f"{row[m]:22.3f}" for m in METRICS))
    print("  P-PREMA gain    ", "  ".join(f"{res['p_prema_gain'][m]:21.2f}x" for m in METRICS))
    print("by family (all seeds):   requests  mean NTT  preemptions/request")
    for policy, fams in res["by_family"].items():
        for fam, row in fams.items():
            print(
                f"  {policy:8s} {fam:12s} {row['requests']:8.0f} {row['mean_ntt']:9.2f} "
                f"{row['preemptions_per_request']:20.2f}"
            )


if __name__ == "__main__":
    main()
