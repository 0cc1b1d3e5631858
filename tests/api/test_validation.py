"""Public API: invalid input raises ValueError/TypeError naming the parameter and the value."""

import math

import numpy as np
import pytest
from api_fixtures import *  # noqa: F401,F403  (shared mechanisms and helpers)

import dpaccount

from dpaccount import (BinomialMechanism, Composition, GaussianMechanism, GDPMechanism, LaplaceMechanism,
                       PoissonSampling, RandomizedResponse)

# ==========================================================================
# 3. Invalid input: ValueError / TypeError naming the parameter and the value
# ==========================================================================

G1 = GaussianMechanism(sigma=1.0)

CONSTRUCTION_ERRORS = [
    # (call, exception, parameter name, offending value)
    (lambda: GaussianMechanism(sigma=0), ValueError, "sigma", 0),
    (lambda: GaussianMechanism(sigma=-0.25), ValueError, "sigma", -0.25),
    (lambda: GaussianMechanism(sigma=NAN), ValueError, "sigma", NAN),
    (lambda: GaussianMechanism(sigma=INF), ValueError, "sigma", INF),
    (lambda: GaussianMechanism(sigma="1"), TypeError, "sigma", "1"),
    (lambda: GaussianMechanism(sigma=True), TypeError, "sigma", True),
    (lambda: GaussianMechanism(sigma=None), TypeError, "sigma", None),
    (lambda: LaplaceMechanism(b=0.0), ValueError, "b", 0.0),
    (lambda: LaplaceMechanism(b=-3.5), ValueError, "b", -3.5),
    (lambda: GaussianMechanism(sigma=1.0, sensitivity=0.0), ValueError, "sensitivity", 0.0),
    (lambda: GaussianMechanism(sigma=1.0, sensitivity=-2.5), ValueError, "sensitivity", -2.5),
    (lambda: LaplaceMechanism(b=1.0, sensitivity=-2.0), ValueError, "sensitivity", -2.0),
    (lambda: BinomialMechanism(n=10, p=0.5, sensitivity=0), ValueError, "sensitivity", 0),
    (lambda: RandomizedResponse(p=0.5), ValueError, "p", 0.5),
    (lambda: RandomizedResponse(p=1.0), ValueError, "p", 1.0),
    (lambda: RandomizedResponse(p=0.3), ValueError, "p", 0.3),
    (lambda: RandomizedResponse(p=1.7), ValueError, "p", 1.7),
    (lambda: RandomizedResponse(p=NAN), ValueError, "p", NAN),
    (lambda: GDPMechanism(mu=0.0), ValueError, "mu", 0.0),
    (lambda: GDPMechanism(mu=-1.5), ValueError, "mu", -1.5),
    (lambda: GDPMechanism(mu=True), TypeError, "mu", True),
    (lambda: PoissonSampling()(G1, -0.1), ValueError, "q", -0.1),
    (lambda: PoissonSampling()(G1, 1.5), ValueError, "q", 1.5),
    (lambda: PoissonSampling()(G1, NAN), ValueError, "q", NAN),
    (lambda: PoissonSampling()("gauss", 0.1), TypeError, "mechanism", "gauss"),
    (lambda: BinomialMechanism(n=0, p=0.5), ValueError, "n", 0),
    (lambda: BinomialMechanism(n=2.5, p=0.5), ValueError, "n", 2.5),
    (lambda: BinomialMechanism(n=10, p=1.25), ValueError, "p", 1.25),
    (lambda: Composition()([G1, G1], [1, 0]), ValueError, "counts", 0),
    (lambda: Composition()([G1, G1], [1, -3]), ValueError, "counts", -3),
    (lambda: Composition()([G1, G1], [1, 1.5]), ValueError, "counts", 1.5),
    (lambda: Composition()([G1, "not a mechanism"], [1, 2]), TypeError, "mechanisms", "not a mechanism"),
]


@pytest.mark.parametrize("call, exc, name, value", CONSTRUCTION_ERRORS,
                         ids=[f"{c[2]}={c[3]!r}" for c in CONSTRUCTION_ERRORS])
def test_invalid_construction_raises_with_name_and_value(call, exc, name, value):
    assert_bad_input(call, exc, name, value)


def test_mismatched_lengths_name_both_arguments_and_lengths():
    with pytest.raises(ValueError) as info:
        Composition()([G1], [1, 2])
    msg = str(info.value)
    assert "mechanisms" in msg and "counts" in msg
    assert mentions_value(msg, 1) and mentions_value(msg, 2)


def test_empty_composition_raises_value_error_naming_mechanisms():
    with pytest.raises(ValueError, match="mechanisms"):
        Composition()([], [])


def test_empty_composition_message_shows_the_value():
    assert_bad_input(lambda: Composition()([], []), ValueError, "mechanisms", [])


@pytest.mark.parametrize("bad", [G1, 3])
def test_composition_rejects_non_list_mechanisms(bad):
    with pytest.raises(TypeError, match="mechanisms"):
        Composition()(bad, [1])


