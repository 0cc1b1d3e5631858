"""The pure ε (``get_approxDP(0)``) of batch schemes of pure-DP bases (issue 29).

Against the supremum of the log-ratio of exactly enumerated laws (mpmath) of the
instances where the bounds are attained, and closed forms: subset sampling
(Balle, Barthe & Gaboardi 2018: log(1 + γ(e^{ε₀} − 1))), random allocation (no
amplification: the base's ε₀, k·ε₀ for k of t steps), truncated Poisson sampling
(the larger of its two Poisson components'), sampling with replacement (its pair's
closed form, above the enumerated instance). Each reported value must be ≥ the exact
one and, where the bound is tight, within 1e-9 relative (it is the closed form
rounded up by a few ulp).
"""
import itertools
import math

import mpmath as mp
import pytest

from dpaccount import (Composition, LaplaceMechanism, RandomAllocation, RandomizedResponse, SamplingWithReplacement,
                       SubsetSampling, TruncatedPoissonSampling)
from dpaccount.errors import AccuracyNotReached
from dpaccount.pld.pairs.mixture import MixturePair
from dpaccount.pld.pairs.truncated_poisson import inclusion_probability
from dpaccount.pld.pairs.with_replacement import MAX_COPIES

mp.mp.dps = 50
P_TRUE = mp.mpf("0.8")       # RandomizedResponse(0.8): the true bit with probability 0.8
EPS0 = mp.log(P_TRUE / (1 - P_TRUE))  # its pure ε, log 4


def _rr(bit, out):
    return P_TRUE if bit == out else 1 - P_TRUE


def _sup_log_ratio(p, q):
    """max over outcomes of |log(P/Q)| in both orders (the pure ε of the pair of laws)."""
    return max(max(mp.log(p[o] / q[o]), mp.log(q[o] / p[o])) for o in p)


def _pure_interval(mech):
    """(lower, upper) of ``get_approxDP_bounds(0)``, also where it is wider than asked
    (an unattained pair: the gap is the analysis's)."""
    try:
        got = mech.get_approxDP_bounds(0)
    except AccuracyNotReached as err:
        got = err.bounds
    return got.lower, got.upper


def _close_above(got, exact):
    assert got >= exact
    assert got <= exact * (1 + mp.mpf("1e-9"))


def _subset_law(bits, m):
    """The law of the number of ones among randomized responses to the bits of a uniform
    m-subset (a replace-one mechanism of ε₀ on batches)."""
    law = {}
    batches = list(itertools.combinations(range(len(bits)), m))
    for batch in batches:
        for outs in itertools.product((0, 1), repeat=m):
            mass = mp.fprod(_rr(bits[i], o) for i, o in zip(batch, outs)) / len(batches)
            law[sum(outs)] = law.get(sum(outs), 0) + mass
    return law


@pytest.mark.parametrize("n, m", [(5, 1), (5, 2), (8, 2)])
def test_subset_sampling_of_randomized_response_is_the_enumerated_supremum(n, m):
    exact = _sup_log_ratio(_subset_law([1] + [0] * (n - 1), m), _subset_law([0] * n, m))
    assert abs(exact - mp.log1p(mp.mpf(m) / n * mp.expm1(EPS0))) < mp.mpf("1e-40")  # BBG, attained
    rr = RandomizedResponse(0.8, relation="replace-one")
    _close_above(SubsetSampling()(rr, m / n).get_approxDP(0), exact)


def test_subset_sampling_of_laplace_is_the_closed_form_and_composes_additively():
    mech = SubsetSampling()(LaplaceMechanism(1.0, relation="replace-one"), 0.2)
    exact = mp.log1p(mp.mpf("0.2") * mp.expm1(1))
    _close_above(mech.get_approxDP(0), exact)
    _close_above(Composition()([mech], [7]).get_approxDP(0), 7 * exact)


def _allocation_laws(steps, selected):
    """(law with x, law without) of the outputs of ``steps`` randomized responses to
    "x is in this step", x in a uniform ``selected``-subset of the steps."""
    subsets = list(itertools.combinations(range(steps), selected))
    with_x, without = {}, {}
    for outs in itertools.product((0, 1), repeat=steps):
        with_x[outs] = mp.fsum(mp.fprod(_rr(int(i in s), o) for i, o in enumerate(outs)) for s in subsets) \
            / len(subsets)
        without[outs] = mp.fprod(_rr(0, o) for o in outs)
    return with_x, without


@pytest.mark.parametrize("steps, selected", [(3, 1), (4, 1), (4, 2)])
def test_random_allocation_of_randomized_response_is_the_enumerated_supremum(steps, selected):
    exact = _sup_log_ratio(*_allocation_laws(steps, selected))
    assert abs(exact - selected * EPS0) < mp.mpf("1e-40")  # every step answers as x would: no amplification
    _close_above(RandomAllocation()(RandomizedResponse(0.8), steps, selected).get_approxDP(0), exact)


def test_random_allocation_of_laplace_keeps_the_base_epsilon_and_composes_additively():
    mech = RandomAllocation()(LaplaceMechanism(1.0), 4)
    _close_above(mech.get_approxDP(0), mp.mpf(1))
    _close_above(Composition()([mech], [3]).get_approxDP(0), mp.mpf(3))


