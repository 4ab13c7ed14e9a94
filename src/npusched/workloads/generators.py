"""Request generators: PREMA's uniform dispatch and an open-loop Poisson (MLPerf server) stream.

Every generator takes a ``random_state`` (``None``, an ``int`` seed, a ``SeedSequence`` or a
``numpy.random.Generator``) and draws only from the local generator it builds with
``np.random.default_rng(random_state)``; the global NumPy state is never touched. Draws happen in
a fixed order (arrival times, networks, priorities, batch sizes, then sequence lengths network by
network), so a seed fixes the whole workload.

Requests come back sorted by arrival time (stable: ties keep generation order) with ids dense
from 0 in that order. Network names are canonical zoo names.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any, NamedTuple, overload

import numpy as np
import numpy.typing as npt

from npusched.errors import ConfigError, NpuschedError, UnknownNameError
from npusched.workloads.request import (
    PRIORITY_LEVELS,
    Request,
    RequestTable,
    number_coded_shapes,
)

if TYPE_CHECKING:
    from npusched.hardware.profile import Profile
    from npusched.models.ir import Network

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
RandomState = int | np.random.Generator | np.random.SeedSequence | None

#: The most requests one generator call makes (a field-level limit: 100 million requests need
#: about 10 GB of records; beyond it a typo such as ``n_tasks = 1e12`` would exhaust memory).
MAX_REQUESTS = 100_000_000


def _rng(random_state: object) -> np.random.Generator:
    """``np.random.default_rng(random_state)``, with a typed error for a bad seed (e.g. -1)."""
    try:
        return np.random.default_rng(random_state)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise ConfigError(
            f"random_state must be None, an integer >= 0, a SeedSequence or a Generator, "
            f"got {random_state!r}"
        ) from None


__all__ = [
    "ARRIVALS",
    "MAX_REQUESTS",
    "PoissonArgs",
    "RandomState",
    "apply_slo",
    "assemble",
    "canonical_names",
    "check_poisson_args",
    "poisson_workload",
    "prema_workload",
    "resolve_priority",
    "sample_seq_lens",
    "stream_rng",
]


def stream_rng(prefix: Sequence[int], seed: int, part: int = 0) -> np.random.Generator:
    """The generator of a seeded stream: ``SeedSequence([*prefix, seed])`` for a workload's
    draws (``part = 0``), and for ``part = k > 0`` its independent child stream ``k`` (the same
    entropy, spawn key ``(k,)``): part 1 draws the exits of the workload's requests. The one
    definition behind ``seed_stream`` (:func:`npusched.experiments.runner.build_requests`) and
    the studies' reproductions that draw the same samples."""
    entropy = [int(x) for x in prefix] + [int(seed)]
    if part == 0:
        return np.random.default_rng(np.random.SeedSequence(entropy))
    return np.random.default_rng(np.random.SeedSequence(entropy, spawn_key=(int(part),)))


def canonical_names(names: Iterable[str]) -> list[str]:
    """Canonical zoo names of ``names`` (aliases and case resolved); an unknown name raises
    :class:`~npusched.errors.UnknownNameError` listing the canonical names."""
    from npusched.models.zoo import canonical_name, list_networks

    out = []
    for m in names:
        try:
            out.append(canonical_name(m))
        except UnknownNameError:  # list canonical names only (aliases crowd the message)
            raise UnknownNameError("network", m, list_networks()) from None
    return out


def _user_networks(
    models: Sequence[object], profiles: Mapping[str, object] | None
) -> dict[str, Network]:
    """The networks of ``models`` that need no zoo look-up: ``Network`` objects, and names that
    are keys of ``profiles`` (their profile's network), by name."""
    from npusched.models.ir import Network

    out: dict[str, Network] = {}
    for m in models:
        if isinstance(m, Network):
            out[m.name] = m
        elif isinstance(m, str) and profiles is not None and m in profiles:
            net = getattr(profiles[m], "network", None)
            if isinstance(net, Network):
                out[m] = net
    return out


