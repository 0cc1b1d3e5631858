"""Mixtures of Gaussians, zCDP, tree aggregation and repeat-and-select (issue 30):
each against an exact or independent value."""
import math
import pickle
import warnings

import mpmath as mp
import numpy as np
import pytest

import dpaccount as dpa
from dpaccount import (Composition, GaussianMechanism, MixtureOfGaussiansMechanism, PoissonSampling,
                       RDPFallbackWarning, RepeatAndSelect, TreeAggregation, ZCDPMechanism)
from dpaccount.mechanisms.training import tree_depth
from dpaccount.pld.pairs.mixture_gaussian import MixtureOfGaussiansPair
from dpaccount.rdp.mixture_gaussian import mixture_gaussian_rdp
from dpaccount.rdp.repeat_and_select import tnb_gamma, tnb_mean

from oracles import gdp_epsilon, normal_logpdf, subsampled_gaussian_add_delta, subsampled_gaussian_remove_delta

EPS = [-0.5, 0.0, 0.3, 1.0, 2.0, 4.0]
MOG = (2.0, [0.0, 1.0, 2.0, 3.0], [0.97, 0.02, 0.007, 0.003])


def _root(f, lo, hi, iters=300):
    """The root of an increasing f on [lo, hi] by mpmath bisection."""
    lo, hi = mp.mpf(lo), mp.mpf(hi)
    for _ in range(iters):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if f(mid) <= 0 else (lo, mid)
    return lo


def _mixture_delta(eps, sigma, cs, ps, reverse=False):
    """δ(ε) of (Σ pᵢN(cᵢ, σ²), N(0, σ²)) (or its reverse) by mpmath: the loss is monotone
    in x, so δ is P(L > ε) − e^ε Q(L > ε) at the root of ℓ(x) = ε."""
    sigma, eps = mp.mpf(sigma), mp.mpf(eps)
    cs, ps = [mp.mpf(c) for c in cs], [mp.mpf(p) for p in ps]
    loss = lambda x: mp.log(mp.fsum(p * mp.e ** ((c * x - c * c / 2) / sigma ** 2) for c, p in zip(cs, ps)))
    sf = lambda x, c: 1 - mp.ncdf((x - c) / sigma)
    cdf = lambda x, c: mp.ncdf((x - c) / sigma)
    if not reverse:  # {L > ε} = {x > t}
        if eps <= loss(-60 * sigma):
            return 1 - mp.e ** eps
        t = _root(lambda x: loss(x) - eps, -60 * sigma, 60 * sigma)
        return mp.fsum(p * sf(t, c) for c, p in zip(cs, ps)) - mp.e ** eps * sf(t, 0)
    # reverse: loss −ℓ(x), {−ℓ > ε} = {x < t} with ℓ(t) = −ε
    if -eps <= loss(-60 * sigma):
        return mp.mpf(0)
    t = _root(lambda x: loss(x) + eps, -60 * sigma, 60 * sigma)
    return cdf(t, 0) - mp.e ** eps * mp.fsum(p * cdf(t, c) for c, p in zip(cs, ps))


# ---------------------------------------------------------------- mixture of Gaussians
@pytest.mark.parametrize("q", [0.01, 0.3])
def test_mixture_pair_at_two_shifts_is_the_poisson_subsampled_gaussian(q):
    sigma = 1.1
    pair = MixtureOfGaussiansPair(sigma, [0.0, 1.0], [1 - q, q])  # the general route, forced
    for e in EPS:
        exact_rem = subsampled_gaussian_remove_delta(e, sigma, q)
        exact_add = subsampled_gaussian_add_delta(e, sigma, q)
        for got, exact in ((pair.delta(e), exact_rem), (pair.reverse().delta(e), exact_add)):
            assert got >= exact  # the safe side, against the exact value
            assert got <= exact * (1 + 1e-9) + 1e-290  # the monotone pair pads by ulps and the 1e-300 tails
    mech = MixtureOfGaussiansMechanism(sigma, [0, 1], [1 - q, q])
    poisson = PoissonSampling()(GaussianMechanism(sigma), q)
    for delta in (1e-3, 1e-6):  # the mechanism takes the Poisson pairs: one answer
        assert mech.get_approxDP(delta) == poisson.get_approxDP(delta)


def test_mixture_pair_against_mpmath_both_directions():
    sigma, cs, ps = MOG
    pair = MixtureOfGaussiansPair(sigma, cs, ps)
    for e in EPS:
        for got, reverse in ((pair.delta(e), False), (pair.reverse().delta(e), True)):
            exact = _mixture_delta(e, sigma, cs, ps, reverse)
            assert got >= exact and got <= exact * (1 + 1e-9) + 1e-290


