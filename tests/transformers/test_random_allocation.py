"""RandomAllocation against independent exact values.

Oracles (nothing here calls dpaccount's numerics): the allocation pair
enumerated over all outcomes for randomized response (exact rationals), and
for the Gaussian an mpmath integral over t − 1 coordinates of the last
coordinate's closed-form call/put (a log-normal's, Black–Scholes style).
"""
import itertools
import math
import pickle
import warnings
from fractions import Fraction

import mpmath as mp
import pytest

import dpaccount as dpa
from dpaccount import (Composition, GaussianMechanism, LaplaceMechanism, PoissonSampling, RandomAllocation,
                       RandomizedResponse, from_spec)


def _alloc_laws(p, t, selected=1):
    """{outcome: (P_alloc, Q^t)} of randomized response (P = (p, 1−p), Q = (1−p, p) on {1, 0}),
    each record in ``selected`` of t steps: P_alloc averages over the C(t, k) subsets."""
    P = {1: p, 0: 1 - p}
    Q = {1: 1 - p, 0: p}
    subsets = list(itertools.combinations(range(t), selected))
    out = {}
    for x in itertools.product((0, 1), repeat=t):
        q = Fraction(1)
        for xi in x:
            q *= Q[xi]
        pa = Fraction(0)
        for sub in subsets:
            term = Fraction(1)
            for i, xi in enumerate(x):
                term *= P[xi] if i in sub else Q[xi]
            pa += term
        out[x] = (pa / len(subsets), q)
    return out


def _exact_delta(laws, eps, epochs=1):
    """max over both directions of Σ (P − e^ε Q)_+ of the ``epochs``-fold product (mpmath)."""
    alpha = mp.e ** mp.mpf(eps)
    atoms = list(laws.values())
    best = mp.mpf(0)
    for swap in (False, True):
        total = mp.mpf(0)
        for combo in itertools.product(atoms, repeat=epochs):
            a, b = mp.mpf(1), mp.mpf(1)
            for pa, q in combo:
                a *= mp.mpf(pa.numerator) / pa.denominator
                b *= mp.mpf(q.numerator) / q.denominator
            if swap:
                a, b = b, a
            total += max(a - alpha * b, 0)
        best = max(best, total)
    return best


@pytest.mark.parametrize("t", [2, 3, 5])
def test_randomized_response_against_exact_enumeration(t):
    p = Fraction(3, 4)
    m = RandomAllocation()(RandomizedResponse(p=0.75), t)
    laws = _alloc_laws(p, t)
    for eps in (0.0, 0.1, 0.3, 0.7):
        exact = _exact_delta(laws, eps)
        b = m.get_approx_delta_bounds(eps, accuracy=0.5)
        assert b.lower <= exact <= b.upper, (t, eps, b, exact)
        assert b.upper - b.lower <= 1e-3 * float(exact) + 1e-12


def test_two_epochs_compose_against_exact_enumeration():
    p = Fraction(2, 3)
    m = Composition()([RandomAllocation()(RandomizedResponse(p=2 / 3), 3)], [2])
    laws = _alloc_laws(p, 3)
    for eps in (0.05, 0.4):
        exact = _exact_delta(laws, eps, epochs=2)
        b = m.get_approx_delta_bounds(eps, accuracy=0.05)
        assert b.lower <= exact <= b.upper, (eps, b, exact)


def test_selected_above_one_is_an_upper_bound_of_the_exact_allocation():
    """k of t dominated by k allocations of one of ⌊t/k⌋, ⌈t/k⌉ (the floor/ceil reduction)."""
    p = Fraction(3, 4)
    for t, k in ((4, 2), (5, 2)):
        m = RandomAllocation()(RandomizedResponse(p=0.75), t, selected=k)
        laws = _alloc_laws(p, t, k)
        for eps in (0.1, 0.5):
            assert m.get_approx_delta(eps) >= _exact_delta(laws, eps)


