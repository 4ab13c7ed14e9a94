"""The Planaria suite's two routes draw the same samples (issue 29): the suite as a sweep
(``npusched sweep planaria.toml``) runs, at seed ``i`` of grid point (scenario, QoS), the
reproduction's workload instance ``i`` of that (scenario, QoS) at Fig. 13-15's fixed rate,
request by request, for both systems."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from npusched.experiments.config import parse_config
from npusched.experiments.runner import build_requests
from npusched.experiments.studies.planaria.points import reference_rate, workload_instance
from npusched.experiments.suite_files import packaged_suite, parse_suite, suite_sweep_data
from npusched.experiments.sweep import parse_experiment


def _suite(seed: int) -> object:
    data = tomllib.loads(packaged_suite("planaria").read_text())
    data.pop("quick")
    data.update(scenarios=["A", "C"], qos_levels=["S", "H"])
    data["setup"].update(n_requests=40, instances=3, seed=seed)
    return parse_suite(data, "tiny.toml")


@pytest.mark.parametrize("seed", [0, 7])
def test_sweep_seed_i_is_reproduction_instance_i(seed: int) -> None:
    suite = _suite(seed)
    st = suite.mt_setup()  # type: ignore[attr-defined]
    exp = parse_experiment(suite_sweep_data(suite), "tiny.yaml")  # type: ignore[arg-type]
    assert len(exp.points) == 2 * 4 * 3  # systems x (scenario, QoS) x instances
    assert sorted({p.seed for p in exp.points}) == [0, 1, 2]
    for p in exp.points:
        w, q = str(p.params["workload"]).split("/")
        cfg = parse_config(p.config, source="point")
        got = build_requests(cfg, Path("."))
        rate = reference_rate(w, st.load, benchmarks=st.benchmarks, depthwise=st.depthwise)
        want = workload_instance(st, w, q, rate, p.seed)
        assert len(got) == len(want) == st.n_requests
        where = f"{p.params['system']} {w}/{q} instance {p.seed}"
        for a, b in zip(got, want, strict=True):
            assert (a.id, a.network, a.priority, a.batch) == (b.id, b.network, b.priority, b.batch), where
            assert a.arrival_s == b.arrival_s, where
            assert a.slo_s == b.slo_s, where


def test_instances_differ_across_seeds_and_points() -> None:
    """The stream separates instances and grid points (not one draw reused everywhere)."""
    exp = parse_experiment(suite_sweep_data(_suite(0)), "tiny.yaml")  # type: ignore[arg-type]
    firsts = {
        # the first five arrivals (the artifact's gaps put the first request at 0)
        (str(p.params["workload"]), p.seed): tuple(
            r.arrival_s
            for r in build_requests(parse_config(p.config, source="point"), Path("."))[:5]
        )
        for p in exp.points
    }
    assert len(set(firsts.values())) == len(firsts)
