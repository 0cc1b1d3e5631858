"""k-ary randomized response (issue 39): ``RandomizedResponse(p, buckets=k)`` against
enumeration of its outputs, under both relations, and its spec and refusals."""
import math

import mpmath as mp
import pytest

import dpaccount as dpa


def _exact_delta(p, k, eps):
    """Σ_o max(0, P(o) − e^ε Q(o)) over the k outputs, inputs 0 and 1 (the pair is symmetric)."""
    p = mp.mpf(p)
    r = (1 - p) / (k - 1)
    law = lambda x: [p if o == x else r for o in range(k)]
    return mp.fsum(max(0, a - mp.e ** eps * b) for a, b in zip(law(0), law(1)))


@pytest.mark.parametrize("p, k", [(0.5, 3), (0.9, 10), (0.3, 4), (0.3, 5), (0.75, 2)])
@pytest.mark.parametrize("relation", [None, "replace-one"])
def test_delta_matches_enumeration(p, k, relation):
    m = dpa.RandomizedResponse(p, relation=relation, buckets=k)
    for eps in (0.0, 0.4, 1.5):
        exact = _exact_delta(p, k, eps)
        assert exact * (1 - 1e-12) <= m.get_approx_delta(eps) <= exact * (1 + 1e-3) + 1e-15
    assert math.log(p * (k - 1) / (1 - p)) <= m.pure_epsilon() <= math.log(p * (k - 1) / (1 - p)) * (1 + 1e-12)
    assert m.get_approxDP(1e-6, method="rdp") >= m.get_approxDP(1e-6) * (1 - 1e-12)  # RDP: an upper bound too


def test_composition_under_replace_one_is_its_product():
    """Three uses: δ(ε) of the product law, enumerated over the k³ outputs."""
    p, k, eps = 0.6, 3, 1.0
    r = (1 - p) / (k - 1)
    law = [p, r, r]
    other = [r, p, r]
    exact = mp.fsum(max(0, law[a] * law[b] * law[c] - mp.e ** eps * other[a] * other[b] * other[c])
                    for a in range(k) for b in range(k) for c in range(k))
    m = dpa.Composition()([dpa.RandomizedResponse(p, relation="replace-one", buckets=k)], [3])
    assert exact * (1 - 1e-12) <= m.get_approx_delta(eps) <= exact * (1 + 1e-3)


def test_spec_round_trip_and_refusals():
    m = dpa.RandomizedResponse(0.5, relation="replace-one", buckets=4)
    assert dpa.from_spec(m.to_spec()) == m and m.to_spec()["buckets"] == 4
    assert "buckets" not in dpa.RandomizedResponse(0.7).to_spec()  # binary specs unchanged
    with pytest.raises(ValueError, match="p must lie in"):
        dpa.RandomizedResponse(0.25, buckets=4)  # p ≤ 1/k: no privacy loss ordering, not randomized response
    for bad in (1, 2.5, 0):
        with pytest.raises(ValueError, match="buckets"):
            dpa.RandomizedResponse(0.7, buckets=bad)
