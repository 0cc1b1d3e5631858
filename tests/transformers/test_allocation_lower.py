"""The lower end of RandomAllocation with k > 1 selected steps against exact enumeration.

Oracle: the k-of-t allocation of randomized response (P = (p, 1 − p), Q = (1 − p, p)
on {1, 0}) through the count J of ones, exactly (rationals): the likelihood ratio
e_k(Y)/C(t, k) depends on the outcomes through J only (Y takes two values), so J's
laws — Q: Bin(t, 1 − p); P: Bin(k, p) + Bin(t − k, 1 − p), whatever the k steps —
have the mechanism's exact δ(ε) (both directions, products for several epochs, in
mpmath). The lower end (``pld/allocation/lower.py``) must lie below it, and
here it is exact up to the grids (its statistic determines J).
"""
import itertools
import math
from fractions import Fraction
from math import comb

import mpmath as mp
import numpy as np
import pytest

from dpaccount import Composition, GaussianMechanism, RandomAllocation, RandomizedResponse
from dpaccount.pld.allocation.spread import ratio_cells
from dpaccount.pld.pairs.zoo import leaky_rr_pair

EPS = (0.0, 0.2, 0.6, 1.2)


def _binomial(n, p):
    return [comb(n, j) * p ** j * (1 - p) ** (n - j) for j in range(n + 1)]


def _count_laws(p, t, k):
    """[(P(J = j), Q(J = j))] of the k-of-t allocation of randomized response (exact)."""
    sel, rest, q = _binomial(k, p), _binomial(t - k, 1 - p), _binomial(t, 1 - p)
    return [(sum(sel[i] * rest[j - i] for i in range(max(0, j - t + k), min(k, j) + 1)), q[j])
            for j in range(t + 1)]


def _exact_delta(laws, eps, epochs=1):
    """max over both directions of Σ (P − e^ε Q)_+ of the ``epochs``-fold product."""
    alpha = mp.e ** mp.mpf(eps)
    best = mp.mpf(0)
    for swap in (False, True):
        total = mp.mpf(0)
        for combo in itertools.product(laws, repeat=epochs):
            a = mp.fprod(mp.mpf(x.numerator) / x.denominator for x, _ in combo)
            b = mp.fprod(mp.mpf(y.numerator) / y.denominator for _, y in combo)
            a, b = (b, a) if swap else (a, b)
            total += max(a - alpha * b, 0)
        best = max(best, total)
    return float(best)


@pytest.mark.parametrize("t,k", [(4, 2), (5, 2), (6, 3), (6, 2)])
def test_randomized_response_lower_end_against_exact_enumeration(t, k):
    m = RandomAllocation()(RandomizedResponse(p=0.75), t, selected=k)
    laws = _count_laws(Fraction(3, 4), t, k)
    for eps in EPS:
        exact = _exact_delta(laws, eps)
        b = m.get_approx_delta_bounds(eps, accuracy=1e-3)
        assert b.lower_of == "mechanism"
        assert b.lower <= exact * (1 + 1e-12) <= b.upper * (1 + 2e-12), (t, k, eps, b, exact)
        assert b.lower >= exact * (1 - 2e-3), (t, k, eps, b.lower, exact)  # a sufficient statistic


def test_two_epochs_count_the_epoch_statistic_once_each():
    """Two epochs of 2 of 4: the witness rides on one of each epoch's two pairs; counted on
    both it would be the statistic of four epochs, above the exact value."""
    m = Composition()([RandomAllocation()(RandomizedResponse(p=2 / 3), 4, selected=2)], [2])
    laws = _count_laws(Fraction(2, 3), 4, 2)
    for eps in (0.1, 0.5):
        exact = _exact_delta(laws, eps, epochs=2)
        b = m.get_approx_delta_bounds(eps, accuracy=1e-2)
        assert b.lower <= exact * (1 + 1e-12) <= b.upper * (1 + 2e-12), (eps, b, exact)
        assert b.lower >= exact * (1 - 2e-2)


def test_gaussian_lower_end_brackets_with_the_upper_one():
    """100 steps, 2 selected (σ = 1): an interval where there was none, within 10 %."""
    m = RandomAllocation()(GaussianMechanism(sigma=1.0), 100, selected=2)
    b = m.get_approxDP_bounds(1e-5)
    assert b.lower_of == "mechanism" and 0 < b.lower <= b.upper <= 1.1 * b.lower, b


