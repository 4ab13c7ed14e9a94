"""Instance files (``npusched map --instance``): the artifact's data, both semantics with both
solvers on hand-computed 2 DNN x 3 group instances, Eq. 10, bad files."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from npusched.cli import app, main
from npusched.errors import ConfigError
from npusched.hardware.artifact_contention import artifact_slowdown, slowdown_source
from npusched.policies.mapping.instance import (
    ARTIFACT_QUIRKS,
    artifact_instance,
    brute_force_artifact,
    evaluate,
    paper_ends,
    parse_instance,
    solve_instance,
)

# the optimum of the artifact's GoogleNet + AlexNet instance under its own semantics, by
# brute force over all 20 x 16 transition configurations (brute_force_artifact, float64)
ARTIFACT_OPTIMUM_MS = 4.469125340937111


def _dnn(name: str, gpu: list[float], dla: list[float], tr: list[float],
         mg: list[float], md: list[float]) -> dict[str, object]:
    return {"name": name, "gpu_ms": gpu, "dla_ms": dla, "transition_ms": tr,
            "mem_gpu": mg, "mem_dla": md}


def _inst(*dnns: dict[str, object], objective: str = "latency", mt: int = 1) -> dict[str, object]:
    return {"soc": "xavier", "objective": objective, "max_transitions": mt, "dnns": list(dnns)}


# forced mapping (a on the GPU, b on the DLA), both slowed: s_gpu(50) = 2, s_dla(20) = 1.25
FORCED = _inst(
    _dnn("a", [1, 1, 1], [100, 100, 100], [0, 0], [50, 50, 50], [0, 0, 0]),
    _dnn("b", [100, 100, 100], [1, 1, 1], [0, 0], [0, 0, 0], [20, 20, 20]),
)
# no memory traffic; the DLA is slow: the artifact's "previous group on the new device" helps
QUIRK2 = _inst(
    _dnn("a", [1, 1, 1], [4, 4, 4], [0, 0], [0, 0, 0], [0, 0, 0]),
    _dnn("b", [1, 1, 1], [4, 4, 4], [0, 0], [0, 0, 0], [0, 0, 0]),
)


def test_slowdown_functions_are_the_artifacts() -> None:
    # GPU: m < 38.1: 100 / (100 - m 4.9 / 127.5); m < 96.2: 100 / (100 - m); else shifted
    assert artifact_slowdown("xavier", "gpu", [0.0])[0] == 1.0
    assert artifact_slowdown("xavier", "gpu", [30.0])[0] == pytest.approx(
        100 / (100 - 30 * 4.9 / 127.5))
    assert artifact_slowdown("xavier", "gpu", [50.0])[0] == pytest.approx(2.0)
    assert artifact_slowdown("xavier", "gpu", [100.0])[0] == pytest.approx(
        100 / (100 - (100 - 41.9) * 1.11))
    assert artifact_slowdown("xavier", "dla", [20.0])[0] == pytest.approx(1.25)
    assert artifact_slowdown("xavier", "dla", [51.0])[0] == pytest.approx(100 / 65)
    assert "our choice" in slowdown_source("orin")
    s = artifact_slowdown("orin", "gpu", np.linspace(0, 100, 101))
    assert np.all(np.isfinite(s)) and np.all(s >= 1.0)


def test_artifact_contention_model_by_hand() -> None:
    """ArtifactContention: the artifact's s(own) per device while another DNN overlaps, 1 alone;
    the executor passes each running group's accelerator."""
    from npusched.hardware.artifact_contention import ArtifactContention
    from npusched.hardware.soc import GroupProfile, get_soc
    from npusched.policies.mapping.execute import Schedule, Task, Workload, execute

    m = ArtifactContention("xavier")
    assert m.slowdown_one(0.5, 0.0, 0) == 1.0  # alone: no slowdown (not quirk 1)
    assert m.slowdown_one(0.5, 0.3, 0) == pytest.approx(2.0)  # GPU middle piece 100/(100-50)
    assert m.slowdown_one(0.2, 0.3, 1) == pytest.approx(1.25)  # DLA first piece 100/(100-20)
    assert m.slowdown_one(0.99, 0.3, 0) == pytest.approx(20.0)  # clipped to 95%
    np.testing.assert_allclose(
        m.slowdown(np.array([[0.5, 0.2]]), np.array([[0.2, 0.5]]), np.array([[0, 1]])),
        [[2.0, 1.25]])
    np.testing.assert_allclose(m.slowdown(np.array([0.5, 0.2]), np.array([0.0, 0.0])), [1.0, 1.0])
    soc = get_soc("xavier")
    bw = soc.memory_bandwidth_bps

    def prof(t_ms: float, mem: float) -> GroupProfile:
        z = np.zeros((1, 2))
        return GroupProfile(network="x", accelerators=soc.accelerators, bounds=((0, 0),),
                            time_s=np.array([[t_ms, t_ms]]) * 1e-3, out_s=z, in_s=z,
                            mem_bps=np.array([[mem, mem]]) * bw, source="test")

    # a: 2 ms on the GPU at 50% (s = 2 beside b); b: 1 ms on the DLA at 20% (s = 1.25 beside a)
    w = Workload(soc, (Task("a", prof(2.0, 0.5)), Task("b", prof(1.0, 0.2))), m)
    r = execute(w, Schedule(((0,), (1,))))
    # b ends at 1.25 ms (progress 1/1.25); a did 1.25/2 = 0.625 ms of work, then 1.375 alone
    assert r.finish_s[1] * 1e3 == pytest.approx(1.25)
    assert r.finish_s[0] * 1e3 == pytest.approx(2.625)


