"""Trade-off curves (f-DP) ⇄ privacy profiles, and the Gaussian trade-off G_μ.

Hypothesis testing between the laws of a pair (P, Q), null Q, alternative P:
a test φ has type-I error α = E_Q[φ] and type-II error β = 1 − E_P[φ]; the
trade-off function T(Q, P)(α) is the smallest β at level α (Dong, Roth & Su
2022, Def. 2.1). It is convex, continuous, non-increasing, and it is the
convex conjugate of the hockey-stick curve δ(ε) = H_{e^ε}(P‖Q) over ε ∈ ℝ
(DRS Prop. 2.12; Zhu, Dong & Wang 2022, §5):

    T(Q, P)(α) = sup_{ε ∈ ℝ} (1 − δ(ε) − e^ε α),     (the floor 0 included)
    δ(ε)       = sup_{α ∈ [0,1]} (1 − T(α) − e^ε α).

Negative ε matter: they decide the curve for α near 1.

Which way these err. Any upper bound on δ(ε), at any set of ε, gives by the
first line a *lower* bound on β (sup over fewer ε, each term smaller):
``profile_to_tradeoff`` is pessimistic whatever set of ε it is given, and
exact for a curve δ(t = e^ε) that is linear in t between consecutive points
(a discrete loss on those points: a PLD grid or a finite pair's atoms).
Conversely ``tradeoff_to_profile`` returns δ(ε) exactly for a piecewise
linear curve given by its vertices; a curve below the true one gives δ above
the true one (an upper bound).

The Gaussian trade-off (Dong, Roth & Su 2022, eq. 2.6; Bu, Dong, Long & Su
2020, eq. 2.3): G_μ(α) = T(N(0,1), N(μ,1))(α) = Φ(Φ⁻¹(1 − α) − μ).
"""
import math

import numpy as np

from ..lazy import lazy
from .gdp import delta_gdp
from ..numerics import ULP_OF_ONE as _U

special = lazy("scipy.special")

_MAX_EXP = 700.0  # e^ε beyond this overflows; such ε only matter at α = 0


def gdp_tradeoff(alpha, mu, lower=True):
    """G_μ(α) = Φ(−Φ⁻¹(α) − μ), vectorised over α ∈ [0, 1], rounded down
    (``lower=False``: up). Written with Φ⁻¹(α) = −Φ⁻¹(1 − α) so that small
    α and small β keep their relative accuracy; the slack covers the few
    ulps of Φ⁻¹ and Φ, amplified by the slope φ(z)/Φ(z) ≤ 1 + |z| of log Φ."""
    alpha = np.asarray(alpha, dtype=float)
    with np.errstate(over="ignore", invalid="ignore"):
        x = -special.ndtri(alpha)
        z = x - mu
        out = special.ndtr(z)
        slack = 16 * _U * (1.0 + np.abs(np.where(np.isfinite(z), z, 0.0))) * \
            (2.0 + np.abs(np.where(np.isfinite(x), x, 0.0)) + mu)
    out = out * (1.0 - slack if lower else 1.0 + slack)
    out = np.clip(np.where(alpha <= 0, 1.0, np.where(alpha >= 1, 0.0, out)), 0.0, 1.0)
    return float(out) if out.ndim == 0 else out


