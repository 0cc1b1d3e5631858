"""Exact privacy-loss distributions of the zoo, in mpmath, for tests/test_zoo_exact.py.

Nothing here imports dpaccount. A direction of a mechanism (a dominating
pair (P, Q)) is described by its privacy loss L = log(dP/dQ) under P, as
``Loss``: finitely many atoms (loss ℓ, P-mass p), a mass at L = +∞ (P-mass
where Q has none), and at most one continuous *kernel* that is composed with
the atoms in closed form: a Gaussian (μ-GDP: L ~ N(μ²/2, μ²); Gaussians
compose by adding μ²) or one Laplace (ε₀: L = ±ε₀ with masses ½, ½e^{−ε₀},
continuous in between). Since Q = P e^{−L} on the finite losses,

    δ(ε) = Σ_y (P(y) − e^ε Q(y))_+ = P(L = ∞) + Σ_j p_j · K(ε − ℓ_j),

K the kernel's own hockey-stick curve at every real argument (ε < 0 too):

* no kernel: K(x) = (1 − e^x)_+;
* Gaussian μ: K(x) = Φ(−x/μ + μ/2) − e^x Φ(−x/μ − μ/2) (Balle & Wang 2018, Thm 8;
  the derivation holds for every real x);
* Laplace ε₀: 1 − e^x for x ≤ −ε₀, 1 − e^{(x−ε₀)/2} for |x| < ε₀, 0 for x ≥ ε₀
  (integrating the densities; for x < 0 also the swap identity
  H_{e^x}(P‖Q) = 1 − e^x + e^x H_{e^{−x}}(Q‖P) with the symmetric pair).

Composition multiplies the laws: atoms are convolved (losses add, masses
multiply), P(L = ∞) = 1 − Π(1 − P_i(L = ∞)), kernels add their μ² (at most
one Laplace). Atoms whose losses agree to 2⁻¹⁰⁰ are merged (a change of
< 1e-29 relative in any δ, far below every tolerance of the tests).
Finite pairs are built from their outcome probabilities (mpf of the floats
the library is given, so both describe the same pair): Poisson subsampling
and subset sampling act on those outcome laws (Zhu, Dong & Wang 2022,
Thm 11; Dong, Roth & Su 2022, Thm 4.2).
"""
import mpmath as mp

_KEY = mp.mpf(2) ** 100


class Loss:
    """The privacy-loss law of one direction (module docstring)."""

    def __init__(self, atoms=None, p_inf=0, mu2=0, lap=None):
        self.atoms = atoms if atoms is not None else {0: (mp.mpf(0), mp.mpf(1))}
        self.p_inf, self.mu2, self.lap = mp.mpf(p_inf), mp.mpf(mu2), lap

    @classmethod
    def of_outcomes(cls, p, q):
        """The loss law of a finite pair given by outcome probabilities."""
        atoms, p_inf = {}, mp.mpf(0)
        for pi, qi in zip(p, q):
            pi, qi = mp.mpf(pi), mp.mpf(qi)
            if pi == 0:
                continue
            if qi == 0:
                p_inf += pi
            else:
                _add(atoms, mp.log(pi) - mp.log(qi), pi)
        return cls(atoms, p_inf)

    def __mul__(self, other):
        """The composition of two independent uses."""
        if self.lap is not None and other.lap is not None:
            raise ValueError("at most one Laplace kernel has a closed form here")
        atoms = {}
        for la, pa in self.atoms.values():
            for lb, pb in other.atoms.values():
                _add(atoms, la + lb, pa * pb)
        p_inf = 1 - (1 - self.p_inf) * (1 - other.p_inf)
        return Loss(atoms, p_inf, self.mu2 + other.mu2, self.lap if self.lap is not None else other.lap)

    def __pow__(self, k):
        out, base = Loss(), self
        while k:
            if k & 1:
                out = out * base
            k >>= 1
            if k:
                base = base * base
        return out

    def _kernel(self, x):
        if self.lap is not None and self.mu2 > 0:
            raise ValueError("a Gaussian and a Laplace kernel together have no closed form here")
        if self.mu2 > 0:
            mu = mp.sqrt(self.mu2)
            return mp.ncdf(-x / mu + mu / 2) - mp.exp(x) * mp.ncdf(-x / mu - mu / 2)
        if self.lap is not None:
            e0 = mp.mpf(self.lap)
            if x >= e0:
                return mp.mpf(0)
            return -mp.expm1(x) if x <= -e0 else -mp.expm1((x - e0) / 2)
        return -mp.expm1(x) if x < 0 else mp.mpf(0)

    def delta(self, eps):
        """δ(ε) = P(L = ∞) + Σ_j p_j K(ε − ℓ_j), for any real ε."""
        eps = mp.mpf(eps)
        return self.p_inf + mp.fsum(p * self._kernel(eps - l) for l, p in self.atoms.values())


def _add(atoms, loss, mass):
    key = int(mp.nint(loss * _KEY))
    if key in atoms:
        atoms[key] = (atoms[key][0], atoms[key][1] + mass)
    else:
        atoms[key] = (loss, mass)


# -- the zoo's pairs, by their outcome laws (remove direction; add = the reverse) ----------
def rr_outcomes(p):
    p = mp.mpf(p)
    return [p, 1 - p], [1 - p, p]


