"""The PLD accountant against exact values: pessimistic ≥ exact ≥ optimistic.

Exact values come from closed forms (GDP), exact binomial sums (randomized
response), exact mixtures (randomized response composed with Gaussians) and
exact discrete convolution (small binomial compositions).
"""
import itertools
import math

import mpmath as mp
import pytest
from oracles import gdp_delta, gdp_epsilon, rr_composed_delta, subsampled_gaussian_remove_delta

import dpaccount as dpa
from dpaccount.pld.grids.compose import compose
from dpaccount.pld.grids.discretise import loss_range, pair_to_grid
from dpaccount.pld.pairs.discrete_pair import binomial_pair
from dpaccount.pld.pairs.base import GaussianPair
from dpaccount.pld.pairs.poisson_sampling import PoissonRemovePair


def _grid(pair, step, pessimistic=True, tail=1e-30):
    lo, hi = loss_range(pair, tail)
    return pair_to_grid(pair, step, math.floor(lo / step), math.ceil(hi / step), pessimistic)


@pytest.mark.parametrize("pair,exact", [
    (GaussianPair(0.9), lambda e: gdp_delta(e, 0.9)),
    (PoissonRemovePair(GaussianPair(1 / 1.1), 0.05), lambda e: subsampled_gaussian_remove_delta(e, 1.1, 0.05)),
])
def test_connect_the_dots_matches_the_curve_at_grid_points(pair, exact):
    step = 1e-3
    pess, opt = _grid(pair, step), _grid(pair, step, pessimistic=False)
    points = pess.losses[10:-10:211]
    for e in points:
        ex = float(exact(e))
        if ex < 1e-14:
            continue
        assert pess.delta(e) >= ex
        assert pess.delta(e) <= ex * (1 + 1e-9)
        assert opt.delta(e) <= ex
    for e in points + step / 3:  # between grid points: still a bracket
        ex = float(exact(e))
        assert opt.delta(e) <= ex <= pess.delta(e)


@pytest.mark.parametrize("mu,k,step", [(1.0, 10, 1e-2), (0.25, 400, 2e-3), (2.0, 3, 5e-3)])
def test_fft_self_composition_of_gaussians(mu, k, step):
    """Compose k Gaussian grids by FFT; the exact answer is sqrt(k)·μ-GDP."""
    total = math.sqrt(k) * mu
    pess = compose([(_grid(GaussianPair(mu), step), k)])
    opt = compose([(_grid(GaussianPair(mu), step, False), k)], pessimistic=False)
    for eps in [0.0, 0.5 * total, total, 2 * total + 1]:
        ex = float(gdp_delta(eps, total))
        assert opt.delta(eps) <= ex <= pess.delta(eps)
        assert pess.delta(eps) <= ex * (1 + 1e-3) + 1e-15
    for delta in [1e-3, 1e-6, 1e-9]:
        ex = float(gdp_epsilon(delta, total))
        assert opt.epsilon(delta) <= ex <= pess.epsilon(delta) <= ex * (1 + 1e-3)


def test_fft_heterogeneous_gaussians():
    mus, ks = [0.3, 0.5, 1.1], [50, 20, 2]
    step = 2e-3
    pess = compose([(_grid(GaussianPair(m), step), k) for m, k in zip(mus, ks)])
    total = math.sqrt(sum(k * m * m for m, k in zip(mus, ks)))
    for delta in [1e-4, 1e-8]:
        ex = float(gdp_epsilon(delta, total))
        assert ex <= pess.epsilon(delta) <= ex * (1 + 1e-3)


@pytest.mark.parametrize("p,k", [(0.6, 1), (0.55, 7), (0.6, 300), (0.9, 40)])
def test_randomized_response_is_exact(p, k):
    mech = dpa.Composition()([dpa.RandomizedResponse(p=p)], [k])
    for eps in [0.0, 0.3, 1.0, 3.0]:
        ex = float(rr_composed_delta(eps, p, k))
        got = mech.get_approx_delta(eps)
        assert ex <= got <= ex * (1 + 1e-9) + 1e-15
        assert mech.get_approx_delta_bounds(eps).lower <= ex
        grids = mech.privacy_profile()  # the lattice grids too (the queries sum the atoms exactly)
        assert ex <= grids.delta(eps) <= ex * (1 + 1e-9) + 1e-15 and grids.delta_lower(eps) <= ex


