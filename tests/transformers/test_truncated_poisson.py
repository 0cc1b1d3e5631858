"""Truncated Poisson sampling (``TruncatedPoissonSampling``) against brute force and mpmath.

Brute force: n records with values in {−1, 0, 1} (x is one of them), every
subset S of the records drawn with probability q^|S|(1−q)^(n−|S|), a batch of
|S| > B records cut to a uniformly drawn B-subset, and the base "sum of the
batch + Bin(trials, θ)" (add/remove sensitivity 1, replace-one 2) on it. The
output laws of D' (with x) and D (without) are enumerated exactly (float sums
of a few thousand non-negative terms), and δ(ε) in both orders is compared
with the library: never below it. mpmath: the Gaussian pair's curve
(1 − w)·δ_Poisson(q, μ) + w·δ_Poisson(η, 2μ), w and η as exact binomial sums.
"""
import itertools
import math
import pickle

import mpmath as mp
import numpy as np
import pytest
from oracles import float_sum_slack, subsampled_gaussian_add_delta, subsampled_gaussian_remove_delta
from scipy import stats

from dpaccount import (Composition, GaussianMechanism, LaplaceMechanism, PoissonSampling, RandomizedResponse,
                       SubsetSampling, TruncatedPoissonSampling, dump, load)
from dpaccount.errors import RepresentationUnavailable
from dpaccount.mechanisms.standard import BinomialMechanism
from dpaccount.pld.pairs.truncated_poisson import _REL, inclusion_probability, truncation_weights

EPS = [0.0, 0.1, 0.3, 0.7, 1.5]
TRIALS, THETA = 4, 0.5
ORACLE_SLACK = float_sum_slack(4096)


# ---------------------------------------------------------------- brute force
def batch_law(batch):
    """sum(batch) + Bin(TRIALS, θ) on the outputs −n..n + TRIALS (index offset n)."""
    return int(sum(batch)), stats.binom.pmf(np.arange(TRIALS + 1), TRIALS, THETA)


def truncated_law(records, q, cap, size):
    """Output law (array over −size..size + TRIALS) of the base on the truncated Poisson batch."""
    out = np.zeros(2 * size + TRIALS + 1)
    n = len(records)
    for mask in itertools.product((0, 1), repeat=n):
        chosen = [r for r, m in zip(records, mask) if m]
        weight = q ** len(chosen) * (1 - q) ** (n - len(chosen))
        batches = list(itertools.combinations(chosen, cap)) if len(chosen) > cap else [chosen]
        for batch in batches:
            s, noise = batch_law(batch)
            out[size + s:size + s + TRIALS + 1] += weight / len(batches) * noise
    return out


def hockey(p, q, eps):
    return float(np.maximum(p - math.exp(eps) * q, 0.0).sum())


def worst_delta(n, q, cap, eps_list, values=(-1, 0, 1)):
    """max over datasets (others in ``values``, x = ±1) and both orders of δ(ε)."""
    worst = np.zeros(len(eps_list))
    for others in itertools.combinations_with_replacement(values, n - 1):  # the law is symmetric in the others
        for x in (-1, 1):
            with_x = truncated_law(list(others) + [x], q, cap, n)
            without = truncated_law(list(others), q, cap, n)
            for p, r in ((with_x, without), (without, with_x)):
                worst = np.maximum(worst, [hockey(p, r, e) for e in eps_list])
    return worst


def truncated_binomial(q, n, cap):
    return TruncatedPoissonSampling()(BinomialMechanism(TRIALS, THETA, 1), q, n, cap)


# ---------------------------------------------------------------- soundness
@pytest.mark.parametrize("n,q,cap", [(4, 0.5, 1), (4, 0.5, 2), (5, 0.4, 2), (5, 0.7, 3)])
def test_never_below_the_brute_force_worst_case(n, q, cap):
    exact = worst_delta(n, q, cap, EPS)
    mech = truncated_binomial(q, n, cap)
    ours = mech.get_approx_delta(EPS)
    assert np.all(ours >= exact - ORACLE_SLACK), (ours, exact)
    pld = mech.get_approx_delta_bounds(EPS, method="pld", accuracy=1e-2)
    assert np.all(pld.upper >= exact - ORACLE_SLACK)


