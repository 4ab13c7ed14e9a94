"""Workload generators and trace replay."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

import npusched.models.zoo as zoo
from npusched.errors import ConfigError, UnknownNameError
from npusched.models import seqlen
from npusched.workloads import (
    PRIORITY_LEVELS,
    Request,
    apply_slo,
    load_trace,
    poisson_workload,
    prema_workload,
    sample_seq_lens,
    save_trace,
)

MODELS = ["resnet-50", "resnet-18"]


def _check_order(reqs: list[Request]) -> None:
    assert [r.id for r in reqs] == list(range(len(reqs)))
    arr = np.array([r.arrival_s for r in reqs])
    assert (np.diff(arr) >= 0).all()


# --- PREMA -----------------------------------------------------------------------------------
def test_prema_workload_shape_and_ranges() -> None:
    reqs = prema_workload(400, ["ResNet-50", "resnet-18"], 0.05, random_state=3)
    assert len(reqs) == 400
    _check_order(reqs)
    assert {r.network for r in reqs} == {"resnet-50", "resnet-18"}  # canonical names
    assert {r.priority for r in reqs} == set(PRIORITY_LEVELS.values())
    assert {r.batch for r in reqs} == {1, 4, 16}
    assert all(0.0 <= r.arrival_s < 0.05 for r in reqs)
    assert all(r.slo_s is None and r.seq_in is None and r.seq_out is None for r in reqs)
    # uniform choices: each of 3 levels about a third of 400 (binomial sd ~ 9.4)
    counts = np.bincount([r.priority for r in reqs])[[1, 3, 9]]
    assert (np.abs(counts - 400 / 3) < 45).all()


def test_prema_workload_deterministic_and_no_global_state() -> None:
    np.random.seed(123)
    before = np.random.get_state()[1].copy()  # type: ignore[index]
    a = prema_workload(8, MODELS, 0.01, random_state=7)
    b = prema_workload(8, MODELS, 0.01, random_state=7)
    c = prema_workload(8, MODELS, 0.01, random_state=8)
    after = np.random.get_state()[1]  # type: ignore[index]
    assert a == b
    assert a != c
    assert np.array_equal(before, after)


def test_prema_workload_integer_priorities_and_batches() -> None:
    reqs = prema_workload(50, MODELS, 1.0, batch_sizes=[2], priorities=[5, "high"], random_state=0)
    assert {r.batch for r in reqs} == {2}
    assert {r.priority for r in reqs} == {5, 9}


@pytest.mark.parametrize(
    "kwargs",
    [
        {"n_tasks": -1},
        {"window_s": -1.0},
        {"priorities": ["urgent"]},
        {"batch_sizes": [0]},
        {"models": []},
    ],
)
def test_prema_workload_bad_arguments(kwargs: dict[str, object]) -> None:
    args: dict[str, object] = {"n_tasks": 4, "models": MODELS, "window_s": 1.0}
    args.update(kwargs)
    with pytest.raises(ConfigError):
        prema_workload(**args)  # type: ignore[arg-type]


def test_unknown_network_lists_allowed() -> None:
    with pytest.raises(UnknownNameError, match=r"allowed: .*resnet-50"):
        prema_workload(4, ["resnet-5000"], 1.0)


# --- Poisson ---------------------------------------------------------------------------------
def test_poisson_gaps_are_exponential() -> None:
    rate = 250.0
    reqs = poisson_workload(rate, models=MODELS, n_requests=40_000, random_state=11)
    _check_order(reqs)
    gaps = np.diff([0.0] + [r.arrival_s for r in reqs])
    assert gaps.min() > 0
    # mean 1/rate (sd of the mean 0.5%), coefficient of variation 1 (exponential)
    assert gaps.mean() == pytest.approx(1 / rate, rel=0.02)
    assert gaps.std() / gaps.mean() == pytest.approx(1.0, rel=0.03)
    # memorylessness: P(gap > 2/rate) = e^-2
    assert (gaps > 2 / rate).mean() == pytest.approx(np.exp(-2), abs=0.01)


def test_poisson_duration_mode() -> None:
    reqs = poisson_workload(1000.0, models=MODELS, duration_s=20.0, random_state=5)
    arr = np.array([r.arrival_s for r in reqs])
    assert arr.max() < 20.0
    assert len(reqs) == pytest.approx(20_000, abs=4 * np.sqrt(20_000))
    again = poisson_workload(1000.0, models=MODELS, duration_s=20.0, random_state=5)
    assert again == reqs


def test_poisson_priorities_inclusive_and_weights() -> None:
    reqs = poisson_workload(
        100.0,
        models=MODELS,
        n_requests=5000,
        priorities=(1, 11),
        weights={"resnet-50": 3.0, "resnet-18": 1.0},
        random_state=2,
    )
    prio = np.array([r.priority for r in reqs])
    assert prio.min() == 1 and prio.max() == 11
    assert set(np.unique(prio)) == set(range(1, 12))
    frac50 = np.mean([r.network == "resnet-50" for r in reqs])
    assert frac50 == pytest.approx(0.75, abs=0.03)
    only18 = poisson_workload(100.0, models=MODELS, n_requests=200, weights=[0, 1], random_state=2)
    assert {r.network for r in only18} == {"resnet-18"}


def test_poisson_qos_mapping_and_multiplier() -> None:
    reqs = poisson_workload(
        100.0, models=MODELS, n_requests=50, qos={"resnet-50": 0.015}, random_state=0
    )
    for r in reqs:
        assert r.slo_s == (0.015 if r.network == "resnet-50" else None)
    with pytest.raises(ConfigError, match="profiles"):
        poisson_workload(100.0, models=MODELS, n_requests=5, qos=4.0)

    @dataclass
    class FakeProfile:
        t: float

        def isolated_latency(self, batch: int, seq_in: object, seq_out: object) -> float:
            return self.t * batch

    profiles = {"resnet-50": FakeProfile(0.01), "resnet-18": FakeProfile(0.002)}
    reqs = poisson_workload(
        100.0,
        models=MODELS,
        n_requests=20,
        qos=4.0,
        batch_sizes=(1, 2),
        profiles=profiles,  # type: ignore[arg-type]
        random_state=0,
    )
    for r in reqs:
        assert r.slo_s == pytest.approx(4.0 * profiles[r.network].t * r.batch)
    # apply_slo keeps existing SLOs unless asked to overwrite
    again = apply_slo(reqs, lambda r: 1.0, 2.0)
    assert again == reqs
    assert {r.slo_s for r in apply_slo(reqs, lambda r: 1.0, 2.0, overwrite=True)} == {2.0}


@pytest.mark.parametrize(
    "kwargs",
    [
        {"n_requests": 5, "duration_s": 1.0},
        {},
        {"n_requests": 5, "priorities": (0, 3)},
        {"n_requests": 5, "priorities": (5, 3)},
        {"n_requests": 5, "weights": [1.0]},
        {"n_requests": 5, "weights": [-1.0, 2.0]},
        {"n_requests": 5, "qos": -2.0},
    ],
)
def test_poisson_bad_arguments(kwargs: dict[str, object]) -> None:
    with pytest.raises(ConfigError):
        poisson_workload(10.0, models=MODELS, **kwargs)  # type: ignore[arg-type]


def test_poisson_tables_may_only_name_requested_models() -> None:
    # a qos or weights entry for a network that is never requested is a typo, not a no-op
    with pytest.raises(ConfigError, match=r"qos names \['alexnet'\] not in models"):
        poisson_workload(10.0, models=MODELS, n_requests=5, qos={"AlexNet": 0.1})
    with pytest.raises(ConfigError, match=r"weights names \['alexnet'\] not in models"):
        poisson_workload(10.0, models=MODELS, n_requests=5, weights={"alexnet": 1.0})
    with pytest.raises(UnknownNameError, match="unknown network 'alexnet-9'"):
        poisson_workload(10.0, models=MODELS, n_requests=5, qos={"alexnet-9": 0.1})


def test_poisson_global_state_untouched() -> None:
    np.random.seed(5)
    x = np.random.random()
    np.random.seed(5)
    poisson_workload(10.0, models=MODELS, n_requests=100, random_state=1)
    assert np.random.random() == x


# --- sequence lengths ------------------------------------------------------------------------
class _FixedLengths:
    def sample(self, rng: np.random.Generator, size: int) -> tuple[np.ndarray, np.ndarray]:
        s_in = rng.integers(3, 9, size=size)
        return s_in, 2 * s_in


def test_length_model_sampled_with_the_workload_generator(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(seqlen.LENGTH_MODELS, "resnet-18", _FixedLengths())
    reqs = prema_workload(60, MODELS, 1.0, random_state=4)
    assert reqs == prema_workload(60, MODELS, 1.0, random_state=4)
    for r in reqs:
        if r.network == "resnet-18":
            assert r.seq_in is not None and 3 <= r.seq_in < 9 and r.seq_out == 2 * r.seq_in
        else:
            assert r.seq_in is None and r.seq_out is None
    assert len({r.seq_in for r in reqs if r.network == "resnet-18"}) > 1


def test_recurrent_default_seq_len(monkeypatch: pytest.MonkeyPatch) -> None:
    @dataclass
    class FakeNet:
        is_recurrent: bool
        seq_len: tuple[int, int] | None

    real = zoo.get_network

    def fake_get(name: str) -> object:
        return FakeNet(True, (5, 7)) if name == "resnet-18" else real(name)

    monkeypatch.setattr(zoo, "get_network", fake_get)
    s_in, s_out = sample_seq_lens(["resnet-18", "resnet-50"], np.random.default_rng(0))
    assert s_in == [5, None] and s_out == [7, None]


# --- traces ----------------------------------------------------------------------------------
@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_trace_round_trip(tmp_path: Path, suffix: str) -> None:
    reqs = poisson_workload(
        123.0,
        models=MODELS,
        n_requests=300,
        batch_sizes=(1, 4),
        qos={"resnet-50": 0.02},
        random_state=9,
    )
    path = save_trace(reqs, tmp_path / f"trace{suffix}")
    assert load_trace(path) == reqs
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temp files left


def _write(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "t.csv"
    p.write_text(text)
    return p


def test_trace_minimal_and_ordering(tmp_path: Path) -> None:
    """Rows in any order with an id column: sorted by (arrival, id), the file's ids kept."""
    p = _write(
        tmp_path, "arrival_s,network,id\n0.5,resnet-18,2\n0.1,ResNet-50,0\n0.5,resnet-50,1\n"
    )
    reqs = load_trace(p)
    assert [(r.id, r.arrival_s, r.network) for r in reqs] == [
        (0, 0.1, "resnet-50"),
        (1, 0.5, "resnet-50"),  # tie broken by the id column (1 < 2)
        (2, 0.5, "resnet-18"),
    ]
    assert all(r.batch == 1 and r.priority == 1 and r.slo_s is None for r in reqs)


