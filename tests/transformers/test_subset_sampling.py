"""Sampling without replacement (``SubsetSampling``) against brute force.

A dataset of n records (bits, or pairs of bits) is subsampled to a batch of
m records, every one of the C(n, m) batches equally likely, and a base
mechanism with a finite output set runs on the batch. The output laws of
every dataset D and every replace-one neighbour D' are enumerated exactly
(float sums of at most a few hundred non-negative terms, ~1e-15), and the
worst case over all ordered pairs of

    δ(ε) = Σ_y max(P_D(y) − e^ε P_D'(y), 0)        (and Rényi divergences, mpmath)

is compared with the library: never below it, and equal to it where the
theory says the bound is attained (Dong, Roth & Su 2022, Thm 4.2: the base
"randomized response on the OR of the batch" is the extremal case).
"""
import itertools
import math

import mpmath as mp
import numpy as np
import pytest
from oracles import bisect_decreasing, float_sum_slack, gdp_delta
from scipy import stats

from dpaccount.errors import RepresentationUnavailable
from dpaccount.mechanisms.standard import BinomialMechanism, GaussianMechanism, RandomizedResponse
from dpaccount.transformers.composition import Composition
from dpaccount.transformers.subset_sampling import SubsetSampling

EPS = [0.0, 0.05, 0.2, 0.5, 1.0, 2.0]
# the brute forces below (worst_delta) are a second route, compared within their own rounding
# (oracles.py): float sums over ≤ 64 outcomes (k ≤ 3 runs of laws of ≤ 10 outcomes) of
# probabilities that are themselves float sums of ≤ a few hundred terms: 512 covers both
ORACLE_SLACK = float_sum_slack(512)
P_RR = 0.8


# ---------------------------------------------------------------- brute force
def rr_bit(p):
    """Randomized response on a bit b(batch): the law of the output bit."""
    return lambda b: np.array([1 - p, p]) if b else np.array([p, 1 - p])


def base_or_rr(batch, p=P_RR):
    return rr_bit(p)(any(batch))


def base_threshold_rr(batch, p=P_RR):
    return rr_bit(p)(sum(batch) >= 2)


def base_count_binomial(batch, trials=6, theta=0.5):
    """sum(batch) + Bin(trials, θ): replace-one sensitivity 1."""
    out = np.zeros(len(batch) + trials + 1)
    s = sum(batch)
    out[s:s + trials + 1] = stats.binom.pmf(np.arange(trials + 1), trials, theta)
    return out


def base_sum_local_rr(batch, p=P_RR):
    """The number of ones after flipping each record's bit w.p. 1 − p."""
    out = np.array([1.0])
    for x in batch:
        out = np.convolve(out, rr_bit(p)(x))
    return out


def subsampled_law(data, m, base):
    """Output law of ``base`` on a uniformly drawn m-subset of ``data``."""
    batches = list(itertools.combinations(range(len(data)), m))
    laws = [base(tuple(data[i] for i in b)) for b in batches]
    return sum(laws) / len(batches)


def neighbour_pairs(n, values=(0, 1)):
    """Every ordered replace-one pair (D, D') of datasets of n records."""
    for data in itertools.product(values, repeat=n):
        for i in range(n):
            for y in values:
                if y != data[i]:
                    yield data, data[:i] + (y,) + data[i + 1:]


def hockey(p, q, eps):
    return float(np.maximum(p - math.exp(eps) * q, 0.0).sum())


def worst_delta(n, m, base, eps_list, steps=1, values=(0, 1), bases=None):
    """max over ordered neighbours of δ(ε) of ``steps`` independent runs.
    ``bases``: a list of base mechanisms, one per step (default ``base`` each time)."""
    bases = bases or [base] * steps
    worst = np.zeros(len(eps_list))
    for d, d2 in neighbour_pairs(n, values):
        p, q = np.array([1.0]), np.array([1.0])
        for b in bases:
            p = np.outer(p, subsampled_law(d, m, b)).ravel()
            q = np.outer(q, subsampled_law(d2, m, b)).ravel()
        worst = np.maximum(worst, [hockey(p, q, e) for e in eps_list])
    return worst


