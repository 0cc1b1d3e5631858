"""An ε near 0 whose relative accuracy needs a grid beyond the cap (issue 39, item 5):
the default answers a certified upper bound, its accuracy relative to
max(ε, the default route's ``Floors``), with a warning naming the accuracy it answered at."""
import warnings

import pytest

import dpaccount as dpa
from dpaccount import Composition, GaussianMechanism, PoissonSampling
from dpaccount.queries.methods import named


def _rare(steps):
    """σ = 50 at q = 1e-6: ε(δ) is ~0 (the total variation ~7e-7 at 8642 steps)."""
    return Composition()([PoissonSampling()(GaussianMechanism(50.0), 1e-6)], [steps])


def test_an_epsilon_near_zero_is_answered_and_certified():
    """σ = 50, q = 1e-6, 8642 steps (the issue's case): GridTooLarge at the default accuracy
    before. ε(1e-5) = 0, which RDP certifies; ε(1e-9) ≈ 5.4e-6 lies in a certified bracket,
    within the relaxed accuracy of its lower end."""
    m = _rare(8642)
    with pytest.raises(dpa.GridTooLarge, match="accuracy=0.001 needs"):  # the relative accuracy asked alone
        m.get_approxDP(1e-9, method="pld")
    with pytest.warns(dpa.AccuracyWarning, match=r"accuracy=0\.001 needs.*answered at accuracy=0\.016"):
        eps = m.get_approxDP([1e-5, 1e-9])
    rdp = m.get_approxDP([1e-5, 1e-9], method="rdp")
    assert eps[0] == rdp[0] == 0.0  # RDP's upper bound is 0 there: the exact ε is 0
    assert rdp[1] < named("pld").floors.epsilon
    bounds = m.get_approxDP_bounds(1e-9, accuracy=0.05)  # certified: lower ≤ exact ≤ upper
    assert bounds.certified and bounds.lower <= eps[1] <= min(rdp[1], bounds.upper)
    assert eps[1] <= bounds.lower * (1 + 0.016)


def test_an_epsilon_above_the_floor_is_still_refused_with_what_fits():
    m = Composition()([PoissonSampling()(GaussianMechanism(1.1), 256 / 60000)], [14063])
    with warnings.catch_warnings():
        warnings.simplefilter("error", dpa.AccuracyWarning)
        with pytest.raises(dpa.GridTooLarge, match="fits"):
            m.get_approxDP(1e-5, accuracy=1e-7)
