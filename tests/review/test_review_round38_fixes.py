"""The defects of review round 38, each against an exact value (mpmath at 50 digits or
exact enumeration): certified answers above the exact one, refusals typed and clear."""
import warnings

import mpmath as mp
import pytest

dpa = pytest.importorskip("dp_accounting")
from dpaccount.integrations.dp_accounting import DpaccountAccountant  # noqa: E402

mp.mp.dps = 60
NR = dpa.NeighboringRelation


def _rr_eps0(noise, k):
    """ε(δ = 0) of dp_accounting's k-ary RR: log(keep/r), keep = 1 − p + p/k, r = p/k, exactly."""
    p = mp.mpf(noise)
    return mp.log((1 - p + p / k) / (p / k))


@pytest.mark.parametrize("relation", [NR.REPLACE_ONE, NR.ADD_OR_REMOVE_ONE])
@pytest.mark.parametrize("noise,k", [(1e-9, 2), (1e-9, 3), (1e-9, 7), (3e-12, 5), (0.999999, 1000),
                                     (0.9999999999, 1000), (0.3, 7)])
def test_kary_rr_event_keep_is_rounded_up(relation, noise, k):
    """keep = 1 − p(k − 1)/k rounded to nearest put r = (1 − keep)/(k − 1) off by ~1e-7
    relative at tiny noise (and near p = 1 for large k): ε came out below log(keep/r)."""
    acc = DpaccountAccountant(neighboring_relation=relation)
    acc.compose(dpa.RandomizedResponseDpEvent(noise, k))
    exact = _rr_eps0(noise, k)
    got = acc.get_epsilon(0.0)
    assert exact <= got <= exact + abs(exact) * 1e-5 + 1e-12


def test_kary_rr_event_below_float_resolution_is_sound_and_names_no_invented_value():
    """Noise so small that keep rounds up to 1: accounted non-private (ε = +∞), no error
    naming a p = 1.0 the user never passed."""
    acc = DpaccountAccountant()
    acc.compose(dpa.RandomizedResponseDpEvent(1e-17, 3))
    assert acc.get_epsilon(1e-6) == float("inf")


@pytest.mark.parametrize("noise,k", [(1e-9, 3), (1e-17, 3), (0.999999, 1000), (0.5, 7)])
def test_replace_special_rr_rounds_towards_the_safe_side(noise, k):
    """(P, U) with P = (keep, 1 − keep), U = (1/k, (k − 1)/k): ε(0) is the larger of the
    losses log(keep·k) and log(k(1 − keep)/(k − 1)) reversed; certified above."""
    p = mp.mpf(noise)
    keep = 1 - p + p / k
    exact = max(mp.log(keep * k), mp.log((1 - mp.mpf(1) / k) / (1 - keep)))
    acc = DpaccountAccountant(neighboring_relation=NR.REPLACE_SPECIAL)
    acc.compose(dpa.RandomizedResponseDpEvent(noise, k))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = acc.get_epsilon(0.0)
    assert exact <= got
    if noise > 1e-15:  # below, keep rounds up to 1 and the add direction's ε(0) is +∞ (sound)
        assert got <= exact * (1 + 1e-6) + 1e-9


@pytest.mark.parametrize("event", [dpa.RandomizedResponseDpEvent(0.5, 10 ** 400), dpa.GaussianDpEvent(10 ** 400),
                                   dpa.RandomizedResponseDpEvent(0.5, 2 ** 63)])
def test_huge_integer_fields_are_refused_not_crashed(event):
    """A field beyond the float range (or RandomizedResponse's 2**63 − 1 buckets) is dp_accounting's
    UnsupportedEventError naming the event, and the accountant is unchanged."""
    acc = DpaccountAccountant()
    acc.compose(dpa.GaussianDpEvent(1.0))
    before = acc.get_epsilon(1e-6)
    with pytest.raises(dpa.UnsupportedEventError, match="RandomizedResponseDpEvent|GaussianDpEvent"):
        acc.compose(event)
    assert acc.get_epsilon(1e-6) == before


def _chain_delta(eps0, k, eps):
    """δ(ε) of the k-fold chain of ε₀-DP laws (``pure_dp_group_pair``'s atoms, at 60 digits)."""
    e0 = mp.mpf(eps0)
    c = 1 / (1 + mp.e ** e0)
    q = [c * mp.e ** (-(k - 1) * e0)] + [c * mp.e ** (-(k - i) * e0) * mp.expm1(e0) for i in range(1, k)] + [1 - c]
    p = q[::-1]
    g = mp.e ** mp.mpf(eps)
    return mp.fsum(max(a - g * b, 0) for a, b in zip(p, q))


@pytest.mark.parametrize("eps0,k", [(20.0, 3), (20.0, 2), (5.0, 10), (0.5, 4), (30.0, 5)])
def test_group_privacy_of_pure_dp_near_delta_one(eps0, k):
    """δ(ε) near 1: P's atoms were log q_i + (k − 2i)ε, whose sum cancels (|terms| ~ kε), and
    δ(0) of PureDP(20) in groups of 3 came out 1 − 1.2e-15 < the exact 1 − 8.5e-18."""
    from dpaccount import GroupPrivacy
    from dpaccount.mechanisms.discrete import PureDPMechanism
    m = GroupPrivacy()(PureDPMechanism(eps0), k)
    for eps in (0.0, 1.0, eps0 * k / 2):
        exact = _chain_delta(eps0, k, eps)
        low, up = m.get_approx_delta_bounds(eps)[:2]
        assert exact <= m.get_approx_delta(eps) and low <= exact <= up
        assert up <= exact * (1 + 1e-9) + 1e-12


