"""Dominating pairs: hockey-stick curves and cell masses against oracles."""
import math

import mpmath as mp
import numpy as np
import pytest
from oracles import (discrete_delta, gdp_delta, laplace_delta_quad, subsampled_gaussian_add_delta,
                     subsampled_gaussian_remove_delta)

from dpaccount.pld.pairs import GaussianPair, LaplacePair, binomial_pair, randomized_response_pair
from dpaccount.pld.poisson_sampling import PoissonAddPair, PoissonRemovePair

EPS = [-1.5, -0.2, 0.0, 0.01, 0.3, 1.0, 2.5]


def _close(got, exact, rel=1e-10, abs_=1e-15):
    return abs(got - float(exact)) <= rel * abs(float(exact)) + abs_


@pytest.mark.parametrize("eps", EPS)
def test_gaussian_pair(eps):
    assert _close(GaussianPair(0.8).delta(eps), gdp_delta(eps, 0.8))


@pytest.mark.parametrize("eps", EPS)
def test_laplace_pair_against_quadrature(eps):
    assert _close(LaplacePair(1 / 0.7).delta(eps), laplace_delta_quad(eps, 0.7), rel=1e-9)


@pytest.mark.parametrize("eps", EPS)
def test_randomized_response_pair(eps):
    p = 0.7
    atoms = [(p, 1 - p), (1 - p, p)]
    assert _close(randomized_response_pair(p).delta(eps), discrete_delta(eps, atoms))


@pytest.mark.parametrize("eps", EPS)
def test_binomial_pair(eps):
    n, p = 12, 0.3
    pmf = [mp.binomial(n, k) * mp.mpf(p) ** k * (1 - mp.mpf(p)) ** (n - k) for k in range(n + 1)]
    # P = 1 + Bin, Q = Bin on {0, …, n+1}
    atoms = [((pmf[k - 1] if k >= 1 else 0), (pmf[k] if k <= n else 0)) for k in range(n + 2)]
    assert _close(binomial_pair(n, p).delta(eps), discrete_delta(eps, atoms), rel=1e-9)


@pytest.mark.parametrize("q", [0.001, 0.05, 0.5, 1.0])
@pytest.mark.parametrize("eps", EPS)
def test_subsampled_gaussian_pairs(q, eps):
    sigma = 1.3
    base = GaussianPair(1 / sigma)
    assert _close(PoissonRemovePair(base, q).delta(eps), subsampled_gaussian_remove_delta(eps, sigma, q), rel=1e-9)
    assert _close(PoissonAddPair(base, q).delta(eps), subsampled_gaussian_add_delta(eps, sigma, q), rel=1e-9)


PAIRS = [GaussianPair(1.0), LaplacePair(1.0), randomized_response_pair(0.6), binomial_pair(10, 0.5),
         PoissonRemovePair(GaussianPair(1.0), 0.1), PoissonAddPair(GaussianPair(1.0), 0.1),
         PoissonRemovePair(LaplacePair(2.0), 0.3), PoissonAddPair(binomial_pair(10, 0.5), 0.3),
         PoissonRemovePair(binomial_pair(10, 0.5).reverse(), 0.3)]


@pytest.mark.parametrize("pair", PAIRS, ids=repr)
def test_masses_agree_with_delta_and_sum_to_one(pair):
    edges = np.linspace(-3, 3, 13)
    a, b = pair.masses(edges)
    assert np.all(a >= 0) and np.all(b >= 0)
    assert a.sum() + pair.p_inf == pytest.approx(1.0, abs=1e-12)
    assert b.sum() + pair.q_ninf == pytest.approx(1.0, abs=1e-12)
    for e in edges:
        aa, bb = pair.masses(np.array([e]))
        # δ(ε) = P(L > ε) − e^ε Q(L > ε), L = +∞ included in P
        assert _close(aa[1] + pair.p_inf - math.exp(e) * bb[1], pair.delta(e), rel=1e-9, abs_=1e-14)


@pytest.mark.parametrize("pair", PAIRS, ids=repr)
@pytest.mark.parametrize("eps", [-0.7, 0.0, 0.4, 1.3])
def test_swap_identity(pair, eps):
    """H_α(P||Q) = 1 − α + α H_{1/α}(Q||P) (exact)."""
    lhs = pair.delta(eps)
    rhs = 1 - math.exp(eps) + math.exp(eps) * pair.reverse().delta(-eps)
    # the right-hand side cancels: allow its rounding, ~e^ε ulps of 1
    assert lhs == pytest.approx(rhs, rel=1e-9, abs=1e-12 * math.exp(eps))
