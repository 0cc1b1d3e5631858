"""The smoothing window of the line integral and the bounds that use its kernel.

The inversion (``cf/inversion.py``) integrates G(t) = F̂(t) ν̂(t) over t, where
ν̂(t) = M(c+it) e^{−(c+it)ε} is the transform of the tilted loss measure
ν(dy) = e^{cy} P(L − ε ∈ dy) and F̂(t) = 1/((c+it)(c+1+it)) that of the tilted
hockey-stick payoff F(y) = u(y) e^{−cy} (u = (1 − e^{−y})_+ for c > 0,
u = −min(1, e^{−y}) for −1 < c < 0; Zhu, Dong & Wang 2022, Lévy's formula in
Laplace form). F has a kink at y = 0, so |G| ≤ Z/t² only (Z = M(c)e^{−cε}): cut
off sharply at T, every part of ν — also mass far from the kink, such as the
"no sample drawn" spike of Poisson subsampling at y ≈ −ε — leaks into the
answer through the Dirichlet kernel's 1/(Ty) tails.

We integrate W(t)G(t) instead, with the window

    W(t) = ½[erf((t + t_m)/(√2 s)) − erf((t − t_m)/(√2 s))],   s ≤ τ/24, t_m = τ − 10s,

a box of half-width t_m smoothed by a Gaussian of width s. 1 − W is below
6.3e-16 on [0, t_m − 8.2s] (the flat band: [0, τ/4] for s = τ/24) and W is
below 7.7e-24 beyond τ. s = τ/24 serves the leakage; a shorter taper serves
atoms whose transform recurs (``cf/line.py``): the band then reaches almost to τ. Its kernel
k = (1/2π)∫W e^{ity} dt is exactly

    k(y) = sin(t_m y)/(π y) · e^{−s²y²/2},

so ∫W G dt/2π = ∫(F * k) dν: the answer for the payoff F smoothed by k. Mass of
ν at distance d from the kink leaks only through e^{−s²d²/2}; structure of ν
within the flat band is reproduced exactly. What the window changes is the
*window error* ∫(F*k − F) dν (``cf/line.py`` bounds or estimates it).

The kernel's exponential moments bound the aliasing of the trapezoid rule
(``cf/contour.py``): |k(z)| ≤ min(t_m/π, 1/(π|z|)) e^{−s²z²/2}, hence for real a

    K(a) = ∫|k(z)| e^{az} dz ≤ e^{a²/(2s²)} (2 + 2 log⁺(R t_m) + √(2π)/(sR)) / π,

R = |a|/s² + 1/s (split at |z| = 1/t_m and |z| = R; the middle part has the
Gaussian factor ≤ 1, the outer one 1/|z| ≤ 1/R). ``sharp=True`` is the
identity window (W = 1, k = δ₀, K = 1) of the exact lattice sums.
"""
import math

import numpy as np

from ..lazy import lazy

special = lazy("scipy.special")

_S_PER_TAU = 1.0 / 24.0
_TAIL = 10.0      # t_m + 10 s = τ: W(τ) = ½erfc(10/√2) < 7.7e-24


def _shape(tau, taper=None):
    s = tau * _S_PER_TAU if taper is None else min(taper, tau * _S_PER_TAU)
    return tau - _TAIL * s, s


def window(t, tau, taper=None):
    """W(t) for the window of reach τ and taper s = min(``taper``, τ/24) (vectorised over t ≥ 0)."""
    t_m, s = _shape(tau, taper)
    t = np.asarray(t, dtype=float)
    r = math.sqrt(2.0) * s
    # erf(a) − erf(b) as erfc(b) − erfc(a): no cancellation where both are near 1
    return 0.5 * (special.erfc((t - t_m) / r) - special.erfc((t + t_m) / r))


def one_minus_window(t, tau, taper=None):
    """1 − W(t) ≥ 0 without cancellation: ½erfc((t_m − t)/(√2s)) + ½erfc((t_m + t)/(√2s))."""
    t_m, s = _shape(tau, taper)
    t = np.asarray(t, dtype=float)
    r = math.sqrt(2.0) * s
    return 0.5 * (special.erfc((t_m - t) / r) + special.erfc((t_m + t) / r))


def log_kernel_moment(a, tau, taper=None, sharp=False):
    """log of the bound on K(a) = ∫|k(z)| e^{az} dz above (0 for the sharp window)."""
    if sharp:
        return 0.0
    t_m, s = _shape(tau, taper)
    reach = abs(a) / (s * s) + 1.0 / s
    inner = 2.0 + 2.0 * max(math.log(reach * t_m), 0.0) + math.sqrt(2.0 * math.pi) / (s * reach)
    return a * a / (2.0 * s * s) + math.log(inner / math.pi)

