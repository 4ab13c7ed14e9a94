"""Golden fixtures of the engine's results, frozen before the engine work of issue 25.

Each case builds a run with every policy and workload parameter spelled out (no default that
another change could move), runs it and reduces the result to a digest: a hash of every
per-request column's bytes, the exact scalars (``float.hex``), the per-resource figures, the
power timeline (when recorded) and, for ``run_config`` cases, the summary. The digests live in
``tests/data/golden_engine.json``; ``tests/test_golden_engine.py`` checks every case against it.

Regenerate (only when a result changes on purpose, the cause named in the commit)::

    PYTHONPATH=src python tests/golden_engine.py --write
"""

from __future__ import annotations

import hashlib
import json
import math
import sys
import tomllib
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

DATA = Path(__file__).resolve().parent / "data" / "golden_engine.json"

#: PREMA's token parameters, written out (the defaults of today, frozen here).
PREMA_PARAMS: dict[str, Any] = {
    "period_s": 0.25e-3,
    "token_levels": (1, 3, 9),
    "threshold": ">=",
    "include_running": True,
    "tokens": "cumulative",
}
PREMA_TOML = (
    'period_s = 0.00025, token_levels = [1, 3, 9], threshold = ">=", '
    'include_running = true, tokens = "cumulative"'
)


def _hash(a: Any) -> str:
    arr = np.asarray(a)
    if arr.dtype == object:
        data = "\x1f".join(map(str, arr.tolist())).encode()
    else:
        data = np.ascontiguousarray(arr).tobytes() + str(arr.dtype).encode()
    return hashlib.sha256(data).hexdigest()[:20]


def _exact(x: Any) -> Any:
    if isinstance(x, bool) or x is None or isinstance(x, str):
        return x
    if isinstance(x, int | np.integer):
        return int(x)
    if isinstance(x, float | np.floating):
        return float(x).hex()
    if isinstance(x, Mapping):
        return {str(k): _exact(v) for k, v in sorted(x.items())}
    if isinstance(x, list | tuple):
        return [_exact(v) for v in x]
    return repr(x)