def _canonical(models: Sequence[object], user: Mapping[str, Network] | None = None) -> list[str]:
    """Names of ``models``: a user network (``user``, see :func:`_user_networks`) keeps its
    name; any other entry must be a zoo name and becomes canonical."""
    from npusched.models.ir import Network

    if isinstance(models, str | Network) or len(models) == 0:
        raise ConfigError(f"models must be a non-empty list of network names, got {models!r}")
    user = user or {}
    out: list[str] = []
    for m in models:
        name = m.name if isinstance(m, Network) else m
        out.append(
            name if isinstance(name, str) and name in user else canonical_names([name])[0]  # type: ignore[list-item]
        )
    return out


def resolve_priority(level: int | str) -> int:
    """A priority value from a PREMA level name (``low``/``medium``/``high`` -> 1/3/9, any case)
    or an integer >= 1."""
    if isinstance(level, int | np.integer) and not isinstance(level, bool) and level >= 1:
        return int(level)
    key = level.lower() if isinstance(level, str) else None
    if key not in PRIORITY_LEVELS:
        raise ConfigError(
            f"invalid priority {level!r}; allowed: {', '.join(PRIORITY_LEVELS)} or an integer >= 1"
        )
    return PRIORITY_LEVELS[key]


def _positive_ints(values: Sequence[int], what: str) -> IntArray:
    arr = np.asarray(list(values))
    if arr.size == 0 or arr.dtype.kind not in "iu" or (arr < 1).any():
        raise ConfigError(f"{what} must be a non-empty list of positive integers, got {values!r}")
    return arr.astype(np.int64)


def sample_seq_lens(
    networks: Sequence[str],
    rng: np.random.Generator,
    *,
    user: Mapping[str, Network] | None = None,
    distinct: Iterable[str] | None = None,
) -> tuple[list[int | None], list[int | None]]:
    """``(seq_in, seq_out)`` per request: sampled from the network's registered length model,
    else the network's default ``seq_len`` if it is recurrent, else ``None`` (CNNs).
    ``user``: networks by name that are not in the zoo (looked up there first).
    ``distinct``: the distinct names of ``networks`` where the caller knows them (a
    generator, from its draws' codes), so that no set of the requests' names is made.

    Networks are visited in sorted-name order and each draws one vectorised batch, so the result
    depends only on the seed and the request order.
    """
    from npusched.models.seqlen import length_model_for
    from npusched.models.zoo import get_network

    n = len(networks)
    seq_in: list[int | None] = [None] * n
    seq_out: list[int | None] = [None] * n
    names: npt.NDArray[Any] | None = None  # made only where a network has lengths
    for name in sorted(set(networks) if distinct is None else set(distinct)):
        model = length_model_for(name)
        net = None
        if model is None:
            net = user[name] if user and name in user else get_network(name)
            if not (net.is_recurrent and net.seq_len is not None):
                continue  # a CNN: no lengths, no draw
        if names is None:
            names = np.asarray(networks, dtype=object)
        idx = np.flatnonzero(names == name)
        if model is not None:
            s_in, s_out = model.sample(rng, len(idx))
            s_in = np.asarray(s_in, dtype=np.int64)
            s_out = np.asarray(s_out, dtype=np.int64)
            if s_in.shape != (len(idx),) or s_out.shape != (len(idx),):
                raise NpuschedError(
                    f"length model of {name!r} returned the wrong number of samples"
                )
            for j, a, b in zip(idx.tolist(), s_in.tolist(), s_out.tolist(), strict=True):
                seq_in[j], seq_out[j] = int(a), int(b)
            continue
        assert net is not None and net.seq_len is not None  # recurrent, default lengths
        d_in, d_out = net.seq_len
        for j in idx.tolist():
            seq_in[j], seq_out[j] = int(d_in), int(d_out)
    return seq_in, seq_out


def assemble(
    arrival_s: npt.ArrayLike,
    networks: Sequence[str],
    *,
    batch: npt.ArrayLike | None = None,
    priority: npt.ArrayLike | None = None,
    slo_s: Sequence[float | None] | None = None,
    seq_in: Sequence[int | None] | None = None,
    seq_out: Sequence[int | None] | None = None,
) -> list[Request]:
    """Build requests from columns: stable sort by arrival (seconds), ids dense from 0.

    ``batch``/``priority`` default to 1, ``slo_s``/``seq_in``/``seq_out`` to ``None``.
    """
    return assemble_table(
        arrival_s,
        networks,
        batch=batch,
        priority=priority,
        slo_s=slo_s,
        seq_in=seq_in,
        seq_out=seq_out,
    ).requests()


