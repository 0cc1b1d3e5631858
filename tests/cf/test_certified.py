"""What the cf error bounds claim, checked piece by piece (docs/cf_error_analysis.md):

* the window's kernel is k(y) = sin(t_m y)/(πy)·e^{−s²y²/2} and its exponential
  moment stays below the closed-form bound K(a) (numerical quadrature);
* the aliasing bound covers the trapezoid's aliasing (a coarse step against a
  fine one);
* answers built from closed forms and finite sums are flagged certified and
  their interval holds the exact value (closed forms, exact sums); Poisson
  subsampling of a Gaussian and the binomial are flagged estimates, and
  ``get_*_bounds(method="cf")`` says so with an ``ApproximationWarning``;
* the Chernoff bound used to skip directions is above the exact δ.
"""
import math
import warnings

import mpmath as mp
import numpy as np
import oracles
import pytest
from scipy.integrate import trapezoid  # numpy has np.trapezoid only from 2.0

import dpaccount as dpa
from dpaccount.cf.contour import RealMGF, log_alias
from dpaccount.cf.inversion import direction
from dpaccount.cf.line import Line
from dpaccount.cf.window import log_kernel_moment, window
from dpaccount.pld.pairs.discrete_pair import randomized_response_pair
from dpaccount.pld.pairs.base import GaussianPair, LaplacePair
from dpaccount.pld.pairs.poisson_sampling import PoissonRemovePair


@pytest.mark.parametrize("tau, taper", [(48.0, None), (480.0, 5.0)])
def test_window_kernel_is_its_transform_and_its_moments_stay_below_the_bound(tau, taper):
    t = np.linspace(0.0, tau * 1.2, 400001)
    s = tau / 24 if taper is None else min(taper, tau / 24)
    t_m = tau - 10 * s
    for y in (0.013, 0.4, 2.0):
        numeric = trapezoid(window(t, tau, taper) * np.cos(t * y), t) / math.pi  # W even
        closed = math.sin(t_m * y) / (math.pi * y) * math.exp(-0.5 * (s * y) ** 2)
        assert abs(numeric - closed) <= 1e-6 * (1.0 + abs(closed))
    z = np.linspace(-60.0 / s, 60.0 / s, 2000001)
    k = np.abs(np.sinc(t_m * z / math.pi) * t_m / math.pi) * np.exp(-0.5 * (s * z) ** 2)
    for a in (0.0, 1.0, -3.0, 12.0):
        moment = trapezoid(k * np.exp(a * z), z)
        assert moment <= math.exp(log_kernel_moment(a, tau, taper)), a


def test_aliasing_bound_covers_a_coarse_step():
    terms = ((GaussianPair(0.8), 5), (LaplacePair(0.5), 3))
    mgf = RealMGF(terms, "whole")
    c, eps, tau = 2.0, 1.5, 60.0
    fine = Line(terms, c, 0.02, "whole")
    fine.extend(tau)
    for h in (0.8, 1.2, 1.6):
        coarse = Line(terms, c, h, "whole")
        coarse.extend(tau)
        gap = abs(coarse.sums(eps, tau)[0] - fine.sums(eps, tau)[0])
        assert gap <= math.exp(log_alias(mgf, c, eps, 2 * math.pi / h, tau)), h
        assert gap > 0.0


CERTIFIED = {
    "gaussian x10": (((GaussianPair(0.6), 10),), lambda e: oracles.gdp_delta(e, 0.6 * math.sqrt(10))),
    "rr x25": (((randomized_response_pair(0.7), 25),), lambda e: oracles.rr_composed_delta(e, 0.7, 25)),
    "laplace": (((LaplacePair(1.0), 1),), lambda e: oracles.laplace_delta_quad(e, 1.0)),
}


@pytest.mark.parametrize("name", sorted(CERTIFIED))
def test_closed_forms_and_finite_sums_are_certified_and_hold_the_exact_value(name):
    terms, exact = CERTIFIED[name]
    for eps in (0.3, 2.0):
        ans = direction(terms).delta(eps)
        assert ans.certified, (name, eps)
        assert abs(ans.delta - float(exact(eps))) <= ans.error, (name, eps, ans)


