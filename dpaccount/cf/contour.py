"""Where to invert: the line Re s = c, the trapezoid's step, and the aliasing
bound, all from M along the real axis.

*Aliasing* (Poisson summation). The trapezoid rule with step h applied to the
windowed integrand (``cf/window.py``) returns Σ_n ∫(F*k)(y − nY) ν(dy),
Y = 2π/h; the n = 0 term is the windowed answer. With S_b = sup_v |u(v)e^{−bv}|
≤ 1 for b ≥ 0 (c > 0) or −1 ≤ b ≤ 0 (c < 0), |F*k|(x) ≤ S_b K(c−b) e^{(b−c)x}
(K the kernel's exponential moment), and ∫e^{b(L−ε)} dP = M(b)e^{−bε}, so

    |aliasing| ≤ Σ_{b ∈ {b₊, b₋}} K(c−b) M(b) e^{−bε} x_b/(1 − x_b),   x_b = e^{−|b−c|Y},

with b₊ > c (the right tail of ν: a Chernoff bound at a steeper tilt) and
b₋ < c (b₋ = 0 for c > 0: P(L finite) ≤ 1; b₋ = −1 for c < 0: E_P[e^{−L}] ≤ 1).
Rigorous wherever M(b) is (``characteristic.exact``).

*Choosing c.* The saddle point of the Chernoff bound M(c)e^{−cε} is not the
right line here: for Poisson subsampling with small q·T the tilted measure ν
there has a heavy right tail (several "hits" of the sampled mechanism) and
Y (so the number of nodes) explodes; DP-SGD with σ = 0.9, q = 1e-3, T = 1000
has Y ≈ 60 at the saddle c ≈ 9.8 but Y ≈ 8 at c ≈ 4. ``plan`` takes the c
with the least Y × (work of one sample: quadrature nodes grow with the tilt)
among those where the evaluation error of M (relative
η(c) summed over the factors, ``characteristic.log_mgf_error``) times the
mass Z = M(c)e^{−cε} of the tilted measure (what the integrand's size, and so
its rounding, scales with) stays below the tolerance; failing that the c where
it is smallest.
"""
import math

import numpy as np

from .basic import log_sub
from .characteristic import log_mgf, log_mgf_atoms
from .window import log_kernel_moment
from ..numerics import ULP_OF_ONE

C_MAX = 500.0
GRID = np.concatenate([np.geomspace(0.02, C_MAX, 64), -np.linspace(0.05, 0.95, 19)])


class RealMGF:
    """log M_ν(b) at real b of the measure a line integral integrates: all of M
    (``part="whole"``), the remainder M − A (``"remainder"``) or the atoms A
    (``"atoms"``); cached."""

    def __init__(self, terms, part):
        self.terms, self.part, self._cache = terms, part, {}

    def __call__(self, b):
        b = float(b)
        if b not in self._cache:
            s = np.array([b + 0j])
            log_a = sum(k * float(log_mgf_atoms(p, s).real[0]) for p, k in self.terms)
            if self.part == "atoms":
                self._cache[b] = log_a
            else:
                log_m = sum(k * float(log_mgf(p, s).real[0]) for p, k in self.terms)
                self._cache[b] = log_m if self.part == "whole" else float(log_sub(log_m, log_a))
        return self._cache[b]

    def fill(self, bs):
        """Evaluate many b at once (one quadrature per pair for all of them)."""
        new = sorted({float(b) for b in bs} - set(self._cache))
        if not new:
            return
        s = np.array(new, dtype=complex)
        log_a = sum(k * log_mgf_atoms(p, s).real for p, k in self.terms)
        log_m = sum(k * log_mgf(p, s).real for p, k in self.terms) if self.part != "atoms" else log_a
        out = log_a if self.part == "atoms" else (log_m if self.part == "whole" else log_sub(log_m, log_a))
        self._cache.update(zip(new, (float(x) for x in out)))


def _side(mgf, c, eps, b, y, log_k):
    """log K + log M(b) − bε + log(x/(1−x)), x = e^{−|b−c|Y}."""
    z = -abs(b - c) * y
    return log_k + mgf(b) - b * eps + z - math.log(-math.expm1(z))


def _uppers(c):
    """Candidate b₊ > c for the right tail."""
    return [b for b in GRID if b > c] if c > 0 else [0.0]


def log_alias(mgf, c, eps, y, tau, taper=None, sharp=False):
    """log of the rigorous bound on the trapezoid's aliasing (module docstring)."""
    lower = 0.0 if c > 0 else -1.0
    out = _side(mgf, c, eps, lower, y, log_kernel_moment(c - lower, tau, taper, sharp))
    right = min((_side(mgf, c, eps, b, y, log_kernel_moment(c - b, tau, taper, sharp)) for b in _uppers(c)
                 if math.isfinite(mgf(b))), default=math.inf)
    return float(np.logaddexp(out, right))


def plan(mgf, eps, log_tol, log_eta, work, allow_negative):
    """(c, Y): the line and the aliasing period (module docstring). ``log_eta(c)``
    is the log of the relative evaluation error of M at c, summed over factors,
    ``work(c)`` the work of one sample (quadrature nodes grow with the tilt): the
    c with the least Y·work is taken.

    Y(c) makes both aliasing sides below tol/64 (the kernel moment K, a few units
    for the windows used, is left out), b₊ ranging over the grid above c."""
    mgf.fill(list(GRID) + [0.0, -1.0])
    log_m = np.array([mgf(b) for b in GRID])
    room = math.log(64.0) - log_tol
    m0, m1 = mgf(0.0), mgf(-1.0)
    gain = np.where(np.isfinite(log_m), log_m - GRID * eps + room, np.inf)
    with np.errstate(divide="ignore", invalid="ignore"):
        need = gain[None, :] / np.abs(GRID[None, :] - GRID[:, None])  # rows c, columns b
    pos = GRID > 0
    right = np.where(pos, np.min(np.where(GRID[None, :] > GRID[:, None], need, np.inf), axis=1),
                     (m0 + room) / np.abs(GRID))
    left = np.where(pos, (m0 + room) / GRID, (m1 + eps + room) / (GRID + 1.0))
    reach = np.maximum(np.maximum(left, right), 1e-3)
    log_z = log_m - GRID * eps
    usable = np.isfinite(log_z) & np.isfinite(reach) & (pos | allow_negative)
    ranked = sorted((reach[i] * work(GRID[i]), i) for i in np.flatnonzero(usable))

    def error(i):
        out = log_eta(GRID[i]) + log_z[i]
        return out if pos[i] else max(out, math.log(64 * ULP_OF_ONE))  # δ = 1 + I: I cancels

    for _, i in ranked:  # the cheapest line whose evaluation error is small enough
        if error(i) <= log_tol - math.log(8.0):
            return float(GRID[i]), float(reach[i])
    i = min((error(i), i) for _, i in ranked)[1]
    return float(GRID[i]), float(reach[i])
