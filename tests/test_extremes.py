"""Regimes where accountants fail silently: each gets a certified answer or a
clear error (never a silent nan, inf or under-report)."""
import math

import numpy as np
import pytest
from oracles import gdp_epsilon, rr_composed_delta
from scipy import special, stats

import dpaccount as dpa


@pytest.mark.parametrize("delta", [1e-100, 1e-200, 1e-250])
def test_tiny_delta_through_the_grid(delta):
    sigma, k = 3.0, 20
    mech = dpa.Composition()([dpa.GaussianMechanism(sigma=sigma)], [k])
    exact = float(gdp_epsilon(delta, math.sqrt(k) / sigma))
    b = mech.get_approxDP_bounds(delta, method="pld")
    assert b.lower <= exact <= b.upper <= exact * (1 + 1e-3)


def test_delta_below_the_float_range_is_a_clear_error():
    mech = dpa.Composition()([dpa.GaussianMechanism(sigma=3.0)], [20])
    with pytest.raises(dpa.AccuracyNotReached, match="delta=1e-290"):
        mech.get_approxDP(1e-290, method="pld")
    exact = float(gdp_epsilon(1e-290, math.sqrt(20) / 3.0))
    assert exact <= mech.get_approxDP(1e-290) <= exact * (1 + 1e-12)  # analytic


def test_epsilon_near_one_thousand():
    """500-fold randomized response (p = 0.9): ε up to 500·log 9 ≈ 1099."""
    p, k, eps = 0.9, 500, 990.0
    mech = dpa.Composition()([dpa.RandomizedResponse(p=p)], [k])
    ex = float(rr_composed_delta(eps, p, k))
    b = mech.get_approx_delta_bounds(eps)
    assert b.lower <= ex <= b.upper <= ex * (1 + 1e-3) + 1e-300


def test_a_billion_compositions():
    """10⁹-fold randomized response (p = 0.51) through the lattice grid and
    Fourier exponentiation, against the exact binomial sum (log-pmf summed over
    the ±12σ range that holds all but 1e-30 of it)."""
    p, k = 0.51, 10 ** 9
    a = math.log(p / (1 - p))
    mean, sd = k * (2 * p - 1) * a, a * math.sqrt(4 * k * p * (1 - p))
    eps = mean + 3 * sd
    j0 = math.floor((k + eps / a) / 2)  # loss (2J − k)a > ε ⇔ J > j0
    half_width = int(12 * math.sqrt(k * p * (1 - p)))
    j = np.arange(j0 + 1, j0 + 1 + 2 * half_width)
    exact = math.exp(special.logsumexp(stats.binom.logpmf(j, k, p))) \
        - math.exp(eps + special.logsumexp(stats.binom.logpmf(j, k, 1 - p)))
    b = dpa.Composition()([dpa.RandomizedResponse(p=p)], [k]).get_approx_delta_bounds(eps)
    assert b.lower <= exact * (1 + 1e-9) and exact <= b.upper * (1 + 1e-9)
    assert b.upper <= exact * (1 + 1e-3)


def test_full_sampling_tiny_sigma():
    """q = 1, σ = 0.05: the subsampled pair is the Gaussian pair itself."""
    mech = dpa.Composition()([dpa.PoissonSampling()(dpa.GaussianMechanism(sigma=0.05), 1.0)], [10])
    exact = float(gdp_epsilon(1e-5, 20.0 * math.sqrt(10)))
    b = mech.get_approxDP_bounds(1e-5)
    assert b.lower <= exact <= b.upper <= exact * (1 + 1e-3)


def test_mass_at_infinity_is_respected():
    """Binomial(10, 1/2): P(L = ∞) = 2⁻¹⁰ per step, 1 − (1 − 2⁻¹⁰)³ after three:
    no finite ε below that δ, finite ones above it."""
    mech = dpa.Composition()([dpa.BinomialMechanism(n=10, p=0.5)], [3])
    p_inf = 1 - (1 - 2.0 ** -10) ** 3
    assert mech.get_approxDP(p_inf * 0.99) == math.inf
    eps = mech.get_approxDP(p_inf * 1.5)
    assert 0 < eps < math.inf
    assert mech.get_approx_delta(1e6) == pytest.approx(p_inf, rel=1e-9)


