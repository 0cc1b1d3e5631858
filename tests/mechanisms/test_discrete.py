"""The discrete / user-defined mechanism zoo against exact values.

Oracles (mpmath, 50 digits, written from the definitions, not from the code):
sums over the integers, exact lattice convolution of loss distributions,
brute-force enumeration of product outcomes, closed forms (KOV 2015, the
discrete Laplace curve derived in ``_dlap_delta``), quadrature of densities.
"""
import itertools
import math

import mpmath as mp
import numpy as np
import pytest
from oracles import gdp_delta, hockey_stick_quad, rr_composed_delta
from scipy import stats
from scipy.signal import fftconvolve

from dpaccount.mechanisms.discrete import (ApproxDPMechanism, DiscreteGaussianMechanism,
                                           DiscreteLaplaceMechanism, ExponentialMechanism, PureDPMechanism)
from dpaccount.mechanisms.standard import BinomialMechanism
from dpaccount.mechanisms.user_defined import ContinuousMechanism, DiscreteMechanism
from dpaccount.pld.pairs.base import GaussianPair
from dpaccount.pld.pairs.zoo import LogisticPair, discrete_gaussian_pair
from dpaccount.pld.pairs.monotone_loss import MonotoneLossPair
from dpaccount.transformers.composition import Composition

EPS = [0.0, 0.3, 1.0, 2.0]


def _close(got, exact, rel=1e-9, abs_=1e-15):
    return abs(got - float(exact)) <= rel * abs(float(exact)) + abs_


def _certified(mech, eps, exact, rel=1e-3):
    """Default answer is an upper bound within ``rel``; the certified bounds contain it
    (``exact``: an mpmath value, so the safe directions are asserted strictly)."""
    up = mech.get_approx_delta(eps)
    assert exact <= up <= float(exact) * (1 + rel) + 1e-15
    b = mech.get_approx_delta_bounds(eps)
    assert b.lower <= exact <= b.upper


# -- exact loss distributions on a lattice --------------------------------------------
def _lattice_delta(pmf, g, eps):
    """δ(ε) = Σ_j P(L = jg)(1 − e^{ε − jg})_+ for {j: P-mass} (Q = P e^{−L})."""
    eps = mp.mpf(eps)
    return sum(m * (1 - mp.e ** (eps - j * g)) for j, m in pmf.items() if j * g > eps)


def _convolve(a, b):
    out = {}
    for i, x in a.items():
        for j, y in b.items():
            out[i + j] = out.get(i + j, 0) + x * y
    return out


def _power(pmf, k):
    out = pmf
    for _ in range(k - 1):
        out = _convolve(out, pmf)
    return out


def _dgauss_pmf(sigma, d, width):
    """P-law of the loss index j (L = j·g, g = d/(2σ²)) of (N_Z(d,σ²), N_Z(0,σ²)), |x| ≤ width."""
    s2 = mp.mpf(sigma) ** 2
    xs = range(-width, width + d + 1)
    z = mp.fsum(mp.e ** (-mp.mpf(x) ** 2 / (2 * s2)) for x in range(-width - d, width + d + 1))
    return {2 * x - d: mp.e ** (-mp.mpf(x - d) ** 2 / (2 * s2)) / z for x in xs}, mp.mpf(d) / (2 * s2)


@pytest.mark.parametrize("sigma,d", [(0.5, 1), (1.0, 1), (3.0, 2)])
def test_discrete_gaussian_single(sigma, d):
    pmf, g = _dgauss_pmf(sigma, d, int(60 * sigma + 60))
    pair, mech = discrete_gaussian_pair(sigma, d), DiscreteGaussianMechanism(sigma, d)
    for eps in [-0.5] + EPS:
        exact = _lattice_delta(pmf, g, eps)
        assert _close(pair.delta(eps), exact) and pair.delta(eps) >= exact  # exact: mpmath, strictly
        if eps >= 0:
            assert _close(mech.get_approx_delta(eps), exact)


@pytest.mark.parametrize("sigma,k", [(1.0, 3), (2.0, 5)])
def test_discrete_gaussian_composed(sigma, k):
    pmf, g = _dgauss_pmf(sigma, 1, int(12 * sigma + 12))  # dropped tails < e^{-72}: far below 1e-3·δ
    composed = _power(pmf, k)
    mech = Composition()([DiscreteGaussianMechanism(sigma)], [k])
    for eps in (0.5, 2.0):
        _certified(mech, eps, _lattice_delta(composed, g, eps))


