"""The characteristic-function accountant: compose by adding log φ, invert once.

A direction of a composition is a tuple of (pair, count) (``PairComposition``); its privacy loss
under P has the finite-part moment generating function
M(s) = Π_j M_j(s)^{k_j} (``cf/characteristic.py``; the integer powers make any
branch of log M_j valid) and P(L = +∞) = 1 − Π_j (1 − p_inf_j)^{k_j}.

Inversion (Zhu, Dong & Wang, AISTATS 2022, Lévy's formula; here in the
Laplace-transform form of the hockey-stick function). With
f(x) = (1 − e^{ε−x})_+, δ(ε) = P(L = ∞) + E_P[f(L); L finite], and for c > 0

    f(x) = (1/2πi) ∫_{c−i∞}^{c+i∞} e^{s(x−ε)} / (s(s+1)) ds,

because ∫ f(x) e^{−sx} dx = e^{−sε}/(s(s+1)). Moving the line to
−1 < c < 0 crosses the pole at s = 0 (residue 1) and gives f − 1 instead, so

    δ(ε) = P(L=∞) + I(c)   (c > 0),        δ(ε) = 1 + I(c)   (−1 < c < 0),
    I(c) = (1/π) Re ∫_0^∞ M(c+it) e^{−(c+it)ε} / ((c+it)(c+1+it)) dt.

The kernel decays like 1/t², so I converges absolutely. c is the saddle point
of log M(c) − cε − log|c(1+c)| (the logarithm of the integrand's bound at
t = 0, a Chernoff bound of δ), on the side of 0 where ε lies relative to
E[L]: the integrand then barely oscillates and has the size of δ itself.

*Atoms.* Where every pair has atoms (randomized response, discrete pairs,
Laplace), the purely atomic part A = Π A_j^{k_j} of M does not decay in t.
When its atoms lie on a lattice gℤ its contribution is an integral over one
period (exact; trapezoid rule converges geometrically):

    I_A = (g/2π) ∫_{−π/g}^{π/g} A(c+it) K(c+it) dt,  K(s) = Σ_{y ∈ gℤ} f_c(y) e^{−sy},

with f_c = f (c > 0) or f − 1 (c < 0), geometric series summed in closed
form. The rest R = M − A (telescoped pair by pair, so it is computed without
cancellation) goes through the line integral; for Laplace terms
|C(c+it)| ≤ κ/|t| bounds its tail by Σ_j k_j κ_j Π_i M_i(c)^{k_i} / M_j(c) ·
e^{−cε}/(2πT²), which fixes the truncation T.

*Truncation where some factor does not decay* (issue 20). When A = 0 (some
pair has no atoms) or the atoms lie on no common lattice, the whole M goes
through the line integral, and |M(c+it)| is bounded for |t| ≥ T by
B(T) = Π_j min(M_j(c), A_j(c) + Ĉ_j(T))^{k_j} (``_log_modulus_bound``): the
atomic factors by their sup A_j(c), the continuous ones by the rigorous κ_j/t
of ``characteristic.log_decay`` (exact for a Gaussian), or a probe of that
one factor where smaller. Then the tail is ≤ B(T)e^{−cε}/(π(K+1)T).

The estimate this replaces probed the product |F| at 16 points of [T, 2T]
and assumed it decays beyond. With a Poisson-subsampled Gaussian (whose
φ decays only like κ/t: its loss piles up at log(1 − q)) composed with
many lattice atoms (200 Poisson-sampled randomized responses), |F| is
tiny between the atoms' peaks at multiples of 2π/g and ~κ/t³ on them; the
probe fell between the peaks, took T ≈ 8/σ, and dropped every peak: δ
came out 0.6 % low with an error estimate of 1e-14 (ε(1e-6) = 12.1013
against 12.10934 exact, an interval 1e-12 wide). The atoms are now never
sampled for decay, only bounded by A_j(c). The price: such a direction's
T is set by the work budget, the estimate is ~1 % of δ, and ε(δ) takes
~20 s.

*Error estimate, not a certificate.* The trapezoid rule on [0, T] is
refined by halving until two resolutions agree to the tolerance; the
estimate is their difference plus the truncation bound (rigorous where it
uses κ, an estimate where a factor was probed) plus the aliasing difference
of the lattice part, float rounding, and the quadrature inside M for
subsampled pairs, trusted to 1e-14 of M_j(c) per factor (integrated against
the kernel: ≤ 1e-14·Σk_j·M(c)e^{−cε}·π/(2√(|c|(1+c)))/π). So ``δ + err``
is an *estimated* upper bound, not a rigorous one, and err > 0 always.
"""
import math

