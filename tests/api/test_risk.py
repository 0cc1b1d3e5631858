"""Attack-risk queries (``get_advantage``, ``get_tpr``, ``get_bayes_risk`` and their ``_bounds``)
against exact values: Gaussian closed forms in mpmath, finite pairs by exact enumeration of
their Neyman–Pearson tests (fractions), a Poisson-subsampled Gaussian step by its threshold form,
and DP-SGD by the certified bracket and the relations between the three measures."""
from fractions import Fraction

import mpmath as mp
import numpy as np
import pytest

from dpaccount import (Composition, DiscreteMechanism, GaussianMechanism, PoissonSampling, RandomizedResponse,
                       RepresentationUnavailable)
from oracles import (gdp_delta, gdp_tradeoff, mechanism_tradeoff, np_vertices, piecewise_linear, product_law,
                     subsampled_gaussian_add_delta, subsampled_gaussian_remove_delta)

FPRS = np.array([0.0, 1e-6, 1e-3, 0.01, 0.05, 0.2, 0.5, 0.9, 1.0])
PRIORS = np.array([0.0, 1e-4, 0.01, 0.1, 0.3, 0.5, 0.7, 0.9, 0.999, 1.0])


def _exact_bayes(vertices, prior):
    """min over the tests of both orders of π·β + (1 − π)·α (vertices of both curves, exact)."""
    pi = Fraction(float(prior))
    return min(pi * b + (1 - pi) * a for a, b in vertices)


# -- Gaussian: closed forms -----------------------------------------------------------------
@pytest.mark.parametrize("sigma", [0.3, 1.0, 4.0])
def test_gaussian_advantage_is_two_phi_half_mu_minus_one(sigma):
    mu = mp.mpf(1) / sigma
    exact = 2 * mp.ncdf(mu / 2) - 1
    m = GaussianMechanism(sigma)
    up, b = m.get_advantage(), m.get_advantage_bounds()
    assert up >= exact and up - exact <= 1e-13
    assert b.lower <= exact <= b.upper and b.certified and b.upper == up


@pytest.mark.parametrize("sigma", [0.5, 1.0, 3.0])
def test_gaussian_tpr_is_one_minus_g_mu(sigma):
    mu = 1 / sigma
    tpr, b = GaussianMechanism(sigma).get_tpr(FPRS), GaussianMechanism(sigma).get_tpr_bounds(FPRS)
    for a, t, lo, hi in zip(FPRS, tpr, b.lower, b.upper):
        exact = 1 - gdp_tradeoff(a, mu)
        assert t >= exact and lo <= exact <= hi, (a, t, lo, hi, exact)
        assert t - exact <= 1e-12
    assert np.all(np.diff(tpr) >= 0) and np.all(tpr >= FPRS)


@pytest.mark.parametrize("sigma", [0.5, 1.0, 3.0])
def test_gaussian_bayes_risk_is_the_profile_at_the_prior_odds(sigma):
    mu = 1 / sigma
    m = GaussianMechanism(sigma)
    risk, b = m.get_bayes_risk(PRIORS), m.get_bayes_risk_bounds(PRIORS)
    for pi, r, lo, hi in zip(PRIORS, risk, b.lower, b.upper):
        p = min(mp.mpf(pi), 1 - mp.mpf(pi))
        exact = p * (1 - gdp_delta(mp.log((1 - p) / p), mu)) if p > 0 else mp.mpf(0)
        assert r <= exact and lo <= exact <= hi, (pi, r, lo, hi, exact)
        assert exact - r <= 1e-12
    # R(π) = R(1 − π): both orders of the pair
    assert np.allclose(m.get_bayes_risk(PRIORS), m.get_bayes_risk(1 - PRIORS), rtol=1e-12, atol=0)


# -- finite pairs: exact enumeration -----------------------------------------------------------
FINITE = [([0.5, 0.5, 0.0], [0.2, 0.3, 0.5]), ([0.7, 0.3], [0.3, 0.7]), ([0.1, 0.2, 0.7], [0.4, 0.4, 0.2])]


@pytest.mark.parametrize("p, q", FINITE)
def test_finite_pair_risks_by_enumeration(p, q):
    """One pair: TPR at FPR, advantage (δ(0) = total variation) and Bayes risk, exactly."""
    # the library renormalises; the oracle takes the laws it was handed, exactly
    fp, fq = ([Fraction(x) / sum(map(Fraction, law)) for x in law] for law in (p, q))
    curve = mechanism_tradeoff(fp, fq)
    m = DiscreteMechanism(p, q)
    tpr, tb = m.get_tpr(FPRS), m.get_tpr_bounds(FPRS)
    for a, t, lo, hi in zip(FPRS, tpr, tb.lower, tb.upper):
        exact = 1 - piecewise_linear(curve, a)
        assert Fraction(float(t)) >= exact and Fraction(lo) <= exact <= Fraction(hi), (a, t, float(exact))
        assert float(t) - float(exact) <= 1e-12
    tv = sum(max(x - y, 0) for x, y in zip(fp, fq))
    assert tv == max(1 - a - b for a, b in curve)  # the oracle's two routes agree
    adv = m.get_advantage_bounds()
    assert Fraction(adv.upper) >= tv >= Fraction(adv.lower) and adv.upper - float(tv) <= 1e-12
    risk, rb = m.get_bayes_risk(PRIORS), m.get_bayes_risk_bounds(PRIORS)
    vertices = np_vertices(fp, fq) + np_vertices(fq, fp)
    for pi, r, lo, hi in zip(PRIORS, risk, rb.lower, rb.upper):
        exact = _exact_bayes(vertices, pi)
        assert Fraction(float(r)) <= exact and Fraction(lo) <= exact <= Fraction(hi), (pi, r, float(exact))
        assert float(exact) - r <= 1e-12