def test_artifact_quirks_by_hand() -> None:
    inst = parse_instance(_inst(
        _dnn("a", [1, 1, 1], [2, 2, 2], [0.5, 0.5], [50, 0, 0], [0, 0, 20]),
        _dnn("b", [1, 1, 1], [2, 2, 2], [0.3, 0.3], [0, 0, 0], [0, 0, 0]),
    ))
    # a: G G D, b: D G G, b's groups after a's on the GPU
    starts, ends = evaluate(inst, ((0, 0, 1), (1, 0, 0)),
                            [(0, 0), (1, 0), (0, 1), (0, 2), (1, 1), (1, 2)])
    # (1) group 0 slowed x2 though nothing runs beside it: st1 = 2
    # (2) at the transition the chain charges group 1's time on the *new* device (DLA, 2 ms)
    #     plus transition_ms[1]: st2 = 2 + 2 + 0.5; (4) the last group is not slowed: + 2
    assert starts[0] == pytest.approx([0.0, 2.0, 4.5])
    assert ends[0] == pytest.approx(6.5)
    # (3) the same transition array in the other direction (D -> G); b1 waits for the GPU
    # until a1 ended (3.0): chain alone would give 0 + 1 + 0.3
    assert starts[1] == pytest.approx([0.0, 3.0, 4.0])
    assert ends[1] == pytest.approx(5.0)


@pytest.mark.parametrize("solver", ["cpsat", "z3"])
def test_forced_mapping_artifact(solver: str) -> None:
    inst = parse_instance(FORCED)
    # artifact: a's chain 2 + 2 + 1 (slowed alone, last unslowed); b's 1.25 + 1.25 + 1
    art = solve_instance(inst, "artifact", solver, time_limit_s=20)
    assert art.status == "optimal"
    assert art.makespan_ms == pytest.approx(5.0, abs=1e-6)
    assert art.devices == (("gpu",) * 3, ("dla",) * 3)


