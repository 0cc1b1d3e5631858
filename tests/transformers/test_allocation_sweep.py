"""A randomized sweep of random allocation against exact values (issue 44; slow suite).

Finite bases (2 or 3 outcomes, likelihood ratios on the power-of-two lattice of the
epoch's Y and off it): every certified δ(ε) and ε(δ) interval of one or two epochs
holds the exact value of the count-vector enumeration (``oracles.allocation_law``,
mpmath), and every certified f-DP upper curve is at least the exact trade-off (Fractions).
Gaussian bases: over 2 steps the exact δ(ε) by mpmath quadrature down to 1e-30, per
direction and for the mechanism; over 2–12 steps the lower end of ε(δ) (δ down to 1e-30)
is at most the RDP bound (exact Rényi divergences at integer orders for the Gaussian,
Feldman & Shenfeld 2025, Cor. 6.2: a certified upper bound), and each pair's lower δ at
most its upper δ. A refused query (``AccuracyNotReached``) is checked on the interval it
carries. The seed is fixed: a failure names its case.
"""
import math
import random
from fractions import Fraction

import mpmath as mp
import pytest

from dpaccount import Composition, DiscreteMechanism, GaussianMechanism, RandomAllocation
from dpaccount.errors import AccuracyNotReached
from oracles import allocation_law, discrete_delta, mechanism_tradeoff, piecewise_linear, product_law
from transformers.test_random_allocation import _gaussian_delta

pytestmark = pytest.mark.slow
_SLACK = 1e-12  # relative: the base's float masses renormalised by the library (exactly rounded sums)


def _bounds(query, *args):
    try:
        return query(*args)
    except AccuracyNotReached as refused:
        assert refused.bounds is not None
        return refused.bounds


def _finite_cases(count=10, seed=44):
    """(p, q) with ratios y = p/q: dyadic ones (on the lattice: 1/4, 1/2, 2, 4, 3/2…) or
    random ones, Q-masses solving Σ q = 1, Σ q·y = 1."""
    rng = random.Random(seed)
    cases = []
    while len(cases) < count:
        on = len(cases) % 2 == 0
        high = rng.choice([2.0, 4.0, 1.5, 3.0]) if on else rng.uniform(1.2, 5.0)
        low = rng.choice([0.25, 0.5, 0.75]) if on else rng.uniform(0.1, 0.9)
        if rng.random() < 0.5:  # two outcomes: q_high (high − low) = 1 − low
            q_high = (1 - low) / (high - low)
            ys, qs = [high, low], [q_high, 1 - q_high]
        else:                   # a middle ratio with a random share
            mid = rng.choice([1.0, 1.25]) if on else rng.uniform(low, high)
            q_mid = rng.uniform(0.1, 0.4)
            q_high = (1 - q_mid * mid - (1 - q_mid) * low) / (high - low)
            ys, qs = [high, mid, low], [q_high, q_mid, 1 - q_mid - q_high]
        if min(qs) <= 0:
            continue
        cases.append(([q * y for q, y in zip(qs, ys)], qs))
    return cases


def _normalised(v):
    v = [Fraction(x) for x in v]
    return [x / sum(v) for x in v]


def _mp_laws(big_p, big_q):
    return [[mp.mpf(x.numerator) / x.denominator for x in law] for law in (big_p, big_q)]


@pytest.mark.parametrize("case", range(10))
def test_finite_bases_bracket_the_exact_values(case):
    p, q = _finite_cases()[case]
    steps, epochs = (2, 3, 5, 4)[case % 4], 1 + case % 2
    exact_p, exact_q = allocation_law(_normalised(p), _normalised(q), steps)
    if epochs > 1:
        exact_p, exact_q = product_law([(exact_p, exact_q)] * epochs)
    big_p, big_q = _mp_laws(exact_p, exact_q)

    def delta(eps):
        return max(discrete_delta(eps, list(zip(big_p, big_q))), discrete_delta(eps, list(zip(big_q, big_p))))
    m = Composition()([RandomAllocation()(DiscreteMechanism(p, q), steps)], [epochs])
    for eps in (0.0, 0.3, 0.9):
        b = _bounds(m.get_approx_delta_bounds, eps)
        exact = delta(eps)
        assert b.lower <= exact * (1 + _SLACK) and exact * (1 - _SLACK) <= b.upper, (case, eps, b, exact)
    target = delta(0.3) / 2
    if target > 1e-12:
        b = _bounds(m.get_approxDP_bounds, float(target))
        assert delta(b.upper * (1 + 1e-9)) <= target * (1 + _SLACK), (case, "eps upper", b)
        assert b.lower == 0 or delta(b.lower * (1 - 1e-9)) >= target * (1 - _SLACK), (case, "eps lower", b)
    curve = mechanism_tradeoff(exact_p, exact_q)
    for alpha in (0.05, 0.3):
        b = _bounds(m.get_fDP_bounds, alpha)
        exact = float(piecewise_linear(curve, alpha))
        assert b.upper >= exact * (1 - _SLACK) and b.lower <= exact * (1 + _SLACK), (case, alpha, b, exact)


@pytest.mark.parametrize("sigma", [0.9, 2.0, 3.0, 6.0])
def test_two_gaussian_steps_bracket_the_quadrature_down_to_1e30(sigma):
    m = RandomAllocation()(GaussianMechanism(sigma), 2)
    with mp.workdps(40):
        for eps in (0.5, 1.5, 3.0):
            parts = [_gaussian_delta(1 / sigma, 2, eps, add) for add in (False, True)]
            for direction, own in zip(("remove", "add"), parts):
                pair = getattr(m.pairs, direction)[0][0]
                assert pair.delta(eps, False) <= own * (1 + 1e-9) and own * (1 - 1e-9) <= pair.delta(eps, True), \
                    (sigma, eps, direction, own)
            exact = max(parts)
            if exact < 1e-30:
                continue
            b = _bounds(m.get_approx_delta_bounds, eps)
            assert b.lower <= exact * (1 + 1e-9) and exact * (1 - 1e-9) <= b.upper, (sigma, eps, b, exact)


@pytest.mark.parametrize("sigma,steps", [(0.8, 3), (1.5, 5), (3.0, 8), (5.0, 12), (10.0, 4)])
def test_gaussian_lower_ends_below_the_rdp_bound_down_to_1e30(sigma, steps):
    m = RandomAllocation()(GaussianMechanism(sigma), steps)
    for delta in (1e-6, 1e-15, 1e-30):
        b = _bounds(m.get_approxDP_bounds, delta)
        rdp = m.get_approxDP(delta, method="rdp")
        assert b.lower <= rdp and b.lower <= b.upper, (sigma, steps, delta, b, rdp)
    for direction in ("remove", "add"):
        pair = getattr(m.pairs, direction)[0][0]
        for eps in (0.1, 1.0, 4.0):
            assert pair.delta(eps, False) <= pair.delta(eps, True), (sigma, steps, direction, eps)
