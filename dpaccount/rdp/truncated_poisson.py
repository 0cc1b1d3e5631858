"""Rényi-DP of truncated Poisson sampling of a Gaussian (``pld/pairs/truncated_poisson.py``).

The pair is a disjoint mixture over a public coin: Poisson sampling at rate q
of the base (weight 1 − w) and at rate η of its replace-one pair (weight w).
For a disjoint mixture E_Q[(P/Q)^α] is the weighted sum of the components'
(and the coin hides nothing, so that is the mechanism's bound by the joint
convexity of (P, Q) ↦ ∫P^α Q^{1−α}, α > 1):

    ε(α) = log((1 − w)e^{(α−1)ε_1(α)} + w e^{(α−1)ε_2(α)}) / (α − 1),

ε_1 the subsampled Gaussian's RDP at (q, σ), ε_2 at (η, σ_r), σ_r = 1/μ_r of the
replace-one pair N(μ_r, 1) vs N(0, 1) (σ/2 for a sensitivity doubled by the
displacement), both exact (Mironov, Talwar & Zhang 2019, ``rdp/poisson_sampling.py``:
the remove direction, which dominates the add one, and rounded up). Only for
a Gaussian base: a general subsampled RDP bound of the replace-one component
is not implemented. Rounding: each weight at its upper end (their sum may
exceed 1 by ~1e-11: only larger), the log-sum-exp padded by 16 ulp of its
terms' magnitudes.
"""
import numpy as np

from .poisson_sampling import subsampled_gaussian_rdp
from ..numerics import ULP_OF_ONE as _U



def truncated_gaussian_rdp(q, sigma, w_high, eta, sigma_replace, alpha):
    """ε(α) of the mixture above (alpha a real > 1 or an array); w_high and eta
    upper bounds on w and η."""
    a = np.asarray(alpha, dtype=float)
    one = (a - 1) * np.asarray(subsampled_gaussian_rdp(q, sigma, a), dtype=float)
    two = (a - 1) * np.asarray(subsampled_gaussian_rdp(eta, sigma_replace, a), dtype=float)
    with np.errstate(divide="ignore"):
        t1, t2 = np.log1p(-min(w_high, 1.0)) + one, np.log(w_high) + two
    s = np.logaddexp(t1, t2)
    out = (s + 16 * _U * (np.abs(t1) + np.abs(t2) + np.abs(s))) / (a - 1) * (1 + 4 * _U)
    out = np.maximum(out, 0.0)
    return float(out) if out.ndim == 0 else out
