"""The default ε(δ) lands within 0.1 % of the exact value at few steps too
(small ε): the plan (``pld/profiles/plan.py``) sizes the step for the ε the smallest
planned δ reaches, down to where the saddle-point δ is 1e-1, at the near-mean
rate max(λ, 0.8/σ_λ). Planned from the 1e-2 Chernoff tail alone, DP-SGD at
T = 235 read 0.3074305 against a certified upper end 0.3070329 (+0.13 %).

Each default answer is checked against a certified interval [lo, up] of a
finer accuracy a (up ≤ exact·(1 + a) where the interval is reached; where it
is not, ``AccuracyNotReached`` still carries a certified interval): the
default must be ≥ lo (never under-report) and ≤ up·1.001 (tight)."""
import functools
import itertools

import numpy as np
import pytest

import dpaccount as dpa
from dpaccount.pld.profiles.bulk import rounding_excess
from sweeps import sweep

TIGHT = 1e-3  # the default accuracy: the default answer within 0.1 % of the exact value
DELTAS = (1e-3, 1e-5, 1e-9)


def _mechanism(steps, sigma, q):
    return dpa.Composition()([dpa.PoissonSampling()(dpa.GaussianMechanism(sigma=sigma), q)], [steps])


@functools.lru_cache(maxsize=None)
def _certified(steps, sigma, q, accuracy):
    """(lower, upper) certified ε at ``DELTAS`` for accuracy ``accuracy`` (or the interval reached)."""
    try:
        b = _mechanism(steps, sigma, q).get_approxDP_bounds(np.array(DELTAS), accuracy=accuracy)
    except dpa.AccuracyNotReached as err:
        b = err.bounds
    return np.atleast_1d(b.lower), np.atleast_1d(b.upper)


def _check(steps, sigma, q, accuracy, which=slice(None)):
    got = np.atleast_1d(_mechanism(steps, sigma, q).get_approxDP(np.array(DELTAS)))[which]
    lower, upper = (x[which] for x in _certified(steps, sigma, q, accuracy))
    assert np.all(got >= lower), (got, lower)
    assert np.all(got <= upper * (1 + TIGHT)), (got / upper - 1)


@pytest.mark.parametrize("steps", [100, 235])
def test_few_step_dpsgd_default_is_within_a_tenth_of_a_percent(steps):
    """The issue's cases (excess 0.08 % and 0.13 % before), against an
    interval at accuracy 1e-4 (a second; its upper end within 1e-4 of exact,
    so the excess the assertion allows is ≤ 0.11 %, below the 0.13 % seen)."""
    _check(steps, 1.1, 256 / 60000, 1e-4)


GRID = list(itertools.product([10, 30, 100, 235, 500, 1000, 14063], [0.8, 1.1, 2.0], [1e-3, 256 / 60000, 1e-2],
                              range(len(DELTAS))))


@pytest.mark.parametrize("steps", [10, 30])
def test_tiny_eps_in_the_bulk_of_a_mixture_is_within_a_tenth_of_a_percent(steps):
    """σ = 0.8, q = 1e-3, δ = 1e-3: ε ≈ 0.004 and 0.013 sit in the bulk of a rare-event
    mixture, where the saddle point of the whole law puts the density ~25× too low; the
    ε(δ) level's own grids see it (``bulk.bulk_split``): +0.27 % and +0.16 % before. Against
    an interval at accuracy 1e-4 (its upper end within 1e-4 of exact: ≤ 0.11 % allowed)."""
    m = _mechanism(steps, 0.8, 1e-3)
    got, interval = m.get_approxDP(1e-3), m.get_approxDP_bounds(1e-3, accuracy=1e-4)
    assert interval.lower <= got <= interval.upper * (1 + TIGHT), got / interval.upper - 1


