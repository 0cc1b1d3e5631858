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