def test_randomized_response_mixed_with_gaussians():
    """δ(ε) = Σ_j w_j δ_G(ε − s_j): the RR loss s_j = (2j−k)a has P-weight
    w_j = C(k,j) p^j (1−p)^{k−j}, and the Gaussian part is sqrt(kG)/σ-GDP."""
    p, k_rr, sigma, k_g = 0.52, 60, 5.0, 60
    mu = math.sqrt(k_g) / sigma
    a = math.log(p / (1 - p))
    mech = dpa.Composition()([dpa.GaussianMechanism(sigma=sigma), dpa.RandomizedResponse(p=p)], [k_g, k_rr])
    for eps in [0.0, 1.0, 2.5]:
        ex = mp.fsum(mp.binomial(k_rr, j) * mp.mpf(p) ** j * (1 - mp.mpf(p)) ** (k_rr - j)
                     * gdp_delta(eps - (2 * j - k_rr) * a, mu) for j in range(k_rr + 1))
        got = mech.get_approx_delta(eps)
        assert float(ex) <= got <= float(ex) * (1 + 1e-3)


def _exact_discrete_composition_delta(pair, k, eps):
    """Brute force: enumerate all k-tuples of atoms of a small discrete pair."""
    loss, p, _ = pair.atoms
    total = mp.mpf(pair.p_inf and 1 - (1 - mp.mpf(pair.p_inf)) ** k)
    for combo in itertools.product(range(len(loss)), repeat=k):
        s = sum(loss[i] for i in combo)
        if s > eps:
            w = mp.fprod(mp.mpf(p[i]) for i in combo)
            total += w * (1 - mp.e ** (mp.mpf(eps) - mp.fsum(mp.mpf(loss[i]) for i in combo)))
    return total


@pytest.mark.parametrize("k", [1, 2, 3])
def test_binomial_against_exact_convolution(k):
    n, prob = 8, 0.5
    mech = dpa.Composition()([dpa.BinomialMechanism(n=n, p=prob)], [k])
    pair = binomial_pair(n, prob)
    for eps in [0.2, 1.0, 2.0]:
        ex = float(_exact_discrete_composition_delta(pair, k, eps))
        # atoms off the grid make the certified width first order in the step:
        # certify at 1%, and hold the default answer to 0.1%
        b = mech.get_approx_delta_bounds(eps, accuracy=1e-2)
        assert b.lower <= ex <= b.upper
        assert ex <= mech.get_approx_delta(eps) <= ex * (1 + 1e-3) + 1e-15
        grids = mech.privacy_profile()  # the grids too (the queries sum the atoms exactly)
        assert grids.delta_lower(eps) <= ex <= grids.delta(eps) <= ex * (1 + 1e-3) + 1e-15


def test_dp_sgd_bracket():
    """Poisson-subsampled Gaussian: the exact δ (mpmath, k = 1) and the
    brackets of k-fold compositions are consistent."""
    sigma, q = 1.0, 0.02
    single = dpa.PoissonSampling()(dpa.GaussianMechanism(sigma=sigma), q)
    for eps in [0.0, 0.01, 0.05]:
        ex = float(subsampled_gaussian_remove_delta(eps, sigma, q))
        b = single.get_approx_delta_bounds(eps)
        assert b.lower <= ex <= b.upper <= ex * (1 + 1e-3)
    mech = dpa.Composition()([single], [300])
    b = mech.get_approxDP_bounds(1e-6)
    assert 0 < b.lower <= b.upper
    # the default answer: an upper bound (≥ the certified lower bound), within the accuracy of
    # the certified interval (which may come from a finer grid than the default's)
    assert b.lower <= mech.get_approxDP(1e-6) <= b.upper * (1 + 1e-3)


def test_dp_sgd_cross_check_dp_accounting():
    dp_accounting = pytest.importorskip("dp_accounting")
    sigma, q, steps, delta = 1.1, 256 / 60000, 2000, 1e-5
    event = dp_accounting.SelfComposedDpEvent(
        dp_accounting.PoissonSampledDpEvent(q, dp_accounting.GaussianDpEvent(sigma)), steps)
    acc = dp_accounting.pld.PLDAccountant(value_discretization_interval=1e-4)
    theirs = acc.compose(event).get_epsilon(delta)
    ours = dpa.Composition()([dpa.PoissonSampling()(dpa.GaussianMechanism(sigma=sigma), q)], [steps])
    b = ours.get_approxDP_bounds(delta)
    # both are upper bounds of the same quantity: ours must be the tighter or equal
    # (within its certified width), and never below our own certified lower end
    assert b.lower <= theirs * (1 + 1e-3)
    assert b.upper <= theirs * (1 + 1e-3)


