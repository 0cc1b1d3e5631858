"""Group privacy (``GroupPrivacy``) and ``ToReplaceOne``.

Additive noise: k-fold neighbours are the same mechanism with sensitivity kΔ
(compared with the mechanism built that way). Pure DP (randomized
response): the tight pair of Dong, Roth & Su 2022, Thm 2.14, checked against
an explicit chain of ε-DP laws built here in mpmath (each step verified to be
ε-DP, the end points attaining the bound), and shown to lie strictly inside
randomized response with log-odds kε (sound but loose).
"""
import math

import mpmath as mp
import numpy as np
import pytest
from oracles import float_sum_slack, gdp_delta, rr_composed_delta
from scipy import stats

from dpaccount.errors import RepresentationUnavailable
from dpaccount.mechanisms.discrete import (DiscreteGaussianMechanism, DiscreteLaplaceMechanism,
                                           ExponentialMechanism, PureDPMechanism)
from dpaccount.mechanisms.standard import (BinomialMechanism, GaussianMechanism, GDPMechanism,
                                           LaplaceMechanism, RandomizedResponse)
from dpaccount.relations import REPLACE_ONE
from dpaccount.transformers.composition import Composition
from dpaccount.transformers.group_privacy import GroupPrivacy, ToReplaceOne
from dpaccount.transformers.poisson_sampling import PoissonSampling
from dpaccount.transformers.subset_sampling import SubsetSampling

EPS = [0.0, 0.1, 0.5, 1.0, 2.0, 3.0]
DELTAS = [1e-2, 1e-5]


def same_answers(ours, theirs, rel=1e-12, methods=None, exact=None):
    """Equal answers by every method of ``theirs``, within ``rel``: two routes to
    one number (e.g. a grid for μ = 3·0.4 against one for μ = 1.2) differ by
    the rounding of their inputs and of libm, which is CPU-dependent, so they
    are compared two-sided. The safe direction is asserted only against the
    ``exact`` δ(ε) (mpmath), where one is given."""
    for method in methods or theirs.available_methods():
        a, b = ours.get_approx_delta(EPS, method=method), theirs.get_approx_delta(EPS, method=method)
        np.testing.assert_allclose(a, b, rtol=rel, atol=1e-15)
        if exact is not None:
            assert all(x >= exact(e) for x, e in zip(a, EPS)), method
        np.testing.assert_allclose(ours.get_approxDP(DELTAS, method=method),
                                   theirs.get_approxDP(DELTAS, method=method), rtol=rel)


# ---------------------------------------------------------------- additive noise
@pytest.mark.parametrize("k", [1, 2, 5])
def test_gaussian_is_sensitivity_k(k):
    ours = GroupPrivacy()(GaussianMechanism(1.7), k)
    same_answers(ours, GaussianMechanism(1.7, sensitivity=k))
    alphas = [1.5, 2.0, 10.0]
    np.testing.assert_allclose(ours.get_RDP(alphas), GaussianMechanism(1.7, k).get_RDP(alphas), rtol=1e-14)


@pytest.mark.parametrize("k", [2, 3])
def test_gdp_laplace_and_discrete_noise_scale_their_sensitivity(k):
    same_answers(GroupPrivacy()(GDPMechanism(0.4), k), GDPMechanism(0.4 * k),
                 exact=lambda e: float(gdp_delta(e, mp.mpf(0.4) * k)))
    same_answers(GroupPrivacy()(LaplaceMechanism(2.0, 0.5), k), LaplaceMechanism(2.0, 0.5 * k),
                 methods=["analytic", "rdp"])
    same_answers(GroupPrivacy()(DiscreteLaplaceMechanism(1.5), k), DiscreteLaplaceMechanism(1.5, k),
                 methods=["analytic", "rdp"])
    same_answers(GroupPrivacy()(DiscreteGaussianMechanism(3.0), k), DiscreteGaussianMechanism(3.0, k),
                 methods=["analytic"])


def binomial_worst(n, theta, shifts, eps):
    """max over count shifts s of δ(ε) of (s + Bin(n, θ), Bin(n, θ)), from the pmfs."""
    x = np.arange(-5, n + 6)
    worst = 0.0
    for s in shifts:
        p, q = stats.binom.pmf(x - s, n, theta), stats.binom.pmf(x, n, theta)
        worst = max(worst, float(np.maximum(p - math.exp(eps) * q, 0).sum()))
    return worst


