"""M(s) of the basic pairs in closed form or as finite sums, with error bounds.

Zhu, Dong & Wang (AISTATS 2022; the autodp talk's table "Examples of
φ-function") give φ(t) = M(it) of each basic pair; here M(s) = E_P[e^{sL}; L
finite] on the whole strip, split into atoms (finitely many losses ℓ_i with
P-masses p_i) and a continuous part C:

* ``GaussianPair(μ)``: L ~ N(μ²/2, μ²), log C(s) = μ² s(s+1)/2; no atoms.
* ``LaplacePair(ε₀)``: atoms ½ at ε₀, ½e^{−ε₀} at −ε₀; density ¼e^{(ℓ−ε₀)/2} on
  (−ε₀, ε₀), so C(s) = (e^{sε₀} − e^{−(s+1)ε₀}) / (4(s + ½)).
* ``LogisticPair(ε)``: e^{L/2} ~ Uniform(e^{−ε/2}, e^{ε/2}) under P, so
  C(s) = e^{ε/2}(e^{sε} − e^{−(s+1)ε}) / (4(s + ½) sinh(ε/2)); no atoms.
* ``DiscretePair``: atoms only, M(s) = Σ p_i e^{sℓ_i} (complex log-sum-exp).

|C(c+it)| ≤ κ/|t| (``log_decay``: κ closed form; exact decay for the
Gaussian) bounds the truncation of the inversion.

Error bounds (``log_error_*``), absolute, for M as computed in float64 with
correctly rounded +, ×, and exp/log/expm1/erf within a few ulp (u = 2^−52):
a closed form log C with |log C| and |s| of size X loses u·O(X) *in the
exponent*, i.e. |C|·u·O(X) absolutely; a log-sum-exp of n terms
z_i = log p_i + sℓ_i loses u·(n + 8 + 2·|Re z_i − max Re z|) of each term's
modulus in the sum plus u·2(|c| + |t|)|ℓ_i| from the rounded phase t·ℓ_i.
They are rigorous for the pairs *as represented* (the loss values as the pair
computes them); the constants are generous (×2 over the count of roundings).
"""
import math

import numpy as np

from ..errors import RepresentationUnavailable
from ..pld.pairs.discrete_pair import DiscretePair
from ..pld.pairs.base import GaussianPair, LaplacePair
from ..pld.pairs.zoo import LogisticPair
from ..numerics import ULP_OF_ONE as U

BASIC = (GaussianPair, LaplacePair, LogisticPair, DiscretePair)


def unavailable(pair):
    return RepresentationUnavailable(
        f"method='cf': no characteristic function for {pair!r} (there is one for Gaussian, Laplace, "
        f"logistic and finite pairs and their Poisson subsamplings); use method='pld'")


