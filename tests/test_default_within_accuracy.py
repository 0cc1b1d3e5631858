"""The default ε(δ) is within the default accuracy of the tightest upper end we certify.

The default answer is a certified upper bound planned to lie within ``DEFAULT_ACCURACY``
(relative) of the exact ε. Its exact value is unknown for most of these mechanisms, but a
certified interval at accuracy 1e-4 brackets it: the default must lie at or above that
interval's lower end (it is an upper bound of the exact value) and at most the accuracy above
its upper end (the plan may not lose more than it promises against what the same pairs certify
on a finer grid). A plan that serves some δ from too coarse a grid (a tail split whose rounding
check misses a mixture's heavy losses) fails here, whatever the mechanism's true ε.
"""
import warnings

import pytest

import dpaccount as dpa

ACCURACY = 1e-3  # the default accuracy (queries/intervals.py)
FINE = 1e-4


def _catalogue():
    g = dpa.GaussianMechanism(1.1)
    g1 = dpa.GaussianMechanism(1.0, relation="replace-one")
    sampled = dpa.PoissonSampling()(g, 256 / 60000)
    return {
        "gaussian-x3": dpa.Composition()([g], [3]),
        "laplace-x5": dpa.Composition()([dpa.LaplaceMechanism(1.0)], [5]),
        "dpsgd-1000": dpa.Composition()([sampled], [1000]),
        "dpsgd-20": dpa.Composition()([sampled], [20]),
        "poisson-laplace-x50": dpa.Composition()([dpa.PoissonSampling()(dpa.LaplaceMechanism(1.0), 0.05)], [50]),
        "hetero": dpa.Composition()([sampled, dpa.PoissonSampling()(dpa.GaussianMechanism(2.0), 0.02),
                                     dpa.LaplaceMechanism(1.0)], [500, 200, 3]),
        "subset": dpa.Composition()([dpa.SubsetSampling()(g1, 0.01)], [200]),
        "truncated": dpa.Composition()([dpa.TruncatedPoissonSampling()(g, 0.01, 10000, 150)], [100]),
        "with-replacement-4": dpa.Composition()([dpa.SamplingWithReplacement()(g1, 1000, 4)], [20]),
        "with-replacement-8": dpa.Composition()([dpa.SamplingWithReplacement()(g1, 500, 8)], [50]),
        "group-laplace": dpa.Composition()([dpa.GroupPrivacy()(dpa.LaplaceMechanism(1.0), 3)], [10]),
        "mixture": dpa.MixtureOfGaussiansMechanism(1.0, [1.0, 0.5], [0.7, 0.3]),
        "small-q": dpa.Composition()([dpa.PoissonSampling()(dpa.GaussianMechanism(0.8), 1e-3)], [100]),
    }


FAST = ("dpsgd-1000", "subset", "with-replacement-4", "hetero")
CASES = [pytest.param(name, delta, marks=() if name in FAST and delta == 1e-5 else pytest.mark.slow)
         for name in _catalogue() for delta in (1e-5, 1e-10)]


@pytest.mark.parametrize("name,delta", CASES)
def test_default_epsilon_within_the_accuracy_of_the_finer_certified_interval(name, delta):
    m = _catalogue()[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = m.get_approxDP(delta)
        try:
            b = m.get_approxDP_bounds(delta, accuracy=FINE)
        except dpa.AccuracyNotReached as e:  # the pairs' own interval may stay wider than asked
            b = e.bounds
        except dpa.GridTooLarge:
            b = m.get_approxDP_bounds(delta, accuracy=ACCURACY)
    assert b is not None and b.certified
    assert b.lower <= got, (name, delta, got, b)
    assert got <= b.upper * (1 + ACCURACY) + 1e-12, (name, delta, got, b)
