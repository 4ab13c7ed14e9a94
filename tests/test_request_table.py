"""The workload as columns (issue 25, ninth round): :class:`RequestTable` is the requests of the
generators as a sequence, ``Simulator.run`` gives the same result for a table and for its list of
requests (column loop and general loop), ``run_config`` makes no request object on a temporal
family's path, and a ``shape_only`` estimator is called once per request shape."""

from __future__ import annotations

import operator
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from golden_engine import digest, load_simulator
from npusched.bench.families import family_configs
from npusched.experiments.config import parse_config
from npusched.experiments.runner import compile_profiles, run_config
from npusched.hardware import get_device
from npusched.policies import POLICIES
from npusched.policies.temporal.hpf import HPF
from npusched.policies.temporal.predictor import prema_estimate
from npusched.sim.engine import KeyRow, Simulator
from npusched.workloads import (
    Request,
    RequestTable,
    apply_slo,
    assemble,
    assemble_table,
    poisson_table,
    poisson_workload,
    prema_table,
    prema_workload,
)
from npusched.workloads.request import number_coded_shapes, number_shapes

MODELS = ["resnet50", "gnmt", "mobilenet"]


def _table() -> RequestTable:
    return prema_table(300, MODELS, 0.15, random_state=7)


def test_table_is_the_generators_requests() -> None:
    """Items, iteration, slices, negative indices and equality match the list of requests."""
    t = _table()
    reqs = prema_workload(300, MODELS, 0.15, random_state=7)
    assert len(t) == len(reqs) == 300
    assert [t[i] for i in range(len(t))] == reqs
    assert t[-1] == reqs[-1]
    assert t[10:13] == reqs[10:13]
    assert t == reqs
    assert list(t) == reqs
    assert t.requests() is t.requests()  # made once, then kept
    assert t.column("exit").count(None) == 300
    assert list(t.column("transfer_s")) == [0.0] * 300
    with pytest.raises(IndexError):
        _ = t[300]
    with pytest.raises(ValueError, match="column lengths differ"):
        RequestTable([0.0], ["a"], [1], [1], [None], [None], [])


@pytest.mark.parametrize("arrivals", ["exponential", "artifact"])
def test_poisson_table_is_poisson_workload(arrivals: str) -> None:
    kw: dict[str, Any] = {
        "models": MODELS,
        "duration_s": 0.5,
        "qos": {"resnet-50": 0.05},
        "random_state": 3,
        "arrivals": arrivals,
    }
    t = poisson_table(400.0, **kw)
    reqs = poisson_workload(400.0, **kw)
    assert [t[i] for i in range(len(t))] == reqs
    assert any(r.slo_s is not None for r in reqs)


def test_assemble_table_sorts_and_numbers() -> None:
    t = assemble_table([0.3, 0.1, 0.2], ["a", "b", "c"], priority=[1, 2, 3])
    assert [t[i] for i in range(3)] == assemble([0.3, 0.1, 0.2], ["a", "b", "c"], priority=[1, 2, 3])
    assert t[0] == Request(0, 0.1, "b", priority=2)


def test_apply_slo_on_a_table_equals_the_list() -> None:
    t = _table()
    profiles = compile_profiles(t, get_device("prema-npu"))
    got = apply_slo(t, profiles, 3.0)
    assert isinstance(got, RequestTable)
    assert [got[i] for i in range(len(got))] == apply_slo(t.requests(), profiles, 3.0)


def _profiles(t: RequestTable) -> Any:
    return compile_profiles(t, get_device("prema-npu"))


@pytest.mark.parametrize(
    ("name", "params", "timeline"),
    [
        ("NP-FCFS", {}, False),
        ("P-HPF", {"mechanism": "checkpoint"}, True),
        ("P-SJF", {"mechanism": "kill"}, False),
        ("P-TOKEN", {"mechanism": "checkpoint"}, True),
        ("P-PREMA", {"mechanism": "dynamic"}, False),
        ("P-RRB", {"mechanism": "checkpoint"}, True),  # the round-robin order
    ],
)
def test_run_of_a_table_equals_run_of_its_requests(
    name: str, params: dict[str, Any], timeline: bool
) -> None:
    """Every column, scalar, power piece and timeline segment is the same for a table and for
    the list of its requests (the one path of ``_prepare``; the key rows, the per-shape
    estimates; the requests made from the table where a policy's hooks are given them)."""
    t = _table()
    profiles = _profiles(t)

    def run(w: Any) -> Any:
        sim = load_simulator(profiles, POLICIES.create(name, **params), record_timeline=timeline)
        return sim.run(w)

    a, b = run(t), run(t.requests())
    assert digest(a) == digest(b)
    assert a.timeline == b.timeline


