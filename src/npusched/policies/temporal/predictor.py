"""PREMA's inference-time predictor (Sec. V-B): ``Time_estimated`` of a request before it runs.

Two parts, as in the paper:

1. **Node-level latency** (Algorithm 1): the per-layer latency comes from the cost model, i.e.
   the compiled :class:`~npusched.hardware.profile.Profile` of the network on the device (the
   systolic-array model implements Algorithm 1's inner/outer-tile formula). For a CNN the number
   of executed nodes is static, so the estimate equals the profiled isolated latency.
2. **How many nodes run** (RNNs): the encoder unrolls ``seq_in`` times (known before inference)
   and the decoder ``seq_out`` times (unknown). ``seq_out`` is predicted by the profile-driven
   regression model of Fig. 9: a look-up table indexed by the input length returning the
   geometric mean of the output lengths observed in a profiling set. The table of a network
   comes from its registered length model (:mod:`npusched.models.rnn_lengths`): its fixed
   profiling set if it has one (``table()``), else 1500 samples drawn with a fixed seed.

The predicted ``seq_out`` is fractional; the estimate interpolates linearly between the plans at
``floor`` and ``ceil`` of it (each decoder step costs the same, so latency is linear in
``seq_out``). A recurrent network without a length model, or a request without ``seq_in``, is
estimated at the network's default sequence lengths for the missing parts.

:func:`make_estimator` returns the callable the simulator takes as ``estimator``:
``"prema"`` (this predictor) or ``"oracle"`` (the true isolated latency, Sec. VI-D).
"""

from __future__ import annotations

import math
import weakref
from collections.abc import Callable, Iterable, Mapping
from functools import lru_cache
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from npusched.errors import ConfigError
from npusched.hardware.profile import Profile
from npusched.models.rnn_lengths import PROFILE_SEED, PROFILE_SIZE
from npusched.models.seqlen import geomean_table, length_model_for
from npusched.workloads.request import Request

if TYPE_CHECKING:
    import pandas as pd

FloatArray = npt.NDArray[np.float64]
Estimator = Callable[[Request, Profile], float]
ESTIMATORS = ("prema", "oracle")


@lru_cache(maxsize=64)
def regression_table(network: str) -> tuple[FloatArray, FloatArray] | None:
    """The output-length look-up table of ``network``: ``(input lengths, geomean outputs)``.

    ``None`` when no length model is registered for the network.
    """
    model = length_model_for(network)
    if model is None:
        return None
    table = getattr(model, "table", None)
    if callable(table):
        keys, gm = table()
        return np.asarray(keys, dtype=np.float64), np.asarray(gm, dtype=np.float64)
    keys, gm = geomean_table(*model.sample(np.random.default_rng(PROFILE_SEED), PROFILE_SIZE))
    return keys.astype(np.float64), gm


def predict_seq_out(network: str, seq_in: int) -> float | None:
    """Predicted output length (time steps) of ``network`` for input length ``seq_in``.

    Unseen input lengths interpolate between table entries; beyond the table the nearest entry
    is scaled by ``seq_in / its input``. ``None`` if the network has no length model.
    """
    tab = regression_table(network)
    if tab is None:
        return None
    keys, gm = tab
    q = float(seq_in)
    if q < keys[0]:
        return float(gm[0] * q / keys[0])
    if q > keys[-1]:
        return float(gm[-1] * q / keys[-1])
    return float(np.interp(q, keys, gm))


def rnn_isolated_latency(
    profile: Profile, batch: int, seq_in: int | None, seq_out: int | None
) -> float:
    """Seconds of one uninterrupted run of a request of ``profile``'s network, without building
    (or caching) its :class:`~npusched.hardware.profile.ExecPlan`.

    The per-layer latencies of the batch's row are gathered in execution order (recurrent
    segments unrolled ``seq_in`` / ``seq_out`` times, :meth:`Network.expand`) and summed in that
    order, the same sequential sum as the plan's prefix sums, so the result is bit-identical to
    ``profile.isolated_latency(batch, seq_in, seq_out)``. The predictor looks up lengths that no
    request runs at (``floor`` / ``ceil`` of a predicted ``seq_out``): building plans for those
    held ~200 MiB per 5,000 requests.
    """
    lat = profile.latency_s[profile.row(batch), profile.network.expand(seq_in, seq_out)]
    return float(np.cumsum(lat)[-1]) if len(lat) else 0.0


