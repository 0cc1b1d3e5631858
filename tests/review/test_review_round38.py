"""Adversarial review of issues 39 and 44 (round 38): the checks that hold, as regression tests.

Each value is compared with an oracle independent of dpaccount's code: exact enumeration of
the finite laws (k-ary randomized response, its replace-special pair, the chain of ε₀-DP laws,
random allocation's count-vector laws), closed forms in mpmath at 50 digits (a Gaussian's
hockey stick mixed over randomized response's losses, the replace-one Poisson pair's δ from
the root of its monotone loss, the exponential mechanism's one-use envelope), and pure ε
formulas. Tolerances are the float inputs' rounding (1e-12 relative) below, and the
accuracy asked above. The defects this review found are in its report, not here.
"""
import math
import random
import warnings

import mpmath as mp
import pytest

from dpaccount import (DiscreteMechanism, ExponentialMechanism, GroupPrivacy, LaplaceMechanism, PoissonSampling,
                       RandomAllocation, RandomizedResponse)
from transformers.test_allocation_trust import _exact_delta

dpa = pytest.importorskip("dp_accounting")
from dpaccount.integrations.dp_accounting import DpaccountAccountant  # noqa: E402

mp.mp.dps = 50
NR = dpa.NeighboringRelation
SLACK = 1e-12  # the float inputs' rounding (p, 1 − p + p/k) carried into δ and ε, relative


def _hs(p_law, q_law, eps):
    g = mp.e ** mp.mpf(eps)
    return mp.fsum(max(a - g * b, 0) for a, b in zip(p_law, q_law))


def _rr_laws(noise, k):
    """dp_accounting's k-ary RR on two inputs that differ (x's bucket, y's, the rest merged)."""
    p = mp.mpf(noise)
    keep, r = 1 - p + p / k, p / k
    return [keep, r, (k - 2) * r], [r, keep, (k - 2) * r]


def _product(laws, n):
    """The n-fold product of a finite pair, atoms merged by their loss (exact at 50 digits)."""
    atoms = {(): (mp.mpf(1), mp.mpf(1))}
    for _ in range(n):
        new = {}
        for key, (pa, qa) in atoms.items():
            for j, (pb, qb) in enumerate(zip(*laws)):
                k2 = tuple(sorted(key + (j,)))
                x, y = new.get(k2, (0, 0))
                new[k2] = (x + pa * pb, y + qa * qb)
        atoms = new
    return [v[0] for v in atoms.values()], [v[1] for v in atoms.values()]


def _epsilon_of(p_law, q_law, delta):
    lo, hi = mp.mpf(0), mp.mpf(300)
    if _hs(p_law, q_law, 0) <= delta:
        return mp.mpf(0)
    for _ in range(180):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if _hs(p_law, q_law, mid) > delta else (lo, mid)
    return hi


@pytest.mark.parametrize("relation", [NR.REPLACE_ONE, NR.ADD_OR_REMOVE_ONE])
@pytest.mark.parametrize("k", [2, 3, 7, 1000])
@pytest.mark.parametrize("noise", [0.01, 0.3, 0.9])
def test_kary_randomized_response_event_against_enumeration(relation, k, noise):
    """One use and three: δ(ε) at five ε and ε(δ) at four δ, certified above the exact value
    and within 1 % of it (the pair is attained under both relations)."""
    for count in (1, 3):
        p_law, q_law = _product(_rr_laws(noise, k), count)
        acc = DpaccountAccountant(neighboring_relation=relation)
        acc.compose(dpa.RandomizedResponseDpEvent(noise, k), count)
        for eps in (0.0, 0.01, 0.5, 3.0, 20.0):
            exact = _hs(p_law, q_law, eps)
            assert exact * (1 - SLACK) <= acc.get_delta(eps) <= exact * 1.01 + 1e-15, (count, eps)
        for delta in (0.0, 1e-30, 1e-5, 0.3):
            exact = _epsilon_of(p_law, q_law, delta)
            assert exact * (1 - SLACK) <= acc.get_epsilon(delta) <= exact * 1.01 + 1e-9, (count, delta)


