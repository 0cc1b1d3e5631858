"""discounted_sums against exact sums (mpmath, 60 digits): every y[i] within the
η·y[i] + absolute that it states, over steps that give one block, many blocks,
blocks of one point and a scan stopped by underflow."""
import math

import mpmath
import numpy as np
import pytest

from dpaccount.pld.grids.discounted import discounted_sums


def _masses(seed, n):
    """Non-negative floats over many binades, with zeros and subnormals: a grid's masses."""
    rng = np.random.default_rng(seed)
    x = rng.random(n) * np.exp(rng.uniform(-700, 0, n))
    x[rng.random(n) < 0.1] = 0.0
    x[rng.random(n) < 0.01] = 5e-324
    return x


def _exact(x, step):
    """y[i] = Σ_{k≤i} x[k]·e^{−(i−k)·step} at 60 digits, by the recurrence y[i] = x[i] + e^{−step}·y[i−1]."""
    with mpmath.workdps(60):
        r, y, out = mpmath.exp(-mpmath.mpf(step)), mpmath.mpf(0), []
        for xi in x:
            y = mpmath.mpf(float(xi)) + r * y
            out.append(y)
        return out


def _check(x, step):
    got, eta, absolute = discounted_sums(x, step)
    assert got.dtype == np.float64 and got.shape == (len(x),) and not np.signbit(got).any()
    assert 0 < eta < 1e-9 and absolute < 1e-300
    with mpmath.workdps(60):
        for g, e in zip(got, _exact(x, step)):
            assert abs(mpmath.mpf(float(g)) - e) <= eta * e + absolute, (step, float(g), e)
    return got, eta


@pytest.mark.parametrize("step", [1e-7, 1e-3, 0.05, 1.0, 8.0, 20.0, 40.0, 400.0])
def test_within_the_stated_error_of_the_exact_sums(step):
    for seed, n in enumerate([1, 2, 7, 3000]):
        _check(_masses(seed, n)[::-1], step)  # a reversed view, as grid.py passes its masses


@pytest.mark.parametrize("step", [0.01, 0.3])
def test_long_slowly_decaying_sums(step):
    """Masses of one binade over ~3·10⁴ points: many blocks (0.3: B = 106) and a scan that
    stops on underflow, where the sums are far above each point's own mass."""
    rng = np.random.default_rng(7)
    x = rng.random(30_000) * 1e-5
    got, eta = _check(x, step)
    assert got[-1] > 0.4e-5 / step  # ~ the mean mass / (1 − e^{−step}): carried across the blocks


@pytest.mark.parametrize("step", [0.01, 0.3, 8.0, 40.0])
def test_one_mass_discounted_across_every_block(step):
    """y[i] = e^{−i·step} exactly: the sum of every later point is carried from the first
    block alone (through the scan and the carry into each block)."""
    n = min(20_000, int(700 / step))
    x = np.zeros(n)
    x[0] = 1.0
    got, _ = _check(x, step)
    assert got[-1] > 0.0


def test_empty_and_exact_cases():
    got, eta, absolute = discounted_sums(np.zeros(0), 0.1)
    assert got.shape == (0,)
    got, _, _ = discounted_sums(np.zeros(10), 0.1)
    assert not got.any()
    got, _, _ = discounted_sums(np.array([1.0, 0.0, 0.0]), math.log(2.0))
    np.testing.assert_allclose(got, [1.0, 0.5, 0.25], rtol=1e-14)


@pytest.mark.parametrize("step", [1e-5, 0.01, 3.0])
def test_sums_fed_in_pieces_are_those_of_one_pass(step):
    """``DiscountedScan`` fed the points in pieces (cut inside blocks and at their edges)
    gives the floats one pass gives: the running sums go on from where they stopped."""
    from dpaccount.pld.grids.discounted import DiscountedScan, _block
    x = _masses(7, 200_000)
    whole, eta, absolute = discounted_sums(x, step)
    block = _block(step)
    rng = np.random.default_rng(1)
    for cuts in ([0, 1, block, block + 1, 3 * block], sorted(rng.integers(0, len(x), 6)), [0]):
        scan = DiscountedScan(step, len(x))
        edges = [c for c in dict.fromkeys([0] + [min(int(c), len(x)) for c in cuts] + [len(x)])]
        got = np.concatenate([scan.extend(x[a:b]) for a, b in zip(edges[:-1], edges[1:])])
        assert np.array_equal(got, whole) and scan.bound == (eta, absolute)
