"""RDP of ε-bounded-range mechanisms (the exponential mechanism) against
mpmath: the Cesar & Rogers (2021) maximum over two-outcome ε-BR pairs, and
the Rényi divergence of those pairs themselves, written out at 60 digits."""
import mpmath as mp
import numpy as np
import pytest

from dpaccount import ExponentialMechanism
from dpaccount.rdp.zoo import bounded_range_rdp


def two_point_rdp(alpha, eps, s):
    """D_α(P||Q) of the two-outcome pair with Q = (s, 1 − s) and losses t, t − ε,
    e^{−t} = s + (1 − s)e^{−ε} (an ε-BR pair): Σ P^α Q^{1−α} written out."""
    a, e, s = mp.mpf(alpha), mp.mpf(eps), mp.mpf(s)
    t = -mp.log(s + (1 - s) * mp.exp(-e))
    p1, p0 = s * mp.exp(t), (1 - s) * mp.exp(t - e)
    return mp.log(p1 ** a * s ** (1 - a) + p0 ** a * (1 - s) ** (1 - a)) / (a - 1)


def cesar_rogers(alpha, eps):
    """The maximum over s of ``two_point_rdp`` at its one critical point (closed form)."""
    a, e = mp.mpf(alpha), mp.mpf(eps)
    A, B = mp.exp(-e), mp.exp(-a * e)
    s = ((1 - B) * A - a * (1 - A) * B) / ((a - 1) * (1 - A) * (1 - B))
    return two_point_rdp(alpha, eps, s), s


def logistic_rdp(alpha, eps):
    """D_α of the logistic pair (the old curve): log(sinh((2α−1)ε/2)/((2α−1) sinh(ε/2)))/(α−1)."""
    a, e = mp.mpf(alpha), mp.mpf(eps)
    return mp.log(mp.sinh((2 * a - 1) * e / 2) / ((2 * a - 1) * mp.sinh(e / 2))) / (a - 1)


@pytest.mark.mp_dps(60)
def test_exponential_mechanism_near_one_is_the_kl_bound_of_cesar_rogers():
    # issue 27 §5: the logistic curve was 33% above at α = 1 + 1e-9, ε = 1
    got = ExponentialMechanism(1.0).get_RDP(1 + 1e-9)
    exact, _ = cesar_rogers(1 + 1e-9, 1.0)
    e = mp.mpf(1)
    kl = e / mp.expm1(e) - 1 + mp.log(mp.expm1(e) / e)       # their KL bound, the α → 1 limit
    assert abs(exact - kl) < 1e-9 * kl
    assert exact <= got <= exact * (1 + 1e-9)
    assert got < 0.8 * logistic_rdp(1 + 1e-9, 1.0)


@pytest.mark.mp_dps(60)
@pytest.mark.parametrize("eps", [1e-9, 1e-4, 0.05, 1.0, 4.0, 30.0, 300.0])
def test_bound_is_the_worst_two_point_pair_rounded_up(eps):
    alphas = np.array([1 + 2.3e-16, 1 + 1e-11, 1 + 1e-6, 1.01, 1.5, 2.0, 2.5, 7.0, 64.0, 1e3, 1e5])
    got = bounded_range_rdp(eps)(alphas)
    for a, g in zip(alphas, got):
        exact, s = cesar_rogers(a, eps)
        assert 0 < s < 1
        assert g >= exact, (a, g, exact)                    # never below the attained pair
        assert g <= exact * (1 + 1e-6) + 1e-300, (a, g, exact)
        # the critical point is the maximum: pairs on either side of it are below
        for other in (s * (1 - mp.mpf("1e-3")), s + (1 - s) * mp.mpf("1e-3"), mp.mpf("0.5") * s):
            assert two_point_rdp(a, eps, other) <= exact
        assert g <= a * eps * eps / 8 * (1 + 1e-12) and g <= eps * (1 + 1e-15)   # ε²/8-zCDP, ε-DP


def test_every_order_of_a_curve_call_is_rounded_up_and_monotone():
    eps = 2.0
    alphas = 1 + np.geomspace(1e-3, 1e5, 161)           # the orders rdp_to_dp scans
    got = ExponentialMechanism(eps).get_RDP(alphas)
    assert np.all(np.diff(got) >= 0)
    with mp.workdps(40):
        for a in alphas[::20]:
            exact, _ = cesar_rogers(float(a), eps)
            assert ExponentialMechanism(eps).get_RDP(float(a)) >= exact