def assemble_table(
    arrival_s: npt.ArrayLike,
    networks: Sequence[str],
    *,
    batch: npt.ArrayLike | None = None,
    priority: npt.ArrayLike | None = None,
    slo_s: Sequence[float | None] | None = None,
    seq_in: Sequence[int | None] | None = None,
    seq_out: Sequence[int | None] | None = None,
    network_codes: tuple[npt.NDArray[np.int64], Sequence[str]] | None = None,
) -> RequestTable:
    """:func:`assemble`'s requests as a :class:`~npusched.workloads.request.RequestTable` (the
    same columns; no request object is made). ``network_codes``: ``(code, names)`` where
    ``networks[i]`` is ``names[code[i]]`` (a generator's draws), from which the table's
    shapes are numbered without a key per request where no request has a sequence length."""
    arr = np.asarray(arrival_s, dtype=np.float64)
    n = len(arr)
    if len(networks) != n:
        raise NpuschedError("assemble: column lengths differ")
    b = np.ones(n, np.int64) if batch is None else np.asarray(batch, dtype=np.int64)
    p = np.ones(n, np.int64) if priority is None else np.asarray(priority, dtype=np.int64)
    slo: Sequence[float | None] = [None] * n if slo_s is None else slo_s
    s_in: Sequence[int | None] = [None] * n if seq_in is None else seq_in
    s_out: Sequence[int | None] = [None] * n if seq_out is None else seq_out
    order = stable_order(arr)
    idx = order.tolist()
    # Columns as Python lists in dispatch order, each value converted once (Python lists box
    # no NumPy scalar per field): the table's columns.
    names = list(map(networks.__getitem__, idx))
    # (every name is a str where the coded names all are: no pass over the requests)
    coded_str = network_codes is not None and all(type(x) is str for x in network_codes[1])
    if not coded_str and set(map(type, names)) - {str}:
        names = [str(x) for x in names]
    cols: list[list[Any]] = [
        names,
        b[order].tolist(),
        p[order].tolist(),
        _opt_col(slo, idx, float, n),
        _opt_col(s_in, idx, int, n),
        _opt_col(s_out, idx, int, n),
    ]
    shapes = None
    if network_codes is not None and cols[4].count(None) == n and cols[5].count(None) == n:
        code, net_names = network_codes
        shapes = number_coded_shapes(np.asarray(code, dtype=np.int64)[order], net_names, b[order])
    return RequestTable(arr[order].tolist(), *cols, shapes=shapes)


def _drawn(code: npt.NDArray[np.int64], names: Sequence[str]) -> list[str]:
    """The distinct names ``names[c]`` of the codes ``code`` drawn (one sort of the integers)."""
    return [names[c] for c in np.unique(code).tolist()]


def stable_order(x: FloatArray) -> npt.NDArray[np.intp]:
    """``np.argsort(x, kind="stable")`` of a float array, the same indices, by a cheaper sort
    where the two cannot differ: the identity where ``x`` never decreases (the stable order of
    a sorted array, ties included; a Poisson stream's arrivals), else NumPy's default sort
    where its result is strictly increasing (all values distinct: only one order sorts them;
    the default sort is a vectorised introsort, about a sixth of the stable merge sort's time
    on 5,000 uniform arrivals), else the stable sort itself (ties, NaN or zeros of both
    signs, whose order only the stable sort fixes)."""
    n = len(x)
    if n < 2 or bool((x[1:] >= x[:-1]).all()):
        return np.arange(n, dtype=np.intp)
    order = np.argsort(x)
    got = x[order]
    if bool((got[1:] > got[:-1]).all()):
        return order
    return np.argsort(x, kind="stable")


def _opt_col(
    col: Sequence[Any], idx: list[int], conv: Callable[[Any], Any], n: int
) -> list[Any]:
    """``col`` in the order ``idx`` with each value ``conv``-erted (``None`` kept)."""
    if col.count(None) == len(col) if isinstance(col, list) else all(x is None for x in col):
        return [None] * n
    return [None if col[i] is None else conv(col[i]) for i in idx]


