"""PLDGrid's queries rounded outwards, against an exact (mpmath) evaluation of
the same float masses.

For masses p_j at (offset + j)·h and p_∞, exactly

    δ(ε) = p_∞ + Σ_{ε_j > ε} p_j (1 − e^{ε − ε_j}),

so a pessimistic grid's δ(ε) must be ≥ this and an optimistic one's ≤ it, at
grid points and between them, and ε(δ) must be on the matching side: the exact
δ at a pessimistic ε(δ) is ≤ δ, at an optimistic one ≥ δ.
"""
import gc
import math
import weakref

import mpmath as mp
import numpy as np
import pytest

from dpaccount.pld.grids.grid import PLDGrid


def _exact_delta(grid, eps):
    eps = mp.mpf(float(eps))
    total = mp.mpf(grid.p_inf)
    for j, p in enumerate(grid.probs):
        loss = (grid.offset + j) * mp.mpf(grid.step)  # the grid's loss values, exactly
        if loss > eps:
            total += mp.mpf(float(p)) * (1 - mp.exp(eps - loss))
    return total


def _grids(seed, pessimistic):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(200, 2000))
    probs = rng.exponential(size=n) * np.exp(-np.linspace(0, 40, n))  # a decaying tail
    probs /= probs.sum()
    step = float(rng.choice([1e-3, 7e-3, 0.05]))
    return PLDGrid(step=step, offset=int(rng.integers(-n // 2, 0)), probs=probs,
                   p_inf=float(rng.choice([0.0, 1e-9])), pessimistic=pessimistic)


@pytest.mark.parametrize("seed", range(4))
def test_delta_is_rounded_outwards(seed):
    pess, opt = _grids(seed, True), _grids(seed, False)
    losses = pess.losses
    points = np.concatenate((losses[losses >= 0][::53], losses[losses >= 0][::79] + 0.3 * pess.step))
    for eps, low, high in zip(points, opt.delta(points), pess.delta(points)):  # as an array
        exact = _exact_delta(pess, eps)
        assert low <= exact <= high, eps
        assert opt.delta(float(eps)) <= exact <= pess.delta(float(eps)), eps  # one ε alone


@pytest.mark.parametrize("seed", range(4))
def test_epsilon_is_rounded_outwards(seed):
    pess, opt = _grids(seed, True), _grids(seed, False)
    for delta in [0.3, 1e-2, 1e-4, 1e-7]:
        e_up, e_low = pess.epsilon(delta), opt.epsilon(delta)
        assert _exact_delta(pess, e_up) <= delta
        assert e_low == 0.0 or _exact_delta(opt, e_low) >= delta


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("pessimistic", [True, False])
def test_sums_summed_down_in_pieces_are_those_of_one_pass(seed, pessimistic):
    """A grid sums from its top point down only as far as a query needs, and on down for a
    later one: after queries that reach down in several pieces (ε(δ) from the small δ to
    the large, δ(ε) lower still) every δ(ε) and ε(δ) is the one a fresh grid, summed to the
    bottom at once, gives (the running sums go on from where they stopped: the same
    operations on the same floats)."""
    pieces, whole = _grids(seed, pessimistic), _grids(seed, pessimistic)
    deltas = [1e-7, 1e-4, 1e-2, 0.3]
    eps = np.concatenate(([-1.0], whole.losses[::7], whole.losses[::11] + 0.3 * whole.step))
    whole.delta(whole.losses[0] - 1.0)  # summed to the bottom point at once
    assert whole.__dict__["_held_sums"].start == 0
    got, starts = [], []
    for d in deltas:
        got.append(pieces.epsilon(d))
        starts.append(pieces.__dict__["_held_sums"].start)
    assert starts[0] > 0 and starts == sorted(starts, reverse=True)  # summed down in pieces
    assert got == [whole.epsilon(d) for d in deltas]
    assert np.array_equal(pieces.delta(eps), whole.delta(eps))


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("pessimistic", [True, False])
def test_sums_are_the_running_sums_they_state(seed, pessimistic):
    """SP and D, summed in pieces by one complex running sum, against plain running sums from
    the top (real ones, each on its own) padded as ``_TopDown`` states: SP[m] =
    fl(Σ_{j≥m} p_j)·(1 ± (n + 8)u), the same operations on the same floats, so equal to the
    last bit; D[m] = fl(Σ_{j>m} S̃_j)·c(1 ± (e + e²)) ± n·a, within twice that bound of the
    plain route's (the discounted terms and c = −expm1(−h) go through exp/expm1, whose last
    bits differ between routes and CPUs), and never below 0."""
    from dpaccount.pld.grids.discounted import DiscountedScan
    grid = _grids(seed, pessimistic)
    n, u, sign = len(grid.probs), 2.0 ** -52, 1.0 if pessimistic else -1.0
    for m in (n - 1, 2 * n // 3, n // 5, 0):  # in pieces, down to the bottom
        grid._sums(m)
    start, sp, d = grid._sums(0)
    top_down = grid.probs[::-1]
    scan = DiscountedScan(grid.step, n)
    tilde = scan.extend(top_down)
    eta, absolute = scan.bound
    e = eta + (n / 2 + 6) * u
    want_sp = np.cumsum(top_down)[::-1] * (1.0 + sign * (n + 8) * u)
    running = np.cumsum(np.concatenate(([0.0], tilde[:-1])))[::-1]  # Σ_{j>m} S̃_j, from the top
    want_d = running * (-math.expm1(-grid.step) * (1.0 + sign * (e + e * e)))
    want_d[:-1] += sign * n * absolute  # D at the top point is exact
    assert start == 0
    assert np.array_equal(sp, want_sp)
    c = -math.expm1(-grid.step)
    assert np.all(np.abs(d - np.maximum(want_d, 0.0)) <= 2 * ((e + e * e + 8 * u) * c * running + n * absolute))
    assert (d >= 0).all()


@pytest.mark.parametrize("seed", range(6))
def test_noise_over_is_the_running_sums_comparison(seed):
    """``noise_over(ε, limit)`` is ``noise_effect(ε) > limit`` exactly, at limits on, one
    float either side of, within the plain sums' margin of, and far from the running sums,
    on grids whose running sums are not yet summed (the plain sums decide, or near the
    limit the running sums) and on grids whose sums are there."""
    rng = np.random.default_rng(seed)
    grid = _grids(seed, True)
    n = len(grid.probs)
    bins = rng.exponential(size=n) * 10.0 ** rng.uniform(-30, -8, size=n)
    if seed % 3 == 2:
        tiny = rng.random(n) < 0.5
        bins[tiny] = 5e-324 * rng.integers(0, 4, size=int(tiny.sum()))  # subnormal or 0
    make = lambda: PLDGrid(step=grid.step, offset=grid.offset, probs=grid.probs, p_inf=0.0, pessimistic=True,
                           noise=float(bins.max()), noise_bins=bins)
    eps = np.concatenate((rng.choice(grid.losses, 40) + rng.uniform(-1, 1, 40) * grid.step, [-5.0, 1e9, np.inf]))
    running = make().noise_effect(eps)
    for limit in (running, np.nextafter(running, 0.0), np.nextafter(running, 1.0), running * (1 + 1e-13),
                  running * (1 - 1e-13), running * 2.0, running / 2.0, np.zeros_like(running)):
        want = running > limit
        assert np.array_equal(make().noise_over(eps, limit), want)  # fresh: plain sums first
        held = make()
        held.noise_effect(eps)
        assert np.array_equal(held.noise_over(eps, limit), want)  # its running sums are there
        for i in rng.choice(len(eps), 5):  # one ε at a time
            assert bool(make().noise_over(float(eps[i]), float(limit[i]))) == bool(want[i])


def test_noise_over_counts_a_nan_as_over():
    """A NaN noise bound or limit is no evidence of a resolved reading: ``noise_over`` says over
    (the reads then refine), whether the plain sums or the running sums decide."""
    bins = np.full(50, 1e-20)
    bins[30] = np.nan
    for noise_bins in (bins, np.full(50, 1e-20)):
        for held in (False, True):
            grid = PLDGrid(step=0.1, offset=-10, probs=np.full(50, 0.02), p_inf=0.0, pessimistic=True,
                           noise=1e-20, noise_bins=noise_bins)
            if held:
                grid.noise_effect(np.array([-5.0]))
            over = grid.noise_over(np.array([-5.0, 3.5]), np.array([1e-10, np.nan]))
            assert over[1] and over[0] == bool(np.isnan(noise_bins[30]))


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("pessimistic", [True, False])
def test_an_answer_at_loss_zero_sums_no_lower(seed, pessimistic):
    """ε(δ) = 0 where δ(0) ≤ δ: the sums stop at the point at loss 0 (the answer is clipped to
    ε ≥ 0, its δ(0) read above that point), and every answer is the one of sums to the bottom."""
    fresh, whole = _grids(seed, pessimistic), _grids(seed, pessimistic)
    whole.delta(whole.losses[0] - 1.0)  # summed to the bottom point
    deltas = np.array([0.99, 0.5, 0.3, 1e-2, 1e-4, 1e-7])
    got = fresh.epsilon(deltas)
    assert got[0] == 0.0 and fresh.__dict__["_held_sums"].start == -fresh.offset > 0
    assert np.array_equal(got, whole.epsilon(deltas))
    for d, e in zip(deltas, got):  # on the grid's side of the exact δ of its masses
        assert _exact_delta(fresh, e) <= d if pessimistic else (e == 0.0 or _exact_delta(fresh, e) >= d)


def test_loss_moment_is_the_exact_sum_to_its_rounding():
    # Σ p_j (offset + j)·h against mpmath's exact sum of the same floats: the products and the
    # pairwise sum err by ≤ (n + 2)u of Σ|p_j ε_j|
    rng = np.random.default_rng(3)
    probs = rng.dirichlet(np.ones(5000))
    g = PLDGrid(step=1e-3, offset=-2500, probs=probs, p_inf=0.0, pessimistic=True)
    with mp.workdps(60):
        exact = mp.fsum(mp.mpf(float(p)) * (-2500 + j) * mp.mpf(1e-3) for j, p in enumerate(probs))
        scale = mp.fsum(mp.mpf(float(p)) * abs(-2500 + j) * mp.mpf(1e-3) for j, p in enumerate(probs))
    assert abs(mp.mpf(g.loss_moment) - exact) <= (len(probs) + 2) * 2.0 ** -52 * scale


@pytest.mark.parametrize("pessimistic", [True, False])
def test_a_queried_grid_is_freed_as_soon_as_it_is_dropped(pessimistic):
    """What a grid keeps once queried (its sums, its noise sums, its log masses) refers to no
    grid: dropped by the cache, a grid of millions of points is freed at once, not when the
    cyclic collector next runs (which a few large objects seldom trigger)."""
    g = _grids(1, pessimistic)
    tilted = PLDGrid(step=g.step, offset=g.offset, probs=g.probs, p_inf=g.p_inf, pessimistic=pessimistic,
                     noise=1e-20, noise_bins=np.full(len(g.probs), 1e-20))
    gc.collect()
    was = gc.isenabled()
    gc.disable()
    try:
        for grid in (g, tilted):
            grid.delta(np.array([0.0, grid.losses[len(grid.probs) // 2]]))
            grid.delta(0.5 * grid.step)
            grid.epsilon(1e-6)
            grid.noise_effect(np.array([0.0]))
            grid._live_log  # noqa: B018 (the cached log masses of ``log_mgf.LogMGF``)
        refs = [weakref.ref(g), weakref.ref(tilted)]
        del g, tilted, grid
        assert [r() for r in refs] == [None, None]
    finally:
        if was:
            gc.enable()
