"""Random allocation on geometric lattices (``pld/allocation/geometric.py``)
against independent exact values.

Oracles (nothing here calls dpaccount's numerics): for a Gaussian base and two steps,
δ_remove(ε) = E[(S/2 − e^ε)_+] and δ_add(ε) = E[(1 − e^ε S/2)_+], S = Y_1 + Y_2,
Y = e^{μx − μ²/2}, x ~ N(0, 1): the second coordinate in closed form (a log-normal's
call and put), the first by mpmath quadrature with a breakpoint at every integer
(the heavy tail of a small σ sits far out: coarse breakpoints lose digits at ε = 8);
for randomized response the allocation's laws enumerated over all outcomes in rationals.
"""
import itertools
from fractions import Fraction

import mpmath as mp
import pytest

from dpaccount import Composition, GaussianMechanism, PoissonSampling, RandomAllocation
from dpaccount.pld.allocation.geometric import geometric_epoch_pairs
from dpaccount.pld.pairs.base import GaussianPair
from dpaccount.pld.pairs.discrete_pair import DiscretePair
from dpaccount.pld.allocation.epoch import allocation_pair
from dpaccount.precision import DEFAULT_RHO


def _two_step_delta(mu, eps, add):
    """(value, quadrature error estimate) of one direction's δ(ε) of two steps (20 digits)."""
    with mp.workdps(20):
        mu, alpha = mp.mpf(mu), mp.e ** mp.mpf(eps)

        def last(c):  # E over the second coordinate, c = Y_1/2
            k = (1 / alpha - c) if add else (alpha - c)
            if k <= 0:
                return mp.mpf(0) if add else 1 / mp.mpf(2) - k
            z = (mp.log(2 * k) + mu ** 2 / 2) / mu
            if add:  # α·E[(k − Y/2)_+]
                return alpha * (k * mp.ncdf(z) - mp.ncdf(z - mu) / 2)
            return mp.ncdf(mu - z) / 2 - k * mp.ncdf(-z)

        kink = (mp.log(2 / alpha if add else 2 * alpha) + mu ** 2 / 2) / mu  # where Y_1/2 = e^{∓ε}
        points = [-mp.inf] + sorted(set(range(-14, 19)) | {kink}) + [mp.inf]
        value, err = mp.quad(lambda x: mp.npdf(x) * last(mp.e ** (mu * x - mu ** 2 / 2) / 2), points, error=True)
        return value, err


@pytest.mark.parametrize("sigma", [0.5, pytest.param(0.8, marks=pytest.mark.slow)])
def test_two_steps_of_a_small_sigma_against_mpmath(sigma):
    """Both directions bracketed from ε = 0.5 to 8 (δ from 0.5 down to 1e-18): no add-direction
    floor at +∞ (the linear lattice's Q(Y' = 0)² was ~1e-6 at σ = 0.8), intervals within 0.5 %."""
    pair = allocation_pair(GaussianPair(1 / sigma), 2, DEFAULT_RHO)
    assert "geometric" in pair.upper._name  # the linear lattice loosens here
    for eps in (0.5, 5.0, 8.0):
        for add in (False, True):
            exact, err = _two_step_delta(1 / sigma, eps, add)
            upper, lower = (pair.upper.reverse(), pair.lower.reverse()) if add else (pair.upper, pair.lower)
            hi, lo = upper.delta(eps), lower.delta(eps, False)
            assert lo <= exact - err and exact + err <= hi, (sigma, eps, add, lo, exact, hi)
            assert hi - lo <= 5e-3 * float(exact), (sigma, eps, add, lo, exact, hi)


def _rr_laws(p, t):
    """[(P_alloc, Q^t)] over the outcomes of t steps of randomized response (exact rationals)."""
    P, Q = {1: p, 0: 1 - p}, {1: 1 - p, 0: p}
    out = []
    for x in itertools.product((0, 1), repeat=t):
        q = Fraction(1)
        for xi in x:
            q *= Q[xi]
        pa = sum((q / Q[x[i]] * P[x[i]] for i in range(t)), Fraction(0)) / t
        out.append((pa, q))
    return out


@pytest.mark.parametrize("t", [3, 5])
def test_a_finite_pair_against_exact_enumeration(t):
    """Atoms of Y on the lattice's cells: the upper law spreads them, the lower keeps them (a
    cell's mean is its atom), in both directions."""
    p = Fraction(3, 4)
    base = DiscretePair([mp.log(0.75), mp.log(0.25)], [mp.log(0.25), mp.log(0.75)])
    upper, lower = geometric_epoch_pairs(base, t)
    laws = _rr_laws(p, t)
    for eps in (0.0, 0.2, 0.6, 1.0):
        alpha = mp.e ** mp.mpf(eps)
        for rev in (False, True):
            exact = sum(max((mp.mpf(b.numerator) / b.denominator if rev else mp.mpf(a.numerator) / a.denominator)
                            - alpha * (mp.mpf(a.numerator) / a.denominator if rev else mp.mpf(b.numerator) / b.denominator),
                            0) for a, b in laws)
            hi = (upper.reverse() if rev else upper).delta(eps)
            lo = (lower.reverse() if rev else lower).delta(eps, False)
            assert lo <= exact <= hi, (t, eps, rev, lo, exact, hi)


