"""``MonotoneLossPair(P, Q)``: two continuous laws whose loss increases strictly
in the outcome x (a monotone likelihood ratio), given by their log distribution
functions (scipy.stats frozen laws, or the library's own); cells from
``log_cells`` with error bounds (``pld/pairs/base.py`` explains the protocol).
"""
import math

import numpy as np

from .base import DominatingPair
from .log_cells import log_cells
from ...numerics import ULP_OF_ONE as _U

# A law's logcdf and logsf (scipy.stats; scipy documents no bound) are taken to err by
# LOG_CDF_ULPS·u·(|log| + 1), besides their argument's rounding (``MonotoneLossPair._log_errors``).
# Measured here (scipy 1.17.1, 5,000 points over each law's 1e-300 quantiles, against
# mpmath, where the cells use them: F ≤ ½ for logcdf, 1 − F ≤ ½ for logsf): norm 2.2 (its
# log_ndtr, which ``log_cells`` takes as 16 ulp of |log Φ|), logistic 0.43, gumbel_r 0.62,
# gumbel_l 0.71, hypsecant 0.66, in these units. 64 leaves room for another platform's libm
# (≤ 4 ulp per call, a few calls per value) and for laws whose logcdf is scipy's generic
# log(cdf), which turns a cdf accurate to ~1e-14 relative (cephes' incomplete gamma and beta
# functions, documented to a few 1e-14) into as much absolute: 64u = 1.4e-14.
LOG_CDF_ULPS = 64
_TINY = 1e-300  # mass dropped from an infinite support is at most this (relative)


class _Reflected:
    """The law of −X for a distribution object X (for the reverse pair)."""

    def __init__(self, dist):
        self.dist = dist

    def logpdf(self, y):
        return self.dist.logpdf(-np.asarray(y))

    def logcdf(self, y):
        return self.dist.logsf(-np.asarray(y))

    def logsf(self, y):
        return self.dist.logcdf(-np.asarray(y))

    def ppf(self, u):
        return -self.dist.isf(u)

    def isf(self, u):
        return -self.dist.ppf(u)


def _location(dist, fallback):
    """|loc| of a scipy.stats frozen law (its methods compute at (x − loc)/scale), else ``fallback``."""
    if isinstance(dist, _Reflected):  # −X: its methods call X's at −y
        return _location(dist.dist, fallback)
    try:
        loc = float(dist.dist._parse_args(*dist.args, **dist.kwds)[1])
    except Exception:  # not a scipy frozen law (or scipy changed): the bracket's bound
        return fallback
    return abs(loc) if math.isfinite(loc) else fallback


def _dist_key(dist):
    if hasattr(dist, "key"):  # a law of the library's own (``mixture_gaussian.GaussianMixtureLaw``)
        return dist.key()
    if isinstance(dist, _Reflected):
        return ("reflected", _dist_key(dist.dist))
    inner = getattr(dist, "dist", None)
    if inner is not None and hasattr(dist, "args"):
        return (getattr(inner, "name", repr(inner)), tuple(dist.args), tuple(sorted(dist.kwds.items())))
    return ("object", id(dist))


def _law_parameters(dist):
    """The parameters of a frozen scipy law, as text (its scale first: the usual culprit)."""
    try:
        shapes, loc, scale = dist.dist._parse_args(*dist.args, **dist.kwds)
    except (AttributeError, TypeError, ValueError):
        return repr(dist)
    text = f"scale={scale!r}" + (" must be > 0" if not scale > 0 else "") + f", loc={loc!r}"
    return text + (f", shapes={tuple(shapes)!r}" if shapes else "")


