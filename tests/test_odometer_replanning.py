"""Issue 28 item 3: the odometer against the offline composition of the same
steps — past its horizon, over steps unlike the horizon, and after refused
steps. Its answer is a rigorous upper bound: never below the offline
certified lower bound, and within a small factor of it (the grid re-planned
where the horizon's no longer suits the steps)."""
import math
import pickle
import warnings

import numpy as np
import pytest
from oracles import gdp_delta

import dpaccount as dpa

SGD = dpa.PoissonSampling()(dpa.GaussianMechanism(sigma=1.1), 0.01)
HORIZON = dpa.Composition()([SGD], [100])


def _offline(steps, delta, accuracy=1e-3):
    """The certified bracket of ε(δ) of the composition of ``steps`` ({mechanism: count})."""
    comp = dpa.Composition()(list(steps), list(steps.values()))
    try:
        return comp.get_approxDP_bounds(delta, accuracy=accuracy)
    except dpa.AccuracyNotReached as exc:  # still a certified bracket, only wider
        return exc.bounds


def _state(odo):
    return [odo.steps, odo.get_approx_delta(1.0), *odo.get_approx_delta(np.array([0.5, 1.0])),
            odo.get_approxDP(1e-5), *odo.get_approxDP(np.array([1e-5, 1e-8]))]


@pytest.mark.parametrize("bad, error", [
    ((dpa.GaussianMechanism(sigma=1e-4), 1), dpa.AccuracyNotReached),  # no grid represents its losses
    ((SGD, 10 ** 12), dpa.GridTooLarge),                                # no window within the cap
    ((dpa.GaussianMechanism(sigma=1.0, relation="replace-one"), 1), ValueError),
    ((SGD, 0), ValueError),
])
def test_a_refused_step_changes_nothing(bad, error):
    odo = dpa.PrivacyOdometer(HORIZON)
    odo.step(SGD, 5)
    before = _state(odo)
    with pytest.raises(error):
        odo.step(*bad)
    assert _state(odo) == before
    odo.step(SGD, 5)  # and it goes on as if the refused step had never been asked for
    fresh = dpa.PrivacyOdometer(HORIZON).step(SGD, 10)
    np.testing.assert_allclose(_state(odo), _state(fresh), rtol=1e-9, atol=1e-15)  # (z⁵·z⁵, z¹⁰ round apart)


def test_past_the_horizon_the_grid_is_replanned():
    """300 steps of a horizon of 100 (it answered ε = inf; offline 0.858), in one call
    and one step at a time: never below the certified lower bound, within 0.1%."""
    bounds = _offline({SGD: 300}, 1e-5)
    at_once = dpa.PrivacyOdometer(HORIZON).step(SGD, 300)
    one_by_one = dpa.PrivacyOdometer(HORIZON)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # re-planning is not a failure: nothing to warn about
        for _ in range(300):
            one_by_one.step(SGD)
    for odo in (at_once, one_by_one):
        assert odo.steps == 300
        eps = odo.get_approxDP(1e-5)
        assert bounds.lower <= eps <= bounds.lower * (1 + 1e-3)


def test_far_past_the_horizon_stays_within_the_accuracy_of_the_exact_value():
    g = dpa.GaussianMechanism(sigma=1.0)
    odo = dpa.PrivacyOdometer(dpa.Composition()([g], [4]))
    odo.step(g, count=400)
    for eps in (30.0, 60.0):
        exact = float(gdp_delta(eps, 20.0))
        assert exact <= odo.get_approx_delta(eps) <= exact * (1 + 1e-3)


def test_one_laplace_step_on_a_dp_sgd_grid():
    """ε(δ) of Laplace(b = 1) is 1 − 2δ/(e^{-1}·...) ≈ 1 at δ = 1e-5 (it answered inf):
    exactly, δ(ε) = 1 − e^{(ε − 1)/2} for ε < 1, so ε(δ) = 1 + 2 log(1 − δ)."""
    odo = dpa.PrivacyOdometer(HORIZON).step(dpa.LaplaceMechanism(1.0))
    exact = 1.0 + 2.0 * math.log1p(-1e-5)
    assert exact <= odo.get_approxDP(1e-5) <= exact * (1 + 1e-3)


