"""The bulk/heavy split of a tilted composition (``grids/split.py``) against the
exact composition of the same grid.

A single-step grid with a light bulk near 0 and rare large losses (K·p ≤ 1e-4)
is taken K times: its exact composition is a direct convolution (each bin
within n·u of itself), so the split's upper bound must lie at or above it and
its lower bound at or below it at every ε, and both close to it where δ is
far above the window's tail. Queries beyond the top loss (3) need two heavy
steps, beyond 6 three: there the upper bound's dominated remainder R_2 (and
the lower bound's term k = 2, or nothing) carries the whole of δ.
"""
import math

import numpy as np
import pytest

import dpaccount as dpa
from dpaccount.pld.grids import compose as compose_module
from dpaccount.pld.grids.accountant import step_grids
from dpaccount.pld.grids.compose import _split_grid, compose, saddle_tilt
from dpaccount.pld.grids.grid import PLDGrid
from dpaccount.pld.grids.split import LOWER, RARE, heavy_split
from dpaccount.pld.grids.transform import direct
from dpaccount.pld.pairs.composition import merge_gaussians

STEP = 0.01
COUNT = 60
TAIL = 1e-30


def _grid(pessimistic):
    """Masses at losses −0.05 … 3 (step 0.01): a narrow bulk around 0 (a discretised
    normal of sd 0.02) and, from 0.3 on, a heavy part of mass 1e-8 decaying in the loss."""
    x = np.arange(-5, 301) * STEP
    bulk = np.where(x < 0.3, np.exp(-0.5 * (x / 0.02) ** 2), 0.0)
    heavy = np.where(x >= 0.3, np.exp(-0.5 * x), 0.0)
    probs = (1 - 1e-8) * bulk / bulk.sum() + 1e-8 * heavy / heavy.sum()
    return PLDGrid(step=STEP, offset=-5, probs=probs, p_inf=0.0, pessimistic=pessimistic)


def _exact(above=True):
    """The exact composition by direct convolution, its rounding ((n + 2)·u per bin per
    product) taken outwards: at or above the exact value (``above``) or at or below it."""
    grid = _grid(True)
    lo, hi = COUNT * grid.offset, COUNT * (grid.offset + len(grid.probs) - 1)
    probs, _ = direct([(grid, COUNT)], lo, hi, above)
    return PLDGrid(step=STEP, offset=lo, probs=probs, p_inf=0.0, pessimistic=above)


def _split(pessimistic, level):
    """The split that ``heavy_split`` chooses at 0.4 (one heavy step reaches it), its terms
    tilted towards ``level``."""
    grid = _grid(pessimistic)
    tilt = saddle_tilt([(grid, COUNT)], 0.4)
    split = heavy_split(grid, COUNT, tilt, 0.4, TAIL)
    assert split is not None
    return split, _split_grid(split, grid, COUNT, TAIL, level, pessimistic)


@pytest.mark.parametrize("level", [0.4, 1.2, 2.5])
def test_the_split_brackets_the_exact_composition(level):
    """Upper bound ≥ exact ≥ lower bound at 61 ε from 0 to 9 (three heavy steps beyond 6)."""
    eps = np.linspace(0.0, 9.0, 61)
    upper, below = _split(True, level)[1].delta(eps), _exact(False).delta(eps)
    lower, above = _split(False, level)[1].delta(eps), _exact(True).delta(eps)
    assert np.all(upper >= below), np.max(below / upper)
    assert np.all(lower <= above), np.max(lower / above)


@pytest.mark.parametrize("level", [0.4, 0.8])
def test_the_split_is_tight_where_one_heavy_step_sets_delta(level):
    """From the level to 1.5 times it δ is far above the tails (1e-30), the noise and what
    three heavy steps add (lower bounds drop those): both bounds within 1e-6 of exact."""
    exact = _exact()
    eps = np.linspace(level, 1.5 * level, 11)
    want = exact.delta(eps)
    for pessimistic in (True, False):
        got = _split(pessimistic, level)[1].delta(eps)
        assert np.all(np.abs(got / want - 1) < 1e-6), (pessimistic, got / want - 1)


def test_the_split_cuts_where_few_steps_are_heavy():
    """The cut leaves K·p ≤ RARE heavy steps expected, and the weights are C(K, k)·2^{−ek}."""
    split, _ = _split(True, 0.8)
    assert COUNT * split.heavy.probs.sum() * 2.0 ** -split.exponent <= RARE * (1 + 1e-12)
    assert 0.5 <= split.heavy.probs.sum() <= 1.0
    for k in range(LOWER):
        assert split.weights[k] >= math.comb(COUNT, k) * 2.0 ** (-k * split.exponent)
        assert split.weights[k] == pytest.approx(math.comb(COUNT, k) * 2.0 ** (-k * split.exponent), rel=1e-15)


@pytest.mark.parametrize("level", [0.02 * math.sqrt(COUNT), 1.2])
def test_no_split_where_the_bulk_or_many_heavy_steps_carry_the_level(level):
    """At one bulk standard deviation of the composition the heavy steps carry less than half
    of the tilted mean; at 1.2 the tilted law expects over a quarter of a heavy step: no split."""
    grid = _grid(True)
    tilt = saddle_tilt([(grid, COUNT)], level)
    assert heavy_split(grid, COUNT, tilt, level, TAIL) is None