def prema_workload(
    n_tasks: int,
    models: Sequence[str | Network],
    window_s: float,
    *,
    batch_sizes: Sequence[int] = (1, 4, 16),
    priorities: Sequence[int | str] = ("low", "medium", "high"),
    profiles: Mapping[str, Profile] | None = None,
    random_state: RandomState = None,
) -> list[Request]:
    """A PREMA (Sec. III) multi-tasked workload (see :func:`prema_table`, whose requests
    these are, as a list)."""
    return prema_table(
        n_tasks,
        models,
        window_s,
        batch_sizes=batch_sizes,
        priorities=priorities,
        profiles=profiles,
        random_state=random_state,
    ).requests()


def prema_table(
    n_tasks: int,
    models: Sequence[str | Network],
    window_s: float,
    *,
    batch_sizes: Sequence[int] = (1, 4, 16),
    priorities: Sequence[int | str] = ("low", "medium", "high"),
    profiles: Mapping[str, Profile] | None = None,
    random_state: RandomState = None,
) -> RequestTable:
    """A PREMA (Sec. III) multi-tasked workload, as a
    :class:`~npusched.workloads.request.RequestTable` (no request object is made).

    ``n_tasks`` tasks, each drawn uniformly from ``models``, dispatched at a time uniform over
    ``[0, window_s)`` seconds, with a priority drawn uniformly from ``priorities`` (level names map
    to :data:`~npusched.workloads.request.PRIORITY_LEVELS`, 1/3/9; integers are taken as they are)
    and a batch size drawn uniformly from ``batch_sizes``. Recurrent networks get sequence lengths
    from :func:`sample_seq_lens`. No SLO is set: PREMA's SLA is ``N x isolated`` (see
    :mod:`npusched.metrics`).

    ``models`` holds zoo names, :class:`~npusched.models.ir.Network` objects (a network of
    your own, e.g. from :class:`~npusched.models.NetBuilder`; requests name it by its
    ``name``) or names that are keys of ``profiles`` (compiled profiles by network name).
    """
    if isinstance(n_tasks, bool) or not isinstance(n_tasks, int | np.integer) or n_tasks < 0:
        raise ConfigError(f"n_tasks must be a non-negative integer, got {n_tasks!r}")
    if not np.isfinite(window_s) or window_s < 0:
        raise ConfigError(f"window_s must be a non-negative number of seconds, got {window_s!r}")
    if n_tasks > MAX_REQUESTS:
        raise ConfigError(f"n_tasks must be at most {MAX_REQUESTS:,}, got {n_tasks:,}")
    user = _user_networks(models, profiles)
    names = _canonical(models, user)
    prios = np.array([resolve_priority(p) for p in priorities], dtype=np.int64)
    if prios.size == 0:
        raise ConfigError("priorities must not be empty")
    bs = _positive_ints(batch_sizes, "batch_sizes")
    rng = _rng(random_state)
    n = int(n_tasks)
    arrival = rng.uniform(0.0, float(window_s), size=n) if window_s > 0 else np.zeros(n)
    net_code = rng.integers(0, len(names), size=n)
    nets = list(map(names.__getitem__, net_code.tolist()))
    prio = prios[rng.integers(0, len(prios), size=n)]
    batch = bs[rng.integers(0, len(bs), size=n)]
    seq_in, seq_out = sample_seq_lens(nets, rng, user=user, distinct=_drawn(net_code, names))
    return assemble_table(
        arrival,
        nets,
        batch=batch,
        priority=prio,
        seq_in=seq_in,
        seq_out=seq_out,
        network_codes=(net_code, names),
    )


#: Arrival processes of :func:`poisson_workload`: ``"exponential"`` (a Poisson process) or
#: ``"artifact"`` (the Planaria authors' generator: Poisson-distributed whole-millisecond gaps).
ARRIVALS = ("exponential", "artifact")


def _arrivals(
    rng: np.random.Generator, rate: float, duration_s: float | None, n_requests: int | None
) -> FloatArray:
    """Arrival times of a Poisson process: cumulative sums of exponential gaps (mean 1/rate s)."""
    scale = 1.0 / rate
    if n_requests is not None:
        return np.cumsum(rng.exponential(scale, size=int(n_requests)))
    assert duration_s is not None
    # Draw in chunks sized for the expected count plus a generous margin; extend if short.
    expected = rate * duration_s
    chunk = int(expected + 6.0 * np.sqrt(expected) + 16)
    times = np.cumsum(rng.exponential(scale, size=chunk))
    while times[-1] < duration_s:
        more = times[-1] + np.cumsum(rng.exponential(scale, size=chunk))
        times = np.concatenate([times, more])
    return times[times < duration_s]


