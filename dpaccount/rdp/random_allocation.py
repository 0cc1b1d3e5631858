r"""Rényi-DP of one epoch of random allocation (each record in one of t steps).

Let ε(·) be the base's RDP curve (an upper bound on D_α of both directions for
every pair of neighbours, whatever the earlier outputs). Fix the other records'
steps (the bound for the mixture over them follows from the joint convexity of
(P, Q) ↦ ∫P^α Q^{1−α}). Without the record x the t outputs have law Q; with it,
x sits in step j with probability 1/t and only step j changes, so

    dP_t/dQ = X = (1/t) Σ_j L_j,   L_j = the likelihood ratio of step j given y_{<j}.

Every bound below takes expectations step by step from the last (tower rule),
each step's conditional moment bounded by the base's RDP: E_Q[L^k] ≤ e^{(k−1)ε(k)}
(k ≥ 2; = 1 at k = 0, 1) and E_Q[L^{−r}] = e^{r D_{1+r}(Q||P)} ≤ e^{rε(1+r)}.

Remove direction, D_α(P_t || Q) = log E_Q[X^α]/(α − 1), integer α (the sum of
Feldman & Shenfeld 2025, "Privacy amplification by random allocation",
arXiv:2502.08202, Cor. 6.2 for the Gaussian, over the partitions of α with at
most t parts; here for any base): expanding (Σ_j L_j)^α multinomially,

    E_Q[X^α] ≤ α! [z^α] F(z)^t,   F(z) = Σ_k c_k z^k,  c_k = E_Q[L^k] / (k! t^k),

with equality when the moments are exact (a Gaussian base: e^{k(k−1)/2σ²}).
F^t is taken by repeated squaring of truncated series in log space (all
coefficients positive: no cancellation), O(α² log t) for all orders ≤ α at once.
A fractional α interpolates λ(α) = log E_Q[X^α] linearly between ⌊α⌋ and ⌈α⌉
(λ(1) = 0): λ is convex in α (a log-moment-generating function), so the chord
lies above it. Beyond ``MAX_ORDER``, and everywhere as a cap, Jensen on the
mixture: E_Q[X^α] ≤ (1/t) Σ_j E_Q[L_j^α], i.e. ε(α) of the base.

Add direction, D_α(Q || P_t) = log E_Q[X^{−s}]/s, s = α − 1 > 0. Two bounds, the
smaller taken:

* geometric mean: X ≥ Π_j L_j^{1/t} (AM–GM), so E_Q[X^{−s}] ≤ e^{s ε(1 + s/t)}:
  ε(1 + (α−1)/t) (for the Gaussian 1/2σ² + (α−1)/2tσ², Feldman & Shenfeld's
  add-direction bound);
* Laplace: x^{−s} = (1/Γ(s)) ∫_0^∞ λ^{s−1} e^{−λx} dλ, and h(λ) = E_Q[e^{−λX}]
  ≤ A(λ) = φ(λ/t)^t with φ(μ) an upper bound on E_Q[e^{−μL}] of one step: e^{−x} ≤ T_{2K}(x),
  its Taylor polynomial of even degree, for x ≥ 0, so
      φ(μ) e^{μ} − 1 ≤ e^{μ}[μ^{2K+1}/(2K+1)! + Σ_{k=2}^{2K} (−μ)^k (m_k − 1)/k!]
  (T_{2K}(μ) − e^{−μ} ≤ μ^{2K+1}/(2K+1)!, alternating terms), least over K ≤ 6, with m_k
  the moments E_Q[L^k]: at even k the RDP bound above, at odd k the lower bound 1 (Jensen)
  — or, for a Gaussian base, its pair's exact e^{k(k−1)μ²/2} (E_Q[e^{−μL}] is an
  f-divergence with a convex f, so a pair dominating every step's pair in the
  hockey-stick sense has the larger one: f-divergences are mixtures of hockey-stick
  divergences, here at every γ > 0); for a Gaussian also, at μ ≥ 1/4, an upper Riemann
  sum of E_Q[e^{−μL}] itself (``_gaussian_step``). With γ_s, P(s,·), Q(s,·) the Gamma(s) density and its regularised
  incomplete integrals, g(λ) = max_{λ' ≤ λ} A(λ')e^{λ'} − 1 (non-decreasing, g(0) = 0)
  and a cut Λ:
      ∫_0^Λ γ_s h e^{λ} dλ ≤ P(s,Λ) + ∫_0^Λ Q(s,u) dg(u) ≤ 1 + Σ_k Q(s,λ_k)(g_{k+1} − g_k) = 1 + S
  on any grid λ_k: h(λ)e^λ = E_Q[e^{λ(1−X)}] is convex in λ with slope 1 − E_Q[X] ≥ 0 at 0,
  so it does not decrease, and on a cell it is at most its value at the cell's right end.
  The rest is E_Q[X^{−s} Q(s, ΛX)]: with levels 1 > c_1 > … > c_m, it is at most
  η E_Q[X^{−s}] (η = Q(s, Λc_1), X ≥ c_1) + Σ_i Q(s, Λc_{i+1}) c_{i+1}^{−s} P(X < c_i)
  + E_Q[X^{−s}; X < c_m], and on X < c_m, X^{−s} ≤ Π L_j^{−s/t}, so by Cauchy–Schwarz
  the last is ≤ τ = (e^{2sε(1+2s/t)} P(X < c_m))^{1/2}; each P(X < c) ≤ min_λ e^{λc} A(λ)
  (Chernoff). Hence E_Q[X^{−s}] − 1 ≤ (S + middle + τ + η)/(1 − η), the least over a
  few Λ and c_1. To leading order in 1/t, S ≈ s(s+1)(m₂ − 1)/2t, the exact excess's
  own leading term. An α < 2 also takes α = 2's bound (D_α does not decrease in α).

Measured (tests/rdp/test_random_allocation.py): the remove direction equals the
exact divergence at integer orders (randomized response; the Gaussian's partition
sum and the ``random_allocation`` peer, to 1e-8); the add bound is within 1% of the
exact divergence at t = 1000, α ≤ 3 (randomized response) and within 2% (Gaussian,
σ = 1, α ≤ 10); at t ≲ 10 the geometric-mean bound is the one left, up to 2–4× the
exact add divergence at small α.

``selected = k > 1``: the curve of the floor/ceil reduction of
``transformers/random_allocation.py`` (k allocations of one step each; RDP adds).

Rounding: every log carries an absolute error bound (a few ulp of the
magnitudes it was computed from, added through each convolution); results are
the computed value plus that bound, times (1 + 8 ulp). scipy's gammaincc is
taken as accurate to 1e-12 relative (Cephes igamc; its measured error is
~1e-14): Q(s,·) is padded by that factor, η by a factor 2.
"""
import math
from functools import lru_cache

