r"""Exact RDP of Poisson-subsampled finite and lattice pairs: explicit sums.

Zhu, Dong & Wang (2022, Thm 11) give the pairs that dominate Poisson
subsampling per direction (``pld/pairs/poisson_sampling.py``); Rényi divergence
cannot grow under post-processing, so their divergences bound the RDP, and
for outcomes on a finite set or a lattice they are sums over the outcomes.
With the base pair (P, Q) of each direction and its loss L = log P/Q:

    remove: D_α((1−q)Q + qP || Q),  A_α = Σ_x Q(x)(1 + t(x))^α,   t = q(e^L − 1),
    add:    D_α(P || M), M = (1−q)P + qQ,  A_α = Σ_x M(x) r(x)^α,   r = P/M = 1/(1 − q + qe^{−L}),

and ε(α) = log(A_α)/(α−1), the larger of the two (RDP bounds both orders).
Both weights have mean E[1 + t] = E_M[r] = 1, so A_α − 1 = Σ w(x) φ(t(x)) with
φ(t) = (1+t)^α − 1 − αt ≥ 0 (convexity; t = r − 1 for add): a sum of
non-negative terms, summed in log space (``poisson_sampling.log_phi_of_t``),
and ε = log1p(A_α − 1)/(α−1): no cancellation at α → 1 or q → 0. Any real
α > 1 is a finite sum the same way.

Rounding (upward throughout): each term's log errs by its weight's log error,
~4 ulp of the magnitudes in log φ (``segment_lse``'s model), and the error τ
of its loss (the logs' ``log_err`` and the difference's rounding) through the
slope |d log φ/dL| = κ: κτ(1 + κτ). The sum's error is the terms' errors
weighted by their shares, plus 4u(log₂ n + 2); then ``eps_from_log_excess``.
Where t ≈ 0 (a loss near 0: φ ≈ α(α−1)t²/2, κ unbounded) the first-order
term is completed by the second-order one, added to the sum absolutely:
w·½ sup φ″·Δt², φ″(s) = α(α−1)(1+s)^{α−2}, Δt ≤ sup|dt/dL|·τ, and log(1+s)
within τ of log1p t (|d log1p t/dL| ≤ 1).

Lattice tails (the discrete Gaussian, Canonne, Kamath & Steinke 2020): the
sum runs over a window of integers and a bound on the rest is added to
A_α − 1 (``discrete_gaussian_poisson_rdp``). For the remove direction and an
integer α the sum is Σ_k C(α,k)(1−q)^{α−k}q^k E_Q[e^{kL}], and
E_Q[e^{kL}] = e^{k(k−1)Δ²/(2σ²)} Σ_x N_Z(kΔ, σ²)(x) = e^{k(k−1)Δ²/(2σ²)}
exactly (kΔ is an integer shift of the lattice): the continuous Gaussian's
binomial sum (``subsampled_gaussian_rdp`` with σ/Δ). Fractional α above
``_DIRECT_ALPHA`` interpolate (α−1)ε linearly between those integers
(convex in α, ``subsampled_rdp_bound``'s rule).
"""
import math

import numpy as np

from ..lazy import lazy
from .poisson_sampling import eps_from_log_excess, log_phi_of_t, subsampled_gaussian_rdp
from ..numerics import ULP_OF_ONE as _U, sum_roundings

special = lazy("scipy.special")

_CELLS = 1 << 21        # terms evaluated at once (memory ~ 10 arrays of this size)
_DIRECT_ALPHA = 256.0   # fractional α above this: interpolated between integer orders
_WINDOW_CAP = 1 << 20   # lattice points of one order's window; beyond: no exact sum (NaN)
_BUDGET = 1 << 20       # lattice points of one call (all orders); beyond: NaN (the general bound)


def _psi(w, lq, l1q):
    """log(1 − q + q e^w), elementwise."""
    return np.logaddexp(l1q, lq + w)


