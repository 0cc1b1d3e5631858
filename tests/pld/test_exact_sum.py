"""The exact sum over a composition's atoms (``pld/profiles/exact_sum.py``).

Oracles: mpmath loss laws (``zoo_exact_oracles.py``, nothing from dpaccount).
What the grids could not do and the sum must: δ(ε) just below the top of a
finite support (first order in any grid step), ε(δ) where δ is below the
top atom's mass by 1e-15; and what it must never do: answer where it does
not apply (too many atoms, two continuous pairs), or answer an array other
than element by element.
"""
import mpmath as mp
import numpy as np
import pytest
from zoo_exact_oracles import Loss, epsilon_of, leaky_rr_outcomes, rr_outcomes

import dpaccount as dpa
from dpaccount.pld.profiles import exact_sum

C = dpa.Composition()
USER_P, USER_Q = (0.5, 0.25, 0.125, 0.125), (0.125, 0.25, 0.25, 0.375)


def test_just_below_the_top_of_a_finite_support():
    """6 uses of a user pair: the top atom 12 log 2 has mass 2^-6; at 1e-6 below it δ ≈ 1.6e-8,
    where a grid of step h errs by ~h/1e-6 of δ. The sum is within its rounding: each loss
    is padded by τ ≈ 1e-13 (ulps of 6 logs of size ≤ 2), which moves δ by ~τ/gap ≤ 1e-7."""
    m = C([dpa.DiscreteMechanism(USER_P, USER_Q)], [6])
    rem, add = Loss.of_outcomes(USER_P, USER_Q) ** 6, Loss.of_outcomes(USER_Q, USER_P) ** 6
    top = 12 * mp.log(2)
    for gap in (1e-3, 1e-6):
        eps = float(top) - gap
        exact = max(rem.delta(eps), add.delta(eps))
        b = m.get_approx_delta_bounds(eps)
        assert b.lower <= exact <= b.upper == m.get_approx_delta(eps)
        assert b.upper <= exact * (1 + 1e-6)


def test_epsilon_at_the_top_atom_of_a_lattice():
    """10 uses of randomized response at δ = 1e-15: ε is 1.8e-14 below 10·log 3. The lattice
    grid's rounding sliver pushed it a whole step (0.96) up; the sum stays within 1e-12."""
    m = C([dpa.RandomizedResponse(0.75)], [10])
    law = Loss.of_outcomes(*rr_outcomes(0.75)) ** 10
    lo, hi = epsilon_of(law.delta, 1e-15)
    b = m.get_approxDP_bounds(1e-15)
    assert b.lower <= lo and hi <= b.upper == m.get_approxDP(1e-15) <= hi * (1 + 1e-12)


def test_delta_below_the_mass_at_infinity_is_infinite():
    m = C([dpa.ApproxDPMechanism(1.0, 1e-10)], [3])
    p_inf = 1 - (1 - mp.mpf(1e-10)) ** 3
    assert m.get_approxDP(float(p_inf) * 0.99) == np.inf
    b = m.get_approxDP_bounds(float(p_inf) * 0.99)
    assert b.lower == b.upper == np.inf
    law = Loss.of_outcomes(*leaky_rr_outcomes(1.0, 1e-10)) ** 3
    lo, hi = epsilon_of(law.delta, float(p_inf) * 1.01)
    assert lo <= m.get_approxDP(float(p_inf) * 1.01) <= hi * (1 + 1e-9)


def test_arrays_get_the_answers_of_their_elements():
    m = C([dpa.GaussianMechanism(2.0), dpa.PureDPMechanism(0.3)], [4, 5])
    deltas = np.array([1e-3, 1e-9, 1e-15])
    eps = np.array([0.5, 3.0, 8.0])
    assert np.array_equal(m.get_approxDP(deltas), [m.get_approxDP(d) for d in deltas])
    assert np.array_equal(m.get_approx_delta(eps), [m.get_approx_delta(e) for e in eps])