def test_the_bulk_cut_leaves_small_deltas_at_the_planned_level():
    """The Connect-the-Dots blog (σ = 0.5, q = 2e-5, T = 1000): ε(1e-3) ≈ 0.0015 needs more
    levels (6 % above the exact value at the planned one), ε(1e-8) none: it keeps its level
    (queries with δ above the cut are refined), and lands within the accuracy of the
    certified lower end there."""
    m = _mechanism(1000, 0.5, 2e-5)
    profile = m.privacy_profile(TIGHT)
    cut, extra = profile._bulk_split()
    assert extra > 0 and 1e-8 <= cut < 1e-3
    got, interval = m.get_approxDP(1e-8), m.get_approxDP_bounds(1e-8)
    assert interval.lower <= got <= interval.lower * (1 + TIGHT), got / interval.lower - 1


# CI: DP-SGD's rate at three lengths and every σ, and the hardest point (30 steps, σ 1.1, q 1e-3)
_KEPT = [case for case in GRID if (case[0] in (10, 235, 14063) and case[2] == 256 / 60000)
         or case[:3] == (30, 1.1, 1e-3)]


@pytest.mark.parametrize("steps, sigma, q, which", sweep(GRID, _KEPT))
def test_dpsgd_default_is_within_a_tenth_of_a_percent_across_the_grid(steps, sigma, q, which):
    """T × σ × q × δ against certified intervals at accuracy 1e-5 (the whole grid: ~2 min)."""
    _check(steps, sigma, q, 1e-5, slice(which, which + 1))


def test_a_delta_its_base_grid_does_not_resolve_is_checked_on_a_tilted_grid():
    """q = 5e-5, σ = 1.1, T = 1e4: ε(1e-10) ≈ 0.031 sits in the near-Gaussian bulk of many
    small losses (the tilts see the rare large ones: their Chernoff tail there is ~0.25), and
    the ε(δ) level's base grid reads ε(1e-10) off its noise floor (> 1, no excess). The bulk
    check reads it from the band's tilted grid instead: its excess there (≈ 2 % at the ε(δ)
    level) refines every δ (cut 0)."""
    profile = _mechanism(10_000, 1.1, 5e-5).privacy_profile(TIGHT)
    base = profile.at_level(profile.plan.eps_level).grid("remove")
    eps, _, resolved = rounding_excess(base, 10_000, np.array([1e-10]))
    assert not resolved[0] and eps[0] > 0.5
    cut, extra = profile._bulk_split()
    assert cut == 0.0 and extra > 0


@pytest.mark.slow
@pytest.mark.parametrize("q, sigma, steps", [(5e-5, 1.1, 10_000), (2e-5, 0.5, 1000)])
def test_deep_tail_of_a_tiny_q_composition_is_within_a_tenth_of_a_percent(q, sigma, steps):
    """ε(1e-10) where the tilts' plan alone answered from a level 1.2 % too coarse (the first
    case, above), against a certified interval at accuracy 1e-4 (or the interval reached: the
    first case's lower end stays 0.13 % below its upper end): at least its lower end, at most
    its upper end plus the accuracy."""
    _check_deep_tail(steps, sigma, q, 1e-4)


@pytest.mark.slow
def test_deep_tail_where_the_tilted_grids_are_noise_bound_is_within_the_accuracy():
    """σ = 0.8, q = 1e-5, T = 1e4, ε(1e-10): the remove direction's plainly tilted grids are
    noise-bound there (noise ~15× δ at every band: one large loss on a near-Gaussian bulk);
    the bulk/heavy split (``grids/split.py``) resolves it. The default against a certified
    interval (accuracy 1e-2, or the interval reached): at most its upper end plus the accuracy."""
    _check_deep_tail(10_000, 0.8, 1e-5, 1e-2)


def _check_deep_tail(steps, sigma, q, accuracy):
    """The default ε(1e-10) within [lower, upper·(1 + 1e-3)] of the interval certified at
    ``accuracy`` (or the interval reached)."""
    m = _mechanism(steps, sigma, q)
    got = m.get_approxDP(1e-10)
    try:
        bounds = m.get_approxDP_bounds(1e-10, accuracy=accuracy)
    except dpa.AccuracyNotReached as err:
        bounds = err.bounds
    assert bounds.lower <= got <= bounds.upper * (1 + TIGHT), (got, bounds)