def worst_renyi(n, m, base, alpha):
    """max over ordered neighbours of D_α (mpmath, 50 digits); +inf if Q misses P's support."""
    worst = mp.mpf(0)
    a = mp.mpf(alpha)
    for d, d2 in neighbour_pairs(n):
        p, q = subsampled_law(d, m, base), subsampled_law(d2, m, base)
        s = mp.mpf(0)
        for pi, qi in zip(p, q):
            if pi > 0:
                if qi == 0:
                    return mp.inf
                s += mp.mpf(pi) ** a * mp.mpf(qi) ** (1 - a)
        worst = max(worst, mp.log(s) / (a - 1))
    return worst


def subset_rr(n, m, p=P_RR):
    return SubsetSampling()(RandomizedResponse(p, relation="replace-one"), m / n)


# ---------------------------------------------------------------- single use
@pytest.mark.parametrize("n,m", [(4, 2), (5, 2), (6, 3)])
def test_or_rr_is_tight_and_sound(n, m):
    """RR on the OR of the batch attains C_γ(f): our curve is the worst case, to 1e-12."""
    exact = worst_delta(n, m, base_or_rr, EPS)
    mech = subset_rr(n, m)
    assert mech.available_methods()[0] == "analytic"
    ours = mech.get_approx_delta(EPS)
    assert np.all(ours >= exact - ORACLE_SLACK)
    np.testing.assert_allclose(ours, exact, rtol=1e-12, atol=1e-15)
    pld = mech.get_approx_delta(EPS, method="pld")
    assert np.all(pld >= exact - ORACLE_SLACK)
    np.testing.assert_allclose(pld, exact, rtol=2e-3)


def test_or_rr_bounds_bracket_the_exact_curve():
    """(ε where δ > 0; the optimistic grid moves the off-grid atoms ±0.79 down, a
    first-order error, so the interval is asked to 5e-3, which it reaches.)"""
    eps = [0.05, 0.2, 0.5]
    exact = worst_delta(5, 2, base_or_rr, eps)
    b = subset_rr(5, 2).get_approx_delta_bounds(eps, method="pld", accuracy=5e-3)
    assert np.all(b.lower <= exact + ORACLE_SLACK) and np.all(exact <= b.upper + ORACLE_SLACK)


def test_or_rr_epsilon_matches_brute_force():
    """ε(δ): our answer is ≥ the brute-force ε (bisection on the exact curve) and equal to it."""
    mech = subset_rr(5, 2)
    for delta in (0.01, 0.05, 0.1):
        exact = float(bisect_decreasing(lambda e: worst_delta(5, 2, base_or_rr, [float(e)])[0], delta,
                                        iters=60))
        ours = mech.get_approxDP(delta)
        assert ours >= exact - 1e-9
        assert ours == pytest.approx(exact, rel=1e-8, abs=1e-9)
        lo, hi = mech.get_approxDP_bounds(delta, method="pld", accuracy=5e-3)[:2]
        assert lo <= exact + 1e-9 <= hi + 2e-9


@pytest.mark.parametrize("base,lib", [
    (base_threshold_rr, lambda: RandomizedResponse(P_RR, relation="replace-one")),
    (base_sum_local_rr, lambda: RandomizedResponse(P_RR, relation="replace-one")),
    (base_count_binomial, lambda: BinomialMechanism(6, 0.5, 1, relation="replace-one")),
])
@pytest.mark.parametrize("n,m", [(4, 2), (5, 3)])
def test_other_bases_never_under_report(base, lib, n, m):
    exact = worst_delta(n, m, base, EPS)
    mech = SubsetSampling()(lib(), m / n)
    for method in mech.available_methods():
        if method == "rdp":
            continue
        assert np.all(mech.get_approx_delta(EPS, method=method) >= exact - ORACLE_SLACK), method