@pytest.mark.parametrize("mech", [
    C([dpa.GaussianMechanism(1.0), dpa.LaplaceMechanism(1.0)], [1, 1]),     # two kernels
    C([dpa.LaplaceMechanism(1.0)], [2]),                                    # a kernel used twice
    C([dpa.RandomizedResponse(0.7), dpa.DiscreteMechanism(USER_P, USER_Q)], [200, 200]),  # over budget
], ids=["gauss+laplace", "laplace x2", "too many atoms"])
def test_where_it_does_not_apply_the_grids_answer(mech):
    assert exact_sum.exact_profile(mech.pairs) is None
    assert mech.get_approxDP(1e-6) == mech.privacy_profile(1e-3).epsilon(1e-6)


def test_the_pads_are_what_keep_it_certified():
    """A lower and an upper curve that are one and the same would not be certified: the
    rounding pads separate them (by ~1e-11 relative), and both bracket the mpmath value."""
    m = C([dpa.PoissonSampling()(dpa.ApproxDPMechanism(1.0, 1e-12), 0.05)], [20])
    dirs = exact_sum.exact_profile(m.pairs)
    eps = np.array([0.0, 0.5, 1.5, 5.0])
    lower, upper = exact_sum.delta_bounds(dirs, eps)
    assert np.all(lower < upper) and np.all(upper - lower <= 1e-10 * upper)


def test_epsilon_at_the_jump_of_delta_to_the_mass_at_infinity():
    """(1, 0.1)- and (2, 0.2)-DP composed (issue 27 §3): δ(ε) falls to P(L = ∞) = 1 − 0.9·0.8
    at ε = 3, the largest finite loss. The float δ = 0.28 is 1.2e-17 above the exact P(L = ∞)
    of the float parameters, so ε(0.28) is 3 (up to 1e-16); the float below it is under
    P(L = ∞), so ε is infinite there. Floats (log1p, expm1: ulps of 0.28) cannot tell
    either; the exact composed P(L = ∞) rounded its way can. Oracle: exact enumeration."""
    m = C([dpa.ApproxDPMechanism(1, 0.1), dpa.ApproxDPMechanism(2, 0.2)], [1, 1])
    law = Loss.of_outcomes(*leaky_rr_outcomes(1, 0.1)) * Loss.of_outcomes(*leaky_rr_outcomes(2, 0.2))
    lo, hi = epsilon_of(law.delta, 0.28)
    assert law.p_inf < 0.28 and 3 - 1e-15 < lo <= hi <= 3
    b = m.get_approxDP_bounds(0.28)
    # the bounds: the top atom's loss known within τ ≈ 1e-14 (ulps of its logs), each way
    assert b.lower <= lo and hi <= b.upper == m.get_approxDP(0.28) <= hi + 1e-12
    below = float(np.nextafter(0.28, 0.0))
    assert law.p_inf > below and epsilon_of(law.delta, below)[0] == mp.inf
    assert m.get_approxDP(below) == np.inf
    assert m.get_approxDP_bounds(below)[:2] == (np.inf, np.inf)


def test_composed_mass_at_infinity_is_the_float_next_to_the_exact_value():
    """``composed_p_inf``: each end within one float of the exact 1 − Π(1 − p_∞,i)^{k_i}, on its
    side (exact rational arithmetic here), and said to be strictly so where it is."""
    from fractions import Fraction
    for ends in ([((0.1, 0.1), 1), ((0.2, 0.2), 1)], [((1e-10, 1e-10), 3)], [((0.3, 0.25), 7), ((1e-5, 0.0), 2)],
                 [((0.0, 0.0), 5)]):
        for upper, side in ((True, 0), (False, 1)):
            exact = 1 - np.prod([(1 - Fraction(e[side])) ** k for e, k in ends])
            value, strict = exact_sum.composed_p_inf(ends, upper)
            further = float(np.nextafter(value, -np.inf if upper else np.inf))
            if upper:
                assert Fraction(value) >= exact and (further < 0 or Fraction(further) <= exact)
            else:
                assert Fraction(value) <= exact <= Fraction(further)
            assert strict == (Fraction(value) != exact)
