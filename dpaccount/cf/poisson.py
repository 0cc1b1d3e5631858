"""M(s) of the Poisson-subsampled pairs, by quadrature over the base pair.

With g(ℓ) = log(1 − q + q e^ℓ) the losses of ``PoissonRemovePair(base, q)`` and
``PoissonAddPair(base, q)`` are g(L) and −g(−L) (``pld/pairs/poisson_sampling.py``;
Zhu, Dong & Wang 2022, Thm 11), so over the *base* pair

    remove: M(s) = E_{P'}[e^{s g(L)}],  P' = (1−q)Q + qP = e^{g(L) − L} P,
    add:    M(s) = E_P[e^{−s g(−L)}].

The base atoms map exactly (a finite sum). The base's continuous part is
integrated in the form

    C(s) = C(0) + ∫ v(x) expm1(σ φ(x)) dx,   remove: v = e^{g} dQ/dx, σ = s, φ = g(L(x));
                                             add:    v = dP/dx,      σ = −s, φ = g(−L(x)),

with C(0) the exact continuous mass. For small q, φ is tiny where the mass is and
C(s) − C(0) is of the size q|s|: computing the difference directly (rather than
C ≈ 1 as a sum of terms ≈ 1) keeps log M accurate to u·|log M| instead of u, which
a composition of k steps multiplies by k (k = 10⁵ in DP-SGD).

expm1(a + ib) = expm1(a) − 2e^a sin²(b/2) + 2i e^a sin(b/2)cos(b/2): with
θ = tφ/2, two real matrix products per line Re s = c. Quadrature: composite
32-point Gauss–Legendre panels in the base variable, each short enough that
the phase tφ changes by at most 24 radians across it (error of each panel
~12⁶⁴/64! ≈ 1e-20 of its mass) and at most one unit wide (a Gaussian base); the
Gaussian base is cut 10 standard units beyond the tilted peak (dropped mass
< e^{−50}). This is an *estimate*: the
error bound ``log_error_continuous`` charges η = 1e-14 of Σ v|expm1| for the
rule (not proven) plus the rounding.

|C(c+it)| ≤ κ/|t| (``log_decay``) by integration by parts, κ the total
variation of the new loss's tilted density on 2^15 points, padded by 1 %
(an estimate: a grid misses only the tops of the few extrema of this smooth
density).
"""
import functools
import math

import numpy as np

from ..pld.pairs.poisson_sampling import PoissonAddPair, PoissonRemovePair
from ..numerics import ULP_OF_ONE as U
from .basic import base_atoms, base_continuous_spec, base_loss_sup

POISSON = (PoissonRemovePair, PoissonAddPair)
_GL_X, _GL_W = np.polynomial.legendre.leggauss(32)
_PHASE_PER_PANEL = 24.0
_CHUNK = 2 ** 21    # matrix entries per block of the quadrature sums
_ETA = 1e-14        # the rule's error, relative to Σ v|expm1| (estimate)


def g(loss, q):
    """g(ℓ) = log(1 − q + q e^ℓ), elementwise, without cancellation."""
    loss = np.asarray(loss, dtype=float)
    return np.logaddexp(math.log1p(-q), math.log(q) + loss) if q < 1 else loss


def poisson_atoms(pair):
    """(ℓ_i, P-masses) of the finite atoms of a Poisson pair (exact)."""
    base, q, remove = pair.base, pair.q, isinstance(pair, PoissonRemovePair)
    loss, p, qm = base_atoms(base)
    if remove:  # L' = g(L), P' = (1−q)Q + qP; Q-only mass lands at log(1−q)
        new_loss, mass = g(loss, q), (1.0 - q) * qm + q * p
        extra_loss, extra = (math.log1p(-q), (1.0 - q) * base.q_ninf) if q < 1 else (0.0, 0.0)
    else:       # L' = −g(−L), P unchanged; base L = +∞ lands at −log(1−q)
        new_loss, mass = -g(-loss, q), p
        extra_loss, extra = (-math.log1p(-q), base.p_inf) if q < 1 else (0.0, 0.0)
    if extra > 0:
        new_loss, mass = np.append(new_loss, extra_loss), np.append(mass, extra)
    return new_loss, mass


