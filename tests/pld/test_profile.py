"""The privacy profile: arrays of queries from shared grids, certified.

Against exact values (an RR ⊗ Gaussian mixture summed in mpmath) over ranges
of ε reaching δ ≈ 1e-30, where the answer must come from tilted grids; and
against the single-query certified intervals: an element of an array gets
exactly the answer it gets alone (its grids depend on the query only).
"""
import math

import mpmath as mp
import numpy as np
import pytest

import dpaccount as dpa
from dpaccount.pld.grids.cache import GRIDS
from oracles import gdp_delta, gdp_epsilon


def mixture():
    """60 Gaussians (σ = 5) and 60 randomized responses (p = 0.52)."""
    return dpa.Composition()([dpa.GaussianMechanism(sigma=5.0), dpa.RandomizedResponse(p=0.52)], [60, 60])


def mixture_delta(eps):
    """δ(ε) = Σ_j w_j δ_G(ε − s_j), s_j = (2j − k)a, w_j = C(k,j) p^j (1−p)^{k−j}, δ_G of μ = √60/5."""
    p, k, mu = mp.mpf("0.52"), 60, mp.sqrt(60) / 5
    a = mp.log(p / (1 - p))
    return mp.fsum(mp.binomial(k, j) * p ** j * (1 - p) ** (k - j) * gdp_delta(eps - (2 * j - k) * a, mu)
                   for j in range(k + 1))


EPS = np.linspace(0.0, 28.0, 15)


@pytest.fixture(scope="module")
def exact():
    with mp.workdps(50):
        return np.array([float(mixture_delta(mp.mpf(e))) for e in EPS])


def test_an_array_of_eps_is_certified_and_tight_against_the_exact_mixture(exact):
    GRIDS.clear()
    m = mixture()
    got = m.privacy_profile().delta(EPS)  # the grids (get_approx_delta sums this mixture's atoms exactly)
    assert exact[-1] < 1e-25  # the range reaches far below the FFT noise floor...
    assert any(key[5] is not None for key in list(GRIDS._items) if len(key) == 7)  # ...so tilted grids answered
    # never below, and within the accuracy (0.1%) at every δ: δ queries take the
    # finer levels their tilt needs
    assert np.all(got >= exact)
    assert np.all(got <= exact * (1 + 1e-3))
    profile = m.privacy_profile()
    low = profile.delta_lower(EPS)
    assert np.all(low <= exact) and np.all(low >= exact * (1 - 2e-3))


def test_an_array_element_gets_the_answer_it_gets_alone(exact):
    arr = mixture().privacy_profile().delta(EPS[::3])
    GRIDS.clear()
    alone = [mixture().privacy_profile().delta(float(e)) for e in EPS[::3]]
    assert list(arr) == alone


def test_an_eps_array_element_gets_its_own_answer_where_the_finer_level_fits_it_alone():
    """σ = 0.5, q = 1e-5, T = 100: the bulk check answers every δ here some levels finer, where
    the tilted window of δ = 1e-10 does not fit the cap; the others there still get the finer
    level's answers, as alone (before, the whole array fell back a level with it:
    ε(1e-5) 0.0040769 in the array against 0.0040738 alone)."""
    def fresh():
        GRIDS.clear()
        dpa.clear_cache()
        return dpa.Composition()([dpa.PoissonSampling()(dpa.GaussianMechanism(sigma=0.5), 1e-5)], [100])
    deltas = [1e-5, 1e-7, 1e-10]
    together = fresh().get_approxDP(deltas)
    alone = [fresh().get_approxDP(d) for d in deltas]
    assert list(together) == alone
    reversed_ = fresh().get_approxDP(deltas[::-1])
    assert list(reversed_[::-1]) == alone


@pytest.mark.filterwarnings("ignore::dpaccount.AccuracyWarning")
def test_an_eps_array_element_gets_its_own_answer_where_another_does_not_fit_the_level(monkeypatch):
    """Under a grid cap (2^14 points) that the ε(δ) level's tilted window of δ = 1e-12 does not
    fit, the δ that fit there are still answered there, as alone (before, the whole array went
    a level coarser: ε(1e-6) 2.1267 in the array against 2.1251 alone)."""
    from dpaccount.pld.grids import compose
    monkeypatch.setattr(compose, "MAX_GRID", 1 << 14)

    def fresh():
        GRIDS.clear()
        dpa.clear_cache()
        return dpa.Composition()([dpa.PoissonSampling()(dpa.GaussianMechanism(sigma=1.0), 0.01)], [1000])
    deltas = [1e-3, 1e-6, 1e-12]
    together = fresh().get_approxDP(deltas)
    assert list(together) == [fresh().get_approxDP(d) for d in deltas]


