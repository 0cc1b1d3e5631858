"""Converters from an RDP curve to (ε, δ)-DP.

For any α > 1, an (α, r)-RDP mechanism (Rényi divergence at most r at order α)
is (ε, δ)-DP with (Canonne, Kamath & Steinke 2020, Prop. 12; Balle et al. 2020,
Thm 21)

    ε = r + log((α−1)/α) − (log δ + log α)/(α − 1),
    log δ = (α−1)(r − ε + log(1 − 1/α)) − log α.

Every α gives a valid bound, so the optimiser only affects tightness: a
log-spaced scan of α ∈ (1, 10⁵] followed by Brent's method on the bracket
around the best point. ε is reported as at least 0 and δ as at most 1.
"""
import math

import numpy as np

from ..lazy import lazy
from ..numerics import ULP_OF_ONE as _U

optimize = lazy("scipy.optimize")

_ALPHAS = 1.0 + np.geomspace(1e-3, 1e5, 161)
_SMALLEST_NORMAL = np.finfo(float).tiny


def _eps_at(curve, alpha, log_delta):
    a = np.asarray(alpha, dtype=float)
    with np.errstate(invalid="ignore", over="ignore"):
        out = curve(a) + np.log1p(-1.0 / a) - (log_delta + np.log(a)) / (a - 1.0)
    return np.where(np.isnan(out), np.inf, out)


def _log_delta_at(curve, alpha, eps):
    a = np.asarray(alpha, dtype=float)
    with np.errstate(invalid="ignore", over="ignore"):
        out = (a - 1.0) * (curve(a) - eps + np.log1p(-1.0 / a)) - np.log(a)
    return np.where(np.isnan(out), np.inf, out)


def _minimise(objective):
    values = objective(_ALPHAS)
    i = int(np.argmin(values))
    best_a, best = _ALPHAS[i], float(values[i])
    if not np.isfinite(best):
        return best, best_a
    lo, hi = _ALPHAS[max(i - 1, 0)], _ALPHAS[min(i + 1, len(_ALPHAS) - 1)]
    if hi > lo:
        with np.errstate(over="ignore", invalid="ignore"):  # objective values near ±1e300: any α is valid
            res = optimize.minimize_scalar(lambda a: float(objective(a)), bounds=(lo, hi),
                                           method="bounded", options={"xatol": 1e-10 * hi})
        if res.fun < best:
            best_a, best = float(res.x), float(res.fun)
    return best, best_a


def rdp_to_epsilon(curve, delta):
    """Smallest ε (over α) of the conversion above; ε ≥ 0; inf if RDP is inf."""
    log_delta = math.log(delta)
    eps, alpha = _minimise(lambda a: _eps_at(curve, a, log_delta))
    if not math.isfinite(eps):
        return max(float(eps), 0.0)
    # rounded up: the four terms above each carry a few ulps of their own size
    terms = abs(float(curve(np.array([alpha]))[0])) + abs(math.log(alpha)) + abs(log_delta) / (alpha - 1.0) + 1.0
    return max(float(eps) + 16 * _U * terms, 0.0)


def rdp_to_delta(curve, eps):
    """Smallest δ (over α) of the conversion above; δ ≤ 1."""
    log_delta, alpha = _minimise(lambda a: _log_delta_at(curve, a, eps))
    if math.isfinite(log_delta):  # rounded up, as in rdp_to_epsilon (the terms scaled by α − 1)
        r = abs(float(curve(np.array([alpha]))[0]))
        log_delta += 16 * _U * ((alpha - 1.0) * (r + abs(eps) + 1.0) + abs(math.log(alpha)))
    out = math.exp(min(log_delta, 0.0))
    if log_delta > -math.inf and out < _SMALLEST_NORMAL:  # exp() underflows or rounds ±½ unit there
        out = math.nextafter(out, 1.0)
    if out == 0.0:  # a bound below the float range (or ε = ∞): the smallest positive float is above it
        out = math.ulp(0.0)
    return float(min(out, 1.0))