QUERY_ERRORS = [
    (lambda m: m.get_approxDP(-1e-300), ValueError, "delta", -1e-300),
    (lambda m: m.get_approxDP(1), ValueError, "delta", 1),
    (lambda m: m.get_approxDP(-1), ValueError, "delta", -1),
    (lambda m: m.get_approxDP(2), ValueError, "delta", 2),
    (lambda m: m.get_approxDP(NAN), ValueError, "delta", NAN),
    (lambda m: m.get_approxDP("x"), TypeError, "delta", "x"),
    (lambda m: m.get_approxDP(np.array([1e-5, 2.0])), ValueError, "delta", 2.0),
    (lambda m: m.get_approx_delta(-1.0), ValueError, "eps", -1.0),
    (lambda m: m.get_approx_delta(-1e-9), ValueError, "eps", -1e-9),
    (lambda m: m.get_approx_delta(NAN), ValueError, "eps", NAN),
    (lambda m: m.get_approx_delta(np.array([1.0, -2.0])), ValueError, "eps", -2.0),
    (lambda m: m.get_RDP(1), ValueError, "alpha", 1),
    (lambda m: m.get_RDP(0.5), ValueError, "alpha", 0.5),
    (lambda m: m.get_RDP(-3.0), ValueError, "alpha", -3.0),
    (lambda m: m.get_RDP(NAN), ValueError, "alpha", NAN),
    (lambda m: m.get_approxDP(1e-5, method="nonsense"), ValueError, "method", "nonsense"),
    (lambda m: m.get_approxDP(1e-5, method=3), TypeError, "method", 3),
    (lambda m: m.get_approx_delta(1.0, method="nonsense"), ValueError, "method", "nonsense"),
    (lambda m: m.get_approx_delta(1.0, method=3), TypeError, "method", 3),
    (lambda m: m.get_approxDP(1e-5, method="pld", accuracy=0.0), ValueError, "accuracy", 0.0),
    (lambda m: m.get_approxDP(1e-5, method="pld", accuracy=1.0), ValueError, "accuracy", 1.0),
    (lambda m: m.get_approxDP(1e-5, method="pld", accuracy=-0.1), ValueError, "accuracy", -0.1),
    (lambda m: m.get_approxDP(1e-5, method="pld", accuracy=2.0), ValueError, "accuracy", 2.0),
    (lambda m: m.get_approxDP(1e-5, method="pld", accuracy=NAN), ValueError, "accuracy", NAN),
    (lambda m: m.get_approx_delta(1.0, method="pld", accuracy=1.5), ValueError, "accuracy", 1.5),
]


@pytest.mark.parametrize("call, exc, name, value", QUERY_ERRORS,
                         ids=[f"{i}-{c[2]}={c[3]!r}" for i, c in enumerate(QUERY_ERRORS)])
@pytest.mark.parametrize("which", ["gdp", "rr"])
def test_invalid_query_raises_with_name_and_value(which, call, exc, name, value):
    m = GDPMechanism(mu=1.0) if which == "gdp" else RandomizedResponse(p=0.6)
    assert_bad_input(lambda: call(m), exc, name, value)


@pytest.mark.parametrize("method, accuracy", [(None, 0.0), ("analytic", 1.0), ("rdp", 2.0), ("rdp", NAN),
                                              ("pld", -1.0)])
def test_accuracy_is_validated_whatever_the_method(method, accuracy):
    m = GaussianMechanism(sigma=1.0)
    assert_bad_input(lambda: m.get_approxDP(1e-5, method=method, accuracy=accuracy),
                     ValueError, "accuracy", accuracy)
    assert_bad_input(lambda: m.get_approx_delta(1.0, method=method, accuracy=accuracy),
                     ValueError, "accuracy", accuracy)


def test_privacy_loss_ratios_round_up_and_underflowing_bounds_stay_positive():
    """μ = Δ/σ and ε₀ = Δ/b are rounded up (a larger loss only weakens the claim),
    exactly where the division is exact; an RDP δ below the float range is not 0."""
    from fractions import Fraction
    for sens, scale in [(1.0, 3.0), (0.1, 0.7), (2.0, 0.5), (1.0, 1.1)]:
        g = dpaccount.GaussianMechanism(sigma=scale, sensitivity=sens)
        lap = dpaccount.LaplaceMechanism(b=scale, sensitivity=sens)
        exact = Fraction(sens) / Fraction(scale)
        assert Fraction(g.mu) >= exact and Fraction(lap.eps0) >= exact
        assert Fraction(math.nextafter(g.mu, 0.0)) < exact or Fraction(g.mu) == exact
    assert dpaccount.GaussianMechanism(sigma=2.0).mu == 0.5  # exact: unchanged
    assert dpaccount.GaussianMechanism(sigma=1.0).get_approx_delta(1e300, method="rdp") > 0.0
