"""Independent exact values (mpmath) for the numerical tests.

Nothing here imports dpaccount: each oracle is written from the formula. The
working precision is set per test by the ``mp_precision`` fixture
(conftest.py: 50 digits unless a test is marked ``mp_dps(n)``), never here.
"""
import os

import mpmath as mp

# Float brute forces (a sum over a small support, written in the tests) are a second
# computational route, not an exact value: the library's answer is compared with them
# within their own documented rounding, two-sided, and the safe direction is asserted
# strictly only against the mpmath oracles below. The error assumed for one float
# elementary function (exp, log, expm1, log1p, erfc, ndtr, a scipy pmf) on any CPU is
# LIBM_ULPS: numpy's AVX-512 (SVML) float64 kernels are documented within 4 ulp (numpy
# PR #19478, which brought them in numpy 1.22), glibc's libm within 1-2 ulp for these
# (its x86_64 libm-test-ulps); they are not correctly rounded, so two routes to one number
# may differ by a few ulp, CPU-dependently (docs/portability.md; DPACCOUNT_ULP_NOISE=4
# runs the suite with every such call off by that much).
LIBM_ULPS = 4
ULP = 2.0 ** -52


def float_sum_slack(n_terms, mass=2.0):
    """How far a float brute force Σ_i (p_i − e^ε q_i)_+ over ``n_terms`` terms may be
    from the exact sum of its inputs' exact values: each term errs by at most
    (2·LIBM_ULPS + 2) ulp of p_i + e^ε q_i (p_i, e^ε and the product/difference), the
    float sum by n ulp of the total, and ``mass`` bounds Σ (p_i + e^ε q_i) over the
    terms that count (≤ 2 Σ p_i ≤ 2, since p_i > e^ε q_i there)."""
    return (2 * LIBM_ULPS + 2 + n_terms) * ULP * mass


# the shared reference cases (exact answers), beside the project's root when present
SHARED_REFERENCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "shared", "reference")


def gdp_delta(eps, mu):
    """δ(ε) of (N(μ,1), N(0,1)) (Balle & Wang 2018, Thm 8)."""
    eps, mu = mp.mpf(eps), mp.mpf(mu)
    return mp.ncdf(-eps / mu + mu / 2) - mp.e ** eps * mp.ncdf(-eps / mu - mu / 2)


def gdp_epsilon(delta, mu):
    """ε(δ) of μ-GDP by root finding on the oracle above."""
    return bisect_decreasing(lambda e: gdp_delta(e, mu), delta)


def bisect_decreasing(f, target, lo=0, hi=1, iters=200):
    """The ε ≥ lo with f(ε) = target for a decreasing f (lo if f(lo) ≤ target)."""
    target, lo, hi = mp.mpf(target), mp.mpf(lo), mp.mpf(hi)
    if f(lo) <= target:
        return lo
    while f(hi) > target:
        lo, hi = hi, 2 * hi
    for _ in range(iters):
        mid = (lo + hi) / 2
        if f(mid) > target:
            lo = mid
        else:
            hi = mid
    return hi


def rr_composed_delta(eps, p, k):
    """δ(ε) of k-fold randomized response: the loss is (2j − k)·a, j ~ Bin(k, p)."""
    p, eps = mp.mpf(p), mp.mpf(eps)
    total = mp.mpf(0)
    for j in range(k + 1):
        pj = mp.binomial(k, j) * p ** j * (1 - p) ** (k - j)
        qj = mp.binomial(k, j) * (1 - p) ** j * p ** (k - j)
        total += max(pj - mp.e ** eps * qj, 0)
    return total


def hockey_stick_quad(eps, logp, logq, lo, hi, breaks=()):
    """∫ (p − e^ε q)_+ over [lo, hi] by mpmath quadrature (densities in logs)."""
    eps = mp.mpf(eps)
    f = lambda x: max(mp.e ** logp(x) - mp.e ** (eps + logq(x)), 0)
    points = [mp.mpf(lo)] + [mp.mpf(b) for b in sorted(breaks)] + [mp.mpf(hi)]
    return mp.quad(f, points)