import numpy as np
from scipy import optimize

from .. import validation as v
from ..errors import RepresentationUnavailable
from .characteristic import (atoms, clogsumexp, lattice, log_continuous_bound, log_decay, log_mgf,
                             log_mgf_atoms, log_mgf_continuous, loss_sup, quadrature_size)

_U = np.finfo(float).eps
_MAX_POINTS = 2 ** 22
_WORK = 2e7  # quadrature-node × t-point evaluations allowed for one line integral
_C_MAX = 500.0


def composed_log_phi(terms, t):
    """log φ(t) = Σ_j k_j log φ_j(t) of one direction (a tuple of (pair, count),
    as in ``PairComposition``): compositions add log φ."""
    return composed_log_mgf(terms, 1j * np.asarray(t, dtype=float))


def _times(k, z):
    """k·z for a count k and complex z, keeping −inf + 0j (k·z as complex
    multiplication would turn the imaginary part into NaN)."""
    return k * z.real + 1j * (k * np.where(np.isfinite(z.real), z.imag, 0.0))


def composed_log_mgf(terms, s):
    """Σ_j k_j log M_j(s) for a tuple of (pair, count)."""
    s = np.asarray(s, dtype=complex)
    return sum((_times(k, log_mgf(p, s)) for p, k in terms), np.zeros(s.shape, dtype=complex))


def _p_inf(terms):
    """log P(L finite) = Σ k log(1 − p_inf) (−inf if some p_inf ≥ 1)."""
    return sum(k * math.log1p(-p.p_inf) if p.p_inf < 1 else -math.inf for p, k in terms)


def _real_log_mgf(terms, c):
    return float(composed_log_mgf(terms, np.array([c])).real[0])


def _saddle(terms, eps):
    """(c, log bound): minimiser of log M(c) − cε − log|c(1+c)| on the side of 0
    given by the sign of ε − E[L] (E[L] by a central difference)."""
    eta = 1e-6
    mean = (_real_log_mgf(terms, eta) - _real_log_mgf(terms, -eta)) / (2 * eta)
    if eps >= mean:
        to_c = lambda u: _C_MAX / (1.0 + math.exp(-u))               # (0, C_MAX)
    else:
        to_c = lambda u: -1.0 / (1.0 + math.exp(-u))                  # (−1, 0)
    obj = lambda u: (_real_log_mgf(terms, to_c(u)) - to_c(u) * eps
                     - math.log(abs(to_c(u) * (1.0 + to_c(u)))))
    res = optimize.minimize_scalar(obj, bounds=(-30.0, 30.0), method="bounded",
                                   options={"xatol": 1e-6})
    return to_c(res.x), float(res.fun)


