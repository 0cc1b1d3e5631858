"""The lower ends of ``SamplingWithReplacement`` for non-Gaussian additive-noise bases
(``pld/pairs/copies_noise.py``) against brute force and mpmath.

Brute force: n records with per-record values in a small set V, a batch of b uniform
draws with replacement (all n^b lists), the base adds discrete Laplace (or discrete
Gaussian) noise to the sum of the drawn values. Every dataset and every replace-one
neighbour is enumerated; the output laws are exact on the integers (discrete Laplace:
the outcomes below the least and above the largest sum are lumped, which loses nothing,
the loss being constant there; discrete Gaussian: cut at ±40σ, < 1e-300 dropped). The
worst δ(ε) over them bounds the lower end from above and the default answer from below;
the instance "x adds W, the others 0" bounds the lower end from below (up to the
witness's rounding).
"""
import itertools
import math

import mpmath as mp
import numpy as np
import pytest
from oracles import float_sum_slack

from dpaccount.errors import AccuracyNotReached
from dpaccount import REPLACE_ONE, Composition, SamplingWithReplacement, ToReplaceOne
from dpaccount.mechanisms.discrete import DiscreteGaussianMechanism, DiscreteLaplaceMechanism
from dpaccount.mechanisms.standard import BinomialMechanism, LaplaceMechanism

EPS = [0.0, 0.1, 0.3, 0.7, 1.5]
SLACK = float_sum_slack(4096)


def dlap_law(t, lo, hi):
    """DLap(t) on lo..hi with the mass below lo lumped at lo and above hi at hi (exact sums)."""
    rho = math.exp(-1.0 / t)
    y = np.arange(lo, hi + 1)
    law = (1 - rho) / (1 + rho) * rho ** np.abs(y)
    law[0] = rho ** (-lo) / (1 + rho) if lo <= 0 else law[0]   # P(Z ≤ lo), lo ≤ 0
    law[-1] = rho ** hi / (1 + rho) if hi >= 0 else law[-1]    # P(Z ≥ hi), hi ≥ 0
    return law


def dgauss_law(sigma, lo, hi):
    y = np.arange(lo, hi + 1)
    wide = np.arange(-60 * int(sigma + 1), 60 * int(sigma + 1) + 1)
    return np.exp(-y * y / (2 * sigma ** 2)) / np.exp(-wide * wide / (2 * sigma ** 2)).sum()


def output_law(data, b, noise, smin, smax, pad):
    """The law of sum(drawn values) + Z on smin − pad .. smax + pad (Z's law from ``noise(lo, hi)``)."""
    out = np.zeros(smax - smin + 2 * pad + 1)
    lists = list(itertools.product(range(len(data)), repeat=b))
    for draw in lists:
        s = sum(data[i] for i in draw)
        out += noise(smin - pad - s, smax + pad - s)
    return out / len(lists)


def bounds_of(mech, eps, accuracy=1e-3):
    """The certified interval, as wide as the (loose, K-revealing) pair leaves it."""
    try:
        return mech.get_approx_delta_bounds(eps, method="pld", accuracy=accuracy)
    except AccuracyNotReached as exc:
        return exc.bounds


def hockey(p, q, eps):
    return float(np.maximum(p - math.exp(eps) * q, 0.0).sum())


def brute(values, n, b, noise, pad):
    """(worst δ(ε) over all replace-one neighbours, δ(ε) of x = max(values), others min)."""
    smin, smax = b * min(values), b * max(values)
    law = {}
    worst = np.zeros(len(EPS))
    for data in itertools.product(values, repeat=n):
        for i, other in itertools.product(range(n), values):
            if other == data[i]:
                continue
            d2 = data[:i] + (other,) + data[i + 1:]
            p, q = (law.setdefault(d, output_law(d, b, noise, smin, smax, pad)) for d in (data, d2))
            worst = np.maximum(worst, [hockey(p, q, e) for e in EPS])
    x = (max(values),) + (min(values),) * (n - 1)
    y = (min(values),) * n
    inst = [hockey(law[x], law[y], e) for e in EPS]
    return worst, np.array(inst)


CASES = [
    # (base, per-record values, noise law on lo..hi, pad)
    (lambda: DiscreteLaplaceMechanism(1.0, relation=REPLACE_ONE), (0, 1), lambda lo, hi: dlap_law(1.0, lo, hi), 0),
    (lambda: DiscreteLaplaceMechanism(2.0, 2, relation=REPLACE_ONE), (0, 1, 2),
     lambda lo, hi: dlap_law(2.0, lo, hi), 0),
    (lambda: ToReplaceOne()(DiscreteLaplaceMechanism(1.5)), (-1, 1), lambda lo, hi: dlap_law(1.5, lo, hi), 0),
    (lambda: DiscreteGaussianMechanism(0.8, relation=REPLACE_ONE), (0, 1),
     lambda lo, hi: dgauss_law(0.8, lo, hi), 40),
]


@pytest.mark.parametrize("case", range(len(CASES)))
@pytest.mark.parametrize("n,b", [(3, 2), (4, 3)])
def test_lower_end_attained_and_upper_above_brute_force(case, n, b):
    lib, values, noise, pad = CASES[case]
    worst, inst = brute(values, n, b, noise, pad)
    mech = SamplingWithReplacement()(lib(), n, b)
    bounds = bounds_of(mech, EPS)
    assert bounds.lower_of == "mechanism", bounds.reason
    assert np.all(bounds.lower <= worst + SLACK), (bounds.lower, worst)
    assert np.all(mech.get_approx_delta(EPS) >= worst - SLACK), (mech.get_approx_delta(EPS), worst)
    # the lower end is the instance "x adds W, the others 0" (weights rounded down by ~1e-15)
    assert np.all(bounds.lower >= inst * (1 - 1e-4) - SLACK), (bounds.lower, inst)