def test_binomial_base_is_tight_where_the_count_moves_by_one():
    """count + Bin: the pair with one 1 against all 0s attains the ε ≥ 0 curve of the
    symmetric hull (shift +1 and −1 give the two orders), up to its 1e-12 pads."""
    exact = worst_delta(5, 2, base_count_binomial, EPS)
    ours = SubsetSampling()(BinomialMechanism(6, 0.5, 1, relation="replace-one"), 0.4).get_approx_delta(EPS)
    np.testing.assert_allclose(ours, exact, rtol=1e-9, atol=1e-14)


# ---------------------------------------------------------------- compositions
def base_and_rr(batch, p=P_RR):
    """RR on the AND of the batch's second attributes (the reversed orientation)."""
    return rr_bit(p)(all(v for _, v in batch))


def base_or_rr_first(batch, p=P_RR):
    return rr_bit(p)(any(u for u, _ in batch))


@pytest.mark.parametrize("k", [2, 3])
def test_composition_never_under_reports(k):
    """k runs, each orientation pattern (OR of the first attribute, or AND of the
    second: pairs A and A reversed) on records in {0,1}², n = 4, m = 2."""
    values = tuple(itertools.product((0, 1), repeat=2))
    exact = np.zeros(len(EPS))
    for pattern in itertools.product((base_or_rr_first, base_and_rr), repeat=k):
        if pattern[0] is base_and_rr:  # patterns and their complements are the same up to relabelling
            continue
        exact = np.maximum(exact, worst_delta(4, 2, None, EPS, values=values, bases=list(pattern)))
    mech = Composition()([subset_rr(4, 2)], [k])
    assert mech.relation == "replace-one"
    ours = mech.get_approx_delta(EPS)
    assert np.all(ours >= exact - ORACLE_SLACK)
    # and within the accuracy of the exact k-fold product of the symmetric pair
    np.testing.assert_allclose(ours, symmetric_pair_composed(0.5, P_RR, k, EPS), rtol=2e-3, atol=1e-12)


def symmetric_pair_composed(gamma, p, k, eps_list):
    """Exact δ(ε) of the k-fold product of the symmetric pair of C_γ(RR(p)),
    written from the module docstring's construction (3 atoms)."""
    pa, qa = gamma * p + (1 - gamma) * (1 - p), 1 - p        # A at its positive loss
    zero = 1 - pa - qa
    atoms = [(pa, qa), (qa, pa), (zero, zero)]
    out = []
    for e in eps_list:
        total = 0.0
        for combo in itertools.product(atoms, repeat=k):
            pp, qq = np.prod([c[0] for c in combo]), np.prod([c[1] for c in combo])
            total += max(pp - math.exp(e) * qq, 0.0)
        out.append(total)
    return np.array(out)


def test_mixed_orientations_reach_beyond_a_single_orientation():
    """Why both orders must be covered: with k = 2 the pattern (A, A reversed)
    exceeds (A, A) at some ε, and our answer covers it."""
    values = tuple(itertools.product((0, 1), repeat=2))
    same = worst_delta(4, 2, None, EPS, values=values, bases=[base_or_rr_first, base_or_rr_first])
    mixed = worst_delta(4, 2, None, EPS, values=values, bases=[base_or_rr_first, base_and_rr])
    assert np.any(mixed > same + 1e-6)
    assert np.all(Composition()([subset_rr(4, 2)], [2]).get_approx_delta(EPS) >= np.maximum(same, mixed) - ORACLE_SLACK)


# ---------------------------------------------------------------- RDP
@pytest.mark.parametrize("alpha", [1.5, 2.0, 3.0, 4.5, 8.0])
def test_rdp_is_above_the_exact_renyi_divergence(alpha):
    for base, lib in ((base_or_rr, RandomizedResponse(P_RR, relation="replace-one")),
                      (base_sum_local_rr, RandomizedResponse(P_RR, relation="replace-one"))):
        exact = worst_renyi(5, 2, base, alpha)
        assert SubsetSampling()(lib, 0.4).get_RDP(alpha) >= exact  # exact: mpmath, strictly


