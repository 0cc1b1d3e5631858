"""Amplified banded matrix factorization: the theorem's DP-SGD composition, jax_privacy's
events under dp_accounting's PLD, and the refusals."""
import math

import numpy as np
import pytest

import dpaccount
from dpaccount import (Composition, CyclicPoissonSampling, GaussianMechanism, MatrixMechanism, Participation,
                       PoissonSampling, TruncatedPoissonSampling, amplified_bandmf, truncated_amplified_bandmf)
from dpaccount import strategies as S


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
    # two upper bounds on different grids (the recipe's sensitivity is the exact 1, the strategy's
    # is rounded up by ulps), each planned within the default accuracy 1e-3 of its exact value
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
    assert got == want
    assert dpaccount.amplified_bandmf is amplified_bandmf


@pytest.mark.parametrize("z,iters,bands,q,accuracy", [(1.0, 2000, 8, 0.01, 1e-6), (0.8, 1000, 3, 0.05, 1e-7),
                                                      (2.0, 500, 1, 0.1, 1e-6)])
def test_not_above_dp_accounting_on_jax_privacy_event(z, iters, bands, q, accuracy):
    """dp_accounting's PLD answer on jax_privacy's event lies in our certified bracket at the
    default accuracy, and our certified upper bound at a fine accuracy is not above it."""
    accounting = pytest.importorskip("jax_privacy.experimental.accounting",
                                     reason="jax_privacy (the matrix-peers extra) is not installed")
    from dp_accounting.pld import pld_privacy_accountant
    event = accounting.amplified_bandmf_event(z, iters, num_bands=bands, sampling_prob=q)
    acc = pld_privacy_accountant.PLDAccountant()
    acc.compose(event)
    theirs = acc.get_epsilon(1e-6)
    mech = amplified_bandmf(z, iters, bands, q)
    bounds = mech.get_approxDP_bounds(1e-6)
    assert bounds.certified and bounds.lower <= theirs <= bounds.upper
    assert mech.get_approxDP(1e-6, accuracy=accuracy) <= theirs


def test_truncated_not_above_dp_accounting():
    accounting = pytest.importorskip("jax_privacy.experimental.accounting",
                                     reason="jax_privacy (the matrix-peers extra) is not installed")
    from dp_accounting.pld import pld_privacy_accountant
    event = accounting.truncated_amplified_bandmf_event(1.0, 600, num_bands=6, sampling_prob=0.02,
                                                        largest_group_size=5000, truncated_batch_size=110)
    acc = pld_privacy_accountant.PLDAccountant()
    acc.compose(event)
    ours = truncated_amplified_bandmf(1.0, 600, 6, 0.02, 5000, 110).get_approxDP(1e-6)
    assert ours <= acc.get_epsilon(1e-6)
