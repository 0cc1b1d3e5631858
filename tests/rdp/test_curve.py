"""RDP closed forms and the RDP → (ε, δ) conversion, against mpmath."""
import mpmath as mp
import numpy as np
import pytest

import dpaccount as dpa
from dpaccount.converters.rdp_to_dp import rdp_to_delta, rdp_to_epsilon
from dpaccount.rdp.curve import RDPCurve, gaussian_rdp

ALPHAS = [1.01, 1.5, 2.0, 7.3, 32.0, 256.0]


def renyi_discrete(alpha, ps, qs):
    alpha = mp.mpf(alpha)
    return mp.log(mp.fsum(mp.mpf(p) ** alpha * mp.mpf(q) ** (1 - alpha) for p, q in zip(ps, qs))) / (alpha - 1)


def renyi_laplace(alpha, b):
    """D_α(Lap(1,b) || Lap(0,b)) by quadrature of ∫ p^α q^{1−α}."""
    alpha, b = mp.mpf(alpha), mp.mpf(b)
    f = lambda x: mp.e ** (-(alpha * abs(x - 1) + (1 - alpha) * abs(x)) / b) / (2 * b)
    return mp.log(mp.quad(f, [-mp.inf, 0, 1, mp.inf])) / (alpha - 1)


@pytest.mark.parametrize("alpha", ALPHAS)
def test_gaussian_rdp(alpha):
    assert dpa.GaussianMechanism(sigma=1.7).get_RDP(alpha) == pytest.approx(alpha / (2 * 1.7 ** 2), rel=1e-14)


@pytest.mark.parametrize("alpha", ALPHAS)
def test_randomized_response_rdp(alpha):
    p = 0.7
    exact = renyi_discrete(alpha, [p, 1 - p], [1 - p, p])
    assert dpa.RandomizedResponse(p=p).get_RDP(alpha) == pytest.approx(float(exact), rel=1e-12)


@pytest.mark.parametrize("alpha", [1.5, 2.0, 7.3, 32.0])
def test_laplace_rdp(alpha):
    exact = renyi_laplace(alpha, 0.8)
    assert dpa.LaplaceMechanism(b=0.8).get_RDP(alpha) == pytest.approx(float(exact), rel=1e-10)


def test_composition_adds_rdp():
    g, r = dpa.GaussianMechanism(sigma=2.0), dpa.RandomizedResponse(p=0.6)
    both = dpa.Composition()([g, r], [3, 5])
    for a in ALPHAS:
        assert both.get_RDP(a) == pytest.approx(3 * g.get_RDP(a) + 5 * r.get_RDP(a), rel=1e-13)


def _independent_epsilon(rdp, delta):
    """The same conversion written out in mpmath, minimised over a dense
    log-spaced α grid (a different optimiser from the library's)."""
    best = mp.inf
    for a in np.geomspace(1.0001, 1e4, 4000):
        a = mp.mpf(a)
        val = rdp(a) + mp.log((a - 1) / a) - (mp.log(delta) + mp.log(a)) / (a - 1)
        best = min(best, val)
    return max(best, 0)


@pytest.mark.parametrize("mu,delta", [(0.5, 1e-5), (2.0, 1e-5), (10.0, 1e-10), (0.01, 1e-3)])
def test_rdp_to_epsilon_matches_independent_conversion(mu, delta):
    curve = RDPCurve(((gaussian_rdp(mu), 1),))
    ours = rdp_to_epsilon(curve, delta)
    ref = float(_independent_epsilon(lambda a: a * mp.mpf(mu) ** 2 / 2, delta))
    # our optimiser is continuous: never worse than the dense grid, and the
    # grid is fine enough that it is not much better either
    assert ours <= ref * (1 + 1e-9) + 1e-12
    assert ours >= ref * (1 - 1e-4) - 1e-12


def test_rdp_is_never_tighter_than_exact():
    mech = dpa.Composition()([dpa.GaussianMechanism(sigma=1.0)], [10])
    for delta in [1e-2, 1e-6, 1e-12]:
        assert mech.get_approxDP(delta, method="rdp") >= mech.get_approxDP(delta, method="analytic")
    for eps in [0.5, 2.0, 8.0]:
        assert mech.get_approx_delta(eps, method="rdp") >= mech.get_approx_delta(eps, method="analytic")


def test_rdp_to_delta_inverts_rdp_to_epsilon():
    curve = RDPCurve(((gaussian_rdp(1.3), 4),))
    for delta in [1e-3, 1e-8]:
        eps = rdp_to_epsilon(curve, delta)
        assert rdp_to_delta(curve, eps) == pytest.approx(delta, rel=1e-4)


def test_epsilon_is_zero_not_negative_when_delta_is_large():
    curve = RDPCurve(((gaussian_rdp(0.01), 1),))
    assert rdp_to_epsilon(curve, 0.5) == 0.0
