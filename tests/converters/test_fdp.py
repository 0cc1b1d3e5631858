"""Converters of f-DP: G_μ, trade-off ⇄ profile, the certified μ, the CLT's μ."""
from fractions import Fraction

import mpmath as mp
import numpy as np
import pytest

from dpaccount.converters.clt import clt_mu
from dpaccount.converters.fdp import gdp_mu_from_profile, gdp_tradeoff, profile_to_tradeoff, tradeoff_to_profile
from oracles import gdp_delta, gdp_tradeoff as exact_g, np_vertices, piecewise_linear

ALPHAS = np.concatenate(([0.0, 1e-300, 1e-30, 1e-12, 1e-6], np.linspace(1e-3, 1 - 1e-3, 37),
                         [1 - 1e-9, 1 - 1e-15, 1.0]))


@pytest.mark.parametrize("mu", [0.05, 0.5, 1.0, 3.0, 8.0])
def test_gdp_tradeoff_is_g_mu_rounded_both_ways(mu):
    low, high = gdp_tradeoff(ALPHAS, mu), gdp_tradeoff(ALPHAS, mu, lower=False)
    for a, lo, hi in zip(ALPHAS, low, high):
        exact = exact_g(a, mu)
        assert lo <= exact <= hi
        if exact > 1e-12:
            assert abs(lo - exact) <= 1e-6 * exact


# Bu, Dong, Long & Su (2020), Table 1: MNIST, batch 256 of n = 60,000, (σ, epochs) → CLT μ
TABLE_1 = [(1.3, 15, 0.23), (1.1, 60, 0.57), (0.7, 45, 1.13), (0.6, 62, 2.00), (0.55, 68, 2.76), (0.5, 100, 4.78)]


@pytest.mark.parametrize("sigma, epochs, mu", TABLE_1)
def test_clt_mu_reproduces_table_1(sigma, epochs, mu):
    q = 256 / 60000
    steps = round(epochs * 60000 / 256)  # T = epochs · n / batch (their caption)
    assert round(clt_mu(q, sigma, steps), 2) == mu


def test_clt_mu_validates():
    with pytest.raises(ValueError, match="sigma"):
        clt_mu(0.1, -1.0, 10)
    with pytest.raises(ValueError, match="q"):
        clt_mu(1.5, 1.0, 10)
    with pytest.raises(ValueError, match="steps"):
        clt_mu(0.1, 1.0, 0)


def _rr_exact(p):
    p = Fraction(p)
    return np_vertices([p, 1 - p], [1 - p, p])


def test_profile_to_tradeoff_of_rr_is_exact_and_low():
    p = 0.8
    e0 = float(np.log(p / (1 - p)))
    eps = np.array([-e0, 0.0, e0])
    exact_delta = lambda e: max(p - np.exp(e) * (1 - p), 0.0) + max(1 - p - np.exp(e) * p, 0.0)
    delta = np.array([exact_delta(e) for e in eps]) * (1 + 1e-15)
    verts = _rr_exact(p)
    beta = profile_to_tradeoff(eps, delta, ALPHAS)
    for a, b in zip(ALPHAS, beta):
        exact = piecewise_linear(verts, a)
        assert Fraction(b) <= exact
        assert float(exact) - b < 1e-12


def test_profile_to_tradeoff_on_few_points_stays_below():
    """A sup over fewer ε is a lower bound: G_μ from a coarse δ_μ sample."""
    mu = 1.0
    eps = np.linspace(-3, 3, 13)
    delta = np.array([float(gdp_delta(e, mu)) * (1 + 1e-14) for e in eps])
    beta = profile_to_tradeoff(eps, delta, ALPHAS)
    for a, b in zip(ALPHAS, beta):
        assert b <= exact_g(a, mu)


def test_tradeoff_to_profile_inverts_rr():
    p = 0.75
    verts = _rr_exact(p)
    a = [float(x) for x, _ in verts]
    b = [float(y) for _, y in verts]
    eps = np.linspace(-2, 2, 41)
    got = tradeoff_to_profile(a, b, eps)
    for e, d in zip(eps, got):
        exact = max(p - mp.e ** e * (1 - p), 0) + max(1 - p - mp.e ** e * p, 0)
        assert d >= exact
        assert d - exact < 1e-12