@pytest.mark.parametrize("delta", [1e-3, 1e-6, 1e-10, 1e-14])
def test_discrete_gaussian_with_pure_dp_is_certified(delta):
    """DG(σ = 0.5) ⊗ ε₀ = 1 pure DP: atoms at 4x + 2 ± 1, the rare ones far above
    the bulk and off the grid. The exact ε(δ) (bisection on the atoms' δ in
    mpmath) lies in the certified interval, ≤ 0.1 % wide, and the default
    answer is within 0.1 % above it, from the exact atom sum and from the grids
    alone. (The optimistic grid once lowered the
    point above the atom at 10 to 0 and lost every loss above: [11.0, 14.99]
    at δ = 1e-10.)"""
    pmf, g = _dgauss_pmf(0.5, 1, 40)                      # g = 2: losses 2j
    e1 = mp.e / (1 + mp.e)
    composed = _convolve({2 * j: m for j, m in pmf.items()}, {1: e1, -1: 1 - e1})  # lattice 1
    lo, hi = mp.mpf(0), mp.mpf(40)
    for _ in range(80):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if _lattice_delta(composed, 1, mid) > delta else (lo, mid)
    exact = hi  # δ(hi) ≤ δ: hi ≥ the exact ε, within 40·2⁻⁸⁰
    mech = Composition()([DiscreteGaussianMechanism(0.5), PureDPMechanism(1.0)], [1, 1])
    got, b = mech.get_approxDP(delta), mech.get_approxDP_bounds(delta)
    assert lo <= got <= float(hi) * (1 + 1e-3)
    assert b.lower <= lo and hi <= b.upper and b.upper - b.lower <= 1e-3 * b.upper, (b, exact)
    # the grids themselves (the default route sums these few atoms exactly, pld/profiles/exact_sum.py)
    profile = mech.privacy_profile()
    low, up = profile.epsilon_lower(delta), profile.epsilon(delta)
    assert low <= lo and hi <= up and up - low <= 1e-3 * up, (low, up, exact)


def test_discrete_gaussian_rdp_is_an_upper_bound():
    """CKS 2020's αΔ²/(2σ²) against the brute-force Rényi divergence."""
    sigma = 0.7
    pmf, g = _dgauss_pmf(sigma, 1, 40)
    mech = DiscreteGaussianMechanism(sigma)
    for alpha in (1.5, 2.0, 8.0):
        exact = mp.log(mp.fsum(m * mp.e ** ((alpha - 1) * j * g) for j, m in pmf.items())) / (alpha - 1)
        assert float(exact) <= mech.get_RDP(alpha) <= alpha / (2 * sigma ** 2) * (1 + 1e-12)


# -- discrete Laplace --------------------------------------------------------------------
def _dlap_delta(eps, t, d):
    """Closed form. With s = 1/t, ρ = e^{−s}, L > ε ⇔ x ≥ x₀ = ⌊(ε/s + d)/2⌋ + 1;
    P(X ≥ x₀) = 1 − ρ^{d−x₀+1}/(1+ρ), Q(X ≥ x₀) = ρ^{x₀}/(1+ρ) for 1 ≤ x₀ ≤ d, so
    δ(ε) = 1 − (ρ^{d−x₀+1} + e^ε ρ^{x₀})/(1+ρ); 1 − e^ε below −ds, 0 from ds on."""
    eps, s = mp.mpf(eps), 1 / mp.mpf(t)
    rho = mp.e ** (-s)
    if eps < -d * s:
        return 1 - mp.e ** eps
    if eps >= d * s:
        return mp.mpf(0)
    x0 = int(mp.floor((eps / s + d) / 2)) + 1
    return 1 - (rho ** (d - x0 + 1) + mp.e ** eps * rho ** x0) / (1 + rho)


def _dlap_pmf(t, d):
    """P-law of the loss index j = |x| − |x−d| (L = j/t) by summing over x ∈ Z."""
    s, m = 1 / mp.mpf(t), int(80 * t + 80)
    z = mp.fsum(mp.e ** (-abs(x) * s) for x in range(-m - d, m + d + 1))
    out = {}
    for x in range(-m, m + d + 1):
        j = abs(x) - abs(x - d)
        out[j] = out.get(j, 0) + mp.e ** (-abs(x - d) * s) / z
    return out, s


