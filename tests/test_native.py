"""The compiled core (``npusched.native``): the modules mypyc compiles give the pure modules'
results to the last bit; ``NPUSCHED_PURE=1`` imports the pure modules; a stale build runs pure
and warns once; ``--version`` and the bench say what runs compiled."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from importlib.machinery import EXTENSION_SUFFIXES
from pathlib import Path

import pytest
from typer.testing import CliRunner

import golden_loops
from npusched import native

ROOT = Path(__file__).resolve().parent.parent
SRC = ROOT / "src"
COMPILED = native.compiled()
needs_compiled = pytest.mark.skipif(
    not COMPILED,
    reason="nothing runs compiled here (no extensions built: python setup.py build_ext "
    "--inplace; or NPUSCHED_PURE set, or a stale build)",
)

#: golden cases of the declared ready orders (the compiled engine) and the bench's engine runs
CASES = [
    "ranked/NP-FCFS/checkpoint",
    "ranked/P-HPF/kill",
    "ranked/P-HPF/checkpoint",
    "token/P-PREMA/cumulative",
    "token/P-TOKEN/linear",
    "token/NP-PREMA/cumulative",
    "bench/prema",
]

_DIGESTS = """
import json, sys
sys.path.insert(0, {tests!r})
from golden_engine import cases
from npusched import native
c = cases()
print(json.dumps({{"compiled": native.compiled(),
                  "digests": {{k: c[k]() for k in {cases!r}}}}}, sort_keys=True))