def rr_renyi(p, alpha):
    p, a = mp.mpf(p), mp.mpf(alpha)
    return mp.log(p ** a * (1 - p) ** (1 - a) + (1 - p) ** a * p ** (1 - a)) / (a - 1)


def wbk(gamma, alpha, eps_of, eps_inf):
    """Wang, Balle & Kasiviswanathan 2019, Thm 9, written out in mpmath (integer α)."""
    g = mp.mpf(gamma)
    cap = lambda j: 2 if eps_inf == mp.inf else min(2, (mp.e ** eps_inf - 1) ** j)
    s = 1 + g ** 2 * mp.binomial(alpha, 2) * min(4 * (mp.e ** eps_of(2) - 1), mp.e ** eps_of(2) * cap(2))
    for j in range(3, alpha + 1):
        s += g ** j * mp.binomial(alpha, j) * mp.e ** ((j - 1) * eps_of(j)) * cap(j)
    return mp.log(s) / (alpha - 1)


@pytest.mark.parametrize("gamma,p", [(0.05, 0.8), (0.2, 0.9), (0.5, 0.6)])
@pytest.mark.parametrize("alpha", [2, 3, 5, 8])
def test_rdp_is_the_least_of_wbk_the_base_and_the_pure_bound(gamma, p, alpha):
    eps_inf = mp.log(mp.mpf(p) / (1 - mp.mpf(p)))
    theirs = min(wbk(gamma, alpha, lambda j: rr_renyi(p, j), eps_inf), rr_renyi(p, alpha),
                 mp.log(1 + gamma * (mp.e ** eps_inf - 1)))
    ours = SubsetSampling()(RandomizedResponse(p, relation="replace-one"), gamma).get_RDP(float(alpha))
    assert ours >= float(theirs)
    assert ours == pytest.approx(float(theirs), rel=1e-12)


@pytest.mark.parametrize("alpha", [2, 3, 6])
def test_rdp_of_the_gaussian_is_wbk_with_no_pure_level(alpha):
    gamma, sigma = 0.1, 2.0
    theirs = wbk(gamma, alpha, lambda j: mp.mpf(j) / (2 * sigma ** 2), mp.inf)
    assert theirs < mp.mpf(alpha) / (2 * sigma ** 2)  # the theorem, not the base, is active
    ours = SubsetSampling()(GaussianMechanism(sigma, relation="replace-one"), gamma).get_RDP(float(alpha))
    assert ours == pytest.approx(float(theirs), rel=1e-12) and ours >= float(theirs)


def test_rdp_fractional_orders_interpolate_the_cumulant():
    """(α−1)ε(α) is interpolated linearly between integer orders (convexity)."""
    gamma, sigma = 0.1, 2.0
    lam = lambda a: (a - 1) * wbk(gamma, a, lambda j: mp.mpf(j) / (2 * sigma ** 2), mp.inf)
    theirs = (0.7 * lam(3) + 0.3 * lam(4)) / mp.mpf(2.3)
    ours = SubsetSampling()(GaussianMechanism(sigma, relation="replace-one"), gamma).get_RDP(3.3)
    assert ours == pytest.approx(float(theirs), rel=1e-12) and ours >= float(theirs)


# ---------------------------------------------------------------- closed forms
@pytest.mark.parametrize("gamma", [0.01, 0.3, 1.0])
def test_gaussian_curve_is_the_advanced_joint_convexity_identity(gamma):
    """ε ≥ 0: γ·H_{1+(e^ε−1)/γ}(N(μ,1)||N(0,1)), written with the mpmath oracle."""
    mu = 1.5
    mech = SubsetSampling()(GaussianMechanism(1.0, mu, relation="replace-one"), gamma)
    for eps in (0.0, 0.1, 0.7, 2.0):
        exact = gamma * gdp_delta(mp.log(1 + (mp.e ** eps - 1) / gamma), mu)
        ours = mech.get_approx_delta(eps)
        assert ours >= float(exact) and ours == pytest.approx(float(exact), rel=1e-10)