@pytest.mark.parametrize("t,d", [(0.5, 1), (2.0, 3), (1.3, 2)])
def test_discrete_laplace_single(t, d):
    pmf, s = _dlap_pmf(t, d)
    mech = DiscreteLaplaceMechanism(t, d)
    pair = mech.pairs.remove[0][0]
    for eps in [-2.0, -0.4] + EPS + [d / t - 1e-9, d / t]:
        exact = _dlap_delta(eps, t, d)
        assert abs(exact - _lattice_delta(pmf, s, eps)) <= 1e-30  # the oracle's own check
        # near ε = Δ/t, p − e^ε q cancels: absolute rounding ~1e-15, padded upwards. At
        # ε = fl(Δ/t) itself the top atom's rounded loss may be ≤ ε while the exact one is
        # above (exact δ ~ 6e-17): the upper value pays 2τp ~ 1e-14 for such atoms.
        assert exact <= pair.delta(eps) <= exact * (1 + 1e-9) + 2e-14
        assert pair.delta(eps, upper=False) <= exact
        if eps >= 0:
            assert exact <= mech.get_approx_delta(eps) <= exact * (1 + 1e-9) + 2e-14
            assert exact <= mech.get_approx_delta(eps, method="pld")


def test_discrete_laplace_composed_and_rdp():
    t, d, k = 1.5, 2, 4
    pmf, s = _dlap_pmf(t, d)
    mech = Composition()([DiscreteLaplaceMechanism(t, d)], [k])
    composed = _power(pmf, k)
    for eps in (0.5, 2.0):
        _certified(mech, eps, _lattice_delta(composed, s, eps))
    for alpha in (1.5, 4.0):
        exact = mp.log(mp.fsum(m * mp.e ** ((alpha - 1) * j * s) for j, m in pmf.items())) / (alpha - 1)
        assert _close(DiscreteLaplaceMechanism(t, d).get_RDP(alpha), exact)


# -- pure and approximate DP ---------------------------------------------------------------
def test_pure_dp_composed_against_binomial_sum():
    e0, k = 0.4, 10
    p = mp.e ** e0 / (1 + mp.e ** e0)
    mech = Composition()([PureDPMechanism(e0)], [k])
    for eps in (0.0, 1.0, 2.5):
        _certified(mech, eps, rr_composed_delta(eps, p, k))
    assert _close(PureDPMechanism(e0).get_approx_delta(0.1), rr_composed_delta(0.1, p, 1))


def _kov_delta(i, e0, d0, k):
    """KOV 2015 Thm 3.3: (k−2i)ε₀ is met with δ = 1 − (1−δ₀)^k (1 − δ_i),
    δ_i = Σ_{l<i} C(k,l)(e^{(k−l)ε₀} − e^{(k−2i+l)ε₀}) / (1+e^{ε₀})^k."""
    e0, d0 = mp.mpf(e0), mp.mpf(d0)
    di = mp.fsum(mp.binomial(k, l) * (mp.e ** ((k - l) * e0) - mp.e ** ((k - 2 * i + l) * e0))
                 for l in range(i)) / (1 + mp.e ** e0) ** k
    return 1 - (1 - d0) ** k * (1 - di)


def test_approx_dp_single_and_composed():
    e0, d0, k = 0.3, 1e-4, 5
    one = ApproxDPMechanism(e0, d0)
    # ε = ε₀ sits on the atoms at ±ε₀: the upper value pays 2τp ~ 1e-15 for their rounding
    assert d0 <= one.get_approx_delta(e0) <= d0 * (1 + 1e-10)
    assert one.get_approx_delta(2 * e0) == pytest.approx(d0, rel=1e-12)
    mech = Composition()([one], [k])
    for i in (1, 2):
        _certified(mech, (k - 2 * i) * e0, _kov_delta(i, e0, d0, k))


# -- user-given finite pairs ----------------------------------------------------------------
def _brute_delta(p, q, k, eps):
    """max over both orders of Σ over outcome tuples of (Π p − e^ε Π q)_+."""
    worst = mp.mpf(0)
    for a, b in ((p, q), (q, p)):
        total = mp.mpf(0)
        for idx in itertools.product(range(len(p)), repeat=k):
            pa = mp.fprod(mp.mpf(a[i]) for i in idx)
            qb = mp.fprod(mp.mpf(b[i]) for i in idx)
            total += max(pa - mp.e ** eps * qb, 0)
        worst = max(worst, total)
    return worst


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_discrete_mechanism_against_enumeration(seed):
    rng = np.random.default_rng(seed)
    n = 3
    p = rng.dirichlet(np.ones(n))
    q = rng.dirichlet(np.ones(n))
    if seed == 2:
        q = np.array([0.0, q[1] / (q[1] + q[2]), q[2] / (q[1] + q[2])])  # mass at L = +∞
    mech = DiscreteMechanism(p, q)
    for k in (1, 2, 3):
        comp = Composition()([mech], [k])
        for eps in (0.0, 0.5, 1.5):
            exact = _brute_delta(p, q, k, eps)
            up = comp.get_approx_delta(eps)
            assert float(exact) * (1 - 1e-12) <= up <= float(exact) * 1.001 + 1e-15


