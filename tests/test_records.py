"""The per-request result columns written once (``sim/records.py``, ``write_records``): lists by
dispatch order or columns by result row (``array``s; the loop's ``vec``s) give the same columns
(the writer against a reference that scatters by hand), with merged batches, ``until``'s partial
records and dependents that never ran; the runs on which the column loop's records were
compared with the general loop's until the twenty-eighth round are checked against the values
frozen from them (``tests/golden_loops.py``)."""

from __future__ import annotations

import math
from array import array
from typing import Any

import numpy as np
import pytest

import golden_loops
from npusched.bench import bench_workload, synthetic_profiles
from npusched.policies.base import POLICIES
from npusched.policies.contract import NOTHING, Allocation, MachineView, Merge, Schedule
from npusched.sim import Simulator, records, single_npu
from npusched.sim.engine import _Run
from npusched.workloads.request import Request
from simhelpers import Scripted
from test_engine_core import MS, by_id, exit_profile

#: The result columns the writer makes (``_Run._result`` reads them).
COLUMNS = (
    "col_est",
    "col_first",
    "col_finish",
    "col_preempt",
    "col_cbytes",
    "col_cs",
    "col_wasted",
    "col_energy",
)


def _values(n: int, seed: int) -> dict[str, list[Any]]:
    """Per-request values by dispatch order (nan finishes for some: unfinished requests)."""
    rng = np.random.default_rng(seed)
    finish = rng.uniform(1.0, 2.0, n)
    finish[rng.uniform(size=n) < 0.3] = math.nan
    npre = rng.integers(0, 3, n)
    return {
        "est": rng.uniform(0.0, 1.0, n).tolist(),
        "first": rng.uniform(0.0, 1.0, n).tolist(),
        "finish": finish.tolist(),
        "energy": rng.uniform(0.0, 1e-3, n).tolist(),
        "npre": npre.tolist(),
        "cbytes": (npre * 64).tolist(),
        "csec": (npre * 1e-6).tolist(),
        "wasted": np.where(npre > 1, 1e-4, 0.0).tolist(),
    }


def _run(n: int, until: float | None = None) -> _Run:
    """A run of ``n`` requests whose ids and arrivals are out of dispatch order (the result
    rows, by id, are a permutation of the dispatch order)."""
    profiles = synthetic_profiles(random_state=3)
    reqs = bench_workload(n, profiles, random_state=4)
    perm = np.random.default_rng(5).permutation(n).tolist()
    reqs = [
        Request(id=perm[i], arrival_s=r.arrival_s, network=r.network, priority=r.priority)
        for i, r in enumerate(reqs)
    ]
    return _Run(Simulator(profiles, POLICIES.create("P-HPF")), reqs, until, None)


def _columns(run: _Run) -> dict[str, Any]:
    out = {name: np.asarray(getattr(run, name)) for name in COLUMNS}
    out["col_res"] = list(run.col_res)
    return out


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("dispatched", [None, 0, 7, 19])
def test_dispatch_order_and_rows_give_the_same_columns(sparse: bool, dispatched: Any) -> None:
    """The column loop's form (lists by dispatch order, scattered by ``arrival_rows``) and the
    general loop's (``array`` columns by result row, kept) give the same columns, bit for bit;
    the reference scatters each value to its row by hand."""
    n = 20
    vals = _values(n, 11)
    touched = [k for k in range(n) if vals["npre"][k]] if sparse else None
    by_disp = _run(n, until=1.5 if dispatched is not None else None)
    rows = list(by_disp.arrival_rows)
    assert sorted(rows) == list(range(n)) and rows != list(range(n))
    records.write_records(
        by_disp,
        by_disp.arrival_rows,
        vals["est"],
        vals["npre"],
        vals["cbytes"],
        vals["csec"],
        vals["wasted"],
        first=records.doubles(vals["first"]),
        finish=records.doubles(vals["finish"]),
        energy=vals["energy"],
        touched=touched,
        dispatched=dispatched,
    )
    # The reference: every value at its row, handed as the general loop's ``array`` columns.
    by_row = _run(n)

    def at_rows(name: str, code: str) -> Any:
        out = array(code, [0] * n if code == "q" else [0.0] * n)
        for k, v in enumerate(vals[name]):
            out[rows[k]] = v
        return out

    name = by_disp.res[0].name
    resource = [""] * n
    for k in range(n):
        if vals["finish"][k] == vals["finish"][k] or dispatched is None:
            resource[rows[k]] = name
    records.write_records(
        by_row,
        None,
        at_rows("est", "d"),
        at_rows("npre", "q"),
        at_rows("cbytes", "q"),
        at_rows("csec", "d"),
        at_rows("wasted", "d"),
        first=at_rows("first", "d"),
        finish=at_rows("finish", "d"),
        energy=at_rows("energy", "d"),
        resource=resource,
    )
    got, want = _columns(by_disp), _columns(by_row)
    for col in COLUMNS:
        np.testing.assert_array_equal(got[col], want[col], strict=True, err_msg=col)
        assert got[col].tobytes() == want[col].tobytes(), col
    assert got["col_res"] == want["col_res"]