def _gaussian_delta(mu, t, eps, add):
    """δ_remove(ε) = E[(S/t − e^ε)_+] or δ_add(ε) = E[(1 − e^ε S/t)_+], S = Σ e^{μx_i − μ²/2},
    x_i ~ N(0, 1): t − 1 coordinates integrated (mpmath), the last in closed form."""
    mu, alpha = mp.mpf(mu), mp.e ** mp.mpf(eps)

    def last(c):  # E over the last coordinate, c = (Y_1 + … + Y_{t−1})/t
        if add:  # α·E[(k − Y/t)_+], k = 1/α − c
            k = 1 / alpha - c
            if k <= 0:
                return mp.mpf(0)
            z = (mp.log(t * k) + mu ** 2 / 2) / mu
            return alpha * (k * mp.ncdf(z) - mp.ncdf(z - mu) / t)
        k = alpha - c  # E[(Y/t − k)_+]
        if k <= 0:
            return 1 / mp.mpf(t) - k
        z = (mp.log(t * k) + mu ** 2 / 2) / mu
        return mp.ncdf(mu - z) / t - k * mp.ncdf(-z)

    def y(x):
        return mp.e ** (mu * x - mu ** 2 / 2)

    def dens(x):
        return mp.npdf(x)

    if t == 2:
        # the integrand's kink (where the last coordinate's term starts) and a ladder of
        # points, so that far tails (δ ~ 1e-40, carried near x ~ −10) are resolved
        kink = (mp.log(2 / alpha if add else 2 * alpha) + mu ** 2 / 2) / mu
        points = sorted({-mp.inf, mp.inf, kink, *(mp.mpf(x) for x in (-40, -30, -20, -15, -12, -10, -8, -6, -4,
                                                                     -2, 0, 2, 4, 6, 8, 10, 12, 15, 20, 30, 40))})
        return mp.quad(lambda x: dens(x) * last(y(x) / 2), points)
    # t = 3: the outer two coordinates by scipy's adaptive quadrature (mpmath's 2-D quadrature
    # takes minutes), its error bound returned with the value
    from scipy import integrate

    def f(b, a):
        return float(dens(a) * dens(b) * last((y(a) + y(b)) / 3))
    value, err = integrate.dblquad(f, -12, 12, -12, 12, epsabs=1e-13, epsrel=1e-10)
    return mp.mpf(value), err


@pytest.mark.parametrize("sigma,t", [(1.0, 2), (0.7, 2)])
def test_gaussian_against_mpmath_integration(sigma, t):
    with mp.workdps(20):
        m = RandomAllocation()(GaussianMechanism(sigma=sigma), t)
        for eps in (0.2, 0.8):
            exact = max(_gaussian_delta(1 / sigma, t, eps, False), _gaussian_delta(1 / sigma, t, eps, True))
            b = m.get_approx_delta_bounds(eps, accuracy=0.5)
            # the integral is accurate to far below the interval's width (1e-20 asked)
            assert b.lower <= exact <= b.upper, (sigma, t, eps, b, exact)
            assert b.upper - b.lower <= 1e-3 * float(exact)


@pytest.mark.slow
def test_gaussian_over_three_steps_against_quadrature():
    """Three steps: the last coordinate in closed form, two by scipy's dblquad (its error
    bound, ~1e-12, and the |x| > 12 it leaves out, < 1e-32, widen the comparison)."""
    m = RandomAllocation()(GaussianMechanism(sigma=1.5), 3)
    with mp.workdps(15):
        for eps in (0.2, 0.6):
            rem, add = (_gaussian_delta(1 / 1.5, 3, eps, a) for a in (False, True))
            exact, err = max(rem, add, key=lambda x: x[0])
            b = m.get_approx_delta_bounds(eps, accuracy=0.5)
            assert b.lower - err - 1e-30 <= exact <= b.upper + err + 1e-30, (eps, b, exact, err)
            assert b.upper - b.lower <= 1e-3 * float(exact)