def test_delta_is_non_increasing_across_the_levels_of_a_dense_array():
    """ε from the bulk to δ ≈ 1e-10 crosses several planned levels: each answer
    is the least of its level's and the anchors' below it (every one certified),
    so the curve is non-increasing across the level changes, and each element
    still gets the answer it gets alone."""
    m = dpa.Composition()([dpa.PoissonSampling()(dpa.GaussianMechanism(sigma=0.8), 0.1)], [20])
    eps = np.linspace(0.0, 12.0, 1500)
    profile = m.privacy_profile()
    assert len(np.unique(profile._delta_levels(eps))) >= 3
    got = m.get_approx_delta(eps)
    assert np.all(np.diff(got) <= 0.0) and got[-1] < 1e-10
    for i in (0, 400, 900, 1499):
        b = m.get_approx_delta_bounds(float(eps[i]))
        assert got[i] == m.get_approx_delta(float(eps[i])) and b.lower <= got[i] <= b.upper * (1 + 1e-3)


def test_a_looser_finer_level_cannot_make_delta_rise(monkeypatch):
    """Finer levels are usually tighter, not always. Were the ε(δ) level 50%
    looser, the next one exact and each further one 10% looser than the one
    before (every answer still a certified upper bound), δ(ε) would jump up
    where the plan moves to a looser level; the anchors (each level's answer
    at its last ε) hold it down, so δ(ε) stays non-increasing."""
    from dpaccount.pld.profiles.step_profile import StepProfile
    m = dpa.Composition()([dpa.PoissonSampling()(dpa.GaussianMechanism(sigma=0.8), 0.1)], [20])
    eps = np.linspace(0.0, 12.0, 600)
    profile = m.privacy_profile()
    assert len(np.unique(profile._delta_levels(eps))) >= 3
    first = profile.at_level(profile._eps_level).step
    honest = StepProfile.delta_of

    def skewed(self, direction, x, ceiling=None):
        level = round(math.log2(first / self.step))
        return honest(self, direction, x, ceiling) * (1.5 if level == 0 else 1.0 + 0.1 * (level - 1))

    monkeypatch.setattr(StepProfile, "delta_of", skewed)
    got = dpa.Composition()([dpa.PoissonSampling()(dpa.GaussianMechanism(sigma=0.8), 0.1)], [20]).get_approx_delta(eps)
    assert np.all(np.diff(got) <= 0.0)


@pytest.mark.parametrize("level", [2, pytest.param(4, marks=pytest.mark.slow)])  # ~13 s each on 2 cores; absolute: the plan picks 6
def test_rare_large_losses_keep_lower_bounds_below_upper_ones(level):
    """Poisson sampling at q = 2e-5 (the Connect-the-Dots blog setting): the
    optimistic grids at a coarse step lose the rare losses altogether, and
    their laws tilted far out sit at the top of their support. At every
    level the lower bounds of ε(δ) and δ(ε) stay below the upper ones (a
    tilted optimistic window cut at its own bottom, with a tilt searched on
    such a coarser grid, once read ε(δ) ≈ 13420 there: below its window an
    optimistic grid drops mass, so its bottom stays the untilted one)."""
    m = dpa.Composition()([dpa.PoissonSampling()(dpa.GaussianMechanism(sigma=0.5), 2e-5)], [1000])
    profile = m.privacy_profile()
    at = profile.at_level(level)
    deltas, eps = np.array([1e-6, 1e-8, 1e-10]), np.array([0.5, 0.95, 1.5])
    assert np.all(at.epsilon_lower(deltas) <= at.epsilon(deltas))
    assert np.all(at.delta_lower(eps) <= at.delta(eps))
    # an optimistic grid tilted anywhere, far above the answer too, still bounds it below
    upper = at.epsilon(np.array([1e-8]))[0]
    for centre in (2.0, 20.0):
        tilted = at.grid("remove", pessimistic=False, tilt=int(centre / at.step))
        assert tilted.epsilon(np.array([1e-8]))[0] <= upper


def test_arrays_lie_in_the_single_query_certified_intervals():
    m = dpa.Composition()([dpa.PoissonSampling()(dpa.GaussianMechanism(sigma=1.0), 0.02)], [200])
    eps = np.linspace(0.0, 8.0, 9)
    deltas = np.logspace(-14, -2, 7)
    d_arr, e_arr = m.get_approx_delta(eps), m.get_approxDP(deltas)
    # each element: exactly the single query's answer, above the single query's
    # certified lower bound, within the accuracy of its (possibly refined) upper one
    for e, d in zip(eps, d_arr):
        b = m.get_approx_delta_bounds(float(e))
        assert d == m.get_approx_delta(float(e)) and b.lower <= d <= b.upper * (1 + 1e-3)
    for d, e in zip(deltas, e_arr):
        b = m.get_approxDP_bounds(float(d))
        assert e == m.get_approxDP(float(d)) and b.lower <= e <= b.upper * (1 + 1e-3)
    # the two queries of one profile agree: δ(ε(δ)) ≤ δ up to the grids they were read
    # from (each certified; a δ query stops refining at a tenth of the accuracy)
    assert np.all(m.get_approx_delta(e_arr) <= deltas * (1 + 1e-4))


