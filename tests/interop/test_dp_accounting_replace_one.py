"""Poisson-subsampled and truncated Poisson-subsampled Gaussians under REPLACE_ONE in the
dp_accounting drop-in (issue 39, item 2), and the facts of dp_accounting 0.6's RDP
accountant test file that concern events rather than its private RDP vector."""
import math

import pytest

dpa = pytest.importorskip("dp_accounting", reason="the interop extra (dp-accounting) is not installed")
from dp_accounting import dp_event as e  # noqa: E402
from scipy import stats  # noqa: E402

from dpaccount import Composition, GaussianMechanism, PoissonSampling, ToReplaceOne  # noqa: E402
from dpaccount.integrations.dp_accounting import DpaccountAccountant  # noqa: E402
from dpaccount.pld.pairs.truncated_poisson import inclusion_probability  # noqa: E402

NR = dpa.NeighboringRelation
Q = 256 / 60000


def _replace_one_sampled(sigma, q, steps):
    return Composition()([ToReplaceOne()(PoissonSampling()(GaussianMechanism(sigma), q))], [steps])


def test_dpsgd_under_replace_one_is_the_lebeda_pair_in_its_certified_bracket():
    """q = 256/60000, σ = 1.1, 1000 steps: dp_accounting's PLD (REPLACE adjacency, pessimistic
    at its discretisation) says 0.969; dpaccount's certified bracket holds it (to its grid's 1e-4)."""
    event = e.SelfComposedDpEvent(e.PoissonSampledDpEvent(Q, e.GaussianDpEvent(1.1)), 1000)
    acc = DpaccountAccountant(NR.REPLACE_ONE).compose(event)
    bounds = acc.mechanism().get_approxDP_bounds(1e-5)
    assert bounds.certified and acc.get_epsilon(1e-5) == bounds.upper <= bounds.lower * (1 + 1e-3)
    assert acc.get_epsilon(1e-5) == _replace_one_sampled(1.1, Q, 1000).get_approxDP(1e-5)
    pld = dpa.pld.PLDAccountant(NR.REPLACE_ONE).compose(event).get_epsilon(1e-5)
    assert bounds.lower * (1 - 1e-4) <= pld <= bounds.upper * (1 + 1e-3)


def test_replace_one_sampling_at_rate_one_is_the_gaussian_of_twice_the_sensitivity():
    """q = 1: every record is used, the pair is (N(2/σ), N(0)): δ(ε) = Φ(μ/2 − ε/μ) − e^ε Φ(−μ/2 − ε/μ)."""
    acc = DpaccountAccountant(NR.REPLACE_ONE).compose(e.PoissonSampledDpEvent(1.0, e.GaussianDpEvent(2.0)))
    mu = 1.0
    for eps in (0.0, 0.5, 2.0):
        exact = stats.norm.cdf(mu / 2 - eps / mu) - math.exp(eps) * stats.norm.cdf(-mu / 2 - eps / mu)
        assert exact * (1 - 1e-9) <= acc.get_delta(eps) <= exact * (1 + 1e-3)


def test_replace_one_sampling_is_at_least_add_remove():
    """Replacing x by a record of gradient 0 is removing x (and a record of gradient 0 by y is
    adding y): both add/remove directions are replace-one instances, so the replace-one ε is
    at least the add/remove one's certified lower end."""
    event = e.SelfComposedDpEvent(e.PoissonSampledDpEvent(0.05, e.GaussianDpEvent(1.0)), 50)
    one = DpaccountAccountant(NR.ADD_OR_REMOVE_ONE).compose(event).mechanism().get_approxDP_bounds(1e-5)
    assert one.certified and one.lower <= DpaccountAccountant(NR.REPLACE_ONE).compose(event).get_epsilon(1e-5)