def test_forced_mapping_paper_contention_by_hand() -> None:
    inst = parse_instance(FORCED)
    # paper: slowed only while both run, at rates 1/2 (GPU) and 1/1.25 (DLA). Both start at 0:
    # b0 ends 1.25, a0 2.0 (it did 1.25 x 0.5 + 0.75 x 0.5), b1 2.5, b2 3.75, a1 3.875 (from
    # 2.0 it does 1.75 x 0.5 beside b, then 0.125 alone), a2 4.875
    ends = paper_ends(inst, ((0, 0, 0), (1, 1, 1)), [[0, 2, 3.875], [0, 1.25, 2.5]])
    assert ends[0] == pytest.approx([2.0, 3.875, 4.875])
    assert ends[1] == pytest.approx([1.25, 2.5, 3.75])
    # 4.875 is optimal: with overlap c, a takes >= 3 + c/2 and both >= 6 - 0.3 c together, so
    # max(...) >= 4.875. CP-SAT proves it: the union cut (sum ov >= R_a + R_b - makespan) and
    # the enumeration's bound (exactly 4.875 here) close the search.
    r = solve_instance(inst, "paper", "cpsat", time_limit_s=20)
    # optimal in the 10 us tick model, whose contention extras are rounded up (< 1 tick per
    # group: 6 groups, 0.06 ms); re-timed exactly, it lies between the bound and that allowance
    assert r.status == "optimal" and 4.875 - 1e-6 <= r.makespan_ms <= 4.875 + 0.06


@pytest.mark.parametrize("solver", ["cpsat", "z3"])
def test_previous_group_on_new_device_quirk(solver: str) -> None:
    inst = parse_instance(QUIRK2)
    art = solve_instance(inst, "artifact", solver, time_limit_s=20)
    pap = solve_instance(inst, "paper", solver, time_limit_s=20)
    assert art.makespan_ms == pytest.approx(5.0, abs=1e-6)  # one DNN D G G, its G after 1 ms
    assert pap.makespan_ms == pytest.approx(6.0, abs=2e-3)  # the DLA group really takes 4 ms
    assert art.status == pap.status == "optimal"


def test_throughput_objective_eq10() -> None:
    # a is short, b long: Eq. 11 balances the two, Eq. 10 lets a finish first
    data = _inst(
        _dnn("a", [1, 1, 1], [1.5, 1.5, 1.5], [0.2, 0.2], [0, 0, 0], [0, 0, 0]),
        _dnn("b", [2, 2, 2], [2.2, 2.2, 2.2], [0.2, 0.2], [0, 0, 0], [0, 0, 0]),
    )
    lat = parse_instance(data)
    thr = parse_instance(dict(data, objective="throughput"))
    bl, _ = brute_force_artifact(lat)
    bt, _ = brute_force_artifact(thr)
    for solver in ("cpsat", "z3"):
        rl = solve_instance(lat, "artifact", solver, time_limit_s=20)
        rt = solve_instance(thr, "artifact", solver, time_limit_s=20)
        assert rl.makespan_ms == pytest.approx(bl, abs=1e-6)
        assert rt.objective == pytest.approx(bt, rel=1e-6)  # frames/s: sum 1e3 / T_n
        assert rt.objective == pytest.approx(sum(1e3 / e for e in rt.end_ms))
        assert rt.objective >= sum(1e3 / e for e in rl.end_ms) - 1e-9
    assert bt > sum(1e3 / e for e in solve_instance(lat, "artifact").end_ms) + 1e-6


def test_artifact_instance_reaches_the_artifacts_optimum() -> None:
    inst = artifact_instance()
    assert [d.n_groups for d in inst.dnns] == [10, 8]
    for solver in ("cpsat", "z3"):
        r = solve_instance(inst, "artifact", solver, time_limit_s=60)
        assert r.status == "optimal"
        assert r.makespan_ms == pytest.approx(ARTIFACT_OPTIMUM_MS, abs=1e-6)
        assert all(sum(a != b for a, b in itertools.pairwise(d)) <= 1 for d in r.devices)


@pytest.mark.slow
def test_artifact_optimum_by_brute_force() -> None:
    best, _ = brute_force_artifact(artifact_instance())
    assert best == pytest.approx(ARTIFACT_OPTIMUM_MS, abs=1e-9)


@pytest.mark.parametrize(
    ("patch", "field"),
    [
        ({"soc": "tx2"}, "soc"),
        ({"objective": "fps"}, "objective"),
        ({"max_transitions": -1}, "max_transitions"),
        ({"dnns": []}, "dnns"),
        ({"dnns": [{"name": "a"}, {"name": "b"}]}, "dnns[0].gpu_ms"),
    ],
)
def test_bad_top_level_fields(patch: dict[str, object], field: str) -> None:
    esc = field.replace("[", r"\[").replace("]", r"\]")
    with pytest.raises(ConfigError, match=rf"^inst: {esc}: .*; allowed: "):
        parse_instance(dict(QUIRK2, **patch), "inst")