def test_binomial_groups_cover_both_signs():
    """Two add/remove steps of a count move it by s ∈ {−2, …, 2} (remove one
    record, add another): the group answer is the worst shift, exactly."""
    n, theta = 10, 0.4
    ours = GroupPrivacy()(BinomialMechanism(n, theta), 2)
    exact = [binomial_worst(n, theta, (-2, -1, 1, 2), e) for e in EPS]
    got = ours.get_approx_delta(EPS)
    # exact: a float brute force over n + 11 outcomes (a second route): within its rounding
    assert np.all(got >= np.array(exact) - float_sum_slack(n + 11))
    np.testing.assert_allclose(got, exact, atol=1e-11)
    # one step keeps the mechanism's own (one-sided) pairs
    same_answers(GroupPrivacy()(BinomialMechanism(n, theta), 1), BinomialMechanism(n, theta), rel=0)


# ---------------------------------------------------------------- pure DP
def chain_laws(eps, k):
    """P_0 … P_k: Q = U[0, 1] pushed through g^{∘j}, g(x) = min(e^ε x, 1 − e^{−ε}(1 − x)),
    on the common cells cut at c e^{−iε}, c = 1/(1 + e^ε) (mpmath)."""
    e = mp.mpf(eps)
    g = lambda x: min(mp.e ** e * x, 1 - mp.e ** (-e) * (1 - x))
    c = 1 / (1 + mp.e ** e)
    cuts = sorted({mp.mpf(0), mp.mpf(1)} | {c * mp.e ** (-i * e) for i in range(k)})
    laws = []
    for j in range(k + 1):
        def gj(x, j=j):
            for _ in range(j):
                x = g(x)
            return x
        laws.append([gj(b) - gj(a) for a, b in zip(cuts[:-1], cuts[1:])])
    return laws


def mp_hockey(p, q, eps):
    return sum(max(a - mp.e ** mp.mpf(eps) * b, 0) for a, b in zip(p, q))


@pytest.mark.parametrize("p,k", [(0.75, 2), (0.75, 3), (0.9, 4), (0.6, 5)])
def test_pure_dp_group_is_attained_by_a_chain_of_eps_dp_laws(p, k):
    eps = math.log(p / (1 - p))
    laws = chain_laws(eps, k)
    for a, b in zip(laws[:-1], laws[1:]):  # every step is ε-DP (both orders)
        for x, y in zip(a, b):
            assert abs(mp.log(x / y)) <= mp.mpf(eps) * (1 + mp.mpf(10) ** -40)
    ours = GroupPrivacy()(RandomizedResponse(p), k)
    exact = [max(mp_hockey(laws[k], laws[0], e), mp_hockey(laws[0], laws[k], e)) for e in EPS]
    got = ours.get_approx_delta(EPS)
    assert all(g >= x for g, x in zip(got, exact))  # exact: mpmath, strictly
    np.testing.assert_allclose(got, [float(x) for x in exact], rtol=1e-12, atol=1e-15)
    for alpha in (2.0, 3.5):
        d = mp.log(sum(a ** alpha * b ** (1 - alpha) for a, b in zip(laws[k], laws[0]))) / (alpha - 1)
        assert ours.get_RDP(alpha) == pytest.approx(float(d), rel=1e-12)
    # PureDP(ε) is the same class (its ε is taken as given, RR's p → ε is rounded up)
    np.testing.assert_allclose(GroupPrivacy()(PureDPMechanism(eps), k).get_approx_delta(EPS), got, rtol=1e-12)


@pytest.mark.parametrize("p,k", [(0.75, 2), (0.9, 3)])
def test_pure_dp_group_is_inside_rr_with_log_odds_k_eps(p, k):
    """The folklore kε-DP pair is sound but strictly looser wherever δ > 0;
    and per-record randomized response of k records (a k-fold product) is below ours."""
    eps = math.log(p / (1 - p))
    ours = GroupPrivacy()(RandomizedResponse(p), k).get_approx_delta(EPS)
    p_k = 1 / (1 + math.exp(-k * eps))
    folklore = RandomizedResponse(p_k).get_approx_delta(EPS)
    # two library routes (k + 1 atoms against 2): two upper bounds, each within its own rounding
    assert np.all(ours <= folklore + float_sum_slack(k + 3))
    assert ours[0] < folklore[0] - 0.01
    assert abs(ours[-1] - folklore[-1]) < 1e-12 or k * eps > EPS[-1]
    local = np.array([float(rr_composed_delta(e, p, k)) for e in EPS])
    assert np.all(ours >= local)


