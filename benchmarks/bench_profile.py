"""How long compiling a profile takes: ResNet-50 (and others) on ``prema-npu`` for batch 1..16.

Run ``python benchmarks/bench_profile.py`` (add ``--json`` for machine-readable output). The
compile is uncached here (``cache=False`` bypasses the in-process profile cache), so the figure
is the cost of one cold compile: the vectorised Algorithm 1 over every (batch size, layer) plus
prefix sums.
:func:`bench_profile` returns the same figures as a dict.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Sequence
from typing import Any

from npusched.hardware import compile_profile, get_device
from npusched.models.zoo import get_network

DEFAULT_NETWORKS = ("resnet-50", "resnet-152", "googlenet", "vgg-16", "mobilenet-v1")


def _time_compile(network: str, batches: Sequence[int], repeats: int) -> float:
    """Best-of-``repeats`` seconds of one cold ``compile_profile``."""
    net = get_network(network)  # build the network (and its columns) outside the timing
    _ = net.columns
    dev = get_device("prema-npu")
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        compile_profile(net, dev, batches, cache=False)
        best = min(best, time.perf_counter() - t0)
    return best


def bench_profile(
    networks: Sequence[str] = DEFAULT_NETWORKS, max_batch: int = 16, repeats: int = 20
) -> dict[str, Any]:
    """Cold compile time of each network for batch sizes ``1..max_batch``.

    Returns:
        ``{"batch_sizes": n, "compile_ms": {network: ms}, "cached_us": us,
        "layers": {network: L}}``: best-of-``repeats`` milliseconds per cold compile, and the
        microseconds of a cache hit (ResNet-50).
    """
    batches = tuple(range(1, max_batch + 1))
    compile_ms = {n: _time_compile(n, batches, repeats) * 1e3 for n in networks}
    net, dev = get_network("resnet-50"), get_device("prema-npu")
    compile_profile(net, dev, batches)
    hits = 1000
    t0 = time.perf_counter()
    for _ in range(hits):
        compile_profile(net, dev, batches)
    cached_us = (time.perf_counter() - t0) / hits * 1e6
    return {
        "batch_sizes": len(batches),
        "compile_ms": compile_ms,
        "cached_us": cached_us,
        "layers": {n: len(get_network(n).layers) for n in networks},
    }


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--networks", nargs="+", default=list(DEFAULT_NETWORKS))
    ap.add_argument("--max-batch", type=int, default=16)
    ap.add_argument("--repeats", type=int, default=20)
    ap.add_argument("--json", action="store_true", help="print JSON")
    args = ap.parse_args(argv)
    res = bench_profile(args.networks, args.max_batch, args.repeats)
    if args.json:
        print(json.dumps(res, indent=2))
        return
    print(f"compile_profile on prema-npu, batch sizes 1..{args.max_batch} (best of {args.repeats})")
    for name, ms in res["compile_ms"].items():
        print(f"  {name:<14} {res['layers'][name]:>4} layers  {ms:8.3f} ms per compile")
    print(f"  cache hit (resnet-50): {res['cached_us']:.1f} us")


if __name__ == "__main__":
    main()