def test_mixture_cells_sum_to_one_and_carry_the_exact_masses():
    sigma, cs, ps = MOG
    pair = MixtureOfGaussiansPair(sigma, cs, ps)
    edges = np.array([0.0, 0.2, 0.5, 1.0])  # above the least loss, log 0.97
    a, b, err_a, err_b = pair._masses(edges, True)
    # x-edges by mpmath, then the cells' exact masses
    loss = lambda x: mp.log(mp.fsum(mp.mpf(p) * mp.e ** ((c * x - mp.mpf(c) ** 2 / 2) / sigma ** 2)
                                    for c, p in zip(cs, ps)))
    xs = [_root(lambda x: loss(x) - e, -40, 40) for e in edges]
    cuts = [-mp.inf] + xs + [mp.inf]
    for i in range(len(cuts) - 1):
        exact_p = mp.fsum(p * (mp.ncdf((cuts[i + 1] - c) / sigma) - mp.ncdf((cuts[i] - c) / sigma))
                          for c, p in zip(cs, ps))
        exact_q = mp.ncdf(cuts[i + 1] / sigma) - mp.ncdf(cuts[i] / sigma)
        # the roots are within ~1 ulp of x: the cells within their error bound and that slip
        assert abs(a[i] - exact_p) <= err_a[i] + 1e-12 * exact_p
        assert abs(b[i] - exact_q) <= err_b[i] + 1e-12 * exact_q


def test_mixture_composition_interval_is_narrow_and_near_dp_accounting():
    sigma, cs, ps = MOG
    m = Composition()([MixtureOfGaussiansMechanism(sigma, cs, ps)], [200])
    b = m.get_approxDP_bounds(1e-6)
    assert b.lower <= b.upper <= b.lower * 1.001  # ≤ 0.1 % wide
    assert m.get_approxDP(1e-6) <= b.upper


@pytest.mark.mp_dps(25)
@pytest.mark.parametrize("alpha", [2, 5])
def test_mixture_rdp_is_exact_at_integer_orders_and_jensen_above_it(alpha):
    sigma, cs, ps = MOG
    exact = mp.log(mp.quad(lambda x: mp.fsum(p * mp.e ** normal_logpdf(x, c, sigma) for c, p in zip(cs, ps)) ** alpha
                           * mp.e ** ((1 - alpha) * normal_logpdf(x, 0, sigma)), [-mp.inf, 0, 3, mp.inf])) / (alpha - 1)
    got = mixture_gaussian_rdp(sigma, cs, ps, "remove")(alpha)
    terms = math.comb(alpha + 3, 3)  # the exact sum's terms; its pad is (4·terms + 8)u(|log| + 1)/(α − 1)
    assert exact <= got <= exact + (4 * terms + 16) * 2.0 ** -52 * (abs(float(exact)) * (alpha - 1) + 1) / (alpha - 1)
    assert mixture_gaussian_rdp(sigma, cs, ps, "remove")(alpha - 0.5) == got  # ⌈α⌉: monotone in α
    add_exact = mp.log(mp.quad(lambda x: mp.e ** (alpha * normal_logpdf(x, 0, sigma)) * mp.fsum(
        p * mp.e ** normal_logpdf(x, c, sigma) for c, p in zip(cs, ps)) ** (1 - alpha), [-mp.inf, 0, 3, mp.inf])) / (alpha - 1)
    assert mixture_gaussian_rdp(sigma, cs, ps, "add")(alpha) >= add_exact  # Jensen: an upper bound


def test_mixture_refuses_bad_input_with_the_parameter_named():
    with pytest.raises(ValueError, match="probs must sum to 1"):
        MixtureOfGaussiansMechanism(1.0, [0, 1], [0.5, 0.6])
    with pytest.raises(ValueError, match=r"sensitivities\[1\]"):
        MixtureOfGaussiansMechanism(1.0, [0, -1], [0.5, 0.5])
    with pytest.raises(ValueError, match="one length"):
        MixtureOfGaussiansMechanism(1.0, [0, 1], [1.0])
    with pytest.raises(TypeError, match="sensitivities"):
        MixtureOfGaussiansMechanism(1.0, "01", [1.0])
    with pytest.raises(ValueError, match="sigma"):
        MixtureOfGaussiansMechanism(0.0, [1], [1.0])