class MonotoneLossPair(DominatingPair):
    """Two continuous laws P, Q on the real line, given as objects with
    ``logpdf``, ``logcdf``, ``logsf``, ``ppf``, ``isf`` (scipy.stats frozen
    continuous distributions), under the assumption — checked on a grid at
    construction — that ℓ(x) = log p(x) − log q(x) is *strictly increasing*
    (a monotone likelihood ratio: true for location shifts of a strictly
    log-concave density, e.g. Gaussian, logistic). P and Q must have the same
    support, with positive densities inside (no mass at L = ±∞).

    Then {L > e} = {x > x_e} with ℓ(x_e) = e, so every cell mass is a
    difference of cdf values. x_e is found by bisection on [x_lo, x_hi], the
    1e-300 quantiles of the two laws; the root kept is the lower end of the
    final bracket (and the support's bottom below ℓ(x_lo), x_hi above
    ℓ(x_hi)), so mass is only ever counted in a cell at or above its own:
    pessimistic, by at most the 1e-300 tails and ~1 ulp of x. Cells below
    the P-median difference the cdf, above it the sf (from their logs,
    each to a few ulps of itself); ``delta`` = P(x > x_ε) − e^ε Q(x > x_ε),
    which is stationary in x_ε, padded for its rounding (assuming the
    distribution functions are accurate to a few ulps).
    A loss that is constant on an interval (an atom, e.g. Laplace) is not
    supported: use the dedicated pair.
    """

    p_inf = 0.0
    tight = True  # the laws the user gives are the mechanism's outputs on neighbours (user_defined.py)

    def __init__(self, p_dist, q_dist):
        for name, d in (("p_dist", p_dist), ("q_dist", q_dist)):
            missing = [m for m in ("logpdf", "logcdf", "logsf", "ppf", "isf") if not hasattr(d, m)]
            if missing:
                raise TypeError(f"{name} must be a continuous distribution with {missing}, got {d!r}")
        self._p, self._q = p_dist, q_dist
        ends = [float(d.ppf(_TINY)) for d in (p_dist, q_dist)] + [float(d.isf(_TINY)) for d in (p_dist, q_dist)]
        for name, d, lo, hi in (("p_dist", p_dist, ends[0], ends[2]), ("q_dist", q_dist, ends[1], ends[3])):
            if math.isnan(lo) or math.isnan(hi):
                raise ValueError(f"{name} has invalid parameters ({_law_parameters(d)}): its quantiles are NaN")
        self._lo, self._hi = min(ends[:2]), max(ends[2:])
        if not (np.isfinite(self._lo) and np.isfinite(self._hi) and self._lo < self._hi):
            raise ValueError(f"p_dist, q_dist: cannot bracket their support, got [{self._lo}, {self._hi}]")
        probe = np.linspace(self._lo, self._hi, 513)
        loss = self._loss(probe)
        slack = 1e-12 * (1.0 + np.abs(loss[1:]))  # far out, a bounded loss is flat in floats
        if not np.all(np.isfinite(loss)) or np.any(np.diff(loss) < -slack) or loss[-1] <= loss[0]:
            raise ValueError(f"p_dist, q_dist: the loss log p(x)/q(x) must be finite and strictly increasing "
                             f"in x on [{self._lo:.4g}, {self._hi:.4g}]; got {p_dist!r}, {q_dist!r}")
        self._lmin, self._lmax = float(loss[0]), float(loss[-1])

    def _loss(self, x):
        return np.asarray(self._p.logpdf(x), dtype=float) - np.asarray(self._q.logpdf(x), dtype=float)

    def _root_guess(self, e):
        """Approximate roots of ℓ(x) = e (a subclass's Newton steps), or None: only ever
        a start, checked before use (``_roots``)."""
        return None

    def _roots(self, edges):
        """x_e ≤ the true root for each edge (−inf below ℓ(x_lo), x_hi above ℓ(x_hi)).
        Bisection of [x_lo, x_hi] to adjacent floats; where ``_root_guess`` gives x̂ with
        ℓ(x̂ − η) ≤ e < ℓ(x̂ + η) (η = 1e-12(1 + |x̂|), checked), from that bracket instead
        (the same invariant, ~13 halvings instead of ~60); edges outside [ℓ(x_lo), ℓ(x_hi))
        (answered without a root) and those already down to adjacent floats are left out."""
        e = np.asarray(edges, dtype=float)
        lo, hi = np.full(e.shape, self._lo), np.full(e.shape, self._hi)
        inside = ~((e < self._lmin) | (e >= self._lmax))  # (a NaN edge is bisected too)
        lo[~inside] = hi[~inside]  # no root sought: the answer below does not read it
        guess = self._root_guess(e[inside]) if inside.any() else None
        if guess is not None:
            pad = 1e-12 * (1.0 + np.abs(guess))
            a, b = np.maximum(guess - pad, self._lo), np.minimum(guess + pad, self._hi)
            with np.errstate(invalid="ignore"):
                ok = np.isfinite(guess) & (self._loss(a) <= e[inside]) & (self._loss(b) > e[inside])
            lo[inside] = np.where(ok, a, lo[inside])
            hi[inside] = np.where(ok, b, hi[inside])
        for _ in range(200):  # invariant: ℓ(lo) ≤ e < ℓ(hi) where bracketed
            mid = 0.5 * (lo + hi)
            idx = np.nonzero((mid != lo) & (mid != hi))[0]
            if not len(idx):
                break
            up = self._loss(mid[idx]) <= e[idx]
            lo[idx], hi[idx] = np.where(up, mid[idx], lo[idx]), np.where(up, hi[idx], mid[idx])
        return np.where(e < self._lmin, -np.inf, np.where(e >= self._lmax, self._hi, lo))

    def _cells(self, dist, xs, errors=False):
        """Masses of (−∞, x₀], (x₀, x₁], …, (x_last, ∞) under ``dist``: below its median
        from log F, above from log(1 − F) (``log_cells``); with ``errors``, also bounds on
        each cell's absolute error (``_log_errors``)."""
        x = np.concatenate(([-np.inf], xs, [np.inf]))
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            lc, ls = np.asarray(dist.logcdf(x), dtype=float), np.asarray(dist.logsf(x), dtype=float)
            below = lc[1:] <= ls[1:]  # the cell ends below the median: cdf side
            if not errors:
                out = np.where(below, log_cells(lc), log_cells(np.ascontiguousarray(ls[::-1]))[::-1])
                return np.nan_to_num(np.maximum(out, 0.0), nan=0.0)
            eta_c, eta_s = self._log_errors(dist, x, lc, ls)
            left, left_err, _ = log_cells(lc, eta_c)
            right, right_err, _ = log_cells(np.ascontiguousarray(ls[::-1]), np.ascontiguousarray(eta_s[::-1]))
            out = np.where(below, left, right[::-1])
            err = np.where(below, left_err, right_err[::-1])
        # a cell rounded below 0 is raised to 0, towards its exact value: its bound still holds
        return np.nan_to_num(np.maximum(out, 0.0), nan=0.0), np.nan_to_num(err, nan=0.0)

    def _log_errors(self, dist, x, lc, ls):
        """Bounds on the absolute errors of log F(x) and log(1 − F(x)) as ``dist``
        computes them (``LOG_CDF_ULPS``): ``LOG_CDF_ULPS``·u·(|log| + 1), and the
        argument's rounding through the slope of the log, f/F (f/(1 − F)): a scipy law
        standardises x as (x − loc)/scale, ≤ u·|x − loc| in x (two roundings), taken as
        2u(|x| + |loc|), the slope doubled for its change over that distance and its
        own rounding. loc is the law's own where scipy tells it (``_location``), else
        the largest end of the support's bracket [x_lo, x_hi] (the 1e-300 quantiles:
        a location inside the support lies within it)."""
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            lp = np.asarray(dist.logpdf(x), dtype=float)
            shift = 2 * _U * (np.abs(x) + _location(dist, max(abs(self._lo), abs(self._hi))))
            move = [np.where(np.isfinite(x) & np.isfinite(l), 2 * np.exp(lp - l) * shift, 0.0) for l in (lc, ls)]
        return [LOG_CDF_ULPS * _U * (np.abs(l) + 1) + m for l, m in zip((lc, ls), move)]

    def masses(self, edges):
        xs = self._roots(edges)
        return self._cells(self._p, xs), self._cells(self._q, xs)

    def _masses(self, edges, errors):
        if not errors:
            return self.masses(edges)
        xs = self._roots(edges)
        (a, err_a), (b, err_b) = self._cells(self._p, xs, True), self._cells(self._q, xs, True)
        return a, b, err_a, err_b

    def delta(self, eps, upper=True):
        eps = np.asarray(eps, dtype=float)
        x = self._roots(eps.ravel())
        with np.errstate(over="ignore", under="ignore"):
            ps, qs = np.exp(self._p.logsf(x)), np.exp(eps.ravel() + self._q.logsf(x))
        # above ℓ(x_hi) the root is beyond x_hi: δ ≤ P(x > x_hi), drop the Q term (errs up)
        beyond = eps.ravel() >= self._lmax
        out = np.where(beyond, ps, np.maximum(ps - qs, 0.0))
        pad = 64 * _U * (ps + np.where(beyond, 0.0, qs))  # the sf's few ulps and the subtraction
        with np.errstate(over="ignore"):  # e^ε overflows only for ε > 700, never below the least loss
            out = np.where(eps.ravel() < self._lmin, -np.expm1(eps.ravel()), out)
        out = np.minimum(out + pad if upper else np.maximum(out - pad, 0.0), 1.0).reshape(eps.shape)
        return float(out) if out.ndim == 0 else out

    def reverse(self):
        """(Q, P): its loss −ℓ(x) increases in y = −x, so reflect both laws."""
        return MonotoneLossPair(_Reflected(self._q), _Reflected(self._p))

    def key(self):
        return ("monotone", _dist_key(self._p), _dist_key(self._q))
