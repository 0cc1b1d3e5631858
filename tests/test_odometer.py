"""The online accountant against exact values and the batch accountant."""
import math
import warnings

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


def test_past_the_horizon_warns_and_stays_an_upper_bound():
    g = dpa.GaussianMechanism(sigma=1.0)
    odo = dpa.PrivacyOdometer(dpa.Composition()([g], [4]))
    with pytest.warns(RuntimeWarning, match="horizon"):
        odo.step(g, count=400)
    exact = float(gdp_delta(30.0, 20.0))
    assert odo.get_approx_delta(30.0) >= exact


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
