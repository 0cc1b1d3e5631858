"""``MixturePair`` (the disjoint mixture over a public coin) against the explicit
finite pair on the disjoint union of the components' outcomes, and the spill's
two roles: counted in the upper curve, left out of the lower one."""
import math

import numpy as np
import pytest

from dpaccount.pld.pairs.discrete_pair import DiscretePair, randomized_response_pair
from dpaccount.pld.pairs.mixture import MixturePair
from dpaccount.pld.pairs.base import GaussianPair

EPS = np.array([-1.0, -0.2, 0.0, 0.3, 0.9, 1.7, 3.0])


def union(weights, pairs):
    """The finite pair on the disjoint union: each outcome of component i with P- and Q-mass × w_i."""
    log_p = np.concatenate([math.log(w) + p._log_p for w, p in zip(weights, pairs)])
    log_q = np.concatenate([math.log(w) + p._log_q for w, p in zip(weights, pairs)])
    return DiscretePair(log_p, log_q)


COMPONENTS = [randomized_response_pair(0.7), randomized_response_pair(0.9),
              DiscretePair(np.log([0.5, 0.3, 0.2]), np.log([0.2, 0.3, 0.5]))]


@pytest.mark.parametrize("weights", [(0.5, 0.5, 0.0), (0.2, 0.3, 0.5), (0.98, 0.01, 0.01)])
def test_the_mixture_is_the_disjoint_union(weights):
    parts = [(w, p) for w, p in zip(weights, COMPONENTS) if w > 0]
    mix = MixturePair(parts)
    exact = union([w for w, _ in parts], [p for _, p in parts])
    np.testing.assert_allclose(mix.delta(EPS), exact.delta(EPS), rtol=1e-13, atol=1e-16)
    assert np.all(mix.delta(EPS) >= exact.delta(EPS, upper=False))
    assert np.all(mix.delta(EPS, upper=False) <= exact.delta(EPS))
    edges = np.linspace(-2.5, 2.5, 11)
    for got, want in zip(mix.masses(edges), exact.masses(edges)):
        np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-17)
    points = np.array([math.log(0.7 / 0.3), -math.log(9.0), 0.123])
    for got, want in zip(mix.atom_masses(points), exact.atom_masses(points)):
        np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-17)
    np.testing.assert_allclose(mix.reverse().delta(EPS), exact.reverse().delta(EPS), rtol=1e-13, atol=1e-16)


def test_the_spill_is_a_totally_non_private_part_of_the_upper_curve_only():
    mix = MixturePair([(0.6, GaussianPair(1.0)), (0.4 - 1e-6, GaussianPair(2.0))], spill=1e-6)
    plain = 0.6 * GaussianPair(1.0).delta(EPS) + (0.4 - 1e-6) * GaussianPair(2.0).delta(EPS)
    np.testing.assert_allclose(mix.delta(EPS), plain + 1e-6, rtol=1e-13)
    assert np.all(mix.delta(EPS, upper=False) <= plain)
    assert mix.p_inf >= 1e-6 and mix.q_ninf >= 1e-6
    (p_low, _), (q_low, _) = mix.end_bounds()
    assert p_low == 0.0 and q_low == 0.0  # the exact mixture may have no mass at ±∞


def test_weights_are_checked():
    with pytest.raises(ValueError, match="positive weight"):
        MixturePair([(0.0, GaussianPair(1.0))])
    with pytest.raises(ValueError, match="weights"):
        MixturePair([(1.5, GaussianPair(1.0))])
