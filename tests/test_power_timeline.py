"""``power_timeline`` in one pass of array operations equals the piece-at-a-time sum it
replaced (kept here as the reference) to the last bit, on random pieces of random plans."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from npusched.hardware.profile import ExecPlan
from npusched.sim.engine import PowerPiece, power_timeline


def reference(pieces: list[PowerPiece]) -> tuple[np.ndarray, np.ndarray]:
    """The timeline a time at a time (the twenty-second round's definition).

    Each piece's bounds are its plan's prefix sums over the work it did, as times
    ``start + (bound - exec0) / rate`` with the last one its end (taken as their running
    maximum capped at the end: a step that rounding puts backwards lasts no time); from bound
    ``j`` to bound ``j + 1`` it draws its step's watts times its rate. At each distinct bound
    time the level is the sum of what every piece computing then draws, added in the
    pieces' order from 0 W; then levels under 1e-9 of the largest magnitude are zeroed."""
    parts = []
    for p in pieces:
        if p.end_s <= p.start_s or p.exec1_s <= p.exec0_s:
            continue
        cum = p.plan.cum_s
        s0 = int(np.searchsorted(cum, p.exec0_s, side="right")) - 1
        s1 = int(np.searchsorted(cum, p.exec1_s, side="left"))
        s0 = max(s0, 0)
        s1 = min(max(s1, s0 + 1), p.plan.steps)
        if s1 <= s0:
            continue
        bounds = np.clip(cum[s0 : s1 + 1], p.exec0_s, p.exec1_s)
        t = p.start_s + (bounds - p.exec0_s) / p.rate
        t[-1] = p.end_s
        t = np.minimum(np.maximum.accumulate(t), t[-1])
        parts.append((t, p.plan.power_w[s0:s1] * p.rate))
    if not parts:
        return np.zeros(1), np.zeros(1)
    times = np.unique(np.concatenate([t for t, _ in parts]))
    level = np.zeros(len(times))
    for i, tau in enumerate(times.tolist()):
        x = 0.0
        for t, w in parts:
            if t[0] <= tau < t[-1]:
                x += w[int(np.searchsorted(t, tau, side="right")) - 1]
        level[i] = x
    level[np.abs(level) < 1e-9 * max(1.0, float(np.max(np.abs(level))))] = 0.0
    return times, level


@st.composite
def pieces(draw: st.DrawFn) -> list[PowerPiece]:
    plans = []
    for _ in range(draw(st.integers(1, 3))):
        n = draw(st.integers(1, 8))
        lat = draw(st.lists(st.integers(0, 50), min_size=n, max_size=n))
        if not sum(lat):
            lat[0] = 1
        e = draw(st.lists(st.floats(0.0, 2.0), min_size=n, max_size=n))
        plans.append(ExecPlan.from_steps([x * 1e-4 for x in lat], energy_j=e))
    out = []
    for _ in range(draw(st.integers(0, 12))):
        plan = draw(st.sampled_from(plans))
        total = plan.total_s
        a = draw(st.integers(-2, 22)) * total / 20
        b = draw(st.integers(-2, 22)) * total / 20
        t0 = draw(st.integers(0, 40)) * 1e-4
        rate = draw(st.sampled_from([1.0, 0.5, 0.37, 1.3]))
        span = draw(st.integers(-1, 30)) * 1e-4
        out.append(PowerPiece(t0, t0 + span, plan, a, b, rate, "npu"))
    return out


@settings(max_examples=300, deadline=None)
@given(ps=pieces())
def test_power_timeline_equals_the_piece_at_a_time_sum(ps: list[PowerPiece]) -> None:
    got, want = power_timeline(ps), reference(ps)
    for g, w in zip(got, want, strict=True):
        assert g.tobytes() == w.tobytes()


@settings(max_examples=300, deadline=None)
@given(ps=pieces(), per_plan=st.sampled_from([0, 1, 64]))
def test_the_table_finds_each_piece_s_steps_in_its_own_plan(
    ps: list[PowerPiece], per_plan: int
) -> None:
    """``_table`` finds every piece's first step and step count with one ``searchsorted``
    over all plans' prefix sums (complex keys: plan number, prefix sum), or one per plan where
    the searches are many (``_PER_PLAN``); they equal a search of the piece's own plan, and so
    do the plans' watts (``power_w``) at their offsets."""
    import npusched.metrics.power as mp

    old = mp._PER_PLAN
    mp._PER_PLAN = per_plan
    try:
        tab = mp._table(ps)
    finally:
        mp._PER_PLAN = old
    if tab is None:
        return
    kept = [p for p in ps if p.end_s > p.start_s and p.exec1_s > p.exec0_s]
    want = []
    for p in kept:
        cum = p.plan.cum_s
        s0 = max(int(np.searchsorted(cum, p.exec0_s, side="right")) - 1, 0)
        s1 = min(max(int(np.searchsorted(cum, p.exec1_s, side="left")), s0 + 1), p.plan.steps)
        if s1 > s0:
            want.append((p, s0, s1 - s0))
    assert [(s, m) for _, s, m in want] == list(zip(tab.s0.tolist(), tab.m.tolist(), strict=False))
    for (p, _, _), off in zip(want, tab.c_off.tolist(), strict=False):
        n = p.plan.steps
        assert tab.cum_all[off : off + n + 1].tobytes() == p.plan.cum_s.tobytes()
        assert tab.pw_all[off : off + n].tobytes() == p.plan.power_w.tobytes()
        assert tab.pw_all[off + n] == 0.0


def _plans(draw: st.DrawFn, most: int, steps: int, lat_min: int, e_max: float) -> list[ExecPlan]:
    """1 to ``most`` plans of 1 to ``steps`` steps of ``lat_min``-50 units of 0.1 ms (a step
    of 0 units takes no time; a plan takes some) and 0 to ``e_max`` J each."""
    plans = []
    for _ in range(draw(st.integers(1, most))):
        n = draw(st.integers(1, steps))
        lat = draw(st.lists(st.integers(lat_min, 50), min_size=n, max_size=n))
        if not sum(lat):
            lat[0] = 1
        e = draw(st.lists(st.floats(0.0, e_max), min_size=n, max_size=n))
        plans.append(ExecPlan.from_steps([x * 1e-4 for x in lat], energy_j=e))
    return plans


def _work(draw: st.DrawFn, plan: ExecPlan) -> tuple[float, float]:
    """A piece's work ``(exec0, exec1)`` in twentieths of ``plan``'s total (possibly empty)."""
    total = plan.total_s
    a = draw(st.integers(0, 20)) * total / 20
    b = draw(st.integers(0, 20)) * total / 20
    return min(a, b), max(a, b)


@st.composite
def sequential_pieces(draw: st.DrawFn) -> list[PowerPiece]:
    """Pieces one after another in time (a machine running one job at a time, the layout
    ``_in_order`` sums without a sort), touching or with gaps, on plans whose steps may take
    no time (equal bounds inside a piece: the layout must then fall back to the sort)."""
    plans = _plans(draw, 3, 8, 0, 2.0)
    out = []
    t = draw(st.integers(0, 10)) * 1e-4
    for _ in range(draw(st.integers(1, 12))):
        plan = draw(st.sampled_from(plans))
        a, b = _work(draw, plan)
        rate = draw(st.sampled_from([1.0, 0.5, 0.37, 1.3]))
        span = (b - a) / rate
        out.append(PowerPiece(t, t + span, plan, a, b, rate, "npu"))
        t = t + span + draw(st.integers(0, 3)) * 1e-4
    return out


@settings(max_examples=300, deadline=None)
@given(ps=sequential_pieces())
def test_pieces_in_time_order_sum_to_the_reference_without_a_sort(
    ps: list[PowerPiece],
) -> None:
    """The no-sort layout (``_in_order``) gives the reference's bits, and falls back to the
    sort exactly where its order would differ."""
    got, want = power_timeline(ps), reference(ps)
    for g, w in zip(got, want, strict=True):
        assert g.tobytes() == w.tobytes()


def test_the_no_sort_layout_is_taken_on_a_temporal_run() -> None:
    """A one-job-at-a-time run (P-PREMA on the NPU) takes the no-sort layout block by block
    (the sum over the pieces computing at each time is never taken), and it equals the
    reference; so does the peak."""
    import npusched.metrics.power as mp
    from npusched.bench.families import family_configs
    from npusched.experiments.config import parse_config
    from npusched.experiments.runner import run_config

    out = run_config(parse_config(family_configs(200)["PREMA"], source="PREMA"))
    assert out.result.power
    pieces_ = out.result.power
    whole: list[bool] = []
    real = mp._summed_levels

    def spy(*a: object) -> object:
        whole.append(True)
        return real(*a)  # type: ignore[arg-type]

    mp._summed_levels = spy  # type: ignore[assignment]
    try:
        got = mp.piece_power_timeline(pieces_)
        peak = mp.peak_piece_power_w(pieces_)
    finally:
        mp._summed_levels = real
    assert whole == []
    want = reference(list(pieces_))
    for g, w in zip(got, want, strict=True):
        assert g.tobytes() == w.tobytes()
    assert np.float64(peak).tobytes() == np.float64(want[1].max()).tobytes()


@settings(max_examples=300, deadline=None)
@given(
    ps=st.one_of(sequential_pieces(), pieces()),
    block=st.sampled_from([1, 2, 3, 7, 1 << 15]),
)
def test_blocks_and_the_peak_equal_the_reference(ps: list[PowerPiece], block: int) -> None:
    """The timeline over blocks of any size (a block holds whole pieces; a block's last bound
    is dropped where the next starts at its time) equals the reference to the last bit, and
    ``peak_piece_power_w`` is its highest level."""
    import npusched.metrics.power as mp

    old = mp._BLOCK_BOUNDS
    mp._BLOCK_BOUNDS = block
    try:
        got = mp.piece_power_timeline(ps)
        peak = mp.peak_piece_power_w(ps)
    finally:
        mp._BLOCK_BOUNDS = old
    try:
        want = reference(ps)
    except IndexError:  # the reference fails where no piece covers a step (nothing to sum)
        want = np.zeros(1), np.zeros(1)
    for g, w in zip(got, want, strict=True):
        assert g.tobytes() == w.tobytes()
    assert np.float64(peak).tobytes() == np.float64(want[1].max()).tobytes()


def test_one_job_at_a_time_the_levels_are_the_steps_watts() -> None:
    """Where one job computes at a time, every level of the timeline is exactly the watts of a
    step that ran (or 0 W), so the peak is the highest step's watts whatever the policy's
    order: before the fourteenth round the running sum of every change since the run began
    drifted, and FCFS, HPF, SJF and PREMA reported peaks about 500 units in the last place
    apart on the same steps."""
    from npusched.bench.families import family_configs
    from npusched.experiments.config import parse_config
    from npusched.experiments.runner import run_config
    from npusched.metrics.power import peak_piece_power_w, piece_power_timeline

    peaks = set()
    for fam in ("FCFS", "HPF", "SJF", "PREMA"):
        out = run_config(parse_config(dict(family_configs(400)[fam], seed=0), source=fam))
        cols = out.result.power_columns
        assert cols is not None
        plans = {id(p): p for p in cols.plan}.values()
        watts = {float(w) for p in plans for w in p.power_w}
        assert set(cols.rate) == {1.0}
        _, level = piece_power_timeline(cols)
        assert set(level.tolist()) <= watts | {0.0}
        peak = peak_piece_power_w(cols)
        assert peak == max(watts) == float(level.max())
        peaks.add(peak)
    assert len(peaks) == 1


@pytest.mark.parametrize("fam", ["PREMA", "Planaria", "HaX-CoNN"])
def test_piece_power_timeline_on_a_run_equals_the_engine_s(fam: str) -> None:
    """On real runs (P-PREMA with RNNs: many plans, many pieces per plan; Planaria's
    subarray variants; HaX-CoNN's contention rates) the vectorised timeline equals the
    time-at-a-time reference to the last bit."""
    from npusched.bench.families import family_configs
    from npusched.experiments.config import parse_config
    from npusched.experiments.runner import run_config
    from npusched.metrics.power import peak_piece_power_w, piece_power_timeline

    cfg = family_configs(300)[fam]
    if fam == "PREMA":
        cfg["workload"]["models"] = ["alexnet", "resnet-50", "rnn-sa", "mobilenet-v1"]
    out = run_config(parse_config(cfg, source=fam))
    assert out.result.power
    got = piece_power_timeline(out.result.power)
    want = reference(list(out.result.power))
    for g, w in zip(got, want, strict=True):
        assert g.tobytes() == w.tobytes()
    # and the peak, from the recorded columns (overlapping pieces: reduced in place)
    cols = out.result.power_columns
    assert cols is not None
    assert np.float64(peak_piece_power_w(cols)).tobytes() == want[1].max().tobytes()


@settings(max_examples=300, deadline=None)
@given(ps=sequential_pieces(), block=st.sampled_from([1, 2, 5, 1 << 15]))
def test_the_peak_without_times_equals_the_blocks(ps: list[PowerPiece], block: int) -> None:
    """``_peak_in_order`` (the peak from the first and last bounds of each piece, interior
    bounds proved apart) gives the blocks' highest kept level to the last bit, or declines
    (steps that take no time, pieces stepping back, a peak near zero)."""
    import npusched.metrics.power as mp

    tab = mp._table(ps)
    if tab is None:
        return
    old = mp._BLOCK_BOUNDS
    mp._BLOCK_BOUNDS = block
    try:
        got = mp._peak_in_order(tab)
        want = mp._blocks_in_order(tab, peak=True)
    finally:
        mp._BLOCK_BOUNDS = old
    if got is not None:
        assert want is not None
        assert np.float64(got).tobytes() == np.float64(want[0]).tobytes()
        assert np.float64(got).tobytes() == np.float64(mp.peak_piece_power_w(ps)).tobytes()


def test_the_peak_without_times_is_taken_on_runs() -> None:
    """On one-job-at-a-time runs (P-PREMA with RNNs; NP-FCFS, whose pieces touch end to
    start) the peak is taken without the bounds' times, with the blocks' bits."""
    import npusched.metrics.power as mp
    from npusched.bench.families import family_configs
    from npusched.experiments.config import parse_config
    from npusched.experiments.runner import run_config

    for fam in ("PREMA", "FCFS"):
        out = run_config(parse_config(family_configs(300)[fam], source=fam))
        tab = mp._table(out.result.power)
        assert tab is not None
        got = mp._peak_in_order(tab)
        assert got is not None
        want = mp._blocks_in_order(tab, peak=True)
        assert want is not None
        assert np.float64(got).tobytes() == np.float64(want[0]).tobytes()
        timeline = mp.piece_power_timeline(out.result.power)[1]
        assert np.float64(got).tobytes() == np.float64(timeline.max()).tobytes()


@settings(max_examples=300, deadline=None)
@given(ps=pieces(), zero=st.booleans())
def test_the_peak_of_overlapping_pieces_is_the_timeline_s_highest_level(
    ps: list[PowerPiece], zero: bool
) -> None:
    """Where pieces overlap, the peak from the stretches whose bound could hold it
    (``_summed_peak``) equals the timeline's highest level and the reference's bit for bit;
    with every plan at 0 W (``zero``) too."""
    import npusched.metrics.power as mp

    if zero:
        silent = {
            id(p.plan): ExecPlan.from_steps(
                list(p.plan.latency_s), energy_j=[0.0] * len(p.plan.latency_s)
            )
            for p in ps
        }
        ps = [p._replace(plan=silent[id(p.plan)]) for p in ps]
    tab = mp._table(ps)
    if tab is None:
        return
    _, level = mp.piece_power_timeline(ps)
    want = reference(ps)[1].max()
    assert level.max().tobytes() == want.tobytes()
    assert np.float64(mp.peak_piece_power_w(ps)).tobytes() == want.tobytes()
    cols = mp._columns(ps)
    assert cols is not None
    keep = np.flatnonzero((cols.end > cols.start) & (cols.ex1 > cols.ex0))
    got = mp._summed_peak(cols, keep)
    if got is not None:  # (declined: a peak under 1e-9 W)
        assert np.float64(got).tobytes() == want.tobytes()


@st.composite
def crowded_pieces(draw: st.DrawFn) -> list[PowerPiece]:
    """Many pieces of a few plans, overlapping in bursts (a machine running jobs side by
    side), with gaps where nothing computes: the stretches' bounds prune most of them."""
    plans = _plans(draw, 4, 12, 1, 3.0)
    out = []
    t = 0.0
    for _ in range(draw(st.integers(2, 40))):
        plan = draw(st.sampled_from(plans))
        a, b = _work(draw, plan)
        if b <= a:
            a, b = 0.0, plan.total_s
        rate = draw(st.sampled_from([1.0, 0.5, 0.37, 1.3]))
        t0 = t + draw(st.integers(-30, 30)) * 1e-4
        out.append(PowerPiece(t0, t0 + (b - a) / rate, plan, a, b, rate, "npu"))
        t = max(t, t0) + draw(st.integers(0, 40)) * 1e-4
    return out


@settings(max_examples=300, deadline=None)
@given(ps=crowded_pieces())
def test_the_pruned_peak_equals_the_reference_on_crowded_pieces(ps: list[PowerPiece]) -> None:
    """Many overlapping pieces: the peak computed over the few stretches that could hold it
    is the reference's highest level, bit for bit."""
    import npusched.metrics.power as mp

    want = reference(ps)[1].max()
    assert np.float64(mp.peak_piece_power_w(ps)).tobytes() == want.tobytes()
    assert mp.piece_power_timeline(ps)[1].max().tobytes() == want.tobytes()


def test_a_lone_piece_s_level_is_its_step_s_watts_where_pieces_overlap() -> None:
    """The level at a time is the sum of what the pieces computing then draw: where one piece
    computes alone after others overlapped it, its level is exactly its step's watts (the
    running sum of every change since the run began, before the twenty-second round, gave
    ``(a + b) - a``, which is not always ``b``)."""
    import npusched.metrics.power as mp

    a_plan = ExecPlan.from_steps([1e-3, 1e-3], energy_j=[0.1e-3 * 3, 0.7e-3])
    b_plan = ExecPlan.from_steps([1e-3, 1e-3], energy_j=[0.2e-3, 0.3e-3 * 7])
    pa = PowerPiece(0.0, 2e-3, a_plan, 0.0, a_plan.total_s, 1.0, "npu")
    pb = PowerPiece(0.5e-3, 2.5e-3, b_plan, 0.0, b_plan.total_s, 1.0, "npu")
    times, level = mp.piece_power_timeline([pa, pb])
    wa, wb = a_plan.power_w, b_plan.power_w
    want = {
        0.0: wa[0],
        0.5e-3: wa[0] + wb[0],
        1e-3: wa[1] + wb[0],
        1.5e-3: wa[1] + wb[1],
        2e-3: wb[1],  # b alone: its own watts, bit for bit
        2.5e-3: 0.0,
    }
    assert len(times) == len(want)
    for t, x in zip(times.tolist(), level.tolist(), strict=True):
        key = min(want, key=lambda k: abs(k - t))
        assert x == want[key]
    assert mp.peak_piece_power_w([pa, pb]) == float(level.max())


def test_planaria_s_peak_takes_few_stretches() -> None:
    """Planaria's run (overlapping pieces): the peak is taken from the stretches whose bound
    reaches it, a small share of the run's pieces, and equals the timeline's highest level
    bit for bit."""
    from npusched.bench.families import family_configs
    from npusched.experiments.config import parse_config
    from npusched.experiments.runner import run_config
    from npusched.metrics import power as mp

    out = run_config(parse_config(family_configs(300)["Planaria"], source="Planaria"))
    cols = out.result.power_columns
    assert cols is not None
    seen: list[int] = []
    real = mp._table_of

    def spy(c: object) -> object:
        seen.append(len(c.start))  # type: ignore[attr-defined]
        return real(c)  # type: ignore[arg-type]

    mp._table_of = spy  # type: ignore[assignment]
    try:
        peak = mp.peak_piece_power_w(cols)
    finally:
        mp._table_of = real
    n = len(cols.start_s)
    assert seen and sum(seen) < n / 4  # tables for the candidate pieces only
    _, watts = mp.piece_power_timeline(cols)
    assert np.float64(peak).tobytes() == watts.max().tobytes()


class _ByValue:
    """A plan-like object that compares by value (its own ``__eq__``): two of them with the
    same steps are equal, but each is its own plan."""

    def __init__(self, plan: ExecPlan, tag: int) -> None:
        self.cum_s, self.latency_s, self.energy_j = plan.cum_s, plan.latency_s, plan.energy_j
        self.steps, self.power_w, self.tag = plan.steps, plan.power_w, tag

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _ByValue)  # every one equal: must not be merged

    def __hash__(self) -> int:
        return 0


