"""The linear token rule is path-independent: a waiting job's tokens at a period boundary are a
function of the boundary and of its stay in the ready queue alone
(``TokenScheduler.waiting_gain``), so they do not depend on which wakes credit them (a tick at
every boundary, skipped boundaries credited at once from any later wake), and the boundary
``quiet_periods`` names is the same whichever wake before it asks."""

from __future__ import annotations

from dataclasses import dataclass
from itertools import pairwise

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from npusched.policies.contract import JobState, SchedulerView, wait_stay
from npusched.policies.temporal.prema import PPrema, TokenScheduler

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
PERIODS = (0.25e-3, 1e-4, 3.3e-5, 5e-5)


@dataclass
class StayJob:
    """A waiting job as the engine's ``Job`` shows it to the token rule: its ``stay``
    (``waited`` before the stay, ``since`` its start). ``waited_s`` would be the wake's time
    in it: the built-in linear rule must not read it for a waiting job."""

    id: int
    priority: int
    estimated_s: float
    waited: float
    since: float
    arrival_s: float = 0.0
    executed_s: float = 0.0
    state: JobState = JobState.WAITING

    @property
    def stay(self) -> tuple[float, float]:
        return (self.waited, self.since)

    @property
    def waited_s(self) -> float:  # pragma: no cover - the test fails if it is read
        raise AssertionError("a waiting job's tokens read the wake's waiting time")


@dataclass
class Running:
    id: int
    priority: int = 1
    estimated_s: float = 1e-3
    waited_s: float = 0.0
    arrival_s: float = 0.0
    executed_s: float = 0.0
    state: JobState = JobState.RUNNING


def _view(now: float, ready: list, running: object = None) -> SchedulerView:
    return SchedulerView(now=now, ready=ready, running=running, reason="period", profiles={})  # type: ignore[arg-type]


@st.composite
def stays(draw: st.DrawFn) -> tuple[float, int, list[StayJob]]:
    """A period, the index of the first boundary every job waits at, and the waiting jobs."""
    p = draw(st.sampled_from(PERIODS))
    n0 = draw(st.integers(1, 5_000))
    jobs = []
    for i in range(draw(st.integers(1, 6))):
        since = draw(st.floats(0.0, 1.0)) * n0 * p
        waited = draw(st.sampled_from([0.0, draw(st.floats(0.0, 5e-3))]))
        est = draw(st.floats(1e-6, 5e-3))
        jobs.append(StayJob(i, draw(st.sampled_from([1, 3, 9])), est, waited, since))
    return p, n0, jobs


def _credited(pol: TokenScheduler) -> dict[int, float]:
    return dict(pol.gain_)


@SETTINGS
@given(
    case=stays(),
    span=st.integers(1, 400),
    cuts=st.lists(st.integers(0, 400), max_size=8),
    lag=st.floats(0.0, 0.999),
)
def test_tokens_do_not_depend_on_which_wakes_credit_them(
    case: tuple, span: int, cuts: list[int], lag: float
) -> None:
    p, n0, jobs = case
    last = n0 + span - 1
    # Path A: a tick at every boundary (the wake's time is the boundary).
    every = PPrema(period_s=p)
    every.reset()
    for n in range(n0, last + 1):
        every.on_period(_view(n * p, jobs))
    # Path B: the boundaries in chunks, each credited at once from a wake ``lag`` of a period
    # after the chunk's last boundary (before the next one).
    chunked = PPrema(period_s=p)
    chunked.reset()
    edges = sorted({n0 + c for c in cuts if 0 < c < span} | {n0, last + 1})
    for a, b in pairwise(edges):
        now = (b - 1) * p + lag * p
        chunked.on_periods(_view(now, jobs), a * p, b - a)
    # Path C: one wake credits them all.
    once = PPrema(period_s=p)
    once.reset()
    once.on_periods(_view(last * p + lag * p, jobs), n0 * p, span)
    want = {
        j.id: TokenScheduler.waiting_gain(j.waited, j.since, last * p, j.estimated_s) for j in jobs
    }
    assert _credited(every) == _credited(chunked) == _credited(once) == want


@SETTINGS
@given(case=stays(), lags=st.lists(st.floats(0.0, 0.999), min_size=1, max_size=6))
def test_quiet_periods_names_the_same_boundary_from_every_wake(
    case: tuple, lags: list[float]
) -> None:
    """Each wake before it credits the boundaries up to its time, then asks: the boundary it
    names (its index ``n0 + quiet``) is the first boundary whose tokens can change the
    decision, the same for every wake (the running job has no waiting: it crosses nothing)."""
    p, n0, jobs = case
    pol = PPrema(period_s=p)
    pol.reset()
    running = Running(99)
    pol.on_period(_view(n0 * p, jobs, running))
    first = pol.quiet_periods(_view(n0 * p, jobs, running), (n0 + 1) * p)
    target = n0 + 1 + first  # the boundary index of the next tick
    if target - n0 > 10_000:
        return  # far away: ticks at boundaries this run would not reach
    for lag in lags:
        m = n0 + int(lag * (target - n0))  # a wake between n0's boundary and the target's
        if m > n0:
            pol.on_periods(_view(m * p, jobs, running), (n0 + 1) * p, m - n0)
        now = m * p + 0.5 * p
        q = pol.quiet_periods(_view(now, jobs, running), (m + 1) * p)
        assert m + 1 + q == target, (m, q, target)


@SETTINGS
@given(
    need=st.floats(1e-6, 50.0),
    waited=st.floats(0.0, 1e-2),
    since=st.floats(0.0, 10.0),
    p=st.sampled_from(PERIODS),
    est=st.floats(1e-7, 1e-2),
    n0=st.integers(0, 10**6),
)
def test_boundaries_to_gain_is_the_least_boundary(
    need: float, waited: float, since: float, p: float, est: float, n0: int
) -> None:
    """``_boundaries_to_gain`` is the least ``k`` whose boundary ``n0 + k - 1`` gives a gain
    (``waiting_gain``, the credits' own expression) of at least ``need``."""
    k = TokenScheduler._boundaries_to_gain(need, waited, since, n0, p, est)
    never = TokenScheduler.never_periods

    def gain(k: int) -> float:
        return TokenScheduler.waiting_gain(waited, since, (n0 + k - 1) * p, est)

    if k == never:
        assert gain(never) < need or gain(never - 1) < need
        return
    assert gain(k) >= need
    assert k == 1 or gain(k - 1) < need


def test_the_engines_job_gives_its_stay() -> None:
    """``wait_stay`` reads the engine's job's stay; any other view is read at ``now``."""
    r = Running(1, waited_s=2.5)
    assert wait_stay(r, 7.0) == (2.5, 7.0)  # type: ignore[arg-type]
    j = StayJob(0, 1, 1e-3, 0.5, 3.0)
    assert wait_stay(j, 9.0) == (0.5, 3.0)  # type: ignore[arg-type]
