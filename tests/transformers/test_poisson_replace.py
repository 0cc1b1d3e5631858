"""Poisson sampling under replace-one (issue 28 item 7): the Gaussian mixture
pair of Lebeda, Regehr, Kamath & Steinke (2024) against mpmath quadrature of
the exact pair, and compositions against attained adversaries."""
import mpmath as mp
import numpy as np
import pytest

from dpaccount import (Composition, GaussianMechanism, LaplaceMechanism, PoissonSampling, RepresentationUnavailable,
                       ToReplaceOne)
from dpaccount.pld.pairs.poisson_replace import PoissonReplaceGaussianPair
from oracles import hockey_stick_quad, normal_logpdf


def mixture_logpdf(q, shift, sigma):
    """log((1 − q)N(0, σ²) + qN(shift, σ²)) at x, in mpmath."""
    return lambda x: mp.log((1 - q) * mp.e ** normal_logpdf(x, 0, sigma) + q * mp.e ** normal_logpdf(x, shift, sigma))


def exact_delta(eps, sigma, q, lo=-40.0, hi=40.0):
    """δ(ε) of the replace-one pair by quadrature, split where the integrand's kink lies."""
    logp, logq = mixture_logpdf(mp.mpf(q), 1, sigma), mixture_logpdf(mp.mpf(q), -1, sigma)
    kink = mp.findroot(lambda x: logp(x) - logq(x) - eps, 0)
    return hockey_stick_quad(eps, logp, logq, lo * sigma, hi * sigma, (kink,))


@pytest.mark.mp_dps(30)
@pytest.mark.parametrize("sigma,q", [(2.0, 0.8), (0.8, 0.01), (1.0, 0.3)])
def test_one_step_is_the_mixture_pair(sigma, q):
    mech = ToReplaceOne()(PoissonSampling()(GaussianMechanism(sigma), q))
    pair = mech.pairs.remove[0][0]
    assert mech.pairs.add[0][0] == pair
    for eps in (-0.7, 0.0, 0.4, 1.5, 3.0):
        exact = exact_delta(eps, sigma, q)
        up, low = pair.delta(eps), pair.delta(eps, upper=False)
        assert low <= exact <= up, (eps, low, exact, up)
        assert up <= exact * (1 + 1e-10) + 1e-300
        if eps >= 0:
            got = mech.get_approx_delta(eps)
            assert exact <= got <= exact * (1 + 1e-3)


@pytest.mark.mp_dps(30)
def test_cells_are_the_three_normal_mixtures():
    pair = PoissonReplaceGaussianPair(0.5, 0.8)
    edges = np.array([-2.0, -0.3, 0.0, 0.9, 2.5])
    a, b, ea, eb = pair._masses(edges, True)
    q, mu = mp.mpf(0.8), mp.mpf(0.5)
    logp, logq = mixture_logpdf(q, mu, 1), mixture_logpdf(q, -mu, 1)
    xs = [mp.findroot(lambda x, e=e: logp(x) - logq(x) - e, 0) for e in edges]
    cdf = lambda x, m: mp.ncdf(x - m)
    bounds = [-mp.inf] + xs + [mp.inf]
    for j in range(len(bounds) - 1):
        lo, hi = bounds[j], bounds[j + 1]
        pa = (1 - q) * (cdf(hi, 0) - cdf(lo, 0)) + q * (cdf(hi, mu) - cdf(lo, mu))
        pb = (1 - q) * (cdf(hi, 0) - cdf(lo, 0)) + q * (cdf(hi, -mu) - cdf(lo, -mu))
        assert abs(a[j] - pa) <= ea[j] and abs(b[j] - pb) <= eb[j]
        assert ea[j] <= 1e-12 * a[j]


def test_composed_answer_is_above_attained_adversaries():
    sigma, q, steps, delta = 2.0, 0.8, 10, 1e-5
    sampled = PoissonSampling()(GaussianMechanism(sigma), q)
    replace = Composition()([ToReplaceOne()(sampled)], [steps])
    got = replace.get_approxDP(delta)
    # adversary 1: y is a record that moves the query by 0 (the add/remove remove pair, exact)
    remove_only = Composition()([sampled], [steps]).get_approxDP_bounds(delta)
    assert got > remove_only.upper
    # adversary 2: x and y move the query by +1 and −1 (this pair: attained); its
    # certified lower end, and dp_accounting's optimistic estimate of the same pair
    bounds = replace.get_approxDP_bounds(delta)
    assert bounds.lower <= got and got <= bounds.lower * (1 + 1e-3)
    pld = pytest.importorskip("dp_accounting.pld.privacy_loss_distribution")
    nr = pytest.importorskip("dp_accounting").NeighboringRelation
    peer = pld.from_gaussian_mechanism(sigma, sampling_prob=q, pessimistic_estimate=False,
                                       value_discretization_interval=1e-4,
                                       neighboring_relation=nr.REPLACE_ONE).self_compose(steps)
    assert got >= peer.get_epsilon_for_delta(delta)
    # and the one-sided group-of-two bound (sensitivity 2, no sampling) is above it
    assert got < Composition()([ToReplaceOne()(GaussianMechanism(sigma))], [steps]).get_approxDP(delta)


def test_other_bases_and_edge_rates():
    with pytest.raises(RepresentationUnavailable, match="Gaussian bases only"):
        ToReplaceOne()(PoissonSampling()(LaplaceMechanism(1.0), 0.5))
    # q = 1: the Gaussian of sensitivity 2; q = 0: the record is never used
    full = ToReplaceOne()(PoissonSampling()(GaussianMechanism(2.0), 1.0)).get_approxDP(1e-5)
    assert full == pytest.approx(ToReplaceOne()(GaussianMechanism(2.0)).get_approxDP(1e-5), rel=1e-6)
    assert ToReplaceOne()(PoissonSampling()(GaussianMechanism(2.0), 0.0)).get_approx_delta(0.0) == 0.0
