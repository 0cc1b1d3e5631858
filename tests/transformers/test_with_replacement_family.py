"""Sampling with replacement of a Gaussian sum: no member of the collinear family dominates.

The instances (``pld/pairs/with_replacement.py``, "No tight pair"): one-dimensional
records summed, replace-one sensitivity W = μσ, x valued +W/2, its replacement y −W/2
and every other record (1/2 − t)W, t ∈ [0, 1] (any two values within W: clipped
gradients on a line). With K ~ Bin(b, 1/n) copies of the index drawn and b − K draws of
the others, the outputs, shifted by the others' b(1/2 − t)W and scaled by σ, are

    P_t = Σ_k P(K = k) N(ktμ, 1),   Q_t = Σ_k P(K = k) N(−k(1 − t)μ, 1).

t = 1 is the lower end's witness (``copies_witness``), t = 1/2 the two mixtures shifted in
opposite directions. Their δ(ε), the larger of the two orders, is computed exactly (mpmath:
the loss increases in the outcome, so each order's δ is a difference of mixture tails at
the root of loss = ±ε). Neither end is above the whole family, and inner members exceed
both ends: no pair of this form may replace the upper end. The library's upper end lies
above every member; its lower end (t = 1, weights rounded down) below.
"""
import mpmath as mp
import numpy as np
import pytest

from dpaccount import REPLACE_ONE, GaussianMechanism, SamplingWithReplacement


def _weights(n, b):
    r = mp.mpf(1) / n
    return [mp.binomial(b, k) * r ** k * (1 - r) ** (b - k) for k in range(b + 1)]


def family_delta(eps, t, mu, n, b):
    """max(δ(P_t ‖ Q_t), δ(Q_t ‖ P_t)) at ε, exactly (module docstring)."""
    with mp.workdps(30):
        w, a = _weights(n, b), mp.e ** mp.mpf(eps)
        t = mp.mpf(t)
        cp = [k * t * mu for k in range(b + 1)]
        cq = [-k * (1 - t) * mu for k in range(b + 1)]

        def tail(c, x, upper):
            return mp.fsum(wk * mp.ncdf((ck - x) if upper else (x - ck)) for wk, ck in zip(w, c))

        def loss(x):
            return (mp.log(mp.fsum(wk * mp.npdf(x - ck) for wk, ck in zip(w, cp)))
                    - mp.log(mp.fsum(wk * mp.npdf(x - ck) for wk, ck in zip(w, cq))))

        def root(level):  # loss increases in x (P's centres ≥ 0 ≥ Q's)
            lo, hi = mp.mpf(-50), mp.mpf(50)
            for _ in range(110):
                mid = (lo + hi) / 2
                lo, hi = (lo, mid) if loss(mid) > level else (mid, hi)
            return (lo + hi) / 2

        x1, x2 = root(mp.mpf(eps)), root(-mp.mpf(eps))
        forward = tail(cp, x1, True) - a * tail(cq, x1, True)
        backward = tail(cq, x2, False) - a * tail(cp, x2, False)
        return float(max(forward, backward))


def test_neither_end_of_the_family_is_above_the_other():
    """n = 20, b = 5, μ = 1: at ε = 0 the two opposite mixtures (t = 1/2) exceed the
    one-space instance (t = 1) in either order, so that instance's pair, symmetrised, is
    no upper bound; at ε = 0.6 the one-space instance is ten times the opposite one's."""
    n, b, mu = 20, 5, 1.0
    assert family_delta(0.0, 0.5, mu, n, b) > family_delta(0.0, 1.0, mu, n, b) * 1.01
    assert family_delta(0.6, 1.0, mu, n, b) > family_delta(0.6, 0.5, mu, n, b) * 10


@pytest.mark.parametrize("eps,inner", [(0.6, 0.8), (2.0, 0.9)])
def test_an_inner_member_exceeds_both_ends(eps, inner):
    """n = 3, b = 5, μ = 2: others at (1/2 − t)W with t strictly between 1/2 and 1 give
    more than both ends, so the worst case is no end of the family."""
    n, b, mu = 3, 5, 2.0
    ends = max(family_delta(eps, 1.0, mu, n, b), family_delta(eps, 0.5, mu, n, b))
    assert family_delta(eps, inner, mu, n, b) > ends * 1.01


@pytest.mark.parametrize("n,b,mu", [(20, 5, 1.0), (3, 5, 2.0)])
def test_the_certified_interval_holds_the_family(n, b, mu):
    """Every member (t and 1 − t are mirror images: t ≥ 1/2 suffices) lies below the
    upper end, and the lower end (the t = 1 instance, weights rounded down) below t = 1."""
    eps = [0.0, 0.6, 2.0]
    mech = SamplingWithReplacement()(GaussianMechanism(sigma=1 / mu, relation=REPLACE_ONE), n, b)
    bounds = mech.get_approx_delta_bounds(eps, method="pld", accuracy=1e-3)
    for t in (0.5, 0.8, 0.9, 1.0):
        member = np.array([family_delta(e, t, mu, n, b) for e in eps])
        assert np.all(member <= bounds.upper), (t, member, bounds.upper)
        if t == 1.0:
            assert np.all(bounds.lower <= member * (1 + 1e-9)), (member, bounds.lower)