def leaky_rr_outcomes(eps, delta=0):
    """Kairouz, Oh & Viswanath 2015, Thm 2.1: the pair of every (ε, δ)-DP mechanism."""
    e, d = mp.exp(mp.mpf(eps)), mp.mpf(delta)
    p = [d, (1 - d) * e / (1 + e), (1 - d) / (1 + e), mp.mpf(0)]
    return p, p[::-1]


def discrete_laplace_outcomes(t, sens):
    """(Δ + DLap(t), DLap(t)) grouped into x ≤ 0, 0 < x < Δ (each x), x ≥ Δ (geometric tails summed)."""
    rho, d = mp.exp(-1 / mp.mpf(t)), int(sens)
    c = (1 - rho) / (1 + rho)
    p = [rho ** d / (1 + rho)] + [c * rho ** (d - x) for x in range(1, d)] + [1 / (1 + rho)]
    q = [1 / (1 + rho)] + [c * rho ** x for x in range(1, d)] + [rho ** d / (1 + rho)]
    return p, q


def discrete_gaussian_outcomes(sigma, sens, width):
    """(N_Z(Δ, σ²), N_Z(0, σ²)) on |x| ≤ width (the normaliser summed wider, to width + Δ)."""
    s2, d = mp.mpf(sigma) ** 2, int(sens)
    w = lambda x: mp.exp(-mp.mpf(x) ** 2 / (2 * s2))
    z = mp.fsum(w(x) for x in range(-width - d, width + d + 1))
    xs = range(-width, width + d + 1)
    return [w(x - d) / z for x in xs], [w(x) / z for x in xs]


def binomial_outcomes(n, p, shift=1):
    """(shift + Bin(n, p), Bin(n, p)) on {0, …, n + shift}."""
    p = mp.mpf(p)
    pmf = lambda k: mp.binomial(n, k) * p ** k * (1 - p) ** (n - k) if 0 <= k <= n else mp.mpf(0)
    return [pmf(k - shift) for k in range(n + shift + 1)], [pmf(k) for k in range(n + shift + 1)]


def poisson_remove(p, q, rate):
    """ZDW 2022, Thm 11 (1): ((1−q)Q + qP, Q)."""
    rate = mp.mpf(rate)
    return [(1 - rate) * b + rate * a for a, b in zip(p, q)], list(q)


def poisson_add(p, q, rate):
    """ZDW 2022, Thm 11 (1), add direction of a base whose add pair is (Q, P): (Q, (1−q)Q + qP)."""
    rate = mp.mpf(rate)
    return list(q), [(1 - rate) * b + rate * a for a, b in zip(p, q)]


def subset_pair(p, q, gamma):
    """Dong, Roth & Su 2022, Thm 4.2: the tight pair of C_γ(T(P, Q)) for a symmetric finite
    base (T(P,Q) = T(Q,P)): A = ((1−γ)Q + γP, Q) keeps its outcomes of positive loss,
    each mirrored (P- and Q-mass swapped), and the remaining mass 1 − Σ (a + b) sits at
    loss 0 under both laws. Its curve for ε ≥ 0 is A's, for ε < 0 that of A reversed,
    the conjugate of min(f_γ, f_γ⁻¹)**."""
    a_law, b_law = poisson_remove(p, q, gamma)
    kept = [(a, b) for a, b in zip(a_law, b_law) if a > 0 and (b == 0 or a > b)]
    z = 1 - mp.fsum(a + b for a, b in kept)
    assert z >= 0, "base pair not symmetric"
    return [a for a, _ in kept] + [b for _, b in kept] + [z], [b for _, b in kept] + [a for a, _ in kept] + [z]


# -- ε(δ) from δ(ε) ------------------------------------------------------------------------
def epsilon_of(delta_fn, target, rel=mp.mpf(10) ** -25):
    """(lo, hi) bracketing ε(δ) = inf{ε ≥ 0: δ(ε) ≤ target} of a non-increasing δ(ε):
    δ(lo) > target ≥ δ(hi), hi − lo ≤ rel·hi (Illinois steps on log δ, bisection where
    they stall or δ is 0). (0, 0) where δ(0) ≤ target, (inf, inf) where δ never reaches it."""
    target = mp.mpf(target)
    h = lambda e: _log_ratio(delta_fn(e), target)
    lo, hlo = mp.mpf(0), h(0)
    if hlo <= 0:
        return mp.mpf(0), mp.mpf(0)
    hi, hhi = mp.mpf(1), h(1)
    while hhi > 0:
        if hi > 1e6:
            return mp.inf, mp.inf
        lo, hlo, hi = hi, hhi, 2 * hi
        hhi = h(hi)
    side = 0
    for _ in range(400):
        if hi - lo <= rel * hi:
            break
        if mp.isinf(hhi) or mp.isinf(hlo):
            mid = (lo + hi) / 2
        else:
            mid = (lo * hhi - hi * hlo) / (hhi - hlo)
            if not lo < mid < hi or min(mid - lo, hi - mid) < (hi - lo) * mp.mpf(10) ** -6:
                mid = (lo + hi) / 2
        hm = h(mid)
        if hm > 0:
            lo, hlo = mid, hm
            if side == -1:
                hhi /= 2
            side = -1
        else:
            hi, hhi = mid, hm
            if side == 1:
                hlo /= 2
            side = 1
    return lo, hi


def _log_ratio(value, target):
    return -mp.inf if value <= 0 else mp.log(value) - mp.log(target)