# -- exponential mechanism (logistic pair) and monotone-loss pairs ------------------------------
def _logistic_logpdf(loc):
    return lambda x: -(x - loc) - 2 * mp.log1p(mp.e ** (-(x - loc)))


@pytest.mark.parametrize("e0", [0.3, 3.0])
def test_logistic_pair_against_quadrature_and_bounded_range(e0):
    pair = LogisticPair(e0)
    mono = MonotoneLossPair(stats.logistic(loc=e0), stats.logistic())
    for eps in (-e0 - 0.5, -0.5 * e0, 0.0, 0.5 * e0, 0.9 * e0):
        # p > e^ε q ⇔ x > x*, the point where the loss equals ε
        r = mp.e ** ((mp.mpf(eps) - e0) / 2)
        kink = -mp.log((1 - r) / (r * mp.e ** e0 - 1)) if -e0 < eps < e0 else 0
        with mp.workdps(20):  # ample for a 1e-10 comparison, and 4x faster
            exact = hockey_stick_quad(eps, _logistic_logpdf(e0), _logistic_logpdf(0), -80, 80 + e0, (kink,))
        assert _close(pair.delta(eps), exact) and pair.delta(eps) >= exact
        assert _close(mono.delta(eps), exact, rel=1e-10) and mono.delta(eps) >= exact
        # the envelope of Dong–Durfee–Rogers' two-point ε-BR pairs over t ∈ [0, ε₀]
        t = np.linspace(0, e0, 20001)
        env = np.max(-np.expm1(t - e0) / -math.expm1(-e0) * np.maximum(-np.expm1(eps - t), 0))
        assert env * (1 - 1e-12) <= pair.delta(eps) <= env + 1e-7
    edges = np.linspace(-e0, e0, 7)
    for got, want in zip(mono.masses(edges), pair.masses(edges)):
        assert np.allclose(got, want, rtol=1e-9, atol=1e-14)


def test_exponential_mechanism_rdp_and_dominance_over_pure_dp():
    e0 = 1.2
    mech = ExponentialMechanism(e0)
    for alpha in (1.5, 10.0):
        f = lambda x: mp.e ** (alpha * _logistic_logpdf(e0)(x) + (1 - alpha) * _logistic_logpdf(0)(x))
        with mp.workdps(20):
            exact = mp.log(mp.quad(f, [-80, 0, e0, 80])) / (alpha - 1)
        # the logistic pair dominates every ε-BR pair, but the ε-BR bound itself is
        # below its Rényi divergence (tests/rdp/test_bounded_range.py checks it exactly)
        assert mech.get_RDP(alpha) < exact
        assert mech.get_RDP(alpha) <= PureDPMechanism(e0).get_RDP(alpha)
    for eps in (0.0, 0.5, 1.0):
        assert mech.get_approx_delta(eps) <= PureDPMechanism(e0).get_approx_delta(eps)


def test_monotone_pair_gaussian_and_continuous_mechanism():
    mu = 0.8
    mono, exact_pair = MonotoneLossPair(stats.norm(loc=mu), stats.norm()), GaussianPair(mu)
    edges = np.linspace(-6, 6, 25)
    for pair in (mono, mono.reverse()):
        for got, want in zip(pair.masses(edges), exact_pair.masses(edges)):
            assert np.allclose(got, want, rtol=1e-12, atol=1e-300)
        for eps in (-1.0, 0.0, 0.5, 2.0):
            assert _close(pair.delta(eps), gdp_delta(eps, mu), rel=1e-12) and pair.delta(eps) >= gdp_delta(eps, mu)
    mech = Composition()([ContinuousMechanism(stats.norm(loc=mu), stats.norm())], [3])
    _certified(mech, 1.0, gdp_delta(1.0, mu * math.sqrt(3)))