def profile_to_tradeoff(eps, delta, alpha, lower=True):
    """β(α) = max(0, max_k (1 − δ_k − e^{ε_k} α)) for upper bounds δ_k on the
    hockey-stick curve at the points ε_k: a lower bound on the trade-off
    curve, vectorised over α ∈ [0, 1] (see the module docstring).

    O((n + m) log n) for n points and m levels: the lines c_k − s_k α
    (c = 1 − δ, s = e^ε) sorted by slope; for each α the best line is where
    the increments (c_{k+1} − c_k)/(s_{k+1} − s_k) fall below α (the
    Neyman–Pearson threshold), found by bisection on their running minimum
    (and maximum, from the right) and confirmed among its neighbours. Any line is a valid lower bound, so
    rounding in the search costs tightness, never soundness; each value is
    lowered by its own rounding (a few ulps of 1, δ_k and e^{ε_k} α).

    ``lower=False`` (for lower bounds δ_k of one curve that is linear in
    e^ε between the points, an optimistic grid): the same maximum rounded up,
    an upper bound on that curve's β — exact up to rounding because the
    search then runs on exactly concave values and checks ±3 neighbours."""
    eps = np.asarray(eps, dtype=float).ravel()
    delta = np.minimum(np.asarray(delta, dtype=float).ravel(), 1.0)
    alpha = np.asarray(alpha, dtype=float)
    flat = alpha.ravel()
    order = np.argsort(eps)
    eps, delta = eps[order], delta[order]
    c = 1.0 - delta
    out = np.zeros(flat.shape)
    if len(eps):
        ok = eps <= _MAX_EXP
        e, cc, dd = _merge_near(eps[ok], c[ok], delta[ok], lower)
        s = np.exp(e)
        if len(e) > 1:
            with np.errstate(divide="ignore", invalid="ignore"):
                inc = np.diff(cc) / np.diff(s)
            inc = np.nan_to_num(inc, nan=np.inf, posinf=np.inf, neginf=-np.inf)
            # first k with inc[k] <= α: line k is optimal (slopes of g(t) change sign there). inc is
            # non-increasing up to rounding, which is worst where e^ε is tiny (c = 1 − δ is noise
            # there): made monotone from the left and from the right, both searched
            starts = [np.searchsorted(-np.minimum.accumulate(inc), -flat, side="left"),
                      np.searchsorted(-np.maximum.accumulate(inc[::-1])[::-1], -flat, side="left")]
        else:
            starts = [np.zeros(flat.shape, np.int64)]
        best = np.full(flat.shape, -np.inf)
        for k, shift in ((k, shift) for k in starts for shift in range(-3, 4)):
            j = np.clip(k + shift, 0, len(e) - 1)
            val = cc[j] - s[j] * flat
            pad = 8 * _U * (1.0 + dd[j] + s[j] * flat * (2.0 + np.abs(e[j])))
            # upper: the curve's true kink sits within u|ε| of the float ε, which moves the line's
            # value by ≤ u|ε|(1 + e^ε α) (``max_profile_to_tradeoff_upper``): 8u|ε| more
            best = np.maximum(best, val - pad if lower else val + pad + 8 * _U * np.abs(e[j]))
        out = best
        zero = flat <= 0  # α = 0: every line counts, e^ε α = 0 however large ε is
        if zero.any():
            out[zero] = np.max(c) + (-8 * _U if lower else 8 * _U)
    out = np.clip(out, 0.0, 1.0).reshape(alpha.shape)
    return float(out) if out.ndim == 0 else out


def _merge_near(eps, c, delta, lower):
    """Points whose ε agree to 32 ulps merged into one line: the increments
    between them are rounding noise that would mislead the search of
    ``profile_to_tradeoff`` (two pairs with the same loss give such twins).
    The merged line is valid: for a lower bound the group's largest c with its
    largest ε (δ is non-increasing, so 1 − δ_i ≤ 1 − δ(ε_max) for every i), for
    an upper bound its largest c with its smallest ε (above every line of it)."""
    if len(eps) < 2:
        return eps, c, delta
    start = np.append(True, np.diff(eps) > 32 * _U * np.maximum(np.abs(eps[1:]), 1.0))
    idx = np.flatnonzero(start)
    at = np.append(idx[1:], len(eps)) - 1 if lower else idx  # the group's largest / smallest ε
    return eps[at], np.maximum.reduceat(c, idx), np.minimum.reduceat(delta, idx)


def tradeoff_to_profile(alpha, beta, eps):
    """δ(ε) = max(0, max_i (1 − β_i − e^ε α_i)) of the piecewise-linear trade-off
    curve through the vertices (α_i, β_i) (the supremum of 1 − β − e^ε α over
    a piecewise-linear curve sits at a vertex), vectorised over real ε. For a
    curve below the true one (a pessimistic curve) it is an upper bound on δ;
    it is rounded up by a few ulps of its terms."""
    a = np.asarray(alpha, dtype=float).ravel()
    b = np.asarray(beta, dtype=float).ravel()
    if a.shape != b.shape:
        raise ValueError(f"alpha and beta differ in length: {a.size} != {b.size}")
    eps = np.asarray(eps, dtype=float)
    with np.errstate(over="ignore", invalid="ignore"):
        t = np.exp(eps.ravel())[:, None]
        terms = np.where(a[None, :] > 0, t * a[None, :], 0.0)
        val = 1.0 - b[None, :] - terms + 8 * _U * (1.0 + b[None, :] + terms)
    out = np.clip(np.max(val, axis=1, initial=0.0), 0.0, 1.0).reshape(eps.shape)
    return float(out) if out.ndim == 0 else out