def test_most_mass_at_infinity():
    """Binomial(3, p) in the add direction puts P(Bin = 0) at L = +∞ per step:
    0.97³ ≈ 0.913 for p = 0.03, so 50 steps leave a finite part of ~1e-53
    (the whole grid is below its tail: counted at +∞), and 1 − 0.875³ ≈ 0.33
    for p = 1/2 over three steps."""
    heavy = dpa.Composition()([dpa.BinomialMechanism(n=3, p=0.03)], [50])
    assert heavy.get_approx_delta(1.0) == pytest.approx(1.0, abs=1e-12)
    assert heavy.get_approxDP(0.5) == math.inf
    light = dpa.Composition()([dpa.BinomialMechanism(n=3, p=0.5)], [3])
    p_inf = 1 - 0.875 ** 3
    assert light.get_approx_delta(1e4) == pytest.approx(p_inf, rel=1e-9)
    assert light.get_approxDP(p_inf * 0.999) == math.inf
    assert light.get_approxDP(p_inf * 1.01) < math.inf


def test_mass_at_infinity_is_rounded_up():
    """δ at a huge ε is the composed P(L = ∞) = 1 − (1 − p_∞)^k; its float
    evaluation must not land even an ulp below the exact value (mpmath)."""
    import mpmath as mp
    rng = np.random.default_rng(3)
    for _ in range(40):
        n, k = int(rng.choice([1, 2, 3, 5, 10, 30])), int(rng.choice([2, 3, 7, 50]))
        p = float(rng.uniform(0.01, 0.99))
        mech = dpa.Composition()([dpa.BinomialMechanism(n=n, p=p)], [k])
        p_inf = max(mp.mpf(p) ** n, (1 - mp.mpf(p)) ** n)  # the larger direction
        exact = 1 - (1 - p_inf) ** k
        assert mech.get_approx_delta(60.0) >= exact
        assert mech.privacy_profile().delta(60.0) >= exact  # the grids' composed p_∞ too


def test_infinite_epsilon_has_infinite_bounds():
    """When P(L = ∞) exceeds δ no finite ε exists: the bounds say [∞, ∞]."""
    mech = dpa.Composition()([dpa.BinomialMechanism(n=10, p=0.8126903632435094)], [2])
    b = mech.get_approxDP_bounds(3e-9)
    assert b.lower == b.upper == math.inf


def test_delta_below_the_float_range_is_not_zero():
    """An exact δ of ~1e-2000 is reported as the smallest positive float, an
    upper bound, not as 0."""
    assert dpa.GaussianMechanism(sigma=0.1).get_approx_delta(1e4) > 0.0


@pytest.mark.parametrize("k, p, delta", [(10, 0.6, 1e-4), (3, 0.75, 1e-3), (25, 0.55, 1e-8)])
def test_top_atom_epsilon_is_bracketed_to_the_ulp(k, p, delta):
    """Randomized response composed k times: where only the all-truthful atom
    exceeds ε, ε(δ) = log((p^k − δ)/(1 − p)^k) (mpmath). A grid on the atoms'
    own lattice (and RDP at large α) is then exact up to rounding, which must
    err outwards: lower ≤ exact ≤ upper, and RDP ≥ exact."""
    import mpmath as mp
    with mp.workdps(40):
        exact = mp.log((mp.mpf(p) ** k - mp.mpf(delta)) / (1 - mp.mpf(p)) ** k)
        second = (k - 2) * mp.log(mp.mpf(p) / (1 - mp.mpf(p)))  # the next atom's loss
    assert exact > second  # the closed form applies
    mech = dpa.Composition()([dpa.RandomizedResponse(p)], [k])
    b = mech.get_approxDP_bounds(delta)
    assert b.lower <= exact <= b.upper
    assert mech.get_approxDP(delta, method="rdp") >= exact
