"""Adversarial inputs across the public API (issue 18), part one: input the
library must not answer. Each case raises a clear error within a time limit
and never leaks a numpy RuntimeWarning (``api_fixtures.time_limit``).

Two tables:

* ``BAD_INPUT`` — invalid parameters (NaN, ±inf, negative, zero, strings,
  booleans, None, non-integers, empty compositions, δ ∈ {0, 1}, ...): a
  ``ValueError`` / ``TypeError`` naming the parameter and showing the value.
* ``REFUSED`` — valid inputs the library cannot answer (a support or grid
  beyond the memory cap, δ below what the grid resolves): the library's
  ``DPAccountError`` subclass, up front, with a message giving the estimate.

Extreme but valid input, which must be answered correctly, is part two
(test_adversarial_extremes.py).
"""
import glob
import inspect
import os
from fractions import Fraction

import numpy as np
import pytest
from api_fixtures import HUGE, INF, NAN, TINY, assert_bad_input, case_ids, time_limit

import dpaccount as dpa

G1 = dpa.GaussianMechanism(sigma=1.0)
RO = dpa.GaussianMechanism(sigma=1.0, relation="replace-one")
C = dpa.Composition()
PS, SS, GP = dpa.PoissonSampling(), dpa.SubsetSampling(), dpa.GroupPrivacy()

