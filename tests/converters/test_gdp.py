"""GDP closed forms against the mpmath oracle."""
import numpy as np
import pytest
from oracles import gdp_delta, gdp_epsilon

import dpaccount as dpa
from dpaccount.converters.gdp import delta_gdp, epsilon_gdp


@pytest.mark.parametrize("mu", [0.05, 0.3, 1.0, 4.0, 31.6])
@pytest.mark.parametrize("eps", [-2.0, 0.0, 0.5, 2.0, 10.0, 100.0])
def test_delta_is_tight_upper_bound(mu, eps):
    exact_mp = gdp_delta(eps, mu)
    exact = float(exact_mp)
    got = delta_gdp(eps, mu)
    if exact < 1e-300:
        assert got < 1e-290
        return
    assert got >= exact_mp  # the safe direction, strictly, against the exact value
    assert got <= exact * (1 + 1e-11)


@pytest.mark.parametrize("mu", [0.1, 1.0, 5.0])
@pytest.mark.parametrize("delta", [0.1, 1e-5, 1e-10, 1e-100])
def test_epsilon_is_tight_upper_bound(mu, delta):
    exact_mp = gdp_epsilon(delta, mu)
    exact = float(exact_mp)
    got = epsilon_gdp(delta, mu)
    assert got >= exact_mp  # strictly, against the exact value
    assert got <= exact * (1 + 1e-11) + 1e-14


@pytest.mark.parametrize("sigmas,counts", [([1.0], [10]), ([0.7, 3.0, 12.0], [5, 40, 300])])
def test_composition_of_gaussians_is_gdp(sigmas, counts):
    mech = dpa.Composition()([dpa.GaussianMechanism(sigma=s) for s in sigmas], counts)
    mu = np.sqrt(sum(k / s ** 2 for s, k in zip(sigmas, counts)))
    for delta in [1e-3, 1e-8]:
        exact = float(gdp_epsilon(delta, mu))
        assert exact <= mech.get_approxDP(delta) <= exact * (1 + 1e-11)


def test_gdp_mechanism_equals_gaussian():
    assert dpa.GDPMechanism(mu=0.5).get_approxDP(1e-6) == dpa.GaussianMechanism(sigma=2.0).get_approxDP(1e-6)


def test_delta_never_below_exact_on_a_sweep():
    """300 (μ, ε) drawn across regimes: δ is an upper bound within 1e-10."""
    import mpmath as mp
    rng = np.random.default_rng(3)
    for _ in range(300):
        mu = 10 ** rng.uniform(-2.5, 2)
        eps = rng.uniform(-3, 3) * mu * mu / 2 + rng.uniform(0, 6) * mu
        exact = gdp_delta(eps, mu)
        if exact < mp.mpf("1e-300"):
            continue
        rel = float((mp.mpf(delta_gdp(eps, mu)) - exact) / exact)
        assert 0 <= rel < 1e-10, (mu, eps, rel)