def test_group_privacy_of_kary_rr_near_delta_one_has_consistent_bounds():
    """RR(0.5, 1000) in groups of 50: δ(0) was 1 − 5e-14 (the chain's is 1 − 1e-75 or so) and the
    bounds raised 'an attained composition's lower bound is above the dominating pairs' upper'."""
    from dpaccount import GroupPrivacy, RandomizedResponse
    m = GroupPrivacy()(RandomizedResponse(0.5, buckets=1000), 50)
    exact = _chain_delta(mp.log(999), 50, 0.0)
    low, up = m.get_approx_delta_bounds(0.0)[:2]
    assert low <= up and up >= exact and m.get_approx_delta(0.0) >= exact


def _renyi(p_law, q_law, alpha):
    a = mp.mpf(alpha)
    return mp.log(mp.fsum(x ** a * y ** (1 - a) for x, y in zip(p_law, q_law) if x > 0)) / (a - 1)


def _rr_pair(p, k):
    p = mp.mpf(p)
    r = (1 - p) / (k - 1)
    return [p, r] + [r] * (k - 2), [r, p] + [r] * (k - 2)


@pytest.mark.parametrize("alpha", [1.0001, 1.5, 2.0, 10.0])
@pytest.mark.parametrize("case", ["rr2", "rr1000", "rr1000b", "rr7", "discrete"])
def test_rdp_of_near_identical_finite_laws_is_above_the_exact(case, alpha):
    """log Σ p^α q^{1−α} cancels to ~0 for near-identical laws; divided by α − 1 its rounding
    put RR(0.001001, k=1000)'s ε(1.0001) at 9.959e-10 < the exact 1.0016e-9."""
    from dpaccount import DiscreteMechanism, RandomizedResponse
    if case == "discrete":
        p_law, q_law = [0.3, 0.2, 0.5], [0.30001, 0.19999, 0.5]
        m = DiscreteMechanism(p_law, q_law)
        exact = max(_renyi([mp.mpf(x) for x in p_law], [mp.mpf(x) for x in q_law], alpha),
                    _renyi([mp.mpf(x) for x in q_law], [mp.mpf(x) for x in p_law], alpha))
    else:
        p, k = {"rr2": (0.5001, 2), "rr1000": (0.001001, 1000), "rr1000b": (0.0011, 1000), "rr7": (0.15, 7)}[case]
        m = RandomizedResponse(p, buckets=k)
        exact = _renyi(*_rr_pair(p, k), alpha)
    got = m.get_RDP(alpha)
    assert exact <= got <= exact * (1 + 1e-6) + 1e-12 / (alpha - 1)


@pytest.mark.parametrize("eps", [709.5, 710.0, 1000.0, 5e-324, 1e-320])
@pytest.mark.parametrize("share", [0.0, 0.3, 0.7])
def test_exponential_mechanism_extreme_eps_bounds_bracket_the_envelope(eps, share):
    """The bounded-range witnesses overflowed (e^ε − 1, ε > 709: OverflowError) or underflowed
    (e^t − 1 = 0: ValueError) inside the bounds query; now they are skipped where they have no
    float logs. One use: δ(ε') = (e^{ε/2} − e^{ε'/2})²/(e^ε − 1)."""
    from dpaccount import ExponentialMechanism
    e, e1 = mp.mpf(eps), mp.mpf(eps) * mp.mpf(share)
    exact = (mp.e ** (e / 2) - mp.e ** (e1 / 2)) ** 2 / mp.expm1(e)
    m = ExponentialMechanism(eps)
    b = m.get_approx_delta_bounds(float(e1))
    assert (b.lower is None or b.lower <= exact * (1 + 1e-15)) and exact * (1 - 1e-15) <= b.upper
    eb = m.get_approxDP_bounds(1e-6)
    assert eb.lower is None or eb.lower <= eb.upper


@pytest.mark.parametrize("relation", [NR.ADD_OR_REMOVE_ONE, NR.REPLACE_ONE])
def test_empty_sample_without_replacement_is_a_no_op_under_the_accountants_relation(relation):
    """An empty sample was a replace-one no-op, and composing it with a Gaussian under add/remove
    was refused for a relation mismatch; it is a no-op under the accountant's relation: δ(ε) is
    the Gaussian's alone, Φ(Δ/2σ − ε σ/Δ) − e^ε Φ(−Δ/2σ − ε σ/Δ) (Balle & Wang 2018)."""
    acc = DpaccountAccountant(neighboring_relation=relation)
    acc.compose(dpa.ComposedDpEvent([dpa.SampledWithoutReplacementDpEvent(100, 0, dpa.GaussianDpEvent(1.0)),
                                     dpa.GaussianDpEvent(1.0)]))
    sens = mp.mpf(2 if relation == NR.REPLACE_ONE else 1)
    for eps in (0.0, 0.5, 2.0):
        e = mp.mpf(eps)
        exact = mp.ncdf(sens / 2 - e / sens) - mp.e ** e * mp.ncdf(-sens / 2 - e / sens)
        got = acc.get_delta(eps)
        assert exact <= got <= exact * (1 + 1e-3) + 1e-12