"""


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "NPUSCHED_PURE"}
    env["PYTHONPATH"] = str(SRC)
    env.update(extra)
    return env


def _python(code: str, env: dict[str, str], cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code], env=env, cwd=cwd, capture_output=True, text=True, timeout=300
    )


def _compiled_and_pure(template: str) -> tuple[dict, dict]:
    """Run the digest script ``template`` compiled (this build) and pure (``NPUSCHED_PURE=1``),
    each in its own process; both outputs, after checking that the pure run compiled nothing
    and that both gave the same digest names."""
    code = template.format(tests=str(ROOT / "tests"))
    here = _python(code, _env())
    assert here.returncode == 0, here.stderr
    pure = _python(code, _env(NPUSCHED_PURE="1"))
    assert pure.returncode == 0, pure.stderr
    a, b = json.loads(here.stdout), json.loads(pure.stdout)
    assert b["compiled"] == []
    assert set(a["digests"]) == set(b["digests"])
    return a, b


def test_compiled_list_is_one_place_and_setup_reads_it() -> None:
    """``setup.py`` compiles exactly ``native.COMPILED_MODULES`` (it parses the tuple)."""
    sys.path.insert(0, str(ROOT))
    try:
        import ast

        tree = ast.parse((ROOT / "setup.py").read_text())
        fn = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "compiled_modules")
        ns: dict[str, object] = {"HERE": ROOT, "ast": ast, "Path": Path}
        exec(compile(ast.Module(body=[fn], type_ignores=[]), "setup.py", "exec"), ns)
        assert ns["compiled_modules"]() == list(native.COMPILED_MODULES)  # type: ignore[operator]
    finally:
        sys.path.remove(str(ROOT))
    for m in native.COMPILED_MODULES:
        assert Path(native.source_path(m)).is_file(), m


def test_build_state_and_the_stale_guard_on_a_fake_tree(tmp_path: Path) -> None:
    """The decision alone: no extension → nothing built; a matching record → fresh; an edited
    source or no record → stale."""
    mods = ("npusched.sim.engine", "npusched.policies.temporal.levels")
    for m in mods:
        p = Path(native.source_path(m, str(tmp_path)))
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(f"# {m}\n")
    assert native.build_state(str(tmp_path), mods) == ([], [])
    for m in mods:
        Path(native.source_path(m, str(tmp_path))[:-3] + EXTENSION_SUFFIXES[0]).write_bytes(b"")
    assert native.build_state(str(tmp_path), mods) == (list(mods), list(mods))  # no record
    record = {m: native.source_digest(native.source_path(m, str(tmp_path))) for m in mods}
    (tmp_path / native.BUILD_RECORD).write_text(json.dumps({"sources": record}))
    assert native.build_state(str(tmp_path), mods) == (list(mods), [])
    with open(native.source_path(mods[1], str(tmp_path)), "a") as f:
        f.write("x = 1\n")
    assert native.build_state(str(tmp_path), mods) == (list(mods), [mods[1]])


def test_env_switch_imports_the_pure_modules() -> None:
    code = (
        "import json, npusched, npusched.sim.engine as c, npusched.policies.temporal.levels as l\n"
        "from npusched import native\n"
        "print(json.dumps([c.__file__, l.__file__, native.compiled()]))"
    )
    out = _python(code, _env(NPUSCHED_PURE="1"))
    assert out.returncode == 0, out.stderr
    files, compiled = json.loads(out.stdout)[:2], json.loads(out.stdout)[2]
    assert all(f.endswith(".py") for f in files) and compiled == []
    assert "StaleExtensionWarning" not in out.stderr
    out = _python(code, _env(NPUSCHED_PURE="0"))  # "0" is off
    assert out.returncode == 0, out.stderr
    files, compiled = json.loads(out.stdout)[:2], json.loads(out.stdout)[2]
    # what the build gives (this process may itself run with NPUSCHED_PURE=1)
    built, stale = native.build_state()
    assert compiled == ([] if stale else built)
    if compiled:
        assert all(f.endswith(tuple(EXTENSION_SUFFIXES)) for f in files)


def test_version_names_what_runs_compiled() -> None:
    from npusched.cli import app

    res = CliRunner().invoke(app, ["--version"])
    assert res.exit_code == 0
    lines = res.output.splitlines()
    assert lines[0].startswith("npusched ")
    want = f"compiled: {', '.join(COMPILED)}" if COMPILED else "compiled: none (pure Python)"
    assert lines[1] == want
    out = subprocess.run(
        [sys.executable, "-m", "npusched.cli", "--version"],
        env=_env(NPUSCHED_PURE="1"),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines()[1] == "compiled: none (pure Python)"


@needs_compiled
def test_compiled_and_pure_give_the_same_bits() -> None:
    """The golden cases of the declared orders and the prema bench, compiled in this process and
    pure (``NPUSCHED_PURE=1``) in a subprocess: every digest equal (and equal to the fixture)."""
    sys.path.insert(0, str(ROOT / "tests"))
    try:
        from golden_engine import cases, load
    finally:
        sys.path.remove(str(ROOT / "tests"))
    c = cases()
    here = {k: c[k]() for k in CASES}
    code = _DIGESTS.format(tests=str(ROOT / "tests"), cases=CASES)
    out = _python(code, _env(NPUSCHED_PURE="1"))
    assert out.returncode == 0, out.stderr
    pure = json.loads(out.stdout)
    assert pure["compiled"] == []
    assert json.loads(json.dumps(here, sort_keys=True)) == pure["digests"]
    fixtures = load()
    for k in CASES:
        assert json.loads(json.dumps(here[k])) == fixtures[k], k


@needs_compiled
def test_a_stale_build_runs_pure_and_warns_once(tmp_path: Path) -> None:
    """A copy of the package whose compiled source was edited after the build: the pure
    modules run, one warning names the stale module and the rebuild command."""
    pkg = tmp_path / "npusched"
    shutil.copytree(SRC / "npusched", pkg, ignore=shutil.ignore_patterns("__pycache__"))
    for lib in SRC.glob("*__mypyc*"):  # mypyc's shared library of the group
        shutil.copy2(lib, tmp_path / lib.name)
    edited = native.COMPILED_MODULES[0]
    with open(native.source_path(edited, str(pkg)), "a") as f:
        f.write("\n# edited after the build\n")
    code = (
        "import importlib, json, npusched, npusched.policies.temporal.levels as l\n"
        "import npusched.bench.bare_loop\n"
        "from npusched import native\n"
        f"c = importlib.import_module({edited!r})\n"
        "print(json.dumps([c.__file__, l.__file__, native.compiled()]))"
    )
    env = _env()
    env["PYTHONPATH"] = str(tmp_path)
    out = _python(code, env, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    c_file, l_file, compiled = json.loads(out.stdout)
    assert c_file == native.source_path(edited, str(pkg)) and l_file.endswith(".py")
    assert compiled == []
    assert out.stderr.count("StaleExtensionWarning") == 1
    assert edited in out.stderr and "build_ext --inplace" in out.stderr
    # the unedited copy runs compiled (the guard reads the copy's own record)
    shutil.copy2(native.source_path(edited), native.source_path(edited, str(pkg)))
    out = _python(code, env, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)[2] == COMPILED and "StaleExtensionWarning" not in out.stderr


def test_bench_json_names_the_compiled_modules_and_both_bare_loops() -> None:
    from npusched.bench import run_bench
    from npusched.bench.core import bare_loops

    out = run_bench(["families"], requests=200, isolate=False, reference=False)
    assert out["compiled"] == COMPILED
    fam = out["scenarios"][0]
    interp, comp = bare_loops()
    assert (comp is None) == ("npusched.bench.bare_loop" not in COMPILED)
    if comp is None:
        assert fam["compiled_bare_loop_us_per_event"] is None
        assert all(f["ratio_to_compiled_bare_loop"] is None for f in fam["families"].values())
    else:
        assert interp.__module__ == "npusched.bench.bare_loop_pure"
        assert fam["compiled_bare_loop_us_per_event"] > 0
        for f in fam["families"].values():
            r = f["us_per_event"] / fam["compiled_bare_loop_us_per_event"]
            assert f["ratio_to_compiled_bare_loop"] == pytest.approx(r)


#: every ``families`` config (issue 25) through ``run_config``, power recorded, with the
#: timeline: the general loop's families run P-RRB's core, Fluid Batching's tables, the power
#: schedules and the execution plan, compiled where the build compiled them
_FAMILY_DIGESTS = """
import json, sys
sys.path.insert(0, {tests!r})
from golden_engine import digest
from npusched import native
from npusched.bench.families import family_configs
from npusched.experiments.config import parse_config
from npusched.experiments.runner import run_config
out = {{}}
for fam, d in family_configs(300, load=1.2).items():
    o = run_config(parse_config(dict(d, seed=1), source=fam), timeline=True)
    dg = digest(o.result, o.summary)
    dg["timeline"] = [repr(s) for s in o.result.timeline or []]
    out[fam] = dg
