"""Every pair's cell masses lie within the error bounds it states (``masses_of(…, errors=True)``).

The grids take each cell at the safe end of its bounds (``pld/grids/discretise.py``,
``pld/grids/discretise_optimistic.py``), so a bound that is too small is a bound the
grids can fall short by. Here the exact cells (mpmath, 200 bits, each written
without cancellation) of narrow cells across each pair's loss range, and of
wide ones, must lie within the stated bounds of the computed ones: strictly,
and on this machine as computed (no perturbation needed: a difference of two
computed distribution functions errs by ulps of the functions, far more than
the 8 ulp of the cell a pair claims by default).
"""
import math

import mpmath as mp
import numpy as np
import pytest
from scipy import stats

from dpaccount.pld.grids.discretise import loss_range
from dpaccount.pld.pairs.discrete_pair import binomial_pair
from dpaccount.pld.pairs.base import GaussianPair, LaplacePair
from dpaccount.pld.pairs import zoo as pairs_zoo
from dpaccount.pld.pairs.zoo import LogisticPair
from dpaccount.pld.pairs.monotone_loss import MonotoneLossPair
from dpaccount.pld.pairs.poisson_sampling import PoissonRemovePair

PREC = 200


def _libm_erring(monkeypatch, module, ulps, up, down):
    """``module``'s numpy functions ``up`` made to err by ``ulps`` ulp up, its ``math``
    functions ``down`` by as much down (deterministically: the wrong way on purpose; exact
    zeros and infinities kept, as a libm keeps them)."""
    def moved(fn, k):
        def call(*args):
            out = np.asarray(fn(*args))
            with np.errstate(invalid="ignore"):
                return np.where((out == 0) | ~np.isfinite(out), out, out + k * np.spacing(np.abs(out)))
        return call

    class Numpy:
        def __getattr__(self, name):
            return moved(getattr(np, name), ulps) if name in up else getattr(np, name)

    class Math:
        def __getattr__(self, name):
            return (lambda x: float(moved(getattr(math, name), -ulps)(x))) if name in down else getattr(math, name)
    monkeypatch.setattr(module, "np", Numpy())
    monkeypatch.setattr(module, "math", Math())


def _edges(pair, step, count=200):
    """Narrow cells of width ``step`` at ``count`` places across the pair's loss range
    (wide cells between them), and a few wide ones beyond."""
    lo, hi = loss_range(pair, 1e-30)
    at = np.unique(np.round(np.linspace(lo, hi, count) / step)) * step
    return np.concatenate(([lo - 50.0, lo - 1.0], np.sort(np.concatenate((at, at + step))), [hi + 1.0, hi + 50.0]))


def _cells(lower, upper, points):
    """Exact masses of (−∞, x₀], …, (x_last, ∞) from F (``lower``) and 1 − F (``upper``),
    each cell from the side it lies on (no cancellation)."""
    pts = [mp.mpf("-inf")] + [mp.mpf(float(x)) for x in points] + [mp.mpf("inf")]
    out = []
    for a, b in zip(pts[:-1], pts[1:]):
        fa, fb = lower(a), lower(b)
        if fb <= 0.5:
            out.append(fb - fa)
        else:
            sa, sb = upper(a), upper(b)
            out.append(sa - sb if fa >= 0.5 else 1 - fa - sb)
    return out


def _within(got, err, exact):
    """The largest miss |computed − exact| relative to its bound (≤ 1: every exact cell
    within its bound; a cell that underflows errs by subnormal spacings, which the bounds
    carry too)."""
    worst = 0.0
    for g, e, x in zip(got, err, exact):
        miss = abs(mp.mpf(float(g)) - x)
        if miss > 0:
            worst = max(worst, float(miss / mp.mpf(float(e))) if e > 0 else math.inf)
    return worst


def _normal(loc, scale):
    def lower(x):
        return mp.ncdf((x - loc) / scale) if mp.isfinite(x) else (mp.mpf(0) if x < 0 else mp.mpf(1))

    def upper(x):
        return mp.ncdf(-(x - loc) / scale) if mp.isfinite(x) else (mp.mpf(1) if x < 0 else mp.mpf(0))
    return lower, upper


def _logistic(loc, scale):
    def lower(x):
        return 1 / (1 + mp.exp(-(x - loc) / scale)) if mp.isfinite(x) else (mp.mpf(0) if x < 0 else mp.mpf(1))

    def upper(x):
        return 1 / (1 + mp.exp((x - loc) / scale)) if mp.isfinite(x) else (mp.mpf(1) if x < 0 else mp.mpf(0))
    return lower, upper


def _gumbel_r(loc, scale):
    def lower(x):
        return mp.exp(-mp.exp(-(x - loc) / scale)) if mp.isfinite(x) else (mp.mpf(0) if x < 0 else mp.mpf(1))

    def upper(x):
        return -mp.expm1(-mp.exp(-(x - loc) / scale)) if mp.isfinite(x) else (mp.mpf(1) if x < 0 else mp.mpf(0))
    return lower, upper


