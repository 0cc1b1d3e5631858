"""Undoing the optimistic grids' frame (``accountant.whole_frame_step``, ``_composed``).

An optimistic grid of a Poisson pair sits in a frame shifted by the pair's
edge; the composition is moved back by the total shift T = Σ k·edge in whole
steps, rounded down. Where T is off the step's lattice the remainder (up to
a step) was lost from every lower end, and at a fixed remainder it does not
shrink as the step halves: σ = 2, q = 0.1, T = 10 stopped at a width of
2.4e-5 at accuracy 1e-5. The frame's step now divides T, so nothing is lost:

* the step divides T exactly (rationals), is at most the level's, and
  the residual T − ⌊T/h⌋·h is ≥ 0 (moving losses down only) and ulp-sized;
* a frame whose two edges are held by a d/m step keeps it;
* the composed lower end closes on the upper one at second order as the
  step halves (it stood still before);
* single-step grids moved back stay below the exact curve;
* DP-SGD's interval at the default accuracy is met on the planned level,
  as before the frame (no refinement round: 0.05 s, not 0.11 s).
"""
import math
from fractions import Fraction

import numpy as np
import pytest

import dpaccount as dpa
from dpaccount.pld.grids.accountant import composed_grid, frame_total, optimistic_frame, whole_frame_step
from dpaccount.pld.pairs.composition import merge_gaussians
from dpaccount.pld.pairs.base import GaussianPair
from dpaccount.pld.pairs.discrete_pair import randomized_response_pair
from dpaccount.pld.pairs.poisson_sampling import PoissonAddPair, PoissonRemovePair


def _direction(parts, kind):
    return tuple((kind(GaussianPair(1.0 / s), q), k) for s, q, k in parts)


_DIRECTIONS = [
    ([(1.1, 256 / 60000, 14063)], PoissonRemovePair, 2.43e-4),
    ([(1.1, 256 / 60000, 14063)], PoissonAddPair, 2.43e-4),
    ([(s, 0.02, 500) for s in np.linspace(3.0, 2.0, 11)], PoissonRemovePair, 2.3e-4),
    ([(1.0, 0.01, 300), (2.0, 0.05, 100)], PoissonAddPair, 1.9e-4),
    ([(2.0, 0.1, 10)], PoissonRemovePair, 3.49e-4),
]


@pytest.mark.parametrize("parts,kind,step", _DIRECTIONS)
def test_the_frame_step_divides_the_total_shift(parts, kind, step):
    pairs = merge_gaussians(_direction(parts, kind))
    for level in step * (1 - 1e-3 * np.arange(40)):  # h rounded to nearest falls short half the time
        level, shifts = optimistic_frame(pairs, float(level))
        h = whole_frame_step(pairs, level, shifts)
        total = frame_total(pairs, shifts)
        whole = math.floor(total / Fraction(h))
        residual = total - whole * Fraction(h)
        assert h <= level * (1 + 1e-15) and h > level * (1 - 1e-3)
        assert 0 <= residual <= abs(whole) * Fraction(math.ulp(h))  # down only, by ulps


def test_a_two_edge_frame_keeps_its_step():
    pair = PoissonRemovePair(randomized_response_pair(0.8), 0.05)
    assert len(pair.edges) == 2
    step, shifts = optimistic_frame([(pair, 300)], 1e-3)
    assert whole_frame_step([(pair, 300)], step, shifts) == step


def _lower_eps(pairs, step, delta):
    return float(composed_grid(pairs, pessimistic=False, step=step).epsilon(np.array([delta]))[0])


def test_the_composed_lower_end_closes_at_second_order():
    """σ = 2, q = 0.1, T = 10, δ = 1e-5 (remove, the direction that sets ε): the gap to a
    certified upper end (a 32× finer pessimistic grid) shrinks ≥ 2.5× per halving of the step;
    with the remainder of T lost it stood at 1.3e-5 from step 3.5e-4 down to 4.4e-5."""
    pairs = _direction([(2.0, 0.1, 10)], PoissonRemovePair)
    upper = float(composed_grid(pairs, step=1.09e-5).epsilon(np.array([1e-5]))[0])
    gaps = [upper - _lower_eps(pairs, h, 1e-5) for h in (3.49e-4, 1.745e-4, 8.72e-5)]
    assert all(g > 0 for g in gaps)
    assert gaps[1] < gaps[0] / 2.5 and gaps[2] < gaps[1] / 2.5


@pytest.mark.parametrize("pair", [PoissonRemovePair(GaussianPair(0.5), 0.1), PoissonAddPair(GaussianPair(0.5), 0.1),
                                  PoissonRemovePair(GaussianPair(2.0), 0.01)], ids=repr)
@pytest.mark.parametrize("step", [3.1e-3, 2.2e-4])
def test_a_single_step_moved_back_stays_below_the_exact_curve(pair, step):
    grid = composed_grid(((pair, 1),), pessimistic=False, step=step)
    eps = np.concatenate((np.linspace(0.0, 3.0, 700), np.abs(grid.losses[:: max(1, len(grid.losses) // 700)])))
    assert np.all(grid.delta(eps) <= pair.delta(eps, upper=False))


def test_dp_sgd_interval_is_met_on_the_planned_level():
    m = dpa.Composition()([dpa.PoissonSampling()(dpa.GaussianMechanism(1.1), 256 / 60000)], [14063])
    got = m.get_approxDP_bounds(1e-5)
    assert got.certified and got.upper - got.lower <= 1e-3 * got.upper
    assert got.step == m.privacy_profile(1e-3).step


def test_a_lattice_on_the_grid_stays_on_it():
    """3 Poisson-subsampled Gaussians beside 50 RR(0.75) (atoms at ±log 3, no edges): the
    frame's total shift is 3·log(0.9), and a step shrunk to divide it (~1 %) moved log 3
    off the grid: the lower end of δ(55.5) stuck 2 % below at every step. A step that
    holds the lattice is kept; the interval then meets accuracy 1e-2."""
    pairs = [(PoissonRemovePair(GaussianPair(0.5), 0.1), 3), (randomized_response_pair(0.75), 50)]
    step, shifts = optimistic_frame(pairs, math.log(3) / 320)
    assert whole_frame_step(pairs, step, shifts) == step
    g = lambda sigma, q: dpa.PoissonSampling()(dpa.GaussianMechanism(sigma), q)
    m = dpa.Composition()([g(2.0, 0.1), dpa.RandomizedResponse(0.75)], [3, 50])
    got = m.get_approx_delta_bounds(55.5, accuracy=1e-2)
    assert got.lower <= got.upper <= got.lower * (1 + 1e-2)
