"""The online accountant against exact values and the batch accountant."""
import math
import pickle
import warnings

import numpy as np
import pytest
from oracles import gdp_delta

import dpaccount as dpa


def test_gaussian_steps_match_the_closed_form():
    """Steps of Gaussian mechanisms with different σ: after each batch of
    steps the odometer's δ(ε) is an upper bound within 0.1% of μ-GDP."""
    odo = dpa.PrivacyOdometer(dpa.Composition()([dpa.GaussianMechanism(sigma=2.0)], [60]))
    mu2 = 0.0
    for sigma, k in [(2.0, 10), (3.0, 20), (1.5, 5)]:
        odo.step(dpa.GaussianMechanism(sigma=sigma), count=k)
        mu2 += k / sigma ** 2
        for eps in [0.5, 2.0, 5.0]:
            exact = float(gdp_delta(eps, math.sqrt(mu2)))
            assert exact <= odo.get_approx_delta(eps) <= exact * (1 + 1e-3) + 1e-15


def test_heterogeneous_steps_agree_with_the_batch_accountant():
    a = dpa.PoissonSampling()(dpa.GaussianMechanism(sigma=1.0), 0.01)
    b = dpa.PoissonSampling()(dpa.LaplaceMechanism(b=2.0), 0.05)
    odo = dpa.PrivacyOdometer(dpa.Composition()([a, b], [400, 400]))
    for _ in range(100):
        odo.step(a)
        odo.step(b)
    batch = dpa.Composition()([a, b], [100, 100])
    for eps in [0.5, 1.0]:
        bounds = batch.get_approx_delta_bounds(eps, accuracy=1e-2)  # Laplace atoms: first order
        assert bounds.lower <= odo.get_approx_delta(eps) <= bounds.upper * (1 + 1e-3)
    eb = batch.get_approxDP_bounds(1e-6, accuracy=1e-2)
    assert eb.lower <= odo.get_approxDP(1e-6) <= eb.upper * (1 + 1e-3)
    assert odo.steps == 200


def test_bad_input():
    g = dpa.GaussianMechanism(sigma=1.0)
    with pytest.raises(TypeError, match="horizon"):
        dpa.PrivacyOdometer("DP-SGD")
    odo = dpa.PrivacyOdometer(dpa.Composition()([g], [4]))
    with pytest.raises(TypeError, match="mechanism"):
        odo.step(0.5)
    with pytest.raises(ValueError, match="count"):
        odo.step(g, count=0)
    with pytest.raises(ValueError, match="eps"):
        odo.get_approx_delta(-1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert odo.get_approx_delta(1.0) == 0.0  # nothing composed yet


def test_every_checkpoint_of_a_long_run_lies_in_the_batch_bracket():
    """DP-SGD steps one at a time: early (every frequency live), middle (high
    frequencies dying, the live prefix shrinking) and late, the odometer's δ
    is never below the batch accountant's certified bracket and at most 0.1%
    above it (1% after one step: the grid is planned for the horizon, coarse
    for a single step)."""
    step = dpa.PoissonSampling()(dpa.GaussianMechanism(sigma=1.0), 0.02)
    odo = dpa.PrivacyOdometer(dpa.Composition()([step], [400]))
    done = 0
    for checkpoint in (1, 12, 60, 400):
        for _ in range(checkpoint - done):
            odo.step(step)
        done = checkpoint
        bounds = dpa.Composition()([step], [done]).get_approx_delta_bounds(1.0)
        slack = 1e-2 if done == 1 else 1e-3
        assert bounds.lower <= odo.get_approx_delta(1.0) <= bounds.upper * (1 + slack) + 1e-15


def _sgd_odometer(steps):
    step = dpa.PoissonSampling()(dpa.GaussianMechanism(sigma=1.0), 0.02)
    odo = dpa.PrivacyOdometer(dpa.Composition()([step], [400]))
    if steps:
        odo.step(step, steps)
    return odo, step


def test_queries_are_vectorised_and_agree_with_the_batch_bracket():
    odo, step = _sgd_odometer(300)
    batch = dpa.Composition()([step], [300])
    # (no tilting online: δ far below the transform noise, ~1e-10 here, is loose, never low)
    eps, deltas = np.array([0.5, 1.0, 1.5, 2.0]), np.array([1e-3, 1e-5, 1e-7])
    got_d, got_e = odo.get_approx_delta(eps), odo.get_approxDP(deltas)
    assert got_d.shape == eps.shape and got_e.shape == deltas.shape
    for e, d in zip(eps, got_d):
        b = batch.get_approx_delta_bounds(float(e))
        assert b.lower <= d <= b.upper * (1 + 1e-3) + 1e-15
        assert d <= odo.get_approx_delta(float(e)) * (1 + 1e-3) + 1e-15  # the two routes agree
    for d, e in zip(deltas, got_e):
        b = batch.get_approxDP_bounds(float(d))
        assert b.lower <= e <= b.upper * (1 + 1e-3)
    assert odo.get_epsilon(1e-6) == odo.get_approxDP(1e-6)


def test_a_step_of_another_relation_is_refused():
    odo = dpa.PrivacyOdometer(dpa.Composition()([dpa.GaussianMechanism(sigma=1.0)], [10]))
    with pytest.raises(ValueError, match="replace-one"):
        odo.step(dpa.GaussianMechanism(sigma=1.0, relation="replace-one"))
    assert odo.steps == 0


def test_opacus_style_steps_are_subsampled_gaussians():
    odo, step = _sgd_odometer(0)
    odo.step(noise_multiplier=1.0, sample_rate=0.02)
    other, _ = _sgd_odometer(1)
    assert odo.get_approxDP(1e-5) == other.get_approxDP(1e-5)
    with pytest.raises(TypeError, match="noise_multiplier"):
        odo.step(noise_multiplier=1.0)
    with pytest.raises(TypeError, match="not both"):
        odo.step(step, noise_multiplier=1.0, sample_rate=0.02)


def test_state_dict_round_trips_through_pickle():
    odo, step = _sgd_odometer(120)
    odo.step(dpa.GaussianMechanism(sigma=8.0), 3)
    state = pickle.loads(pickle.dumps(odo.state_dict()))
    assert len(pickle.dumps(state)) < 10_000  # the steps taken, not the grids
    fresh = dpa.PrivacyOdometer(dpa.GaussianMechanism(sigma=50.0)).load_state_dict(state)
    assert fresh.steps == odo.steps == 123
    for e in (0.5, 2.0):
        np.testing.assert_allclose(fresh.get_approx_delta(e), odo.get_approx_delta(e), rtol=1e-9)
    np.testing.assert_allclose(fresh.get_approxDP([1e-5, 1e-8]), odo.get_approxDP([1e-5, 1e-8]), rtol=1e-9)
    with pytest.raises(ValueError, match="state"):
        fresh.load_state_dict({"version": 99})
    assert "123 steps" in repr(fresh) and "add/remove" in repr(fresh)
