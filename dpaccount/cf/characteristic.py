"""The characteristic function of a dominating pair's privacy loss.

Zhu, Dong & Wang (AISTATS 2022, "Optimal accounting of differential privacy
via characteristic function"; the autodp talk, slide "Analytical Fourier
accountant") represent a pair (P, Q) by φ(t) = E_P[e^{itL}], L = log dP/dQ.
Products of pairs multiply φ, so compositions *add* log φ, like RDP.

We work with the moment generating function on a vertical line,

    M(s) = E_P[e^{sL}; L finite],   s = c + it,   φ(t) = M(it),

because the inversion (``cf/inversion.py``) runs on a line Re s = c chosen for
it. M is finite for −1 ≤ c ≤ 0 for every pair (Hölder:
M(c) ≤ P(L finite)^{1+c} Q(L finite)^{−c}) and, for the pairs here, for all
c > 0 too (their Rényi divergences are finite). The mass at L = ±∞ is kept
out of M: P(L = +∞) = ``pair.p_inf`` is handled by the inversion.

M = A + C splits into *atoms* A(s) = Σ p_i e^{sℓ_i} (exact finite sums) and a
continuous part C: closed forms for the basic pairs (``cf/basic.py``: Gaussian,
Laplace, logistic, finite pairs), quadrature over the base for their Poisson
subsamplings (``cf/poisson.py``). ``exact(pair)`` says which: only pairs
without quadrature can enter a certified answer. ``log_mgf_error`` bounds
|M̃ − M| for M as computed (rigorous for exact pairs, an estimate otherwise).

Logarithms are principal values. Counts in a composition are integers, so
exp(Σ k_j log M_j) = Π M_j^{k_j} for *any* branch: no phase unwrapping is
needed. Anything else (``MonotoneLossPair``, ``SubsetSampledPair``, Poisson
pairs over them) raises ``RepresentationUnavailable``.
"""
import math

import numpy as np

from . import basic, poisson
from .basic import BASIC, clogsumexp, unavailable
from .poisson import POISSON

_CHUNK = 2 ** 21  # matrix entries per block


def _check(pair):
    if isinstance(pair, POISSON):
        if not isinstance(pair.base, BASIC):
            raise unavailable(pair)
        return True
    if not isinstance(pair, BASIC):
        raise unavailable(pair)
    return False


def exact(pair):
    """True if M(s) is a closed form or a finite sum (no quadrature)."""
    return not _check(pair) or poisson.quadrature_size(pair, 0.0, 0.0) == 0


def atoms(pair):
    """(ℓ_i, P-masses) of the finite atoms of the privacy loss under P (exact)."""
    if _check(pair):
        return poisson.poisson_atoms(pair)
    loss, p, _ = basic.base_atoms(pair)
    return loss, p


def loss_sup(pair):
    """The supremum of the finite losses (∞ if unbounded): above it δ(ε) = P(L = ∞)."""
    return poisson.poisson_loss_sup(pair) if _check(pair) else basic.base_loss_sup(pair)