def _direction_terms(direction, log_p, log_q, q):
    """(log w, log|t|, log1p t, log|dt/dL|) per outcome of one direction (module docstring)."""
    lq, l1q = math.log(q), (math.log1p(-q) if q < 1 else -math.inf)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        loss = np.where(np.isfinite(log_p) | np.isfinite(log_q), log_p - log_q, 0.0)
        if direction == "remove":       # weight Q, t = q expm1(L), log1p t = ψ(L)
            em1 = np.expm1(np.minimum(loss, 700.0))
            labs_t = np.where(loss > 700.0, lq + loss, lq + np.log(np.abs(em1)))
            L = _psi(loss, lq, l1q)
            t = np.where(loss > 700.0, np.inf, q * em1)
            return log_q, t, labs_t, L, lq + loss
        # add: weight M = (1−q)P + qQ, t = r − 1 = q(1 − e^{−L})/(1 − q + qe^{−L}), log1p t = −ψ(−L)
        psi = _psi(-loss, lq, l1q)
        em1 = np.expm1(np.minimum(-loss, 700.0))
        labs_t = np.where(-loss > 700.0, lq - loss - psi, lq + np.log(np.abs(em1)) - psi)
        t = -np.sign(em1) * np.exp(labs_t)
        return np.logaddexp(l1q + log_p, lq + log_q), t, labs_t, -psi, lq - loss - 2 * psi


