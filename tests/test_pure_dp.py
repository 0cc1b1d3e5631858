"""Pure DP and ε = 0 (issue 28, item 6): ε(0) is the supremum of the privacy
loss (the pure ε) where it is finite, else ∞; δ(0) is the total-variation
distance; (0, δ)-DP and pure-DP budgets can be asked for. Exact values in
mpmath (the losses' suprema and the closed-form total variations)."""
import warnings

import mpmath as mp
import numpy as np
import pytest

import dpaccount as dpa
from dpaccount import (ApproxDPMechanism, Composition, ExponentialMechanism, GaussianMechanism, LaplaceMechanism,
                       PoissonSampling, PureDPMechanism, RandomizedResponse)

mp.mp.dps = 50
REL = 1e-13  # the pure ε is rounded up by a few ulps of each term and of the sum


def assert_upper(got, exact, rel=REL):
    """``got`` bounds ``exact`` from above, within ``rel``."""
    exact = float(exact) if exact != mp.inf else np.inf
    assert got >= exact
    assert got <= exact * (1 + rel) or got == exact


_PURE = [
    (LaplaceMechanism(b=2.0), mp.mpf(1) / 2),
    (PureDPMechanism(1.0), mp.mpf(1)),
    (ExponentialMechanism(0.7), mp.mpf("0.7")),
    (RandomizedResponse(0.75), mp.log(3)),
    (Composition()([RandomizedResponse(0.75), LaplaceMechanism(b=3.0), PureDPMechanism(0.25)], [10, 3, 4]),
     10 * mp.log(3) + 1 + 1),
    # Poisson sampling: remove L' = log(1 + q(e^L − 1)) ≥ add L' = −log(1 − q(1 − e^{−L}))
    (PoissonSampling()(LaplaceMechanism(b=1.0), 0.1), mp.log(1 + mp.mpf("0.1") * mp.expm1(1))),
    (Composition()([PoissonSampling()(PureDPMechanism(2.0), 0.01)], [50]),
     50 * mp.log(1 + mp.mpf("0.01") * mp.expm1(2))),
]


@pytest.mark.parametrize("mechanism, exact", _PURE)
def test_epsilon_at_delta_zero_is_the_supremum_of_the_loss(mechanism, exact):
    assert_upper(mechanism.get_approxDP(0), exact)
    both = mechanism.get_approxDP([0.0, 1e-6])
    assert both[0] == mechanism.get_approxDP(0) and both[1] <= both[0]


@pytest.mark.parametrize("mechanism", [
    GaussianMechanism(sigma=1.0), ApproxDPMechanism(1.0, 1e-3),
    PoissonSampling()(GaussianMechanism(sigma=2.0), 0.01),
    Composition()([LaplaceMechanism(b=1.0), GaussianMechanism(sigma=5.0)], [3, 1]),
])
def test_epsilon_at_delta_zero_is_infinite_without_a_pure_epsilon(mechanism):
    assert mechanism.get_approxDP(0) == np.inf


def test_the_peers_answer_at_delta_zero():
    autodp = pytest.importorskip("autodp.mechanism_zoo")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # autodp's log of δ = 0
        theirs = autodp.PureDP_Mechanism(eps=1.0, name="pure").get_approxDP(0)
    assert_upper(PureDPMechanism(1.0).get_approxDP(0), theirs)


@pytest.mark.parametrize("mechanism, exact", [
    (LaplaceMechanism(b=2.0), 1 - mp.exp(-mp.mpf(1) / 4)),                  # 1 − e^{−ε₀/2}, ε₀ = 1/b
    (GaussianMechanism(sigma=2.0), 2 * mp.ncdf(mp.mpf(1) / 4) - 1),          # 2Φ(1/(2σ)) − 1
    (RandomizedResponse(0.75), mp.mpf("0.5")),                               # 2p − 1
    (ApproxDPMechanism(0.0, 0.1), mp.mpf("0.1")),
])
def test_delta_at_epsilon_zero_is_the_total_variation(mechanism, exact):
    got = mechanism.get_approx_delta(0)
    assert float(exact) <= got <= float(exact) + 1e-12


def test_zero_epsilon_approximate_dp():
    """(0, δ)-DP: δ(ε) = δ for every ε ≥ 0; ε(δ') = 0 above δ, ∞ below it."""
    m = ApproxDPMechanism(0.0, 0.1)
    assert np.all((m.get_approx_delta([0.0, 0.5, 3.0]) >= 0.1) & (m.get_approx_delta([0.0, 0.5, 3.0]) <= 0.1 + 1e-12))
    assert list(m.get_approxDP([0.05, 0.2])) == [np.inf, 0.0]
    k3 = Composition()([m], [3]).get_approx_delta(0.5)  # 1 − (1 − δ)³
    assert float(1 - mp.mpf("0.9") ** 3) <= k3 <= float(1 - mp.mpf("0.9") ** 3) + 1e-12
    with pytest.raises(ValueError, match="eps"):
        ApproxDPMechanism(-1e-3, 0.1)


