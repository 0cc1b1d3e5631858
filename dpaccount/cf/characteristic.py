"""The characteristic function of a dominating pair's privacy loss.

Zhu, Dong & Wang (AISTATS 2022, "Optimal accounting of differential privacy
via characteristic function"; the autodp talk, slide "Analytical Fourier
accountant") represent a pair (P, Q) by φ(t) = E_P[e^{itL}], L = log dP/dQ.
Products of pairs multiply φ, so compositions *add* log φ, like RDP.

We work with the moment generating function on a vertical line,

    M(s) = E_P[e^{sL}; L finite],   s = c + it,   φ(t) = M(it),

because the inversion (``cf/inversion.py``) runs on the line Re s = c at a
saddle point. M is finite for −1 ≤ c ≤ 0 for every pair (Hölder:
M(c) ≤ P(L finite)^{1+c} Q(L finite)^{−c}) and, for the pairs below, for all
c > 0 too (their Rényi divergences are finite). The mass at L = ±∞ is kept
out of M: P(L = +∞) = ``pair.p_inf`` is handled by the accountant.

Each M is split into an *atomic* part (finitely many losses ℓ_i with P-masses
p_i, exact) and a *continuous* part:

* ``GaussianPair(μ)``: L ~ N(μ²/2, μ²), log M(s) = μ² s(s+1)/2 (closed form).
* ``LaplacePair(ε₀)``: atoms ½ at ε₀ and ½e^{−ε₀} at −ε₀, and the density
  ¼e^{(ℓ−ε₀)/2} on (−ε₀, ε₀), whence
  C(s) = (e^{sε₀} − e^{−(s+1)ε₀}) / (4(s + ½)) (closed form, |C| ≤ κ/|t|).
* ``LogisticPair(ε)``: e^{L/2} ~ Uniform(e^{−ε/2}, e^{ε/2}) under P, so
  M(s) = e^{ε/2}(e^{sε} − e^{−(s+1)ε}) / (4(s + ½) sinh(ε/2)) (closed form).
* ``DiscretePair``: M(s) = Σ p_i e^{sℓ_i}, an exact finite sum (complex
  log-sum-exp).
* ``PoissonRemovePair(base, q)`` / ``PoissonAddPair(base, q)``: with
  g(ℓ) = log(1 − q + q e^ℓ) the losses are g(L) (remove) and −g(−L) (add)
  (``pld/poisson_sampling.py``), so
      remove: M(s) = E_Q[e^{(1+s) g(L)}],    add: M(s) = E_P[e^{−s g(−L)}],
  over the *base* pair. The base atoms map exactly; the base's continuous
  part (Gaussian or Laplace) is integrated by composite 16-point
  Gauss–Legendre panels in the base variable, each panel short enough that
  the phase t·g changes by at most 8 radians across it (error of each panel
  ~ 4³²/32! ≈ 1e-16 of its mass) and the Gaussian variable is truncated at
  ±14 standard units beyond the tilted peak (dropped mass < e^{−98}). This is
  accurate to ~1e-14 relative to M(c), not a certified enclosure.

How fast |C(c+it)| decays bounds the truncation of the inversion:
``log_decay`` gives κ with |C(c+it)| ≤ κ/|t| for every pair with a
continuous part (for Poisson pairs by integrating by parts: κ is the total
variation of the new loss's tilted density), ``log_continuous_bound`` the
bound for all |t'| ≥ t.

Logarithms are principal values. Counts in a composition are integers, so
exp(Σ k_j log M_j) = Π M_j^{k_j} for *any* branch: no phase unwrapping is
needed.

Anything else (``MonotoneLossPair``, ``SubsetSampledPair``, Poisson pairs over
them) raises ``RepresentationUnavailable``.
"""
import math

import numpy as np

from ..errors import RepresentationUnavailable
from ..pld.pairs import DiscretePair, GaussianPair, LaplacePair
from ..pld.pairs_zoo import LogisticPair
from ..pld.poisson_sampling import PoissonAddPair, PoissonRemovePair

_GL_X, _GL_W = np.polynomial.legendre.leggauss(16)
_PHASE_PER_PANEL = 8.0
_GAUSS_REACH = 14.0
_CHUNK = 2 ** 21  # complex entries per block of the quadrature sum


