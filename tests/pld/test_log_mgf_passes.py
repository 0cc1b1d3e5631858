"""The composed log-MGF's passes (``log_mgf.LogMGF``) and the window searches on it
(``compose._window``), against exact sums (mpmath) and exact binomial tails.

* A term below e^{−700} of its grid's largest is raised to that (exp stays out of the
  subnormal range; K only rises, as a Chernoff bound allows); a pass with no such term
  skips the raise. Both kinds of λ, in one array and one by one, give K within
  ``LogMGF.error`` of the exact sum.
* A window searched from a proxy's λ (``proxy``: other grids, where the search starts)
  is a Chernoff window of the grids' own law all the same, and as tight as the best
  Chernoff level, to within a grid point.
"""
import math

import mpmath as mp
import numpy as np
import pytest

from dpaccount.pld.grids.log_mgf import LogMGF
from dpaccount.pld.grids.compose import _window
from dpaccount.pld.grids.grid import PLDGrid

mp.mp.dps = 50


def _exponents(grids, lam):
    """Per grid, log p_j + λε_j − max_j(…) of its points with p > 0 (mpmath)."""
    out = []
    for g, _ in grids:
        keep = g.probs > 0
        e = [mp.log(mp.mpf(float(p))) + mp.mpf(float(lam)) * mp.mpf(float(v)) for p, v in zip(g.probs[keep], g.losses[keep])]
        out.append([x - max(e) for x in e])
    return out


def test_log_mgf_with_and_without_terms_below_e700_of_their_grid():
    """Grids whose log p spans 675: at λ = 0 and 0.5 no term is below e^{−700} of its grid's
    top (no raise), at λ = ±40 many are (raised, which moves K by under n·e^{−700} of it). K
    at each, in one array and alone, is within ``error`` of the exact K (mpmath)."""
    x = np.arange(-300, 301)
    wide = PLDGrid(step=0.05, offset=-300, probs=np.exp(-3.0 * (x * 0.05) ** 2), p_inf=0.0)
    narrow = PLDGrid(step=0.05, offset=-10, probs=np.full(21, 1 / 21), p_inf=0.0)
    items = [(wide, 3), (narrow, 2)]
    lam = np.array([-40.0, 0.0, 0.5, 40.0])
    together = LogMGF(items)(lam)
    for i, value in enumerate(lam):
        raised = any(w < -700 for grid in _exponents(items, value) for w in grid)
        assert raised == (abs(value) == 40.0)
        exact = sum(k * mp.log(mp.fsum(mp.mpf(float(p)) * mp.exp(mp.mpf(float(value)) * mp.mpf(float(v)))
                                       for p, v in zip(g.probs, g.losses))) for g, k in items)
        bound = LogMGF(items).error(value)
        assert abs(mp.mpf(LogMGF(items)(float(value))) - exact) <= bound
        assert abs(mp.mpf(together[i]) - exact) <= bound


def _binomial_tail(n, p, above):
    """P(X > above), X ~ Binomial(n, p), exactly (mpmath)."""
    p = mp.mpf(p)
    return mp.fsum(mp.binomial(n, j) * p ** j * (1 - p) ** (n - j) for j in range(above + 1, n + 1))


@pytest.mark.parametrize("proxy_probs, hints", [
    (None, (None, None)),
    ([0.5, 0.5], (None, None)),        # a proxy of another law: only where the search starts moves
    ([0.7, 0.3], (1.0, 1.0)),          # the same law, hints far off
    ([0.7, 0.3], (30.0, 0.01)),
])
def test_a_window_searched_from_a_proxy_is_a_chernoff_window_of_its_own_grids(proxy_probs, hints):
    """S = h·Binomial(400, 0.3) (a two-point grid taken 400 times): the window's tails are
    each ≤ ``tail`` exactly, its top is certified by its λ (K(λ) − λ·jb·h ≤ log tail, mpmath),
    and it is within a grid point of the best Chernoff window (the least level over λ)."""
    h, n, p, tail = 0.01, 400, 0.3, 1e-12
    grid = PLDGrid(step=h, offset=0, probs=np.array([1 - p, p]), p_inf=0.0)
    proxy = None if proxy_probs is None else [(PLDGrid(step=h, offset=0, probs=np.array(proxy_probs), p_inf=0.0), n)]
    ja, jb, below, above, lam = _window([(grid, n)], tail, hints, proxy)
    assert 0 < ja < jb < n and below == above == tail
    assert _binomial_tail(n, p, jb) <= tail
    assert 1 - _binomial_tail(n, p, ja - 1) <= tail  # P(X < ja)
    cgf = lambda t: n * mp.log(1 - p + p * mp.exp(mp.mpf(t) * h))  # noqa: E731
    assert cgf(lam) - lam * jb * h <= math.log(tail)
    # the best levels over λ (a fine lattice, then golden-section on mpmath's side)
    best_top = mp.findroot(lambda t: mp.diff(lambda u: (cgf(u) - math.log(tail)) / u, t), 20.0)
    level_top = (cgf(best_top) - math.log(tail)) / best_top
    best_low = mp.findroot(lambda t: mp.diff(lambda u: (cgf(-u) - math.log(tail)) / u, t), 20.0)
    level_low = -(cgf(-best_low) - math.log(tail)) / best_low
    assert int(mp.ceil(level_top / h)) <= jb <= int(mp.ceil(level_top / h)) + 1
    assert int(mp.floor(level_low / h)) - 1 <= ja <= int(mp.floor(level_low / h))