@pytest.mark.parametrize("sigma,steps", [(0.5, 3), pytest.param(0.6, 30, marks=pytest.mark.slow)])
def test_small_sigma_never_above_poisson_at_the_same_rate(sigma, steps):
    g = GaussianMechanism(sigma=sigma)
    alloc = RandomAllocation()(g, steps)
    poisson = Composition()([PoissonSampling()(g, 1 / steps)], [steps])
    assert alloc.get_approxDP(1e-5) <= poisson.get_approxDP_bounds(1e-5).lower


def test_a_small_sigma_epoch_and_its_composition_are_narrow_intervals():
    """σ = 0.5 over two steps: a finite, certified ε (the linear lattice gave +∞), within 1e-3
    alone and composed over ten epochs, and ε grows with the epochs."""
    one = RandomAllocation()(GaussianMechanism(sigma=0.5), 2)
    single = one.get_approxDP_bounds(1e-5)
    ten = Composition()([one], [10]).get_approxDP_bounds(1e-5)
    for b in (single, ten):
        assert 0 < b.lower <= b.upper <= b.lower * (1 + 1e-3), b
    assert ten.lower > single.upper


def _three_step_delta(mu, eps, add):
    """(value, error bound) of one direction's δ(ε) of three steps: the third coordinate in
    closed form, the other two by scipy's adaptive quadrature (breakpoints at the integers and
    at the kink), the outer error estimate plus 28 × the largest density-weighted inner one;
    |x| > 14 left out (< 1e-40)."""
    import math

    from scipy import integrate, special
    alpha = math.exp(eps)

    def last(c):  # E over the third coordinate, c = (Y_1 + Y_2)/3
        k = (1 / alpha - c) if add else (alpha - c)
        if k <= 0:
            return 0.0 if add else 1 / 3 - k
        z = (math.log(3 * k) + mu * mu / 2) / mu
        if add:
            return alpha * (k * special.ndtr(z) - special.ndtr(z - mu) / 3)
        return special.ndtr(mu - z) / 3 - k * special.ndtr(-z)

    def y(x):
        return math.exp(mu * x - mu * mu / 2)

    def points(y_other):  # where (y_other + Y)/3 = e^{∓ε}
        level = 3 / alpha if add else 3 * alpha
        grid = set(range(-13, 14))
        if level > y_other:
            grid.add((math.log(level - y_other) + mu * mu / 2) / mu)
        return sorted(x for x in grid if -14 < x < 14)

    inner_err = [0.0]

    def middle(x1):
        value, err = integrate.quad(lambda x2: math.exp(-x2 * x2 / 2) / math.sqrt(2 * math.pi)
                                    * last((y(x1) + y(x2)) / 3), -14, 14, points=points(y(x1)),
                                    epsabs=1e-15, epsrel=1e-11, limit=400)
        density = math.exp(-x1 * x1 / 2) / math.sqrt(2 * math.pi)
        inner_err[0] = max(inner_err[0], density * err)
        return density * value

    value, err = integrate.quad(middle, -14, 14, points=points(0.0), epsabs=1e-15, epsrel=1e-11, limit=400)
    return value, err + 28 * inner_err[0]  # ∫ density·err over (−14, 14) ≤ 28·max


@pytest.mark.slow
@pytest.mark.parametrize("sigma", [0.5, 0.8])
def test_three_steps_of_a_small_sigma_against_quadrature(sigma):
    """Both directions bracketed at ε = 0.5, 3 and 6 (the quadrature's error bound widens the
    comparison)."""
    pair = allocation_pair(GaussianPair(1 / sigma), 3, DEFAULT_RHO)
    for eps in (0.5, 3.0, 6.0):
        for add in (False, True):
            exact, err = _three_step_delta(1 / sigma, eps, add)
            upper, lower = (pair.upper.reverse(), pair.lower.reverse()) if add else (pair.upper, pair.lower)
            hi, lo = upper.delta(eps), lower.delta(eps, False)
            assert lo <= exact + err and exact - err <= hi, (sigma, eps, add, lo, exact, err, hi)
            assert hi - lo <= 5e-3 * exact + 2 * err, (sigma, eps, add, lo, exact, hi)