@pytest.mark.parametrize(
    ("key", "value", "field"),
    [
        ("dla_ms", [1, 1], "dnns[1].dla_ms"),
        ("transition_ms", [0, 0, 0], "dnns[1].transition_ms"),
        ("mem_gpu", [0, 0, 101], "dnns[1].mem_gpu"),
        ("gpu_ms", [1, 0, 1], "dnns[1].gpu_ms"),
        ("mem_dla", [0, "x", 0], "dnns[1].mem_dla"),
        ("name", "", "dnns[1].name"),
    ],
)
def test_bad_dnn_fields(key: str, value: object, field: str) -> None:
    data = json.loads(json.dumps(QUIRK2))
    data["dnns"][1][key] = value
    esc = field.replace("[", r"\[").replace("]", r"\]")
    with pytest.raises(ConfigError, match=rf"^inst: {esc}: .*; allowed: "):
        parse_instance(data, "inst")


def test_cli_json_and_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = tmp_path / "i.json"
    f.write_text(json.dumps(QUIRK2))
    runner = CliRunner()
    r = runner.invoke(app, ["map", "--instance", str(f), "--semantics", "artifact",
                            "--solver", "cpsat", "--format", "json"])
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    assert set(out) >= {"makespan_ms", "status", "solve_s", "dnns"}
    assert out["status"] == "optimal" and out["makespan_ms"] == pytest.approx(5.0)
    assert [d["name"] for d in out["dnns"]] == ["a", "b"]
    assert all(set(d["devices"]) <= {"gpu", "dla"} and len(d["start_ms"]) == 3
               for d in out["dnns"])
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(dict(QUIRK2, soc="tx2")))
    for args, needle in (
        (["--instance", str(bad)], f"{bad}: soc: 'tx2'; allowed: xavier, orin"),
        (["--instance", str(f), "--semantics", "x"], "--semantics 'x'; allowed: artifact, paper"),
        (["--instance", str(f), "--solver", "x"], "--solver 'x'; allowed: cpsat, z3"),
        (["--instance", str(tmp_path / "none.json")], "cannot read"),
        (["alexnet", "--instance", str(f)], "networks: given with --instance"),
    ):
        code = main(["map", *args])
        err = capsys.readouterr().err
        assert code == 2, err
        lines = err.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("npusched: error: ")
        assert needle in lines[0]


def test_quirks_switch_off_one_at_a_time() -> None:
    q = ARTIFACT_QUIRKS
    forced, quirk2 = parse_instance(FORCED), parse_instance(QUIRK2)
    assert brute_force_artifact(forced)[0] == pytest.approx(5.0)
    # the last group slowed too: a ends at 2 + 2 + 2
    assert brute_force_artifact(forced, q - {"last_unslowed"})[0] == pytest.approx(6.0)
    # no slowdown at all: both DNNs take 3 ms side by side
    assert brute_force_artifact(forced, q - {"own_slowdown"})[0] == pytest.approx(3.0)
    # the preceding group timed on its own device: the DLA group really takes 4 ms, as in paper
    assert brute_force_artifact(quirk2)[0] == pytest.approx(5.0)
    assert brute_force_artifact(quirk2, q - {"new_device"})[0] == pytest.approx(6.0)


def test_bench_reference_model_reaches_the_artifacts_optimum() -> None:
    from npusched.bench.haxconn import artifact_reference_z3

    mk, status = artifact_reference_z3(artifact_instance(), time_limit_s=60)
    assert status == "optimal"
    assert mk == pytest.approx(ARTIFACT_OPTIMUM_MS, abs=1e-9)