#: Per profile, ``prema_estimate`` of each ``(batch, seq_in)`` seen (a pure function of them),
#: for a profile that holds no attributes of its own (a :class:`Profile` holds its memo in its
#: ``__dict__`` under :data:`_MEMO`: one dictionary look-up a call, where a weak-key look-up
#: makes a weak reference per call).
_ESTIMATES: weakref.WeakKeyDictionary[Profile, dict[tuple[int, int | None], float]] = (
    weakref.WeakKeyDictionary()
)
_MEMO = "_prema_estimates_"


def prema_estimate(request: Request, profile: Profile) -> float:
    """PREMA's ``Time_estimated`` of ``request`` in seconds (see the module docstring).

    Memoised per profile and ``(batch, seq_in)``, the only request fields it reads.
    """
    try:
        memo = profile.__dict__[_MEMO]
    except (KeyError, AttributeError):
        memo = _memo_of(profile)
    key = (request.batch, request.seq_in)
    est = memo.get(key)
    if est is None:
        est = memo[key] = _prema_estimate(request.batch, request.seq_in, profile)
    return est


def _memo_of(profile: Profile) -> dict[tuple[int, int | None], float]:
    """``profile``'s estimate memo, made on first use (in its ``__dict__`` where it has one:
    the profile is frozen, its fields untouched; the memo is derived state)."""
    d = getattr(profile, "__dict__", None)
    if d is not None:
        memo: dict[tuple[int, int | None], float] = d.setdefault(_MEMO, {})
        return memo
    memo = _ESTIMATES.get(profile) or _ESTIMATES.setdefault(profile, {})
    return memo


def _prema_estimate(batch: int, seq_in: int | None, profile: Profile) -> float:
    net = profile.network
    if not net.is_recurrent:
        return profile.isolated_latency(batch)
    pred = predict_seq_out(net.name, seq_in) if seq_in is not None else None
    if pred is None:
        return rnn_isolated_latency(profile, batch, seq_in, None)
    pred = max(pred, 1.0)
    lo = math.floor(pred)
    frac = pred - lo
    t_lo = rnn_isolated_latency(profile, batch, seq_in, lo)
    if frac <= 1e-12:
        return t_lo
    t_hi = rnn_isolated_latency(profile, batch, seq_in, lo + 1)
    return t_lo + frac * (t_hi - t_lo)


def oracle_estimate(request: Request, profile: Profile) -> float:
    """The true isolated latency of ``request`` (seconds): the oracle of Sec. VI-D."""
    return profile.isolated_latency(request.batch, request.seq_in, request.seq_out)


# Both estimators read only the request's shape (network, batch, seq_in, seq_out): the engine
# calls them once per shape (``shape_only``, :meth:`npusched.sim.engine._Run.estimates`).
prema_estimate.shape_only = True  # type: ignore[attr-defined]
oracle_estimate.shape_only = True  # type: ignore[attr-defined]


def make_estimator(kind: str = "prema") -> Estimator:
    """The simulator's ``estimator``: ``"prema"`` (predictor) or ``"oracle"`` (exact)."""
    if kind == "prema":
        return prema_estimate
    if kind == "oracle":
        return oracle_estimate
    raise ConfigError(f"estimator {kind!r} not allowed; allowed: {', '.join(ESTIMATORS)}")


def prediction_errors(
    requests: Iterable[Request], profiles: Mapping[str, Profile], kind: str = "prema"
) -> pd.DataFrame:
    """Per-request estimate vs. true isolated latency.

    Returns:
        One row per request: ``id, network, batch, seq_in, seq_out, seq_out_pred,
        estimated_s, isolated_s, error`` where ``error = (estimated - isolated) / isolated``
        (signed fraction).
    """
    import pandas as pd

    est = make_estimator(kind)
    rows = []
    for r in requests:
        prof = profiles[r.network]
        iso = oracle_estimate(r, prof)
        e = est(r, prof)
        pred = (
            predict_seq_out(prof.network.name, r.seq_in)
            if prof.network.is_recurrent and r.seq_in is not None
            else None
        )
        rows.append(
            {
                "id": r.id,
                "network": r.network,
                "batch": r.batch,
                "seq_in": r.seq_in,
                "seq_out": r.seq_out,
                "seq_out_pred": pred,
                "estimated_s": e,
                "isolated_s": iso,
                "error": (e - iso) / iso if iso > 0 else 0.0,
            }
        )
    return pd.DataFrame(rows)


def mape(errors: pd.DataFrame) -> float:
    """Mean absolute percentage error (percent) of a :func:`prediction_errors` frame."""
    if errors.empty:
        return 0.0
    return float((np.abs(errors["error"].to_numpy(dtype=np.float64)) * 100.0).mean())