def test_passes_in_the_threads_work_arrays_or_their_own_give_the_same_floats(monkeypatch):
    """Passes of at most ``_BLOCK`` values write in the thread's work arrays (``_SCRATCH``: one
    pair a thread), wider ones in the log-MGF's own: K, K', K'' of one grid are the same floats
    either way (each λ's row is its own), and within ``error`` of the exact K (mpmath)."""
    import threading

    from dpaccount.pld.grids import log_mgf as lm
    x = np.arange(-100, 101)
    grid = PLDGrid(step=0.02, offset=-100, probs=np.exp(-0.5 * (x * 0.02) ** 2), p_inf=0.0)
    lam = np.array([-3.0, 0.25, 1.0, 7.0])
    shared = LogMGF([(grid, 9)])
    want = shared.moments(lam)
    assert shared._own is None  # the thread's arrays served its passes
    monkeypatch.setattr(lm, "_BLOCK", 64)  # now every pass is wider: its own arrays
    own = LogMGF([(grid, 9)])
    got = own.moments(lam)
    assert own._own is not None and len(own._own[0]) >= len(x)
    assert all(np.array_equal(a, b) for a, b in zip(want, got))
    for value, k in zip(lam, got[0]):
        exact = 9 * mp.log(mp.fsum(mp.mpf(float(p)) * mp.exp(mp.mpf(float(value)) * mp.mpf(float(v)))
                                   for p, v in zip(grid.probs, grid.losses)))
        assert abs(mp.mpf(k) - exact) <= own.error(value)
    other = []
    thread = threading.Thread(target=lambda: other.append(lm._SCRATCH.arrays))
    thread.start()
    thread.join()
    assert other[0][0] is not lm._SCRATCH.arrays[0]  # each thread its own pair


def test_an_evaluation_begun_within_another_in_the_same_thread_leaves_it_intact():
    """An evaluation suspended between its pass over the points and its sums, while another
    log-MGF is evaluated in the same thread (a signal handler's or a finaliser's query), keeps its
    work arrays: the thread's are taken for the length of one evaluation (the other uses its own),
    so K, K', K'' are the floats of an undisturbed evaluation. Shared, the other's pass would
    overwrite the suspended terms (K up to 724 too low: Chernoff tails below the truth)."""
    x = np.arange(-400, 401)
    first = PLDGrid(step=0.01, offset=-400, probs=np.exp(-0.5 * (x * 0.01) ** 2), p_inf=0.0)
    second = PLDGrid(step=0.3, offset=-400, probs=np.exp(-2.0 * (x * 0.3 + 7.0) ** 2), p_inf=0.0)
    lam = np.array([0.5, 2.0, 9.0])
    want = LogMGF([(first, 5)]).moments(lam)
    disturbed, other = LogMGF([(first, 5)]), LogMGF([(second, 3)])
    plain = LogMGF._per_grid
    nested = []

    def per_grid(ufunc, w, group):  # between the pass and its sums: another log-MGF evaluated
        if ufunc is np.add and not nested:
            nested.append(other.moments(np.array([1.0, 4.0])))
        return plain(ufunc, w, group)

    disturbed._per_grid = per_grid
    got = disturbed.moments(lam)
    assert nested  # the other evaluation ran inside this one
    assert all(np.array_equal(a, b) for a, b in zip(want, got))
    assert all(np.array_equal(a, b) for a, b in zip(nested[0], LogMGF([(second, 3)]).moments(np.array([1.0, 4.0]))))


def test_an_empty_array_of_lambdas_gives_empty_moments():
    grid = PLDGrid(step=0.1, offset=-5, probs=np.full(11, 1 / 11), p_inf=0.0)
    k, mean, var = LogMGF([(grid, 2)]).moments(np.array([]))
    assert k.shape == mean.shape == var.shape == (0,)