def test_trace_ids_are_never_renumbered_silently(tmp_path: Path) -> None:
    """Defect 5 (issue 15): an unsorted trace without ids, or ids that would have to change,
    is refused with the first row out of order instead of being renumbered."""
    unsorted = _write(tmp_path, "arrival_s,network\n0.5,resnet-18\n0.1,resnet-50\n")
    with pytest.raises(ConfigError, match=r"row 2: column 'arrival_s': earlier than the previous"):
        load_trace(unsorted)
    sparse = _write(
        tmp_path, "arrival_s,network,id\n0.5,resnet-18,7\n0.1,ResNet-50,3\n0.5,resnet-50,2\n"
    )
    with pytest.raises(ConfigError, match=r"row 1: column 'id': ids must be 0..n-1 in arrival"):
        load_trace(sparse)


@pytest.mark.parametrize(
    ("text", "pattern"),
    [
        (
            "arrival_s,network\n0.1,resnet-18\n-1,resnet-18\n",
            r"row 2: column 'arrival_s': negative",
        ),
        ("arrival_s,network\n0.1,resnet-5000\n", r"row 1: column 'network': unknown network"),
        (
            "arrival_s,network,batch\n0,resnet-18,1\n0,resnet-18,1.5\n",
            r"row 2: column 'batch': not an integer",
        ),
        ("arrival_s,network,batch\n0,resnet-18,abc\n", r"row 1: column 'batch': not a number"),
        ("arrival_s,network,batch\n0,resnet-18,0\n", r"row 1: column 'batch': must be >= 1"),
        ("arrival_s,network,slo_s\n0,resnet-18,0\n", r"row 1: column 'slo_s': must be > 0"),
        ("arrival_s,network\n,resnet-18\n", r"row 1: column 'arrival_s': missing value"),
        ("arrival_s,network\nx,resnet-18\n", r"row 1: column 'arrival_s': not a number"),
        ("arrival_s,network\ninf,resnet-18\n", r"row 1: column 'arrival_s': not a finite"),
        ("arrival_s,network,seq_in\n0,resnet-18,4\n", r"row 1: column 'seq_in': sequence length"),
        ("arrival_s,network,id\n0,resnet-18,1\n1,resnet-18,1\n", r"row 2: column 'id': duplicate"),
        ("arrival_s,net\n0,resnet-18\n", r"missing required column 'network'"),
        ("arrival_s,network,prio\n0,resnet-18,1\n", r"unknown column 'prio'; allowed: arrival_s"),
    ],
)
def test_trace_bad_rows(tmp_path: Path, text: str, pattern: str) -> None:
    p = _write(tmp_path, text)
    with pytest.raises(ConfigError, match=pattern) as info:
        load_trace(p)
    msg = str(info.value)
    assert str(p) in msg and "\n" not in msg