import numpy as np

from ..lazy import lazy
from .curve import RDPFunction
from ..numerics import ULP_OF_ONE as _U

special = lazy("scipy.special")

__all__ = ["allocation_rdp", "remove_rdp", "add_rdp", "MAX_ORDER"]

MAX_ORDER = 512        # integer orders of the remove-direction series; beyond, Jensen
MAX_ADD_ORDER = 4096   # the add direction's Laplace bound up to this α; beyond, the AM–GM bound
_LOG_ETAS = (-46.0, -36.0, -28.0, -22.0, -17.0, -13.0)  # the cuts Λ: η = Q(s, Λc_1) at most e^{these}
_FIRST_LEVELS = 3      # c_1 is one of the first three levels
_LEVELS = (0.97, 0.9, 0.75, 0.5, 0.25)  # the levels c_i splitting the tail of X
_HALF_DEGREE = 6       # the add direction's Taylor bounds of e^{−x}: degrees 2, 4, .., 12
_Z_CELLS = 6000        # half the cells of the Gaussian step's Riemann sum (width 2e-3)
_MU_GRID = np.geomspace(0.25, 1e4, 400)   # where it is evaluated (2.7% apart)
_CELLS = 40_000        # the most cells of the Laplace sum
_WIDTH = 2e-3          # and their width where that allows (≲ 0.1% of the excess)


