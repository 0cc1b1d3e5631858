"""Chernoff bounds on a composition of grids: the λ searches on its log-MGF.

For items [(grid_i, k_i)] (independent losses, grid i taken k_i times) with
log-MGF K(λ) = Σ_i k_i Λ_i(λ) (``log_mgf.py``), the composed loss S has,
for every λ > 0 (Chernoff),

    P(S ≥ b) ≤ exp(K(λ) − λb),   P(S ≤ a) ≤ exp(K(−λ) + λa).

Any λ gives a valid bound: the searches below only tighten it (a λ off the
optimum widens a window, it never makes it wrong). Every bound adds K's
rounding (``LogMGF.error``).

The searches (``descend``) are safeguarded Newton iterations on the slope
of a Chernoff exponent or level, one pass over the points per step giving
K, K' and K'' (the tilted mean and variance); started near the answer (a
coarser grid's λ, a normal law's), they take one to a few passes.
"""
import math

import numpy as np

from ...lazy import lazy
from ...numerics import ULP_OF_ONE as _U
from .log_mgf import log_mgf

optimize = lazy("scipy.optimize")

_SCAN = np.geomspace(1e-3, 1e3, 10)  # the first look of every λ search


def minimise_over_lambda(f, argmin=False):
    """min over λ ∈ [1e-3, 1e3] of f (or the λ attaining it): a log-spaced scan
    (f takes the array of λ), then Brent on the bracket around the best point."""
    grid = _SCAN
    vals = np.asarray(f(grid), dtype=float)
    i = int(np.argmin(vals))
    lo, hi = grid[max(i - 1, 0)], grid[min(i + 1, len(grid) - 1)]
    res = optimize.minimize_scalar(f, bounds=(lo, hi), method="bounded", options={"xatol": 2e-2 * lo})
    if argmin:
        return float(res.x) if res.fun < vals[i] else float(grid[i])
    return min(float(vals[i]), float(res.fun))


def descend(evaluate, lam, tol=0.0):
    """(value, λ): the least value met by a safeguarded Newton search over
    λ ∈ [1e-3, 1e3] from ``lam``, of a function that falls and then rises.

    ``evaluate(λ)`` gives (value, ψ, ψ', gain, s): ψ has the sign of the slope
    and does not decrease (the minimum is its root, or an end of the range),
    gain predicts how far below the value the minimum is, and s is ψ's scale
    (a standard deviation: x = ψ/s). Below the root the step is Newton's,
    −ψ/ψ'; above it, Newton's on asinh(ψ/s), −asinh(x)·√(1 + x²)·s/ψ' (as
    Newton's where |x| ≲ 1; where the tilted mean runs away exponentially, as
    past a compound of rare large losses, a jump to near the root instead of
    ~1/rate per step). A step stays inside the bracket the signs of ψ have
    shown (else the bracket's geometric middle, or the end not yet tried) and
    moves at most a factor 4 towards an end where ψ's sign is unknown. It
    stops where gain ≤ ``tol`` (or 1e-13 of the value: rounding) or the root
    lies beyond an end. Each evaluation is one pass over the points."""
    lo, hi = _SCAN[0], _SCAN[-1]
    lam = min(max(float(lam), lo), hi)
    best, seen = (math.inf, lam), [False, False]  # whether ψ < 0 at lo, ψ > 0 at hi has been seen
    for _ in range(60):
        value, psi, dpsi, gain, scale = evaluate(lam)
        if not (math.isfinite(value) and math.isfinite(psi)):
            return min(best, (value, lam)) if best[0] < math.inf else (value, lam)
        best = min(best, (value, lam))
        if psi == 0 or gain <= max(tol, 1e-13 * abs(value)) or (psi < 0 and lam >= _SCAN[-1]) or (
                psi > 0 and lam <= _SCAN[0]):
            break
        if psi < 0:
            lo, seen[0] = lam, True
            new = lam - psi / dpsi if dpsi > 0 else math.inf
        else:
            hi, seen[1] = lam, True
            x = psi / scale if scale > 0 else math.inf
            stretch = math.asinh(x) * math.sqrt(1.0 + x * x) / x if 0 < x < 1e150 else 1.0  # ≥ 1
            new = lam - stretch * psi / dpsi if dpsi > 0 else 0.0
        if hi - lo <= 1e-12 * hi:
            break
        if not lo < new < hi:  # towards an end not yet seen, that end; else the geometric middle
            new = lo if not seen[0] and new <= lo else hi if not seen[1] and new >= hi else math.sqrt(lo * hi)
        # towards an end where ψ's sign is unknown, at most a factor 4 at a time
        lam = min(max(new, lo if seen[0] else 0.25 * lam), hi if seen[1] else 4.0 * lam)
    return best


def exponent(mgf, level, sign=1.0):
    """``descend``'s λ ↦ K(sλ) − sλ·level: the Chernoff exponent of P(sS ≥ s·level),
    convex (ψ = s(K'(sλ) − level), ψ' = K''(sλ), gain ψ²/2ψ', scale √K'')."""
    def evaluate(lam):  # the value rounded up: K's error (``LogMGF.error``) and the subtraction's
        k0, k1, k2 = mgf.moments(sign * lam)
        psi = sign * (k1 - level)
        value = k0 - sign * lam * level
        value += mgf.error(lam) + 2 * _U * (abs(k0) + abs(lam * level))
        return value, psi, k2, psi * psi / (2.0 * k2) if k2 > 0 else math.inf, math.sqrt(k2)
    return evaluate


