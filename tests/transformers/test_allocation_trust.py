"""Issue 44: random allocation's certified lower ends and upper curves bound the mechanism.

Every reproducer of the issue against its exact value: finite bases by exact enumeration
over count vectors (``oracles.allocation_law``, mpmath at 50 digits), Gaussian bases by
mpmath quadrature (``test_random_allocation._gaussian_delta``). The lower law of an epoch
on a linear lattice is a call-side minorant (the remove direction) and a separate
put-side one (the add direction, the reversed pair), each cut where its hull reaches its
floor (``pld/allocation/minorant.py``).
"""
import math

import mpmath as mp
import pytest

from dpaccount import (AccuracyNotReached, Composition, DiscreteMechanism, GaussianMechanism, RandomAllocation,
                       RandomizedResponse)
from oracles import allocation_law, discrete_delta, mechanism_tradeoff, piecewise_linear, product_law
from transformers.test_random_allocation import _gaussian_delta


def _mp(laws):
    return [[mp.mpf(x.numerator) / x.denominator for x in law] for law in laws]


def _exact_delta(p, q, t, eps, epochs=1):
    """δ(ε) of ``epochs`` epochs of t steps of the finite pair (p, q) (its add pair the
    reverse): the larger direction, by enumeration."""
    big_p, big_q = allocation_law(p, q, t)
    if epochs > 1:
        big_p, big_q = product_law([(big_p, big_q)] * epochs)
    big_p, big_q = _mp((big_p, big_q))
    return max(discrete_delta(eps, list(zip(big_p, big_q))), discrete_delta(eps, list(zip(big_q, big_p))))


def _exact_epsilon(p, q, t, delta, epochs=1):
    """ε(δ) by bisection on the exact δ(ε) (to 1e-15)."""
    lo, hi = mp.mpf(0), mp.mpf(20)
    while hi - lo > 1e-15:
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if _exact_delta(p, q, t, mid, epochs) > delta else (lo, mid)
    return lo, hi


def test_total_variation_of_randomized_response_lower_end_below_exact():
    b = RandomAllocation()(RandomizedResponse(0.8), 4).get_approx_delta_bounds(0)
    exact = _exact_delta([0.8, 0.2], [0.2, 0.8], 4, 0)
    assert b.certified and b.lower <= exact <= b.upper, (b, exact)
    assert b.upper - b.lower <= 1e-3 * float(exact)


def test_epsilon_of_randomized_response_over_100_steps_brackets_exact():
    b = RandomAllocation()(RandomizedResponse(0.8), 100).get_approxDP_bounds(1e-3)
    lo, hi = _exact_epsilon([0.8, 0.2], [0.2, 0.8], 100, 1e-3)
    assert b.lower <= lo and hi <= b.upper, (b, lo)


def test_allocation_composed_with_a_gaussian_brackets_exact():
    """Two-outcome base over 3 steps, then a Gaussian of σ = 10 (μ = 0.1): δ(1) is, per
    count vector n of the epoch (ratio e^{l_n}), the Gaussian's hockey stick at ε − l_n,
    in closed form; used to raise 'certified lower bound above the upper bound'."""
    p, q, eps, mu = [0.6, 0.4], [0.3, 0.7], mp.mpf(1), mp.mpf("0.1")
    big_p, big_q = _mp(allocation_law(p, q, 3))

    def delta(a_law, b_law):
        total = mp.mpf(0)
        for a, b in zip(a_law, b_law):
            shift = eps - mp.log(a / b)
            total += a * mp.ncdf(mu / 2 - shift / mu) - mp.e ** eps * b * mp.ncdf(-mu / 2 - shift / mu)
        return total
    exact = max(delta(big_p, big_q), delta(big_q, big_p))
    m = Composition()([RandomAllocation()(DiscreteMechanism(p, q), 3), GaussianMechanism(10)], [1, 1])
    try:
        b = m.get_approx_delta_bounds(1.0)
    except AccuracyNotReached as err:  # numpy 1.23's logs plan a lattice 0.14 % wide: still certified
        b = err.bounds
    assert b.lower <= exact <= b.upper, (b, exact)


def test_delta_beyond_the_pure_epsilon_is_zero_both_ends():
    """Ratios 2.5, 6/7, 4/9: the pure ε is log 2.5 < 1.3, so δ(1.3) = 0 exactly."""
    p, q = [0.5, 0.3, 0.2], [0.2, 0.35, 0.45]
    assert _exact_delta(p, q, 3, 1.3) == 0
    m = RandomAllocation()(DiscreteMechanism(p, q), 3)
    b = m.get_approx_delta_bounds(1.3)
    assert (b.lower, b.upper) == (0.0, 0.0), b
    assert m.get_approx_delta(1.3) == 0.0


def test_composed_epochs_beyond_the_pure_epsilon_are_answered_zero():
    """Issue defect 9: two epochs of randomized response at 0.55 (pure ε 2·log(11/9) < 0.7)."""
    assert _exact_delta([0.55, 0.45], [0.45, 0.55], 4, 0.7, epochs=2) == 0
    b = Composition()([RandomAllocation()(RandomizedResponse(0.55), 4)], [2]).get_approx_delta_bounds(0.7)
    assert (b.lower, b.upper) == (0.0, 0.0), b


