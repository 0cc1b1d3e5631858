"""hockey_stick_to_epsilon: the smallest ε with δ(ε) ≤ δ, bracketed to the ulp.

The curves are exact in floats at the points the bisection visits only up to
rounding, so the checks are the converter's own contract on the curve it is
given: the upper answer meets δ, the lower one does not (unless it is 0), and
the two are a few ulps apart; against mpmath, the upper answer of the exact
Laplace curve is at or above the exact ε.
"""
import math

import mpmath as mp
import pytest

import ulp_noise
from dpaccount.converters.hockey_stick import hockey_stick_to_epsilon


def laplace(eps0):
    """δ(ε) = 1 − e^{(ε − ε₀)/2} on [0, ε₀), 0 beyond (Laplace with ε₀ = Δ/b)."""
    return lambda e: -math.expm1((e - eps0) / 2) if e < eps0 else 0.0


def rr(p):
    return lambda e: max(p - math.exp(e) * (1 - p), 0.0)


CURVES = [("laplace-1", laplace(1.0)), ("laplace-30", laplace(30.0)), ("rr-0.9", rr(0.9)),
          ("rr-0.6", rr(0.6))]


@pytest.mark.parametrize("name,curve", CURVES, ids=[c[0] for c in CURVES])
@pytest.mark.parametrize("delta", [0.5, 0.1, 1e-3, 1e-9])
def test_the_two_ends_of_the_bracket(name, curve, delta):
    up = hockey_stick_to_epsilon(curve, delta)
    low = hockey_stick_to_epsilon(curve, delta, upper=False)
    assert curve(up) <= delta
    assert low == 0.0 or curve(low) > delta
    assert low <= up <= low + 8 * math.ulp(max(up, 1.0))


@pytest.mark.parametrize("delta", [0.3, 1e-4, 1e-12])
def test_upper_answer_is_above_the_exact_laplace_epsilon(delta):
    """ε(δ) = ε₀ + 2 log(1 − δ) exactly (mpmath); the upper answer is not below it."""
    eps0 = 3.0
    exact = mp.mpf(eps0) + 2 * mp.log1p(-mp.mpf(delta))
    assert hockey_stick_to_epsilon(laplace(eps0), delta) >= exact


def test_ends_of_the_range():
    curve = laplace(2.0)
    assert hockey_stick_to_epsilon(curve, 0.99) == 0.0          # δ(0) = 1 − e^{−1} ≤ δ
    assert hockey_stick_to_epsilon(curve, 1e-3, p_inf=2e-3) == math.inf
    assert hockey_stick_to_epsilon(lambda e: 0.5, 1e-3) == math.inf          # never meets δ
    assert hockey_stick_to_epsilon(lambda e: 0.5, 1e-3, upper=False) > 1e5  # the last finite end


@pytest.mark.parametrize("mu,delta", [(0.3, 1e-5), (1.0, 1e-3), (4.0, 1e-10)])
def test_itp_meets_the_ulp_bracket_in_few_evaluations_of_a_smooth_curve(mu, delta):
    """A μ-GDP curve (Dong et al.), smooth in log: the ITP steps bracket ε to the ulp in at
    most bisection's count plus one per search (the doubling from 1 and ~55 halvings to 4e-16
    of ε), and far fewer where log is correctly rounded (12–17: the chord converges); under
    the 4-ulp perturbation of ``ulp_noise.py`` the noisy chord gives way to bisection."""
    calls = []

    def curve(e):
        calls.append(e)
        return float(mp.ncdf(-e / mu + mu / 2) - mp.exp(e) * mp.ncdf(-e / mu - mu / 2))

    up = hockey_stick_to_epsilon(curve, delta)
    low = hockey_stick_to_epsilon(curve, delta, upper=False)
    assert curve(up) <= delta < curve(low) and low <= up <= low + 8 * math.ulp(up)
    halvings = math.ceil(math.log2(2.0 / (4e-16 * up))) + 1
    assert len(calls) <= 2 * (halvings + 2 + math.ceil(math.log2(max(up, 1.0)))) + 2
    if not ulp_noise.noise_level():
        assert len(calls) <= 2 * 20 + 2