# --------------------------------------------------------------- remove
def _convolve(a, ea, b, eb):
    """log of the coefficients of the product of two series (logs ``a``, ``b`` with absolute
    error bounds ``ea``, ``eb``), truncated to their common length, and its error bound."""
    n = len(a)
    idx = np.arange(n)
    diff = idx[:, None] - idx[None, :]                        # n − k
    ok = diff >= 0
    safe = np.where(ok, diff, 0)
    with np.errstate(invalid="ignore"):
        m = np.where(ok, a[None, :] + b[safe], -np.inf)
        e = np.where(ok & np.isfinite(m), ea[None, :] + eb[safe], 0.0)
    top = m.max(axis=1)
    live = np.isfinite(top)
    out = np.full(n, -np.inf)
    with np.errstate(invalid="ignore", divide="ignore"):
        out[live] = top[live] + np.log(np.exp(m[live] - top[live, None]).sum(axis=1))
        mag = np.where(np.isfinite(m), np.abs(m), 0.0).max(axis=1)
    # each term's log is off by its inputs' errors and one rounding; exp, the sum and
    # the log add a few ulp of the magnitudes (4u per term's size, log2 n for the sum)
    err = e.max(axis=1) + 8 * _U * (mag + np.log2(idx + 2) + 2)
    err[0] = ea[0] + eb[0] + _U * abs(out[0])   # one term, one addition (0 + 0 for F^t: exact)
    return out, np.where(live, err, 0.0)


def _power(c, ec, t):
    """log coefficients of F(z)^t (F's logs ``c``), truncated, by repeated squaring."""
    out = np.full(len(c), -np.inf)
    out[0] = 0.0
    err = np.zeros(len(c))
    base, eb = c, ec
    while True:
        if t & 1:
            out, err = _convolve(out, err, base, eb)
        t >>= 1
        if not t:
            return out, err
        base, eb = _convolve(base, eb, base, eb)


def _base_moments(base, top):
    """log E_Q[L^k] ≤ (k − 1)ε(k) for k = 0..top (0 at k = 0, 1) and their error bounds."""
    k = np.arange(top + 1, dtype=float)
    eps = np.zeros(top + 1)
    if top >= 2:
        eps[2:] = np.maximum(np.asarray(base(k[2:]), dtype=float), 0.0)
    with np.errstate(invalid="ignore"):
        lm = np.where(k >= 2, (k - 1) * eps, 0.0)
    return lm, 2 * _U * np.where(np.isfinite(lm), np.abs(lm), 0.0)


@lru_cache(maxsize=64)
def _remove_lambdas_cached(base, t, top):
    lm, em = _base_moments(base, top)
    k = np.arange(top + 1, dtype=float)
    lf = special.gammaln(k + 1)
    lt = math.log(t)
    c = lm - lf - k * lt
    ec = em + 4 * _U * (np.abs(lf) + k * lt + np.where(np.isfinite(lm), np.abs(lm), 0.0) + 1)
    ec[0] = 0.0   # c_0 = 1 exactly: an error there would double with every squaring
    g, eg = _power(c, ec, t)
    lam = lf + g                                              # E_Q[X^n] = n! [z^n] F^t
    with np.errstate(invalid="ignore"):
        bound = lam + eg + 4 * _U * (np.abs(lf) + np.abs(g) + 1)
    bound = np.where(np.isnan(bound), np.inf, bound)
    bound[:2] = 0.0
    # Jensen on the mixture caps it: λ(n) ≤ (n − 1)ε(n)
    return np.minimum(np.maximum(bound, 0.0), lm) * (1 + 8 * _U)


def remove_lambdas(base, steps, top):
    """λ(n) = log E_Q[X^n] (upper bounds) for n = 0..top ≤ MAX_ORDER (module docstring)."""
    return _remove_lambdas_cached(base, int(steps), int(top))