class _Unhashable(_ByValue):
    __hash__ = None  # type: ignore[assignment]


@settings(max_examples=200, deadline=None)
@given(ps=pieces(), wrap=st.sampled_from([None, _ByValue, _Unhashable]))
def test_plans_are_numbered_by_identity(ps: list[PowerPiece], wrap: type | None) -> None:
    """``_table`` numbers the pieces' plans by identity whatever the plans' type: plain plans
    through one ``dict`` (first appearance), plans that compare by value or are unhashable by
    their ids; each piece's number is its own plan's, and the timeline and the peak equal the
    reference's bits either way."""
    import npusched.metrics.power as mp

    if wrap is not None:
        made: dict[int, object] = {}
        ps = [
            p._replace(plan=made.setdefault(id(p.plan), wrap(p.plan, len(made))))  # type: ignore[arg-type]
            for p in ps
        ]
    grp, uplans = mp._plans_numbered([p.plan for p in ps])
    assert all(
        a is b for a, b in zip([uplans[g] for g in grp.tolist()], [p.plan for p in ps], strict=True)
    )
    assert len({id(u) for u in uplans}) == len(uplans) == len({id(p.plan) for p in ps})
    got, want = power_timeline(ps), reference(ps)
    for g, w in zip(got, want, strict=True):
        assert g.tobytes() == w.tobytes()
    assert np.float64(mp.peak_piece_power_w(ps)).tobytes() == want[1].max().tobytes()