def test_paper_lower_bound_by_hand() -> None:
    """The enumeration's LP bound: on FORCED it is the hand optimum 4.875 (with overlap c,
    M >= 3 + c/2 and M >= 6 - 0.3 c); on QUIRK2 (no memory traffic) 6.0, and with it both
    solvers prove the paper optimum 6.0 at once."""
    from npusched.policies.mapping.instance_bounds import pair_lower_bound, paper_lower_bound

    forced = parse_instance(FORCED)
    b = paper_lower_bound(forced)
    assert b.bound_ms == pytest.approx(4.875, rel=1e-5) and b.bound_ms <= 4.875
    assert b.pairs[0][0] == ((0, 0, 0), (1, 1, 1))
    assert len(b.pairs) == 6 * 6  # rows with at most one change of 3 groups: 6 per DNN
    # a mapping's bound never exceeds any timing of it: the serial timing of FORCED's mapping
    assert pair_lower_bound(forced, ((0, 0, 0), (1, 1, 1))) <= 6.0
    q = parse_instance(QUIRK2)
    assert paper_lower_bound(q).bound_ms == pytest.approx(6.0, rel=1e-5)
    for solver in ("cpsat", "z3"):
        r = solve_instance(q, "paper", solver, time_limit_s=20)
        assert r.status == "optimal" and r.makespan_ms == pytest.approx(6.0, abs=1e-6)


def test_paper_lower_bound_of_the_artifact_instance() -> None:
    """Below every schedule found (3.402 ms is the best known, CP-SAT with the bounds), above
    the contention-free optimum; two device-row pairs stay open at 3.402."""
    from npusched.policies.mapping.instance_bounds import paper_lower_bound

    b = paper_lower_bound(artifact_instance())
    assert 3.35 < b.bound_ms < 3.402
    assert len(b.pairs) == 20 * 16
    assert b.open_pairs(3.402) == 2
    # Z3's schedule of the best pair (3.400314) is within 2e-6 of that pair's bound (3.400308)
    assert b.open_pairs(3.400314) == 2 and b.open_pairs(3.400314, 2e-6) == 1
    # the best known schedule's pair is among the open ones
    best = ((0,) * 10, (1, 0, 0, 0, 0, 0, 0, 0))
    assert dict(b.pairs)[best] < 3.402


def test_paper_lower_bound_skips_the_lps_the_serial_schedule_closes() -> None:
    """Pairs whose contention-free bound reaches the serial schedule keep that bound and skip
    their LP: every pair bound is at most the full enumeration's, the least bound and the open
    pairs below the serial schedule are the same, and most LPs are skipped."""
    import math

    from npusched.policies.mapping.instance import serial_bound_ms
    from npusched.policies.mapping.instance_bounds import contention_free_bound, paper_lower_bound

    inst = artifact_instance()
    fast = paper_lower_bound(inst)
    full = paper_lower_bound(inst, upper_ms=math.inf)
    assert fast.bound_ms == full.bound_ms
    ub = serial_bound_ms(inst, "paper")
    full_d = dict(full.pairs)
    skipped = 0
    for rows, v in fast.pairs:
        assert contention_free_bound(inst, rows) <= full_d[rows]
        assert v <= full_d[rows]
        if contention_free_bound(inst, rows) < ub:
            assert v == full_d[rows]
        else:
            skipped += 1
            assert v >= ub * (1 - 1e-8)
    assert skipped == 201
    for incumbent in (3.402, 3.45, ub):
        assert fast.open_pairs(incumbent) == full.open_pairs(incumbent)


def test_z3_paper_pairs_proves_the_hand_optimum_and_agrees_with_cpsat() -> None:
    """Z3 on the paper semantics, per transition configuration: FORCED's optimum 4.875 (by hand,
    above) proven in exact rationals; CP-SAT's tick optimum, re-timed, lies within its rounding
    allowance above it. Both solvers' mappings are the same."""
    inst = parse_instance(FORCED)
    z = solve_instance(inst, "paper", "z3", time_limit_s=20)
    c = solve_instance(inst, "paper", "cpsat", time_limit_s=20)
    assert z.status == c.status == "optimal"
    assert z.makespan_ms == pytest.approx(4.875, abs=1e-5)
    assert z.makespan_ms - 1e-5 <= c.makespan_ms <= z.makespan_ms + 0.06
    assert z.devices == c.devices == (("gpu",) * 3, ("dla",) * 3)


