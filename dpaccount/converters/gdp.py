"""Closed forms of Gaussian differential privacy (Dong, Roth & Su; Bu et al. 2020).

A mechanism is μ-GDP when its tight dominating pair is (N(μ, 1), N(0, 1)).
Its privacy loss under P is N(μ²/2, μ²) and its hockey-stick curve is
(Balle & Wang 2018, Thm 8; Bu, Dong, Long & Su 2020, Cor. 2.13)

    δ(ε; μ) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2).

Composing μ_i-GDP mechanisms gives sqrt(Σ μ_i²)-GDP exactly, so a
composition of Gaussian mechanisms needs no numerics beyond Φ.

For large ε both terms are tiny and nearly equal; with the scaled
complementary error function erfcx(x) = e^{x²} erfc(x) the common factor
e^{−a²/2} comes out exactly (a = −ε/μ + μ/2, b = a − μ):

    δ = ½ e^{−a²/2} [erfcx(−a/√2) − erfcx(−b/√2)],

because e^ε e^{(a² − b²)/2} = 1. The remaining difference loses about
log10(|a|/μ) digits and the exponent a²/2 is only accurate to ~a²·u; the
result is inflated by several times both, so it is an upper bound.
"""
import math

import numpy as np

from ..lazy import lazy
from ..numerics import ULP_OF_ONE as _U

optimize = lazy("scipy.optimize")
special = lazy("scipy.special")

_BIG = np.finfo(float).max
_LOG_TINY = math.log(math.ulp(0.0))  # log of the smallest positive float
_SMALLEST_NORMAL = np.finfo(float).tiny


def log_delta_gdp(eps, mu, upper=True):
    """log δ(ε; μ), vectorised over ε (any real ε), rounded up (or down).

    Returns -inf where δ underflows to exactly 0 only when it truly is 0
    (never for μ > 0 and finite ε), otherwise a finite log.

    Where the closed form loses every digit (μ so small that Φ(a) − e^ε Φ(b)
    cancels completely, or μ, ε so large that a² overflows) the upper bound
    falls back on δ(ε) ≤ P(L > ε) = Φ(a) and, for ε ≥ 0, δ(ε) ≤ δ(0) =
    Φ(μ/2) − Φ(−μ/2) ≤ μ φ(0) = μ/√(2π); the lower bound on 0.
    """
    eps = np.asarray(eps, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore", under="ignore"):
        a = -eps / mu + mu / 2.0
        b = a - mu
        # branch 1 (a >= 0, δ not small): Φ(a) - e^ε Φ(b) directly in logs
        la, lb = special.log_ndtr(a), special.log_ndtr(b)
        direct = la + np.log1p(-np.exp(np.minimum(eps + lb - la, 0.0)))
        # branch 2 (a < 0): the erfcx form, no overflow of e^ε
        ra, rb = special.erfcx(-a / math.sqrt(2)), special.erfcx(-b / math.sqrt(2))
        scaled = -0.5 * a * a + np.log(0.5 * (ra - rb))
        out = np.where(a >= 0, direct, scaled)
        # cancellation of the two terms costs ~(1+|a|)/μ times their error; in branch 2
        # erfcx has no documented bound and errs by up to 8 ulp near 0 (scipy 1.17,
        # measured; 12 with docs/portability.md's 4-ulp allowance for another platform),
        # ra − rb ≈ 0.8μ, so ≤ 15u(1+|a|)/μ: taken as 32u(1+|a|)/μ. a carries ~(|ε|/μ + μ) ulps which a²/2
        # multiplies by |a|, and exp() of a log of size |x| adds ~|x| ulps: err upwards
        # by several times all of these
        slack = 8 * _U * (4.0 + np.where(a >= 0, 1.0, 4.0) * (1.0 + np.abs(a)) / mu + a * a + np.abs(eps)
                          + np.abs(a) * (np.abs(eps) / mu + mu) + np.abs(out))
        usable = np.isfinite(out) & (slack < 0.5)
        if not upper:
            return np.where(usable, out + np.log1p(-np.minimum(slack, 0.5)), -np.inf)
        # the fallback bounds, each padded by 8 ulp of its size (log_ndtr and log are good to a few)
        tail = np.where(np.isfinite(la), la + 8 * _U * (1.0 + np.abs(la)), la)
        at_zero = math.log(mu) - 0.5 * math.log(2 * math.pi)
        at_zero += 8 * _U * (1.0 + abs(at_zero))
        fallback = np.where(eps >= 0, np.minimum(tail, at_zero), tail)
        fallback = np.where(np.isnan(fallback), 0.0, fallback)  # nothing known: δ ≤ 1
        # a finite ε has δ > 0: below the float range the bound is the smallest positive float
        fallback = np.where(np.isfinite(eps), np.maximum(fallback, _LOG_TINY), fallback)
        return np.where(usable, np.minimum(out + np.log1p(slack), fallback), fallback)


def delta_gdp(eps, mu, upper=True):
    """δ(ε; μ) of μ-GDP in [0, 1]: an upper bound accurate to ~1e-12 relative
    (with upper=False, a lower bound)."""
    log_d = log_delta_gdp(eps, mu, upper)
    out = np.minimum(np.exp(log_d), 1.0)
    if upper:  # below the float range an upper bound is the smallest positive float, not 0;
        # among subnormals exp() rounds to ±½ unit, so one unit up (the pad in log_d is lost there)
        out = np.where(np.isfinite(log_d) & (out < _SMALLEST_NORMAL), np.nextafter(out, 1.0), out)
    return float(out) if np.ndim(out) == 0 else out


def epsilon_gdp(delta, mu):
    """Smallest ε ≥ 0 with δ(ε; μ) ≤ delta (a rigorous upper bound on ε).

    δ(ε; μ) is strictly decreasing in ε, so the root of log δ(ε) = log delta
    is found by Brent's method on a bracket and then nudged up until the
    (upward-rounded) δ is at most delta.
    """
    target = math.log(delta)
    f = lambda e: float(log_delta_gdp(e, mu)) - target
    if f(0.0) <= 0:
        return 0.0
    hi = min(max(1.0, mu * mu / 2 + mu * math.sqrt(2 * max(-target, 1.0)) + 1.0), _BIG)
    while f(hi) > 0:
        if hi >= _BIG:  # δ(ε) > delta at the largest float: ε is beyond the float range
            return math.inf
        hi = min(2.0 * hi, _BIG)
    eps = optimize.brentq(f, 0.0, hi, xtol=1e-15, rtol=4 * _U, maxiter=200)
    while f(eps) > 0:  # brentq may stop just below the root: step up
        eps = np.nextafter(eps, math.inf) + 4 * _U * abs(eps)
    return float(eps)
