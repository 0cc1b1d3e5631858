"""What the lower end of a certified interval bounds (issue 27 §1; pld/profiles/attained.py).

A lower bound on a dominating pair's curve bounds the mechanism only where the
pair is attained. Where it is not (symmetric hulls, subset-sampled pairs,
frozen ``Discretise`` grids, the logistic envelope) the interval's lower end
must come from attained compositions, or be absent with the reason. The
exact values here are independent of dpaccount: mpmath enumeration of the
finite laws (``zoo_exact_oracles.Loss``) for every fixed choice of direction
per step, and the adversary who chooses each step's direction from the
outputs so far by exact dynamic programming (``adaptive_delta``): the
mechanism's value lies between the two, and the interval must hold both.
"""
import functools

import mpmath as mp
import numpy as np
import pytest
from api_fixtures import SHARED_NAMES, mech
from zoo_exact_oracles import Loss, binomial_outcomes, poisson_add, poisson_remove, rr_outcomes

import dpaccount as dpa
from dpaccount.pld.profiles.attained import attained_compositions
from dpaccount.sweep import SerialExecutor

C = dpa.Composition()


def fixed_delta(witnesses, k, eps):
    """max over every fixed choice of a witness per step of the exact δ(ε): the
    composition depends on the counts only, so over the splits of k uses."""
    laws = [Loss.of_outcomes(p, q) for p, q in witnesses]
    best = mp.mpf(0)
    for j in range(k + 1):  # j uses of the first witness (two witnesses)
        best = max(best, ((laws[0] ** j) * (laws[1] ** (k - j))).delta(eps))
    return best


def adaptive_delta(witnesses, k, eps):
    """The adversary picking each step's witness from the outputs so far: V_k(α) =
    max_w Σ_y P_w(y) V_{k−1}(α Q_w(y)/P_w(y)), V_0(α) = (1 − α)_+, at α = e^ε
    (H_α of an adaptive composition, conditioned on the first output)."""
    @functools.lru_cache(maxsize=None)
    def value(steps, alpha):
        if steps == 0:
            return max(1 - alpha, mp.mpf(0))
        return max(mp.fsum(p * value(steps - 1, alpha * q / p) for p, q in zip(*w) if p > 0) for w in witnesses)
    return value(k, mp.exp(eps))


def binomial_witnesses(n, p):
    """(Δ + Bin, Bin) and its reverse: a query that moves up or down by Δ = 1."""
    plus = binomial_outcomes(n, p)
    return [plus, plus[::-1]]


def test_replace_one_binomial_interval_holds_the_attained_values():
    """The issue's example: the hull alone gave [0.484137, 0.484137]. The worst fixed
    choice of directions (all 8 patterns; 4 splits) is 0.470688, the adaptive
    adversary reaches 0.475171; the hull's δ is an upper bound on both."""
    b = C([dpa.BinomialMechanism(8, 0.2, relation="replace-one")], [3]).get_approx_delta_bounds(1.0)
    fixed = fixed_delta(binomial_witnesses(8, 0.2), 3, 1)
    adaptive = adaptive_delta(binomial_witnesses(8, 0.2), 3, 1)
    assert b.lower_of == "mechanism" and b.certified and b.reason, b
    assert b.lower <= fixed <= adaptive <= b.upper, (b, fixed, adaptive)
    # every split is tried and the exact sums are certified to ~1e-11: the lower end is the fixed worst case
    assert b.lower >= fixed * (1 - 1e-9), (b, fixed)
    assert abs(fixed - mp.mpf("0.470687920489")) < 1e-11 and abs(adaptive - mp.mpf("0.475170988618")) < 1e-11


def test_two_sided_binomial_under_add_remove_is_bounded_alike():
    """add/remove, a query that may move either way (monotone=False): the same two witnesses."""
    m = C([dpa.BinomialMechanism(6, 0.3)], [2])
    for eps in (0.5, 2.0):
        b = m.get_approx_delta_bounds(eps)
        fixed = fixed_delta(binomial_witnesses(6, 0.3), 2, eps)
        assert b.lower_of == "mechanism" and b.lower <= fixed <= adaptive_delta(binomial_witnesses(6, 0.3), 2, eps) \
            <= b.upper, (eps, b, fixed)
        assert b.lower >= fixed * (1 - 1e-9), (eps, b, fixed)