BAD_INPUT = [
    # (id, call, exception, parameter, value)
    ("gauss-sigma-nan", lambda: dpa.GaussianMechanism(sigma=NAN), ValueError, "sigma", NAN),
    ("gauss-sigma-inf", lambda: dpa.GaussianMechanism(sigma=INF), ValueError, "sigma", INF),
    ("gauss-sigma--inf", lambda: dpa.GaussianMechanism(sigma=-INF), ValueError, "sigma", -INF),
    ("gauss-sigma-neg", lambda: dpa.GaussianMechanism(sigma=-1.0), ValueError, "sigma", -1.0),
    ("gauss-sigma-zero", lambda: dpa.GaussianMechanism(sigma=0.0), ValueError, "sigma", 0.0),
    ("gauss-sigma-negzero", lambda: dpa.GaussianMechanism(sigma=-0.0), ValueError, "sigma", 0.0),
    ("gauss-sigma-str", lambda: dpa.GaussianMechanism(sigma="1"), TypeError, "sigma", "1"),
    ("gauss-sigma-bool", lambda: dpa.GaussianMechanism(sigma=True), TypeError, "sigma", True),
    ("gauss-sigma-npbool", lambda: dpa.GaussianMechanism(sigma=np.bool_(True)), TypeError, "sigma", True),
    ("gauss-sigma-0d-bool", lambda: dpa.GaussianMechanism(sigma=np.array(True)), TypeError, "sigma", True),
    ("gauss-sigma-1d", lambda: dpa.GaussianMechanism(sigma=np.array([1.0])), TypeError, "sigma", 1.0),
    ("gauss-sigma-complex", lambda: dpa.GaussianMechanism(sigma=1j), TypeError, "sigma", 1j),
    ("gauss-sigma-none", lambda: dpa.GaussianMechanism(sigma=None), TypeError, "sigma", None),
    ("gauss-sigma-subnormal", lambda: dpa.GaussianMechanism(sigma=TINY), ValueError, "sigma", TINY),
    ("gauss-sens-inf", lambda: dpa.GaussianMechanism(sigma=1.0, sensitivity=INF), ValueError, "sensitivity", INF),
    ("gauss-sens-huge", lambda: dpa.GaussianMechanism(sigma=1e-10, sensitivity=1e300), ValueError,
     "sensitivity", 1e300),
    ("gdp-mu-nan", lambda: dpa.GDPMechanism(mu=NAN), ValueError, "mu", NAN),
    ("gdp-mu-inf", lambda: dpa.GDPMechanism(mu=INF), ValueError, "mu", INF),
    ("laplace-b-nan", lambda: dpa.LaplaceMechanism(b=NAN), ValueError, "b", NAN),
    ("laplace-b-subnormal", lambda: dpa.LaplaceMechanism(b=TINY), ValueError, "b", TINY),
    ("laplace-b-str", lambda: dpa.LaplaceMechanism(b="2"), TypeError, "b", "2"),
    ("rr-p-half", lambda: dpa.RandomizedResponse(p=0.5), ValueError, "p", 0.5),
    ("rr-p-one", lambda: dpa.RandomizedResponse(p=1.0), ValueError, "p", 1.0),
    ("rr-p-nan", lambda: dpa.RandomizedResponse(p=NAN), ValueError, "p", NAN),
    ("rr-p-bool", lambda: dpa.RandomizedResponse(p=True), TypeError, "p", True),
    ("binomial-n-zero", lambda: dpa.BinomialMechanism(n=0, p=0.5), ValueError, "n", 0),
    ("binomial-n-inf", lambda: dpa.BinomialMechanism(n=INF, p=0.5), ValueError, "n", INF),
    ("binomial-n-nan", lambda: dpa.BinomialMechanism(n=NAN, p=0.5), ValueError, "n", NAN),
    ("binomial-n-frac", lambda: dpa.BinomialMechanism(n=2.5, p=0.5), ValueError, "n", 2.5),
    ("binomial-n-str", lambda: dpa.BinomialMechanism(n="10", p=0.5), TypeError, "n", "10"),
    ("binomial-n-bool", lambda: dpa.BinomialMechanism(n=True, p=0.5), TypeError, "n", True),
    ("binomial-p-zero", lambda: dpa.BinomialMechanism(n=10, p=0.0), ValueError, "p", 0.0),
    ("binomial-p-one", lambda: dpa.BinomialMechanism(n=10, p=1.0), ValueError, "p", 1.0),
    ("binomial-sens-frac", lambda: dpa.BinomialMechanism(n=10, p=0.5, sensitivity=1.5), ValueError,
     "sensitivity", 1.5),
    ("dgauss-sigma-inf", lambda: dpa.DiscreteGaussianMechanism(sigma=INF), ValueError, "sigma", INF),
    ("dgauss-sens-frac", lambda: dpa.DiscreteGaussianMechanism(sigma=1.0, sensitivity=0.5), ValueError,
     "sensitivity", 0.5),
    ("dgauss-sigma-tiny", lambda: dpa.DiscreteGaussianMechanism(sigma=1e-300).get_approxDP(1e-5), ValueError,
     "sigma", 1e-300),
    ("dlaplace-t-zero", lambda: dpa.DiscreteLaplaceMechanism(t=0.0), ValueError, "t", 0.0),
    ("puredp-eps-inf", lambda: dpa.PureDPMechanism(eps=INF), ValueError, "eps", INF),
    ("puredp-eps-zero", lambda: dpa.PureDPMechanism(eps=0.0), ValueError, "eps", 0.0),
    ("approxdp-delta-one", lambda: dpa.ApproxDPMechanism(eps=1.0, delta=1.0), ValueError, "delta", 1.0),
    ("approxdp-delta-neg", lambda: dpa.ApproxDPMechanism(eps=1.0, delta=-TINY), ValueError, "delta", -TINY),
    ("exponential-eps-nan", lambda: dpa.ExponentialMechanism(eps=NAN), ValueError, "eps", NAN),
    ("discrete-nan", lambda: dpa.DiscreteMechanism([NAN, 1.0], [0.5, 0.5]), ValueError, "p_probs", [NAN, 1.0]),
    ("discrete-negative", lambda: dpa.DiscreteMechanism([1.5, -0.5], [0.5, 0.5]), ValueError, "p_probs",
     [1.5, -0.5]),
    ("discrete-sum", lambda: dpa.DiscreteMechanism([0.5, 0.6], [0.5, 0.5]), ValueError, "p_probs", [0.5, 0.6]),
    ("discrete-empty", lambda: dpa.DiscreteMechanism([], []), ValueError, "p_probs", []),
    ("discrete-str", lambda: dpa.DiscreteMechanism("ab", [0.5, 0.5]), TypeError, "p_probs", "ab"),
    ("discrete-bool", lambda: dpa.DiscreteMechanism([True, False], [0.5, 0.5]), TypeError, "p_probs",
     [True, False]),
    ("relation-unknown", lambda: dpa.GaussianMechanism(sigma=1.0, relation="swap"), ValueError, "relation",
     "swap"),
    ("compose-empty", lambda: C([], []), ValueError, "mechanisms", []),
    ("compose-count-zero", lambda: C([G1], [0]), ValueError, "counts", 0),
    ("compose-count-neg", lambda: C([G1], [-1]), ValueError, "counts", -1),
    ("compose-count-inf", lambda: C([G1], [INF]), ValueError, "counts", INF),
    ("compose-count-str", lambda: C([G1], ["3"]), TypeError, "counts", "3"),
    ("compose-count-bool", lambda: C([G1], [True]), TypeError, "counts", True),
    ("compose-not-mechanism", lambda: C([3.0], [1]), TypeError, "mechanisms", 3.0),
    ("poisson-q-neg", lambda: PS(G1, -TINY), ValueError, "q", -TINY),
    ("poisson-q-nan", lambda: PS(G1, NAN), ValueError, "q", NAN),
    ("poisson-q-inf", lambda: PS(G1, INF), ValueError, "q", INF),
    ("poisson-q-str", lambda: PS(G1, "0.1"), TypeError, "q", "0.1"),
    ("allocation-steps-zero", lambda: dpa.RandomAllocation()(G1, 0), ValueError, "steps", 0),
    ("allocation-steps-float", lambda: dpa.RandomAllocation()(G1, 2.5), ValueError, "steps", 2.5),
    ("allocation-selected-above-steps", lambda: dpa.RandomAllocation()(G1, 3, 4), ValueError, "selected", 4),
    ("subset-gamma-zero", lambda: SS(RO, 0.0), ValueError, "gamma", 0.0),
    ("subset-gamma-above-one", lambda: SS(RO, 1.0 + 2 ** -52), ValueError, "gamma", 1.0 + 2 ** -52),
    ("truncated-q-nan", lambda: dpa.TruncatedPoissonSampling()(G1, NAN, 100, 10), ValueError, "q", NAN),
    ("truncated-n-zero", lambda: dpa.TruncatedPoissonSampling()(G1, 0.1, 0, 10), ValueError, "dataset_size", 0),
    ("truncated-cap-frac", lambda: dpa.TruncatedPoissonSampling()(G1, 0.1, 100, 2.5), ValueError,
     "max_batch_size", 2.5),
    ("truncated-cap-bool", lambda: dpa.TruncatedPoissonSampling()(G1, 0.1, 100, True), TypeError,
     "max_batch_size", True),
    ("with-replacement-n-inf", lambda: dpa.SamplingWithReplacement()(RO, INF, 3), ValueError, "dataset_size", INF),
    ("with-replacement-b-zero", lambda: dpa.SamplingWithReplacement()(RO, 100, 0), ValueError, "batch_size", 0),
    ("with-replacement-b-str", lambda: dpa.SamplingWithReplacement()(RO, 100, "3"), TypeError, "batch_size", "3"),
    ("group-k-zero", lambda: GP(G1, 0), ValueError, "k", 0),
    ("group-k-bool", lambda: GP(G1, True), TypeError, "k", True),
    ("discretise-accuracy-zero", lambda: dpa.Discretise()(G1, 0.0), ValueError, "accuracy", 0.0),
    ("odometer-horizon-str", lambda: dpa.PrivacyOdometer("G"), TypeError, "horizon", "G"),
    ("odometer-accuracy-nan", lambda: dpa.PrivacyOdometer(G1, accuracy=NAN), ValueError, "accuracy", NAN),
    ("query-delta-neg-zero-point", lambda: G1.get_approxDP(-1e-300), ValueError, "delta", -1e-300),
    ("query-delta-one", lambda: G1.get_approxDP(1.0), ValueError, "delta", 1.0),
    ("query-delta-subnormal-neg", lambda: G1.get_approxDP(-TINY), ValueError, "delta", -TINY),
    ("query-delta-bool", lambda: G1.get_approxDP(True), TypeError, "delta", True),
    ("query-delta-str", lambda: G1.get_approxDP("1e-5"), TypeError, "delta", "1e-5"),
    ("query-delta-array-nan", lambda: G1.get_approxDP(np.array([1e-5, NAN])), ValueError, "delta", NAN),
    ("query-eps-inf", lambda: G1.get_approx_delta(INF), ValueError, "eps", INF),
    ("query-eps-neg", lambda: G1.get_approx_delta(-1.0), ValueError, "eps", -1.0),
    ("query-eps-nan", lambda: G1.get_approx_delta(NAN, method="pld"), ValueError, "eps", NAN),
    ("query-alpha-inf", lambda: G1.get_RDP(INF), ValueError, "alpha", INF),
    ("query-accuracy-nan", lambda: G1.get_approxDP(1e-5, method="pld", accuracy=NAN), ValueError, "accuracy",
     NAN),
    # Python ints (and Fractions) beyond the float range: float() would raise OverflowError
    ("real-huge-int", lambda: dpa.validation.real("x", HUGE), ValueError, "x", HUGE),
    ("gauss-sigma-huge-int", lambda: dpa.GaussianMechanism(sigma=HUGE), ValueError, "sigma", HUGE),
    ("gauss-sigma-huge-neg-int", lambda: dpa.GaussianMechanism(sigma=-HUGE), ValueError, "sigma", -HUGE),
    ("gauss-sigma-huge-fraction", lambda: dpa.GaussianMechanism(sigma=Fraction(HUGE, 3)), ValueError, "sigma",
     Fraction(HUGE, 3)),
    ("poisson-q-huge-int", lambda: PS(G1, HUGE), ValueError, "q", HUGE),
    ("query-delta-huge-int", lambda: G1.get_approxDP(HUGE), ValueError, "delta", HUGE),
    ("query-eps-huge-int", lambda: G1.get_approx_delta(HUGE), ValueError, "eps", HUGE),
    ("query-alpha-huge-int", lambda: G1.get_RDP(HUGE), ValueError, "alpha", HUGE),
    ("compose-count-huge-int", lambda: C([G1], [HUGE]), ValueError, "counts", HUGE),
    ("group-k-huge-int", lambda: GP(G1, HUGE), ValueError, "k", HUGE),
    ("binomial-n-huge-int", lambda: dpa.BinomialMechanism(n=HUGE, p=0.5), ValueError, "n", HUGE),
    # issue 30/31: training and tuning mechanisms, the two ends of the scale
    ("mog-sigma-nan", lambda: dpa.MixtureOfGaussiansMechanism(NAN, [0, 1], [0.5, 0.5]), ValueError, "sigma", NAN),
    ("mog-shift-negative", lambda: dpa.MixtureOfGaussiansMechanism(1.0, [0, -1.0], [0.5, 0.5]), ValueError,
     "sensitivities[1]", -1.0),
    ("mog-prob-inf", lambda: dpa.MixtureOfGaussiansMechanism(1.0, [0, 1], [0.5, INF]), ValueError, "probs[1]", INF),
    ("zcdp-rho-negative", lambda: dpa.ZCDPMechanism(rho=-1.0), ValueError, "rho", -1.0),
    ("zcdp-xi-nan", lambda: dpa.ZCDPMechanism(rho=1.0, xi=NAN), ValueError, "xi", NAN),
    ("tree-steps-zero", lambda: dpa.TreeAggregation(noise_multiplier=1.0, steps=0), ValueError, "steps", 0),
    ("tree-noise-str", lambda: dpa.TreeAggregation(noise_multiplier="5", steps=10), TypeError, "noise_multiplier", "5"),
    ("single-tree-separation-zero", lambda: dpa.SingleTreeAggregation(1.0, 10, 2, min_separation=0), ValueError,
     "min_separation", 0),
    ("single-tree-participations-float", lambda: dpa.SingleTreeAggregation(1.0, 10, 2.5), ValueError,
     "participations", 2.5),
    ("select-mean-below-one", lambda: dpa.RepeatAndSelect()(G1, 0.5, 1), ValueError, "mean", 0.5),
    ("select-shape-negative", lambda: dpa.RepeatAndSelect()(G1, 2, -1.0), ValueError, "shape", -1.0),
    # issue 42: matrix mechanisms
    ("matrix-noise-nan", lambda: dpa.MatrixMechanism([[1.0]], NAN), ValueError, "noise_multiplier", NAN),
    ("matrix-separation-zero", lambda: dpa.Participation.min_separation(0), ValueError, "separation", 0),
    ("cyclic-poisson-q-negative", lambda: dpa.CyclicPoissonSampling()(dpa.MatrixMechanism(
        [[1.0, 0.0], [0.0, 1.0]], 1.0), -0.1), ValueError, "q", -0.1),
    ("noop-relation-bogus", lambda: dpa.NoOpMechanism(relation="bogus"), ValueError, "relation", "bogus"),
    ("nonprivate-relation-int", lambda: dpa.NonPrivateMechanism(relation=1), TypeError, "relation", 1),
]