def _remainder_log(terms, s, whole=False):
    """log R(s), R = Π M_j^{k_j} − Π A_j^{k_j} (R = M if ``whole``), telescoped:
    R = Σ_j Π_{i<j} A_i^{k_i} · (M_j^{k_j} − A_j^{k_j}) · Π_{i>j} M_i^{k_i},
    each bracket M^k·(−expm1(k·log1p(−C/M))) without cancellation."""
    if whole:
        return composed_log_mgf(terms, s)
    parts = [(log_mgf_atoms(p, s), log_mgf_continuous(p, s)) for p, _ in terms]
    one = [at if cont is None else clogsumexp(np.stack([at, cont]), axis=0) for at, cont in parts]
    logm = [_times(k, lm) for (_, k), lm in zip(terms, one)]
    loga = [_times(k, at) for (_, k), (at, _) in zip(terms, parts)]
    if any(np.all(np.isneginf(a.real)) for a in loga):
        return sum(logm)  # some pair has no atoms: A = 0
    pieces = []
    for j, ((p, k), (_, cont)) in enumerate(zip(terms, parts)):
        if cont is None:
            continue
        ratio = np.exp(cont - one[j])  # C_j / M_j
        z = k * np.log1p(-ratio)  # log (A_j/M_j)^k
        # log(1 − e^z): as log(−expm1(z)) for Re z ≤ 0, as z + log(expm1(−z)) above (no overflow)
        big = z.real > 0
        with np.errstate(divide="ignore"):
            bracket = logm[j] + np.where(big, z + np.log(np.expm1(-np.where(big, z, 0))),
                                         np.log(-np.expm1(np.where(big, 0, z))))
        pieces.append(sum(loga[:j]) + bracket + sum(logm[j + 1:]))
    if not pieces:
        return None
    return clogsumexp(np.stack(pieces), axis=0)


def _trapezoid(fun, t_max, h, tol, max_points):
    """(1/π) Re ∫_0^{t_max} fun(t) dt by the trapezoid rule, halving h until two
    resolutions agree to ``tol`` (or ``max_points`` is reached); returns
    (value, |difference of the last two|)."""
    n = max(2, int(math.ceil(t_max / h)))
    h = t_max / n
    y = fun(np.linspace(0.0, t_max, n + 1)).real
    total = h * (y.sum() - 0.5 * (y[0] + y[-1])) / math.pi
    while True:
        mids = (np.arange(n) + 0.5) * h
        finer = 0.5 * total + 0.5 * h * fun(mids).real.sum() / math.pi
        diff = abs(finer - total)
        n, h, total = 2 * n, h / 2, finer
        if diff <= tol or 2 * n > max_points:
            return total, diff


def _nodes(terms, c, t_max):
    """Cost of one evaluation of M: quadrature nodes plus atoms."""
    return max(1, sum(quadrature_size(p, c, t_max) + len(atoms(p)[0]) for p, _ in terms))


