"""Poisson subsampling of finite mechanisms against the exact subsampled laws.

For a finite mechanism with laws P (with the record) and Q (without), the
Poisson-subsampled mechanism outputs (1 − q)Q + qP with the record and Q
without, so its privacy profile is exactly

    δ(ε) = max( H_{e^ε}((1 − q)Q + qP ‖ Q),  H_{e^ε}(Q ‖ (1 − q)Q + qP) ),

the first the remove direction, the second the add direction, each a finite
sum Σ_i (a_i − e^ε b_i)_+ evaluated in mpmath. Asymmetric laws tell the two
directions apart, and a zero of Q puts mass q·P(Q = 0) at loss +∞ in the
remove direction only.
"""
import math

import mpmath as mp
import pytest
from oracles import discrete_delta

import dpaccount as dpa

LAWS = {
    # P, Q: asymmetric, Q = 0 on the first outcome (loss +∞), P = 0 on the last
    "asymmetric": ([0.45, 0.35, 0.2, 0.0], [0.0, 0.25, 0.35, 0.4]),
    "asymmetric-full-support": ([0.7, 0.2, 0.1], [0.2, 0.3, 0.5]),
}
EPS = [0.0, 0.05, 0.2, 0.5, 1.0, 2.0, 5.0]


def _exact(p_law, q_law, q):
    """ε ↦ exact δ(ε) of the subsampled mechanism, per direction and the max."""
    p_law = [mp.mpf(x) / mp.fsum(map(mp.mpf, p_law)) for x in p_law]
    q_law = [mp.mpf(x) / mp.fsum(map(mp.mpf, q_law)) for x in q_law]
    mix = [(1 - mp.mpf(q)) * b + mp.mpf(q) * a for a, b in zip(p_law, q_law)]
    remove = lambda e: discrete_delta(e, list(zip(mix, q_law)))
    add = lambda e: discrete_delta(e, list(zip(q_law, mix)))
    return remove, add


@pytest.mark.parametrize("law", sorted(LAWS))
@pytest.mark.parametrize("q", [0.05, 0.3])
def test_subsampled_finite_mechanism_against_the_exact_laws(law, q):
    p_law, q_law = LAWS[law]
    mech = dpa.PoissonSampling()(dpa.DiscreteMechanism(p_law, q_law), q)
    remove, add = _exact(p_law, q_law, q)
    directions_differ = False
    for eps in EPS:
        r, a = remove(eps), add(eps)
        exact = max(r, a)
        directions_differ |= abs(r - a) > 1e-3 * exact
        got = mech.get_approx_delta(eps)
        assert exact <= got <= exact * (1 + 1e-3) + 1e-15, (eps, float(r), float(a), got)
        b = mech.get_approx_delta_bounds(eps)
        assert b.lower <= exact <= b.upper, eps
    assert directions_differ  # the case tells the directions apart


@pytest.mark.parametrize("q", [0.05, 0.3])
def test_mass_at_infinity_of_the_remove_direction(q):
    """P(L = ∞) = q·P(Q = 0) = 0.45 q: no finite ε below it, the answer ≥ it at any ε;
    after two steps 1 − (1 − 0.45 q)² (the grid's route, not the closed form's)."""
    p_law, q_law = LAWS["asymmetric"]
    mech = dpa.PoissonSampling()(dpa.DiscreteMechanism(p_law, q_law), q)
    p_inf = 0.45 * q
    assert mech.get_approxDP(p_inf * 0.99) == math.inf
    assert mech.get_approx_delta(50.0) >= p_inf
    remove, add = _exact(p_law, q_law, q)
    eps = mech.get_approxDP(p_inf * 1.5)
    assert max(remove(eps), add(eps)) <= p_inf * 1.5
    twice = dpa.Composition()([mech], [2])
    p_inf2 = 1 - (1 - mp.mpf(p_inf)) ** 2
    assert twice.get_approxDP(float(p_inf2) * 0.99) == math.inf
    assert twice.get_approx_delta(50.0) >= p_inf2
    # the grids too (the queries above sum the atoms exactly, pld/profiles/exact_sum.py)
    for m, mass in ((mech, p_inf), (twice, p_inf2)):
        grids = m.privacy_profile()
        assert grids.epsilon(float(mass) * 0.99) == math.inf and grids.delta(50.0) >= mass