REFUSED = [
    # (id, call, exception, words its message must contain)
    ("binomial-n-1e12", lambda: dpa.BinomialMechanism(n=10 ** 12, p=0.5).get_approx_delta(1.0),
     dpa.GridTooLarge, "n=1000000000000"),
    ("binomial-sens-1e12", lambda: dpa.BinomialMechanism(n=10, p=0.5, sensitivity=10 ** 12).get_approxDP(0.5),
     dpa.GridTooLarge, "shift=1000000000000"),
    ("dgauss-sigma-1e9", lambda: dpa.DiscreteGaussianMechanism(sigma=1e9).get_approxDP(1e-5),
     dpa.GridTooLarge, "sigma=1000000000.0"),
    ("dgauss-sens-1e12", lambda: dpa.DiscreteGaussianMechanism(sigma=1.0, sensitivity=10 ** 12).get_approxDP(0.5),
     dpa.GridTooLarge, "sensitivity=1000000000000"),
    ("dlaplace-sens-1e12", lambda: dpa.DiscreteLaplaceMechanism(t=1.0, sensitivity=10 ** 12).get_approxDP(0.5),
     dpa.GridTooLarge, "sensitivity=1000000000000"),
    ("group-rr-k-1e12", lambda: GP(dpa.RandomizedResponse(p=0.9), 10 ** 12).get_approxDP(1e-5),
     dpa.GridTooLarge, "k=1000000000000"),
    ("compose-rr-1e12", lambda: C([dpa.RandomizedResponse(p=0.9)], [10 ** 12]).get_approxDP(1e-5),
     dpa.GridTooLarge, "grid points"),
    ("compose-laplace-1e12", lambda: C([dpa.LaplaceMechanism(b=1.0)], [10 ** 12]).get_approx_delta(1.0),
     dpa.GridTooLarge, "grid points"),
    ("compose-dpsgd-1e12", lambda: C([PS(G1, 0.01)], [10 ** 12]).get_approxDP(1e-5),
     dpa.GridTooLarge, "grid points"),
    ("pld-delta-subnormal", lambda: G1.get_approxDP(TINY, method="pld"), dpa.AccuracyNotReached, "delta=5e-324"),
    ("pld-loss-beyond-range", lambda: C([G1, dpa.LaplaceMechanism(b=1e-9)], [1, 1]).get_approxDP(1e-5),
     dpa.AccuracyNotReached, "leaves the float range"),
    ("pld-accuracy-subnormal", lambda: G1.get_approx_delta(1.0, method="pld", accuracy=TINY),
     dpa.GridTooLarge, "accuracy=5e-324"),
    ("pld-accuracy-1e-300", lambda: G1.get_approxDP(1e-5, method="pld", accuracy=1e-300), dpa.GridTooLarge, "cap"),
    ("apriori-eta-subnormal", lambda: G1.apriori_plan(1.0, TINY), dpa.GridTooLarge, "eta=5e-324"),
    ("discretise-accuracy-1e-300", lambda: dpa.Discretise()(G1, 1e-300).get_approxDP(1e-5), dpa.GridTooLarge,
     "cap"),
    ("cf-q-1e-300", lambda: PS(G1, 1e-300).get_approx_delta(1.0, method="cf"), dpa.RepresentationUnavailable,
     "saddle point"),
    ("cf-q-1e-130", lambda: PS(G1, 1e-130).get_approxDP(1e-5, method="cf"), dpa.RepresentationUnavailable,
     "method='cf'"),
    ("rdp-bounds", lambda: G1.get_approxDP_bounds(1e-5, method="rdp"), dpa.RepresentationUnavailable, "no certified interval"),
    ("balls-in-bins-two-bands", lambda: dpa.BallsInBinsSampling()(dpa.MatrixMechanism(
        [[1.0, 0.0], [0.5, 1.0]], 1.0, dpa.Participation.fixed_epochs(1))), ValueError, "diagonal"),
]