def test_run_of_a_table_out_of_order_equals_its_list() -> None:
    """Input not in dispatch order (ids descending with arrival): the same result."""
    reqs = [Request(i, 0.001 * (20 - i), "resnet-50", priority=1 + i % 3) for i in range(20)]
    cols = {f: [getattr(r, f) for r in reqs] for f in ("arrival_s", "network", "batch", "priority")}
    t = RequestTable(
        cols["arrival_s"], cols["network"], cols["batch"], cols["priority"],
        [None] * 20, [None] * 20, [None] * 20,
    )  # fmt: skip
    assert [t[i] for i in range(20)] == reqs
    profiles = _profiles(t)
    for name in ("P-HPF", "NP-FCFS"):
        sim = load_simulator(profiles, POLICIES.create(name), record_timeline=True)
        a, b = sim.run(t), sim.run(reqs)
        assert digest(a) == digest(b)
        assert a.timeline == b.timeline


def test_a_job_takes_its_requests_fields_with_any_ids() -> None:
    """A job's fields are its request's (id, network, batch, priority, SLO, arrival, sequence
    lengths) where the ids are not the input's indices and the input is not in dispatch order:
    the engine gives a job the fields of its shape and of the input's columns, not read from
    the request object, and a policy that reads them sees the request's."""
    base = prema_table(40, MODELS, 0.02, random_state=3).requests()
    order = sorted(range(40), key=lambda i: (i * 17) % 40)  # not in dispatch order
    reqs = [
        Request(
            5000 - 11 * i,  # ids neither 0..n-1 nor increasing
            base[i].arrival_s,
            base[i].network,
            batch=base[i].batch,
            priority=base[i].priority,
            slo_s=0.001 * (i + 1),
            seq_in=base[i].seq_in,
            seq_out=base[i].seq_out,
        )
        for i in order
    ]
    by_id = {r.id: r for r in reqs}
    seen: list[int] = []

    class Watching(HPF):
        def on_dispatch(self, job: Any, now: float) -> None:
            r = by_id[job.id]
            assert job.request is r
            assert (job.network, job.priority, job.slo_s) == (r.network, r.priority, r.slo_s)
            assert (job.batch, job.seq_in, job.seq_out) == (r.batch, r.seq_in, r.seq_out)
            assert job.arrival_s == r.arrival_s
            seen.append(job.id)

    profiles = _profiles(prema_table(40, MODELS, 0.02, random_state=3))
    res = Simulator(profiles, Watching()).run(reqs)
    assert sorted(seen) == sorted(by_id)
    assert sorted(res.columns["id"].tolist()) == sorted(by_id)


