"""Amplified banded matrix factorization: the theorem's DP-SGD composition, jax_privacy's
events under dp_accounting's PLD, and the refusals."""
import math

import numpy as np
import pytest

import dpaccount
from dpaccount import (Composition, CyclicPoissonSampling, GaussianMechanism, MatrixMechanism, Participation,
                       PoissonSampling, TruncatedPoissonSampling, amplified_bandmf, truncated_amplified_bandmf)
from dpaccount import strategies as S
from dpaccount.mechanisms.absolute_accuracy import AbsoluteAccuracy
from dpaccount.transformers.cyclic_poisson import RECIPE_EPSILON_ERROR


def _normalised_banded(n, bands, rng):
    mask = np.subtract.outer(np.arange(n), np.arange(n))
    c = np.tril(np.abs(rng.normal(size=(n, n)))) * (mask < bands)
    return c / np.linalg.norm(c, axis=0)


def test_reproduces_the_theorems_composition():
    rng = np.random.default_rng(1)
    n, b, q, z = 50, 4, 0.01, 0.9
    m = MatrixMechanism(S.dense(_normalised_banded(n, b, rng)), z, Participation.min_separation(b))
    amplified = CyclicPoissonSampling()(m, q)
    norm = MatrixMechanism(m.strategy, z).sensitivity  # the largest column norm, certified
    assert norm == pytest.approx(1.0, rel=1e-12)
    want = Composition()([PoissonSampling()(GaussianMechanism(z, norm), q)], [math.ceil(n / b)])
    assert amplified == want
    assert amplified.get_approxDP(1e-6) == want.get_approxDP(1e-6)


def test_toeplitz_banded_and_fixed_epochs():
    n, q, z = 120, 0.02, 1.1
    strat = S.toeplitz([1.0, 0.5, 0.25], n)  # 3 bands; column norm² = 1.3125
    m = MatrixMechanism(strat, z, Participation.fixed_epochs(30))  # groups of b = 4 rounds
    got = CyclicPoissonSampling()(m, q)
    want = Composition()([PoissonSampling()(GaussianMechanism(z, math.sqrt(1.3125)), q)], [30])
    assert got.get_approxDP(1e-6) == pytest.approx(want.get_approxDP(1e-6), rel=1e-9)


def test_truncated_variant():
    n, b, q, z = 40, 4, 0.05, 1.0
    m = MatrixMechanism(S.identity(n), z, Participation.min_separation(b))
    got = CyclicPoissonSampling()(m, q, largest_group_size=250, max_batch_size=20)
    want = Composition()([TruncatedPoissonSampling()(GaussianMechanism(z, MatrixMechanism(m.strategy, z).sensitivity),
                                                     q, 250, 20)], [10])
    assert got == want
    recipe = truncated_amplified_bandmf(z, n, b, q, 250, 20)
    # two upper bounds (the recipe's sensitivity is the exact 1, the strategy's is rounded up by
    # ulps); the recipe's is planned finer than the default accuracy 1e-3 of the transformer's
    assert recipe.base == Composition()([TruncatedPoissonSampling()(GaussianMechanism(z), q, 250, 20)], [10])
    assert recipe.get_approxDP(1e-6) <= got.get_approxDP(1e-6) * (1 + 1e-3)


def test_refuses_non_banded_and_bad_input():
    n = 20
    for strat in (S.prefix(n), S.blt([0.9], [0.5], n), S.tree(n)):
        m = MatrixMechanism(strat, 1.0, Participation.min_separation(4))
        with pytest.raises(ValueError, match="bands"):
            CyclicPoissonSampling()(m, 0.1)
    with pytest.raises(TypeError, match="MatrixMechanism"):
        CyclicPoissonSampling()(GaussianMechanism(1.0), 0.1)
    m = MatrixMechanism(S.identity(n), 1.0, Participation.min_separation(4))
    with pytest.raises(ValueError, match="q"):
        CyclicPoissonSampling()(m, 1.5)
    with pytest.raises(ValueError, match="largest_group_size"):
        CyclicPoissonSampling()(m, 0.1, max_batch_size=5)
    with pytest.raises(ValueError, match="num_bands"):
        amplified_bandmf(1.0, 100, 0, 0.1)


def test_amplified_bandmf_is_its_dpsgd():
    got = amplified_bandmf(1.2, 2000, 8, 0.01)
    want = Composition()([PoissonSampling()(GaussianMechanism(1.2), 0.01)], [250])
    assert got.base == want and got.epsilon_error == RECIPE_EPSILON_ERROR
    assert dpaccount.from_spec(got.to_spec()) == want
    assert dpaccount.amplified_bandmf is amplified_bandmf