def test_the_displacement_is_real_truncation_can_cost_more_than_poisson():
    """Others at −1, x at +1, B = 1: when the batch is full x displaces a −1, the sum
    moves by 2. The brute-force δ exceeds plain Poisson sampling's bound at some ε: a
    truncated analysis that only lowers the rate (to q') would under-report."""
    n, q, cap = 4, 0.5, 1
    exact = worst_delta(n, q, cap, EPS)
    poisson = PoissonSampling()(BinomialMechanism(TRIALS, THETA, 1), q).get_approx_delta(EPS)
    assert np.any(exact > poisson * (1 + 1e-6) + 1e-12)
    assert np.all(truncated_binomial(q, n, cap).get_approx_delta(EPS) >= exact - ORACLE_SLACK)


def test_no_truncation_possible_is_poisson_sampling():
    """B ≥ n: the batch is never cut, the mechanism's pairs are Poisson sampling's."""
    g = GaussianMechanism(sigma=1.3)
    for cap in (10, 11, 50):
        t = TruncatedPoissonSampling()(g, 0.3, 10, cap)
        p = PoissonSampling()(g, 0.3)
        assert t.pairs == p.pairs
        assert t.get_approxDP(1e-6) == p.get_approxDP(1e-6)
        c1, c2 = Composition()([t], [20]), Composition()([p], [20])
        assert c1.get_approxDP(1e-6) == c2.get_approxDP(1e-6)


def test_a_huge_cap_changes_next_to_nothing():
    """B far above nq: w is below 1e-200, so the two mechanisms' exact ε agree to far below
    the accuracy 1e-3 that each upper bound is within (the truncated pair is Poisson's with
    the weights' ~1e-16 rounding on both components: its grid, not a spill at +∞)."""
    g = GaussianMechanism(sigma=1.1)
    t = Composition()([TruncatedPoissonSampling()(g, 0.01, 10_000, 2000)], [100]).get_approxDP(1e-6)
    p = Composition()([PoissonSampling()(g, 0.01)], [100]).get_approxDP(1e-6)
    assert p * (1 - 1e-3) <= t <= p * (1 + 1e-3)


# ---------------------------------------------------------------- the Gaussian against mpmath
def exact_weights(n, q, cap):
    """w = P(Bin(n−1, q) ≥ B) and η = E[qB/(N+1) | N ≥ B], as exact sums (mpmath, 50 digits)."""
    with mp.workdps(50):
        q = mp.mpf(q)
        pmf = lambda k: mp.binomial(n - 1, k) * q ** k * (1 - q) ** (n - 1 - k)
        w = mp.fsum(pmf(k) for k in range(cap, n))
        m = mp.fsum(pmf(k) * q * cap / (k + 1) for k in range(cap, n))
        return w, m / w


@pytest.mark.parametrize("n,q,cap", [(50, 0.1, 5), (200, 0.05, 12), (1000, 0.01, 10), (30, 0.5, 20)])
def test_weights_against_exact_sums(n, q, cap):
    w, eta = exact_weights(n, q, cap)
    w_low, w_high, eta_high = truncation_weights(q, n, cap)
    assert w_low <= w <= w_high and float(eta) <= eta_high
    assert w_high - w_low <= 1e-9 * w and eta_high <= float(eta) * (1 + 1e-9)
    q_prime = (1 - w) * q + w * eta
    assert inclusion_probability(q, n, cap) == pytest.approx(float(q_prime), rel=1e-12)