@settings(max_examples=200, deadline=None)
@given(ps=pieces(), data=st.data())
def test_plans_that_draw_nothing_peak_at_zero_as_the_table_does(
    ps: list[PowerPiece], data: st.DataObject
) -> None:
    """Where every plan's steps draw 0 W the peak is 0 W without the table (``_draws_nothing``);
    with some plans drawing power (the first piece's or a later one's) the table decides. Either
    way the peak equals the reference's highest level, bit for bit."""
    import npusched.metrics.power as mp

    silent: dict[int, ExecPlan] = {}
    for p in ps:
        if id(p.plan) not in silent and data.draw(st.booleans()):
            silent[id(p.plan)] = ExecPlan.from_steps(
                list(p.plan.latency_s), energy_j=[0.0] * p.plan.steps
            )
    ps = [p._replace(plan=silent.get(id(p.plan), p.plan)) for p in ps]
    every = all(not p.plan.power_w.any() for p in ps)
    assert mp._draws_nothing(ps) == (every and bool(ps))
    got = mp.peak_piece_power_w(ps)
    want = reference(ps)[1].max()
    assert np.float64(got).tobytes() == want.tobytes()


@settings(max_examples=200, deadline=None)
@given(ps=pieces(), unit=st.booleans())
def test_the_loop_s_columns_give_the_pieces_bits(ps: list[PowerPiece], unit: bool) -> None:
    """The loop's :class:`PowerColumns` (packed column by column) give the timeline and the peak of the same pieces as a list, bit for bit,
    with every rate 1 or mixed rates."""
    import npusched.metrics.power as mp
    from npusched.sim.common import PowerColumns

    if unit:
        ps = [p._replace(rate=1.0) for p in ps]
    cols = PowerColumns()
    for p in ps:
        cols.add(p.start_s, p.end_s, p.plan, p.exec0_s, p.exec1_s, p.rate, p.resource)
    for g, w in zip(mp.piece_power_timeline(cols), mp.piece_power_timeline(ps), strict=True):
        assert g.tobytes() == w.tobytes()
    want = reference(ps)[1].max()
    assert np.float64(mp.peak_piece_power_w(cols)).tobytes() == want.tobytes()


@settings(max_examples=200, deadline=None)
@given(
    values=st.lists(
        st.sampled_from([0.0, -0.0, 1.5, 2.0, -3.25, 7.0, 1e-300, 5e300]), min_size=1, max_size=80
    ),
    data=st.data(),
)
def test_range_maxima_equal_the_slices_maxima(values: list[float], data: st.DataObject) -> None:
    """``_range_max`` (both runs of every range gathered from one flat sparse table) gives
    each range's ``max`` of its slice, to the bit (signed zeros included)."""
    import npusched.metrics.power as mp

    v = np.array(values)
    n = len(v)
    lo = data.draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=30))
    count = [data.draw(st.integers(1, n - a)) for a in lo]
    got = mp._range_max(v, np.array(lo, dtype=np.int64), np.array(count, dtype=np.int64))
    want = np.array([v[a : a + c].max() for a, c in zip(lo, count, strict=True)])
    assert got.tobytes() == want.tobytes()
