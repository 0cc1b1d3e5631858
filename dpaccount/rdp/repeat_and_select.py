"""RDP of repeat-and-select (Papernot & Steinke 2022, "Hyperparameter tuning
with Rényi differential privacy", ICLR; arXiv 2110.03620).

A base mechanism Q is run K times (K random, independent of the data) and only
the best run is released. With K truncated negative binomial of shape η ≥ 0
and halting probability γ (η = 0 logarithmic, η = 1 geometric), Thm 2: if Q is
(λ, ε)- and (λ̂, ε̂)-RDP, the selection is (λ, ε′)-RDP with

    ε′ = ε + (1 + η)(1 − 1/λ̂) ε̂ + (1 + η) log(1/γ)/λ̂ + log E[K]/(λ − 1),

for every λ̂ ≥ 1, so the bound takes the least over a grid of λ̂ (any λ̂ is
valid). With K Poisson of mean μ (η = ∞), Thm 6: if Q is also (ε̂, δ̂)-DP with
e^{ε̂} ≤ 1 + 1/(λ − 1),

    ε′ = ε + μ δ̂ + log μ/(λ − 1),

with ε̂ = log1p(1/(λ − 1)) and δ̂ the base's certified δ there (its tightest
route: a privacy-loss grid where it has one — sound, since the theorem holds
for any valid (ε̂, δ̂)). Rényi divergences grow with the order, so the bound at
λ may take the least of the bounds at any λ′ ≥ λ (on the grid ``LAMBDAS``).

E[K] of the truncated negative binomial (Papernot & Steinke, Def. 1):
η(1 − γ)/(γ(1 − γ^η)) (η > 0), (1 − γ)/(γ log(1/γ)) (η = 0, the limit); γ
solves E[K] = mean, rounded down (ε′ rises as γ falls: the root's lower end
errs up).
"""
import math

import numpy as np

from ..lazy import lazy
from ..numerics import ULP_OF_ONE

optimize = lazy("scipy.optimize")

LAMBDAS = 1.0 + np.geomspace(1e-3, 1e4, 141)  # λ̂ (then refined by Brent) and λ′ grids


def tnb_mean(gamma, shape):
    """E[K] for K truncated negative binomial (shape η, halting probability γ ∈ (0, 1])."""
    if gamma == 1.0:
        return 1.0
    log_g = math.log(gamma)
    if shape == 0.0:
        return -math.expm1(log_g) / (gamma * -log_g)
    return shape * -math.expm1(log_g) / (gamma * -math.expm1(shape * log_g))


def tnb_gamma(shape, mean):
    """γ with E[K] = ``mean`` (E[K] falls as γ rises), rounded down: the lower end of a
    bisection bracket whose E[K] is ≥ mean (a smaller γ only raises the bound)."""
    if mean == 1.0:
        return 1.0
    if shape == 1.0:
        return math.nextafter(1.0 / mean, 0.0)
    lo, hi = 0.0, 1.0  # E[K](lo) ≥ mean > E[K](hi)
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if mid in (lo, hi):
            break
        if mid > 0 and tnb_mean(mid, shape) >= mean:
            lo = mid
        else:
            hi = mid
    return lo


def _least(objective):
    """min of ``objective`` over λ̂ > 1: the grid's best point, then Brent's method on the
    bracket around it (every λ̂ is valid, so the optimiser only affects tightness)."""
    values = np.asarray(objective(LAMBDAS), dtype=float)
    i = int(np.argmin(values))
    best = float(values[i])
    lo, hi = LAMBDAS[max(i - 1, 0)], LAMBDAS[min(i + 1, len(LAMBDAS) - 1)]
    res = optimize.minimize_scalar(lambda h: float(objective(np.array([h]))[0]), bounds=(lo, hi),
                                   method="bounded", options={"xatol": 1e-9 * hi})
    return min(best, float(res.fun)) if np.isfinite(res.fun) else best


def _envelope(raw):
    """α ↦ min over λ′ ∈ {α} ∪ {grid points ≥ α} of raw(λ′) (monotone RDP); the grid's
    values once, with their suffix minima."""
    suffix = []

    def fn(alpha):
        if not suffix:
            suffix.append(np.minimum.accumulate(raw(LAMBDAS)[::-1])[::-1])
        alpha = np.asarray(alpha, dtype=float)
        flat = alpha.ravel()
        first = np.searchsorted(LAMBDAS, flat)  # the first grid point ≥ α
        later = np.append(suffix[0], np.inf)[first]
        return np.minimum(raw(flat), later).reshape(alpha.shape)
    return fn


def repeat_and_select_rdp(base_curve, mean, shape, base_delta=None):
    """α ↦ ε′(α) of the selection (module docstring), vectorised; ``base_curve`` the base's
    RDP, ``base_delta(eps_array)`` its certified δ(ε) (needed for shape = ∞)."""
    log_mean = math.log(mean)
    if math.isinf(shape):
        def raw(a):
            a = np.asarray(a, dtype=float)
            # rounded down (log1p to a few ulps): Thm 6 asks e^ε̂ ≤ 1 + 1/(λ − 1), and a smaller ε̂
            # only raises δ̂
            eps_hat = np.log1p(1.0 / (a - 1.0)) * (1.0 - 16 * ULP_OF_ONE)
            return base_curve(a) + mean * np.asarray(base_delta(eps_hat), dtype=float) + log_mean / (a - 1.0)
    else:
        gamma = tnb_gamma(shape, mean)
        # (1 + η) min over λ̂ of (1 − 1/λ̂) ε̂(λ̂) + log(1/γ)/λ̂, a constant of the base
        const = (1.0 + shape) * _least(lambda h: (1.0 - 1.0 / h) * base_curve(h) - math.log(gamma) / h)

        def raw(a):
            a = np.asarray(a, dtype=float)
            return base_curve(a) + log_mean / (a - 1.0) + const
    return _envelope(raw)