def test_z3_paper_proves_the_artifact_instance_optimal_and_agrees_with_cpsat() -> None:
    """Item 6: Z3 proves the artifact's instance optimal under the paper semantics (every
    device-row pair closed, the hard one, LP bound 3.3514 ms, by a proof on its relaxation).
    The optimum is the best pair's schedule (GoogleNet on the GPU, AlexNet's first group on the
    DLA), within PAIR_TOLERANCE of that pair's LP bound (3.4003 ms). CP-SAT proves the same
    mapping optimal in its 0.01 ms tick model; re-timed exactly its schedule lies within the
    tick rounding above Z3's (3.41 ms), never below it."""
    from npusched.policies.mapping.instance_bounds import paper_lower_bound
    from npusched.policies.mapping.instance_z3 import PAIR_TOLERANCE

    inst = artifact_instance()
    b = paper_lower_bound(inst)
    assert b.pairs[0][0] == ((0,) * 10, (0, 0, 0, 0, 0, 0, 1, 1))  # the hard pair
    z = solve_instance(inst, "paper", "z3", time_limit_s=60)
    c = solve_instance(inst, "paper", "cpsat", time_limit_s=60)
    assert z.status == c.status == "optimal"
    assert z.devices == c.devices == (("gpu",) * 10, ("dla",) + ("gpu",) * 7)
    assert b.pairs[1][0] == ((0,) * 10, (1, 0, 0, 0, 0, 0, 0, 0))
    assert b.pairs[1][1] <= z.makespan_ms <= b.pairs[1][1] * (1 + 2 * PAIR_TOLERANCE)
    assert z.makespan_ms == pytest.approx(3.400312, abs=2e-6)
    assert z.makespan_ms <= c.makespan_ms <= z.makespan_ms + 0.01 + 1e-9


def test_z3_paper_relaxation_admits_every_exact_schedule() -> None:
    """The proof's relaxation (contention coefficients rounded down to 1/PROOF_COEF_DEN,
    ``et >=``) admits what the exact model admits: on the artifact's best pair (optimum
    3.400312 ms) both are ``sat`` at the optimum; the exact model is ``unsat`` just below it."""
    import z3

    from npusched.policies.mapping.instance_z3 import PROOF_COEF_DEN, _fixed_paper_model

    inst = artifact_instance()
    rows = ((0,) * 10, (1, 0, 0, 0, 0, 0, 0, 0))
    for den, target, want in ((None, "3400312/1000000", z3.sat),
                              (PROOF_COEF_DEN, "3400312/1000000", z3.sat),
                              (None, "3400311/1000000", z3.unsat)):
        sol, mk, _, _ = _fixed_paper_model(z3, inst, rows, 0.0, den)
        sol.add(mk <= z3.RealVal(target, mk.ctx))
        sol.set("timeout", 30_000)
        assert sol.check() == want, (den, target)


@pytest.mark.slow
def test_z3_paper_limit_without_transition_costs() -> None:
    """A known limit (docs/papers/haxconn.md): with every transition cost 0 the pair that is
    hard on the artifact's instance holds the optimum (CP-SAT: 3.3737 ms, re-timed from its
    0.01 ms ticks), and Z3 decides none of its checks between its bound and 3.40 ms within the
    limit: it ends ``feasible`` on that mapping, at most the default instance's 3.400312 ms."""
    from dataclasses import replace

    inst = artifact_instance()
    inst = replace(inst, dnns=tuple(
        replace(d, transition_ms=tuple(0.0 for _ in d.transition_ms)) for d in inst.dnns))
    z = solve_instance(inst, "paper", "z3", time_limit_s=8)
    c = solve_instance(inst, "paper", "cpsat", time_limit_s=30)
    assert c.status == "optimal" and c.makespan_ms == pytest.approx(3.37367, abs=1e-4)
    assert z.status == "feasible"
    assert z.devices == c.devices == (("gpu",) * 10, ("gpu",) * 6 + ("dla",) * 2)
    assert c.makespan_ms < z.makespan_ms <= 3.400312 + 1e-6
