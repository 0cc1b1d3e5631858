"""Property-based tests over random mechanisms drawn from the whole zoo.

A drawn mechanism is a base (every public mechanism, moderate parameters),
possibly Poisson-subsampled or seen by a group of k ≤ 3, possibly composed
with a second one. On each, by the default method:

* ε(δ) ≥ 0, not NaN, and non-increasing in δ;
* δ(ε) ∈ [0, 1] and non-increasing in ε;
* the RDP conversion is never below the certified lower bound of ε;
* composition is commutative within the certified interval: the intervals
  of A∘B and B∘A (both contain the exact value) intersect;
* compositions of Gaussians: certified lower ≤ exact (GDP, mpmath) ≤ upper.

Examples are bounded so that the file runs in the default suite in well
under 20 s. The profile is chosen by the environment variable
``DPACCOUNT_HYPOTHESIS_PROFILE``: ``zoo`` (default: few, derandomized
examples) or ``zoo-long`` for a local run with many random examples (150 per
property, not derandomized; 15–30 minutes on a shared 2-core machine):

    DPACCOUNT_HYPOTHESIS_PROFILE=zoo-long python -m pytest -q tests/test_zoo_properties.py
"""
import math
import os

import mpmath as mp
import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from oracles import gdp_epsilon
from scipy import stats

import dpaccount as dpa

_QUIET = [HealthCheck.too_slow, HealthCheck.data_too_large]
settings.register_profile("zoo", max_examples=20, deadline=None, derandomize=True, suppress_health_check=_QUIET)
settings.register_profile("zoo-long", max_examples=150, deadline=None, suppress_health_check=_QUIET)
ZOO = settings.get_profile(os.environ.get("DPACCOUNT_HYPOTHESIS_PROFILE", "zoo"))

ACCURACY = 5e-2  # of the certified intervals (coarse: fast, and still certified)
deltas = st.floats(1e-10, 0.3)
epsilons = st.floats(0.0, 20.0)


def _probs(draw, n):
    raw = np.array(draw(st.lists(st.floats(0.05, 1.0), min_size=n, max_size=n)))
    return raw / math.fsum(raw)


def _discrete(draw):
    n = draw(st.integers(2, 4))
    return dpa.DiscreteMechanism(_probs(draw, n), _probs(draw, n))


# kind -> a builder from hypothesis' ``draw``: every public mechanism, moderate parameters
BASES = {
    "gaussian": lambda d: dpa.GaussianMechanism(sigma=d(st.floats(0.5, 5.0)), sensitivity=d(st.floats(0.5, 2.0))),
    "gdp": lambda d: dpa.GDPMechanism(mu=d(st.floats(0.1, 2.0))),
    "laplace": lambda d: dpa.LaplaceMechanism(b=d(st.floats(0.5, 5.0))),
    "rr": lambda d: dpa.RandomizedResponse(p=d(st.floats(0.55, 0.95))),
    "binomial": lambda d: dpa.BinomialMechanism(n=d(st.integers(10, 200)), p=d(st.floats(0.3, 0.7))),
    "dgauss": lambda d: dpa.DiscreteGaussianMechanism(sigma=d(st.floats(0.5, 5.0))),
    "dlaplace": lambda d: dpa.DiscreteLaplaceMechanism(t=d(st.floats(0.5, 5.0))),
    "puredp": lambda d: dpa.PureDPMechanism(eps=d(st.floats(0.1, 3.0))),
    "approxdp": lambda d: dpa.ApproxDPMechanism(eps=d(st.floats(0.1, 3.0)),
                                                delta=d(st.sampled_from([0.0, 1e-8, 1e-6]))),
    "exponential": lambda d: dpa.ExponentialMechanism(eps=d(st.floats(0.1, 3.0))),
    "discrete": _discrete,
    "continuous": lambda d: dpa.ContinuousMechanism(stats.logistic(loc=d(st.floats(0.2, 2.0))), stats.logistic()),
}


@st.composite
def bases(draw):
    """One public mechanism (add/remove) with moderate parameters."""
    return BASES[draw(st.sampled_from(sorted(BASES)))](draw)


GROUPABLE = (dpa.GaussianMechanism, dpa.LaplaceMechanism, dpa.RandomizedResponse, dpa.PureDPMechanism,
             dpa.DiscreteGaussianMechanism, dpa.DiscreteLaplaceMechanism)


@st.composite
def units(draw):
    """A base, its Poisson subsample, or its group of k ≤ 3 (where a rule exists)."""
    base = draw(bases())
    how = draw(st.sampled_from(["plain", "poisson", "group"]))
    if how == "poisson" and base.optional("pairs") is not None and len(base.pairs.remove) == 1:
        return dpa.PoissonSampling()(base, draw(st.floats(0.01, 0.5)))
    if how == "group" and isinstance(base, GROUPABLE) and not isinstance(base, dpa.ApproxDPMechanism):
        return dpa.GroupPrivacy()(base, draw(st.integers(1, 3)))
    return base