def test_loop_columns_are_vecs_copied_in_one_block() -> None:
    """The loop's record columns are ``vec``s of C doubles / int64s (``float_column``,
    ``int_column``: nan or zero, 8 bytes a request); ``_write_records`` copies each through its
    buffer into a writable array of the same bits (the result's ``col_*``) and leaves an empty
    ``vec`` of its type in its place."""
    from librt.vecs import vec
    from mypy_extensions import i64

    run = _run(10)
    recs = {name: getattr(run, "rec" + name[3:]) for name in COLUMNS}
    for name, v in recs.items():
        want = vec[i64] if name in ("col_preempt", "col_cbytes") else vec[float]
        assert type(v) is want and len(v) == 10, name
    assert all(x != x for x in recs["col_finish"]) and not any(recs["col_energy"])
    recs["col_finish"][3] = 0.125
    recs["col_preempt"][4] = 2
    recs["col_energy"][5] = -0.0
    run.res_names[3] = "npu"
    wrote = {name: memoryview(v).tobytes() for name, v in recs.items()}
    run._write_records()
    for name, v in recs.items():
        got = getattr(run, name)
        assert isinstance(got, np.ndarray) and got.flags.writeable, name
        assert got.tobytes() == wrote[name], name
        left = getattr(run, "rec" + name[3:])
        assert type(left) is type(v) and len(left) == 0, name
    assert run.col_finish[3] == 0.125 and run.col_preempt[4] == 2
    assert np.signbit(run.col_energy[5])
    assert run.col_preempt.dtype == np.int64 and run.col_finish.dtype == np.float64
    assert list(run.col_res) == ["", "", "", "npu"] + [""] * 6


def test_estimates_none_are_the_isolated_latencies() -> None:
    """``est`` None (no estimator): the isolated latencies by row, nan for the requests that
    never arrived (``dispatched``), whatever the order."""
    n = 12
    run = _run(n, until=0.5)
    iso = np.asarray(run.col_iso).copy()
    zeros = [0] * n
    records.write_records(
        run, run.arrival_rows, None, zeros, zeros, [0.0] * n, [0.0] * n, dispatched=5
    )
    want = iso.copy()
    for k in range(5, n):
        want[run.arrival_rows[k]] = math.nan
    np.testing.assert_array_equal(run.col_est, want)


# --- the records of runs with dependents and ``until`` ---------------------------------------


_dependent_workload = golden_loops.dependent_workload


@pytest.mark.parametrize("name", golden_loops.RECORD_POLICIES)
@pytest.mark.parametrize("mechanism", ["checkpoint", "kill"])
@pytest.mark.parametrize("until", golden_loops.RECORD_UNTIL)
def test_records_with_dependents_and_until(name: str, mechanism: str, until: Any) -> None:
    """The records of a run with dependents (some never released before ``until``) and
    ``until``'s partial records: the run both loops gave at dbd9f47 (where the column loop
    handed its lists by dispatch order, the general loop its ``array`` columns by row), and
    what a request that did not finish or never started holds."""
    res = golden_loops.frozen(f"records/{name}/{mechanism}/{until}")
    c = res.columns
    unfinished = np.isnan(c["finish_s"])
    assert unfinished.any() == (until is not None)
    # a request that did not finish names no resource; one that did, the machine's
    assert set(c["resource"][unfinished]) <= {""}
    assert set(c["resource"][~unfinished]) <= {"npu"}
    # a request that never started has no first start, no joules and nothing saved
    never = np.isnan(c["first_start_s"])
    assert not (c["energy_j"][never] != 0.0).any()
    assert not (c["preemptions"][never] != 0).any()


def test_dependents_that_never_ran() -> None:
    """A dependent request whose predecessor did not finish before ``until`` never arrived: no
    estimate, no start, no finish, no resource."""
    profiles = synthetic_profiles(random_state=0)
    reqs = _dependent_workload(60)
    sim = Simulator(profiles, POLICIES.create("P-HPF"))
    c = sim.run(reqs, until=0.01).columns
    held = np.asarray([r.depends_on is not None for r in reqs])
    pred_done = np.asarray(
        [r.depends_on is not None and c["finish_s"][r.depends_on] <= 0.01 for r in reqs]
    )
    never = held & ~pred_done
    assert never.any()
    assert np.isnan(c["estimated_s"][never]).all()
    assert np.isnan(c["first_start_s"][never]).all()
    assert np.isnan(c["finish_s"][never]).all()
    assert set(c["resource"][never]) == {""}