@pytest.mark.parametrize("n,q,cap,sigma", [(50, 0.1, 5, 1.0), (200, 0.05, 12, 0.8), (40, 0.2, 6, 2.0)])
def test_gaussian_single_step_against_mpmath(n, q, cap, sigma):
    """Our curve is (1 − w)·Poisson(q, 1/σ) + w·Poisson(η, 2/σ), both directions, up to rounding."""
    w, eta = exact_weights(n, q, cap)
    eps = [0.0, 0.2, 0.5, 1.0, 2.0]
    exact = []
    with mp.workdps(30):
        for e in eps:
            rem = (1 - w) * subsampled_gaussian_remove_delta(e, sigma, q) + w * subsampled_gaussian_remove_delta(
                e, sigma / 2, eta)
            add = (1 - w) * subsampled_gaussian_add_delta(e, sigma, q) + w * subsampled_gaussian_add_delta(
                e, sigma / 2, eta)
            exact.append(float(max(rem, add)))
    mech = TruncatedPoissonSampling()(GaussianMechanism(sigma=sigma), q, n, cap)
    assert mech.available_methods()[0] == "analytic"
    ours = mech.get_approx_delta(eps)
    assert np.all(ours >= np.array(exact))
    # the spill: w's bracket, 2·_REL·w wide (pld/pairs/truncated_poisson.py), and a few ulps
    np.testing.assert_allclose(ours, exact, rtol=1e-9, atol=2.1 * _REL * float(w) + 1e-15)
    b = mech.get_approx_delta_bounds(eps, method="pld", accuracy=1e-3)
    # the mixture reveals the coin: not attained; the lower end is Poisson sampling at q' (the
    # instance where the others are 0), against mpmath
    with mp.workdps(30):
        qp = (1 - w) * q + w * eta
        inst = np.array([float(max(subsampled_gaussian_remove_delta(e, sigma, qp),
                                   subsampled_gaussian_add_delta(e, sigma, qp))) for e in eps])
    assert b.lower_of == "mechanism"
    assert np.all(b.lower <= inst * (1 + 1e-9) + 1e-15) and np.all(b.lower >= inst * (1 - 2e-3)), (b.lower, inst)
    assert np.all(np.array(exact) <= b.upper)
    low = mech.privacy_profile(1e-3).delta_lower(np.array(eps))  # the pair's own lower bound
    assert np.all(low <= np.array(exact) + 1e-15)


def test_composition_never_below_the_brute_force():
    """Two steps of a finite base: the default answer is ≥ the brute-force worst case
    (products of the laws, enumerated) of the same dataset in both steps."""
    n, q, cap = 5, 0.5, 2
    mech = Composition()([truncated_binomial(q, n, cap)], [2])
    exact = worst_delta_composed(n, q, cap, [0.2, 0.6, 1.2], 2)
    ours = mech.get_approx_delta([0.2, 0.6, 1.2])
    assert np.all(ours >= exact - ORACLE_SLACK)


def worst_delta_composed(n, q, cap, eps_list, steps):
    """δ(ε) of ``steps`` independent runs, worst over the datasets and orders (brute force)."""
    worst = np.zeros(len(eps_list))
    for others in itertools.combinations_with_replacement((-1, 0, 1), n - 1):
        for x in (-1, 1):
            a, b = truncated_law(list(others) + [x], q, cap, n), truncated_law(list(others), q, cap, n)
            for p, r in ((a, b), (b, a)):
                pp, rr = np.array([1.0]), np.array([1.0])
                for _ in range(steps):
                    pp, rr = np.outer(pp, p).ravel(), np.outer(rr, r).ravel()
                worst = np.maximum(worst, [hockey(pp, rr, e) for e in eps_list])
    return worst


def test_tighter_than_dp_accounting_on_its_own_event():
    """dp_accounting's second component (the replace-one subsampled Gaussian at σ/2)
    dominates ours: our answer is never above its mixture's (computed here from its formula)."""
    n, q, cap, sigma = 200, 0.05, 12, 1.0
    w, eta = (float(x) for x in exact_weights(n, q, cap))
    eps = [0.5, 1.0, 2.0]
    ours = TruncatedPoissonSampling()(GaussianMechanism(sigma=sigma), q, n, cap).get_approx_delta(eps)
    # replace-one subsampled pair ((1−η)N(0) + ηN(−1), (1−η)N(0) + ηN(1)) at σ/2, by quadrature
    s = sigma / 2
    with mp.workdps(20):
        for e, o in zip(eps, ours):
            dens = lambda x, m: mp.npdf(x, m, s)
            f = lambda x: max((1 - eta) * dens(x, 0) + eta * dens(x, -1)
                              - mp.e ** e * ((1 - eta) * dens(x, 0) + eta * dens(x, 1)), 0)
            theirs = (1 - w) * max(subsampled_gaussian_remove_delta(e, sigma, q),
                                   subsampled_gaussian_add_delta(e, sigma, q)) + w * mp.quad(f, [-12, -1, 0, 1, 12])
            assert o <= float(theirs) * (1 + 1e-9)


