"""The Python API a script uses: top-level names, workloads from user networks, scoped
registration, ``SimResult.summary()``, plugins, ``npusched.testing`` and the example script."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import npusched
from npusched.errors import ConfigError, NpuschedError, UnknownNameError

ROOT = Path(__file__).resolve().parents[1]


def _tinynet(name: str = "tinynet") -> npusched.Network:
    b = npusched.NetBuilder(name, (3, 32, 32))
    x = b.pool(b.conv(b.input(), 16, 3), 2)
    b.fc(b.global_pool(b.conv(x, 32, 3)), 10)
    return b.build()


def test_top_level_names() -> None:
    from npusched import (  # noqa: F401
        MACHINE_POLICIES,
        POLICIES,
        NetBuilder,
        Simulator,
        get_network,
        poisson_workload,
        prema_workload,
        run_config,
        summarize,
    )

    assert "P-PREMA" in POLICIES and "Planaria" in MACHINE_POLICIES
    assert set(npusched.__all__) <= set(dir(npusched))
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        npusched.nope  # noqa: B018


def test_import_stays_lazy() -> None:
    """``import npusched`` loads no simulator, NumPy-heavy module or CLI."""
    code = (
        "import sys, npusched; heavy = [m for m in ('numpy', 'pandas', 'npusched.sim.engine', "
        "'typer') if m in sys.modules]; print(heavy)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]"


def test_workloads_take_user_networks_and_profiles() -> None:
    """A network outside the zoo is accepted as an object, or by name with its profile."""
    net = _tinynet()
    prof = {net.name: npusched.compile_profile(net, npusched.get_device("prema-npu"), (1,))}
    a = npusched.poisson_workload(100.0, models=[net, "resnet-50"], n_requests=50, random_state=3)
    assert {r.network for r in a} == {"tinynet", "resnet-50"}
    b = npusched.poisson_workload(
        100.0, models=["tinynet"], n_requests=20, qos=3.0, profiles=prof, random_state=3
    )
    assert all(r.slo_s is not None for r in b)
    c = npusched.prema_workload(10, [net], 0.01, random_state=1)
    assert len(c) == 10 and {r.network for r in c} == {"tinynet"}
    with pytest.raises(UnknownNameError, match="unknown network 'tinynet'"):
        npusched.poisson_workload(100.0, models=["tinynet"], n_requests=5)


def test_generator_limits() -> None:
    with pytest.raises(ConfigError, match="n_tasks must be at most"):
        npusched.prema_workload(10**12, ["alexnet"], 1.0)
    with pytest.raises(ConfigError, match="n_requests must be at most"):
        npusched.poisson_workload(1.0, models=["alexnet"], n_requests=10**12)
    with pytest.raises(ConfigError, match="expected requests"):
        npusched.poisson_workload(1e9, models=["alexnet"], duration_s=1e6)


def test_registered_scope_twice() -> None:
    """A scoped registration can be repeated in one session (no duplicate-name error) and
    leaves nothing behind, even when the block raises."""
    from npusched.policies.temporal import FCFS

    for _ in range(2):
        with npusched.registered(networks=[_tinynet()], policies={"MY-FCFS": FCFS}):
            assert npusched.get_network("tinynet").name == "tinynet"
            assert npusched.POLICIES.create("MY-FCFS").name == "NP-FCFS"
        assert "tinynet" not in npusched.list_networks()
        assert "MY-FCFS" not in npusched.POLICIES
    with pytest.raises(RuntimeError), npusched.registered(networks=[_tinynet("othernet")]):
        raise RuntimeError
    assert "othernet" not in npusched.list_networks()
    # a clash registers nothing
    clash = [_tinynet("zzznet"), _tinynet("alexnet")]
    with pytest.raises(NpuschedError, match="duplicate"), npusched.registered(networks=clash):
        pass  # pragma: no cover
    assert "zzznet" not in npusched.list_networks()


def test_registered_network_runs_from_a_config(tmp_path: Path) -> None:
    from npusched.experiments.config import RunConfig

    with npusched.registered(networks=[_tinynet()]):
        cfg = RunConfig.model_validate(
            {
                "policy": {"name": "P-PREMA"},
                "workload": {
                    "kind": "prema",
                    "n_tasks": 8,
                    "models": ["tinynet"],
                    "window_s": 0.005,
                },
            }
        )
        out = npusched.run_config(cfg)
    assert out.summary["n_finished"] == 8


def test_simresult_summary_matches_run_config() -> None:
    from npusched.experiments.config import RunConfig

    cfg = RunConfig.model_validate(
        {
            "policy": {"name": "P-PREMA"},
            "workload": {
                "kind": "prema",
                "n_tasks": 30,
                "models": ["alexnet", "googlenet"],
                "window_s": 0.05,
            },
        }
    )
    out = npusched.run_config(cfg)
    mine = out.result.summary()
    assert set(mine) == set(out.summary)
    for k, v in out.summary.items():
        assert (np.isnan(v) and np.isnan(mine[k])) or mine[k] == pytest.approx(v), k


def test_check_policy_accepts_builtins_and_rejects_a_broken_policy() -> None:
    from npusched.policies import TemporalPolicyBase
    from npusched.policies.contract import KEEP, Decision
    from npusched.testing import check_machine_policy, check_policy

    check_policy(npusched.POLICIES.create("P-PREMA"), n_workloads=8)
    check_policy(npusched.POLICIES.create("NP-FCFS"), n_workloads=8)
    check_machine_policy(npusched.MACHINE_POLICIES.create("Planaria"), n_workloads=4)

    class Lazy(TemporalPolicyBase):
        """Starts a job only when two wait: idles while a request waits."""

        name = "lazy"

        def select(self, view):  # type: ignore[no-untyped-def]
            return Decision(view.ready[0]) if len(view.ready) >= 2 else KEEP

    with pytest.raises(AssertionError, match="lazy: workload"):
        check_policy(Lazy(), n_workloads=10)


PLUGIN = textwrap.dedent(
    """
    from npusched import POLICIES, NetBuilder, registered
    from npusched.models import zoo
    from npusched.policies.temporal import FCFS

    class Mine(FCFS):
        pass

    POLICIES.register("MINE", Mine)

    @zoo.register("plugnet")
    def plugnet():
        b = NetBuilder("plugnet", (3, 16, 16))
        b.fc(b.global_pool(b.conv(b.input(), 8, 3)), 4)
        return b.build()
    """
)


def test_plugin_cli_run(tmp_path: Path) -> None:
    """``npusched run --plugin FILE.py`` loads a user's policy and network (subprocess)."""
    plug = tmp_path / "mine.py"
    plug.write_text(PLUGIN)
    cfg = tmp_path / "c.toml"
    cfg.write_text(
        '[policy]\nname = "MINE"\n[workload]\nkind = "prema"\nn_tasks = 5\n'
        'models = ["plugnet"]\nwindow_s = 0.001\n'
    )
    cmd = [sys.executable, "-m", "npusched.cli", "run", str(cfg), "-o", str(tmp_path / "o")]
    r = subprocess.run(cmd, capture_output=True, text=True, cwd=tmp_path)
    assert r.returncode == 2 and "unknown network 'plugnet'" in r.stderr
    r = subprocess.run([*cmd, "--plugin", str(plug), "-q"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "o" / "summary.json").exists()
    bad = tmp_path / "bad.py"
    bad.write_text("raise ValueError('boom')\n")
    r = subprocess.run([*cmd, "--plugin", str(bad)], capture_output=True, text=True)
    assert r.returncode == 2
    assert r.stderr.strip() == f"npusched: error: {bad}: --plugin: ValueError: boom"


def test_example_custom_policy_runs() -> None:
    """examples/custom_policy.py: the README's custom network + EDF vs P-PREMA flow."""
    path = ROOT / "examples" / "custom_policy.py"
    spec = importlib.util.spec_from_file_location("custom_policy", path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    out = mod.main(n_requests=120)
    out2 = mod.main(n_requests=120)  # twice in one session: no registration clash
    assert out == out2
    assert set(out) == {"EDF", "P-PREMA"}
    assert out["EDF"]["n_finished"] == 120
    # EDF serves deadlines at least as well as P-PREMA on this workload
    assert out["EDF"]["slo_attainment"] >= out["P-PREMA"]["slo_attainment"]