def test_certified_tradeoff_upper_curve_is_above_exact():
    """β(0.05) of two steps of randomized response at 0.8: the exact trade-off curve
    (Neyman–Pearson over the count vectors, Fractions) is 0.8."""
    big_p, big_q = allocation_law([0.8, 0.2], [0.2, 0.8], 2)
    exact = piecewise_linear(mechanism_tradeoff(big_p, big_q), 0.05)
    b = RandomAllocation()(RandomizedResponse(0.8), 2).get_fDP_bounds(0.05)
    assert b.certified and b.lower <= exact <= b.upper, (b, float(exact))


@pytest.mark.parametrize("eps", [0.0, 0.5, 1.0, 1.5, 2.0])
def test_two_epochs_of_randomized_response_answer_and_bracket(eps):
    """Used to refuse most queries (its lower law above the exact one)."""
    exact = _exact_delta([0.8, 0.2], [0.2, 0.8], 4, eps, epochs=2)
    b = Composition()([RandomAllocation()(RandomizedResponse(0.8), 4)], [2]).get_approx_delta_bounds(eps)
    assert b.lower <= exact <= b.upper, (eps, b, exact)


def test_far_tail_of_two_gaussian_steps_lower_end_below_exact():
    """σ = 3, δ(2) ≈ 3.4e-16: the add direction's lower pair overshot (issue defect 2)."""
    with mp.workdps(30):
        exact = max(_gaussian_delta(1 / 3, 2, 2.0, add) for add in (False, True))
    m = RandomAllocation()(GaussianMechanism(3), 2)
    for direction in ("remove", "add"):
        pair = getattr(m.pairs, direction)[0][0]
        with mp.workdps(30):
            own = _gaussian_delta(1 / 3, 2, 2.0, direction == "add")
        assert pair.delta(2.0, False) <= own <= pair.delta(2.0, True), (direction, own)
    from dpaccount.errors import AccuracyNotReached
    try:
        b = m.get_approx_delta_bounds(2.0)
    except AccuracyNotReached as refused:
        b = refused.bounds
    assert b.lower <= exact <= b.upper, (b, exact)


@pytest.mark.parametrize("sigma,steps", [(10, 2), (5, 3)])
def test_tiny_delta_lower_end_below_the_rdp_upper_bound(sigma, steps):
    """δ = 1e-20: the lower end at most a certified upper bound (RDP; exact at integer orders
    for the Gaussian), where it used to carry 7.62 (σ = 10) and 1.575 (σ = 5)."""
    from dpaccount.errors import AccuracyNotReached
    m = RandomAllocation()(GaussianMechanism(sigma), steps)
    try:
        b = m.get_approxDP_bounds(1e-20)
    except AccuracyNotReached as refused:
        b = refused.bounds
    assert b.lower <= m.get_approxDP(1e-20, method="rdp"), b


def test_laplace_beyond_the_float_range_answers_from_rdp_without_overflow():
    """Issue 44 defect 3 (an OverflowError in the RDP add bound). Laplace of b = 1e-3
    (ε₀ = 1000) over 50 steps: the exact ε(1e-5) is at least 1000 − log 50 − 1e-3, since
    the event "one step's output beyond 1" has P_t-mass ≥ ½(1 − ½e^{−1000})^{49} and
    Q^t-mass ≤ 25e^{−1000}, so δ(ε) ≥ ½ − 25e^{ε−1000} > 1e-5 below it."""
    import warnings
    from dpaccount import LaplaceMechanism
    from dpaccount.errors import RDPFallbackWarning
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RDPFallbackWarning)
        eps = RandomAllocation()(LaplaceMechanism(1e-3), 50).get_approxDP(1e-5)
    assert 1000 - math.log(50) - 1e-3 <= eps < math.inf


def test_tiny_delta_falls_back_to_rdp_with_the_warning_and_above_the_exact():
    """Issue 44 defect 8, stated (docs/batch_schemes.rst): below δ ≈ 1e-17 an epoch's pairs say
    +∞ (their tails cut there), and the default answer is RDP's, with RDPFallbackWarning:
    an upper bound (σ = 10, 2 steps, δ = 1e-18: exact ε ≈ 0.5836 by quadrature)."""
    from dpaccount.errors import RDPFallbackWarning
    m = RandomAllocation()(GaussianMechanism(10), 2)
    with pytest.warns(RDPFallbackWarning):
        got = m.get_approxDP(1e-18)
    with mp.workdps(40):
        at = mp.mpf(got)
        exact_at = max(_gaussian_delta(mp.mpf(1) / 10, 2, at, add) for add in (False, True))
        below = max(_gaussian_delta(mp.mpf(1) / 10, 2, at * 0.95, add) for add in (False, True))
    assert exact_at <= 1e-18 < below  # ours is above the exact ε, within 5 % of it