print(json.dumps({{"compiled": native.compiled(), "digests": out}}, sort_keys=True))
"""


def test_families_compiled_and_pure_give_the_same_bits() -> None:
    """Every ``families`` config (FCFS ... HaX-CoNN, the general loop's families with their
    policies' compiled modules) gives the same digest and timeline compiled (this build) and
    pure (``NPUSCHED_PURE=1``), each in its own process."""
    a, b = _compiled_and_pure(_FAMILY_DIGESTS)
    built, stale = native.build_state()  # what the build gives (this process may run pure)
    assert a["compiled"] == ([] if stale else built)
    for fam in a["digests"]:
        assert a["digests"][fam] == b["digests"][fam], fam


def test_compiled_policy_cores_keep_the_public_classes_signatures() -> None:
    """P-RRB's hooks live in a compiled core (``rrb_core``) under the interpreted public
    classes: parameters and the config checks read the constructor's signature."""
    import inspect

    from npusched.policies.temporal.rrb import NPRRB, PRRB
    from npusched.policies.temporal.rrb_core import NPRRBCore, PRRBCore

    assert issubclass(PRRB, PRRBCore) and issubclass(NPRRB, NPRRBCore)
    assert list(inspect.signature(PRRB.__init__).parameters) == [
        "self", "mechanism", "quantum_s", "period_s"
    ]
    p = PRRB(quantum_s=1, period_s=0.5)
    assert p.get_params() == {"mechanism": "checkpoint", "quantum_s": 1, "period_s": 0.5}
    assert type(p.get_params()["quantum_s"]) is int  # kept as given, not unboxed to float
    assert p.set_params(mechanism="dynamic").get_params()["mechanism"] == "dynamic"
    assert NPRRB().get_params() == {}


#: configs beside the ``families`` ones that run the machine and power policies' compiled
#: cores (thirteenth round) on their other paths: the batching baselines, DVFS, Planaria with
#: queues past the small-queue path, FluidB at a load that preempts
_MACHINE_DIGESTS = """
import json, sys
sys.path.insert(0, {tests!r})
from golden_engine import digest
from npusched import native
from npusched.bench.families import family_configs
from npusched.experiments.config import parse_config
from npusched.experiments.runner import run_config
fam = family_configs(300, load=1.2)
hi = family_configs(300, load=3.0)
cfgs = {{
    "AdaptB": dict(fam["FluidB"], policy={{"name": "AdaptB", "params": {{"slo_s": 0.05}}}}),
    "SERIAL": dict(fam["FluidB"], policy={{"name": "SERIAL"}}),
    "LazyBatching": dict(
        fam["FluidB"], policy={{"name": "LazyBatching", "params": {{"slo_s": 0.05}}}}
    ),
    "FluidB-high": hi["FluidB"],
    "DVFS": dict(
        fam["DFS"],
        power={{"name": "DVFS", "cap_w": 33}},
        hardware=dict(
            fam["DFS"]["hardware"],
            params=dict(fam["DFS"]["hardware"]["params"], voltage_v="dvfs"),
        ),
    ),
    "Planaria-high": dict(  # queues past SMALL_QUEUE: the NumPy Algorithm 1 as well
        fam["Planaria"], workload=dict(fam["Planaria"]["workload"], rate_per_s=200.0)
    ),
    "HaX-CoNN-high": hi["HaX-CoNN"],
}}
out = {{}}
for name, d in cfgs.items():
    o = run_config(parse_config(dict(d, seed=2), source=name), timeline=True)
    dg = digest(o.result, o.summary)
    dg["timeline"] = [repr(s) for s in o.result.timeline or []]
    out[name] = dg
print(json.dumps({{"compiled": native.compiled(), "digests": out}}, sort_keys=True))
"""


def test_machine_and_power_cores_compiled_and_pure_give_the_same_bits() -> None:
    """The batching baselines (AdaptB, SERIAL, LazyBatching), FluidB, DVFS, Planaria with long
    queues (its NumPy Algorithm 1 beside the compiled small-queue one) and HaX-CoNN at high
    load give the same digest and timeline compiled (this build) and pure, each in its own
    process."""
    a, b = _compiled_and_pure(_MACHINE_DIGESTS)
    assert len(a["digests"]) == 7
    for name in a["digests"]:
        assert a["digests"][name] == b["digests"][name], name


def test_machine_and_power_cores_keep_the_public_classes_signatures() -> None:
    """The machine and power policies' compiled cores (thirteenth round) sit under the
    interpreted public classes: the constructors' signatures, the parameters as given (an
    ``int`` stays an ``int``), ``clone`` and the checks that name a bad value all work."""
    import inspect

    from npusched.base import clone
    from npusched.errors import ConfigError
    from npusched.policies.batching.core import BatchingCore, FluidBCore
    from npusched.policies.batching.policies import (
        AdaptBPolicy,
        FluidBPolicy,
        LazyBatchingPolicy,
        SerialPolicy,
    )
    from npusched.policies.mapping.haxconn_core import HaxconnCore
    from npusched.policies.mapping.policy import HaxconnPolicy
    from npusched.policies.power.core import PowerCore
    from npusched.policies.power.policy import DFS, DVFS
    from npusched.policies.spatial.planaria import PlanariaPolicy
    from npusched.policies.spatial.planaria_core import PlanariaCore

    assert issubclass(FluidBPolicy, FluidBCore)
    for cls in (AdaptBPolicy, SerialPolicy, LazyBatchingPolicy):
        assert issubclass(cls, BatchingCore)
    assert issubclass(PlanariaPolicy, PlanariaCore) and issubclass(HaxconnPolicy, HaxconnCore)
    assert issubclass(DFS, PowerCore) and issubclass(DVFS, PowerCore)
    sig = {
        FluidBPolicy: ["self", "slo_s", "b_max", "name"],
        PlanariaPolicy: ["self", "resource", "name"],
        DFS: ["self", "cap_w", "freq_switch_s", "voltage_v", "idle_power_w"],
    }
    for cls, want in sig.items():
        assert list(inspect.signature(cls.__init__).parameters) == want, cls
    assert "max_transitions" in inspect.signature(HaxconnPolicy.__init__).parameters
    f = FluidBPolicy(slo_s=1, b_max=4)
    assert f.get_params() == {"slo_s": 1, "b_max": 4, "name": "FluidB"}
    assert type(f.get_params()["slo_s"]) is int  # kept as given, not unboxed to float
    assert clone(f).get_params() == f.get_params()
    assert f.set_params(b_max=2).get_params()["b_max"] == 2
    with pytest.raises(ConfigError, match="b_max"):
        FluidBPolicy(b_max="8").reset()  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="slo_s"):
        FluidBPolicy(slo_s=-1.0).reset()
    d = DFS(cap_w=30)
    assert d.get_params()["cap_w"] == 30 and type(d.get_params()["cap_w"]) is int
    assert d.switch_cost(None, (1e9, 1.0)) == 0.0
    assert d.switch_cost((1e9, 1.0), (8e8, 1.0)) == d.freq_switch_s
    d.freq_switch_s = -1.0  # a changed value is checked again
    with pytest.raises(ConfigError, match="freq_switch_s"):
        d.switch_cost((1e9, 1.0), (8e8, 1.0))
    with pytest.raises(ConfigError, match="cap_w"):
        DVFS(cap_w="high").switch_cost(None, (1e9, 1.0))  # type: ignore[arg-type]
    p = PlanariaPolicy(resource="fa")
    assert p.get_params() == {"resource": "fa", "name": "Planaria"}
    with pytest.raises(ConfigError, match="resource"):
        PlanariaPolicy(resource=3).reset()  # type: ignore[arg-type]
    h = HaxconnPolicy(soc="xavier", n_groups=4)
    assert h.get_params()["n_groups"] == 4
    assert clone(h).get_params() == h.get_params()