def remove_rdp(base, t, alpha):
    """ε(α) of the remove direction for an array of α > 1."""
    out = np.asarray(base(alpha), dtype=float).copy()          # Jensen, the fallback
    lo, hi = np.floor(alpha), np.ceil(alpha)
    inside = hi <= MAX_ORDER
    if inside.any() and t > 1:
        lam = remove_lambdas(base, t, int(hi[inside].max()))
        f, c = lo[inside].astype(np.int64), hi[inside].astype(np.int64)
        x = alpha[inside]
        with np.errstate(invalid="ignore"):  # inf·0 at an integer order
            chord = np.where(f == c, lam[f], (c - x) * lam[f] + (x - f) * lam[c])
        out[inside] = np.minimum(out[inside], chord / (x - 1) * (1 + 4 * _U))
    return out


# ------------------------------------------------------------------ add
def step_moments(base, gaussian_mu=None):
    """(log(E_Q[L^k] − 1) for k = 0..2·``_HALF_DEGREE``, ``gaussian_mu``): upper bounds at even k (the base's RDP),
    lower bounds at odd k (−inf: E_Q[L^k] ≥ 1 only), or for a Gaussian base (``gaussian_mu``:
    its dominating pair) e^{k(k−1)μ²/2} − 1 each way round; k = 0, 1 are unused (−inf)."""
    k = np.arange(2 * _HALF_DEGREE + 1, dtype=float)
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):  # k = 0, 1: dropped below
        if gaussian_mu is not None:
            x = k * (k - 1) * float(gaussian_mu) ** 2 / 2
            exact = x + np.log(-np.expm1(-x))
            pad = 4 * _U * (np.abs(exact) + 1)
            out = np.where(k % 2 == 0, exact + pad, exact - pad)
        else:
            x = (k - 1) * np.maximum(np.asarray(base(np.maximum(k, 2.0)), dtype=float), 0.0)
            out = np.where(k % 2 == 0, x + np.log(-np.expm1(-x)) + 4 * _U * (np.abs(x) + 1), -np.inf)
    out[:2] = -np.inf
    return tuple(float(v) for v in out), gaussian_mu


@lru_cache(maxsize=16)
def _gaussian_step(gaussian_mu):
    """φ(μ)e^μ − 1 ≥ E_Q[e^{−μL}]e^μ − 1 for a Gaussian pair (L = e^W, W ~ N(−v²/2, v²), v = μ_G)
    by an upper Riemann sum in z = (W + v²/2)/v: on each cell the density at the end nearer 0
    and e^{−μe^W} at the left end (it decreases), plus the mass beyond |z| = 12 (≤ 4e-33);
    at each μ of ``_MU_GRID``."""
    mu = _MU_GRID
    z = np.linspace(-12.0, 12.0, 2 * _Z_CELLS + 1)
    dens = np.exp(-0.5 * z * z) / math.sqrt(2 * math.pi)
    top = np.maximum(dens[:-1], dens[1:]) * (z[1] - z[0])
    ell = np.exp(gaussian_mu * z[:-1] - 0.5 * gaussian_mu ** 2)
    with np.errstate(under="ignore"):
        phi = np.exp(-np.outer(mu, ell)) @ top
    # the sum's n roundings and a few per term (exp, products), relative; the tails absolute
    phi = phi * (1 + (len(top) + 16) * _U) + 4e-33
    return np.maximum(np.expm1(mu + np.log(phi)) * (1 + 4 * _U), 0.0)