@st.composite
def mechanisms(draw):
    """A unit, or a composition of two units with small counts."""
    first = draw(units())
    if draw(st.booleans()) and first.relation == dpa.ADD_REMOVE:
        second = draw(units())
        if second.relation == first.relation:
            return dpa.Composition()([first, second], [draw(st.integers(1, 4)), draw(st.integers(1, 4))])
    return first


@ZOO
@given(m=mechanisms(), d1=deltas, d2=deltas)
def test_epsilon_is_non_negative_and_non_increasing_in_delta(m, d1, d2):
    lo, hi = sorted((d1, d2))
    e_lo, e_hi = m.get_approxDP(lo), m.get_approxDP(hi)
    assert not (math.isnan(e_lo) or math.isnan(e_hi)), (m, e_lo, e_hi)
    assert e_lo >= e_hi >= 0.0, (m, lo, hi, e_lo, e_hi)


@ZOO
@given(m=mechanisms(), e1=epsilons, e2=epsilons)
def test_delta_is_in_the_unit_interval_and_non_increasing_in_epsilon(m, e1, e2):
    """The exact δ(ε) is non-increasing; the answers are upper bounds that two queries may plan
    on different grids (the plan depends on ε), each within the default accuracy of the exact
    curve: d_hi ≤ (1 + 1e-3)·δ(hi) ≤ (1 + 1e-3)·δ(lo) ≤ (1 + 1e-3)·d_lo."""
    lo, hi = sorted((e1, e2))
    d_lo, d_hi = m.get_approx_delta(lo), m.get_approx_delta(hi)
    assert 0.0 <= d_hi <= d_lo * (1 + 1e-3) and d_lo <= 1.0, (m, lo, hi, d_lo, d_hi)


@ZOO
@given(m=bases(), delta=deltas)
def test_rdp_is_never_below_the_certified_lower_bound(m, delta):
    """(Bases only: the RDP conversion of a subsampled mechanism takes ~1 s a query.)"""
    if "rdp" not in m.available_methods():
        return
    lower = m.get_approxDP_bounds(delta, accuracy=ACCURACY).lower
    if lower is None:  # no attained pair (the exponential mechanism's envelope): nothing to compare
        return
    assert m.get_approxDP(delta, method="rdp") >= lower, (m, delta)


@ZOO
@given(a=units(), b=units(), k1=st.integers(1, 3), k2=st.integers(1, 3), delta=deltas)
def test_composition_is_commutative_within_the_certified_interval(a, b, k1, k2, delta):
    if a.relation != b.relation:
        return
    ab_m, ba_m = dpa.Composition()([a, b], [k1, k2]), dpa.Composition()([b, a], [k2, k1])
    if math.isinf(ab_m.get_approxDP(delta)):  # the mass at +∞ exceeds δ: both orders must say ε = ∞
        # (and the certified interval would be refined for minutes before its lower end says so too)
        assert math.isinf(ba_m.get_approxDP(delta)), (a, b, k1, k2, delta)
        return
    ab = ab_m.get_approxDP_bounds(delta, accuracy=ACCURACY)
    ba = ba_m.get_approxDP_bounds(delta, accuracy=ACCURACY)
    for one in (ab, ba):
        says_what_its_lower_end_bounds(one, ab_m)
    assert (ab.lower is None or ab.lower <= ba.upper) and (ba.lower is None or ba.lower <= ab.upper), \
        (a, b, k1, k2, delta, ab, ba)


def says_what_its_lower_end_bounds(b, m):
    """``lower_of`` (issue 27 §1): "mechanism" with a lower end, or None without one and
    with the reason; certified only with a lower end of the mechanism; a reason wherever
    the pairs are not attained."""
    assert b.lower_of in ("mechanism", None), b
    assert (b.lower is None) == (b.lower_of is None), b
    assert b.lower_of == "mechanism" or (not b.certified and "not attained" in b.reason), b
    assert (b.reason is None) == m.pairs.tight, (m, b)


@ZOO
@given(m=mechanisms(), delta=deltas)
def test_every_interval_says_what_its_lower_end_bounds(m, delta):
    if m.optional("pairs") is None:
        return
    for query, x in ((m.get_approxDP_bounds, delta), (m.get_approx_delta_bounds, 1.0)):
        try:
            b = query(x, accuracy=ACCURACY)
        except dpa.AccuracyNotReached as exc:  # (a δ of ~1e-300, say) the interval it carries says it too
            b = exc.bounds
        says_what_its_lower_end_bounds(b, m)


@ZOO
@given(sigmas=st.lists(st.floats(0.3, 10.0), min_size=1, max_size=3),
       counts=st.lists(st.integers(1, 50), min_size=3, max_size=3), delta=deltas)
def test_gaussian_compositions_bracket_the_exact_epsilon(sigmas, counts, delta):
    mechs = [dpa.GaussianMechanism(sigma=s) for s in sigmas]
    counts = counts[:len(mechs)]
    mu = mp.sqrt(mp.fsum(k / mp.mpf(s) ** 2 for s, k in zip(sigmas, counts)))
    exact = gdp_epsilon(delta, mu)
    b = dpa.Composition()(mechs, counts).get_approxDP_bounds(delta)
    assert b.lower <= exact <= b.upper, (sigmas, counts, delta, b, exact)
