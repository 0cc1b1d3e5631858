"""compose() against exact k-fold randomized response (mpmath binomial sums).

Randomized response with log-odds a on a grid of step a/m has its two atoms
on grid points, so the composed grids are the exact law up to rounding, the
windows and the FFT noise: everything compose() must bound. Pessimistic
δ(ε) ≥ exact ≥ optimistic δ(ε) is asserted at every ε from 0 to the top of
the support, through both paths (exact direct convolution for small
supports, FFT beyond), with windows cut by the Chernoff tail, and tilted
towards small δ. Where the answer is far above the window's tail and the
noise, it is also tight.
"""
import functools
import math

import numpy as np
import pytest
from oracles import rr_composed_delta

from dpaccount.pld.grids.compose import _DIRECT_LIMIT, compose, saddle_tilt
from dpaccount.pld.grids.discretise import pair_to_grid
from dpaccount.pld.pairs.discrete_pair import randomized_response_pair


@functools.lru_cache(maxsize=None)
def _exact(eps, p, k):
    """Exact δ(ε) of k-fold randomized response (mpmath; shared by the tests below)."""
    return rr_composed_delta(eps, p, k)


def _points(p, m, k):
    """40 levels from 0 to the top of the composed support (exclusive)."""
    return np.linspace(0.0, _items(p, m, k, True)[1], 41)[:-1]


def _items(p, m, k, pessimistic):
    a = math.log(p / (1 - p))
    grid = pair_to_grid(randomized_response_pair(p), a / m, -m - 1, m + 1, pessimistic)
    return [(grid, k)], k * a


def _composed(p, m, k, tail, pessimistic, tilt_at=None):
    items, _ = _items(p, m, k, pessimistic)
    base = compose(items, tail=tail, pessimistic=pessimistic)
    if tilt_at is None:
        return base
    return compose(items, tail=tail, pessimistic=pessimistic, tilt=saddle_tilt(items, tilt_at), base=base)


CASES = [
    # (p, m, k, window tail, tilted at the loss ...): id
    pytest.param(0.6, 20, 120, 1e-30, None, id="fft"),
    pytest.param(0.6, 20, 120, 1e-6, None, id="fft-window-cut"),
    pytest.param(0.9, 4, 40, 1e-3, None, id="direct-window-cut"),
    pytest.param(0.55, 10, 300, 1e-30, 31.0, id="fft-tilted"),
    pytest.param(0.55, 10, 300, 1e-30, 50.0, id="fft-tilted-beyond-the-window"),  # δ(50) ≈ 1e-44
    # its window starts at ε ≈ 1.4, below the mean: the mass under it (0.41 of the law) moved up
    # to its first bin by the bound at the bottom quantile's own λ (``compose._mass_below``)
    pytest.param(0.55, 10, 300, 1e-30, 26.0, id="fft-tilted-bottom-above-0"),
]


@pytest.mark.parametrize("p,m,k,tail,tilt_at", CASES)
def test_composed_grids_bracket_the_exact_composition(p, m, k, tail, tilt_at):
    pess = _composed(p, m, k, tail, True, tilt_at)
    opt = _composed(p, m, k, tail, False, tilt_at)
    for eps in _points(p, m, k):
        exact = _exact(eps, p, k)
        assert opt.delta(eps) <= exact <= pess.delta(eps), eps


def test_the_paths_are_the_ones_named():
    """The cases above go through the path their id names."""
    for p, m, k, _, _ in [c.values for c in CASES]:
        items, _ = _items(p, m, k, True)
        support = k * (len(items[0][0].probs) - 1) + 1
        assert (support <= _DIRECT_LIMIT) == (k == 40)


@pytest.mark.parametrize("p,m,k,tail,tilt_at", CASES)
def test_composed_grids_are_tight_above_the_tail(p, m, k, tail, tilt_at):
    """Where δ is well above the window's tail and the noise bound, the bracket is
    narrow: the pessimistic answer within 1e-6 of exact (relative), the
    optimistic one within 1e-6 too (tilted: near the tilt's centre)."""
    pess = _composed(p, m, k, tail, True, tilt_at)
    opt = _composed(p, m, k, tail, False, tilt_at)
    for eps in (_points(p, m, k) if tilt_at is None else [tilt_at]):
        exact = float(_exact(eps, p, k))
        if exact < (1e6 * tail if tilt_at is None else 0.0) or exact < 1e6 * pess.noise_effect(eps):
            continue
        assert pess.delta(eps) <= exact * (1 + 1e-6), eps
        assert opt.delta(eps) >= exact * (1 - 1e-6), eps


@pytest.mark.parametrize("p,m,k,tail,tilt_at", [c for c in CASES if c.values[4] is not None])
def test_a_tilted_grid_alone_bounds_the_exact_composition(p, m, k, tail, tilt_at):
    """A pessimistic tilted grid composed without the untilted one (``StepProfile``'s lean ε(δ)
    reads: no bin-by-bin cap, and no untilted window bottom searched, its own bottom's mass
    bounded afresh) is an upper bound at every ε on its own, and tight at its centre."""
    items, _ = _items(p, m, k, True)
    alone = compose(items, tail=tail, pessimistic=True, tilt=saddle_tilt(items, tilt_at))
    for eps in _points(p, m, k):
        assert _exact(eps, p, k) <= alone.delta(eps), eps
    exact = float(_exact(tilt_at, p, k))
    assert alone.delta(tilt_at) <= exact * (1 + 1e-6)


class _GaussianK:
    """K(λ) = λm + λ²v/2 of a normal law N(m, v) (a composed Gaussian mechanism's PLD), exact."""

    def __init__(self, m, v):
        self.m, self.v = m, v

    def __call__(self, lam):
        return lam * self.m + 0.5 * lam * lam * self.v

    def error(self, lam):
        return 0.0


@pytest.mark.parametrize("mu", [0.3, 1.0, 4.0])
def test_a_held_window_top_holds_the_tilted_law_below_its_tail(mu):
    """``_top_holds`` is a proof, not a heuristic: wherever it says the untilted top holds the law
    tilted at θ, the exact tilted mass above the top (a normal tail: the tilt of N(m, v) at θ is
    N(m + θv, v)) is ``_TOP_MARGIN`` below e^``log_tilted``; it says so for some settings."""
    from scipy.stats import norm

    from dpaccount.pld.grids.compose import _TOP_MARGIN, _top_holds
    mgf = _GaussianK(0.5 * mu * mu, mu * mu)
    said = 0
    for tail in (1e-30, 1e-60):  # the untilted window's tail (far below the tilted one's)
        for lam in np.linspace(0.5, 30.0, 25):
            top = (mgf(lam) - math.log(tail)) / lam  # K(λ) − λ·top = log tail: the window's top
            for theta in np.linspace(0.02, 0.98, 13) * lam:
                for log_tilted in (math.log(1e-10), math.log(1e-20)):
                    if _top_holds(mgf, theta, lam, top, tail, log_tilted):
                        said += 1
                        exact = norm.logsf(top, loc=mgf.m + theta * mgf.v, scale=math.sqrt(mgf.v))
                        assert exact <= log_tilted - _TOP_MARGIN, (mu, tail, lam, theta)
    assert said > 0
