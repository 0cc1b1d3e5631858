"""Calibration of very private DP-SGD (σ 2–50, q 1e-5–1e-6), where the grid a
point's tiny ε needs at the asked accuracy may not fit (issue 28, item 1).

The independent reference is dp_accounting's RDP accountant (its own orders
and conversion): each budget is its ε at a reference point x₀, so the exact
boundary lies at least as far as x₀ (the exact ε is at most any certified
bound, and RDP's at x₀ is the budget). Every answer x must

* meet the budget by our certified bound (``certified_epsilon``: the route
  calibration decided it by),
* lie at least as far as x₀ (never short of what RDP alone certifies),
* be within ``tol`` of the boundary: one tolerance step beyond x is over
  budget by our certified bound, or cannot be computed, with the reason.
"""
import math
import re
import warnings

import mpmath as mp
import pytest

import dpaccount as dpa
from dpaccount import Composition, GaussianMechanism, PoissonSampling
from dpaccount.calibrate import certified_epsilon
from dpaccount.recipes import dpsgd_max_sample_rate, dpsgd_max_steps, dpsgd_noise_multiplier
from sweeps import sweep

dp_accounting = pytest.importorskip("dp_accounting")

DELTA, TOL, MAX_STEPS = 1e-5, 1e-3, 10 ** 7


def dpsgd(sigma, q, steps):
    return Composition()([PoissonSampling()(GaussianMechanism(sigma=sigma), q)], [steps])


def rdp_epsilon(sigma, q, steps, delta=DELTA):
    """ε(δ) of DP-SGD by dp_accounting's RDP accountant (an upper bound)."""
    event = dp_accounting.SelfComposedDpEvent(
        dp_accounting.PoissonSampledDpEvent(q, dp_accounting.GaussianDpEvent(sigma)), steps)
    return dp_accounting.rdp.RdpAccountant().compose(event).get_epsilon(delta)


def over_or_refused(mechanism, eps):
    """Our certified ε of ``mechanism`` exceeds eps, or no route can compute it
    and the error says why (the memory it would need)."""
    try:
        return certified_epsilon(mechanism, DELTA)[0] > eps
    except dpa.GridTooLarge as err:
        return "GB" in str(err) and "method='rdp'" in str(err)


def calibrated(solve, *args):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dpa.AccuracyWarning)  # a boundary placed by another route: checked here
        return solve(*args, DELTA, tol=TOL)


def check(build, x, eps, beyond):
    """x meets eps by our certified bound; ``beyond`` (a tolerance step further) does not."""
    assert certified_epsilon(build(x), DELTA)[0] <= eps
    assert beyond is None or over_or_refused(build(beyond), eps)


def check_steps(sigma, q, eps, reference):
    steps = calibrated(dpsgd_max_steps, sigma, q, eps)
    assert steps >= reference
    beyond = steps + max(1, math.ceil(TOL * steps)) if steps < MAX_STEPS else None
    check(lambda t: dpsgd(sigma, q, t), steps, eps, beyond)
    return steps


def check_sigma(q, steps, eps, reference):
    sigma = calibrated(dpsgd_noise_multiplier, q, steps, eps)
    assert sigma <= reference
    check(lambda s: dpsgd(s, q, steps), sigma, eps, sigma * (1 - TOL))


def check_rate(sigma, steps, eps, reference):
    q = calibrated(dpsgd_max_sample_rate, sigma, steps, eps)
    assert q >= reference
    check(lambda r: dpsgd(sigma, r, steps), q, eps, q * (1 + TOL))


def test_the_whole_range_meets_a_loose_budget_even_where_no_grid_fits():
    """Issue 28: (σ 50, q 1e-6) returned 8,625 steps (a point whose grid was too
    large read as over budget); the answer is the end of the range, 10⁷, where
    dp_accounting's RDP gives ε ≈ 6.5e-5 ≤ 1."""
    assert rdp_epsilon(50.0, 1e-6, MAX_STEPS) <= 1.0
    assert dpsgd_max_steps(50.0, 1e-6, 1.0, DELTA) == MAX_STEPS
    assert 0 < dpsgd(50.0, 1e-6, MAX_STEPS).get_approxDP(DELTA, method="rdp") <= 1.0