def test_gdp_mu_from_profile_recovers_mu_of_a_gaussian_profile():
    """The chords of δ_μ in e^ε lie above δ_μ, so the certified μ is ≥ μ, and close."""
    mu = 1.3
    eps = np.linspace(0, 14, 7001)
    delta = np.array([float(gdp_delta(e, mu)) for e in eps]) * (1 + 1e-12)
    got = gdp_mu_from_profile(eps, delta, tail=1e-20)
    assert mu <= got <= mu * (1 + 1e-3)
    assert gdp_mu_from_profile(eps, delta, tail=0.0) == np.inf  # δ at the end is not ≤ the slack


def test_search_finds_the_best_line_when_small_e_eps_is_noise():
    """Where e^ε is tiny, c = 1 − δ is rounding noise and the increments are not
    monotone; the search must still find the maximum (brute force over all lines)."""
    rng = np.random.default_rng(1)
    eps = np.linspace(-30, 12, 20001)
    delta = np.array([float(gdp_delta(e, 2.0)) for e in eps])
    delta = np.minimum(delta + np.abs(rng.normal(0, 1e-15, len(eps))), 1.0)
    alphas = np.array([1e-6, 1e-3, 0.01, 0.1, 0.5, 0.9, 0.999])
    got = profile_to_tradeoff(eps, delta, alphas)
    brute = np.array([np.max(1 - delta - np.exp(eps) * a) for a in alphas])
    assert np.all(got <= np.maximum(brute, 0) + 1e-15)
    assert np.all(got >= brute - 1e-12)



@pytest.mark.parametrize("mu0,points", [(1.0, [0.0, 1.0, 10.0]), (0.5, [0.0, 0.4, 1.5, 6.0]),
                                        (2.0, [0.0, 3.0, 40.0])])
def test_gdp_mu_holds_on_the_chords_between_the_points(mu0, points):
    """A profile known at a few points is the chord between them (linear in e^ε, as a
    PLD grid's is): here the chords of δ_μ0, which lie above δ_μ0. The certified μ must
    hold on the whole half-line, on the chords too (mpmath δ_μ on a fine grid), not
    only at the points."""
    eps = np.array(points)
    delta = np.array([float(gdp_delta(e, mu0)) for e in eps]) * (1 + 1e-12)
    mu = gdp_mu_from_profile(eps, delta, tail=1e-15)
    assert mu < np.inf
    for left, right, d_left, d_right in zip(eps[:-1], eps[1:], delta[:-1], delta[1:]):
        t0, t1 = mp.exp(left), mp.exp(right)
        for e in np.linspace(left, right, 101):
            chord = d_left + (d_right - d_left) * (mp.exp(e) - t0) / (t1 - t0)
            assert chord <= gdp_delta(e, mu) + mp.mpf(1e-15), e


def test_upper_curve_of_kinks_known_within_tau_holds_the_exact_curve():
    """``max_profile_to_tradeoff_upper`` given computed kinks each within τ of a true one: a pair
    whose top log is off by 1e-6 (within its stated ``log_err``) puts its kink 1e-6 too high,
    where the conjugate is 2.5e-7 below the true curve's at α = 0.1 (the supremum sits at the
    true kink); the kinks' rounding slack covers it. Exact: the true laws' vertices, in Fractions."""
    from dpaccount.converters.fdp import max_profile_to_tradeoff_upper
    from dpaccount.pld.pairs.discrete_pair import DiscretePair
    p, q = [0.5, 0.3, 0.2], [0.2, 0.3, 0.5]
    err = (np.full(3, 1e-6), np.full(3, 1e-6))
    for shift in (1e-6, -1e-6):
        pair = DiscretePair(np.log(p) + [shift, 0, 0], np.log(q), log_err=err)
        eps = pair.atoms[0]
        beta = max_profile_to_tradeoff_upper(eps, pair.loss_errors, [pair.delta(eps, upper=False)],
                                             [pair.end_bounds()[0][0]], ALPHAS)
        exact = np_vertices([Fraction(x) for x in p], [Fraction(x) for x in q])
        for a, b in zip(ALPHAS, beta):
            assert piecewise_linear(exact, a) <= Fraction(float(b)), (a, b)
            assert float(b) - float(piecewise_linear(exact, a)) <= 1e-5