def test_recipe_within_its_absolute_error_of_the_certified_value():
    """The recipe's ε is a certified upper bound within its planned absolute error of the
    exact ε: above the lower end of a certified bracket 1e-7 wide of the theorem's composition,
    and at most ``RECIPE_EPSILON_ERROR`` above it."""
    z, iters, bands, q = 1.5, 200, 4, 0.05
    want = Composition()([PoissonSampling()(GaussianMechanism(z), q)], [50])
    exact = want.get_approxDP_bounds([1e-3, 1e-6, 1e-9], accuracy=1e-7)
    got = amplified_bandmf(z, iters, bands, q)
    ours = got.get_approxDP([1e-3, 1e-6, 1e-9])
    assert np.all(exact.lower <= ours) and np.all(ours <= exact.lower + RECIPE_EPSILON_ERROR)
    bounds = got.get_approxDP_bounds(1e-6)
    assert bounds.certified and bounds.lower <= exact.upper[1] and exact.lower[1] <= bounds.upper
    assert bounds.upper - bounds.lower <= RECIPE_EPSILON_ERROR
    # the plain composition at the default relative accuracy is a looser certified bound
    assert ours[1] <= want.get_approxDP(1e-6)
    # δ queries are the base's
    assert got.get_approx_delta(1.0) == want.get_approx_delta(1.0)


def test_absolute_accuracy_refuses_bad_input():
    with pytest.raises(TypeError, match="base"):
        AbsoluteAccuracy(0.5, 1e-6)
    with pytest.raises(ValueError, match="epsilon_error"):
        AbsoluteAccuracy(GaussianMechanism(1.0), 0.0)
    m = AbsoluteAccuracy(GaussianMechanism(1.0), 1e-6)  # analytic: no grid to refine
    assert m.get_approxDP(1e-5) == GaussianMechanism(1.0).get_approxDP(1e-5)
    with pytest.raises(ValueError, match="delta"):
        m.get_approxDP(1.5)


def test_absolute_accuracy_beyond_the_grid_cap_answers_at_the_accuracy_asked():
    """An absolute error no grid can reach: the certified answer at the accuracy asked, not an error."""
    base = Composition()([PoissonSampling()(GaussianMechanism(1.0), 0.02)], [100])
    m = AbsoluteAccuracy(base, 1e-14)
    assert m.get_approxDP(1e-6) == base.get_approxDP(1e-6)
    got, want = m.get_approxDP_bounds(1e-6), base.get_approxDP_bounds(1e-6)
    assert (got.lower, got.upper) == (want.lower, want.upper)


def _dp_accounting_epsilon(event, delta):
    from dp_accounting.pld import pld_privacy_accountant
    acc = pld_privacy_accountant.PLDAccountant()
    acc.compose(event)
    return acc.get_epsilon(delta)


@pytest.mark.parametrize("z,iters,bands,q", [(1.0, 2000, 8, 0.01), (0.8, 1000, 3, 0.05), (2.0, 500, 1, 0.1),
                                             (0.6, 10000, 16, 0.02)])
def test_not_above_dp_accounting_on_jax_privacy_event(z, iters, bands, q):
    """The recipe's default certified ε is at or below dp_accounting's PLD answer on
    jax_privacy's event (which lies above the certified lower end: it is not below the exact ε
    at this δ)."""
    accounting = pytest.importorskip("jax_privacy.experimental.accounting",
                                     reason="jax_privacy (the matrix-peers extra) is not installed")
    theirs = _dp_accounting_epsilon(accounting.amplified_bandmf_event(z, iters, num_bands=bands, sampling_prob=q),
                                    1e-6)
    mech = amplified_bandmf(z, iters, bands, q)
    assert mech.get_approxDP(1e-6) <= theirs
    bounds = mech.get_approxDP_bounds(1e-6)
    assert bounds.certified and bounds.lower <= bounds.upper <= theirs


def test_truncated_not_above_dp_accounting():
    accounting = pytest.importorskip("jax_privacy.experimental.accounting",
                                     reason="jax_privacy (the matrix-peers extra) is not installed")
    event = accounting.truncated_amplified_bandmf_event(1.0, 600, num_bands=6, sampling_prob=0.02,
                                                        largest_group_size=5000, truncated_batch_size=110)
    ours = truncated_amplified_bandmf(1.0, 600, 6, 0.02, 5000, 110).get_approxDP(1e-6)
    assert ours <= _dp_accounting_epsilon(event, 1e-6)
