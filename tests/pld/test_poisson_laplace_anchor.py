"""A Poisson-sampled Laplace pair's anchor log(1 − q + q e^g) (``_PoissonPair.anchor``): its
heavy atom sits on a grid point, which must not move it below its loss, and a base whose
e^g overflows (b ≤ 1.4e-3 at sensitivity 1) must not break the anchor."""
import warnings

import mpmath as mp
import pytest

import dpaccount as dpa
from dpaccount.pld.grids.discretise import pair_to_grid
from dpaccount.pld.pairs.base import LaplacePair
from dpaccount.pld.pairs.poisson_sampling import PoissonRemovePair


def _exact_delta(b, q, eps):
    """δ(ε) of one Poisson-sampled Laplace step, remove direction (exact, mpmath):
    q·(1 − e^{(x − g)/2}) with x = log1p(expm1(ε)/q) below the top atom, 0 above."""
    with mp.workdps(50):
        g, q, eps = mp.mpf(1 / b), mp.mpf(q), mp.mpf(eps)
        if eps >= mp.log(1 - q + q * mp.exp(g)):
            return mp.mpf(0)
        x = mp.log(1 + mp.expm1(eps) / q)
        return q * (1 - mp.exp((x - g) / 2))


@pytest.mark.parametrize("b", [0.15, 0.2, 1.0])
@pytest.mark.parametrize("q", [5e-3, 1e-2, 0.1])
@pytest.mark.parametrize("m", [7, 333])
def test_the_anchored_top_atom_is_never_put_below_its_loss(b, q, m):
    """On a step anchor/m the top atom's point m·h is a float that may lie ~1e-17 below the
    exact atom; the pessimistic grid's δ there must still be at least the exact δ (an atom kept
    whole at that point gave 0 against ~1e-18: 31 of 72 such cases before the edges' error
    was paid)."""
    pair = PoissonRemovePair(LaplacePair(1 / b), q)
    step = pair.anchor / m
    grid = pair_to_grid(pair, step, -m, m + 2)
    for k in (m, m - 1):
        assert grid.delta(k * step) >= _exact_delta(b, q, k * step), (k, grid.delta(k * step))


def _exact_epsilon(b, q, delta):
    """ε(δ) of one Poisson-sampled Laplace step (the remove direction's, the larger here):
    the inverse of ``_exact_delta`` below the top atom."""
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