# ---------------------------------------------------------------- zCDP
@pytest.mark.parametrize("rho", [0.05, 0.5, 2.0])
def test_zcdp_is_never_below_the_gaussian_it_contains(rho):
    """N(0, 1/(2ρ)) at sensitivity 1 is ρ-zCDP: the zCDP guarantee cannot promise more."""
    mu = math.sqrt(2 * rho)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RDPFallbackWarning)
        for delta in (1e-3, 1e-5, 1e-9):
            assert ZCDPMechanism(rho).get_approxDP(delta) >= gdp_epsilon(delta, mu)
    assert ZCDPMechanism(rho, xi=0.1).get_RDP(3.0) == pytest.approx(0.1 + 3 * rho, rel=1e-15)


def test_a_composition_with_a_zcdp_part_says_it_falls_back_to_rdp():
    m = Composition()([PoissonSampling()(GaussianMechanism(1.1), 0.01), ZCDPMechanism(0.01)], [100, 1])
    assert m.available_methods() == ["rdp"]
    with pytest.warns(RDPFallbackWarning, match="RDP"):
        eps = m.get_approxDP(1e-5)
    rdp_only = Composition()([PoissonSampling()(GaussianMechanism(1.1), 0.01)], [100]).get_approxDP(1e-5, method="rdp")
    assert eps > rdp_only  # the zCDP part costs something


# ---------------------------------------------------------------- tree aggregation
def _completed_nodes_holding(step, steps):
    """Dyadic intervals [k2^j + 1, (k + 1)2^j] within [1, steps] that contain ``step`` (brute force)."""
    count, size = 0, 1
    while size <= steps:
        k = (step - 1) // size
        if (k + 1) * size <= steps:
            count += 1
        size *= 2
    return count


def test_tree_depth_is_the_most_nodes_any_step_is_in():
    for steps in range(1, 300):
        assert tree_depth(steps) == max(_completed_nodes_holding(s, steps) for s in range(1, steps + 1))
        assert tree_depth(steps) == math.ceil(math.log2(steps + 1))


@pytest.mark.parametrize("z,steps,epochs", [(5.0, 1000, 1), (1.3, 7, 3)])
def test_tree_aggregation_is_its_gaussian(z, steps, epochs):
    tree = TreeAggregation(z, steps, epochs)
    gauss = GaussianMechanism(z, sensitivity=math.sqrt(epochs * tree_depth(steps)))  # √ to the nearest float
    for delta in (1e-5, 1e-9):  # the tree's √ is rounded up: at or one ulp of μ above the Gaussian
        assert gauss.get_approxDP(delta) <= tree.get_approxDP(delta) <= gauss.get_approxDP(delta) * (1 + 1e-12)
        assert tree.get_approxDP(delta) >= gdp_epsilon(delta, mp.sqrt(epochs * tree_depth(steps)) / z)
    assert tree.get_RDP(4.0) == pytest.approx(gauss.get_RDP(4.0), rel=1e-14) and tree.get_RDP(4.0) >= gauss.get_RDP(4.0)


# ---------------------------------------------------------------- repeat and select
def _tnb_mean_by_series(gamma, shape, terms=900):  # (1 − γ)^900 ≤ 0.9^900 < 1e-40
    """E[K] from the pmf P(K = k) ∝ (1 − γ)^k Γ(k + η)/(Γ(η) k!) (η > 0), ∝ (1 − γ)^k / k (η = 0)."""
    g, eta = mp.mpf(gamma), mp.mpf(shape)
    if shape == 0:
        w = [(1 - g) ** k / k for k in range(1, terms)]
    else:
        w = [(1 - g) ** k * mp.gamma(k + eta) / (mp.gamma(eta) * mp.factorial(k)) for k in range(1, terms)]
    return mp.fsum(k * x for k, x in zip(range(1, terms), w)) / mp.fsum(w)


@pytest.mark.mp_dps(30)
@pytest.mark.parametrize("shape", [0.0, 0.5, 1.0, 2.0])
def test_truncated_negative_binomial_mean_and_its_inverse(shape):
    for gamma in (0.1, 0.3, 0.7):
        assert tnb_mean(gamma, shape) == pytest.approx(float(_tnb_mean_by_series(gamma, shape)), rel=1e-12)
    for mean in (1.5, 10.0, 100.0):
        g = tnb_gamma(shape, mean)
        assert tnb_mean(g, shape) >= mean  # rounded down: the bound only rises
        assert g == pytest.approx(tnb_gamma(shape, mean), rel=0) and tnb_mean(g * (1 + 1e-9), shape) < mean * (1 + 1e-6)


