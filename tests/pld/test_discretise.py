"""Both discretisations bracket the exact hockey-stick curve of a pair.

Pessimistic (Connect-the-Dots) ≥ exact ≥ optimistic at every ε, for every
pair we have, on fine and coarse grids, and the optimistic grid is a valid
pair before its off-grid kinks are moved down, so that the bracket survives
composition.
"""
import math

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from dpaccount.pld.grids.discretise import loss_range, pair_to_grid
from dpaccount.pld.pairs.discrete_pair import binomial_pair, randomized_response_pair
from dpaccount.pld.pairs.base import GaussianPair, LaplacePair
from dpaccount.pld.pairs.poisson_sampling import PoissonAddPair, PoissonRemovePair
from oracles import gdp_delta

PAIRS = {
    "gauss": lambda: GaussianPair(0.7),
    "gauss-wide": lambda: GaussianPair(6.0),
    "laplace": lambda: LaplacePair(1.3),
    "rr": lambda: randomized_response_pair(0.65),
    "binomial": lambda: binomial_pair(30, 0.4),
    "poisson-gauss-remove": lambda: PoissonRemovePair(GaussianPair(1 / 0.9), 0.03),
    "poisson-gauss-add": lambda: PoissonAddPair(GaussianPair(1 / 0.9), 0.03),
    "poisson-laplace": lambda: PoissonAddPair(LaplacePair(2.0), 0.2),
    "poisson-binomial": lambda: PoissonRemovePair(binomial_pair(10, 0.5).reverse(), 0.3),
}


