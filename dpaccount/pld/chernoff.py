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

``log_mgf(items)`` shares one ``LogMGF`` per composition among the searches
that follow one another on it (a window, its tilt, the tilt lattice of
``step_profile.py``, thousands of saddle points on one composition): each
keeps the K(λ) it has computed, and the scan of every search starts at the
same λ.
"""
import math
import threading

import numpy as np
from scipy import optimize

from .cache import GridCache

_BLOCK = 1 << 18  # points × λ values per pass (2 MB per work array; one λ at least)
_SCAN = np.geomspace(1e-3, 1e3, 10)  # the first look of every λ search
# the last compositions' log-MGFs, keyed by their grids' identities (the grids held with them)
_RECENT = GridCache(limit=64 * 2 ** 20, size_of=lambda held: held[1].nbytes)


def log_mgf(items):
    """The ``LogMGF`` of [(grid, count), ...], shared with the last ones asked for."""
    items = tuple(items)
    return _RECENT.get(tuple((id(g), k) for g, k in items), lambda: (items, LogMGF(items)))[1]


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
        self._starts, self._sizes = np.cumsum(sizes) - sizes, sizes
        self._width = max(1, _BLOCK // max(len(self._x), 1))  # λ values per pass
        self._work = self._spare = None  # reused: no page faults per call
        self._memo = {}                  # λ → K(λ)
        self._lock = threading.Lock()    # shared (``log_mgf``): one evaluation at a time

    @property
    def nbytes(self):
        """Bytes it holds at most: the points, their logs and the two work arrays."""
        return 16 * len(self._x) + 16 * min(_BLOCK, len(self._x) * self._width)

    def _blocks(self, lam):
        """Per block of λ values: (λ, t, w) with t_i the largest exponent of grid i and
        w_j = p_j e^{λε_j − t_i} ∈ (0, 1] (one row per λ)."""
        lam = np.ravel(np.asarray(lam, dtype=float))
        if self._work is None:
            self._work = np.empty(len(self._x) * min(self._width, len(lam)))
            self._spare = np.empty_like(self._work)
        for start in range(0, len(lam), self._width):
            part = lam[start:start + self._width]
            if len(part) * len(self._x) > len(self._work):
                self._work, self._spare = np.empty(len(part) * len(self._x)), np.empty(len(part) * len(self._x))
            w = np.multiply(part[:, None], self._x, out=self._work[:len(part) * len(self._x)].reshape(len(part), -1))
            w += self._logp
            top = np.maximum.reduceat(w, self._starts, axis=1)
            w -= np.repeat(top, self._sizes, axis=1)
            yield part, top, np.exp(w, out=w)

    def __call__(self, lam):
        with self._lock:
            if np.ndim(lam) == 0:
                x = float(lam)
                if x not in self._memo:
                    if len(self._memo) > 4096:
                        self._memo.clear()
                    self._memo[x] = float(self._evaluate(np.array([x]), moments=False)[0][0])
                return self._memo[x]
            flat = np.ravel(np.asarray(lam, dtype=float))
            new = np.array([x for x in dict.fromkeys(flat.tolist()) if x not in self._memo])
            if len(new):
                if len(self._memo) > 4096:
                    self._memo.clear()
                self._memo.update(zip(new.tolist(), self._evaluate(new, moments=False)[0].tolist()))
            return np.array([self._memo[x] for x in flat.tolist()]).reshape(np.shape(lam))

    def moments(self, lam):
        """(K, K', K'') at λ, or arrays of them for an array of λ."""
        with self._lock:
            out = self._evaluate(lam, moments=True)
        return tuple(float(v[0]) for v in out) if np.ndim(lam) == 0 else tuple(v.reshape(np.shape(lam)) for v in out)

    def _evaluate(self, lam, moments):
        size = np.size(lam)
        if self._void or not len(self._k):
            return (np.full(size, -np.inf if self._void else 0.0),) + (np.zeros(size),) * 2 * moments
        cgf, mean, var = np.empty(size), np.empty(size), np.empty(size)
        done = 0
        for part, top, w in self._blocks(lam):
            at = slice(done, done + len(part))
            done += len(part)
            total = np.add.reduceat(w, self._starts, axis=1)
            cgf[at] = (top + np.log(total)) @ self._k
            if moments:
                wx = np.multiply(w, self._x, out=self._spare[:w.size].reshape(w.shape))
                first = np.add.reduceat(wx, self._starts, axis=1) / total
                second = np.add.reduceat(np.multiply(wx, self._x, out=wx), self._starts, axis=1) / total
                mean[at], var[at] = first @ self._k, np.maximum(second - first ** 2, 0.0) @ self._k
        return (cgf, mean, var) if moments else (cgf,)


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


_NEAR = np.array([0.8, 0.9, 1.0, 1.1, 1.25])


def minimise_near(f, rough=None, argmin=False):
    """``minimise_over_lambda`` of f, searched on ``rough`` first (the same
    function on the grids of a coarser step: cheap, and close where the
    steps' rounding is small): f is then tried near the λ found, and searched
    in full only where the best of those is at an end (the rough function
    misled: an optimistic grid that has lost its rare losses at the coarser
    step). Any λ is valid in a Chernoff bound: the search only tightens."""
    if rough is not None:
        near = minimise_over_lambda(rough, argmin=True) * _NEAR
        vals = np.asarray(f(near), dtype=float)
        i = int(np.argmin(vals))
        if 0 < i < len(near) - 1:
            return float(near[i]) if argmin else float(vals[i])
    return minimise_over_lambda(f, argmin=argmin)


def quantile(mgf, log_tail, sign, hint=None, tol=0.0):
    """(level, λ): P(sign·S ≥ level) ≤ e^{log_tail} at level = f(λ) = (K(sign·λ) − log_tail)/λ,
    minimised over λ > 0.

    With ``hint`` (the λ of the same search on coarser grids of the same pairs,
    which moves little): Newton's method on f from the hint, one pass per step
    giving K, K', K'' and so f, f' and f'' = K''/λ − 2f'/λ; each step moves λ
    by −f'/f'' (at most 25 %) and it stops where the predicted gain f'²/(2f'')
    is at most ``tol`` (or 1e-12 of f). Where f is not convex there, a step
    does not lower f, or eight steps do not settle, the full search."""
    def f(lam):
        return (mgf(sign * lam) - log_tail) / lam
    if hint is not None:
        lam, value = float(hint), math.inf
        for _ in range(8):
            k0, k1, k2 = mgf.moments(sign * lam)
            new = (k0 - log_tail) / lam
            if not new < value:
                break
            value = new
            slope = (sign * k1 - value) / lam
            curve = (k2 - 2.0 * slope) / lam
            if not curve > 0:
                break
            if slope * slope / (2.0 * curve) <= max(tol, 1e-12 * abs(value)):
                return value, lam
            lam -= float(np.clip(slope / curve, -0.25 * lam, 0.25 * lam))
    lam = minimise_over_lambda(f, argmin=True)
    return f(lam), lam


_DELTA_LAMBDAS = np.geomspace(1e-2, 1e3, 97)  # any λ > 0 is valid: the lattice only tightens
_U = np.finfo(float).eps
_TINY = np.nextafter(0.0, 1.0)


def delta_bound(items, eps):
    """A rigorous upper bound on δ(ε) (an array of ε ≥ 0) of the composition of
    [(pessimistic grid, count), ...], without composing it:

        δ(ε) = E[(1 − e^{ε−S})₊] ≤ P(S = ∞) + c(λ)·e^{K(λ) − λε}   for every λ > 0,

    c(λ) = max_{x>0} (1 − e^{−x})e^{−λx} = (λ/(λ+1))^λ/(λ+1) (the maximum is at
    e^{−x} = λ/(λ+1)), K the log-MGF of the finite parts; minimised over a λ
    lattice. The grids dominate their pairs, so their composition dominates the
    composed mechanism and this bounds its δ too (Zhu, Dong & Wang 2022, Thm 10).

    Rounding, erring up: each Λ_i = t_i + log Σ_j e^{log p_ij + λε_ij − t_i} is
    computed to within u(11A_i + n_i + 4 log n_i + 8), A_i = max|log p_ij| +
    λ·max|ε_ij| (log and exp ≤ 4 ulp of their size, a sum of n_i terms in
    (0, 1] (n_i − 1)u of itself); padded to u(16A_i + 2n_i + 16) each, and
    Σ k_i Λ_i (m terms) by m·u·Σ k_i(A_i + log n_i + 1); the rest (λε, log c,
    exp) by 8u of the terms and 16u of the result; P(S = ∞) = 1 − Π(1 − p_∞,i)^{k_i}
    rounded up as in ``compose``."""
    eps = np.asarray(eps, dtype=float)
    if not np.all(eps < np.inf):  # δ(∞) = P(S = ∞): the bound at the largest finite ε is above it
        return delta_bound(items, np.minimum(eps, 1e300))
    if any(g.p_inf >= 1.0 for g, _ in items):
        return np.ones(eps.shape)
    p_inf = min(1.0, -math.expm1(sum(k * math.log1p(-g.p_inf) for g, k in items)) * (1 + 16 * _U))
    lam = _DELTA_LAMBDAS
    with np.errstate(over="ignore"):
        cgf = np.asarray(log_mgf(items)(lam), dtype=float)
    pad = np.zeros(len(lam))
    for g, k in items:
        logp, x = g._live_log
        n = max(len(x), 1)
        size = (np.max(np.abs(logp), initial=0.0) + lam * np.max(np.abs(x), initial=0.0))
        pad += k * _U * (16 * size + 2 * n + 16 + len(items) * (size + math.log(n) + 1))
    log_c = -np.log1p(lam) - lam * np.log1p(1.0 / lam)
    terms = cgf[:, None] - lam[:, None] * eps.ravel()[None, :] + log_c[:, None]
    slack = pad[:, None] + 8 * _U * (np.abs(lam[:, None] * eps.ravel()[None, :]) + np.abs(log_c)[:, None] + 1)
    with np.errstate(invalid="ignore"):
        best = np.min(np.where(np.isfinite(cgf)[:, None], terms + slack, np.inf), axis=0)
    with np.errstate(over="ignore", under="ignore"):
        tail = np.exp(np.minimum(best, 0.0)) * (1 + 16 * _U)
    tail = np.where(best > -np.inf, np.maximum(tail, _TINY), 0.0)  # an underflow rounds up
    return np.minimum(tail + p_inf, 1.0).reshape(eps.shape)