def test_compiled_schedules_equal_the_constructors() -> None:
    """``make_schedule`` / ``make_merge`` (compiled) give the dataclasses' own objects."""
    from npusched.policies.contract import NOTHING, Merge, Schedule
    from npusched.policies.machine import fast_schedule
    from npusched.policies.machine_core import (
        NO_MECHANISM,
        NO_MERGE,
        NO_PREEMPT,
        NO_RATES,
        NO_TIMERS,
        NO_UNTIL,
        make_merge,
        make_schedule,
    )

    m = make_merge("a", ["b"])
    assert type(m) is Merge and m == Merge("a", ["b"]) and hash(m.into) == hash("a")
    s = make_schedule({"a": 1}, NO_PREEMPT, NO_MECHANISM, NO_UNTIL, (m,), NO_TIMERS, NO_RATES)
    assert type(s) is Schedule and s == Schedule(assign={"a": 1}, merge=(m,))
    assert s == fast_schedule(assign={"a": 1}, merge=(m,))
    assert make_schedule(
        NOTHING.assign, NO_PREEMPT, NO_MECHANISM, NO_UNTIL, NO_MERGE, NO_TIMERS, NO_RATES
    ) == NOTHING


#: Algorithm 2 on the engine's token table and the general-loop hooks (``prema_core``,
#: fourteenth round): the token policies, every mechanism, both token rules and thresholds,
#: under DFS and DVFS (their switch cost called as the compiled core's module function, the
#: levels of ``sim/levels.py``) through ``run_config`` with the timeline (the cases
#: ``native-token/...`` of ``tests/golden_loops.py``), and without a power policy
_TOKEN_DIGESTS = """
import json, sys
sys.path.insert(0, {tests!r})
import golden_loops
from golden_engine import digest
from npusched import native
from npusched.bench import bench_workload, synthetic_profiles
from npusched.policies.base import POLICIES
from npusched.sim.engine import Simulator
out = {{}}
for name, mech in golden_loops.NATIVE_TOKEN:
    for power in ("DFS", "DVFS"):
        o = golden_loops.native_token(name, mech, power)
        out[f"native-token/{{name}}/{{mech}}/{{power}}"] = golden_loops.digest(o)
profiles = synthetic_profiles(random_state=3)
reqs = bench_workload(400, profiles, random_state=5, load=1.5)
for name, params in [("P-PREMA", {{}}), ("NP-PREMA", {{}}), ("P-TOKEN", {{"threshold": ">"}}),
                     ("P-PREMA", {{"tokens": "cumulative", "mechanism": "dynamic"}}),
                     ("P-TOKEN", {{"include_running": False, "mechanism": "kill"}})]:
    r = Simulator(profiles, POLICIES.create(name, **params)).run(reqs)
    out[f"{{name}}/{{sorted(params.items())}}"] = digest(r)
print(json.dumps({{"compiled": native.compiled(), "digests": out}}, sort_keys=True))
"""