@pytest.mark.parametrize("k", [2, 3, 1000])
@pytest.mark.parametrize("noise", [0.01, 0.5, 0.9])
def test_replace_special_randomized_response_against_its_definition(k, noise):
    """dp_accounting's REPLACE_SPECIAL: x against the special input (uniform output), both
    orders; two atoms (x's bucket, the rest: one loss)."""
    p = mp.mpf(noise)
    law, uniform = [1 - p + p / k, p * (k - 1) / k], [mp.mpf(1) / k, mp.mpf(k - 1) / k]
    acc = DpaccountAccountant(neighboring_relation=NR.REPLACE_SPECIAL)
    acc.compose(dpa.RandomizedResponseDpEvent(noise, k))
    for eps in (0.0, 0.1, 1.0, 5.0):
        exact = max(_hs(law, uniform, eps), _hs(uniform, law, eps))
        assert exact * (1 - SLACK) <= acc.get_delta(eps) <= exact * 1.01 + 1e-15, eps


def _gauss_hs(mu, eps):
    """H_{e^ε}(N(μ, 1) ‖ N(0, 1)) for every real ε."""
    mu, eps = mp.mpf(mu), mp.mpf(eps)
    return mp.ncdf(-eps / mu + mu / 2) - mp.e ** eps * mp.ncdf(-eps / mu - mu / 2)


@pytest.mark.parametrize("z,noise,k", [(1.0, 0.1, 3), (3.0, 0.5, 1000), (10.0, 0.9, 2)])
@pytest.mark.parametrize("relation,sensitivity", [(NR.REPLACE_ONE, 2), (NR.ADD_OR_REMOVE_ONE, 1)])
def test_gaussian_composed_with_kary_rr_against_the_mixed_closed_form(z, noise, k, relation, sensitivity):
    """The issue's reproducer family: a Gaussian (sensitivity 2 under replace-one) and k-ary RR;
    δ(ε) = Σ_o P_RR(o) H_{e^{ε − L(o)}}(Gaussian)."""
    acc = DpaccountAccountant(neighboring_relation=relation)
    acc.compose(dpa.ComposedDpEvent([dpa.GaussianDpEvent(z), dpa.RandomizedResponseDpEvent(noise, k)]))
    (keep, r, rest), _ = _rr_laws(noise, k)
    outputs = [(keep, mp.log(keep / r)), (r, -mp.log(keep / r)), (rest, 0)]
    for eps in (0.0, 0.5, 2.0, 8.0):
        exact = mp.fsum(w * _gauss_hs(sensitivity / mp.mpf(z), eps - loss) for w, loss in outputs if w > 0)
        assert exact * (1 - 1e-9) <= acc.get_delta(eps) <= exact * 1.01 + 1e-12, eps


def _poisson_replace_delta(q, z, eps):
    """δ(ε) of ((1 − q)N(0, z²) + qN(1, z²), (1 − q)N(0, z²) + qN(−1, z²)) (Lebeda et al. 2024):
    the loss increases in x, so δ = P(X > x₀) − e^ε Q(X > x₀) at the root x₀ of L = ε."""
    q, z, g = mp.mpf(q), mp.mpf(z), mp.e ** mp.mpf(eps)
    law = lambda x, s: (1 - q) * mp.npdf(x, 0, z) + q * mp.npdf(x, s, z)
    excess = lambda x: mp.log(law(x, 1)) - mp.log(law(x, -1)) - mp.log(g)
    lo, hi = mp.mpf(-1000), mp.mpf(1000)
    if excess(hi) < 0:
        return mp.mpf(0)
    for _ in range(300):
        mid = (lo + hi) / 2
        lo, hi = (lo, mid) if excess(mid) > 0 else (mid, hi)
    sf = lambda m: mp.ncdf(-(hi - m) / z)
    return (1 - q) * sf(0) + q * sf(1) - g * ((1 - q) * sf(0) + q * sf(-1))


@pytest.mark.parametrize("q,z", [(1e-12, 0.5), (0.01, 0.5), (0.5, 0.5), (0.5, 2.0), (1.0, 2.0)])
def test_replace_one_poisson_gaussian_against_the_root_found_closed_form(q, z):
    acc = DpaccountAccountant(neighboring_relation=NR.REPLACE_ONE)
    acc.compose(dpa.PoissonSampledDpEvent(q, dpa.GaussianDpEvent(z)))
    for eps in (0.0, 0.1, 1.0):
        exact = _poisson_replace_delta(q, z, eps)
        assert exact * (1 - 1e-9) <= acc.get_delta(eps) <= exact * 1.05 + 1e-25, eps  # q = 1e-12: 2 % above