def _reflect(law):
    """(F, 1 − F) of −X from those of X."""
    lower, upper = law
    return (lambda y: upper(-y)), (lambda y: lower(-y))


def _logistic_pair_exact(eps, points):
    """LogisticPair(ε): P(L ∈ (a, b]) = c(e^{b/2} − e^{a/2})/(c² − 1), Q likewise, c = e^{ε/2}."""
    e = mp.mpf(eps)
    scale = 1 / (2 * mp.sinh(e / 2))
    pts = [-e] + [max(min(mp.mpf(float(x)), e), -e) for x in points] + [e]
    a = [scale * (mp.exp(hi / 2) - mp.exp(lo / 2)) for lo, hi in zip(pts[:-1], pts[1:])]
    b = [scale * (mp.exp(-lo / 2) - mp.exp(-hi / 2)) for lo, hi in zip(pts[:-1], pts[1:])]
    return a, b


def _laplace_exact(e0, points):
    """P- and Q-cells of LaplacePair(ε₀): atoms ½e^{−ε₀} (P), ½ (Q) at −ε₀, ½ (P), ½e^{−ε₀} (Q)
    at ε₀, densities ¼e^{(ℓ−ε₀)/2} and ¼e^{−(ℓ+ε₀)/2} between."""
    e0 = mp.mpf(e0)
    pts = [mp.mpf("-inf")] + [mp.mpf(float(x)) for x in points] + [mp.mpf("inf")]
    a, b = [], []
    for lo, hi in zip(pts[:-1], pts[1:]):
        cl, ch = max(min(lo, e0), -e0), max(min(hi, e0), -e0)
        pa = (mp.exp((ch - e0) / 2) - mp.exp((cl - e0) / 2)) / 2
        pb = (mp.exp(-(cl + e0) / 2) - mp.exp(-(ch + e0) / 2)) / 2
        if lo < -e0 <= hi:
            pa, pb = pa + mp.exp(-e0) / 2, pb + mp.mpf(1) / 2
        if lo < e0 <= hi:
            pa, pb = pa + mp.mpf(1) / 2, pb + mp.exp(-e0) / 2
        a.append(pa)
        b.append(pb)
    return a, b


@pytest.mark.parametrize("e0, step", [(1.3, 1e-3), (0.5, 1e-4), (30.0, 1e-2)])
def test_laplace_cells_within_their_bounds(e0, step):
    """The distribution functions' difference (``np.diff``) erred by ~u of the functions,
    not of the cell: 7.5e3 ulp of a Q-cell at ε₀ = 1.3, all of it at ε₀ = 30 (Q's
    distribution function within e^{−30} of 1), against the 8 ulp claimed."""
    pair = LaplacePair(e0)
    edges = np.concatenate((_edges(pair, step), [-e0, e0]))
    edges.sort()
    a, b, err_a, err_b = pair.masses_of([pair], edges, [len(edges)], errors=True)
    with mp.workprec(PREC):
        ex_a, ex_b = _laplace_exact(e0, edges)
        assert _within(a, err_a, ex_a) <= 1.0
        assert _within(b, err_b, ex_b) <= 1.0


@pytest.mark.parametrize("eps, step", [(1.0, 1e-3), (8.0, 3e-3), (40.0, 2e-2)])
def test_logistic_cells_within_their_bounds(monkeypatch, eps, step):
    """exp, expm1 and sinh: three libm calls of ≤ 4 ulp each and four roundings. Here they
    err by those 4 ulp the wrong way, all of them (the cells up, and again down), which
    the default 8u of the cell did not cover (12.4u at ε = 1)."""
    pair = LogisticPair(eps)
    edges = _edges(pair, step)
    with mp.workprec(PREC):
        ex_a, ex_b = _logistic_pair_exact(eps, edges)
    for way in (0, 1, -1):  # as computed, then libm 4 ulp up (sinh down), then the reverse
        if way:
            _libm_erring(monkeypatch, pairs_zoo, 4 * way, ("exp", "expm1"), ("sinh",))
        a, b, err_a, err_b = pair.masses_of([pair], edges, [len(edges)], errors=True)
        monkeypatch.undo()
        with mp.workprec(PREC):
            assert _within(a, err_a, ex_a) <= 1.0, way
            assert _within(b, err_b, ex_b) <= 1.0, way


@pytest.mark.parametrize("mu, step", [(0.7, 1e-3), (6.0, 2e-2)])
def test_gaussian_cells_within_their_bounds(mu, step):
    pair = GaussianPair(mu)
    edges = _edges(pair, step)
    a, b, err_a, err_b = pair.masses_of([pair], edges, [len(edges)], errors=True)
    with mp.workprec(PREC):
        m = mp.mpf(mu)
        ex_a = _cells(*_normal(m * m / 2, m), edges)    # L ~ N(μ²/2, μ²) under P
        ex_b = _cells(*_normal(-m * m / 2, m), edges)   # N(−μ²/2, μ²) under Q
        assert _within(a, err_a, ex_a) <= 1.0
        assert _within(b, err_b, ex_b) <= 1.0