def normal_logpdf(x, m=0, s=1):
    x, m, s = mp.mpf(x), mp.mpf(m), mp.mpf(s)
    return -((x - m) ** 2) / (2 * s * s) - mp.log(s * mp.sqrt(2 * mp.pi))


def subsampled_gaussian_remove_delta(eps, sigma, q):
    """δ(ε) of ((1−q)N(0,σ²) + qN(1,σ²), N(0,σ²)) from its threshold form:
    the loss increases in x, so δ = P'(x > t) − e^ε Q(x > t)."""
    eps, sigma, q = mp.mpf(eps), mp.mpf(sigma), mp.mpf(q)
    if mp.e ** eps <= 1 - q:
        return 1 - mp.e ** eps
    # (1−q) + q e^{(2x−1)/(2σ²)} = e^ε
    t = sigma ** 2 * mp.log((mp.e ** eps - (1 - q)) / q) + mp.mpf(1) / 2
    tail = lambda m: 1 - mp.ncdf((t - m) / sigma)
    return (1 - q) * tail(0) + q * tail(1) - mp.e ** eps * tail(0)


def subsampled_gaussian_add_delta(eps, sigma, q):
    """δ(ε) of (N(0,σ²), (1−q)N(0,σ²) + qN(1,σ²)): loss decreases in x, so
    δ = P(x < t) − e^ε Q'(x < t) with (1−q) + q e^{(2t−1)/(2σ²)} = e^{−ε}."""
    eps, sigma, q = mp.mpf(eps), mp.mpf(sigma), mp.mpf(q)
    if mp.e ** (-eps) <= 1 - q:
        return mp.mpf(0)
    t = sigma ** 2 * mp.log((mp.e ** (-eps) - (1 - q)) / q) + mp.mpf(1) / 2
    cdf = lambda m: mp.ncdf((t - m) / sigma)
    return cdf(0) - mp.e ** eps * ((1 - q) * cdf(0) + q * cdf(1))


def laplace_delta_quad(eps, b):
    """δ(ε) of (Lap(1, b), Lap(0, b)) by quadrature of the densities."""
    b = mp.mpf(b)
    logp = lambda x: -abs(x - 1) / b - mp.log(2 * b)
    logq = lambda x: -abs(x) / b - mp.log(2 * b)
    kink = min(max((b * mp.mpf(eps) + 1) / 2, mp.mpf("1e-30")), 1 - mp.mpf("1e-30"))  # p = e^ε q
    return hockey_stick_quad(eps, logp, logq, -60 * b, 60 * b + 1, breaks=(0, kink, 1))


def discrete_delta(eps, atoms):
    """δ(ε) = Σ (p_i − e^ε q_i)_+ of a finite pair given as [(p_i, q_i)]."""
    eps = mp.mpf(eps)
    return sum(max(mp.mpf(p) - mp.e ** eps * mp.mpf(q), 0) for p, q in atoms)


# -- f-DP: exact trade-off curves (fractions.Fraction, no rounding) -------------
def gdp_tradeoff(alpha, mu):
    """G_μ(α) = Φ(Φ⁻¹(1 − α) − μ) (Dong, Roth & Su 2022, eq. 2.6), in mpmath."""
    alpha = mp.mpf(alpha)
    if alpha <= 0:
        return mp.mpf(1)
    if alpha >= 1:
        return mp.mpf(0)
    # Φ⁻¹(1 − α) = −Φ⁻¹(α) = sqrt(2)·erfinv(1 − 2α); mpmath has erfinv for |x| < 1
    z = -mp.sqrt(2) * mp.erfinv(2 * alpha - 1)
    return mp.ncdf(z - mu)