def _binom_sf(k, n, q):
    """P(Bin(n, q) ≥ k), exactly."""
    return mp.fsum(mp.binomial(n, j) * q ** j * (1 - q) ** (n - j) for j in range(k, n + 1))


@pytest.mark.parametrize("q, n, batch", [(0.2, 10, 3), (0.5, 6, 2)])
def test_truncated_poisson_of_randomized_response_is_its_pairs_supremum(q, n, batch):
    """The mixture pair (module docstring of ``pld/pairs/truncated_poisson.py``) enumerated:
    Poisson sampling at q of the base (ε₀) and at η of its replace-one pair (2ε₀), with
    their exact weights; its largest log-ratio is the larger component's, both orders.
    The attained instance (Poisson sampling at the inclusion probability q') bounds it below."""
    qm = mp.mpf(q)
    w = _binom_sf(batch, n - 1, qm)
    eta = mp.mpf(batch) / n * _binom_sf(batch + 1, n, qm) / w
    laws = []
    for rate, eps in ((qm, EPS0), (eta, 2 * EPS0)):
        a, b = mp.e ** eps / (1 + mp.e ** eps), 1 / (1 + mp.e ** eps)  # a base pair of pure ε eps
        laws.append(({1: rate * a + (1 - rate) * b, 0: rate * b + (1 - rate) * a}, {1: b, 0: a}))
    exact_remove = max(mp.log(p[o] / r[o]) for p, r in laws for o in p)
    exact_add = max(mp.log(r[o] / ((1 - rate) * r[o] + rate * p[o]))  # (P, (1−q)P + qQ) of each reversed
                    for (p, r), rate in zip(laws, (qm, eta)) for o in p)
    mech = TruncatedPoissonSampling()(RandomizedResponse(0.8), q, n, batch)
    _close_above(mech.get_approxDP(0), max(exact_remove, exact_add))
    witness = mp.log1p(inclusion_probability(q, n, batch, lower=True) * mp.expm1(EPS0))
    low, high = _pure_interval(mech)
    assert witness * (1 - mp.mpf("1e-12")) <= low <= high == mech.get_approxDP(0)


def _copies_law(n, b, ones):
    """The law of the number of ones among randomized responses to b draws with replacement
    from n records, ``ones`` of them 1 (the others 0)."""
    law = {}
    for hits in range(b + 1):  # draws landing on a one
        weight = mp.binomial(b, hits) * (mp.mpf(ones) / n) ** hits * (1 - mp.mpf(ones) / n) ** (b - hits)
        for outs in itertools.product((0, 1), repeat=b):
            mass = mp.fprod(_rr(int(i < hits), o) for i, o in enumerate(outs))
            law[sum(outs)] = law.get(sum(outs), 0) + weight * mass
    return law


@pytest.mark.parametrize("n, b", [(10, 1), (10, 3), (5, 4), (1000, 64), (1000, MAX_COPIES + 1), (60000, 256)])
def test_sampling_with_replacement_is_the_closed_form_of_its_pair(n, b):
    """log(1 + γ(e^{bε₀} − 1)), γ = 1 − (1 − 1/n)^b: the pair reveals K, whose worst value
    b costs G_b's bε₀ (group privacy of randomized response, attained by G_b), also where
    K's tail beyond a few copies is spilled (n = 1000), and beyond ``MAX_COPIES`` = 64
    copies (G_b named for the whole tail). At or above the enumerated instance x = 1, the
    others 0 (equal for b = 1: subset sampling)."""
    gamma = -mp.expm1(b * mp.log1p(-mp.mpf(1) / n))
    got = SamplingWithReplacement()(RandomizedResponse(0.8, relation="replace-one"), n, b).get_approxDP(0)
    _close_above(got, mp.log1p(gamma * mp.expm1(b * EPS0)))
    if b <= 4:
        instance = _sup_log_ratio(_copies_law(n, b, 1), _copies_law(n, b, 0))
        assert got >= instance
        assert b > 1 or abs(instance - mp.log1p(gamma * mp.expm1(EPS0))) < mp.mpf("1e-40")


def test_pure_lower_ends_stay_below_the_new_upper_ends():
    for mech in (SubsetSampling()(RandomizedResponse(0.8, relation="replace-one"), 0.2),
                 RandomAllocation()(RandomizedResponse(0.8), 4),
                 RandomAllocation()(RandomizedResponse(0.8), 4, 2)):
        low, high = _pure_interval(mech)
        assert low <= high == mech.get_approxDP(0) < math.inf


def test_a_spill_of_unnamed_pairs_keeps_the_pure_epsilon_infinite():
    """A mixture whose missing weight belongs to pairs it does not name may put that weight at
    any loss: no finite pure ε; naming them bounds it by theirs (``MixturePair``)."""
    rr = RandomizedResponse(0.8).pairs.remove[0][0]
    wider = RandomizedResponse(0.9).pairs.remove[0][0]
    assert MixturePair([(0.5, rr)], spill=0.5).pure_epsilon() == math.inf
    assert MixturePair([(0.5, rr)], spill=0.5, spill_of=[wider]).pure_epsilon() == wider.pure_epsilon()