def test_subset_sampled_composition_holds_the_adaptive_value():
    """A subset-sampled pair stands for A and A reversed at each use (pld/pairs/subset_sampling.py)."""
    gamma = 0.2
    a = poisson_remove(*rr_outcomes(0.8), gamma)
    witnesses = [a, a[::-1]]
    b = C([dpa.SubsetSampling()(dpa.RandomizedResponse(0.8, relation="replace-one"), gamma)], [3]) \
        .get_approx_delta_bounds(0.5)
    fixed, adaptive = fixed_delta(witnesses, 3, 0.5), adaptive_delta(witnesses, 3, 0.5)
    assert b.lower_of == "mechanism" and b.lower <= fixed <= adaptive <= b.upper, (b, fixed, adaptive)
    assert b.lower >= fixed * (1 - 1e-9), (b, fixed)


def _poisson_rr_delta(p, q, steps):
    """δ(ε) of Composition([PoissonSampling(RR(p), q)], [steps]), exact: the larger direction's.
    Each direction is a two-outcome pair (P, Q), so the composition's δ is a binomial sum
    over the count k of the first outcome."""
    def counts(law):  # the law of the count k: C(steps, k) law[0]^k law[1]^(steps − k)
        return [mp.binomial(steps, k) * law[0] ** k * law[1] ** (steps - k) for k in range(steps + 1)]
    laws = [(counts(pp), counts(qq)) for pp, qq in (poisson_remove(*rr_outcomes(p), q),
                                                     poisson_add(*rr_outcomes(p), q))]

    def delta(eps):
        scale = mp.exp(eps)
        return max(mp.fsum(max(a - scale * b, 0) for a, b in zip(pk, qk)) for pk, qk in laws)
    return delta


def test_discretised_interval_holds_the_mechanism_value():
    """The issue's example: a frozen grid lies above the mechanism, and its own optimistic
    bound gave [37.1179, 37.1179] where the exact ε(1e-8) is 37.0896. The lower end now
    comes from the base's pairs: δ_exact(lower) ≥ δ ≥ δ_exact(upper) brackets the exact ε."""
    base = C([dpa.PoissonSampling()(dpa.RandomizedResponse(0.8), 0.1)], [1000])
    frozen = dpa.Discretise()(base)
    exact = _poisson_rr_delta(0.8, 0.1, 1000)
    b = frozen.get_approxDP_bounds(1e-8)
    assert b.lower_of == "mechanism" and b.certified, b
    assert exact(b.lower) >= 1e-8 >= exact(b.upper), (b, exact(b.lower), exact(b.upper))
    assert exact(b.upper * (1 - 1e-4)) < 1e-8  # the grid lies above: its own lower end would exclude the exact ε
    d = frozen.get_approx_delta_bounds(37.0)
    assert d.lower <= exact(37.0) <= d.upper, (d, exact(37.0))


def test_a_pair_claims_to_be_attained_only_with_a_reason():
    tight = [dpa.GaussianMechanism(1.0), dpa.LaplaceMechanism(1.0), dpa.RandomizedResponse(0.7),
             dpa.BinomialMechanism(10, 0.3, monotone=True), dpa.BinomialMechanism(10, 0.5),
             dpa.DiscreteGaussianMechanism(2.0), dpa.DiscreteLaplaceMechanism(1.0), dpa.PureDPMechanism(1.0),
             dpa.ApproxDPMechanism(1.0, 1e-6), dpa.DiscreteMechanism([0.6, 0.4], [0.3, 0.7]),
             dpa.PoissonSampling()(dpa.GaussianMechanism(1.0), 0.1),
             dpa.GroupPrivacy()(dpa.PureDPMechanism(1.0), 3)]
    loose = [dpa.BinomialMechanism(10, 0.3), dpa.BinomialMechanism(10, 0.3, relation="replace-one"),
             dpa.ExponentialMechanism(1.0), dpa.Discretise()(dpa.RandomizedResponse(0.7)),
             dpa.SubsetSampling()(dpa.RandomizedResponse(0.8, relation="replace-one"), 0.1),
             dpa.GroupPrivacy()(dpa.RandomizedResponse(0.7), 2),
             dpa.PoissonSampling()(dpa.BinomialMechanism(10, 0.3), 0.1)]
    assert all(m.pairs.tight for m in tight), [m.name for m in tight if not m.pairs.tight]
    assert not any(m.pairs.tight for m in loose), [m.name for m in loose if m.pairs.tight]
    # every attained composition is made of tight pairs only
    for m in loose:
        found, why = attained_compositions(m.pairs)
        assert (found is None) == (why is not None), m.name
        for pc in found or ():
            assert pc.tight, m.name


