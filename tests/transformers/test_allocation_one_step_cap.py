"""One step of the base caps an epoch of random allocation (``pld/allocation/cap.py``).

The claim (joint convexity: the epoch's pair is the average of t pairs that are the base
pair post-processed) against exact enumeration for finite bases; the cap against the
closed-form Gaussian (mpmath) where the epoch's lattice would otherwise be far looser
than the one step (σ = 1e6, t = 1000: δ(0) was 4.6e-5 against the step's 4.0e-7), alone
and composed, and against the epoch's certified lower end.
"""
import math

import mpmath as mp
import numpy as np
import pytest
from oracles import allocation_law, discrete_delta, gdp_delta, gdp_epsilon

from dpaccount import Composition, DiscreteMechanism, GaussianMechanism, RandomAllocation, RandomizedResponse

SIGMA, STEPS = 1e6, 1000
DELTAS = [1e-7, 1e-8, 1e-10]


@pytest.mark.parametrize("p,q", [((0.8, 0.2), (0.2, 0.8)), ((0.5, 0.3, 0.2), (0.2, 0.3, 0.5)),
                                 ((0.9, 0.1, 0.0), (0.3, 0.3, 0.4))])
@pytest.mark.parametrize("steps", [2, 3, 5])
def test_an_epoch_is_never_worse_than_its_one_step(p, q, steps):
    """Exact (P_t, Q^t) by enumeration: δ(ε) ≤ the base pair's in both orders, every ε."""
    big_p, big_q = ([mp.mpf(x.numerator) / x.denominator for x in law] for law in allocation_law(p, q, steps))
    epoch = list(zip(big_p, big_q))
    for eps in (0.0, 0.05, 0.2, 0.5, 1.0, 2.0, 5.0):
        assert discrete_delta(eps, epoch) <= discrete_delta(eps, list(zip(p, q)))
        assert discrete_delta(eps, [b[::-1] for b in epoch]) <= discrete_delta(eps, list(zip(q, p)))


@pytest.fixture(scope="module")
def tiny_loss_epoch():
    return RandomAllocation()(GaussianMechanism(SIGMA), STEPS)


def test_a_tiny_loss_epoch_is_no_worse_than_one_gaussian_step(tiny_loss_epoch):
    """ε(δ) and δ(ε) at most the one Gaussian step's (μ = 1/σ): the library's own answer for
    the step up to the pair's rounding (1e-9 relative), the closed form (mpmath) up to the
    library's Gaussian δ, whose two terms near ½ cancel to δ ~ 4e-7 here (1.3e-8 relative
    measured; 1e-6 allowed); at least the epoch's certified lower end."""
    mu, step = 1 / SIGMA, GaussianMechanism(SIGMA)
    for delta in DELTAS:
        b = tiny_loss_epoch.get_approxDP_bounds(delta)
        assert b.certified and b.lower <= b.upper == tiny_loss_epoch.get_approxDP(delta)
        assert b.upper <= step.get_approxDP(delta) * (1 + 1e-9)
        assert b.upper <= float(gdp_epsilon(delta, mu)) * (1 + 1e-6)
    eps = [0.0, 1e-7, 1e-6, 3e-6]
    ours = tiny_loss_epoch.get_approx_delta(eps)
    exact = np.array([float(gdp_delta(e, mu)) for e in eps])
    assert np.all(ours <= exact * (1 + 1e-6) + 1e-300), (ours, exact)
    assert np.all(tiny_loss_epoch.get_approx_delta_bounds(eps).lower <= ours)


def test_composed_tiny_loss_epochs_no_worse_than_composed_steps(tiny_loss_epoch):
    """Ten epochs: at most ten Gaussian steps' closed form (μ√10) within the grid's default
    relative accuracy 1e-3 (the epoch's pair is the step's; composed on the grid)."""
    ten = Composition()([tiny_loss_epoch], [10])
    assert ten.get_approxDP(1e-8) <= float(gdp_epsilon(1e-8, math.sqrt(10) / SIGMA)) * (1 + 1e-3)


def test_the_cap_leaves_an_amplifying_epoch_alone():
    """Where the allocation amplifies (randomized response over 10 steps, a Gaussian with
    σ = 2 over 100) its epoch stays far below the one step."""
    rr = RandomizedResponse(0.8)
    eps = [0.3, 0.6, 1.0]
    assert np.all(RandomAllocation()(rr, 10).get_approx_delta(eps) < 0.5 * rr.get_approx_delta(eps))
    g = GaussianMechanism(2.0)
    assert RandomAllocation()(g, 100).get_approxDP(1e-6) < 0.5 * g.get_approxDP(1e-6)


def test_an_asymmetric_base_is_capped_in_each_order():
    """A finite base whose add pair is not its remove pair reversed: the epoch's δ(ε) at most
    the base's at every ε (both directions are in ``get_approx_delta``)."""
    base = DiscreteMechanism([0.5, 0.3, 0.2], [0.2, 0.3, 0.5])
    epoch = RandomAllocation()(base, 3)
    eps = [0.0, 0.1, 0.4, 1.0]
    assert np.all(epoch.get_approx_delta(eps) <= base.get_approx_delta(eps) * (1 + 1e-9) + 1e-15)


@pytest.mark.parametrize("steps", [3, 10, 100])
def test_a_capped_finite_epoch_lies_between_its_ends_and_the_exact_value(steps):
    """Randomized response at p = ½ + 2⁻²³ (a loss of ~5e-7: the lattice's error exceeds the
    allocation's gain, the cap takes the step's pair): the certified lower end ≤ the exact
    epoch (enumeration, both orders) ≤ our upper bound ≤ the one step's."""
    p = 0.5 + 2.0 ** -23
    base = RandomizedResponse(p)
    epoch = RandomAllocation()(base, steps)
    assert epoch.pairs.remove[0][0].key()[0] == "one-step-cap"
    big_p, big_q = ([mp.mpf(x.numerator) / x.denominator for x in law]
                    for law in allocation_law((p, 1 - p), (1 - p, p), steps))
    eps = [0.0, 1e-7, 3e-7]
    exact = [max(discrete_delta(e, list(zip(big_p, big_q))), discrete_delta(e, list(zip(big_q, big_p))))
             for e in eps]
    b = epoch.get_approx_delta_bounds(eps)
    assert np.all(b.lower <= np.array([float(x) for x in exact]))
    assert np.all(b.upper >= np.array([float(x) for x in exact]))
    assert np.all(b.upper <= base.get_approx_delta(eps) * (1 + 1e-9))