@pytest.mark.parametrize("relation", [NR.REPLACE_ONE, NR.ADD_OR_REMOVE_ONE, NR.REPLACE_SPECIAL])
def test_edge_values_of_the_contract(relation):
    empty = DpaccountAccountant(neighboring_relation=relation)
    assert (empty.get_epsilon(0.0), empty.get_epsilon(1.0), empty.get_delta(math.inf), empty.get_delta(0.0)) == (0, 0, 0, 0)
    acc = DpaccountAccountant(neighboring_relation=relation)
    acc.compose(dpa.PoissonSampledDpEvent(0.01, dpa.GaussianDpEvent(0)))
    # the slot reveals x with probability q: δ(ε) = q at every ε ≥ 0, P(L = ∞) = q
    assert 0.01 <= acc.get_delta(math.inf) <= 0.01 * (1 + 1e-12)
    assert acc.get_epsilon(0.0099) == math.inf and acc.get_epsilon(1e-5) == math.inf and acc.get_epsilon(1.0) == 0.0
    assert acc.get_delta(acc.get_epsilon(0.5)) >= 0.01


@pytest.mark.parametrize("seed", range(3))
def test_pure_epsilon_of_subsampled_laplace_and_kary_rr_is_above_the_formula(seed):
    """The pure ε is where δ(ε) is set to 0 exactly: it must not fall below the true ε₀."""
    rng = random.Random(seed)
    for _ in range(100):
        b, q = rng.uniform(0.05, 20), rng.uniform(1e-6, 1)
        exact = mp.log(1 + mp.mpf(q) * (mp.e ** (1 / mp.mpf(b)) - 1))
        assert PoissonSampling()(LaplaceMechanism(b), q).pure_epsilon() >= exact
        k = rng.choice([3, 5, 17, 1000])
        p = rng.uniform(1 / k + 1e-6, 1 - 1e-9)
        assert RandomizedResponse(p, buckets=k).pure_epsilon() >= mp.log(mp.mpf(p) * (k - 1) / (1 - mp.mpf(p)))


def _chain_delta(eps0, k, eps):
    """δ(ε) of the k-step chain of ε₀-DP laws (Dong, Roth & Su 2022, Thm 2.14), restated."""
    eps0, eps = mp.mpf(eps0), mp.mpf(eps)
    c = 1 / (1 + mp.e ** eps0)
    q = [c * mp.e ** (-(k - 1) * eps0)] + [c * mp.e ** (-(k - i) * eps0) * mp.expm1(eps0) for i in range(1, k)]
    q.append(1 - c)
    return mp.fsum(max(0, (mp.e ** ((k - 2 * i) * eps0) - mp.e ** eps) * qi) for i, qi in enumerate(q))


@pytest.mark.parametrize("k", [2, 3, 1000])
@pytest.mark.parametrize("share", [1.01, 1.5, 3.0])
@pytest.mark.parametrize("group", [2, 3, 5])
def test_group_privacy_of_kary_rr_brackets_the_chain(k, share, group):
    """ε₀ = log(p(k − 1)/(1 − p)) at moderate ε₀ (δ well below 1): lower ≤ chain ≤ upper."""
    p = min(share / k, 0.9) if k > 2 else min(share / 2, 0.9)
    if p <= 1 / k:
        pytest.skip("p must exceed 1/k")
    eps0 = mp.log(mp.mpf(p) * (k - 1) / (1 - mp.mpf(p)))
    m = GroupPrivacy()(RandomizedResponse(p, buckets=k), group)
    for eps in (0.0, 0.5, 3.0):
        exact = _chain_delta(eps0, group, eps)
        if exact > 0.999:
            continue  # δ near 1: the report's defect (pure_dp_group_pair's rounding there)
        b = m.get_approx_delta_bounds(eps)
        assert b.lower <= exact * (1 + 1e-15) and exact <= b.upper <= exact * (1 + 1e-9) + 1e-300, (eps, b)