# ---------------------------------------------------------------- a mechanism like the others
def test_value_semantics_spec_and_pickle(tmp_path):
    m = TruncatedPoissonSampling()(GaussianMechanism(sigma=1.1), 256 / 60000, 60000, 300)
    assert m == TruncatedPoissonSampling()(GaussianMechanism(sigma=1.1), 256 / 60000, 60000, 300)
    assert m != TruncatedPoissonSampling()(GaussianMechanism(sigma=1.1), 256 / 60000, 60000, 301)
    assert hash(m) == hash(pickle.loads(pickle.dumps(m)))
    assert pickle.loads(pickle.dumps(m)) == m
    path = tmp_path / "m.json"
    dump(Composition()([m], [7]), path)
    back = load(path)
    assert back == Composition()([m], [7])
    assert back.get_approxDP(1e-5) == Composition()([m], [7]).get_approxDP(1e-5)


def test_fdp_and_calibrate():
    from dpaccount import calibrate
    m = TruncatedPoissonSampling()(GaussianMechanism(sigma=1.0), 0.05, 200, 12)
    curve = m.get_fDP([0.01, 0.1, 0.5])
    assert np.all(np.diff(curve) < 0) and np.all((curve >= 0) & (curve <= 1))
    sigma = calibrate(lambda s: Composition()([TruncatedPoissonSampling()(GaussianMechanism(sigma=s), 0.05, 200, 12)],
                                              [10]), eps=2.0, delta=1e-5, bounds=(0.3, 20.0))
    eps = Composition()([TruncatedPoissonSampling()(GaussianMechanism(sigma=sigma), 0.05, 200, 12)],
                        [10]).get_approxDP(1e-5)
    assert eps <= 2.0


def test_bad_input_is_refused_by_name():
    g = GaussianMechanism(sigma=1.0)
    with pytest.raises(ValueError, match="q"):
        TruncatedPoissonSampling()(g, 1.5, 100, 10)
    with pytest.raises(ValueError, match="dataset_size"):
        TruncatedPoissonSampling()(g, 0.1, 0, 10)
    with pytest.raises(ValueError, match="max_batch_size"):
        TruncatedPoissonSampling()(g, 0.1, 100, 0)
    with pytest.raises(TypeError, match="max_batch_size"):
        TruncatedPoissonSampling()(g, 0.1, 100, 2.5j)
    with pytest.raises(ValueError, match="mechanism"):
        TruncatedPoissonSampling()(SubsetSampling()(RandomizedResponse(0.7, relation="replace-one"), 0.1),
                                   0.1, 100, 10)


def test_a_base_without_a_replace_one_rule_has_no_pairs():
    """Poisson sampling of a Poisson-sampled Laplace mechanism: no replace-one rule (only the
    Poisson-sampled Gaussian has one, ``pld/pairs/poisson_replace.py``), so no pairs."""
    inner = PoissonSampling()(LaplaceMechanism(b=1.0), 0.5)
    m = TruncatedPoissonSampling()(inner, 0.1, 100, 5)
    with pytest.raises(RepresentationUnavailable, match="replace-one pair"):
        m.pairs


