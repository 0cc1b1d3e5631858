"""RDP curves of the discrete / user-defined mechanism zoo.

* ``logistic_rdp(eps)`` — D_α of ``LogisticPair(eps)``: under P, e^{L/2} is
  uniform on (e^{−ε/2}, e^{ε/2}), so E_P[e^{(α−1)L}] has a closed form and

      ε(α) = 1/(α−1) · log( sinh((2α−1)ε/2) / ((2α−1) sinh(ε/2)) ).

  The pair dominates every ε-bounded-range mechanism (``pld/pairs_zoo.py``) and
  Rényi divergence cannot grow under post-processing, so this is an RDP
  bound for all of them (e.g. the exponential mechanism); it is below the
  randomized-response curve of ε-DP.
* ``max_rdp(f, g)`` — α ↦ max(f(α), g(α)): one curve valid for both
  neighbouring directions of an asymmetric mechanism.
"""
import math

import numpy as np

from .curve import RDPFunction


def _log_sinh(y):
    """log sinh(y) for y > 0, without overflow: y + log(1 − e^{−2y}) − log 2."""
    return y + np.log(-np.expm1(-2.0 * y)) - math.log(2.0)


def logistic_rdp(eps):
    """RDP of the logistic pair (Logistic(ε, 1), Logistic(0, 1))."""
    e = float(eps)
    if e < 1e-100:  # sinh(ε/2) leaves the float range; ε-BR is ε-DP, and ε-DP gives D_α ≤ ε for all α
        return RDPFunction(("logistic", e), lambda alpha: np.full(np.shape(alpha), e))

    def fn(alpha):
        a = np.asarray(alpha, dtype=float)
        m = 2.0 * a - 1.0
        return (_log_sinh(m * e / 2) - _log_sinh(np.asarray(e / 2)) - np.log(m)) / (a - 1.0)
    return RDPFunction(("logistic", e), fn)


def max_rdp(f, g):
    """The pointwise maximum of two RDP functions (both directions at once)."""
    if f == g:
        return f
    return RDPFunction(("max", f, g), lambda alpha: np.maximum(f(alpha), g(alpha)))