def test_composed_lower_end_below_brute_force():
    lib, values, noise, pad = CASES[0]
    n, b = 3, 2
    smin, smax = 0, b
    laws = {d: output_law(d, b, noise, smin, smax, pad) for d in itertools.product(values, repeat=n)}
    worst = np.zeros(len(EPS))
    for data in laws:
        for i in range(n):
            d2 = data[:i] + (1 - data[i],) + data[i + 1:]
            pp, qq = np.outer(laws[data], laws[data]).ravel(), np.outer(laws[d2], laws[d2]).ravel()
            worst = np.maximum(worst, [hockey(pp, qq, e) for e in EPS])
    bounds = bounds_of(Composition()([SamplingWithReplacement()(lib(), n, b)], [2]), EPS)
    assert bounds.lower_of == "mechanism"
    assert np.all(bounds.lower <= worst + SLACK) and np.all(bounds.upper >= worst - SLACK)
    assert np.all(bounds.lower > 0.5 * worst)  # not vacuous


def _bisect_root(f, lo, hi):
    """The root of an increasing f on [lo, hi] (mpmath, 100 halvings)."""
    for _ in range(100):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if f(mid) < 0 else (lo, mid)
    return lo


@pytest.mark.parametrize("n,b,scale,eps", [(20, 3, 1.0, [0.0, 0.05, 0.2]), (1000, 4, 2.0, [0.0, 0.002, 0.005])])
def test_laplace_binned_witness_against_quadrature(n, b, scale, eps):
    """ToReplaceOne(Laplace(b)): W = 2. The unbinned instance Σ_k P(K = k) Lap(2k, b) against
    Lap(0, b) by mpmath quadrature (split at the kinks and at the loss's crossing of ε, where
    the integrand's max(·, 0) bends): the lower end lies below it, and within the binning's
    loss (≤ 1e-3 per cell) of it."""
    mech = SamplingWithReplacement()(ToReplaceOne()(LaplaceMechanism(b=scale)), n, b)
    bounds = bounds_of(mech, eps)
    with mp.workdps(30):
        r = mp.mpf(1) / n
        w = [mp.binomial(b, k) * r ** k * (1 - r) ** (b - k) for k in range(b + 1)]
        lap = lambda x, c: mp.e ** (-abs(x - c) / scale) / (2 * scale)
        mix = lambda x: mp.fsum(w[k] * lap(x, 2 * k) for k in range(b + 1))
        exact = []
        for e in eps:
            gap = lambda x: mp.log(mix(x)) - mp.log(lap(x, 0)) - e  # increasing in x
            cross = [_bisect_root(gap, mp.mpf(0), mp.mpf(2 * b))] if gap(0) < 0 < gap(2 * b) else []
            f = lambda x: max(mix(x) - mp.e ** e * lap(x, 0), 0)
            exact.append(float(mp.quad(f, [-mp.inf] + sorted(list(range(0, 2 * b + 1)) + cross) + [mp.inf])))
    exact = np.array(exact)
    assert np.all(bounds.lower <= exact * (1 + 1e-9)), (bounds.lower, exact)
    assert np.all(bounds.lower >= exact * (1 - 3e-3)), (bounds.lower, exact)
    assert np.all(bounds.upper >= exact)


def test_the_issue_example_has_a_lower_end():
    m = Composition()([SamplingWithReplacement()(ToReplaceOne()(LaplaceMechanism(b=2.0)), 1000, 4)], [100])
    r = m.get_approxDP_bounds(1e-5)
    assert r.lower_of == "mechanism" and 0 < r.lower <= r.upper


def test_a_base_without_an_instance_keeps_no_lower_end():
    """The binomial's replace-one pair is a hull: no instance is built, the lower end is absent."""
    m = SamplingWithReplacement()(BinomialMechanism(6, 0.5, 1, relation=REPLACE_ONE), 10, 3)
    r = m.get_approx_delta_bounds(0.5)
    assert r.lower is None and "attained" in r.reason


@pytest.mark.slow
@pytest.mark.parametrize("case", range(len(CASES)))
@pytest.mark.parametrize("n,b", [(2, 3), (5, 2), (5, 3)])
def test_sweep_lower_end_attained_and_upper_above_brute_force(case, n, b):
    """The default test's checks on larger brute forces (5 records: 5^3 lists per dataset)."""
    test_lower_end_attained_and_upper_above_brute_force(case, n, b)


@pytest.mark.parametrize("width", [0.1, 2.0 / 3.0, 1.0, 2 * 0.7])
def test_gaussian_witness_centres_are_an_instance(width):
    """The Gaussian witness's centres are k·W' with one W' ≤ W (exactly, in rationals): an
    instance (x adds W' per copy), never above one by an ulp of μ."""
    from fractions import Fraction

    from dpaccount.pld.pairs.copies_noise import gaussian_copies_pair
    ks = list(range(0, 9))
    pair = gaussian_copies_pair(1.3, width, ks, [1.0 / len(ks)] * len(ks))
    step = Fraction(float(pair._centers[1]))
    assert step <= Fraction(width) and step >= Fraction(width) * (1 - Fraction(1, 2 ** 39))
    assert all(Fraction(float(c)) == k * step for k, c in zip(ks, pair._centers))
