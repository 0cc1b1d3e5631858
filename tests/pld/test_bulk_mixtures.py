"""The default ε(δ) of mixtures of rare heavy losses lands within the accuracy
(``pld/profiles/bulk.py``): sampling with replacement (a mixture of k-fold
group pairs, sensitivities Δ, 2Δ, 3Δ, … with falling weights, sampled without
replacement: an atom at loss 0 of mass ~0.38 per step), Poisson-sampled
mixtures of Gaussians, a Laplace beside a subsampled Gaussian. At δ = 1e-5 and
1e-8 their ε sits in the near-Gaussian bulk of the small losses, where the
plan's saddle point (of the whole law, led by the rare heavy losses) sizes
the grid step too coarse; the ε(δ) level's own grids must say so. With the
atom at 0 outside the check, the with-replacement composition read ε(1e-5) =
0.2479970 against a certified upper end 0.2437572 (+1.7 %).

Each default answer must lie in [lo, lo·(1 + 1e-3)], lo the certified lower
end (optimistic grids) of the same pairs on the finest grid the tails of an
accuracy of 1e-5 plan (within ~1e-4 of the exact value here)."""
import numpy as np
import pytest

import dpaccount as dpa

TIGHT = 1e-3  # the default accuracy
DELTAS = np.array([1e-5, 1e-8])


def _replace_one_gaussian():
    return dpa.GaussianMechanism(1.0, relation="replace-one")


def _with_replacement(batch, steps):
    return dpa.Composition()([dpa.SamplingWithReplacement()(_replace_one_gaussian(), 1000, batch)], [steps])


MECHANISMS = {
    "with-replacement-4": lambda: _with_replacement(4, 20),
    "with-replacement-8": lambda: _with_replacement(8, 20),
    "subset": lambda: dpa.Composition()([dpa.SubsetSampling()(_replace_one_gaussian(), 0.01)], [200]),
    "poisson-mixture": lambda: dpa.Composition()(
        [dpa.PoissonSampling()(dpa.MixtureOfGaussiansMechanism(1.0, [1.0, 3.0], [0.9, 0.1]), 0.05)], [30]),
    "laplace-and-poisson": lambda: dpa.Composition()(
        [dpa.LaplaceMechanism(1.0), dpa.PoissonSampling()(dpa.GaussianMechanism(1.0), 0.01)], [1, 100]),
}


def _certified_lower(mechanism):
    """The certified lower end of the pairs' ε(``DELTAS``) on the finest grid the plan of accuracy 1e-5 sets."""
    profile = mechanism.privacy_profile(1e-5)
    level = profile.plan.eps_level + profile.plan.extra
    return np.asarray(profile.at_level(level).epsilon_lower(DELTAS))


def _check(name):
    mechanism = MECHANISMS[name]()
    got = np.asarray(mechanism.get_approxDP(DELTAS))
    lower = _certified_lower(mechanism)
    assert np.all(got >= lower), (got, lower)
    assert np.all(got <= lower * (1 + TIGHT)), got / lower - 1


def test_sampling_with_replacement_default_is_within_the_accuracy():
    """The issue's case: +1.7 % at δ = 1e-5 with the atom at 0 outside the bulk check."""
    _check("with-replacement-4")


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.slow) if n == "with-replacement-8" else n
                                  for n in MECHANISMS if n != "with-replacement-4"])
def test_mixtures_of_rare_heavy_losses_default_is_within_the_accuracy(name):
    _check(name)
