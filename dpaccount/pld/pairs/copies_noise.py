"""Attained witnesses of sampling with replacement for additive-noise bases: the Gaussian
(``gaussian_copies_pair``; ``with_replacement.copies_witness`` for other bases whose pair
is a Gaussian's), Laplace, discrete Laplace and discrete Gaussian noise.

The instance (``pld/pairs/with_replacement.py``, module docstring): the base adds noise Z
to a sum over the b drawn list entries of a per-record value g ∈ [0, W], W its replace-one
sensitivity (a record replaced in one entry moves the sum by ≤ W). Let x have g = W, and
its replacement y and every other record g = 0. x's copies K ~ Bin(b, 1/n), so

    M(D) = Σ_k P(K = k)·(kW + Z),   M(D') = Z,

exactly (the other draws add 0). D and D' are replace-one neighbours both ways, so this
pair is attained in either order of the mechanism's pairs. For an add/remove base made
replace-one (``ToReplaceOne``: |g| ≤ Δ), x has g = Δ and y and the others −Δ: the same
laws translated by −bΔ, with W = 2Δ. Any post-processing of the two outputs is attained
too (the adversary sees less), and P-masses rounded down (the weights of
``copies_probs``, components with P(K = k) < 1e-20 dropped) only lower every composed
hockey-stick value (``pld/pairs/witnessed.py``).

Laplace and discrete Laplace (``laplace_copies_pair``). Z has mass ∝ e^{−s·|y|} on a
lattice whose unit is 1/m of W (the integers for the discrete Laplace, m = W; cells
((j−1)h, jh] of width h = W/m for the continuous one: binning is post-processing,
s = h/b). Every centre kW = k·m units lies in [0, M], M = k_max·m, and there the loss
log Σ_k w_k e^{s(|y| − |y − km|)} is constant on y ≤ 0 (= log Σ w_k e^{−skm}) and on
y ≥ M (= log Σ w_k e^{skm}): each of those two regions is lumped into one outcome
without loss, in closed form (Z ≤ −a: ½e^{−sa}, resp. ρ^a/(1+ρ) with ρ = e^{−s}), and
the M − 1 or M lattice outcomes between are kept:

    continuous cell j (offset y = j − c):  ½(1 − e^{−s})·e^{−s(y−1)} (y ≥ 1), ·e^{sy} (y ≤ 0);
    discrete point j:                    (1 − ρ)/(1 + ρ)·ρ^{|y|}.

The continuous binning costs the witness at most the loss's variation over a cell,
2s = 2ε₀/m (ε₀ = W/b), against the unbinned instance; m is chosen so that 2s ≤ 1e-3.

Discrete Gaussian (``discrete_gaussian_copies_pair``): Z(y) = e^{−y²/2σ²}/Z on the
integers, shift d per copy; the outcomes [−R, M + R] are kept, R the 1e-300 reach (as
``zoo.discrete_gaussian_pair``), the rest dropped (P and Q there both ≤ 1e-300 relative:
dropping P-mass is allowed; the constant Z is summed over a wider range).

Each log mass is a log-sum-exp of ≤ k_max + 1 terms log w_k + log c − s·dist, each
computed with ≤ 8u of the sum of its parts' magnitudes (libm's log/log1p/expm1 ≤ 4 ulp,
docs/portability.md; s's own rounding ≤ 2u relative); logsumexp adds (k_max + 4)u.
Those bounds are the pair's ``log_err``, doubled.
"""
import math

import numpy as np

from ...lazy import lazy
from .base import check_atoms
from .discrete_pair import DiscretePair
from .mixture_gaussian import MixtureOfGaussiansPair
from ...numerics import ULP_OF_ONE as _U


special = lazy("scipy.special")

CELL_LOSS = 1e-3  # the continuous Laplace's loss varies by at most this across a cell
_REACH_DIGITS = 310  # the discrete Gaussian's kept outcomes: Z(y) ≥ 1e-310·Z(0)


def _pair(log_p, log_q, parts, ks, ws, name):
    """A DiscretePair from P- and Q-logs with the error bound of the module docstring
    (``parts``: a bound on the magnitudes summed into any one term)."""
    log_w = np.log(np.asarray(ws, dtype=float))
    err_p = 2 * (8 * _U * (parts + float(np.max(np.abs(log_w)))) + (len(ks) + 4) * _U)
    err_q = 2 * 8 * _U * parts
    return DiscretePair(log_p, log_q, name=name, log_err=(err_p, err_q), tight=True)


def _mix(log_mass, js, ks, ws, m):
    """log Σ_k w_k·mass(j − k·m) for each outcome j (``log_mass`` of the offsets)."""
    log_w = np.log(np.asarray(ws, dtype=float))[:, None]
    offsets = js[None, :] - m * np.asarray(ks, dtype=float)[:, None]
    return special.logsumexp(log_w + log_mass(offsets), axis=0)