def _line_part(terms, eps, c, tol, whole=False):
    """(I_R, error estimate) of the line integral of the remainder R = M − A
    (of all of M if ``whole``: atoms on no common lattice)."""
    fun = lambda t: np.exp(_line_log(terms, c + 1j * np.asarray(t, dtype=float), eps, whole))
    if np.isneginf(_line_log(terms, np.array([c + 0j]), eps, whole).real[0]):
        return 0.0, 0.0
    # the integrand is ≈ e^{−σ²t²/2} near 0: resolve σ, and the poles at s = 0, −1
    curv = sum(k * _curvature(p, c) for p, k in terms)
    width = 1.0 / math.sqrt(max(curv, 1e-12))
    h0 = min(width, abs(c), 1.0 + c if c < 0 else math.inf) / 4.0
    log_kappas = [log_decay(p, c) for p, _ in terms]
    if not whole and all(len(atoms(p)[0]) for p, _ in terms) and any(lk is not None for lk in log_kappas):
        # the atoms do not decay: |R(c+it)| ≤ Σ_j k_j κ_j/|t| Π_i M_i(c)^{k_i} / M_j(c)
        log_mc = [_real_log_mgf(((p, 1),), c) for p, _ in terms]
        total = sum(k * lm for (_, k), lm in zip(terms, log_mc))
        bound = sum(k * math.exp(lk + total - lm - c * eps)
                    for (_, k), lk, lm in zip(terms, log_kappas, log_mc) if lk is not None)
        # Nyquist: the integrand's frequencies are the losses ℓ − ε, |ℓ| ≤ Σ k max|atom|, plus
        # the kernel's exponential tails (e^{−36} beyond 36/min(c, 1+c)); halving checks it
        freq = sum(k * float(np.max(np.abs(atoms(p)[0]))) for p, k in terms) + abs(eps)
        h0 = min(h0, math.pi / (freq + 36.0 / min(abs(c), 1.0 + c)))
        t_max = max(min(math.sqrt(bound / (math.pi * tol)), h0 * _MAX_POINTS / 4), 64 * h0)
        tail = bound / (2 * math.pi * t_max ** 2)  # ∫_T^∞ bound/t³ dt / π
    else:
        # R = M (A = 0, or ``whole``): |M(c+it)| ≤ B(t) ≤ B(T)(T/t)^K for |t| ≥ T
        # (``_log_modulus_bound``), so the tail is ≤ (1/π) ∫_T^∞ B(t) e^{−cε}/t² dt
        # ≤ B(T) e^{−cε}/(π(K+1)T). T doubles until that is below a tenth of the tolerance or
        # the work budget is spent, then goes to the budget's end
        cost = lambda t: 8 * (t / h0) * _nodes(terms, c, t)

        def tail_at(t):
            log_b, power = _log_modulus_bound(terms, c, t)
            return math.exp(log_b - c * eps) / (math.pi * (power + 1) * t)

        t_max = 8.0 * width
        while tail_at(t_max) > 0.1 * tol and cost(2 * t_max) <= _WORK:
            t_max *= 2.0
        if tail_at(t_max) > 0.1 * tol:  # the budget ends between T and 2T: go to its end
            lo, hi = t_max, 2 * t_max
            for _ in range(12):
                mid = 0.5 * (lo + hi)
                lo, hi = (mid, hi) if cost(mid) <= _WORK else (lo, mid)
            t_max = lo
        tail = tail_at(t_max)
    max_points = min(_MAX_POINTS, _WORK / _nodes(terms, c, t_max))
    value, diff = _trapezoid(fun, t_max, h0, 0.5 * tol, max_points)
    return value, diff + tail


def _log_modulus_bound(terms, c, t):
    """(log B(t), K) with B(t) ≥ |M(c+it')| for |t'| ≥ t and B(t') ≤ B(t)(t/t')^K beyond.

    B(t) = Π_j min(M_j(c), A_j(c) + Ĉ_j(t))^{k_j}: |M_j(c+it')| ≤ M_j(c) always, and
    ≤ |A_j| + |C_j| with |A_j(c+it')| ≤ A_j(c): the atoms, which need not decay at all (their
    peaks recur with the lattice's period), are bounded by their sup, never sampled. For the
    continuous part Ĉ_j(t) is the smaller of the rigorous bound of
    ``characteristic.log_continuous_bound`` (exact for a Gaussian, κ_j/t otherwise) and, where
    it is not a Gaussian, the largest |C_j| at 16 points of [t, 2t] — an *estimate* of the sup
    beyond t that assumes |C_j| does not grow again (a single smooth factor, unlike the
    product with atoms that the estimate of issue 20 sampled, and missed the peaks of).
    K = Σ k_j over the atomless factors whose bound is κ_j/t (that form persists beyond t)."""
    total, power = 0.0, 0
    probe = t * np.linspace(1.0, 2.0, 16)
    for p, k in terms:
        whole = _real_log_mgf(((p, 1),), c)
        log_a = float(log_mgf_atoms(p, np.array([c + 0j])).real[0])
        log_cont = rigorous = log_continuous_bound(p, c, t)
        if rigorous > -math.inf and p.gaussian_mu is None:
            log_cont = min(rigorous, float(np.max(log_mgf_continuous(p, c + 1j * probe).real)))
        split = float(np.logaddexp(log_a, log_cont))
        if split < whole and log_a == -math.inf and log_cont == rigorous and p.gaussian_mu is None:
            power += k
        total += k * min(whole, split)
    return total, power