def np_vertices(p, q):
    """Vertices (α, β) of T(Q, P) for finite laws p, q (sequences of Fractions):
    the Neyman–Pearson tests reject the outcomes in decreasing order of p/q
    (q = 0 first), randomising within a level; α = Q-mass rejected,
    β = 1 − P-mass rejected. Exact enumeration."""
    from fractions import Fraction
    ratio = lambda i: (0, 0) if q[i] == 0 else (1, -Fraction(p[i]) / Fraction(q[i]))
    a, b = Fraction(0), Fraction(1)
    out = [(a, b)]
    for i in sorted(range(len(p)), key=ratio):
        a, b = a + Fraction(q[i]), b - Fraction(p[i])
        out.append((a, b))
    return out


def lower_hull(points):
    """The lower convex hull of points (α, β) (Fractions), sorted by α: the
    greatest convex minorant of the piecewise-linear curves through them."""
    pts = sorted(set(points))
    hull = []
    for pt in pts:
        while len(hull) >= 2:
            (x1, y1), (x2, y2) = hull[-2], hull[-1]
            if (x2 - x1) * (pt[1] - y1) - (y2 - y1) * (pt[0] - x1) <= 0:
                hull.pop()
            else:
                break
        hull.append(pt)
    return hull


def piecewise_linear(vertices, alpha):
    """Value at α of the piecewise-linear curve through sorted (α, β) vertices."""
    from fractions import Fraction
    x = Fraction(alpha)
    for (x1, y1), (x2, y2) in zip(vertices, vertices[1:]):
        if x1 <= x <= x2:
            return y1 if x2 == x1 else y1 + (y2 - y1) * (x - x1) / (x2 - x1)
    return vertices[-1][1] if x >= vertices[-1][0] else vertices[0][1]


def product_law(laws):
    """The product of finite laws (a list of (p, q) pairs of sequences): the
    laws of a composition, enumerated outcome by outcome."""
    from fractions import Fraction
    import itertools
    p_out, q_out = [], []
    for combo in itertools.product(*[range(len(p)) for p, _ in laws]):
        pp, qq = Fraction(1), Fraction(1)
        for (p, q), i in zip(laws, combo):
            pp, qq = pp * Fraction(p[i]), qq * Fraction(q[i])
        p_out.append(pp)
        q_out.append(qq)
    return p_out, q_out


def mechanism_tradeoff(p, q):
    """Exact curve of an add/remove mechanism whose remove pair is (P, Q) and
    add pair (Q, P): the greatest convex minorant of min(T(Q,P), T(P,Q))."""
    return lower_hull(np_vertices(p, q) + np_vertices(q, p))


def allocation_law(p, q, steps):
    """(P_t, Q^t) of one epoch of random allocation over t = ``steps`` steps of the finite
    pair (p, q) (Feldman & Shenfeld 2025: P_t = (1/t) Σ_i Q ⊗ … ⊗ P at step i ⊗ … ⊗ Q),
    as the laws of the count vector n (n_i steps with outcome i, a sufficient
    statistic): Q^t(n) = M(n) ∏ q_i^{n_i}, P_t(n) = M(n) Σ_i (n_i/t) p_i q_i^{n_i−1}
    ∏_{k≠i} q_k^{n_k}, M(n) the multinomial coefficient. Exact (Fractions of the inputs,
    floats taken at their binary value)."""
    from fractions import Fraction
    import itertools
    import math
    p, q = [Fraction(x) for x in p], [Fraction(x) for x in q]
    m, p_out, q_out = len(p), [], []
    for cuts in itertools.combinations(range(steps + m - 1), m - 1):  # stars and bars
        bounds = (-1,) + cuts + (steps + m - 1,)
        n = [bounds[i + 1] - bounds[i] - 1 for i in range(m)]
        coef = math.factorial(steps)
        for k in n:
            coef //= math.factorial(k)
        base = Fraction(coef)
        for qi, ni in zip(q, n):
            base *= qi ** ni if ni else 1
        q_out.append(base)
        pp = Fraction(0)
        for i in range(m):
            if n[i]:
                term = Fraction(coef * n[i], steps) * p[i] * (q[i] ** (n[i] - 1))
                for k in range(m):
                    if k != i and n[k]:
                        term *= q[k] ** n[k]
                pp += term
        p_out.append(pp)
    return p_out, q_out