@pytest.mark.parametrize("eps", [0.1, 1.0, 5.0, 50.0])
@pytest.mark.parametrize("share", [0.0, 0.3, 0.7])
def test_exponential_mechanism_bounds_bracket_its_one_use_envelope(eps, share):
    """One use: δ(ε') = (e^{ε/2} − e^{ε'/2})²/(e^ε − 1) (the logistic envelope is attained in
    the limit), ε' = share·ε; the witnesses' lower end is at or below it."""
    e, e1 = mp.mpf(eps), mp.mpf(eps) * mp.mpf(share)
    exact = (mp.e ** (e / 2) - mp.e ** (e1 / 2)) ** 2 / mp.expm1(e)
    b = ExponentialMechanism(eps).get_approx_delta_bounds(float(e1))
    assert b.lower <= exact * (1 + 1e-15) and exact * (1 - 1e-15) <= b.upper <= exact * (1 + 1e-9)


def _allocation_cases(count, seed):
    rng = random.Random(seed)
    for _ in range(count):
        kind, t = rng.choice(["rrk", "disc", "rr2"]), rng.choice([1, 2, 3, 4])
        if kind == "rrk":
            k = rng.choice([3, 4])
            p = rng.uniform(1 / k + 0.01, 0.99)
            r = (1 - p) / (k - 1)
            yield RandomizedResponse(p, buckets=k), [p, r] + [r] * (k - 2), [r, p] + [r] * (k - 2), t, rng.uniform(0, 1.5)
        elif kind == "rr2":
            p = rng.uniform(0.51, 0.999)
            yield RandomizedResponse(p), [p, 1 - p], [1 - p, p], t, rng.uniform(0, 1.5)
        else:
            a, b = [rng.random() + 0.01 for _ in range(3)], [rng.random() + 0.01 for _ in range(3)]
            p_law, q_law = [x / sum(a) for x in a], [x / sum(b) for x in b]
            yield DiscreteMechanism(p_law, q_law), p_law, q_law, t, rng.uniform(0, 1.5)


def _check_allocation(cases, accuracy):
    for base, p_law, q_law, t, eps in cases:
        m = RandomAllocation()(base, t)
        for e in (0.0, eps):
            exact = _exact_delta(p_law, q_law, t, e)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                assert m.get_approx_delta(e) >= exact * (1 - SLACK), (base.name, t, e)
                b = m.get_approx_delta_bounds(e, accuracy=accuracy)
            assert b.lower <= exact * (1 + SLACK) and exact * (1 - SLACK) <= b.upper, (base.name, t, e, b)


def test_random_allocation_of_finite_bases_brackets_enumeration():
    _check_allocation(_allocation_cases(6, 380), 0.01)


@pytest.mark.slow
def test_random_allocation_of_finite_bases_brackets_enumeration_sweep():
    """accuracy=0.1: RR(0.79166) over 4 steps at ε = 1.329 has the lower end 4.7 % below the
    exact 0.0022467 (AccuracyNotReached at 0.01; as on main)."""
    _check_allocation(_allocation_cases(40, 381), 0.1)


@pytest.mark.parametrize("k", [2, 3, 10, 1000])
@pytest.mark.parametrize("p", [0.5, 0.9])
def test_kary_rr_rdp_above_the_exact_renyi_divergence_away_from_uniform(k, p):
    """D_α of the merged three-atom pair, exact at 50 digits; α ≥ 2 and p ≥ 1/2 (near the
    uniform law and α → 1 the float sum cancels: the report's defect)."""
    if p <= 1 / k:
        pytest.skip("p must exceed 1/k")
    pm = mp.mpf(p)
    r = (1 - pm) / (k - 1)
    p_law, q_law = [pm, r, (k - 2) * r], [r, pm, (k - 2) * r]
    m = RandomizedResponse(p, buckets=k)
    for a in (2.0, 8.0, 64.0):
        exact = mp.log(mp.fsum(x ** a * y ** (1 - a) for x, y in zip(p_law, q_law) if x > 0)) / (a - 1)
        assert exact * (1 - SLACK) <= m.get_RDP(a) <= exact * (1 + 1e-9), a