# --- merged batches (the general loop) ----------------------------------------------------


def _merge_script(v: MachineView) -> Schedule:
    """``test_engine_core``'s batch: samples 0 and 1 merged at 0 (2 ms a layer at batch 2),
    sample 0 leaves at its exit (4 ms); sample 2 (arrived at 1 ms) runs alone to the exit step
    (4 -> 6 ms) and is merged back; the batch of 2 runs layers 2-3 (6 -> 10 ms)."""
    j0, j1, j2 = by_id(v, 0), by_id(v, 1), by_id(v, 2)
    if v.reason == "arrival" and v.now == 0.0:
        return Schedule(merge=(Merge(j0, (j1,)),), assign={j0: Allocation()})
    if v.reason == "exit":
        return Schedule(preempt=(j1 or j0,), until_step={j2: 2}, assign={j2: Allocation()})
    if v.reason == "stopped":
        batch = v.ready[0] if v.ready[0].id != 2 else v.ready[1]
        return Schedule(merge=(Merge(batch, (j2,)),), assign={batch: Allocation()})
    return NOTHING


def _merged(until: float | None) -> Any:
    reqs = [Request(0, 0.0, "e", exit=0), Request(1, 0.0, "e"), Request(2, 1 * MS, "e")]
    sim = Simulator(
        {"e": exit_profile()}, Scripted(_merge_script), machine=single_npu(), checkpoint_cost=False
    )
    res = sim.run(reqs) if until is None else sim.run(reqs, until=until)
    return res.columns


def test_merged_batch_records() -> None:
    """A batch's joules are shared among its samples, each closed segment's in equal parts;
    a sample merged in keeps its own first start; the sample that left at its exit keeps its
    finish and resource."""
    c = _merged(None)
    np.testing.assert_allclose(c["finish_s"], [4 * MS, 10 * MS, 10 * MS], atol=1e-12)
    np.testing.assert_allclose(c["first_start_s"], [0.0, 0.0, 4 * MS], atol=1e-12)
    np.testing.assert_allclose(c["energy_j"], [2e-3, 4e-3, 4e-3], rtol=1e-12)
    assert list(c["resource"]) == ["npu"] * 3


@pytest.mark.parametrize(
    ("until", "finish", "first", "energy"),
    [
        # the batch of 0 and 1 running: nothing closed yet
        (3 * MS, [math.nan] * 3, [0.0, 0.0, math.nan], [0.0, 0.0, 0.0]),
        # 0 left at its exit (its half of the batch's 4 mJ), 2 running alone, 1 parked
        (5 * MS, [4 * MS, math.nan, math.nan], [0.0, 0.0, 4 * MS], [2e-3, 2e-3, 0.0]),
        # 2 merged into 1's batch, which runs: 2 keeps its own first start and its 2 mJ alone
        (8 * MS, [4 * MS, math.nan, math.nan], [0.0, 0.0, 4 * MS], [2e-3, 2e-3, 2e-3]),
    ],
)
def test_merged_batch_partial_records(
    until: float, finish: list[float], first: list[float], energy: list[float]
) -> None:
    """``until``'s partial records of a merged batch: the jobs in flight keep their first
    starts and joules so far, no finish and no resource."""
    c = _merged(until)
    np.testing.assert_allclose(c["finish_s"], finish, atol=1e-12)
    np.testing.assert_allclose(c["first_start_s"], first, atol=1e-12)
    np.testing.assert_allclose(c["energy_j"], energy, rtol=1e-12, atol=1e-15)
    assert list(c["resource"]) == ["npu" if f == f else "" for f in finish]


# --- the livelock guard's count (``common.futile_preemption``, both loops) ------------------


def test_futile_preemptions_are_counted_then_raise() -> None:
    """The count goes up by one per call and raises past ``_MAX_FUTILE_PREEMPTIONS``, naming
    the policy (its ``name``, else its class) and the time."""
    from npusched.errors import SimulationError
    from npusched.sim.common import _MAX_FUTILE_PREEMPTIONS, futile_preemption, livelock_message

    class Named:
        name = "P-X"

    class Unnamed:
        pass

    assert futile_preemption(0, Named(), 1.0) == 1
    assert futile_preemption(_MAX_FUTILE_PREEMPTIONS - 1, Named(), 1.0) == _MAX_FUTILE_PREEMPTIONS
    for pol, name in ((Named(), "P-X"), (Unnamed(), "Unnamed")):
        with pytest.raises(SimulationError) as err:
            futile_preemption(_MAX_FUTILE_PREEMPTIONS, pol, 0.25)
        assert str(err.value) == livelock_message(name, 0.25)
