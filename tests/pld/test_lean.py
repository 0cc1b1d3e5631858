"""ε(δ) without the untilted grid at the answer's step (``StepProfile._lean``), against exact values.

A Poisson-subsampled randomized response composed T times has two losses per
step in each direction, so its δ(ε) is a binomial sum, computed here in
mpmath: the profile's ε(δ), read from tilted grids alone and the scout's
coarser grid, must have exact δ(ε) ≤ δ in both directions (certified) and
δ(ε·(1 − accuracy)) > δ in one (within the accuracy). Reads that go far below
the tilt (δ(ε) at small ε, the certificate) still compose the untilted grid,
and an answer never depends on which grids an earlier query left in the cache.
"""
import mpmath as mp
import numpy as np
import pytest

import dpaccount as dpa
from dpaccount.pld.grids.cache import GRIDS
from dpaccount.pld.profiles import eps_of_delta, step_profile
from dpaccount.pld.profiles.tiers import TIERS

P, Q, T = 0.75, 0.1, 2000


def mechanism():
    return dpa.Composition()([dpa.PoissonSampling()(dpa.RandomizedResponse(p=P), Q)], [T])


def exact_delta(eps, direction):
    """δ(ε) of one direction: (A, B) = (qP + (1 − q)R, R) removing, (R, qP + (1 − q)R) adding,
    P and R randomized response on the two inputs; Σ_j C(T, j) A₀^j A₁^{T−j} (1 − e^{ε − L_j})₊."""
    p, q = mp.mpf(P), mp.mpf(Q)
    on, off = (p, 1 - p), (1 - p, p)
    mixed = tuple(q * a + (1 - q) * b for a, b in zip(on, off))
    a, b = (mixed, off) if direction == "remove" else (off, mixed)
    loss = [mp.log(a[o] / b[o]) for o in (0, 1)]
    return mp.fsum(mp.binomial(T, j) * a[0] ** j * a[1] ** (T - j)
                   * max(0, 1 - mp.exp(eps - j * loss[0] - (T - j) * loss[1])) for j in range(T + 1))


def exact_worst(eps):
    with mp.workdps(30):
        return max(float(exact_delta(mp.mpf(float(eps)), d)) for d in ("remove", "add"))


@pytest.fixture
def lean_calls(monkeypatch):
    """The ``start`` of every ``_settled`` call: not None where the untilted grid was skipped."""
    calls = []
    settled = step_profile.StepProfile._settled

    def counted(self, direction, tier, pessimistic, target, cap, refined, start=None):
        calls.append(start is not None)
        return settled(self, direction, tier, pessimistic, target, cap, refined, start)

    monkeypatch.setattr(step_profile.StepProfile, "_settled", counted)
    GRIDS.clear()
    dpa.clear_cache()
    return calls


def _base_key(profile, direction):
    at = profile.at_level(profile._eps_level)
    return (at._pairs, direction, at.step, TIERS[0], True, None, False)


@pytest.mark.parametrize("accuracy, delta", [(1e-3, 1e-10), (1e-4, 1e-6), (1e-4, 1e-10)])
def test_eps_read_without_the_untilted_grid_is_certified_and_within_accuracy(lean_calls, accuracy, delta):
    profile = mechanism().privacy_profile(accuracy=accuracy)
    eps = float(profile.epsilon(delta))
    assert lean_calls == [True]  # the leading direction skipped its untilted grid...
    assert _base_key(profile, "remove") not in GRIDS._items  # ...which nothing composed after
    assert exact_worst(eps) <= delta  # certified: at or above the exact ε(δ)
    assert exact_worst(eps * (1 - accuracy)) > delta  # and within the accuracy of it