def gdp_mu_from_profile(eps, delta, tail=0.0, mu_max=1e3):
    """The smallest μ (rounded up; ∞ if none ≤ ``mu_max``) with

        δ(ε) ≤ δ_μ(ε) + tail   for every ε ≥ 0,

    for a hockey-stick curve known through upper bounds ``delta`` at the
    ascending points ``eps`` (eps[0] = 0), linear in t = e^ε between
    consecutive points and at most delta[-1] beyond the last (a PLD grid).
    With both orders of every neighbouring pair covered, that is μ-GDP up to
    the additive ``tail``: T ≥ G_μ − tail (Dong, Roth & Su 2022, Cor. 2.13).

    Certified on the whole half-line, not only at the points: on a cell
    [t_k, t_{k+1}] the curve is a line and δ_μ is convex in t, so it suffices
    that the line lies below δ_μ's tangent at t_k at both ends (tangent
    slope −Φ(−ε_k/μ − μ/2)); δ_μ is rounded down. μ is found by bisection;
    the answer is a μ that passed the check."""
    eps = np.asarray(eps, dtype=float)
    delta = np.asarray(delta, dtype=float) * (1 + 1e-12)
    if delta[-1] > tail:
        return math.inf
    t0, t1 = np.exp(eps[:-1]), np.exp(eps[1:]) * (1 + 4 * _U)
    d_left, d_right = delta[:-1], delta[1:]

    def ok(mu):
        base = delta_gdp(eps[:-1], mu, upper=False)
        slope = special.ndtr(-eps[:-1] / mu - mu / 2) * (1 + 16 * _U)
        tangent = base * (1 - 1e-12) - slope * (t1 - t0)
        return bool(np.all(d_left <= base * (1 - 1e-12) + tail) and np.all(d_right <= tangent + tail))

    lo, hi = 0.0, 1.0
    while not ok(hi):
        lo, hi = hi, 2.0 * hi
        if hi > mu_max:
            return math.inf
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        if ok(mid):
            hi = mid
        else:
            lo = mid
        if hi - lo <= 1e-10 * hi:
            break
    return float(hi)


_MIX_STEPS = 60          # bisection steps on λ (to 1e-18)
_MIX_CELLS = 1 << 22     # α × kinks per block of the search (memory)


