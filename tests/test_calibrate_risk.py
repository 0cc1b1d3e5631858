"""Calibration to an attack-risk target: ``calibrate(make, advantage=…)``,
``calibrate(make, tpr=…, fpr=…)`` and the DP-SGD one-call forms. The answer meets the
target by the certified bound; a slightly less private one does not; for the Gaussian the
boundary is the closed form (mpmath)."""
import mpmath as mp
import pytest

import dpaccount as dp
from dpaccount import GaussianMechanism, calibrate

TOL = 1e-3
Q, STEPS = 256 / 60000, 14063


@pytest.mark.parametrize("adv", [0.05, 0.3, 0.8])
def test_gaussian_noise_for_an_advantage_is_the_closed_form(adv):
    sigma = calibrate(GaussianMechanism, advantage=adv, bounds=(0.05, 100.0), tol=TOL)
    exact = 1 / (2 * mp.sqrt(2) * mp.erfinv(adv))  # 2Φ(μ/2) − 1 = erf(μ/(2√2)) = adv
    assert exact <= sigma <= exact * (1 + TOL)
    assert GaussianMechanism(sigma).get_advantage() <= adv
    assert GaussianMechanism(sigma * (1 - 2 * TOL)).get_advantage() > adv


@pytest.mark.parametrize("tpr, fpr", [(0.05, 0.01), (0.5, 0.1)])
def test_gaussian_noise_for_a_tpr_at_fpr_is_the_closed_form(tpr, fpr):
    sigma = calibrate(GaussianMechanism, tpr=tpr, fpr=fpr, bounds=(0.05, 100.0), tol=TOL)
    probit = lambda x: -mp.sqrt(2) * mp.erfinv(1 - 2 * mp.mpf(x))
    exact = 1 / (probit(tpr) - probit(fpr))  # 1 − G_μ(α) = Φ(Φ⁻¹(α) + μ)
    assert exact <= sigma <= exact * (1 + TOL)
    assert GaussianMechanism(sigma).get_tpr(fpr) <= tpr
    assert GaussianMechanism(sigma * (1 - 2 * TOL)).get_tpr(fpr) > tpr


def test_dpsgd_noise_for_an_advantage_meets_it_and_less_noise_does_not():
    adv = 0.2
    sigma = dp.dpsgd_noise_multiplier(Q, STEPS, advantage=adv)
    make = lambda s: dp.Composition()([dp.PoissonSampling()(GaussianMechanism(s), Q)], [STEPS])
    assert make(sigma).get_advantage() <= adv
    assert make(sigma * (1 - 2 * TOL)).get_advantage() > adv


def test_dpsgd_steps_for_a_tpr_at_fpr_meet_it_and_one_more_does_not():
    steps = dp.dpsgd_max_steps(1.0, 0.01, tpr=0.05, fpr=0.01, tol=TOL)
    make = lambda t: dp.Composition()([dp.PoissonSampling()(GaussianMechanism(1.0), 0.01)], [t])
    assert make(steps).get_tpr(0.01) <= 0.05
    assert make(int(steps * (1 + 2 * TOL)) + 1).get_tpr(0.01) > 0.05


def test_a_tpr_below_the_fpr_is_refused_by_name():
    with pytest.raises(ValueError, match="tpr"):
        calibrate(GaussianMechanism, tpr=0.01, fpr=0.05, bounds=(0.1, 10.0))


@pytest.mark.parametrize("targets", [dict(advantage=0.1, eps=1.0, delta=1e-5), dict(tpr=0.1),
                                     dict(advantage=0.1, tpr=0.2, fpr=0.1)])
def test_one_target_at_a_time(targets):
    with pytest.raises(ValueError, match="one target"):
        calibrate(GaussianMechanism, bounds=(0.1, 10.0), **targets)
    with pytest.raises(TypeError, match="one target"):
        dp.dpsgd_noise_multiplier(Q, STEPS, **targets)