@pytest.mark.parametrize("fam", ["FCFS", "HPF", "SJF", "TOKEN", "PREMA"])
def test_run_config_makes_no_request_object(fam: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A temporal family's ``run_config`` takes the table through the engine and back without
    making a request (the table's :meth:`~RequestTable.requests` is never called)."""

    def refuse(self: RequestTable) -> list[Request]:
        raise AssertionError("a request object was made")

    cfg = parse_config(dict(family_configs(200)[fam], seed=0), source=fam)
    monkeypatch.setattr(RequestTable, "requests", refuse)
    out = run_config(cfg)
    assert isinstance(out.requests, RequestTable)
    assert out.summary["n_finished"] == 200.0
    monkeypatch.undo()
    assert out.requests[0].id == 0  # made on access


def test_shape_only_estimator_is_called_once_per_shape() -> None:
    """``prema_estimate`` is marked ``shape_only``: one call per request shape, the same
    estimates; an unmarked estimator is still called once per request."""
    t = _table()
    profiles = _profiles(t)
    assert getattr(prema_estimate, "shape_only", False)
    calls: list[int] = []

    def marked(r: Request, prof: Any) -> float:
        calls.append(r.id)
        return prema_estimate(r, prof)

    def unmarked(r: Request, prof: Any) -> float:
        calls.append(r.id)
        return prema_estimate(r, prof)

    marked.shape_only = True  # type: ignore[attr-defined]
    shapes = {(r.network, r.batch, r.seq_in, r.seq_out) for r in t}
    results = []
    for est in (marked, unmarked):
        calls.clear()
        sim = Simulator(profiles, POLICIES.create("P-SJF"), estimator=est, record_power=True)
        results.append(sim.run(t))
        assert len(calls) == (len(shapes) if est is marked else len(t))
    a, b = results
    assert np.array_equal(a.columns["estimated_s"], b.columns["estimated_s"])
    assert digest(a) == digest(b)


class _BatchFirst(HPF):
    """A ranked policy whose queue key reads a field the key rows do not hold."""

    name = "P-HPF-batch"

    @staticmethod
    def queue_key(job: Any) -> int:
        return -int(job.priority) * 100 + int(job.batch)


def test_a_key_reading_other_fields_gets_the_requests() -> None:
    """The key rows hold ``id, arrival_s, network, priority``; a key that reads more is called
    with the requests instead (made from the table), with the same result as for the list."""
    t = _table()
    profiles = _profiles(t)
    assert KeyRow._fields == ("id", "arrival_s", "network", "priority")
    row = KeyRow(1, 0.5, "resnet-50", 9)
    assert HPF.queue_key(row) == -9
    assert operator.attrgetter("arrival_s", "id")(row) == (0.5, 1)
    sim = load_simulator(profiles, _BatchFirst())
    assert digest(sim.run(t)) == digest(sim.run(t.requests()))


def test_a_key_that_names_its_fields_is_called_once_per_value() -> None:
    """HPF's ``queue_key_reads`` (``priority``): one call per distinct priority; FCFS's (none):
    one call; both give the same result as a subclass that names no fields."""
    t = _table()
    profiles = _profiles(t)
    calls: list[Any] = []

    class Counted(HPF):
        @staticmethod
        def queue_key(job: Any) -> int:
            calls.append(vars(job))
            return -int(job.priority)

        queue_key_reads = ("priority",)

    class Unnamed(HPF):
        @staticmethod
        def queue_key(job: Any) -> int:
            return -int(job.priority)

    a = load_simulator(profiles, Counted()).run(t)
    assert sorted(c["priority"] for c in calls) == sorted({r.priority for r in t})
    b = load_simulator(profiles, Unnamed()).run(t)
    c = load_simulator(profiles, HPF()).run(t.requests())
    assert digest(a) == digest(b) == digest(c)


@settings(max_examples=200, deadline=None)
@given(
    code=st.lists(st.integers(0, 4), max_size=60),
    batches=st.lists(st.integers(0, 17), min_size=1, max_size=5),
    data=st.data(),
)
def test_shapes_numbered_from_the_draws_equal_the_keys_numbered(
    code: list[int], batches: list[int], data: st.DataObject
) -> None:
    """A generator's shapes, numbered from its integer draws, are the keys and numbers that
    one look-up per request gives (the same order of first appearance)."""
    names = ["a", "b", "c", "d", "e"]
    batch = [data.draw(st.sampled_from(batches)) for _ in code]
    nets = [names[c] for c in code]
    nones = [None] * len(code)
    want_keys, want_codes = number_shapes(nets, batch, nones, nones)
    got = number_coded_shapes(np.array(code, dtype=np.int64), names, np.array(batch, np.int64))
    assert got is not None
    keys, codes = got
    assert keys == want_keys
    assert [type(k[1]) for k in keys] == [int] * len(keys)
    assert codes.tolist() == want_codes.tolist()
    assert not codes.flags.writeable


@pytest.mark.parametrize("kind", ["prema", "poisson", "artifact"])
def test_generated_tables_carry_the_shapes_their_columns_give(kind: str) -> None:
    """The generators' tables come with their shapes, equal to the columns' own numbering,
    and a run on such a table equals the run on the same requests as a list."""
    models = ["resnet50", "mobilenet", "alexnet"]
    if kind == "prema":
        table = prema_table(300, models, 0.05, random_state=3)
    else:
        table = poisson_table(
            2000.0,
            models=models,
            n_requests=300,
            batch_sizes=(1, 2, 8),
            random_state=4,
            arrivals="exponential" if kind == "poisson" else "artifact",
        )
    assert table._shapes is not None
    cols = [table.column(f) for f in ("network", "batch", "seq_in", "seq_out")]
    keys, codes = number_shapes(*cols)
    assert table.shapes()[0] == keys
    assert table.shapes()[1].tolist() == codes.tolist()
    profiles = compile_profiles(table, get_device("prema-npu"))
    a = Simulator(profiles, POLICIES.create("P-HPF"), record_power=True).run(table)
    b = Simulator(profiles, POLICIES.create("P-HPF"), record_power=True).run(list(table))
    assert digest(a) == digest(b)