def digest(res: Any, summary: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """A :class:`~npusched.sim.SimResult` (and a run's summary) as exact, comparable JSON."""
    out: dict[str, Any] = {
        "columns": {k: _hash(v) for k, v in sorted(res.columns.items())},
        "events": int(res.events),
        "layer_executions": int(res.layer_executions),
        "busy_s": _exact(res.busy_s),
        "makespan_s": _exact(res.makespan_s),
        "end_s": _exact(res.end_s),
        "energy_j": _exact(res.energy_j),
        "resources": _exact(res.resources or {}),
        "policy": res.policy,
    }
    if res.power is not None:
        times, watts = res.power_timeline()
        out["power"] = {"times": _hash(times), "watts": _hash(watts), "n": len(times)}
    if summary is not None:
        out["summary"] = _exact(dict(summary))
    return out


# --- run_config: one run per policy family, power recorded (the CLI's path) ---------------

_PREMA_WL = """[hardware]
device = "prema-npu"
[workload]
kind = "prema"
n_tasks = 120
models = ["alexnet", "googlenet", "mobilenet-v1", "rnn-sa", "rnn-mt1", "resnet-50"]
window_s = 0.15
batch_sizes = [1, 4]
priorities = ["low", "medium", "high"]
[sim]
preemption_point = "tile"
checkpoint_cost = true
predictor = "prema"
"""

FAMILIES: dict[str, str] = {
    "NP-FCFS": 'seed = 7\n[policy]\nname = "NP-FCFS"\n' + _PREMA_WL,
    "P-HPF": 'seed = 7\n[policy]\nname = "P-HPF"\nparams = { mechanism = "checkpoint" }\n'
    + _PREMA_WL,
    "P-SJF": 'seed = 7\n[policy]\nname = "P-SJF"\nparams = { mechanism = "checkpoint" }\n'
    + _PREMA_WL,
    "P-RRB": 'seed = 7\n[policy]\nname = "P-RRB"\n'
    'params = { mechanism = "checkpoint", quantum_s = 0.00025, period_s = 0.00025 }\n'
    + _PREMA_WL,
    "P-TOKEN": 'seed = 7\n[policy]\nname = "P-TOKEN"\n'
    f'params = {{ mechanism = "checkpoint", {PREMA_TOML} }}\n' + _PREMA_WL,
    "NP-PREMA": f'seed = 7\n[policy]\nname = "NP-PREMA"\nparams = {{ {PREMA_TOML} }}\n'
    + _PREMA_WL,
    "P-PREMA": 'seed = 7\n[policy]\nname = "P-PREMA"\n'
    f'params = {{ mechanism = "dynamic", {PREMA_TOML} }}\n' + _PREMA_WL,
    "P-PREMA-DFS": """seed = 1
power = { name = "DFS", cap_w = 33 }
[hardware]
device = "ab9"
params = { stc_efficiency = 0.029 }
[workload]
kind = "prema"
n_tasks = 24
models = ["vgg-16", "resnet-18", "resnet-50", "squeezenet"]
window_s = 0.2
batch_sizes = [1]
priorities = ["low", "medium", "high"]
[policy]
name = "P-PREMA"
"""
    + f'params = {{ mechanism = "dynamic", {PREMA_TOML} }}\n',
    "Planaria": """seed = 3
[hardware]
device = "planaria"
[workload]
kind = "poisson"
rate_per_s = 120.0
n_requests = 80
models = ["mobilenet-v1", "resnet-50", "tiny-yolov3", "googlenet"]
priorities = [1, 11]
qos = { mobilenet-v1 = 0.01, resnet-50 = 0.015, tiny-yolov3 = 0.01, googlenet = 0.015 }
[policy]
name = "Planaria"
""",
    "Planaria-DFS": """seed = 0
power = { name = "DFS", cap_w = 30 }
[hardware]
device = "planaria-dfs"
[workload]
kind = "poisson"
rate_per_s = 40.0
n_requests = 30
models = ["resnet-50", "googlenet", "mobilenet-v1", "tiny-yolov3"]
priorities = [1, 11]
qos = { resnet-50 = 0.015, googlenet = 0.015, mobilenet-v1 = 0.01, tiny-yolov3 = 0.01 }
[policy]
name = "Planaria"
""",
    "FluidB": """seed = 0
[workload]
kind = "poisson"
rate_per_s = 400.0
n_requests = 80
models = ["resnet-18"]
[policy]
name = "FluidB"
params = { slo_s = 0.05 }
""",
    "HaX-CoNN": """seed = 0
[hardware]
device = "soc"
params = { soc = "xavier" }
[workload]
kind = "poisson"
rate_per_s = 50.0
n_requests = 6
models = ["resnet-18", "googlenet"]
[policy]
name = "HaX-CoNN"
params = { soc = "xavier" }
[sim]
checkpoint_cost = false
""",
}


def family_case(name: str) -> dict[str, Any]:
    from npusched.experiments.config import parse_config
    from npusched.experiments.runner import run_config

    cfg = parse_config(tomllib.loads(FAMILIES[name]), source=f"golden:{name}")
    out = run_config(cfg)
    assert out.result.power is not None  # the CLI's path records power
    return digest(out.result, out.summary)


# --- the fast-path property workloads at load, power recorded ------------------------------

RANKED = ("NP-FCFS", "P-FCFS", "NP-HPF", "P-HPF")
RANKED_MECHANISMS = ("checkpoint", "kill", "drain", "dynamic", "dynamic-kill")
TOKEN_POLICIES = ("NP-PREMA", "P-PREMA", "NP-TOKEN", "P-TOKEN")


def load_simulator(profiles: Any, policy: Any, *, record_timeline: bool = False) -> Any:
    """The bench's engine case: ``policy`` with tile preemption, checkpoint cost, PREMA's
    predictor and power recorded (the timeline too if ``record_timeline``)."""
    from npusched.policies.temporal.predictor import make_estimator
    from npusched.sim.engine import Simulator

    return Simulator(
        profiles,
        policy,
        preemption_point="tile",
        checkpoint_cost=True,
        estimator=make_estimator("prema"),
        record_power=True,
        record_timeline=record_timeline,
    )


def _load_case(policy: Any, n: int) -> dict[str, Any]:
    from npusched.bench import bench_workload, synthetic_profiles

    profiles = synthetic_profiles(random_state=3)
    reqs = bench_workload(n, profiles, random_state=5)
    return digest(load_simulator(profiles, policy).run(reqs))


def ranked_case(name: str, mechanism: str) -> dict[str, Any]:
    from npusched.policies.base import POLICIES

    return _load_case(POLICIES.create(name, mechanism=mechanism), 600)


def token_case(name: str, rule: str) -> dict[str, Any]:
    from npusched.policies.base import POLICIES

    params = dict(PREMA_PARAMS, tokens=rule)
    if name.startswith("P-"):
        params["mechanism"] = "dynamic"
    return _load_case(POLICIES.create(name, **params), 600)


def other_case(name: str) -> dict[str, Any]:
    """SJF and RRB at load (general loop today)."""
    from npusched.policies.base import POLICIES

    params: dict[str, Any] = {}
    if name == "P-SJF":
        params = {"mechanism": "checkpoint"}
    elif name == "P-RRB":
        params = {"mechanism": "checkpoint", "quantum_s": 0.25e-3, "period_s": 0.25e-3}
    return _load_case(POLICIES.create(name, **params), 400)


# --- every bench scenario (engine run as the bench makes it, policy spelled out) ------------


def bench_case(name: str) -> dict[str, Any]:
    from npusched.bench import engine_setup

    n = {"temporal": 3_000, "prema": 1_500, "spatial": 300, "concurrent": 500}[name]
    sim, reqs = engine_setup(name, requests=n, seed=1)
    if name == "temporal":
        from npusched.policies.base import POLICIES

        sim.policy = POLICIES.create("P-HPF", mechanism="checkpoint")
    elif name == "prema":
        from npusched.policies.temporal.prema import PPrema

        sim.policy = PPrema(mechanism="dynamic", **PREMA_PARAMS)
    return digest(sim.run(reqs))


def cases() -> dict[str, Callable[[], dict[str, Any]]]:
    """Case id -> the function computing its digest."""
    out: dict[str, Callable[[], dict[str, Any]]] = {}
    for f in FAMILIES:
        out[f"family/{f}"] = lambda f=f: family_case(f)
    for n in RANKED:
        for m in RANKED_MECHANISMS:
            out[f"ranked/{n}/{m}"] = lambda n=n, m=m: ranked_case(n, m)
    for n in TOKEN_POLICIES:
        for r in ("cumulative", "linear"):
            out[f"token/{n}/{r}"] = lambda n=n, r=r: token_case(n, r)
    for n in ("NP-SJF", "P-SJF", "NP-RRB", "P-RRB"):
        out[f"other/{n}"] = lambda n=n: other_case(n)
    for s in ("temporal", "prema", "spatial", "concurrent"):
        out[f"bench/{s}"] = lambda s=s: bench_case(s)
    return out


def load() -> dict[str, Any]:
    return json.loads(DATA.read_text())  # type: ignore[no-any-return]


def main(argv: list[str]) -> int:
    if argv != ["--write"]:
        print(__doc__)
        return 2
    data = {}
    for k, f in cases().items():
        data[k] = f()
        print(k, data[k]["events"], file=sys.stderr)
    DATA.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
    assert not any(isinstance(v, float) and math.isnan(v) for v in data.values())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