@pytest.mark.parametrize("n,q,cap,sigma", [(50, 0.1, 5, 1.0), (200, 0.05, 12, 2.0)])
def test_gaussian_rdp_against_binomial_sums(n, q, cap, sigma):
    """Integer α: E_Q[(P/Q)^α] of each component as the binomial sum
    Σ_k C(α,k)(1−r)^{α−k} r^k e^{k(k−1)μ²/2}, mixed with the exact weights (mpmath)."""
    w, eta = exact_weights(n, q, cap)
    mech = TruncatedPoissonSampling()(GaussianMechanism(sigma=sigma), q, n, cap)
    with mp.workdps(50):
        def moment(r, mu, a):
            return mp.fsum(mp.binomial(a, k) * (1 - r) ** (a - k) * r ** k * mp.e ** (k * (k - 1) * mu ** 2 / 2)
                           for k in range(a + 1))
        for a in (2, 3, 8, 20):
            exact = mp.log((1 - w) * moment(mp.mpf(q), 1 / mp.mpf(sigma), a)
                           + w * moment(eta, 2 / mp.mpf(sigma), a)) / (a - 1)
            ours = mech.get_RDP(a)
            assert ours >= float(exact)
            assert ours == pytest.approx(float(exact), rel=1e-9)


@pytest.mark.slow
def test_never_above_dp_accounting_on_its_truncated_event():
    """dp_accounting 0.6's PLD accountant on ``TruncatedSubsampledGaussianDpEvent`` (its
    default interval 1e-4, a pessimistic estimate of a looser pair): ours is below (~12 s)."""
    dp_accounting = pytest.importorskip("dp_accounting")
    n, q, cap, sigma, steps = 2000, 0.05, 110, 1.0, 10
    acc = dp_accounting.pld.PLDAccountant()
    acc.compose(dp_accounting.TruncatedSubsampledGaussianDpEvent(n, q, cap, sigma), steps)
    theirs = acc.get_epsilon(1e-5)
    ours = Composition()([TruncatedPoissonSampling()(GaussianMechanism(sigma=sigma), q, n, cap)],
                         [steps]).get_approxDP(1e-5)
    assert ours <= theirs  # 5.996 against 6.089 (2026-11-26)


# ---------------------------------------------------------------- the lower end
@pytest.mark.parametrize("n,q,cap", [(4, 0.5, 1), (5, 0.4, 2), (6, 0.7, 3)])
def test_lower_end_is_the_zero_others_instance(n, q, cap):
    """The lower end's witness is the instance where the others are 0 (brute force: x = 1,
    both orders): never above it, nor above the brute-force worst case, and at it up to the
    accuracy; the interval holds the worst case (issue 27: a lower end of the mechanism)."""
    with_x, without = truncated_law([0] * (n - 1) + [1], q, cap, n), truncated_law([0] * (n - 1), q, cap, n)
    inst = np.array([max(hockey(with_x, without, e), hockey(without, with_x, e)) for e in EPS])
    worst = worst_delta(n, q, cap, EPS)
    b = truncated_binomial(q, n, cap).get_approx_delta_bounds(EPS, method="pld", accuracy=1e-3)
    assert b.lower_of == "mechanism"
    assert np.all(b.lower <= inst + ORACLE_SLACK) and np.all(b.lower <= worst + ORACLE_SLACK), (b.lower, inst)
    assert np.all(b.lower >= inst * (1 - 2e-3) - ORACLE_SLACK), (b.lower, inst)
    assert np.all(worst <= b.upper + ORACLE_SLACK)


def test_lower_rate_is_below_the_exact_inclusion_probability():
    for n, q, cap in ((50, 0.1, 5), (1000, 0.01, 10), (30, 0.5, 20)):
        w, eta = exact_weights(n, q, cap)
        exact = (1 - w) * q + w * eta
        low = inclusion_probability(q, n, cap, lower=True)
        assert low <= exact and low >= exact * (1 - 1e-9)


def test_a_million_steps_answer_finite_within_the_certified_interval():
    """Issue 44 defect 5: the weights' rounding (~1e-11 a step) sat at ±∞, so 10^6 steps put
    1e-5 at +∞ and ε(1e-5) = ∞; it now goes to both components' weights. The answer lies in
    the certified interval of the same query (whose lower end is attained)."""
    m = Composition()([TruncatedPoissonSampling()(GaussianMechanism(1), 0.01, 10 ** 6, 10 ** 4)], [10 ** 6])
    eps = m.get_approxDP(1e-5)
    b = m.get_approxDP_bounds(1e-5, accuracy=0.05)
    assert math.isfinite(eps) and b.lower <= eps and math.isfinite(b.upper), (eps, b)