def tail_level(mgf, log_tail, sign=1.0, at=0.0):
    """``descend``'s θ ↦ f(θ) = (K(at + sθ) − K(at) − log_tail)/θ: by Chernoff, the law
    tilted at ``at`` (log-MGF θ ↦ K(at + θ) − K(at); at = 0: the composed law itself,
    K(0) not taken off) has P(sS ≥ f(θ)) ≤ e^{log_tail}. ψ = θ²f' = θ(sK' − f) does
    not decrease (ψ' = θK''); gain ψ²/(2θ²ψ'), scale θ√K''."""
    base = mgf(at) if at else 0.0
    slack = mgf.error(at) if at else 0.0  # K(at)'s rounding (K(0) = 0 is not computed)

    def evaluate(theta):  # the level rounded up: both K's errors (``LogMGF.error``), the sums'
        k0, k1, k2 = mgf.moments(at + sign * theta)
        value = (k0 - base - log_tail) / theta
        value += (mgf.error(at + sign * theta) + slack + 4 * _U * (abs(k0) + abs(base) + abs(log_tail))) / theta
        psi, dpsi = theta * (sign * k1 - value), theta * k2
        gain = psi * psi / (2.0 * theta * theta * dpsi) if dpsi > 0 else math.inf
        return value, psi, dpsi, gain, theta * math.sqrt(k2)
    return evaluate


def quantile(mgf, log_tail, sign, hint=None, tol=0.0):
    """(level, λ): P(sign·S ≥ level) ≤ e^{log_tail} at level = f(λ) = (K(sign·λ) − log_tail)/λ,
    minimised over λ by ``descend`` (``tail_level``) from ``hint`` (the λ of the
    same search on coarser grids of the same pairs, which moves little), else
    from that of a normal law of the same variance, √(−2·log_tail/K''(0)); it
    stops where the predicted gain is at most ``tol``."""
    if hint is None:
        hint = math.sqrt(-2.0 * log_tail / max(mgf.moments(0.0)[2], 1e-300))
    return descend(tail_level(mgf, log_tail, sign), hint, tol)


def composed_p_inf(items):
    """P(S = ∞) = 1 − Π(1 − p_∞,i)^{k_i} of [(grid, count), ...], rounded up
    (log1p, the sum and expm1: a few ulps each, padded by 16u)."""
    if any(g.p_inf >= 1.0 for g, _ in items):
        return 1.0
    return min(1.0, -math.expm1(sum(k * math.log1p(-g.p_inf) for g, k in items)) * (1 + 16 * _U))


_DELTA_LAMBDAS = np.geomspace(1e-2, 1e3, 97)  # any λ > 0 is valid: the lattice only tightens
_TINY = np.nextafter(0.0, 1.0)


def delta_bound(items, eps):
    """A rigorous upper bound on δ(ε) (an array of ε ≥ 0) of the composition of
    [(pessimistic grid, count), ...], without composing it:

        δ(ε) = E[(1 − e^{ε−S})₊] ≤ P(S = ∞) + c(λ)·e^{K(λ) − λε}   for every λ > 0,

    c(λ) = max_{x>0} (1 − e^{−x})e^{−λx} = (λ/(λ+1))^λ/(λ+1) (the maximum is at
    e^{−x} = λ/(λ+1)), K the log-MGF of the finite parts; minimised over a λ
    lattice. The grids dominate their pairs, so their composition dominates the
    composed mechanism and this bounds its δ too (Zhu, Dong & Wang 2022, Thm 10).

    Rounding, erring up: K by ``LogMGF.error``; the rest (λε, log c, exp) by
    8u of the terms and 16u of the result; P(S = ∞) by ``composed_p_inf``."""
    eps = np.asarray(eps, dtype=float)
    if not np.all(eps < np.inf):  # δ(∞) = P(S = ∞): the bound at the largest finite ε is above it
        return delta_bound(items, np.minimum(eps, 1e300))
    p_inf = composed_p_inf(items)
    if p_inf >= 1.0:
        return np.ones(eps.shape)
    lam = _DELTA_LAMBDAS
    with np.errstate(over="ignore"):
        cgf = np.asarray(log_mgf(items)(lam), dtype=float)
    pad = log_mgf(items).error(lam)
    log_c = -np.log1p(lam) - lam * np.log1p(1.0 / lam)
    terms = cgf[:, None] - lam[:, None] * eps.ravel()[None, :] + log_c[:, None]
    slack = pad[:, None] + 8 * _U * (np.abs(lam[:, None] * eps.ravel()[None, :]) + np.abs(log_c)[:, None] + 1)
    with np.errstate(invalid="ignore"):
        best = np.min(np.where(np.isfinite(cgf)[:, None], terms + slack, np.inf), axis=0)
    with np.errstate(over="ignore", under="ignore"):
        tail = np.exp(np.minimum(best, 0.0)) * (1 + 16 * _U)
    tail = np.where(best > -np.inf, np.maximum(tail, _TINY), 0.0)  # an underflow rounds up
    return np.minimum(tail + p_inf, 1.0).reshape(eps.shape)