def test_gamma_one_is_the_base():
    base = GaussianMechanism(1.3, relation="replace-one")
    np.testing.assert_allclose(SubsetSampling()(base, 1.0).get_approx_delta(EPS), base.get_approx_delta(EPS),
                               rtol=1e-12)


def test_nested_sampling_multiplies_the_rates():
    """Sampling a γ₁-subset of a γ₂-subset is a γ₁γ₂-subset (exactly, for uniform subsets)."""
    rr = RandomizedResponse(0.7, relation="replace-one")
    nested = SubsetSampling()(SubsetSampling()(rr, 0.5), 0.4)
    np.testing.assert_allclose(nested.get_approx_delta(EPS), SubsetSampling()(rr, 0.2).get_approx_delta(EPS),
                               rtol=1e-12, atol=1e-15)


# ---------------------------------------------------------------- API
def test_relation_and_validation():
    rr = RandomizedResponse(0.7, relation="replace-one")
    assert SubsetSampling()(rr, 0.3).relation == "replace-one"
    with pytest.raises(ValueError, match="add/remove"):
        SubsetSampling()(RandomizedResponse(0.7), 0.3)
    with pytest.raises(ValueError, match="gamma"):
        SubsetSampling()(rr, 0.0)
    with pytest.raises(ValueError, match="gamma"):
        SubsetSampling()(rr, 1.5)
    with pytest.raises(TypeError, match="mechanism"):
        SubsetSampling()("rr", 0.3)


def test_composed_base_has_rdp_only():
    rr = RandomizedResponse(0.7, relation="replace-one")
    mech = SubsetSampling()(Composition()([rr], [2]), 0.3)
    assert mech.available_methods() == ["rdp"]
    with pytest.raises(RepresentationUnavailable, match="composition"):
        mech.pairs


def test_the_symmetric_pair_masses_match_its_three_atoms():
    """RR base: atoms ±ℓ, 0 with the masses of the module docstring, in every cell
    layout (edges on the atoms, just beside them, or far away). An atom within
    rounding of an edge may fall on either side of it: the cumulative masses lie
    between those of the two placements."""
    gamma, p = 0.3, 0.8
    pair = subset_rr(10, 3, p).pairs.remove[0][0]
    pa, qa = gamma * p + (1 - gamma) * (1 - p), 1 - p
    ell = math.log(pa / qa)
    atoms = [(-ell, qa, pa), (0.0, 1 - pa - qa, 1 - pa - qa), (ell, pa, qa)]
    lp, lq = pair.atom_masses(np.array([-ell, 0.0, ell]))
    # the atom at 0 is rounded up by its two cells' error bounds (8 ulp each) and 8 ulp: 24u in all
    zero_pad = 24 * np.finfo(float).eps
    np.testing.assert_allclose(lp, [a[1] for a in atoms], rtol=1e-14, atol=zero_pad)
    np.testing.assert_allclose(lq, [a[2] for a in atoms], rtol=1e-14, atol=zero_pad)
    for edges in ([-ell, 0.0, ell], [-ell - 1e-6, -ell + 1e-6, 1e-6, ell + 1e-6], [-3.0, -2.0, 2.5],
                  np.linspace(-1.0, 1.0, 17)):
        edges = np.asarray(edges, dtype=float)
        a, b = pair.masses(edges)
        for got, col in ((a, 1), (b, 2)):
            placed = []
            for side in (-1, 1):  # atoms at an edge in the cell below / above it
                want = np.zeros(len(edges) + 1)
                for atom in atoms:
                    loc = atom[0] + side * 1e-12 * max(1, abs(atom[0]))
                    want[int(np.searchsorted(edges, loc, side="left"))] += atom[col]
                placed.append(np.cumsum(want))
            assert np.all(placed[1] <= np.cumsum(got) + 1e-14), (edges, got)
            assert np.all(np.cumsum(got) <= placed[0] + 1e-14), (edges, got)
            assert abs(got.sum() - placed[0][-1]) <= 1e-14