@pytest.mark.parametrize("case", BAD_INPUT, ids=case_ids(BAD_INPUT))
def test_bad_input_is_a_clear_error(case):
    _, call, exc, name, value = case
    with time_limit():
        beyond_floats = isinstance(value, (int, Fraction)) and abs(value) > 2 ** 1024
        if isinstance(value, (list, complex)) and value or beyond_floats:  # shown as given (the helper reads floats)
            with pytest.raises(exc, match=rf"\b{name}\b") as info:
                call()
            assert repr(value) in str(info.value), str(info.value)
        else:
            assert_bad_input(call, exc, name, value)


@pytest.mark.parametrize("case", REFUSED, ids=case_ids(REFUSED))
def test_unanswerable_input_is_refused_up_front(case):
    _, call, exc, words = case
    with time_limit():
        with pytest.raises(exc) as info:
            call()
    assert words in str(info.value), str(info.value)


def test_tables_are_large_and_cover_the_public_api():
    """Every public mechanism and transformer appears in the tables of the two
    parts; this part holds 100 cases or more."""
    here = os.path.dirname(inspect.getfile(test_tables_are_large_and_cover_the_public_api))
    sources = "".join(open(f, encoding="utf-8").read()
                      for f in sorted(glob.glob(os.path.join(here, "test_adversarial_*.py"))))
    public = [n for n in dpa.__all__ if isinstance(getattr(dpa, n), type)
              and (issubclass(getattr(dpa, n), (dpa.Mechanism, dpa.Transformer)) or n == "PrivacyOdometer")
              and n not in ("Mechanism", "Transformer", "Composition", "PoissonSampling",
                            "SubsetSampling", "GroupPrivacy")]
    for name in public + ["Composition()", "PoissonSampling()", "SubsetSampling()", "GroupPrivacy()"]:
        assert f"dpa.{name}" in sources, name
    assert len(BAD_INPUT) + len(REFUSED) >= 100