def _log_excess(direction, log_p, log_q, tau, w_err, q, alphas):
    """log(A_α − 1) and its error bound for each α, summed over the given outcomes."""
    log_w, t, labs_t, L, log_slope = _direction_terms(direction, log_p, log_q, q)
    live = np.isfinite(log_w)
    log_w, t, labs_t, L, log_slope, tau, w_err = (v[live] for v in (log_w, t, labs_t, L, log_slope, tau, w_err))
    n = len(log_w)
    out, err = np.full(len(alphas), -np.inf), np.zeros(len(alphas))
    if n == 0:
        return out, err
    step = max(1, _CELLS // n)
    for lo in range(0, len(alphas), step):
        a = np.repeat(alphas[lo:lo + step], n)
        k = len(a) // n
        tt, lt, LL = (np.tile(v, k) for v in (t, labs_t, L))
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            lphi, _ = log_phi_of_t(tt, lt, LL, a)
            v = (np.tile(log_w, k) + lphi).reshape(k, n)
            mag = np.abs(lphi) + a * np.where(np.isfinite(LL), np.abs(LL), 0.0) + np.abs(lt) + 8
            # κ = |φ′(t)|·|dt/dL|/φ, φ′ = α·expm1((α−1)·log1p t)
            lx = (a - 1) * LL                                  # log|expm1(lx)| without overflow
            log_em1 = np.where(lx > 0, lx + np.log(-np.expm1(-np.abs(lx))), np.log(-np.expm1(-np.abs(lx))))
            log_kappa = np.log(a) + log_em1 + np.tile(log_slope, k) - lphi
            # a term with φ = 0 has no weight (the second-order term below bounds it); any other
            # κ that is not finite makes the bound fail (NaN: the general bound is used)
            kt = np.where(np.isfinite(lphi), np.exp(np.minimum(log_kappa, 700.0)), 0.0) * np.tile(tau, k)
            e = (np.tile(w_err, k) + 4 * _U * mag + kt * (1 + kt)).reshape(k, n)
            # the second-order term (module docstring), τ = 0 where the loss is exact (±∞)
            tt_tau = np.tile(tau, k)
            log_second = (np.tile(log_w, k) + np.log(a) + np.log(a - 1) - math.log(2.0)
                          + 2 * (np.tile(log_slope, k) + 3 * tt_tau + np.log(tt_tau))
                          + (a - 2) * (np.where(np.isfinite(LL), LL, 0.0) + np.sign(a - 2) * tt_tau))
            second = special.logsumexp(np.where(tt_tau > 0, log_second, -np.inf).reshape(k, n), axis=1)
            top = np.max(v, axis=1)
            top = np.where(np.isfinite(top), top, 0.0)
            w = np.exp(v - top[:, None])
            s = w.sum(axis=1)
            out[lo:lo + k] = np.logaddexp(top + np.log(s), second + 1e-6)  # + the second-order terms
            err[lo:lo + k] = np.where(s > 0, (w * np.where(w > 0, e, 0.0)).sum(axis=1) / s
                                      + max(4 * _U * (math.log2(n) + 2), 0.5 * (sum_roundings(n) + 1) * _U), 0.0)
    return out, err


def _eps(log_excess, err, alphas):
    """ε from log(A − 1) and its error; NaN where the error bound is not small (κτ ≳ 1)."""
    out = eps_from_log_excess(log_excess, err, alphas)
    return np.where(err < 0.1, out, np.nan)


def poisson_finite_rdp(remove, add, q, alpha):
    """ε(α) of Poisson sampling with rate q of a base whose remove and add pairs
    are finite: each given as (log_p, log_q, err_p, err_q) over its outcomes
    (−inf for a zero mass; err the logs' absolute error bounds). The larger of
    the two directions' exact sums, rounded up (module docstring); inf where P
    has mass outside Q's support in the remove direction. 0 < q < 1, α > 1
    (an array); NaN where the rounding bound cannot be certified small."""
    alphas = np.atleast_1d(np.asarray(alpha, dtype=float)).ravel()
    out = np.zeros(len(alphas))
    for direction, (log_p, log_q, err_p, err_q) in (("remove", remove), ("add", add)):
        log_p, log_q = np.asarray(log_p, dtype=float), np.asarray(log_q, dtype=float)
        if direction == "remove" and np.any(np.isfinite(log_p) & ~np.isfinite(log_q)):
            return np.full(len(alphas), np.inf)
        fin = np.isfinite(log_p) & np.isfinite(log_q)
        tau = np.where(fin, np.asarray(err_p) + np.asarray(err_q) + 8 * _U * np.abs(np.where(fin, log_p - log_q, 0.0)),
                       0.0)
        w_err = np.maximum(err_p, err_q) + 4 * _U
        le, err = _log_excess(direction, log_p, log_q, tau, np.broadcast_to(w_err, log_p.shape).copy(), q, alphas)
        out = np.maximum(out, _eps(le, err, alphas)) if direction == "add" else _eps(le, err, alphas)  # NaN stays
    return out


def _lattice_logs(sigma, delta, lo, hi, log_z, log_z_err):
    """log N_Z(0, σ²) and log N_Z(Δ, σ²) on the integers lo..hi and their error bounds."""
    x = np.arange(lo, hi + 1, dtype=float)
    two_var = 2.0 * sigma * sigma
    a, b = x * x / two_var, (x - delta) ** 2 / two_var      # integers below 2^53: exact squares
    return -a - log_z, -b - log_z, 8 * _U * (a + 1) + log_z_err, 8 * _U * (b + 1) + log_z_err


def _log_gauss_tail(y, sigma, log_z):
    """log of Σ_{x ≥ y} e^{−x²/(2σ²)}/Z for an integer y ≥ 1, bounded above by a geometric series."""
    two_var = 2.0 * sigma * sigma
    return -y * y / two_var - log_z - math.log(-math.expm1(-(2 * y + 1) / two_var))


def discrete_gaussian_poisson_rdp(sigma, delta, q, alpha):
    """ε(α) of Poisson sampling (rate q, 0 < q < 1) of the discrete Gaussian
    N_Z(·, σ²) with integer sensitivity Δ: the larger of the two directions,
    rounded up (module docstring); NaN where no exact sum is attempted (a
    window beyond ``_WINDOW_CAP`` points)."""
    sigma, delta, q = float(sigma), int(delta), float(q)
    alphas = np.atleast_1d(np.asarray(alpha, dtype=float)).ravel()
    two_var = 2.0 * sigma * sigma
    reach = int(math.ceil(math.sqrt(two_var * 800))) + 2
    xs = np.arange(-reach - 1, reach + 2, dtype=float)
    log_z = float(special.logsumexp(-xs * xs / two_var))   # omits ≤ e^{−800} relative: Z rounds down
    log_z_err = 8 * _U * (abs(log_z) + math.log2(len(xs)) + 2)
    out = np.full(len(alphas), np.nan)
    lq, l1q = math.log(q), math.log1p(-q)
    budget = [_BUDGET]
    for i, a in enumerate(alphas):
        # remove: integer orders are the continuous Gaussian's binomial sum, exactly
        if a == math.floor(a):
            rem = subsampled_gaussian_rdp(q, sigma / delta, a)
        elif a > _DIRECT_ALPHA:
            f, c = math.floor(a), math.ceil(a)
            lam = [0.0 if n == 1 else (n - 1) * subsampled_gaussian_rdp(q, sigma / delta, float(n)) for n in (f, c)]
            rem = ((c - a) * lam[0] + (a - f) * lam[1]) / (a - 1.0) * (1 + 4 * _U)
        else:
            rem = _lattice_direction("remove", sigma, delta, q, a, log_z, log_z_err, lq, l1q, budget)
        add = _lattice_direction("add", sigma, delta, q, a, log_z, log_z_err, lq, l1q, budget)
        out[i] = max(rem, add) if np.isfinite(rem) and np.isfinite(add) else np.nan
    return out


def _lattice_direction(direction, sigma, delta, q, a, log_z, log_z_err, lq, l1q, budget):
    """One direction's ε(α) over a window of the lattice plus a bound on the rest;
    NaN where the window exceeds ``_WINDOW_CAP`` or what is left of ``budget[0]``."""
    two_var = 2.0 * sigma * sigma
    # the window reaches where the tail bounds fall ~60 below A − 1 ≳ (α−1)q²Δ²/σ²/2
    # (its second-order term; only tightness depends on this, the bounds are added)
    depth = 60 + max(0.0, -math.log(a - 1.0) - 2 * lq + 2 * math.log(sigma / delta) + 1)
    if direction == "remove":
        # terms peak near 0 (Q) and below αΔ (e^{αL}); both tails bounded geometrically
        w = int(math.ceil(math.sqrt(two_var * depth))) + 2
        lo, hi = -w, int(math.ceil(a * delta)) + w
    else:
        # φ(t) ≤ φ_max = max(α − 1, (1 − q)^{−α}) on t ∈ [−1, q/(1−q)]: the weights' tails suffice
        log_phi_max = max(math.log(a - 1.0), -a * l1q)
        w = int(math.ceil(math.sqrt(two_var * (depth + max(log_phi_max, 0.0))))) + 2
        lo, hi = -w, delta + w
    if hi - lo + 1 > min(_WINDOW_CAP, budget[0]):
        return np.nan
    budget[0] -= hi - lo + 1
    log_q0, log_qd, e0, ed = _lattice_logs(sigma, delta, lo, hi, log_z, log_z_err)
    # the base pairs: remove (N_Z(Δ), N_Z(0)), add (N_Z(0), N_Z(Δ)) (PairMechanism: add = reverse)
    log_p, log_q, err_p, err_q = (log_qd, log_q0, ed, e0) if direction == "remove" else (log_q0, log_qd, e0, ed)
    tau = err_p + err_q + 8 * _U * np.abs(log_p - log_q)
    le, err = _log_excess(direction, log_p, log_q, tau, np.maximum(err_p, err_q) + 4 * _U, q,
                          np.array([a]))
    if direction == "remove":
        # x > hi (≥ αΔ + w): Q(x)φ(t) ≤ Q(x)(1 − q + qe^L)^α ≤ Q(x)q^α e^{αL}(1 + (1−q)e^{−L'}/q)^α,
        # L' = L(hi + 1) the least loss there, and Q(x)e^{αL(x)} = e^{−(x−αΔ)²/(2σ²) + α(α−1)Δ²/(2σ²)}/Z
        y = hi + 1 - a * delta
        loss_hi = (2.0 * (hi + 1) - delta) * delta / two_var
        upper = (-y * y / two_var + a * (a - 1) * delta * delta / two_var - log_z
                 - math.log(-math.expm1(-(2 * y + 1) / two_var))
                 + a * (lq + math.log1p(math.exp(l1q - lq - loss_hi))))
        lower = math.log(a) + lq + _log_gauss_tail(-lo + 1, sigma, log_z)
        log_tail = np.logaddexp(upper, lower)
    else:
        # M-mass outside [−w, Δ + w] ≤ 2·(the N_Z(0) tail beyond w), times φ_max
        log_tail = math.log(2.0) + _log_gauss_tail(w + 1, sigma, log_z) + log_phi_max
    log_tail += 1e-6  # the tail's own rounding, generously
    total = np.logaddexp(le, log_tail)
    return float(_eps(total, err + 1e-300, np.array([a]))[0])
