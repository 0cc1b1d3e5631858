"""Adversarial review of issue 40 (speed at equal accuracy): the vectorised discounted sums
and the eps(delta) plan's tail split.

Each case is checked against an independent value: the discounted sums against the
recurrence y[i] = x[i] + e^{-h}·y[i-1] in mpmath at 40 digits (inputs at block boundaries,
blocks of one to 2^16 points, a scan stopped by underflow, subnormals, reversed views,
a few million points); a Gaussian composition through grids against the mu-GDP closed form
(Dong, Roth & Su 2022, Cor. 2.13); Poisson-subsampled Gaussian compositions against their
own certified interval (its lower end certified by the optimistic grid)."""
import math
import warnings

import mpmath as mp
import numpy as np
import pytest

from dpaccount import Composition, GaussianMechanism, PoissonSampling
from dpaccount.errors import AccuracyNotReached, GridTooLarge
from dpaccount.pld.grids.discounted import discounted_sums

ACCURACY = 1e-3  # the default accuracy


# ------------------------------------------------------------------ discounted sums
def _exact(x, step, every=1):
    """{i: y[i]} for i % every == 0 (and the last), by the recurrence in mpmath at 40 digits."""
    out = {}
    with mp.workdps(40):
        r, y = mp.exp(-mp.mpf(step)), mp.mpf(0)
        last = len(x) - 1
        for i, xi in enumerate(x.tolist()):
            y = xi + r * y
            if i % every == 0 or i == last:
                out[i] = y
    return out


def _worst(x, step, every=1):
    """max over the checked i of |ŷ[i] − y[i]| / (η·y[i] + absolute): at most 1 if the bound holds."""
    got, eta, absolute = discounted_sums(x, step)
    assert got.shape == (len(x),) and np.isfinite(got).all() and not np.signbit(got).any()
    worst = 0.0
    with mp.workdps(40):
        for i, y in _exact(x, step, every).items():
            worst = max(worst, float(abs(mp.mpf(float(got[i])) - y) / (eta * y + absolute)))
    return worst


def _patterns(n, seed):
    rng = np.random.default_rng(seed)
    spike = np.zeros(n)
    spike[0] = 1.0
    alternating = np.full(n, 5e-324)
    alternating[::2] = 1.0
    smallest_normal = rng.random(n)
    smallest_normal[rng.random(n) < 0.5] = 2.2250738585072014e-308
    return {"ones": np.ones(n), "spike": spike, "subnormal": np.full(n, 5e-324),
            "alternating": alternating, "smallest_normal": smallest_normal,
            "binades": rng.random(n) * np.exp(rng.uniform(-745, 0, n)),
            "rising": np.exp(np.maximum(-745.0, -3.0 * (n - np.arange(n))))}


# (step, B = ⌊32/step⌋ clipped to [1, 2^16]): many points a block, few, one; e^{-Bh} underflowing
_STEPS = [(0.3, 106), (1.0, 32), (32 / 3, 3), (16.0, 2), (31.999, 1), (32.0, 1), (745.2, 1), (1e5, 1)]


@pytest.mark.parametrize("step,block", _STEPS)
def test_discounted_sums_at_block_boundaries(step, block):
    """n one short of a block, a block, one past it, two blocks and one; each input pattern
    forwards and as a reversed view (grid.py passes its masses top down)."""
    for n in sorted({1, 2, block - 1, block, block + 1, 2 * block + 1, 300} - {0}):
        for name, x in _patterns(n, n).items():
            for view in (x, np.ascontiguousarray(x)[::-1]):
                assert _worst(view, step) <= 1.0, (step, n, name)


def test_discounted_sums_of_no_points_and_one():
    got, eta, absolute = discounted_sums(np.zeros(0), 0.5)
    assert got.shape == (0,) and eta > 0 and absolute > 0
    for x in (0.0, 5e-324, 1.0):
        got, _, _ = discounted_sums(np.array([x]), 0.5)
        assert got[0] == x  # one point: y[0] = x[0] (times e^0 = 1, exactly)


def test_discounted_sums_do_not_depend_on_later_points():
    """The docstring's claim: y[i] is the same float whatever follows x[i] (a grid's sums
    for m ≥ start are those of all its points)."""
    x = _patterns(5000, 3)["binades"]
    for step in (1e-3, 0.3, 40.0):
        whole, _, _ = discounted_sums(x, step)
        for m in (1, 106, 107, 1000, 4999):
            part, _, _ = discounted_sums(x[:m], step)
            assert np.array_equal(part, whole[:m]), (step, m)


def test_the_stated_bound_grows_with_count():
    """η and absolute are stated for ``count`` ≥ len(x) points: a larger count never states less."""
    x = np.ones(100)
    prev = (0.0, 0.0)
    for count in (100, 10 ** 3, 10 ** 5, 10 ** 7):
        _, eta, absolute = discounted_sums(x, 1e-4, count)
        assert eta >= prev[0] and absolute >= prev[1]
        prev = (eta, absolute)


@pytest.mark.slow
@pytest.mark.parametrize("n,step,name", [(2_000_000, 1e-5, "ones"), (3_000_000, 1e-6, "ones"),
                                         (1_000_000, 32 / 65536, "binades"), (1_500_000, 0.3, "ones")])
def test_discounted_sums_of_millions_of_points(n, step, name):
    """At and past the 2^16-point block cap (tiny h: up to 46 blocks and 6 scan passes),
    checked at every 7th point against the recurrence in mpmath."""
    x = _patterns(n, 1)[name][::-1] if name != "ones" else np.ones(n)
    assert _worst(x, step, every=7) <= 1.0