def test_trace_file_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="not found"):
        load_trace(tmp_path / "missing.csv")
    with pytest.raises(ConfigError, match=r"allowed: \.csv, \.parquet"):
        load_trace(tmp_path / "t.json")
    p = tmp_path / "x.parquet"
    p.write_text("not parquet")
    with pytest.raises(ConfigError, match="cannot read trace"):
        load_trace(p)


def test_trace_extra_columns_can_be_ignored(tmp_path: Path) -> None:
    p = _write(tmp_path, "arrival_s,network,finish_s\n0,resnet-18,1.0\n")
    assert load_trace(p, ignore_extra_columns=True)[0].network == "resnet-18"


def test_assemble_equals_one_request_per_row() -> None:
    """``assemble`` builds the requests column-wise (one positional map): each equals the
    request built field by field from its row, in stable arrival order, with ``None`` kept,
    SLOs as floats, sequence lengths as ints and non-``str`` names converted."""
    import numpy as np

    from npusched.workloads.generators import assemble
    from npusched.workloads.request import Request

    arr = [0.3, 0.1, 0.3, 0.0]
    nets = [np.str_("alexnet"), "gnmt", "alexnet", "gnmt"]
    slo = [None, np.float64(0.5), 1, None]
    s_in = [None, np.int64(7), None, 3]
    got = assemble(
        arr, nets, batch=[1, 4, 16, 1], priority=[9, 3, 1, 1], slo_s=slo, seq_in=s_in,
        seq_out=[None, 9, None, np.int64(4)],
    )
    order = [3, 1, 0, 2]
    want = [
        Request(
            id=k,
            arrival_s=arr[i],
            network=str(nets[i]),
            batch=[1, 4, 16, 1][i],
            priority=[9, 3, 1, 1][i],
            slo_s=None if slo[i] is None else float(slo[i]),  # type: ignore[arg-type]
            seq_in=None if s_in[i] is None else int(s_in[i]),  # type: ignore[arg-type]
            seq_out=[None, 9, None, 4][i],
        )
        for k, i in enumerate(order)
    ]
    assert got == want
    for g in got:
        assert type(g.network) is str and type(g.arrival_s) is float
        assert g.slo_s is None or type(g.slo_s) is float
        assert g.seq_in is None or type(g.seq_in) is int
        assert g.seq_out is None or type(g.seq_out) is int


def test_requests_from_columns_equal_the_dataclass_constructor() -> None:
    """The trusted constructor (slots set directly, for the assembled columns) builds requests
    equal field by field, in hash and in repr to ``Request(...)``, defaults included."""
    from dataclasses import astuple

    from npusched.workloads.request import Request, requests_from_columns

    cols = (
        [0.5, 0.25, 1.0],
        ["alexnet", "rnn-sa", "vgg-16"],
        [1, 4, 16],
        [1, 3, 9],
        [None, 0.01, None],
        [None, 12, None],
        [None, 7, None],
    )
    got = requests_from_columns(*[list(c) for c in cols])
    want = [Request(i, *row) for i, row in enumerate(zip(*cols, strict=True))]
    assert got == want
    assert [astuple(g) for g in got] == [astuple(w) for w in want]
    assert [hash(g) for g in got] == [hash(w) for w in want]
    assert [repr(g) for g in got] == [repr(w) for w in want]
    with pytest.raises(AttributeError):
        got[0].batch = 2  # type: ignore[misc]