def test_epsilon_arrays_against_the_exact_gaussian_composition():
    """ε(δ) for δ down to 1e-60 from one profile: GDP's exact ε (mpmath) is
    never above the answer, and the answer is within 0.1% of it."""
    mech = dpa.Composition()([dpa.GaussianMechanism(sigma=2.0), dpa.GaussianMechanism(sigma=3.0)], [20, 30])
    mu = math.sqrt(20 / 4 + 30 / 9)
    deltas = np.logspace(-60, -2, 12)
    got = mech.get_approxDP(deltas, method="pld")
    exact = [float(gdp_epsilon(d, mu)) for d in deltas]
    assert np.all(got >= np.array(exact)) and np.all(got <= np.array(exact) * (1 + 1e-3))


def test_the_certificate_describes_the_base_grids():
    m = mixture()
    cert = m.privacy_profile().certificate()
    assert [c.direction for c in cert] == ["remove", "add"]
    for c in cert:
        g = m.pld(c.direction)
        assert (c.step, c.offset, c.size, c.p_inf, c.noise) == (g.step, g.offset, len(g.probs), g.p_inf, g.noise)
        assert c.pessimistic and c.tail == 1e-30 and c.p_inf >= 0.0


def test_profile_queries_validate_like_the_mechanism():
    m = mixture()
    with pytest.raises(ValueError, match="accuracy"):
        m.privacy_profile(accuracy=0.0)
    with pytest.raises(ValueError, match="accuracy"):
        m.privacy_profile(accuracy=1.5)


@pytest.mark.parametrize("delta", [1e-40, 1e-100])
def test_tiny_delta_of_a_subsampled_composition_is_certified_tight(delta):
    """Far below the transform noise, with the answer beyond the base grid's
    resolved range (its ε would sit at the window's top): the certified
    interval is within the accuracy, and the default answer inside it."""
    m = dpa.Composition()([dpa.PoissonSampling()(dpa.GaussianMechanism(sigma=1.1), 0.01)], [300])
    b = m.get_approxDP_bounds(delta)
    assert b.upper - b.lower <= 1e-3 * b.upper
    assert b.lower <= m.get_approxDP(delta) <= b.upper * (1 + 1e-3)
    assert m.get_approxDP(delta) < m.get_approxDP(delta, method="rdp")


def test_delta_at_the_jump_to_the_mass_at_infinity_is_refused_truthfully():
    """A composition the exact sum does not cover (two continuous pairs) asked ε at δ = 0.28,
    within the rounding of its P(L = ∞) = 1 − 0.9·0.8 (issue 27 §3): the grids count
    P(L = ∞) rounded up at +∞ and cannot certify a finite ε. The refusal says so, with both
    masses, not that the window stopped at 1e-280; a δ clear of the jump is answered."""
    m = dpa.Composition()([dpa.ApproxDPMechanism(1, 0.1), dpa.ApproxDPMechanism(2, 0.2),
                           dpa.LaplaceMechanism(1.0), dpa.ExponentialMechanism(1.0)], [1, 1, 1, 1])
    with pytest.raises(dpa.AccuracyNotReached, match=r"above P\(L = inf\) = 0\.27999.* count at \+inf"):
        m.get_approxDP(0.28)
    assert np.isfinite(m.get_approxDP(0.2801))


@pytest.mark.parametrize("q, steps, delta", [(1e-3, 10, 1e-8), (1e-4, 100, 1e-10)])
def test_a_query_builds_each_of_its_grids_once_with_nothing_cached(monkeypatch, q, steps, delta):
    """A tiny-q ε(δ) query and its bulk check (``bulk.bulk_split``) ask for the same base
    and tilted grids several times. With the shared cache keeping nothing, the query's own
    cache (``StepProfile.holding``) still builds each distinct grid once, and the answer is
    the one the shared cache gives (a grid is the same whichever cache holds it)."""
    from dpaccount.pld.grids.cache import DEFAULT_LIMIT
    from dpaccount.pld.profiles import step_profile

    def mechanism():
        return dpa.Composition()([dpa.PoissonSampling()(dpa.GaussianMechanism(0.8), q)], [steps])

    dpa.clear_cache()
    cached = mechanism().get_approxDP(delta, accuracy=1e-2)
    built = []
    composed = step_profile.composed_grid

    def counted(items, **kwargs):
        built.append((tuple(items), kwargs["step"], kwargs["tail"], kwargs["pessimistic"], kwargs["tilt_at"]))
        return composed(items, **kwargs)

    monkeypatch.setattr(step_profile, "composed_grid", counted)
    dpa.clear_cache()
    dpa.set_cache_limit(0)
    try:
        got = mechanism().get_approxDP(delta, accuracy=1e-2)
    finally:
        dpa.set_cache_limit(DEFAULT_LIMIT)
    assert any(key[-1] is not None for key in built)  # tilted grids were asked for
    assert len(built) == len(set(built))
    assert got == cached