MONOTONE = {
    "norm": (lambda: (stats.norm(1.0), stats.norm()), lambda: (_normal(1, 1), _normal(0, 1)), 2e-3),
    "norm-shifted": (lambda: (stats.norm(3.6, 0.5), stats.norm(3.2, 0.5)), lambda: (_normal(mp.mpf(3.6), mp.mpf(0.5)),
                                                                                   _normal(mp.mpf(3.2), mp.mpf(0.5))), 2e-3),
    "logistic": (lambda: (stats.logistic(loc=0.5, scale=2.0), stats.logistic(scale=2.0)),
                 lambda: (_logistic(mp.mpf(0.5), 2), _logistic(0, 2)), 1e-3),
    "gumbel_r": (lambda: (stats.gumbel_r(loc=1.5), stats.gumbel_r(loc=0.25)),
                 lambda: (_gumbel_r(mp.mpf(1.5), 1), _gumbel_r(mp.mpf(0.25), 1)), 5e-3),
}


@pytest.mark.parametrize("name", sorted(MONOTONE))
@pytest.mark.parametrize("reverse", [False, True])
def test_monotone_loss_cells_within_their_bounds(name, reverse):
    """Cells of e^{logcdf} (e^{logsf}) differences, like the Gaussian's: each end errs by ulps
    of |log F|, not of the cell (``monotone_loss.LOG_CDF_ULPS``). The exact cells are those
    between the pair's own cut points x (its roots: where they fall is the pair's choice).
    (The default 8u of the cell fell short by 22 to 1e4 times, unperturbed.)"""
    laws, exact, step = MONOTONE[name]
    pair = MonotoneLossPair(*laws())
    if reverse:
        pair = pair.reverse()
    edges = _edges(pair, step)
    a, b, err_a, err_b = pair.masses_of([pair], edges, [len(edges)], errors=True)
    xs = pair._roots(edges)
    with mp.workprec(PREC):
        p_law, q_law = exact()
        if reverse:  # (Q, P) of −x: the law of −X has F(y) = 1 − F_X(−y) (``monotone_loss._Reflected``)
            p_law, q_law = _reflect(q_law), _reflect(p_law)
        assert _within(a, err_a, _cells(*p_law, xs)) <= 1.0
        assert _within(b, err_b, _cells(*q_law, xs)) <= 1.0


def test_binomial_cells_within_their_bounds():
    """A finite pair's cell sums its atoms, each e^{log p} with log p from ``binom.logpmf``
    (lgamma sums: errs by ulps of n log n, ``DiscretePair``'s ``log_err``). (The default 8u
    of the cell fell short 270 times.)"""
    n, p = 400, 0.3
    pair = binomial_pair(n, p)
    loss, _, _ = pair.atoms
    edges = np.linspace(loss[0] - 0.5, loss[-1] + 0.5, 97)   # several atoms per cell
    a, b, err_a, err_b = pair.masses_of([pair], edges, [len(edges)], errors=True)
    cell = np.searchsorted(edges, loss, side="left")
    with mp.workprec(PREC):
        def pmf(k):
            return mp.binomial(n, k) * mp.mpf(p) ** k * (1 - mp.mpf(p)) ** (n - k) if 0 <= k <= n else mp.mpf(0)
        ks = np.arange(n + 2)  # outcomes of P = 1 + Bin(n, p) and Q = Bin(n, p), in the order of ``loss``
        order = np.argsort(pair._loss[np.isfinite(pair._loss)], kind="stable")
        finite_k = ks[np.isfinite(pair._loss)][order]
        ex_a, ex_b = [mp.mpf(0)] * (len(edges) + 1), [mp.mpf(0)] * (len(edges) + 1)
        for c, k in zip(cell, finite_k):
            ex_a[c] += pmf(int(k) - 1)
            ex_b[c] += pmf(int(k))
        assert _within(a, err_a, ex_a) <= 1.0
        assert _within(b, err_b, ex_b) <= 1.0


@pytest.mark.parametrize("n, p", [(10, 0.5), (60, 0.3)])
def test_poisson_end_mass_cell_within_its_bound(n, p):
    """Poisson sampling lands the base's mass at L = −∞ (here a reversed binomial pair's
    Q(L = −∞) = pⁿ, from a logsumexp and an exp: ulps of |log pⁿ| of itself) at the finite
    loss log(1 − q): that cell's bound carries the end mass's error, not only 4u."""
    q = 0.3
    pair = PoissonRemovePair(binomial_pair(n, p).reverse(), q)
    at = math.log1p(-q)
    edges = np.array([at - 1e-9, at + 1e-9])  # the cell (at − 1e-9, at + 1e-9]: the end mass alone
    a, b, err_a, err_b = pair.masses_of([pair], edges, [len(edges)], errors=True)
    with mp.workprec(PREC):
        m = mp.mpf(p) ** n
        assert _within(a[1:2], err_a[1:2], [(1 - mp.mpf(q)) * m]) <= 1.0
        assert _within(b[1:2], err_b[1:2], [m]) <= 1.0