def test_the_cli_reports_the_route_of_the_certified_epsilon(capsys):
    """The CLI printed "steps = 8625 … certified epsilon there: 0"; now the end of the
    range, and a certified ε there (the default's, since ε is below the default route's ``Floors``: at most RDP's)."""
    from dpaccount.cli import main
    assert main(["calibrate", "--solve", "steps", "--mechanism", "subsampled-gaussian", "--sigma", "50",
                 "--q", "1e-6", "--eps", "1", "--delta", "1e-5"]) == 0
    out = capsys.readouterr().out
    # the default answers there (ε below the floor: the coarsest grid that fits, or RDP where smaller)
    assert out.startswith(f"steps = {MAX_STEPS} ")
    certified = float(re.search(r"certified epsilon there: ([\d.e-]+)", out).group(1))
    assert 0 < certified <= dpsgd(50.0, 1e-6, MAX_STEPS).get_approxDP(DELTA, method="rdp") * (1 + 1e-6)


def test_a_point_no_route_can_compute_is_not_read_as_over_budget():
    """Where nothing answers at the points beyond (σ < 10 here), calibration
    raises, saying where and why, rather than returning an answer short of the
    boundary (σ ≈ 4.8 for one Gaussian at (1, 1e-5))."""
    with pytest.raises(dpa.GridTooLarge, match="no certified route could decide"):
        dpa.calibrate(lambda s: _Refused(s) if s < 10.0 else GaussianMechanism(sigma=s), eps=1.0, delta=1e-5,
                      bounds=(1.0, 100.0), increasing=False)


class _Refused(GaussianMechanism):
    """A Gaussian whose every query is refused, as a grid too large would be."""

    def get_approxDP(self, delta, method=None, accuracy=1e-3):
        raise dpa.GridTooLarge("refused")


def test_an_epsilon_of_zero_at_the_safe_end_is_met():
    """ε(δ) = 0 (δ at least the total variation) gave log ratio −∞, read as
    "not certifiable". The exact σ solves δ_σ(1) = 0.78760074 for N(0, σ²) noise
    (Balle & Wang 2018, Thm 8, in mpmath): σ ≈ 1/3."""
    target = mp.mpf("0.78760074")
    f = lambda s: (mp.ncdf(-s + 1 / (2 * s)) - mp.e * mp.ncdf(-s - 1 / (2 * s))) - target  # δ_σ(1), ε·σ = σ
    exact = float(mp.findroot(lambda s: f(s), mp.mpf(1) / 3))
    assert exact == pytest.approx(1 / 3, rel=1e-6)
    got = dpa.calibrate(lambda s: GaussianMechanism(sigma=s), eps=1.0, delta=0.78760074, bounds=(0.01, 100.0))
    assert exact <= got <= exact * (1 + 1e-3)
    assert GaussianMechanism(sigma=got).get_approxDP(0.78760074) <= 1.0


def test_most_steps_of_very_private_dpsgd():
    check_steps(50.0, 1e-5, rdp_epsilon(50.0, 1e-5, 10 ** 6), 10 ** 6)


GRID = [(s, q) for s in (2.0, 3.0, 5.0, 8.0, 13.0, 20.0, 32.0, 50.0) for q in (1e-6, 2e-6, 5e-6, 1e-5)]


@pytest.mark.parametrize("sigma, q", sweep(GRID, [(2.0, 2e-6), (8.0, 1e-5), (50.0, 1e-6)]))
def test_most_steps_on_the_grid(sigma, q):
    """Each setting twice: a budget met over the whole range (the end, 10⁷) and one
    whose RDP boundary is 10⁶ steps (the answer at least that)."""
    assert check_steps(sigma, q, 1.0, MAX_STEPS) == MAX_STEPS
    check_steps(sigma, q, rdp_epsilon(sigma, q, 10 ** 6), 10 ** 6)


# CI keeps both ends of σ and of q and a hard middle (the whole grid: ~15 min, -m exhaustive)
@pytest.mark.parametrize("sigma, q", sweep(GRID, [(2.0, 1e-5), (5.0, 5e-6), (13.0, 5e-6), (50.0, 1e-6)]))
def test_least_noise_on_the_grid(sigma, q):
    check_sigma(q, 10 ** 5, rdp_epsilon(sigma, q, 10 ** 5), sigma)


@pytest.mark.slow
@pytest.mark.parametrize("sigma, q", [(s, q) for s in (2.0, 8.0, 32.0) for q in (1e-6, 1e-5)])
def test_largest_rate_on_the_grid(sigma, q):
    check_rate(sigma, 10 ** 5, rdp_epsilon(sigma, q, 10 ** 5), q)