def test_compose_takes_the_split_where_asked_and_it_is_exact(monkeypatch):
    """With every tilted grid counted noise-bound (``_NOISY`` = 0), compose() answers the
    split's grid where it is lower at the level, and that grid brackets the exact value."""
    monkeypatch.setattr(compose_module, "_NOISY", 0.0)
    grid = _grid(True)
    tilt = saddle_tilt([(grid, COUNT)], 0.4)
    got = compose([(grid, COUNT)], TAIL, True, tilt, level=0.4)
    split = _split(True, 0.4)[1]
    at = np.array([0.4])
    assert got.delta(at)[0] <= split.delta(at)[0]
    eps = np.linspace(0.0, 9.0, 61)
    assert np.all(got.delta(eps) >= _exact(False).delta(eps))


def test_the_remove_direction_of_a_tiny_q_gaussian_is_resolved_by_the_split():
    """σ = 0.8, q = 1e-5, T = 1e4 (the remove direction, step 5.6e-5) at 0.033: the plainly
    tilted grid's noise bound is above δ itself; the split's is below 1 % of it, and lower."""
    mechanism = dpa.Composition()([dpa.PoissonSampling()(dpa.GaussianMechanism(sigma=0.8), 1e-5)], [10_000])
    pairs = merge_gaussians(mechanism.pairs.direction("remove"))
    items = step_grids(pairs, 5.59e-5, TAIL)
    tilt = saddle_tilt(items, 0.033)
    at = np.array([0.033])
    monkeypatch = pytest.MonkeyPatch()
    with monkeypatch.context() as patched:
        patched.setattr(compose_module, "_NOISY", math.inf)  # the plain grid, never split
        plain = compose(items, TAIL, True, tilt, level=0.033)
    got = compose(items, TAIL, True, tilt, level=0.033)
    assert plain.noise_effect(at)[0] > plain.delta(at)[0]
    assert got.noise_effect(at)[0] < 1e-2 * got.delta(at)[0]
    assert got.delta(at)[0] < plain.delta(at)[0]


@pytest.mark.slow
def test_the_tiny_q_interval_is_reached_with_split_lower_bounds():
    """σ = 0.8, q = 1e-5, T = 1e4, ε(1e-10) certified at accuracy 1e-2: reached, lower and
    upper ends from split grids (the optimistic ones in their shifted frame too), and the
    default within it (plus the default accuracy)."""
    mechanism = dpa.Composition()([dpa.PoissonSampling()(dpa.GaussianMechanism(sigma=0.8), 1e-5)], [10_000])
    bounds = mechanism.get_approxDP_bounds(1e-10, accuracy=1e-2)
    assert bounds.upper <= bounds.lower * (1 + 1e-2)
    assert bounds.lower <= mechanism.get_approxDP(1e-10) <= bounds.upper * (1 + 1e-3)


def test_the_remainder_is_composed_once_for_every_tilt_of_one_split():
    """R_2 is composed untilted, so every tilt of one split (the grids re-centred at an
    answer) takes it from the cache: the grids then are those composed with nothing cached,
    at each level and window tail."""
    from dpaccount.pld.grids.cache import GRIDS

    grid = _grid(True)
    split = heavy_split(grid, COUNT, saddle_tilt([(grid, COUNT)], 0.4), 0.4, TAIL)
    dpa.clear_cache()
    shared = [_split_grid(split, grid, COUNT, tail, level, True) for tail in (TAIL, 1e-100) for level in (0.4, 1.2)]
    assert len([key for key in GRIDS._items if key[0] == "split term"]) == 2  # one a tail
    fresh = []
    for tail in (TAIL, 1e-100):
        for level in (0.4, 1.2):
            dpa.clear_cache()
            fresh.append(_split_grid(split, grid, COUNT, tail, level, True))
    for a, b in zip(shared, fresh):
        assert (a.offset, a.p_inf, a.noise) == (b.offset, b.p_inf, b.noise)
        assert np.array_equal(a.probs, b.probs) and np.array_equal(a.noise_bins, b.noise_bins)


def test_a_split_prepared_once_is_the_split_made_afresh():
    """What ``heavy_split`` keeps of a grid (its cut, mean and parts, for every tilt) gives
    the split it makes with nothing kept, at each tilt, and no split where it makes none."""
    grid = _grid(True)
    asked = [(saddle_tilt([(grid, COUNT)], level), level) for level in (0.4, 0.8, 0.02 * math.sqrt(COUNT))]
    dpa.clear_cache()
    kept = [heavy_split(grid, COUNT, tilt, level, TAIL) for tilt, level in asked]
    for (tilt, level), split in zip(asked, kept):
        dpa.clear_cache()
        fresh = heavy_split(grid, COUNT, tilt, level, TAIL)
        assert (split is None) == (fresh is None)
        if fresh is not None:
            assert (split.exponent, split.weights) == (fresh.exponent, fresh.weights)
            for a, b in ((split.bulk, fresh.bulk), (split.heavy, fresh.heavy)):
                assert (a.offset, a.p_inf) == (b.offset, b.p_inf) and np.array_equal(a.probs, b.probs)
    assert kept[0] is not None and kept[-1] is None  # one heavy step reaches 0.4; the bulk carries the last