@pytest.mark.parametrize("sigma,t", [(0.8, 10), (1.1, 50), (2.0, 100)])
def test_gaussian_never_above_poisson_at_the_same_rate(sigma, t):
    g = GaussianMechanism(sigma=sigma)
    alloc = RandomAllocation()(g, t)
    poisson = Composition()([PoissonSampling()(g, 1 / t)], [t])
    for delta in (1e-3, 1e-6):
        assert alloc.get_approxDP(delta) <= poisson.get_approxDP_bounds(delta).lower


def test_one_step_is_the_base_and_laplace_brackets():
    g = GaussianMechanism(sigma=1.3)
    assert RandomAllocation()(g, 1).get_approx_delta(0.5) == pytest.approx(g.get_approx_delta(0.5), rel=1e-12)
    lap = RandomAllocation()(LaplaceMechanism(b=1.0), 20)
    b = lap.get_approxDP_bounds(1e-4, accuracy=1e-2)
    assert 0 < b.lower <= b.upper < LaplaceMechanism(b=1.0).get_approxDP(1e-4)


def test_a_value_pickles_compares_and_round_trips():
    m = RandomAllocation()(GaussianMechanism(sigma=2.0), 7, selected=2)
    assert pickle.loads(pickle.dumps(m)) == m and hash(pickle.loads(pickle.dumps(m))) == hash(m)
    assert from_spec(m.to_spec()) == m
    assert m != RandomAllocation()(GaussianMechanism(sigma=2.0), 7)
    assert m.params["steps"] == 7 and m.params["selected"] == 2


@pytest.mark.parametrize("args,err", [((0,), ValueError), ((2.5,), ValueError), ((3, 4), ValueError),
                                      (("3",), TypeError), ((3, 0), ValueError)])
def test_bad_input_names_the_parameter(args, err):
    with pytest.raises(err, match="steps|selected"):
        RandomAllocation()(GaussianMechanism(sigma=1.0), *args)


def test_a_base_no_lattice_holds_falls_back_to_rdp_and_says_so():
    """σ = 0.01: the Gaussian's loss (~N(5000, 100²)) leaves the float range of e^loss, so no
    epoch pair can be built; ε comes from the allocation's RDP (with the fallback warning),
    method='rdp' answers the same, and a certified interval is refused by name."""
    m = RandomAllocation()(GaussianMechanism(sigma=0.01), 100)
    assert m.optional("pairs") is None
    with pytest.warns(dpa.RDPFallbackWarning, match="no grid can hold"):
        eps = m.get_approxDP(1e-5)
    assert math.isfinite(eps) and eps == m.get_approxDP(1e-5, method="rdp")
    with warnings.catch_warnings():
        warnings.simplefilter("error", dpa.RDPFallbackWarning)  # refused before the fallback's warning
        with pytest.raises(dpa.RepresentationUnavailable, match="no dominating pair, so no certified interval"):
            m.get_approxDP_bounds(1e-5)


@pytest.mark.slow
def test_the_default_epsilon_never_rises_with_the_noise_across_the_float_range_edge():
    """σ = 0.03 has no epoch pairs (RDP answers); at 0.04–0.05 the pairs' heavy-tail cut puts
    P-mass at +∞ above δ (ε = +∞): the default there takes RDP's finite bound too (the smaller
    of two upper bounds, with the fallback's warning), so the answers fall as σ grows."""
    answers = []
    for sigma in (0.03, 0.05, 0.1):
        m = RandomAllocation()(GaussianMechanism(sigma=sigma), 10)
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            answers.append(m.get_approxDP(1e-5))
        assert answers[-1] <= m.get_approxDP(1e-5, method="rdp")
        assert sigma == 0.1 or any(issubclass(w.category, dpa.RDPFallbackWarning) for w in seen)
    assert math.isfinite(answers[0]) and answers[0] > answers[1] > answers[2]
