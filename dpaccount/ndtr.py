"""log Φ(x), the standard normal law's log distribution function, in numpy alone.

The Gaussian cells of every default PLD grid need log Φ at tens of thousands
of points (``pld/pairs/log_cells.py``); scipy.special's ``log_ndtr`` would cost
a first query ~0.2 s of scipy's import. Here, with t = −x:

* 0 ≤ t < 16: log Φ(−t) = P(t) − t²/2, where P(t) = log(Φ(−t)·e^{t²/2}), a
  smooth function (log of √(2π)·φ's Mills ratio, Gordon 1941; from −0.69 at 0
  to −3.7 at 16), is a polynomial of degree 15 on each of 12 pieces
  (``ndtr_table.py``): the Chebyshev interpolant of mpmath's values (40
  digits), written in u = t − c about the piece's midpoint and rounded to
  doubles (``tests/ndtr_fit.py``). The polynomials are Chebyshev-interpolation
  approximations in the sense of W. J. Cody, "Rational Chebyshev approximations
  for the error function", Math. Comp. 23 (1969) 631-637, on P instead of erfc
  (no exp and no log at run time: P is fitted in log space).
* t ≥ 16: log Φ(−t) = −t²/2 − log t − ½log(2π) + log1p(g), g = Σ_{k=1}^{10}
  (−1)^k (2k − 1)!! t^{−2k}, the asymptotic series of the Mills ratio, whose
  remainder is smaller than the first omitted term and of its sign (Abramowitz &
  Stegun 7.1.24): below 21!!·16^{−22} < 5e-17 absolute in the log.
* x > 0: log Φ(x) = log1p(−Φ(−x)), Φ(−x) = exp(log Φ(−x)).

Error (u = ``ULP_OF_ONE`` = 2^−52), for x ≤ 0 (every argument of a default
query): within 4u·|log Φ(x)|, on any IEEE machine. The table's polynomials
(coefficients rounded) are within 0.38u·|log Φ| of P (mpmath at 2,001 points a
piece, ``tests/test_ndtr.py``); Horner's rule in float64 adds ≤ 1.6u·|P| (the
a-priori bound, ``ndtr_fit.horner_bound``, ≤ 3.19·2^−53 on the first piece,
≤ 1.75·2^−53 on the others), t − c ≤ 2^−53·½ times |P'| ≤ 0.8 (first piece
only: the others subtract exactly), t·t and the final difference ½u of t²/2
and of the result (|P| and t²/2 are both ≤ |log Φ|, same sign): ≤ 3.3u in all.
Only +, −, × run on this branch, each correctly rounded by IEEE 754, so the
bound is the same on every platform. The tail branch adds libm's log (≤ 4 ulp
of log t, < 0.1u of |log Φ| ≥ 131): ≤ 2u. Measured against mpmath at 120,000
points over [−2·10^5, 0] (``tests/test_ndtr.py``): ≤ 1.52u. For x > 0 (not on
the default path) the result, ≈ −Φ(−x), is within (4|log Φ(−x)| + 9)u of itself
(exp and log1p ≤ 4 ulp each, as docs/portability.md assumes of libm).

Beyond x < −1.3e154, t² overflows and log Φ is −inf (Φ < e^{−10^{308}}).
"""
import numpy as np

from .ndtr_table import COEFFS, PIECES

_CENTRES = np.array([(lo + hi) / 2 for lo, hi in PIECES])
_TABLE = np.array(COEFFS).T.copy()          # _TABLE[k]: the coefficient of u^k on every piece
_SPLIT = PIECES[-1][1]                       # 16: the tail's series from here
_WIDE = 8.0                                  # pieces of width 1 below, 2 above
_HALF_LOG_2PI = 0.9189385332046728          # ½log(2π), rounded to nearest
# (2k − 1)!!, k = 1 … 10, with the sign (−1)^k: exact integers in float64
_SERIES = np.array([(-1.0) ** k * float(np.prod(np.arange(1, 2 * k, 2))) for k in range(1, 11)])


def log_ndtr(x) -> np.ndarray:
    """log Φ(x) elementwise (a float64 array, or a numpy scalar for a scalar ``x``),
    Φ the standard normal distribution function: within 4u·|log Φ(x)| for x ≤ 0
    (module docstring); log Φ(−∞) = −∞, log Φ(+∞) = 0, NaN stays NaN."""
    x = np.asarray(x, dtype=float)
    flat = x.ravel()
    out = np.full(flat.shape, np.nan)
    t = -flat
    body = np.flatnonzero((t >= 0.0) & (t < _SPLIT))
    out[body] = _body(t[body])
    tail = np.flatnonzero(t >= _SPLIT)
    out[tail] = _tail(t[tail])
    upper = np.flatnonzero(t < 0.0)
    if len(upper):
        with np.errstate(divide="ignore"):
            out[upper] = np.log1p(-np.exp(log_ndtr(t[upper])))
    return out.reshape(x.shape)[()]


def _body(t):
    """P(t) − t²/2 for 0 ≤ t < 16, P a polynomial per piece."""
    piece = np.where(t < _WIDE, np.floor(t), _WIDE + np.floor((t - _WIDE) / 2)).astype(np.intp)
    u = t - _CENTRES[piece]
    p = _TABLE[-1][piece]
    for row in _TABLE[-2::-1]:
        p *= u
        p += row[piece]
    return p - 0.5 * (t * t)


def _tail(t):
    """−t²/2 − log t − ½log 2π + log1p(g) for t ≥ 16 (g the Mills ratio's series, Horner in 1/t²)."""
    with np.errstate(over="ignore", invalid="ignore"):
        s = 1.0 / (t * t)
        g = np.full(t.shape, _SERIES[-1])
        for c in _SERIES[-2::-1]:
            g *= s
            g += c
        g *= s
        out = np.log1p(g) - (np.log(t) + _HALF_LOG_2PI) - 0.5 * (t * t)
    out[np.isinf(t)] = -np.inf
    return out
