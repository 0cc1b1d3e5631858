"""Tests of dpaccount.rdp_subsampled against independent high-precision oracles."""
import math
import warnings

import mpmath as mp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpaccount.rdp.poisson_sampling import subsampled_gaussian_rdp, subsampled_rdp_bound


# ------------------------------------------------------------------ oracles
def binomial_oracle(q, sigma, alpha, dps=60):
    """ε(α) from the exact binomial sum, in 60-digit arithmetic."""
    with mp.workdps(dps):
        q, s = mp.mpf(q), mp.mpf(sigma)
        A = mp.fsum(mp.binomial(alpha, k) * (1 - q) ** (alpha - k) * q ** k
                    * mp.exp(mp.mpf(k * k - k) / (2 * s * s)) for k in range(alpha + 1))
        return mp.log(A) / (alpha - 1)


def quadrature_oracle(q, sigma, alpha, dps=40):
    """ε(α) = log(∫ N(x;0,σ²) ((1-q) + q e^{(2x-1)/(2σ²)})^α dx)/(α-1) by
    mpmath.quad (tanh-sinh), with the integrand split at its peak."""
    xs = np.linspace(-10 * sigma, alpha + 10 * sigma, 200001)     # locate the peak
    logf = -xs ** 2 / (2 * sigma ** 2) + alpha * np.logaddexp(
        math.log1p(-q), math.log(q) + (2 * xs - 1) / (2 * sigma ** 2))
    with mp.workdps(dps):
        q_, s_, a_ = mp.mpf(q), mp.mpf(sigma), mp.mpf(alpha)

        def f(x):
            v = (2 * x - 1) / (2 * s_ * s_)
            return mp.exp(-x * x / (2 * s_ * s_)) / (s_ * mp.sqrt(2 * mp.pi)) * ((1 - q_) + q_ * mp.exp(v)) ** a_
        A = mp.quad(f, [-mp.inf, mp.mpf(xs[np.argmax(logf)]), mp.inf])
        return mp.log(A) / (a_ - 1)


def laplace_rdp(b):
    """RDP of the Laplace mechanism with scale b (Mironov 2017)."""
    def eps(a):
        if a == 1:
            return 1 / b + math.exp(-1 / b) - 1
        return (math.log(a / (2 * a - 1) * math.exp((a - 1) / b)
                         + (a - 1) / (2 * a - 1) * math.exp(-a / b))) / (a - 1)
    return eps


def theorem6_oracle(q, eps, alpha, dps=50):
    """Zhu & Wang (2019) Theorem 6 written out term by term in mpmath."""
    with mp.workdps(dps):
        q = mp.mpf(q)
        s = (1 - q) ** (alpha - 1) * (alpha * q - q + 1)
        s += mp.binomial(alpha, 2) * q ** 2 * (1 - q) ** (alpha - 2) * mp.exp(eps(2))
        s += 3 * mp.fsum(mp.binomial(alpha, l) * (1 - q) ** (alpha - l) * q ** l * mp.exp((l - 1) * mp.mpf(eps(l)))
                         for l in range(3, alpha + 1))
        return mp.log(s) / (alpha - 1)


def rel(a, b):
    with mp.workdps(50):
        return float(mp.mpf(a) / b - 1)


# ------------------------------------------------------ exact Gaussian RDP
@pytest.mark.parametrize("sigma", [0.5, 1.0, 5.0])
@pytest.mark.parametrize("q", [1e-4, 0.01, 0.2, 1.0])
def test_integer_orders_match_binomial_oracle(q, sigma):
    alphas = [2, 3, 8, 32, 64, 256]
    got = subsampled_gaussian_rdp(q, sigma, np.array(alphas, dtype=float))
    for a, g in zip(alphas, got):
        o = binomial_oracle(q, sigma, a)
        assert abs(rel(g, o)) <= 1e-10, (q, sigma, a, g, o)
        assert rel(g, o) >= -1e-12, (q, sigma, a, g, o)        # an upper bound


@pytest.mark.parametrize("q,sigma", [(0.01, 1.0), (0.6, 0.5), (1e-3, 5.0)])
def test_fractional_orders_match_quadrature_oracle(q, sigma):
    for a in (1.5, 2.7, 10.3, 50.5):
        g = subsampled_gaussian_rdp(q, sigma, a)
        o = quadrature_oracle(q, sigma, a)
        assert abs(rel(g, o)) <= 1e-8, (q, sigma, a, g, o)
        assert rel(g, o) >= -1e-12, (q, sigma, a, g, o)        # never under-reports