def test_truncated_poisson_under_replace_one_between_its_witness_and_dp_accounting():
    """Lower end: the instance where the other records' gradients are 0 and x, y are opposite
    — the Lebeda pair at x's inclusion probability q' (attained). Upper: the same mixture over
    the full-batch coin as dp_accounting's PLD, so within its discretisation of it."""
    event = e.SelfComposedDpEvent(e.TruncatedSubsampledGaussianDpEvent(60000, Q, 280, 1.1), 100)
    ours = DpaccountAccountant(NR.REPLACE_ONE).compose(event).get_epsilon(1e-5)
    witness = _replace_one_sampled(1.1, inclusion_probability(Q, 60000, 280, lower=True), 100)
    pld = dpa.pld.PLDAccountant(NR.REPLACE_ONE).compose(event).get_epsilon(1e-5)
    assert witness.get_approxDP_bounds(1e-5).lower <= ours <= pld * (1 + 1e-3)


def test_truncation_that_cannot_happen_is_poisson_sampling_under_replace_one():
    event = e.TruncatedSubsampledGaussianDpEvent(1000, 0.01, 1000, 1.0)
    acc = DpaccountAccountant(NR.REPLACE_ONE).compose(event)
    assert acc.get_epsilon(1e-5) == _replace_one_sampled(1.0, 0.01, 1).get_approxDP(1e-5)


# -- the RDP accountant test file's event facts ----------------------------------------------

@pytest.mark.parametrize("event", [e.PoissonSampledDpEvent(0, e.GaussianDpEvent(1.0)),
                                   e.PoissonSampledDpEvent(0, e.GaussianDpEvent(0.0))])
def test_sampling_nobody_costs_nothing(event):
    acc = DpaccountAccountant().compose(event)
    assert acc.get_epsilon(1e-10) == 0 and acc.get_delta(1e-10) == 0
    acc = DpaccountAccountant(NR.REPLACE_ONE).compose(e.SampledWithoutReplacementDpEvent(1000, 0, e.GaussianDpEvent(1.0)))
    assert acc.get_epsilon(1e-10) == 0 and acc.get_delta(1e-10) == 0


@pytest.mark.parametrize("q", [0, 0.01, 0.1, 0.8, 1.0])
def test_epsilon_and_delta_are_each_others_inverse(q):
    """δ(ε(δ)) ≤ δ (ε is an upper bound), within 1e-7 of δ (the RDP test file's tolerance) where ε > 0;
    where ε = ∞ the mass at +∞ (q for σ = 0; dp_accounting's RDP accountant says 1)."""
    for sigma in (0.0, 0.1, 1.0, 10.0, 100.0):
        acc = DpaccountAccountant().compose(e.PoissonSampledDpEvent(q, e.GaussianDpEvent(sigma)))
        for delta in (0.99, 0.9, 0.1, 0.01, 1e-3, 1e-5, 1e-9, 1e-12):
            eps = acc.get_epsilon(delta)
            back = acc.get_delta(eps)
            if eps == math.inf:
                assert sigma == 0 and q <= back <= q * (1 + 1e-12) and delta < back
            elif eps == 0:  # δ(0) is already at most δ
                assert back <= delta
            else:
                assert back <= delta * (1 + 2e-3) and abs(back - delta) <= 1e-7


@pytest.mark.parametrize("eps0", [0.01, 1.0, 100.0])
def test_laplace_is_pure_at_tiny_delta(eps0):
    """ε(1e-10) of Laplace with ε₀: δ(ε) = 1 − e^{(ε − ε₀)/2} for 0 ≤ ε ≤ ε₀, so ε(δ) =
    ε₀ + 2 log(1 − δ)."""
    acc = DpaccountAccountant().compose(e.LaplaceDpEvent(1 / eps0))
    exact = eps0 + 2 * math.log1p(-1e-10)
    assert exact - 1e-12 <= acc.get_epsilon(1e-10) <= exact + 1e-3 * exact + 1e-12
    assert abs(acc.get_epsilon(1e-10) - eps0) < 1e-7


def test_repeated_laplace_is_below_basic_composition():
    """100 × ε₀ = 1: the RDP test file asserts basic composition's 100 at δ = 1e-10 (its RDP
    orders simulate pure DP); the composition's certified bracket lies below it."""
    acc = DpaccountAccountant().compose(e.SelfComposedDpEvent(e.LaplaceDpEvent(1.0), 100))
    bounds = acc.mechanism().get_approxDP_bounds(1e-10)
    assert bounds.lower <= acc.get_epsilon(1e-10) == bounds.upper < 100