def _by_model(table: Mapping[str, float], names: list[str], what: str) -> dict[str, float]:
    """``table`` with canonical network names; a name not in ``names`` (the models requested)
    is an error: it would silently never apply, and is usually a typo."""
    by_name = dict(zip(canonical_names(table), map(float, table.values()), strict=True))
    unknown = set(by_name) - set(names)
    if unknown:
        raise ConfigError(f"{what} names {sorted(unknown)} not in models; allowed: {names}")
    return by_name


def _weights(weights: Sequence[float] | Mapping[str, float] | None, names: list[str]) -> FloatArray:
    if weights is None:
        return np.full(len(names), 1.0 / len(names))
    if isinstance(weights, Mapping):
        by_name = _by_model(weights, names, "weights")
        w = np.array([by_name.get(n, 0.0) for n in names], dtype=np.float64)
    else:
        w = np.asarray(list(weights), dtype=np.float64)
        if w.shape != (len(names),):
            raise ConfigError(
                f"weights has {len(w)} entries; models has {len(names)} (one weight per model)"
            )
    if not np.isfinite(w).all() or (w < 0).any() or w.sum() <= 0:
        raise ConfigError(f"weights must be non-negative with a positive sum, got {w.tolist()}")
    return w / w.sum()


def poisson_workload(
    rate_per_s: float,
    *,
    models: Sequence[str | Network],
    duration_s: float | None = None,
    n_requests: int | None = None,
    weights: Sequence[float] | Mapping[str, float] | None = None,
    priorities: tuple[int, int] = (1, 11),
    qos: Mapping[str, float] | float | None = None,
    batch_sizes: Sequence[int] = (1,),
    profiles: Mapping[str, Profile] | None = None,
    random_state: RandomState = None,
    arrivals: str = "exponential",
) -> list[Request]:
    """An open-loop Poisson request stream: :func:`poisson_table`'s requests as a list."""
    return poisson_table(
        rate_per_s,
        models=models,
        duration_s=duration_s,
        n_requests=n_requests,
        weights=weights,
        priorities=priorities,
        qos=qos,
        batch_sizes=batch_sizes,
        profiles=profiles,
        random_state=random_state,
        arrivals=arrivals,
    ).requests()