def test_max_loss_is_k_eps():
    p, k = 0.8, 3
    eps = math.log(4.0)
    ours = GroupPrivacy()(RandomizedResponse(p), k)
    assert ours.get_approx_delta(k * eps * (1 + 1e-9)) == 0.0
    assert ours.get_approx_delta(k * eps * (1 - 1e-3)) > 0.0


# ---------------------------------------------------------------- structure
def test_group_of_a_composition_is_the_composition_of_groups():
    g, lap = GaussianMechanism(1.5), LaplaceMechanism(2.0)
    whole = GroupPrivacy()(Composition()([g, lap], [2, 1]), 3)
    parts = Composition()([GroupPrivacy()(g, 3), GroupPrivacy()(lap, 3)], [2, 1])
    assert whole.relation == parts.relation
    np.testing.assert_allclose(whole.get_approx_delta([0.5, 2.0]), parts.get_approx_delta([0.5, 2.0]),
                               rtol=1e-12)
    np.testing.assert_allclose(whole.get_RDP([2.0, 5.0]), parts.get_RDP([2.0, 5.0]), rtol=1e-14)


def test_groups_of_groups_multiply():
    g = GaussianMechanism(2.0)
    same_answers(GroupPrivacy()(GroupPrivacy()(g, 2), 3), GroupPrivacy()(g, 6), rel=1e-12)
    rr = RandomizedResponse(0.7)
    same_answers(GroupPrivacy()(GroupPrivacy()(rr, 2), 2), GroupPrivacy()(rr, 4), rel=1e-12,
                 methods=["analytic"])


def test_to_replace_one_is_two_add_remove_steps():
    ours = ToReplaceOne()(GaussianMechanism(1.2))
    assert ours.relation is REPLACE_ONE
    same_answers(ours, GaussianMechanism(1.2, 2, relation="replace-one"))
    same_answers(ToReplaceOne()(RandomizedResponse(0.7)), GroupPrivacy()(RandomizedResponse(0.7), 2),
                 methods=["analytic"], rel=0)
    # and it feeds sampling without replacement
    assert SubsetSampling()(ours, 0.1).get_approx_delta(1.0) < ours.get_approx_delta(1.0)
    with pytest.raises(ValueError, match="replace-one"):
        ToReplaceOne()(GaussianMechanism(1.2, relation="replace-one"))


def test_to_replace_one_binomial_covers_both_signs():
    n, theta = 10, 0.4
    ours = ToReplaceOne()(BinomialMechanism(n, theta))
    exact = [binomial_worst(n, theta, (-2, -1, 1, 2), e) for e in EPS]
    np.testing.assert_allclose(ours.get_approx_delta(EPS), exact, atol=1e-11)


# ---------------------------------------------------------------- refusals
@pytest.mark.parametrize("make", [
    lambda: PoissonSampling()(GaussianMechanism(1.0), 0.1),
    lambda: SubsetSampling()(GaussianMechanism(1.0, relation="replace-one"), 0.1),
    lambda: ExponentialMechanism(1.0),
    lambda: Composition()([GaussianMechanism(1.0), PoissonSampling()(LaplaceMechanism(1.0), 0.2)], [1, 1]),
])
def test_unsupported_mechanisms_raise(make):
    with pytest.raises(RepresentationUnavailable, match="group privacy of .* is not supported"):
        GroupPrivacy()(make(), 2)


def test_validation():
    with pytest.raises(ValueError, match="k"):
        GroupPrivacy()(GaussianMechanism(1.0), 0)
    with pytest.raises((TypeError, ValueError), match="k"):
        GroupPrivacy()(GaussianMechanism(1.0), 1.5)
    with pytest.raises(TypeError, match="mechanism"):
        GroupPrivacy()("gauss", 2)
    with pytest.raises(TypeError, match="mechanism"):
        ToReplaceOne()(None)
