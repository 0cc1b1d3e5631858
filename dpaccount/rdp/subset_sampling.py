r"""Rényi-DP of sampling without replacement (replace-one neighbours).

Wang, Balle & Kasiviswanathan 2019, "Subsampled Rényi Differential Privacy
and Analytical Moments Accountant" (AISTATS), Theorem 9: if the base
mechanism (on batches of m records) is (j, ε(j))-RDP for replace-one
neighbours, then drawing the batch without replacement from n records,
γ = m/n, gives for integer α ≥ 2

    ε'(α) ≤ 1/(α−1) · log( 1 + γ² C(α,2) min{4(e^{ε(2)} − 1), e^{ε(2)} min{2, (e^{ε(∞)} − 1)²}}
                            + Σ_{j=3}^{α} γ^j C(α,j) e^{(j−1)ε(j)} min{2, (e^{ε(∞)} − 1)^j} ),

ε(∞) the base's pure-DP level (∞ if it has none, then each min{2, ·} is 2).
Every term is positive, so the sum is taken in log space (log-binomials by
gammaln) and ε' = log1p(Σ)/(α−1), rounded up (the rounding bound of
``rdp/poisson_sampling.segment_lse`` plus 8 ulp).

Also ε'(α) ≤ ε(α): the batches of D and D' can be coupled so that each pair
is equal or replace-one neighbours, and e^{(α−1)D_α} is jointly convex; and
ε'(α) ≤ D_∞ ≤ log(1 + γ(e^{ε(∞)} − 1)) (pure DP amplified by sampling without
replacement, Balle, Barthe & Gaboardi 2018, Thm 9). The bound is the least of the three.

Fractional α: λ(α) = (α−1)ε'(α) of the subsampled mechanism is convex in α
(a log-moment-generating function) with λ(1) = 0, so the linear
interpolation of the integer bounds of λ between ⌊α⌋ and ⌈α⌉ (and between
1 and 2) bounds it from above — the rule ``rdp/poisson_sampling.py`` uses for the
Poisson bound.
"""
import math

import numpy as np

from .poisson_sampling import log_binomial, ragged, segment_lse
from ..numerics import ULP_OF_ONE as _U

_LOG2 = math.log(2.0)


def pure_epsilon(pairs):
    """ε(∞): the largest privacy loss of a ``PairComposition`` over both
    directions (k-fold use adds k times the loss), or ``inf``: its
    ``pure_epsilon`` (each pair's certified supremum of L, ``pld/pairs/base.py``;
    summed and rounded up). L ≤ ε P-almost surely, so no neighbouring pair
    the pair dominates exceeds it."""
    return pairs.pure_epsilon()


def _log_min_term(j, eps_inf):
    """log min{2, (e^{ε(∞)} − 1)^j} for an array of j (ε(∞) may be inf)."""
    if not np.isfinite(eps_inf):
        return np.full(np.shape(j), _LOG2)
    if eps_inf > 700:  # log(e^x − 1) = x + log(1 − e^{−x}) without overflow: here simply > log 2
        return np.full(np.shape(j), _LOG2)
    with np.errstate(divide="ignore"):
        return np.minimum(_LOG2, j * math.log(math.expm1(eps_inf)) if eps_inf > 0 else -np.inf)


def _integer_lambdas(gamma, base_rdp, orders, eps_inf):
    """λ(α) = (α−1)·(Thm 9 bound) for the integer orders ≥ 2 (array), rounded up."""
    top = int(orders.max())
    base = np.array([max(float(base_rdp(float(j))), 0.0) for j in range(2, top + 1)])
    lam = np.full(len(orders), np.inf)
    finite = np.array([np.all(np.isfinite(base[:n - 1])) for n in orders])
    if not finite.any():
        return lam
    fin = orders[finite]
    rows, j, starts = ragged(fin, 2)
    n = fin[rows].astype(float)
    lc, mc = log_binomial(n, j)
    e = base[j.astype(np.int64) - 2]
    y = (j - 1) * e
    with np.errstate(divide="ignore", invalid="ignore"):
        # j = 2: log min{4(e^{ε2} − 1), e^{ε2}·min{2, (e^{ε∞} − 1)²}}
        two = np.minimum(math.log(4.0) + e + np.log(-np.expm1(-e)), e + _log_min_term(2.0, eps_inf))
        lt = np.where(j == 2, two, y + _log_min_term(j, eps_inf))
    v = lc + j * math.log(gamma) + lt
    mag = mc + np.abs(j * math.log(gamma)) + y + 4
    le, err = segment_lse(v, mag, rows, starts)
    lam[finite] = np.logaddexp(0.0, le + err) * (1 + 8 * _U)
    return lam


def subset_rdp_bound(gamma, base_rdp, alpha, eps_inf=math.inf):
    """Upper bound on ε'(α) of the base run on a batch drawn without
    replacement (module docstring), for real α > 1 (vectorised); ``base_rdp``
    maps α to the base's ε(α), ``eps_inf`` is its pure-DP level. γ = 1 gives
    the base itself. Callers validate 0 < γ ≤ 1, α > 1."""
    gamma = float(gamma)
    a = np.asarray(alpha, dtype=float)
    flat = a.ravel()
    own = np.array([float(base_rdp(float(x))) for x in flat])
    if gamma == 1.0:
        out = own
    else:
        lo, hi = np.floor(flat), np.ceil(flat)
        orders = np.unique(np.concatenate((lo, hi, [2.0])))
        orders = orders[orders >= 2].astype(np.int64)
        lam = dict(zip(orders.tolist(), _integer_lambdas(gamma, base_rdp, orders, eps_inf).tolist()))
        lam[1] = 0.0
        lam_lo = np.array([lam[int(f)] for f in lo])
        lam_hi = np.array([lam[int(c)] for c in hi])
        frac = flat - lo
        with np.errstate(invalid="ignore"):  # inf·0 where the order is an integer
            inter = np.where(frac == 0, lam_lo, (1 - frac) * lam_lo + frac * lam_hi)
        # log1p(γ expm1(ε∞)): two calls of ≤ 4 ulp (the documented worst case assumed), the
        # product, and log1p passes its argument's relative error on: 16 ulp
        with np.errstate(over="ignore"):  # e^{ε(∞)} beyond the float range: no pure-DP bound (+∞)
            pure = np.log1p(gamma * np.expm1(eps_inf)) * (1 + 16 * _U) if np.isfinite(eps_inf) else np.inf
        out = np.minimum(np.minimum(inter / (flat - 1.0) * (1 + 4 * _U), own), pure)
    return float(out[0]) if a.ndim == 0 else out.reshape(a.shape)

