"""Dominating pairs: hockey-stick curves and cell masses against oracles."""
import math

import mpmath as mp
import numpy as np
import pytest
from oracles import (discrete_delta, gdp_delta, laplace_delta_quad, subsampled_gaussian_add_delta,
                     subsampled_gaussian_remove_delta)

from dpaccount.pld.pairs.discrete_pair import binomial_pair, randomized_response_pair

from dpaccount.pld.pairs.base import GaussianPair, LaplacePair
from dpaccount.pld.pairs.poisson_sampling import PoissonAddPair, PoissonRemovePair

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


@pytest.mark.parametrize("q", [1e-6, 0.3, 1 - 1e-9])
def test_poisson_base_edges_against_mpmath(q):
    """The base-loss edges of the Poisson pairs' cells, log1p(expm1(ε)/q) (remove) and
    −log1p(expm1(−ε)/q) (add), against mpmath from ε = −50 to 800, where expm1(ε)/q
    leaves the float range and the other form takes over; −∞ / +∞ where no base loss
    maps there (e^ε ≤ 1 − q, remove; e^{−ε} ≤ 1 − q, add)."""
    from dpaccount.pld.pairs.poisson_sampling import _add_base_edges, _remove_base_edges
    eps = np.concatenate((np.linspace(-50, 50, 41), [0.01, 700.0, 709.0, 712.0, 750.0, 800.0]))
    for fn, sign in ((_remove_base_edges, 1), (_add_base_edges, -1)):
        got = fn(eps, q)
        for e, g in zip(eps, got):
            x = mp.expm1(sign * mp.mpf(e)) / q
            if x <= -1:
                assert g == -sign * math.inf, (fn.__name__, e, g)
            else:
                exact = sign * mp.log1p(x)
                assert abs(g - exact) <= 1e-13 * (1 + abs(exact)), (fn.__name__, e, g, exact)


@pytest.mark.parametrize("q", [0.01, 0.3])
@pytest.mark.parametrize("eps", [-1.0, 0.0, 0.2, 1.5, 4.0])
def test_poisson_pairs_delta_are_rounded_both_ways(q, eps):
    """δ(ε, upper=False) ≤ exact ≤ δ(ε, upper=True) (mpmath), both within 1e-9."""
    sigma = 0.9
    for pair, exact in ((PoissonRemovePair(GaussianPair(1 / sigma), q), subsampled_gaussian_remove_delta),
                        (PoissonAddPair(GaussianPair(1 / sigma), q), subsampled_gaussian_add_delta)):
        ex = exact(eps, sigma, q)
        low, up = pair.delta(eps, upper=False), pair.delta(eps, upper=True)
        assert low <= ex <= up, (pair, eps)
        assert _close(low, ex, rel=1e-9) and _close(up, ex, rel=1e-9)


@pytest.mark.parametrize("cls", [PoissonRemovePair, PoissonAddPair])
@pytest.mark.parametrize("base", ["rr", "leaky-rr", "leaky-rr-reversed"])
def test_poisson_atom_masses_are_the_masses_of_a_small_cell_around_them(cls, base):
    """At each atom x of a Poisson pair (the base's atoms mapped through the loss map,
    and P(L = ±∞) of the base landing at ∓log(1 − q)), atom_masses(x) equals the
    (P, Q)-masses of the cell (x − d, x + d] of ``masses`` for a tiny d: two routes,
    one exact answer."""
    from dpaccount.pld.pairs.zoo import leaky_rr_pair
    make = {"rr": lambda: randomized_response_pair(0.7), "leaky-rr": lambda: leaky_rr_pair(1.0, 0.01),
            "leaky-rr-reversed": lambda: leaky_rr_pair(1.0, 0.01).reverse()}[base]
    pair, q = cls(make(), 0.3), 0.3
    loss, _ = pair.base.atoms[:2]
    loss = np.asarray(loss, dtype=float)
    mapped = np.log1p(q * np.expm1(loss)) if cls is PoissonRemovePair else -np.log1p(q * np.expm1(-loss))
    points = np.concatenate((mapped, [math.log1p(-q), -math.log1p(-q)]))
    for x in points:
        d = 1e-9 * (1 + abs(x))
        a, b = pair.masses(np.array([x - d, x + d]))
        pa, pb = pair.atom_masses(np.array([x]))
        assert a[1] == pytest.approx(pa[0], rel=1e-9, abs=1e-15), (x, a, pa)
        assert b[1] == pytest.approx(pb[0], rel=1e-9, abs=1e-15), (x, b, pb)
