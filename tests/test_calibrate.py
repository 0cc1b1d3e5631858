"""Calibration: the returned parameter meets the budget by the certified bound,
and one tolerance step beyond it does not; against the exact analytic
Gaussian calibration (Balle & Wang 2018) computed here in mpmath."""
import math

import mpmath as mp
import pytest

import dpaccount as dpa
from dpaccount import Composition, GaussianMechanism, PoissonSampling
from oracles import bisect_decreasing, gdp_delta

Q, T, EPS, DELTA = 0.01, 1000, 2.0, 1e-5


def dpsgd(sigma=1.0, q=Q, steps=T):
    return Composition()([PoissonSampling()(GaussianMechanism(sigma=sigma), q)], [steps])


def test_one_gaussian_matches_the_analytic_calibration():
    """The least σ with N(0, σ²) noise (ε, δ)-DP: μ* solves δ_GDP(ε; μ) = δ (mpmath), σ* = 1/μ*."""
    for eps, delta in [(1.0, 1e-5), (0.2, 1e-8), (4.0, 1e-3)]:
        mu = bisect_decreasing(lambda m: -gdp_delta(eps, m), -delta, lo=1e-6, hi=50)
        exact = float(1 / mp.mpf(mu))
        got = dpa.calibrate(lambda s: GaussianMechanism(sigma=s), eps=eps, delta=delta, bounds=(0.05, 500.0),
                            tol=1e-8)
        assert got == pytest.approx(exact, rel=1e-6)
        assert GaussianMechanism(sigma=got).get_approxDP(delta) <= eps


def test_dpsgd_noise_meets_the_budget_and_a_step_less_does_not():
    calls = []
    sigma = dpa.dpsgd_noise_multiplier(Q, T, EPS, DELTA, progress=calls.append)
    assert dpsgd(sigma).get_approxDP(DELTA) <= EPS
    assert dpsgd(sigma * (1 - 2e-3)).get_approxDP(DELTA) > EPS
    evaluations = {p.stage for p in calls if p.stage.startswith("calibrate: evaluation")}
    assert len(evaluations) <= 10  # certified evaluations (the budget)
    assert any(p.stage.endswith(f"x = {sigma:.6g} meets the budget") for p in calls)


def test_most_steps_and_largest_rate_meet_the_budget_and_no_more():
    steps = dpa.dpsgd_max_steps(1.0, Q, EPS, DELTA)
    assert dpsgd(steps=steps).get_approxDP(DELTA) <= EPS
    assert dpsgd(steps=steps + max(1, math.ceil(2e-3 * steps))).get_approxDP(DELTA) > EPS
    q = dpa.dpsgd_max_sample_rate(1.0, T, EPS, DELTA)
    assert dpsgd(q=q).get_approxDP(DELTA) <= EPS
    assert dpsgd(q=q * (1 + 2e-3)).get_approxDP(DELTA) > EPS


def test_the_delta_query_and_a_heterogeneous_schedule():
    """A schedule built from the parameter: σ·(1.5, 1.0, 0.8) for 300 steps each; budget δ(ε) ≤ δ."""
    def schedule(scale):
        parts = [PoissonSampling()(GaussianMechanism(sigma=scale * f), Q) for f in (1.5, 1.0, 0.8)]
        return Composition()(parts, [300, 300, 300])
    scale = dpa.calibrate(schedule, eps=EPS, delta=DELTA, query="delta", bounds=(0.3, 20.0))
    assert schedule(scale).get_approx_delta(EPS) <= DELTA
    assert schedule(scale * (1 - 2e-3)).get_approx_delta(EPS) > DELTA


def test_no_value_in_bounds_meets_the_budget():
    with pytest.raises(ValueError, match=r"no value in bounds.*best end x=3\.0.*ε at δ=1e-05 = "):
        dpa.calibrate(lambda s: GaussianMechanism(sigma=s), eps=0.1, delta=1e-5, bounds=(0.5, 3.0))


def test_the_whole_range_meeting_the_budget_returns_its_far_end():
    assert dpa.calibrate(lambda s: GaussianMechanism(sigma=s), eps=1.0, delta=1e-5, bounds=(10.0, 20.0)) == 10.0


def test_a_family_that_does_not_change_or_is_not_monotone_is_refused():
    with pytest.raises(ValueError, match="does not change"):
        dpa.calibrate(lambda s: GaussianMechanism(sigma=2.0), eps=1.0, delta=1e-5, bounds=(1.0, 3.0))
    bumpy = lambda s: GaussianMechanism(sigma=s if s < 2 or s > 3 else 0.5)  # met at 1.9, missed at 2.5
    with pytest.raises(ValueError, match="not monotone"):
        dpa.calibrate(bumpy, eps=3.0, delta=1e-5, bounds=(1.0, 10.0), increasing=False, guess=(1.95, 2.5))


def test_gdp_and_tradeoff_targets():
    """One Gaussian: μ-GDP with μ = 1/σ, β(α) = Φ(Φ⁻¹(1−α) − 1/σ) (closed forms, mpmath)."""
    got = dpa.calibrate(lambda s: GaussianMechanism(sigma=s), mu=0.5, bounds=(0.1, 100.0), tol=1e-8)
    assert got == pytest.approx(2.0, rel=1e-6) and GaussianMechanism(sigma=got).mu_GDP() <= 0.5
    alpha, beta = 0.05, 0.6
    exact = float(1 / (mp.sqrt(2) * (mp.erfinv(1 - 2 * mp.mpf(alpha)) - mp.erfinv(2 * mp.mpf(beta) - 1))))
    got = dpa.calibrate(lambda s: GaussianMechanism(sigma=s), fpr=alpha, fnr=beta, bounds=(0.1, 100.0),
                        tol=1e-8)
    assert got == pytest.approx(exact, rel=1e-6) and GaussianMechanism(sigma=got).get_fDP(alpha) >= beta


@pytest.mark.parametrize("kwargs, match, error", [
    (dict(bounds=(2.0, 1.0)), "bounds", ValueError),
    (dict(bounds=(0.0, math.inf)), "bounds", ValueError),
    (dict(bounds=5.0), "bounds", TypeError),
    (dict(bounds=(1.0, 2.0), tol=0.0), "tol", ValueError),
    (dict(bounds=(1.0, 2.0), increasing="yes"), "increasing", TypeError),
    (dict(bounds=(1.0, 2.0), eps=None), "target", ValueError),
    (dict(bounds=(1.0, 2.0), query="both"), "query", ValueError),
])
def test_bad_arguments_name_the_parameter(kwargs, match, error):
    args = dict(eps=1.0, delta=1e-5)
    args.update(kwargs)
    with pytest.raises(error, match=match):
        dpa.calibrate(lambda s: GaussianMechanism(sigma=s), **args)


def test_make_mechanism_must_build_mechanisms():
    with pytest.raises(TypeError, match="make_mechanism"):
        dpa.calibrate("gaussian", eps=1.0, delta=1e-5, bounds=(1.0, 2.0))
    with pytest.raises(TypeError, match="Mechanism"):
        dpa.calibrate(lambda s: s, eps=1.0, delta=1e-5, bounds=(1.0, 2.0))
    with pytest.raises(TypeError, match="steps"):
        dpa.dpsgd_noise_multiplier(Q, 10.5, EPS, DELTA)