def test_beyond_the_support_the_lower_end_is_absent_with_its_reason(monkeypatch):
    """More than SUPPORT/4 steps: no witness (here SUPPORT lowered to 16, so 5 steps are too many)."""
    monkeypatch.setattr("dpaccount.pld.allocation.lower.SUPPORT", 16)
    m = RandomAllocation()(RandomizedResponse(p=0.75), 5, selected=2)
    b = m.get_approx_delta_bounds(0.5, accuracy=1e-2)
    assert b.lower is None and "not attained" in b.reason


def _enumerated(p, q, t, k):
    """[(P_t^(k)(o), Q^t(o))] over all outcomes o of t steps (floats: sums of ≤ C(t, k) products)."""
    subsets = list(itertools.combinations(range(t), k))
    out = []
    for o in itertools.product(range(len(p)), repeat=t):
        pa = sum(mp.fprod(p[x] if i in sub else q[x] for i, x in enumerate(o)) for sub in subsets) / len(subsets)
        out.append((pa, mp.fprod(q[x] for x in o)))
    return out


def test_an_asymmetric_finite_base_with_infinite_losses_both_directions():
    """A five-outcome base with P-mass where Q = 0 (L = +∞) and Q-mass where P = 0: each
    direction's witness rounds its own P-side down (the add one is a reversed pair); the
    lower end stays below the exact δ (all 5^4 outcomes enumerated, both directions)."""
    from dpaccount import DiscreteMechanism

    p, q = [0.45, 0.3, 0.2, 0.05, 0.0], [0.2, 0.3, 0.4, 0.0, 0.1]
    m = RandomAllocation()(DiscreteMechanism(p, q), 4, selected=2)
    laws = _enumerated([mp.mpf(x) for x in p], [mp.mpf(x) for x in q], 4, 2)
    for eps in (0.0, 0.3, 1.0):
        alpha = mp.e ** eps
        exact = float(max(mp.fsum(max(a - alpha * b, 0) for a, b in laws),
                          mp.fsum(max(b - alpha * a, 0) for a, b in laws)))
        b = m.get_approx_delta_bounds(eps, accuracy=1e-2)
        assert b.lower_of == "mechanism" and b.lower <= exact * (1 + 1e-12) <= b.upper * (1 + 2e-12), (eps, b, exact)
        assert b.lower >= 0.5 * exact, (eps, b.lower, exact)


@pytest.mark.parametrize("eps", [0.15, 0.25, 0.35, 1.0])
def test_an_atom_at_the_top_loss_stays_below_the_top_edge(eps):
    """The lattices of Y end at a_n = fl(e^top), top the largest loss; np.log(a_n) rounds
    below ``top`` for some ε, and which ε depends on the numpy build (on an x86 AVX-512
    machine: 0.15, 0.25, 0.35 with numpy 2.1; also 1, (1, 0.1)-DP's, with 1.23, where the
    witness merged that atom with L = +∞). The atom at L = top is in the last finite cell,
    with its exact masses, and the top cell is empty."""
    n, pair = 1024, leaky_rr_pair(eps, 0.1)
    top = float(np.max(pair.atoms[0]))
    a, b, _, _ = ratio_cells(pair, math.exp(top) / n, n, top)
    e = math.exp(eps)
    assert a[-1] == 0.0 and b[-1] == 0.0
    assert a[-2] == pytest.approx(0.9 * e / (1 + e), rel=1e-12)
    assert b[-2] == pytest.approx(0.9 / (1 + e), rel=1e-12)


def test_a_convolution_longer_than_one_dot_brackets_the_exact_sums():
    """The witness's convolution takes the shorter law in pieces of 4,096 points: 9,000 and
    12,000 points of 26-bit floats (exact products), rounded up and down, against the exact
    sums (Fractions) at outputs on both sides of the pieces' edges."""
    from dpaccount.pld.allocation.lower import _convolve
    rng = np.random.default_rng(11)
    x, y = (np.ldexp(rng.integers(1, 2 ** 26, n), -26 - rng.integers(0, 8, n)) for n in (9000, 12000))
    up, down = _convolve(x, y, True), _convolve(x, y, False)
    for j in (0, 4095, 4096, 4097, 8191, 8192, 8999, 9000, 12000, 15000, 20998):
        lo, hi = max(0, j - len(y) + 1), min(j, len(x) - 1)
        exact = sum(Fraction(float(x[i])) * Fraction(float(y[j - i])) for i in range(lo, hi + 1))
        assert Fraction(float(down[j])) <= exact <= Fraction(float(up[j]))
        assert float(up[j]) <= float(exact) * (1 + 1e-11) and float(down[j]) >= float(exact) * (1 - 1e-11)