def _subsampled_rr_exact_delta(p, q, k, eps):
    """max over directions of δ(ε) for k-fold Poisson-subsampled RR, by
    enumerating outcome tuples (Zhu, Dong & Wang 2022, Thm 11 pairs)."""
    p, q = mp.mpf(p), mp.mpf(q)
    base_p, base_q = [p, 1 - p], [1 - p, p]
    remove = ([(1 - q) * b + q * a for a, b in zip(base_p, base_q)], base_q)
    add = (base_p, [(1 - q) * a + q * b for a, b in zip(base_p, base_q)])
    out = []
    for big_p, big_q in (remove, add):
        total = mp.mpf(0)
        for combo in itertools.product(range(2), repeat=k):
            pp = mp.fprod(big_p[i] for i in combo)
            qq = mp.fprod(big_q[i] for i in combo)
            total += max(pp - mp.e ** mp.mpf(eps) * qq, 0)
        out.append(total)
    return max(out)


@pytest.mark.parametrize("k", [1, 3, 6])
def test_poisson_subsampled_randomized_response_is_bracketed(k):
    p, q = 0.8, 0.3
    mech = dpa.Composition()([dpa.PoissonSampling()(dpa.RandomizedResponse(p=p), q)], [k])
    for eps in [0.0, 0.2, 0.6]:
        ex = float(_subsampled_rr_exact_delta(p, q, k, eps))
        b = mech.get_approx_delta_bounds(eps, accuracy=1e-2)  # atoms off the grid: see above
        assert b.lower <= ex <= b.upper
        assert ex <= mech.get_approx_delta(eps) <= ex * (1 + 1e-3) + 1e-15
        grids = mech.privacy_profile()  # the grids too (the queries sum the atoms exactly)
        assert grids.delta_lower(eps) <= ex <= grids.delta(eps) <= ex * (1 + 1e-3) + 1e-15


def test_poisson_subsampled_laplace_single_step():
    """One step: the PLD bracket contains the closed form, the max over
    directions of (advanced joint convexity, Balle, Barthe & Gaboardi 2018)
    remove: q·δ(log(1 + (e^ε − 1)/q)),
    add:    (1 − e^ε(1−q))·δ(ε + log q − log(1 − e^ε(1−q))),
    with the Laplace curve δ(t) = 1 − e^{(t−ε₀)/2} on |t| < ε₀ (1 − e^t below)."""
    b_scale, q = 0.8, 0.2
    e0, mq = 1 / mp.mpf(b_scale), mp.mpf(q)

    def lap(t):
        return 0 if t >= e0 else (-mp.expm1(t) if t <= -e0 else -mp.expm1((t - e0) / 2))

    mech = dpa.PoissonSampling()(dpa.LaplaceMechanism(b=b_scale), q)
    for eps in [0.05, 0.3, 0.9]:   # the closed form in mpmath: exact, so the bracket holds strictly
        e = mp.mpf(eps)
        remove = mq * lap(mp.log1p(mp.expm1(e) / mq))
        scale = 1 - mp.exp(e) * (1 - mq)
        add = scale * lap(e + mp.log(mq) - mp.log(scale)) if scale > 0 else 0
        ex = max(remove, add)
        b = mech.get_approx_delta_bounds(eps)
        assert b.lower <= ex <= b.upper <= ex * (1 + 1e-3) + 1e-15


@pytest.mark.parametrize("out_of_reach", [1e-7, pytest.param(1e-6, marks=pytest.mark.slow)])
def test_bounds_meet_the_accuracy_or_say_so(out_of_reach):
    """The certified interval is refined until it is `accuracy` wide; an
    accuracy beyond the grid cap raises AccuracyNotReached, naming the
    interval it could reach (1e-7 gives up after ~2 s, 1e-6 after ~20 s)."""
    mech = dpa.Composition()([dpa.BinomialMechanism(n=1000, p=0.5)], [20])
    b = mech.get_approx_delta_bounds(1.0)
    assert b.upper - b.lower <= 1e-3 * b.upper
    with pytest.raises(dpa.AccuracyNotReached, match="certified interval") as caught:
        mech.get_approx_delta_bounds(1.0, accuracy=out_of_reach)
    reached = caught.value.bounds  # the interval it could certify, as a value
    assert reached.lower <= b.upper and reached.upper >= b.lower  # both hold the exact value
    assert reached.upper - reached.lower > out_of_reach * reached.upper


@pytest.mark.parametrize("delta", [1e-12, 1e-40, 1e-100])
def test_tiny_delta_stays_tight(delta):
    """Exponential tilting keeps tiny δ certified: the Gaussian composition's
    exact ε (GDP, mpmath) lies in a narrow bracket, computed by the PLD path."""
    sigma, k = 2.0, 30
    mech = dpa.Composition()([dpa.GaussianMechanism(sigma=sigma)], [k])
    exact = float(gdp_epsilon(delta, math.sqrt(k) / sigma))
    b = mech.get_approxDP_bounds(delta, method="pld")
    assert b.lower <= exact <= b.upper <= exact * (1 + 1e-3)