def test_randomized_response_composition_by_enumeration():
    """Three randomized responses (p = 0.75): the composed curve, enumerated."""
    p = Fraction(3, 4)
    law = ([p, 1 - p], [1 - p, p])
    fp, fq = product_law([law] * 3)
    curve = mechanism_tradeoff(fp, fq)
    m = Composition()([RandomizedResponse(p=0.75)], [3])
    tpr = m.get_tpr(FPRS)
    for a, t in zip(FPRS, tpr):
        exact = 1 - piecewise_linear(curve, a)
        assert Fraction(float(t)) >= exact and float(t) - float(exact) <= 1e-9, (a, t, float(exact))
    tv = sum(max(x - y, 0) for x, y in zip(fp, fq))
    b = m.get_advantage_bounds()
    assert Fraction(b.upper) >= tv >= Fraction(b.lower)
    vertices = np_vertices(fp, fq) + np_vertices(fq, fp)
    for pi, r in zip(PRIORS, m.get_bayes_risk(PRIORS)):
        exact = _exact_bayes(vertices, pi)
        assert Fraction(float(r)) <= exact and float(exact) - r <= 1e-9, (pi, r, float(exact))


# -- Poisson-subsampled Gaussian, one step: the threshold form ---------------------------------
def test_subsampled_gaussian_advantage_is_the_larger_total_variation():
    sigma, q = 0.8, 0.1
    exact = max(subsampled_gaussian_remove_delta(0, sigma, q), subsampled_gaussian_add_delta(0, sigma, q))
    b = PoissonSampling()(GaussianMechanism(sigma), q).get_advantage_bounds()
    assert b.lower <= exact <= b.upper


# -- DP-SGD: the certified bracket and the relations -----------------------------------------
@pytest.fixture(scope="module")
def dpsgd():
    return Composition()([PoissonSampling()(GaussianMechanism(1.1), 256 / 60000)], [14063])


def test_dpsgd_brackets_are_narrow_and_their_defaults_the_unsafe_ends(dpsgd):
    adv = dpsgd.get_advantage_bounds()
    assert adv.certified and adv.lower <= adv.upper <= adv.lower * (1 + 1e-3)
    assert dpsgd.get_advantage() == adv.upper
    tpr = dpsgd.get_tpr_bounds([0.01, 0.1])
    assert np.all(tpr.lower <= tpr.upper) and np.all(tpr.upper <= tpr.lower * (1 + 2e-3))
    assert np.array_equal(dpsgd.get_tpr([0.01, 0.1]), tpr.upper)
    priors = [1e-4, 0.1, 0.5, 0.8]
    risk = dpsgd.get_bayes_risk_bounds(priors)
    assert np.all(risk.lower <= risk.upper) and np.array_equal(dpsgd.get_bayes_risk(priors), risk.lower)
    assert np.all(risk.upper - risk.lower <= 1e-3 * risk.upper)  # the accuracy, in the risk's own terms


def test_dpsgd_measures_are_consistent(dpsgd):
    """Any test on the certified upper curve of β is an attack: its TPR − FPR is at most the
    certified advantage; at π = ½ the Bayes risk is (1 − advantage)/2 exactly."""
    alphas = np.linspace(0.0, 1.0, 201)
    attack = np.max(1 - alphas - dpsgd.get_fDP_bounds(alphas).upper)
    adv = dpsgd.get_advantage_bounds()
    assert attack <= adv.upper and attack >= adv.lower - 2e-3
    half = dpsgd.get_bayes_risk_bounds(0.5)
    assert half.lower <= (1 - adv.lower) / 2 and (1 - adv.upper) / 2 <= half.upper


# -- input and fallbacks -----------------------------------------------------------------------
@pytest.mark.parametrize("query, arg", [("get_tpr", "fpr"), ("get_bayes_risk", "prior")])
@pytest.mark.parametrize("bad", [-0.1, 1.5, float("nan")])
def test_probabilities_out_of_range_are_refused_by_name(query, arg, bad):
    with pytest.raises(ValueError, match=arg):
        getattr(GaussianMechanism(1.0), query)(bad)


def test_scalar_in_scalar_out_and_shape_kept():
    m = GaussianMechanism(1.0)
    assert isinstance(m.get_tpr(0.1), float) and isinstance(m.get_bayes_risk(0.2), float)
    assert m.get_tpr(np.full((2, 3), 0.1)).shape == (2, 3)
    assert m.get_bayes_risk_bounds([[0.1, 0.2]]).lower.shape == (1, 2)


def test_a_mechanism_without_pairs_has_no_certified_tpr():
    from dpaccount import ZCDPMechanism
    with pytest.raises(RepresentationUnavailable):
        ZCDPMechanism(rho=0.5).get_tpr(0.1)


def test_pairs_not_attained_give_no_certified_lower_tpr():
    """Sampling without replacement: the dominating pair is not attained, so the upper end of β
    bounds the pair's curve, not the mechanism's; the TPR keeps its certified upper end only."""
    from dpaccount import SubsetSampling
    m = SubsetSampling()(GaussianMechanism(1.0, relation="replace-one"), 0.1)
    b = m.get_tpr_bounds([0.01, 0.1])
    assert b.lower is None and not b.certified and b.lower_of is None and "not attained" in b.reason
    assert np.array_equal(b.upper, m.get_tpr([0.01, 0.1])) and np.all(b.upper >= [0.01, 0.1])
    risk = m.get_bayes_risk_bounds([0.1, 0.5])
    assert np.all(risk.lower <= risk.upper) and np.all(risk.upper <= [0.1, 0.5])
