"""Which direction of a composition goes first only chooses work.

A profile answers the larger of the remove and add directions: the one the plan's
saddle points put higher (``Plan.remove_leads``) goes first, and the other is read
from a coarser scout's base grid and refined only until it is below the first's
answer (``StepProfile._worst``, ``PrivacyProfile.delta``). With the leader chosen
wrong on purpose the answers must still lie in the certified intervals computed
with the leader as planned (the other direction, read from its scout, is then
above the first's answer and refined at the query's own step).
"""
import numpy as np
import pytest

import dpaccount as dpa
from dpaccount.pld.grids.cache import GRIDS
from dpaccount.pld.profiles.plan import Plan
from dpaccount.pld.profiles.profile import PrivacyProfile

ACCURACY = 1e-3


def dpsgd():
    """DP-SGD, 1,000 steps: its remove direction sets ε(δ) and δ(ε)."""
    return dpa.Composition()([dpa.PoissonSampling()(dpa.GaussianMechanism(sigma=1.1), 256 / 60000)], [1000])


@pytest.fixture(scope="module")
def intervals():
    GRIDS.clear()
    m = dpsgd()
    return m.get_approxDP_bounds(1e-5), m.get_approx_delta_bounds(1.0)


@pytest.fixture
def wrong_leader(monkeypatch):
    planned = Plan.remove_leads
    monkeypatch.setattr(Plan, "remove_leads", lambda self, values, of_delta: ~planned(self, values, of_delta))
    GRIDS.clear()
    yield
    GRIDS.clear()


def test_the_planned_leader_is_the_direction_with_the_larger_answer():
    """DP-SGD's remove direction: above the add one at δ(1) on the grids, first by the plan."""
    profile = PrivacyProfile(dpsgd().pairs, ACCURACY)
    at = profile.at_level(profile.plan.eps_level)
    assert at.delta_of("remove", np.array([1.0]))[0] > at.delta_of("add", np.array([1.0]))[0]
    assert profile.plan.remove_leads(np.array([1.0]), False).all()
    assert profile.plan.remove_leads(np.array([1e-5]), True).all()


def test_a_wrong_leader_still_answers_within_the_certified_intervals(intervals, wrong_leader):
    eps_bounds, delta_bounds = intervals
    m = dpsgd()
    eps, delta = m.get_approxDP(1e-5), m.get_approx_delta(1.0)
    assert eps_bounds.lower <= eps <= eps_bounds.upper * (1 + ACCURACY)
    assert delta_bounds.lower <= delta <= delta_bounds.upper * (1 + ACCURACY)


def test_a_bands_predicted_noise_is_near_its_grids():
    """``band_noise`` (which decides whether a band's tilted grid is composed) against the
    noise bound of that grid once composed, at ε across the band: within a factor 3."""
    from dpaccount.pld.grids.accountant import step_grids
    from dpaccount.pld.profiles.bands import Frame, band_noise
    from dpaccount.pld.profiles.tiers import TIERS
    GRIDS.clear()
    m = dpsgd()
    profile = PrivacyProfile(m.pairs, 1e-5)
    at = profile.at_level(profile.plan.eps_level)
    tilt = int(at._band_tilt("remove", [0.6])[0])
    items = step_grids(m.pairs.remove, at.step, TIERS[0])
    eps = tilt * at.step + np.linspace(0.0, 0.3, 4)
    predicted = band_noise(items, None, Frame.of(at.grid("remove")), tilt, eps)
    actual = at.grid("remove", TIERS[0], True, tilt).noise_effect(eps)
    assert np.all(predicted <= 3 * actual) and np.all(actual <= 3 * predicted)