def poisson_table(
    rate_per_s: float,
    *,
    models: Sequence[str | Network],
    duration_s: float | None = None,
    n_requests: int | None = None,
    weights: Sequence[float] | Mapping[str, float] | None = None,
    priorities: tuple[int, int] = (1, 11),
    qos: Mapping[str, float] | float | None = None,
    batch_sizes: Sequence[int] = (1,),
    profiles: Mapping[str, Profile] | None = None,
    random_state: RandomState = None,
    arrivals: str = "exponential",
) -> RequestTable:
    """An open-loop Poisson request stream (MLPerf server scenario; Planaria Sec. VI-A).

    Inter-arrival gaps are exponential with mean ``1 / rate_per_s`` seconds (a Poisson process;
    not a Poisson *count* per interval), or with ``arrivals="artifact"`` as the Planaria
    authors' generator draws them (he-actlab/planaria.code, ``scheduler/generator.py``): the
    first request at 0, each next one a Poisson-distributed whole number of milliseconds (mean
    ``1000 / rate_per_s``) after the previous, drawn from the same generator after the networks
    and priorities, which are the exponential stream's. Give exactly one of ``duration_s``
    (arrivals in ``(0, duration_s)``; with ``"artifact"`` the exponential stream's count,
    those arriving before ``duration_s`` kept) or ``n_requests``.

    Args:
        rate_per_s: arrival rate lambda (requests per second).
        models: networks; each request picks one with probability ``weights``. Zoo names,
            :class:`~npusched.models.ir.Network` objects (your own network, no registration
            needed) or names that are keys of ``profiles``.
        weights: model mix (a list aligned with ``models`` or a name -> weight mapping over
            networks in ``models``; missing names weigh 0); uniform by default.
        priorities: inclusive integer range ``(lo, hi)``; each request's priority is uniform over
            it (Planaria: 1-11).
        qos: latency targets. A mapping network -> SLO in seconds (networks not in it get no
            SLO; it may only name networks in ``models``), or a scalar ``k``: SLO = ``k x`` the request's isolated latency, which needs
            ``profiles`` (or call :func:`apply_slo` on the result).
        batch_sizes: uniform choice per request.
        profiles: compiled profiles by network name: resolve a scalar ``qos`` and let
            ``models`` name networks that are not in the zoo.
        random_state: seed or generator.
        arrivals: ``"exponential"`` or ``"artifact"`` (:data:`ARRIVALS`).
    """
    if not np.isfinite(rate_per_s) or rate_per_s <= 0:
        raise ConfigError(f"rate_per_s must be a positive number, got {rate_per_s!r}")
    if arrivals not in ARRIVALS:
        raise ConfigError(f"arrivals {arrivals!r}; allowed: {', '.join(ARRIVALS)}")
    args = check_poisson_args(
        models,
        duration_s=duration_s,
        n_requests=n_requests,
        weights=weights,
        priorities=priorities,
        qos=qos,
        batch_sizes=batch_sizes,
        profiles=profiles,
    )
    if duration_s is not None and rate_per_s * duration_s > MAX_REQUESTS:
        raise ConfigError(
            f"rate_per_s x duration_s = {rate_per_s * duration_s:,.0f} expected requests; "
            f"allowed: at most {MAX_REQUESTS:,}"
        )
    if args.multiplier is not None and profiles is None:
        raise ConfigError(
            "a scalar qos (multiple of isolated latency) needs profiles=; or call apply_slo()"
        )

    rng = _rng(random_state)
    arrival = _arrivals(rng, float(rate_per_s), duration_s, n_requests)
    n = len(arrival)
    names, lo, hi, bs, slo_map = args.names, args.lo, args.hi, args.batch_sizes, args.slo_map
    net_code = rng.choice(len(names), size=n, p=args.weights)
    nets = [names[i] for i in net_code.tolist()]
    prio = rng.integers(lo, hi + 1, size=n)
    batch = bs[rng.integers(0, len(bs), size=n)]
    seq_in, seq_out = sample_seq_lens(
        nets, rng, user=_user_networks(models, profiles), distinct=_drawn(net_code, names)
    )
    slo: list[float | None] = [slo_map.get(x) for x in nets] if slo_map is not None else [None] * n
    reqs = assemble_table(
        arrival,
        nets,
        batch=batch,
        priority=prio,
        slo_s=slo,
        seq_in=seq_in,
        seq_out=seq_out,
        network_codes=(net_code, names),
    )
    if arrivals == "artifact" and n:
        gaps_ms = rng.poisson(1e3 / float(rate_per_s), size=n).astype(float)
        gaps_ms[0] = 0.0
        times = np.cumsum(gaps_ms) * 1e-3
        keep = n if duration_s is None else int(np.searchsorted(times, duration_s))
        reqs = reqs.replaced(arrival_s=times[:keep].tolist())
    if args.multiplier is not None:
        assert profiles is not None
        reqs = apply_slo(reqs, profiles, args.multiplier)
    return reqs


class PoissonArgs(NamedTuple):
    """The checked, normalised arguments of :func:`poisson_workload` (see
    :func:`check_poisson_args`)."""

    names: list[str]
    weights: FloatArray
    lo: int
    hi: int
    batch_sizes: IntArray
    slo_map: dict[str, float] | None
    multiplier: float | None