# ------------------------------------------------------------------ end to end: mu-GDP
def _gdp_delta(eps, mu):
    return mp.ncdf(-eps / mu + mu / 2) - mp.e ** eps * mp.ncdf(-eps / mu - mu / 2)


def _gdp_epsilon(delta, mu):
    """ε(δ) of μ-GDP by bisection in mpmath at 80 digits (an upper end, within 2^-250 of it)."""
    with mp.workdps(80):
        mu, delta = mp.mpf(mu), mp.mpf(delta)
        if _gdp_delta(0, mu) <= delta:
            return mp.mpf(0)
        lo, hi = mp.mpf(0), mp.mpf("1e-12")
        while _gdp_delta(hi, mu) > delta:
            lo, hi = hi, 2 * hi
        for _ in range(250):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if _gdp_delta(mid, mu) > delta else (lo, mid)
        return hi


def _check_gaussian(sigma, k, delta):
    mu = math.sqrt(k) / sigma
    m = Composition()([GaussianMechanism(sigma=sigma)], [k])
    exact = _gdp_epsilon(delta, mu)
    got = m.get_approxDP(delta, method="pld")
    b = m.get_approxDP_bounds(delta, method="pld")  # the optimistic grid's padding (lower end)
    with mp.workdps(80):
        assert mp.mpf(b.lower) <= exact <= mp.mpf(b.upper), (sigma, k, delta, b, exact)
        assert mp.mpf(got) >= exact, (sigma, k, delta, got, exact)
        assert mp.mpf(got) <= exact * (1 + ACCURACY), (sigma, k, delta, got, exact)
        if exact > 0:  # δ(ε) at the exact ε: at least δ, within the accuracy
            d = m.get_approx_delta(float(exact), method="pld")
            true = _gdp_delta(mp.mpf(float(exact)), mp.mpf(mu))
            assert true <= mp.mpf(d) <= true * (1 + ACCURACY), (sigma, k, delta, d, true)


@pytest.mark.parametrize("sigma,k,delta", [(1.0, 5, 1e-5), (0.3, 2, 1e-20), (5.0, 100, 1e-12)])
def test_gaussian_through_grids_against_gdp(sigma, k, delta):
    _check_gaussian(sigma, k, delta)


@pytest.mark.slow
@pytest.mark.parametrize("sigma", [0.3, 1.0, 5.0, 1e3])
@pytest.mark.parametrize("k", [1, 2, 5])
def test_gaussian_through_grids_against_gdp_sweep(sigma, k):
    """σ ≥ 0.3 at k ≤ 5 (σ = 0.3, k = 100 has mass beyond the float range: refused).
    σ = 1e11 is left out: there ε(1e-12) ~ 1e-11 reads 0.1-0.3 % high, on main as here."""
    for delta in (1e-1, 1e-5, 1e-12, 1e-20, 1e-30):
        _check_gaussian(sigma, k, delta)


# ------------------------------------------------------------------ Poisson-subsampled Gaussian
@pytest.mark.slow
@pytest.mark.parametrize("q,sigma,steps,delta", [
    (2e-5, 0.5, 1000, 1e-8), (2e-5, 0.5, 100_000, 1e-8),    # the Connect-the-Dots blog
    (2e-5, 0.5, 100_000, 1e-10), (0.01, 0.5, 1000, 1e-5), (0.5, 1.1, 1000, 1e-10),
    (0.5, 3.0, 100_000, 1e-5), (256 / 60000, 1.1, 20, 1e-5), (1e-3, 0.8, 100, 1e-6)])
def test_subsampled_gaussian_default_within_the_accuracy_of_a_certified_interval(q, sigma, steps, delta):
    """The default ε(δ) (the tail split's coarser level where it applies) is at least the
    lower end of the interval certified at accuracy 1e-4, and within the default accuracy
    of that lower end, hence of the exact ε."""
    m = Composition()([PoissonSampling()(GaussianMechanism(sigma), q)], [steps])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = m.get_approxDP(delta)
        try:
            b = m.get_approxDP_bounds(delta, accuracy=1e-4)
        except (AccuracyNotReached, GridTooLarge):
            b = m.get_approxDP_bounds(delta, accuracy=1e-3)
    assert b.lower <= got <= b.lower * (1 + ACCURACY), (q, sigma, steps, delta, got, b)


@pytest.mark.slow
@pytest.mark.parametrize("q,sigma,steps", [(5e-5, 1.1, 10_000), (1e-5, 0.8, 10_000), (1e-5, 1.1, 100_000)])
def test_subsampled_gaussian_deep_tail_stays_an_upper_bound(q, sigma, steps):
    """ε(1e-10) at tiny q, where the tail split answers from a coarser level: never below the
    lower end of the interval certified at the finest grid the accuracy 1e-2 reaches (where
    that interval is wider than asked, AccuracyNotReached holds it)."""
    m = Composition()([PoissonSampling()(GaussianMechanism(sigma), q)], [steps])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = m.get_approxDP(1e-10)
        try:
            lower = m.get_approxDP_bounds(1e-10, accuracy=1e-2).lower
        except AccuracyNotReached as e:
            assert e.bounds is not None and e.bounds.certified
            lower = e.bounds.lower
    assert lower <= got <= m.get_approxDP(1e-10, method="rdp"), (q, sigma, steps, got, lower)
