"""``Discretise()``: a mechanism frozen as its pessimistic PLD grid.

Checked against exact values: k-fold randomized response (binomial sum),
staged Gaussian compositions up to 10⁹ steps (μ-GDP closed form), and a
staged subsampled Gaussian against the direct composition's certified bracket.
"""
import math
from statistics import NormalDist

import numpy as np
import pytest
from oracles import gdp_delta, gdp_epsilon, rr_composed_delta

from dpaccount import (Composition, Discretise, GaussianMechanism, PoissonSampling, RandomAllocation,
                       RandomizedResponse)
from dpaccount.transformers.discretise import grid_to_pair


def _check_upper(value, exact, rel):
    # absolute 1e-13: where the exact δ is 0 (ε above every loss) the grid's atoms on
    # grid points still send a rounding sliver (~1e-14) upwards
    assert float(exact) <= value <= float(exact) * (1 + rel) + 1e-13


@pytest.mark.parametrize("p,k", [(0.75, 1), (0.75, 7), (0.6, 40)])
def test_randomized_response_frozen_then_composed(p, k):
    frozen = Discretise()(RandomizedResponse(p))
    mech = Composition()([frozen], [k])
    for eps in (0.0, 0.3, 1.1):
        _check_upper(mech.get_approx_delta(eps, method="pld"), rr_composed_delta(eps, p, k), 2e-3)


@pytest.mark.parametrize("sigma,inner,outer", [(10.0, 100, 100), (3000.0, 10 ** 4, 10 ** 5)])
def test_staged_gaussian_against_gdp(sigma, inner, outer):
    """inner·outer Gaussian steps: the inner composition merges to one Gaussian, is
    frozen as a grid, and the outer composition runs on that grid (the 10⁹ case of
    issue 4: the direct FFT would need a window of 10⁹ steps' spread)."""
    stage = Discretise()(Composition()([GaussianMechanism(sigma)], [inner]))
    mech = Composition()([stage], [outer])
    mu = math.sqrt(inner * outer) / sigma
    for delta in (1e-6, 1e-10):
        exact = gdp_epsilon(delta, mu)
        eps = mech.get_approxDP(delta, method="pld")
        _check_upper(eps, exact, 2.5e-3)  # two stages, each planned to 1e-3
        # the two queries may read different (each certified) grids, and a δ query stops
        # refining once its noise is below a tenth of the accuracy: consistent to that
        assert mech.get_approx_delta(eps, method="pld") <= delta * (1 + 1e-4)
        assert float(gdp_delta(eps, mu)) <= delta


def test_staged_subsampled_gaussian_inside_direct_bracket():
    sampled = PoissonSampling()(GaussianMechanism(1.0), 0.02)
    direct = Composition()([sampled], [400])
    staged = Composition()([Discretise()(Composition()([sampled], [40]))], [10])
    for delta in (1e-5, 1e-8):
        bracket = direct.get_approxDP_bounds(delta)
        eps = staged.get_approxDP(delta, method="pld")
        assert bracket.lower <= eps <= bracket.upper * (1 + 3e-3)


def test_frozen_mechanism_keeps_rdp_and_relation():
    base = PoissonSampling()(GaussianMechanism(1.3), 0.05)
    frozen = Discretise()(base, accuracy=1e-4)
    alphas = np.array([1.5, 2.0, 8.0])
    np.testing.assert_array_equal(frozen.get_RDP(alphas), base.get_RDP(alphas))
    assert frozen.relation == base.relation
    assert frozen.params["Discretise:accuracy"] == 1e-4
    # a frozen grid answers within its own accuracy of the exact single step
    exact = base.get_approx_delta_bounds(1.0)
    assert exact.lower <= frozen.get_approx_delta(1.0) <= exact.upper * (1 + 2e-3)


def test_grid_to_pair_reproduces_the_grid():
    grid = Composition()([RandomizedResponse(0.8)], [5]).pld("remove", 1e-3)
    pair = grid_to_pair(grid, "rr-grid")
    for eps in (0.0, 0.5, 2.0):
        assert pair.delta(eps) >= grid.delta(eps) * (1 - 1e-12)
        assert pair.delta(eps) == pytest.approx(grid.delta(eps), rel=1e-9, abs=1e-15)


def test_grid_to_pair_refuses_an_optimistic_grid():
    from dpaccount.pld.grids.discretise import pair_to_grid
    from dpaccount.pld.pairs.discrete_pair import randomized_response_pair
    low = pair_to_grid(randomized_response_pair(0.8), 0.1, -20, 20, pessimistic=False)
    with pytest.raises(ValueError, match="pessimistic"):
        grid_to_pair(low, "low")


@pytest.mark.parametrize("accuracy", [0.0, -1e-3, 1.5, float("nan")])
def test_bad_accuracy_is_named(accuracy):
    with pytest.raises(ValueError, match="accuracy"):
        Discretise()(GaussianMechanism(1.0), accuracy=accuracy)


def test_non_mechanism_is_refused():
    with pytest.raises(TypeError, match="mechanism"):
        Discretise()("gaussian")



@pytest.mark.parametrize("base", [GaussianMechanism(1.0), PoissonSampling()(GaussianMechanism(1.0), 0.1),
                                  RandomAllocation()(GaussianMechanism(1.0), 10)],
                         ids=["gaussian", "poisson-gaussian", "allocation"])
def test_trade_off_of_a_discretised_continuous_pair(base):
    """A grid whose witness is a continuous pair answers its β interval (no witness without
    atoms reached): the lower end at or below the base's certified upper end (exact for the
    Gaussian: Φ(Φ⁻¹(1 − α) − 1)), the upper end the grid's own curve, labelled uncertified."""
    m = Discretise()(base)
    b = m.get_fDP_bounds(0.1)
    exact = (NormalDist().cdf(NormalDist().inv_cdf(0.9) - 1.0) if isinstance(base, GaussianMechanism)
             else base.get_fDP_bounds(0.1).upper)
    assert b.lower <= exact and not b.certified and b.lower <= b.upper
    assert math.isinf(m.mu_GDP()) or m.mu_GDP() >= base.mu_GDP(accuracy=1e-4) * (1 - 1e-3)