def _curvature(pair, c, eta=1e-4):
    """d²/dc² log M(c) by a central difference (the tilted variance of L)."""
    f = lambda x: _real_log_mgf(((pair, 1),), x)
    return max((f(c + eta) - 2 * f(c) + f(c - eta)) / eta ** 2, 0.0)


def _line_log(terms, s, eps, whole=False):
    rem = _remainder_log(terms, s, whole)
    if rem is None:
        return np.full(s.shape, -np.inf + 0j)
    return rem - s * eps - np.log(s * (s + 1.0))  # the kernel e^{−sε}/(s(s+1))


def common_lattice(terms):
    """How the purely atomic part A = Π A_j^{k_j} is inverted: (O, g) when every
    composed atom is O + n·g (exactly, over one period; g = 0.0: a single atom
    at O), ``False`` when some pair has no atoms (A = 0), None when the atoms
    lie on no common lattice (they stay in the line integral, whose
    truncation error is then bounded by A(c)e^{−cε}/(πT))."""
    if any(len(atoms(p)[0]) == 0 for p, _ in terms):
        return False
    lats = [lattice(p) for p, _ in terms]
    if any(lat is None for lat in lats):
        return None
    offset = sum(k * o for (_, k), (o, _) in zip(terms, lats))
    steps = [g for _, g in lats if g > 0]
    if not steps:
        return offset, 0.0
    g = min(steps)
    if any(abs(other / g - round(other / g)) > 1e-11 for other in steps):
        return None
    return offset, g


def _lattice_part(terms, eps, c, tol, lat):
    """(I_A, aliasing estimate) of the purely atomic part on its lattice O + gℤ
    (shifted to gℤ: atoms y − O, threshold ε − O)."""
    if lat is False or lat is None:
        return 0.0, 0.0
    offset, g = lat
    eps = eps - offset
    if g == 0.0:  # a single atom at O with mass A(0): f_c(O) times the mass
        mass = math.exp(sum(k * float(log_mgf_atoms(p, np.array([0j])).real[0]) for p, k in terms))
        if c > 0:
            return mass * max(-math.expm1(eps), 0.0), 0.0
        return -mass * min(1.0, math.exp(eps)), 0.0
    m = math.floor(eps / g) + 1  # first lattice point above ε (ε < y_m)
    y_m, y_below = m * g, (m - 1) * g

    def fun(t):
        s = c + 1j * t
        log_a = sum(_times(k, log_mgf_atoms(p, s)) for p, k in terms) - s * offset
        up = np.exp(log_a + eps - (1.0 + s) * y_m - np.log(-np.expm1(-(1.0 + s) * g)))
        if c > 0:   # Σ_{y>ε} (1 − e^{ε−y}) e^{−sy}
            return np.exp(log_a - s * y_m - np.log(-np.expm1(-s * g))) - up
        # Σ_{y>ε} −e^{ε−y}e^{−sy} + Σ_{y≤ε} −e^{−sy}
        return -up - np.exp(log_a - s * y_below - np.log(-np.expm1(s * g)))

    n = 64
    t = -math.pi / g + 2 * math.pi * np.arange(n) / (g * n)
    total = float(np.mean(fun(t)).real)
    while True:
        mids = t + math.pi / (g * n)
        finer = 0.5 * total + 0.5 * float(np.mean(fun(mids)).real)
        diff = abs(finer - total)
        t = np.sort(np.concatenate([t, mids]))
        n, total = 2 * n, finer
        if diff <= tol or n >= _MAX_POINTS:
            return total, diff