def _log_step(lam, t, step):
    """t·log of the per-step bound on E_Q[e^{−μL}] (μ = λ/t) and w = t log(that·e^μ) ≥ 0, both
    rounded up. e^{−x} ≤ T_{2K}(x) (its Taylor polynomial) for x ≥ 0 and T_{2K}(μ) − e^{−μ} ≤
    μ^{2K+1}/(2K+1)!, so E e^{−μL} e^μ − 1 ≤ e^μ[μ^{2K+1}/(2K+1)! + Σ_{k=2}^{2K} (−μ)^k (m_k − 1)/k!]
    (odd k at their lower bounds); the least over K = 1.._HALF_DEGREE, and for a Gaussian pair
    where μ ≥ 1/4 also ``_gaussian_step`` at the grid point of ``_MU_GRID`` just below μ
    (E_Q[e^{−μL}] decreases in μ)."""
    lm1, gaussian_mu = step
    mu = np.asarray(lam, dtype=float) / t
    k = np.arange(2 * _HALF_DEGREE + 2, dtype=float)
    lf = special.gammaln(k + 1)
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        lmu = np.log(mu)[:, None]
        lm = np.append(np.asarray(lm1), -np.inf)
        mag = np.exp(k * lmu + lm - lf)                      # +inf beyond the float range: no bound
        mag[:, :2] = 0.0
        signed = np.where(k % 2 == 0, mag, -mag)
        partial = np.cumsum(signed, axis=1)
        size = np.cumsum(mag, axis=1)
        even = np.arange(2, 2 * _HALF_DEGREE + 1, 2)
        rem = np.exp((even + 1) * lmu - lf[even + 1])
        # each term a few roundings (exp, log, products): 8u of it; the sum adds n·u of the sizes
        bracket = partial[:, even] + rem + (8 + len(k)) * _U * (size[:, even] + rem)
        d = np.exp(mu)[:, None] * np.maximum(bracket, 0.0) * (1 + 4 * _U)
        d = np.where(np.isfinite(d), d, np.inf).min(axis=1)
        d = np.where(mu > 0, d, 0.0)
        far = np.flatnonzero(mu >= _MU_GRID[0])
        if gaussian_mu is not None and len(far):
            at = np.searchsorted(_MU_GRID, mu[far], side="right") - 1
            below, riemann = _MU_GRID[at], _gaussian_step(gaussian_mu)[at]
            d[far] = np.minimum(d[far], np.expm1(np.log1p(riemann) - below + mu[far]) * (1 + 4 * _U))
        w = t * np.log1p(d) * (1 + 4 * _U)
    return w - lam + 2 * _U * (np.abs(lam) + w), w


def _laplace_excess(base, t, s, step):
    """An upper bound on E_Q[X^{−s}] − 1 (module docstring), or inf: the least over a
    few cuts Λ and first levels c_1 (each a valid bound)."""
    eps_tail = float(base(1.0 + 2.0 * s / t))
    if not (math.isfinite(eps_tail) and math.isfinite(step[0][2])) or step[0][2] > 700.0:
        return math.inf  # (beyond the float range, e^{step} below: no bound by this route)
    # log P(X < c) ≤ min_λ λc + log A(λ), on a grid of μ (any λ gives a valid Chernoff bound)
    lam_c = t * np.geomspace(1e-6, 2.0, 400) / math.exp(step[0][2])
    log_a_c = _log_step(lam_c, t, step)[0]
    log_p = {c: min(float(np.min(lam_c * c + log_a_c)) * (1 - 8 * _U) + 8 * _U, 0.0) for c in _LEVELS}
    # X < the last level: Cauchy–Schwarz with the geometric mean
    log_tau = 0.5 * (2 * s * eps_tail * (1 + 4 * _U) + log_p[_LEVELS[-1]])
    if log_tau > 700.0:   # beyond the float range: no bound (capping τ there under-reported)
        return math.inf
    tau = math.exp(log_tau)
    top = float(special.gammainccinv(s, math.exp(min(_LOG_ETAS)))) / _LEVELS[_FIRST_LEVELS - 1]
    if not math.isfinite(top):
        return math.inf
    width = _WIDTH * 2.0 ** max(0, math.ceil(math.log2(top / (_WIDTH * _CELLS))))
    n = math.ceil(top / width)
    lam, g = _g_grid(t, step, width, 1 << max(10, (n - 1).bit_length()))
    # every cell in the bulk of γ_s, every 10th beyond (any sub-grid gives an upper sum)
    fine = min(n, math.ceil((s + 8 * math.sqrt(s) + 12) / width))
    idx = np.unique(np.concatenate((np.arange(fine), np.arange(fine, n + 1, 10), [n])))
    lam, g, n = lam[idx], g[idx], len(idx) - 1
    q = special.gammaincc(s, lam[:-1]) * (1 + 1e-12)   # padded: the gammaincc allowance
    with np.errstate(over="ignore", invalid="ignore"):
        partial = np.cumsum(q * np.diff(g))                 # S up to each grid point
    best = math.inf
    for first in range(_FIRST_LEVELS):
        levels = np.array(_LEVELS[first:])
        for log_eta in _LOG_ETAS:
            cut = float(special.gammainccinv(s, math.exp(log_eta))) / levels[0]
            k = int(np.searchsorted(lam, cut))                # Λ = λ_k ≥ cut
            if k > n or k == 0:
                continue
            qs = special.gammaincc(s, lam[k] * levels) * (1 + 1e-12)
            eta = 2 * float(qs[0])                            # padded: a factor 2
            total = float(partial[k - 1]) * (1 + (k + 4) * _U)  # k non-negative terms, rounded up
            if eta >= 0.5 or not math.isfinite(total):
                continue
            # X in [c_{i+1}, c_i): Q(s, Λc_{i+1}) c_{i+1}^{−s} P(X < c_i)
            logs = [-s * math.log(levels[i + 1]) + log_p[levels[i]] for i in range(len(levels) - 1)]
            if max(logs) > 700.0:   # beyond the float range: no bound from this cut
                continue
            middle = sum(float(qs[i + 1]) * math.exp(x) for i, x in enumerate(logs)) * (1 + 8 * _U)
            best = min(best, (total + middle + tau + eta) / (1 - eta) * (1 + 4 * _U))
    return best


