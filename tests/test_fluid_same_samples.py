"""The Fluid suite's two routes draw the same samples (issue 29): the suite as a sweep
(``npusched sweep fluid.toml``) runs, at seed ``i`` of grid point (setup, policy, rate), the
reproduction's samples of that (model, rate, seed ``i``): arrival times and exit indices, request
by request (:func:`npusched.experiments.studies.fluid.serving.serving_requests`)."""

from __future__ import annotations

import tomllib
from pathlib import Path

import numpy as np

from npusched.experiments.config import parse_config
from npusched.experiments.runner import build_requests, with_exits
from npusched.experiments.studies.fluid.serving import _model, serving_requests
from npusched.experiments.suite_files import packaged_suite, parse_suite, suite_sweep_data
from npusched.experiments.sweep import parse_experiment


def _suite() -> object:
    data = tomllib.loads(packaged_suite("fluid").read_text())
    data.pop("quick")
    data.update(seeds=2, n_samples=40)
    for st in data["serving_setups"]:
        st["rates"] = st["rates"][:2]
    return parse_suite(data, "tiny.toml")


def _sweep_points() -> list[object]:
    return parse_experiment(suite_sweep_data(_suite()), "tiny.yaml").points  # type: ignore[arg-type]


def test_sweep_seed_i_is_reproduction_seed_i() -> None:
    points = _sweep_points()
    assert len(points) == 2 * 9 * 2 * 2  # setups x policies x rates x seeds
    assert sorted({p.seed for p in points}) == [0, 1]  # type: ignore[attr-defined]
    cache: dict[tuple[str, float, int], list[tuple[float, int | None]]] = {}
    for p in points:
        cfg = parse_config(p.config, source="point")  # type: ignore[attr-defined]
        got, _ = with_exits(cfg, build_requests(cfg, Path(".")), "point")
        model, board = str(p.params["setup"]).split("/")  # type: ignore[attr-defined]
        rate = float(p.params["workload.rate_per_s"])  # type: ignore[attr-defined]
        key = (model, rate, cfg.seed)
        if key not in cache:
            slo = float(cfg.workload.qos[model])  # type: ignore[union-attr,index]
            want = serving_requests(_model(model, board), rate, slo, cfg.seed, 40)
            cache[key] = [(r.arrival_s, r.exit) for r in want]
            assert all(r.slo_s == slo and r.network == model for r in want)
        where = f"{p.params} seed {cfg.seed}"  # type: ignore[attr-defined]
        assert [(r.arrival_s, r.exit) for r in got] == cache[key], where
        assert [r.id for r in got] == list(range(40)), where


def test_samples_differ_across_seeds_and_rates_and_exits_vary() -> None:
    """The stream separates seeds and rates (not one draw reused), and the exits are drawn."""
    m = _model("resnet-50", "zc706")
    draws = {
        (rate, seed): serving_requests(m, rate, 0.4, seed, 200)
        for rate in (5.0, 10.0)
        for seed in (0, 1)
    }
    firsts = {k: v[0].arrival_s * k[0] for k, v in draws.items()}  # rate-scaled: not one draw
    assert len(set(firsts.values())) == len(firsts)
    exits = np.array([r.exit for r in draws[(5.0, 0)]])
    assert set(exits.tolist()) == {0, 1, 2, 3}


def test_both_routes_give_the_same_point_metrics() -> None:
    """One small point (ResNet-50 on the ZC706, FluidB on its own DSE design, 10 samples/s, seed
    1, 40 samples): the sweep's run and the reproduction's give the same latencies."""
    from npusched.experiments.runner import run_config
    from npusched.experiments.studies.fluid.serving import run_point

    p = next(
        p
        for p in _sweep_points()
        if p.params  # type: ignore[attr-defined]
        == {"setup": "resnet-50/zc706", "policy": "FluidB", "workload.rate_per_s": 10.0,
            "workload.seed_stream": "[10000]"}
        and p.seed == 1  # type: ignore[attr-defined]
    )
    out = run_config(parse_config(p.config, source="point"))  # type: ignore[attr-defined]
    lat = out.records.sort_values("id")["latency_s"].to_numpy()
    want = run_point("resnet-50", "zc706", "FluidB", 10.0, 0.4, 1, 40)
    assert float(np.mean(lat)) == want.avg_latency_s
    assert float(np.percentile(lat, 99)) == want.p99_latency_s
    assert float(np.mean(lat > 0.4)) == want.violation_rate
    assert out.summary["mean_latency_s"] == want.avg_latency_s