def cf_to_delta(terms, eps, rtol=1e-6):
    """(δ(ε), error estimate) of one direction (a tuple of (pair, count)).

    Numerical inversion of the characteristic function (see the module
    docstring); the estimate is meant to cover |δ − exact| but is not a
    rigorous bound."""
    eps = v.real("eps", eps)
    if not math.isfinite(eps):
        raise ValueError(f"eps must be finite, got {eps!r}")
    terms = tuple((p, v.count("count", k)) for p, k in terms)
    log_fin = _p_inf(terms)
    if log_fin == -math.inf:
        return 1.0, 0.0
    p_inf = max(-math.expm1(log_fin), 0.0)
    top = sum(k * loss_sup(p) for p, k in terms)
    if eps > top + 1e-9 * (1.0 + abs(top)):  # no finite loss above ε (margin: the sum's rounding)
        return p_inf, 0.0
    c, log_bound = _saddle(terms, eps)
    if c > 0.99 * _C_MAX and any(quadrature_size(p, c, 1.0) for p, _ in terms):
        # pinned at the cap with a part needing quadrature: δ far below what the line integral
        # resolves (Poisson q ≈ 1e-130 made it take minutes and tens of GB): refuse up front
        raise RepresentationUnavailable(f"method='cf' cannot resolve δ at eps={eps!r}: its saddle point "
                                        f"reaches the cap c = {_C_MAX}; use method='pld' or 'analytic'")
    # δ's scale: the Chernoff bound M(c)e^{−cε}/(1+c) is e^{log_bound}·|c| (the kernel at
    # t = 0 has the factor 1/(c(1+c)), which undersells δ by ~|c| for a large saddle)
    log_scale = min(0.0, log_bound + math.log(max(abs(c), 1.0)))
    tol = rtol * math.exp(log_scale) + 1e-300
    lat = common_lattice(terms)
    i_a, e_a = _lattice_part(terms, eps, c, tol, lat)
    i_r, e_r = _line_part(terms, eps, c, tol, whole=lat is None)
    base = p_inf if c > 0 else 1.0
    delta = base + i_a + i_r
    # float rounding: each summed term is e^z with |z| up to |log M(c)| + |cε| (so relative
    # error ~ u|z|), the terms are of the size of the scale; plus the base's
    log_mc = log_bound + c * eps + math.log(abs(c * (1.0 + c)))
    err = e_a + e_r + 64 * _U * ((1.0 + abs(log_mc) + abs(c * eps)) * math.exp(log_scale) + base)
    # the quadrature inside M (module docstring): M(c)e^{−cε} = e^{log_bound}|c(1+c)|
    quad = sum(k for p, k in terms if quadrature_size(p, c, 0.0) > 0)
    err += 1e-14 * quad * math.exp(log_bound) * math.sqrt(abs(c) * (1.0 + c)) / 2
    return min(max(delta, 0.0), 1.0), err


def epsilon_root(terms, delta, side=1.0, rtol=1e-6):
    """The ε ≥ 0 where δ(ε) + side·err(ε) = ``delta`` for the inverted δ and its
    error estimate (side = 1: the pessimistic root, −1 the optimistic one),
    by Brent's method on the logarithm; ∞ when P(L = ∞) ≥ delta or no root
    lies below 1e6."""
    delta = v.probability("delta", delta, lo_open=True, hi_open=True)
    terms = tuple((p, v.count("count", k)) for p, k in terms)
    if -math.expm1(_p_inf(terms)) >= delta:
        return math.inf

    def f(e):
        d, err = cf_to_delta(terms, e, rtol)
        return math.log(max(d + side * err, 1e-300)) - math.log(delta)

    if f(0.0) <= 0:
        return 0.0
    lo, hi = 0.0, 1.0
    while f(hi) > 0:
        lo, hi = hi, 2.0 * hi
        if hi > 1e6:
            return math.inf
    return optimize.brentq(f, lo, hi, xtol=1e-12, rtol=1e-12)


def cf_to_epsilon(terms, delta, rtol=1e-6):
    """(ε, error estimate) of one direction: ε is the root of the inverted
    δ(ε) = ``delta``, the estimate the distance to the root of δ + err
    (``epsilon_root``); like err_δ, an estimate, not a certificate."""
    eps = epsilon_root(terms, delta, 0.0, rtol)
    return eps, (epsilon_root(terms, delta, 1.0, rtol) - eps if math.isfinite(eps) else 0.0)