def add_rdp(base, t, alpha, enough=None, gaussian_mu=None):
    """ε(α) of the add direction for an array of α > 1; where the AM–GM bound is at most
    ``enough`` (the remove direction's, when only the larger of the two is wanted) the
    Laplace bound is not computed."""
    s = alpha - 1.0
    out = np.asarray(base(1.0 + s / t), dtype=float) * (1 + 4 * _U)   # AM–GM
    if t == 1:
        return out
    step = step_moments(base, gaussian_mu)
    for i, si in enumerate(s):
        if si <= MAX_ADD_ORDER - 1 and (enough is None or out[i] > enough[i]):
            # D_α does not decrease in α (van Erven & Harremoës 2014, Thm 3): α < 2 also takes α = 2's
            for order in {float(si), max(float(si), 1.0)}:
                ex = _laplace_excess_cached(base, t, order, step)
                out[i] = min(out[i], math.log1p(ex) / order * (1 + 4 * _U))
    return out


@lru_cache(maxsize=64)
def _g_grid(t, step, width, n):
    """λ_k = k·width (k = 0..n) and g(λ_k), rounded up (shared by every order)."""
    lam = np.arange(n + 1) * width
    w = _log_step(lam, t, step)[1]
    with np.errstate(over="ignore"):
        return lam, np.maximum.accumulate(np.expm1(w) * (1 + 2 * _U))


@lru_cache(maxsize=4096)
def _laplace_excess_cached(base, t, s, step):
    return _laplace_excess(base, t, s, step)


# --------------------------------------------------------------- public
def allocation_rdp(base, steps, gaussian_mu=None):
    """The RDP curve of one allocation of the base (an ``RDPCurve`` or any hashable
    α ↦ ε bounding both directions) over ``steps`` steps: the larger of the remove
    and add bounds of the module docstring, an ``RDPFunction``."""
    t = int(steps)

    def fn(alpha):
        a = np.asarray(alpha, dtype=float)
        flat = a.ravel()
        remove = remove_rdp(base, t, flat)
        out = np.maximum(remove, add_rdp(base, t, flat, enough=remove, gaussian_mu=gaussian_mu))
        out = np.maximum(out, 0.0).reshape(a.shape)
        return float(out) if out.ndim == 0 else out
    # keyed by the base's terms (as the other transformers' curves), so equal epochs merge
    return RDPFunction(("random-allocation", t, getattr(base, "terms", base), gaussian_mu), fn)