def test_quadrature_oracle_agrees_with_binomial_oracle():
    # the two oracles are independent; check one against the other at integer α
    for q, sigma, a in [(0.01, 1.0, 3), (0.2, 0.5, 10)]:
        assert abs(rel(quadrature_oracle(q, sigma, a), binomial_oracle(q, sigma, a))) < 1e-25


def test_reference_values():
    got = subsampled_gaussian_rdp(0.01, 1.0, [2, 8, 32])
    ref = [0.00017181342207454794, 0.0008936439076060318, 11.246275937048068]
    np.testing.assert_allclose(got, ref, rtol=1e-10, atol=0)


def test_fractional_orders_agree_with_neighbouring_integer_orders():
    # continuity across the two methods: α = n ± 1e-7 vs the binomial sum at n
    for q, sigma in [(0.01, 1.0), (1e-5, 0.3), (0.3, 20.0)]:
        for n in (2, 7, 40):
            e = subsampled_gaussian_rdp(q, sigma, [n - 1e-7, n, n + 1e-7])
            assert e[0] <= e[1] <= e[2]
            assert e[2] / e[0] - 1 < 1e-4


def test_edge_cases_and_shapes():
    assert subsampled_gaussian_rdp(0.0, 1.0, 3.5) == 0.0
    assert subsampled_gaussian_rdp(1.0, 2.0, 3.5) == 3.5 / 8.0
    assert np.all(subsampled_gaussian_rdp(1.0, 0.7, np.array([2.0, 7.25])) == np.array([2.0, 7.25]) / (2 * 0.7 * 0.7))
    assert isinstance(subsampled_gaussian_rdp(0.1, 1.0, 2), float)
    assert isinstance(subsampled_gaussian_rdp(0.1, 1.0, np.float64(2.5)), float)
    grid = np.array([[1.5, 2.0], [3.0, 10.25]])
    out = subsampled_gaussian_rdp(0.1, 1.0, grid)
    assert out.shape == (2, 2)
    assert out[1, 1] == subsampled_gaussian_rdp(0.1, 1.0, 10.25)


def test_large_orders_and_small_noise_are_finite_and_warning_free():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        q, sigma = 0.01, 0.05
        e = subsampled_gaussian_rdp(q, sigma, [10000, 9999.5, 1000.5])
        # the k = α term dominates completely: ε ≈ (α log q + α(α-1)/(2σ²))/(α-1)
        a = 10000
        approx = (a * math.log(q) + a * (a - 1) / (2 * sigma ** 2)) / (a - 1)
        assert np.all(np.isfinite(e))
        assert abs(e[0] / approx - 1) < 1e-12
        assert e[1] < e[0]
        subsampled_gaussian_rdp(1e-9, 100.0, [1.0001, 2, 777.7, 5000])
        subsampled_gaussian_rdp(1 - 1e-9, 0.05, [1.0001, 2, 777.7])


def test_tiny_epsilons_keep_relative_accuracy():
    # A_α − 1 ~ 1e-20 here: log(A) computed naively would lose every digit
    q, sigma = 1e-8, 20.0
    for a in (2, 3):
        assert abs(rel(subsampled_gaussian_rdp(q, sigma, a), binomial_oracle(q, sigma, a))) < 1e-12
    g = subsampled_gaussian_rdp(q, sigma, 2.5)
    o = quadrature_oracle(q, sigma, 2.5, dps=60)
    assert 0 <= rel(g, o) < 1e-10


def test_monotone_in_alpha_and_q_on_a_grid():
    alphas = np.array([1.01, 1.1, 1.5, 2, 2.25, 3, 3.5, 4, 6.7, 8, 12, 16.5, 32, 48.3, 64, 100.5, 256])
    qs = [1e-5, 1e-3, 0.01, 0.1, 0.5, 0.9, 0.999, 1.0]
    for sigma in (0.3, 1.0, 4.0):
        table = np.array([subsampled_gaussian_rdp(q, sigma, alphas) for q in qs])
        assert np.all(np.diff(table, axis=1) >= 0), sigma
        assert np.all(np.diff(table, axis=0) >= 0), sigma


@settings(max_examples=40, deadline=None)
@given(q=st.floats(1e-6, 0.99), r=st.floats(1.001, 3.0), sigma=st.floats(0.2, 30.0),
       a=st.floats(1.01, 200.0), da=st.floats(1e-3, 10.0))
