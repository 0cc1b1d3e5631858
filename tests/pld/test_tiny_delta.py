"""ε(δ) at astronomically small δ (1e-30 … 1e-100) within the default accuracy.

There the base grid is transform-noise bound, its ε sits high, and the band
tilted for that ε starts its window above the exact answer: every loss below
lands in its first cell, so ε(δ) reads the window's start, a valid but loose
upper end (ε(1e-40) 48.42 for an exact 40.89). A reading in a tilted grid's
first cell now counts as unresolved (``eps_of_delta.at_floor``) and the query
re-centres lower.

Each default ε̂ is checked two ways, by queries of other routes: not below the
certified lower end of ε(δ), and within 0.2 % of the exact value: the certified
*lower* end of δ at ε̂·(1 − 2e-3) is above δ, so the exact ε(δ) is above that."""
import pytest

import dpaccount as dpa

TIGHT = 2e-3  # the default accuracy (1e-3), and as much again for the δ interval's own width


def _poisson_gaussian():
    return dpa.Composition()([dpa.PoissonSampling()(dpa.GaussianMechanism(sigma=1.0), 0.3)], [20])


def _with_a_discrete_part():
    return dpa.Composition()([dpa.DiscreteMechanism([0.9, 0.1], [0.6, 0.4]),
                              dpa.PoissonSampling()(dpa.GaussianMechanism(sigma=1.0), 0.3)], [10, 20])


def _check(mechanism, delta):
    eps = mechanism.get_approxDP(delta)
    assert mechanism.get_approxDP_bounds(delta).lower <= eps
    assert mechanism.get_approx_delta_bounds(eps * (1 - TIGHT)).lower > delta, eps


@pytest.mark.parametrize("delta", [1e-40, 1e-100])
def test_poisson_gaussian_at_tiny_delta_is_within_the_accuracy(delta):
    _check(_poisson_gaussian(), delta)


@pytest.mark.slow
@pytest.mark.parametrize("delta", [1e-30, 1e-100])
def test_a_composition_with_a_discrete_part_at_tiny_delta_is_within_the_accuracy(delta):
    _check(_with_a_discrete_part(), delta)