def max_profile_to_tradeoff_upper(eps, tau, deltas, p_inf, alpha):
    """An upper bound on β(α) = max(0, sup_{ε ∈ ℝ} (1 − max_d δ_d(ε) − e^ε α)), the greatest convex
    minorant of the minimum of the trade-off curves whose hockey-stick curves are δ_d (the module
    docstring), vectorised over α ∈ [0, 1]. Given: every true kink of every δ_d within ``tau[k]``
    of a computed one ``eps[k]`` (ascending); ``deltas[d, k]`` lower bounds on δ_d(eps[k]); ``p_inf[d]``
    lower bounds on δ_d(+∞) = P_d(L = +∞).

    Minimax (Sion: G(t, λ) = 1 − Σ_d λ_d δ_d(t) − tα is concave in t = e^ε, each δ_d being convex in t,
    and linear in λ on the simplex): β(α) = min_λ sup_t G(t, λ), and every λ gives an upper bound, the
    conjugate of the one curve Σ λ_d δ_d (the smallest conjugate of a single curve is the λ at a
    vertex, loose where the curves cross). Some optimal λ mixes two curves (at the optimal t, α lies in
    the subdifferential of −Σ λ_d δ_d; the curves of the least and the largest slope there suffice), so
    for each pair of curves λ is bisected on the sign of ∂/∂λ (δ_2 − δ_1 at the maximising kink) and
    the least value found is kept: the search costs tightness only.

    sup_t G(t, λ) sits at a true kink t* (G is linear between kinks; as t → 0 it tends to 0, the
    floor), within t_k·expm1(τ_k) of the computed t_k = e^{ε_k}, and ∂G/∂t = Q_λ(L > ε) − α with
    Q(L > ε) = E_P[e^{−L}; L > ε] ≤ e^{−ε} = 1/t: so |G(t*) − G(t_k)| ≤ α|t* − t_k| + |log(t*/t_k)|
    ≤ α t_k expm1(τ_k) + τ_k.
    G(t_k) is rounded up: the mixture of lower bounds taken down by 4u (its products and sum, and
    weights λ, fl(1 − λ) summing to at most 1 + u), then 8u(1 + δ + tα) (exp, product, differences).
    β(0) = 1 − max_d p_inf[d] (t → ∞), rounded up; β(α) ≤ β(0) for every α (kinks beyond ε = 700,
    where e^ε overflows, are dropped: they only matter where α < e^{-690}, and there β(0) bounds);
    β(1) = 0."""
    eps = np.asarray(eps, dtype=float).ravel()
    tau = np.asarray(tau, dtype=float).ravel()
    deltas = np.atleast_2d(np.asarray(deltas, dtype=float))
    alpha = np.asarray(alpha, dtype=float)
    flat = alpha.ravel()
    at_zero = min(1.0 - float(np.max(p_inf)) + _U, 1.0)  # one rounding of 1 − p (≤ u/2), up
    ok = eps <= _MAX_EXP
    eps, tau, deltas = eps[ok], tau[ok], deltas[:, ok]
    t = np.exp(eps) * (1 + 4 * _U)  # rounded up (exp: 4 ulp)
    slack = (t * np.expm1(tau) * (1 + 8 * _U), tau * (1 + 4 * _U))  # the kinks' rounding: × α, + 1
    out = np.full(flat.shape, at_zero)
    inner = (flat > 0) & (flat < 1) & (flat >= math.exp(-690.0))
    if deltas.shape[1] and inner.any():
        a_all = flat[inner]
        block = max(1, _MIX_CELLS // deltas.shape[1])
        out[inner] = np.minimum(np.concatenate([_mixture_search(t, slack, deltas, a_all[i:i + block])
                                                for i in range(0, len(a_all), block)]), at_zero)
    out = np.where(flat >= 1.0, 0.0, np.clip(out, 0.0, 1.0)).reshape(alpha.shape)
    return float(out) if out.ndim == 0 else out


def _mixture_search(t, slack, deltas, a):
    """min over the λ tried of max_k G_up(t_k, λ) for each α in ``a`` (``max_profile_to_tradeoff_upper``).

    The vertices λ = e_d first; the max of the curves (λ-free) at the kinks bounds every
    mixture's value from below (Σ λ_d δ_d ≤ max_d δ_d), so where a vertex is within 4u of it
    the search cannot gain more and stops there; elsewhere (α near where two curves cross)
    λ is bisected for each pair of curves."""
    m = len(deltas)
    ta = t[None, :] * a[:, None]
    extra = 8 * _U * (1.0 + ta) + a[:, None] * slack[0][None, :] + slack[1][None, :]  # the pads but 8u·δ

    def value(d, rows):  # d: (rows, kinks) mixture of lower bounds, taken down by 4u
        d = d * (1 - 4 * _U)
        v = 1.0 - d - ta[rows] + 8 * _U * d + extra[rows]
        k = np.argmax(v, axis=1)
        return v[np.arange(len(k)), k], k

    everything = np.arange(len(a))
    best = np.min([value(np.broadcast_to(deltas[d], ta.shape), everything)[0] for d in range(m)], axis=0)
    floor = value(np.broadcast_to(np.max(deltas, axis=0), ta.shape), everything)[0]
    rows = np.flatnonzero(best > floor + 4 * _U)
    for i, j in ((i, j) for i in range(m) for j in range(i + 1, m)):
        if not len(rows):
            break
        lo, hi = np.zeros(len(rows)), np.ones(len(rows))
        for _ in range(_MIX_STEPS):
            mid = 0.5 * (lo + hi)
            v, k = value(mid[:, None] * deltas[i] + (1.0 - mid)[:, None] * deltas[j], rows)
            best[rows] = np.minimum(best[rows], v)
            rising = deltas[j][k] > deltas[i][k]  # ∂G/∂λ at the maximising kink
            hi, lo = np.where(rising, mid, hi), np.where(rising, lo, mid)
    return best