def test_reads_far_below_the_tilt_compose_the_untilted_grid_and_match_a_fresh_profile(lean_calls):
    accuracy, delta = 1e-4, 1e-10
    profile = mechanism().privacy_profile(accuracy=accuracy)
    profile.epsilon(delta)
    assert lean_calls == [True] and _base_key(profile, "remove") not in GRIDS._items
    small = np.array([1.0, 5.0, 20.0])  # far below the answer's tilt (ε ≈ 45.5)
    got = profile.delta(small)
    untilted = [key for key in GRIDS._items if len(key) == 7 and key[1] == "remove" and key[5] is None]
    assert untilted  # composed, lazily, for these reads (at their own levels)
    exact = np.array([exact_worst(e) for e in small])
    assert np.all(got >= exact) and np.all(got <= exact * (1 + 10 * accuracy))
    certificate = profile.certificate()
    assert _base_key(profile, "remove") in GRIDS._items  # the certificate's grid: composed for it
    assert all(c.size > 1 and c.noise > 0 for c in certificate)
    GRIDS.clear()
    dpa.clear_cache()
    fresh = mechanism().privacy_profile(accuracy=accuracy)
    assert np.array_equal(fresh.delta(small), got)  # no answer depends on the cache's history


def test_an_array_mixing_lean_and_untilted_reads_gets_each_elements_own_answer(lean_calls):
    accuracy, deltas = 1e-3, np.array([1e-2, 1e-6, 1e-10])
    together = mechanism().privacy_profile(accuracy=accuracy).epsilon(deltas)
    assert any(lean_calls) and not all(lean_calls)
    alone = []
    for d in deltas:
        GRIDS.clear()
        dpa.clear_cache()
        alone.append(float(mechanism().privacy_profile(accuracy=accuracy).epsilon(d)))
    assert np.array_equal(together, alone)
    for eps, d in zip(together, deltas):
        assert exact_worst(eps) <= d


def test_the_scouts_predicted_frame_is_near_the_untilted_grids():
    """``Frame.predicted`` (which chooses between the untilted grid and tilted grids alone) against
    the untilted grid once composed: its window within 2 % of its span, its noise bound within 2×."""
    from dpaccount.pld.profiles.bands import Frame
    GRIDS.clear()
    dpa.clear_cache()
    m = dpa.Composition()([dpa.PoissonSampling()(dpa.GaussianMechanism(sigma=1.0), 0.01)], [300])
    profile = m.privacy_profile(accuracy=1e-4)
    at = profile.at_level(profile._eps_level)
    assert at.scout is not None and at.scout.step > at.step
    for direction in ("remove", "add"):
        predicted, actual = Frame.predicted(at.scout.grid(direction), at.step), Frame.of(at.grid(direction))
        assert predicted.step == actual.step
        assert abs(predicted.offset - actual.offset) <= 0.02 * actual.size
        assert abs(predicted.offset + predicted.size - actual.offset - actual.size) <= 0.02 * actual.size
        assert 0.5 * actual.noise <= predicted.noise <= 2 * actual.noise


def test_a_certified_interval_whose_upper_end_is_read_lean_brackets_the_exact_eps(lean_calls):
    """The profile's ε(δ) interval (``epsilon_bounds``): the upper end through the lean reads, the
    lower end from the optimistic grids (which keep their untilted grid): exact δ(upper) ≤ δ ≤
    exact δ(lower), the interval within the accuracy."""
    accuracy, delta = 1e-4, 1e-10
    lower, upper, _, done = mechanism().privacy_profile(accuracy=accuracy).epsilon_bounds(delta, 8)
    assert True in lean_calls and done
    assert exact_worst(upper) <= delta <= exact_worst(lower)
    assert upper - lower <= accuracy * upper


def test_a_reading_at_a_tilted_grids_floor_does_not_resolve():
    """``StepProfile.resolving`` (the bulk check's reads): a start taken off a coarser grid's
    noise floor (far above ε(δ)) tilts the band's grid above the answer, whose window then starts
    above it and reads its first cell with a tiny noise bound; that reading is no reading of
    the density (it had the bulk check add two levels for every δ of this mechanism). Whatever
    it returns is not at a grid's floor, and the answer is the certified one whichever way."""
    m = dpa.Composition()([dpa.PoissonSampling()(dpa.GaussianMechanism(sigma=1.0), 1e-3)], [100000])
    profile = m.privacy_profile(accuracy=1e-3)
    at = profile.at_level(profile._eps_level)
    for direction in ("remove", "add"):
        eps, grid = at.scout.resolving(direction, 1e-10, 0.5)
        assert grid is None or not eps_of_delta.at_floor(grid, np.array([eps]))[0]