@settings(max_examples=30, deadline=None)
@given(name=st.sampled_from(sorted(PAIRS)), log_step=st.floats(math.log(1e-3), math.log(0.2)))
@example(name="gauss", log_step=-1.765625)  # under DPACCOUNT_ULP_NOISE=4: a known gap (docs/portability.md)
def test_grids_bracket_the_exact_curve(name, log_step):
    pair, step = PAIRS[name](), math.exp(log_step)
    lo, hi = loss_range(pair, 1e-20)
    jlo, jhi = math.floor(lo / step), math.ceil(hi / step)
    pess = pair_to_grid(pair, step, jlo, jhi)
    opt = pair_to_grid(pair, step, jlo, jhi, pessimistic=False)
    eps = np.concatenate((np.linspace(lo - 1, hi + 1, 701), pess.losses[:: max(1, len(pess.probs) // 300)]))
    # the exact curve, itself bracketed by its rounding (pld/pairs/base.py)
    assert np.all(opt.delta(eps) <= pair.delta(eps, upper=True))
    assert np.all(pess.delta(eps) >= pair.delta(eps, upper=False))
    # the optimistic P-mass never exceeds 1 (off-grid kinks moved down may
    # raise its Q-mass: only the P-law enters δ, so that is harmless)
    assert opt.mass <= 1.0


@pytest.mark.parametrize("pessimistic", [True, False])
def test_gaussian_grids_survive_log_ndtr_erring_its_documented_worst(monkeypatch, pessimistic):
    """log_ndtr errs by up to 4u·|log Φ| (``dpaccount/ndtr.py``; scipy's by ≈ 8 ulp:
    docs/portability.md), which the cells take as 16
    (``log_cells.LOG_NDTR_ULPS``): not of Φ, and not of a cell, a difference of two Φ
    values. Here it errs by those 16 ulp the wrong way at every point: the P-tails
    (whose arguments are −(e − μ²/2)/μ for a grid point e) rounded down and the
    Q-tails up for the pessimistic grid, the reverse for the optimistic one; the grids
    must still bracket the exact curve (mpmath) at their points, out to δ ≈ 1e-30.
    (The grids padded the masses by 8u of themselves and the split by 64u/h: 1.1e-12
    short at 8 ulp already, 2.4e-12 at 16.)"""
    from dpaccount.pld.pairs import log_cells
    mu, step = 0.7, 0.0123                # μ²/2h not an integer: the P- and Q-arguments differ
    pair = GaussianPair(mu)
    exact_log_ndtr = log_cells.log_ndtr

    def wrong_way(x):
        out = exact_log_ndtr(x)
        j = (-np.asarray(x) * mu + mu * mu / 2) / step  # an integer for P's arguments
        p_side = np.abs(j - np.round(j)) < 1e-6
        down = p_side if pessimistic else ~p_side
        with np.errstate(invalid="ignore"):  # log Φ(−∞) = −∞ stays
            return np.where(np.isfinite(out), out + np.where(down, -16.0, 16.0) * np.spacing(np.abs(out)), out)

    lo, hi = loss_range(pair, 1e-30)
    jlo, jhi = math.floor(lo / step), math.ceil(hi / step)
    monkeypatch.setattr(log_cells, "log_ndtr", wrong_way)
    grid = pair_to_grid(pair, step, jlo, jhi, pessimistic)
    monkeypatch.undo()
    eps = grid.losses[(grid.losses > 0) & (grid.losses < hi)][::4]
    got = grid.delta(eps)
    for e, g in zip(eps, got):
        exact = float(gdp_delta(e, mu))
        assert (g >= exact) if pessimistic else (g <= exact), (e, g, exact)


class _Erring:
    """A law whose ``logcdf`` and ``logsf`` err by ``ulps``·u·(|log| + 1) (down for
    ulps < 0, never above 0), the error ``MonotoneLossPair`` assumes of a scipy law
    (``monotone_loss.LOG_CDF_ULPS``); its other methods are the law's own."""

    def __init__(self, law, ulps, loc):
        self.law, self.ulps, self.loc = law, ulps, loc
        self.logpdf, self.ppf, self.isf = law.logpdf, law.ppf, law.isf

    def _moved(self, logs):
        logs = np.asarray(logs, dtype=float)
        with np.errstate(invalid="ignore"):  # log 0 = −∞ and log 1 = 0 stay
            moved = np.minimum(logs + self.ulps * np.finfo(float).eps * (np.abs(logs) + 1), 0.0)
        return np.where(np.isfinite(logs) & (logs < 0), moved, logs)

    def logcdf(self, x):
        return self._moved(self.law.logcdf(x))

    def logsf(self, x):
        return self._moved(self.law.logsf(x))


@pytest.mark.parametrize("pessimistic", [True, False])
def test_monotone_loss_grids_survive_logcdf_erring_its_assumed_worst(monkeypatch, pessimistic):
    """``MonotoneLossPair``'s cells are differences of e^{logcdf} (e^{logsf}) like the
    Gaussian's, and each end errs by ulps of |log F|, not of the cell. Here the two laws'
    logcdf and logsf err by the ``LOG_CDF_ULPS`` (64) the pair assumes, the wrong way at
    every point (P's down and Q's up for the pessimistic grid, the reverse for the
    optimistic one); the grids of (N(μ, 1), N(0, 1)) must still bracket the exact
    Gaussian curve (mpmath) at their points. (With the cells' default 8u of themselves,
    the pessimistic grid fell 1.35e-11 below it, relative, at ε = 6.26.)"""
    from scipy import stats

    from dpaccount.pld.pairs import monotone_loss
    from dpaccount.pld.pairs.monotone_loss import LOG_CDF_ULPS, MonotoneLossPair
    mu, step = 0.7, 0.0123
    sign = -1 if pessimistic else 1
    # the wrapped laws' locations, as the pair reads a scipy law's (else it assumes the support's)
    monkeypatch.setattr(monotone_loss, "_location", lambda dist, fallback: abs(dist.loc))
    pair = MonotoneLossPair(_Erring(stats.norm(mu), sign * LOG_CDF_ULPS, mu),
                            _Erring(stats.norm(), -sign * LOG_CDF_ULPS, 0.0))
    lo, hi = loss_range(GaussianPair(mu), 1e-30)
    jlo, jhi = math.floor(lo / step), math.ceil(hi / step)
    grid = pair_to_grid(pair, step, jlo, jhi, pessimistic)
    eps = grid.losses[(grid.losses > 0) & (grid.losses < hi)][::4]
    got = grid.delta(eps)
    for e, g in zip(eps, got):
        exact = float(gdp_delta(e, mu))
        assert (g >= exact) if pessimistic else (g <= exact), (e, g, exact)


@pytest.mark.parametrize("name", ["gauss", "poisson-gauss-remove"])
def test_both_grids_are_second_order(name):
    """Halving the step divides the worst gap by about four, on both sides,
    for smooth losses (near an atom the optimistic grid is first order)."""
    pair = PAIRS[name]()
    lo, hi = loss_range(pair, 1e-20)
    eps = np.linspace(lo, hi, 2001)
    exact = pair.delta(eps)
    live = exact > 1e-6
    widths = []
    for step in (4e-3, 2e-3):
        jlo, jhi = math.floor(lo / step), math.ceil(hi / step)
        pess = pair_to_grid(pair, step, jlo, jhi).delta(eps)
        opt = pair_to_grid(pair, step, jlo, jhi, pessimistic=False).delta(eps)
        widths.append(np.max(((pess - opt) / exact)[live]))
    assert widths[1] <= widths[0] / 2.5


def test_a_grid_cut_short_keeps_its_tails():
    """On a range far narrower than the loss's, the pessimistic grid still dominates:
    the mass above its top goes to +∞ and the mass below its bottom to its first point,
    so one grid and the composition of two stay above the exact curves (mpmath,
    N(1,1) vs N(0,1): 1-GDP, and √2-GDP for two), and the optimistic grid and the
    composition of two below: it drops the mass whose kink falls below its range
    (it kept it at its first point, which the composition of two showed 1.4 % above
    the exact √2-GDP curve at ε = 0)."""
    from oracles import gdp_delta

    from dpaccount.pld.grids.compose import compose
    pair, step = GaussianPair(1.0), 0.01
    lo, hi = -100, 300            # losses in [-1, 3]: P(L < -1) ≈ 0.07, P(L > 3) ≈ 0.006
    pess, opt = pair_to_grid(pair, step, lo, hi), pair_to_grid(pair, step, lo, hi, pessimistic=False)
    two_pess, two_opt = compose([(pess, 2)]), compose([(opt, 2)], pessimistic=False)
    for eps in np.linspace(0.0, 5.0, 26):
        assert opt.delta(eps) <= gdp_delta(eps, 1.0) <= pess.delta(eps), eps
        assert two_opt.delta(eps) <= gdp_delta(eps, 2 ** 0.5) <= two_pess.delta(eps), eps


def test_losses_beyond_700_bracket_the_exact_curve():
    """μ = 40: losses reach past ±700, where e^ε leaves the range of the optimistic
    construction, and the optimistic grid falls back to privacy buckets (each cell's
    P-mass at its lower end, the mass above the top at the top point). Both grids still
    bracket the exact curve (mpmath), and the optimistic one holds at most the P-mass 1."""
    from oracles import gdp_delta
    pair, step = GaussianPair(40.0), 0.5
    lo, hi = -400, 2400                       # losses in [-200, 1200]
    pess, opt = pair_to_grid(pair, step, lo, hi), pair_to_grid(pair, step, lo, hi, pessimistic=False)
    assert 1.0 - 1e-9 <= opt.mass <= 1.0 and opt.p_inf == 0.0
    for eps in np.linspace(0.0, 1300.0, 53):
        assert opt.delta(eps) <= gdp_delta(eps, 40.0) <= pess.delta(eps), eps


def test_an_atom_grid_cut_short_keeps_its_tails():
    """Atoms beyond the grid's range: the pessimistic grid sends those above its top to
    +∞ and those below to its first point, so it stays above the exact curve (mpmath:
    P = 1 + Bin(12, 0.3), Q = Bin(12, 0.3)); the optimistic grid of randomized response
    (on its lattice) moves the atoms above its top down to it and keeps all its P-mass."""
    import mpmath as mp
    from oracles import discrete_delta
    n, p = 12, 0.3
    pmf = [mp.binomial(n, k) * mp.mpf(p) ** k * (1 - mp.mpf(p)) ** (n - k) for k in range(n + 1)]
    atoms = [((pmf[k - 1] if k >= 1 else 0), (pmf[k] if k <= n else 0)) for k in range(n + 2)]
    step = 0.01
    pess = pair_to_grid(binomial_pair(n, p), step, -50, 100)   # losses in [-0.5, 1]: atoms on both sides
    for eps in np.linspace(0.0, 4.0, 41):
        assert discrete_delta(eps, atoms) <= pess.delta(eps), eps
    rr = randomized_response_pair(0.8)                          # atoms at ±log 4 ≈ ±1.386
    a = math.log(4.0)
    opt = pair_to_grid(rr, a / 10, -12, 5, pessimistic=False)   # top point at a/2: the upper atom moved down
    assert 1.0 - 1e-12 <= opt.mass <= 1.0
    for eps in np.linspace(0.0, 2.0, 21):
        assert opt.delta(eps) <= discrete_delta(eps, [(0.8, 0.2), (0.2, 0.8)]), eps