def log_atoms_of(loss, log_mass, s):
    """log Σ_i p_i e^{s ℓ_i} for given atoms (−inf if there are none): per line Re s = c
    the real weights p_i e^{cℓ_i − max} times cos and sin of tℓ_i, two matrix products."""
    s = np.asarray(s, dtype=complex)
    flat = s.ravel()
    out = np.full(flat.shape, -np.inf + 0j)
    if len(loss) == 0:
        return out.reshape(s.shape)
    for c in np.unique(flat.real):
        idx = np.flatnonzero(flat.real == c)
        re = log_mass + c * loss
        top = float(np.max(re))
        w = np.exp(re - top)
        chunk = max(1, _CHUNK // len(loss))
        for part in (idx[i:i + chunk] for i in range(0, len(idx), chunk)):
            theta = np.outer(flat.imag[part], loss)
            with np.errstate(divide="ignore"):
                out[part] = top + np.log(np.cos(theta) @ w + 1j * (np.sin(theta) @ w))
    return out.reshape(s.shape)


def log_masses(pair):
    """(ℓ_i, log p_i) of the pair's atoms."""
    loss, mass = atoms(pair)
    with np.errstate(divide="ignore"):
        return loss, np.log(mass)


def log_mass_errors(pair):
    """log of bounds on the absolute errors of the atoms' masses (``atoms``' order) beyond
    the rounding ``basic.log_error_atoms`` counts, or None: a finite pair's masses are
    e^{log p} with logs that err by their ``log_err`` (``DiscretePair.atom_errors``), a
    Poisson pair's mix those and land the base's end mass (``end_errors()``) at ∓log(1 − q)."""
    if _check(pair):
        err = poisson.poisson_atom_errors(pair)
    else:
        err = pair.atom_errors[0] if hasattr(pair, "atom_errors") else None
    if err is None:
        return None
    with np.errstate(divide="ignore"):
        return np.log(err)


def log_mgf_atoms(pair, s):
    """log Σ_i p_i e^{s ℓ_i} over the pair's atoms (−inf if there are none)."""
    return log_atoms_of(*log_masses(pair), s)


def log_mgf_continuous(pair, s):
    """log C(s) of the continuous part of the loss under P (None if there is
    none), for a complex array s."""
    s = np.asarray(s, dtype=complex)
    return poisson.log_continuous(pair, s) if _check(pair) else basic.base_log_continuous(pair, s)


def log_mgf(pair, s):
    """log M(s) = log E_P[e^{sL}; L finite] (principal branch), complex s."""
    s = np.asarray(s, dtype=complex)
    cont = log_mgf_continuous(pair, s)
    at = log_mgf_atoms(pair, s)
    if cont is None:
        return at
    return clogsumexp(np.stack([at, cont]), axis=0)


def log_phi(pair, t):
    """log φ(t) = log E_P[e^{itL}; L finite] (Zhu, Dong & Wang 2022)."""
    return log_mgf(pair, 1j * np.asarray(t, dtype=float))


def log_error_continuous(pair, s, log_cont):
    """log of a bound on |C̃(s) − C(s)| (−inf without a continuous part)."""
    s = np.asarray(s, dtype=complex)
    if log_cont is None:
        return np.full(s.shape, -np.inf)
    if _check(pair):
        return poisson.log_error_continuous(pair, s)
    return basic.base_log_error_continuous(pair, s, log_cont)


def lattice(pair):
    """(o, g) with every atom equal to o + n·g for an integer n (g = 0.0 for a
    single atom), or None if the atoms lie on no lattice we can see (the
    pair's declared lattice or anchor through 0, else the one spanned by the
    smallest gap; each atom within 1e-11 of its lattice point, relative)."""
    loss, _ = atoms(pair)
    if len(loss) == 0:
        return None
    on = lambda o, g: bool(np.all(np.abs((loss - o) / g - np.round((loss - o) / g)) <= 1e-11))
    declared = None if isinstance(pair, POISSON) else (pair.lattice or pair.anchor)
    if declared and on(0.0, declared):
        return 0.0, float(declared)
    values = np.unique(loss)
    if len(values) == 1:
        return float(values[0]), 0.0
    o, g = float(values[0]), float(np.min(np.diff(values)))
    return (o, g) if on(o, g) else None


def log_decay(pair, c):
    """log κ with |C(c+it)| ≤ κ/|t| for every real t ≠ 0, C the continuous
    part of M (None if there is none): closed forms for the basic pairs
    (rigorous), integration by parts for Poisson pairs (an estimate, see
    ``cf/poisson.py``)."""
    return poisson.log_decay(pair, c) if _check(pair) else basic.base_log_decay(pair, c)


def log_continuous_bound(pair, c, t):
    """log of a bound on |C(c+it')| for every |t'| ≥ t > 0 (−inf if there is no
    continuous part): exact for Gaussian, κ/t otherwise."""
    if pair.gaussian_mu is not None:
        mu2 = pair.gaussian_mu ** 2
        return 0.5 * mu2 * (c * c + c - t * t)  # |e^{μ²s(s+1)/2}|, falling in |t|
    log_k = log_decay(pair, c)
    return -math.inf if log_k is None else log_k - math.log(t)


def quadrature_size(pair, c, t_max):
    """Number of quadrature nodes one evaluation of M(c + it), |t| ≤ t_max,
    costs (0 for the closed forms and finite sums)."""
    return poisson.quadrature_size(pair, c, t_max) if _check(pair) else 0


def log_mgf_error(pair, s):
    """log of a bound on |M̃(s) − M(s)| for M as computed by ``log_mgf`` (rigorous for
    ``exact`` pairs, an estimate for those with quadrature)."""
    s = np.asarray(s, dtype=complex)
    err_a = basic.log_error_atoms(*log_masses(pair), s, log_mass_errors(pair))
    return np.logaddexp(err_a, log_error_continuous(pair, s, log_mgf_continuous(pair, s)))
