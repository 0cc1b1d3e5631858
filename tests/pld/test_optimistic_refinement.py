"""The optimistic grid's hull in O(n), and certified intervals refined one
step halving at a time.

* The hull from the isotonic regression of the slopes is the lower convex
  hull: checked against the definition (a point is a vertex iff it lies
  strictly below every chord of other points around it) on noisy convex
  curves, and the optimistic grids it gives still lie below the exact
  hockey-stick curves (a closed form, a quadrature).
* ``get_*_bounds`` refines only where the interval is too wide, halving the
  step per round: the DP-SGD interval is reached one level below the ε(δ)
  queries' step (it took eight times finer before), and it holds the exact
  value of a case with a closed form.
"""
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dpaccount as dpa
from dpaccount.pld.grids.discretise import loss_range
from dpaccount.pld.grids.discretise_optimistic import _Curve, _lower_hull, pair_to_lower_grid
from dpaccount.pld.pairs.base import GaussianPair
from dpaccount.pld.pairs.poisson_sampling import PoissonRemovePair
import oracles


def _hull_by_definition(x, y):
    """Vertices of the lower convex hull by brute force (O(n³), small n): the
    points below every chord by more than 1e-12 (the hull under test sees y
    through e = y + x − 1, which rounds away differences far below that)."""
    n, keep = len(x), []
    for k in range(n):
        on = True
        for i in range(k):
            for j in range(k + 1, n):
                chord = y[i] + (y[j] - y[i]) * (x[k] - x[i]) / (x[j] - x[i])
                if y[k] >= chord - 1e-12:
                    on = False
        if on:
            keep.append(k)
    return keep


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(-1.0, 1.0), min_size=3, max_size=24), st.floats(0.0, 2.0))
def test_hull_is_the_lower_convex_hull(noise, curvature):
    x = np.cumsum(np.linspace(1.0, 2.0, len(noise)))
    y = curvature * (x - x.mean()) ** 2 + np.asarray(noise)
    curve = _Curve(x, y + x - 1.0, y)  # e = g − (1 − x): the two forms agree
    got = list(_lower_hull(curve))
    want = _hull_by_definition(x, y)
    assert got[0] == 0 and got[-1] == len(x) - 1
    assert set(want) <= set(got)  # every strict vertex is kept
    for i, j, k in zip(got, got[1:], got[2:]):  # and what is kept is convex
        assert (y[j] - y[i]) / (x[j] - x[i]) <= (y[k] - y[j]) / (x[k] - x[j]) + 1e-12


@pytest.mark.parametrize("step", [1e-2, 1e-3])
def test_optimistic_grids_stay_below_the_exact_curve(step):
    sigma, q = 1.25, 0.01
    pairs = {"gaussian": (GaussianPair(1 / sigma), lambda e: oracles.gdp_delta(e, 1 / sigma)),
             "poisson remove": (PoissonRemovePair(GaussianPair(1 / sigma), q),
                                lambda e: oracles.subsampled_gaussian_remove_delta(e, sigma, q))}
    eps = np.linspace(0.0, 3.0, 13)
    for name, (pair, exact) in pairs.items():
        lo, hi = loss_range(pair, 1e-32)
        grid = pair_to_lower_grid(pair, step, math.floor(lo / step), math.ceil(hi / step))
        got = grid.delta(eps)
        for e, d in zip(eps, got):
            assert d <= float(exact(e)), (name, step, e)


def test_dpsgd_interval_is_reached_one_halving_below_the_query_step():
    m = dpa.Composition()([dpa.PoissonSampling()(dpa.GaussianMechanism(sigma=1.1), 256 / 60000)], [14063])
    b = m.get_approxDP_bounds(1e-5)
    query_step = m.privacy_profile(1e-3).step
    assert b.upper - b.lower <= 1e-3 * b.upper
    assert b.step >= query_step / 2 * (1 - 1e-12)  # one halving (it was eight times finer)
    assert b.upper == m.get_approxDP(1e-5)  # the upper bound is the default answer, unrefined


@pytest.mark.parametrize("eps", [0.5, 2.0, 4.0])
def test_refined_interval_holds_the_exact_value(eps):
    sigma, k = 2.0, 30
    m = dpa.Composition()([dpa.GaussianMechanism(sigma=sigma)], [k])
    exact = float(oracles.gdp_delta(eps, math.sqrt(k) / sigma))
    b = m.get_approx_delta_bounds(eps, method="pld")
    assert b.lower <= exact <= b.upper
    assert b.upper - b.lower <= 1e-3 * b.upper