def clogsumexp(z, axis=-1):
    """log Σ e^{z} for complex z along ``axis`` (−inf for an empty or zero sum)."""
    z = np.asarray(z, dtype=complex)
    if z.shape[axis] == 0:
        return np.full(np.delete(z.shape, axis if axis >= 0 else z.ndim + axis), -np.inf + 0j)
    m = np.max(z.real, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    with np.errstate(divide="ignore"):
        return np.log(np.sum(np.exp(z - m), axis=axis)) + np.squeeze(m, axis=axis)


def log_sub(a, b):
    """log(e^a − e^b) elementwise for a ≥ b (−inf where equal)."""
    with np.errstate(divide="ignore"):
        return a + np.log(-np.expm1(np.minimum(b - a, 0.0)))


def base_atoms(pair):
    """(ℓ_i, P-mass, Q-mass) of the finite atoms of a basic pair."""
    if isinstance(pair, (GaussianPair, LogisticPair)):
        return np.zeros(0), np.zeros(0), np.zeros(0)
    if isinstance(pair, LaplacePair):
        e0 = pair.key()[1]
        loss = np.array([-e0, e0])
        p, q = pair.atom_masses(loss)
        return loss, p, q
    if isinstance(pair, DiscretePair):
        return pair.atoms
    raise unavailable(pair)


def base_loss_sup(pair):
    """The supremum of a basic pair's finite losses (∞ for the Gaussian)."""
    if isinstance(pair, (LaplacePair, LogisticPair)):
        return pair.key()[1]
    if isinstance(pair, DiscretePair):
        loss = pair.atoms[0]
        return float(loss[-1]) if len(loss) else -math.inf
    if isinstance(pair, GaussianPair):
        return math.inf
    raise unavailable(pair)


def _laplace_cont(e0, s):
    """log C(s) of the Laplace pair's continuous part (module docstring)."""
    w = s + 0.5
    small = np.abs(w) < 1e-8
    w_safe = np.where(small, 1.0, w)
    with np.errstate(divide="ignore"):
        # C = e^{sε₀}(1 − e^{−2wε₀}) / (4w); as w → 0 it tends to e^{sε₀} ε₀/2
        big = s * e0 + np.log(-np.expm1(-2.0 * w_safe * e0)) - np.log(4.0 * w_safe)
    return np.where(small, s * e0 + math.log(e0 / 2.0) - w * e0, big)


def base_log_continuous(pair, s):
    """log C(s) of a basic pair's continuous part (None if it has none)."""
    if isinstance(pair, GaussianPair):
        mu2 = pair.gaussian_mu ** 2
        return 0.5 * mu2 * s * (s + 1.0)
    if isinstance(pair, LaplacePair):
        return _laplace_cont(pair.key()[1], s)
    if isinstance(pair, LogisticPair):
        e = pair.key()[1]
        return _laplace_cont(e, s) + 0.5 * e - math.log(math.sinh(e / 2))
    if isinstance(pair, DiscretePair):
        return None
    raise unavailable(pair)


def base_log_decay(pair, c):
    """log κ with |C(c+it)| ≤ κ/|t| (None without a continuous part): Gaussian
    sup_t t e^{−μ²t²/2} = 1/(μ√e); Laplace and logistic |e^{sε} − e^{−(s+1)ε}|/(4|s+½|)."""
    if isinstance(pair, GaussianPair):
        mu = pair.gaussian_mu
        return 0.5 * mu * mu * c * (c + 1.0) - math.log(mu) - 0.5
    if isinstance(pair, (LaplacePair, LogisticPair)):
        e = pair.key()[1]
        log_k = float(np.logaddexp(c * e, -(c + 1.0) * e)) - math.log(4.0)
        return log_k if isinstance(pair, LaplacePair) else log_k + 0.5 * e - math.log(math.sinh(e / 2))
    if isinstance(pair, DiscretePair):
        return None
    raise unavailable(pair)


def base_continuous_spec(pair, tilt):
    """(lo, hi, hx, log P-density(x), loss(x), d loss/dx) of a basic pair's
    continuous part in a variable x (None for a discrete pair), for quadrature
    over the base of a Poisson pair (``cf/poisson.py``) whose weights grow at
    most like e^{tilt·|L|}."""
    if isinstance(pair, GaussianPair):
        mu = pair.gaussian_mu
        reach = 10.0 + tilt * mu  # 10 standard units beyond the tilted peak: e^{−50} of the mass
        return (-reach, reach, 1.0, lambda x: -0.5 * x * x - 0.5 * math.log(2 * math.pi),
                lambda x: mu * x + 0.5 * mu * mu, mu)
    if isinstance(pair, LaplacePair):
        e0 = pair.key()[1]
        return (-e0, e0, e0 / 4, lambda x: math.log(0.25) + 0.5 * (x - e0), lambda x: x, 1.0)
    if isinstance(pair, LogisticPair):  # P-density of L: e^{ℓ/2}/(4 sinh(ε/2)) on (−ε, ε)
        e = pair.key()[1]
        return (-e, e, e / 4, lambda x: 0.5 * x - math.log(4.0 * math.sinh(e / 2)), lambda x: x, 1.0)
    if isinstance(pair, DiscretePair):
        return None
    raise unavailable(pair)


# ---------------------------------------------------------------- errors ----

def log_error_atoms(loss, log_mass, s, log_mass_err=None):
    """log of a bound on |M̃_A(s) − M_A(s)| for the atoms' log-sum-exp (module docstring):
    Σ_i w_i (n + 8 + 2·spread_i + 2|c||ℓ_i|) + |t| Σ_i w_i 2|ℓ_i|, w_i = p_i e^{cℓ_i}, times 2u;
    with ``log_mass_err`` (log of bounds on the masses' own errors, the given logs' of a
    finite pair), + Σ_i err_i e^{cℓ_i} (|e^{sℓ}| = e^{cℓ})."""
    s = np.asarray(s, dtype=complex)
    out = np.full(s.shape, -np.inf)
    if len(loss) == 0:
        return out
    with np.errstate(divide="ignore"):
        log_abs = np.log(2.0 * np.abs(loss))
        for c in np.unique(s.real):
            idx = s.real == c
            re = log_mass + c * loss
            per = len(loss) + 8.0 + 2.0 * (np.max(re) - re) + abs(c) * np.exp(log_abs)
            first = np.logaddexp.reduce(re + np.log(per))
            second = np.logaddexp.reduce(re + log_abs) + np.log(np.abs(s.imag[idx]))
            out[idx] = np.log(2 * U) + np.logaddexp(first, second)
            if log_mass_err is not None:
                out[idx] = np.logaddexp(out[idx], np.logaddexp.reduce(log_mass_err + c * loss) + np.log1p(8 * U))
    return out


def base_log_error_continuous(pair, s, log_cont):
    """log of a bound on |C̃(s) − C(s)| for a closed form, from its log C (module docstring)."""
    s = np.asarray(s, dtype=complex)
    size = np.abs(s)
    if isinstance(pair, GaussianPair):  # μ²s(s+1)/2: relative u per operation on |s|² + |s|
        scale = 8.0 * (1.0 + pair.gaussian_mu ** 2 * (size * size + size))
    else:                               # Laplace, logistic: sε, (s+1)ε, expm1, log of 4(s + ½)
        scale = 32.0 * (1.0 + size * pair.key()[1] + np.abs(log_cont))
    return np.log(U * scale) + log_cont.real