def _truncated_replace_one(sigma):
    """A mixture over a public coin with no attained witness (transformers/group_privacy.py)."""
    return dpa.ToReplaceOne()(dpa.TruncatedPoissonSampling()(dpa.GaussianMechanism(sigma), 0.5, 4, 2))


def test_without_an_attained_witness_the_lower_end_is_absent_with_the_reason():
    for m in (_truncated_replace_one(1.0), C([_truncated_replace_one(2.0)], [3])):
        for b in (m.get_approxDP_bounds(1e-6), m.get_approx_delta_bounds(0.5)):
            assert b.lower is None and b.lower_of is None and not b.certified, (m.name, b)
            assert "not attained" in b.reason and b.upper > 0, (m.name, b)
        f = m.get_fDP_bounds(0.3)
        assert f.lower_of == "mechanism" and not f.certified and "not attained" in f.reason, (m.name, f)
    for m in (dpa.ExponentialMechanism(1.0), dpa.BinomialMechanism(8, 0.2, relation="replace-one")):
        b = m.get_approx_delta_bounds(0.5, method="cf")  # cf inverts the pairs: their lower end, not the mechanism's
        assert b.lower is None and b.lower_of is None and not b.certified and "method='pld'" in b.reason, b


@pytest.mark.parametrize("name", SHARED_NAMES)
def test_every_bounds_says_what_its_lower_end_bounds(name):
    m = mech(name)
    for b in (m.get_approxDP_bounds(np.array([1e-3, 1e-6])), m.get_approx_delta_bounds(1.0), m.get_fDP_bounds(0.2)):
        assert b.lower_of == "mechanism" and b.lower is not None, (name, b)
        assert b.certified == m.pairs.tight and (b.reason is None) == m.pairs.tight, (name, b)
        assert tuple(b[:5]) == (b.lower, b.upper, b.method, b.step, b.certified)  # positional fields kept


def test_a_monotone_count_under_replace_one_moves_by_its_sensitivity_only():
    """ToReplaceOne of a monotone binomial carries the hull of ±2Δ (loose, its docstring
    says), but a count that never decreases when a record is added moves by at most Δ
    when one is replaced: the lower end comes from ±Δ, whose worse curve is the exact value."""
    b = dpa.ToReplaceOne()(dpa.BinomialMechanism(10, 0.3, monotone=True)).get_approx_delta_bounds(1.0)
    exact = max(Loss.of_outcomes(p, q).delta(1) for p, q in binomial_witnesses(10, 0.3))
    assert b.lower_of == "mechanism" and b.lower <= exact <= b.upper and b.lower >= exact * (1 - 1e-9), (b, exact)
    wide = max(Loss.of_outcomes(*binomial_outcomes(10, 0.3, 2)).delta(1), Loss.of_outcomes(
        *binomial_outcomes(10, 0.3, 2)[::-1]).delta(1))
    assert b.upper >= wide > 2 * exact  # the hull of ±2Δ, far above


def _exponential_or_gaussian(eps):
    return _truncated_replace_one(1 / eps) if eps < 1 else dpa.GaussianMechanism(eps)


def test_a_sweep_leaves_an_absent_lower_end_empty_with_the_reason():
    table = dpa.sweep(_exponential_or_gaussian, {"eps": [0.5, 2.0]}, ("epsilon_bounds", 1e-5),
                      executor=SerialExecutor())
    absent, present = table.rows
    assert absent["epsilon_lower"] is None and "not attained" in absent["lower_reason"], absent
    assert present["epsilon_lower"] <= present["epsilon"] and present["lower_reason"] is None, present