def test_calibrate_to_a_pure_budget():
    """Laplace: ε(0) = 1/b ≤ 0.5 ⇔ b ≥ 2; n-fold Laplace(b = 10): n/10 ≤ 1 ⇔ n ≤ 10,
    where the upward rounding of the sum certifies 9 (10 sits exactly on the budget)."""
    b = dpa.calibrate(lambda s: LaplaceMechanism(b=s), eps=0.5, delta=0, bounds=(0.01, 100.0))
    assert 2.0 <= b <= 2.0 * (1 + 1e-3)
    assert LaplaceMechanism(b=b).get_approxDP(0) <= 0.5
    n = dpa.calibrate(lambda k: Composition()([LaplaceMechanism(b=10.0)], [k]), eps=1.0, delta=0,
                      bounds=(1, 100), integer=True)
    assert n in (9, 10)
    assert Composition()([LaplaceMechanism(b=10.0)], [n]).get_approxDP(0) <= 1.0
    assert Composition()([LaplaceMechanism(b=10.0)], [n + 1]).get_approxDP(0) > 1.0


def test_epsilon_at_delta_equal_to_the_mass_at_infinity_is_finite():
    """(ε, δ)-DP's pair has P(L = ∞) = δ exactly: at that δ the answer is ε itself, not ∞
    (the mass at +∞ is exact, and no atom is live above ε to round with it)."""
    for eps, delta in ((1.0, 0.1), (0.5, 1e-6), (2.0, 0.25)):
        m = dpa.ApproxDPMechanism(eps, delta)
        got = m.get_approxDP(delta)
        assert eps <= got <= eps * (1 + 1e-12), (eps, delta, got)
        b = m.get_approxDP_bounds(delta)
        assert b.lower <= eps <= b.upper


@pytest.mark.parametrize("mechanism, exact", _PURE)
def test_the_interval_at_delta_zero_brackets_the_pure_epsilon(mechanism, exact):
    """get_approxDP_bounds(0): the upper end is get_approxDP(0), the lower end a certified
    lower bound on the supremum of the loss (the optimistic grids' largest loss, or an exact
    sum's); where it is not within the accuracy, AccuracyNotReached carries the interval."""
    try:
        got = mechanism.get_approxDP_bounds(0)
    except dpa.AccuracyNotReached as err:
        got = err.bounds
    assert got.upper == mechanism.get_approxDP(0) and float(exact) <= got.upper
    both = mechanism.get_approxDP_bounds([0.0, 1e-6], accuracy=0.5)
    assert both.upper[0] == got.upper and both.upper[1] <= both.upper[0]
    if got.lower is None:  # as at δ > 0: pairs not attained and no attained witness (the exponential's)
        assert not got.certified and got.lower_of is None and "not attained" in got.reason
        return
    assert got.certified and got.lower_of == "mechanism"
    assert got.lower <= float(exact) * (1 + 1e-15) and both.lower[1] <= both.upper[1]


@pytest.mark.parametrize("mechanism", [GaussianMechanism(sigma=1.0), ApproxDPMechanism(1.0, 1e-3)])
def test_the_interval_at_delta_zero_is_infinite_where_the_loss_is(mechanism):
    """A Gaussian's loss is unbounded, (ε, δ)-DP with δ > 0 has mass at +∞: ε(0) = ∞ exactly."""
    assert tuple(mechanism.get_approxDP_bounds(0)[:2]) == (np.inf, np.inf)


def test_the_interval_at_delta_zero_of_an_unbounded_loss_known_by_grids():
    """A Poisson-subsampled Gaussian: ε(0) = ∞, the grids certify only their largest loss."""
    with pytest.raises(dpa.AccuracyNotReached) as err:
        Composition()([PoissonSampling()(GaussianMechanism(sigma=2.0), 0.01)], [10]).get_approxDP_bounds(0)
    assert 10 < err.value.bounds.lower < err.value.bounds.upper == np.inf


def test_the_interval_at_delta_zero_by_cf_is_refused_naming_delta():
    with pytest.raises(ValueError, match="delta=0"):
        LaplaceMechanism(b=1.0).get_approxDP_bounds(0, method="cf")
    with pytest.raises(ValueError, match="delta"):
        LaplaceMechanism(b=1.0).get_approxDP_bounds(-1e-3)


@pytest.mark.parametrize("mechanism, exact", _PURE)
def test_intervals_at_tiny_delta_end_at_the_pure_epsilon(mechanism, exact):
    """At δ > 0 the interval's upper end is at most the pure ε too (as get_approxDP's
    answer): 50 Poisson-subsampled Laplace steps at δ = 1e-100 ended at 24.70620 above the
    pure ε 24.70143 (the grids' own upper end)."""
    for delta in (1e-100, 1e-300):
        try:
            got = mechanism.get_approxDP_bounds(delta)
        except dpa.AccuracyNotReached as err:
            got = err.bounds
        assert float(exact) <= mechanism.pure_epsilon() and got.upper <= mechanism.pure_epsilon()
        assert got.lower is None or got.lower <= float(exact) * (1 + 1e-15)


def test_a_laplace_composition_at_tiny_delta_is_capped_by_its_pure_epsilon():
    m = Composition()([PoissonSampling()(LaplaceMechanism(b=0.5), 0.1)], [50])
    exact = 50 * mp.log(1 + mp.mpf("0.1") * mp.expm1(2))  # the supremum of the remove loss, each step
    got = m.get_approxDP_bounds(1e-100)
    assert_upper(got.upper, exact)
    assert got.lower <= float(exact)