def test_monotone_hypothesis(q, r, sigma, a, da):
    e = subsampled_gaussian_rdp(q, sigma, [a, a + da])
    assert e[0] <= e[1]
    assert subsampled_gaussian_rdp(q, sigma, a) <= subsampled_gaussian_rdp(min(1.0, q * r), sigma, a)


# ---------------------------------------------------------- general bound
def test_bound_dominates_exact_gaussian():
    for sigma in (0.5, 1.0, 3.0):
        base = lambda a, s=sigma: a / (2 * s * s)
        for q in (1e-4, 0.01, 0.2, 0.7):
            alphas = np.array([2, 3, 5, 8, 32, 64, 1.5, 2.5, 7.3, 40.5])
            b = subsampled_rdp_bound(q, base, alphas)
            e = subsampled_gaussian_rdp(q, sigma, alphas)
            assert np.all(b >= e * (1 - 1e-12)), (sigma, q)
            # at α = 2 the theorem's sum is exactly the Gaussian binomial sum
            assert abs(b[0] / e[0] - 1) < 1e-12


def test_bound_small_q_alpha_2_close_to_exact():
    for sigma in (0.7, 2.0):
        base = lambda a, s=sigma: a / (2 * s * s)
        for q in (1e-5, 1e-3):
            b, e = subsampled_rdp_bound(q, base, 2), subsampled_gaussian_rdp(q, sigma, 2)
            assert e * (1 - 1e-12) <= b <= 3 * e
            b3, e3 = subsampled_rdp_bound(q, base, 3), subsampled_gaussian_rdp(q, sigma, 3)
            assert e3 <= b3 <= 3 * e3


def test_bound_equals_base_at_q_1_and_zero_at_q_0():
    base = laplace_rdp(0.8)
    alphas = [1.5, 2, 3.25, 17]
    np.testing.assert_array_equal(subsampled_rdp_bound(1.0, base, alphas), [base(a) for a in alphas])
    assert subsampled_rdp_bound(0.0, base, 7.5) == 0.0


@pytest.mark.parametrize("q", [1e-4, 0.05, 0.5])
def test_bound_matches_theorem_statement(q):
    base = laplace_rdp(1.3)
    for a in (2, 3, 10, 50):
        o = theorem6_oracle(q, base, a)
        g = subsampled_rdp_bound(q, base, a)
        assert abs(rel(g, o)) < 1e-10 and rel(g, o) >= -1e-13, (q, a)
    # fractional orders: linear interpolation of (α−1)ε between the integers
    for a, lo, hi in ((1.25, 1, 2), (4.6, 4, 5), (20.5, 20, 21)):
        lam_lo = 0 if lo == 1 else (lo - 1) * theorem6_oracle(q, base, lo)
        lam_hi = (hi - 1) * theorem6_oracle(q, base, hi)
        o = ((hi - a) * lam_lo + (a - lo) * lam_hi) / (a - 1)
        g = subsampled_rdp_bound(q, base, a)
        assert abs(rel(g, o)) < 1e-10 and rel(g, o) >= -1e-13, (q, a)


def test_bound_propagates_infinity_and_shapes():
    base = lambda a: 0.5 * a if a < 5 else math.inf
    out = subsampled_rdp_bound(0.1, base, np.array([[2, 4, 4.5], [5, 6.5, 1.5]]))
    assert out.shape == (2, 3)
    assert np.all(np.isfinite(out[0, :2])) and np.isfinite(out[1, 2])
    assert np.isinf(out[0, 2]) and np.all(np.isinf(out[1, :2]))
    assert isinstance(subsampled_rdp_bound(0.1, base, 3), float)


def test_a_fractional_order_beyond_the_node_cap_takes_the_next_integer_order():
    """Issue 44 defect 4: σ = 1e-3 scanned 25M trapezoid nodes at α ≈ 5000 (2.9 GB for a
    whole ε(δ) query). Beyond ``_MAX_NODES`` the order takes ε(⌈α⌉) (D_α is monotone in α):
    between the exact binomial sums at ⌊α⌋ and ⌈α⌉ (both the integer route)."""
    from dpaccount.rdp import poisson_sampling as ps
    q, sigma, alpha = 0.01, 1e-3, 5000.5
    assert ps._fraction_plan(np.array([alpha]), sigma)[4][0] > ps._MAX_NODES
    got = ps.subsampled_gaussian_rdp(q, sigma, alpha)
    low, high = ps.subsampled_gaussian_rdp(q, sigma, np.array([5000.0, 5001.0]))
    assert low <= got <= high