def test_repeat_and_select_of_one_run_is_the_run():
    base = Composition()([PoissonSampling()(GaussianMechanism(1.0), 0.01)], [200])
    once = RepeatAndSelect()(base, 1, 1)
    assert once.available_methods() == base.available_methods()
    for delta in (1e-5, 1e-8):
        assert once.get_approxDP(delta) == base.get_approxDP(delta)


def test_repeat_and_select_costs_more_than_one_run_and_grows_with_the_mean():
    base = Composition()([PoissonSampling()(GaussianMechanism(1.0), 0.01)], [200])
    one = base.get_approxDP(1e-5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RDPFallbackWarning)
        for shape in (0.0, 1.0, math.inf):
            eps = [RepeatAndSelect()(base, mean, shape).get_approxDP(1e-5) for mean in (2, 10, 50)]
            assert one < eps[0] < eps[1] < eps[2]


def test_repeat_and_select_refuses_bad_input():
    base = GaussianMechanism(1.0)
    with pytest.raises(ValueError, match="mean"):
        RepeatAndSelect()(base, 0.5, 1)
    with pytest.raises(ValueError, match="shape"):
        RepeatAndSelect()(base, 2, -1)
    with pytest.raises(TypeError, match="mechanism"):
        RepeatAndSelect()("gaussian", 2, 1)


# ---------------------------------------------------------------- values
@pytest.mark.parametrize("make", [
    lambda: MixtureOfGaussiansMechanism(*MOG),
    lambda: ZCDPMechanism(0.3, 0.01),
    lambda: TreeAggregation(3.0, 50, 2),
    lambda: RepeatAndSelect()(GaussianMechanism(2.0), 3, math.inf),
    lambda: RepeatAndSelect()(GaussianMechanism(2.0), 3, 0.5),
])
def test_values_round_trip_through_specs_and_pickle(make):
    m = make()
    assert dpa.from_spec(m.to_spec()) == m and pickle.loads(pickle.dumps(m)) == m
    assert hash(dpa.from_spec(m.to_spec())) == hash(m)


def test_mixture_trade_off_curve_brackets_the_neyman_pearson_curve():
    """One use, both orders (the curve is their lower envelope): the most powerful tests
    threshold x — α = Q(x > t), β = P(x ≤ t); and α = P(x < t), β = Q(x ≥ t)."""
    sigma, cs, ps = MOG
    m = MixtureOfGaussiansMechanism(sigma, cs, ps)
    mix_cdf = lambda t: mp.fsum(mp.mpf(p) * mp.ncdf((t - c) / sigma) for c, p in zip(cs, ps))
    for alpha in (0.01, 0.1, 0.5):
        t = sigma * mp.sqrt(2) * mp.erfinv(1 - 2 * mp.mpf(alpha))  # 1 − Φ(t/σ) = α
        t2 = _root(lambda x: mix_cdf(x) - alpha, -40, 40)            # P(x < t2) = α
        beta = min(mix_cdf(t), 1 - mp.ncdf(t2 / sigma))
        b = m.get_fDP_bounds(alpha)
        assert b.lower <= beta <= b.upper and m.get_fDP(alpha) <= beta


@pytest.mark.parametrize("lam", [1.5, 4.0, 30.0])
def test_repeat_and_select_is_at_least_papernot_steinke(lam):
    """A Gaussian base (RDP λμ²/2) and a geometric count (γ = 1/mean): Thm 2 with the best
    λ̂ in closed form, (λ̂ − 1)μ²/2 + log(1/γ)/λ̂ least at λ̂ = √(2 log(1/γ))/μ, and the
    monotone envelope least at λ′ = max(λ, 1 + √(2 log E[K])/μ) (the bound is convex in λ′)."""
    mu, mean = mp.mpf("0.5"), mp.mpf(10)
    log_inv_gamma = mp.log(mean)
    hat = max(mp.sqrt(2 * log_inv_gamma) / mu, 1)
    const = 2 * ((hat - 1) * mu ** 2 / 2 + log_inv_gamma / hat)
    raw = lambda x: x * mu ** 2 / 2 + mp.log(mean) / (x - 1) + const
    exact = raw(max(mp.mpf(lam), 1 + mp.sqrt(2 * mp.log(mean)) / mu))
    got = RepeatAndSelect()(GaussianMechanism(2.0), 10, 1).get_RDP(lam)
    assert exact * (1 - 1e-12) <= got <= raw(mp.mpf(lam)) * (1 + 1e-12)
