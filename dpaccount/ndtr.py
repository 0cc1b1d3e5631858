"""log Φ(x), the standard normal law's log distribution function, in numpy alone.

The Gaussian cells of every default PLD grid need log Φ at thousands of points
(``pld/pairs/log_cells.py``); scipy.special's ``log_ndtr`` would cost a first
query ~0.2 s of scipy's import. Here, with t = −x:

* 0 ≤ t < 16: log Φ(−t) is a polynomial of degree 8 in y = 4t − (i + ½) on
  each quarter [i/4, (i + 1)/4) (``ndtr_table.py``): the Chebyshev interpolant
  of mpmath's values (40 digits), its coefficients rounded to doubles
  (``tests/ndtr_fit.py``). log Φ(−t) + t²/2 is the log of a Mills ratio (Gordon
  1941), smooth and slowly varying, so degree 8 reaches double precision on a
  quarter; the approach is W. J. Cody's ("Rational Chebyshev approximations for
  the error function", Math. Comp. 23 (1969) 631-637) with the log taken before
  the fit, so that no exp or log runs on this branch.
* t ≥ 16: log Φ(−t) = −t²/2 − log t − ½log(2π) + log1p(g), g = Σ_{k=1}^{10}
  (−1)^k (2k − 1)!! t^{−2k}, the asymptotic series of the Mills ratio, whose
  remainder is smaller than the first omitted term and of its sign (Abramowitz &
  Stegun 7.1.24): below 21!!·16^{−22} < 5e-17 absolute in the log.
* x > 0: log Φ(x) = log1p(−Φ(−x)), Φ(−x) = exp(log Φ(−x)).

Error (u = ``ULP_OF_ONE`` = 2^−52), for x ≤ 0 (every argument of a default
query): within 4u·|log Φ(x)|, on any IEEE machine. On the polynomial branch the
table (coefficients rounded) is within 0.4u·|log Φ| of it (mpmath at 401 points a
piece, ``tests/test_ndtr.py``); Horner's rule in float64 adds ≤ 0.85u (the a-priori
bound ``ndtr_fit.horner_bound``: ≤ 1.7·2^−53 of the piece's least |log Φ|); y is
exact (4t, its fractional part, and that minus ½ on the grid of 4t's ulps) but for
t < 1/16, where it errs by ≤ 2^−55 and moves the result by ≤ 2^−55·0.25
(|d log Φ/dy| ≤ 0.25 there, |log Φ| ≥ 0.69): ≤ 1.3u in all. Only +, −, × run on
this branch, each correctly rounded by IEEE 754, so the bound holds on every
platform. The tail branch: t²/2 and the three sums ½u of |log Φ| each (the terms
share its sign), the series and log1p ≪ u, libm's log ≤ 4 ulp of log t
(< 0.1u of |log Φ| ≥ 131): ≤ 2u. Measured against mpmath at 120,000 points
over [−2·10^5, 0] (``tests/test_ndtr.py``): ≤ 0.971u (``MEASURED``). For x > 0 (not on
the default path) the result, ≈ −Φ(−x), is within (4|log Φ(−x)| + 9)u of itself
(exp and log1p ≤ 4 ulp each, as docs/portability.md assumes of libm).

From x ≈ −1.9e154 on, t²/2 and log Φ are beyond the floats: −inf.
"""
import numpy as np

from .ndtr_table import COEFFS, PER_UNIT

MEASURED = 0.971  # the worst error measured, × u·|log Φ| (120,000 points, tests/test_ndtr.py)
_TABLE = np.array(COEFFS).T[::-1].copy()     # _TABLE[k, i]: piece i's coefficient of y^{8−k}
_SPLIT = len(COEFFS) / PER_UNIT               # 16: the tail's series from here
_BELOW = np.nextafter(_SPLIT, 0.0)
_HALF_LOG_2PI = 0.9189385332046728           # ½log(2π), rounded to nearest
# (−1)^k (2k − 1)!!, k = 10 … 1 (Horner's order): exact integers in float64
_SERIES = tuple((-1.0) ** k * float(np.prod(np.arange(1, 2 * k, 2))) for k in range(10, 0, -1))


def log_ndtr(x) -> np.ndarray:
    """log Φ(x) elementwise (a float64 array, or a numpy scalar for a scalar ``x``),
    Φ the standard normal distribution function: within 4u·|log Φ(x)| for x ≤ 0
    (module docstring); log Φ(−∞) = −∞, log Φ(+∞) = 0, NaN stays NaN."""
    x = np.asarray(x, dtype=float)
    t = -x.ravel()
    if t.size and t.min() >= 0.0:           # x ≤ 0 and no NaN: the grids' calls
        return _nonnegative(t).reshape(x.shape)[()]
    out = np.full(t.shape, np.nan)
    at = np.flatnonzero(t >= 0.0)
    out[at] = _nonnegative(t[at])
    at = np.flatnonzero(t < 0.0)
    with np.errstate(divide="ignore"):
        out[at] = np.log1p(-np.exp(_nonnegative(-t[at])))
    return out.reshape(x.shape)[()]


def _nonnegative(t):
    """log Φ(−t) for t ≥ 0 (a new array)."""
    out = _polynomial(np.minimum(t, _BELOW))
    far = np.flatnonzero(t >= _SPLIT)
    if len(far):
        v = t[far]
        out[far] = -np.inf if v.min() == np.inf else _tail(v)
    return out


def _polynomial(t):
    """log Φ(−t) for 0 ≤ t < 16: piece ⌊4t⌋'s polynomial at y = 4t − (⌊4t⌋ + ½), by Horner."""
    s = t * float(PER_UNIT)
    whole = np.floor(s)
    y = s - whole                           # exact: s's fractional part
    y -= 0.5
    c = _TABLE.take(whole.astype(np.intp), axis=1)   # row k: each point's coefficient of y^{8−k}
    p = c[0] * y
    for row in c[1:-1]:
        p += row
        p *= y
    p += c[-1]
    return p


def _tail(t):
    """−t²/2 − log t − ½log 2π + log1p(g) for t ≥ 16 (g the Mills ratio's series in 1/t²);
    −∞ at t = ∞ (t²/2 = ∞, g = 0) and from t ≈ 1.9e154 on (t²/2 beyond the floats)."""
    with np.errstate(over="ignore"):
        half_sq = (0.5 * t) * t
    s = 0.5 / half_sq
    g = np.full(t.shape, _SERIES[0])
    for c in _SERIES[1:]:
        g *= s
        g += c
    g *= s
    return np.log1p(g) - (np.log(t) + _HALF_LOG_2PI) - half_sq
