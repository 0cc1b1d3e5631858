"""converters/risk.py: each conversion against mpmath, on the side it claims."""
import mpmath as mp
import numpy as np
import pytest

from dpaccount.converters.risk import fdp_to_advantage, fdp_to_bayes_risk, fdp_to_tpr, gdp_advantage, prior_to_epsilon

PRIORS = np.array([1e-300, 1e-12, 1e-3, 0.1, 0.3, 0.5 - 1e-12, 0.5, 0.5 + 1e-12, 0.7, 0.9, 1 - 1e-9])


def test_prior_to_epsilon_brackets_the_log_odds():
    low, p = prior_to_epsilon(PRIORS, upper_delta=True)
    high, p2 = prior_to_epsilon(PRIORS, upper_delta=False)
    assert np.array_equal(p, p2)
    for pi, lo, hi, w in zip(PRIORS, low, high, p):
        exact = abs(mp.log((1 - mp.mpf(pi)) / mp.mpf(pi)))
        assert lo <= exact <= hi and w == min(pi, 1 - pi)
        assert hi - lo <= 1e-14 * (1 + exact)
    assert low[PRIORS == 0.5] == 0.0


@pytest.mark.parametrize("mu", [0.0, 1e-8, 0.5, 1.0, 6.0])
def test_gdp_advantage_brackets_two_phi_half_mu_minus_one(mu):
    exact = 2 * mp.ncdf(mp.mpf(mu) / 2) - 1
    assert gdp_advantage(mu, upper=False) <= exact <= gdp_advantage(mu)


def test_tpr_and_bayes_risk_round_their_own_way():
    beta = np.array([0.0, 1e-17, 0.3, 0.7, 1.0])
    up, low = fdp_to_tpr(beta), fdp_to_tpr(beta, upper=False)
    for b, u, lo in zip(beta, up, low):
        assert lo <= 1 - mp.mpf(b) <= u
    delta = np.array([0.0, 1e-20, 0.2, 0.9, 1.0])
    prior = np.array([0.3, 0.6, 0.1, 0.5, 0.25])
    lo, hi = fdp_to_bayes_risk(prior, delta), fdp_to_bayes_risk(prior, delta, lower=False)
    for pi, d, a, b in zip(prior, delta, lo, hi):
        exact = min(mp.mpf(pi), 1 - mp.mpf(pi)) * (1 - mp.mpf(d))
        assert a <= exact <= b
    assert fdp_to_bayes_risk(0.0, 0.5) == 0.0 and fdp_to_bayes_risk(1.0, 0.5, lower=False) == 0.0


@pytest.mark.parametrize("bad", [-1e-3, 1.5])
def test_advantage_is_a_probability(bad):
    with pytest.raises(ValueError, match="delta_at_zero"):
        fdp_to_advantage(bad)


def test_gdp_advantage_refuses_negative_mu():
    with pytest.raises(ValueError, match="mu"):
        gdp_advantage(-1.0)