MIXES = {
    "much smaller rate": {dpa.PoissonSampling()(dpa.GaussianMechanism(sigma=1.1), 0.0005): 100},
    "randomized response": {dpa.RandomizedResponse(0.52): 20},
    "half the horizon, then subsampled Laplace": {
        SGD: 50, dpa.PoissonSampling()(dpa.LaplaceMechanism(b=3.0), 0.002): 50},
    "wide Laplace after DP-SGD": {SGD: 10, dpa.LaplaceMechanism(b=0.26): 1, dpa.GaussianMechanism(sigma=5.0): 3},
}


@pytest.mark.parametrize("name", MIXES)
def test_steps_unlike_the_horizon_agree_with_the_offline_composition(name):
    """Steps of other mechanisms, one at a time (up to 2.7× looser in δ, or ε = inf,
    before): the odometer is never below the offline certified lower bound, and
    within 0.5% of it in ε and δ."""
    steps = MIXES[name]
    odo = dpa.PrivacyOdometer(HORIZON)
    for mechanism, count in steps.items():
        for _ in range(count):
            odo.step(mechanism)
    bounds = _offline(steps, 1e-5)
    eps = odo.get_approxDP(1e-5)
    assert bounds.lower <= eps <= bounds.lower * (1 + 5e-3)
    comp = dpa.Composition()(list(steps), list(steps.values()))
    at = 0.5 * bounds.upper
    d = comp.get_approx_delta_bounds(at, accuracy=3e-3)  # at 1e-2 the interval left too little room for 0.5 %
    assert d.lower <= odo.get_approx_delta(at) <= d.lower * (1 + 5e-3)


def test_ordinary_steps_up_to_the_horizon_warn_nothing():
    """(It warned "gone past its horizon" within the horizon: its Chernoff bound
    on a coarse set of tilts, the planner's window on the best tilt.)"""
    sgd = dpa.PoissonSampling()(dpa.GaussianMechanism(sigma=1.1), 0.004)
    odo = dpa.PrivacyOdometer(dpa.Composition()([sgd], [3000]))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        odo.step(sgd, 2999)
        odo.step(noise_multiplier=1.1, sample_rate=0.004)
    bounds = _offline({sgd: 3000}, 1e-5)
    assert bounds.lower <= odo.get_approxDP(1e-5) <= bounds.lower * (1 + 1e-3)


def test_state_round_trips_after_replanning_and_bad_states_are_refused():
    odo = dpa.PrivacyOdometer(HORIZON)
    for _ in range(150):
        odo.step(SGD)
    odo.step(dpa.LaplaceMechanism(b=2.0), 2)
    state = pickle.loads(pickle.dumps(odo.state_dict()))
    fresh = dpa.PrivacyOdometer(dpa.GaussianMechanism(sigma=50.0)).load_state_dict(state)
    assert fresh.steps == odo.steps == 152
    np.testing.assert_allclose(fresh.get_approxDP([1e-5, 1e-8]), odo.get_approxDP([1e-5, 1e-8]), rtol=1e-9)
    before = _state(fresh)
    for bad, match in [({"version": 1}, "lacks 'horizon'"), ({**state, "steps": "x"}, r"state\['steps'\]"),
                       ({**state, "steps": [(SGD, -1)]}, "count"), ({**state, "version": 7}, "version 7"),
                       ([1], "list")]:
        with pytest.raises(ValueError, match=match):
            fresh.load_state_dict(bad)
        assert _state(fresh) == before


def test_a_step_that_tells_the_neighbours_apart_surely_makes_every_answer_vacuous():
    """P ⟂ Q (its loss is +∞ surely): δ(ε) = 1 and ε(δ) = ∞ from then on, exactly
    (it raised a raw numpy error); such a horizon is refused, naming it."""
    disjoint = dpa.DiscreteMechanism([1, 0], [0, 1])
    odo = dpa.PrivacyOdometer(HORIZON).step(SGD, 3).step(disjoint).step(SGD, 300)
    assert odo.steps == 304
    assert odo.get_approx_delta(2.0) == 1.0 and odo.get_approxDP(1e-5) == math.inf
    assert np.all(odo.get_approx_delta(np.array([0.0, 5.0])) == 1.0)
    fresh = dpa.PrivacyOdometer(SGD).load_state_dict(pickle.loads(pickle.dumps(odo.state_dict())))
    assert fresh.steps == 304 and fresh.get_approxDP(1e-5) == math.inf
    with pytest.raises(ValueError, match="horizon"):
        dpa.PrivacyOdometer(disjoint)