def test_token_hooks_compiled_and_pure_give_the_same_bits() -> None:
    """The token policies (P-PREMA, P-TOKEN, NP-PREMA: mechanisms, token rules, thresholds,
    under DFS, DVFS and no power policy) give the same digest, timeline and power pieces
    compiled (this build, ``prema_core``, the power core's switch cost and ``sim/levels.py``)
    and pure, each in its own process; the DFS / DVFS runs are the ones both loops gave at
    dbd9f47 (``tests/golden_loops.py``)."""
    a, b = _compiled_and_pure(_TOKEN_DIGESTS)
    assert len(a["digests"]) == 13
    frozen = golden_loops.load()
    for name in a["digests"]:
        assert a["digests"][name] == b["digests"][name], name
        if name.startswith("native-token/"):
            assert a["digests"][name] == frozen[name], name


def test_token_hooks_are_called_directly_only_with_the_built_in_methods() -> None:
    """``ready_hooks`` gives the compiled hooks' own ``enter`` / ``leave`` (the engine then calls
    ``TokenHooks`` directly, without views) only where the class keeps the methods the engine
    would call; a class that declares its own ready order and redefines ``select`` gets
    wrappers, and the engine calls its ``select`` (same result here: it delegates)."""
    import inspect

    from npusched.base import clone
    from npusched.bench import bench_workload, synthetic_profiles
    from npusched.errors import ConfigError
    from npusched.policies.contract import (
        Decision,
        Mechanism,
        SchedulerView,
        direct_hooks,
        ready_hooks,
    )
    from npusched.policies.temporal.prema import PPrema
    from npusched.policies.temporal.prema_core import TokenHooks, make_decision
    from npusched.sim.engine import Simulator
    from simhelpers import assert_same_result

    class CountingPrema(PPrema):
        ready_order = "tokens-remaining"  # declared again: the order holds for this class
        calls = 0

        def select(self, view: SchedulerView) -> Decision:
            type(self).calls += 1
            return super().select(view)

    profiles = synthetic_profiles(random_state=3)
    reqs = bench_workload(200, profiles, random_state=5, load=1.5)
    plain = PPrema(mechanism="dynamic")
    plain.reset()
    hooks = ready_hooks(plain, reqs)
    assert hooks is not None and isinstance(direct_hooks(hooks[0]), TokenHooks)
    assert plain.hooks_ is direct_hooks(hooks[0])
    own = CountingPrema(mechanism="dynamic")
    own.reset()
    hooks = ready_hooks(own, reqs)
    assert hooks is not None and direct_hooks(hooks[0]) is None
    a = Simulator(profiles, PPrema(mechanism="dynamic")).run(reqs)
    b = Simulator(profiles, CountingPrema(mechanism="dynamic")).run(reqs)
    assert CountingPrema.calls > 100
    # the policy's hooks hold no reference back to it: a run leaves no cycle for the collector
    import gc
    import weakref

    was = gc.isenabled()
    gc.disable()
    try:
        pol = PPrema(mechanism="dynamic")
        r = Simulator(profiles, pol).run(reqs)
        assert pol.hooks_ is None  # the engine kept the run's table (``general_table``)
        ref = weakref.ref(pol)
        del pol, r
        assert ref() is None
    finally:
        if was:
            gc.enable()
    assert_same_result(a, b)
    assert a.events == b.events
    # the public classes keep their parameters, clone and checks
    assert list(inspect.signature(PPrema.__init__).parameters) == [
        "self", "mechanism", "period_s", "token_levels", "threshold", "include_running", "tokens"
    ]
    p = PPrema(period_s=1, mechanism="kill")
    assert p.get_params()["period_s"] == 1 and type(p.get_params()["period_s"]) is int
    assert clone(p).get_params() == p.get_params()
    with pytest.raises(ConfigError, match="tokens"):
        PPrema(tokens="quadratic").reset()
    d = make_decision("a job", Mechanism.KILL)
    assert type(d) is Decision and d == Decision("a job", Mechanism.KILL)  # type: ignore[arg-type]