def test_quadrature_and_atoms_on_no_lattice_are_estimates_and_say_so():
    sampled = dpa.Composition()([dpa.PoissonSampling()(dpa.GaussianMechanism(1.0), 0.05)], [10])
    binomial = dpa.Composition()([dpa.BinomialMechanism(n=200, p=0.5)], [3])
    for m in (sampled, binomial):
        assert not direction(m.pairs.remove).delta(1.0).certified
        with pytest.warns(dpa.ApproximationWarning, match="estimated interval"):
            assert not m.get_approx_delta_bounds(1.0, method="cf").certified
    with warnings.catch_warnings():
        warnings.simplefilter("error", dpa.ApproximationWarning)  # certified: no warning
        b = dpa.Composition()([dpa.GaussianMechanism(2.0), dpa.RandomizedResponse(0.6)], [4, 9]) \
            .get_approxDP_bounds(1e-6, method="cf")
    assert b.certified and b.lower <= b.upper <= b.lower * (1 + 1e-9)


def test_chernoff_bound_is_above_the_exact_delta():
    sigma, q = 1.0, 0.05
    d = direction(((PoissonRemovePair(GaussianPair(1.0 / sigma), q), 1),))
    for eps in (0.05, 0.5, 2.0):
        assert d.chernoff_bound(eps) >= float(oracles.subsampled_gaussian_remove_delta(eps, sigma, q))
    d = direction(((GaussianPair(0.6), 10),))
    for eps in (0.5, 3.0, 8.0):
        assert d.chernoff_bound(eps) >= float(oracles.gdp_delta(eps, 0.6 * math.sqrt(10)))


@pytest.mark.parametrize("name", ["gaussian", "rr"])
def test_certified_cf_bounds_of_a_mechanism_hold_the_exact_value(name):
    """``get_*_bounds(method="cf")`` on closed forms and finite sums: the interval
    (δ ∓ its error bound, and the roots of δ ∓ error = δ₀) holds the exact value."""
    if name == "gaussian":
        mech, mu = dpa.Composition()([dpa.GaussianMechanism(1.5)], [10]), math.sqrt(10) / 1.5
        exact, exact_eps = (lambda e: oracles.gdp_delta(e, mu)), (lambda d: oracles.gdp_epsilon(d, mu))
    else:
        mech = dpa.Composition()([dpa.RandomizedResponse(0.7)], [25])
        exact = lambda e: oracles.rr_composed_delta(e, 0.7, 25)
        exact_eps = lambda d: oracles.bisect_decreasing(exact, d)
    for eps in (0.1, 0.7, 2.0, 4.0):
        b = mech.get_approx_delta_bounds(eps, method="cf")
        assert b.certified and b.lower <= exact(eps) <= b.upper, (eps, b)
    for delta in (1e-3, 1e-7):
        b = mech.get_approxDP_bounds(delta, method="cf")
        assert b.certified and b.lower <= exact_eps(delta) <= b.upper, (delta, b)


def test_atoms_near_but_off_a_common_lattice_are_not_snapped():
    """Randomized responses with log-odds a₁ and a₂ = 1.005·a₁ share no lattice: their
    atoms stay in the line integral (an estimate, said so), and the answer is within its
    error of the exact finite sum over the (k₁+1)(k₂+1) composed atoms (mpmath)."""
    p1 = 0.7
    a1 = math.log(p1 / (1 - p1))
    p2 = 1.0 / (1.0 + math.exp(-1.005 * a1))
    k1, k2 = 3, 2
    terms = ((randomized_response_pair(p1), k1), (randomized_response_pair(p2), k2))

    def exact(eps):
        total = mp.mpf(0)
        for j1 in range(k1 + 1):
            for j2 in range(k2 + 1):
                w = [mp.binomial(k, j) * mp.mpf(p) ** j * (1 - mp.mpf(p)) ** (k - j)
                     for p, k, j in ((p1, k1, j1), (p2, k2, j2))]
                y = (2 * j1 - k1) * mp.log(mp.mpf(p1) / (1 - p1)) + \
                    (2 * j2 - k2) * mp.log(mp.mpf(p2) / (1 - mp.mpf(p2)))
                total += w[0] * w[1] * max(1 - mp.exp(eps - y), 0)
        return total

    for eps in (0.2, 1.0):
        ans = direction(terms).delta(eps)
        assert not ans.certified, eps
        assert abs(ans.delta - float(exact(eps))) <= ans.error, (eps, ans)