def check_poisson_args(
    models: Sequence[str | Network],
    *,
    duration_s: float | None = None,
    n_requests: int | None = None,
    weights: Sequence[float] | Mapping[str, float] | None = None,
    priorities: tuple[int, int] = (1, 11),
    qos: Mapping[str, float] | float | None = None,
    batch_sizes: Sequence[int] = (1,),
    profiles: Mapping[str, Profile] | None = None,
) -> PoissonArgs:
    """Check :func:`poisson_workload`'s arguments (the run config checks its ``poisson``
    workload with this too, so both report the same problem in the same words).

    Raises:
        ConfigError: an invalid or inconsistent argument (e.g. both or neither of
            ``duration_s`` and ``n_requests``, a ``weights`` or ``qos`` table naming a network
            not in ``models``).
        UnknownNameError: an unknown network name.
    """
    if (duration_s is None) == (n_requests is None):
        raise ConfigError("give exactly one of duration_s and n_requests")
    if duration_s is not None and (not np.isfinite(duration_s) or duration_s <= 0):
        raise ConfigError(f"duration_s must be positive, got {duration_s!r}")
    if n_requests is not None and (
        isinstance(n_requests, bool) or int(n_requests) != n_requests or n_requests < 0
    ):
        raise ConfigError(f"n_requests must be a non-negative integer, got {n_requests!r}")
    if n_requests is not None and n_requests > MAX_REQUESTS:
        raise ConfigError(f"n_requests must be at most {MAX_REQUESTS:,}, got {n_requests:,}")
    lo, hi = (int(priorities[0]), int(priorities[1])) if len(priorities) == 2 else (0, -1)
    if len(priorities) != 2 or lo < 1 or hi < lo:
        raise ConfigError(
            f"priorities must be an inclusive range (lo, hi), 1 <= lo <= hi, got {priorities!r}"
        )
    names = _canonical(models, _user_networks(models, profiles))
    w = _weights(weights, names)
    bs = _positive_ints(batch_sizes, "batch_sizes")
    slo_map: dict[str, float] | None = None
    multiplier: float | None = None
    if isinstance(qos, Mapping):
        slo_map = _by_model(qos, names, "qos")
        if any(not np.isfinite(v) or v <= 0 for v in slo_map.values()):
            raise ConfigError(f"qos SLOs must be positive seconds, got {dict(qos)!r}")
    elif qos is not None:
        multiplier = float(qos)
        if not np.isfinite(multiplier) or multiplier <= 0:
            raise ConfigError(f"qos multiplier must be positive, got {qos!r}")
    return PoissonArgs(names, w, lo, hi, bs, slo_map, multiplier)


@overload
def apply_slo(  # type: ignore[overload-overlap]
    requests: RequestTable,
    profiles: Mapping[str, Profile] | Callable[[Request], float],
    multiplier: float,
    *,
    overwrite: bool = False,
) -> RequestTable: ...


@overload
def apply_slo(
    requests: Sequence[Request],
    profiles: Mapping[str, Profile] | Callable[[Request], float],
    multiplier: float,
    *,
    overwrite: bool = False,
) -> list[Request]: ...


def apply_slo(
    requests: Sequence[Request],
    profiles: Mapping[str, Profile] | Callable[[Request], float],
    multiplier: float,
    *,
    overwrite: bool = False,
) -> list[Request] | RequestTable:
    """Set each request's SLO to ``multiplier x`` its isolated latency (seconds).

    ``profiles`` maps network names to compiled profiles (or is a function request -> isolated
    seconds). Requests that already have an SLO keep it unless ``overwrite``. A
    :class:`~npusched.workloads.request.RequestTable` gives a table (its SLO column replaced;
    ``profiles`` called with the first request of each shape), anything else a list.
    """
    if not np.isfinite(multiplier) or multiplier <= 0:
        raise ConfigError(f"SLO multiplier must be positive, got {multiplier!r}")
    if callable(profiles):
        isolated: Callable[[Request], float] = profiles
    else:
        table = profiles

        def isolated(r: Request) -> float:
            try:
                prof = table[r.network]
            except KeyError:
                raise NpuschedError(f"no profile for network {r.network!r}") from None
            return prof.isolated_latency(r.batch, r.seq_in, r.seq_out)

    # Requests share few (network, batch, lengths) shapes: look each shape up once.
    seen: dict[tuple[str, int, int | None, int | None], float] = {}
    if isinstance(requests, RequestTable):
        col = requests.column
        slo = list(col("slo_s"))
        mult = float(multiplier)
        shapes = zip(col("network"), col("batch"), col("seq_in"), col("seq_out"), strict=True)
        for i, key in enumerate(shapes):
            if slo[i] is not None and not overwrite:
                continue
            iso = seen.get(key)
            if iso is None:
                iso = seen[key] = float(isolated(requests[i]))
            slo[i] = mult * iso
        return requests.replaced(slo_s=slo)
    out: list[Request] = []
    for r in requests:
        if r.slo_s is not None and not overwrite:
            out.append(r)
            continue
        key = (r.network, r.batch, r.seq_in, r.seq_out)
        iso = seen.get(key)
        if iso is None:
            iso = seen[key] = float(isolated(r))
        out.append(replace(r, slo_s=float(multiplier) * iso))
    return out