def clogsumexp(z, axis=-1):
    """log Σ e^{z} for complex z along ``axis`` (−inf for an empty or zero sum)."""
    z = np.asarray(z, dtype=complex)
    if z.shape[axis] == 0:
        return np.full(np.delete(z.shape, axis if axis >= 0 else z.ndim + axis), -np.inf + 0j)
    m = np.max(z.real, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    with np.errstate(divide="ignore"):
        out = np.log(np.sum(np.exp(z - m), axis=axis)) + np.squeeze(m, axis=axis)
    return out


def _g(loss, q):
    """g(ℓ) = log(1 − q + q e^ℓ), elementwise, without cancellation."""
    return np.logaddexp(math.log1p(-q), math.log(q) + np.asarray(loss, dtype=float)) if q < 1 \
        else np.asarray(loss, dtype=float)


def _poisson(pair):
    """(base, q, is_remove) of a Poisson pair (reads their attributes)."""
    return pair._base, pair._q, isinstance(pair, PoissonRemovePair)


# ---------------------------------------------------------------- atoms ----

def _unavailable(pair):
    return RepresentationUnavailable(
        f"method='cf': no characteristic function for {pair!r} (there is one for Gaussian, Laplace, "
        f"logistic and finite pairs and their Poisson subsamplings); use method='pld'")


def _base_atoms(pair):
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
    raise _unavailable(pair)


def atoms(pair):
    """(ℓ_i, P-masses) of the finite atoms of the privacy loss under P (exact)."""
    if isinstance(pair, (PoissonRemovePair, PoissonAddPair)):
        base, q, remove = _poisson(pair)
        loss, p, qm = _base_atoms(base)
        if remove:  # L' = g(L), P' = (1−q)Q + qP; Q-only mass lands at log(1−q)
            new_loss, mass = _g(loss, q), (1.0 - q) * qm + q * p
            extra_loss, extra = (math.log1p(-q), (1.0 - q) * base.q_ninf) if q < 1 else (0.0, 0.0)
        else:       # L' = −g(−L), P unchanged; base L = +∞ lands at −log(1−q)
            new_loss, mass = -_g(-loss, q), p
            extra_loss, extra = (-math.log1p(-q), base.p_inf) if q < 1 else (0.0, 0.0)
        if extra > 0:
            new_loss, mass = np.append(new_loss, extra_loss), np.append(mass, extra)
        return new_loss, mass
    loss, p, _ = _base_atoms(pair)
    return loss, p


def loss_sup(pair):
    """The supremum of the finite losses (∞ if unbounded): above it δ(ε) = P(L = ∞)."""
    if isinstance(pair, (PoissonRemovePair, PoissonAddPair)):
        base, q, remove = _poisson(pair)
        top = loss_sup(base)
        if remove:
            return float(_g(top, q)) if math.isfinite(top) else math.inf
        # L' = −g(−L) ≤ −log(1 − q); the base's +∞ lands there too
        return float(-_g(-top, q)) if q < 1 else top
    if isinstance(pair, (LaplacePair, LogisticPair)):
        return pair.key()[1]
    if isinstance(pair, DiscretePair):
        loss = pair.atoms[0]
        return float(loss[-1]) if len(loss) else -math.inf
    return math.inf


def log_mgf_atoms(pair, s):
    """log Σ_i p_i e^{s ℓ_i} over the atoms (−inf if there are none)."""
    loss, mass = atoms(pair)
    s = np.asarray(s, dtype=complex)
    with np.errstate(divide="ignore"):
        z = np.log(mass)[None, :] + s.reshape(-1, 1) * loss[None, :]
    return clogsumexp(z, axis=1).reshape(s.shape)


def lattice(pair):
    """(o, g) with every atom equal to o + n·g for an integer n (g = 0.0 for a
    single atom), or None if the atoms lie on no lattice we can see (the
    pair's declared lattice or anchor through 0, else the one spanned by the
    smallest gap; each atom within 1e-11 of its lattice point, relative)."""
    loss, _ = atoms(pair)
    if len(loss) == 0:
        return None
    on = lambda o, g: bool(np.all(np.abs((loss - o) / g - np.round((loss - o) / g)) <= 1e-11))
    declared = None if isinstance(pair, (PoissonRemovePair, PoissonAddPair)) else (pair.lattice or pair.anchor)
    if declared and on(0.0, declared):
        return 0.0, float(declared)
    values = np.unique(loss)
    if len(values) == 1:
        return float(values[0]), 0.0
    o, g = float(values[0]), float(np.min(np.diff(values)))
    return (o, g) if on(o, g) else None


# ----------------------------------------------------------- continuous ----

def _laplace_cont(e0, s):
    """log C(s) of the Laplace pair's continuous part, see the module docstring."""
    w = s + 0.5
    small = np.abs(w) < 1e-8
    w_safe = np.where(small, 1.0, w)
    with np.errstate(divide="ignore"):
        # C = e^{sε₀}(1 − e^{−2wε₀}) / (4w); as w → 0 it tends to e^{sε₀} ε₀/2
        big = s * e0 + np.log(-np.expm1(-2.0 * w_safe * e0)) - np.log(4.0 * w_safe)
    return np.where(small, s * e0 + math.log(e0 / 2.0) - w * e0, big)


def log_decay(pair, c):
    """log κ with |C(c+it)| ≤ κ/|t| for every real t ≠ 0, C the continuous
    part of M (None if there is none). Closed forms for Gaussian
    (sup_t t e^{−μ²t²/2} = 1/(μ√e)), Laplace and logistic; for Poisson pairs
    integration by parts (``_poisson_log_tv``)."""
    if isinstance(pair, GaussianPair):
        mu = pair.gaussian_mu
        return 0.5 * mu * mu * c * (c + 1.0) - math.log(mu) - 0.5
    if isinstance(pair, (LaplacePair, LogisticPair)):  # |e^{sε} − e^{−(s+1)ε}| / (4|s + ½|) ≤ ... / (4|t|)
        e = pair.key()[1]
        log_k = float(np.logaddexp(c * e, -(c + 1.0) * e)) - math.log(4.0)
        return log_k if isinstance(pair, LaplacePair) else log_k + 0.5 * e - math.log(math.sinh(e / 2))
    if isinstance(pair, DiscretePair):
        return None
    if isinstance(pair, (PoissonRemovePair, PoissonAddPair)):
        return _poisson_log_tv(pair, c)
    raise _unavailable(pair)


def log_continuous_bound(pair, c, t):
    """log of a bound on |C(c+it')| for every |t'| ≥ t > 0 (−inf if there is no
    continuous part): exact for Gaussian, κ/t otherwise."""
    if isinstance(pair, GaussianPair):
        mu2 = pair.gaussian_mu ** 2
        return 0.5 * mu2 * (c * c + c - t * t)  # |e^{μ²s(s+1)/2}|, falling in |t|
    log_k = log_decay(pair, c)
    return -math.inf if log_k is None else log_k - math.log(t)


def _poisson_log_tv(pair, c):
    """log κ for the continuous part of a Poisson pair (as ``_poisson_cont``
    computes it, on the base variable's window [lo, hi]).

    There C(c+it) = ∫ w(x) e^{±itφ(x)} dx with φ = g(±loss) strictly increasing,
    φ' = g'(±loss)·loss' > 0, g'(ℓ) = q e^{ℓ − g(ℓ)}. In u = φ(x) it is
    ∫ ρ(u) e^{±itu} du with ρ = w/φ' (the tilted density of the new loss), and
    integrating by parts, |C| ≤ (ρ(lo) + ρ(hi) + TV(ρ))/|t| (the van der Corput
    bound for a function of bounded variation). ρ is bounded, though φ' → 0
    where the loss piles up at log(1 − q) (a Gaussian base: ρ ~ e^{−x²/2 − 2μx}
    there). TV(ρ) is taken on 2^15 points and padded by 1 %: a grid misses only
    the tops of the few extrema of this smooth ρ, by O(h²) of them. This κ is
    what makes the truncation estimate of a Poisson-subsampled Gaussian
    composed with non-decaying atoms sound (``cf/inversion.py``)."""
    base, q, remove = _poisson(pair)
    spec = _base_continuous(base, abs(c))
    if spec is None:
        return None
    lo, hi, _, logp, loss, slope = spec
    x = np.linspace(lo, hi, 2 ** 15 + 1)
    ell = loss(x)
    if remove:  # w = q_base(x) e^{(1+c) g(L)}, q_base = p_base e^{−L}
        ph = _g(ell, q)
        log_rho = logp(x) - ell + (1.0 + c) * ph - (math.log(q) + ell - ph)
    else:       # w = p_base(x) e^{−c g(−L)}
        ph = _g(-ell, q)
        log_rho = logp(x) - c * ph - (math.log(q) - ell - ph)
    log_rho = log_rho - math.log(slope)
    top = float(np.max(log_rho))
    rho = np.exp(log_rho - top)
    return top + math.log(1.01 * (np.sum(np.abs(np.diff(rho))) + rho[0] + rho[-1]))


def _panels(lo, hi, hx, phase, t_max):
    """Panel edges on [lo, hi] with width ≤ hx and t_max·|Δphase| ≤ 8 each."""
    fine = np.linspace(lo, hi, 4097)
    v = (fine - lo) / hx + t_max * np.abs(phase(fine) - phase(fine[:1])) / _PHASE_PER_PANEL
    n = max(1, int(math.ceil(v[-1])))
    return np.interp(np.linspace(0.0, v[-1], n + 1), v, fine)


def _rule(edges):
    """Gauss–Legendre nodes and weights on the panels ``edges``."""
    mid, half = 0.5 * (edges[1:] + edges[:-1]), 0.5 * np.diff(edges)
    x = (mid[:, None] + half[:, None] * _GL_X[None, :]).ravel()
    return x, (half[:, None] * _GL_W[None, :]).ravel()


def _base_continuous(base, c_abs):
    """(lo, hi, hx, log P-density(x), loss(x), d loss/dx) of the base's continuous
    part in a variable x, or None if the base has none."""
    if isinstance(base, GaussianPair):
        mu = base.gaussian_mu
        reach = _GAUSS_REACH + (1.0 + c_abs) * mu  # beyond the tilted peak
        return (-reach, reach, 0.5, lambda x: -0.5 * x * x - 0.5 * math.log(2 * math.pi),
                lambda x: mu * x + 0.5 * mu * mu, mu)
    if isinstance(base, LaplacePair):
        e0 = base.key()[1]
        return (-e0, e0, e0 / 8, lambda x: math.log(0.25) + 0.5 * (x - e0), lambda x: x, 1.0)
    if isinstance(base, LogisticPair):  # P-density of L: e^{ℓ/2}/(4 sinh(ε/2)) on (−ε, ε)
        e = base.key()[1]
        return (-e, e, e / 8, lambda x: 0.5 * x - math.log(4.0 * math.sinh(e / 2)), lambda x: x, 1.0)
    if isinstance(base, DiscretePair):
        return None
    raise _unavailable(base)


def _poisson_cont(pair, s):
    base, q, remove = _poisson(pair)
    c_abs = float(np.max(np.abs(s.real))) if s.size else 0.0
    spec = _base_continuous(base, c_abs)
    if spec is None:
        return None
    lo, hi, hx, logp, loss, _ = spec
    # remove: E_Q[e^{(1+s)g(L)}], dQ = e^{−L} dP;  add: E_P[e^{−s g(−L)}]
    phase = (lambda x: _g(loss(x), q)) if remove else (lambda x: _g(-loss(x), q))
    t_max = float(np.max(np.abs(s.imag))) if s.size else 0.0
    x, w = _rule(_panels(lo, hi, hx, phase, t_max))
    ph = phase(x)
    base_log = np.log(w) + logp(x) - (loss(x) if remove else 0.0)
    expo = (1.0 + s.ravel()) if remove else -s.ravel()
    out = np.empty(expo.shape, dtype=complex)
    for re in np.unique(expo.real):  # one real weight vector per line Re s = c
        idx = np.flatnonzero(expo.real == re)
        log_w = base_log + re * ph
        top = float(np.max(log_w))
        w = np.exp(log_w - top)
        chunk = max(1, _CHUNK // len(x))
        for i in range(0, len(idx), chunk):
            theta = np.outer(expo.imag[idx[i:i + chunk]], ph)
            with np.errstate(divide="ignore"):  # Σ w e^{iθ} as two real products
                out[idx[i:i + chunk]] = top + np.log(np.cos(theta) @ w + 1j * (np.sin(theta) @ w))
    return out.reshape(s.shape)


def quadrature_size(pair, c, t_max):
    """Number of quadrature nodes one evaluation of M(c + it), |t| ≤ t_max,
    costs (0 for the closed forms and finite sums)."""
    if not isinstance(pair, (PoissonRemovePair, PoissonAddPair)):
        return 0
    base, q, remove = _poisson(pair)
    spec = _base_continuous(base, abs(c))
    if spec is None:
        return 0
    lo, hi, hx, _, loss, _ = spec
    phase = (lambda x: _g(loss(x), q)) if remove else (lambda x: _g(-loss(x), q))
    return 16 * (len(_panels(lo, hi, hx, phase, t_max)) - 1)


def log_mgf_continuous(pair, s):
    """log C(s) of the continuous part of the loss under P (None if there is
    none), for a complex array s."""
    s = np.asarray(s, dtype=complex)
    if isinstance(pair, GaussianPair):
        mu2 = pair.gaussian_mu ** 2
        return 0.5 * mu2 * s * (s + 1.0)
    if isinstance(pair, LaplacePair):
        return _laplace_cont(pair.key()[1], s)
    if isinstance(pair, LogisticPair):  # e^{ε/2}(e^{sε} − e^{−(s+1)ε}) / (4(s+½) sinh(ε/2))
        e = pair.key()[1]
        return _laplace_cont(e, s) + 0.5 * e - math.log(math.sinh(e / 2))
    if isinstance(pair, DiscretePair):
        return None
    if isinstance(pair, (PoissonRemovePair, PoissonAddPair)):
        return _poisson_cont(pair, s)
    raise _unavailable(pair)


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