# -- Koskela & Honkela 2021, Tables 1–2: binomial, N = 1000, p = 0.5, k = 20 ----------------
def _binomial_bracket(n, p, k, eps, h=2e-5, cut=1e-25):
    """A certified bracket of δ(ε) = E_P[(1 − e^{ε−L})_+], L = Σ L_i: rounding every
    L_i = log(x/(n+1−x)) + log((1−p)/p) down (up) to the lattice hZ lowers (raises) L
    and hence δ. P-masses below ``cut`` are dropped (lower) or put at L = +∞ (upper).
    The k-fold law is an FFT convolution (float noise ~1e-16 of the peak per bin,
    far below the bracket's width; negative noise is clipped)."""
    x = np.arange(1, n + 1, dtype=float)
    log_pm = np.array([math.lgamma(n + 1) - math.lgamma(i) - math.lgamma(n + 2 - i)
                       for i in range(1, n + 1)]) + (x - 1) * math.log(p) + (n + 1 - x) * math.log1p(-p)
    keep = log_pm > math.log(cut)
    pm, loss = np.exp(log_pm[keep]), np.log(x[keep]) - np.log(n + 1 - x[keep]) + math.log((1 - p) / p)
    dropped = max(1.0 - math.fsum(pm), 0.0) + 1e-15
    out = []
    for rnd in (np.floor, np.ceil):
        j = rnd(loss / h).astype(np.int64)
        pmf, off = np.zeros(j.max() - j.min() + 1), j.min()
        np.add.at(pmf, j - off, pm)
        acc, acc_off, base, base_off, m = None, 0, pmf, off, k
        while m:  # binary powering
            if m & 1:
                acc, acc_off = (base, base_off) if acc is None else (
                    np.maximum(fftconvolve(acc, base), 0.0), acc_off + base_off)
            m >>= 1
            if m:
                base, base_off = np.maximum(fftconvolve(base, base), 0.0), 2 * base_off
        ls = (np.arange(len(acc)) + acc_off) * h
        live = ls > eps
        out.append(math.fsum(acc[live] * -np.expm1(eps - ls[live])))
    return out[0] * (1 - 1e-9), out[1] * (1 + 1e-9) + k * dropped


def test_binomial_koskela_honkela():
    mech = Composition()([BinomialMechanism(1000, 0.5)], [20])
    lo, hi = _binomial_bracket(1000, 0.5, 20, 1.0)
    b = mech.get_approx_delta_bounds(1.0)
    assert lo <= b.upper and b.lower <= hi and lo <= mech.get_approx_delta(1.0)
    assert b.upper - b.lower <= 1e-3 * b.upper  # so upper ≤ 1.001 × exact
    # KH Table 1 (n = 1e8): δ ≈ 2.35011e-5 with discretisation error ≤ 6.31e-9
    assert b.lower <= 2.35011e-5 + 1e-10 and 2.35011e-5 - 6.31e-9 <= b.upper
    assert mech.get_approx_delta(1.0) <= 1.001 * (2.35011e-5 - 6.31e-9)


# -- validation ------------------------------------------------------------------------------
@pytest.mark.parametrize("build,name", [
    (lambda: DiscreteGaussianMechanism(0.0), "sigma"), (lambda: DiscreteGaussianMechanism(1.0, 1.5), "sensitivity"),
    (lambda: DiscreteLaplaceMechanism(-1.0), "t"), (lambda: DiscreteLaplaceMechanism(1.0, 0), "sensitivity"),
    (lambda: PureDPMechanism(float("nan")), "eps"), (lambda: ApproxDPMechanism(1.0, 1.0), "delta"),
    (lambda: ApproxDPMechanism(-0.1, 0.1), "eps"), (lambda: ExponentialMechanism(-2), "eps"),
    (lambda: DiscreteMechanism([0.5, 0.6], [0.5, 0.5]), "p_probs"),
    (lambda: DiscreteMechanism([0.5, 0.5], [1.5, -0.5]), "q_probs"),
    (lambda: DiscreteMechanism([0.5, 0.5], [1.0]), "p_probs and q_probs"),
    (lambda: DiscreteMechanism([0.5, float("nan")], [0.5, 0.5]), "p_probs"),
    (lambda: ContinuousMechanism(stats.norm(), stats.norm(loc=1.0)), "p_dist"),
])
def test_value_errors_name_the_parameter(build, name):
    with pytest.raises(ValueError, match=name):
        build()


@pytest.mark.parametrize("build,name", [
    (lambda: DiscreteGaussianMechanism("1"), "sigma"), (lambda: PureDPMechanism(True), "eps"),
    (lambda: DiscreteMechanism("ab", [0.5, 0.5]), "p_probs"),
    (lambda: DiscreteMechanism([0.5, 0.5], ["a", "b"]), "q_probs"),
    (lambda: ContinuousMechanism(stats.norm(), 3.0), "q_dist"),
])
def test_type_errors_name_the_parameter(build, name):
    with pytest.raises(TypeError, match=name):
        build()