def poisson_atom_errors(pair):
    """Bounds on the absolute errors of ``poisson_atoms``' masses, in its order: the base's
    atoms' (a finite base computes them from logs that err by their ``log_err``,
    ``DiscretePair.atom_errors``) mixed as the masses are, and the base's end mass (Q(L = −∞)
    or P(L = +∞), computed from its logs: not exact either) by the base's ``end_errors()``;
    None where every base mass is exact up to the rounding ``basic.log_error_atoms`` counts."""
    base, q, remove = pair.base, pair.q, isinstance(pair, PoissonRemovePair)
    if not hasattr(base, "atom_errors"):
        return None
    err_p, err_q = base.atom_errors
    e_p, e_q = base.end_errors()
    if remove:
        err, extra = (1.0 - q) * err_q + q * err_p, ((1.0 - q) * e_q if base.q_ninf > 0 else 0.0)
        has_extra = q < 1 and (1.0 - q) * base.q_ninf > 0
    else:
        err, extra = err_p.copy(), e_p
        has_extra = q < 1 and base.p_inf > 0
    return np.append(err, extra * (1 + 4 * U)) if has_extra else err


def poisson_loss_sup(pair):
    """The supremum of a Poisson pair's finite losses."""
    base, q = pair.base, pair.q
    top = base_loss_sup(base)
    if isinstance(pair, PoissonRemovePair):
        return float(g(top, q)) if math.isfinite(top) else math.inf
    return float(-g(-top, q)) if q < 1 else top  # L' = −g(−L) ≤ −log(1 − q)


def _setup(pair, c):
    """(lo, hi, hx, log density, loss, slope, φ, remove) of the continuous part on the
    line Re s = c, or None. The weights e^{(1+c)g(L)} dQ (remove) grow like e^{cL} dP
    for large L (a Gaussian base: peak at x = cμ); e^{−c g(−L)} dP (add) stays below
    (1 − q)^{−c} for c ≥ 0."""
    q, remove = pair.q, isinstance(pair, PoissonRemovePair)
    spec = base_continuous_spec(pair.base, abs(c) if remove else max(-c, 0.0))
    if spec is None:
        return None
    lo, hi, hx, logp, loss, slope = spec
    phase = (lambda x: g(loss(x), q)) if remove else (lambda x: g(-loss(x), q))
    return lo, hi, hx, logp, loss, slope, phase, remove


def _panels(lo, hi, hx, phase, t_max):
    """Panel edges on [lo, hi] with width ≤ hx and t_max·|Δphase| ≤ 24 each."""
    fine = np.linspace(lo, hi, 4097)
    v = (fine - lo) / hx + t_max * np.abs(phase(fine) - phase(fine[:1])) / _PHASE_PER_PANEL
    n = max(1, int(math.ceil(v[-1])))
    return np.interp(np.linspace(0.0, v[-1], n + 1), v, fine)


def _rule(edges):
    mid, half = 0.5 * (edges[1:] + edges[:-1]), 0.5 * np.diff(edges)
    x = (mid[:, None] + half[:, None] * _GL_X[None, :]).ravel()
    return x, (half[:, None] * _GL_W[None, :]).ravel()


@functools.lru_cache(maxsize=16)
def _nodes(pair, c, t_max):
    """(φ, log v, σ sign) at the quadrature nodes for |Im s| ≤ t_max (kept: the value and
    its error bound use the same rule)."""
    lo, hi, hx, logp, loss, _, phase, remove = _setup(pair, c)
    x, w = _rule(_panels(lo, hi, hx, phase, t_max))
    ph = phase(x)
    log_v = np.log(w) + logp(x) + ((ph - loss(x)) if remove else 0.0)
    return ph, log_v, (1.0 if remove else -1.0)


def continuous_mass(pair):
    """C(0): the exact P'-mass of the continuous part."""
    base, q = pair.base, pair.q
    _, p, qm = base_atoms(base)
    p_c = max(1.0 - float(np.sum(p)) - base.p_inf, 0.0)
    q_c = max(1.0 - float(np.sum(qm)) - base.q_ninf, 0.0)
    return (1.0 - q) * q_c + q * p_c if isinstance(pair, PoissonRemovePair) else p_c