def laplace_copies_pair(scale, width, ks, ws, discrete=False):
    """(Σ_k w_k (kW + Z), Z) for Laplace(0, ``scale``) noise Z (``discrete``: the discrete
    Laplace of parameter t = ``scale``, on the integers) and per-copy shift W = ``width``
    (an integer when discrete), binned and lumped as in the module docstring. ``ks``,
    ``ws``: the kept copy counts and their weights (``copies_probs``)."""
    scale, width = float(scale), float(width)
    eps0 = width / scale
    m = int(width) if discrete else max(1, math.ceil(2 * eps0 / CELL_LOSS))
    s = (1.0 / scale) if discrete else (width / m) / scale
    top = m * max(max(ks), 1)
    check_atoms(f"the with-replacement witness of Laplace noise (eps0={eps0!r}, {max(ks)} copies)", top + 2)
    if discrete:  # (1 − ρ)/(1 + ρ) ρ^{|y|}; Z ≤ −a and Z ≥ a: ρ^a/(1 + ρ)
        log_end = -math.log1p(math.exp(-s))
        log_c = math.log(-math.expm1(-s)) + log_end
        js = np.arange(1, top, dtype=float)
        log_mass = lambda y: log_c - s * np.abs(y)
    else:  # cell (y − 1, y]: ½(1 − e^{−s})e^{−s·dist}; Z ≤ −a and Z > a: ½e^{−sa}
        log_end = math.log(0.5)
        log_c = math.log(-math.expm1(-s)) + log_end
        js = np.arange(1, top + 1, dtype=float)
        log_mass = lambda y: log_c - s * np.where(y >= 1, y - 1, -y)
    kk = np.asarray(ks, dtype=float)
    log_w = np.log(np.asarray(ws, dtype=float))
    # the two lumps: y ≤ 0 (Z ≤ −km) and y beyond the last kept outcome (Z ≥ or > top − km)
    low = (special.logsumexp(log_w + log_end - s * m * kk), log_end)
    high = (special.logsumexp(log_w + log_end - s * (top - m * kk)), log_end - s * top)
    log_p = np.concatenate(([low[0]], _mix(log_mass, js, ks, ws, m), [high[0]]))
    log_q = np.concatenate(([low[1]], log_mass(js), [high[1]]))
    parts = abs(log_c) + abs(log_end) + s * (top + m + 1) + 1
    kind = "discrete-laplace" if discrete else "laplace"
    return _pair(log_p, log_q, parts, ks, ws, f"{kind}-copies(scale={scale!r},width={width!r},m={m})")


def gaussian_copies_pair(sigma, width, ks, ws):
    """(Σ_k w_k N(kW', σ²), N(0, σ²)) for Gaussian noise of standard deviation ``sigma``:
    the instance with g(x) = W' = W cut to 40 significant bits (rounded down: W' ≤ W, so
    still an instance, ≤ 2⁻⁴⁰ relative away), so that every centre kW' (k ≤ 64) is exact
    — not μ = Δ/σ as the base's pair has it, rounded up (``validation.ratio``), which
    would put the witness above every instance by an ulp."""
    mant, exp = math.frexp(float(width))
    trimmed = math.ldexp(math.floor(math.ldexp(mant, 40)), exp - 40)
    return MixtureOfGaussiansPair(sigma, [k * trimmed for k in ks], ws)


def discrete_gaussian_copies_pair(sigma, width, ks, ws):
    """(Σ_k w_k (kd + Z), Z) for discrete Gaussian noise N_Z(0, σ²) and an integer shift
    d = ``width`` per copy, on the outcomes [−R, M + R] (module docstring)."""
    sigma, d = float(sigma), int(width)
    two_var = 2.0 * sigma * sigma
    reach = int(math.ceil(math.sqrt(two_var * _REACH_DIGITS * math.log(10)))) + 2
    top = d * max(max(ks), 1)
    check_atoms(f"the with-replacement witness of discrete Gaussian noise (sigma={sigma!r}, {max(ks)} copies)",
                top + 2 * reach + 1)
    wide = np.arange(-2 * reach, 2 * reach + 1, dtype=float)
    log_z = float(special.logsumexp(-wide * wide / two_var))  # the rest: < 1e-600 relative
    js = np.arange(-reach, top + reach + 1, dtype=float)
    log_mass = lambda y: -y * y / two_var - log_z
    log_p = _mix(log_mass, js, ks, ws, d)
    log_q = log_mass(js)
    parts = (top + reach) ** 2 / two_var + abs(log_z) + 1
    return _pair(log_p, log_q, parts, ks, ws, f"discrete-gaussian-copies(sigma={sigma!r},width={d})")
