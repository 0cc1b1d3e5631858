"""Chernoff bounds on a composition of grids: its log-MGF and the λ searches.

For items [(grid_i, k_i)] (independent losses, grid i taken k_i times) the
composed loss S has the log moment-generating function

    K(λ) = Σ_i k_i Λ_i(λ),   Λ_i(λ) = log Σ_j p_ij e^{λ ε_ij}   (finite part),

and for every λ > 0 (Chernoff)

    P(S ≥ b) ≤ exp(K(λ) − λb),   P(S ≤ a) ≤ exp(K(−λ) + λa).

Any λ gives a valid bound: the searches below only tighten it (a λ off the
optimum widens a window, it never makes it wrong). ``LogMGF`` holds every
grid's points in one array, so K(λ) costs a few array passes however many
distinct grids there are (a heterogeneous composition has hundreds, each a
few hundred points on a coarse grid, where per-grid calls cost more than the
arithmetic). Each Λ_i is computed as t_i + log Σ_j e^{log p_ij + λε_ij − t_i}
with t_i the largest exponent (no overflow); K is exact up to a few ulps of
Σ k_i |Λ_i|, which moves a tail bound by that much of itself.
"""
import math

import numpy as np
from scipy import optimize


class LogMGF:
    """λ ↦ K(λ) = Σ_i k_i Λ_i(λ) of [(grid, count), ...] (a number or an array of λ);
    ``moments`` adds K' and K'' (the mean and variance of the tilted composition).
    A grid without finite mass makes K = −∞."""

    def __init__(self, items):
        parts = [(g._live_log, k) for g, k in items]
        live = [(logs, k) for logs, k in parts if len(logs[1])]
        self._void = len(live) < len(parts)
        sizes = np.array([len(x) for (_, x), _ in live], dtype=np.int64)
        self._k = np.array([k for _, k in live], dtype=float)
        self._logp = np.concatenate([lp for (lp, _), _ in live]) if live else np.zeros(0)
        self._x = np.concatenate([x for (_, x), _ in live]) if live else np.zeros(0)
        self._starts = np.cumsum(sizes) - sizes
        self._segment = np.repeat(np.arange(len(sizes)), sizes)
        self._work, self._spare = np.empty(len(self._x)), np.empty(len(self._x))  # reused: no page faults per call

    def _weights(self, lam):
        """(t, w): per grid the largest exponent t_i, and w_j = p_j e^{λε_j − t_i} ∈ (0, 1]."""
        w = np.multiply(self._x, lam, out=self._work)
        w += self._logp
        top = np.maximum.reduceat(w, self._starts)
        w -= np.take(top, self._segment, out=self._spare)
        return top, np.exp(w, out=w)

    def __call__(self, lam):
        if np.ndim(lam):
            return np.array([self(x) for x in np.ravel(lam)]).reshape(np.shape(lam))
        if self._void or not len(self._k):
            return -math.inf if self._void else 0.0
        top, w = self._weights(lam)
        return float(self._k @ (top + np.log(np.add.reduceat(w, self._starts))))

    def moments(self, lam):
        """(K, K', K'') at λ, or arrays of them for an array of λ."""
        if np.ndim(lam):
            return tuple(np.array(v) for v in zip(*(self.moments(x) for x in np.ravel(lam))))
        if self._void or not len(self._k):
            return (-math.inf if self._void else 0.0), 0.0, 0.0
        top, w = self._weights(lam)
        total = np.add.reduceat(w, self._starts)
        wx = np.multiply(w, self._x, out=self._spare)
        first = np.add.reduceat(wx, self._starts) / total
        second = np.add.reduceat(np.multiply(wx, self._x, out=wx), self._starts) / total
        return (float(self._k @ (top + np.log(total))), float(self._k @ first),
                float(self._k @ np.maximum(second - first ** 2, 0.0)))


def minimise_over_lambda(f, argmin=False):
    """min over λ ∈ [1e-3, 1e3] of f (or the λ attaining it): a log-spaced scan
    (f takes the array of λ), then Brent on the bracket around the best point."""
    grid = np.geomspace(1e-3, 1e3, 10)
    vals = np.asarray(f(grid), dtype=float)
    i = int(np.argmin(vals))
    lo, hi = grid[max(i - 1, 0)], grid[min(i + 1, len(grid) - 1)]
    res = optimize.minimize_scalar(f, bounds=(lo, hi), method="bounded", options={"xatol": 2e-2 * lo})
    if argmin:
        return float(res.x) if res.fun < vals[i] else float(grid[i])
    return min(float(vals[i]), float(res.fun))


def quantile(mgf, log_tail, sign, hint=None, tol=0.0):
    """(level, λ): P(sign·S ≥ level) ≤ e^{log_tail} at level = f(λ) = (K(sign·λ) − log_tail)/λ,
    minimised over λ > 0.

    With ``hint`` (the λ of the same search on coarser grids of the same pairs,
    which moves little) one pass gives K, K', K'' there, hence f, f' and
    f'' = K''/λ − 2f'/λ: a Newton step λ → λ − f'/f'' is taken (one more
    evaluation) only where its predicted gain f'²/(2f'') exceeds ``tol``;
    where it would move λ by more than 25 % (the optimum moved) or f is not
    convex there, the full search."""
    def f(lam):
        return (mgf(sign * lam) - log_tail) / lam
    if hint is not None:
        lam = float(hint)
        k0, k1, k2 = mgf.moments(sign * lam)
        value = (k0 - log_tail) / lam
        slope = (sign * k1 - value) / lam
        curve = (k2 - 2.0 * slope) / lam
        if curve > 0 and abs(slope / curve) <= 0.25 * lam:
            if slope * slope / (2.0 * curve) <= tol:
                return value, lam
            new = lam - slope / curve
            better = f(new)
            return (better, new) if better < value else (value, lam)
    lam = minimise_over_lambda(f, argmin=True)
    return f(lam), lam
