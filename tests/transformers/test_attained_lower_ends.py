"""Lower ends where the pair is attained by a concrete instance (issue 39, items 7 and 8),
against exact values computed here at 50 digits."""
import mpmath as mp
import numpy as np
import pytest

import dpaccount as dpa
from dpaccount.pld.pairs.zoo import _BR_SHARES, bounded_range_pair

mp.mp.dps = 50


def _chain_delta(eps0, k, eps):
    """δ(ε) of the k-step chain of ε₀-DP laws (Dong, Roth & Su 2022, Thm 2.14): Q-masses
    c e^{−(k−1)ε₀}, c e^{−(k−i)ε₀}(e^{ε₀} − 1) (0 < i < k), 1 − c, c = 1/(1 + e^{ε₀}), and
    P-mass e^{(k−2i)ε₀} times each."""
    eps0, eps = mp.mpf(eps0), mp.mpf(eps)
    c = 1 / (1 + mp.e ** eps0)
    q = [c * mp.e ** (-(k - 1) * eps0)] + [c * mp.e ** (-(k - i) * eps0) * mp.expm1(eps0) for i in range(1, k)] + [1 - c]
    return mp.fsum(max(0, mp.e ** ((k - 2 * i) * eps0) * qi - mp.e ** eps * qi) for i, qi in enumerate(q))


def _chain_epsilon(eps0, k, delta):
    lo, hi = mp.mpf(0), mp.mpf(k) * eps0
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if _chain_delta(eps0, k, mid) > delta else (lo, mid)
    return hi


def test_group_privacy_of_randomized_response_has_the_chain_as_its_lower_end():
    """GroupPrivacy of randomized response is that of its class (every ε₀-DP mechanism, the
    rule of transformers/group_privacy.py): the chain at ε₀ = log(0.7/0.3) attains it."""
    eps0 = mp.log(mp.mpf(7) / 3)
    for k, delta in ((20, 1e-4), (3, 1e-2)):
        b = dpa.GroupPrivacy()(dpa.RandomizedResponse(0.7), k).get_approxDP_bounds(delta)
        exact = _chain_epsilon(eps0, k, delta)
        assert b.lower_of == "mechanism" and b.certified
        assert b.lower <= exact <= b.upper and b.upper - b.lower <= 1e-12 * exact, (k, b, exact)
    b = dpa.GroupPrivacy()(dpa.RandomizedResponse(0.8, buckets=4), 5).get_approx_delta_bounds(3.0)
    exact = _chain_delta(mp.log(mp.mpf("0.8") * 3 / mp.mpf("0.2")), 5, 3)  # ε₀ = log(p(k − 1)/(1 − p))
    assert b.lower <= exact <= b.upper <= exact * (1 + 1e-12)


def test_the_exponential_mechanisms_witnesses_are_its_outputs_on_two_candidates():
    """t = log σ(ℓ + ε)/σ(ℓ) with e^{−ℓ} = (e^t − 1)/(1 − e^{t−ε}); the laws of the exponential
    mechanism on utilities (ℓ/ε, 0) and (ℓ/ε + 1, −1) (×2/ε in the exponent) are the pair."""
    eps = mp.mpf(1)
    for share in _BR_SHARES:
        t = eps * mp.mpf(share)
        ell = -mp.log(mp.expm1(t) / (1 - mp.e ** (t - eps)))
        sig = lambda x: 1 / (1 + mp.e ** (-x))
        p, q = [sig(ell + eps), 1 - sig(ell + eps)], [sig(ell), 1 - sig(ell)]
        pair = bounded_range_pair(1.0, share)
        got_p, got_q = np.exp(pair._log_p), np.exp(pair._log_q)
        for a, b in zip(got_p.tolist() + got_q.tolist(), p + q):
            assert abs(a - b) <= 1e-14 * b


def test_the_exponential_mechanism_has_a_lower_end_below_its_exact_envelope():
    """ε = 1, δ(0.3): the envelope (e^{1/2} − e^{0.15})²/(e − 1) is exact for one use; the lower
    end is the best witness (t = 5/8 of the shares), p_t(1 − e^{0.3 − t})."""
    exact = (mp.e ** mp.mpf("0.5") - mp.e ** mp.mpf("0.15")) ** 2 / mp.expm1(1)
    p = lambda t: (mp.e - mp.e ** t) / mp.expm1(1)
    best = max(p(mp.mpf(f)) * (1 - mp.e ** (mp.mpf("0.3") - mp.mpf(f))) for f in _BR_SHARES)
    b = dpa.ExponentialMechanism(1.0).get_approx_delta_bounds(0.3)
    assert b.lower_of == "mechanism" and b.certified
    assert best * (1 - 1e-12) <= b.lower <= best * (1 + 1e-12) and exact <= b.upper <= exact * (1 + 1e-12)
    assert b.lower >= exact * (1 - 0.01)


def _binomial_group_delta(n, p, k, eps):
    """max over shifts s ∈ [−k, k] and both orders of Σ max(0, P − e^ε Q), P = s + Bin(n, p)."""
    pmf = [mp.binomial(n, i) * mp.mpf(p) ** i * (1 - mp.mpf(p)) ** (n - i) for i in range(n + 1)]
    law = lambda s: {i + s: m for i, m in enumerate(pmf)}
    best = 0
    for s in range(1, k + 1):
        for a, b in ((law(s), law(0)), (law(0), law(s))):
            best = max(best, mp.fsum(max(0, a.get(x, 0) - mp.e ** eps * b.get(x, 0)) for x in set(a) | set(b)))
    return best


@pytest.mark.parametrize("eps", [0.5, 2.0])
def test_group_privacy_of_the_binomial_within_a_thousandth(eps):
    exact = _binomial_group_delta(10, 0.3, 4, eps)
    m = dpa.GroupPrivacy()(dpa.BinomialMechanism(10, 0.3), 4)
    b = m.get_approx_delta_bounds(eps)
    assert b.lower_of == "mechanism" and b.lower <= exact <= b.upper <= exact * (1 + 1e-3)
    assert exact <= m.get_approx_delta(eps) <= exact * (1 + 1e-3)
