"""RDP curves of the discrete / user-defined mechanism zoo.

* ``bounded_range_rdp(eps)`` — the least RDP bound of every ε-BR mechanism
  (Cesar & Rogers 2021, "Bounding, Concentrating, and Truncating", ALT; Dong,
  Durfee & Rogers 2020). A pair whose loss lies in [t − ε, t] has
  E_Q[X] = 1 for X = e^L ∈ [e^{t−ε}, e^t], and x ↦ x^α is convex, so
  E_Q[X^α] is largest when X sits at the two ends: the worst pair has two
  outcomes, Q-mass s on the loss t, with e^{−t} = s + (1 − s)e^{−ε}. Then

      (α−1)·D_α = f(s) = log(s + (1 − s)e^{−αε}) − α log(s + (1 − s)e^{−ε}),

  f(0) = f(1) = 0, f > 0 between, and f′ has one zero,

      s* = ((1 − e^{−αε})e^{−ε} − α(1 − e^{−ε})e^{−αε}) / ((α−1)(1 − e^{−ε})(1 − e^{−αε})),

  so ε(α) = f(s*)/(α−1), attained (an exponential mechanism on two
  outcomes realises every t). As α → 1 it is Cesar & Rogers' KL bound
  ε/(e^ε − 1) − 1 + log((e^ε − 1)/ε). It is below the RDP of the logistic
  pair of ``pld/pairs/zoo.py`` (33% at α → 1, ε = 1: that pair dominates
  every ε-BR pair's hockey-stick curve but is not itself ε-BR, its loss
  spans 2ε) and below their zCDP bound αε²/8.
  Rounded up (``_br_excess``): f at the computed s* with a bound on its
  rounding, plus the second-order loss of an s off the maximum; the least
  of it, αε²/8 (Cesar & Rogers' ε²/8-zCDP) and ε is reported.
* ``max_rdp(f, g)`` — α ↦ max(f(α), g(α)): one curve valid for both
  neighbouring directions of an asymmetric mechanism.
"""
import math

import numpy as np

from .curve import RDPFunction
from ..numerics import ULP_OF_ONE as _U


def max_rdp(f, g):
    """The pointwise maximum of two RDP functions (both directions at once)."""
    if f == g:
        return f
    return RDPFunction(("max", f, g), lambda alpha: np.maximum(f(alpha), g(alpha)))




def _br_excess(alpha, eps):
    """(α−1)·ε(α) of ε-BR (module docstring), rounded up, elementwise in α > 1;
    NaN where it is not computed (e^{−ε} below the normal range)."""
    a_ = np.asarray(alpha, dtype=float)
    beta = a_ - 1.0
    with np.errstate(all="ignore"):
        a, ma = math.exp(-eps), -math.expm1(-eps)           # e^{−ε}, 1 − e^{−ε}
        b, mb = np.exp(-a_ * eps), -np.expm1(-a_ * eps)      # e^{−αε}, 1 − e^{−αε}
        amb = a * -np.expm1(-beta * eps)                     # e^{−ε} − e^{−αε}, no cancellation
        n1, n2 = amb, beta * b * ma                          # s* numerator = n1 − n2 (they cancel)
        s = np.clip((n1 - n2) / (beta * ma * mb), 0.0, 1.0)
        c = 1.0 - s                                          # within u of itself (exact for s ≥ ½)
        x, y = a + s * ma, b + s * mb                        # x = e^{−t}, y = s + (1 − s)e^{−αε}
        # log x and log y: near 1 as log1p(−c(1 − e^{−ε})), else directly (|log| ≥ log 2 there);
        # either way within ~13 ulp of themselves
        log_x = np.where(c * ma <= 0.5, np.log1p(-np.minimum(c * ma, 0.5)), np.log(x))
        log_y = np.where(c * mb <= 0.5, np.log1p(-np.minimum(c * mb, 0.5)), np.log(y))
        z = c * amb / x                                      # 1 − y/x, within ~8 ulp
        near = z <= 0.5
        t1 = np.where(near, np.log1p(-np.minimum(z, 0.5)), log_y - log_x)   # log(y/x)
        t2 = -beta * log_x
        f = t1 + t2
        # rounding: log1p(−z) (z ≤ ½) doubles z's relative error at most, log y − log x errs
        # by ~13 ulp of |log y| + |log x|; the sum t1 + t2 by ulps of both (they cancel for
        # small ε): padded to 64u of every magnitude involved
        err = 64 * _U * (np.abs(t1) + np.abs(t2) + np.where(near, 0.0, np.abs(log_y) + np.abs(log_x)))
        # the computed s is off s* by d ≤ r·s (n1 − n2 cancels: r from the magnitudes);
        # f(s*) − f(s) ≤ 1.5·max|f″|·d² on [s − d, s + d] (f′(s*) = 0), with
        # |f″| ≤ α(1 − e^{−ε})²/x² + (1 − e^{−αε})²/y², x and y taken at s − d ≥ 0
        r = 32 * _U * (np.abs(n1) + np.abs(n2)) / np.abs(n1 - n2) + 32 * _U
        d = r * s
        lo = np.maximum(s - d, 0.0)
        gap = 1.5 * (a_ * (ma * d / (a + lo * ma)) ** 2 + (mb * d / (b + lo * mb)) ** 2)
        out = (f + err + gap) * (1 + 4 * _U)
    ok = np.isfinite(out) & (a > np.finfo(float).tiny) & (r < 1e-3)
    return np.where(ok, np.maximum(out, 0.0), np.nan)


def bounded_range_rdp(eps):
    """The tight RDP of ε-bounded-range mechanisms (module docstring), rounded up:
    the least of the exact two-outcome maximum, αε²/8 and ε."""
    e = float(eps)

    def fn(alpha):
        a = np.asarray(alpha, dtype=float)
        exact = _br_excess(a, e) / (a - 1.0) * (1 + 2 * _U)
        return np.fmin(np.fmin(exact, a * e * e / 8 * (1 + 4 * _U)), e)
    return RDPFunction(("bounded-range", e), fn)