def log_continuous(pair, s):
    """log C(s) of a Poisson pair's continuous part (None if the base has none)."""
    s = np.asarray(s, dtype=complex)
    flat = s.ravel()
    if _setup(pair, 0.0) is None:
        return None
    log_c0 = math.log(continuous_mass(pair))
    out = np.empty(flat.shape, dtype=complex)
    for re in np.unique(flat.real):  # one rule and real weight vector per line Re s = c
        idx = np.flatnonzero(flat.real == re)
        ph, log_v, sign = _nodes(pair, re, float(np.max(np.abs(flat.imag[idx]))))
        sig = sign * flat
        a = sign * re * ph
        top = max(float(np.max(log_v + np.maximum(a, 0.0))), 0.0)
        # Σ v expm1(a) e^{−top}: as a difference where a is large (expm1 would overflow)
        big = a > 1.0
        real_part = float(np.sum(np.where(big, np.exp(log_v + np.where(big, a, 0.0) - top) - np.exp(log_v - top),
                                          np.exp(log_v - top) * np.expm1(np.minimum(a, 1.0)))))
        if not np.any(sig.imag[idx]):
            with np.errstate(divide="ignore"):
                out[idx] = top + np.log(math.exp(log_c0 - top) + real_part)
            continue
        wa = np.exp(log_v + a - top)           # v e^{a}, scaled by e^{−top}
        chunk = max(1, _CHUNK // len(ph))
        for i in range(0, len(idx), chunk):
            theta = 0.5 * np.outer(sig.imag[idx[i:i + chunk]], ph)
            sn = np.sin(theta)
            # row sums by numpy's pairwise summation: the log₂N of ``log_error_continuous``
            d = real_part - 2.0 * np.sum(sn * sn * wa, axis=1) + 2j * np.sum(sn * np.cos(theta) * wa, axis=1)
            with np.errstate(divide="ignore"):
                out[idx[i:i + chunk]] = top + np.log(math.exp(log_c0 - top) + d)
    return out.reshape(s.shape)


def log_error_continuous(pair, s):
    """log of the (estimated) bound on |C̃(s) − C(s)|: Σ v|φ|e^{max(aφ,0)} = S₁ times
    (η + u(8 + log₂N))|s| + 2u(|c| + |t|) (module docstring)."""
    s = np.asarray(s, dtype=complex)
    flat = s.ravel()
    out = np.empty(flat.shape)
    with np.errstate(divide="ignore"):
        for re in np.unique(flat.real):
            idx = flat.real == re
            ph, log_v, sign = _nodes(pair, re, float(np.max(np.abs(flat.imag[idx]))))
            log_abs = np.log(np.abs(ph))
            log_s1 = float(np.logaddexp.reduce(log_v + log_abs + np.maximum(sign * re * ph, 0.0)))
            size = np.abs(flat[idx])
            out[idx] = log_s1 + np.log((_ETA + U * (8.0 + math.log2(len(ph)))) * size
                                       + 2.0 * U * (abs(re) + np.abs(flat[idx].imag)))
    return out.reshape(s.shape)


def log_decay(pair, c):
    """log κ for the continuous part (module docstring; None if there is none).

    C(c+it) = ∫ w(x) e^{±itφ(x)} dx with φ strictly increasing; in u = φ(x) it is
    ∫ ρ(u) e^{±itu} du, ρ = w/φ', and |C| ≤ (ρ(lo) + ρ(hi) + TV(ρ))/|t|."""
    setup = _setup(pair, c)
    if setup is None:
        return None
    lo, hi, _, logp, loss, slope, _, remove = setup
    q = pair.q
    x = np.linspace(lo, hi, 2 ** 15 + 1)
    ell = loss(x)
    if remove:  # w = q_base(x) e^{(1+c) g(L)}, q_base = p_base e^{−L}
        ph = g(ell, q)
        log_rho = logp(x) - ell + (1.0 + c) * ph - (math.log(q) + ell - ph)
    else:       # w = p_base(x) e^{−c g(−L)}
        ph = g(-ell, q)
        log_rho = logp(x) - c * ph - (math.log(q) - ell - ph)
    log_rho = log_rho - math.log(slope)
    top = float(np.max(log_rho))
    rho = np.exp(log_rho - top)
    return top + math.log(1.01 * (np.sum(np.abs(np.diff(rho))) + rho[0] + rho[-1]))


def quadrature_size(pair, c, t_max):
    """Quadrature nodes of one evaluation of C(c + it), |t| ≤ t_max (0 without one)."""
    setup = _setup(pair, c)
    if setup is None:
        return 0
    lo, hi, hx, _, _, _, phase, _ = setup
    return len(_GL_X) * (len(_panels(lo, hi, hx, phase, t_max)) - 1)
