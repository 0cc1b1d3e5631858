"""A Poisson-sampled Laplace pair's anchor log(1 − q + q e^g) (``_PoissonPair.anchor``): a base
whose e^g overflows (b ≤ 1.4e-3 at sensitivity 1) must not break it."""
import warnings

import mpmath as mp
import pytest

import dpaccount as dpa
from dpaccount.pld.pairs.base import LaplacePair
from dpaccount.pld.pairs.poisson_sampling import PoissonRemovePair


def _exact_epsilon(b, q, delta):
    """ε(δ) of one Poisson-sampled Laplace step (the remove direction's, the larger here): the
    inverse of δ = q·(1 − e^{(x − g)/2}), x = log1p(expm1(ε)/q), below the top atom (mpmath)."""
    with mp.workdps(50):
        g, q = mp.mpf(1 / b), mp.mpf(q)
        x = g + 2 * mp.log(1 - mp.mpf(delta) / q)
        return mp.log(1 + q * mp.expm1(x))


@pytest.mark.parametrize("b", [1e-3, 1e-5])
def test_a_base_whose_exponential_overflows_keeps_an_anchor(b):
    """e^{1/b} overflows for b < 1.41e-3: the anchor is taken in log space, and the truncated
    Poisson mixture (which reads every component's anchor) answers again."""
    q, delta = 1e-4, 1e-6
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = dpa.PoissonSampling()(dpa.LaplaceMechanism(b), q).get_approxDP(delta)
        exact = _exact_epsilon(b, q, delta)
        assert exact <= got <= exact * (1 + 1e-3)
        trunc = dpa.TruncatedPoissonSampling()(dpa.LaplaceMechanism(b), q, 100000, 30)
        got = trunc.get_approxDP(delta)
    assert 0.0 < got <= 1 / b  # at most the base's pure ε (it raised OverflowError before)
    assert PoissonRemovePair(LaplacePair(1 / b), q).anchor == pytest.approx(float(1 / b + mp.log(q)), rel=1e-12)
